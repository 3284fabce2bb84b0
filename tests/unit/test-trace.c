/* test-trace.c — loading openb CSV traces (src/sim/trace.c), including
 * the errors a user sees for bad input. Runs in tests/ (data in data/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "base/csvfile.h"
#include "sim/trace.h"

static void nodes_load(void **state)
{
	struct gp_trace t = { 0 };
	char err[GP_ERR_MAX];
	(void)state;

	assert_int_equal(gp_trace_load_nodes(&t, "data/nodes.csv", err, sizeof(err)), 0);
	assert_int_equal(t.nodes, 3);
	assert_int_equal(t.gpus, 6);
	assert_int_equal(t.models, 2);
	assert_string_equal(t.model[t.node[1].device[0].model], "A100");
	assert_int_equal(t.node[1].cpu_milli, 64000);
	assert_int_equal(t.node[1].devices, 4);
	assert_int_equal(t.node[2].devices, 0);
	gp_trace_release(&t);
}

static void both_pod_layouts_load(void **state)
{
	struct gp_trace t = { 0 };
	char err[GP_ERR_MAX];
	const struct gp_request *p;
	(void)state;

	assert_int_equal(gp_trace_load_nodes(&t, "data/nodes.csv", err, sizeof(err)), 0);
	assert_int_equal(gp_trace_load_pods(&t, "data/pods-11.csv", err, sizeof(err)), 0);
	assert_int_equal(gp_trace_load_pods(&t, "data/pods-5.csv", err, sizeof(err)), 0);
	assert_int_equal(t.pods, 6);
	p = t.pod;
	assert_true(p[0].whole);
	assert_int_equal(p[0].devices, 1);
	assert_false(p[1].whole);
	assert_int_equal(p[1].dev_compute, 460);
	assert_int_equal(p[1].models, 3);           /* A100 | T4 */
	assert_int_equal(p[2].devices, 0);
	assert_int_equal(p[3].devices, 2);
	assert_int_equal(p[3].models, 2);           /* A100 only */
	assert_int_equal(p[4].devices, 4);
	assert_int_equal(p[5].dev_compute, 250);
	assert_int_equal(p[5].mem_mib, 2048);
	gp_trace_release(&t);
}

/* Loads `file` as pods and checks that the error names it, the line and
 * the reason. */
static void expect_error(const char *file, const char *line, const char *reason)
{
	struct gp_trace t = { 0 };
	char err[GP_ERR_MAX], where[128];

	assert_true(gp_trace_load_pods(&t, file, err, sizeof(err)) < 0);
	snprintf(where, sizeof(where), "%s:%s", file, line);
	if (!strstr(err, where) || !strstr(err, reason))
		fail_msg("error \"%s\" lacks \"%s\" or \"%s\"", err, where, reason);
	gp_trace_release(&t);
}

static void bad_input_names_file_line_and_reason(void **state)
{
	(void)state;
	expect_error("data/bad-number.csv", "3", "cpu_milli must be a whole number");
	expect_error("data/bad-share.csv", "2", "needs num_gpu 1");
	expect_error("data/bad-header.csv", "1", "lacks the column \"cpu_milli\"");
	expect_error("data/short-row.csv", "2", "fields");
	expect_error("data/bad-quote.csv", "3", "");
	expect_error("data/missing.csv", "", "cannot open");
}

static void cluster_keeps_model_ids(void **state)
{
	struct gp_trace t = { 0 };
	struct gp_cluster *c;
	char err[GP_ERR_MAX];
	(void)state;

	assert_int_equal(gp_trace_load_nodes(&t, "data/nodes.csv", err, sizeof(err)), 0);
	assert_int_equal(gp_trace_cluster(&t, 1, &c), 0);
	assert_int_equal(gp_cluster_node_count(c), 3);
	assert_int_equal(gp_cluster_model_id(c, "A100", false), 1);
	gp_cluster_free(c);
	gp_trace_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nodes_load),
		cmocka_unit_test(both_pod_layouts_load),
		cmocka_unit_test(bad_input_names_file_line_and_reason),
		cmocka_unit_test(cluster_keeps_model_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
