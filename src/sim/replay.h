/* replay.h — the openb evaluation protocol (Weng et al., ATC '23).
 *
 * For one seed: shuffle the pods with that seed; append copies of pods
 * drawn uniformly from the original trace until the next draw would push
 * the total GPU request over `inflate` × the cluster's GPUs; place the pods
 * one at a time in that order with the policy; nothing departs and a pod
 * that fits nowhere is dropped. "Arrived" is the GPU request of all pods
 * seen so far, "allocated" the GPU capacity in use, both in % of the
 * cluster's GPUs. The result is the allocation right after the first pod
 * that takes arrived to 100 % (and to the inflation target; when the last
 * pod stops just short of it, the final allocation).
 *
 * Fragmentation-aware policies get the target workload built from the
 * original pods (95 % of them by shape). Ties between equal scores go to a
 * node order drawn from the seed. */
#ifndef GP_SIM_REPLAY_H
#define GP_SIM_REPLAY_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/trace.h"

struct gp_replay_result {
	uint64_t seed;
	double alloc_pct_at_100;
	double alloc_pct_at_target;
	double arrived_pct;     /* at the end */
	size_t pods;            /* after inflation */
	size_t placed;
	size_t failed;
	double seconds;         /* wall time spent deciding (set by caller) */
};

struct gp_replay_config {
	const char *policy;
	const char *devices;    /* device-level override, or NULL */
	double inflate;         /* 1.3 in the published protocol */
	uint64_t seed;
	bool exhaustive;        /* score every node (gp_cluster_set_exhaustive) */
};

/* The pods of one seed in the order they arrive (indices into t->pod,
 * malloc'd, the caller frees), and the tie seed of the cluster they are
 * placed on: what gp_replay_run places, for another scheduler to replay
 * the same (bench/bench-k8s.c). -ENOMEM. */
int gp_replay_order(const struct gp_trace *t, const struct gp_replay_config *cfg,
		    uint32_t **ret_order, size_t *ret_n, uint64_t *ret_tie_seed);

/* -ENOENT for an unknown policy; -ENOMEM. */
int gp_replay_run(const struct gp_trace *t, const struct gp_workload *target,
		  const struct gp_replay_config *cfg,
		  struct gp_replay_result *ret_result);

#endif
