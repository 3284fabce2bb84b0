/* logdir.h — the tasks' logs as a whole, in their directory (the
 * server's --log-dir): room for new logs, and a total cap.
 *
 * The agent's pump caps each task's log (agent/logpump.h, --log-max) and
 * leaves the space under the free-space floor to others; this is the
 * directory's side of the same rule, for the scheduling loop:
 *   - Room. A task's log is opened as it starts: while the free space
 *     where the logs are is under the floor (--log-free-min), or after a
 *     log could not be opened (a full disk), no task should start.
 *     gp_logdir_room says so, with the reason the waiting tasks get, so
 *     that they wait in the queue instead of failing. After a log failed
 *     to open, starts wait GP_LOGDIR_RETRY_MS (twice as long after each
 *     failure in a row, up to GP_LOGDIR_RETRY_MAX_MS) and then until a
 *     probe file of one page can be written in the directory: so a full
 *     disk makes the tasks wait, not try and fail at every pass.
 *   - The total cap. The logs of the tasks that have ended are removed,
 *     the oldest (last written) first, while all the logs together
 *     (their files' blocks on disk) are over --log-total-max, or the
 *     free space is under the floor. The logs of live tasks (running or
 *     queued: a preempted task's log goes on when it runs again) are
 *     never removed; each is capped on its own.
 * A task's log is its three files (base/logfile.h); other files in the
 * directory are not looked at.
 *
 * Used by the loop's thread alone. Functions return 0 or a negative
 * errno; nothing prints. Ownership: gp_logdir_new returns a handle the
 * caller frees with gp_logdir_free; gp_logdir_trim's array is the
 * caller's to free(). */
#ifndef GP_SERVER_LOGDIR_H
#define GP_SERVER_LOGDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/store.h"

#define GP_LOGDIR_TOTAL_DEFAULT (4ULL << 30)   /* --log-total-max */
#define GP_LOGDIR_FREE_DEFAULT	(256ULL << 20) /* --log-free-min */
#define GP_LOGDIR_LOOK_MS	500	       /* between two looks at the free space */
#define GP_LOGDIR_RETRY_MS	2000	       /* no start after a log failed to open */
#define GP_LOGDIR_RETRY_MAX_MS	60000	       /* ... doubled at each failure, up to */
#define GP_LOGDIR_PROBE		".gpupool-probe" /* the probe file's name there */

struct gp_logdir;

struct gp_logdir_options {
	const char *dir;    /* the logs (copied) */
	uint64_t total_max; /* bytes; 0: no cap */
	uint64_t free_min;  /* bytes; 0: no floor */
};

int gp_logdir_new(const struct gp_logdir_options *o, struct gp_logdir **ret);
struct gp_logdir *gp_logdir_free(struct gp_logdir *d); /* accepts NULL; returns NULL */

/* May tasks start now (now: monotonic ms)? The free space is looked at
 * every GP_LOGDIR_LOOK_MS at most. False with the reason a task waiting
 * for room gets in why (what is wrong, and what to do); a free space
 * that cannot be read counts as room (the start says what is wrong). */
bool gp_logdir_room(struct gp_logdir *d, int64_t now, char *why, size_t len);

/* A task's log could not be opened as it started (why: how): no task
 * should start for a while, then until the probe passes (above);
 * gp_logdir_room says so meanwhile. */
void gp_logdir_open_failed(struct gp_logdir *d, int64_t now, const char *why);
/* A task's log was opened: the failures in a row are over. */
void gp_logdir_opened(struct gp_logdir *d);

/* Is the task's log part of what must stay (a live task's)? */
typedef bool gp_logdir_live_fn(void *ctx, int64_t task);

/* The cap and the floor (above): looks at the directory and removes the
 * logs of tasks that `live` says have ended, oldest first, as long as
 * the logs are over the cap or the free space under the floor. What was
 * removed in *ret (task, when, bytes, why: for the store), *ret_n of
 * them (0 and NULL: none). -errno when the directory cannot be read. */
int gp_logdir_trim(struct gp_logdir *d, gp_logdir_live_fn *live, void *ctx,
		   struct gp_log_removal **ret, int *ret_n);

#endif
