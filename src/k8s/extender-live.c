/* extender-live.c — live changes of a placed pod (extender.h). A pod's
 * owner changes its gpupool.io/compute, priority or isolation annotation
 * while it runs; the node program applies only what its sealed placement
 * says (seal.h), so the change goes through here: admitted by the rules of
 * a placement — room on its devices in the cluster, its namespace's
 * quota, its tenant's highest priority — it is written as the pod's
 * placement again, sealed anew; refused, it is said in an Event on the
 * pod, once per reason. A pod on a hardware partition (MIG) keeps its
 * compute: the partition's size is fixed. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "k8s/extender-impl.h"
#include "k8s/names.h"

/* The placement pod k asks for now: its own, with what its annotations
 * change (compute, isolation; priority held to its tenant's highest). */
static void placement_asked(const struct kpod *k, const struct use *u,
			    struct gp_kube_placement *ret)
{
	*ret = k->p.placement;
	if (k->p.compute)
		ret->compute = k->p.compute;
	ret->isolation = k->p.isolation;
	ret->priority = gp_extender_priority_granted(u, k->p.priority);
}

static bool same_limits(const struct gp_kube_placement *a, const struct gp_kube_placement *b)
{
	return a->compute == b->compute && a->priority == b->priority &&
	       a->isolation == b->isolation;
}

/* Holds k at `next` instead of its placement when its devices have room
 * and its namespace's quota allows; else holds it as it was, why. */
static bool hold_instead(struct gp_extender *e, struct kpod *k, const struct gp_kube_placement *next,
			 char *why, size_t len)
{
	struct gp_request after = k->req;
	struct ask a;
	struct use u;

	after.dev_compute = next->compute * 10;
	a = (struct ask){ .req = after, .compute_pct = next->compute, .memory_mib = next->memory_mib };
	gp_extender_pod_let_go(e, k);
	gp_extender_use_of(e, k->p.ns, &u);
	if (!gp_extender_quota_allows(e, &u, &a, &k->where, k->p.ns, why, len)) {
		gp_extender_pod_hold(e, k);
		return false;
	}
	if (gp_cluster_commit(e->cluster, &after, &k->where) < 0) {
		snprintf(why, len, "compute %u percent does not fit on its devices beside the "
			 "other pods there; it keeps %u percent", next->compute,
			 k->p.placement.compute);
		gp_extender_pod_hold(e, k);
		return false;
	}
	k->req = after;
	k->held = true;
	return true;
}

/* Might pod k ask for a change? (Its priority may still be held to what
 * it has.) */
static bool may_ask(const struct kpod *k)
{
	const struct gp_kube_placement *pl = &k->p.placement;

	return (k->p.compute && k->p.compute != pl->compute) || k->p.isolation != pl->isolation ||
	       k->p.priority != pl->priority;
}

/* Is held pod k on a card in partition mode (MIG)? */
static bool on_partition(const struct gp_extender *e, const struct kpod *k)
{
	for (int i = 0; i < k->where.devices; i++)
		if (e->specs[k->where.node].device[k->where.device[i]].partitions)
			return true;
	return false;
}

bool gp_extender_live_change(struct gp_extender *e, struct kpod *k, struct gp_extender_live *ret)
{
	struct gp_kube_placement next;
	struct use u;

	if (!k->p.placed || !k->p.units || !may_ask(k) || gp_extender_ensure_built(e) < 0 ||
	    !k->held)
		return false;           /* (a rebuild holds every placed pod again) */
	gp_extender_use_of(e, k->p.ns, &u);
	placement_asked(k, &u, &next);
	if (same_limits(&next, &k->p.placement) ||
	    (k->live_sent && same_limits(&next, &k->live_asked)))
		return false;           /* nothing asked, or asked and on its way */
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->ns, sizeof(ret->ns), "%s", k->p.ns);
	snprintf(ret->name, sizeof(ret->name), "%s", k->p.name);
	snprintf(ret->uid, sizeof(ret->uid), "%s", k->p.uid);
	k->live_asked = next;
	k->live_sent = true;
	if (next.whole && next.compute != k->p.placement.compute) {
		snprintf(ret->why, sizeof(ret->why), "a whole device has no share to change");
		return true;
	}
	if (next.compute != k->p.placement.compute && on_partition(e, k)) {
		snprintf(ret->why, sizeof(ret->why), "%s=%u refused: the pod runs on a hardware "
			 "partition (MIG instance), whose size is fixed; it keeps %u percent (make "
			 "the pod again to change it)", GP_KUBE_ANN_COMPUTE, next.compute,
			 k->p.placement.compute);
		return true;
	}
	if (next.compute != k->p.placement.compute &&
	    !hold_instead(e, k, &next, ret->why, sizeof(ret->why)))
		return true;
	next.sealed_at = gp_unix_ns();
	k->p.placement = next;
	ret->placement = next;
	ret->admitted = true;
	e->stats.live_changes++;
	return true;
}

void gp_extender_live_send(struct gp_extender *e, const struct gp_extender_live *l)
{
	char path[2 * GP_KUBE_NAME_MAX + 64];
	json_t *patch = NULL, *annotations;
	struct gp_kube *api;
	int slot;

	if (!(api = gp_extender_api_take(e, &slot)))
		return;
	if (!l->admitted) {
		gp_kube_event(api, "Pod", l->ns, l->name, l->uid, "Warning", "GpupoolChangeRefused",
			      l->why, EVENT_COMPONENT);
	} else if ((annotations = gp_extender_placement_annotations(e, l->uid, &l->placement))) {
		patch = json_pack("{s:{s:o}}", "metadata", "annotations", annotations);
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", l->ns, l->name);
		if (!patch || gp_kube_merge_patch(api, path, patch, NULL, NULL) < 0)
			fprintf(stderr, "gpupool server: cannot write the live change of pod %s/%s: "
				"%s\n", l->ns, l->name, gp_kube_error(api));
	}
	json_decref(patch);
	gp_extender_api_give(e, slot);
}
