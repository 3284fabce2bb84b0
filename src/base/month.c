/* month.c — UTC calendar months in unix milliseconds (month.h).
 *
 * Days are counted with the proleptic Gregorian calendar's civil-from-days
 * arithmetic, so nothing depends on TZ, on timegm, or on the C library's
 * time_t range. */
#include "base/month.h"

#include <errno.h>
#include <stdbool.h>

#define MS_PER_DAY 86400000LL

/* Days since 1970-01-01 of the first day of month m (1-12) of year y. */
static int64_t days_from_civil(int64_t y, int m)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The year and month (1-12) of a day counted from 1970-01-01. */
static void civil_from_days(int64_t z, int64_t *ret_y, int *ret_m)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*ret_m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*ret_y = yoe + era * 400 + (*ret_m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static void bounds_of(int64_t y, int m, int64_t *ret_from, int64_t *ret_to)
{
	*ret_from = days_from_civil(y, m) * MS_PER_DAY;
	*ret_to = (m == 12 ? days_from_civil(y + 1, 1) : days_from_civil(y, m + 1)) *
		  MS_PER_DAY;
}

void gp_month_bounds(int64_t ms, int64_t *ret_from, int64_t *ret_to)
{
	int64_t y;
	int m;

	civil_from_days(floor_div(ms, MS_PER_DAY), &y, &m);
	bounds_of(y, m, ret_from, ret_to);
}

static bool is_digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

int gp_month_parse(const char *text, int64_t *ret_from, int64_t *ret_to)
{
	int y, m;

	if (!text || !is_digits(text, 4) || text[4] != '-' || !is_digits(text + 5, 2) ||
	    text[7] != '\0')
		return -EINVAL;
	y = (text[0] - '0') * 1000 + (text[1] - '0') * 100 + (text[2] - '0') * 10 +
	    (text[3] - '0');
	m = (text[5] - '0') * 10 + (text[6] - '0');
	if (y < 1970 || m < 1 || m > 12)
		return -EINVAL;
	bounds_of(y, m, ret_from, ret_to);
	return 0;
}

void gp_month_format(int64_t ms, char *buf)
{
	int64_t y;
	int m;

	civil_from_days(floor_div(ms, MS_PER_DAY), &y, &m);
	y = y < 0 ? 0 : y % 10000;
	buf[0] = (char)('0' + y / 1000);
	buf[1] = (char)('0' + y / 100 % 10);
	buf[2] = (char)('0' + y / 10 % 10);
	buf[3] = (char)('0' + y % 10);
	buf[4] = '-';
	buf[5] = (char)('0' + m / 10);
	buf[6] = (char)('0' + m % 10);
	buf[7] = '\0';
}
