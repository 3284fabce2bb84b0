/* test-slurm-share.c — what the SPANK plugin decides without Slurm
 * (src/slurm/share.c): the site's plugstack.conf arguments, the users'
 * --gpu-* options with their errors, and a step's limits from its shards,
 * its options, the site's bounds and the QOS; a step's figures as text
 * and back (figures.c), and a month's usage from sacct's lines
 * (sacct.c), a step across nodes counted once per node. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "slurm/figures.h"
#include "slurm/sacct.h"
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

static struct gp_slurm_figure figure(const char *step, const char *model,
				     uint64_t wall_ms, unsigned compute, uint64_t used_ms,
				     uint64_t mem_mib)
{
	struct gp_slurm_figure f = {.wall_ms = wall_ms,
				    .compute = compute,
				    .used_ms = used_ms,
				    .mem_mib = mem_mib};

	snprintf(f.step, sizeof(f.step), "%s", step);
	snprintf(f.uuid, sizeof(f.uuid), "GPU-%s", model[0] == 'T' ? "t4" : "a100");
	snprintf(f.model, sizeof(f.model), "%s", model);
	return f;
}

static void figures_are_written_and_read_back_to_the_millisecond(void **state)
{
	struct gp_slurm_figure two[2] = {
		figure("slurm-42.0", "Tesla T4", 2013, 50, 934, 3840),
		figure("slurm-42.0", "NVIDIA A100-SXM4-80GB", 2013, 50, 1, 40960),
	};
	struct gp_slurm_figure got[4];
	char line[1024], comment[2200];

	(void)state;
	gp_slurm_figures_format(two, 2, line, sizeof(line));
	assert_string_equal(line,
			    "gpupool slurm-42.0: GPU-t4 (Tesla T4) 2.013 s at 50 %, "
			    "allocated 1.006 GPU-s, used 0.934 GPU-s, memory 3840 MiB; "
			    "GPU-a100 (NVIDIA A100-SXM4-80GB) 2.013 s at 50 %, "
			    "allocated 1.006 GPU-s, used 0.001 GPU-s, memory 40960 MiB");
	/* A job's comment: the site's own words, then two steps. */
	snprintf(comment, sizeof(comment), "checked by ops %s %s", line,
		 "gpupool slurm-42.1: GPU-t4 (Tesla T4) 0.500 s at 25 %, allocated "
		 "0.125 GPU-s, used 0.100 GPU-s, memory 3840 MiB");
	assert_int_equal(gp_slurm_figures_parse(comment, got, 4), 3);
	assert_string_equal(got[0].step, "slurm-42.0");
	assert_string_equal(got[1].model, "NVIDIA A100-SXM4-80GB");
	assert_int_equal(got[1].wall_ms, 2013);
	assert_int_equal(got[1].mem_mib, 40960);
	assert_int_equal(got[0].used_ms, 934);
	assert_string_equal(got[2].step, "slurm-42.1");
	assert_int_equal(got[2].compute, 25);
	assert_int_equal(got[2].wall_ms, 500);
	/* More than fit: counted, not written past the end. */
	assert_int_equal(gp_slurm_figures_parse(comment, got, 1), 3);
	/* Not ours, or cut short. */
	assert_int_equal(gp_slurm_figures_parse("gpupool slurm-1.0: nothing", got, 4), 0);
	assert_int_equal(gp_slurm_figures_parse("", got, 4), 0);
	line[60] = '\0';
	assert_int_equal(gp_slurm_figures_parse(line, got, 4), 0);
}

static void a_months_usage_adds_up_per_account_and_model(void **state)
{
	/* Jobs starting on 2026-11-30 23:59:59 and 2026-12-01 00:00:00 UTC. */
	const char *lines =
		"physics|1796083199|gpupool slurm-1.0: GPU-t4 (Tesla T4) "
		"1.000 s at 100 %, allocated 1.000 GPU-s, used 1.000 GPU-s, "
		"memory 15360 MiB\n"
		"physics|1796083200|gpupool slurm-2.0: GPU-t4 (Tesla T4) "
		"2.000 s at 50 %, allocated 1.000 GPU-s, used 0.400 GPU-s, "
		"memory 3840 MiB gpupool slurm-2.1: GPU-t4 (Tesla T4) 1.000 s "
		"at 25 %, allocated 0.250 GPU-s, used 0.200 GPU-s, memory 3840 MiB\n"
		"biology|1796086800|gpupool slurm-3.0: GPU-a (NVIDIA "
		"A100-SXM4-80GB) 4.000 s at 10 %, allocated 0.400 GPU-s, used "
		"0.300 GPU-s, memory 8192 MiB\n"
		"biology|1796086801|\n"
		"chemistry|Unknown|\n"
		"garbage\n";
	FILE *in = fmemopen((void *)lines, strlen(lines), "r");
	struct gp_slurm_usage u = {0};
	int64_t dec = 1796083200000;

	(void)state;
	assert_int_equal(gp_slurm_usage_read(in, dec, dec + 31LL * 86400000, &u), 0);
	fclose(in);
	assert_int_equal(u.n_tenants, 2);
	assert_int_equal(u.n, 2);
	/* Sorted by account: biology first. */
	assert_string_equal(u.tenants[u.sums[0].tenant - 1].name, "biology");
	assert_string_equal(u.sums[0].device_model, "NVIDIA A100-SXM4-80GB");
	assert_int_equal(u.sums[0].pct_ms, 10 * 4000);
	assert_int_equal(u.sums[0].mib_ms, 8192LL * 4000);
	assert_string_equal(u.tenants[u.sums[1].tenant - 1].name, "physics");
	assert_int_equal(u.sums[1].records, 2);
	assert_int_equal(u.sums[1].duration_ms, 3000);
	assert_int_equal(u.sums[1].pct_ms, 50 * 2000 + 25 * 1000);
	assert_int_equal(u.sums[1].used_ms, 600);
	gp_slurm_usage_free(&u);
	assert_null(u.sums);
}

static void a_step_across_nodes_is_billed_once_for_each_node(void **state)
{
	/* Two nodes of one step, alike but for their figures (simulated
	 * GPUs of one UUID); the second node's entry written twice; a
	 * second step on the first node. */
	const char *n1 =
		"gpupool slurm-5.0 on n1 (node 1 of 2): GPU-t4 (Tesla T4) 2.000 s "
		"at 25 %, allocated 0.500 GPU-s, used 0.300 GPU-s, memory 3840 MiB";
	const char *n2 =
		"gpupool slurm-5.0 on n2 (node 2 of 2): GPU-t4 (Tesla T4) 2.100 s "
		"at 25 %, allocated 0.525 GPU-s, used 0.400 GPU-s, memory 3840 MiB";
	const char *s1 =
		"gpupool slurm-5.1 on n1 (node 1 of 1): GPU-t4 (Tesla T4) 1.000 s "
		"at 50 %, allocated 0.500 GPU-s, used 0.100 GPU-s, memory 7680 MiB";
	char lines[2048];
	FILE *in;
	struct gp_slurm_usage u = {0};
	int64_t dec = 1796083200000;

	(void)state;
	snprintf(lines, sizeof(lines), "physics|1796083300|%s %s %s %s\n", n1, n2, n2,
		 s1);
	in = fmemopen(lines, strlen(lines), "r");
	assert_int_equal(gp_slurm_usage_read(in, dec, dec + 31LL * 86400000, &u), 0);
	fclose(in);
	assert_int_equal(u.n, 1);
	assert_int_equal(u.sums[0].records, 3);
	assert_int_equal(u.sums[0].duration_ms, 2000 + 2100 + 1000);
	assert_int_equal(u.sums[0].pct_ms, 25 * 2000 + 25 * 2100 + 50 * 1000);
	assert_int_equal(u.sums[0].used_ms, 300 + 400 + 100);
	gp_slurm_usage_free(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_sites_arguments_are_read_and_checked),
		cmocka_unit_test(bad_options_say_what_to_give),
		cmocka_unit_test(a_step_gets_its_shards_part),
		cmocka_unit_test(options_qos_and_bounds),
		cmocka_unit_test(figures_are_written_and_read_back_to_the_millisecond),
		cmocka_unit_test(a_months_usage_adds_up_per_account_and_model),
		cmocka_unit_test(a_step_across_nodes_is_billed_once_for_each_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
