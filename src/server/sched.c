/* sched.c — one scheduling pass: quotas, borrowing, reclaim (sched.h). */
#include "server/sched.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* What a task counts against its tenant's quota. */
struct usage {
	uint64_t mem_mib, compute_pct;
};

static struct usage task_usage(const struct gp_request *req)
{
	return (struct usage){
		.mem_mib = (uint64_t)req->devices * req->dev_mem_mib,
		.compute_pct = (uint64_t)req->devices * gp_request_share(req) / 10,
	};
}

static int tenant_index(const struct gp_sched_tenant *tenants, int n, int64_t id)
{
	for (int i = 0; i < n; i++)
		if (tenants[i].id == id)
			return i;
	return -1;
}

static bool within(struct usage used, struct usage add, uint64_t mem, uint64_t compute)
{
	return used.mem_mib + add.mem_mib <= mem && used.compute_pct + add.compute_pct <= compute;
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

/* The state of one pass. */
struct pass {
	struct gp_cluster *c;
	struct gp_policy *policy;
	const struct gp_sched_tenant *tenants;
	int n_tenants;
	struct usage *used;             /* per tenant */
	struct gp_sched_task *tasks;
	int n_tasks;
	struct gp_sched_outcome *out;
	int n_out;
	struct gp_sched_task **released;        /* scratch of place() */
};

static struct gp_sched_outcome *outcome(struct pass *p, const struct gp_sched_task *t,
					enum gp_sched_verdict verdict)
{
	struct gp_sched_outcome *o = &p->out[p->n_out++];

	*o = (struct gp_sched_outcome){ .task = t->id, .verdict = verdict };
	return o;
}

/* The running borrowed task of another tenant to preempt first for
 * `for_tenant`: lowest priority, then newest. NULL when none. */
static struct gp_sched_task *reclaim_victim(struct pass *p, int64_t for_tenant)
{
	struct gp_sched_task *victim = NULL;

	for (int i = 0; i < p->n_tasks; i++) {
		struct gp_sched_task *t = &p->tasks[i];

		if (!t->running || !t->borrowed || t->tenant == for_tenant)
			continue;
		if (!victim || t->priority < victim->priority ||
		    (t->priority == victim->priority && t->created > victim->created))
			victim = t;
	}
	return victim;
}

/* Records the preemption of victim t (already released from the
 * cluster) for for_task, and gives its tenant's quota back. */
static void preempted(struct pass *p, struct gp_sched_task *t, const struct gp_sched_task *for_task)
{
	struct gp_sched_outcome *o = outcome(p, t, GP_SCHED_PREEMPT);
	struct usage u = task_usage(&t->req);
	int k = tenant_index(p->tenants, p->n_tenants, t->tenant);

	p->used[k].mem_mib -= u.mem_mib;
	p->used[k].compute_pct -= u.compute_pct;
	snprintf(o->reason, sizeof(o->reason),
		 "preempted: it ran on borrowed quota, and task %" PRId64
		 " of the lending tenant needs its guarantee back",
		 for_task->id);
}

/* Places t; when it fits nowhere and is within its tenant's guarantee,
 * takes back borrowed capacity: releases victims one at a time until t
 * fits. If it never fits, the victims are put back and nobody is
 * preempted for nothing. Returns true when placed (decision in *d). */
static bool place(struct pass *p, struct gp_sched_task *t, bool within_guarantee,
		  struct gp_decision *d)
{
	struct gp_sched_task *victim;
	int n = 0;

	if (gp_place(p->c, p->policy, &t->req, d) == 0 && d->placed)
		return true;
	if (!within_guarantee)
		return false;
	while ((victim = reclaim_victim(p, t->tenant))) {
		gp_cluster_release(p->c, &victim->req, &victim->where);
		victim->running = false;
		p->released[n++] = victim;
		if (gp_place(p->c, p->policy, &t->req, d) == 0 && d->placed) {
			for (int i = 0; i < n; i++)
				preempted(p, p->released[i], t);
			return true;
		}
	}
	for (int i = 0; i < n; i++) {
		gp_cluster_commit(p->c, &p->released[i]->req, &p->released[i]->where);
		p->released[i]->running = true;
	}
	return false;
}

/* Decides for t; in the first round only for a task within its tenant's
 * guarantee (returns false, deciding nothing, for the others). */
static bool decide(struct pass *p, struct gp_sched_task *t, bool first_round)
{
	int k = tenant_index(p->tenants, p->n_tenants, t->tenant);
	const struct gp_sched_tenant *q = &p->tenants[k];
	struct usage need = task_usage(&t->req);
	bool guaranteed = within(p->used[k], need, q->mem_guaranteed_mib, q->compute_guaranteed_pct);
	struct gp_sched_outcome *o;
	struct gp_decision d;

	if (first_round && !guaranteed)
		return false;

	if (!within(p->used[k], need, q->mem_guaranteed_mib + q->mem_borrowable_mib,
		    q->compute_guaranteed_pct + q->compute_borrowable_pct)) {
		o = outcome(p, t, GP_SCHED_WAIT);
		snprintf(o->reason, sizeof(o->reason),
			 "over quota: the tenant uses %" PRIu64 " MiB and %" PRIu64
			 " %% of its %" PRIu64 " MiB and %" PRIu64
			 " %% (guaranteed + borrowable); this task needs %" PRIu64 " MiB and %" PRIu64
			 " %%; it starts when the tenant's tasks end",
			 p->used[k].mem_mib, p->used[k].compute_pct,
			 q->mem_guaranteed_mib + q->mem_borrowable_mib,
			 q->compute_guaranteed_pct + q->compute_borrowable_pct, need.mem_mib,
			 need.compute_pct);
		return true;
	}
	if (!place(p, t, guaranteed, &d)) {
		o = outcome(p, t, GP_SCHED_WAIT);
		snprintf(o->reason, sizeof(o->reason), "no device fits now (%s)%s",
			 gp_nofit_name(d.reason),
			 guaranteed ? "" : "; past its guarantee it only borrows idle capacity");
		return true;
	}
	gp_cluster_commit(p->c, &t->req, &d.where);
	t->running = true;
	t->borrowed = !guaranteed;
	t->where = d.where;
	p->used[k].mem_mib += need.mem_mib;
	p->used[k].compute_pct += need.compute_pct;
	o = outcome(p, t, GP_SCHED_START);
	o->where = d.where;
	o->borrowed = t->borrowed;
	snprintf(o->reason, sizeof(o->reason), "%s",
		 guaranteed ? "within the tenant's guarantee" : "on borrowed quota");
	return true;
}

int gp_sched_pass(struct gp_cluster *c, struct gp_policy *policy,
		  const struct gp_sched_tenant *tenants, int n_tenants,
		  struct gp_sched_task *tasks, int n_tasks, struct gp_sched_outcome *out, int *ret_n)
{
	struct pass p = { c, policy, tenants, n_tenants, NULL, tasks, n_tasks, out, 0, NULL };
	struct gp_sched_task **queue;
	int queued = 0, r = 0;

	p.used = calloc((size_t)n_tenants + 1, sizeof(*p.used));
	queue = calloc((size_t)n_tasks + 1, sizeof(*queue));
	p.released = calloc((size_t)n_tasks + 1, sizeof(*p.released));
	if (!p.used || !queue || !p.released) {
		r = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n_tasks; i++) {
		int k = tenant_index(tenants, n_tenants, tasks[i].tenant);

		if (k < 0) {
			r = -EINVAL;
			goto out;
		}
		if (tasks[i].running) {
			struct usage u = task_usage(&tasks[i].req);

			p.used[k].mem_mib += u.mem_mib;
			p.used[k].compute_pct += u.compute_pct;
		} else {
			queue[queued++] = &tasks[i];
		}
	}
	qsort(queue, (size_t)queued, sizeof(*queue), queue_order);
	/* Guaranteed capacity first, borrowing after: a borrower ahead in the
	 * queue must not take what a task within its guarantee needs (it would
	 * be preempted at once, queued again ahead of it, and so on). */
	for (int i = 0; i < queued; i++)
		if (decide(&p, queue[i], true))
			queue[i] = NULL;
	for (int i = 0; i < queued; i++)
		if (queue[i])
			decide(&p, queue[i], false);
	*ret_n = p.n_out;
out:
	free(p.used);
	free(queue);
	free(p.released);
	return r;
}
