/* history.h — what-if on the pool's own history (issue 16; `gpupool sim
 * --history`, docs/operations.md): the tasks a pool ran, replayed in time
 * on a pool of cards under a placement policy and a set of slices, and
 * what that would have given: the makespan, the allocated and the used
 * share of the pool, queue waits, tasks never placed, and GPU-hours per
 * device model.
 *
 * The replay is event-driven. A task arrives at its submission time and
 * joins the queue, ordered by priority (9 first), then arrival, then id,
 * as the server's scheduler orders it. At each time something arrives or
 * departs (departures first), the queue is walked in that order and each
 * task that fits now is placed with the core's cluster and policy
 * (core/cluster.h): a task that does not fit is passed over, the next
 * ones still tried. A placed task departs at its start plus its duration.
 * Tasks that no pool state can take (too large, a model the pool lacks)
 * and tasks still queued when nothing runs and nothing is left to arrive
 * are "never placed".
 *
 * Duration model. A task's work is the device time it used (used_ms, all
 * its devices); it ran for run_ms at its recorded share, so on average it
 * used u = used_ms / (run_ms × devices) of each device. Under a setup
 * that gives it another share s (an override), it keeps run_ms unless
 * s < u: then it could not have done its work in run_ms, and its run
 * stretches to used_ms / (s × devices). A larger share never shortens a
 * run (that it was throttled is not known), and a task whose slice is
 * not overridden keeps run_ms whatever it used (a task under `shared`
 * isolation that borrowed idle time, u above its share, runs as it ran).
 *
 * Memory. A task whose overridden memory is below the most its processes
 * held on a device (mem_peak_mib; 0: not sampled, never counted) would
 * have been stopped out of memory: it is counted in would_fail and still
 * replayed, at its recorded slice (memory and share), so that the other
 * figures stay comparable.
 *
 * What is not modelled: tenants' quotas and preemption (a task waits only
 * for room), host CPU and memory, compute overcommit, hardware partitions
 * (every card takes software slices), restarts, and services' autoscaling
 * (a service's replicas are replayed as the tasks they were). Whole and
 * exclusive tasks take whole idle cards and are never overridden.
 *
 * Figures: the makespan runs from the first arrival to the last departure;
 * the allocated share is Σ share × devices × duration over cards ×
 * makespan, the physical utilization Σ used_ms over cards × makespan
 * (both in %); waits (start − arrival) are over the placed tasks, their
 * percentiles nearest-rank (p50 of two waits is the smaller); GPU-hours
 * are share × duration summed per device model of the cards the tasks
 * were placed on.
 *
 * Pure computation: no I/O, no clock; the same inputs give the same
 * answer (ties in the policy go to card order). Ownership: everything is
 * in the caller's storage; the functions keep no pointer after they
 * return. Functions return 0 or a negative errno. */
#ifndef GP_SIM_HISTORY_H
#define GP_SIM_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/resources.h"

#define GP_HISTORY_NAME_MAX 64 /* task, template, tenant and model names */

/* One recorded task that ran. */
struct gp_history_task {
	int64_t id;
	int64_t arrival_ms;		 /* submitted */
	int64_t run_ms;			 /* how long it held its devices, >= 0 */
	int64_t used_ms;		 /* device time its processes used, all devices */
	uint32_t mem_peak_mib;		 /* the most held on one device; 0: not sampled */
	uint32_t mem_mib;		 /* its slice, per device (not for whole) */
	unsigned compute_pct;		 /* likewise, 1 to 100 */
	unsigned devices;		 /* 1 to GP_NODE_DEVICES_MAX */
	bool whole;			 /* whole idle cards (whole or exclusive) */
	unsigned priority;		 /* 0 to 9, 9 first */
	char model[GP_HISTORY_NAME_MAX]; /* "A100", "T4|L4", "nvidia"; "": any */
	char template_name[GP_HISTORY_NAME_MAX]; /* "": none */
	char name[GP_HISTORY_NAME_MAX];
	char tenant[GP_HISTORY_NAME_MAX];
};

/* One card of the pool; cards with the same `node` are one node (at most
 * GP_NODE_DEVICES_MAX of them), and a task's devices are on one node. */
struct gp_history_card {
	char model[GP_HISTORY_NAME_MAX]; /* the device's name, "Tesla T4" */
	uint32_t mem_mib;
	uint32_t node;
};

/* Another slice for the tasks of a template, or for the tasks of no
 * template with a name (of one tenant, or any when tenant is ""). A task
 * of a template takes only its template's override. 0 keeps a value. */
struct gp_history_override {
	bool is_template;
	char name[GP_HISTORY_NAME_MAX];
	char tenant[GP_HISTORY_NAME_MAX];
	uint32_t mem_mib;
	unsigned compute_pct; /* 1 to 100 */
};

/* What a replay runs on. */
struct gp_history_setup {
	const char *policy; /* the core's (`gpupool policies`) */
	const struct gp_history_card *card;
	size_t cards;
	unsigned max_tasks; /* slices one card may hold at once; 0: no cap */
	const struct gp_history_override *override;
	size_t overrides;
};

struct gp_history_model {
	char model[GP_HISTORY_NAME_MAX];
	unsigned cards;
	double gpu_hours; /* allocated: share × duration */
};

struct gp_history_result {
	size_t tasks, placed, never_placed;
	size_t would_fail; /* memory below the recorded peak */
	size_t stretched;  /* share below the used share */
	size_t cards;
	double makespan_s;
	double alloc_pct, util_pct; /* of the pool over the makespan */
	double wait_p50_s, wait_p99_s, wait_max_s, wait_mean_s;
	double gpu_hours;			      /* all models */
	struct gp_history_model model[GP_MODELS_MAX]; /* in card order */
	int models;
};

/* What became of one task. */
struct gp_history_outcome {
	bool placed;
	bool would_fail, stretched;
	int64_t start_ms, end_ms; /* when placed */
	unsigned compute_pct;	  /* the share it ran with (100: whole) */
	uint32_t mem_mib;
};

/* Replays the n tasks on the setup. ret_outcome (NULL: not wanted) gets
 * n entries, in the tasks' order. -ENOENT for an unknown policy; -EINVAL
 * for a pool without cards, a node of more than GP_NODE_DEVICES_MAX cards
 * or more than GP_MODELS_MAX models, a card without memory, a task
 * without devices or with more than GP_NODE_DEVICES_MAX, a run_ms or
 * used_ms below 0, a share out of 1 to 100, an override's share over
 * 100; -ENOMEM. */
int gp_history_run(const struct gp_history_task *task, size_t n,
		   const struct gp_history_setup *setup,
		   struct gp_history_result *ret_result,
		   struct gp_history_outcome *ret_outcome);

/* The override setup gives task t, or NULL. */
const struct gp_history_override *
gp_history_override_of(const struct gp_history_setup *setup,
		       const struct gp_history_task *t);

#endif
