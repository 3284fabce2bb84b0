/* test-month.c — UTC calendar months (src/base/month.c): bounds of the
 * month around an instant, across years, leap years and before 1970;
 * parsing "YYYY-MM" and refusing what is not; formatting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "base/month.h"

#define DAY 86400000LL

static void test_bounds(void **state)
{
	int64_t from, to;

	(void)state;
	/* 2026-11-29T13:27:32.786Z is in November 2026: 30 days. */
	gp_month_bounds(1795958852786LL, &from, &to);
	assert_int_equal(from, 1793491200000LL); /* 2026-11-01T00:00:00Z */
	assert_int_equal(to - from, 30 * DAY);
	/* The first millisecond of a month is in it; the last of the month before is not.
	 */
	gp_month_bounds(to, &from, &to);
	assert_int_equal(from, 1796083200000LL); /* 2026-12-01 */
	gp_month_bounds(from - 1, &from, &to);
	assert_int_equal(from, 1793491200000LL);
	/* February of a leap year, and of a century that is not one. */
	assert_int_equal(gp_month_parse("2024-02", &from, &to), 0);
	assert_int_equal(to - from, 29 * DAY);
	assert_int_equal(gp_month_parse("2100-02", &from, &to), 0);
	assert_int_equal(to - from, 28 * DAY);
	/* December runs into the next year. */
	assert_int_equal(gp_month_parse("2025-12", &from, &to), 0);
	assert_int_equal(to, 1767225600000LL); /* 2026-01-01 */
	/* Before the epoch. */
	gp_month_bounds(-1, &from, &to);
	assert_int_equal(from, -31 * DAY);
	assert_int_equal(to, 0);
}

static void test_parse_refuses(void **state)
{
	static const char *const bad[] = {
		"",	   "2026",	 "2026-1",   "2026-13", "2026-00", "26-11",
		"2026/11", "2026-11-01", "2026-11 ", "1969-12", "abcd-ef", "+026-11",
	};
	int64_t from = 7, to = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(gp_month_parse(bad[i], &from, &to), -EINVAL);
	assert_int_equal(gp_month_parse(NULL, &from, &to), -EINVAL);
	assert_int_equal(from, 7);
	assert_int_equal(to, 7);
	assert_int_equal(gp_month_parse("1970-01", &from, &to), 0);
	assert_int_equal(from, 0);
}

static void test_format(void **state)
{
	char text[GP_MONTH_TEXT];
	int64_t from, to;

	(void)state;
	gp_month_format(1795958852786LL, text);
	assert_string_equal(text, "2026-11");
	gp_month_format(0, text);
	assert_string_equal(text, "1970-01");
	assert_int_equal(gp_month_parse("2031-07", &from, &to), 0);
	gp_month_format(to - 1, text);
	assert_string_equal(text, "2031-07");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
