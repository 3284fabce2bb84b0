/* extender-reclaim.c — reclaim on Kubernetes (extender.h). A pod within
 * its namespace's guarantee that fits on no node takes capacity back from
 * the pods of other namespaces that borrow past their guarantees, by the
 * same rule as on one machine: the server's scheduling pass (sched.h:
 * only borrowed pods, lowest priority and newest first, only on devices of
 * models the pod may use, until it fits). The victims are evicted through
 * the Eviction API, so their terminationGracePeriodSeconds apply (the
 * checkpoint signal) and their owners make them again, to queue; each gets
 * an event, and so does the pod that waits. It binds once their slices are
 * free: pods being evicted hold theirs until their containers are gone,
 * and count here as already free, so that a retry does not evict more.
 *
 * Which of a namespace's placed pods borrow: its oldest up to its
 * guarantee (memory and compute) are its own, the rest borrowed. A
 * namespace that is not a tenant is not limited: it never borrows, and
 * never reclaims. Model quotas count as on one machine: a pod past its
 * namespace's guarantee on its devices' model borrows too, and the pass
 * weighs each namespace's model quotas (over the models of the cluster
 * their names match, core/models.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "core/models.h"
#include "k8s/extender-impl.h"
#include "k8s/names.h"

/* A namespace's model quotas, kept for the pass (the quota callback's
 * are its own, until its next call). */
struct model_quotas {
	struct gp_sched_model_quota q[GP_MODELS_MAX];
};

/* What one reclaim pass works on. */
struct reclaim {
	struct gp_sched_tenant *tenant;
	struct model_quotas **model;    /* tenant i's; NULL: none */
	char (*tenant_ns)[GP_KUBE_NAME_MAX];
	int tenants;
	struct gp_sched_task *task;
	struct kpod **pod;              /* task i's pod; the last task is the one that waits */
	int tasks;
	struct gp_sched_outcome *out;
};

/* Tenant t's model quotas, copied for the pass, each with the set of the
 * cluster's models it governs (a model to the quota whose name matches it
 * best); without memory for them, none. */
static void model_quotas_keep(struct gp_extender *e, struct reclaim *r, struct gp_sched_tenant *t)
{
	struct model_quotas *m = t->model_quotas ? malloc(sizeof(*m)) : NULL;

	if (m) {
		memcpy(m->q, t->model_quota, (size_t)t->model_quotas * sizeof(*m->q));
		for (int q = 0; q < t->model_quotas; q++)
			m->q[q].models = 0;
		for (int id = 0; id < GP_MODELS_MAX; id++) {
			const char *name = gp_cluster_model_name(e->cluster, id);
			int q = name ? gp_model_best(name, NULL, m->q, sizeof(*m->q),
						     offsetof(struct gp_sched_model_quota, name),
						     t->model_quotas)
				     : -1;

			if (q >= 0)
				m->q[q].models |= 1ULL << id;
		}
	}
	r->model[r->tenants] = m;
	t->model_quota = m ? m->q : NULL;
	t->model_quotas = m ? t->model_quotas : 0;
}

/* The index of namespace ns among the pass's tenants, added when new. */
static int tenant_index(struct gp_extender *e, struct reclaim *r, const char *ns)
{
	struct gp_sched_tenant *t = &r->tenant[r->tenants];

	for (int i = 0; i < r->tenants; i++)
		if (strcmp(r->tenant_ns[i], ns) == 0)
			return i;
	memset(t, 0, sizeof(*t));
	if (!e->quota || e->quota(e->quota_ctx, ns, t) < 0)
		*t = (struct gp_sched_tenant){ .quota = { .unlimited = true } };
	t->id = r->tenants + 1;         /* the pass's own ids */
	model_quotas_keep(e, r, t);
	snprintf(r->tenant_ns[r->tenants], GP_KUBE_NAME_MAX, "%s", ns);
	return r->tenants++;
}

/* Whether pod k, on top of what its namespace's pods before it hold on
 * each model quota's devices (model_held, one per quota of tenant t),
 * borrows past one of those guarantees; adds what it holds. */
static bool model_borrowing(struct gp_extender *e, const struct gp_sched_tenant *t,
			    const struct kpod *k, struct gp_quota_use *model_held)
{
	bool borrowing = false;

	for (int i = 0; i < k->where.devices; i++) {
		int id = gp_cluster_device_model(e->cluster, k->where.node, k->where.device[i]);

		for (int q = 0; id >= 0 && q < t->model_quotas; q++)
			if (t->model_quota[q].models >> id & 1)
				model_held[q] = gp_quota_sum(model_held[q], (struct gp_quota_use){
					k->p.placement.memory_mib,
					k->req.whole ? 100 : k->p.placement.compute });
	}
	for (int q = 0; q < t->model_quotas; q++)
		borrowing = borrowing || gp_quota_borrowing(&t->model_quota[q].quota, model_held[q]);
	return borrowing;
}

static int by_bound_at(const void *a, const void *b)
{
	const struct kpod *x = *(struct kpod *const *)a, *y = *(struct kpod *const *)b;

	return (x->p.placement.bound_at > y->p.placement.bound_at) -
	       (x->p.placement.bound_at < y->p.placement.bound_at);
}

/* The placed pods as running tasks, oldest first: each namespace's own up
 * to its guarantee, borrowed past it. Pods being evicted are let go (their
 * capacity counts as free). */
static int running_add(struct gp_extender *e, struct reclaim *r)
{
	struct gp_quota_use *held = calloc((size_t)e->pods.count + 1, sizeof(*held));
	struct gp_quota_use (*model_held)[GP_MODELS_MAX] =
		calloc((size_t)e->pods.count + 1, sizeof(*model_held));

	if (!held || !model_held) {
		free(held);
		free(model_held);
		return -ENOMEM;
	}
	for (size_t i = 0; i < e->pods.cap; i++) {
		struct kpod *k = e->pods.slot[i].value;

		if (!e->pods.slot[i].key || !k->held || !k->p.units)
			continue;
		if (k->p.deleting) {
			gp_extender_pod_let_go(e, k);
			continue;
		}
		r->pod[r->tasks++] = k;
	}
	qsort(r->pod, (size_t)r->tasks, sizeof(*r->pod), by_bound_at);
	for (int i = 0; i < r->tasks; i++) {
		struct kpod *k = r->pod[i];
		int t = tenant_index(e, r, k->p.ns);
		const struct gp_sched_tenant *q = &r->tenant[t];

		/* (as the quota counts them: a whole device's own memory) */
		held[t] = gp_quota_sum(held[t], (struct gp_quota_use){
			k->p.placement.memory_mib * k->p.placement.devices,
			(uint64_t)(k->req.whole ? 100 : k->p.placement.compute) *
				k->p.placement.devices });
		r->task[i] = (struct gp_sched_task){
			.id = i + 1, .tenant = q->id, .priority = k->p.placement.priority,
			.created = k->p.placement.bound_at, .req = k->req, .running = true,
			/* (|: the model quotas count the pod either way) */
			.borrowed = gp_quota_borrowing(&q->quota, held[t]) |
				    model_borrowing(e, q, k, model_held[t]),
			.where = k->where,
		};
	}
	free(held);
	free(model_held);
	return 0;
}

/* The victims the pass preempts for the waiting pod (the last task), in
 * ret; how many; -EAGAIN when it does not start even so. */
static int victims_of(struct reclaim *r, int outcomes, struct gp_extender_victim *ret, int max)
{
	bool starts = false;
	int n = 0;

	for (int i = 0; i < outcomes; i++) {
		const struct gp_sched_outcome *o = &r->out[i];

		if (o->index == r->tasks - 1)
			starts = o->verdict == GP_SCHED_START;
		else if (o->verdict == GP_SCHED_PREEMPT && n < max) {
			const struct kpod *k = r->pod[o->index];

			snprintf(ret[n].ns, sizeof(ret[n].ns), "%s", k->p.ns);
			snprintf(ret[n].name, sizeof(ret[n].name), "%s", k->p.name);
			snprintf(ret[n].uid, sizeof(ret[n].uid), "%s", k->p.uid);
			n++;
		}
	}
	return starts ? n : -EAGAIN;
}

int gp_extender_reclaim(struct gp_extender *e, struct kpod *waiting, const struct ask *a,
			struct gp_extender_victim *ret, int max)
{
	size_t cap = (size_t)e->pods.count + 2;
	struct reclaim r = {
		.tenant = calloc(cap, sizeof(*r.tenant)), .tenant_ns = calloc(cap, sizeof(*r.tenant_ns)),
		.model = calloc(cap, sizeof(*r.model)),
		.task = calloc(cap, sizeof(*r.task)), .pod = calloc(cap, sizeof(*r.pod)),
		.out = calloc(cap, sizeof(*r.out)),
	};
	int outcomes = 0, n = -ENOMEM, t;

	if (!r.tenant || !r.model || !r.tenant_ns || !r.task || !r.pod || !r.out || !e->cluster ||
	    !e->policy ||
	    running_add(e, &r) < 0)
		goto out;
	t = tenant_index(e, &r, waiting->p.ns);
	r.pod[r.tasks] = waiting;
	r.task[r.tasks] = (struct gp_sched_task){
		.id = r.tasks + 1, .tenant = r.tenant[t].id, .req = a->req, .created = gp_unix_ns(),
		.priority = waiting->p.priority,
	};
	r.tasks++;
	n = gp_sched_pass(e->cluster, e->policy, r.tenant, r.tenants, r.task, r.tasks, r.out,
			  &outcomes);
	if (n == 0)
		n = victims_of(&r, outcomes, ret, max);
out:
	/* The pass committed and released in the cluster: made again from
	 * the pods at the next verb. */
	e->dirty = true;
	for (int i = 0; r.model && i < r.tenants; i++)
		free(r.model[i]);
	free(r.model);
	free(r.tenant);
	free(r.tenant_ns);
	free(r.task);
	free(r.pod);
	free(r.out);
	return n;
}

/* Evicts one pod through the Eviction API (its own grace period, and
 * any PodDisruptionBudget), with a Warning event of `reason` saying
 * `text` on it. */
static int evict_one(struct gp_kube *api, const struct gp_extender_victim *v, const char *reason,
		     const char *text)
{
	char path[2 * GP_KUBE_NAME_MAX + 64];
	json_t *body = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "policy/v1", "kind",
				 "Eviction", "metadata", "name", v->name, "namespace", v->ns);
	int r;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/eviction", v->ns, v->name);
	r = body ? gp_kube_post(api, path, body, NULL, NULL) : -ENOMEM;
	json_decref(body);
	if (r == 0)
		gp_kube_event(api, "Pod", v->ns, v->name, v->uid, "Warning", reason, text,
			      EVENT_COMPONENT);
	else
		fprintf(stderr, "gpupool server: cannot evict pod %s/%s: %s\n", v->ns, v->name,
			gp_kube_error(api));
	return r;
}

int gp_extender_evict_pod(struct gp_extender *e, const char *ns, const char *name,
			  const char *uid, const char *reason, const char *text)
{
	struct gp_extender_victim v;
	struct gp_kube *api;
	int slot, r;

	if (!(api = gp_extender_api_take(e, &slot)))
		return -ENOTCONN;
	snprintf(v.ns, sizeof(v.ns), "%s", ns);
	snprintf(v.name, sizeof(v.name), "%s", name);
	snprintf(v.uid, sizeof(v.uid), "%s", uid);
	r = evict_one(api, &v, reason, text);
	gp_extender_api_give(e, slot);
	return r;
}

int gp_extender_patch(struct gp_extender *e, const char *path, json_t *patch, char *err,
		      size_t err_len)
{
	struct gp_kube *api;
	int slot, r;

	if (!(api = gp_extender_api_take(e, &slot)))
		return -ENOTCONN;
	r = gp_kube_merge_patch(api, path, patch, NULL, NULL);
	if (r < 0)
		snprintf(err, err_len, "%s", gp_kube_error(api));
	gp_extender_api_give(e, slot);
	return r;
}

/* Victim v was evicted for pod ns/name: its task ends preempted
 * (kube-tasks.h). */
static void reclaimed_mark(struct gp_extender *e, const struct gp_extender_victim *v,
			   const char *ns, const char *name)
{
	struct kpod *k;

	pthread_mutex_lock(&e->lock);
	if ((k = gp_strmap_get(&e->pods, v->uid)))
		snprintf(k->reclaimed_for, sizeof(k->reclaimed_for), "%.63s/%.63s", ns, name);
	pthread_mutex_unlock(&e->lock);
}

void gp_extender_evict(struct gp_extender *e, const struct gp_extender_victim *v, int n,
		       const char *ns, const char *name, const char *uid)
{
	char text[REASON_MAX + GP_KUBE_NAME_MAX];
	struct gp_kube *api;
	int slot;

	if (!(api = gp_extender_api_take(e, &slot)))
		return;
	snprintf(text, sizeof(text), "evicted by gpupool: it runs on capacity its namespace "
		 "borrowed past its guarantee, and pod %s/%s, within its namespace's guarantee, "
		 "needs it back", ns, name);
	for (int i = 0; i < n; i++)
		if (evict_one(api, &v[i], "GpupoolReclaimed", text) == 0)
			reclaimed_mark(e, &v[i], ns, name);
	snprintf(text, sizeof(text), "reclaiming its namespace's guarantee: %d pod(s) of namespaces "
		 "that borrow past theirs evicted; it is placed once they end", n);
	gp_kube_event(api, "Pod", ns, name, uid, "Normal", "GpupoolReclaiming", text,
		      EVENT_COMPONENT);
	gp_extender_api_give(e, slot);
}
