/* cluster.h — the pool of nodes and the placement engine of the core.
 *
 * A gp_cluster holds nodes and devices with their free capacity, and places
 * requests on them with a policy (policy.h). It is pure computation: no I/O,
 * no threads, no clock; the same inputs give the same decisions.
 *
 * How a decision stays cheap at any cluster size: an index (index.h) sorts
 * nodes into buckets by what a request needs (labels, device models, idle
 * devices, the largest share a busy device can still take, free CPU and
 * memory on a log scale), each bucket ordered by the policy's preference
 * and then a fixed random tie order. A decision takes, from each bucket
 * that could fit, the first two nodes that do (O(log nodes)), scores those
 * candidates with the policy and keeps the best; the number of buckets
 * does not grow with the nodes. Nodes with identical states share a class
 * whose scores are cached per request. The number of slices a device may
 * hold is a number in its state, so cost does not grow with it either.
 * gp_cluster_set_exhaustive scores every node instead (the exact answer,
 * for measuring what the bound costs).
 *
 * Ownership: the cluster owns its nodes and indexes; callers own requests,
 * decisions and policies. Functions return 0 or a negative errno. */
#ifndef GP_CORE_CLUSTER_H
#define GP_CORE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/policy.h"
#include "core/resources.h"

struct gp_cluster;

/* Why a request fits nowhere: the constraint that excluded most nodes. */
enum gp_nofit {
	GP_NOFIT_NONE,
	GP_NOFIT_CPU,
	GP_NOFIT_MEMORY,
	GP_NOFIT_LABELS,
	GP_NOFIT_DEVICES,
	GP_NOFIT_EMPTY,         /* the cluster has no nodes */
};

struct gp_decision {
	bool placed;
	struct gp_placement where;
	int64_t score;          /* the policy's score of the chosen node */
	enum gp_nofit reason;   /* when !placed */
	uint32_t candidates;    /* nodes scored (a cost measure) */
};

/* tie_seed orders nodes for tie-breaking: 0 keeps insertion order (first
 * fit), anything else a random order fixed for the cluster's life. */
int gp_cluster_new(uint64_t tie_seed, struct gp_cluster **ret_cluster);
struct gp_cluster *gp_cluster_free(struct gp_cluster *c);

/* Model and label names are interned into small ids (up to 64 of each).
 * Returns the id, or -ENOENT (create false) or -ENOSPC (table full). */
int gp_cluster_model_id(struct gp_cluster *c, const char *name, bool create);
int gp_cluster_label_id(struct gp_cluster *c, const char *name, bool create);
const char *gp_cluster_model_name(const struct gp_cluster *c, int id);

/* Adds an idle node; -EINVAL when the spec is inconsistent. */
int gp_cluster_add_node(struct gp_cluster *c, const struct gp_node_spec *spec,
			uint32_t *ret_index);
uint32_t gp_cluster_node_count(const struct gp_cluster *c);

/* Free capacity of one node, devices in physical order. */
struct gp_node_usage {
	uint32_t cpu_free;
	uint32_t mem_free;
	uint8_t devices;
	uint16_t compute_free[GP_NODE_DEVICES_MAX];
	uint32_t dev_mem_free[GP_NODE_DEVICES_MAX];
	uint16_t tasks[GP_NODE_DEVICES_MAX];
};
int gp_cluster_node_usage(const struct gp_cluster *c, uint32_t node,
			  struct gp_node_usage *ret_usage);

/* The UUID a device was registered with ("" when none), or NULL when the
 * node or device does not exist. Owned by the cluster. */
const char *gp_cluster_device_uuid(const struct gp_cluster *c, uint32_t node,
				   int device);

/* The model id of a device (physical index), or -ENOENT when the node
 * or device does not exist. */
int gp_cluster_device_model(const struct gp_cluster *c, uint32_t node, int device);

/* The memory of a device (physical index) in MiB, or -ENOENT when the
 * node or device does not exist: what a request's percent is of there. */
int64_t gp_cluster_device_mem(const struct gp_cluster *c, uint32_t node, int device);

/* Exhaustive search: a scoring policy scores every node that can take a
 * request, not two per index bucket (cluster.c) — the exact placement, at
 * a cost that grows with the nodes; for measuring what the bounded search
 * costs in allocation. Off by default. */
void gp_cluster_set_exhaustive(struct gp_cluster *c, bool exhaustive);

/* Bytes the cluster holds (nodes, states, score caches, index). */
size_t gp_cluster_bytes(const struct gp_cluster *c);

/* Number of index buckets now (what a decision's cost grows with). */
uint32_t gp_cluster_bucket_count(const struct gp_cluster *c);

/* Number of distinct node states now (equivalence classes). */
uint32_t gp_cluster_class_count(const struct gp_cluster *c);

/* Chooses where `req` goes under `policy`, without changing anything.
 * "Fits nowhere" is a decision (placed = false, with a reason), not an
 * error; errors are -EINVAL for a malformed request, -ENOMEM. */
int gp_place(struct gp_cluster *c, struct gp_policy *policy,
	     const struct gp_request *req, struct gp_decision *ret_decision);

/* The same decision on node `node` alone: placed with the policy's score
 * and devices when the node can take `req`, else the constraint it misses
 * (for a scheduler that asks node by node, as kube-scheduler's extender
 * protocol does). Scores of different nodes compare as in gp_place (0 for
 * a uniform policy); -EINVAL for a malformed request or an unknown node. */
int gp_place_on(struct gp_cluster *c, struct gp_policy *policy, const struct gp_request *req,
		uint32_t node, struct gp_decision *ret_decision);

/* Whether node `node` can take `req` at all (no score: cheap), and if
 * not, the constraint it misses (*ret_reason GP_NOFIT_NONE when it fits);
 * -EINVAL as gp_place_on. */
int gp_fits_on(const struct gp_cluster *c, const struct gp_request *req, uint32_t node,
	       enum gp_nofit *ret_reason);

/* Takes the resources of `req` at `where`; -EBUSY when they are not free. */
int gp_cluster_commit(struct gp_cluster *c, const struct gp_request *req,
		      const struct gp_placement *where);

/* Gives back what an earlier commit of `req` at `where` took. */
int gp_cluster_release(struct gp_cluster *c, const struct gp_request *req,
		       const struct gp_placement *where);

/* A human-readable name for a gp_nofit value. */
const char *gp_nofit_name(enum gp_nofit reason);

#endif
