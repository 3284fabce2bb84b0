/* taskops.h — the writes of a task that the API and the server's own
 * controllers (service.c: replicas that scale; schedule.c: time-of-day
 * rules) share, so that a replica the autoscaler adds is submitted, and
 * a share it grows is changed, exactly as a tenant's request would be.
 *
 * Each writes the task's row and its audit row in one transaction, then
 * brings the pool (pool.h) up to date and wakes the loop. The caller
 * holds the store's lock (the HTTP lock: an API handler, or the loop).
 * Errors are the store's (gp_store_error says why), the row unchanged. */
#ifndef GP_SERVER_TASKOPS_H
#define GP_SERVER_TASKOPS_H

#include <stddef.h>

#include "server/loop.h"
#include "server/pool.h"
#include "server/store.h"

struct gp_taskops {
	struct gp_store *store;
	struct gp_pool *pool;
	struct gp_loop *loop; /* NULL: a server without the agent */
	unsigned queue_max, tenant_queue_max; /* the queue's bounds (--queue-max, ...); 0: none */
	/* Stops a running task of the engine (a Kubernetes pod); api.h's. */
	int (*engine_cancel)(void *ctx, const struct gp_task *t, const char *who);
	void *engine_ctx;
};

/* Room in the queue for one more task of tenant `tenant` (named `name`,
 * for why)? The queue (pending and preempted tasks) is bounded, and so
 * is each tenant's part of it, so that one tenant, by hand or through
 * its services, cannot fill it for all; the counts are the pool's. 0, or
 * -EAGAIN and why. */
int gp_taskops_room(const struct gp_taskops *o, int64_t tenant, const char *name, char *why,
		    size_t len);
/* The same for n more tasks at once (an array: all or none). */
int gp_taskops_room_for(const struct gp_taskops *o, int64_t tenant, const char *name,
			unsigned n, char *why, size_t len);

/* Stores task t (sets id, created, state PENDING) with the environment
 * text env (NULL: none) and the audit row task.submit by `who`, whose
 * detail ends with env_names; then queues it. -ENOMEM after the store
 * was written: the pool could not take it (it is scheduled after a
 * restart). */
int gp_taskops_submit(const struct gp_taskops *o, const char *who, struct gp_task *t,
		      const char *env, const char *env_names);

/* The same for a task array (`submit --array`): t once for each index
 * first..last, all stored in one transaction (all or none), each with
 * its task.submit audit row; each member's array_id is the first one's
 * id. Their ids in ret_ids[0..last - first], t as the first one. -ENOMEM
 * after the store was written: as gp_taskops_submit. */
int gp_taskops_submit_array(const struct gp_taskops *o, const char *who, struct gp_task *t,
			    unsigned first, unsigned last, const char *env,
			    const char *env_names, int64_t *ret_ids);

/* Would running task t hold compute_pct of each device now, by the
 * scheduler's rules (capacity, overcommit, quotas)? 0 and whether it
 * would borrow in *ret_borrowed (0 or 1; -1 when not decided: not
 * running, no agent, the same share, not on this agent); -EBUSY and why;
 * another error. */
int gp_taskops_share_check(const struct gp_taskops *o, const struct gp_task *t,
			   unsigned compute_pct, int *ret_borrowed, char *why,
			   size_t len);

/* Gives t the share and priority, with the audit row task.set by `who`
 * naming both changes and `reason`; `borrowed` as share_check said. */
int gp_taskops_change(const struct gp_taskops *o, const char *who, struct gp_task *t,
		      unsigned compute_pct, unsigned priority, const char *reason,
		      int borrowed);

/* Cancels live task t for `who` (task.cancel): a queued one at once, a
 * running one through the loop (it stops, SIGTERM then SIGKILL, and is
 * recorded cancelled once reaped). -ENOTSUP: it is running and the
 * server has no agent; -ENOENT: running, but not on this agent. */
int gp_taskops_cancel(const struct gp_taskops *o, const char *who, struct gp_task *t);

#endif
