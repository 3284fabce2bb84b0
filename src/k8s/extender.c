/* extender.c — the kube-scheduler extender (see extender.h), in this
 * order: the cluster rebuilt from the Nodes and every pod's placement held
 * in it; the informers' callbacks (and the holds prioritize makes for the
 * binds to come); what a pod asks of the core (one request per group of
 * models that give a share the same compute and memory); quotas; decisions
 * on one node or the whole cluster; the verbs' replies, written as text;
 * filter and prioritize; bind; the extender's life. Everything runs under
 * e->lock but the calls to the API server (a pool of handles, api_lock). */
#include "k8s/extender.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/strmap.h"
#include "core/cluster.h"
#include "core/policy.h"
#include "core/workload.h"
#include "k8s/args.h"
#include "k8s/names.h"
#include "k8s/reply.h"
#include "k8s/objects.h"
#include "sim/trace.h"

#define NO_NODE UINT32_MAX
#define REASON_MAX 256
#define WORKLOAD_COVERAGE 0.95
#define EVENT_COMPONENT "gpupool-extender"
/* Without a workload trace, the target is made again from the pods
 * placed every this many binds. */
#define RETARGET_BINDS 512
/* A placement chosen by prioritize is held for the bind that follows
 * (kube-scheduler binds while it schedules the next pod); one that no bind
 * claims in this long is given back. */
#define RESERVE_TTL_NS (30ULL * 1000000000ULL)

struct knode {
	struct gp_kube_node n;
	uint32_t index;                 /* in the cluster; NO_NODE: not there */
};

struct kpod {
	struct gp_kube_pod p;
	bool held;                      /* its placement is committed */
	struct gp_request req;          /* what it holds, when held */
	struct gp_placement where;
	char last_event[REASON_MAX + 64];       /* the last unschedulable event sent */
	uint64_t reserved_ns;           /* held by prioritize, not bound yet; 0: not */
};

/* What the devices of one model offer a share (the first device seen). */
struct model_info {
	unsigned split;
	uint64_t memory_mib;
};

/* One request a pod makes: of the models that give a share the same
 * compute and memory. */
struct ask {
	struct gp_request req;
	unsigned compute_pct;
	uint64_t memory_mib;
};

struct gp_extender {
	pthread_mutex_t lock;
	pthread_mutex_t api_lock;       /* the API handles: each used by one call at a time */
	pthread_cond_t api_free;
	char policy_name[64], scheduler[GP_KUBE_NAME_MAX];
	uint64_t tie_seed;
	gp_extender_quota_fn *quota;
	void *quota_ctx;
	struct gp_kube *const *api;     /* GP_EXTENDER_API_MAX at most */
	int apis;
	unsigned api_busy;              /* a bit per handle in use */
	struct gp_trace trace;          /* the workload trace's pods; none: 0 pods */
	struct gp_strmap nodes;         /* name -> struct knode */
	struct gp_strmap pods;          /* uid -> struct kpod */
	bool dirty;                     /* the nodes changed: rebuild */
	struct gp_cluster *cluster;
	struct gp_policy *policy;
	struct gp_workload *target;
	struct knode **node_at;         /* cluster index -> node */
	struct gp_node_spec *specs;     /* and its spec */
	uint32_t n_nodes;
	unsigned binds_since_target;
	struct model_info model[GP_MODELS_MAX];
	int models;
	unsigned reserved;              /* pods held by prioritize, not bound yet */
	uint64_t reserve_scan_ns;       /* when they were last looked at */
	void (*io)(void *ctx, bool start);
	void *io_ctx;
	struct gp_extender_stats stats;
};

/* ---- the cluster, from the nodes and the pods ---------------------------- */

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct knode *const *)a)->n.name, (*(struct knode *const *)b)->n.name);
}

static int node_spec(struct gp_extender *e, const struct gp_kube_node *n, struct gp_node_spec *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->cpu_milli = n->cpu_milli;
	ret->mem_mib = n->mem_mib;
	ret->devices = (uint8_t)n->devices;
	for (unsigned i = 0; i < n->devices; i++) {
		const struct gp_kube_device *d = &n->device[i];
		struct gp_device_spec *s = &ret->device[i];
		int id = gp_cluster_model_id(e->cluster, d->model, true);

		if (id < 0)
			return id;
		if (id >= e->models) {
			e->model[id] = (struct model_info){ d->split, d->memory_mib };
			e->models = id + 1;
		}
		snprintf(s->uuid, sizeof(s->uuid), "%s", d->uuid);
		s->model = (uint8_t)id;
		s->numa = (uint8_t)(d->numa < 0 ? 0 : d->numa);
		s->nvlink = (uint8_t)(d->nvlink < 0 ? 0 : d->nvlink);
		s->mem_mib = (uint32_t)d->memory_mib;
		s->overcommit = 1000;
		s->max_tasks = 0;       /* every slice takes a unit: split caps them */
		s->healthy = d->healthy && d->compatible;
	}
	return 0;
}

/* The placement of a pod's annotation as the cluster has its devices;
 * -ENOENT when its node or one of its devices is not there. */
static int placement_where(struct gp_extender *e, const struct gp_kube_placement *pl,
			   struct gp_placement *ret)
{
	struct knode *k = gp_strmap_get(&e->nodes, pl->node);

	if (!k || k->index == NO_NODE)
		return -ENOENT;
	memset(ret, 0, sizeof(*ret));
	ret->node = k->index;
	for (unsigned i = 0; i < pl->devices; i++) {
		unsigned d = 0;

		while (d < k->n.devices && strcmp(k->n.device[d].uuid, pl->device[i]) != 0)
			d++;
		if (d == k->n.devices)
			return -ENOENT;
		ret->device[ret->devices++] = (uint8_t)d;
	}
	return 0;
}

/* The request a placed pod holds: what its placement says. */
static void placement_request(const struct gp_kube_pod *p, struct gp_request *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->cpu_milli = p->cpu_milli;
	ret->mem_mib = p->mem_mib;
	ret->devices = (uint8_t)p->placement.devices;
	ret->whole = p->placement.whole;
	ret->dev_mem_mib = p->placement.whole ? 0 : (uint32_t)p->placement.memory_mib;
	ret->dev_compute = p->placement.whole ? 0 : p->placement.compute * 10;
}

/* A pod without units holds the CPU and memory it asks for on its node
 * once bound (kube-scheduler's or ours): what the policies see of the
 * host is what is left. */
static int host_where(struct gp_extender *e, const struct gp_kube_pod *p,
		      struct gp_request *ret_req, struct gp_placement *ret_where)
{
	struct knode *k = p->node[0] ? gp_strmap_get(&e->nodes, p->node) : NULL;

	if (!k || k->index == NO_NODE)
		return -ENOENT;
	*ret_req = (struct gp_request){ .cpu_milli = p->cpu_milli, .mem_mib = p->mem_mib };
	*ret_where = (struct gp_placement){ .node = k->index };
	return 0;
}

/* Commits the pod's placement; false (nothing held) when it no longer
 * fits where it is (its node or devices are gone or changed). */
static bool pod_hold(struct gp_extender *e, struct kpod *k)
{
	if (!e->cluster || k->p.finished || (k->p.units && !k->p.placed))
		return false;
	if (k->p.units == 0 && host_where(e, &k->p, &k->req, &k->where) < 0)
		return false;
	if (k->p.units)
		placement_request(&k->p, &k->req);
	if ((k->p.units && placement_where(e, &k->p.placement, &k->where) < 0) ||
	    gp_cluster_commit(e->cluster, &k->req, &k->where) < 0)
		return false;
	k->held = true;
	return true;
}

static void pod_let_go(struct gp_extender *e, struct kpod *k)
{
	if (k->held && e->cluster && !e->dirty)
		gp_cluster_release(e->cluster, &k->req, &k->where);
	k->held = false;
}

/* The target workload: the trace's pods (their models renamed into the
 * cluster's ids), else the pods seen. */
static int target_build(struct gp_extender *e, const struct gp_node_spec *specs, uint32_t n)
{
	size_t cap = e->trace.pods ? e->trace.pods : e->pods.count, used = 0;
	struct gp_request *req = calloc(cap ? cap : 1, sizeof(*req));
	int r;

	if (!req)
		return -ENOMEM;
	for (size_t i = 0; i < e->trace.pods; i++) {
		req[used] = e->trace.pod[i];
		req[used].models = 0;
		for (int m = 0; m < e->trace.models; m++) {
			int id = gp_cluster_model_id(e->cluster, e->trace.model[m], false);

			if ((e->trace.pod[i].models >> m & 1) && id >= 0)
				req[used].models |= 1ull << id;
		}
		used++;
	}
	for (size_t i = 0; !e->trace.pods && i < e->pods.cap; i++) {
		const struct kpod *k = e->pods.slot[i].value;

		if (e->pods.slot[i].key && k->held)
			req[used++] = k->req;
	}
	e->target = gp_workload_free(e->target);
	r = used ? gp_workload_from_requests(req, used, WORKLOAD_COVERAGE, &e->target) : 0;
	free(req);
	if (r == 0 && e->target)
		gp_workload_set_supply(e->target, specs, n);
	return r;
}

/* The target workload and the policy that judges against it, made again. */
static int retarget(struct gp_extender *e)
{
	struct gp_policy_config pc = { .seed = e->tie_seed };
	int r = target_build(e, e->specs, e->n_nodes);

	e->policy = gp_policy_free(e->policy);
	e->binds_since_target = 0;
	if (r < 0)
		return r;
	pc.target = e->target;
	return gp_policy_new(e->policy_name, &pc, &e->policy);
}

static int nodes_sorted(struct gp_extender *e, struct knode ***ret, uint32_t *ret_n)
{
	struct knode **all = calloc(e->nodes.count + 1, sizeof(*all));
	uint32_t n = 0;

	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < e->nodes.cap; i++) {
		struct knode *k = e->nodes.slot[i].value;

		if (!e->nodes.slot[i].key)
			continue;
		k->index = NO_NODE;
		if (k->n.devices > 0)
			all[n++] = k;
	}
	qsort(all, n, sizeof(*all), by_name);
	*ret = all;
	*ret_n = n;
	return 0;
}

/* Makes the cluster again from the nodes, holds every placed pod in it,
 * and makes the target workload and the policy for it. */
static int rebuild(struct gp_extender *e)
{
	int r;

	e->cluster = gp_cluster_free(e->cluster);
	e->policy = gp_policy_free(e->policy);
	free(e->node_at);
	free(e->specs);
	e->node_at = NULL;
	e->models = 0;
	if ((r = nodes_sorted(e, &e->node_at, &e->n_nodes)) < 0 ||
	    (r = gp_cluster_new(e->tie_seed, &e->cluster)) < 0)
		goto out;
	e->specs = calloc(e->n_nodes + 1, sizeof(*e->specs));
	if (!e->specs) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < e->n_nodes; i++) {
		if ((r = node_spec(e, &e->node_at[i]->n, &e->specs[i])) < 0 ||
		    (r = gp_cluster_add_node(e->cluster, &e->specs[i], &e->node_at[i]->index)) < 0)
			goto out;
	}
	e->dirty = false;
	for (size_t i = 0; i < e->pods.cap; i++)
		if (e->pods.slot[i].key) {
			struct kpod *k = e->pods.slot[i].value;

			k->held = false;
			pod_hold(e, k);
		}
	r = retarget(e);
	e->stats.rebuilds++;
out:
	if (r < 0)
		e->dirty = true;
	return r;
}

static int ensure_built(struct gp_extender *e)
{
	return e->dirty || !e->cluster || !e->policy ? rebuild(e) : 0;
}

/* ---- the informers' callbacks ---------------------------------------------- */

static void node_put(struct gp_extender *e, const json_t *obj)
{
	struct gp_kube_node n;
	struct knode *k;
	char err[REASON_MAX];

	if (gp_kube_node_read(obj, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpupool extender: %s\n", err);
		return;
	}
	k = gp_strmap_get(&e->nodes, n.name);
	if (k && memcmp(&k->n, &n, sizeof(n)) == 0)
		return;                 /* a heartbeat: nothing gpupool reads changed */
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k || gp_strmap_put(&e->nodes, n.name, k) < 0) {
			free(k);
			return;
		}
	}
	k->n = n;
	k->index = NO_NODE;
	e->dirty = true;
}

static void node_drop(struct gp_extender *e, const char *name)
{
	free(gp_strmap_remove(&e->nodes, name));
	e->dirty = true;
}

static void nodes_clear(struct gp_extender *e)
{
	for (size_t i = 0; i < e->nodes.cap; i++)
		free(e->nodes.slot[i].value);
	gp_strmap_release(&e->nodes);
	e->dirty = true;
}

static void on_nodes_sync(void *ctx, json_t *items)
{
	struct gp_extender *e = ctx;
	size_t i;
	json_t *obj;

	pthread_mutex_lock(&e->lock);
	nodes_clear(e);
	json_array_foreach(items, i, obj)
		node_put(e, obj);
	pthread_mutex_unlock(&e->lock);
}

static void on_node_event(void *ctx, enum gp_kube_event_type type, json_t *obj)
{
	struct gp_extender *e = ctx;
	const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));

	pthread_mutex_lock(&e->lock);
	if (type == GP_KUBE_DELETED && name)
		node_drop(e, name);
	else
		node_put(e, obj);
	pthread_mutex_unlock(&e->lock);
}

const struct gp_kube_informer_ops gp_extender_node_ops = {
	.on_sync = on_nodes_sync,
	.on_event = on_node_event,
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The pod is bound (or gone): its placement is no longer a reservation. */
static void unreserve(struct gp_extender *e, struct kpod *k)
{
	if (k->reserved_ns) {
		k->reserved_ns = 0;
		e->reserved--;
	}
}

/* Gives back what a pod holds for a bind that did not come. */
static void reservation_cancel(struct gp_extender *e, struct kpod *k)
{
	if (!k->reserved_ns)
		return;
	unreserve(e, k);
	pod_let_go(e, k);
	k->p.placed = false;
	k->p.node[0] = 0;
}

/* Reservations older than RESERVE_TTL_NS go, looked for once a second. */
static void reservations_expire(struct gp_extender *e)
{
	uint64_t now = mono_ns();

	if (!e->reserved || now - e->reserve_scan_ns < 1000000000ULL)
		return;
	e->reserve_scan_ns = now;
	for (size_t i = 0; i < e->pods.cap; i++) {
		struct kpod *k = e->pods.slot[i].value;

		if (e->pods.slot[i].key && k->reserved_ns && now - k->reserved_ns > RESERVE_TTL_NS)
			reservation_cancel(e, k);
	}
}

static void pod_drop(struct gp_extender *e, const char *uid)
{
	struct kpod *k = gp_strmap_remove(&e->pods, uid);

	if (k) {
		unreserve(e, k);
		pod_let_go(e, k);
	}
	free(k);
}

/* A pod as the API server has it now. Ours are those that ask for
 * gpupool.io/gpu; a placement that changed is held anew. */
static void pod_put(struct gp_extender *e, const json_t *obj)
{
	struct gp_kube_pod p;
	struct kpod *k;
	char err[REASON_MAX];

	if (gp_kube_pod_read(obj, &p, err, sizeof(err)) < 0 || !p.uid[0])
		return;                 /* the filter will say what is wrong */
	if (p.finished) {
		pod_drop(e, p.uid);
		return;
	}
	k = gp_strmap_get(&e->pods, p.uid);
	if (k && k->held && !k->reserved_ns && k->p.node[0] && !p.node[0])
		return;                 /* from before our bind: a pod is never unbound */
	if (k && k->reserved_ns && !p.placed && !p.node[0]) {
		p.placed = k->p.placed; /* not bound yet: the reservation stays */
		p.placement = k->p.placement;
		snprintf(p.node, sizeof(p.node), "%s", k->p.node);
		k->p = p;
		return;
	}
	if (p.units == 0 && !p.node[0]) {
		pod_drop(e, p.uid);     /* a host-only pod counts once bound */
		return;
	}
	if (!p.placed && p.units && e->scheduler[0] && strcmp(p.scheduler, e->scheduler) != 0)
		return;                 /* another scheduler's, never ours to bind */
	if (k && k->held && (p.units ? p.placed && !memcmp(&k->p.placement, &p.placement,
							  sizeof(p.placement))
				     : !strcmp(k->p.node, p.node))) {
		k->p = p;               /* the same place: only what else changed */
		unreserve(e, k);
		return;
	}
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k || gp_strmap_put(&e->pods, p.uid, k) < 0) {
			free(k);
			return;
		}
	}
	pod_let_go(e, k);
	unreserve(e, k);
	k->p = p;
	if (!e->dirty)
		pod_hold(e, k);
}

static void pods_clear(struct gp_extender *e)
{
	for (size_t i = 0; i < e->pods.cap; i++)
		free(e->pods.slot[i].value);
	gp_strmap_release(&e->pods);
	e->reserved = 0;
}

static void on_pods_sync(void *ctx, json_t *items)
{
	struct gp_extender *e = ctx;
	size_t i;
	json_t *obj;

	pthread_mutex_lock(&e->lock);
	pods_clear(e);
	e->dirty = true;                /* held again from scratch */
	json_array_foreach(items, i, obj)
		pod_put(e, obj);
	pthread_mutex_unlock(&e->lock);
}

static void on_pod_event(void *ctx, enum gp_kube_event_type type, json_t *obj)
{
	struct gp_extender *e = ctx;
	const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));

	pthread_mutex_lock(&e->lock);
	if (type == GP_KUBE_DELETED && uid)
		pod_drop(e, uid);
	else
		pod_put(e, obj);
	pthread_mutex_unlock(&e->lock);
}

const struct gp_kube_informer_ops gp_extender_pod_ops = {
	.on_sync = on_pods_sync,
	.on_event = on_pod_event,
};

/* ---- what a pod asks of the core ------------------------------------------- */

/* The requests of pod p, one per group of models that give a share the
 * same compute and memory; 0 of them (with why) when no model can. */
static int pod_asks(const struct gp_extender *e, const struct gp_kube_pod *p, struct ask *ret,
		    char *why, size_t why_len)
{
	unsigned per_device = p->units / p->count;
	int n = 0;

	if (p->units == 0) {
		ret[0] = (struct ask){ .req = { .cpu_milli = p->cpu_milli, .mem_mib = p->mem_mib } };
		return 1;
	}

	snprintf(why, why_len, "no device of a model in %s=\"%.120s\"", GP_KUBE_ANN_MODEL, p->models);
	for (int m = 0; m < e->models; m++) {
		const struct model_info *mi = &e->model[m];
		const char *name = gp_cluster_model_name(e->cluster, m);
		struct ask a = { 0 };
		int g;

		if (!gp_kube_model_matches(p->models, name))
			continue;
		if (per_device > mi->split) {
			snprintf(why, why_len, "%u units of one device asked; a %s has %u", per_device,
				 name, mi->split);
			continue;
		}
		a.req = (struct gp_request){ .cpu_milli = p->cpu_milli, .mem_mib = p->mem_mib,
					     .devices = (uint8_t)p->count,
					     .whole = per_device == mi->split };
		a.compute_pct = a.req.whole ? 100 : (per_device * 100 + mi->split - 1) / mi->split;
		a.req.dev_compute = a.req.whole ? 0 : per_device * GP_COMPUTE_WHOLE / mi->split;
		a.memory_mib = a.req.whole ? mi->memory_mib
			       : p->memory_mib ? p->memory_mib : mi->memory_mib * per_device / mi->split;
		a.req.dev_mem_mib = a.req.whole ? 0 : (uint32_t)a.memory_mib;
		for (g = 0; g < n; g++)
			if (ret[g].req.whole == a.req.whole && ret[g].req.dev_compute == a.req.dev_compute &&
			    ret[g].req.dev_mem_mib == a.req.dev_mem_mib)
				break;
		if (g == n)
			ret[n++] = a;
		ret[g].req.models |= 1ull << m;
	}
	return n;
}

/* ---- quotas ----------------------------------------------------------------- */

/* A namespace's use: overall, and per model quota of its tenant. */
struct use {
	bool limited;
	struct gp_sched_tenant t;
	uint64_t mem, compute;
	uint64_t model_mem[GP_MODELS_MAX], model_compute[GP_MODELS_MAX];
};

static int quota_index(const struct use *u, const char *model)
{
	int best = -1;
	size_t best_len = 0;

	for (int q = 0; q < u->t.model_quotas; q++) {
		const char *name = u->t.model_quota[q].name;

		if (strcasestr(model, name) && strlen(name) > best_len) {
			best = q;
			best_len = strlen(name);
		}
	}
	return best;
}

static const char *device_model(const struct gp_extender *e, const struct gp_placement *w, int i)
{
	return e->node_at[w->node]->n.device[w->device[i]].model;
}

/* Adds (or, with sign -1, takes away) what `req` at `w` uses. */
static void use_add(const struct gp_extender *e, struct use *u, const struct gp_request *req,
		    const struct gp_placement *w, uint64_t mem_mib, unsigned compute_pct)
{
	for (int i = 0; i < w->devices; i++) {
		int q = quota_index(u, device_model(e, w, i));

		u->mem += mem_mib;
		u->compute += compute_pct;
		if (q >= 0) {
			u->model_mem[q] += mem_mib;
			u->model_compute[q] += compute_pct;
		}
	}
	(void)req;
}

static uint64_t held_memory(const struct gp_extender *e, const struct kpod *k)
{
	const struct knode *n = e->node_at[k->where.node];

	return k->req.whole ? n->n.device[k->where.device[0]].memory_mib : k->req.dev_mem_mib;
}

static void use_of(struct gp_extender *e, const char *ns, struct use *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!e->quota || e->quota(e->quota_ctx, ns, &ret->t) < 0)
		return;
	ret->limited = true;
	for (size_t i = 0; i < e->pods.cap; i++) {
		const struct kpod *k = e->pods.slot[i].value;

		if (e->pods.slot[i].key && k->held && strcmp(k->p.ns, ns) == 0)
			use_add(e, ret, &k->req, &k->where, held_memory(e, k),
				k->req.whole ? 100 : k->req.dev_compute / 10);
	}
}

/* Would `a` at `w` keep the namespace within its quotas? If not, why. */
static bool quota_allows(const struct gp_extender *e, const struct use *u, const struct ask *a,
			 const struct gp_placement *w, const char *ns, char *why, size_t len)
{
	struct use after = *u;

	if (!u->limited)
		return true;
	use_add(e, &after, &a->req, w, a->memory_mib, a->compute_pct);
	if (after.mem > u->t.mem_guaranteed_mib + u->t.mem_borrowable_mib ||
	    after.compute > u->t.compute_guaranteed_pct + u->t.compute_borrowable_pct) {
		snprintf(why, len,
			 "namespace %s is over its gpupool quota: it would use %" PRIu64
			 " MiB and %" PRIu64 "%% of devices, its quota is %" PRIu64 " MiB and %" PRIu64
			 "%% (guaranteed + borrowable); wait for its pods to end or raise the quota",
			 ns, after.mem, after.compute,
			 u->t.mem_guaranteed_mib + u->t.mem_borrowable_mib,
			 u->t.compute_guaranteed_pct + u->t.compute_borrowable_pct);
		return false;
	}
	for (int q = 0; q < u->t.model_quotas; q++) {
		const struct gp_sched_model_quota *mq = &u->t.model_quota[q];

		if (after.model_mem[q] > mq->mem_guaranteed_mib + mq->mem_borrowable_mib ||
		    after.model_compute[q] > mq->compute_guaranteed_pct + mq->compute_borrowable_pct) {
			snprintf(why, len, "namespace %s is over its gpupool quota on %s devices", ns,
				 mq->name);
			return false;
		}
	}
	return true;
}

/* ---- decisions -------------------------------------------------------------- */

struct choice {
	bool placed;
	struct gp_decision d;
	int ask;                        /* which of the asks */
};

/* Why ask a does not fit on a node, for `kubectl describe pod`. */
static void nofit_text(enum gp_nofit r, const struct ask *a, char *why, size_t len)
{
	if (r == GP_NOFIT_CPU || r == GP_NOFIT_MEMORY)
		snprintf(why, len, "not enough %s for the pod's requests",
			 r == GP_NOFIT_CPU ? "CPU" : "memory");
	else if (r == GP_NOFIT_LABELS)
		snprintf(why, len, "the node's labels do not match");
	else if (a->req.whole)
		snprintf(why, len, "fewer than %u idle devices for %u whole device(s)", a->req.devices,
			 a->req.devices);
	else if (a->req.devices == 1)
		snprintf(why, len, "no device has %u%% compute and %" PRIu64 " MiB free",
			 a->compute_pct, a->memory_mib);
	else
		snprintf(why, len, "fewer than %u devices have %u%% compute and %" PRIu64 " MiB free",
			 a->req.devices, a->compute_pct, a->memory_mib);
}

#define NOT_PUBLISHED_TEXT \
	"no gpupool devices published on this node (is gpupool node running there?)"

static bool node_absent(const struct knode *k, char *why, size_t len)
{
	if (k && k->index != NO_NODE)
		return false;
	snprintf(why, len, "%s", NOT_PUBLISHED_TEXT);
	return true;
}

#define FITS (-1)
#define NOT_PUBLISHED (-2)

/* Can one of the asks go on node k at all? FITS, NOT_PUBLISHED, or what
 * the last ask missed as nofit * GP_MODELS_MAX + ask. (No score: what
 * filter needs, at a fraction of the cost; the text of a miss is made
 * once per call, not once per node.) */
static int fits_on(struct gp_extender *e, const struct ask *asks, int n, const struct knode *k)
{
	int miss = NOT_PUBLISHED;

	if (!k || k->index == NO_NODE)
		return NOT_PUBLISHED;
	for (int i = 0; i < n; i++) {
		enum gp_nofit r;

		if (gp_fits_on(e->cluster, &asks[i].req, k->index, &r) < 0)
			continue;
		if (r == GP_NOFIT_NONE)
			return FITS;
		miss = (int)r * GP_MODELS_MAX + i;
	}
	return miss;
}

/* The best of the asks on node k (its cluster index); why not, if none. */
static void decide_on(struct gp_extender *e, const struct ask *asks, int n, const struct knode *k,
		      struct choice *ret, char *why, size_t len)
{
	memset(ret, 0, sizeof(*ret));
	if (node_absent(k, why, len))
		return;
	for (int i = 0; i < n; i++) {
		struct gp_decision d;

		if (gp_place_on(e->cluster, e->policy, &asks[i].req, k->index, &d) < 0)
			continue;
		if (d.placed && (!ret->placed || d.score > ret->d.score))
			*ret = (struct choice){ true, d, i };
		else if (!d.placed && !ret->placed)
			nofit_text(d.reason, &asks[i], why, len);
	}
}

/* The best of the asks over the whole cluster (the bounded search). */
static void decide_any(struct gp_extender *e, const struct ask *asks, int n, struct choice *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (int i = 0; i < n; i++) {
		struct gp_decision d;

		if (gp_place(e->cluster, e->policy, &asks[i].req, &d) == 0 && d.placed &&
		    (!ret->placed || d.score > ret->d.score))
			*ret = (struct choice){ true, d, i };
	}
}

/* ---- the verbs' JSON ---------------------------------------------------------- */

/* The args' pod, read; a pod that cannot be read: -EINVAL with why. */
static int args_pod(const struct gp_extender_args *a, struct gp_kube_pod *ret, char *err,
		    size_t len)
{
	return gp_kube_pod_read(a->pod, ret, err, len);
}

/* The pod as the extender knows it, added when it is new (a pod seen
 * first in a filter, before the informer brought it). */
static struct kpod *pod_known(struct gp_extender *e, const struct gp_kube_pod *p)
{
	struct kpod *k = gp_strmap_get(&e->pods, p->uid);

	if (k || !p->uid[0])
		return k;
	k = calloc(1, sizeof(*k));
	if (!k || gp_strmap_put(&e->pods, p->uid, k) < 0) {
		free(k);
		return NULL;
	}
	k->p = *p;
	return k;
}

/* ---- replies as text (reply.h) ------------------------------------------------ */

static void put_string(struct gp_reply *r, const char *text)
{
	gp_reply_string(r, text, strlen(text));
}

/* The filter's verdict on every node offered: passed, or the index of its
 * reason in a small table of distinct texts (most nodes fail for one of a
 * few reasons). */
#define REASONS_MAX 32

struct verdicts {
	int *why;                       /* per node: FITS, or a reason's index */
	char text[REASONS_MAX][REASON_MAX];
	int texts;
	bool unresolvable;              /* the pod itself is wrong: no node will do */
};

/* The index of a reason's text, added when new (the last slot takes
 * every reason past REASONS_MAX). */
static int reason_index(struct verdicts *v, const char *text)
{
	char full[REASON_MAX];

	snprintf(full, sizeof(full), "gpupool: %s", text);
	for (int i = 0; i < v->texts; i++)
		if (strcmp(v->text[i], full) == 0)
			return i;
	if (v->texts == REASONS_MAX)
		return REASONS_MAX - 1;
	memcpy(v->text[v->texts], full, sizeof(full));
	return v->texts++;
}

/* {"name": "reason", ...} of the nodes that failed, or of none. */
static void put_reasons(struct gp_reply *f, const struct gp_extender_args *a,
			const struct verdicts *v, bool these)
{
	const char *sep = "{";

	for (size_t i = 0; these && i < a->names; i++) {
		if (v->why[i] == FITS)
			continue;
		gp_reply_put(f, sep);
		gp_reply_string(f, a->name[i], a->name_len[i]);
		gp_reply_raw(f, ":", 1);
		put_string(f, v->text[v->why[i]]);
		sep = ",";
	}
	gp_reply_put(f, *sep == '{' ? "{}" : "}");
}

/* The filter's result, the passed nodes in the form they came: names, or
 * the Node objects of args that passed. */
static char *filter_text(const struct gp_extender_args *a, const struct verdicts *v)
{
	struct gp_reply f = { 0 };
	const char *sep = "";

	gp_reply_put(&f, a->nodes ? "{\"Nodes\":{\"items\":[" : "{\"NodeNames\":[");
	for (size_t i = 0; i < a->names; i++) {
		char *node;

		if (v->why[i] != FITS)
			continue;
		gp_reply_put(&f, sep);
		if (!a->nodes) {
			gp_reply_string(&f, a->name[i], a->name_len[i]);
		} else if ((node = json_dumps(json_array_get(a->nodes, i), JSON_COMPACT))) {
			gp_reply_put(&f, node);
			free(node);
		}
		sep = ",";
	}
	gp_reply_put(&f, a->nodes ? "]}" : "]");
	gp_reply_put(&f, ",\"FailedNodes\":");
	put_reasons(&f, a, v, !v->unresolvable);
	gp_reply_put(&f, ",\"FailedAndUnresolvableNodes\":");
	put_reasons(&f, a, v, v->unresolvable);
	gp_reply_put(&f, ",\"Error\":\"\"}");
	return gp_reply_take(&f);
}

static char *error_text(const char *message)
{
	json_t *body = json_pack("{s:s}", "Error", message);
	char *text = json_dumps(body, JSON_COMPACT);

	json_decref(body);
	return text;
}

struct unschedulable {
	char ns[GP_KUBE_NAME_MAX], name[GP_KUBE_NAME_MAX], uid[GP_KUBE_UID_MAX];
	char message[REASON_MAX + 64];
};

/* Tells the pod's owner why it waits: one Warning event per new reason. */
/* An API handle no other call uses now (waiting for one); give it back
 * with api_give. NULL when the extender has none. */
static struct gp_kube *api_take(struct gp_extender *e, int *ret_slot)
{
	int slot;

	if (!e->apis)
		return NULL;
	pthread_mutex_lock(&e->api_lock);
	while (e->api_busy == (1u << e->apis) - 1)
		pthread_cond_wait(&e->api_free, &e->api_lock);
	slot = __builtin_ctz(~e->api_busy);
	e->api_busy |= 1u << slot;
	pthread_mutex_unlock(&e->api_lock);
	*ret_slot = slot;
	return e->api[slot];
}

static void api_give(struct gp_extender *e, int slot)
{
	pthread_mutex_lock(&e->api_lock);
	e->api_busy &= ~(1u << slot);
	pthread_cond_signal(&e->api_free);
	pthread_mutex_unlock(&e->api_lock);
}

static void event_send(struct gp_extender *e, const struct unschedulable *u)
{
	struct gp_kube *api;
	int slot;

	if (!u->uid[0] || !(api = api_take(e, &slot)))
		return;
	gp_kube_event(api, "Pod", u->ns, u->name, u->uid, "Warning", "GpupoolUnschedulable",
		      u->message, EVENT_COMPONENT);
	api_give(e, slot);
}

/* The text of a miss fits_on found (made once per code and call). */
static int miss_reason(struct verdicts *v, int *cache, int code, const struct ask *asks)
{
	char text[REASON_MAX];
	int slot = code == NOT_PUBLISHED ? 0 : 1 + code;

	if (cache[slot] >= 0)
		return cache[slot];
	if (code == NOT_PUBLISHED)
		snprintf(text, sizeof(text), "%s", NOT_PUBLISHED_TEXT);
	else
		nofit_text((enum gp_nofit)(code / GP_MODELS_MAX), &asks[code % GP_MODELS_MAX], text,
			   sizeof(text));
	return cache[slot] = reason_index(v, text);
}

/* A node of a namespace with quotas: which devices (of which models) the
 * pod would take decides. */
static int verdict_with_quota(struct gp_extender *e, const struct gp_kube_pod *p,
			      const struct ask *asks, int n, const struct knode *k,
			      const struct use *use, struct verdicts *v, const char *why)
{
	char reason[REASON_MAX];
	struct choice c;

	snprintf(reason, sizeof(reason), "%s", why);
	decide_on(e, asks, n, k, &c, reason, sizeof(reason));
	if (c.placed && quota_allows(e, use, &asks[c.ask], &c.d.where, p->ns, reason, sizeof(reason)))
		return FITS;
	return reason_index(v, reason);
}

/* Filter under the lock: the pod's asks on every named node. Without any
 * ask (no model can serve it), every node with devices fails for `why`. */
static int filter_locked(struct gp_extender *e, const struct gp_kube_pod *p,
			 const struct gp_extender_args *a, struct verdicts *v, struct unschedulable *u)
{
	int cache[1 + (GP_NOFIT_EMPTY + 1) * GP_MODELS_MAX];
	struct ask asks[GP_MODELS_MAX];
	char why[REASON_MAX] = "";
	size_t passed = 0, first = SIZE_MAX;
	struct kpod *known;
	struct use use;
	int n, r;

	if ((r = ensure_built(e)) < 0)
		return r;
	reservations_expire(e);
	known = pod_known(e, p);        /* for the bind that may follow */
	if (known)
		reservation_cancel(e, known);   /* scheduled again: what it held goes */
	n = pod_asks(e, p, asks, why, sizeof(why));
	use.limited = false;            /* quotas are of devices */
	if (p->units)
		use_of(e, p->ns, &use);
	memset(cache, -1, sizeof(cache));
	for (size_t i = 0; i < a->names; i++) {
		const struct knode *k = gp_strmap_get(&e->nodes, a->name[i]);
		int code;

		if (p->units == 0 && (!k || k->index == NO_NODE))
			code = FITS;            /* no opinion */
		else if (use.limited)
			code = verdict_with_quota(e, p, asks, n, k, &use, v, why);
		else if ((code = fits_on(e, asks, n, k)) == NOT_PUBLISHED && n == 0 && k &&
			 k->index != NO_NODE)
			code = reason_index(v, why);
		else if (code != FITS)
			code = miss_reason(v, cache, code, asks);
		v->why[i] = code;
		if (code == FITS)
			passed++;
		else if (first == SIZE_MAX)
			first = i;
	}
	e->stats.filters++;
	if (passed == 0) {
		snprintf(u->message, sizeof(u->message), "0/%zu nodes fit: %s", a->names,
			 first == SIZE_MAX ? why : v->text[v->why[first]] + strlen("gpupool: "));
		if (known && strncmp(known->last_event, u->message, sizeof(known->last_event) - 1)) {
			snprintf(known->last_event, sizeof(known->last_event), "%s", u->message);
			snprintf(u->ns, sizeof(u->ns), "%s", p->ns);
			snprintf(u->name, sizeof(u->name), "%s", p->name);
			snprintf(u->uid, sizeof(u->uid), "%s", p->uid);
		}
	}
	return 0;
}

int gp_extender_filter(struct gp_extender *e, const char *body, size_t len, char **ret)
{
	struct unschedulable u = { .uid = "" };
	struct verdicts *v = calloc(1, sizeof(*v));
	struct gp_extender_args a;
	struct gp_kube_pod p;
	char err[REASON_MAX];
	int r = v ? gp_extender_args_parse(body, len, &a, err, sizeof(err)) : -ENOMEM;

	if (r < 0) {
		*ret = error_text(v ? err : "out of memory");
		free(v);
		return *ret ? r : -ENOMEM;
	}
	v->why = calloc(a.names + 1, sizeof(*v->why));
	if (!v->why) {
		r = -ENOMEM;
	} else if ((r = args_pod(&a, &p, err, sizeof(err))) < 0) {
		/* The pod's own request is wrong: no node will do, and
		 * preemption cannot help (every why is reason 0). */
		v->unresolvable = true;
		reason_index(v, err);
		r = 0;
	} else {
		pthread_mutex_lock(&e->lock);
		r = filter_locked(e, &p, &a, v, &u);
		pthread_mutex_unlock(&e->lock);
	}
	*ret = r < 0 ? error_text(strerror(-r)) : filter_text(&a, v);
	if (r == 0 && u.uid[0])
		event_send(e, &u);
	gp_extender_args_release(&a);
	free(v->why);
	free(v);
	return *ret ? r : -ENOMEM;
}

/* The offered node the bounded search picks, or SIZE_MAX. */
static size_t offered(struct gp_extender *e, const struct gp_extender_args *a,
		      const struct choice *any)
{
	const char *chosen = any->placed ? e->node_at[any->d.where.node]->n.name : NULL;
	size_t len = chosen ? strlen(chosen) : 0;

	for (size_t i = 0; chosen && i < a->names; i++)
		if (a->name_len[i] == len && memcmp(a->name[i], chosen, len) == 0)
			return i;
	return SIZE_MAX;
}

/* Every offered node scored exactly: the best 10, the others 0..9. */
static void scores_exact(struct gp_extender *e, const struct ask *asks, int n_asks,
			 const struct gp_extender_args *a, int *out)
{
	size_t n = a->names, best = SIZE_MAX;
	struct choice *on = calloc(n + 1, sizeof(*on));
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	char why[REASON_MAX];

	if (!on)
		return;
	for (size_t i = 0; i < n; i++) {
		decide_on(e, asks, n_asks, gp_strmap_get(&e->nodes, a->name[i]), &on[i], why,
			  sizeof(why));
		if (on[i].placed && (best == SIZE_MAX || on[i].d.score > on[best].d.score))
			best = i;
	}
	for (size_t i = 0; i < n; i++)
		if (on[i].placed && i != best) {
			lo = on[i].d.score < lo ? on[i].d.score : lo;
			hi = on[i].d.score > hi ? on[i].d.score : hi;
		}
	for (size_t i = 0; i < n; i++)
		if (i == best)
			out[i] = 10;
		else if (on[i].placed)
			out[i] = hi == lo ? 9 : (int)(9.0 * (double)(on[i].d.score - lo) / (double)(hi - lo));
	free(on);
}

/* Scores 0..10. The node the bounded search picks (the decision `gpupool
 * sim` measures) gets 10 when it is offered, the others 0; when it is not
 * (kube-scheduler's own filters left it out), every offered node is
 * scored: the best 10, the others 0..9. */
static int bind_decide(struct gp_extender *e, struct kpod *k, const char *node,
		       struct gp_kube_placement *ret, char *why, size_t len);

/* Holds the pod's placement on the node it scored 10, for its bind: the
 * next pod's filter, which kube-scheduler may send first, sees it taken. */
static void reserve(struct gp_extender *e, const struct gp_kube_pod *p, const char *node)
{
	struct kpod *k = pod_known(e, p);
	struct gp_kube_placement pl;
	char why[REASON_MAX];

	if (k && !k->held && bind_decide(e, k, node, &pl, why, sizeof(why)) == 0) {
		k->reserved_ns = mono_ns();
		e->reserved++;
	}
}

static void prioritize_locked(struct gp_extender *e, const struct gp_kube_pod *p,
			      const struct gp_extender_args *a, int *score)
{
	struct ask asks[GP_MODELS_MAX];
	struct choice any;
	char why[REASON_MAX];
	size_t chosen;
	int n_asks;

	if (ensure_built(e) < 0)
		return;
	n_asks = pod_asks(e, p, asks, why, sizeof(why));
	decide_any(e, asks, n_asks, &any);
	chosen = offered(e, a, &any);
	if (chosen != SIZE_MAX)
		score[chosen] = 10;
	else
		scores_exact(e, asks, n_asks, a, score);
	for (size_t i = 0; i < a->names; i++)
		if (score[i] == 10)
			reserve(e, p, a->name[i]);
}

/* [{"Host": "name", "Score": n}, ...] */
static char *scores_text(const struct gp_extender_args *a, const int *score)
{
	static const char *const tail[] = {
		",\"Score\":0}", ",\"Score\":1}", ",\"Score\":2}", ",\"Score\":3}", ",\"Score\":4}",
		",\"Score\":5}", ",\"Score\":6}", ",\"Score\":7}", ",\"Score\":8}", ",\"Score\":9}",
		",\"Score\":10}",
	};
	struct gp_reply f = { 0 };

	gp_reply_raw(&f, "[", 1);
	for (size_t i = 0; i < a->names; i++) {
		gp_reply_put(&f, i ? ",{\"Host\":" : "{\"Host\":");
		gp_reply_string(&f, a->name[i], a->name_len[i]);
		gp_reply_put(&f, tail[score[i] < 0 ? 0 : score[i] > 10 ? 10 : score[i]]);
	}
	gp_reply_raw(&f, "]", 1);
	return gp_reply_take(&f);
}

int gp_extender_prioritize(struct gp_extender *e, const char *body, size_t len, char **ret)
{
	struct gp_extender_args a;
	struct gp_kube_pod p;
	char err[REASON_MAX];
	int r = gp_extender_args_parse(body, len, &a, err, sizeof(err)), *score = NULL;

	if (r < 0) {
		*ret = error_text(err);
		return *ret ? r : -ENOMEM;
	}
	score = calloc(a.names + 1, sizeof(*score));
	/* A pod it cannot read scores 0 everywhere: filter said why. */
	if (score && args_pod(&a, &p, err, sizeof(err)) == 0) {
		pthread_mutex_lock(&e->lock);
		prioritize_locked(e, &p, &a, score);
		pthread_mutex_unlock(&e->lock);
	}
	*ret = score ? scores_text(&a, score) : NULL;
	free(score);
	gp_extender_args_release(&a);
	return *ret ? 0 : -ENOMEM;
}

/* ---- bind ------------------------------------------------------------------ */

static int64_t now_unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Places pod k on node `node` and holds it there ("assumed", as
 * kube-scheduler says) until the API server has it; the placement in
 * *ret. */
static int bind_decide(struct gp_extender *e, struct kpod *k, const char *node,
		       struct gp_kube_placement *ret, char *why, size_t len)
{
	struct ask asks[GP_MODELS_MAX];
	const struct knode *kn = gp_strmap_get(&e->nodes, node);
	struct choice c;
	struct use use;
	int n;

	snprintf(why, len, "node %s is not known", node);
	n = pod_asks(e, &k->p, asks, why, len);
	decide_on(e, asks, n, kn, &c, why, len);
	use.limited = false;
	if (k->p.units)
		use_of(e, k->p.ns, &use);
	if (!c.placed || !quota_allows(e, &use, &asks[c.ask], &c.d.where, k->p.ns, why, len))
		return -ENOSPC;
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->node, sizeof(ret->node), "%s", node);
	for (int i = 0; i < c.d.where.devices; i++)
		snprintf(ret->device[ret->devices++], GP_KUBE_UUID_MAX, "%s",
			 kn->n.device[c.d.where.device[i]].uuid);
	ret->memory_mib = asks[c.ask].memory_mib;
	ret->compute = asks[c.ask].compute_pct;
	ret->whole = asks[c.ask].req.whole;
	ret->bound_at = now_unix_ns();
	unreserve(e, k);
	pod_let_go(e, k);
	if (k->p.units) {
		k->p.placement = *ret;
		k->p.placed = true;
	}
	snprintf(k->p.node, sizeof(k->p.node), "%s", node);
	return pod_hold(e, k) ? 0 : -EBUSY;
}

/* Binds the pod with its placement annotation in the Binding: the API
 * server writes both in one update, so no pod is ever bound without its
 * placement, nor annotated and left unbound. The refusal in why. */
static int bind_write(struct gp_extender *e, const struct gp_kube_pod *p,
		      const struct gp_kube_placement *pl, char *why, size_t len)
{
	char *text = p->units ? gp_kube_placement_text(pl) : NULL;
	json_t *annotations = text ? json_pack("{s:s}", GP_KUBE_ANN_PLACEMENT, text) : NULL;
	struct gp_kube *api;
	int slot, r = 0;

	free(text);
	if (p->units && !annotations)
		return -ENOMEM;
	if ((api = api_take(e, &slot))) {
		r = gp_kube_bind(api, p->ns, p->name, p->uid, pl->node, annotations);
		if (r < 0)
			snprintf(why, len, "the API server refused: %s",
				 *gp_kube_error(api) ? gp_kube_error(api) : strerror(-r));
		api_give(e, slot);
	}
	json_decref(annotations);
	return r;
}

static int bind_args(struct gp_extender *e, const json_t *args, char **ret);

/* Is pod k held on node by prioritize? Its placement in *ret then. */
static bool reserved_on(const struct kpod *k, const char *node, struct gp_kube_placement *ret)
{
	if (!k->reserved_ns || !k->held || strcmp(k->p.node, node) != 0)
		return false;
	*ret = k->p.placement;
	snprintf(ret->node, sizeof(ret->node), "%s", node);
	return true;
}

static void bind_undo(struct gp_extender *e, const char *uid, const struct gp_kube_placement *pl)
{
	struct kpod *k;

	pthread_mutex_lock(&e->lock);
	k = gp_strmap_get(&e->pods, uid);
	if (k && (k->p.units ? k->p.placed && !memcmp(&k->p.placement, pl, sizeof(*pl))
			     : !strcmp(k->p.node, pl->node))) {
		unreserve(e, k);
		pod_let_go(e, k);
		k->p.placed = false;
		k->p.node[0] = 0;
	}
	e->stats.bind_failures++;
	pthread_mutex_unlock(&e->lock);
}

int gp_extender_bind(struct gp_extender *e, const char *body, size_t len, char **ret)
{
	json_t *args = json_loadb(body, len, 0, NULL);
	int r = bind_args(e, args, ret);

	json_decref(args);
	return r;
}

static int bind_args(struct gp_extender *e, const json_t *args, char **ret)
{
	const char *uid = json_string_value(json_object_get(args, "PodUID"));
	const char *node = json_string_value(json_object_get(args, "Node"));
	const char *name = json_string_value(json_object_get(args, "PodName"));
	const char *ns = json_string_value(json_object_get(args, "PodNamespace"));
	struct gp_kube_placement pl;
	struct gp_kube_pod p;
	char why[REASON_MAX];
	struct kpod *k;
	int r;

	if (!uid || !node || !name || !ns) {
		*ret = error_text("not ExtenderBindingArgs: want PodName, PodNamespace, PodUID, Node");
		return -EINVAL;
	}
	pthread_mutex_lock(&e->lock);
	r = ensure_built(e);
	k = gp_strmap_get(&e->pods, uid);
	if (r == 0 && !k)
		snprintf(why, sizeof(why), "pod %s/%s (uid %s) was not seen by the filter", ns, name, uid);
	else if (r == 0 && reserved_on(k, node, &pl))
		r = 0;                  /* prioritize held it there */
	else if (r == 0)
		r = bind_decide(e, k, node, &pl, why, sizeof(why));
	if (k)
		p = k->p;
	pthread_mutex_unlock(&e->lock);
	if (r == 0 && k) {
		if (e->io)
			e->io(e->io_ctx, true);
		r = bind_write(e, &p, &pl, why, sizeof(why));
		if (e->io)
			e->io(e->io_ctx, false);
		if (r < 0)
			bind_undo(e, uid, &pl);
	}
	if (r == 0 && !k)
		r = -ENOENT;
	if (r < 0) {
		*ret = error_text(why);
		return 0;
	}
	pthread_mutex_lock(&e->lock);
	if ((k = gp_strmap_get(&e->pods, uid)))
		unreserve(e, k);
	e->stats.binds++;
	if (!e->trace.pods && ++e->binds_since_target >= RETARGET_BINDS && retarget(e) < 0)
		e->dirty = true;
	pthread_mutex_unlock(&e->lock);
	*ret = error_text("");
	return 0;
}

/* ---- life ------------------------------------------------------------------ */

int gp_extender_new(const struct gp_extender_options *o, struct gp_extender **ret, char *err,
		    size_t err_len)
{
	const char *policy = o->policy ? o->policy : "default";
	struct gp_policy *probe;
	struct gp_extender *e;
	int r;

	if (gp_policy_new(policy, &(struct gp_policy_config){ 0 }, &probe) < 0) {
		snprintf(err, err_len, "unknown policy \"%s\" (gpupool policies lists them)", policy);
		return -ENOENT;
	}
	gp_policy_free(probe);
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->api_lock, NULL);
	pthread_cond_init(&e->api_free, NULL);
	snprintf(e->policy_name, sizeof(e->policy_name), "%s", policy);
	snprintf(e->scheduler, sizeof(e->scheduler), "%s", o->scheduler_name ? o->scheduler_name : "");
	e->tie_seed = o->tie_seed;
	e->quota = o->quota;
	e->quota_ctx = o->quota_ctx;
	e->api = o->api;
	e->apis = o->api ? (o->apis < 1 ? 1 : o->apis > GP_EXTENDER_API_MAX ? GP_EXTENDER_API_MAX
								 : o->apis) : 0;
	e->io = o->io;
	e->io_ctx = o->io_ctx;
	e->dirty = true;
	if (o->workload_trace &&
	    (r = gp_trace_load_pods(&e->trace, o->workload_trace, err, err_len)) < 0) {
		gp_extender_free(e);
		return r == -ENOMEM ? r : -EINVAL;
	}
	*ret = e;
	return 0;
}

struct gp_extender *gp_extender_free(struct gp_extender *e)
{
	if (!e)
		return NULL;
	nodes_clear(e);
	pods_clear(e);
	gp_policy_free(e->policy);
	gp_cluster_free(e->cluster);
	gp_workload_free(e->target);
	gp_trace_release(&e->trace);
	free(e->node_at);
	free(e->specs);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->api_lock);
	pthread_cond_destroy(&e->api_free);
	free(e);
	return NULL;
}

void gp_extender_stats(struct gp_extender *e, struct gp_extender_stats *ret)
{
	pthread_mutex_lock(&e->lock);
	*ret = e->stats;
	ret->nodes = ret->devices = 0;
	for (size_t i = 0; i < e->nodes.cap; i++) {
		const struct knode *k = e->nodes.slot[i].value;

		if (e->nodes.slot[i].key && k->n.devices) {
			ret->nodes++;
			ret->devices += k->n.devices;
		}
	}
	ret->pods_placed = 0;
	ret->pods_reserved = e->reserved;
	for (size_t i = 0; i < e->pods.cap; i++)
		if (e->pods.slot[i].key)
			ret->pods_placed += ((struct kpod *)e->pods.slot[i].value)->held;
	pthread_mutex_unlock(&e->lock);
}
