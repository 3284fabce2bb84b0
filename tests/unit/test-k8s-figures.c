/* test-k8s-figures.c — a pod's figures per device on /metrics
 * (src/k8s/slice-figures.c): what the node writes the server reads back
 * (used time to the µs, memory, violations), other lines and malformed ones skipped,
 * escapes in label values, the address check of gpupool.io/metrics, and
 * the node's count of violations by processes of no pod. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "k8s/objects.h"
#include "k8s/slice-figures.h"

static struct gp_slice_figure figure(const char *uid, const char *uuid, uint64_t used_us)
{
	struct gp_slice_figure s = { .used_us = used_us, .mem_used_bytes = 3ULL << 30,
				     .mem_limit_bytes = 4ULL << 30, .compute_pct = 30,
				     .violations = used_us % 7 };

	snprintf(s.ns, sizeof(s.ns), "team-a");
	snprintf(s.pod, sizeof(s.pod), "train");
	snprintf(s.uid, sizeof(s.uid), "%s", uid);
	snprintf(s.container, sizeof(s.container), "main");
	snprintf(s.uuid, sizeof(s.uuid), "%s", uuid);
	snprintf(s.node, sizeof(s.node), "node-1");
	return s;
}

/* The text the node program writes for these figures, with other
 * metrics around them. */
static char *written(const struct gp_slice_figure *all, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	fputs("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 40\n", f);
	gp_slice_figures_head(f);
	for (size_t i = 0; i < n; i++)
		gp_slice_figure_write(f, &all[i]);
	fputs("gpupool_node_allocations_total 7\n", f);
	fclose(f);
	return text;
}

static void what_is_written_is_read_back(void **state)
{
	struct gp_slice_figure in[3] = {
		figure("uid-1", "GPU-a", 1234567), figure("uid-1", "GPU-b", 0),
		figure("uid-2", "GPU-a", 3600000000ULL + 1),
	};
	struct gp_slice_figure *out = NULL;
	char *text = written(in, 3);
	size_t n = 0;

	(void)state;
	assert_int_equal(gp_slice_figures_read(text, &out, &n), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(out[i].uid, in[i].uid);
		assert_string_equal(out[i].uuid, in[i].uuid);
		assert_string_equal(out[i].ns, "team-a");
		assert_string_equal(out[i].pod, "train");
		assert_int_equal(out[i].used_us, in[i].used_us);
		assert_int_equal(out[i].mem_used_bytes, 3ULL << 30);
		assert_int_equal(out[i].violations, in[i].violations);
	}
	free(out);
	free(text);
}

static void other_and_malformed_lines_are_skipped(void **state)
{
	const char *text =
		"gpupool_slice_used_seconds_total{uid=\"u\",UUID=\"G\"} 2.5\n"
		"gpupool_slice_used_seconds_total{uid=\"u\"} 9\n"              /* no UUID */
		"gpupool_slice_used_seconds_total{uid=\"\",UUID=\"G\"} 9\n"    /* empty uid */
		"gpupool_slice_used_seconds_total{uid=\"v\",UUID=\"G\"} -1\n"  /* negative */
		"gpupool_slice_used_seconds_total{uid=\"w\",UUID=\"G\"} x\n"   /* no number */
		"gpupool_slice_used_seconds_total{uid=\"z,UUID=\"G\"} 1\n"     /* unclosed */
		"gpupool_slice_used_seconds_totally{uid=\"y\",UUID=\"G\"} 1\n" /* another name */
		"gpupool_slice_compute_percent{uid=\"u\",UUID=\"G\"} 30\n"
		"# gpupool_slice_used_seconds_total{uid=\"c\",UUID=\"G\"} 1\n"
		"gpupool_slice_used_seconds_total{pod=\"p\\\"q\\\\\",uid=\"e\",UUID=\"G\"} 1";
	struct gp_slice_figure *out = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(gp_slice_figures_read(text, &out, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].uid, "u");
	assert_int_equal(out[0].used_us, 2500000);
	assert_string_equal(out[1].uid, "e");
	assert_string_equal(out[1].pod, "p\"q\\");
	assert_int_equal(out[1].used_us, 1000000);
	free(out);
	assert_int_equal(gp_slice_figures_read("", &out, &n), 0);
	assert_int_equal(n, 0);
	free(out);
}

static void metrics_addresses_are_host_and_port(void **state)
{
	(void)state;
	assert_true(gp_kube_address_valid("10.0.3.7:9400"));
	assert_true(gp_kube_address_valid("127.0.0.1:1"));
	assert_true(gp_kube_address_valid("node-1.example:65535"));
	assert_true(gp_kube_address_valid("[fd00::1]:9400"));
	assert_false(gp_kube_address_valid("10.0.3.7"));
	assert_false(gp_kube_address_valid(":9400"));
	assert_false(gp_kube_address_valid("10.0.3.7:0"));
	assert_false(gp_kube_address_valid("10.0.3.7:65536"));
	assert_false(gp_kube_address_valid("10.0.3.7:94x"));
	assert_false(gp_kube_address_valid("evil/path?:80"));
	assert_false(gp_kube_address_valid("user@host:80"));
}

/* The node's count of violations by processes of no pod: written, read
 * back; its HELP line or another metric of a longer name is not it. */
static void no_pod_violations_are_read_back(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	uint64_t v = 0;

	(void)state;
	assert_non_null(f);
	fputs("gpupool_node_violations_no_pod_total_x 9\n", f);
	gp_node_violations_write(f, 3);
	fclose(f);
	assert_true(gp_node_violations_read(text, &v));
	assert_int_equal(v, 3);
	free(text);
	assert_false(gp_node_violations_read("# HELP gpupool_node_violations_no_pod_total x\n", &v));
	assert_false(gp_node_violations_read("gpupool_node_violations_no_pod_total abc\n", &v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(what_is_written_is_read_back),
		cmocka_unit_test(other_and_malformed_lines_are_skipped),
		cmocka_unit_test(metrics_addresses_are_host_and_port),
		cmocka_unit_test(no_pod_violations_are_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
