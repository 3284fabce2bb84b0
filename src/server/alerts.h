/* alerts.h — the server's alert rules. Alerts live in the store (one
 * active alert per kind and object, store.h); this module decides when
 * to raise and when to clear them.
 *
 *   level     kind                object         when
 *   warning   task.failed         "task ID"      a task failed (non-zero
 *                                                exit, signal, could not start):
 *                                                its tenant's to look at
 *   critical  service.crash-loop  "service NAME" 3 replicas in a row failed
 *                                                within 10 s of their start
 *                                                (service.h); cleared when one
 *                                                runs longer or ends otherwise
 *   critical  task.violation      "task ID"      the verifier found a process of
 *                                                the task over its slice, without
 *                                                the interposer, or on a device
 *                                                not its task's (agent.h)
 *   critical  task.violation      "node"         a device process that belongs
 *                                                to no task (the latest one)
 *   critical  task.unplaced       "task ID"      a running task that its devices
 *                                                cannot hold as it runs (one is
 *                                                gone, or it holds more than they
 *                                                have): it still counts in its
 *                                                tenant's quotas and where it fits,
 *                                                but the books and the devices
 *                                                disagree
 *   critical  store.unwritable    "store"        the database could not be
 *                                                written: the loop started and
 *                                                preempted no task until it could
 *   warning   task.log-capped     "task ID"      a task's log passed its cap
 *                                                (the server's --log-max) and
 *                                                its oldest part was dropped
 *   warning   task.log-lost       "task ID"      a task's output could not be
 *                                                written to its log (a full
 *                                                disk, ...) and was dropped
 *   warning   device.busy         "device UUID"  memory in use (NVML), or the
 *                                                slices' memory or compute,
 *                                                above 80 % of the device
 *   warning   quota.high          "tenant NAME"  a tenant's running tasks hold
 *                                                above 80 % of its memory or
 *                                                compute quota (guaranteed +
 *                                                borrowable)
 *   warning   quota.high          "tenant NAME/  likewise of one of its model
 *                                  MODEL"        quotas, counting the shares on
 *                                                the devices that quota governs
 *   warning   task.memory-grows   "task ID"      a running task's memory rose
 *                                                in each of the last N samplings
 *   info      device.idle         "device UUID"  utilization averaged over the
 *                                                window below 30 %
 *
 * The conditions are checked after each sampling (gp_alerts_check): one
 * that starts to hold raises its alert, one that stops holding clears it
 * (the 80 % ones at 70 %, so that a value near the line does not raise an
 * alert at every sampling). task.failed, task.log-capped, task.log-lost,
 * store.unwritable and service.crash-loop are events: raised at once (the loop calls the
 * function for each), once per task (or, for the store, while one is
 * active), and they stay until an operator clears them
 * (POST /v1/alerts/ID/clear); a check never clears them (the services'
 * controller clears a crash loop that is over). task.unplaced
 * is a condition the loop reports as it sees it: raised and cleared at
 * once (gp_alerts_unplaced, gp_alerts_placed), kept by the checks while
 * reported, and cleared by a check when no longer (a previous run's).
 *
 * Used from the loop's thread; store writes join the caller's transaction.
 * The active alerts are read from the store at each check, so an alert an
 * operator cleared while its condition still holds is raised again.
 * Functions return 0 or a negative errno. */
#ifndef GP_SERVER_ALERTS_H
#define GP_SERVER_ALERTS_H

#include "server/meter.h"
#include "server/store.h"

#define GP_ALERT_HIGH_PCT  80 /* device.busy, quota.high: raised above */
#define GP_ALERT_CLEAR_PCT 70 /* ... and cleared below */
#define GP_ALERT_IDLE_PCT  30 /* device.idle: raised below */

struct gp_alerts;

/* A quota (guaranteed + borrowable) and what is held against it. */
struct gp_quota_held {
	uint64_t mem_quota_mib, mem_mib;
	uint64_t pct_quota, pct; /* compute, in percent of a device */
};

/* The share of the quota held, in percent: the larger of memory and
 * compute (a part whose quota is 0 counts 0). */
double gp_quota_held_pct(const struct gp_quota_held *u);

/* The quota.high rule, for a tenant's overall quota or one of its model
 * quotas: true when the alert is to be active (raised, or kept), false
 * when it is to be cleared (or not raised). It holds above
 * GP_ALERT_HIGH_PCT, and, when already `raised`, down to
 * GP_ALERT_CLEAR_PCT. A quota of 0 in both parts is no limit: false. */
bool gp_alerts_quota_high(const struct gp_quota_held *u, bool raised);

/* The rules over the store's alerts (those of a previous run are cleared
 * at the first check if their condition no longer holds). */
int gp_alerts_new(struct gp_store *store, struct gp_alerts **ret);
struct gp_alerts *gp_alerts_free(struct gp_alerts *a); /* accepts NULL; returns NULL */

/* Task t failed; `why` says how. */
int gp_alerts_task_failed(struct gp_alerts *a, const struct gp_task *t, const char *why);

/* The verifier found a violation by task t (NULL: by a process of no
 * task); text names the process, the device and the figures. Stays until
 * an operator clears it. */
int gp_alerts_violation(struct gp_alerts *a, const struct gp_task *t, const char *text);
/* Task `task`'s log passed its cap of cap_bytes and its oldest
 * dropped_bytes are gone (the log pump's report, agent/logpump.h): a
 * warning for the task's tenant, saying so and what to do. Raised once
 * per task: a later call (more was dropped) writes nothing, so a task
 * that floods its log costs no write per report; the alert keeps the
 * figure it was raised with (the logs API says how much is gone now).
 * dropped_bytes 0: nothing to say. */
int gp_alerts_log_capped(struct gp_alerts *a, int64_t task, uint64_t cap_bytes,
			 uint64_t dropped_bytes);

/* Task `task`'s output could not be written to its log: lost_bytes of it
 * were dropped, the last write error `error` (a negative errno: -ENOSPC,
 * -EDQUOT, ...), or `floor`: the free space where the logs are was under
 * the server's --log-free-min. A warning, raised once per task, as
 * above. lost_bytes 0 and error 0: nothing to say. */
int gp_alerts_log_lost(struct gp_alerts *a, int64_t task, uint64_t lost_bytes, int error,
		       bool floor);

/* Service `service` of `tenant` crash-loops (message: "crash-looping:
 * last exit ..."), and is well again. */
int gp_alerts_service_crash_loop(struct gp_alerts *a, int64_t tenant, const char *service,
				 const char *message);
int gp_alerts_service_recovered(struct gp_alerts *a, const char *service);

/* The store could not be written: message says since when, why and
 * what the loop did meanwhile. An event, raised when none is active. */
int gp_alerts_store_unwritable(struct gp_alerts *a, const char *message);

/* Running task t cannot be counted where it runs; why says what is wrong
 * and what to do. Raised at once the first time (a store failure leaves
 * it unreported, so the next call tries again); later calls for t write
 * nothing until gp_alerts_placed. */
int gp_alerts_unplaced(struct gp_alerts *a, const struct gp_task *t, const char *why);
/* Task `task` is counted where it runs again, or ended: its task.unplaced
 * alert, if reported, is cleared now (else at the next check). */
int gp_alerts_placed(struct gp_alerts *a, int64_t task);
/* How many task.unplaced alerts are reported (gp_alerts_placed has
 * something to clear only when some are). */
int gp_alerts_unplaced_count(const struct gp_alerts *a);

/* Is `kind` an event (raised at once, cleared by an operator), not a
 * condition that a check raises and clears? */
bool gp_alerts_is_event(const char *kind);

/* Raises and clears the condition alerts from the meter's numbers. */
int gp_alerts_check(struct gp_alerts *a, const struct gp_meter *m);

#endif
