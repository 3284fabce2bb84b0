/* replay.c — one seed of the openb protocol on the core. */
#include "sim/replay.h"

#include <errno.h>
#include <stdlib.h>

#include "base/rng.h"

/* The pod order for one seed: a shuffle, then inflation by random copies.
 * Returns the number of entries written to *ret_order (caller frees). */
static int build_order(const struct gp_trace *t, double inflate,
		       struct gp_rng *rng, uint32_t **ret_order, size_t *ret_n)
{
	double target = inflate * (double)t->gpus * GP_COMPUTE_WHOLE, total = 0;
	size_t n = t->pods, cap = t->pods * 2 + 16;
	uint32_t *order = malloc(cap * sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		order[i] = (uint32_t)i;
		total += (double)gp_request_gpu_milli(&t->pod[i]);
	}
	gp_rng_shuffle(rng, order, n, sizeof(*order));
	for (;;) {
		uint32_t pick = (uint32_t)gp_rng_below(rng, t->pods);
		double more = (double)gp_request_gpu_milli(&t->pod[pick]);

		if (total + more > target || (more == 0 && total >= target))
			break;
		if (n == cap) {
			uint32_t *grown = realloc(order, 2 * cap * sizeof(*order));

			if (!grown) {
				free(order);
				return -ENOMEM;
			}
			order = grown;
			cap *= 2;
		}
		order[n++] = pick;
		total += more;
	}
	*ret_order = order;
	*ret_n = n;
	return 0;
}

int gp_replay_order(const struct gp_trace *t, const struct gp_replay_config *cfg,
		    uint32_t **ret_order, size_t *ret_n, uint64_t *ret_tie_seed)
{
	struct gp_rng rng;
	int r;

	gp_rng_init(&rng, cfg->seed);
	r = build_order(t, cfg->inflate, &rng, ret_order, ret_n);
	if (r == 0)
		*ret_tie_seed = gp_rng_next(&rng) | 1;
	return r;
}

static int place_all(const struct gp_trace *t, struct gp_cluster *c,
		     struct gp_policy *p, const uint32_t *order, size_t n,
		     double inflate, struct gp_replay_result *res)
{
	double capacity = (double)t->gpus * GP_COMPUTE_WHOLE;
	double arrived = 0, allocated = 0;
	bool seen_100 = false, seen_target = false;

	for (size_t i = 0; i < n; i++) {
		const struct gp_request *req = &t->pod[order[i]];
		struct gp_decision d;
		int r = gp_place(c, p, req, &d);

		if (r < 0)
			return r;
		if (d.placed) {
			r = gp_cluster_commit(c, req, &d.where);
			if (r < 0)
				return r;
			allocated += (double)gp_request_gpu_milli(req);
			res->placed++;
		} else {
			res->failed++;
		}
		arrived += (double)gp_request_gpu_milli(req);
		if (!seen_100 && arrived >= capacity) {
			seen_100 = true;
			res->alloc_pct_at_100 = 100.0 * allocated / capacity;
		}
		if (!seen_target && arrived >= inflate * capacity) {
			seen_target = true;
			res->alloc_pct_at_target = 100.0 * allocated / capacity;
		}
	}
	if (!seen_100)
		res->alloc_pct_at_100 = 100.0 * allocated / capacity;
	if (!seen_target)
		res->alloc_pct_at_target = 100.0 * allocated / capacity;
	res->arrived_pct = 100.0 * arrived / capacity;
	return 0;
}

int gp_replay_run(const struct gp_trace *t, const struct gp_workload *target,
		  const struct gp_replay_config *cfg,
		  struct gp_replay_result *ret_result)
{
	struct gp_replay_result res = { .seed = cfg->seed };
	struct gp_policy_config pc = { .seed = cfg->seed, .target = target,
				       .devices = cfg->devices };
	struct gp_cluster *c = NULL;
	struct gp_policy *p = NULL;
	uint32_t *order = NULL;
	uint64_t tie_seed;
	size_t n;
	int r;


	r = gp_replay_order(t, cfg, &order, &n, &tie_seed);
	if (r < 0)
		return r;
	r = gp_trace_cluster(t, tie_seed, &c);
	if (r < 0)
		goto out;
	gp_cluster_set_exhaustive(c, cfg->exhaustive);
	r = gp_policy_new(cfg->policy, &pc, &p);
	if (r < 0)
		goto out;
	res.pods = n;
	r = place_all(t, c, p, order, n, cfg->inflate, &res);
	if (r == 0)
		*ret_result = res;
out:
	gp_policy_free(p);
	gp_cluster_free(c);
	free(order);
	return r;
}
