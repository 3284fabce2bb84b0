/* loop.h — the server's scheduling loop, with the agent of this machine
 * (`gpupool server --with-agent`).
 *
 * Every tick (GP_LOOP_TICK_MS), under the lock the API's handlers run
 * under, the loop
 *   1. reaps the tasks that ended and records how (succeeded, failed with
 *      its exit code, or preempted and queued again);
 *   2. builds the cluster from the agent's devices and the running tasks,
 *      and runs one scheduling pass (sched.h) over the queued tasks;
 *   3. starts what the pass starts (the agent launches it), asks the
 *      preempted to stop (SIGTERM, SIGKILL after the grace period), and
 *      writes each waiting task's reason when it changed;
 *   4. applies live changes of running tasks' share and priority to their
 *      devices' regions.
 * A task starts only once the tasks being preempted on its devices have
 * stopped. Every start, preemption and end is in the audit log. */
#ifndef GP_SERVER_LOOP_H
#define GP_SERVER_LOOP_H

#include "agent/agent.h"
#include "server/http.h"
#include "server/store.h"

#define GP_LOOP_TICK_MS 100

struct gp_loop;

/* Starts the loop's thread; the store, the http server (for its lock)
 * and the agent must outlive it. */
int gp_loop_start(struct gp_store *store, struct gp_http *http, struct gp_agent *agent,
		  struct gp_loop **ret);

/* Stops the thread (tasks keep running). Accepts NULL; returns NULL. */
struct gp_loop *gp_loop_stop(struct gp_loop *l);

/* One tick, for tests and for the thread: the caller holds the lock. */
void gp_loop_tick(struct gp_loop *l);

#endif
