/* service.c — the services' controller: replicas kept, replaced and
 * scaled (service.h). */
#include "server/service.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"

#define REPLICA_QUICK_MS 10000 /* a replica that fails sooner counts as a crash */
#define WAIT_MAX	 64    /* samplings, after repeated crashes */
#define CRASH_LOOP	 3     /* crashes in a row: a crash loop (a critical alert) */

struct service {
	struct gp_service_row row;
	struct gp_service_spec spec;
	struct gp_scale_state scale;
	int64_t known[GP_SERVICE_REPLICAS_MAX]; /* its replicas at the last tick */
	int n_known;
	unsigned crashes, wait; /* in a row; samplings left before a replacement */
	/* After a crash: "crash-looping: last exit ..." (shown), else "". */
	char crash[GP_REASON_MAX];
	double util;		/* fed to the autoscaler last; < 0: none yet */
	char last[GP_SCALE_REASON_MAX + 16];
};

struct gp_services {
	struct gp_taskops ops;
	struct gp_service_engine engine;
	struct gp_alerts *alerts;
	struct service *v;
	int n, cap;
};

/* ---- the spec as text ------------------------------------------------------ */

json_t *gp_service_spec_json(const struct gp_service_spec *s)
{
	const struct gp_task *t = &s->task;
	const struct gp_scale_policy *p = &s->policy;

	return json_pack(
		"{s:{s:s, s:s, s:s, s:s, s:I, s:I, s:b, s:s, s:s, s:I, s:s}, s:b, s:s, "
		"s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
		"task", "name", t->name, "command", t->command, "workdir", t->workdir,
		"template", t->template_name, "mem_mib", (json_int_t)t->mem_mib,
		"compute_pct", (json_int_t)t->compute_pct, "hard", t->hard, "model",
		t->model, "runtime", t->runtime, "priority", (json_int_t)t->priority, "kind", t->kind,
		"autoscale", s->autoscale, "deployment", s->deployment, "policy", "min_replicas",
		(json_int_t)p->min_replicas, "max_replicas", (json_int_t)p->max_replicas,
		"out_pct", (json_int_t)p->out_pct, "in_pct", (json_int_t)p->in_pct,
		"margin_pct", (json_int_t)p->margin_pct, "out_window_s",
		(json_int_t)p->out_window_s, "in_window_s", (json_int_t)p->in_window_s,
		"cooldown_s", (json_int_t)p->cooldown_s, "step_pct",
		(json_int_t)p->step_pct, "share_min_pct", (json_int_t)p->share_min_pct,
		"share_max_pct", (json_int_t)p->share_max_pct);
}

static void text_of(json_t *o, const char *key, char *buf, size_t size)
{
	snprintf(buf, size, "%s", json_string_value(json_object_get(o, key)) ?: "");
}

static unsigned uint_of(json_t *o, const char *key)
{
	return (unsigned)json_integer_value(json_object_get(o, key));
}

int gp_service_spec_parse(const char *text, struct gp_service_spec *ret)
{
	json_auto_t *root = json_loads(text, 0, NULL);
	json_t *t = json_object_get(root, "task"), *p = json_object_get(root, "policy");
	struct gp_service_spec s = {0};
	char err[GP_REASON_MAX];

	if (!json_is_object(t) || !json_is_object(p))
		return -EINVAL;
	text_of(t, "name", s.task.name, sizeof(s.task.name));
	text_of(t, "command", s.task.command, sizeof(s.task.command));
	text_of(t, "workdir", s.task.workdir, sizeof(s.task.workdir));
	text_of(t, "template", s.task.template_name, sizeof(s.task.template_name));
	text_of(t, "model", s.task.model, sizeof(s.task.model));
	text_of(t, "runtime", s.task.runtime, sizeof(s.task.runtime));
	text_of(t, "kind", s.task.kind, sizeof(s.task.kind));
	s.task.mem_mib = (uint64_t)json_integer_value(json_object_get(t, "mem_mib"));
	s.task.compute_pct = uint_of(t, "compute_pct");
	s.task.hard = json_is_true(json_object_get(t, "hard"));
	s.task.priority = uint_of(t, "priority");
	s.task.devices = 1;
	s.autoscale = json_is_true(json_object_get(root, "autoscale"));
	text_of(root, "deployment", s.deployment, sizeof(s.deployment));
	s.policy = (struct gp_scale_policy){
		.min_replicas = uint_of(p, "min_replicas"),
		.max_replicas = uint_of(p, "max_replicas"),
		.out_pct = uint_of(p, "out_pct"),
		.in_pct = uint_of(p, "in_pct"),
		.margin_pct = uint_of(p, "margin_pct"),
		.out_window_s = uint_of(p, "out_window_s"),
		.in_window_s = uint_of(p, "in_window_s"),
		.cooldown_s = uint_of(p, "cooldown_s"),
		.step_pct = uint_of(p, "step_pct"),
		.share_min_pct = uint_of(p, "share_min_pct"),
		.share_max_pct = uint_of(p, "share_max_pct"),
	};
	if ((!s.task.command[0] && !s.deployment[0]) ||
	    gp_scale_policy_check(&s.policy, err, sizeof(err)) < 0)
		return -EINVAL;
	*ret = s;
	return 0;
}

/* ---- the engine of one machine -------------------------------------------- */

static bool meter_effective(void *ctx, int64_t task, double *ret)
{
	const struct gp_meter_task *mt = gp_meter_task_of(ctx, task);

	if (!mt || !mt->sampled)
		return false;
	*ret = mt->effective;
	return true;
}

static unsigned meter_grow_room(void *ctx, int64_t task)
{
	const struct gp_meter_task *mt = gp_meter_task_of(ctx, task);
	unsigned room = 100;

	for (unsigned d = 0; mt && d < mt->devices; d++) {
		const struct gp_meter_device *dev = gp_meter_device(ctx, mt->device[d]);
		unsigned free_pct = dev && dev->alloc_pct < 100 ? 100 - dev->alloc_pct : 0;

		room = free_pct < room ? free_pct : room;
	}
	return room;
}

static void meter_tenant_use(void *ctx, int64_t tenant, uint64_t *ret_mem_mib,
			     uint64_t *ret_pct)
{
	gp_meter_tenant_use(ctx, tenant, ret_mem_mib, ret_pct);
}

struct gp_service_engine gp_service_engine_of_meter(const struct gp_meter *m)
{
	return (struct gp_service_engine){.effective = meter_effective,
					  .grow_room = meter_grow_room,
					  .tenant_use = meter_tenant_use,
					  .ctx = (void *)m};
}

/* ---- the controller's list ------------------------------------------------- */

static void replicas_keep(struct gp_services *sv, struct service *v,
			  const struct gp_pool_task *tasks, int n);

static int service_put(struct gp_services *sv, const struct gp_service_row *row)
{
	struct service v = {.row = *row, .util = -1};

	if (gp_service_spec_parse(row->spec, &v.spec) < 0) {
		fprintf(stderr,
			"gpupool server: service %s (id %lld): its spec in the store "
			"cannot be read; it is not kept\n",
			row->name, (long long)row->id);
		return 0;
	}
	if (sv->n == sv->cap) {
		int cap = sv->cap ? 2 * sv->cap : 8;
		struct service *bigger = realloc(sv->v, (size_t)cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		sv->v = bigger;
		sv->cap = cap;
	}
	sv->v[sv->n++] = v;
	return 0;
}

int gp_services_new(const struct gp_taskops *ops, const struct gp_service_engine *engine,
		    struct gp_alerts *alerts, struct gp_services **ret)
{
	struct gp_services *sv = calloc(1, sizeof(*sv));
	struct gp_service_row *rows = NULL;
	int n = 0, r;

	if (!sv)
		return -ENOMEM;
	sv->ops = *ops;
	sv->engine = *engine;
	sv->alerts = alerts;
	r = gp_store_service_list(ops->store, -1, &rows, &n);
	for (int i = 0; r == 0 && i < n; i++)
		r = service_put(sv, &rows[i]);
	for (int i = sv->n - 1; r == 0 && i >= 0; i--)  /* another engine's */
		if (!sv->v[i].spec.deployment[0] != !engine->scale)
			sv->v[i] = sv->v[--sv->n];
	free(rows);
	if (r < 0) {
		gp_services_free(sv);
		return r;
	}
	*ret = sv;
	return 0;
}

struct gp_services *gp_services_free(struct gp_services *sv)
{
	if (sv)
		free(sv->v);
	free(sv);
	return NULL;
}

int64_t gp_services_of_deployment(const struct gp_services *sv, int64_t tenant,
				  const char *deployment)
{
	for (int i = 0; sv && i < sv->n; i++)
		if (sv->v[i].row.tenant == tenant &&
		    !strcmp(sv->v[i].spec.deployment, deployment))
			return sv->v[i].row.id;
	return 0;
}

static struct service *service_named(struct gp_services *sv, int64_t tenant,
				     const char *name)
{
	for (int i = 0; i < sv->n; i++)
		if (sv->v[i].row.tenant == tenant && !strcmp(sv->v[i].row.name, name))
			return &sv->v[i];
	return NULL;
}

/* The name a service's writes are audited under. */
static void who_of(const struct service *v, char *buf, size_t size)
{
	snprintf(buf, size, "service:%.*s", (int)size - 9, v->row.name);
}

static int write_add(struct gp_store *s, const void *row)
{
	return gp_store_service_add(s, (struct gp_service_row *)row);
}

static void object_of(const struct gp_service_row *row, char *buf, size_t size)
{
	snprintf(buf, size, "service %.*s", (int)size - 9, row->name);
}

/* A step: the service's new replicas and share, and the step's row. */
struct step_write {
	const struct gp_service_row *row;
	struct gp_service_step step;
};

static int write_scale(struct gp_store *s, const void *arg)
{
	struct step_write *w = (struct step_write *)arg;
	int r = gp_store_service_scale(s, w->row);

	return r < 0 ? r : gp_store_service_step_add(s, &w->step);
}

/* Writes row (the service's replicas and share after a step) with the
 * step's row and its audit row service.scale, all or none. */
static int step_record(struct gp_services *sv, const struct gp_service_row *row,
		       const char *who, const char *step, const char *reason)
{
	struct step_write w = {.row = row,
			       .step = {.service = row->id, .replicas = row->replicas,
					.share_pct = row->share_pct}};
	char object[GP_AUDIT_OBJECT_MAX], detail[GP_REASON_MAX];

	snprintf(w.step.who, sizeof(w.step.who), "%s", who);
	snprintf(w.step.step, sizeof(w.step.step), "%s", step);
	snprintf(w.step.reason, sizeof(w.step.reason), "%s", reason);
	object_of(row, object, sizeof(object));
	snprintf(detail, sizeof(detail), "%s: %s", step, reason);
	return gp_store_audited(sv->ops.store, write_scale, &w, who, "service.scale", object,
				detail);
}

static int write_remove(struct gp_store *s, const void *row)
{
	return gp_store_service_remove(s, ((const struct gp_service_row *)row)->id);
}

int gp_services_create(struct gp_services *sv, const char *who, int64_t tenant,
		       const char *name, unsigned replicas,
		       const struct gp_service_spec *spec, struct gp_service_row *ret)
{
	struct gp_service_row row = {.tenant = tenant,
				     .replicas = replicas,
				     .share_pct = spec->task.compute_pct};
	char object[GP_AUDIT_OBJECT_MAX], detail[GP_REASON_MAX], *text;
	json_t *j;
	int r, own = 0;

	for (int i = 0; i < sv->n; i++)
		own += sv->v[i].row.tenant == tenant;
	if (own >= GP_SERVICES_PER_TENANT)
		return -EDQUOT;
	if (spec->deployment[0] && gp_services_of_deployment(sv, tenant, spec->deployment))
		return -EBUSY;
	j = gp_service_spec_json(spec);
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!text)
		return -ENOMEM;
	snprintf(row.name, sizeof(row.name), "%s", name);
	snprintf(row.spec, sizeof(row.spec), "%s", text);
	r = strlen(text) < sizeof(row.spec) ? 0 : -E2BIG;
	free(text);
	if (r < 0)
		return r;
	object_of(&row, object, sizeof(object));
	snprintf(detail, sizeof(detail),
		 "%u replica(s)%s%s of %llu MiB, %u %% (%u to %u; autoscale %s, out %u %%/%u "
		 "s, in %u %%/%u s, share up to %u %%)",
		 replicas, spec->deployment[0] ? " of Deployment " : "", spec->deployment,
		 (unsigned long long)spec->task.mem_mib, spec->task.compute_pct,
		 spec->policy.min_replicas, spec->policy.max_replicas,
		 spec->autoscale ? "on" : "off", spec->policy.out_pct,
		 spec->policy.out_window_s, spec->policy.in_pct, spec->policy.in_window_s,
		 spec->policy.share_max_pct);
	r = gp_store_audited(sv->ops.store, write_add, &row, who, "service.create",
			     object, detail);
	if (r == 0)
		r = service_put(sv, &row);
	if (r < 0)
		return r;
	if (spec->deployment[0])
		sv->engine.scale(sv->engine.ctx, tenant, spec->deployment, replicas);
	else
		replicas_keep(sv, &sv->v[sv->n - 1], NULL, 0);
	if (ret)
		*ret = row;
	return 0;
}

/* ---- replicas -------------------------------------------------------------- */

/* Cancels replica pt (a row made of the pool's copy). */
static int replica_cancel(struct gp_services *sv, const struct service *v,
			  const struct gp_pool_task *pt)
{
	char who[GP_STORE_NAME_MAX];
	struct gp_task t;

	who_of(v, who, sizeof(who));
	gp_pool_task_row(pt, &t);
	return gp_taskops_cancel(&sv->ops, who, &t);
}

int gp_services_remove(struct gp_services *sv, const char *who, int64_t tenant,
		       const char *name)
{
	struct gp_pool_task tasks[GP_SERVICE_REPLICAS_MAX];
	struct service *v = service_named(sv, tenant, name);
	char object[GP_AUDIT_OBJECT_MAX];
	int n, r;

	if (!v)
		return -ENOENT;
	object_of(&v->row, object, sizeof(object));
	r = gp_store_audited(sv->ops.store, write_remove, &v->row, who, "service.remove",
			     object,
			     v->spec.deployment[0]
				     ? "its Deployment is left as it is, no longer scaled"
				     : "its replicas are cancelled");
	if (r < 0)
		return r;
	n = v->spec.deployment[0] ? 0 : gp_pool_service_tasks(sv->ops.pool, v->row.id, tasks,
				  GP_SERVICE_REPLICAS_MAX);
	for (int i = 0; i < n; i++)
		if (!tasks[i].cancel_by[0])
			replica_cancel(sv, v, &tasks[i]);
	*v = sv->v[--sv->n];
	return 0;
}

/* The service is well again (a replica ended otherwise than by a
 * crash, or has run past REPLICA_QUICK_MS): its crash count and status
 * go, and its crash-loop alert if it had one. */
static void crashes_over(struct gp_services *sv, struct service *v)
{
	if (v->crashes >= CRASH_LOOP && sv->alerts)
		gp_alerts_service_recovered(sv->alerts, v->row.name);
	v->crashes = v->wait = 0;
	v->crash[0] = '\0';
}

/* Replica t failed soon after its start (or before): replacements wait
 * 2, 4, ... up to WAIT_MAX samplings, the status says so, and from
 * CRASH_LOOP in a row a critical alert does. */
static void crashed(struct gp_services *sv, struct service *v, const struct gp_task *t)
{
	v->crashes++;
	v->wait = v->crashes >= 6 ? WAIT_MAX : 1u << v->crashes;
	snprintf(v->crash, sizeof(v->crash),
		 "crash-looping: last exit %d (%.120s) %.1f s after its start, %u replica(s) in "
		 "a row; the next in %u sampling(s)",
		 t->exit_code, t->reason[0] ? t->reason : "no reason given",
		 t->started ? (double)(t->ended - t->started) / 1000 : 0.0, v->crashes,
		 v->wait);
	if (v->crashes >= CRASH_LOOP && sv->alerts)
		gp_alerts_service_crash_loop(sv->alerts, v->row.tenant, v->row.name, v->crash);
}

int gp_services_set(struct gp_services *sv, const char *who, int64_t tenant,
		    const char *name, unsigned replicas, const char *why)
{
	struct gp_pool_task tasks[GP_SERVICE_REPLICAS_MAX];
	struct service *v = service_named(sv, tenant, name);
	struct gp_service_row row;
	char reason[GP_REASON_MAX];
	int n, r;

	if (!v)
		return -ENOENT;
	if (replicas < v->spec.policy.min_replicas || replicas > v->spec.policy.max_replicas)
		return -ERANGE;
	if (replicas == v->row.replicas)
		return 0;
	row = v->row;
	row.replicas = replicas;
	snprintf(reason, sizeof(reason), "replicas %u -> %u by %s%s%.200s", v->row.replicas,
		 replicas, who, why && *why ? ": " : "", why ? why : "");
	r = step_record(sv, &row, who, "set", reason);
	if (r < 0)
		return r;
	v->row = row;
	v->scale.stepped = true; /* the autoscaler's cooldown counts from it */
	v->scale.last_step_ms = gp_unix_ms();
	if (v->spec.deployment[0]) {
		sv->engine.scale(sv->engine.ctx, tenant, v->spec.deployment, replicas);
		return 0;
	}
	n = gp_pool_service_tasks(sv->ops.pool, v->row.id, tasks, GP_SERVICE_REPLICAS_MAX);
	replicas_keep(sv, v, tasks, n);
	return 0;
}

/* The replicas that left since the last tick: one that failed soon
 * after it started (or before) counts as a crash, and repeated crashes
 * hold back replacements; any other end resets the count. */
static void replicas_ended(struct gp_services *sv, struct service *v,
			   const struct gp_pool_task *tasks, int n, int64_t now_ms)
{
	for (int i = 0; i < v->n_known; i++) {
		struct gp_task t;
		bool present = false;

		for (int j = 0; j < n && !present; j++)
			present = tasks[j].id == v->known[i];
		if (present || gp_store_task_get(sv->ops.store, v->known[i], &t) < 0)
			continue;
		if ((t.state == GP_TASK_FAILED || t.state == GP_TASK_LOST) &&
		    (!t.started || t.ended - t.started < REPLICA_QUICK_MS))
			crashed(sv, v, &t);
		else if (v->crashes)
			crashes_over(sv, v);
	}
	for (int j = 0; j < n && v->crashes; j++)
		if (tasks[j].state == GP_TASK_RUNNING && tasks[j].started &&
		    now_ms - tasks[j].started >= REPLICA_QUICK_MS)
			crashes_over(sv, v);
	v->n_known = 0;
	for (int j = 0; j < n && v->n_known < GP_SERVICE_REPLICAS_MAX; j++)
		v->known[v->n_known++] = tasks[j].id;
}

/* Submits one replica, when the queue's bounds leave room (a tenant's
 * services count against its part of the queue as its own submissions
 * do); false when they do not. */
static bool replica_add(struct gp_services *sv, struct service *v, unsigned live)
{
	char who[GP_STORE_NAME_MAX], note[GP_REASON_MAX];
	struct gp_task t = v->spec.task;

	who_of(v, who, sizeof(who));
	if (gp_taskops_room(&sv->ops, v->row.tenant, who, note, sizeof(note)) < 0)
		return false;
	t.tenant = v->row.tenant;
	t.service = v->row.id;
	t.compute_pct = v->row.share_pct;
	snprintf(t.reason, sizeof(t.reason), "waiting for the scheduler");
	snprintf(note, sizeof(note), "; replica %u of %u of service %s%s", live + 1,
		 v->row.replicas, v->row.name,
		 v->crashes ? " (after replicas that failed at their start)" : "");
	if (gp_taskops_submit(&sv->ops, who, &t, NULL, note) == 0 &&
	    v->n_known < GP_SERVICE_REPLICAS_MAX)
		v->known[v->n_known++] = t.id;
	return true;
}

/* Live replicas: neither ended nor being cancelled. Those past the
 * replicas wanted are cancelled, the newest (a queued one) first; those
 * missing are submitted, or after crashes one, when the wait is over. */
static void replicas_keep(struct gp_services *sv, struct service *v,
			  const struct gp_pool_task *tasks, int n)
{
	unsigned live = 0;

	for (int i = 0; i < n; i++)
		live += !tasks[i].cancel_by[0];
	for (int i = n - 1; i >= 0 && live > v->row.replicas; i--)
		if (!tasks[i].cancel_by[0] && replica_cancel(sv, v, &tasks[i]) == 0)
			live--;
	if (live >= v->row.replicas || live >= GP_SERVICE_REPLICAS_MAX)
		return;
	if (v->wait) {
		v->wait--;
		return;
	}
	while (replica_add(sv, v, live++) && !v->crashes && live < v->row.replicas &&
	       live < GP_SERVICE_REPLICAS_MAX)
		;
}

/* ---- scaling --------------------------------------------------------------- */

/* What the running replicas used of their shares, on average; false
 * when none was sampled. */
static bool util_of(const struct gp_service_engine *e, const struct gp_pool_task *tasks,
		    int n, double *ret)
{
	double sum = 0, one;
	int k = 0;

	for (int i = 0; i < n; i++)
		if (!tasks[i].cancel_by[0] && e->effective(e->ctx, tasks[i].id, &one)) {
			sum += one;
			k++;
		}
	if (k)
		*ret = sum / k;
	return k > 0;
}

/* How far every running replica's share may grow on its devices. */
static unsigned grow_room(const struct gp_service_engine *e,
			  const struct gp_pool_task *tasks, int n)
{
	unsigned room = 100;

	for (int i = 0; i < n; i++) {
		unsigned free_pct = e->grow_room(e->ctx, tasks[i].id);

		room = free_pct < room ? free_pct : room;
	}
	return room;
}

/* The most replicas the tenant's overall quota holds, at the service's
 * share: what the quota leaves beside the tenant's other running tasks
 * (the core's rule). */
static unsigned quota_replicas(struct gp_services *sv, const struct service *v,
			       const struct gp_pool_task *tasks, int n)
{
	struct gp_quota_use held = {0}, own = {0};
	struct gp_tenant t;
	struct gp_quota quota;

	if (gp_pool_tenant_get(sv->ops.pool, v->row.tenant, &t) < 0)
		return v->row.replicas; /* unknown now: no step out */
	sv->engine.tenant_use(sv->engine.ctx, t.id, &held.mem_mib, &held.compute_pct);
	for (int j = 0; j < n; j++)
		if (tasks[j].state == GP_TASK_RUNNING)
			own = gp_quota_sum(own, (struct gp_quota_use){tasks[j].mem_mib,
								     tasks[j].compute_pct});
	held.mem_mib = held.mem_mib > own.mem_mib ? held.mem_mib - own.mem_mib : 0;
	held.compute_pct = held.compute_pct > own.compute_pct ? held.compute_pct - own.compute_pct
							      : 0;
	quota = gp_tenant_quota(&t);
	return gp_quota_room(&quota, held,
			     (struct gp_quota_use){v->spec.task.mem_mib, v->row.share_pct});
}

/* Every replica's share to share_pct: live for the running (when the
 * scheduler's rules let it), at once for the queued. */
static void shares_set(struct gp_services *sv, const struct service *v,
		       const struct gp_pool_task *tasks, int n, unsigned share_pct,
		       const char *reason)
{
	char who[GP_STORE_NAME_MAX], why[GP_REASON_MAX];

	who_of(v, who, sizeof(who));
	for (int i = 0; i < n; i++) {
		struct gp_task t;
		int borrowed;

		if (tasks[i].cancel_by[0] || tasks[i].compute_pct == share_pct)
			continue;
		gp_pool_task_row(&tasks[i], &t);
		if (v->spec.deployment[0])
			sv->engine.share(sv->engine.ctx, &t, share_pct);
		else if (gp_taskops_share_check(&sv->ops, &t, share_pct, &borrowed, why,
					   sizeof(why)) == 0)
			gp_taskops_change(&sv->ops, who, &t, share_pct, t.priority,
					  reason, borrowed);
	}
}

/* The autoscaler's step, taken and recorded. */
static void scale_take(struct gp_services *sv, struct service *v,
		       const struct gp_pool_task *tasks, int n,
		       const struct gp_scale_decision *d)
{
	char who[GP_STORE_NAME_MAX];
	struct gp_service_row row = v->row;

	if (d->step == GP_SCALE_GROW || d->step == GP_SCALE_SHRINK)
		row.share_pct = d->share_pct;
	else
		row.replicas = d->replicas;
	who_of(v, who, sizeof(who));
	if (step_record(sv, &row, who, gp_scale_step_name(d->step), d->reason) < 0)
		return;
	v->row = row;
	if (d->step == GP_SCALE_GROW || d->step == GP_SCALE_SHRINK)
		shares_set(sv, v, tasks, n, row.share_pct, d->reason);
	else if (v->spec.deployment[0])
		sv->engine.scale(sv->engine.ctx, v->row.tenant, v->spec.deployment,
				 row.replicas);
}

static void scale(struct gp_services *sv, struct service *v,
		  const struct gp_pool_task *tasks, int n, int64_t now_ms)
{
	struct gp_scale_decision d;
	struct gp_scale_view view;
	double util;

	if (!util_of(&sv->engine, tasks, n, &util))
		return;
	view = (struct gp_scale_view){
		.util = util,
		.replicas = v->row.replicas,
		.share_pct = v->row.share_pct,
		.grow_room_pct = grow_room(&sv->engine, tasks, n),
		.quota_replicas = quota_replicas(sv, v, tasks, n),
	};
	v->util = util;
	gp_scale_decide(&v->spec.policy, &v->scale, &view, now_ms, &d);
	if (d.step == GP_SCALE_HOLD)
		return;
	snprintf(v->last, sizeof(v->last), "%s: %s", gp_scale_step_name(d.step),
		 d.reason);
	scale_take(sv, v, tasks, n, &d);
}

void gp_services_tick(struct gp_services *sv, int64_t now_ms)
{
	struct gp_pool_task tasks[GP_SERVICE_REPLICAS_MAX];

	for (int i = 0; sv && i < sv->n; i++) {
		struct service *v = &sv->v[i];
		int n = gp_pool_service_tasks(sv->ops.pool, v->row.id, tasks,
					      GP_SERVICE_REPLICAS_MAX);

		replicas_ended(sv, v, tasks, n, now_ms);
		if (v->spec.autoscale)
			scale(sv, v, tasks, n, now_ms);
		n = gp_pool_service_tasks(sv->ops.pool, v->row.id, tasks,
					  GP_SERVICE_REPLICAS_MAX);
		if (v->spec.deployment[0]) /* its pods that started at another share */
			shares_set(sv, v, tasks, n, v->row.share_pct,
				   "the service's share for its replicas");
		else
			replicas_keep(sv, v, tasks, n);
	}
}

/* ---- reading --------------------------------------------------------------- */

static json_t *replicas_json(struct gp_services *sv, const struct service *v)
{
	struct gp_pool_task tasks[GP_SERVICE_REPLICAS_MAX];
	int n = gp_pool_service_tasks(sv->ops.pool, v->row.id, tasks,
				      GP_SERVICE_REPLICAS_MAX);
	json_t *list = json_array();

	for (int i = 0; i < n; i++) {
		double effective;
		bool sampled = sv->engine.effective(sv->engine.ctx, tasks[i].id, &effective);

		json_array_append_new(
			list, json_pack("{s:I, s:s, s:I, s:I, s:o, s:b, s:s, s:s}", "id",
					(json_int_t)tasks[i].id, "state",
					tasks[i].state == GP_TASK_RUNNING ? "running"
									  : "queued",
					"compute_pct", (json_int_t)tasks[i].compute_pct,
					"mem_mib", (json_int_t)tasks[i].mem_mib, "effective",
					sampled ? json_real(effective) : json_null(),
					"cancelling", tasks[i].cancel_by[0] != '\0', "placement",
					tasks[i].state == GP_TASK_RUNNING ? tasks[i].placement
									  : "",
					"reason", tasks[i].reason));
	}
	return list;
}

static json_t *service_json(struct gp_services *sv, const struct service *v)
{
	json_t *spec = gp_service_spec_json(&v->spec);

	return json_pack("{s:I, s:s, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:I, s:o}", "id",
			 (json_int_t)v->row.id, "name", v->row.name, "tenant_id",
			 (json_int_t)v->row.tenant, "replicas",
			 (json_int_t)v->row.replicas, "share_pct",
			 (json_int_t)v->row.share_pct, "spec", spec ?: json_null(),
			 "replica_tasks", replicas_json(sv, v), "utilization",
			 v->util >= 0 ? json_real(v->util) : json_null(), "last_decision",
			 v->last[0] ? json_string(v->last) : json_null(), "created_ms",
			 (json_int_t)v->row.created, "crash_loop",
			 v->crash[0] ? json_string(v->crash) : json_null());
}

/* The service's newest steps, newest first (an empty list when the store
 * cannot say). */
static json_t *steps_json(struct gp_services *sv, const struct service *v)
{
	struct gp_service_step *all = NULL;
	json_t *list = json_array();
	int n = 0;

	if (gp_store_service_steps(sv->ops.store, v->row.id, GP_SERVICE_STEPS_SHOWN, &all, &n) < 0)
		n = 0;
	for (int i = 0; i < n; i++)
		json_array_append_new(
			list, json_pack("{s:I, s:I, s:s, s:s, s:I, s:I, s:s}", "id",
					(json_int_t)all[i].id, "ts_ms", (json_int_t)all[i].ts_ms,
					"who", all[i].who, "step", all[i].step, "replicas",
					(json_int_t)all[i].replicas, "share_pct",
					(json_int_t)all[i].share_pct, "reason", all[i].reason));
	free(all);
	return list;
}

json_t *gp_services_json(struct gp_services *sv, int64_t tenant, const char *name)
{
	json_t *list = json_array();

	for (int i = 0; sv && i < sv->n; i++) {
		const struct service *v = &sv->v[i];
		json_t *one;

		if ((tenant >= 0 && v->row.tenant != tenant) || (name && strcmp(name, v->row.name)))
			continue;
		one = service_json(sv, v);
		if (name)
			json_object_set_new(one, "steps", steps_json(sv, v));
		json_array_append_new(list, one);
	}
	return list;
}
