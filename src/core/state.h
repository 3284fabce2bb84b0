/* state.h — the state of a node as the placement engine and the policies see
 * it, and the feasibility rules shared by all policies.
 *
 * Nodes whose states are byte-for-byte equal form one equivalence class (see
 * cluster.c): a policy scores a class once and the score holds for every
 * member. To make equal states compare equal, the devices in a state are
 * sorted (by model, free compute, free memory, topology) and the struct is
 * zero-filled before it is written. A policy names devices by their position
 * in this sorted array, as a bit mask; the engine maps positions back to the
 * node's physical device indices. Internal to src/core/. */
#ifndef GP_CORE_STATE_H
#define GP_CORE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/partition.h"
#include "core/resources.h"

enum {
	GP_DEV_HEALTHY = 1 << 0,
	GP_DEV_HELD = 1 << 1,   /* taken whole by one task: nobody else */
};

struct gp_dev_state {
	uint32_t mem_total;
	uint32_t mem_free;
	uint16_t compute_cap;
	uint16_t compute_free;
	uint16_t tasks;
	uint16_t max_tasks;     /* 0 = no cap */
	uint8_t model;
	uint8_t numa;
	uint8_t nvlink;
	uint8_t flags;          /* GP_DEV_* */
	uint8_t gang;           /* when held: devices of the task holding it */
	uint8_t part_set;       /* partitioned: its set (partition.h); 0: slices */
	uint8_t part_used;      /* ... and the units its partitions take */
	uint8_t pad;
};

struct gp_node_state {
	uint32_t cpu_free;      /* the fields a decision reads first, first */
	uint32_t mem_free;
	uint64_t labels;
	uint32_t cpu_total;
	uint32_t mem_total;
	uint16_t zone;
	uint8_t devices;
	uint8_t pad[5];
	struct gp_dev_state dev[GP_NODE_DEVICES_MAX];
};

/* Bytes of a state that are meaningful (the unused device slots are not). */
static inline size_t gp_state_key_len(const struct gp_node_state *s)
{
	return offsetof(struct gp_node_state, dev) +
	       (size_t)s->devices * sizeof(struct gp_dev_state);
}

static inline bool gp_dev_is_idle(const struct gp_dev_state *d)
{
	return (d->flags & GP_DEV_HEALTHY) && d->tasks == 0;
}

static inline bool gp_dev_model_ok(const struct gp_dev_state *d,
				   const struct gp_request *req)
{
	return req->models == 0 || (req->models >> d->model & 1);
}

/* Can one share of `req` go on this device? */
static inline bool gp_dev_fits(const struct gp_dev_state *d,
			       const struct gp_request *req)
{
	if (!(d->flags & GP_DEV_HEALTHY) || (d->flags & GP_DEV_HELD))
		return false;
	if (!gp_dev_model_ok(d, req))
		return false;
	if (req->whole)
		return d->tasks == 0 && d->part_used == 0;
	if (d->max_tasks && d->tasks >= d->max_tasks)
		return false;
	if (d->part_set)
		return gp_part_fits(d->part_set,
				    gp_part_profile_for(d->part_set,
							gp_request_mem_on(req, d->mem_total),
							(uint16_t)req->dev_compute),
				    d->part_used);
	return d->compute_free >= req->dev_compute &&
	       d->mem_free >= gp_request_mem_on(req, d->mem_total);
}

/* Compute a share could still get on a device: its free compute when it can
 * take another task at all, else 0. What the packing policies measure. */
static inline uint32_t gp_dev_usable(const struct gp_dev_state *d)
{
	if (!(d->flags & GP_DEV_HEALTHY) || (d->flags & GP_DEV_HELD))
		return 0;
	if (d->max_tasks && d->tasks >= d->max_tasks)
		return 0;
	return d->compute_free;
}

/* Does a node with these labels carry all the request asks for and none
 * it refuses? */
static inline bool gp_labels_fit(uint64_t labels, const struct gp_request *req)
{
	return (labels & req->labels_all) == req->labels_all &&
	       (labels & req->labels_none) == 0;
}

static inline bool gp_state_labels_fit(const struct gp_node_state *s,
				       const struct gp_request *req)
{
	return gp_labels_fit(s->labels, req);
}

/* Host-side fit: CPU, memory and labels. */
static inline bool gp_state_host_fits(const struct gp_node_state *s,
				      const struct gp_request *req)
{
	return s->cpu_free >= req->cpu_milli && s->mem_free >= req->mem_mib &&
	       gp_state_labels_fit(s, req);
}

/* Mask of device positions that could take one share of `req`. */
static inline uint32_t gp_state_fit_mask(const struct gp_node_state *s,
					 const struct gp_request *req)
{
	uint32_t mask = 0;

	for (int i = 0; i < s->devices; i++)
		if (gp_dev_fits(&s->dev[i], req))
			mask |= 1u << i;
	return mask;
}

/* Total free compute a node still offers to shares (thousandths). */
static inline uint32_t gp_state_usable_compute(const struct gp_node_state *s)
{
	uint32_t sum = 0;

	for (int i = 0; i < s->devices; i++)
		sum += gp_dev_usable(&s->dev[i]);
	return sum;
}

/* Applies one share of `req` to device position `i` (no checks). */
void gp_dev_take(struct gp_dev_state *d, const struct gp_request *req);

/* The same at a partition's start (-1: the best one; partition.h);
 * returns the start taken, or -1 on a card of slices. */
int gp_dev_take_at(struct gp_dev_state *d, const struct gp_request *req, int start);

/* Of the devices in `fit`, those of the smallest group (by group_of; 0:
 * in none) that holds `devices` of them, or 0 when no group does: where a
 * gang keeps to one NVLink island, NUMA node or model. */
uint32_t gp_state_tightest_group(const struct gp_node_state *s, uint32_t fit, int devices,
				 uint8_t (*group_of)(const struct gp_dev_state *));

/* Undoes gp_dev_take_at (start -1 on a partitioned card: the partition of
 * that profile that starts last); false when the device does not hold
 * such a share. */
bool gp_dev_give_back(struct gp_dev_state *d, const struct gp_request *req, int start);

/* Usable compute on a node after taking `req` on `mask` (thousandths). */
uint32_t gp_state_usable_after(const struct gp_node_state *s,
			       const struct gp_request *req, uint32_t mask);

/* Takes `req` out of a state: host resources and the devices in `mask`. The
 * result is NOT re-sorted; callers that need a canonical key sort it. */
void gp_state_apply(struct gp_node_state *s, const struct gp_request *req,
		    uint32_t mask);

/* The same with partitions' starts by position (-1: the best one), each
 * replaced by the start taken (-1 on a card of slices). */
void gp_state_apply_at(struct gp_node_state *s, const struct gp_request *req, uint32_t mask,
		       int8_t starts[GP_NODE_DEVICES_MAX]);

/* Sorts the devices into canonical order; perm (may be NULL) is permuted
 * alongside so that perm[i] keeps naming the device now at position i. */
void gp_state_sort(struct gp_node_state *s, uint8_t *perm);

#endif
