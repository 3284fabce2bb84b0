/* sched.c — one scheduling pass: quotas (overall and per device model),
 * borrowing, reclaim; and a live change under the same rules (sched.h). */
#include "core/sched.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a task counts against its tenant's quota before it is placed (a
 * percent of memory as on the largest device it accepts: resources.h). */
static struct gp_quota_use task_usage(const struct gp_request *req)
{
	return (struct gp_quota_use){
		.mem_mib = (uint64_t)req->devices * req->dev_mem_mib,
		.compute_pct = (uint64_t)req->devices * gp_request_share(req) / 10,
	};
}

/* The memory one share of req takes on device `device` of `node`. */
static uint32_t share_mem_at(const struct gp_cluster *c, const struct gp_request *req,
			     uint32_t node, int device)
{
	int64_t mem = req->dev_mem_pct ? gp_cluster_device_mem(c, node, device) : 0;

	return mem > 0 ? gp_request_mem_on(req, (uint32_t)mem) : req->dev_mem_mib;
}

/* What a task counts against its tenant's quota where it is placed: a
 * percent of memory as it is on its devices. */
static struct gp_quota_use usage_at(const struct gp_cluster *c, const struct gp_request *req,
				    const struct gp_placement *where)
{
	struct gp_quota_use u = task_usage(req);

	if (!req->dev_mem_pct || req->whole || !where->devices)
		return u;
	u.mem_mib = 0;
	for (int i = 0; i < where->devices; i++)
		u.mem_mib += share_mem_at(c, req, where->node, where->device[i]);
	return u;
}

static int tenant_index(const struct gp_sched_tenant *tenants, int n, int64_t id)
{
	for (int i = 0; i < n; i++)
		if (tenants[i].id == id)
			return i;
	return -1;
}

static void usage_add(struct gp_quota_use *u, struct gp_quota_use add)
{
	u->mem_mib += add.mem_mib;
	u->compute_pct += add.compute_pct;
}

static void usage_sub(struct gp_quota_use *u, struct gp_quota_use sub)
{
	u->mem_mib -= sub.mem_mib;
	u->compute_pct -= sub.compute_pct;
}

/* Would used + add stay within quota q: its guarantee, or with `borrow`
 * all of it (core/quota.h)? */
static bool within(const struct gp_quota *q, struct gp_quota_use used, struct gp_quota_use add,
		   bool borrow)
{
	return gp_quota_within(q, gp_quota_sum(used, add), borrow);
}

int gp_sched_compare(const struct gp_sched_task *a, const struct gp_sched_task *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->created != b->created)
		return a->created < b->created ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int queue_order(const void *pa, const void *pb)
{
	return gp_sched_compare(*(struct gp_sched_task *const *)pa,
				*(struct gp_sched_task *const *)pb);
}

/* Which model quota stopped a task: its index, and what the task would
 * have counted against it. */
struct blocked {
	int quota;                      /* -1: none */
	struct gp_quota_use need;
};

/* How the last tasks that waited were decided, for the next ones that
 * ask the same: while nothing starts or is preempted, a task of the same
 * tenant with the same request in the same round is decided the same way
 * (the cluster and the tenants' use are as they were, and placement is
 * deterministic), so its outcome is copied rather than worked out again.
 * A queue of thousands that cannot run is mostly a few shapes. An entry
 * holds while its epoch is the pass's; a start or a preemption begins a
 * new epoch. */
#define MEMOS 16

struct memo {
	uint64_t epoch;                 /* 0: never filled */
	int tenant;                     /* index */
	bool first_round;
	struct gp_request req;
	int decided;                    /* what decide_now() returned */
	char reason[GP_SCHED_REASON_MAX];
};

/* The state of one pass. */
struct pass {
	struct gp_cluster *c;
	struct gp_policy *policy;
	const struct gp_sched_tenant *tenants;
	int n_tenants;
	struct gp_quota_use *used;             /* per tenant */
	struct gp_quota_use *model_used;       /* per model quota: from model_base[tenant] */
	int *model_base;
	struct gp_sched_task *tasks;
	int n_tasks;
	struct gp_sched_task **running;         /* the running ones, for reclaim */
	int n_running;
	struct gp_sched_outcome *out;
	int n_out;
	struct gp_sched_task **released;        /* scratch of place() */
	int last_tenant;                        /* tenant_of's guess */
	struct memo memo[MEMOS];
	uint64_t epoch;                         /* of the memos; from 1 */
	unsigned memo_next;                     /* the entry filled next */
};

static struct gp_sched_outcome *outcome(struct pass *p, const struct gp_sched_task *t,
					enum gp_sched_verdict verdict)
{
	struct gp_sched_outcome *o = &p->out[p->n_out++];

	*o = (struct gp_sched_outcome){ .task = t->id, .index = (int)(t - p->tasks),
					.verdict = verdict };
	return o;
}

/* ---- model quotas ------------------------------------------------------- */

/* The model quota of tenant k that governs model id `model`; -1: none. */
static int model_quota_of(const struct pass *p, int k, int model)
{
	const struct gp_sched_tenant *q = &p->tenants[k];

	for (int i = 0; model >= 0 && i < q->model_quotas; i++)
		if (q->model_quota[i].models >> model & 1)
			return i;
	return -1;
}

/* What req at `where` counts against each model quota of tenant k, into
 * add[] (by quota index): each share on a device of a governed model. */
static void model_need(const struct pass *p, int k, const struct gp_request *req,
		       const struct gp_placement *where, struct gp_quota_use *add)
{
	for (int i = 0; i < where->devices; i++) {
		int m = gp_cluster_device_model(p->c, where->node, where->device[i]);
		int q = model_quota_of(p, k, m);
		struct gp_request one = { .devices = 1, .whole = req->whole,
					  .dev_compute = req->dev_compute };

		one.dev_mem_mib = share_mem_at(p->c, req, where->node, where->device[i]);
		if (q >= 0)
			usage_add(&add[q], task_usage(&one));
	}
}

/* Counts (or with `back`, gives back) req at `where` in the model quotas
 * of tenant k. */
static void model_charge(struct pass *p, int k, const struct gp_request *req,
			 const struct gp_placement *where, bool back)
{
	struct gp_quota_use add[GP_MODELS_MAX] = { 0 };
	struct gp_quota_use *used = &p->model_used[p->model_base[k]];

	model_need(p, k, req, where, add);
	for (int i = 0; i < p->tenants[k].model_quotas; i++) {
		if (back)
			usage_sub(&used[i], add[i]);
		else
			usage_add(&used[i], add[i]);
	}
}

/* The first model quota of tenant k that req at `where` would take past
 * its guarantee (or, with `borrow`, past all of it), in *ret; false when
 * none would be. */
static bool model_over(const struct pass *p, int k, const struct gp_request *req,
		       const struct gp_placement *where, bool borrow, struct blocked *ret)
{
	const struct gp_sched_tenant *q = &p->tenants[k];
	const struct gp_quota_use *used = &p->model_used[p->model_base[k]];
	struct gp_quota_use add[GP_MODELS_MAX] = { 0 };

	model_need(p, k, req, where, add);
	for (int i = 0; i < q->model_quotas; i++)
		if ((add[i].mem_mib || add[i].compute_pct) &&
		    !within(&q->model_quota[i].quota, used[i], add[i], borrow)) {
			*ret = (struct blocked){ i, add[i] };
			return true;
		}
	return false;
}

/* ---- placing, and reclaim ----------------------------------------------- */

/* Does t hold a device of a model in `models` (0: any)? */
static bool holds_model(const struct pass *p, const struct gp_sched_task *t, uint64_t models)
{
	for (int i = 0; models && i < t->where.devices; i++) {
		int m = gp_cluster_device_model(p->c, t->where.node, t->where.device[i]);

		if (m >= 0 && models >> m & 1)
			return true;
	}
	return !models;
}

/* Would preempting v for t (within its guarantee or not) take back a
 * guarantee: v borrows, and t is another tenant's within its own? */
static bool reclaims(const struct gp_sched_task *t, bool guaranteed, const struct gp_sched_task *v)
{
	return guaranteed && v->borrowed && v->tenant != t->tenant;
}

/* May running task v make room for t (tenant k)? A reclaim: t is within
 * its tenant's guarantee and v borrows another tenant's. Or, where t's
 * tenant preempts by priority, v has a lower priority and is not
 * guarded: a borrowing t takes only borrowed work (what it takes would
 * otherwise take its guarantee back from t, and so on), and nobody takes
 * a hard slice within its tenant's guarantee. */
static bool may_preempt(const struct pass *p, int k, const struct gp_sched_task *t,
			bool guaranteed, const struct gp_sched_task *v)
{
	if (!v->running || v->misfit)
		return false;
	if (reclaims(t, guaranteed, v))
		return true;
	if (!p->tenants[k].priority_preemption || v->priority >= t->priority)
		return false;
	return v->borrowed || (guaranteed && !v->hard);
}

/* The running task to preempt first for t (tenant k), among those
 * holding a device of `models` (0: any): lowest priority, then newest
 * (the least work lost). NULL when none. */
static struct gp_sched_task *victim_for(struct pass *p, int k, const struct gp_sched_task *t,
					bool guaranteed, uint64_t models)
{
	struct gp_sched_task *victim = NULL;

	for (int i = 0; i < p->n_running; i++) {
		struct gp_sched_task *v = p->running[i];

		if (!may_preempt(p, k, t, guaranteed, v) || !holds_model(p, v, models))
			continue;
		if (!victim || v->priority < victim->priority ||
		    (v->priority == victim->priority && v->created > victim->created))
			victim = v;
	}
	return victim;
}

/* Records the preemption of victim t (already released from the
 * cluster) for for_task (within its guarantee or not), and gives its
 * tenant's quotas back. */
static void preempted(struct pass *p, struct gp_sched_task *t, const struct gp_sched_task *for_task,
		      bool guaranteed)
{
	struct gp_sched_outcome *o = outcome(p, t, GP_SCHED_PREEMPT);
	int k = tenant_index(p->tenants, p->n_tenants, t->tenant);

	p->epoch++;             /* the cluster and the tenant's use change */

	usage_sub(&p->used[k], usage_at(p->c, &t->req, &t->where));
	model_charge(p, k, &t->req, &t->where, true);
	if (reclaims(for_task, guaranteed, t))
		snprintf(o->reason, sizeof(o->reason),
			 "preempted: it ran on borrowed quota, and task %" PRId64
			 " of the lending tenant needs its guarantee back",
			 for_task->id);
	else
		snprintf(o->reason, sizeof(o->reason),
			 "preempted: task %" PRId64 " of priority %u needs its capacity, and "
			 "the pool preempts lower priorities (this task has %u)",
			 for_task->id, for_task->priority, t->priority);
}

/* Puts the n victims released for a placement that is not taken back. */
static void victims_restore(struct pass *p, int n)
{
	for (int i = 0; i < n; i++) {
		gp_cluster_commit(p->c, &p->released[i]->req, &p->released[i]->where);
		p->released[i]->running = true;
	}
}

static void victims_preempt(struct pass *p, int n, const struct gp_sched_task *for_task,
			    bool guaranteed)
{
	for (int i = 0; i < n; i++)
		preempted(p, p->released[i], for_task, guaranteed);
}

/* req fits once the n victims in p->released are gone: puts back each
 * one it still fits without (the first ones released were tried first,
 * and may not be where it went), so as few are preempted as free enough.
 * Returns how many stay released; *d is req's placement without them. */
static int victims_fewest(struct pass *p, const struct gp_request *req, int n,
			  struct gp_decision *d)
{
	int kept = 0;

	for (int i = 0; i < n - 1; i++) {
		struct gp_sched_task *v = p->released[i];
		struct gp_decision without;

		gp_cluster_commit(p->c, &v->req, &v->where);
		if (gp_place(p->c, p->policy, req, &without) == 0 && without.placed) {
			v->running = true;
			continue;
		}
		gp_cluster_release(p->c, &v->req, &v->where);
		p->released[kept++] = v;
	}
	p->released[kept++] = p->released[n - 1];
	gp_place(p->c, p->policy, req, d);
	return kept;
}

/* Places req (t's request on the models it may use now, t of tenant k);
 * when it fits nowhere, releases the victims may_preempt allows, one at a
 * time, until it fits. Returns 1 when placed (decision in *d), the fewest
 * victims released for it in p->released[0..*ret_n) (the caller preempts
 * or restores them); 0 when not (*d says why), or gp_place's error
 * (-EINVAL: a request the core cannot place anywhere, *d not made),
 * every victim restored. */
static int place(struct pass *p, int k, struct gp_sched_task *t, const struct gp_request *req,
		 bool guaranteed, struct gp_decision *d, int *ret_n)
{
	struct gp_sched_task *victim;
	int n = 0, r;

	*ret_n = 0;
	r = gp_place(p->c, p->policy, req, d);
	if (r < 0 || d->placed)
		return r < 0 ? r : 1;
	while ((victim = victim_for(p, k, t, guaranteed, req->models))) {
		gp_cluster_release(p->c, &victim->req, &victim->where);
		victim->running = false;
		p->released[n++] = victim;
		r = gp_place(p->c, p->policy, req, d);
		if (r == 0 && d->placed) {
			*ret_n = victims_fewest(p, req, n, d);
			return 1;
		}
		if (r < 0)
			break;
	}
	victims_restore(p, n);
	return r;
}

/* Places t (tenant k) within its model quotas: their guarantees, or with
 * `borrow` all of them. A placement that would take a model quota past
 * that is tried again without the quota's models, until one keeps within
 * every quota or no model is left; the first quota that was in the way
 * in *ret_blocked. Victims as place() finds them (a borrowing t as a
 * borrower), preempted once placed. Returns 1 placed, 0 not (*d says
 * why), or place()'s error. */
static int place_within(struct pass *p, int k, struct gp_sched_task *t, bool borrow,
			struct gp_decision *d, struct blocked *ret_blocked)
{
	struct gp_request req = t->req;
	struct blocked over;
	int n, r;

	ret_blocked->quota = -1;
	while ((r = place(p, k, t, &req, !borrow, d, &n)) == 1) {
		if (!model_over(p, k, &req, &d->where, borrow, &over)) {
			victims_preempt(p, n, t, !borrow);
			return 1;
		}
		victims_restore(p, n);
		if (ret_blocked->quota < 0)
			*ret_blocked = over;
		req.models = (req.models ? req.models : ~0ULL) &
			     ~p->tenants[k].model_quota[over.quota].models;
		if (!req.models) {
			d->placed = false;
			d->reason = GP_NOFIT_NONE;
			return 0;
		}
	}
	return r;
}

/* ---- deciding ----------------------------------------------------------- */

static void wait_over_quota(struct pass *p, const struct gp_sched_task *t, int k,
			    struct gp_quota_use need)
{
	const struct gp_sched_tenant *q = &p->tenants[k];
	struct gp_sched_outcome *o = outcome(p, t, GP_SCHED_WAIT);

	/* Its tenant's whole quota cannot hold it (lowered since it was
	 * submitted): no end of the tenant's tasks would start it. */
	bool never = !gp_quota_within(&q->quota, need, true);

	snprintf(o->reason, sizeof(o->reason),
		 "over quota: the tenant uses %" PRIu64 " MiB and %" PRIu64
		 " %% of its %" PRIu64 " MiB and %" PRIu64
		 " %% (guaranteed + borrowable); this task needs %" PRIu64 " MiB and %" PRIu64
		 " %%; %s",
		 p->used[k].mem_mib, p->used[k].compute_pct, gp_quota_limit(&q->quota).mem_mib,
		 gp_quota_limit(&q->quota).compute_pct, need.mem_mib, need.compute_pct,
		 never ? "it cannot start while the quota is as it is: cancel it, or ask the "
			 "admin to raise the quota"
		       : "it starts when the tenant's tasks end");
}

/* t waits for a model quota (b), and found no other device when
 * `nofit` is not GP_NOFIT_NONE. */
static void wait_over_model_quota(struct pass *p, const struct gp_sched_task *t, int k,
				  const struct blocked *b, enum gp_nofit nofit)
{
	const struct gp_sched_model_quota *q = &p->tenants[k].model_quota[b->quota];
	const struct gp_quota_use *used = &p->model_used[p->model_base[k] + b->quota];
	struct gp_sched_outcome *o = outcome(p, t, GP_SCHED_WAIT);
	size_t len;

	snprintf(o->reason, sizeof(o->reason),
		 "over the %s quota: the tenant uses %" PRIu64 " MiB and %" PRIu64
		 " %% of its %" PRIu64 " MiB and %" PRIu64 " %% there; this task needs %" PRIu64
		 " MiB and %" PRIu64 " %%",
		 q->name, used->mem_mib, used->compute_pct, gp_quota_limit(&q->quota).mem_mib,
		 gp_quota_limit(&q->quota).compute_pct, b->need.mem_mib, b->need.compute_pct);
	len = strlen(o->reason);
	if (nofit != GP_NOFIT_NONE)
		snprintf(o->reason + len, sizeof(o->reason) - len,
			 "; no other device fits now (%s)", gp_nofit_name(nofit));
}

static void wait_no_fit(struct pass *p, const struct gp_sched_task *t, enum gp_nofit nofit,
			bool guaranteed)
{
	struct gp_sched_outcome *o = outcome(p, t, GP_SCHED_WAIT);

	snprintf(o->reason, sizeof(o->reason), "no device fits now (%s)%s", gp_nofit_name(nofit),
		 guaranteed ? "" : "; past its guarantee it only borrows idle capacity");
}

/* t (tenant k) starts at d's placement. */
static void start(struct pass *p, struct gp_sched_task *t, int k, const struct gp_decision *d,
		  bool guaranteed)
{
	struct gp_sched_outcome *o;

	p->epoch++;             /* the cluster and the tenant's use change */
	gp_cluster_commit(p->c, &t->req, &d->where);
	t->running = true;
	t->borrowed = !guaranteed;
	t->where = d->where;
	usage_add(&p->used[k], usage_at(p->c, &t->req, &t->where));
	model_charge(p, k, &t->req, &t->where, false);
	o = outcome(p, t, GP_SCHED_START);
	o->where = d->where;
	o->borrowed = t->borrowed;
	snprintf(o->reason, sizeof(o->reason), "%s",
		 guaranteed ? "within the tenant's guarantee" : "on borrowed quota");
}

/* t waits because the core cannot place its request anywhere, however
 * idle the pool (gp_place's -EINVAL): a decision made here, not one read
 * from a gp_place that made none. */
static void wait_unplaceable(struct pass *p, const struct gp_sched_task *t)
{
	struct gp_sched_outcome *o = outcome(p, t, GP_SCHED_WAIT);

	if (t->req.devices > GP_NODE_DEVICES_MAX)
		snprintf(o->reason, sizeof(o->reason),
			 "cannot be placed: it asks for %u devices, and a node has at most %d; "
			 "cancel it and ask for fewer",
			 t->req.devices, GP_NODE_DEVICES_MAX);
	else
		snprintf(o->reason, sizeof(o->reason),
			 "cannot be placed: the scheduler refuses its request (%u device(s) of "
			 "%u MiB and %u %%); cancel it and submit it again",
			 t->req.devices, t->req.dev_mem_mib, gp_request_share(&t->req) / 10);
}

/* The first round: t is within its tenant's overall guarantee and takes
 * a placement within its model guarantees too, reclaiming capacity if it
 * must. Returns 0 (deciding nothing) when a model guarantee is in the
 * way: it may still borrow in the second round; 1 when decided, or
 * place()'s error. */
static int decide_guaranteed(struct pass *p, struct gp_sched_task *t, int k)
{
	struct gp_decision d;
	struct blocked b;
	int r = place_within(p, k, t, false, &d, &b);

	if (r < 0)
		return r;
	if (r) {
		start(p, t, k, &d, true);
		return 1;
	}
	if (b.quota >= 0)
		return 0;
	wait_no_fit(p, t, d.reason, true);
	return 1;
}

/* The second round: t takes any placement within all of its quotas, and
 * is borrowed when past one of its guarantees (it is here because it is
 * past the overall one, or a model guarantee was in its way). Returns 1,
 * or place()'s error. */
static int decide_borrowing(struct pass *p, struct gp_sched_task *t, int k, bool guaranteed)
{
	struct gp_decision d;
	struct blocked b;
	int r = place_within(p, k, t, true, &d, &b);

	if (r < 0)
		return r;
	if (!r) {
		if (b.quota >= 0)
			wait_over_model_quota(p, t, k, &b, d.reason);
		else
			wait_no_fit(p, t, d.reason, false);
		return 1;
	}
	start(p, t, k, &d, guaranteed && !model_over(p, k, &t->req, &d.where, false, &b));
	return 1;
}

/* The index of tenant id (known to be there: pass_queue checked). Tasks
 * of one tenant tend to come together, so the last answer is tried
 * first. */
static int tenant_of(struct pass *p, int64_t id)
{
	int k;

	if (p->last_tenant < p->n_tenants && p->tenants[p->last_tenant].id == id)
		return p->last_tenant;
	k = tenant_index(p->tenants, p->n_tenants, id);
	if (k >= 0)
		p->last_tenant = k;
	return k;
}

static bool request_same(const struct gp_request *a, const struct gp_request *b)
{
	return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib &&
	       a->devices == b->devices && a->whole == b->whole &&
	       a->dev_mem_mib == b->dev_mem_mib && a->dev_mem_pct == b->dev_mem_pct &&
	       a->dev_compute == b->dev_compute &&
	       a->models == b->models && a->labels_all == b->labels_all &&
	       a->labels_none == b->labels_none;
}

/* Decides t as a memo's task was decided, when one asked the same in this
 * epoch; false when none did. */
static bool memo_use(struct pass *p, const struct gp_sched_task *t, int k, bool first_round,
		     int *ret)
{
	for (int i = 0; i < MEMOS; i++) {
		const struct memo *m = &p->memo[i];

		if (m->epoch != p->epoch || m->tenant != k || m->first_round != first_round ||
		    !request_same(&m->req, &t->req))
			continue;
		if (m->decided)
			memcpy(outcome(p, t, GP_SCHED_WAIT)->reason, m->reason, sizeof(m->reason));
		*ret = m->decided;
		return true;
	}
	return false;
}

/* Remembers how t was decided when nothing started or was preempted for
 * it (the epoch is the same): it left no outcome (r 0) or one, a wait. */
static void memo_keep(struct pass *p, const struct gp_sched_task *t, int k, bool first_round,
		      int r, int n_out, uint64_t epoch)
{
	struct memo *m = &p->memo[p->memo_next];

	if (r < 0 || epoch != p->epoch || p->n_out - n_out != r ||
	    (r && p->out[n_out].verdict != GP_SCHED_WAIT))
		return;
	p->memo_next = (p->memo_next + 1) % MEMOS;
	*m = (struct memo){ .epoch = epoch, .tenant = k, .first_round = first_round,
			    .req = t->req, .decided = r };
	if (r)
		memcpy(m->reason, p->out[n_out].reason, sizeof(m->reason));
}

/* Decides for t; in the first round only for a task within its tenant's
 * guarantees (returns 0, deciding nothing, for the others). Returns 1
 * when decided, or -ENOMEM. */
static int decide_now(struct pass *p, struct gp_sched_task *t, int k, bool first_round)
{
	const struct gp_sched_tenant *q = &p->tenants[k];
	struct gp_quota_use need = task_usage(&t->req);
	bool guaranteed = within(&q->quota, p->used[k], need, false);
	int r;

	if (first_round && !guaranteed)
		return 0;
	if (!within(&q->quota, p->used[k], need, true)) {
		wait_over_quota(p, t, k, need);
		return 1;
	}
	r = first_round ? decide_guaranteed(p, t, k) : decide_borrowing(p, t, k, guaranteed);
	if (r == -EINVAL) {
		wait_unplaceable(p, t);
		return 1;
	}
	return r;
}

/* decide_now, or its memo's answer (struct memo). */
static int decide(struct pass *p, struct gp_sched_task *t, bool first_round)
{
	int k = tenant_of(p, t->tenant), n_out = p->n_out, r;
	uint64_t epoch = p->epoch;

	if (memo_use(p, t, k, first_round, &r))
		return r;
	r = decide_now(p, t, k, first_round);
	memo_keep(p, t, k, first_round, r, n_out, epoch);
	return r;
}

/* ---- the pass ----------------------------------------------------------- */

/* Model quotas of one tenant: at most GP_MODELS_MAX, over disjoint sets. */
static bool model_quotas_valid(const struct gp_sched_tenant *q)
{
	uint64_t seen = 0;

	if (q->model_quotas < 0 || q->model_quotas > GP_MODELS_MAX ||
	    (q->model_quotas && !q->model_quota))
		return false;
	for (int i = 0; i < q->model_quotas; i++) {
		if (seen & q->model_quota[i].models)
			return false;
		seen |= q->model_quota[i].models;
	}
	return true;
}

/* Allocates the pass's tables; -EINVAL for bad model quotas. */
static int pass_init(struct pass *p, int n_tasks)
{
	int quotas = 0;

	p->model_base = calloc((size_t)p->n_tenants + 1, sizeof(*p->model_base));
	if (!p->model_base)
		return -ENOMEM;
	for (int k = 0; k < p->n_tenants; k++) {
		if (!model_quotas_valid(&p->tenants[k]))
			return -EINVAL;
		p->model_base[k] = quotas;
		quotas += p->tenants[k].model_quotas;
	}
	p->used = calloc((size_t)p->n_tenants + 1, sizeof(*p->used));
	p->model_used = calloc((size_t)quotas + 1, sizeof(*p->model_used));
	p->released = calloc((size_t)n_tasks + 1, sizeof(*p->released));
	p->running = calloc((size_t)n_tasks + 1, sizeof(*p->running));
	return p->used && p->model_used && p->released && p->running ? 0 : -ENOMEM;
}

static void pass_release(struct pass *p)
{
	free(p->used);
	free(p->model_used);
	free(p->model_base);
	free(p->released);
	free(p->running);
}

/* Are the n tasks of queue in the queue's order already? */
static bool queue_sorted(struct gp_sched_task *const *queue, int n)
{
	for (int i = 1; i < n; i++)
		if (gp_sched_compare(queue[i - 1], queue[i]) > 0)
			return false;
	return true;
}

/* Counts the running tasks in their tenants' quotas and queues the others
 * in order (sorted only when the caller did not give them in order);
 * -EINVAL for a task of an unknown tenant. */
static int pass_queue(struct pass *p, struct gp_sched_task **queue, int *ret_queued)
{
	int queued = 0;

	for (int i = 0; i < p->n_tasks; i++) {
		struct gp_sched_task *t = &p->tasks[i];
		int k = tenant_of(p, t->tenant);

		if (k < 0)
			return -EINVAL;
		if (t->running) {
			usage_add(&p->used[k], usage_at(p->c, &t->req, &t->where));
			model_charge(p, k, &t->req, &t->where, false);
			p->running[p->n_running++] = t;
		} else {
			queue[queued++] = t;
		}
	}
	if (!queue_sorted(queue, queued))
		qsort(queue, (size_t)queued, sizeof(*queue), queue_order);
	*ret_queued = queued;
	return 0;
}

int gp_sched_pass(struct gp_cluster *c, struct gp_policy *policy,
		  const struct gp_sched_tenant *tenants, int n_tenants,
		  struct gp_sched_task *tasks, int n_tasks, struct gp_sched_outcome *out, int *ret_n)
{
	struct pass p = { .c = c, .policy = policy, .tenants = tenants, .n_tenants = n_tenants,
			  .tasks = tasks, .n_tasks = n_tasks, .out = out, .epoch = 1 };
	struct gp_sched_task **queue = calloc((size_t)n_tasks + 1, sizeof(*queue));
	int queued = 0, r = queue ? pass_init(&p, n_tasks) : -ENOMEM;

	if (r == 0)
		r = pass_queue(&p, queue, &queued);
	if (r < 0)
		goto out;
	/* Guaranteed capacity first, borrowing after: a borrower ahead in the
	 * queue must not take what a task within its guarantee needs (it would
	 * be preempted at once, queued again ahead of it, and so on). */
	for (int i = 0; r == 0 && i < queued; i++) {
		int decided = decide(&p, queue[i], true);

		if (decided < 0)
			r = decided;
		else if (decided)
			queue[i] = NULL;
	}
	for (int i = 0; r == 0 && i < queued; i++)
		if (queue[i] && (r = decide(&p, queue[i], false)) > 0)
			r = 0;
	if (r == 0)
		*ret_n = p.n_out;
out:
	pass_release(&p);
	free(queue);
	return r;
}

/* ---- a live change ------------------------------------------------------ */

/* Percent per share, within `limit` when `used` is held besides: the most
 * each of `shares` shares may have, at most a whole device. */
static unsigned share_left(uint64_t used, uint64_t limit, unsigned shares)
{
	uint64_t left = used < limit ? (limit - used) / (shares ? shares : 1) : 0;

	return left < 100 ? (unsigned)left : 100;
}

/* Refuses a change past the tenant's overall quota (t's own share already
 * given back to p->used[k]). */
static void change_over_quota(const struct pass *p, const struct gp_sched_task *t, int k,
			      const struct gp_request *req, struct gp_sched_change *ret)
{
	const struct gp_sched_tenant *q = &p->tenants[k];
	uint64_t mem = gp_quota_limit(&q->quota).mem_mib;
	uint64_t pct = gp_quota_limit(&q->quota).compute_pct;
	struct gp_quota_use used = p->used[k], need = usage_at(p->c, req, &t->where);

	if (used.mem_mib + need.mem_mib > mem)
		snprintf(ret->reason, sizeof(ret->reason),
			 "over quota: the tenant's tasks hold %" PRIu64 " MiB of its %" PRIu64
			 " MiB (guaranteed + borrowable) with this one: its share may go down, "
			 "not up, until some end or the quota is raised",
			 used.mem_mib + need.mem_mib, mem);
	else
		snprintf(ret->reason, sizeof(ret->reason),
			 "over quota: at %u %% on %u device(s) the task would need %" PRIu64
			 " %% of compute, and the tenant's other tasks hold %" PRIu64
			 " %% of its %" PRIu64 " %% (guaranteed + borrowable): ask for at most "
			 "%u %%, or raise the tenant's quota",
			 gp_request_share(req) / 10, t->req.devices, need.compute_pct,
			 used.compute_pct, pct, share_left(used.compute_pct, pct, t->req.devices));
}

/* Refuses a change past the model quota b of tenant k. */
static void change_over_model_quota(const struct pass *p, const struct gp_sched_task *t, int k,
				    const struct gp_request *req, const struct blocked *b,
				    struct gp_sched_change *ret)
{
	const struct gp_sched_model_quota *q = &p->tenants[k].model_quota[b->quota];
	const struct gp_quota_use *used = &p->model_used[p->model_base[k] + b->quota];
	uint64_t pct = gp_quota_limit(&q->quota).compute_pct;
	unsigned shares = 0;

	for (int i = 0; i < t->where.devices; i++)
		shares += model_quota_of(p, k, gp_cluster_device_model(p->c, t->where.node,
									t->where.device[i])) ==
			  b->quota;
	snprintf(ret->reason, sizeof(ret->reason),
		 "over the %s quota: at %u %% the task would need %" PRIu64
		 " %% of compute there, and the tenant's other tasks hold %" PRIu64
		 " %% of its %" PRIu64 " %%: ask for at most %u %%, or raise that quota",
		 q->name, gp_request_share(req) / 10, b->need.compute_pct, used->compute_pct, pct,
		 share_left(used->compute_pct, pct, shares));
}

/* The least compute free (percent) on t's devices, t itself released. */
static unsigned change_room(const struct pass *p, const struct gp_sched_task *t)
{
	struct gp_node_usage u;
	unsigned least = UINT16_MAX;

	if (gp_cluster_node_usage(p->c, t->where.node, &u) < 0)
		return 0;
	for (int i = 0; i < t->where.devices; i++)
		if (t->where.device[i] < u.devices && u.compute_free[t->where.device[i]] < least)
			least = u.compute_free[t->where.device[i]];
	return least == UINT16_MAX ? 0 : least / 10;
}

/* Moves t's share in the cluster to req: -EBUSY (the reason in *ret, t
 * put back) when its devices lack the compute. */
static int change_commit(struct pass *p, struct gp_sched_task *t, const struct gp_request *req,
			 struct gp_sched_change *ret)
{
	unsigned room, own = gp_request_share(&t->req) / 10;
	int r = gp_cluster_release(p->c, &t->req, &t->where);

	if (r < 0)
		return r;
	r = gp_cluster_commit(p->c, req, &t->where);
	if (r == 0)
		return 0;
	room = change_room(p, t);
	gp_cluster_commit(p->c, &t->req, &t->where);
	if (r != -EBUSY)
		return r;
	snprintf(ret->reason, sizeof(ret->reason),
		 "no room: its device%s %s %u %% of compute free beside its own %u %% (past "
		 "the overcommit, if any): ask for at most %u %%, or wait for other tasks on "
		 "%s to end",
		 t->where.devices > 1 ? "s" : "", t->where.devices > 1 ? "have at most" : "has",
		 room > own ? room - own : 0, own, room < 100 ? room : 100,
		 t->where.devices > 1 ? "them" : "it");
	return -EBUSY;
}

/* Decides the change of running task t (tenant k) to req. */
static int change_decide(struct pass *p, struct gp_sched_task *t, int k,
			 const struct gp_request *req, struct gp_sched_change *ret)
{
	const struct gp_sched_tenant *q = &p->tenants[k];
	struct gp_quota_use need = usage_at(p->c, req, &t->where);
	bool more = gp_request_share(req) > gp_request_share(&t->req);
	struct blocked b;
	int r;

	usage_sub(&p->used[k], usage_at(p->c, &t->req, &t->where));
	model_charge(p, k, &t->req, &t->where, true);
	if (more && t->misfit) {
		snprintf(ret->reason, sizeof(ret->reason),
			 "its devices cannot hold it as it is (see its task.unplaced alert): its "
			 "share may go down, not up");
		return 0;
	}
	if (more && !within(&q->quota, p->used[k], need, true)) {
		change_over_quota(p, t, k, req, ret);
		return 0;
	}
	if (more && model_over(p, k, req, &t->where, true, &b)) {
		change_over_model_quota(p, t, k, req, &b, ret);
		return 0;
	}
	r = t->misfit ? 0 : change_commit(p, t, req, ret);
	if (r == -EBUSY)
		return 0;
	if (r < 0)
		return r;
	ret->fits = true;
	ret->borrowed =
		!within(&q->quota, p->used[k], need, false) ||
		model_over(p, k, req, &t->where, false, &b);
	snprintf(ret->reason, sizeof(ret->reason), "%s",
		 ret->borrowed ? "on borrowed quota" : "within the tenant's guarantee");
	t->req = *req;
	t->borrowed = ret->borrowed;
	return 0;
}

int gp_sched_change(struct gp_cluster *c, const struct gp_sched_tenant *tenants, int n_tenants,
		    struct gp_sched_task *tasks, int n_tasks, int64_t id,
		    const struct gp_request *req, struct gp_sched_change *ret)
{
	struct pass p = { .c = c, .tenants = tenants, .n_tenants = n_tenants, .tasks = tasks,
			  .n_tasks = n_tasks };
	struct gp_sched_task **queue = calloc((size_t)n_tasks + 1, sizeof(*queue));
	struct gp_sched_task *t = NULL;
	int queued = 0, r = queue ? pass_init(&p, n_tasks) : -ENOMEM;

	if (r == 0)
		r = pass_queue(&p, queue, &queued);
	for (int i = 0; r == 0 && i < n_tasks; i++)
		if (tasks[i].id == id && tasks[i].running)
			t = &tasks[i];
	if (r == 0 && (!t || req->devices != t->req.devices || req->whole != t->req.whole))
		r = t ? -EINVAL : -ENOENT;
	if (r == 0) {
		*ret = (struct gp_sched_change){ 0 };
		r = change_decide(&p, t, tenant_index(tenants, n_tenants, t->tenant), req, ret);
	}
	pass_release(&p);
	free(queue);
	return r;
}
