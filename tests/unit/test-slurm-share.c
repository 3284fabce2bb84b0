/* test-slurm-share.c — what the SPANK plugin decides without Slurm
 * (src/slurm/share.c): the site's plugstack.conf arguments, the users'
 * --gpu-* options with their errors, and a step's limits from its shards,
 * its options, the site's bounds and the QOS. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "slurm/share.h"

#define GIB (1024ULL * 1024 * 1024)
#define MIB (1024ULL * 1024)

static struct gp_slurm_site site_of(const char *a, const char *b, const char *c)
{
	char *argv[4] = {"preload=/usr/lib/gpupool/libgpushare.so"};
	int argc = 1;
	struct gp_slurm_site s;
	char err[256];

	if (a)
		argv[argc++] = (char *)a;
	if (b)
		argv[argc++] = (char *)b;
	if (c)
		argv[argc++] = (char *)c;
	assert_int_equal(gp_slurm_site_parse(argc, argv, &s, err, sizeof(err)), 0);
	return s;
}

static void the_sites_arguments_are_read_and_checked(void **state)
{
	struct gp_slurm_site s =
		site_of("shards=8", "qos=high:8,normal:5", "mem_max=16G");
	char *bad[] = {"preload=/x", "shards=0"};
	char *unknown[] = {"preload=/x", "colour=blue"};
	char *none[] = {"run_dir=/run/gpupool"};
	char err[256];

	(void)state;
	assert_int_equal(s.shards, 8);
	assert_int_equal(s.n_qos, 2);
	assert_string_equal(s.qos[0].name, "high");
	assert_int_equal(s.qos[1].priority, 5);
	assert_int_equal(s.mem_max, 16 * GIB);
	assert_int_equal(s.isolation, GP_ISOLATION_HARD);
	assert_int_equal(gp_slurm_site_parse(2, bad, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "shards=0"));
	assert_int_equal(gp_slurm_site_parse(2, unknown, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown"));
	assert_int_equal(gp_slurm_site_parse(1, none, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "libgpushare.so"));
}

static void bad_options_say_what_to_give(void **state)
{
	struct gp_slurm_user u = GP_SLURM_USER_NONE;
	char err[256];

	(void)state;
	assert_int_equal(gp_slurm_option(GP_SLURM_OPT_MEM, "2G", &u, err, sizeof(err)),
			 0);
	assert_int_equal(u.mem, 2 * GIB);
	assert_int_equal(gp_slurm_option(GP_SLURM_OPT_MEM, "abc", &u, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(
		err, "--gpu-mem=abc: not a size of device memory; give e.g. 2G or 512M");
	assert_int_equal(
		gp_slurm_option(GP_SLURM_OPT_COMPUTE, "101", &u, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(
		gp_slurm_option(GP_SLURM_OPT_PRIORITY, "10", &u, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(
		gp_slurm_option(GP_SLURM_OPT_ISOLATION, "soft", &u, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(
		gp_slurm_option(GP_SLURM_OPT_PRIORITY, "9", &u, err, sizeof(err)), 0);
	assert_int_equal(u.priority, 9);
	assert_int_equal(gp_slurm_option(GP_SLURM_OPT_REPORT, NULL, &u, err, sizeof(err)),
			 0);
	assert_true(u.report);
}

static void a_step_gets_its_shards_part(void **state)
{
	struct gp_slurm_site s = site_of(NULL, NULL, NULL);
	struct gp_slurm_user u = GP_SLURM_USER_NONE;
	struct gp_slurm_step four = {
		.devices = 1, .shards = 4, .device_mem = 15360 * MIB};
	struct gp_slurm_step whole = {.devices = 2, .device_mem = 80 * GIB};
	struct gp_task_limits l;
	char err[256];

	(void)state;
	assert_int_equal(gp_slurm_limits(&s, &u, &four, &l, err, sizeof(err)), 0);
	assert_int_equal(l.mem_bytes, 3840 * MIB);
	assert_int_equal(l.compute, 25);
	assert_int_equal(l.priority, 5);
	/* Whole GPUs: no memory limit, the whole device's time. */
	assert_int_equal(gp_slurm_limits(&s, &u, &whole, &l, err, sizeof(err)), 0);
	assert_int_equal(l.mem_bytes, 0);
	assert_int_equal(l.compute, 100);
}

static void options_qos_and_bounds(void **state)
{
	struct gp_slurm_site s = site_of("qos=high:8", "compute_max=50", "mem_max=8G");
	struct gp_slurm_user u = GP_SLURM_USER_NONE;
	struct gp_slurm_step step = {
		.devices = 1, .shards = 4, .qos = "high", .device_mem = 16 * GIB};
	struct gp_task_limits l;
	char err[256];

	(void)state;
	assert_int_equal(gp_slurm_limits(&s, &u, &step, &l, err, sizeof(err)), 0);
	assert_int_equal(l.priority, 8);
	u.compute = 30;
	u.mem = 2 * GIB;
	u.priority = 2;
	assert_int_equal(gp_slurm_limits(&s, &u, &step, &l, err, sizeof(err)), 0);
	assert_int_equal(l.compute, 30);
	assert_int_equal(l.mem_bytes, 2 * GIB);
	assert_int_equal(l.priority, 2);
	u.compute = 70;
	assert_int_equal(gp_slurm_limits(&s, &u, &step, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "compute 0 % to 50 %"));
	u.compute = 0;
	u.mem = 32 * GIB;
	assert_int_equal(gp_slurm_limits(&s, &u, &step, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than the device has"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_sites_arguments_are_read_and_checked),
		cmocka_unit_test(bad_options_say_what_to_give),
		cmocka_unit_test(a_step_gets_its_shards_part),
		cmocka_unit_test(options_qos_and_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
