/* test-metrics.c — the Prometheus text of the server (src/server/
 * metrics.c): the summary's quantiles over its window and the histogram's
 * buckets, and a rendering from a store alone (no agent): every sample
 * line in the exposition format, HELP and TYPE for each family, label
 * values escaped, the queue and quota series (overall and per model)
 * right, and no device, task or in-use series without the meter; and
 * the scopes: the pool's series name no tenant, a tenant sees its own
 * series and no other's, everything is everyone's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/metrics.h"

#define SAMPLE_LINE "^[a-z_:][a-z0-9_:]*(\\{[^}]*\\})? [0-9.eE+-]+$"

static void test_summary(void **state)
{
	struct gp_summary *s = calloc(1, sizeof(*s));

	(void)state;
	assert_non_null(s);
	assert_true(gp_summary_quantile(s, 0.5) == 0);
	for (int i = 1; i <= 100; i++)
		gp_summary_observe(s, i);
	assert_true(gp_summary_quantile(s, 0) == 1);
	assert_true(gp_summary_quantile(s, 0.5) == 51);
	assert_true(gp_summary_quantile(s, 0.99) == 99);
	assert_true(gp_summary_quantile(s, 1) == 100);
	assert_int_equal(s->count, 100);
	assert_true(s->sum == 5050);
	/* The window keeps the latest GP_SUMMARY_WINDOW; sum and count keep all. */
	for (int i = 0; i < GP_SUMMARY_WINDOW; i++)
		gp_summary_observe(s, 1000);
	assert_true(gp_summary_quantile(s, 0) == 1000);
	assert_int_equal(s->count, 100 + GP_SUMMARY_WINDOW);
	free(s);
}

static void test_histogram(void **state)
{
	struct gp_histogram h = {0};

	(void)state;
	gp_histogram_observe(&h, 0.05);
	gp_histogram_observe(&h, 0.1); /* a bound is in its bucket (le) */
	gp_histogram_observe(&h, 3);
	gp_histogram_observe(&h, 1e6);
	assert_int_equal(h.bucket[0], 2);
	assert_int_equal(h.bucket[3], 1);
	assert_int_equal(h.bucket[GP_WAIT_BUCKETS - 1], 1);
	assert_int_equal(h.count, 4);
	assert_true(gp_histogram_bound(0) == 0.1);
	assert_true(gp_histogram_bound(GP_WAIT_BUCKETS - 1) < 0);
}

static void assert_lines_valid(const char *text)
{
	char *copy = strdup(text), *save = NULL;
	int types = 0, helps = 0;
	regex_t re;

	assert_int_equal(regcomp(&re, SAMPLE_LINE, REG_EXTENDED | REG_NOSUB), 0);
	for (char *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		types += !strncmp(line, "# TYPE ", 7);
		helps += !strncmp(line, "# HELP ", 7);
		if (line[0] != '#' && regexec(&re, line, 0, NULL, 0) != 0)
			fail_msg("not a sample line: %s", line);
	}
	assert_true(types > 5);
	assert_int_equal(types, helps);
	regfree(&re);
	free(copy);
}

static void test_render_from_store(void **state)
{
	struct gp_tenant t = {.mem_guaranteed_mib = 4096, .compute_borrowable_pct = 150};
	struct gp_task task = {.mem_mib = 1, .compute_pct = 10, .devices = 1};
	struct gp_model_quota q = {.model = "T4", .mem_guaranteed_mib = 16384,
				   .compute_guaranteed_pct = 50, .compute_borrowable_pct = 25};
	struct gp_loop_stats *stats = calloc(1, sizeof(*stats));
	struct gp_metrics_source src = {.stats = stats, .scope = GP_METRICS_ALL};
	char token[GP_TOKEN_HEX + 1], *text = NULL;
	struct gp_store *s;

	(void)state;
	assert_int_equal(gp_store_open(":memory:", &s), 0);
	/* The store takes any name; the text must escape \ and ". */
	snprintf(t.name, sizeof(t.name), "we\\ird\"name");
	assert_int_equal(gp_store_tenant_add(s, &t, token), 0);
	q.tenant = t.id;
	assert_int_equal(gp_store_model_quota_set(s, &q), 0);
	task.tenant = t.id;
	snprintf(task.name, sizeof(task.name), "waits");
	snprintf(task.command, sizeof(task.command), "true");
	assert_int_equal(gp_store_task_add(s, &task), 0);
	gp_summary_observe(&stats->tick, 0.002);
	gp_histogram_observe(&stats->wait, 2);
	src.store = s;
	src.now_ms = task.created + 1500;

	assert_int_equal(gp_metrics_render(&src, &text), 0);
	assert_lines_valid(text);
	assert_non_null(strstr(text, "\ngpupool_queue_length 1\n"));
	assert_non_null(strstr(text, "\ngpupool_queue_oldest_wait_seconds 1.5\n"));
	assert_non_null(strstr(text, "gpupool_tasks{state=\"pending\"} 1\n"));
	assert_non_null(strstr(
		text, "gpupool_tenant_quota_memory_bytes{tenant=\"we\\\\ird\\\"name\","
		      "part=\"guaranteed\"} 4294967296\n"));
	assert_non_null(strstr(
		text, "gpupool_tenant_quota_compute_devices{tenant=\"we\\\\ird\\\"name\","
		      "part=\"borrowable\"} 1.5\n"));
	/* Model quotas: their own families, the overall ones unchanged. */
	assert_non_null(strstr(text, "gpupool_tenant_model_quota_memory_bytes{tenant=\"we\\\\ird"
				     "\\\"name\",model=\"T4\",part=\"guaranteed\"} 17179869184\n"));
	assert_non_null(strstr(text, "gpupool_tenant_model_quota_compute_devices{tenant=\"we\\\\"
				     "ird\\\"name\",model=\"T4\",part=\"borrowable\"} 0.25\n"));
	assert_non_null(strstr(text, "gpupool_queue_wait_seconds_bucket{le=\"5\"} 1\n"));
	assert_non_null(
		strstr(text, "gpupool_scheduler_tick_seconds{quantile=\"0.5\"} 0.002\n"));
	assert_non_null(strstr(text, "gpupool_alerts_active{level=\"critical\"} 0\n"));
	/* Without the agent: no devices, no tasks' live numbers. */
	assert_null(strstr(text, "gpupool_device_"));
	assert_null(strstr(text, "gpupool_task_"));
	assert_null(strstr(text, "gpupool_tenant_model_memory_in_use"));
	free(text);
	gp_store_close(s);
	free(stats);
}

/* Renders src with scope (and tenant) into a new string. */
static char *render_as(struct gp_metrics_source *src, enum gp_metrics_scope scope,
		       int64_t tenant)
{
	char *text = NULL;

	src->scope = scope;
	src->tenant = tenant;
	assert_int_equal(gp_metrics_render(src, &text), 0);
	assert_lines_valid(text);
	return text;
}

static void test_scopes(void **state)
{
	struct gp_tenant a = {.name = "vision", .mem_guaranteed_mib = 1024};
	struct gp_tenant b = {.name = "nlp", .mem_guaranteed_mib = 2048};
	struct gp_model_quota q = {.model = "T4", .mem_guaranteed_mib = 512};
	struct gp_loop_stats *stats = calloc(1, sizeof(*stats));
	struct gp_metrics_source src = {.stats = stats};
	char token[GP_TOKEN_HEX + 1], *text;
	struct gp_store *s;

	(void)state;
	assert_non_null(stats);
	assert_int_equal(gp_store_open(":memory:", &s), 0);
	assert_int_equal(gp_store_tenant_add(s, &a, token), 0);
	assert_int_equal(gp_store_tenant_add(s, &b, token), 0);
	q.tenant = b.id;
	assert_int_equal(gp_store_model_quota_set(s, &q), 0);
	src.store = s;

	/* The zero value: the pool's series, no tenant in any label. */
	text = render_as(&src, GP_METRICS_POOL, 0);
	assert_non_null(strstr(text, "\ngpupool_queue_length 0\n"));
	assert_non_null(strstr(text, "gpupool_tasks{state=\"pending\"} 0\n"));
	assert_null(strstr(text, "tenant"));
	assert_null(strstr(text, "vision"));
	assert_null(strstr(text, "nlp"));
	free(text);

	text = render_as(&src, GP_METRICS_TENANT, a.id);
	assert_non_null(strstr(text, "\ngpupool_queue_length 0\n"));
	assert_non_null(strstr(text, "gpupool_tenant_quota_memory_bytes{tenant=\"vision\","
				     "part=\"guaranteed\"} 1073741824\n"));
	assert_null(strstr(text, "nlp"));
	assert_null(strstr(text, "gpupool_tenant_model_"));
	free(text);

	text = render_as(&src, GP_METRICS_TENANT, b.id);
	assert_non_null(strstr(text, "gpupool_tenant_model_quota_memory_bytes{tenant=\"nlp\","
				     "model=\"T4\",part=\"guaranteed\"} 536870912\n"));
	assert_null(strstr(text, "vision"));
	free(text);

	text = render_as(&src, GP_METRICS_ALL, 0);
	assert_non_null(strstr(text, "tenant=\"vision\""));
	assert_non_null(strstr(text, "tenant=\"nlp\",model=\"T4\""));
	free(text);
	gp_store_close(s);
	free(stats);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_render_from_store),
		cmocka_unit_test(test_scopes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
