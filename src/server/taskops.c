/* taskops.c — a task's submission, live change and cancel, shared by the
 * API and the server's controllers (taskops.h). */
#include "server/taskops.h"

#include <errno.h>
#include <stdio.h>

#include "base/clock.h"

/* The row and its audit row, in one transaction. `add`: insert t. */
static int write_with_audit(struct gp_store *s, struct gp_task *t, bool add,
			    const char *env, const char *who, const char *action,
			    const char *detail)
{
	char object[GP_AUDIT_OBJECT_MAX];
	int r = gp_store_begin(s);

	if (r == 0)
		r = add ? gp_store_task_add(s, t) : gp_store_task_update(s, t);
	if (r == 0 && env)
		r = gp_store_task_env_set(s, t->id, env);
	snprintf(object, sizeof(object), "%lld", (long long)t->id);
	if (r == 0)
		r = gp_store_audit(s, who, action, object, detail);
	if (r == 0)
		r = gp_store_commit(s);
	if (r < 0)
		gp_store_rollback(s);
	return r;
}

int gp_taskops_room(const struct gp_taskops *o, int64_t tenant, const char *name, char *why,
		    size_t len)
{
	int queued, running;

	gp_pool_counts(o->pool, -1, &queued, &running);
	if (o->queue_max && (unsigned)queued >= o->queue_max) {
		snprintf(why, len, "queue full (%d pending tasks); retry later or raise --queue-max",
			 queued);
		return -EAGAIN;
	}
	gp_pool_counts(o->pool, tenant, &queued, &running);
	if (!o->tenant_queue_max || (unsigned)queued < o->tenant_queue_max)
		return 0;
	snprintf(why, len,
		 "tenant %s has %d queued tasks, its bound (--tenant-queue-max); wait for some to "
		 "start or cancel some",
		 name, queued);
	return -EAGAIN;
}

static void wake(const struct gp_taskops *o)
{
	if (o->loop)
		gp_loop_wake(o->loop); /* a pass soon, not at the next tick */
}

int gp_taskops_submit(const struct gp_taskops *o, const char *who, struct gp_task *t,
		      const char *env, const char *env_names)
{
	char detail[GP_REASON_MAX];
	int r;

	snprintf(detail, sizeof(detail),
		 "\"%s\": %llu MiB, %u %%, %u device(s), priority %u%s", t->name,
		 (unsigned long long)t->mem_mib, t->compute_pct, t->devices, t->priority,
		 env_names ? env_names : "");
	r = write_with_audit(o->store, t, true, env, who, "task.submit", detail);
	if (r < 0)
		return r;
	r = gp_pool_task_put(o->pool, t);
	wake(o);
	return r < 0 ? -ENOMEM : 0;
}

int gp_taskops_share_check(const struct gp_taskops *o, const struct gp_task *t,
			   unsigned compute_pct, int *ret_borrowed, char *why, size_t len)
{
	bool borrowed = false;
	int r;

	*ret_borrowed = -1;
	if (t->state != GP_TASK_RUNNING || !o->loop || compute_pct == t->compute_pct)
		return 0;
	r = gp_loop_task_change(o->loop, t, compute_pct, &borrowed, why, len);
	if (r == 0)
		*ret_borrowed = borrowed;
	return r == -ENOENT ? 0 : r;
}

int gp_taskops_change(const struct gp_taskops *o, const char *who, struct gp_task *t,
		      unsigned compute_pct, unsigned priority, const char *reason,
		      int borrowed)
{
	char detail[GP_REASON_MAX];
	struct gp_task row = *t;
	int r;

	snprintf(detail, sizeof(detail),
		 "compute_pct %u -> %u, priority %u -> %u; reason: %s", t->compute_pct,
		 compute_pct, t->priority, priority,
		 reason && *reason ? reason : "(none given)");
	row.compute_pct = compute_pct;
	row.priority = priority;
	r = write_with_audit(o->store, &row, false, NULL, who, "task.set", detail);
	if (r < 0)
		return r;
	*t = row;
	gp_pool_task_put(o->pool, t);
	if (borrowed >= 0)
		gp_pool_task_borrowed(o->pool, t->id, borrowed == 1);
	return 0;
}

int gp_taskops_cancel(const struct gp_taskops *o, const char *who, struct gp_task *t)
{
	char detail[GP_REASON_MAX];
	struct gp_task row = *t;
	int r;

	if (t->state == GP_TASK_RUNNING && t->pod_uid[0]) {
		if (!o->engine_cancel)
			return -ENOTSUP;
		r = o->engine_cancel(o->engine_ctx, t, who);
		if (r < 0)
			return r;
		snprintf(detail, sizeof(detail),
			 "was running as a Kubernetes pod; evicting it (its own grace period)");
		snprintf(row.reason, sizeof(row.reason), "cancelling (asked by %s): its pod is "
			 "being evicted", who);
	} else if (t->state == GP_TASK_RUNNING) {
		if (!o->loop)
			return -ENOTSUP;
		r = gp_loop_cancel(o->loop, t->id, who);
		if (r < 0)
			return r;
		snprintf(detail, sizeof(detail),
			 "was running; stopping it (SIGTERM, SIGKILL after the grace "
			 "period)");
		snprintf(row.reason, sizeof(row.reason), "cancelling (asked by %s)", who);
	} else {
		snprintf(detail, sizeof(detail), "was %s",
			 t->state == GP_TASK_PREEMPTED ? "preempted" : "pending");
		row.state = GP_TASK_CANCELLED;
		row.ended = gp_unix_ms();
		snprintf(row.reason, sizeof(row.reason), "cancelled by %s", who);
	}
	r = write_with_audit(o->store, &row, false, NULL, who, "task.cancel", detail);
	if (r < 0)
		return r;
	*t = row;
	gp_pool_task_put(o->pool, t);
	return 0;
}
