/* depend.h — a task's dependencies (`gpupool submit --after`, the API's
 * "after"): the tasks it waits for, held in the queue until they end.
 *
 * A dependency "ID:ok" (Slurm's afterok, the default) is met when task ID
 * succeeded; "ID:any" (afterany) when it ended however it ended. A task
 * one of whose ":ok" dependencies ended otherwise (failed, cancelled,
 * lost) could never run: it is cancelled, with the reason "dependency 3
 * failed (exit 3)" (the server keeps no wait without an end). While one
 * of them is still queued or running, the task waits, its reason naming
 * that one.
 *
 * The dependencies are stored with the task (store.h's `after`); the pool
 * holds a task that has them (pool.h's `held`, from the moment it enters,
 * a load after a restart too) and no pass looks at it until
 * gp_depend_look releases it. At submit, gp_depend_check refuses what
 * could never be met.
 *
 * The caller holds the store's lock (an API handler, or the loop); the
 * store and the pool are the caller's. Functions return 0 or a negative
 * errno. */
#ifndef GP_SERVER_DEPEND_H
#define GP_SERVER_DEPEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/pool.h"
#include "server/store.h"

/* May a task of `tenant` (submitted by the admin: `admin`) wait for the
 * tasks of `after` (base/parse.h's form)? Each must exist, and be the
 * tenant's own unless the admin submits. 0; else -EINVAL (not a list),
 * -ENOENT (no such task) or -EPERM (another tenant's), with why; or the
 * store's error. */
int gp_depend_check(struct gp_store *s, const char *after, int64_t tenant, bool admin,
		    char *why, size_t len);

/* One look at the pool's held tasks: each whose dependencies are all met
 * is released (the next pass decides it); one that could never run is
 * cancelled (its row, and an audit row task.cancel by "server" with
 * why); the others' reasons name the first task they wait for, written
 * when they changed. What a failed write left undone is done at the next
 * look. Worth calling when the pool changed (gp_pool_gen) or a task left
 * it (gp_pool_ends). How many were released or cancelled, or the store's
 * error. */
int gp_depend_look(struct gp_store *s, struct gp_pool *p);

#endif
