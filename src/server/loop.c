/* loop.c — the scheduling loop over the pool, the store, the core and the
 * agent (loop.h). */
#include "server/loop.h"
#include "server/runtime.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/clock.h"
#include "base/parse.h"
#include "base/pshared.h"
#include "base/user.h"
#include "core/cluster.h"
#include "core/models.h"
#include "core/partition.h"
#include "core/policy.h"
#include "core/workload.h"
#include "server/alerts.h"
#include "server/depend.h"
#include "server/logdir.h"
#include "core/sched.h"
#include "server/schedule.h"
#include "server/service.h"
#include "shim/region.h"
#include "vendor/vendor.h"

#define HOST_PLENTY 1000000000u /* tasks ask nothing of the host yet */
#define LOOSE_MAX   1024        /* owed audit rows and alerts of no task row */
#define COVERAGE    0.95        /* of the target workload, as `gpupool sim` */
#define REASONS_TXN 256         /* reasons written in one transaction */
#define DROPS_MAX   16          /* log drops taken at a tick */
#define GROWTH_RESTART_PCT 80   /* of its memory, a growing task is restarted */
#define TIMES_UP_MAX 16         /* tasks stopped for their time limit at a tick */

enum record_alert { RECORD_NO_ALERT, RECORD_FAILED, RECORD_VIOLATION };

/* One write of the loop, in one transaction: a task's row (the fields
 * the loop owns: state, reason, placement, pid, exit code, times), an
 * audit row, an alert, each optional. */
struct record {
	bool row;
	struct gp_task task;            /* the row; whose the alert is */
	char action[GP_AUDIT_ACTION_MAX];   /* "": no audit row */
	char object[GP_AUDIT_OBJECT_MAX];
	char detail[GP_REASON_MAX];
	enum record_alert alert;
	bool of_task;                   /* a violation of task (else of no task) */
	char why[GP_REASON_MAX];        /* the alert's text */
};

/* What the loop recorded while the store could not be written, in order,
 * written before anything else once it can. A task's row supersedes the
 * row of its earlier records (their audit rows and alerts stay). */
struct owed {
	struct record *r;
	int n, cap;
	int loose, dropped;     /* records of no row; those not kept */
};

/* The store as the loop writes it: failing since when, and why. */
struct store_health {
	bool failing;
	bool alerted;           /* its store.unwritable alert is stored */
	int64_t since;          /* unix ms */
	char why[GP_REASON_MAX];
};

/* What the agent reported at a tick (gp_agent_poll), kept in order to be
 * recorded once the loop holds the store's lock. */
struct event {
	bool ended;             /* else a violation */
	int64_t task;
	int code;
	bool stopped;
	bool violation;         /* ended: the verifier stopped it, text says why (else
				 * text is the agent's failure, or "") */
	char text[GP_REASON_MAX];
};

struct events {
	struct event *e;
	int n, cap;
	int lost;               /* not kept: out of memory */
};

/* A running task its devices cannot hold, for its task.unplaced alert. */
struct misfit {
	int64_t id, tenant;
	char name[GP_STORE_NAME_MAX];
	char why[2 * GP_REASON_MAX];
};

/* The share and priority the loop last gave the agent for a running task. */
struct applied {
	int64_t id;
	unsigned compute_pct, priority;
};

struct gp_loop {
	struct gp_store *store;
	struct gp_store *reader;        /* reads for the target workload; NULL: store's */
	struct gp_http *http;           /* its lock is the store's (loop.h) */
	struct gp_pool *pool;
	struct gp_agent *agent;
	struct gp_policy *policy;
	struct gp_workload *target;     /* the policy's (it borrows it); NULL: none */
	int64_t target_at;              /* when it was made (unix ms); 0: not yet */
	char target_text[GP_REASON_MAX]; /* what it was, as last said on stderr */
	pthread_t thread;
	atomic_bool stop;
	_Atomic uint32_t wake_gen;      /* futex: bumped by gp_loop_wake */
	struct gp_meter *meter;
	struct gp_alerts *alerts;
	int64_t starting[GP_AGENT_TASKS_MAX]; /* the tasks being started (store's lock) */
	int n_starting;
	pthread_cond_t started;         /* with the store's lock: starting emptied */
	pthread_mutex_t stats_lock;     /* guards stats */
	struct gp_loop_stats stats;
	bool meter_failing; /* said so on stderr; said again when it recovers */
	struct owed owed;
	int tick_ok, tick_failed;       /* this tick's writes */
	struct store_health health;
	struct gp_loop_options o;
	/* What the passes have looked at: the pool's count of changes at the
	 * last one, and whether the next must look at the whole queue. */
	uint64_t seen_gen;
	bool need_full;
	int64_t full_at;                /* the last pass over the whole queue (mono ms) */
	uint8_t held[GP_AGENT_DEVICES_MAX]; /* the partitions of no task the last pass saw */
	struct applied applied[GP_AGENT_TASKS_MAX];
	int n_applied;
	struct gp_services *services;   /* the services' controller (service.h) */
	struct gp_schedules *schedules; /* the time-of-day rules (schedule.h) */
	struct gp_logdir *logdir;       /* the logs as a whole; NULL: not looked at */
	bool log_room;                  /* at this tick: new logs have room */
	char log_why[GP_REASON_MAX];    /* else why the tasks that would start wait */
	int64_t trim_at;                /* the logs' last trim (mono ms) */
	bool trim_due;                  /* tasks ended since */
	/* The pool's counts at the last look at the held tasks (depend.h)
	 * that wrote what it meant to; dep_looked: there was one. */
	uint64_t dep_gen, dep_ends;
	bool dep_looked;
};

/* One pass: the pool's view, and the scheduler's view of it (also the
 * look gp_loop_task_change takes, which applies nothing). */
struct tick {
	struct gp_pool_view view;
	bool all;                       /* the whole queue is in the view */
	struct gp_sched_task *sched;    /* the running tasks counted, then the queued */
	const struct gp_pool_queued **seen; /* each queued one as the view has it, by index */
	int n_sched;
	struct gp_sched_outcome *out;
	int n_out;
	struct gp_pool_reason *reason;  /* the reasons to write, if they changed */
	int n_reasons;
	char (*why)[GP_REASON_MAX];     /* of those that ask for a model not here */
	int n_why;
	struct gp_sched_tenant *tenant;
	int tenants;
	struct gp_sched_model_quota *quota;     /* the tenants' model quotas */
	int quotas;
	struct gp_cluster *cluster;
	int64_t *placed;                /* running tasks that fit where they run */
	int n_placed;
	struct misfit *misfit;          /* those that do not */
	int n_misfit;
	bool foreign;   /* another changed what the pass decided on: act no more */
	/* The last model asked for, and what request_of made of it. */
	char model[GP_STORE_NAME_MAX];
	uint64_t models;
	bool model_known;
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The store's lock: the HTTP lock (loop.h). */
static void store_lock(struct gp_loop *l)
{
	gp_http_lock(l->http);
}

static void store_unlock(struct gp_loop *l)
{
	gp_http_unlock(l->http);
}

/* ---- what the loop writes ------------------------------------------------ */

/* Counts a write of this tick: its result decides whether tasks start
 * (store_report). */
static int write_count(struct gp_loop *l, int r)
{
	if (r < 0) {
		l->tick_failed++;
		snprintf(l->health.why, sizeof(l->health.why), "%s",
			 r == -ENOMEM ? strerror(-r) : gp_store_error(l->store));
	} else {
		l->tick_ok++;
	}
	return r;
}

/* The fields of a task's row that the loop owns, from `from`. */
static void loop_fields(struct gp_task *to, const struct gp_task *from)
{
	to->state = from->state;
	memcpy(to->reason, from->reason, sizeof(to->reason));
	memcpy(to->placement, from->placement, sizeof(to->placement));
	to->pid = from->pid;
	to->exit_code = from->exit_code;
	to->started = from->started;
	to->ended = from->ended;
	to->timed_out = from->timed_out;
	if (to->mem_pct) /* resolved on the card it got (start_row) */
		to->mem_mib = from->mem_mib;
}

/* Task id as the loop knows it (the pool has it, with what the loop owes
 * the store), as a row: what the pool keeps of it, the rest empty. */
static int task_known(struct gp_loop *l, int64_t id, struct gp_task *t)
{
	struct gp_pool_task pt;
	int r = gp_pool_task_get(l->pool, id, &pt);

	if (r == 0)
		gp_pool_task_row(&pt, t);
	return r;
}

/* Applies rec's row to the pool as record_put applies it to the store:
 * the loop's fields over the task as the pool has it. */
static void pool_apply(struct gp_loop *l, const struct record *rec)
{
	struct gp_task t;

	if (!rec->row || task_known(l, rec->task.id, &t) < 0)
		return;
	loop_fields(&t, &rec->task);
	gp_pool_task_put(l->pool, &t);
}

/* Writes one record into the open transaction. Only the loop's fields of
 * the row are written over the store's (the API may have changed the
 * share or the priority since); a row that is gone is not written. */
static int record_put(struct gp_loop *l, const struct record *rec)
{
	struct gp_task t;
	int r = 0;

	if (rec->row) {
		r = gp_store_task_get(l->store, rec->task.id, &t);
		if (r == 0) {
			loop_fields(&t, &rec->task);
			r = gp_store_task_update(l->store, &t);
		} else if (r == -ENOENT) {
			r = 0;
		}
	}
	if (r == 0 && rec->action[0])
		r = gp_store_audit(l->store, "server", rec->action, rec->object, rec->detail);
	if (r == 0 && rec->alert == RECORD_FAILED)
		r = gp_alerts_task_failed(l->alerts, &rec->task, rec->why);
	if (r == 0 && rec->alert == RECORD_VIOLATION)
		r = gp_alerts_violation(l->alerts, rec->of_task ? &rec->task : NULL, rec->why);
	return r;
}

/* Writes what is owed, then rec[0..n), in one transaction: all of it
 * (nothing is owed any more) or none. 0, or the store's error. */
static int records_write(struct gp_loop *l, const struct record *rec, int n)
{
	int r;

	if (!l->owed.n && !n)
		return 0;
	r = gp_store_begin(l->store);
	for (int i = 0; r == 0 && i < l->owed.n; i++)
		r = record_put(l, &l->owed.r[i]);
	for (int i = 0; r == 0 && i < n; i++)
		r = record_put(l, &rec[i]);
	if (r == 0)
		r = gp_store_commit(l->store);
	if (r < 0) {
		gp_store_rollback(l->store);
	} else {
		l->owed.n = l->owed.loose = 0;
	}
	return write_count(l, r);
}

/* Keeps rec until the store can be written. Records of no row (audit
 * rows and alerts of violations) are kept up to LOOSE_MAX; a row always
 * is, and supersedes the task's earlier rows. */
static void record_owe(struct gp_loop *l, const struct record *rec)
{
	struct owed *o = &l->owed;

	if (!rec->row && o->loose == LOOSE_MAX) {
		o->dropped++;
		return;
	}
	for (int i = 0; rec->row && i < o->n; i++)
		if (o->r[i].row && o->r[i].task.id == rec->task.id)
			o->r[i].row = false;
	if (o->n == o->cap) {
		int cap = o->cap ? 2 * o->cap : 16;
		struct record *bigger = realloc(o->r, (size_t)cap * sizeof(*bigger));

		if (!bigger) {
			o->dropped++;
			return;
		}
		o->r = bigger;
		o->cap = cap;
	}
	o->r[o->n++] = *rec;
	o->loose += !rec->row;
}

/* Records what happened (n records, in one transaction): written now,
 * or, when the store cannot be written (or could not this tick), kept
 * and written at a later tick; in the pool at once either way (the loop
 * knows it happened). */
static void records(struct gp_loop *l, const struct record *rec, int n)
{
	if (l->tick_failed || records_write(l, rec, n) < 0)
		for (int i = 0; i < n; i++)
			record_owe(l, &rec[i]);
	for (int i = 0; i < n; i++)
		pool_apply(l, &rec[i]);
}

static void record(struct gp_loop *l, const struct record *rec)
{
	records(l, rec, 1);
}

/* A record of task t's row (t as it is now), with an audit row when
 * action is not NULL. */
static void record_init(struct record *rec, const struct gp_task *t, const char *action,
			const char *detail)
{
	memset(rec, 0, sizeof(*rec));
	rec->row = true;
	rec->task = *t;
	snprintf(rec->object, sizeof(rec->object), "task %" PRId64, t->id);
	if (action) {
		snprintf(rec->action, sizeof(rec->action), "%s", action);
		snprintf(rec->detail, sizeof(rec->detail), "%s", detail);
	}
}

/* Records task t's end (or requeue): its row, the audit row, and the
 * task.failed alert when it failed. */
static void record_end(struct gp_loop *l, const struct gp_task *t, const char *action)
{
	struct record rec;

	record_init(&rec, t, action, t->reason[0] ? t->reason : "exited with code 0");
	if (t->state == GP_TASK_FAILED) {
		rec.alert = RECORD_FAILED;
		snprintf(rec.why, sizeof(rec.why), "%s", t->reason);
	}
	record(l, &rec);
}

/* Writes task t's row and an audit row before the loop acts on it (starts
 * or preempts it), then puts it in the pool: the loop acts only on what
 * the store has, so a store that cannot be written starts and stops
 * nothing. 0, or the error. */
static int record_ahead(struct gp_loop *l, const struct gp_task *t, const char *action,
			const char *detail)
{
	struct record rec;

	int r;

	if (l->tick_failed)
		return -EAGAIN;
	record_init(&rec, t, action, detail);
	r = records_write(l, &rec, 1);
	if (r == 0)
		pool_apply(l, &rec);
	return r;
}

/* The store.unwritable alert: while it fails (over) or once it is over. */
static int store_alert(struct gp_loop *l, bool over, int64_t now)
{
	char since[40], message[GP_REASON_MAX];

	gp_unix_ms_text(l->health.since, since, sizeof(since));
	if (over)
		snprintf(message, sizeof(message),
			 "the database could not be written for %lld s from %s (%.60s): no "
			 "task was started or preempted meanwhile; what the loop recorded is "
			 "written now",
			 (long long)((now - l->health.since) / 1000), since, l->health.why);
	else
		snprintf(message, sizeof(message),
			 "the database cannot be written since %s (%.60s): no task starts or is "
			 "preempted until it can; the loop keeps what it records till then",
			 since, l->health.why);
	return gp_alerts_store_unwritable(l->alerts, message);
}

/* After a tick: says on stderr (once) that the store cannot be written,
 * and in an alert as soon as one can be stored; and that it can again,
 * once a write succeeded, none failed and nothing is owed. */
static void store_report(struct gp_loop *l)
{
	int64_t now = gp_unix_ms();

	if (l->tick_failed && !l->health.failing) {
		l->health.failing = true;
		l->health.since = now;
		fprintf(stderr,
			"gpupool server: cannot write the store: %s; no task is started or "
			"preempted until it can be, and what the loop records meanwhile is kept "
			"and written then\n",
			l->health.why);
		l->health.alerted = store_alert(l, false, now) == 0;
	} else if (l->health.failing && !l->tick_failed && l->tick_ok && !l->owed.n) {
		fprintf(stderr,
			"gpupool server: writing the store again after %.1f s; tasks start "
			"again%s\n",
			(double)(now - l->health.since) / 1000.0,
			l->owed.dropped ? " (audit rows and alerts of violations were lost "
					  "meanwhile: too many to keep)"
					: "");
		if (!l->health.alerted)
			store_alert(l, true, now);
		l->health.failing = false;
		l->owed.dropped = 0;
	}
}

/* ---- tasks that ended --------------------------------------------------- */

/* How a task's process ended, as its reason says it. */
static void exit_text(int code, char *buf, size_t len)
{
	if (code < 0)
		snprintf(buf, len, "its exit code is not known");
	else if (code > 128)
		snprintf(buf, len, "killed by signal %d", code - 128);
	else
		snprintf(buf, len, "exited with code %d", code);
}

/* A task stopped from outside (a tenant cancelled it, or the verifier
 * stopped it): its state, why, and how its process ended. */
static void ended_stopped(struct gp_task *t, enum gp_task_state state, const char *why,
			  int code, int64_t now)
{
	char how[64];

	exit_text(code, how, sizeof(how));
	t->state = state;
	t->ended = now;
	if (snprintf(t->reason, sizeof(t->reason), "%s; %s", why, how) >= (int)sizeof(t->reason))
		snprintf(t->reason + sizeof(t->reason) - 4, 4, "...");
}

/* "time limit 0:10:00 reached": why a task its limit stopped ended. */
static void time_limit_why(uint64_t limit_s, char *buf, size_t len)
{
	char limit[32];

	gp_time_limit_text(limit_s, limit, sizeof(limit));
	snprintf(buf, len, "time limit %s reached", limit);
}

/* Keeps what the agent reports, to record it under the store's lock. */
static struct event *event_add(struct events *ev)
{
	if (ev->n == ev->cap) {
		int cap = ev->cap ? 2 * ev->cap : 16;
		struct event *bigger = realloc(ev->e, (size_t)cap * sizeof(*bigger));

		if (!bigger) {
			ev->lost++;
			return NULL;
		}
		ev->e = bigger;
		ev->cap = cap;
	}
	ev->e[ev->n] = (struct event){ 0 };
	return &ev->e[ev->n++];
}

static void on_ended(void *ctx, int64_t id, int code, bool stopped, const char *violation,
		     const char *failure)
{
	struct event *e = event_add(ctx);

	if (!e)
		return;
	*e = (struct event){ .ended = true, .task = id, .code = code, .stopped = stopped,
			     .violation = violation != NULL };
	snprintf(e->text, sizeof(e->text), "%s",
		 violation ? violation : failure ? failure : "");
}

static void on_violation(void *ctx, int64_t id, const char *text)
{
	struct event *e = event_add(ctx);

	if (!e)
		return;
	e->task = id;
	snprintf(e->text, sizeof(e->text), "%s", text);
}

/* Task id ended (code, as gp_agent_events says): how, from what the loop
 * asked of it (a preemption, a cancel) and the verifier. */
static void task_ended(struct gp_loop *l, const struct event *e)
{
	char why[GP_REASON_MAX];
	struct gp_pool_task pt = { 0 };
	bool known = gp_pool_task_get(l->pool, e->task, &pt) == 0;
	bool timed_out = pt.time_up && e->stopped && !e->violation;
	bool cancelled = pt.cancel_by[0] && e->stopped && !e->violation && !timed_out;
	bool preempted = pt.stopping && e->stopped && !cancelled && !timed_out && !e->violation;
	int64_t now = gp_unix_ms();
	struct gp_task t;

	gp_meter_end(l->meter, e->task, now);
	gp_alerts_placed(l->alerts, e->task);
	if (!known || task_known(l, e->task, &t) < 0) {
		fprintf(stderr, "gpupool server: task %" PRId64 " ended (code %d), but the loop "
				"does not know it as running: not recorded\n",
			e->task, e->code);
		return;
	}
	t.pid = 0;
	t.exit_code = e->code;
	if (e->violation) {
		snprintf(why, sizeof(why), "stopped by the verifier: %.200s", e->text);
		ended_stopped(&t, GP_TASK_FAILED, why, e->code, now);
	} else if (timed_out) {
		time_limit_why(pt.time_limit_s, why, sizeof(why));
		ended_stopped(&t, GP_TASK_FAILED, why, e->code, now);
		t.timed_out = true;
	} else if (cancelled) {
		snprintf(why, sizeof(why), "cancelled by %s", pt.cancel_by);
		ended_stopped(&t, GP_TASK_CANCELLED, why, e->code, now);
	} else if (preempted) {
		t.state = GP_TASK_PREEMPTED;
		t.placement[0] = '\0';
		/* Its reason says why already (task_preempt wrote it), unless it
		 * was restarted. */
		if (pt.restart_why[0] || strncmp(t.reason, "preempted", 9) != 0)
			snprintf(t.reason, sizeof(t.reason), "%s",
				 pt.restart_why[0] ? pt.restart_why
						   : "preempted to make room; queued again");
	} else {
		t.state = e->code == 0 ? GP_TASK_SUCCEEDED : GP_TASK_FAILED;
		t.ended = now;
		if (e->code && e->text[0]) /* the agent knows why (out of memory) */
			snprintf(t.reason, sizeof(t.reason), "%s", e->text);
		else if (e->code)
			exit_text(e->code, t.reason, sizeof(t.reason));
		else
			t.reason[0] = '\0';
	}
	record_end(l, &t, preempted ? "task.requeue" : "task.end");
}

/* The verifier found a violation (task 0: by a process of no task). */
static void task_violation(struct gp_loop *l, const struct event *e)
{
	struct record rec = { .alert = RECORD_VIOLATION };

	rec.of_task = e->task && task_known(l, e->task, &rec.task) == 0;
	snprintf(rec.action, sizeof(rec.action), "%s",
		 rec.of_task ? "task.violation" : "node.violation");
	if (rec.of_task)
		snprintf(rec.object, sizeof(rec.object), "task %" PRId64, e->task);
	else
		snprintf(rec.object, sizeof(rec.object), "node");
	snprintf(rec.detail, sizeof(rec.detail), "%s", e->text);
	snprintf(rec.why, sizeof(rec.why), "%s", e->text);
	record(l, &rec);
}

/* Records what the agent reported, in order (the caller holds the
 * store's lock). */
static void events_record(struct gp_loop *l, const struct events *ev)
{
	for (int i = 0; i < ev->n; i++) {
		if (ev->e[i].ended)
			task_ended(l, &ev->e[i]);
		else
			task_violation(l, &ev->e[i]);
	}
	if (ev->lost)
		fprintf(stderr, "gpupool server: out of memory: %d of the agent's reports "
				"were not recorded\n",
			ev->lost);
}

/* ---- the cluster of this machine ---------------------------------------- */


/* The overcommit of a device named `name` (permille): the option whose
 * model is the longest part of the name, else the one for all, else none. */
static unsigned overcommit_of(const struct gp_loop_options *o, const char *name)
{
	int best = gp_model_best(name, NULL, o->overcommit, sizeof(*o->overcommit),
				 offsetof(struct gp_overcommit, model), o->overcommits);
	unsigned all = 1000;

	for (int i = 0; i < o->overcommits; i++)
		if (!o->overcommit[i].model[0])
			all = o->overcommit[i].permille;
	return best >= 0 ? o->overcommit[best].permille : all;
}

/* This machine as the core's node: its devices, with their models as the
 * cluster `c` numbers them; `idle`: without the partitions of no task
 * (made by hand, being destroyed), as the machine could be. */
static void node_spec_of(const struct gp_loop_options *o, const struct gp_agent_node *n,
			 bool idle, struct gp_cluster *c, struct gp_node_spec *spec)
{
	*spec = (struct gp_node_spec){ .cpu_milli = HOST_PLENTY, .mem_mib = HOST_PLENTY,
				       .devices = (uint8_t)n->devices };
	for (unsigned i = 0; i < n->devices && i < GP_NODE_DEVICES_MAX; i++) {
		struct gp_device_spec *d = &spec->device[i];
		int model = gp_cluster_model_id(c, n->device[i].name, true);

		*d = (struct gp_device_spec){ .model = (uint8_t)(model < 0 ? 0 : model),
					      .mem_mib = (uint32_t)n->device[i].mem_total_mib,
					      .overcommit =
						      (uint16_t)overcommit_of(o, n->device[i].name),
					      /* as many slices as a region has tasks */
					      .max_tasks = GP_REGION_TASKS,
					      .healthy = n->device[i].compatible,
					      .partitions = (uint8_t)n->device[i].partition_set,
					      .nvlink = n->device[i].nvlink,
					      .part_held = idle ? 0 : n->device[i].partition_held };
		snprintf(d->uuid, sizeof(d->uuid), "%.*s", (int)sizeof(d->uuid) - 1,
			 n->device[i].uuid);
	}
}

/* The core's cluster of this one machine (`idle`: as node_spec_of); its
 * node's spec in *ret_spec when not NULL. */
static int cluster_build(const struct gp_loop_options *o, const struct gp_agent_node *n,
			 bool idle, struct gp_cluster **ret, struct gp_node_spec *ret_spec)
{
	struct gp_node_spec spec;
	struct gp_cluster *c;
	int r = gp_cluster_new(0, &c);

	if (r < 0)
		return r;
	node_spec_of(o, n, idle, c, &spec);
	r = gp_cluster_add_node(c, &spec, NULL);
	if (r < 0) {
		gp_cluster_free(c);
		return r;
	}
	if (ret_spec)
		*ret_spec = spec;
	*ret = c;
	return 0;
}

/* What a task asks for, as a request is made of it. */
struct shape {
	unsigned devices;
	bool whole;             /* whole devices, or exclusive ones */
	uint64_t mem_mib;
	unsigned mem_pct;       /* of its card's memory; 0: mem_mib */
	unsigned compute_pct;
	bool mixed_models;      /* its devices may be of several models */
	const char *model;      /* a part of the devices' name; "": any */
};

static struct shape shape_of(const struct gp_task *t)
{
	return (struct shape){ .devices = t->devices, .whole = t->whole || t->exclusive,
			       .mem_mib = t->mem_mib, .mem_pct = t->mem_pct,
			       .compute_pct = t->compute_pct, .mixed_models = t->mixed_models,
			       .model = t->model };
}

/* Does device d answer to one of the terms of `model` ("A100", "T4|L4",
 * "A100,T4", "ascend": a part of its name, or its vendor's name)? */
static bool model_matches(const struct gp_agent_device *d, const char *model)
{
	return gp_model_answers(d->name, d->vendor ? d->vendor->name : NULL, model);
}

/* The memory of the largest device that answers to `model` ("": any):
 * what a whole device is charged to its tenant's quota, the card it
 * would get at most (a whole T4 is not charged as the node's A100). */
static uint32_t device_mem_max(const struct gp_agent_node *n, const char *model)
{
	uint32_t max = 0;

	for (unsigned i = 0; i < n->devices; i++)
		if (n->device[i].mem_total_mib > max &&
		    (!model[0] || model_matches(&n->device[i], model)))
			max = (uint32_t)n->device[i].mem_total_mib;
	return max;
}

/* pct percent of mem MiB, rounded down: a share's memory on a card. */
static uint32_t pct_of(uint64_t mem, unsigned pct)
{
	return (uint32_t)(mem * pct / 100);
}

/* The model ids of this machine's devices that answer to `model`. */
static uint64_t models_of(const struct gp_agent_node *n, struct gp_cluster *c, const char *model)
{
	uint64_t models = 0;

	for (unsigned i = 0; i < n->devices; i++)
		if (model_matches(&n->device[i], model))
			models |= 1ULL << gp_cluster_model_id(c, n->device[i].name, false);
	return models;
}

/* The request of shape t, its models (when it names one) in `models`;
 * -ENOENT (reason in why) when no device of that model is here. */
static int request_with(const struct gp_agent_node *n, const struct shape *t, uint64_t models,
			struct gp_request *req, char *why, size_t len)
{
	*req = (struct gp_request){ .devices = (uint8_t)(t->devices ? t->devices : 1),
				    .models = models, .mixed_models = t->mixed_models };
	if (t->whole) {
		req->whole = true;
		req->dev_mem_mib = device_mem_max(n, t->model); /* what its quota is charged */
	} else {
		req->dev_mem_pct = (uint8_t)t->mem_pct;
		/* A percent counts, unplaced, as on the largest card it accepts
		 * (resources.h); placed, as on its own. */
		req->dev_mem_mib = t->mem_pct ? pct_of(device_mem_max(n, t->model), t->mem_pct)
					      : (uint32_t)t->mem_mib;
		req->dev_compute = t->compute_pct * 10;
	}
	if (!t->model[0] || req->models)
		return 0;
	snprintf(why, len, "no device of model \"%s\" on this machine", t->model);
	return -ENOENT;
}

/* The request of a stored task; -ENOENT (reason in why) when no device
 * of the model it asks for is here. */
static int request_of(const struct gp_agent_node *n, struct gp_cluster *c, const struct gp_task *t,
		      struct gp_request *req, char *why, size_t len)
{
	struct shape sh = shape_of(t);

	return request_with(n, &sh, t->model[0] ? models_of(n, c, t->model) : 0, req, why, len);
}

/* Placement strings name devices by UUID, comma-separated; a partition
 * on a card in partition mode by the card's UUID and "@" its start unit
 * ("GPU-…@4"). */
static void placement_write(const struct gp_agent_node *n, const struct gp_placement *p,
			    char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->devices && used < len; i++) {
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
					 n->device[p->device[i]].uuid);
		if (p->part_start[i] && used < len)
			used += (size_t)snprintf(buf + used, len - used, "@%u",
						 p->part_start[i] - 1u);
	}
}

/* The devices of a placement string that this machine has, in *p; true
 * when it has them all (and there is one). The first it lacks, if any,
 * in missing (GP_REASON_MAX bytes; NULL: not wanted). */
static bool placement_read(const struct gp_agent_node *n, const char *text,
			   struct gp_placement *p, char *missing)
{
	char copy[GP_REASON_MAX], *save = NULL;
	bool all = true;

	*p = (struct gp_placement){ 0 };
	snprintf(copy, sizeof(copy), "%s", text);
	for (char *uuid = strtok_r(copy, ",", &save); uuid; uuid = strtok_r(NULL, ",", &save)) {
		char *at = strchr(uuid, '@');
		unsigned i = 0;

		if (at)
			*at++ = '\0';
		while (i < n->devices && strcmp(n->device[i].uuid, uuid) != 0)
			i++;
		if (i == n->devices || i >= GP_NODE_DEVICES_MAX ||
		    p->devices == GP_NODE_DEVICES_MAX) {
			if (all && missing)
				snprintf(missing, GP_REASON_MAX, "%s", uuid);
			all = false;
			continue;
		}
		if (at && *at >= '0' && *at < '0' + GP_PART_UNITS_MAX && !at[1])
			p->part_start[p->devices] = (uint8_t)(*at - '0' + 1);
		p->device[p->devices++] = (uint8_t)i;
	}
	return all && p->devices > 0;
}

/* ---- one pass: the scheduler's view ------------------------------------- */

/* The tenants as the pass wants them. A tenant with no quota at all (the
 * admin, say) is not limited. */
static int tick_tenants(const struct gp_loop *l, struct tick *k)
{
	k->tenant = calloc((size_t)k->view.n_tenants + 1, sizeof(*k->tenant));
	if (!k->tenant)
		return -ENOMEM;
	for (int i = 0; i < k->view.n_tenants; i++) {
		const struct gp_tenant *t = &k->view.tenants[i];
		struct gp_sched_tenant *s = &k->tenant[k->tenants++];

		*s = (struct gp_sched_tenant){ .id = t->id, .quota = gp_tenant_quota(t),
					       .priority_preemption =
						       l->o.preemption == GP_LOOP_PREEMPT_PRIORITY };
	}
	return 0;
}

/* The Unix user of a tenant ("" automatic). */
static const char *tenant_user(const struct tick *k, int64_t tenant)
{
	for (int i = 0; i < k->view.n_tenants; i++)
		if (k->view.tenants[i].id == tenant)
			return k->view.tenants[i].user;
	return "";
}

/* A reason to write for the queued task id, as the view saw it (gen),
 * when it is not the task's reason already (reasons_write). */
static void reason_want(struct tick *k, int64_t id, uint64_t gen, const char *reason)
{
	k->reason[k->n_reasons++] = (struct gp_pool_reason){ id, gen, reason };
}

/* The memory one share of req takes on device d of where's node. */
static uint32_t share_mem(struct gp_cluster *c, const struct gp_request *req, uint32_t node,
			  unsigned d)
{
	int64_t mem = gp_cluster_device_mem(c, node, (int)d);

	return gp_request_mem_on(req, mem > 0 ? (uint32_t)mem : 0);
}

/* Commits what fits of req at where, device by device: of each share as
 * much memory and compute as the device has free, on a device that takes
 * one more slice. */
static void misfit_commit(struct gp_cluster *c, const struct gp_request *req,
			  const struct gp_placement *where)
{
	for (int i = 0; i < where->devices; i++) {
		struct gp_placement at = { .node = where->node, .devices = 1,
					   .device = { where->device[i] } };
		struct gp_request one = { .devices = 1 };
		unsigned d = where->device[i];
		struct gp_node_usage u;

		if (gp_cluster_node_usage(c, where->node, &u) < 0 || d >= u.devices)
			continue;
		one.dev_mem_mib = share_mem(c, req, where->node, d);
		if (one.dev_mem_mib > u.dev_mem_free[d])
			one.dev_mem_mib = u.dev_mem_free[d];
		one.dev_compute = gp_request_share(req) < u.compute_free[d] ? gp_request_share(req)
									     : u.compute_free[d];
		if (one.dev_mem_mib || one.dev_compute)
			gp_cluster_commit(c, &one, &at);
	}
}

/* Why running task t (its request req at where, on this machine's node)
 * does not fit there: a device it lacks, or the first of its devices
 * whose free memory or compute is short of its share. */
static void misfit_why(const struct gp_agent_node *node, struct gp_cluster *c,
		       const struct gp_pool_task *t, const struct gp_request *req,
		       const struct gp_placement *where, const char *missing, char *buf,
		       size_t len)
{
	struct gp_node_usage u = { 0 };
	unsigned d = where->devices ? where->device[0] : 0;

	if (missing[0]) {
		snprintf(buf, len,
			 "it runs on %.60s, which this machine does not have: it still counts "
			 "against its tenant's quotas and on its other devices; cancel it "
			 "(gpupool task cancel %" PRId64 ")",
			 missing, t->id);
		return;
	}
	gp_cluster_node_usage(c, where->node, &u);
	for (int i = 0; i < where->devices; i++)
		if (u.compute_free[where->device[i]] < gp_request_share(req) ||
		    u.dev_mem_free[where->device[i]] <
			    share_mem(c, req, where->node, where->device[i])) {
			d = where->device[i];
			break;
		}
	snprintf(buf, len,
		 "%.48s (%.24s) has %u %% of compute and %u MiB free beside the others, short "
		 "of its %u %% and %u MiB: it still counts; lower its share (gpupool task set "
		 "%" PRId64 " --compute N) or cancel it",
		 node->device[d].uuid, node->device[d].name, u.compute_free[d] / 10u,
		 u.dev_mem_free[d], gp_request_share(req) / 10u, share_mem(c, req, where->node, d),
		 t->id);
}

/* Commits running task t (s, its request filled) where it runs. When its
 * devices cannot hold it (one is gone, or they hold more than they have)
 * it is a misfit: it still counts, all of it against its tenant's quotas
 * and what fits of it on the devices it has, and a task.unplaced alert
 * says so (until it fits again, or ends): tick_alerts raises and clears
 * them. */
static void running_commit(struct gp_loop *l, struct tick *k, const struct gp_pool_task *t,
			   struct gp_sched_task *s)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);
	char missing[GP_REASON_MAX] = "", why[2 * GP_REASON_MAX];
	bool all = placement_read(node, t->placement, &s->where, missing);
	struct misfit *m;

	if (all && gp_cluster_commit(k->cluster, &s->req, &s->where) == 0) {
		k->placed[k->n_placed++] = t->id;
		return;
	}
	s->misfit = true;
	misfit_why(node, k->cluster, t, &s->req, &s->where, missing, why, sizeof(why));
	misfit_commit(k->cluster, &s->req, &s->where);
	m = &k->misfit[k->n_misfit++];
	m->id = t->id;
	m->tenant = t->tenant;
	memcpy(m->name, t->name, sizeof(m->name));
	memcpy(m->why, why, sizeof(m->why));
}

/* A running task as the pass counts it; none when it is being stopped
 * (its capacity counts as free: starts on its devices wait for it). */
static void prepare_running(struct gp_loop *l, struct tick *k, const struct gp_pool_task *t)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);
	struct gp_sched_task *s = &k->sched[k->n_sched];
	struct gp_task row = { .id = t->id, .devices = t->devices, .whole = t->whole,
			       .exclusive = t->exclusive, .mem_mib = t->mem_mib,
			       .mem_pct = t->mem_pct, .compute_pct = t->compute_pct,
			       .mixed_models = t->mixed_models };
	char why[GP_REASON_MAX];

	if (t->stopping || t->cancel_by[0])
		return;
	*s = (struct gp_sched_task){ .id = t->id, .tenant = t->tenant, .priority = t->priority,
				     .created = t->created, .running = true,
				     .borrowed = t->borrowed, .hard = t->hard };
	/* Its model is where it runs: a model this machine lacks is no
	 * reason to leave it out. */
	memcpy(row.model, t->model, sizeof(row.model));
	request_of(node, k->cluster, &row, &s->req, why, sizeof(why));
	running_commit(l, k, t, s);
	k->n_sched++;
}

/* A queued task as the pass decides it; one that asks for a model this
 * machine lacks waits, saying so, and is not decided. */
static void prepare_queued(struct gp_loop *l, struct tick *k, const struct gp_pool_queued *q)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);
	struct gp_sched_task *s = &k->sched[k->n_sched];
	const char *model = q->model >= 0 ? k->view.models[q->model] : "";
	struct shape sh = { .devices = q->devices, .whole = q->whole || q->exclusive,
			    .mem_mib = q->mem_mib, .mem_pct = q->mem_pct,
			    .compute_pct = q->compute_pct, .mixed_models = q->mixed_models,
			    .model = model };
	char why[GP_REASON_MAX];

	if (model[0] && (!k->model_known || strcmp(k->model, model))) {
		snprintf(k->model, sizeof(k->model), "%s", model);
		k->models = models_of(node, k->cluster, model);
		k->model_known = true;
	}
	*s = (struct gp_sched_task){ .id = q->id, .tenant = q->tenant, .priority = q->priority,
				     .created = q->created };
	k->seen[k->n_sched] = q;
	if (request_with(node, &sh, model[0] ? k->models : 0, &s->req, why, sizeof(why)) == 0) {
		k->n_sched++;
		return;
	}
	if (gp_pool_reason_hash(why) == q->reason_hash)
		return; /* it says so already */
	if (!k->why)    /* the first such task of the pass */
		k->why = malloc(((size_t)k->view.n_queued + 1) * sizeof(*k->why));
	if (k->why) {
		memcpy(k->why[k->n_why], why, sizeof(why));
		reason_want(k, q->id, q->gen, k->why[k->n_why++]);
	}
}

/* The pass's view: the tenants, the running tasks committed to the
 * cluster (misfits as they fit), the queued ones with their requests. */
static int tick_prepare(struct gp_loop *l, struct tick *k)
{
	size_t n = (size_t)k->view.n_running + (size_t)k->view.n_queued + 1;

	/* Each element is written before it is read: no need to clear
	 * megabytes at every pass. */
	k->sched = malloc(n * sizeof(*k->sched));
	k->seen = malloc(n * sizeof(*k->seen));
	k->out = malloc(n * sizeof(*k->out));
	k->reason = malloc(n * sizeof(*k->reason));
	k->placed = malloc(((size_t)k->view.n_running + 1) * sizeof(*k->placed));
	k->misfit = malloc(((size_t)k->view.n_running + 1) * sizeof(*k->misfit));
	if (!k->sched || !k->seen || !k->out || !k->reason || !k->placed || !k->misfit ||
	    tick_tenants(l, k) < 0 || cluster_build(&l->o, gp_agent_node(l->agent), false, &k->cluster, NULL) < 0)
		return -ENOMEM;
	for (int i = 0; i < k->view.n_running; i++)
		prepare_running(l, k, &k->view.running[i]);
	for (int i = 0; i < k->view.n_queued; i++)
		prepare_queued(l, k, &k->view.queued[i]);
	return 0;
}

/* The model ids of this machine's devices that the quota all[q] governs. */
static uint64_t quota_models(const struct gp_agent_node *node, struct gp_cluster *c,
			     const struct gp_model_quota *all, int n, int q)
{
	uint64_t models = 0;

	for (unsigned i = 0; i < node->devices && i < GP_NODE_DEVICES_MAX; i++) {
		int id = gp_cluster_model_id(c, node->device[i].name, false);

		if (id >= 0 &&
		    gp_store_model_quota_find(all, n, all[q].tenant, node->device[i].name) == q)
			models |= 1ULL << id;
	}
	return models;
}

/* Gives tenant t its model quotas that govern a device here. */
static void tenant_model_quotas(const struct gp_agent_node *node, struct tick *k,
				struct gp_sched_tenant *t, const struct gp_model_quota *all,
				int n)
{
	int first = k->quotas;

	for (int i = 0; i < n; i++) {
		uint64_t models = all[i].tenant == t->id
					  ? quota_models(node, k->cluster, all, n, i)
					  : 0;
		struct gp_sched_model_quota *q = &k->quota[k->quotas];

		if (!models)
			continue;
		*q = (struct gp_sched_model_quota){ .models = models,
						    .quota = gp_model_quota_quota(&all[i]) };
		snprintf(q->name, sizeof(q->name), "%s", all[i].model);
		k->quotas++;
	}
	t->model_quota = k->quota + first;
	t->model_quotas = k->quotas - first;
}

/* The tenants' model quotas, as the pass wants them (after
 * tick_prepare built the cluster). */
static int tick_model_quotas(struct gp_loop *l, struct tick *k)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);

	k->quota = calloc((size_t)k->view.n_quotas + 1, sizeof(*k->quota));
	for (int i = 0; k->quota && i < k->tenants; i++)
		tenant_model_quotas(node, k, &k->tenant[i], k->view.quotas, k->view.n_quotas);
	return k->quota ? 0 : -ENOMEM;
}

/* ---- one pass: what follows from it -------------------------------------- */

/* Does a task being preempted or cancelled still run on these devices? */
static bool devices_busy(struct gp_loop *l, const struct tick *k, const struct gp_placement *p)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);

	for (int i = 0; i < k->view.n_running; i++) {
		const struct gp_pool_task *t = &k->view.running[i];
		struct gp_placement q;

		if (!t->stopping && !t->cancel_by[0])
			continue;
		placement_read(node, t->placement, &q, NULL); /* the devices it has */
		for (int a = 0; a < p->devices; a++)
			for (int b = 0; b < q.devices; b++)
				if (p->device[a] == q.device[b])
					return true;
	}
	return false;
}

/* What the agent runs for a stored task placed on `where`. */
static struct gp_agent_task spec_of(const struct gp_task *t, const struct gp_placement *where)
{
	struct gp_agent_task spec = { .id = t->id, .tenant = t->tenant, .command = t->command,
				      .workdir = t->workdir, .devices = where->devices,
				      .whole = t->whole || t->exclusive, .mem_mib = t->mem_mib,
				      .compute_pct = t->compute_pct, .priority = t->priority,
				      .hard = t->hard, .array_id = t->array_id,
				      .array_index = t->array_index };

	for (int i = 0; i < where->devices; i++) {
		spec.device[i] = where->device[i];
		spec.part_start[i] = where->part_start[i];
	}
	return spec;
}

/* A start whose log could not be opened (the agent's -EAGAIN: nothing of
 * it ran) after its row said RUNNING: queued again as it was (its place
 * in the queue too), with why, in rec; no task starts for a while
 * (logdir.h). */
static void start_later(struct gp_loop *l, struct gp_task *t, const char *why,
			struct record *rec)
{
	t->state = GP_TASK_PENDING;
	t->placement[0] = '\0';
	t->pid = 0;
	t->started = 0;
	snprintf(t->reason, sizeof(t->reason),
		 "waiting for room for its log: %.160s; queued again (nothing of it ran)", why);
	record_init(rec, t, "task.requeue", t->reason);
	if (l->logdir) {
		gp_logdir_open_failed(l->logdir, mono_ms(), why);
		l->log_room = gp_logdir_room(l->logdir, mono_ms(), l->log_why,
					     sizeof(l->log_why));
	}
}

/* A start that failed after its row said RUNNING: FAILED, with why. */
static void start_failed(struct gp_loop *l, struct gp_task *t, int r, const char *why)
{
	t->state = GP_TASK_FAILED;
	t->ended = gp_unix_ms();
	snprintf(t->reason, sizeof(t->reason), "could not start: %s", why[0] ? why : strerror(-r));
	record_end(l, t, "task.end");
}

/* Is the task of outcome o queued as the view saw it (not started,
 * cancelled or changed since)? When not, the next pass looks again. */
static bool queued_as_seen(struct gp_loop *l, const struct tick *k,
			   const struct gp_sched_outcome *o)
{
	struct gp_pool_task t;

	if (gp_pool_task_get(l->pool, o->task, &t) == 0 && t.state != GP_TASK_RUNNING &&
	    t.gen == k->seen[o->index]->gen)
		return true;
	l->need_full = true;
	return false;
}

/* One start of a pass: its row RUNNING, its declared environment, and
 * what the agent said. */
struct start {
	const struct gp_sched_outcome *o;
	struct gp_task run;
	char *env;
	pid_t pgid;
	int r;
	char why[GP_REASON_MAX - 32];
};

/* The row RUNNING at o's placement, from the task's row as the store has
 * it (with its command and directory), and its declared environment. */
static int start_row(struct gp_loop *l, struct start *st)
{
	int r = gp_store_task_get(l->store, st->o->task, &st->run);

	if (r == 0)
		r = gp_store_task_env_get(l->store, st->o->task, &st->env);
	if (write_count(l, r) < 0)
		return r;
	st->run.state = GP_TASK_RUNNING;
	st->run.pid = 0;
	st->run.started = gp_unix_ms();
	st->run.ended = 0;
	placement_write(gp_agent_node(l->agent), &st->o->where, st->run.placement,
			sizeof(st->run.placement));
	if (st->run.mem_pct && !st->run.whole && !st->run.exclusive) /* a gang's cards are alike */
		st->run.mem_mib = pct_of(gp_agent_node(l->agent)->device[st->o->where.device[0]]
						 .mem_total_mib,
					 st->run.mem_pct);
	snprintf(st->run.reason, sizeof(st->run.reason), "%s", st->o->reason);
	return 0;
}

/* Is task id being started (its row says RUNNING, its process does not
 * exist yet)? The caller holds the store's lock. */
static bool is_starting(const struct gp_loop *l, int64_t id)
{
	for (int i = 0; i < l->n_starting; i++)
		if (l->starting[i] == id)
			return true;
	return false;
}

/* Writes the n starts' rows RUNNING in one transaction, before their
 * processes exist: a start whose row cannot be written is not made (the
 * next pass tries again), so a store that fails never sees a task started
 * twice. Then they are in the pool, and being started. 0, or the error. */
static int starts_ahead(struct gp_loop *l, struct start *st, int n)
{
	struct record *rec = calloc((size_t)n + 1, sizeof(*rec));
	int r = rec ? 0 : -ENOMEM;

	for (int i = 0; r == 0 && i < n; i++)
		record_init(&rec[i], &st[i].run, NULL, NULL);
	if (r == 0 && !l->tick_failed)
		r = records_write(l, rec, n);
	for (int i = 0; r == 0 && !l->tick_failed && i < n; i++) {
		pool_apply(l, &rec[i]);
		if (st[i].o->borrowed)
			gp_pool_task_borrowed(l->pool, st[i].run.id, true);
		l->starting[l->n_starting++] = st[i].run.id;
	}
	free(rec);
	return r < 0 ? r : l->tick_failed ? -EAGAIN : 0;
}

/* The agent starts them, without the store's lock (it forks); whether
 * another changed what the pass decided on meanwhile is in k->foreign. */
static void starts_launch(struct gp_loop *l, struct tick *k, struct start *st, int n)
{
	uint64_t before, after;

	gp_pool_gen(l->pool, &before);
	store_unlock(l);
	for (int i = 0; i < n; i++) {
		struct gp_agent_task spec = spec_of(&st[i].run, &st[i].o->where);

		spec.user = tenant_user(k, st[i].run.tenant);
		spec.env = st[i].env;
		st[i].r = gp_agent_start(l->agent, &spec, &st[i].pgid, st[i].why,
					 sizeof(st[i].why));
	}
	store_lock(l);
	gp_pool_gen(l->pool, &after);
	k->foreign |= after != before;
}

/* Records how the starts went, in one transaction: each one's pid and its
 * task.start audit row, or its failure (FAILED, with why); then lets the
 * readers gp_loop_start_wait holds back go on. */
static void starts_record(struct gp_loop *l, struct start *st, int n)
{
	struct record *rec = calloc((size_t)n + 1, sizeof(*rec));
	int m = 0;

	for (int i = 0; i < n; i++) {
		struct gp_task *t = &st[i].run;
		struct gp_agent_task spec;
		char detail[GP_REASON_MAX];

		if (st[i].r == -EAGAIN && rec) {
			start_later(l, t, st[i].why, &rec[m++]);
			continue;
		}
		if (st[i].r < 0) {
			start_failed(l, t, st[i].r, st[i].why);
			continue;
		}
		t->pid = st[i].pgid;
		if (l->logdir)
			gp_logdir_opened(l->logdir);
		spec = spec_of(t, &st[i].o->where);
		gp_meter_start(l->meter, t, spec.device, spec.devices, st[i].pgid, t->started);
		pthread_mutex_lock(&l->stats_lock);
		gp_histogram_observe(&l->stats.wait, (double)(t->started - t->created) / 1000.0);
		pthread_mutex_unlock(&l->stats_lock);
		snprintf(detail, sizeof(detail), "on %.120s (%.120s)", t->placement,
			 st[i].o->reason);
		if (rec)
			record_init(&rec[m++], t, "task.start", detail);
	}
	records(l, rec, m);
	free(rec);
	l->n_starting = 0;
	pthread_cond_broadcast(&l->started);
}

/* Adds outcome o to the starts of the pass, if it may start now: it is
 * queued as the view saw it, and no task being preempted or cancelled
 * still runs on its devices (else it waits for them, saying so). */
static void start_add(struct gp_loop *l, struct tick *k, const struct gp_sched_outcome *o,
		      struct start *st, int *n)
{
	if (!queued_as_seen(l, k, o))
		return;
	if (devices_busy(l, k, &o->where)) {
		reason_want(k, o->task, k->seen[o->index]->gen,
			    "starting once the preempted tasks on its devices have stopped");
		return;
	}
	st[*n] = (struct start){ .o = o };
	if (start_row(l, &st[*n]) < 0) {
		free(st[*n].env);
		return;
	}
	(*n)++;
}

/* Starts what the pass starts, all at once: their rows (one write), their
 * processes (no lock held), what happened (one write). */
static void starts(struct gp_loop *l, struct tick *k, struct start *st, int n)
{
	if (n && starts_ahead(l, st, n) == 0) {
		starts_launch(l, k, st, n);
		starts_record(l, st, n);
	}
	for (int i = 0; i < n; i++)
		free(st[i].env);
}

/* Asks victim t to stop; its reason and audit row are written first, so
 * that a store that fails stops nothing. The starts of the pass on its
 * devices wait for it (it is marked stopping in the pass's view). */
static void task_preempt(struct gp_loop *l, struct tick *k, const struct gp_sched_outcome *o)
{
	struct gp_pool_task pt;
	struct gp_task was;

	if (gp_pool_task_get(l->pool, o->task, &pt) < 0 || pt.state != GP_TASK_RUNNING ||
	    pt.stopping || pt.cancel_by[0] || task_known(l, o->task, &was) < 0) {
		l->need_full = true;
		return;
	}
	snprintf(was.reason, sizeof(was.reason), "%s", o->reason);
	if (record_ahead(l, &was, "task.preempt", o->reason) < 0)
		return;
	if (gp_agent_stop(l->agent, o->task) == 0)
		gp_pool_task_stopping(l->pool, o->task, NULL);
	for (int i = 0; i < k->view.n_running; i++)
		if (k->view.running[i].id == o->task)
			k->view.running[i].stopping = true;
}

/* A device holds at most as many slices as its region has task entries
 * (GP_REGION_TASKS; the core's max_tasks): when a task waits for want of
 * a device while some device is full that way, its reason says so. How
 * many devices are full, from the running tasks of the pass. */
static unsigned devices_full(const struct gp_loop *l, const struct tick *k)
{
	unsigned held[GP_AGENT_DEVICES_MAX] = { 0 }, full = 0;
	unsigned devices = gp_agent_node(l->agent)->devices;

	for (int i = 0; i < k->n_sched; i++)
		for (int d = 0; k->sched[i].running && d < k->sched[i].where.devices; d++)
			if (k->sched[i].where.device[d] < GP_AGENT_DEVICES_MAX)
				held[k->sched[i].where.device[d]]++;
	for (unsigned d = 0; d < devices && d < GP_AGENT_DEVICES_MAX; d++)
		full += held[d] >= GP_REGION_TASKS;
	return full;
}

/* o waits: its reason, with what devices_full says, to write when it is
 * not the task's reason already. */
static void task_wait(struct tick *k, struct gp_sched_outcome *o, unsigned full)
{
	const struct gp_pool_queued *q = k->seen[o->index];
	size_t len = strlen(o->reason);

	if (full && strncmp(o->reason, "no device fits now", 18) == 0)
		snprintf(o->reason + len, sizeof(o->reason) - len,
			 "; %u device(s) hold %d slices, the most a device's region tracks", full,
			 GP_REGION_TASKS);
	if (gp_pool_reason_hash(o->reason) != q->reason_hash)
		reason_want(k, o->task, q->gen, o->reason);
}

/* Writes n reasons in one transaction, then puts them in the pool. A
 * reason is worked out again at every pass over the queue, so its
 * transaction does not wait for the disk (gp_store_begin_unsynced). */
static void reasons_txn(struct gp_loop *l, const struct gp_pool_reason *r, int n)
{
	int err = gp_store_begin_unsynced(l->store);

	for (int i = 0; err == 0 && i < n; i++)
		if ((err = gp_store_task_reason(l->store, r[i].id, r[i].reason)) == -ENOENT)
			err = 0;
	if (err == 0)
		err = gp_store_commit(l->store);
	if (write_count(l, err) < 0) {
		gp_store_rollback(l->store);
		return;
	}
	for (int i = 0; i < n; i++)
		gp_pool_task_reason(l->pool, r[i].id, r[i].reason);
}

/* Writes the waiting tasks' reasons that changed (not while the store
 * fails: a reason is worked out again at the next pass). */
static void reasons_write(struct gp_loop *l, struct tick *k)
{
	int n = l->tick_failed ? 0 : gp_pool_reasons_changed(l->pool, k->reason, k->n_reasons);

	for (int at = 0; at < n && !l->tick_failed; at += REASONS_TXN)
		reasons_txn(l, k->reason + at, n - at < REASONS_TXN ? n - at : REASONS_TXN);
	if (l->tick_failed)
		l->need_full = true;
}

/* The task.unplaced alerts: raised for the running tasks that do not fit
 * where they run, cleared for those that do. */
static void tick_alerts(struct gp_loop *l, const struct tick *k)
{
	for (int i = 0; i < k->n_placed; i++)
		gp_alerts_placed(l->alerts, k->placed[i]);
	for (int i = 0; i < k->n_misfit; i++) {
		struct gp_task t = { .id = k->misfit[i].id, .tenant = k->misfit[i].tenant };

		memcpy(t.name, k->misfit[i].name, sizeof(t.name));
		gp_alerts_unplaced(l->alerts, &t, k->misfit[i].why);
	}
}

/* No room for new logs (logdir.h): o, which would start, waits with the
 * reason instead (and the preemptions that would make room for it are
 * not made). */
static void room_wait(struct gp_loop *l, struct gp_sched_outcome *o)
{
	o->verdict = GP_SCHED_WAIT;
	snprintf(o->reason, sizeof(o->reason), "%s", l->log_why);
}

/* Acts on the pass's outcomes in their order, holding the store's lock
 * but while the agent forks: the task.unplaced alerts, the preemptions
 * and the starts (all at once, after the preemptions they may wait for),
 * then the reasons of those that wait that changed. A write that failed
 * holds back the starts and preemptions after it (one may depend on
 * another), and so does a change by another (the API) to what the pass
 * decided on: the next pass looks at the whole queue again. A pass that
 * has nothing to write (nothing starts, no reason changed) takes no lock
 * at all. */
static void tick_apply(struct gp_loop *l, struct tick *k)
{
	unsigned full = devices_full(l, k);
	bool act = k->n_misfit || gp_alerts_unplaced_count(l->alerts);
	struct start *st = NULL;
	uint64_t now_full;
	int n_starts = 0;

	for (int i = 0; i < k->n_out; i++) {
		if (k->out[i].verdict == GP_SCHED_START && !l->log_room)
			room_wait(l, &k->out[i]);
		if (k->out[i].verdict == GP_SCHED_WAIT)
			task_wait(k, &k->out[i], full);
		else
			n_starts += act = true;
	}
	if (!act && !k->n_reasons)
		return;
	st = calloc((size_t)n_starts + 1, sizeof(*st));
	store_lock(l);
	gp_pool_gen(l->pool, &now_full);
	k->foreign = now_full != k->view.full_gen || !st;
	if (!k->foreign)
		tick_alerts(l, k);
	n_starts = 0;
	for (int i = 0; i < k->n_out && !k->foreign && !l->tick_failed; i++) {
		if (k->out[i].verdict == GP_SCHED_PREEMPT && l->log_room)
			task_preempt(l, k, &k->out[i]);
		else if (k->out[i].verdict == GP_SCHED_START)
			start_add(l, k, &k->out[i], st, &n_starts);
	}
	starts(l, k, st, n_starts);
	if (!k->foreign)
		reasons_write(l, k);
	l->need_full |= k->foreign || l->tick_failed;
	store_unlock(l);
	free(st);
}

static void tick_free(struct tick *k)
{
	gp_cluster_free(k->cluster);
	gp_pool_view_release(&k->view);
	free(k->sched);
	free(k->seen);
	free(k->out);
	free(k->reason);
	free(k->why);
	free(k->tenant);
	free(k->quota);
	free(k->placed);
	free(k->misfit);
}

/* Which queued tasks the next pass looks at: all of them after a change
 * that may let any start (or when the loop asks, or once a while: GP_LOOP_FULL_PASS_MS), those
 * that changed after the last pass, or none — then there is no pass. */
/* Have the partitions of no task changed (one made or destroyed by hand,
 * one of an ended task destroyed at last)? Then what waits may fit. */
static bool held_changed(struct gp_loop *l)
{
	const struct gp_agent_node *n = gp_agent_node(l->agent);
	bool changed = false;

	for (unsigned i = 0; i < n->devices; i++) {
		changed |= l->held[i] != n->device[i].partition_held;
		l->held[i] = n->device[i].partition_held;
	}
	return changed;
}

static enum gp_pool_scope pass_scope(struct gp_loop *l)
{
	uint64_t full, gen = gp_pool_gen(l->pool, &full);

	if (held_changed(l))
		l->need_full = true;
	if (l->need_full || full > l->seen_gen || mono_ms() - l->full_at >= GP_LOOP_FULL_PASS_MS)
		return GP_POOL_ALL;
	return gen > l->seen_gen ? GP_POOL_CHANGED : GP_POOL_RUNNING;
}

/* The CPU time the loop's thread has used, in seconds. */
static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pass_observe(struct gp_loop *l, bool all, double seconds, double cpu_seconds)
{
	pthread_mutex_lock(&l->stats_lock);
	if (all) {
		gp_summary_observe(&l->stats.pass, seconds);
		gp_summary_observe(&l->stats.pass_cpu, cpu_seconds);
	} else {
		l->stats.passes_changed++;
	}
	pthread_mutex_unlock(&l->stats_lock);
}

/* One pass, when there is something to look at: the view (the pool's
 * lock only), the decisions (no lock), what follows (tick_apply). */
static void schedule(struct gp_loop *l)
{
	enum gp_pool_scope scope = pass_scope(l);
	struct tick k = { .all = scope == GP_POOL_ALL };
	double start = mono_s(), cpu = thread_cpu_s();
	int r;

	if (scope == GP_POOL_RUNNING)
		return;
	r = gp_pool_view_init(l->pool, scope, l->seen_gen, &k.view);
	if (r == 0) {
		l->seen_gen = k.view.gen;
		l->need_full = false;
		if (k.all)
			l->full_at = mono_ms();
		r = tick_prepare(l, &k);
	}
	if (r == 0)
		r = tick_model_quotas(l, &k);
	if (r == 0)
		r = gp_sched_pass(k.cluster, l->policy, k.tenant, k.tenants, k.sched, k.n_sched,
				  k.out, &k.n_out);
	if (r == 0)
		tick_apply(l, &k);
	else
		l->need_full = true;
	tick_free(&k);
	pass_observe(l, k.all, mono_s() - start, thread_cpu_s() - cpu);
}

/* ---- live changes, cancels, sampling, logs ------------------------------- */

static const struct applied *applied_find(const struct gp_loop *l, int64_t id)
{
	for (int i = 0; i < l->n_applied; i++)
		if (l->applied[i].id == id)
			return &l->applied[i];
	return NULL;
}

/* Gives the agent the running tasks' shares and priorities (it writes
 * them into the devices' regions when they changed), and the meter the
 * shares that changed (under the store's lock: the API reads the meter). */
static void live_changes(struct gp_loop *l)
{
	struct applied now[GP_AGENT_TASKS_MAX];
	int64_t share_id[GP_AGENT_TASKS_MAX];
	unsigned share[GP_AGENT_TASKS_MAX];
	struct gp_pool_view v;
	int n = 0, changed = 0;

	if (gp_pool_view_init(l->pool, GP_POOL_RUNNING, 0, &v) < 0)
		return;
	for (int i = 0; i < v.n_running && n < GP_AGENT_TASKS_MAX; i++) {
		const struct gp_pool_task *t = &v.running[i];
		const struct applied *was = applied_find(l, t->id);

		now[n++] = (struct applied){ t->id, t->compute_pct, t->priority };
		if (was && was->compute_pct == t->compute_pct && was->priority == t->priority)
			continue;
		if (gp_agent_set(l->agent, t->id, t->compute_pct, t->priority) < 0)
			now[n - 1].priority = UINT32_MAX; /* tried again at the next tick */
		share_id[changed] = t->id;
		share[changed++] = t->compute_pct;
	}
	gp_pool_view_release(&v);
	memcpy(l->applied, now, (size_t)n * sizeof(now[0]));
	l->n_applied = n;
	if (!changed)
		return;
	store_lock(l);
	for (int i = 0; i < changed; i++)
		gp_meter_share(l->meter, share_id[i], share[i]);
	store_unlock(l);
}

/* The agent stops the running tasks whose cancel was asked (it sends
 * SIGTERM now, SIGKILL after the grace period); their ends are recorded
 * as cancelled. One that ended meanwhile is recorded as it ended. */
static void cancels_send(struct gp_loop *l)
{
	int64_t ids[GP_AGENT_TASKS_MAX];
	int n = gp_pool_cancels_take(l->pool, ids, GP_AGENT_TASKS_MAX);

	for (int i = 0; i < n; i++)
		gp_agent_stop(l->agent, ids[i]);
}

/* Running tasks that have run their time limit are stopped as a cancel
 * stops them (cancels_send: SIGTERM, SIGKILL after the grace period),
 * their reason and a task.time-limit audit row saying so now; once
 * reaped they are FAILED, timed out (task_ended). The caller holds the
 * store's lock. */
static void time_limits(struct gp_loop *l)
{
	struct gp_pool_task up[TIMES_UP_MAX];
	int n = gp_pool_times_up(l->pool, gp_unix_ms(), up, TIMES_UP_MAX);

	for (int i = 0; i < n; i++) {
		char why[64], detail[GP_REASON_MAX];
		struct record rec;
		struct gp_task t;

		gp_pool_task_row(&up[i], &t);
		time_limit_why(t.time_limit_s, why, sizeof(why));
		snprintf(t.reason, sizeof(t.reason), "%s; stopping it", why);
		snprintf(detail, sizeof(detail),
			 "%s; stopping it (SIGTERM, SIGKILL after the grace period)", why);
		record_init(&rec, &t, "task.time-limit", detail);
		record(l, &rec);
	}
}

/* A look at the held tasks (depend.h) when the pool changed or a task
 * left it since the last look that wrote all it meant to. The caller
 * holds the store's lock. */
static void depends(struct gp_loop *l)
{
	uint64_t full, gen = gp_pool_gen(l->pool, &full), ends = gp_pool_ends(l->pool);
	int r;

	if (l->dep_looked && gen == l->dep_gen && ends == l->dep_ends)
		return;
	r = gp_depend_look(l->store, l->pool);
	if (r < 0) {
		write_count(l, r);
		return;
	}
	l->dep_looked = true;
	l->dep_gen = gen;
	l->dep_ends = ends;
}

/* Says on stderr when metering starts failing, and when it works again. */
static void meter_report(struct gp_loop *l, int r)
{
	if (r < 0 && !l->meter_failing)
		fprintf(stderr, "gpupool server: metering: cannot write usage records: %s\n",
			r == -EIO ? gp_store_error(l->store) : strerror(-r));
	else if (r >= 0 && l->meter_failing)
		fprintf(stderr, "gpupool server: metering: writing usage records again\n");
	l->meter_failing = r < 0;
}

/* Running tasks whose memory only grows and whose policy is a restart
 * (`on_memory_growth: restart`): once they hold GROWTH_RESTART_PCT of
 * their slices' memory, before the limit stops them with out-of-memory,
 * they are stopped as the preempted are and queued again, the reason
 * and an audit row (task.restart) saying why. The caller holds the
 * store's lock. */
static void growth_restarts(struct gp_loop *l)
{
	for (int i = 0; i < gp_meter_tasks(l->meter); i++) {
		const struct gp_meter_task *mt = gp_meter_task(l->meter, i);
		struct gp_pool_task pt;
		uint64_t limit = 0;
		struct gp_task t;

		if (!mt->mem_growing || gp_pool_task_get(l->pool, mt->id, &pt) < 0 ||
		    !pt.restart_on_growth || pt.state != GP_TASK_RUNNING || pt.stopping ||
		    pt.cancel_by[0] || pt.whole)
			continue;
		for (unsigned d = 0; d < mt->devices; d++)
			limit += mt->mem_mib[d];
		if (!limit || mt->mem_used_mib * 100 < limit * GROWTH_RESTART_PCT ||
		    task_known(l, mt->id, &t) < 0)
			continue;
		snprintf(t.reason, sizeof(t.reason),
			 "restarted before its memory limit: it grew in each of the last %u "
			 "samplings, to %" PRIu64 " of %" PRIu64 " MiB; queued again",
			 gp_meter_grow_samples(l->meter), mt->mem_used_mib, limit);
		if (record_ahead(l, &t, "task.restart", t.reason) < 0)
			return;
		if (gp_agent_stop(l->agent, mt->id) == 0)
			gp_pool_task_stopping(l->pool, mt->id, t.reason);
	}
}

/* One sampling and what follows from it, in one transaction: the device
 * library is asked first, without a lock; the records and the alert
 * rules, which run on what was sampled even when the records could not
 * be written (their failure does not undo the records), under the
 * store's lock. */
static void tick_sample(struct gp_loop *l, int64_t now)
{
	struct gp_meter_probe pr;
	int r, taken;

	gp_meter_probe(l->meter, &pr);
	store_lock(l);
	r = gp_store_begin(l->store);
	taken = gp_meter_take(l->meter, &pr, now);
	if (r == 0)
		r = taken;
	if (r == 0) {
		gp_alerts_check(l->alerts, l->meter);
		r = gp_store_commit(l->store);
	} else {
		gp_store_rollback(l->store);
		gp_alerts_check(l->alerts, l->meter);
	}
	meter_report(l, r);
	growth_restarts(l);
	gp_services_tick(l->services, now);
	store_unlock(l);
}

/* What the tasks' logs lost (n of them in d): an alert for each task,
 * once. The caller holds the store's lock. */
static void logs_record(struct gp_loop *l, const struct gp_logpump_drop *d, int n)
{
	for (int i = 0; i < n && i < DROPS_MAX; i++) {
		if (d[i].capped)
			gp_alerts_log_capped(l->alerts, d[i].task, gp_agent_log_max(l->agent),
					     d[i].capped);
		if (d[i].failed || d[i].error)
			gp_alerts_log_lost(l->alerts, d[i].task, d[i].failed, d[i].error,
					   d[i].floor);
	}
}

/* ---- the logs as a whole ------------------------------------------------- */

/* Room for new logs at this tick (logdir.h): when it comes back, the
 * tasks that waited for it are looked at again. */
static void logs_room(struct gp_loop *l, int64_t now)
{
	bool room = !l->logdir || gp_logdir_room(l->logdir, now, l->log_why, sizeof(l->log_why));

	if (room && !l->log_room)
		l->need_full = true;
	l->log_room = room;
}

/* Is the task live (queued or running: its log goes on)? */
static bool log_live(void *ctx, int64_t task)
{
	struct gp_loop *l = ctx;
	struct gp_pool_task t;

	return gp_pool_task_get(l->pool, task, &t) == 0;
}

/* Records the logs a trim removed, in one transaction: each one's
 * removal (what `gpupool logs` says of it) and an audit row. The
 * caller holds the store's lock. */
static int removals_write(struct gp_loop *l, const struct gp_log_removal *rm, int n)
{
	int r = gp_store_begin(l->store);

	for (int i = 0; r == 0 && i < n; i++) {
		char object[GP_AUDIT_OBJECT_MAX], detail[GP_REASON_MAX], size[32];

		r = gp_store_log_removed(l->store, &rm[i]);
		if (r == -ENOENT) { /* a file of no task: nothing to record */
			r = 0;
			continue;
		}
		gp_size_text(rm[i].bytes, size, sizeof(size));
		snprintf(object, sizeof(object), "task %" PRId64, rm[i].task);
		snprintf(detail, sizeof(detail), "its log (%s) removed %.200s", size, rm[i].why);
		if (r == 0)
			r = gp_store_audit(l->store, "server", "task.log-removed", object, detail);
	}
	if (r == 0)
		r = gp_store_commit(l->store);
	if (r < 0)
		gp_store_rollback(l->store);
	return r;
}

/* The logs' total cap and free-space floor (logdir.h): looked at once
 * GP_LOOP_TRIM_MIN_MS have passed since the last look when tasks ended
 * or there is no room, else every GP_LOOP_TRIM_MS. */
static void logs_trim(struct gp_loop *l, int64_t now)
{
	struct gp_log_removal *rm = NULL;
	int n = 0, r;

	if (!l->logdir || now - l->trim_at < (l->trim_due || !l->log_room ? GP_LOOP_TRIM_MIN_MS
									    : GP_LOOP_TRIM_MS))
		return;
	l->trim_at = now;
	l->trim_due = false;
	r = gp_logdir_trim(l->logdir, log_live, l, &rm, &n);
	if (r == 0 && n) {
		store_lock(l);
		r = removals_write(l, rm, n);
		store_unlock(l);
		if (r < 0)
			fprintf(stderr, "gpupool server: %d task log(s) removed (the logs' cap or "
					"free-space floor) could not be recorded: %s\n",
				n, gp_store_error(l->store));
	}
	free(rm);
}

/* ---- the policy and its target workload --------------------------------- */

static const char *policy_name(const struct gp_loop *l)
{
	return l->o.policy[0] ? l->o.policy : GP_LOOP_POLICY;
}

/* What target w is, in a line: "3 shapes: 1 x 40 % (62 %), ...". */
static void target_text(const struct gp_workload *w, const struct gp_cluster *c, char *buf,
			size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "%zu shape%s:", w->count,
				       w->count == 1 ? "" : "s");

	for (size_t i = 0; i < w->count && i < 6 && used < len; i++) {
		const struct gp_shape *sh = &w->shape[i];
		const char *model =
			sh->models ? gp_cluster_model_name(c, __builtin_ctzll(sh->models)) : NULL;

		if (sh->share >= GP_COMPUTE_WHOLE)
			used += (size_t)snprintf(buf + used, len - used, "%s %u x whole",
						 i ? "," : "", sh->devices);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s %u x %u %%",
						 i ? "," : "", sh->devices, sh->share / 10u);
		if (used < len && model)
			used += (size_t)snprintf(buf + used, len - used, " of %.24s", model);
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, " (%.0f %%)",
						 100 * sh->weight);
	}
	if (w->count > 6 && used < len)
		snprintf(buf + used, len - used, ", ...");
}

/* The target workload from the shapes of the tasks submitted since
 * `since` (NULL when there are none), what it is in text. */
static int target_make(struct gp_loop *l, struct gp_store *from, int64_t since,
		       struct gp_workload **ret, char *text, size_t len)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);
	struct gp_task_shape *sh = NULL;
	struct gp_request *req = NULL;
	struct gp_cluster *c = NULL;
	struct gp_node_spec spec;
	struct gp_task t = { 0 };
	char why[GP_REASON_MAX];
	int n = 0, m = 0;
	int r = gp_store_task_shapes(from, since, GP_LOOP_WORKLOAD_TASKS, &sh, &n);

	*ret = NULL;
	if (r == 0)
		r = cluster_build(&l->o, node, true, &c, &spec);
	if (r == 0 && !(req = calloc((size_t)n + 1, sizeof(*req))))
		r = -ENOMEM;
	for (int i = 0; r == 0 && i < n; i++) {
		t.devices = sh[i].devices;
		t.whole = sh[i].whole;
		t.mem_mib = sh[i].mem_mib;
		t.compute_pct = sh[i].compute_pct;
		snprintf(t.model, sizeof(t.model), "%s", sh[i].model);
		if (t.devices <= GP_NODE_DEVICES_MAX &&
		    request_of(node, c, &t, &req[m], why, sizeof(why)) == 0)
			m++;
	}
	if (r == 0 && m)
		r = gp_workload_from_requests(req, (size_t)m, COVERAGE, ret);
	if (r == 0 && *ret)
		gp_workload_set_supply(*ret, &spec, 1);
	if (r == 0 && *ret)
		target_text(*ret, c, text, len);
	else if (r == 0)
		snprintf(text, len, "none yet: the policy's own, whole and half devices");
	gp_cluster_free(c);
	free(req);
	free(sh);
	return r;
}

/* Every refresh period (and at the first tick), a policy that takes a
 * target workload is made again with the pool's recent tasks as its
 * target; said on stderr when the target changed (and the next pass
 * looks at the whole queue). A failure keeps the policy as it was, and
 * is said. The shapes are read through the loop's own connection, which
 * waits for nobody; without one, under the store's lock. */
static void target_refresh(struct gp_loop *l, int64_t now)
{
	unsigned every = l->o.workload_refresh_s ? l->o.workload_refresh_s
						 : GP_LOOP_WORKLOAD_REFRESH_S;
	unsigned window = l->o.workload_window_s ? l->o.workload_window_s
						 : GP_LOOP_WORKLOAD_WINDOW_S;
	struct gp_store *from = l->reader ? l->reader : l->store;
	char text[GP_REASON_MAX];
	struct gp_workload *w = NULL;
	struct gp_policy *p = NULL;
	int r;

	if (!gp_policy_takes_target(policy_name(l)) ||
	    (l->target_at && now - l->target_at < (int64_t)every * 1000))
		return;
	l->target_at = now;
	if (!l->reader)
		store_lock(l);
	r = target_make(l, from, now - (int64_t)window * 1000, &w, text, sizeof(text));
	if (!l->reader)
		store_unlock(l);
	if (r == 0)
		r = gp_policy_new(policy_name(l), &(struct gp_policy_config){ .target = w }, &p);
	if (r < 0) {
		fprintf(stderr, "gpupool server: policy %s: cannot make its target workload: %s\n",
			policy_name(l), r == -EIO ? gp_store_error(from) : strerror(-r));
		gp_workload_free(w);
		return;
	}
	gp_policy_free(l->policy);
	gp_workload_free(l->target);
	l->policy = p;
	l->target = w;
	if (strcmp(text, l->target_text) == 0)
		return;
	l->need_full = true;
	snprintf(l->target_text, sizeof(l->target_text), "%s", text);
	fprintf(stderr,
		"gpupool server: policy %s: target workload of the last %u s of tasks: %s\n",
		policy_name(l), window, text);
}

void gp_loop_tick(struct gp_loop *l)
{
	struct gp_logpump_drop drops[DROPS_MAX];
	struct events ev = { 0 };
	int n_drops;

	l->tick_ok = l->tick_failed = 0;
	gp_agent_poll(l->agent, &(struct gp_agent_events){ .ended = on_ended,
							   .violation = on_violation,
							   .ctx = &ev });
	n_drops = gp_agent_log_drops(l->agent, drops, DROPS_MAX);
	cancels_send(l);
	target_refresh(l, gp_unix_ms());
	store_lock(l);
	records_write(l, NULL, 0);      /* what is owed, before anything new */
	events_record(l, &ev);
	logs_record(l, drops, n_drops);
	time_limits(l);
	depends(l);
	store_unlock(l);
	cancels_send(l);                /* those time_limits asked */
	for (int i = 0; i < ev.n; i++)
		l->trim_due |= ev.e[i].ended;
	free(ev.e);
	logs_room(l, mono_ms());
	logs_trim(l, mono_ms());
	schedule(l);
	live_changes(l);
	store_lock(l);
	store_report(l);
	gp_schedules_tick(l->schedules, gp_unix_ms());
	store_unlock(l);
	if (gp_meter_due(l->meter, gp_unix_ms()))
		tick_sample(l, gp_unix_ms());
}

int gp_loop_cancel(struct gp_loop *l, int64_t task, const char *who)
{
	int r;

	if (!l || !who)
		return -EINVAL;
	r = gp_pool_task_cancel(l->pool, task, who);
	if (r < 0)
		return r;
	gp_loop_wake(l);
	return 0;
}

bool gp_loop_cancelling(const struct gp_loop *l, int64_t task)
{
	return l && gp_pool_cancelling(l->pool, task);
}

bool gp_loop_start_wait(struct gp_loop *l, int64_t task)
{
	bool waited = false;

	while (l && is_starting(l, task)) {
		gp_http_wait(l->http, &l->started);
		waited = true;
	}
	return waited;
}

/* ---- for the API ---------------------------------------------------------- */

int gp_loop_task_change(struct gp_loop *l, const struct gp_task *t, unsigned compute_pct,
			bool *ret_borrowed, char *why, size_t len)
{
	struct tick k = { 0 }; /* a look: nothing is applied */
	struct gp_sched_task *s = NULL;
	struct gp_sched_change c;
	struct gp_request req;
	int r;

	if (!l || !t || !ret_borrowed || !why)
		return -EINVAL;
	if (strchr(t->placement, '@')) {
		snprintf(why, len, "it runs on a hardware partition, whose size is fixed: "
				   "cancel it and submit it again with the share it needs");
		return -EBUSY;
	}
	r = gp_pool_view_init(l->pool, GP_POOL_RUNNING, 0, &k.view);
	if (r == 0)
		r = tick_prepare(l, &k);
	if (r == 0)
		r = tick_model_quotas(l, &k);
	for (int i = 0; r == 0 && i < k.n_sched; i++)
		if (k.sched[i].id == t->id && k.sched[i].running)
			s = &k.sched[i];
	if (r == 0 && !s)
		r = -ENOENT;
	if (r == 0) {
		req = s->req;
		req.dev_compute = compute_pct * 10;
		r = gp_sched_change(k.cluster, k.tenant, k.tenants, k.sched, k.n_sched, t->id, &req,
				    &c);
	}
	if (r == 0 && c.fits) {
		*ret_borrowed = c.borrowed;
	} else if (r == 0) {
		snprintf(why, len, "%s", c.reason);
		r = -EBUSY;
	}
	tick_free(&k);
	return r;
}

/* How many of this machine's usable devices answer to `models` (0: any),
 * the most memory of one of them in *ret_mem, and the most of one model
 * among them in *ret_most. */
static unsigned usable_devices(const struct gp_agent_node *node, struct gp_cluster *c,
			       uint64_t models, uint64_t *ret_mem, unsigned *ret_most)
{
	unsigned n = 0, per_model[GP_MODELS_MAX] = { 0 };

	*ret_mem = 0;
	*ret_most = 0;
	for (unsigned i = 0; i < node->devices && i < GP_NODE_DEVICES_MAX; i++) {
		int m = gp_cluster_model_id(c, node->device[i].name, false);

		if (!node->device[i].compatible || (models && (m < 0 || !(models >> m & 1))))
			continue;
		n++;
		if (node->device[i].mem_total_mib > *ret_mem)
			*ret_mem = node->device[i].mem_total_mib;
		if (m >= 0 && m < GP_MODELS_MAX && ++per_model[m] > *ret_most)
			*ret_most = per_model[m];
	}
	return n;
}

/* Why no node could hold t (its request req), in the pool's numbers. */
static void could_not_fit(const struct gp_agent_node *node, struct gp_cluster *c,
			  const struct gp_task *t, const struct gp_request *req,
			  const char **ret_field, char *why, size_t len)
{
	char model[GP_STORE_NAME_MAX + 24] = "";
	uint64_t mem;
	unsigned most, n = usable_devices(node, c, req->models, &mem, &most);

	if (t->model[0] && gp_runtime_is_default_model(t))
		snprintf(model, sizeof(model), " for %s", t->runtime);
	else if (t->model[0])
		snprintf(model, sizeof(model), " of model \"%s\"", t->model);
	*ret_field = "devices";
	if (!n)
		snprintf(why, len,
			 "this pool has no usable device%s (gpupool device ls says why); "
			 "nothing could run it",
			 model);
	else if (t->devices > n)
		snprintf(why, len, "this pool's largest node has %u usable device%s%s; ask for at "
				   "most %u",
			 n, n == 1 ? "" : "s", model, n);
	else if (!req->whole && req->dev_mem_mib > mem) {
		*ret_field = "mem_mib";
		snprintf(why, len, "this pool's largest device%s has %" PRIu64 " MiB; ask for at "
				   "most %" PRIu64,
			 model, mem, mem);
	} else if (req->devices > 1 && !req->mixed_models && most < req->devices) {
		*ret_field = "mixed_models";
		snprintf(why, len,
			 "a task's devices are of one model, and this pool has at most %u of one "
			 "model%s; ask for at most %u devices, or let them mix models "
			 "(--mixed-models)",
			 most, model, most);
	} else
		snprintf(why, len, "no node of this pool could hold it, even idle");
}

int gp_loop_task_could_fit(struct gp_loop *l, struct gp_task *t, bool await_cards,
			   const char **ret_field, char *why, size_t len)
{
	const struct gp_agent_node *node;
	struct gp_cluster *c = NULL;
	struct gp_policy *p = NULL;
	struct gp_decision d = { .placed = false };
	struct gp_request req;
	int r;

	if (!l || !t || !ret_field || !why)
		return -EINVAL;
	node = gp_agent_node(l->agent);
	if ((r = gp_runtime_settle(node, t, await_cards, ret_field, why, len)) < 0)
		return r;
	r = cluster_build(&l->o, node, true, &c, NULL);
	if (r < 0)
		return r;
	if (request_of(node, c, t, &req, why, len) < 0) {
		gp_cluster_free(c);
		return 0;       /* a model of no usable card: settled above */
	}
	if (t->mem_pct && !t->whole) /* until placed: on the largest card it takes */
		t->mem_mib = req.dev_mem_mib;
	/* The core's own answer, on this node with every device idle. */
	r = t->devices > GP_NODE_DEVICES_MAX ? -EINVAL : gp_policy_new("bestfit", NULL, &p);
	if (r == 0)
		r = gp_place(c, p, &req, &d);
	if (r == -EINVAL || (r == 0 && !d.placed)) {
		could_not_fit(node, c, t, &req, ret_field, why, len);
		r = -E2BIG;
	}
	gp_policy_free(p);
	gp_cluster_free(c);
	return r;
}

struct gp_services *gp_loop_services(struct gp_loop *l)
{
	return l ? l->services : NULL;
}

struct gp_schedules *gp_loop_schedules(struct gp_loop *l)
{
	return l ? l->schedules : NULL;
}

const struct gp_meter *gp_loop_meter(const struct gp_loop *l)
{
	return l ? l->meter : NULL;
}

bool gp_loop_stats(struct gp_loop *l, struct gp_loop_stats *ret)
{
	if (!l)
		return false;
	pthread_mutex_lock(&l->stats_lock);
	*ret = l->stats;
	pthread_mutex_unlock(&l->stats_lock);
	return true;
}

/* ---- a restart ------------------------------------------------------------ */

/* A task that ended while no server watched it: how, from its keeper. */
static void ended_away(struct gp_loop *l, struct gp_task *t, int code, int64_t now)
{
	char how[64];

	t->pid = 0;
	t->ended = now;
	if (code < 0) {
		t->state = GP_TASK_LOST;
		snprintf(t->reason, sizeof(t->reason),
			 "its processes ended while no server watched them, and how is not known");
	} else {
		exit_text(code, how, sizeof(how));
		t->state = code == 0 ? GP_TASK_SUCCEEDED : GP_TASK_FAILED;
		t->exit_code = code;
		snprintf(t->reason, sizeof(t->reason), "%s while no server watched it", how);
	}
	record_end(l, t, "task.end");
}

/* A task the previous server had marked running, whose program never
 * ran (the server stopped first): queued again as it was, with its
 * submission time (so its place in the queue), and an audit row that
 * says so. */
static void unstarted_requeue(struct gp_loop *l, struct gp_task *t)
{
	char when[40];
	struct record rec;

	gp_unix_ms_text(t->created, when, sizeof(when));
	t->state = GP_TASK_PENDING;
	t->placement[0] = '\0';
	t->pid = 0;
	t->exit_code = 0;
	t->started = t->ended = 0;
	snprintf(t->reason, sizeof(t->reason),
		 "queued again: the server stopped before it could start this task's program; "
		 "it keeps its place (submitted %s)",
		 when);
	record_init(&rec, t, "task.requeue",
		    "never started: the server stopped before the task's program ran (no "
		    "process, no log); queued again with its submission time");
	record(l, &rec);
}

/* A task that runs on from the previous server: adopted, its process
 * group in its row when the row lacked it (the server stopped before it
 * wrote it). Metering starts again from now. */
static void adopted(struct gp_loop *l, struct gp_task *t, const struct gp_agent_task *spec,
		    pid_t pgid, int64_t now)
{
	struct record rec;

	record_init(&rec, t, "task.adopt", "still running at the server's start");
	rec.row = t->pid != pgid;
	rec.task.pid = t->pid = pgid;
	gp_meter_start(l->meter, t, spec->device, spec->devices, pgid, now);
	record(l, &rec);
}

/* The tasks the store has as running were started (or being started) by
 * the previous server: those whose processes still run are adopted (the
 * agent takes them over; the time no server watched is not metered),
 * those whose program never ran are queued again, the others are
 * recorded as they ended. Then the agent stops what nobody adopted.
 * Before the API serves: the loop holds the store's lock for its writes
 * all the same. */
static void tasks_adopt(struct gp_loop *l)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);
	struct gp_task *running = NULL;
	int n = 0;
	int64_t now = gp_unix_ms();

	if (gp_store_task_list(l->store, -1, GP_TASK_RUNNING, &running, &n) < 0)
		n = 0;
	for (int i = 0; i < n; i++) {
		struct gp_task *t = &running[i];
		struct gp_agent_adoption found = { .found = GP_AGENT_FOUND_ENDED, .code = -1 };
		struct gp_placement where;
		struct gp_agent_task spec;

		if (placement_read(node, t->placement, &where, NULL)) {
			spec = spec_of(t, &where);
			gp_agent_adopt(l->agent, &spec, (pid_t)t->pid, &found);
		}
		store_lock(l);
		if (found.found == GP_AGENT_FOUND_RUNNING)
			adopted(l, t, &spec, found.pgid, now);
		else if (found.found == GP_AGENT_FOUND_UNSTARTED)
			unstarted_requeue(l, t);
		else
			ended_away(l, t, found.code, now);
		store_unlock(l);
	}
	free(running);
	gp_agent_adopted(l->agent);
}

/* ---- the thread --------------------------------------------------------- */

/* Sleeps until the next tick is due: GP_LOOP_TICK_MS after the last one,
 * or at a wake-up, but not sooner than GP_LOOP_TICK_MIN_MS after it (a
 * burst of submissions does not make the loop pass back to back). */
static void loop_sleep(struct gp_loop *l, uint32_t gen)
{
	const struct timespec least = { 0, GP_LOOP_TICK_MIN_MS * 1000000L };

	nanosleep(&least, NULL);
	gp_futex_wait(&l->wake_gen, gen,
		      (uint64_t)(GP_LOOP_TICK_MS - GP_LOOP_TICK_MIN_MS) * 1000000ULL);
}

void gp_loop_wake(struct gp_loop *l)
{
	atomic_fetch_add(&l->wake_gen, 1);
	gp_futex_wake_all(&l->wake_gen);
}

static void *loop_main(void *arg)
{
	struct gp_loop *l = arg;

	while (!atomic_load(&l->stop)) {
		uint32_t gen = atomic_load(&l->wake_gen);
		double start = mono_s();

		gp_loop_tick(l);
		pthread_mutex_lock(&l->stats_lock);
		gp_summary_observe(&l->stats.tick, mono_s() - start);
		pthread_mutex_unlock(&l->stats_lock);
		loop_sleep(l, gen);
	}
	return NULL;
}

static struct gp_meter_options meter_options(const struct gp_loop_options *o)
{
	struct gp_meter_options m = { GP_LOOP_SAMPLE_MS, GP_LOOP_GROW_SAMPLES,
				      GP_LOOP_UTIL_WINDOW_S };

	if (o && o->sample_ms)
		m.sample_ms = o->sample_ms;
	if (o && o->grow_samples)
		m.grow_samples = o->grow_samples;
	if (o && o->util_window_s)
		m.util_window_s = o->util_window_s;
	return m;
}

static void loop_release(struct gp_loop *l)
{
	gp_policy_free(l->policy);
	gp_workload_free(l->target);
	free(l->owed.r);
	gp_meter_free(l->meter);
	gp_alerts_free(l->alerts);
	gp_services_free(l->services);
	gp_schedules_free(l->schedules);
	gp_logdir_free(l->logdir);
	gp_store_close(l->reader);
	pthread_cond_destroy(&l->started);
	pthread_mutex_destroy(&l->stats_lock);
	free(l);
}

int gp_loop_start(struct gp_store *store, struct gp_http *http, struct gp_pool *pool,
		  struct gp_agent *agent, const struct gp_loop_options *o, struct gp_loop **ret)
{
	struct gp_meter_options mo = meter_options(o);
	struct gp_loop *l = calloc(1, sizeof(*l));
	struct gp_taskops ops;
	int r;

	if (!l)
		return -ENOMEM;
	*l = (struct gp_loop){ .store = store, .http = http, .pool = pool, .agent = agent,
			       .need_full = true, .log_room = true };
	pthread_mutex_init(&l->stats_lock, NULL);
	pthread_cond_init(&l->started, NULL);
	if (o)
		l->o = *o;
	ops = (struct gp_taskops){ store, pool, l, l->o.queue_max, l->o.tenant_queue_max };
	if (gp_store_open_reader(store, &l->reader) < 0)
		l->reader = NULL; /* the target workload is read under the store's lock */
	r = gp_policy_new(policy_name(l), &(struct gp_policy_config){ 0 }, &l->policy);
	if (r == 0)
		fprintf(stderr, "gpupool server: scheduling with policy %s%s\n", policy_name(l),
			gp_policy_takes_target(policy_name(l))
				? ", against the shapes of the pool's recent tasks"
				: "");
	if (r == 0)
		r = gp_meter_new(store, agent, &mo, &l->meter);
	if (r == 0)
		r = gp_alerts_new(store, &l->alerts);
	if (r == 0) {
		struct gp_service_engine here = gp_service_engine_of_meter(l->meter);

		r = gp_services_new(&ops, &here, l->alerts, &l->services);
	}
	if (r == 0)
		r = gp_schedules_new(&ops, &l->schedules);
	if (r == 0 && l->o.log_dir)
		r = gp_logdir_new(&(struct gp_logdir_options){ .dir = l->o.log_dir,
							       .total_max = l->o.log_total_max,
							       .free_min = l->o.log_free_min },
				  &l->logdir);
	if (r == 0) {
		tasks_adopt(l);
		r = -pthread_create(&l->thread, NULL, loop_main, l);
	}
	if (r < 0) {
		loop_release(l);
		return r;
	}
	*ret = l;
	return 0;
}

struct gp_loop *gp_loop_stop(struct gp_loop *l)
{
	if (!l)
		return NULL;
	atomic_store(&l->stop, true);
	gp_loop_wake(l);
	pthread_join(l->thread, NULL);
	/* What the running tasks used until now is recorded; they run on,
	 * unwatched (the next server adopts them). */
	tick_sample(l, gp_unix_ms());
	loop_release(l);
	return NULL;
}
