/* extender-verbs.c — the extender's answers to kube-scheduler (see
 * extender.h): the replies written as text, filter (the one node it
 * answers, and the hold it makes there for the bind), prioritize (for
 * configurations that still call it), bind; and what it asks of kube-scheduler,
 * to try again the pods that wait on it; extender-impl.h says what they
 * use of the state. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "k8s/args.h"
#include "base/clock.h"
#include "k8s/extender-impl.h"
#include "k8s/names.h"
#include "k8s/reply.h"

/* ---- the verbs' JSON ---------------------------------------------------------- */

/* The args' pod, read; a pod that cannot be read: -EINVAL with why. */
static int args_pod(const struct gp_extender *e, const struct gp_extender_args *a,
		    struct gp_kube_pod *ret, char *err, size_t len)
{
	return gp_extender_pod_read(e, a->pod, ret, err, len);
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

/* A reason as kube-scheduler may show it: its event recorder takes a
 * filter's reasons as a format string ("30%!c(MISSING)ompute"), so no
 * text we answer holds a '%', not even one echoed from a user's
 * annotation: each becomes " percent" (cut to fit `size`). */
static void percent_spelled(char *text, size_t size)
{
	static const char word[] = " percent";
	const size_t w = sizeof(word) - 1;
	char *p;

	while ((p = strchr(text, '%'))) {
		size_t tail = strlen(p + 1), room = size - (size_t)(p - text) - 1, keep;

		if (room < w) {
			*p = 0;         /* no room for the word: the text ends here */
			return;
		}
		keep = tail < room - w ? tail : room - w;
		memmove(p + w, p + 1, keep);
		memcpy(p, word, w);
		p[w + keep] = 0;
	}
}

static void put_string(struct gp_reply *r, const char *text)
{
	gp_reply_string(r, text, strlen(text));
}

/* The filter's verdict on every node offered: passed, or the index of its
 * reason in a small table of distinct texts (most nodes fail for one of a
 * few reasons). */
#define REASONS_MAX 32

/* A node the filter leaves out without a reason: the pod is placed on
 * another offered node, which it answers alone. */
#define PASSED_OVER (-3)

struct verdicts {
	int *why;                       /* per node: FITS, PASSED_OVER, or a reason's index */
	char text[REASONS_MAX][REASON_MAX];
	int texts;
	/* No node will do, nor would preemption help: the pod itself is
	 * wrong, or its group is not all there. */
	bool unresolvable;
};

/* The index of a reason's text, added when new (the last slot takes
 * every reason past REASONS_MAX). */
static int reason_index(struct verdicts *v, const char *text)
{
	char full[REASON_MAX];

	snprintf(full, sizeof(full), "gpupool: %s", text);
	percent_spelled(full, sizeof(full));
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
		if (v->why[i] < 0)
			continue;       /* passed, or passed over */
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
	char spelled[REASON_MAX * 2];
	json_t *body;
	char *text;

	snprintf(spelled, sizeof(spelled), "%s", message);
	percent_spelled(spelled, sizeof(spelled));
	body = json_pack("{s:s}", "Error", spelled);
	text = json_dumps(body, JSON_COMPACT);

	json_decref(body);
	return text;
}

struct unschedulable {
	char ns[GP_KUBE_NAME_MAX], name[GP_KUBE_NAME_MAX], uid[GP_KUBE_UID_MAX];
	char message[REASON_MAX + 64];
};

/* An API handle no other call uses now (waiting for one); give it back
 * with gp_extender_api_give. NULL when the extender has none. */
struct gp_kube *gp_extender_api_take(struct gp_extender *e, int *ret_slot)
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

void gp_extender_api_give(struct gp_extender *e, int slot)
{
	pthread_mutex_lock(&e->api_lock);
	e->api_busy &= ~(1u << slot);
	pthread_cond_signal(&e->api_free);
	pthread_mutex_unlock(&e->api_lock);
}

/* Tells the pod's owner why it waits, at every refusal: one Warning
 * Event per pod and reason, counted (as kube-scheduler's own series). */
static void event_send(struct gp_extender *e, const struct unschedulable *u)
{
	const struct gp_kube_event_of ev = { .kind = "Pod", .ns = u->ns, .name = u->name,
					     .uid = u->uid, .type = "Warning",
					     .reason = "GpupoolUnschedulable", .message = u->message,
					     .component = EVENT_COMPONENT };
	struct gp_kube *api;
	int slot;

	if (!u->uid[0] || !(api = gp_extender_api_take(e, &slot)))
		return;
	if (e->io)
		e->io(e->io_ctx, true);
	gp_kube_event_count(api, &ev);
	if (e->io)
		e->io(e->io_ctx, false);
	gp_extender_api_give(e, slot);
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
		gp_extender_nofit_text((enum gp_nofit)(code / GP_MODELS_MAX), &asks[code % GP_MODELS_MAX], text,
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
	gp_extender_decide_on(e, asks, n, k, &c, reason, sizeof(reason));
	if (c.placed && gp_extender_quota_allows(e, use, &asks[c.ask], &c.d.where, p->ns, reason,
						 sizeof(reason)))
		return FITS;
	return reason_index(v, reason);
}

/* One filter call: the pod, its asks, its namespace's use, and the texts
 * of the misses made so far. */
struct filtering {
	const struct gp_kube_pod *p;
	struct ask asks[GP_MODELS_MAX];
	int n;
	char why[REASON_MAX];           /* when no model can serve it */
	struct use use;
	int cache[1 + (GP_NOFIT_EMPTY + 1) * GP_MODELS_MAX];
	/* Fits nowhere, within its guarantee: the pods reclaim evicts for it. */
	struct gp_extender_victim victim[GP_EXTENDER_VICTIMS_MAX];
	int victims;
};

/* The verdict on node k: FITS, or the index of its reason in v. */
static int node_verdict(struct gp_extender *e, struct filtering *f, const struct knode *k,
			struct verdicts *v)
{
	char model_why[REASON_MAX];
	int code;

	if (f->p->units == 0 && (!k || k->index == NO_NODE))
		return FITS;            /* no opinion */
	if (f->n > 0 &&
	    !gp_extender_node_has_models(e, f->p, f->asks, f->n, k, model_why, sizeof(model_why)))
		return reason_index(v, model_why);
	if (f->use.limited)
		return verdict_with_quota(e, f->p, f->asks, f->n, k, &f->use, v, f->why);
	code = gp_extender_fits_on(e, f->asks, f->n, k);
	if (code == NOT_PUBLISHED && f->n == 0 && k && k->index != NO_NODE)
		return reason_index(v, f->why);
	return code == FITS ? FITS : miss_reason(v, f->cache, code, f->asks);
}

/* Why the pod fits nowhere, in u, for its event: the text of index
 * `reason` (common_reason's), or, at -1, why no model can serve it. */
static void refusal_note(const struct filtering *f, const struct gp_extender_args *a,
			 const struct verdicts *v, int reason, bool known, struct unschedulable *u)
{
	snprintf(u->message, sizeof(u->message), "0/%zu nodes fit: %s", a->names,
		 reason < 0 ? f->why : v->text[reason] + strlen("gpupool: "));
	percent_spelled(u->message, sizeof(u->message));
	if (!known)
		return;
	snprintf(u->ns, sizeof(u->ns), "%s", f->p->ns);
	snprintf(u->name, sizeof(u->name), "%s", f->p->name);
	snprintf(u->uid, sizeof(u->uid), "%s", f->p->uid);
}

/* A pod of a namespace with quotas that fits nowhere: reclaim, by the
 * first of its asks it may have (extender-reclaim.c). */
static void reclaim_for(struct gp_extender *e, struct filtering *f, struct kpod *k)
{
	const struct use *u = &f->use;
	int n = -EAGAIN;

	if (k->held || k->p.node[0])
		return;                 /* placed already: nothing to make room for */
	for (int i = 0; i < f->n && n == -EAGAIN; i++) {
		const struct ask *a = &f->asks[i];

		struct gp_quota_use need = { a->memory_mib * a->req.devices,
					     (uint64_t)a->compute_pct * a->req.devices };

		if (gp_quota_within(&u->t.quota, gp_quota_sum(u->all, need), false))
			n = gp_extender_reclaim(e, k, a, f->victim, GP_EXTENDER_VICTIMS_MAX);
	}
	f->victims = n > 0 ? n : 0;
}

/* The reason most nodes failed for (of equals, the first in text order),
 * for the event: the same whatever order kube-scheduler offers them in.
 * Its index in v->text; -1 when none failed. */
static int common_reason(const struct gp_extender_args *a, const struct verdicts *v)
{
	size_t count[REASONS_MAX] = { 0 };
	int best = -1;

	for (size_t i = 0; i < a->names; i++)
		if (v->why[i] != FITS && v->why[i] >= 0)
			count[v->why[i]]++;
	for (int r = 0; r < v->texts; r++)
		if (count[r] && (best < 0 || count[r] > count[best] ||
				 (count[r] == count[best] && strcmp(v->text[r], v->text[best]) < 0)))
			best = r;
	return best;
}

/* ---- the one node filter answers ------------------------------------------------ */

static int bind_decide(struct gp_extender *e, struct kpod *k, const char *node,
		       struct gp_kube_placement *ret, char *why, size_t len);

/* The index of node `name` among those offered, or SIZE_MAX. */
static size_t offered_at(const struct gp_extender_args *a, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < a->names; i++)
		if (a->name_len[i] == len && memcmp(a->name[i], name, len) == 0)
			return i;
	return SIZE_MAX;
}

/* The offered node the bounded search picks, or SIZE_MAX. */
static size_t offered(struct gp_extender *e, const struct gp_extender_args *a,
		      const struct choice *any)
{
	return any->placed ? offered_at(a, e->node_at[any->d.where.node]->n.name) : SIZE_MAX;
}

/* Holds pod k's placement on node for its bind: kube-scheduler binds
 * while it schedules the next pod, whose filter must see it taken. */
bool gp_extender_reserve(struct gp_extender *e, struct kpod *k, const char *node, char *why,
			 size_t len)
{
	struct gp_kube_placement pl;

	if (!k || k->held || bind_decide(e, k, node, &pl, why, len) < 0)
		return false;
	k->reserved_ns = gp_monotonic_ns();
	e->reserved++;
	return true;
}

/* Node `at` is the answer: every other node is passed over, its reason
 * (where one was found) kept out of the answer too, since kube-scheduler
 * reads reasons only when no node passes. */
static void answer_one(struct verdicts *v, size_t names, size_t at)
{
	for (size_t i = 0; i < names; i++)
		v->why[i] = i == at ? FITS : PASSED_OVER;
}

/* A pod that asks for devices can be held for its bind: one the filter
 * may answer with a single node. */
static bool choosable(const struct filtering *f, const struct kpod *k)
{
	return k && !k->held && f->p->units > 0 && f->n > 0;
}

/* The node the core chooses over the whole cluster (gp_place's bounded
 * search, the decision `gpupool sim` measures), when kube-scheduler
 * offered it, held there and answered alone: kube-scheduler, left one
 * feasible node, neither scores the nodes nor calls prioritize, and the
 * answer names one node, not a thousand. false when it was not offered
 * (kube-scheduler's own filters left it out) or cannot be held there
 * (the namespace's quota): then every node is looked at. */
static bool filter_chosen(struct gp_extender *e, struct filtering *f,
			  const struct gp_extender_args *a, struct kpod *k, struct verdicts *v)
{
	char why[REASON_MAX];
	struct choice any;
	size_t at;

	if (!choosable(f, k))
		return false;
	gp_extender_decide_any(e, f->asks, f->n, &any);
	at = offered(e, a, &any);
	if (at == SIZE_MAX || !gp_extender_reserve(e, k, a->name[at], why, sizeof(why)))
		return false;
	answer_one(v, a->names, at);
	return true;
}

/* Of the nodes that passed, the one the policy scores best (the first of
 * equals), held and answered alone; when none can be held, every node
 * that passed is answered. */
static void filter_best_passed(struct gp_extender *e, struct filtering *f,
			       const struct gp_extender_args *a, struct kpod *k, struct verdicts *v)
{
	struct choice c, top = { .placed = false };
	size_t best = SIZE_MAX;
	char why[REASON_MAX];

	if (!choosable(f, k))
		return;
	for (size_t i = 0; i < a->names; i++) {
		if (v->why[i] != FITS)
			continue;
		gp_extender_decide_on(e, f->asks, f->n, gp_strmap_get(&e->nodes, a->name[i]), &c,
				      why, sizeof(why));
		if (c.placed && (!top.placed || c.d.score > top.d.score)) {
			top = c;
			best = i;
		}
	}
	if (best != SIZE_MAX && gp_extender_reserve(e, k, a->name[best], why, sizeof(why)))
		answer_one(v, a->names, best);
}

/* A member of a pod group (extender-gang.c): the node its group's plan
 * held for it, when kube-scheduler offered that node; else every node
 * fails for the group's reason (and a plan whose node was left out by
 * kube-scheduler's own filters is given back, to be made again). false:
 * not a member. */
static bool gang_answered(struct gp_extender *e, struct filtering *f,
			  const struct gp_extender_args *a, struct kpod *k, struct verdicts *v,
			  struct unschedulable *u)
{
	char why[REASON_MAX];
	enum gp_gang g = gp_extender_gang(e, k, why, sizeof(why));
	size_t at = SIZE_MAX;
	int reason;

	if (g == GANG_NONE)
		return false;
	if (g == GANG_HELD && (at = offered_at(a, k->p.node)) != SIZE_MAX) {
		answer_one(v, a->names, at);
		return true;
	}
	if (g == GANG_HELD) {
		snprintf(why, sizeof(why), "pod group %.63s: kube-scheduler's own filters left out "
			 "node %.63s, where the group placed this pod; it is placed again", k->p.group,
			 k->p.node);
		gp_extender_gang_let_go(e, k);
	}
	reason = reason_index(v, why);
	for (size_t i = 0; i < a->names; i++)
		v->why[i] = reason;
	v->unresolvable = g == GANG_INCOMPLETE;
	k->refused = true;
	refusal_note(f, a, v, reason, true, u);
	return true;
}

/* Filter under the lock. A pod that asks for devices gets one node, its
 * placement held there for the bind (filter_chosen, else the best of
 * those that pass); one that fits nowhere, the reason for every node.
 * Without any ask (no model can serve it), every node with devices fails
 * for `why`. */
static int filter_locked(struct gp_extender *e, struct filtering *f,
			 const struct gp_extender_args *a, struct verdicts *v, struct unschedulable *u)
{
	size_t passed = 0;
	struct kpod *known;
	int r;

	if ((r = gp_extender_ensure_built(e)) < 0)
		return r;
	gp_extender_reservations_expire(e);
	known = pod_known(e, f->p);     /* for the bind that may follow */
	if (known && !known->p.group[0])
		gp_extender_reservation_cancel(e, known);   /* scheduled again: what it held goes */
	f->n = gp_extender_pod_asks(e, f->p, f->asks, f->why, sizeof(f->why));
	f->use.limited = false;         /* quotas are of devices */
	if (f->p->units)
		gp_extender_use_of(e, f->p->ns, &f->use);
	e->stats.filters++;
	if (known)
		known->refused = false;
	if (gang_answered(e, f, a, known, v, u) || filter_chosen(e, f, a, known, v))
		return 0;
	memset(f->cache, -1, sizeof(f->cache));
	for (size_t i = 0; i < a->names; i++) {
		v->why[i] = node_verdict(e, f, gp_strmap_get(&e->nodes, a->name[i]), v);
		passed += v->why[i] == FITS;
	}
	if (passed > 0) {
		filter_best_passed(e, f, a, known, v);
		return 0;
	}
	if (known)
		known->refused = true;
	refusal_note(f, a, v, common_reason(a, v), known != NULL, u);
	if (known && f->use.limited)
		reclaim_for(e, f, known);
	return 0;
}

static void evict_for(struct gp_extender *e, const struct filtering *f, const struct gp_kube_pod *p)
{
	if (e->io)
		e->io(e->io_ctx, true);
	gp_extender_evict(e, f->victim, f->victims, p->ns, p->name, p->uid);
	if (e->io)
		e->io(e->io_ctx, false);
}

int gp_extender_filter(struct gp_extender *e, const char *body, size_t len, char **ret)
{
	struct unschedulable u = { .uid = "" };
	struct verdicts *v = calloc(1, sizeof(*v));
	struct filtering *f = calloc(1, sizeof(*f));
	struct gp_extender_args a;
	struct gp_kube_pod p;
	char err[REASON_MAX];
	int r = v && f ? gp_extender_args_parse(body, len, &a, err, sizeof(err)) : -ENOMEM;

	if (r < 0) {
		*ret = error_text(r != -ENOMEM ? err : "out of memory");
		free(v);
		free(f);
		return *ret ? r : -ENOMEM;
	}
	v->why = calloc(a.names + 1, sizeof(*v->why));
	if (!v->why) {
		r = -ENOMEM;
	} else if ((r = args_pod(e, &a, &p, err, sizeof(err))) < 0) {
		/* The pod's own request is wrong: no node will do, and
		 * preemption cannot help (every why is reason 0). */
		v->unresolvable = true;
		reason_index(v, err);
		r = 0;
	} else {
		f->p = &p;
		pthread_mutex_lock(&e->lock);
		r = filter_locked(e, f, &a, v, &u);
		pthread_mutex_unlock(&e->lock);
	}
	*ret = r < 0 ? error_text(strerror(-r)) : filter_text(&a, v);
	if (r == 0 && u.uid[0])
		event_send(e, &u);
	if (r == 0 && f->victims)
		evict_for(e, f, &p);
	gp_extender_args_release(&a);
	free(v->why);
	free(v);
	free(f);
	return *ret ? r : -ENOMEM;
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
		gp_extender_decide_on(e, asks, n_asks, gp_strmap_get(&e->nodes, a->name[i]), &on[i], why,
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

/* Scores 0..10, for configurations that still call prioritize (filter
 * answers one node, which kube-scheduler then takes without scoring).
 * The node filter held the pod on gets 10, the others 0; without a hold,
 * the node the bounded search picks (the decision `gpupool sim` measures)
 * gets 10 when it is offered, the others 0, and when it is not
 * (kube-scheduler's own filters left it out) every offered node is
 * scored: the best 10, the others 0..9. The node of 10 is held. */
static void prioritize_locked(struct gp_extender *e, const struct gp_kube_pod *p,
			      const struct gp_extender_args *a, int *score)
{
	struct kpod *k = gp_strmap_get(&e->pods, p->uid);
	struct ask asks[GP_MODELS_MAX];
	struct choice any;
	char why[REASON_MAX];
	size_t chosen;
	int n_asks;

	if (gp_extender_ensure_built(e) < 0)
		return;
	if (k && k->reserved_ns && k->held && (chosen = offered_at(a, k->p.node)) != SIZE_MAX) {
		score[chosen] = 10;     /* filter held it there */
		return;
	}
	n_asks = gp_extender_pod_asks(e, p, asks, why, sizeof(why));
	gp_extender_decide_any(e, asks, n_asks, &any);
	chosen = offered(e, a, &any);
	if (chosen != SIZE_MAX)
		score[chosen] = 10;
	else
		scores_exact(e, asks, n_asks, a, score);
	for (size_t i = 0; i < a->names; i++)
		if (score[i] == 10)
			gp_extender_reserve(e, pod_known(e, p), a->name[i], why, sizeof(why));
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
	if (score && args_pod(e, &a, &p, err, sizeof(err)) == 0) {
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

unsigned gp_extender_priority_granted(const struct use *u, unsigned asked)
{
	return u->limited && asked > u->t.priority_max ? u->t.priority_max : asked;
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
	n = gp_extender_pod_asks(e, &k->p, asks, why, len);
	if (n > 0 && !gp_extender_node_has_models(e, &k->p, asks, n, kn, why, len))
		return -ENOSPC;
	gp_extender_decide_on(e, asks, n, kn, &c, why, len);
	use.limited = false;
	if (k->p.units)
		gp_extender_use_of(e, k->p.ns, &use);
	if (!c.placed || !gp_extender_quota_allows(e, &use, &asks[c.ask], &c.d.where, k->p.ns, why, len))
		return -ENOSPC;
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->node, sizeof(ret->node), "%s", node);
	for (int i = 0; i < c.d.where.devices; i++) {
		ret->part_start[ret->devices] = asks[c.ask].req.whole ? 0 : c.d.where.part_start[i];
		snprintf(ret->device[ret->devices++], GP_KUBE_UUID_MAX, "%s",
			 kn->n.device[c.d.where.device[i]].uuid);
	}
	ret->memory_mib = asks[c.ask].req.whole ? gp_extender_whole_memory(e, &c.d.where)
						: asks[c.ask].memory_mib;
	ret->compute = asks[c.ask].compute_pct;
	ret->whole = asks[c.ask].req.whole;
	ret->priority = gp_extender_priority_granted(&use, k->p.priority);
	ret->isolation = k->p.isolation;
	ret->bound_at = gp_unix_ns();
	ret->sealed_at = ret->bound_at;
	gp_extender_unreserve(e, k);
	gp_extender_pod_let_go(e, k);
	if (k->p.units) {
		k->p.placement = *ret;
		k->p.placed = true;
	}
	snprintf(k->p.node, sizeof(k->p.node), "%s", node);
	return gp_extender_pod_hold(e, k) ? 0 : -EBUSY;
}

/* Binds the pod with its placement annotation in the Binding: the API
 * server writes both in one update, so no pod is ever bound without its
 * placement, nor annotated and left unbound. The refusal in why. */
static int bind_write(struct gp_extender *e, const struct gp_kube_pod *p,
		      const struct gp_kube_placement *pl, char *why, size_t len)
{
	json_t *annotations = p->units ? gp_extender_placement_annotations(e, p->uid, pl) : NULL;
	struct gp_kube *api;
	int slot, r = 0;

	if (p->units && !annotations)
		return -ENOMEM;
	if ((api = gp_extender_api_take(e, &slot))) {
		r = gp_kube_bind(api, p->ns, p->name, p->uid, pl->node, annotations);
		if (r < 0)
			snprintf(why, len, "the API server refused: %s",
				 *gp_kube_error(api) ? gp_kube_error(api) : strerror(-r));
		gp_extender_api_give(e, slot);
	}
	json_decref(annotations);
	return r;
}

static int bind_args(struct gp_extender *e, const json_t *args, char **ret);

/* Is pod k held on node by filter (or prioritize)? Its placement in *ret then. */
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
		gp_extender_unreserve(e, k);
		gp_extender_pod_let_go(e, k);
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
	r = gp_extender_ensure_built(e);
	k = gp_strmap_get(&e->pods, uid);
	if (r == 0 && !k)
		snprintf(why, sizeof(why), "pod %s/%s (uid %s) was not seen by the filter", ns, name, uid);
	else if (r == 0 && reserved_on(k, node, &pl))
		r = 0;                  /* filter held it there */
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
		gp_extender_unreserve(e, k);
	e->stats.binds++;
	if (!e->trace.pods && ++e->binds_since_target >= RETARGET_BINDS && gp_extender_retarget(e) < 0)
		e->dirty = true;
	pthread_mutex_unlock(&e->lock);
	*ret = error_text("");
	return 0;
}

/* ---- asking kube-scheduler to try again ------------------------------------------- */

struct retry {
	char ns[GP_KUBE_NAME_MAX], name[GP_KUBE_NAME_MAX], uid[GP_KUBE_UID_MAX];
};

/* Does pod k wait on us (of our scheduler, asking for devices, neither
 * placed nor bound nor going), refused by the filter unless `all`? */
static bool retry_wanted(const struct gp_extender *e, const struct kpod *k, bool all)
{
	const struct gp_kube_pod *p = &k->p;

	if (k->woken && k->reserved_ns)
		return true;            /* its group placed it: its filter answers the node */
	if (!p->units || p->placed || p->node[0] || p->deleting || p->finished || k->held ||
	    k->reserved_ns || (e->scheduler[0] && strcmp(p->scheduler, e->scheduler) != 0))
		return false;
	return all || k->refused;
}

/* Under the lock: up to `max` pods wanted and not asked in the last
 * GP_EXTENDER_RETRY_GAP_S, marked as asked; *ret_more when others are
 * wanted that must wait for a later call. */
static size_t retry_pick(struct gp_extender *e, bool all, struct retry *ret, size_t max,
			 bool *ret_more)
{
	const uint64_t gap = GP_EXTENDER_RETRY_GAP_S * 1000000000ULL;
	uint64_t now = gp_monotonic_ns();
	size_t n = 0;

	*ret_more = false;
	for (size_t i = 0; i < e->pods.cap; i++) {
		struct kpod *k = e->pods.slot[i].value;

		if (!e->pods.slot[i].key || !retry_wanted(e, k, all))
			continue;
		if (n == max || (k->retried_ns && now - k->retried_ns < gap)) {
			*ret_more = true;
			continue;
		}
		snprintf(ret[n].ns, sizeof(ret[n].ns), "%s", k->p.ns);
		snprintf(ret[n].name, sizeof(ret[n].name), "%s", k->p.name);
		snprintf(ret[n].uid, sizeof(ret[n].uid), "%s", k->p.uid);
		k->retried_ns = now;
		k->refused = false;
		k->woken = false;
		n++;
	}
	return n;
}

/* The annotation on one pod (its uid a precondition: never on another
 * pod of the same name). */
static int retry_patch(struct gp_kube *api, const struct retry *r, int64_t now_ms)
{
	char path[2 * GP_KUBE_NAME_MAX + 64], value[32];
	json_t *patch;
	int rc;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", r->ns, r->name);
	snprintf(value, sizeof(value), "%lld", (long long)now_ms);
	patch = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "uid", r->uid, "annotations",
			  GP_KUBE_ANN_RETRY, value);
	rc = patch ? gp_kube_merge_patch(api, path, patch, NULL, NULL) : -ENOMEM;
	json_decref(patch);
	return rc;
}

int gp_extender_retry(struct gp_extender *e, bool all, const atomic_bool *stop)
{
	struct retry *list;
	struct timespec ts;
	size_t n = 0;
	bool more;
	int done = 0;

	if (!e->apis || !(list = calloc(GP_EXTENDER_RETRY_MAX, sizeof(*list))))
		return 0;
	pthread_mutex_lock(&e->lock);
	all |= e->retry_all;
	if (all || e->freed) {
		n = retry_pick(e, all, list, GP_EXTENDER_RETRY_MAX, &more);
		e->retry_all = all && more;
		e->freed = e->freed && more;
	}
	pthread_mutex_unlock(&e->lock);
	clock_gettime(CLOCK_REALTIME, &ts);
	for (size_t i = 0; i < n && !(stop && atomic_load(stop)); i++) {
		int slot;
		struct gp_kube *api = gp_extender_api_take(e, &slot);

		done += retry_patch(api, &list[i],
				    (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000) == 0;
		gp_extender_api_give(e, slot);
	}
	free(list);
	return done;
}
