/* test-parse.c — numbers and sizes that people type (src/base/parse.c):
 * every spelling of a size the tree has ever taken (4G, 4096M, 512K,
 * 1073741824, 1KiB) and the ones a Slurm user types (4GB, 4gb, 512MB); a
 * number without a unit in the unit the caller names (bytes, or MiB as
 * Slurm's --mem); and what is refused, with the result left untouched.
 * The job options a Slurm user types: every form of --time and what it
 * is in seconds, written back; --after's lists; --array's ranges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "base/parse.h"

#define KiB  1024ULL
#define MiB  (1024 * KiB)
#define GiB  (1024 * MiB)
#define N(a) (sizeof(a) / sizeof((a)[0]))

struct good {
	const char *text;
	uint64_t bytes;
};

static void test_sizes_in_bytes(void **state)
{
	static const struct good good[] = {
		{"0", 0},
		{"1", 1},
		{"007", 7},
		{"1073741824", GiB},
		{"512K", 512 * KiB},
		{"4096M", 4 * GiB},
		{"4G", 4 * GiB},
		{"1T", 1024 * GiB},
		{"3k", 3 * KiB},
		{"2m", 2 * MiB},
		{"4g", 4 * GiB},
		{"1t", 1024 * GiB},
		{"1KiB", KiB},
		{"1MiB", MiB},
		{"16GiB", 16 * GiB},
		{"2TiB", 2048 * GiB},
		/* G and GB are GiB, as Slurm and nvidia-smi count them. */
		{"4GB", 4 * GiB},
		{"4gb", 4 * GiB},
		{"4Gb", 4 * GiB},
		{"4gib", 4 * GiB},
		{"512MB", 512 * MiB},
		{"512MiB", 512 * MiB},
		{"8KB", 8 * KiB},
		{"1TB", 1024 * GiB},
		{"4GIB", 4 * GiB},
		{"18446744073709551615", UINT64_MAX},
		{"16777215T", 16777215ULL << 40},
	};
	uint64_t bytes;

	(void)state;
	for (size_t i = 0; i < N(good); i++) {
		bytes = 42;
		assert_int_equal(gp_parse_size(good[i].text, &bytes), 0);
		assert_int_equal(bytes, good[i].bytes);
	}
}

/* Slurm's --mem: a number alone is MiB; with a unit, the unit. */
static void test_sizes_in_mib(void **state)
{
	static const struct good good[] = {
		{"4096", 4 * GiB},
		{"1", MiB},
		{"0", 0},
		{"4G", 4 * GiB},
		{"4GB", 4 * GiB},
		{"4GiB", 4 * GiB},
		{"512M", 512 * MiB},
		{"512MiB", 512 * MiB},
		{"2048K", 2 * MiB},
		{"17592186044415", 17592186044415ULL * MiB},
	};
	uint64_t bytes;

	(void)state;
	for (size_t i = 0; i < N(good); i++) {
		bytes = 42;
		assert_int_equal(gp_parse_size_in(good[i].text, GP_MiB, &bytes), 0);
		assert_int_equal(bytes, good[i].bytes);
	}
	bytes = 42; /* 2^44 MiB is 2^64 bytes: one past the largest */
	assert_int_equal(gp_parse_size_in("17592186044416", GP_MiB, &bytes), -EINVAL);
	assert_int_equal(bytes, 42);
}

static void test_sizes_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"-1",
		"+1",
		" 1",
		"1 ",
		"G",
		"GB",
		"4Gi",
		"4B",
		"4iB",
		"4GBB",
		"4GiBs",
		"1.5G",
		"0x10",
		"4 G",
		"4 GB",
		"4P",
		"4PB",
		"18446744073709551616",
		"99999999999999999999",
		"16777216T",
		"17179869184G",
		"4GG",
		"4G B",
	};
	uint64_t bytes;

	(void)state;
	for (size_t i = 0; i < N(bad); i++) {
		bytes = 42;
		assert_int_equal(gp_parse_size(bad[i], &bytes), -EINVAL);
		assert_int_equal(bytes, 42);
		assert_int_equal(gp_parse_size_in(bad[i], GP_MiB, &bytes), -EINVAL);
		assert_int_equal(bytes, 42);
	}
	assert_int_equal(gp_parse_size(NULL, &bytes), -EINVAL);
	assert_int_equal(gp_parse_size("4G", NULL), -EINVAL);
	assert_int_equal(gp_parse_size_in("4", 0, &bytes), -EINVAL);
	assert_int_equal(bytes, 42);
}

static void test_uint(void **state)
{
	unsigned v = 7;

	(void)state;
	assert_true(gp_parse_uint("30%", 1, 100, "%", &v));
	assert_int_equal(v, 30);
	assert_true(gp_parse_uint("30", 1, 100, "%", &v));
	assert_false(gp_parse_uint("0", 1, 100, NULL, &v));
	assert_false(gp_parse_uint("30%", 1, 100, NULL, &v));
	assert_int_equal(v, 30);
}

struct limit {
	const char *text;
	uint64_t seconds;
};

static void test_time_limits(void **state)
{
	static const struct limit good[] = {
		{"10", 600},			  /* MINUTES */
		{"90", 5400},			  /* past an hour, as Slurm takes it */
		{"0:02", 2},			  /* MINUTES:SECONDS */
		{"5:30", 330},
		{"1:00:00", 3600},		  /* HOURS:MINUTES:SECONDS */
		{"36:00:00", 36 * 3600},
		{"2-0", 2 * 86400},		  /* DAYS-HOURS */
		{"1-12", 36 * 3600},
		{"1-02:30", 86400 + 2 * 3600 + 1800}, /* DAYS-HOURS:MINUTES */
		{"1-02:30:15", 86400 + 2 * 3600 + 1800 + 15},
		{"0", 0},
		{"unlimited", 0},
		{"INFINITE", 0},
		{"366-0", 366 * 86400},
	};
	static const char *const bad[] = {
		"",	   "-1",      "+1",	 " 1",	     "1 ",	   "1.5",    "1:60",
		"1:2:3:4", "1:00:60", "1-24",	 "1-2:60",   "1-2:3:60",   "1-",     "-1:00",
		"1-2-3",   "a",	      "1h",	 "1:",	     ":1",	   "1::2",   "367-0",
		"1-x",	   "99999999999",	 "527041",   "never",
	};
	uint64_t s;

	(void)state;
	for (size_t i = 0; i < N(good); i++) {
		s = 42;
		assert_int_equal(gp_parse_time_limit(good[i].text, &s), 0);
		assert_int_equal(s, good[i].seconds);
	}
	for (size_t i = 0; i < N(bad); i++) {
		s = 42;
		if (gp_parse_time_limit(bad[i], &s) != -EINVAL)
			fail_msg("--time \"%s\" was taken", bad[i]);
		assert_int_equal(s, 42);
	}
}

static void test_time_limit_text(void **state)
{
	static const struct limit shown[] = {
		{"0:10:00", 600}, {"0:00:02", 2},	  {"1:00:00", 3600},
		{"23:59:59", 86399}, {"1-00:00:00", 86400}, {"1-02:30:15", 95415},
		{"unlimited", 0},
	};
	char text[32];
	uint64_t s;

	(void)state;
	for (size_t i = 0; i < N(shown); i++) {
		gp_time_limit_text(shown[i].seconds, text, sizeof(text));
		assert_string_equal(text, shown[i].text);
		assert_int_equal(gp_parse_time_limit(text, &s), 0); /* read back */
		assert_int_equal(s, shown[i].seconds);
	}
}

static void test_after(void **state)
{
	static const char *const bad[] = {
		"",	"0",	  "-1",	 "3:",	 "3:okk", "3:afterok", "3,",  ",3",
		"3,,4", "3 ,4",	  "x",	 "3:ok:any", "3,3:any", "9007199254740993",
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
	};
	struct gp_after a[GP_AFTER_MAX];
	char text[GP_AFTER_TEXT];
	int n = 42;

	(void)state;
	assert_int_equal(gp_parse_after("3", a, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].id, 3);
	assert_false(a[0].any); /* :ok, Slurm's afterok, is the default */
	assert_int_equal(gp_parse_after("3:any,12:ok,7", a, &n), 0);
	assert_int_equal(n, 3);
	assert_true(a[0].any);
	assert_false(a[1].any);
	assert_int_equal(a[2].id, 7);
	gp_after_text(a, n, text, sizeof(text));
	assert_string_equal(text, "3:any,12:ok,7:ok");
	assert_int_equal(gp_parse_after("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", a, &n), 0);
	assert_int_equal(n, GP_AFTER_MAX);
	gp_after_text(a, n, text, sizeof(text));
	assert_true(strlen(text) < sizeof(text));
	for (size_t i = 0; i < N(bad); i++) {
		n = 42;
		if (gp_parse_after(bad[i], a, &n) != -EINVAL)
			fail_msg("--after \"%s\" was taken", bad[i]);
		assert_int_equal(n, 42);
	}
}

static void test_array(void **state)
{
	static const char *const bad[] = {"", "0", "-1", "1-", "-", "3-2", "1001", "0-1000",
					  "a", "1,2", "1-2-3", " 1", "1000000"};
	unsigned a = 42, b = 42;

	(void)state;
	assert_int_equal(gp_parse_array("4", &a, &b), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 3);
	assert_int_equal(gp_parse_array("1", &a, &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(gp_parse_array("5-7", &a, &b), 0);
	assert_int_equal(a, 5);
	assert_int_equal(b, 7);
	assert_int_equal(gp_parse_array("3-3", &a, &b), 0);
	assert_int_equal(gp_parse_array("0-999", &a, &b), 0);
	assert_int_equal(gp_parse_array("1000", &a, &b), 0);
	assert_int_equal(b, 999);
	for (size_t i = 0; i < N(bad); i++) {
		a = b = 42;
		if (gp_parse_array(bad[i], &a, &b) != -EINVAL)
			fail_msg("--array \"%s\" was taken", bad[i]);
		assert_int_equal(a, 42);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_in_bytes),
		cmocka_unit_test(test_sizes_in_mib),
		cmocka_unit_test(test_sizes_refused),
		cmocka_unit_test(test_uint),
		cmocka_unit_test(test_time_limits),
		cmocka_unit_test(test_time_limit_text),
		cmocka_unit_test(test_after),
		cmocka_unit_test(test_array),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
