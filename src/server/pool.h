/* pool.h — the pool as the scheduler sees it, in memory: the queue (the
 * queued tasks, pending and preempted, in the scheduler's order), the
 * running tasks and where they run, the tenants with their quotas
 * (overall and per device model) and how many tasks each has queued and
 * running.
 *
 * The store is the durable record; the pool follows it. It is loaded from
 * the store once, at the server's start (gp_pool_load), and from then on
 * whoever writes a change to the store — the API's handlers, the loop —
 * applies the same change here once the write has committed
 * (gp_pool_task_put with the row as written, gp_pool_tenant_put,
 * gp_pool_model_quotas_put). So the loop's scheduling pass, a
 * submission's queue bounds and the queue's pages read memory, never a
 * reload. The one exception is the loop's: an end (or requeue) it could
 * not write because the store failed is applied here at once and written
 * when the store can be (loop.h, "the books"), as the process has ended
 * whatever the store says.
 *
 * Invariants: every task here is PENDING, PREEMPTED or RUNNING (a row
 * put in another state leaves the pool); the queue holds exactly the
 * pending and preempted ones, ordered as gp_sched_compare orders them
 * (priority, then submission, then id); a tenant's counts are those of
 * its tasks here.
 *
 * What the pass needs to look at again: the pool counts changes. A change
 * that may let a waiting task start or change why it waits — a task
 * started, ended or was requeued, a running task's share or priority
 * changed, a tenant's quota changed, a preemption or a cancel was asked —
 * is a "full" change: the next pass looks at the whole queue. A task
 * queued, or a queued task's priority or shape changed, marks that task
 * alone (its gen); a pass need look at those only, as nothing that could
 * let the others start has happened. A reason written, a queued task
 * cancelled, a tenant added or its user changed need no pass at all.
 *
 * Locking: the pool has its own mutex, which every function here takes
 * and holds only while it copies in or out; it guards all of the pool's
 * data. The functions that change what the store has (the _put
 * functions) are called holding the store's lock (the HTTP lock: the
 * API's handlers run under it and the loop takes it for each write),
 * right after the write they follow, so that changes reach the pool in
 * the order they reached the store, and a check made under that lock
 * (is the task still queued?) still holds when the caller writes. The
 * flags that only the loop knows (borrowed, stopping, cancel asked and
 * sent) are changed under the store's lock too, except cancel_sent, the
 * loop's alone. Readers (the loop's pass, GET /v1/queue) take the pool's
 * mutex only: they wait neither for a pass nor for a store write.
 *
 * Ownership: the caller frees the pool with gp_pool_free; copies come
 * back in caller's storage or in malloc'd arrays released with
 * gp_pool_view_release. Functions return 0 or a negative errno. */
#ifndef GP_SERVER_POOL_H
#define GP_SERVER_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/store.h"

struct gp_pool;

/* A task as the pool keeps it: what the pass, the queue and the loop
 * need of its row (not its command, directory or environment, which the
 * loop reads when it starts the task), and what the loop knows of it
 * that the store does not. */
struct gp_pool_task {
	int64_t id, tenant;
	char name[GP_STORE_NAME_MAX];
	enum gp_task_state state; /* PENDING, PREEMPTED or RUNNING */
	unsigned priority;
	uint64_t mem_mib;
	unsigned mem_pct;       /* memory as a percent of its card's; 0: mem_mib */
	unsigned compute_pct, devices;
	bool whole, exclusive, hard;
	bool mixed_models;      /* its devices may be of several models */
	bool restart_on_growth; /* its policy when its memory only grows */
	uint64_t time_limit_s;  /* from its start; 0: none */
	char after[GP_AFTER_TEXT]; /* the tasks it waits for (store.h); "": none */
	/* Queued and waiting for the tasks of `after` to end: no pass looks
	 * at it until gp_pool_task_release (the loop's depend.h). Set when it
	 * enters the pool with an `after`. */
	bool held;
	int64_t service;        /* the service it is a replica of; 0: none */
	char model[GP_STORE_NAME_MAX];
	char reason[GP_REASON_MAX];
	char placement[GP_REASON_MAX];
	int64_t pid, created, started;
	/* The loop's: cleared when the task leaves RUNNING. */
	bool borrowed;                     /* runs past one of its guarantees */
	bool stopping;                     /* being preempted, or restarted */
	char restart_why[GP_REASON_MAX];   /* being restarted: why; "": not */
	char cancel_by[GP_STORE_NAME_MAX]; /* being cancelled, asked by; "": not */
	bool cancel_sent;                  /* the loop has asked the agent to stop it */
	bool time_up;                      /* its time limit stops it (cancel_by "server") */
	uint64_t gen;                      /* the pool's count when it last changed */
	uint64_t reason_hash;              /* gp_pool_reason_hash(reason) */
};

/* Reads the tenants, their model quotas and the pending, preempted and
 * running tasks from the store. -ENOMEM, or the store's error. */
int gp_pool_load(struct gp_store *s, struct gp_pool **ret);
struct gp_pool *gp_pool_free(struct gp_pool *p); /* accepts NULL; returns NULL */

/* ---- changes: holding the store's lock, after the write ---------------- */

/* Task t's row as the store has it now: changed (the fields the pool
 * keeps), or taken out when its state is none of the pool's. A task the
 * pool does not have enters it only PENDING (a submission): the pool has
 * every other live task from its load, so a row put late (that of a
 * task the loop knows has ended, say) adds nothing. */
int gp_pool_task_put(struct gp_pool *p, const struct gp_task *t);
/* Task id's reason as the store has it now (gp_store_task_reason): no
 * pass need look at it again. -ENOENT: the task is not here. */
int gp_pool_task_reason(struct gp_pool *p, int64_t id, const char *reason);
/* Tenant t as the store has it now (added, its quota or user changed, or
 * removed). */
int gp_pool_tenant_put(struct gp_pool *p, const struct gp_tenant *t);
/* The model quotas of `tenant` are now all[0..n) (those of other tenants
 * in it are ignored). */
int gp_pool_model_quotas_put(struct gp_pool *p, int64_t tenant, const struct gp_model_quota *all,
			     int n);

/* The loop's flags of a running task. -ENOENT: it is not running. */
int gp_pool_task_borrowed(struct gp_pool *p, int64_t id, bool borrowed);
/* Stopping: being preempted (restart_why NULL), or restarted, and why. */
int gp_pool_task_stopping(struct gp_pool *p, int64_t id, const char *restart_why);
/* A tenant named `by` asks the running task id to stop: 0, or 1 when it
 * was asked already (the first who asked stays named), -ENOENT when it
 * is not running. */
int gp_pool_task_cancel(struct gp_pool *p, int64_t id, const char *by);
/* The loop's own: the ids (at most max) of the tasks whose cancel was
 * asked and not yet sent to the agent, marked sent; how many. */
int gp_pool_cancels_take(struct gp_pool *p, int64_t *ret_ids, int max);
/* The running tasks that have run their time limit by now_ms (unix ms;
 * counted from their start) and are not being stopped yet: each marked
 * time_up and its cancel asked by "server", its copy in ret (at most
 * max); how many. */
int gp_pool_times_up(struct gp_pool *p, int64_t now_ms, struct gp_pool_task *ret, int max);
/* The held tasks (at most max, in the queue's order) into ret; how many. */
int gp_pool_held(struct gp_pool *p, struct gp_pool_task *ret, int max);
/* Held task id may be decided: the next pass looks at it. -ENOENT: no
 * such held task. */
int gp_pool_task_release(struct gp_pool *p, int64_t id);
/* A count of the tasks that have left the pool (ended, cancelled): what
 * a held task may be waiting for. */
uint64_t gp_pool_ends(struct gp_pool *p);

/* ---- reading ------------------------------------------------------------- */

/* Tenant id as the pool has it; -ENOENT when it has none of that id. */
int gp_pool_tenant_get(struct gp_pool *p, int64_t id, struct gp_tenant *ret);
/* Task id as the pool has it; -ENOENT when it is not there (not queued,
 * not running). */
int gp_pool_task_get(struct gp_pool *p, int64_t id, struct gp_pool_task *ret);
/* A reason the loop would write for a queued task, as it saw the task
 * (its gen). */
struct gp_pool_reason {
	int64_t id;
	uint64_t gen;
	const char *reason;
};
/* Keeps, at the front of r[0..n) and in order, those whose task is still
 * queued, unchanged since gen, with another reason now; how many. */
int gp_pool_reasons_changed(struct gp_pool *p, struct gp_pool_reason *r, int n);
/* Is the running task id being cancelled? */
bool gp_pool_cancelling(struct gp_pool *p, int64_t id);
/* The queued and running tasks of `tenant` (< 0: everyone's). */
void gp_pool_counts(struct gp_pool *p, int64_t tenant, int *ret_queued, int *ret_running);
/* A task as the pool has it, as a row: what the pool keeps of it (the
 * loop's view, ahead of the store's while the loop owes it writes), the
 * rest empty. */
void gp_pool_task_row(const struct gp_pool_task *pt, struct gp_task *t);
/* The running, then the queued tasks that are replicas of `service`, at
 * most max, into ret; how many. */
int gp_pool_service_tasks(struct gp_pool *p, int64_t service, struct gp_pool_task *ret,
			  int max);
/* The queue's length and when its oldest task was submitted (unix ms; 0
 * when empty). */
void gp_pool_queue_stats(struct gp_pool *p, int *ret_n, int64_t *ret_oldest);

/* A page of the queue, in its order: the tasks of `tenant` (< 0: all)
 * whose state is in `states` (GP_TASK_STATE_BIT of PENDING, PREEMPTED; 0:
 * both) and whose position (1: the queue's head) is above `after`, at
 * most `limit`, into ret[] with their positions in ret_position[]; how
 * many in *ret_n, the queue's whole length in *ret_length. */
int gp_pool_queue_page(struct gp_pool *p, int64_t tenant, unsigned states, int after, int limit,
		       struct gp_pool_task *ret, int *ret_position, int *ret_n, int *ret_length);

/* A queued task, as the pass needs it: small, as a pass copies
 * thousands. */
struct gp_pool_queued {
	int64_t id, tenant;
	unsigned priority;
	int64_t created;
	uint64_t mem_mib;
	unsigned mem_pct;
	unsigned compute_pct, devices;
	bool whole, exclusive, mixed_models;
	int model;            /* the model it asks for: in the view's models; -1: any */
	uint64_t reason_hash; /* gp_pool_reason_hash of its reason */
	uint64_t gen;
};

/* A hash of a reason's text, to tell at a glance the reasons a pass
 * would write from those the tasks have (gp_pool_reasons_changed
 * compares the text). */
uint64_t gp_pool_reason_hash(const char *reason);

/* What a pass looks at, copied at once. */
struct gp_pool_view {
	struct gp_pool_task *running;
	int n_running;
	struct gp_pool_queued *queued; /* in the queue's order */
	int n_queued;
	char (*models)[GP_STORE_NAME_MAX]; /* the models the queued ask for, by their index */
	int n_models;
	struct gp_tenant *tenants;
	int n_tenants;
	struct gp_model_quota *quotas; /* every tenant's, by tenant */
	int n_quotas;
	uint64_t gen, full_gen; /* the pool's counts as of the copy */
};

/* Which queued tasks a view holds. */
enum gp_pool_scope {
	GP_POOL_RUNNING, /* none */
	GP_POOL_CHANGED, /* those that changed after `since` (a view's gen) */
	GP_POOL_ALL,
};

/* Copies into v, at once: the running tasks, the queued tasks of the
 * scope but the held ones, the tenants and the model quotas. Release with
 * gp_pool_view_release. -ENOMEM. The queued tasks of GP_POOL_ALL are in
 * the queue's order; those of GP_POOL_CHANGED in the order they changed
 * (found from a record of the changes, not by a look at the whole queue:
 * that record starts again at every view of either scope, so one reader
 * alone, the loop, takes them, each `since` the gen of its previous
 * one). */
int gp_pool_view_init(struct gp_pool *p, enum gp_pool_scope scope, uint64_t since,
		      struct gp_pool_view *v);
void gp_pool_view_release(struct gp_pool_view *v);
/* The pool's counts now: of changes, and of full changes (*ret_full). */
uint64_t gp_pool_gen(struct gp_pool *p, uint64_t *ret_full);
/* A count of every change of the tenants and their quotas (a tenant added
 * too, which is no change the scheduling pass needs): for a reader that
 * keeps a copy of them (the extender's quotas). */
uint64_t gp_pool_tenants_gen(struct gp_pool *p);

/* Do a and b hold the same tasks, queue, tenants, model quotas and
 * counts, as the store would give them (the loop's flags and the counts
 * of changes aside)? 0, or -EDOM with the first difference in why. */
int gp_pool_compare(struct gp_pool *a, struct gp_pool *b, char *why, size_t len);

#endif
