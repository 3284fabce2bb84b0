/* month.h — calendar months in UTC, as unix milliseconds.
 *
 * Metering cuts usage intervals at month boundaries and bills add up the
 * records of one month; both need the same notion of "a month": from
 * 00:00:00.000 UTC on its first day to the same time on the next month's
 * first day, half-open. Pure functions of their arguments (no clock, no
 * time zone from the environment). Functions return 0 or -EINVAL. */
#ifndef GP_BASE_MONTH_H
#define GP_BASE_MONTH_H

#include <stdint.h>

#define GP_MONTH_TEXT 8 /* "2026-11" and its NUL */

/* The month that contains `ms`: [*ret_from, *ret_to). */
void gp_month_bounds(int64_t ms, int64_t *ret_from, int64_t *ret_to);

/* "YYYY-MM" (1970-01 to 9999-12, nothing after it) to its bounds;
 * -EINVAL otherwise, the out parameters untouched. */
int gp_month_parse(const char *text, int64_t *ret_from, int64_t *ret_to);

/* The month containing `ms` as "YYYY-MM"; buf holds GP_MONTH_TEXT bytes. */
void gp_month_format(int64_t ms, char *buf);

#endif
