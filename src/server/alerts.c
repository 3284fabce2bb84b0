/* alerts.c — raising and clearing alerts (alerts.h).
 *
 * A check reads the active condition alerts from the store (a read: no
 * fsync; and an operator's clear is seen at once), builds the list of
 * conditions that hold now, and reconciles the two: new conditions are
 * raised, vanished ones cleared. When nothing changed, nothing is
 * written. Events (a task failed, its log capped or lost) are raised by
 * their own functions and left alone by checks; the log events remember
 * the last tasks they were raised for, so that a flood of reports from
 * the log pump becomes one store write. */
#include "server/alerts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"

#define LOAD_MAX   100000
#define RAISED_MAX 4096 /* tasks remembered per log event */

/* An active condition alert, or a condition that holds now. */
struct cond {
	struct gp_alert alert;
};

struct conds {
	struct cond *c;
	int n, cap;
};

/* The tasks a log event was raised for, the oldest forgotten first. */
struct raised {
	int64_t task[RAISED_MAX];
	int n, next;
};

struct gp_alerts {
	struct gp_store *store;
	struct conds active;   /* during a check */
	struct conds unplaced; /* task.unplaced, as the loop reports them */
	struct raised capped, lost;
};

bool gp_alerts_is_event(const char *kind)
{
	static const char *const events[] = {"task.failed", "task.violation",
					     "task.log-capped", "task.log-lost",
					     "store.unwritable", "service.crash-loop"};

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(kind, events[i]))
			return true;
	return false;
}

static bool is_condition(const char *kind)
{
	return !gp_alerts_is_event(kind);
}

static int conds_push(struct conds *s, const struct gp_alert *a)
{
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		struct cond *bigger = realloc(s->c, (size_t)cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		s->c = bigger;
		s->cap = cap;
	}
	s->c[s->n++].alert = *a;
	return 0;
}

static int conds_find(const struct conds *s, const char *kind, const char *object)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].alert.kind, kind) &&
		    !strcmp(s->c[i].alert.object, object))
			return i;
	return -1;
}

int gp_alerts_new(struct gp_store *store, struct gp_alerts **ret)
{
	struct gp_alerts *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->store = store;
	*ret = a;
	return 0;
}

/* The active condition alerts, from the store. */
static int active_load(struct gp_alerts *a)
{
	struct gp_alert *all = NULL;
	int n = 0, r = gp_store_alert_list(a->store, -1, true, LOAD_MAX, &all, &n);

	a->active.n = 0;
	for (int i = 0; r == 0 && i < n; i++)
		if (is_condition(all[i].kind))
			r = conds_push(&a->active, &all[i]);
	free(all);
	return r;
}

struct gp_alerts *gp_alerts_free(struct gp_alerts *a)
{
	if (a) {
		free(a->active.c);
		free(a->unplaced.c);
		free(a);
	}
	return NULL;
}

static struct gp_alert alert_make(enum gp_alert_level level, const char *kind,
				  const char *object, int64_t tenant)
{
	struct gp_alert al = {.level = level, .tenant = tenant};

	snprintf(al.kind, sizeof(al.kind), "%s", kind);
	snprintf(al.object, sizeof(al.object), "%s", object);
	return al;
}

int gp_alerts_task_failed(struct gp_alerts *a, const struct gp_task *t, const char *why)
{
	char object[GP_AUDIT_OBJECT_MAX];
	struct gp_alert al;
	bool fresh;

	snprintf(object, sizeof(object), "task %" PRId64, t->id);
	/* A warning: a failed task is its tenant's to look at, not an
	 * operator's emergency (a verifier's kill is task.violation's). */
	al = alert_make(GP_ALERT_WARNING, "task.failed", object, t->tenant);
	snprintf(al.message, sizeof(al.message), "task %" PRId64 " (%s) failed: %s",
		 t->id, t->name, why);
	return gp_store_alert_raise(a->store, &al, &fresh);
}

int gp_alerts_violation(struct gp_alerts *a, const struct gp_task *t, const char *text)
{
	char object[GP_AUDIT_OBJECT_MAX];
	struct gp_alert al;
	bool fresh;

	if (t)
		snprintf(object, sizeof(object), "task %" PRId64, t->id);
	else
		snprintf(object, sizeof(object), "node");
	al = alert_make(GP_ALERT_CRITICAL, "task.violation", object, t ? t->tenant : 0);
	if (t)
		snprintf(al.message, sizeof(al.message), "task %" PRId64 " (%s): %s", t->id,
			 t->name, text);
	else
		snprintf(al.message, sizeof(al.message), "%s", text);
	return gp_store_alert_raise(a->store, &al, &fresh);
}

int gp_alerts_store_unwritable(struct gp_alerts *a, const char *message)
{
	struct gp_alert al = alert_make(GP_ALERT_CRITICAL, "store.unwritable", "store", 0);
	bool fresh;

	snprintf(al.message, sizeof(al.message), "%s", message);
	return gp_store_alert_raise(a->store, &al, &fresh);
}

/* ---- services ------------------------------------------------------------ */

int gp_alerts_service_crash_loop(struct gp_alerts *a, int64_t tenant, const char *service,
				 const char *message)
{
	char object[GP_AUDIT_OBJECT_MAX];
	struct gp_alert al;
	bool fresh;

	snprintf(object, sizeof(object), "service %s", service);
	al = alert_make(GP_ALERT_CRITICAL, "service.crash-loop", object, tenant);
	snprintf(al.message, sizeof(al.message), "service %s is %s", service, message);
	return gp_store_alert_raise(a->store, &al, &fresh);
}

int gp_alerts_service_recovered(struct gp_alerts *a, const char *service)
{
	char object[GP_AUDIT_OBJECT_MAX];

	snprintf(object, sizeof(object), "service %s", service);
	return gp_store_alert_clear(a->store, "service.crash-loop", object);
}

/* ---- the loop's condition ----------------------------------------------- */

int gp_alerts_unplaced(struct gp_alerts *a, const struct gp_task *t, const char *why)
{
	char object[GP_AUDIT_OBJECT_MAX];
	struct gp_alert al;
	bool fresh;
	int r;

	snprintf(object, sizeof(object), "task %" PRId64, t->id);
	if (conds_find(&a->unplaced, "task.unplaced", object) >= 0)
		return 0;
	al = alert_make(GP_ALERT_CRITICAL, "task.unplaced", object, t->tenant);
	snprintf(al.message, sizeof(al.message), "task %" PRId64 " (%s): %s", t->id, t->name,
		 why);
	r = gp_store_alert_raise(a->store, &al, &fresh);
	return r < 0 ? r : conds_push(&a->unplaced, &al);
}

int gp_alerts_placed(struct gp_alerts *a, int64_t task)
{
	char object[GP_AUDIT_OBJECT_MAX];
	int i;

	snprintf(object, sizeof(object), "task %" PRId64, task);
	i = conds_find(&a->unplaced, "task.unplaced", object);
	if (i < 0)
		return 0;
	a->unplaced.c[i] = a->unplaced.c[--a->unplaced.n];
	return gp_store_alert_clear(a->store, "task.unplaced", object);
}

int gp_alerts_unplaced_count(const struct gp_alerts *a)
{
	return a->unplaced.n;
}

/* ---- the log events -------------------------------------------------------- */

static bool raised_has(const struct raised *r, int64_t task)
{
	for (int i = 0; i < r->n; i++)
		if (r->task[i] == task)
			return true;
	return false;
}

static void raised_add(struct raised *r, int64_t task)
{
	r->task[r->next] = task;
	r->next = (r->next + 1) % RAISED_MAX;
	if (r->n < RAISED_MAX)
		r->n++;
}

/* A warning of `kind` on task `task` with its message, for the task's
 * tenant (the pool's when the store has no such task). */
static int task_event(struct gp_alerts *a, const char *kind, int64_t task,
		      const char *message)
{
	char object[GP_AUDIT_OBJECT_MAX];
	struct gp_alert al;
	struct gp_task t;
	bool fresh;
	int r = gp_store_task_get(a->store, task, &t);

	if (r < 0 && r != -ENOENT)
		return r;
	snprintf(object, sizeof(object), "task %" PRId64, task);
	al = alert_make(GP_ALERT_WARNING, kind, object, r == 0 ? t.tenant : 0);
	snprintf(al.message, sizeof(al.message), "%s", message);
	return gp_store_alert_raise(a->store, &al, &fresh);
}

int gp_alerts_log_capped(struct gp_alerts *a, int64_t task, uint64_t cap_bytes,
			 uint64_t dropped_bytes)
{
	char cap[32], dropped[32], message[GP_REASON_MAX];
	int r;

	if (!dropped_bytes || raised_has(&a->capped, task))
		return 0;
	gp_size_text(cap_bytes, cap, sizeof(cap));
	gp_size_text(dropped_bytes, dropped, sizeof(dropped));
	snprintf(message, sizeof(message),
		 "task %" PRId64 "'s log passed its cap of %s; its oldest %s were "
		 "dropped, and more will be as it writes (the server's --log-max): raise "
		 "it, or have the task log less",
		 task, cap, dropped);
	r = task_event(a, "task.log-capped", task, message);
	if (r == 0)
		raised_add(&a->capped, task);
	return r;
}

int gp_alerts_log_lost(struct gp_alerts *a, int64_t task, uint64_t lost_bytes, int error,
		       bool floor)
{
	char lost[32], message[GP_REASON_MAX];
	int r;

	if ((!lost_bytes && !error) || raised_has(&a->lost, task))
		return 0;
	gp_size_text(lost_bytes, lost, sizeof(lost));
	snprintf(message, sizeof(message),
		 "task %" PRId64 "'s output could not be written to its log (%s): %s of "
		 "it were dropped; free space where the server's --log-dir is, or put the "
		 "logs on a filesystem of their own",
		 task,
		 floor ? "the free space there is under the server's --log-free-min"
		 : error ? strerror(-error)
			 : "a write error",
		 lost);
	r = task_event(a, "task.log-lost", task, message);
	if (r == 0)
		raised_add(&a->lost, task);
	return r;
}

/* ---- the conditions ----------------------------------------------------- */

static bool was_active(const struct gp_alerts *a, const char *kind, const char *object)
{
	return conds_find(&a->active, kind, object) >= 0;
}

/* Above the line, or still above the clearing line when already raised. */
static bool above(double pct, bool raised)
{
	return pct > GP_ALERT_HIGH_PCT || (pct >= GP_ALERT_CLEAR_PCT && raised);
}

static bool high(const struct gp_alerts *a, const char *kind, const char *object,
		 double pct)
{
	return above(pct, was_active(a, kind, object));
}

static double pct_of(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

double gp_quota_held_pct(const struct gp_quota_held *u)
{
	double mem = pct_of(u->mem_mib, u->mem_quota_mib),
	       pct = pct_of(u->pct, u->pct_quota);

	return mem > pct ? mem : pct;
}

bool gp_alerts_quota_high(const struct gp_quota_held *u, bool raised)
{
	if (!u->mem_quota_mib && !u->pct_quota)
		return false; /* no quota: not limited */
	return above(gp_quota_held_pct(u), raised);
}

/* The device's busiest resource: memory in use (NVML), or the memory or
 * compute its slices hold, in percent; each part in parts[3]. */
static int device_use(const struct gp_meter_device *d, int parts[3])
{
	parts[0] = (int)pct_of(d->mem_used_mib, d->mem_total_mib);
	parts[1] = (int)pct_of(d->alloc_mem_mib, d->mem_total_mib);
	parts[2] = d->alloc_pct > 1000 ? 1000 : (int)d->alloc_pct;
	return parts[0] > parts[1] ? (parts[0] > parts[2] ? parts[0] : parts[2])
				   : (parts[1] > parts[2] ? parts[1] : parts[2]);
}

static int device_busy(const struct gp_alerts *a, const struct gp_agent_device *dev,
		       const struct gp_meter_device *d, const char *object,
		       struct conds *now)
{
	struct gp_alert al;
	int part[3], use = device_use(d, part);

	if (!high(a, "device.busy", object, use))
		return 0;
	al = alert_make(GP_ALERT_WARNING, "device.busy", object, 0);
	snprintf(al.message, sizeof(al.message),
		 "%.48s (%.44s) is %d %% used: memory in use %d %%, slices hold %d %% of "
		 "its "
		 "memory and %d %% of its compute",
		 dev->name, dev->uuid, use, part[0], part[1], part[2]);
	return conds_push(now, &al);
}

static int device_idle(const struct gp_agent_device *dev, const struct gp_meter_device *d,
		       const char *object, struct conds *now)
{
	struct gp_alert al;

	if (!d->window_full || d->util_avg_pct >= GP_ALERT_IDLE_PCT)
		return 0;
	al = alert_make(GP_ALERT_INFO, "device.idle", object, 0);
	snprintf(al.message, sizeof(al.message),
		 "%.48s (%.44s) averaged %d %% utilization over the window: pack more "
		 "work "
		 "on it, or lend it",
		 dev->name, dev->uuid, (int)d->util_avg_pct);
	return conds_push(now, &al);
}

static int device_conds(const struct gp_alerts *a, const struct gp_meter *m, unsigned i,
			struct conds *now)
{
	const struct gp_agent_device *dev = &gp_meter_node(m)->device[i];
	const struct gp_meter_device *d = gp_meter_device(m, i);
	char object[GP_AUDIT_OBJECT_MAX];
	int r;

	if (!d->ok)
		return 0;
	snprintf(object, sizeof(object), "device %.56s", dev->uuid);
	r = device_busy(a, dev, d, object, now);
	return r < 0 ? r : device_idle(dev, d, object, now);
}

/* What the check reads from the store. */
struct quotas {
	struct gp_tenant *tenant;
	int tenants;
	struct gp_model_quota *model;
	int models;
};

/* quota.high on `object` for tenant t's quota u; `which` names a model
 * quota ("T4 ") or is "" for the overall one. */
static int quota_cond(const struct gp_alerts *a, const struct gp_tenant *t,
		      const char *object, const char *which, const struct gp_quota_held *u,
		      struct conds *now)
{
	struct gp_alert al;

	if (!gp_alerts_quota_high(u, was_active(a, "quota.high", object)))
		return 0;
	al = alert_make(GP_ALERT_WARNING, "quota.high", object, t->id);
	snprintf(al.message, sizeof(al.message),
		 "tenant %s uses %.0f %% of its %smemory quota (%" PRIu64 " of %" PRIu64
		 " MiB) and %.0f %% of its %scompute quota (%" PRIu64 " of %" PRIu64
		 " %%)",
		 t->name, pct_of(u->mem_mib, u->mem_quota_mib), which, u->mem_mib,
		 u->mem_quota_mib, pct_of(u->pct, u->pct_quota), which, u->pct,
		 u->pct_quota);
	return conds_push(now, &al);
}

static int tenant_conds(const struct gp_alerts *a, const struct gp_meter *m,
			const struct gp_tenant *t, struct conds *now)
{
	struct gp_quota quota = gp_tenant_quota(t);
	struct gp_quota_held u = { .mem_quota_mib = gp_quota_limit(&quota).mem_mib,
				   .pct_quota = gp_quota_limit(&quota).compute_pct };
	char object[GP_AUDIT_OBJECT_MAX];

	gp_meter_tenant_use(m, t->id, &u.mem_mib, &u.pct);
	snprintf(object, sizeof(object), "tenant %.55s", t->name);
	return quota_cond(a, t, object, "", &u, now);
}

/* The model quota q->model[i]. */
static int model_conds(const struct gp_alerts *a, const struct gp_meter *m,
		       const struct quotas *q, int i, struct conds *now)
{
	const struct gp_model_quota *mq = &q->model[i];
	struct gp_quota quota = gp_model_quota_quota(mq);
	struct gp_quota_held u = { .mem_quota_mib = gp_quota_limit(&quota).mem_mib,
				   .pct_quota = gp_quota_limit(&quota).compute_pct };
	char object[GP_AUDIT_OBJECT_MAX], which[GP_STORE_NAME_MAX + 1];
	int k = 0;

	while (k < q->tenants && q->tenant[k].id != mq->tenant)
		k++;
	if (k == q->tenants)
		return 0;
	gp_meter_model_use(m, q->model, q->models, i, &u.mem_mib, &u.pct);
	snprintf(object, sizeof(object), "tenant %.36s/%.19s", q->tenant[k].name,
		 mq->model);
	snprintf(which, sizeof(which), "%s ", mq->model);
	return quota_cond(a, &q->tenant[k], object, which, &u, now);
}

static int task_conds(const struct gp_meter_task *t, unsigned samples, struct conds *now)
{
	char object[GP_AUDIT_OBJECT_MAX];
	struct gp_alert al;

	if (!t->mem_growing)
		return 0;
	snprintf(object, sizeof(object), "task %" PRId64, t->id);
	al = alert_make(GP_ALERT_WARNING, "task.memory-grows", object, t->tenant);
	snprintf(al.message, sizeof(al.message),
		 "task %" PRId64
		 "'s memory rose in each of the last %u samplings, to %" PRIu64
		 " MiB: a leak?",
		 t->id, samples, t->mem_used_mib);
	return conds_push(now, &al);
}

static int conds_collect(const struct gp_alerts *a, const struct gp_meter *m,
			 const struct quotas *q, struct conds *now)
{
	int r = 0;

	for (unsigned i = 0; r == 0 && i < gp_meter_node(m)->devices; i++)
		r = device_conds(a, m, i, now);
	for (int i = 0; r == 0 && i < q->tenants; i++)
		r = tenant_conds(a, m, &q->tenant[i], now);
	for (int i = 0; r == 0 && i < q->models; i++)
		r = model_conds(a, m, q, i, now);
	for (int i = 0; r == 0 && i < gp_meter_tasks(m); i++)
		r = task_conds(gp_meter_task(m, i), gp_meter_grow_samples(m), now);
	for (int i = 0; r == 0 && i < a->unplaced.n; i++)
		r = conds_push(now, &a->unplaced.c[i].alert);
	return r;
}

/* ---- reconciling -------------------------------------------------------- */

static int reconcile(struct gp_alerts *a, const struct conds *now)
{
	bool fresh;
	int r = 0;

	for (int i = 0; r == 0 && i < now->n; i++) {
		struct gp_alert al = now->c[i].alert;

		if (was_active(a, al.kind, al.object))
			continue;
		r = gp_store_alert_raise(a->store, &al, &fresh);
		if (r == 0)
			r = conds_push(&a->active, &al);
	}
	for (int i = 0; r == 0 && i < a->active.n;) {
		const struct gp_alert *al = &a->active.c[i].alert;

		if (conds_find(now, al->kind, al->object) >= 0) {
			i++;
			continue;
		}
		r = gp_store_alert_clear(a->store, al->kind, al->object);
		a->active.c[i] = a->active.c[--a->active.n];
	}
	return r;
}

int gp_alerts_check(struct gp_alerts *a, const struct gp_meter *m)
{
	struct quotas q = {0};
	struct conds now = {0};
	int r = gp_store_tenant_list(a->store, &q.tenant, &q.tenants);

	if (r == 0)
		r = gp_store_model_quota_list(a->store, -1, &q.model, &q.models);
	if (r == 0)
		r = active_load(a);
	if (r == 0)
		r = conds_collect(a, m, &q, &now);
	if (r == 0)
		r = reconcile(a, &now);
	free(q.tenant);
	free(q.model);
	free(now.c);
	return r;
}
