/* kube-services.c — what the server asks of a cluster for its pods'
 * tasks, and services over Deployments (kube-tasks.h, server/service.h).
 *
 * Asks are queued by any thread (the API's: a task cancelled, a pod's
 * share set; the look's: the services' steps) and sent by kube-tasks'
 * thread after its look lets the store's lock go: an eviction through
 * the Eviction API; a share as the pod's gpupool.io/compute (and
 * priority) annotation, which the extender then admits by the same rules
 * as its owner's change (extender-live.c); a Deployment's replicas
 * through its scale subresource.
 *
 * The services' engine reads the followed pods: a replica's used over
 * allocated compute in the interval the look just closed, how much its
 * devices have left beside the other followed pods, what its tenant's
 * pods hold. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "k8s/extender.h"
#include "k8s/kube-tasks-impl.h"
#include "k8s/names.h"

/* ---- asks ----------------------------------------------------------------------- */

static int ask_put(struct gp_kube_tasks *t, const struct ask *a)
{
	int r = -EAGAIN;

	pthread_mutex_lock(&t->lock);
	if (t->asks < GP_KUBE_TASKS_ASKS_MAX) {
		t->ask[t->asks++] = *a;
		pthread_cond_signal(&t->wake);
		r = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

int gp_kube_tasks_cancel(struct gp_kube_tasks *t, const char *uid, const char *who)
{
	struct ask a = {.kind = ASK_EVICT};

	snprintf(a.uid, sizeof(a.uid), "%s", uid);
	snprintf(a.who, sizeof(a.who), "%s", who);
	return ask_put(t, &a);
}

int gp_kube_tasks_share(struct gp_kube_tasks *t, const char *uid, unsigned compute,
			unsigned priority, const char *who)
{
	struct ask a = {.kind = ASK_SHARE, .compute = compute, .priority = priority,
			.priority_too = true};

	snprintf(a.uid, sizeof(a.uid), "%s", uid);
	snprintf(a.who, sizeof(a.who), "%s", who);
	return ask_put(t, &a);
}

static void evict(struct gp_kube_tasks *t, const struct followed *f, const struct ask *a)
{
	char text[GP_STORE_NAME_MAX + 128];

	snprintf(text, sizeof(text), "evicted by gpupool: its task %lld was cancelled by %s "
		 "(gpupool task cancel)", (long long)f->row.id, a->who);
	gp_extender_evict_pod(t->o.extender, f->pod->p.ns, f->pod->p.name, f->row.pod_uid,
			      "GpupoolCancelled", text);
}

static void share_write(struct gp_kube_tasks *t, const struct followed *f, const struct ask *a)
{
	char path[2 * GP_KUBE_NAME_MAX + 64], err[256] = "", value[16], priority[16];
	json_t *annotations = json_object(), *patch;

	snprintf(value, sizeof(value), "%u", a->compute);
	json_object_set_new(annotations, GP_KUBE_ANN_COMPUTE, json_string(value));
	if (a->priority_too) {
		snprintf(priority, sizeof(priority), "%u", a->priority);
		json_object_set_new(annotations, GP_KUBE_ANN_PRIORITY, json_string(priority));
	}
	patch = json_pack("{s:{s:o}}", "metadata", "annotations", annotations);

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", f->pod->p.ns,
		 f->pod->p.name);
	if (patch && gp_extender_patch(t->o.extender, path, patch, err, sizeof(err)) < 0)
		fprintf(stderr, "gpupool server: cannot ask pod %s/%s for %u %% (for %s): %s\n",
			f->pod->p.ns, f->pod->p.name, a->compute, a->who, err);
	json_decref(patch);
}

static void scale_write(struct gp_kube_tasks *t, const struct ask *a)
{
	char path[2 * GP_KUBE_NAME_MAX + 64], err[256] = "";
	json_t *patch = json_pack("{s:{s:I}}", "spec", "replicas", (json_int_t)a->replicas);

	snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/deployments/%s/scale", a->ns,
		 a->name);
	if (patch && gp_extender_patch(t->o.extender, path, patch, err, sizeof(err)) < 0)
		fprintf(stderr, "gpupool server: cannot scale Deployment %s/%s to %u replicas "
			"(for %s): %s\n", a->ns, a->name, a->replicas, a->who, err);
	json_decref(patch);
}

void gp_kube_asks_send(struct gp_kube_tasks *t)
{
	struct ask asked[GP_KUBE_TASKS_ASKS_MAX];
	int n;

	pthread_mutex_lock(&t->lock);
	n = t->asks;
	memcpy(asked, t->ask, (size_t)n * sizeof(*asked));
	t->asks = 0;
	pthread_mutex_unlock(&t->lock);
	for (int i = 0; i < n; i++) {
		const struct followed *f = gp_strmap_get(&t->followed, asked[i].uid);

		if (asked[i].kind == ASK_SCALE)
			scale_write(t, &asked[i]);
		else if (!f || !f->pod)
			continue;       /* gone meanwhile: its task ends anyway */
		else if (asked[i].kind == ASK_EVICT)
			evict(t, f, &asked[i]);
		else
			share_write(t, f, &asked[i]);
	}
}

/* ---- the services' engine ------------------------------------------------------- */

static struct followed *followed_of_task(struct gp_kube_tasks *t, int64_t task)
{
	for (size_t i = 0; i < t->followed.cap; i++) {
		struct followed *f = t->followed.slot[i].value;

		if (t->followed.slot[i].key && f->row.id == task)
			return f;
	}
	return NULL;
}

static bool pod_effective(void *ctx, int64_t task, double *ret)
{
	const struct followed *f = followed_of_task(ctx, task);

	if (!f || !f->sampled)
		return false;
	*ret = f->effective;
	return true;
}

/* The compute the followed pods hold on device uuid. */
static unsigned held_on(struct gp_kube_tasks *t, const char *uuid)
{
	unsigned held = 0;

	for (size_t i = 0; i < t->followed.cap; i++) {
		const struct followed *f = t->followed.slot[i].value;

		for (unsigned d = 0; t->followed.slot[i].key && f->pod && d < f->devices; d++)
			if (!strcmp(f->uuid[d], uuid))
				held += f->row.compute_pct;
	}
	return held;
}

static unsigned pod_grow_room(void *ctx, int64_t task)
{
	const struct followed *f = followed_of_task(ctx, task);
	unsigned room = 100;

	for (unsigned d = 0; f && d < f->devices; d++) {
		unsigned held = held_on(ctx, f->uuid[d]);
		unsigned free_pct = held < 100 ? 100 - held : 0;

		room = free_pct < room ? free_pct : room;
	}
	return room;
}

static void pods_tenant_use(void *ctx, int64_t tenant, uint64_t *ret_mem_mib, uint64_t *ret_pct)
{
	struct gp_kube_tasks *t = ctx;
	uint64_t mem = 0, pct = 0;

	for (size_t i = 0; i < t->followed.cap; i++) {
		const struct followed *f = t->followed.slot[i].value;

		if (!t->followed.slot[i].key || f->row.tenant != tenant || !f->pod)
			continue;
		for (unsigned d = 0; d < f->devices; d++) {
			mem += f->mem_mib[d];
			pct += f->row.compute_pct;
		}
	}
	*ret_mem_mib = mem;
	*ret_pct = pct;
}

/* The Deployment is in the namespace named as the tenant. */
static int deployment_scale(void *ctx, int64_t tenant, const char *deployment, unsigned replicas)
{
	struct gp_kube_tasks *t = ctx;
	struct ask a = {.kind = ASK_SCALE, .replicas = replicas};
	struct gp_tenant owner;
	int r = gp_pool_tenant_get(t->o.pool, tenant, &owner);

	if (r < 0)
		return r;
	snprintf(a.ns, sizeof(a.ns), "%s", owner.name);
	snprintf(a.name, sizeof(a.name), "%s", deployment);
	snprintf(a.who, sizeof(a.who), "a service of %.48s", owner.name);
	return ask_put(t, &a);
}

/* Asked once: a pod whose annotation asks for the share already (admitted
 * or refused, the extender has it) is left. */
static int pod_share(void *ctx, const struct gp_task *replica, unsigned share_pct)
{
	struct gp_kube_tasks *t = ctx;
	const struct followed *f = followed_of_task(t, replica->id);
	struct ask a = {.kind = ASK_SHARE, .compute = share_pct};

	if (!f || !f->pod)
		return -ENOENT;
	if (f->pod->p.compute == share_pct)
		return 0;
	snprintf(a.uid, sizeof(a.uid), "%s", f->row.pod_uid);
	snprintf(a.who, sizeof(a.who), "service");
	return ask_put(t, &a);
}

int gp_kube_services_new(struct gp_kube_tasks *t)
{
	struct gp_taskops ops = {.store = t->o.store, .pool = t->o.pool};
	struct gp_service_engine pods = {.effective = pod_effective,
					 .grow_room = pod_grow_room,
					 .tenant_use = pods_tenant_use,
					 .scale = deployment_scale,
					 .share = pod_share,
					 .ctx = t};

	return gp_services_new(&ops, &pods, t->alerts, &t->services);
}

struct gp_services *gp_kube_tasks_services(struct gp_kube_tasks *t)
{
	return t ? t->services : NULL;
}
