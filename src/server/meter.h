/* meter.h — metering: what each running task holds of its devices and
 * uses of them, written to the store as usage records; and the live
 * numbers of the devices and tasks that metrics, `gpupool top` and the
 * alert rules read.
 *
 * The loop tells the meter when a task starts (its devices, its slice),
 * when its share changes and when it ends. The meter samples the node
 * (gp_agent_sample) every sample_ms, and at once when a task ended or a
 * share changed, and then writes, per running task and device, one record
 * of the interval since the previous record (or the start): the slice
 * held (memory, compute share; a whole device is all its memory and
 * 100 %) and the device time used. An ended task gets its last record, up
 * to its end, at that sampling and is forgotten. No interval crosses a
 * UTC month boundary (it is cut there, used time pro rata), so a month's
 * bill is the sum of the records that start in it.
 *
 * Each sampling's records go to the store in one call (one transaction,
 * or the caller's). A sampling that answered also writes the history the
 * console draws (store.h, gp_store_series_add): each device's memory
 * used, held and total, compute held and utilization; each tenant's
 * memory and compute held and the memory its processes used; the queue's
 * length and oldest wait; at most one sample a second, kept
 * GP_METER_SERIES_KEEP_DAYS days, thinned to one a minute after a day
 * (pruned once an hour). The meter is changed from one thread (the loop's),
 * and only under the lock of the API, whose handlers read the live
 * numbers; that thread may read it without the lock (gp_meter_probe,
 * gp_meter_due). Functions return 0 or a
 * negative errno. Ownership: the store and the agent outlive the meter;
 * pointers it returns are valid until its next call that changes it. */
#ifndef GP_SERVER_METER_H
#define GP_SERVER_METER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/agent.h"
#include "server/store.h"

#define GP_METER_GROW_MAX 64 /* the most samplings the growth check looks at */
#define GP_METER_SERIES_STEP_MS	  1000 /* the history's samples, at most one a ... */
#define GP_METER_SERIES_KEEP_DAYS 8    /* kept this long, thinned after a day */

struct gp_meter;

struct gp_meter_options {
	unsigned sample_ms;	/* the sampling period */
	unsigned grow_samples;	/* memory "grows" after rising in this many samplings */
	unsigned util_window_s; /* the window of each device's average utilization */
};

/* A device at the last sampling. */
struct gp_meter_device {
	bool ok;	   /* sampled (NVML answered) */
	unsigned util_pct; /* physical, per NVML */
	uint64_t mem_used_mib, mem_total_mib;
	uint64_t alloc_mem_mib; /* the running tasks' slices, summed */
	unsigned alloc_pct;	/* likewise, compute */
	double util_avg_pct;	/* over the window ... */
	bool window_full;	/* ... once it has been watched that long */
};

/* A running task. Live numbers are those of the last sampling. */
struct gp_meter_task {
	int64_t id, tenant;
	pid_t pgid;
	unsigned devices;
	unsigned device[GP_AGENT_DEVICES_MAX];	/* indices into the node's devices */
	uint64_t mem_mib[GP_AGENT_DEVICES_MAX]; /* allocated on each */
	unsigned compute_pct;			/* allocated on each */
	bool sampled;				/* the numbers below are set */
	double effective;      /* used / allocated compute over the last interval */
	uint64_t mem_used_mib; /* its processes', on all its devices */
	bool mem_growing;      /* rose in each of the last grow_samples samplings */
};

int gp_meter_new(struct gp_store *store, struct gp_agent *agent,
		 const struct gp_meter_options *o, struct gp_meter **ret);
struct gp_meter *gp_meter_free(struct gp_meter *m); /* accepts NULL; returns NULL */

/* Task t started at now_ms (unix ms) on the node's devices dev[0..n-1],
 * its processes in group pgid. -ENOSPC when the meter follows
 * GP_AGENT_TASKS_MAX tasks. */
int gp_meter_start(struct gp_meter *m, const struct gp_task *t, const unsigned *dev,
		   unsigned n, pid_t pgid, int64_t now_ms);
/* Task id ended at now_ms; its last record is written at the next
 * sampling, which is due at once. Unknown ids are ignored. */
void gp_meter_end(struct gp_meter *m, int64_t id, int64_t now_ms);
/* A running task's share is now compute_pct: the interval so far is
 * recorded with the old share at the next sampling, which is due at once. */
void gp_meter_share(struct gp_meter *m, int64_t id, unsigned compute_pct);

/* Is a sampling due at now_ms? */
bool gp_meter_due(const struct gp_meter *m, int64_t now_ms);
/* Samples, updates the live numbers and writes the records (one store
 * call). When the sampling fails, the intervals still close (held, none
 * used); when the write fails, the records are kept and written with the
 * next sampling's. Returns the store's error. */
int gp_meter_sample(struct gp_meter *m, int64_t now_ms);

/* gp_meter_sample in two halves, so that a caller holds no lock while
 * the device library answers: probe asks the agent (NVML) and changes
 * nothing the readers see; take, with the same meter unchanged
 * meanwhile, updates the live numbers and writes the records, and frees
 * what the probe holds. probe returns the agent's answer (take closes
 * the intervals without it when it failed). */
struct gp_meter_probe {
	struct gp_usage_device dev[GP_AGENT_DEVICES_MAX];
	struct gp_usage_group *groups; /* malloc'd */
	size_t n;
	int sampled; /* 0, or the sampling's error */
};
int gp_meter_probe(struct gp_meter *m, struct gp_meter_probe *ret);
int gp_meter_take(struct gp_meter *m, struct gp_meter_probe *pr, int64_t now_ms);

/* Usage records made, not yet in the store: the meter's, and those of
 * an engine that meters its own tasks (a cluster's pods). */
struct gp_meter_records {
	struct gp_usage_record *r; /* malloc'd; the owner frees it */
	int n, cap;
};
/* One task's interval on one device: what it held, and used. */
struct gp_meter_interval {
	int64_t task, tenant;
	const char *device_uuid, *device_model;
	uint64_t mem_mib, mem_peak_mib;
	unsigned compute_pct;
	uint64_t used_us;       /* device time its processes used in it */
};
/* Adds iv's records over [from, to) to rs (none when to <= from): the
 * time used in whole ms, never more than the interval, cut at the UTC
 * month boundaries (used pro rata), so that a month's bill is the records
 * that start in it. -ENOMEM. */
int gp_meter_interval_close(struct gp_meter_records *rs, const struct gp_meter_interval *iv,
			    int64_t from, int64_t to);

/* Writes rs to the store in one call, under the caller's lock of it.
 * When the store fails for a while (-EIO: a full disk, a lock) the
 * records are kept for the next call, up to a million; records it
 * refuses (-EINVAL, -ENOENT) are dropped, as they would be refused
 * again. Returns the store's answer. */
int gp_meter_records_save(struct gp_store *s, struct gp_meter_records *rs);

/* The live numbers. device: NULL past the node's devices. */
const struct gp_meter_device *gp_meter_device(const struct gp_meter *m, unsigned i);
int gp_meter_tasks(const struct gp_meter *m);
const struct gp_meter_task *gp_meter_task(const struct gp_meter *m, int i);
/* Running task id's, or NULL (none, or m NULL). */
const struct gp_meter_task *gp_meter_task_of(const struct gp_meter *m, int64_t id);
/* The node the devices are of (names, UUIDs). */
const struct gp_agent_node *gp_meter_node(const struct gp_meter *m);
/* What a tenant's running tasks hold: memory in MiB and compute in
 * percent of a device, summed over their devices. */
void gp_meter_tenant_use(const struct gp_meter *m, int64_t tenant, uint64_t *ret_mem_mib,
			 uint64_t *ret_pct);
/* Likewise, what the tenant of the model quota all[q] holds on the
 * devices that quota governs (gp_store_model_quota_find among all[0..n),
 * as the scheduler charges it). */
void gp_meter_model_use(const struct gp_meter *m, const struct gp_model_quota *all, int n,
			int q, uint64_t *ret_mem_mib, uint64_t *ret_pct);
/* The sampling period; when the last sampling was (unix ms; 0: none). */
unsigned gp_meter_period_ms(const struct gp_meter *m);
unsigned gp_meter_grow_samples(const struct gp_meter *m);
int64_t gp_meter_last_ms(const struct gp_meter *m);

#endif
