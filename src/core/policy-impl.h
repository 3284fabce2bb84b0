/* policy-impl.h — what a placement policy implements; internal to src/core/.
 *
 * The engine (cluster.c) filters nodes on host resources and finds which
 * device positions can take a share (the `fit` mask); a policy then scores
 * one node state and says which devices it would use. Scores are int64,
 * higher is better; equal scores go to the node first in the cluster's tie
 * order. A score must depend only on the state and the request (the engine
 * caches it per class), unless the policy is `uniform`. */
#ifndef GP_CORE_POLICY_IMPL_H
#define GP_CORE_POLICY_IMPL_H

#include <stdint.h>

#include "base/rng.h"
#include "core/policy.h"
#include "core/state.h"

#define GP_SCORE_NOFIT INT64_MIN

struct gp_policy;

/* Chooses req->devices positions out of `fit` (which has at least that
 * many); writes them to *ret_mask. */
typedef void gp_device_pick_fn(struct gp_policy *p,
			       const struct gp_node_state *s,
			       const struct gp_request *req, uint32_t fit,
			       uint32_t *ret_mask);

typedef int64_t gp_node_score_fn(struct gp_policy *p,
				 const struct gp_node_state *s,
				 const struct gp_request *req, uint32_t fit,
				 uint32_t *ret_mask);

/* A key for a node state that does not depend on the request, lower for
 * the nodes the policy tends to prefer: the engine offers each index
 * bucket's first nodes by (key, tie order) as its candidates. */
typedef uint64_t gp_node_order_fn(const struct gp_node_state *s);

struct gp_policy_ops {
	const char *name;
	const char *summary;
	bool uniform;           /* picks uniformly among feasible nodes */
	bool target;            /* judges nodes against a target workload */
	gp_device_pick_fn *pick;    /* default device choice */
	gp_node_score_fn *score;
	gp_node_order_fn *order;    /* NULL: tie order alone */
	int (*init)(struct gp_policy *p);
	void (*release)(struct gp_policy *p);
};

struct gp_policy {
	const struct gp_policy_ops *ops;
	gp_device_pick_fn *pick;
	struct gp_rng rng;
	const struct gp_workload *target;
	struct gp_workload *own_target;     /* the fallback, when none given */
	void *priv;                         /* owned by ops->init/release */
	uint64_t generation;                /* unique per policy object */
};

/* Device choices usable by any policy (policy.c). */
gp_device_pick_fn gp_pick_first;
gp_device_pick_fn gp_pick_bestfit;
gp_device_pick_fn gp_pick_spread;
gp_device_pick_fn gp_pick_random;

/* Runs the policy's device choice (with the gang preference for whole
 * devices on one NVLink island). */
void gp_policy_pick(struct gp_policy *p, const struct gp_node_state *s,
		    const struct gp_request *req, uint32_t fit,
		    uint32_t *ret_mask);

/* The fragmentation-aware policies (fgd.c). */
extern const struct gp_policy_ops gp_fgd_ops;
extern const struct gp_policy_ops gp_default_ops;

/* F of a node state under an fgd or default policy (for tests). */
double gp_fgd_fragmentation(struct gp_policy *p, const struct gp_node_state *s);

#endif
