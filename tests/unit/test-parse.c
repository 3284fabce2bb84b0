/* test-parse.c — numbers and sizes that people type (src/base/parse.c):
 * every spelling of a size the tree has ever taken (4G, 4096M, 512K,
 * 1073741824, 1KiB) and the ones a Slurm user types (4GB, 4gb, 512MB); a
 * number without a unit in the unit the caller names (bytes, or MiB as
 * Slurm's --mem); and what is refused, with the result left untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_in_bytes),
		cmocka_unit_test(test_sizes_in_mib),
		cmocka_unit_test(test_sizes_refused),
		cmocka_unit_test(test_uint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
