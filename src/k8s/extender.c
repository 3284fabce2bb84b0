/* extender.c — the kube-scheduler extender's state and decisions (see
 * extender.h; extender-verbs.c answers the verbs, extender-impl.h says
 * what the two share), in this order: the cluster rebuilt from the Nodes
 * and every pod's placement held in it; the informers' callbacks (and the
 * holds filter makes for the binds to come); what a pod asks of the
 * core (one request per group of models that give a share the same
 * compute and memory); quotas; decisions on one node or the whole
 * cluster; the extender's life. */
#include "k8s/extender.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "core/models.h"
#include "core/partition.h"
#include "k8s/extender-impl.h"
#include "k8s/names.h"

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
			e->model[id] = (struct model_info){ d->split, d->memory_mib, 0 };
			e->models = id + 1;
		}
		if (gp_part_set_of_model(d->partition_set))
			e->model[id].partition_set = gp_part_set_of_model(d->partition_set);
		snprintf(s->uuid, sizeof(s->uuid), "%s", d->uuid);
		s->model = (uint8_t)id;
		s->numa = (uint8_t)(d->numa < 0 ? 0 : d->numa);
		s->nvlink = (uint8_t)(d->nvlink < 0 ? 0 : d->nvlink);
		s->mem_mib = (uint32_t)d->memory_mib;
		s->overcommit = 1000;
		s->max_tasks = 0;       /* every slice takes a unit: split caps them */
		s->healthy = d->healthy && d->compatible;
		/* A card in partition mode: placed by the core's partition
		 * rules, its partitions' starts chosen here (node program
		 * makes them); a set name the extender does not know was
		 * refused when the Node was read. */
		s->partitions = (uint8_t)gp_part_set_of_model(d->partition_set);
		s->part_held = s->partitions ? d->partition_held : 0;
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
		ret->part_start[ret->devices] = pl->part_start[i];
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
bool gp_extender_pod_hold(struct gp_extender *e, struct kpod *k)
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

void gp_extender_pod_let_go(struct gp_extender *e, struct kpod *k)
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
int gp_extender_retarget(struct gp_extender *e)
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
			gp_extender_pod_hold(e, k);
		}
	r = gp_extender_retarget(e);
	e->stats.rebuilds++;
out:
	if (r < 0)
		e->dirty = true;
	return r;
}

int gp_extender_ensure_built(struct gp_extender *e)
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

/* The live changes the pods ask for once the pods and the nodes are
 * listed (asked while the server was not there; whichever list comes
 * last makes them), decided one at a time under the lock, each sent
 * without it. */
static void lives_after_sync(struct gp_extender *e)
{
	struct gp_extender_live live;
	size_t next = 0;

	for (;;) {
		bool send = false;

		pthread_mutex_lock(&e->lock);
		for (; next < e->pods.cap && !send; next++)
			send = e->pods.slot[next].key &&
			       gp_extender_live_change(e, e->pods.slot[next].value, &live);
		pthread_mutex_unlock(&e->lock);
		if (!send)
			return;
		gp_extender_live_send(e, &live);
	}
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
	gp_extender_ensure_built(e);    /* what is held reads right at once */
	pthread_mutex_unlock(&e->lock);
	lives_after_sync(e);
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

/* The pod is bound (or gone): its placement is no longer a reservation. */
void gp_extender_unreserve(struct gp_extender *e, struct kpod *k)
{
	if (k->reserved_ns) {
		k->reserved_ns = 0;
		e->reserved--;
	}
}

/* Gives back what a pod holds for a bind that did not come. */
void gp_extender_reservation_cancel(struct gp_extender *e, struct kpod *k)
{
	if (!k->reserved_ns)
		return;
	gp_extender_unreserve(e, k);
	gp_extender_pod_let_go(e, k);
	k->p.placed = false;
	k->p.node[0] = 0;
}

/* Reservations older than RESERVE_TTL_NS go, looked for once a second. */
void gp_extender_reservations_expire(struct gp_extender *e)
{
	uint64_t now = gp_monotonic_ns();

	if (!e->reserved || now - e->reserve_scan_ns < 1000000000ULL)
		return;
	e->reserve_scan_ns = now;
	for (size_t i = 0; i < e->pods.cap; i++) {
		struct kpod *k = e->pods.slot[i].value;

		if (e->pods.slot[i].key && k->reserved_ns && now - k->reserved_ns > RESERVE_TTL_NS)
			gp_extender_reservation_cancel(e, k);
	}
}

/* A bound pod with devices ended (p: as it was last seen; deleted: its
 * object is gone): told to the server's tasks at their next look. The
 * oldest is forgotten when they do not look for ENDED_MAX ends. */
static void ended_note(struct gp_extender *e, const struct kpod *k, const struct gp_kube_pod *p,
		       bool deleted)
{
	struct gp_extender_ended *x = &e->ended[e->ended_next++ % GP_EXTENDER_ENDED_MAX];

	*x = (struct gp_extender_ended){ .failed = p->failed, .deleted = deleted || p->deleting,
					 .at_ms = gp_unix_ms() };
	snprintf(x->uid, sizeof(x->uid), "%s", p->uid);
	snprintf(x->reclaimed_for, sizeof(x->reclaimed_for), "%s", k->reclaimed_for);
}

static void pod_drop(struct gp_extender *e, const char *uid, const struct gp_kube_pod *last)
{
	struct kpod *k = gp_strmap_remove(&e->pods, uid);

	if (k) {
		if (!k->reserved_ns && k->p.units && k->p.placed && k->p.node[0])
			ended_note(e, k, last ? last : &k->p, !last);
		e->freed |= k->held && !k->reserved_ns && k->p.units;
		gp_extender_unreserve(e, k);
		gp_extender_pod_let_go(e, k);
	}
	free(k);
}

int gp_extender_pod_read(const struct gp_extender *e, const json_t *obj, struct gp_kube_pod *ret,
			 char *err, size_t len)
{
	int r = gp_kube_pod_read(obj, ret, err, len);

	if (r == 0 && e->seal && ret->placed && gp_seal_of_pod(e->seal, obj) != GP_SEAL_VALID) {
		ret->placed = false;
		memset(&ret->placement, 0, sizeof(ret->placement));
	}
	return r;
}

json_t *gp_extender_placement_annotations(const struct gp_extender *e, const char *uid,
					   const struct gp_kube_placement *pl)
{
	char *text = gp_kube_placement_text(pl), seal[GP_SEAL_TEXT_MAX];
	json_t *a = text ? json_pack("{s:s}", GP_KUBE_ANN_PLACEMENT, text) : NULL;

	if (a && e->seal) {
		gp_seal_make(e->seal, uid, text, seal);
		if (json_object_set_new(a, GP_KUBE_ANN_SEAL, json_string(seal)) < 0)
			a = (json_decref(a), NULL);
	}
	free(text);
	return a;
}

/* A pod as the API server has it now. Ours are those that ask for
 * gpupool.io/gpu; a placement that changed is held anew; a live change
 * its annotations ask for in *ret_live (true: one to send; NULL: not
 * looked for). */
static bool pod_put(struct gp_extender *e, const json_t *obj, struct gp_extender_live *ret_live)
{
	struct gp_kube_pod p;
	struct kpod *k;
	char err[REASON_MAX];

	if (gp_extender_pod_read(e, obj, &p, err, sizeof(err)) < 0 || !p.uid[0])
		return false;           /* the filter will say what is wrong */
	if (p.finished) {
		pod_drop(e, p.uid, &p);
		return false;
	}
	k = gp_strmap_get(&e->pods, p.uid);
	if (k && k->held && !k->reserved_ns && k->p.node[0] && !p.node[0])
		return false;           /* from before our bind: a pod is never unbound */
	if (k && k->reserved_ns && !p.placed && !p.node[0]) {
		p.placed = k->p.placed; /* not bound yet: the reservation stays */
		p.placement = k->p.placement;
		snprintf(p.node, sizeof(p.node), "%s", k->p.node);
		k->p = p;
		return false;
	}
	if (p.units == 0 && !p.node[0]) {
		pod_drop(e, p.uid, &p); /* a host-only pod counts once bound */
		return false;
	}
	if (!p.placed && p.units && e->scheduler[0] && strcmp(p.scheduler, e->scheduler) != 0)
		return false;           /* another scheduler's, never ours to bind */
	if (k && k->held && (p.units ? p.placed && !memcmp(&k->p.placement, &p.placement,
							  sizeof(p.placement))
				     : !strcmp(k->p.node, p.node))) {
		k->p = p;               /* the same place: only what else changed */
		gp_extender_unreserve(e, k);
		return ret_live && gp_extender_live_change(e, k, ret_live);
	}
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k || gp_strmap_put(&e->pods, p.uid, k) < 0) {
			free(k);
			return false;
		}
	}
	gp_extender_pod_let_go(e, k);
	gp_extender_unreserve(e, k);
	k->p = p;
	k->live_sent = false;
	if (!e->dirty)
		gp_extender_pod_hold(e, k);
	return ret_live && gp_extender_live_change(e, k, ret_live);
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
		pod_put(e, obj, NULL);
	/* Held now, not at the next verb: /metrics' pods placed reads right
	 * right after a restart. */
	gp_extender_ensure_built(e);
	pthread_mutex_unlock(&e->lock);
	lives_after_sync(e);
}

static void on_pod_event(void *ctx, enum gp_kube_event_type type, json_t *obj)
{
	struct gp_extender *e = ctx;
	const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
	struct gp_extender_live live;
	bool send = false;

	pthread_mutex_lock(&e->lock);
	if (type == GP_KUBE_DELETED && uid)
		pod_drop(e, uid, NULL);
	else
		send = pod_put(e, obj, &live);
	pthread_mutex_unlock(&e->lock);
	if (send)
		gp_extender_live_send(e, &live);
}

const struct gp_kube_informer_ops gp_extender_pod_ops = {
	.on_sync = on_pods_sync,
	.on_event = on_pod_event,
};

/* ---- what a pod asks of the core ------------------------------------------- */

/* The requests of pod p, one per group of models that give a share the
 * same compute and memory; 0 of them (with why) when no model can. */
int gp_extender_pod_asks(const struct gp_extender *e, const struct gp_kube_pod *p,
			 struct ask *ret, char *why, size_t why_len)
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
		/* A whole device's memory is the placed device's own (models
		 * of one split share this ask), gp_extender_whole_memory. */
		a.memory_mib = a.req.whole ? 0
			       : p->memory_mib ? p->memory_mib : mi->memory_mib * per_device / mi->split;
		a.req.dev_mem_mib = a.req.whole ? 0 : (uint32_t)a.memory_mib;
		for (g = 0; g < n; g++)
			if (ret[g].req.whole == a.req.whole && ret[g].req.dev_compute == a.req.dev_compute &&
			    ret[g].req.dev_mem_mib == a.req.dev_mem_mib)
				break;
		if (g == n)
			ret[n++] = a;
		ret[g].req.models |= 1ull << m;
		if (mi->partition_set)
			ret[g].partition_set = mi->partition_set;
	}
	return n;
}

/* The memory of a whole-device placement, per device: the placed
 * devices' own (the least of them, when a gang's models differ). */
uint64_t gp_extender_whole_memory(const struct gp_extender *e, const struct gp_placement *w)
{
	const struct knode *k = e->node_at[w->node];
	uint64_t least = UINT64_MAX;

	for (int i = 0; i < w->devices; i++)
		if (k->n.device[w->device[i]].memory_mib < least)
			least = k->n.device[w->device[i]].memory_mib;
	return w->devices ? least : 0;
}

/* Has node k a device of a model one of the asks may use (or no devices
 * published: that is said elsewhere)? If not, why not in `why`: the
 * units its models cannot split so, or the pod's gpu-model. */
bool gp_extender_node_has_models(const struct gp_extender *e, const struct gp_kube_pod *p,
				 const struct ask *asks, int n, const struct knode *k, char *why,
				 size_t len)
{
	uint64_t models = 0;

	if (!k || k->index == NO_NODE || p->units == 0)
		return true;
	for (int i = 0; i < n; i++)
		models |= asks[i].req.models;
	for (unsigned d = 0; d < k->n.devices; d++)
		if (models >> e->specs[k->index].device[d].model & 1)
			return true;
	snprintf(why, len, "no device of a model in %s=\"%.120s\"", GP_KUBE_ANN_MODEL, p->models);
	for (unsigned d = 0; d < k->n.devices; d++)
		if (gp_kube_model_matches(p->models, k->n.device[d].model)) {
			snprintf(why, len, "%u units of one device asked; a %.120s has %u",
				 p->units / p->count, k->n.device[d].model, k->n.device[d].split);
			break;
		}
	return false;
}

/* ---- quotas ----------------------------------------------------------------- */


static int quota_index(const struct use *u, const char *model)
{
	return gp_model_best(model, NULL, u->t.model_quota, sizeof(*u->t.model_quota),
			     offsetof(struct gp_sched_model_quota, name), u->t.model_quotas);
}

static const char *device_model(const struct gp_extender *e, const struct gp_placement *w, int i)
{
	return e->node_at[w->node]->n.device[w->device[i]].model;
}

/* Adds what `req` at `w` uses: mem_mib of each device for a share, each
 * device's own memory for a whole one. */
static void use_add(const struct gp_extender *e, struct use *u, const struct gp_request *req,
		    const struct gp_placement *w, uint64_t mem_mib, unsigned compute_pct)
{
	for (int i = 0; i < w->devices; i++) {
		int q = quota_index(u, device_model(e, w, i));
		uint64_t mem = req->whole ? e->node_at[w->node]->n.device[w->device[i]].memory_mib
					  : mem_mib;

		struct gp_quota_use add = { mem, compute_pct };

		u->all = gp_quota_sum(u->all, add);
		if (q >= 0)
			u->model[q] = gp_quota_sum(u->model[q], add);
	}
}

void gp_extender_use_of(struct gp_extender *e, const char *ns, struct use *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!e->quota || e->quota(e->quota_ctx, ns, &ret->t) < 0)
		return;
	ret->limited = true;
	for (size_t i = 0; i < e->pods.cap; i++) {
		const struct kpod *k = e->pods.slot[i].value;

		if (e->pods.slot[i].key && k->held && strcmp(k->p.ns, ns) == 0)
			use_add(e, ret, &k->req, &k->where, k->req.dev_mem_mib,
				k->req.whole ? 100 : k->req.dev_compute / 10);
	}
}

/* Would `a` at `w` keep the namespace within its quotas? If not, why. */
bool gp_extender_quota_allows(const struct gp_extender *e, const struct use *u,
			      const struct ask *a, const struct gp_placement *w, const char *ns,
			      char *why, size_t len)
{
	struct use after = *u;

	if (!u->limited)
		return true;
	use_add(e, &after, &a->req, w, a->memory_mib, a->compute_pct);
	if (!gp_quota_within(&u->t.quota, after.all, true)) {
		snprintf(why, len,
			 "namespace %s is over its gpupool quota: it would use %" PRIu64
			 " MiB and %" PRIu64 " percent of devices, its quota is %" PRIu64 " MiB and %"
			 PRIu64 " percent (guaranteed + borrowable); wait for its pods to end or raise "
			 "the quota",
			 ns, after.all.mem_mib, after.all.compute_pct,
			 gp_quota_limit(&u->t.quota).mem_mib, gp_quota_limit(&u->t.quota).compute_pct);
		return false;
	}
	for (int q = 0; q < u->t.model_quotas; q++) {
		const struct gp_sched_model_quota *mq = &u->t.model_quota[q];

		if (!gp_quota_within(&mq->quota, after.model[q], true)) {
			snprintf(why, len, "namespace %s is over its gpupool quota on %s devices", ns,
				 mq->name);
			return false;
		}
	}
	return true;
}

/* ---- decisions -------------------------------------------------------------- */


/* Why ask a does not fit on a node, for `kubectl describe pod`. */
/* What a miss on a card in MIG mode adds: the profile the share takes
 * there, and that it has no free start (or that no profile holds it). */
static void partition_text(const struct ask *a, char *why, size_t len)
{
	const struct gp_part_set *set = gp_part_set(a->partition_set);
	int k = gp_part_profile_for(a->partition_set, (uint32_t)a->memory_mib,
				    (uint16_t)a->req.dev_compute);
	size_t used = strlen(why);

	if (used >= len)
		return;
	if (k < 0)
		snprintf(why + used, len - used, "; on a card in MIG mode (%s) no profile holds it",
			 set->model);
	else
		snprintf(why + used, len - used, "; on a card in MIG mode it takes a %s, which has "
			 "no free start there", set->profile[k].name);
}

void gp_extender_nofit_text(enum gp_nofit r, const struct ask *a, char *why, size_t len)
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
		snprintf(why, len, "no device has %u percent compute and %" PRIu64 " MiB free",
			 a->compute_pct, a->memory_mib);
	else
		snprintf(why, len, "fewer than %u devices have %u percent compute and %" PRIu64
			 " MiB free",
			 a->req.devices, a->compute_pct, a->memory_mib);
	if (r == GP_NOFIT_DEVICES && !a->req.whole && gp_part_set(a->partition_set))
		partition_text(a, why, len);
}


static bool node_absent(const struct knode *k, char *why, size_t len)
{
	if (k && k->index != NO_NODE)
		return false;
	snprintf(why, len, "%s", NOT_PUBLISHED_TEXT);
	return true;
}


/* Can one of the asks go on node k at all? FITS, NOT_PUBLISHED, or what
 * the last ask missed as nofit * GP_MODELS_MAX + ask. (No score: what
 * filter needs, at a fraction of the cost; the text of a miss is made
 * once per call, not once per node.) */
int gp_extender_fits_on(struct gp_extender *e, const struct ask *asks, int n,
			const struct knode *k)
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
void gp_extender_decide_on(struct gp_extender *e, const struct ask *asks, int n,
			   const struct knode *k, struct choice *ret, char *why, size_t len)
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
			gp_extender_nofit_text(d.reason, &asks[i], why, len);
	}
}

/* The best of the asks over the whole cluster (the bounded search). */
void gp_extender_decide_any(struct gp_extender *e, const struct ask *asks, int n,
			    struct choice *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (int i = 0; i < n; i++) {
		struct gp_decision d;

		if (gp_place(e->cluster, e->policy, &asks[i].req, &d) == 0 && d.placed &&
		    (!ret->placed || d.score > ret->d.score))
			*ret = (struct choice){ true, d, i };
	}
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
	e->seal = o->seal;
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

int gp_extender_placement_of(struct gp_extender *e, const char *uid,
			     struct gp_kube_placement *ret)
{
	const struct kpod *k;
	int r = -ENOENT;

	pthread_mutex_lock(&e->lock);
	k = gp_strmap_get(&e->pods, uid);
	if (k && k->held && k->p.units && k->p.placed) {
		*ret = k->p.placement;
		r = 0;
	}
	pthread_mutex_unlock(&e->lock);
	return r;
}

/* Node k as GET /v1/nodes lists it: its devices, the usable ones (healthy
 * and compatible), their memory, the pods placed there. */
static void api_node_of(const struct gp_extender *e, const struct knode *k,
			struct gp_api_node *ret)
{
	*ret = (struct gp_api_node){ .cuda_version = k->n.cuda_version, .devices = k->n.devices,
				     .schedulable = k->n.schedulable };
	snprintf(ret->hostname, sizeof(ret->hostname), "%s", k->n.name);
	snprintf(ret->driver_version, sizeof(ret->driver_version), "%s", k->n.driver);
	for (unsigned i = 0; i < k->n.devices; i++) {
		ret->memory_total_mib += k->n.device[i].memory_mib;
		ret->devices_usable += k->n.device[i].healthy && k->n.device[i].compatible;
	}
	for (size_t i = 0; i < e->pods.cap; i++) {
		const struct kpod *p = e->pods.slot[i].value;

		ret->tasks_running += e->pods.slot[i].key && p->held && p->p.units &&
				      strcmp(p->p.node, k->n.name) == 0;
	}
}

int gp_extender_node_addresses(struct gp_extender *e, struct gp_extender_node_address **ret,
			       size_t *ret_n)
{
	struct gp_extender_node_address *all;
	size_t n = 0;

	pthread_mutex_lock(&e->lock);
	all = calloc(e->nodes.count + 1, sizeof(*all));
	for (size_t i = 0; all && i < e->nodes.cap; i++) {
		const struct knode *k = e->nodes.slot[i].value;

		if (!e->nodes.slot[i].key || !k->n.devices || !k->n.metrics[0])
			continue;
		snprintf(all[n].node, sizeof(all[n].node), "%s", k->n.name);
		snprintf(all[n].metrics, sizeof(all[n].metrics), "%s", k->n.metrics);
		n++;
	}
	pthread_mutex_unlock(&e->lock);
	if (!all)
		return -ENOMEM;
	*ret = all;
	*ret_n = n;
	return 0;
}

int gp_extender_nodes(struct gp_extender *e, struct gp_api_node **ret)
{
	struct knode **sorted;
	struct gp_api_node *all;
	size_t n = 0;

	pthread_mutex_lock(&e->lock);
	sorted = calloc(e->nodes.count + 1, sizeof(*sorted));
	all = calloc(e->nodes.count + 1, sizeof(*all));
	for (size_t i = 0; sorted && all && i < e->nodes.cap; i++)
		if (e->nodes.slot[i].key && ((struct knode *)e->nodes.slot[i].value)->n.devices)
			sorted[n++] = e->nodes.slot[i].value;
	if (sorted && all)
		qsort(sorted, n, sizeof(*sorted), by_name);
	for (size_t i = 0; sorted && all && i < n; i++)
		api_node_of(e, sorted[i], &all[i]);
	pthread_mutex_unlock(&e->lock);
	free(sorted);
	if (!all || !sorted) {
		free(all);
		return -ENOMEM;
	}
	*ret = all;
	return (int)n;
}

/* k as a task's pod: its devices' models and memory from its node. */
static void task_pod_of(const struct gp_extender *e, const struct kpod *k,
			struct gp_extender_pod *ret)
{
	const struct knode *n = gp_strmap_get(&e->nodes, k->p.node);

	ret->p = k->p;
	snprintf(ret->metrics, sizeof(ret->metrics), "%s", n ? n->n.metrics : "");
	for (unsigned i = 0; n && i < k->p.placement.devices; i++)
		for (unsigned j = 0; j < n->n.devices; j++)
			if (!strcmp(n->n.device[j].uuid, k->p.placement.device[i])) {
				snprintf(ret->model[i], sizeof(ret->model[i]), "%s",
					 n->n.device[j].model);
				ret->device_mib[i] = n->n.device[j].memory_mib;
			}
}

static int ended_take(struct gp_extender *e, struct gp_extender_ended **ret, size_t *ret_n)
{
	uint64_t from = e->ended_next - e->ended_read > GP_EXTENDER_ENDED_MAX
				? e->ended_next - GP_EXTENDER_ENDED_MAX
				: e->ended_read;

	*ret_n = 0;
	*ret = calloc(e->ended_next - from + 1, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	for (uint64_t i = from; i < e->ended_next; i++)
		(*ret)[(*ret_n)++] = e->ended[i % GP_EXTENDER_ENDED_MAX];
	e->ended_read = e->ended_next;
	return 0;
}

int gp_extender_pods(struct gp_extender *e, struct gp_extender_pod **ret, size_t *ret_n,
		     struct gp_extender_ended **ret_ended, size_t *ret_n_ended)
{
	struct gp_extender_pod *all;
	size_t n = 0;
	int r = -ENOMEM;

	pthread_mutex_lock(&e->lock);
	all = calloc(e->pods.count + 1, sizeof(*all));
	for (size_t i = 0; all && i < e->pods.cap; i++) {
		const struct kpod *k = e->pods.slot[i].value;

		/* (held or not: a pod being evicted is let go for reclaim's
		 * reckoning while its containers still run) */
		if (e->pods.slot[i].key && !k->reserved_ns && k->p.units && k->p.placed &&
		    k->p.node[0])
			task_pod_of(e, k, &all[n++]);
	}
	if (all)
		r = ended_take(e, ret_ended, ret_n_ended);
	pthread_mutex_unlock(&e->lock);
	if (r < 0) {
		free(all);
		return r;
	}
	*ret = all;
	*ret_n = n;
	return 0;
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
