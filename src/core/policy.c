/* policy.c — the policy registry, device-level choices, and the simple
 * node-level policies. The fragmentation-aware ones live in fgd.c.
 *
 * The baselines follow the definitions of the FGD paper's simulator as
 * published (scores are integers 0..100 there; the same truncations are kept
 * here because they decide ties): MaxSpecCpu = 128 cores and MaxSpecGpu = 8
 * devices normalise CPU and GPU amounts. */
#include "core/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy-impl.h"

#define SPEC_CPU 128000.0
#define SPEC_GPU 8000.0

/* ---- device-level choices ------------------------------------------- */

/* Positions of `fit` ordered by usable compute, ascending or descending;
 * equal amounts keep position order. Returns how many. */
static int order_by_usable(const struct gp_node_state *s, uint32_t fit,
			   bool descending, uint8_t *out)
{
	int n = 0;

	for (int i = 0; i < s->devices; i++) {
		if (!(fit >> i & 1))
			continue;
		int j = n++;
		uint32_t u = gp_dev_usable(&s->dev[i]);

		while (j > 0) {
			uint32_t v = gp_dev_usable(&s->dev[out[j - 1]]);

			if (descending ? v >= u : v <= u)
				break;
			out[j] = out[j - 1];
			j--;
		}
		out[j] = (uint8_t)i;
	}
	return n;
}

static uint32_t first_k(const uint8_t *order, int k)
{
	uint32_t mask = 0;

	for (int i = 0; i < k; i++)
		mask |= 1u << order[i];
	return mask;
}

void gp_pick_first(struct gp_policy *p, const struct gp_node_state *s,
		   const struct gp_request *req, uint32_t fit,
		   uint32_t *ret_mask)
{
	uint32_t mask = 0;

	(void)p;
	(void)s;
	for (int i = 0, k = 0; k < req->devices; i++)
		if (fit >> i & 1) {
			mask |= 1u << i;
			k++;
		}
	*ret_mask = mask;
}

/* The req->devices fitting positions with least (or most) room. */
static uint32_t pick_by_room(const struct gp_node_state *s,
			     const struct gp_request *req, uint32_t fit,
			     bool most)
{
	uint8_t order[GP_NODE_DEVICES_MAX];

	order_by_usable(s, fit, most, order);
	return first_k(order, req->devices);
}

void gp_pick_bestfit(struct gp_policy *p, const struct gp_node_state *s,
		     const struct gp_request *req, uint32_t fit,
		     uint32_t *ret_mask)
{
	(void)p;
	*ret_mask = pick_by_room(s, req, fit, false);
}

void gp_pick_spread(struct gp_policy *p, const struct gp_node_state *s,
		    const struct gp_request *req, uint32_t fit,
		    uint32_t *ret_mask)
{
	(void)p;
	*ret_mask = pick_by_room(s, req, fit, true);
}

void gp_pick_random(struct gp_policy *p, const struct gp_node_state *s,
		    const struct gp_request *req, uint32_t fit,
		    uint32_t *ret_mask)
{
	uint8_t order[GP_NODE_DEVICES_MAX];
	int n = order_by_usable(s, fit, false, order);

	gp_rng_shuffle(&p->rng, order, (size_t)n, 1);
	*ret_mask = first_k(order, req->devices);
}

static uint8_t nvlink_of(const struct gp_dev_state *d)
{
	return d->nvlink;
}

/* NUMA nodes are numbered from 0; as a group, 0 must mean "none". */
static uint8_t numa_of(const struct gp_dev_state *d)
{
	return (uint8_t)(d->numa + 1);
}

/* A gang of whole devices prefers the tightest NVLink island that holds it,
 * then the tightest NUMA node; without either the policy's order decides. */
static uint32_t gang_fit(const struct gp_node_state *s,
			 const struct gp_request *req, uint32_t fit)
{
	uint32_t group;

	if (!req->whole || req->devices < 2)
		return fit;
	group = gp_state_tightest_group(s, fit, req->devices, nvlink_of);
	if (!group)
		group = gp_state_tightest_group(s, fit, req->devices, numa_of);
	return group ? group : fit;
}

void gp_policy_pick(struct gp_policy *p, const struct gp_node_state *s,
		    const struct gp_request *req, uint32_t fit,
		    uint32_t *ret_mask)
{
	if (req->devices == 0) {
		*ret_mask = 0;
		return;
	}
	p->pick(p, s, req, gang_fit(s, req, fit), ret_mask);
}

/* ---- node-level policies -------------------------------------------- */

static int64_t score_random(struct gp_policy *p, const struct gp_node_state *s,
			    const struct gp_request *req, uint32_t fit,
			    uint32_t *ret_mask)
{
	gp_policy_pick(p, s, req, fit, ret_mask);
	return 0;
}

/* Tetris: dot product of the request and the node's free (CPU, GPU), each
 * normalised by the largest node; the smaller, the better. */
static int64_t score_dotprod(struct gp_policy *p, const struct gp_node_state *s,
			     const struct gp_request *req, uint32_t fit,
			     uint32_t *ret_mask)
{
	double gpu_left = gp_state_usable_compute(s);
	double d = (s->cpu_free / SPEC_CPU) * (req->cpu_milli / SPEC_CPU) +
		   (gpu_left / SPEC_GPU) *
			   ((double)gp_request_gpu_milli(req) / SPEC_GPU);

	gp_policy_pick(p, s, req, fit, ret_mask);
	return (int64_t)(100.0 * (1.0 - d / 2.0));
}

/* The kind of GPU task: 0 none, 1 sharing, 1 + k for k whole devices. */
static unsigned task_kind(const struct gp_request *req)
{
	if (req->devices == 0)
		return 0;
	return req->whole ? 1u + req->devices : 1u;
}

/* Kinds of the GPU tasks already on a node, as a bit mask of task_kind(). */
static uint64_t node_kinds(const struct gp_node_state *s)
{
	uint64_t kinds = 0;

	for (int i = 0; i < s->devices; i++) {
		const struct gp_dev_state *d = &s->dev[i];

		if (d->flags & GP_DEV_HELD)
			kinds |= 1ull << (1 + d->gang);
		else if (d->tasks)
			kinds |= 1ull << 1;
	}
	return kinds;
}

/* Keep tasks of one kind together: sharing with sharing, 2-card gangs with
 * 2-card gangs, and so on; fuller nodes first within a kind. */
static int64_t score_gpuclustering(struct gp_policy *p,
				   const struct gp_node_state *s,
				   const struct gp_request *req, uint32_t fit,
				   uint32_t *ret_mask)
{
	unsigned kind = task_kind(req);
	uint64_t kinds = node_kinds(s), mine = 1ull << kind;
	int64_t left = gp_state_usable_compute(s), base, bonus;

	gp_policy_pick(p, s, req, fit, ret_mask);
	if (kind == 0)
		return 0;
	base = left >= SPEC_GPU ? 0 : 25 * ((int64_t)SPEC_GPU - left) / 8000;
	if (kinds == mine)
		bonus = 75;
	else if (kinds & mine)
		bonus = 50;
	else if (kinds == 0)
		bonus = 25;
	else
		bonus = 0;
	return base + bonus;
}

/* Partly used devices first, then partly used nodes, then empty nodes. */
static int64_t score_gpupacking(struct gp_policy *p,
				const struct gp_node_state *s,
				const struct gp_request *req, uint32_t fit,
				uint32_t *ret_mask)
{
	int idle = 0, chosen_idle = 0;
	int64_t left_pct = 0;

	gp_policy_pick(p, s, req, fit, ret_mask);
	if (req->devices == 0)
		return 0;
	for (int i = 0; i < s->devices; i++) {
		const struct gp_dev_state *d = &s->dev[i];
		bool is_idle = gp_dev_is_idle(d);

		idle += is_idle;
		if (*ret_mask >> i & 1) {
			chosen_idle += is_idle;
			left_pct += gp_dev_usable(d) * 100 / GP_COMPUTE_WHOLE;
		}
	}
	if (idle == s->devices)
		return idle > 33 - idle ? idle : 33 - idle;
	if (chosen_idle)
		return 50 - chosen_idle > 33 ? 50 - chosen_idle : 33;
	return 100 - left_pct / 10 > 50 ? 100 - left_pct / 10 : 50;
}

/* Least CPU and GPU left after placement, each against the largest node. */
static int64_t score_bestfit(struct gp_policy *p, const struct gp_node_state *s,
			     const struct gp_request *req, uint32_t fit,
			     uint32_t *ret_mask)
{
	double cpu_left = (double)s->cpu_free - req->cpu_milli;
	double gpu_left = (double)gp_state_usable_compute(s) -
			  (double)gp_request_gpu_milli(req);
	double left = 0.5 * cpu_left / SPEC_CPU + 0.5 * gpu_left / SPEC_GPU;

	gp_policy_pick(p, s, req, fit, ret_mask);
	return (int64_t)((1.0 - left) * 100.0);
}

/* Free device compute after placement first, free CPU second. */
static int64_t left_after(struct gp_policy *p, const struct gp_node_state *s,
			  const struct gp_request *req, uint32_t fit,
			  uint32_t *ret_mask)
{
	gp_policy_pick(p, s, req, fit, ret_mask);
	return ((int64_t)gp_state_usable_after(s, req, *ret_mask) << 32) +
	       (s->cpu_free - req->cpu_milli);
}

static int64_t score_binpack(struct gp_policy *p, const struct gp_node_state *s,
			     const struct gp_request *req, uint32_t fit,
			     uint32_t *ret_mask)
{
	return -left_after(p, s, req, fit, ret_mask);
}

static int64_t score_spread(struct gp_policy *p, const struct gp_node_state *s,
			    const struct gp_request *req, uint32_t fit,
			    uint32_t *ret_mask)
{
	return left_after(p, s, req, fit, ret_mask);
}

/* ---- candidate order within an index bucket ---------------------------- */

/* Least free device compute, then least free CPU: binpack's own order. */
static uint64_t order_fullest(const struct gp_node_state *s)
{
	return (uint64_t)gp_state_usable_compute(s) << 32 | s->cpu_free;
}

static uint64_t order_emptiest(const struct gp_node_state *s)
{
	return ~order_fullest(s);
}

/* Least CPU and GPU left, each against the largest node: proportional to
 * bestfit's measure of what is left, before the request. */
static uint64_t order_least_left(const struct gp_node_state *s)
{
	return (uint64_t)s->cpu_free * (SPEC_GPU / 1000) +
	       (uint64_t)gp_state_usable_compute(s) * (SPEC_CPU / 1000);
}

/* ---- registry ------------------------------------------------------- */

static const struct gp_policy_ops simple_ops[] = {
	{ "random", "a uniformly random feasible node, random devices",
	  .uniform = true, .pick = gp_pick_random, .score = score_random },
	{ "dotprod", "smallest dot product of request and free CPU/GPU",
	  .pick = gp_pick_bestfit, .score = score_dotprod },
	{ "gpuclustering", "nodes already running GPU tasks of the same kind",
	  .pick = gp_pick_bestfit, .score = score_gpuclustering },
	{ "gpupacking", "partly used devices, then partly used nodes",
	  .pick = gp_pick_bestfit, .score = score_gpupacking },
	{ "bestfit", "least CPU and GPU left after placement",
	  .pick = gp_pick_bestfit, .score = score_bestfit, .order = order_least_left },
};

static const struct gp_policy_ops extra_ops[] = {
	{ "binpack", "most allocated node and device first",
	  .pick = gp_pick_bestfit, .score = score_binpack, .order = order_fullest },
	{ "spread", "least allocated node and device first",
	  .pick = gp_pick_spread, .score = score_spread, .order = order_emptiest },
};

static const struct gp_policy_ops *registry(size_t i)
{
	static const struct gp_policy_ops *const all[] = {
		&simple_ops[0], &simple_ops[1], &simple_ops[2], &simple_ops[3],
		&simple_ops[4], &gp_fgd_ops,    &extra_ops[0],  &extra_ops[1],
		&gp_default_ops,
	};

	return i < sizeof(all) / sizeof(all[0]) ? all[i] : NULL;
}

const char *gp_policy_name_at(size_t i)
{
	const struct gp_policy_ops *ops = registry(i);

	return ops ? ops->name : NULL;
}

const char *gp_policy_summary_at(size_t i)
{
	const struct gp_policy_ops *ops = registry(i);

	return ops ? ops->summary : NULL;
}

bool gp_policy_takes_target(const char *name)
{
	for (size_t i = 0; registry(i); i++)
		if (strcmp(registry(i)->name, name) == 0)
			return registry(i)->target;
	return false;
}

static const struct {
	const char *name;
	gp_device_pick_fn *pick;
} device_choices[] = {
	{ "first", gp_pick_first },
	{ "bestfit", gp_pick_bestfit },
	{ "spread", gp_pick_spread },
	{ "random", gp_pick_random },
};

static gp_device_pick_fn *device_choice(const char *name)
{
	for (size_t i = 0; i < sizeof(device_choices) / sizeof(device_choices[0]); i++)
		if (strcmp(device_choices[i].name, name) == 0)
			return device_choices[i].pick;
	return NULL;
}

bool gp_device_choice_exists(const char *name)
{
	return device_choice(name) != NULL;
}

int gp_policy_new(const char *name, const struct gp_policy_config *cfg,
		  struct gp_policy **ret_policy)
{
	/* Tells the cluster's score caches one policy object from the next,
	 * even when one is freed and another lands at the same address. */
	static _Atomic uint64_t generations;
	const struct gp_policy_ops *ops = NULL;
	struct gp_policy *p;
	int r;

	for (size_t i = 0; registry(i); i++)
		if (strcmp(registry(i)->name, name) == 0)
			ops = registry(i);
	if (!ops)
		return -ENOENT;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ops = ops;
	p->pick = ops->pick;
	if (cfg && cfg->devices) {
		p->pick = device_choice(cfg->devices);
		if (!p->pick) {
			free(p);
			return -ENOENT;
		}
	}
	gp_rng_init(&p->rng, cfg ? cfg->seed : 0);
	p->target = cfg ? cfg->target : NULL;
	p->generation = ++generations;
	if (ops->init) {
		r = ops->init(p);
		if (r < 0) {
			free(p);
			return r;
		}
	}
	*ret_policy = p;
	return 0;
}

struct gp_policy *gp_policy_free(struct gp_policy *p)
{
	if (p) {
		if (p->ops->release)
			p->ops->release(p);
		gp_workload_free(p->own_target);
		free(p);
	}
	return NULL;
}

const char *gp_policy_name(const struct gp_policy *p)
{
	return p->ops->name;
}
