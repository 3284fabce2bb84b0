/* metrics.h — the server's Prometheus metrics (GET /metrics): what the
 * store, the meter and the loop know, in the text exposition format
 * (version 0.0.4: "# HELP", "# TYPE", then `name{label="value"} number`
 * lines), and the two kinds of observation the loop keeps for it:
 *   - a summary: the scheduler's tick durations, quantiles over the last
 *     GP_SUMMARY_WINDOW ticks, with the sum and count of all of them;
 *   - a histogram: how long tasks waited in the queue before they
 *     started, in fixed buckets (seconds).
 * Names follow Prometheus's conventions: a gpupool_ prefix, base units
 * (bytes, seconds), ratios from 0 to 1, _total for counters. docs/api.md
 * lists every series.
 *
 * Who sees what (the scope): the pool's series name no tenant and no
 * task (the queue, the tasks by state, the devices, the scheduler, the
 * alert counts); a tenant sees those and its own tenant and task series;
 * the admin and the scrape token see every series.
 *
 * Ownership: gp_metrics_render gives the caller a malloc'd string. */
#ifndef GP_SERVER_METRICS_H
#define GP_SERVER_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "server/meter.h"
#include "server/store.h"

#define GP_SUMMARY_WINDOW 1024
#define GP_WAIT_BUCKETS	  11

struct gp_summary {
	double window[GP_SUMMARY_WINDOW]; /* the latest observations, a ring */
	unsigned filled, next;
	uint64_t count;
	double sum;
};

struct gp_histogram {
	uint64_t bucket[GP_WAIT_BUCKETS]; /* not cumulative: counts per bucket */
	uint64_t count;
	double sum;
};

/* What the loop observes for the metrics. */
struct gp_loop_stats {
	struct gp_summary tick;	  /* seconds per scheduling tick */
	struct gp_summary pass;	  /* seconds per pass over the whole queue */
	struct gp_summary pass_cpu; /* the CPU time of each of those passes */
	uint64_t passes_changed;  /* passes over the tasks that changed alone */
	struct gp_histogram wait; /* seconds from submission to start */
};

void gp_summary_observe(struct gp_summary *s, double v);
/* The q-quantile (0..1) of the window; 0 when it is empty. */
double gp_summary_quantile(const struct gp_summary *s, double q);
void gp_histogram_observe(struct gp_histogram *h, double seconds);
/* The upper bound of bucket i (the last is +Inf). */
double gp_histogram_bound(unsigned i);

/* Which series are rendered; the zero value is the narrowest. */
enum gp_metrics_scope {
	GP_METRICS_POOL,   /* no tenant and no task in any label */
	GP_METRICS_TENANT, /* the pool's, and those of the tenant `tenant` */
	GP_METRICS_ALL,
};

/* What guards the server itself, for the pool's series: the HTTP
 * front's counts (http.h) and the database's state (store.h, backup.h). */
struct gp_metrics_guard {
	uint64_t conn_refused, conn_evicted; /* connections: 503, closed to make room */
	uint64_t token_unknown, token_waiting; /* requests: unknown token, 429 */
	bool db_damaged;
	bool backups;		/* backups are taken (--backup-interval) */
	int64_t backup_last_ms; /* the newest good one, unix ms; 0: none yet */
	uint64_t backup_failed;
};

/* What the metrics are made of; meter and stats are NULL without the
 * agent (the series of devices and tasks are then absent), guard NULL
 * where nothing is counted (its series are then absent). */
struct gp_metrics_source {
	struct gp_store *store;
	const struct gp_meter *meter;
	const struct gp_loop_stats *stats;
	const struct gp_metrics_guard *guard;
	int64_t now_ms;
	enum gp_metrics_scope scope;
	int64_t tenant; /* with GP_METRICS_TENANT: whose */
};

/* The metrics as text in *ret (malloc'd). -ENOMEM, or a store error. */
int gp_metrics_render(const struct gp_metrics_source *src, char **ret);

#endif
