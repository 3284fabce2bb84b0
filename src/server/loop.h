/* loop.h — the server's scheduling loop, with the agent of this machine
 * (`gpupool server --with-agent`).
 *
 * The loop reads the pool (pool.h: the queue, the running tasks, the
 * tenants, in memory), never a reload of the store. Every tick
 * (GP_LOOP_TICK_MS, or sooner when woken, e.g. by a submission) it
 *   1. reaps the tasks that ended and records how (succeeded, failed with
 *      its exit code, preempted and queued again, or cancelled), and asks
 *      the agent to stop the running tasks whose cancel was asked;
 *   2. when something changed since the last pass, runs one scheduling
 *      pass (sched.h) with the policy of the options: over the whole
 *      queue after a change that could let a waiting task start or change
 *      why it waits (an end, a start, a cancel of a running task, a share
 *      or quota change, a new target workload: pool.h says which), over
 *      the tasks that changed alone (a submission, a priority) otherwise,
 *      and over the whole queue at least every GP_LOOP_FULL_PASS_MS; with
 *      nothing changed there is no pass. A policy that takes a target
 *      workload gets the shapes of the pool's recent tasks, made again
 *      every refresh period;
 *   3. starts what the pass starts (the agent launches it), asks the
 *      preempted to stop (SIGTERM, SIGKILL after the grace period), and
 *      writes each waiting task's reason when it changed (many in one
 *      transaction). While there is no room for new logs (logdir.h: the
 *      free space where they are under its floor, or a log that could
 *      not be opened a moment ago) nothing starts or is preempted: the
 *      tasks that would start wait with that reason; a start whose log
 *      cannot be opened is queued again, as it was, with the reason
 *      (never failed: nothing of it ran);
 *   4. applies live changes of running tasks' share and priority to their
 *      devices' regions;
 *   5. every sample_ms (and at once when a task ended), samples what the
 *      devices and tasks use, writes the usage records (meter.h) and
 *      raises or clears alerts (alerts.h), in one transaction;
 *   6. keeps the logs under their total cap and the free space above its
 *      floor (logdir.h), removing the oldest logs of ended tasks, with an
 *      audit row and the store's record of each (what `gpupool logs`
 *      says of them): after a task ended, and every GP_LOOP_TRIM_MS.
 * At its start it adopts the tasks a previous server left running
 * (agent.h: gp_agent_adopt), queues again, as they were (their place in
 * the queue too), those it had marked running whose program never ran
 * (it stopped first), and records how the others ended.
 * It times its ticks and its passes over the whole queue, and the queue
 * waits of the tasks it starts, for the metrics (metrics.h); a task that
 * fails raises a critical alert. A task starts only once the tasks being
 * preempted on its devices have stopped. Every start, preemption and end
 * is in the audit log.
 *
 * Locks. The store's lock is the HTTP lock (http.h: the API's handlers
 * run under it): it guards the store's connection, the meter, the
 * alerts' state and every change to the pool (pool.h). The loop takes it
 * for each of its writes and what goes with them, and holds no lock
 * while the agent forks a task, while the device library (NVML) is
 * sampled, while a pass decides, or while it sleeps; it reads the target
 * workload's shapes through a connection of its own. A pass reads a copy
 * of the pool taken under the pool's own lock; what it decided is acted
 * on only while the tasks are as it saw them: a task changed meanwhile,
 * or any change by another that asks for a pass over the whole queue,
 * holds back what follows, and the next pass looks again. The loop's own
 * numbers (gp_loop_stats) have a lock of their own. The loop's other
 * state is its thread's alone.
 *
 * The books: a running task always counts, all of it against its
 * tenant's quotas, and on its devices what fits of it when they cannot
 * hold it any more (a task.unplaced alert says so). Every write is
 * handled: a start's RUNNING row and a preemption's reason are written
 * before the loop acts, which it does only when they were; an end, a
 * requeue or a violation that cannot be written is kept, in order, and
 * written first once the store can be (the pool has it at once: the loop
 * sees the tasks as it knows them meanwhile). A failed write holds back
 * the rest of the tick's starts and preemptions; stderr says once that
 * the store cannot be written and once that it can again, and a
 * store.unwritable alert says so as soon as one can be stored.
 *
 * A running task is cancelled through gp_loop_cancel: the agent stops it
 * as it stops the preempted (SIGTERM, SIGKILL after the grace period),
 * it keeps its devices until it has stopped, and once reaped it is
 * CANCELLED with its exit code (neither failed nor preempted). */
#ifndef GP_SERVER_LOOP_H
#define GP_SERVER_LOOP_H

#include "agent/agent.h"
#include "base/http.h"
#include "server/meter.h"
#include "server/metrics.h"
#include "server/pool.h"
#include "server/store.h"

#define GP_LOOP_TICK_MS 100
#define GP_LOOP_TICK_MIN_MS 10      /* between ticks, however often woken */
#define GP_LOOP_FULL_PASS_MS 60000  /* a pass over the whole queue at least this often */
#define GP_LOOP_TRIM_MS      10000  /* the logs' cap and floor at least this often */
#define GP_LOOP_TRIM_MIN_MS  1000   /* ... and at most, after tasks ended */

#define GP_LOOP_SAMPLE_MS     10000 /* usage sampling period */
#define GP_LOOP_GROW_SAMPLES  10    /* memory growth: samplings in a row */
#define GP_LOOP_UTIL_WINDOW_S 86400 /* low utilization: averaged over a day */

struct gp_loop;

#define GP_LOOP_OVERCOMMITS_MAX 16

/* A device's compute overcommit: the share of it that may be handed out,
 * in permille (1000 to 1500: memory is never overcommitted). */
struct gp_overcommit {
	char model[64];         /* a case-insensitive part of the NVML name; "" all */
	unsigned permille;
};

#define GP_LOOP_POLICY_MAX 32
#define GP_LOOP_POLICY     "default"
/* The target workload of a policy that takes one (fgd, default): the
 * shapes of the tasks submitted in the window (at most the newest
 * GP_LOOP_WORKLOAD_TASKS), made again every refresh period. */
#define GP_LOOP_WORKLOAD_WINDOW_S  86400
#define GP_LOOP_WORKLOAD_REFRESH_S 600
#define GP_LOOP_WORKLOAD_TASKS     10000

/* Preemptive mode, in gp_config_preemption_names' order: with PRIORITY a
 * task that fits nowhere may preempt running work of a lower priority,
 * as the core's gp_sched_tenant.priority_preemption says; OFF, priority
 * only orders the queue (a guarantee is taken back either way). */
enum gp_loop_preemption { GP_LOOP_PREEMPT_OFF, GP_LOOP_PREEMPT_PRIORITY };

struct gp_loop_options {
	struct gp_overcommit overcommit[GP_LOOP_OVERCOMMITS_MAX];
	int overcommits;        /* the longest matching model wins, then "" */
	unsigned sample_ms;	/* 0: GP_LOOP_SAMPLE_MS */
	unsigned grow_samples;	/* 0: GP_LOOP_GROW_SAMPLES */
	unsigned util_window_s; /* 0: GP_LOOP_UTIL_WINDOW_S */
	char policy[GP_LOOP_POLICY_MAX]; /* a policy of the core; "": GP_LOOP_POLICY */
	unsigned workload_window_s;      /* 0: GP_LOOP_WORKLOAD_WINDOW_S */
	unsigned workload_refresh_s;     /* 0: GP_LOOP_WORKLOAD_REFRESH_S */
	unsigned preemption;    /* enum gp_loop_preemption */
	/* The queue's bounds, for the replicas services submit (taskops.h);
	 * 0: none. */
	unsigned queue_max, tenant_queue_max;
	/* The tasks' logs as a whole (logdir.h): their directory (NULL: the
	 * loop does not look at it), their total cap and the free space
	 * kept where they are, in bytes (0: none). */
	const char *log_dir;
	uint64_t log_total_max, log_free_min;
};

/* Adopts what a previous server left running, then starts the loop's
 * thread; the store, the http server (for its lock), the pool and the
 * agent must outlive it. o may be NULL (the defaults). */
int gp_loop_start(struct gp_store *store, struct gp_http *http, struct gp_pool *pool,
		  struct gp_agent *agent, const struct gp_loop_options *o, struct gp_loop **ret);

/* Asks for a tick soon (a task was submitted): within GP_LOOP_TICK_MIN_MS
 * of the last one rather than GP_LOOP_TICK_MS. Safe from any thread. */
void gp_loop_wake(struct gp_loop *l);

/* Stops the thread (tasks keep running). Accepts NULL; returns NULL. */
struct gp_loop *gp_loop_stop(struct gp_loop *l);

/* One tick, for the thread: the caller holds no lock (the tick takes the
 * store's for its writes). */
void gp_loop_tick(struct gp_loop *l);

/* Cancels the running task `task` for the tenant named who: the loop has
 * the agent send SIGTERM to its group at its next tick (woken now),
 * SIGKILL after the grace period, and the tick that reaps it records it
 * as cancelled by who. Asking again changes nothing. -ENOENT when the
 * pool does not have it running. The caller holds the store's lock (the
 * API's handlers do). */
int gp_loop_cancel(struct gp_loop *l, int64_t task, const char *who);
/* Is the running task being cancelled? False for l NULL. */
bool gp_loop_cancelling(const struct gp_loop *l, int64_t task);

/* A task's row says RUNNING before its process exists (so that a crash
 * cannot start it twice), and the loop lets go of the store's lock while
 * the agent starts it. A handler that reads such a row (pid 0) calls
 * this: it waits, giving up the store's lock meanwhile, while the loop
 * starts that task, so that nobody is shown a running task without its
 * process group. True when it waited (read the row again). The caller
 * holds the store's lock; false for l NULL. */
bool gp_loop_start_wait(struct gp_loop *l, int64_t task);

/* May the running task t have compute_pct of each of its devices now?
 * The same rules as a pass (sched.h, gp_sched_change): its devices'
 * compute with their overcommit, its tenant's quota and model quotas,
 * guaranteed plus borrowable; a share that goes down always may. 0: it
 * may, and past a guarantee it would borrow (*ret_borrowed; the caller
 * stores the change, then puts it in the pool with that flag, and the
 * next tick applies it); -EBUSY with why (what it would need, what is
 * free or left, what to do); -ENOENT when the pool does not count it as
 * running (it is being stopped); -ENOMEM. Reads the pool only; the
 * caller holds the store's lock, so that nothing changes before it
 * writes. */
int gp_loop_task_change(struct gp_loop *l, const struct gp_task *t, unsigned compute_pct,
			bool *ret_borrowed, char *why, size_t len);

/* Could this machine hold task t (not yet stored) at all, every device
 * idle? Its runtime is settled first (server/runtime.h: t->runtime, and
 * its model when it names none). 0 when it could; else -E2BIG with why
 * ("this pool's largest node has 4 devices; ask for at most 4", "no card
 * of this pool answers to \"H100\" …"), naming the field in *ret_field
 * ("devices", "mem_mib", "model", "runtime"); await_cards as
 * gp_runtime_settle's. Reads nothing that changes: any thread. */
int gp_loop_task_could_fit(struct gp_loop *l, struct gp_task *t, bool await_cards,
			   const char **ret_field, char *why, size_t len);

/* The live numbers, for the API's handlers (which hold the store's
 * lock, under which the loop changes them); NULL for l NULL. */
const struct gp_meter *gp_loop_meter(const struct gp_loop *l);
/* The services' controller (service.h) and the schedules (schedule.h),
 * for the API, which holds the store's lock while it uses them. NULL for
 * l NULL. */
struct gp_services *gp_loop_services(struct gp_loop *l);
struct gp_schedules *gp_loop_schedules(struct gp_loop *l);
/* A copy of the loop's numbers into *ret; false (nothing copied) for l
 * NULL. */
bool gp_loop_stats(struct gp_loop *l, struct gp_loop_stats *ret);

#endif
