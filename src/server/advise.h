/* advise.h — right-sizing (issue 16; docs/operations.md): what the runs
 * of a template, or of a task name, used of the slices they held, and the
 * slice that would have done.
 *
 * From a period's usage records and their tasks: the records of tasks
 * submitted with a template are grouped by the template, the others by
 * tenant and task name (whole-device tasks have no slice to size and are
 * left out). For each group: the memory proposed is the most any run's
 * processes held on a device, as sampled (the records' mem_peak_mib),
 * plus a headroom (the seeds' 10-15 %: 15 by default), rounded up to
 * 256 MiB; the compute proposed is a high percentile (95th by default) of
 * the share of a device the runs used, over time (each record's
 * used_ms / its length, weighted by its length), rounded up to a whole
 * percent. The evidence goes with it: runs, records, hours, the memory
 * held and peak, the used share's median, percentile and most, and what
 * the proposal would have freed over the period (allocated minus
 * proposed compute x time, in GPU-hours; likewise memory, in GiB-hours;
 * negative where the runs needed more than they held).
 *
 * Pure computation over what it is given. Ownership: gp_advise_end's
 * *ret is malloc'd (free). */
#ifndef GP_SERVER_ADVISE_H
#define GP_SERVER_ADVISE_H

#include <stdint.h>

#include "server/store.h"

#define GP_ADVISE_HEADROOM_PCT 15
#define GP_ADVISE_PERCENTILE   95
#define GP_ADVISE_MEM_STEP_MIB 256

struct gp_advise_options {
	unsigned headroom_pct; /* 0 to 100 */
	unsigned percentile;   /* 50 to 100 */
};

struct gp_advice {
	bool is_template;	      /* a template's runs; else a task name's */
	char name[GP_STORE_NAME_MAX]; /* the template's, or the task's */
	int64_t tenant;		      /* a task name's tenant; 0 for a template */
	int runs;		      /* tasks */
	int64_t records;
	double hours;		       /* of records (device-hours held) */
	uint64_t mem_held_mib;	       /* the most a run held (its slice) */
	uint64_t mem_peak_mib;	       /* the most a run's processes used */
	uint64_t mem_proposed_mib;     /* 0: no memory was sampled */
	unsigned compute_held_pct;     /* the most a run held */
	double compute_median_pct;     /* of the share used, over time */
	double compute_percentile_pct; /* at the options' percentile */
	double compute_max_pct;	       /* the most one record used */
	unsigned compute_proposed_pct; /* 1 to 100 */
	double freed_gpu_hours;	       /* over the records' time */
	double freed_mem_gib_hours;    /* likewise; 0 when no memory was sampled */
};

/* The advice is added up page by page (a month may hold millions of
 * records): start with the period's tasks (kept by reference until
 * gp_advise_end), add the records, then take the advice, sorted by kind
 * then name. The used share is kept as a histogram of 0.1 % steps (to
 * 200 %, borrowed time included), so memory does not grow with the
 * records. */
struct gp_advise;

/* 0, -EINVAL (options out of bounds) or -ENOMEM. */
int gp_advise_begin(const struct gp_task *tasks, int n_tasks,
		    const struct gp_advise_options *o, struct gp_advise **ret);
/* Records of a task not given, or of a whole-device task, are left out. */
int gp_advise_add(struct gp_advise *a, const struct gp_usage_record *recs, int n);
/* The advice (*ret malloc'd), and a freed. 0 or -ENOMEM (a freed too). */
int gp_advise_end(struct gp_advise *a, struct gp_advice **ret, int *ret_n);

/* Applying the advice (POST /v1/advice/apply, `gpupool advise --apply`)
 * makes each template's proposal a new template beside it, NAME.v2,
 * NAME.v3, ...: nothing running changes, and new submissions choose.
 * version_name: the name for a proposal of mem_mib and compute_pct of
 * template `name` among the templates all[0..n): 0 with the first
 * NAME.vN (N from 2) not taken in buf; -EEXIST with the version that
 * already has that slice in buf; -ENOSPC when none up to
 * GP_ADVISE_VERSION_MAX is free, or the name does not fit buf. */
#define GP_ADVISE_VERSION_MAX 999

int gp_advise_version_name(const struct gp_template *all, int n, const char *name,
			   uint64_t mem_mib, unsigned compute_pct, char *buf, size_t size);

#endif
