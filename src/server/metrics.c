/* metrics.c — the Prometheus text of GET /metrics (metrics.h).
 *
 * The text is written to a memory stream, one family at a time: its HELP
 * and TYPE lines, then its samples. Label values are escaped as the
 * format requires (backslash, double quote, newline). Families whose
 * source is absent (no agent: no devices, no running tasks; no model
 * quotas) are left out rather than reported as zeros. Model quotas have
 * families of their own (gpupool_tenant_model_*), so that no sum over a
 * family counts a share twice. */
#include "server/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models.h"
#include "vendor/vendor.h"

#define LABELS_MAX	 512
#define ALERTS_COUNT_MAX 100000
#define MIB		 (1024.0 * 1024.0)

/* Upper bounds of the queue-wait buckets, in seconds; the last is +Inf. */
static const double wait_bounds[GP_WAIT_BUCKETS - 1] = {
	0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800, 7200,
};

/* ---- observations ------------------------------------------------------- */

void gp_summary_observe(struct gp_summary *s, double v)
{
	s->window[s->next] = v;
	s->next = (s->next + 1) % GP_SUMMARY_WINDOW;
	if (s->filled < GP_SUMMARY_WINDOW)
		s->filled++;
	s->count++;
	s->sum += v;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double gp_summary_quantile(const struct gp_summary *s, double q)
{
	double sorted[GP_SUMMARY_WINDOW];
	unsigned i;

	if (!s->filled)
		return 0;
	memcpy(sorted, s->window, s->filled * sizeof(sorted[0]));
	qsort(sorted, s->filled, sizeof(sorted[0]), by_value);
	i = (unsigned)(q * (s->filled - 1) + 0.5);
	return sorted[i < s->filled ? i : s->filled - 1];
}

void gp_histogram_observe(struct gp_histogram *h, double seconds)
{
	unsigned i = 0;

	while (i < GP_WAIT_BUCKETS - 1 && seconds > wait_bounds[i])
		i++;
	h->bucket[i]++;
	h->count++;
	h->sum += seconds;
}

double gp_histogram_bound(unsigned i)
{
	return i < GP_WAIT_BUCKETS - 1 ? wait_bounds[i] : -1;
}

/* ---- writing ------------------------------------------------------------ */

/* Labels of one sample: `a="x",b="y"`, escaped. */
struct labels {
	char text[LABELS_MAX];
	size_t len;
};

static void labels_add(struct labels *l, const char *key, const char *value)
{
	size_t room = sizeof(l->text) - l->len;
	int n = snprintf(l->text + l->len, room, "%s%s=\"", l->len ? "," : "", key);

	if (n < 0 || (size_t)n >= room)
		return;
	l->len += (size_t)n;
	for (; *value && l->len + 3 < sizeof(l->text); value++) {
		const char *esc = *value == '\\'   ? "\\\\"
				  : *value == '"'  ? "\\\""
				  : *value == '\n' ? "\\n"
						   : NULL;

		if (esc) {
			memcpy(l->text + l->len, esc, 2);
			l->len += 2;
		} else {
			l->text[l->len++] = *value;
		}
	}
	if (l->len + 2 <= sizeof(l->text)) {
		l->text[l->len++] = '"';
		l->text[l->len] = '\0';
	}
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Whole numbers (bytes, counts) in full; others to 9 digits. */
static void sample(FILE *out, const char *name, const struct labels *l, double v)
{
	const char *fmt = v == floor(v) && fabs(v) < 1e15 ? "%.0f" : "%.9g";

	fprintf(out, "%s", name);
	if (l && l->len)
		fprintf(out, "{%s}", l->text);
	fputc(' ', out);
	fprintf(out, fmt, v);
	fputc('\n', out);
}

static void sample_u64(FILE *out, const char *name, const struct labels *l, uint64_t v)
{
	if (l && l->len)
		fprintf(out, "%s{%s} %" PRIu64 "\n", name, l->text, v);
	else
		fprintf(out, "%s %" PRIu64 "\n", name, v);
}

/* ---- the queue and the tasks' states ------------------------------------ */

static const char *const state_names[] = {
	"pending", "running", "succeeded", "failed", "cancelled", "preempted", "lost",
};

static int task_states(FILE *out, struct gp_store *store)
{
	family(out, "gpupool_tasks", "gauge", "Tasks in the store, by state.");
	for (int s = GP_TASK_PENDING; s <= GP_TASK_LOST; s++) {
		struct labels l = {0};
		int n = gp_store_task_count(store, s);

		if (n < 0)
			return n;
		labels_add(&l, "state", state_names[s]);
		sample(out, "gpupool_tasks", &l, n);
	}
	return 0;
}

static void wait_histogram(FILE *out, const struct gp_histogram *h)
{
	uint64_t cumulative = 0;

	family(out, "gpupool_queue_wait_seconds", "histogram",
	       "Time from submission to start of the tasks started since the server "
	       "started.");
	for (unsigned i = 0; i < GP_WAIT_BUCKETS; i++) {
		struct labels l = {0};
		char bound[32];

		cumulative += h->bucket[i];
		if (i < GP_WAIT_BUCKETS - 1)
			snprintf(bound, sizeof(bound), "%g", gp_histogram_bound(i));
		else
			snprintf(bound, sizeof(bound), "+Inf");
		labels_add(&l, "le", bound);
		sample_u64(out, "gpupool_queue_wait_seconds_bucket", &l, cumulative);
	}
	sample(out, "gpupool_queue_wait_seconds_sum", NULL, h->sum);
	sample_u64(out, "gpupool_queue_wait_seconds_count", NULL, h->count);
}

static int queue_metrics(FILE *out, const struct gp_metrics_source *src)
{
	int64_t oldest;
	int n, r = gp_store_queue_stats(src->store, &n, &oldest);

	if (r < 0)
		return r;
	family(out, "gpupool_queue_length", "gauge",
	       "Tasks waiting: pending or preempted.");
	sample(out, "gpupool_queue_length", NULL, n);
	family(out, "gpupool_queue_oldest_wait_seconds", "gauge",
	       "How long the oldest waiting task has waited since its submission (0: "
	       "none).");
	sample(out, "gpupool_queue_oldest_wait_seconds", NULL,
	       n && src->now_ms > oldest ? (double)(src->now_ms - oldest) / 1000.0 : 0);
	if (src->stats)
		wait_histogram(out, &src->stats->wait);
	return task_states(out, src->store);
}

/* ---- tenants ------------------------------------------------------------ */

/* Names of the running tasks and of the tenants, for labels; the
 * tenants' model quotas. */
struct names {
	struct gp_task *task;
	int tasks;
	struct gp_tenant *tenant;
	int tenants;
	struct gp_model_quota *quota;
	int quotas;
};

static void tenant_quota(FILE *out, const struct gp_tenant *t, int n)
{
	static const char *const parts[] = {"guaranteed", "borrowable"};

	family(out, "gpupool_tenant_quota_memory_bytes", "gauge",
	       "A tenant's memory quota, summed over devices.");
	for (int i = 0; i < n; i++)
		for (int p = 0; p < 2; p++) {
			struct labels l = {0};

			labels_add(&l, "tenant", t[i].name);
			labels_add(&l, "part", parts[p]);
			sample(out, "gpupool_tenant_quota_memory_bytes", &l,
			       (double)(p ? t[i].mem_borrowable_mib
					  : t[i].mem_guaranteed_mib) *
				       MIB);
		}
	family(out, "gpupool_tenant_quota_compute_devices", "gauge",
	       "A tenant's compute quota in devices (1 = a whole device).");
	for (int i = 0; i < n; i++)
		for (int p = 0; p < 2; p++) {
			struct labels l = {0};

			labels_add(&l, "tenant", t[i].name);
			labels_add(&l, "part", parts[p]);
			sample(out, "gpupool_tenant_quota_compute_devices", &l,
			       (p ? t[i].compute_borrowable_pct
				  : t[i].compute_guaranteed_pct) /
				       100.0);
		}
}

static void tenant_use(FILE *out, const struct gp_meter *m, const struct gp_tenant *t,
		       int n)
{
	family(out, "gpupool_tenant_memory_in_use_bytes", "gauge",
	       "Memory the tenant's running tasks hold (their slices), summed over "
	       "devices.");
	for (int i = 0; i < n; i++) {
		struct labels l = {0};
		uint64_t mem, pct;

		gp_meter_tenant_use(m, t[i].id, &mem, &pct);
		labels_add(&l, "tenant", t[i].name);
		sample(out, "gpupool_tenant_memory_in_use_bytes", &l, (double)mem * MIB);
	}
	family(out, "gpupool_tenant_compute_in_use_devices", "gauge",
	       "Compute the tenant's running tasks hold, in devices.");
	for (int i = 0; i < n; i++) {
		struct labels l = {0};
		uint64_t mem, pct;

		gp_meter_tenant_use(m, t[i].id, &mem, &pct);
		labels_add(&l, "tenant", t[i].name);
		sample(out, "gpupool_tenant_compute_in_use_devices", &l, pct / 100.0);
	}
}

/* The labels of model quota q: its tenant's name and its model. */
static void model_labels(const struct names *nm, const struct gp_model_quota *q,
			 struct labels *l)
{
	for (int i = 0; i < nm->tenants; i++)
		if (nm->tenant[i].id == q->tenant)
			labels_add(l, "tenant", nm->tenant[i].name);
	labels_add(l, "model", q->model);
}

/* One family of the model quotas, by part; value() picks the number. */
static void model_quota_family(FILE *out, const struct names *nm, const char *name,
			       const char *help,
			       double (*value)(const struct gp_model_quota *, int part))
{
	static const char *const parts[] = {"guaranteed", "borrowable"};

	family(out, name, "gauge", help);
	for (int i = 0; i < nm->quotas; i++)
		for (int p = 0; p < 2; p++) {
			struct labels l = {0};

			model_labels(nm, &nm->quota[i], &l);
			labels_add(&l, "part", parts[p]);
			sample(out, name, &l, value(&nm->quota[i], p));
		}
}

static double quota_mem(const struct gp_model_quota *q, int part)
{
	return (double)(part ? q->mem_borrowable_mib : q->mem_guaranteed_mib) * MIB;
}

static double quota_compute(const struct gp_model_quota *q, int part)
{
	return (part ? q->compute_borrowable_pct : q->compute_guaranteed_pct) / 100.0;
}

static void model_quota(FILE *out, const struct names *nm)
{
	if (!nm->quotas)
		return;
	model_quota_family(out, nm, "gpupool_tenant_model_quota_memory_bytes",
			   "A tenant's memory quota on the devices of one model.",
			   quota_mem);
	model_quota_family(
		out, nm, "gpupool_tenant_model_quota_compute_devices",
		"A tenant's compute quota on the devices of one model, in devices.",
		quota_compute);
}

/* What the tenants hold on the devices of their model quotas; `memory`
 * picks the family. */
static void model_use_family(FILE *out, const struct gp_meter *m, const struct names *nm,
			     bool memory)
{
	const char *name = memory ? "gpupool_tenant_model_memory_in_use_bytes"
				  : "gpupool_tenant_model_compute_in_use_devices";

	family(out, name, "gauge",
	       memory ? "Memory the tenant's running tasks hold on the devices its model "
			"quota governs."
		      : "Compute the tenant's running tasks hold on the devices its "
			"model "
			"quota governs, in devices.");
	for (int i = 0; i < nm->quotas; i++) {
		struct labels l = {0};
		uint64_t mem, pct;

		gp_meter_model_use(m, nm->quota, nm->quotas, i, &mem, &pct);
		model_labels(nm, &nm->quota[i], &l);
		sample(out, name, &l, memory ? (double)mem * MIB : pct / 100.0);
	}
}

static void model_use(FILE *out, const struct gp_meter *m, const struct names *nm)
{
	if (!nm->quotas)
		return;
	model_use_family(out, m, nm, true);
	model_use_family(out, m, nm, false);
}

/* ---- devices ------------------------------------------------------------ */

static void device_labels(const struct gp_agent_node *node, unsigned i, struct labels *l)
{
	char index[16];

	snprintf(index, sizeof(index), "%u", i);
	labels_add(l, "device", node->device[i].uuid);
	labels_add(l, "model", node->device[i].name);
	labels_add(l, "vendor", node->device[i].vendor ? node->device[i].vendor->name
						       : gp_vendor_name(gp_model_vendor(node->device[i].name)));
	labels_add(l, "index", index);
}

/* One family over every device; value() picks the number. */
static void device_family(FILE *out, const struct gp_meter *m, const char *name,
			  const char *help,
			  double (*value)(const struct gp_meter_device *))
{
	const struct gp_agent_node *node = gp_meter_node(m);

	family(out, name, "gauge", help);
	for (unsigned i = 0; i < node->devices; i++) {
		const struct gp_meter_device *d = gp_meter_device(m, i);
		struct labels l = {0};

		device_labels(node, i, &l);
		sample(out, name, &l, value(d));
	}
}

static double dev_up(const struct gp_meter_device *d)
{
	return d->ok;
}
static double dev_util(const struct gp_meter_device *d)
{
	return d->util_pct / 100.0;
}
static double dev_util_avg(const struct gp_meter_device *d)
{
	return d->util_avg_pct / 100.0;
}
static double dev_used(const struct gp_meter_device *d)
{
	return (double)d->mem_used_mib * MIB;
}
static double dev_total(const struct gp_meter_device *d)
{
	return (double)d->mem_total_mib * MIB;
}
static double dev_alloc_pct(const struct gp_meter_device *d)
{
	return d->alloc_pct / 100.0;
}
static double dev_alloc_mem(const struct gp_meter_device *d)
{
	return (double)d->alloc_mem_mib * MIB;
}

static void device_metrics(FILE *out, const struct gp_meter *m)
{
	device_family(out, m, "gpupool_device_up",
		      "1 when NVML answered for the device at the last sampling.",
		      dev_up);
	device_family(out, m, "gpupool_device_utilization_ratio",
		      "Share of time a kernel ran on the device (physical, NVML), last "
		      "sampling.",
		      dev_util);
	device_family(
		out, m, "gpupool_device_utilization_window_ratio",
		"The device's utilization averaged over the server's --util-window.",
		dev_util_avg);
	device_family(out, m, "gpupool_device_memory_used_bytes",
		      "Device memory in use (NVML).", dev_used);
	device_family(out, m, "gpupool_device_memory_total_bytes", "Device memory.",
		      dev_total);
	device_family(
		out, m, "gpupool_device_allocated_compute_ratio",
		"Compute shares of the slices running on the device, summed (1 = all).",
		dev_alloc_pct);
	device_family(out, m, "gpupool_device_allocated_memory_bytes",
		      "Memory of the slices running on the device, summed.",
		      dev_alloc_mem);
}

/* ---- tasks -------------------------------------------------------------- */

static void task_labels(const struct names *nm, const struct gp_meter_task *t,
			struct labels *l)
{
	char id[24];

	snprintf(id, sizeof(id), "%" PRId64, t->id);
	labels_add(l, "task", id);
	for (int i = 0; i < nm->tasks; i++)
		if (nm->task[i].id == t->id)
			labels_add(l, "name", nm->task[i].name);
	for (int i = 0; i < nm->tenants; i++)
		if (nm->tenant[i].id == t->tenant)
			labels_add(l, "tenant", nm->tenant[i].name);
}

static double task_alloc_mem(const struct gp_meter_task *t)
{
	uint64_t mib = 0;

	for (unsigned i = 0; i < t->devices; i++)
		mib += t->mem_mib[i];
	return (double)mib * MIB;
}

/* Whether the caller sees the series of tenant id and its tasks. */
static bool scope_has(const struct gp_metrics_source *src, int64_t id)
{
	return src->scope == GP_METRICS_ALL ||
	       (src->scope == GP_METRICS_TENANT && src->tenant == id);
}

static void task_family(FILE *out, const struct gp_metrics_source *src,
			const struct names *nm, const char *name, const char *help,
			int which)
{
	const struct gp_meter *m = src->meter;

	family(out, name, "gauge", help);
	for (int i = 0; i < gp_meter_tasks(m); i++) {
		const struct gp_meter_task *t = gp_meter_task(m, i);
		struct labels l = {0};
		double v = which == 0	? t->effective
			   : which == 1 ? (double)t->mem_used_mib * MIB
			   : which == 2 ? task_alloc_mem(t)
					: t->compute_pct / 100.0;

		if ((which == 0 && !t->sampled) || !scope_has(src, t->tenant))
			continue;
		task_labels(nm, t, &l);
		sample(out, name, &l, v);
	}
}

static void task_metrics(FILE *out, const struct gp_metrics_source *src,
			 const struct names *nm)
{
	task_family(out, src, nm, "gpupool_task_effective_utilization_ratio",
		    "Device time a running task used over its allocated compute, last "
		    "sampling "
		    "interval (above 1: it borrowed idle time).",
		    0);
	task_family(out, src, nm, "gpupool_task_memory_used_bytes",
		    "Device memory a running task's processes hold (NVML), on all its "
		    "devices.",
		    1);
	task_family(out, src, nm, "gpupool_task_memory_allocated_bytes",
		    "Memory of a running task's slices, on all its devices.", 2);
	task_family(out, src, nm, "gpupool_task_compute_share_ratio",
		    "A running task's compute share of each of its devices.", 3);
}

/* ---- the scheduler and the alerts --------------------------------------- */

static void summary_samples(FILE *out, const char *name, const struct gp_summary *sum)
{
	static const double quantiles[] = {0.5, 0.9, 0.99};
	char total[96];

	for (size_t i = 0; i < sizeof(quantiles) / sizeof(quantiles[0]); i++) {
		struct labels l = {0};
		char q[16];

		snprintf(q, sizeof(q), "%g", quantiles[i]);
		labels_add(&l, "quantile", q);
		sample(out, name, &l, gp_summary_quantile(sum, quantiles[i]));
	}
	snprintf(total, sizeof(total), "%s_sum", name);
	sample(out, total, NULL, sum->sum);
	snprintf(total, sizeof(total), "%s_count", name);
	sample_u64(out, total, NULL, sum->count);
}

static void scheduler_metrics(FILE *out, const struct gp_loop_stats *st)
{
	struct labels all = {0}, changed = {0};

	family(out, "gpupool_scheduler_tick_seconds", "summary",
	       "Duration of the scheduling loop's ticks (reap, schedule, start, sample); "
	       "quantiles over the last 1024.");
	summary_samples(out, "gpupool_scheduler_tick_seconds", &st->tick);
	family(out, "gpupool_scheduler_pass_seconds", "summary",
	       "Duration of the scheduling passes over the whole queue (a copy of the "
	       "pool, the decisions, the starts, preemptions and reasons that follow); "
	       "quantiles over the last 1024.");
	summary_samples(out, "gpupool_scheduler_pass_seconds", &st->pass);
	family(out, "gpupool_scheduler_pass_cpu_seconds", "summary",
	       "CPU time of the loop's thread in each of those passes (their duration less "
	       "the waits for a core or a lock); quantiles over the last 1024.");
	summary_samples(out, "gpupool_scheduler_pass_cpu_seconds", &st->pass_cpu);
	family(out, "gpupool_scheduler_passes_total", "counter",
	       "Scheduling passes, by what they looked at: the whole queue, or the tasks "
	       "that changed alone (a tick with no change makes none).");
	labels_add(&all, "queue", "all");
	sample_u64(out, "gpupool_scheduler_passes_total", &all, st->pass.count);
	labels_add(&changed, "queue", "changed");
	sample_u64(out, "gpupool_scheduler_passes_total", &changed, st->passes_changed);
}

static int alert_metrics(FILE *out, struct gp_store *store)
{
	static const char *const levels[] = {"info", "warning", "critical"};
	struct gp_alert *all = NULL;
	int count[3] = {0}, n = 0;
	int r = gp_store_alert_list(store, -1, true, ALERTS_COUNT_MAX, &all, &n);

	if (r < 0)
		return r;
	for (int i = 0; i < n; i++)
		count[all[i].level]++;
	free(all);
	family(out, "gpupool_alerts_active", "gauge", "Alerts not cleared, by level.");
	for (int i = 0; i < 3; i++) {
		struct labels l = {0};

		labels_add(&l, "level", levels[i]);
		sample(out, "gpupool_alerts_active", &l, count[i]);
	}
	return 0;
}

/* ---- the server's own guards ------------------------------------------- */

static void guard_counter(FILE *out, const char *name, const char *help, uint64_t v)
{
	family(out, name, "counter", help);
	sample_u64(out, name, NULL, v);
}

/* The HTTP front's counts and the database's state: first, and without
 * the store, so that a damaged database still shows here. */
static void guard_metrics(FILE *out, const struct gp_metrics_guard *g)
{
	guard_counter(out, "gpupool_http_connections_refused_total",
		      "Connections over a bound, answered 503.", g->conn_refused);
	guard_counter(out, "gpupool_http_connections_evicted_total",
		      "Connections still waiting for their request's headers, closed to "
		      "make room for another client's.",
		      g->conn_evicted);
	guard_counter(out, "gpupool_http_token_failures_total",
		      "Requests whose bearer token the server does not know.", g->token_unknown);
	guard_counter(out, "gpupool_http_token_delayed_total",
		      "Requests with a token answered 429: their client waits after "
		      "unknown tokens.",
		      g->token_waiting);
	family(out, "gpupool_database_damaged", "gauge",
	       "1 when SQLite found the database damaged: writes are refused; restore a "
	       "backup.");
	sample(out, "gpupool_database_damaged", NULL, g->db_damaged);
	if (!g->backups)
		return;
	family(out, "gpupool_database_backup_last_timestamp_seconds", "gauge",
	       "When the newest good backup of the database was taken (unix seconds); 0: "
	       "none yet.");
	sample(out, "gpupool_database_backup_last_timestamp_seconds", NULL,
	       (double)(g->backup_last_ms / 1000));
	guard_counter(out, "gpupool_database_backup_failures_total",
		      "Backups of the database that failed.", g->backup_failed);
}

/* ---- all of it ---------------------------------------------------------- */

/* The tenants, model quotas and running tasks the caller may see. */
static int names_load(const struct gp_metrics_source *src, struct names *nm)
{
	int64_t only = src->scope == GP_METRICS_ALL ? -1 : src->tenant;
	int r = gp_store_tenant_list(src->store, &nm->tenant, &nm->tenants);
	int kept = 0;

	for (int i = 0; i < nm->tenants; i++)
		if (scope_has(src, nm->tenant[i].id) && !nm->tenant[i].removed)
			nm->tenant[kept++] = nm->tenant[i];
	nm->tenants = kept;
	if (r == 0)
		r = gp_store_model_quota_list(src->store, only, &nm->quota, &nm->quotas);
	if (r == 0)
		r = gp_store_task_list(src->store, only, GP_TASK_RUNNING, &nm->task,
				       &nm->tasks);
	return r;
}

static int render(FILE *out, const struct gp_metrics_source *src, struct names *nm)
{
	bool tenants = src->scope != GP_METRICS_POOL;
	int r;

	if (src->guard)
		guard_metrics(out, src->guard);
	r = queue_metrics(out, src);

	if (r == 0 && tenants)
		r = names_load(src, nm);
	if (r == 0 && tenants) {
		tenant_quota(out, nm->tenant, nm->tenants);
		model_quota(out, nm);
	}
	if (r == 0 && src->meter && tenants) {
		tenant_use(out, src->meter, nm->tenant, nm->tenants);
		model_use(out, src->meter, nm);
	}
	if (r == 0 && src->meter)
		device_metrics(out, src->meter);
	if (r == 0 && src->meter && tenants)
		task_metrics(out, src, nm);
	if (r == 0 && src->stats)
		scheduler_metrics(out, src->stats);
	if (r == 0)
		r = alert_metrics(out, src->store);
	return r;
}

int gp_metrics_render(const struct gp_metrics_source *src, char **ret)
{
	struct names nm = {0};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int r;

	if (!out)
		return -ENOMEM;
	r = render(out, src, &nm);
	if (fclose(out) != 0 && r == 0)
		r = -ENOMEM;
	free(nm.task);
	free(nm.tenant);
	free(nm.quota);
	if (r < 0) {
		free(text);
		return r;
	}
	*ret = text;
	return 0;
}
