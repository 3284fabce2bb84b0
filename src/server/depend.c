/* depend.c — a task's dependencies: checked at submit, met or never met
 * as the tasks they name end (depend.h). */
#include "server/depend.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/parse.h"

enum verdict { WAIT, MET, NEVER };

int gp_depend_check(struct gp_store *s, const char *after, int64_t tenant, bool admin,
		    char *why, size_t len)
{
	struct gp_after dep[GP_AFTER_MAX];
	struct gp_task t;
	int n, r;

	if (gp_parse_after(after, dep, &n) < 0) {
		snprintf(why, len, "\"%.64s\" must be ID[:ok|:any][,ID...], as in 3 or 3:any,5 "
				   "(at most %d tasks, each once)", after, GP_AFTER_MAX);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		r = gp_store_task_get(s, dep[i].id, &t);
		if (r == -ENOENT) {
			snprintf(why, len, "no task %" PRId64, dep[i].id);
			return r;
		}
		if (r < 0)
			return r;
		if (t.tenant != tenant && !admin) {
			snprintf(why, len, "task %" PRId64 " is another tenant's; a task waits "
					   "only for its own tenant's tasks", dep[i].id);
			return -EPERM;
		}
	}
	return 0;
}

/* Why an ended task that had to succeed did not: "dependency 3 failed
 * (exit 3)". */
static void failed_why(const struct gp_task *t, char *why, size_t len)
{
	char how[64];

	if (t->state == GP_TASK_CANCELLED)
		snprintf(how, sizeof(how), "cancelled");
	else if (t->state == GP_TASK_LOST)
		snprintf(how, sizeof(how), "lost");
	else if (t->timed_out)
		snprintf(how, sizeof(how), "its time limit");
	else if (t->exit_code > 128)
		snprintf(how, sizeof(how), "killed by signal %d", t->exit_code - 128);
	else if (t->exit_code)
		snprintf(how, sizeof(how), "exit %d", t->exit_code);
	else
		snprintf(how, sizeof(how), "it never started");
	snprintf(why, len, "dependency %" PRId64 " failed (%s)", t->id, how);
}

static bool is_ended(enum gp_task_state s)
{
	return s == GP_TASK_SUCCEEDED || s == GP_TASK_FAILED || s == GP_TASK_CANCELLED ||
	       s == GP_TASK_LOST;
}

/* Dependency d is still to end: why its task waits. */
static int dep_waits(const struct gp_after *d, enum verdict *ret, char *why, size_t len)
{
	snprintf(why, len, "waiting for task %" PRId64 " to %s (after %" PRId64 ":%s)", d->id,
		 d->any ? "end" : "succeed", d->id, d->any ? "any" : "ok");
	*ret = WAIT;
	return 0;
}

/* Where dependency d stands: still to end (why it waits), met, or never
 * to be (why). The pool has every live task; an ended one is read from
 * the store. *ret or the store's error. */
static int dep_verdict(struct gp_store *s, struct gp_pool *p, const struct gp_after *d,
		       enum verdict *ret, char *why, size_t len)
{
	struct gp_pool_task live;
	struct gp_task t;
	int r;

	if (gp_pool_task_get(p, d->id, &live) == 0)
		return dep_waits(d, ret, why, len);
	r = gp_store_task_get(s, d->id, &t);
	if (r == -ENOENT) { /* never: a submission names tasks that exist */
		snprintf(why, len, "dependency %" PRId64 " failed (no such task)", d->id);
		*ret = NEVER;
		return 0;
	}
	if (r < 0)
		return r;
	if (!is_ended(t.state))
		return dep_waits(d, ret, why, len);
	*ret = d->any || t.state == GP_TASK_SUCCEEDED ? MET : NEVER;
	if (*ret == NEVER)
		failed_why(&t, why, len);
	return 0;
}

/* Held task h could never run: CANCELLED, with why, and its audit row. */
static int held_cancel(struct gp_store *s, struct gp_pool *p, const struct gp_pool_task *h,
		       const char *why)
{
	char object[GP_AUDIT_OBJECT_MAX];
	struct gp_task row;
	int r = gp_store_task_get(s, h->id, &row);

	if (r < 0)
		return r;
	row.state = GP_TASK_CANCELLED;
	row.ended = gp_unix_ms();
	snprintf(row.reason, sizeof(row.reason), "%s", why);
	snprintf(object, sizeof(object), "task %" PRId64, h->id); /* as the loop names its rows */
	r = gp_store_begin(s);
	if (r == 0)
		r = gp_store_task_update(s, &row);
	if (r == 0)
		r = gp_store_audit(s, "server", "task.cancel", object, why);
	if (r == 0)
		r = gp_store_commit(s);
	if (r < 0) {
		gp_store_rollback(s);
		return r;
	}
	gp_pool_task_put(p, &row);
	return 1;
}

/* Held task h's reason is why, written when it is not already. */
static int held_wait(struct gp_store *s, struct gp_pool *p, const struct gp_pool_task *h,
		     const char *why)
{
	int r;

	if (!strcmp(h->reason, why))
		return 0;
	r = gp_store_begin_unsynced(s); /* a reason can be worked out again */
	if (r == 0)
		r = gp_store_task_reason(s, h->id, why);
	if (r == 0)
		r = gp_store_commit(s);
	if (r < 0) {
		gp_store_rollback(s);
		return r;
	}
	gp_pool_task_reason(p, h->id, why);
	return 0;
}

/* One held task: released, cancelled or still waiting (1, 1, 0). */
static int held_look(struct gp_store *s, struct gp_pool *p, const struct gp_pool_task *h)
{
	struct gp_after dep[GP_AFTER_MAX];
	char why[GP_REASON_MAX], wait[GP_REASON_MAX] = "";
	enum verdict v;
	int n = 0, r;

	if (gp_parse_after(h->after, dep, &n) < 0)
		n = 0; /* never: the API stores what the parser wrote */
	for (int i = 0; i < n; i++) {
		r = dep_verdict(s, p, &dep[i], &v, why, sizeof(why));
		if (r < 0)
			return r;
		if (v == NEVER)
			return held_cancel(s, p, h, why);
		if (v == WAIT && !wait[0])
			snprintf(wait, sizeof(wait), "%s", why);
	}
	if (wait[0])
		return held_wait(s, p, h, wait);
	gp_pool_task_release(p, h->id);
	return 1;
}

int gp_depend_look(struct gp_store *s, struct gp_pool *p)
{
	int queued, running, n, done = 0, r = 0;
	struct gp_pool_task *held;

	gp_pool_counts(p, -1, &queued, &running);
	held = malloc(((size_t)queued + 1) * sizeof(*held));
	if (!held)
		return -ENOMEM;
	n = gp_pool_held(p, held, queued);
	for (int i = 0; i < n && r >= 0; i++) {
		r = held_look(s, p, &held[i]);
		done += r > 0;
	}
	free(held);
	return r < 0 ? r : done;
}
