/* extender-gang.c — gangs across nodes: the pods of one namespace that
 * share a pod group (names.h: gpupool.io/pod-group and -size) are placed
 * all together or not at all. A member waits, saying how many exist,
 * until the group's size do; the filter of the one that completes it
 * places every member not yet placed, one after the other over the whole
 * cluster (the core's bounded search, the namespace's quotas counting the
 * ones placed before), and holds each placement as filter holds one for
 * its bind. When any member fits nowhere, every hold the plan made is
 * given back and all wait. The others are asked to be tried again
 * (gp_extender_retry) and their filters answer the node held for them;
 * holds no bind claims go at RESERVE_TTL_NS, all together, since they
 * were made together. Under the lock, as all of the extender's state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "k8s/extender-impl.h"
#include "k8s/names.h"

/* The members of k's group as the extender knows them, none deleting,
 * sorted by name (the order they are placed in). */
struct members {
	struct kpod *pod[GP_KUBE_GROUP_MAX];
	unsigned n;
	bool sizes_differ;              /* a member gives another size */
};

static bool same_group(const struct kpod *a, const struct kpod *b)
{
	return !strcmp(a->p.group, b->p.group) && !strcmp(a->p.ns, b->p.ns);
}

static int by_pod_name(const void *a, const void *b)
{
	return strcmp((*(struct kpod *const *)a)->p.name, (*(struct kpod *const *)b)->p.name);
}

static void members_of(struct gp_extender *e, const struct kpod *k, struct members *ret)
{
	ret->n = 0;
	ret->sizes_differ = false;
	for (size_t i = 0; i < e->pods.cap && ret->n < GP_KUBE_GROUP_MAX; i++) {
		struct kpod *m = e->pods.slot[i].value;

		if (!e->pods.slot[i].key || m->p.deleting || !same_group(m, k))
			continue;
		ret->pod[ret->n++] = m;
		ret->sizes_differ |= m->p.group_size != k->p.group_size;
	}
	qsort(ret->pod, ret->n, sizeof(ret->pod[0]), by_pod_name);
}

/* Is member m to be placed by the plan (neither placed nor held)? */
static bool unplaced(const struct kpod *m)
{
	return !m->held && !m->p.node[0] && !m->p.placed;
}

/* Gives back the holds of the members that wait for their bind. */
static void plan_undo(struct gp_extender *e, const struct members *g)
{
	for (unsigned i = 0; i < g->n; i++) {
		g->pod[i]->woken = false;
		gp_extender_reservation_cancel(e, g->pod[i]);
	}
}

/* Places member m over the whole cluster and holds it; why not, if not. */
static bool member_place(struct gp_extender *e, struct kpod *m, char *why, size_t len)
{
	struct ask asks[GP_MODELS_MAX];
	char reason[REASON_MAX];
	struct choice c = { .placed = false };
	int n = gp_extender_pod_asks(e, &m->p, asks, reason, sizeof(reason));

	if (n > 0) {
		snprintf(reason, sizeof(reason), "no node has room for it now");
		gp_extender_decide_any(e, asks, n, &c);
	}
	if (c.placed &&
	    gp_extender_reserve(e, m, e->node_at[c.d.where.node]->n.name, reason, sizeof(reason)))
		return true;
	snprintf(why, len, "pod group %s: pod %s fits nowhere with the others (%s)", m->p.group,
		 m->p.name, reason);
	return false;
}

/* Places every unplaced member, all or none. */
static bool plan(struct gp_extender *e, const struct members *g, const struct kpod *k, char *why,
		 size_t len)
{
	for (unsigned i = 0; i < g->n; i++) {
		if (!unplaced(g->pod[i]))
			continue;
		if (!member_place(e, g->pod[i], why, len)) {
			plan_undo(e, g);
			return false;
		}
		g->pod[i]->woken = g->pod[i] != k;
	}
	e->freed = true;                /* the retry loop wakes the others */
	e->stats.gangs_placed++;
	return true;
}

enum gp_gang gp_extender_gang(struct gp_extender *e, struct kpod *k, char *why, size_t len)
{
	struct members *g;
	enum gp_gang r = GANG_INCOMPLETE;

	if (!k || !k->p.group[0] || !k->p.units)
		return GANG_NONE;
	k->woken = false;
	if (k->reserved_ns && k->held)
		return GANG_HELD;       /* held by the plan: its node */
	if (!(g = malloc(sizeof(*g)))) {
		snprintf(why, len, "pod group %s: out of memory", k->p.group);
		return GANG_NO_ROOM;
	}
	members_of(e, k, g);
	if (g->sizes_differ)
		snprintf(why, len, "pod group %s: its pods give different %s (make them the same)",
			 k->p.group, GP_KUBE_ANN_GROUP_SIZE);
	else if (g->n < k->p.group_size)
		snprintf(why, len, "pod group %s: %u of its %u pods exist; they are placed together "
			 "once all do", k->p.group, g->n, k->p.group_size);
	else
		r = plan(e, g, k, why, len) ? GANG_HELD : GANG_NO_ROOM;
	free(g);
	return r;
}

void gp_extender_gang_let_go(struct gp_extender *e, struct kpod *k)
{
	struct members *g = malloc(sizeof(*g));

	if (!g)
		return;
	members_of(e, k, g);
	plan_undo(e, g);
	free(g);
}
