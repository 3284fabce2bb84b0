/* taskops.c — a task's submission, live change and cancel, shared by the
 * API and the server's controllers (taskops.h). */
#include "server/taskops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/parse.h"

/* The row and its audit row, in the caller's transaction. `add`: insert
 * t. */
static int row_write(struct gp_store *s, struct gp_task *t, bool add, const char *env,
		     const char *who, const char *action, const char *detail)
{
	char object[GP_AUDIT_OBJECT_MAX];
	int r = add ? gp_store_task_add(s, t) : gp_store_task_update(s, t);

	if (r == 0 && env)
		r = gp_store_task_env_set(s, t->id, env);
	snprintf(object, sizeof(object), "%lld", (long long)t->id);
	if (r == 0)
		r = gp_store_audit(s, who, action, object, detail);
	return r;
}

/* Ends the transaction: committed after r == 0, else rolled back. */
static int txn_end(struct gp_store *s, int r)
{
	if (r == 0)
		r = gp_store_commit(s);
	if (r < 0)
		gp_store_rollback(s);
	return r;
}

/* The row and its audit row, in one transaction. `add`: insert t. */
static int write_with_audit(struct gp_store *s, struct gp_task *t, bool add,
			    const char *env, const char *who, const char *action,
			    const char *detail)
{
	int r = gp_store_begin(s);

	if (r == 0)
		r = row_write(s, t, add, env, who, action, detail);
	return txn_end(s, r);
}

int gp_taskops_room(const struct gp_taskops *o, int64_t tenant, const char *name, char *why,
		    size_t len)
{
	return gp_taskops_room_for(o, tenant, name, 1, why, len);
}

int gp_taskops_room_for(const struct gp_taskops *o, int64_t tenant, const char *name,
			unsigned n, char *why, size_t len)
{
	char more[48] = "";
	int queued, running;

	if (n > 1)
		snprintf(more, sizeof(more), ", and %u more asked at once", n);
	gp_pool_counts(o->pool, -1, &queued, &running);
	if (o->queue_max && (unsigned)queued + n > o->queue_max) {
		snprintf(why, len, "queue full (%d pending tasks%s); retry later or raise --queue-max",
			 queued, more);
		return -EAGAIN;
	}
	gp_pool_counts(o->pool, tenant, &queued, &running);
	if (!o->tenant_queue_max || (unsigned)queued + n <= o->tenant_queue_max)
		return 0;
	if (n > 1)
		snprintf(why, len,
			 "tenant %s has %d queued tasks; %u more would pass its bound "
			 "(--tenant-queue-max %u); wait for some to start, cancel some, or submit a "
			 "smaller array",
			 name, queued, n, o->tenant_queue_max);
	else
		snprintf(why, len,
			 "tenant %s has %d queued tasks, its bound (--tenant-queue-max); wait for "
			 "some to start or cancel some",
			 name, queued);
	return -EAGAIN;
}

static void wake(const struct gp_taskops *o)
{
	if (o->loop)
		gp_loop_wake(o->loop); /* a pass soon, not at the next tick */
}

/* What task.submit's audit row says of t: its slice, and what it was
 * given of the job options. */
static void submit_detail(const struct gp_task *t, const char *env_names, char *buf,
			  size_t len)
{
	char limit[32] = "", pct[16] = "";
	int n;

	if (t->mem_pct)
		snprintf(pct, sizeof(pct), " (%u %%)", t->mem_pct);
	n = snprintf(buf, len, "\"%s\": %llu MiB%s, %u %%, %u device(s), priority %u", t->name,
		     (unsigned long long)t->mem_mib, pct, t->compute_pct, t->devices, t->priority);
	if (t->time_limit_s && n >= 0 && (size_t)n < len) {
		gp_time_limit_text(t->time_limit_s, limit, sizeof(limit));
		n += snprintf(buf + n, len - (size_t)n, "; time limit %s", limit);
	}
	if (t->after[0] && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "; after %s", t->after);
	if (t->array_id && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "; array %lld index %u",
			      (long long)t->array_id, t->array_index);
	if (env_names && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%s", env_names);
}

int gp_taskops_submit(const struct gp_taskops *o, const char *who, struct gp_task *t,
		      const char *env, const char *env_names)
{
	char detail[GP_REASON_MAX];
	int r;

	submit_detail(t, env_names, detail, sizeof(detail));
	r = write_with_audit(o->store, t, true, env, who, "task.submit", detail);
	if (r < 0)
		return r;
	r = gp_pool_task_put(o->pool, t);
	wake(o);
	return r < 0 ? -ENOMEM : 0;
}

/* Member `index` of the array after *first (0: it is the first), written
 * into the open transaction; its row in *ret. */
static int array_member(const struct gp_taskops *o, const char *who, const struct gp_task *t,
			unsigned index, int64_t first, const char *env, const char *env_names,
			struct gp_task *ret)
{
	char detail[GP_REASON_MAX];
	int r;

	*ret = *t;
	ret->array_id = first;
	ret->array_index = index;
	r = gp_store_task_add(o->store, ret);
	if (r == 0 && !first) { /* the first: the array is named by its id */
		ret->array_id = ret->id;
		r = gp_store_task_array_set(o->store, ret->id, ret->id);
	}
	submit_detail(ret, env_names, detail, sizeof(detail));
	if (r == 0)
		r = row_write(o->store, ret, false, env, who, "task.submit", detail);
	return r;
}

int gp_taskops_submit_array(const struct gp_taskops *o, const char *who, struct gp_task *t,
			    unsigned first, unsigned last, const char *env,
			    const char *env_names, int64_t *ret_ids)
{
	unsigned n = last - first + 1;
	struct gp_task *rows = calloc(n, sizeof(*rows));
	int r = rows ? gp_store_begin(o->store) : -ENOMEM;

	for (unsigned i = 0; r == 0 && i < n; i++)
		r = array_member(o, who, t, first + i, i ? rows[0].id : 0, env, env_names,
				 &rows[i]);
	r = rows ? txn_end(o->store, r) : r;
	for (unsigned i = 0; r == 0 && i < n; i++) {
		ret_ids[i] = rows[i].id;
		if (gp_pool_task_put(o->pool, &rows[i]) < 0)
			r = -ENOMEM;
	}
	if (rows && rows[0].id)
		*t = rows[0];
	free(rows);
	wake(o);
	return r;
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
