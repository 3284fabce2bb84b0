/* loop.c — the scheduling loop over the store, the core and the agent
 * (loop.h). */
#include "server/loop.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/pshared.h"
#include "core/cluster.h"
#include "core/policy.h"
#include "server/alerts.h"
#include "base/user.h"
#include "server/sched.h"
#include "shim/region.h"

#define HOST_PLENTY 1000000000u /* tasks ask nothing of the host yet */

/* A set of task ids (tasks being preempted; running tasks that borrow). */
struct idset {
	int64_t id[GP_AGENT_TASKS_MAX];
	int n;
};

/* Running tasks a tenant asked to cancel (gp_loop_cancel), and who. */
struct cancels {
	struct idset ids;
	char who[GP_AGENT_TASKS_MAX][GP_STORE_NAME_MAX]; /* by the index in ids */
};

struct gp_loop {
	struct gp_store *store;
	struct gp_http *http;
	struct gp_agent *agent;
	struct gp_policy *policy;
	pthread_t thread;
	atomic_bool stop;
	_Atomic uint32_t wake_gen;      /* futex: bumped by gp_loop_wake */
	struct idset stopping, borrowed;
	struct cancels cancelling;
	struct gp_meter *meter;
	struct gp_alerts *alerts;
	struct gp_loop_stats stats;
	bool meter_failing; /* said so on stderr; said again when it recovers */
	struct gp_loop_options o;
};

/* The tasks of one tick: store rows and the pass's view of them. */
struct tick {
	struct gp_task *task;
	struct gp_sched_task *sched;
	struct gp_sched_outcome *out;
	int n, n_sched, n_out;
	struct gp_sched_tenant *tenant;
	char (*user)[GP_USER_SPEC_MAX]; /* each tenant's Unix user, by the index in tenant */
	int tenants;
	struct gp_sched_model_quota *quota;     /* the tenants' model quotas */
	int quotas;
	struct gp_cluster *cluster;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool idset_has(const struct idset *s, int64_t id)
{
	for (int i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return true;
	return false;
}

static void idset_add(struct idset *s, int64_t id)
{
	if (!idset_has(s, id) && s->n < GP_AGENT_TASKS_MAX)
		s->id[s->n++] = id;
}

static bool idset_take(struct idset *s, int64_t id)
{
	for (int i = 0; i < s->n; i++)
		if (s->id[i] == id) {
			s->id[i] = s->id[--s->n];
			return true;
		}
	return false;
}

static void cancels_add(struct cancels *c, int64_t id, const char *who)
{
	for (int i = 0; i < c->ids.n; i++)
		if (c->ids.id[i] == id)
			return; /* the first to ask is the one named */
	if (c->ids.n == GP_AGENT_TASKS_MAX)
		return;
	snprintf(c->who[c->ids.n], sizeof(c->who[0]), "%s", who);
	c->ids.id[c->ids.n++] = id;
}

/* Takes id out of the set; who asked in ret_who. False when not there. */
static bool cancels_take(struct cancels *c, int64_t id, char *ret_who, size_t len)
{
	for (int i = 0; i < c->ids.n; i++)
		if (c->ids.id[i] == id) {
			snprintf(ret_who, len, "%s", c->who[i]);
			c->ids.n--;
			c->ids.id[i] = c->ids.id[c->ids.n];
			memcpy(c->who[i], c->who[c->ids.n], sizeof(c->who[i]));
			return true;
		}
	return false;
}

static void audit(struct gp_loop *l, const char *action, int64_t task, const char *detail)
{
	char object[32];

	snprintf(object, sizeof(object), "task %" PRId64, task);
	gp_store_audit(l->store, "server", action, object, detail);
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

static void task_ended(void *ctx, int64_t id, int code, bool stopped, const char *violation)
{
	struct gp_loop *l = ctx;
	char who[GP_STORE_NAME_MAX], why[GP_REASON_MAX];
	bool cancelled = cancels_take(&l->cancelling, id, who, sizeof(who)) && stopped &&
			 !violation;
	bool preempted = idset_take(&l->stopping, id) && stopped && !cancelled && !violation;
	int64_t now = now_ms();
	struct gp_task t;

	idset_take(&l->borrowed, id);
	gp_meter_end(l->meter, id, now);
	if (gp_store_task_get(l->store, id, &t) < 0)
		return;
	t.pid = 0;
	t.exit_code = code;
	if (violation) {
		snprintf(why, sizeof(why), "stopped by the verifier: %s", violation);
		ended_stopped(&t, GP_TASK_FAILED, why, code, now);
	} else if (cancelled) {
		snprintf(why, sizeof(why), "cancelled by %s", who);
		ended_stopped(&t, GP_TASK_CANCELLED, why, code, now);
	} else if (preempted) {
		t.state = GP_TASK_PREEMPTED;
		t.placement[0] = '\0';
		snprintf(t.reason, sizeof(t.reason),
			 "preempted to give a tenant its guarantee back; queued again");
	} else {
		t.state = code == 0 ? GP_TASK_SUCCEEDED : GP_TASK_FAILED;
		t.ended = now;
		if (code)
			exit_text(code, t.reason, sizeof(t.reason));
		else
			t.reason[0] = '\0';
	}
	gp_store_task_update(l->store, &t);
	audit(l, preempted ? "task.requeue" : "task.end", id,
	      t.reason[0] ? t.reason : "exited with code 0");
	if (t.state == GP_TASK_FAILED)
		gp_alerts_task_failed(l->alerts, &t, t.reason);
}

/* The verifier found a violation (task 0: by a process of no task). */
static void task_violation(void *ctx, int64_t id, const char *text)
{
	struct gp_loop *l = ctx;
	struct gp_task t;
	bool known = id && gp_store_task_get(l->store, id, &t) == 0;

	gp_alerts_violation(l->alerts, known ? &t : NULL, text);
	if (known)
		audit(l, "task.violation", id, text);
	else
		gp_store_audit(l->store, "server", "node.violation", "node", text);
}

/* ---- the cluster of this machine ---------------------------------------- */

static uint32_t device_mem_max(const struct gp_agent_node *n)
{
	uint32_t max = 0;

	for (unsigned i = 0; i < n->devices; i++)
		if (n->device[i].mem_total_mib > max)
			max = (uint32_t)n->device[i].mem_total_mib;
	return max;
}

/* The overcommit of a device named `name` (permille): the option whose
 * model is the longest part of the name, else the one for all, else none. */
static unsigned overcommit_of(const struct gp_loop_options *o, const char *name)
{
	unsigned all = 1000, matched = 0;
	size_t best = 0;

	for (int i = 0; i < o->overcommits; i++) {
		const struct gp_overcommit *x = &o->overcommit[i];
		size_t len = strlen(x->model);

		if (len == 0)
			all = x->permille;
		else if (len > best && strcasestr(name, x->model)) {
			best = len;
			matched = x->permille;
		}
	}
	return best ? matched : all;
}

static int cluster_build(const struct gp_loop_options *o, const struct gp_agent_node *n,
			 struct gp_cluster **ret)
{
	struct gp_node_spec spec = { .cpu_milli = HOST_PLENTY, .mem_mib = HOST_PLENTY,
				     .devices = (uint8_t)n->devices };
	struct gp_cluster *c;
	int r = gp_cluster_new(0, &c);

	if (r < 0)
		return r;
	for (unsigned i = 0; i < n->devices && i < GP_NODE_DEVICES_MAX; i++) {
		struct gp_device_spec *d = &spec.device[i];
		int model = gp_cluster_model_id(c, n->device[i].name, true);

		*d = (struct gp_device_spec){ .model = (uint8_t)(model < 0 ? 0 : model),
					      .mem_mib = (uint32_t)n->device[i].mem_total_mib,
					      .overcommit =
						      (uint16_t)overcommit_of(o, n->device[i].name),
					      /* as many slices as a region has tasks */
					      .max_tasks = GP_REGION_TASKS,
					      .healthy = n->device[i].compatible };
		snprintf(d->uuid, sizeof(d->uuid), "%.*s", (int)sizeof(d->uuid) - 1,
			 n->device[i].uuid);
	}
	r = gp_cluster_add_node(c, &spec, NULL);
	if (r < 0) {
		gp_cluster_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* The request of a stored task; -ENOENT (reason in why) when no device
 * of the model it asks for is here. */
static int request_of(const struct gp_agent_node *n, struct gp_cluster *c, const struct gp_task *t,
		      struct gp_request *req, char *why, size_t len)
{
	*req = (struct gp_request){ .devices = (uint8_t)(t->devices ? t->devices : 1) };
	if (t->whole || t->exclusive) {
		req->whole = true;
		req->dev_mem_mib = device_mem_max(n);  /* what its quota is charged */
	} else {
		req->dev_mem_mib = (uint32_t)t->mem_mib;
		req->dev_compute = t->compute_pct * 10;
	}
	if (!t->model[0])
		return 0;
	for (unsigned i = 0; i < n->devices; i++)
		if (strcasestr(n->device[i].name, t->model))
			req->models |= 1ULL << gp_cluster_model_id(c, n->device[i].name, false);
	if (req->models)
		return 0;
	snprintf(why, len, "no device of model \"%s\" on this machine", t->model);
	return -ENOENT;
}

/* Placement strings name devices by UUID, comma-separated. */
static void placement_write(const struct gp_agent_node *n, const struct gp_placement *p,
			    char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->devices && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
					 n->device[p->device[i]].uuid);
}

static bool placement_read(const struct gp_agent_node *n, const char *text,
			   struct gp_placement *p)
{
	char copy[GP_REASON_MAX], *save = NULL;

	*p = (struct gp_placement){ 0 };
	snprintf(copy, sizeof(copy), "%s", text);
	for (char *uuid = strtok_r(copy, ",", &save); uuid; uuid = strtok_r(NULL, ",", &save)) {
		unsigned i = 0;

		while (i < n->devices && strcmp(n->device[i].uuid, uuid) != 0)
			i++;
		if (i == n->devices || p->devices == GP_NODE_DEVICES_MAX)
			return false;
		p->device[p->devices++] = (uint8_t)i;
	}
	return p->devices > 0;
}

/* ---- one tick ----------------------------------------------------------- */

static void reason_set(struct gp_loop *l, struct gp_task *t, const char *reason)
{
	if (strcmp(t->reason, reason) == 0)
		return;         /* unchanged: no write */
	snprintf(t->reason, sizeof(t->reason), "%s", reason);
	gp_store_task_update(l->store, t);
}

/* Loads tenants and the running and queued tasks. */
static int tick_load(struct gp_loop *l, struct tick *k)
{
	static const int states[] = { GP_TASK_RUNNING, GP_TASK_PENDING, GP_TASK_PREEMPTED };
	struct gp_tenant *tenants = NULL;
	int r = gp_store_tenant_list(l->store, &tenants, &k->tenants);

	if (r < 0)
		return r;
	k->tenant = calloc((size_t)k->tenants + 1, sizeof(*k->tenant));
	k->user = calloc((size_t)k->tenants + 1, sizeof(*k->user));
	for (int i = 0; k->user && i < k->tenants; i++)
		snprintf(k->user[i], sizeof(k->user[i]), "%s", tenants[i].user);
	for (int i = 0; k->tenant && i < k->tenants; i++)
		k->tenant[i] = (struct gp_sched_tenant){
			.id = tenants[i].id,
			.mem_guaranteed_mib = tenants[i].mem_guaranteed_mib,
			.mem_borrowable_mib = tenants[i].mem_borrowable_mib,
			.compute_guaranteed_pct = tenants[i].compute_guaranteed_pct,
			.compute_borrowable_pct = tenants[i].compute_borrowable_pct,
		};
	/* A tenant with no quota at all (the admin, say) is not limited. */
	for (int i = 0; k->tenant && i < k->tenants; i++)
		if (!k->tenant[i].mem_guaranteed_mib && !k->tenant[i].mem_borrowable_mib &&
		    !k->tenant[i].compute_guaranteed_pct && !k->tenant[i].compute_borrowable_pct) {
			k->tenant[i].mem_guaranteed_mib = UINT64_MAX / 4;
			k->tenant[i].compute_guaranteed_pct = UINT64_MAX / 4;
		}
	free(tenants);
	if (!k->tenant || !k->user)
		return -ENOMEM;
	for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		struct gp_task *some = NULL, *all;
		int n = 0;

		if ((r = gp_store_task_list(l->store, -1, states[s], &some, &n)) < 0)
			return r;
		all = realloc(k->task, ((size_t)k->n + (size_t)n + 1) * sizeof(*all));
		if (!all) {
			free(some);
			return -ENOMEM;
		}
		k->task = all;
		if (n)
			memcpy(k->task + k->n, some, (size_t)n * sizeof(*some));
		k->n += n;
		free(some);
	}
	return 0;
}

/* The pass's view: running tasks committed to the cluster, queued ones
 * with their requests. Tasks being preempted are left out: their
 * capacity counts as free (starts on their devices wait for them). */
static int tick_prepare(struct gp_loop *l, struct tick *k, int *ret_count)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);
	int count = 0;

	k->sched = calloc((size_t)k->n + 1, sizeof(*k->sched));
	k->out = calloc((size_t)k->n + 1, sizeof(*k->out));
	if (!k->sched || !k->out || cluster_build(&l->o, node, &k->cluster) < 0)
		return -ENOMEM;
	for (int i = 0; i < k->n; i++) {
		struct gp_task *t = &k->task[i];
		struct gp_sched_task *s = &k->sched[count];
		char why[GP_REASON_MAX];

		if (idset_has(&l->stopping, t->id) || idset_has(&l->cancelling.ids, t->id))
			continue;
		*s = (struct gp_sched_task){ .id = t->id, .tenant = t->tenant,
					     .priority = t->priority, .created = t->created,
					     .running = t->state == GP_TASK_RUNNING,
					     .borrowed = idset_has(&l->borrowed, t->id) };
		if (request_of(node, k->cluster, t, &s->req, why, sizeof(why)) < 0) {
			if (!s->running)
				reason_set(l, t, why);
			continue;
		}
		if (s->running && (!placement_read(node, t->placement, &s->where) ||
				   gp_cluster_commit(k->cluster, &s->req, &s->where) < 0))
			continue;       /* its devices are gone: it cannot count */
		count++;
	}
	*ret_count = k->n_sched = count;
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
		*q = (struct gp_sched_model_quota){
			.models = models,
			.mem_guaranteed_mib = all[i].mem_guaranteed_mib,
			.mem_borrowable_mib = all[i].mem_borrowable_mib,
			.compute_guaranteed_pct = all[i].compute_guaranteed_pct,
			.compute_borrowable_pct = all[i].compute_borrowable_pct,
		};
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
	struct gp_model_quota *all = NULL;
	int n = 0, r = gp_store_model_quota_list(l->store, -1, &all, &n);

	if (r < 0)
		return r;
	k->quota = calloc((size_t)n + 1, sizeof(*k->quota));
	for (int i = 0; k->quota && i < k->tenants; i++)
		tenant_model_quotas(node, k, &k->tenant[i], all, n);
	free(all);
	return k->quota ? 0 : -ENOMEM;
}

static struct gp_task *task_by_id(struct tick *k, int64_t id)
{
	for (int i = 0; i < k->n; i++)
		if (k->task[i].id == id)
			return &k->task[i];
	return NULL;
}

/* Does a task of `stopping` still run on one of these devices? */
static bool devices_busy_of(struct gp_loop *l, struct tick *k, const struct idset *stopping,
			    const struct gp_placement *p)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);

	for (int i = 0; i < stopping->n; i++) {
		struct gp_task *t = task_by_id(k, stopping->id[i]);
		struct gp_placement q;

		if (!t || !placement_read(node, t->placement, &q))
			continue;
		for (int a = 0; a < p->devices; a++)
			for (int b = 0; b < q.devices; b++)
				if (p->device[a] == q.device[b])
					return true;
	}
	return false;
}

/* Does a task being preempted or cancelled still run on these devices? */
static bool devices_busy(struct gp_loop *l, struct tick *k, const struct gp_placement *p)
{
	return devices_busy_of(l, k, &l->stopping, p) ||
	       devices_busy_of(l, k, &l->cancelling.ids, p);
}

/* The Unix user of a tenant ("" automatic). */
static const char *tenant_user(const struct tick *k, int64_t tenant)
{
	for (int i = 0; i < k->tenants; i++)
		if (k->tenant[i].id == tenant)
			return k->user[i];
	return "";
}

/* What the agent runs for a stored task placed on `where`. */
static struct gp_agent_task spec_of(const struct gp_task *t, const struct gp_placement *where)
{
	struct gp_agent_task spec = { .id = t->id, .tenant = t->tenant, .command = t->command,
				      .workdir = t->workdir, .devices = where->devices,
				      .whole = t->whole || t->exclusive, .mem_mib = t->mem_mib,
				      .compute_pct = t->compute_pct, .priority = t->priority,
				      .hard = t->hard };

	for (int i = 0; i < where->devices; i++)
		spec.device[i] = where->device[i];
	return spec;
}

static void task_start(struct gp_loop *l, struct tick *k, struct gp_task *t,
		       const struct gp_sched_outcome *o)
{
	struct gp_agent_task spec = spec_of(t, &o->where);
	char detail[2 * GP_REASON_MAX + 8], why[GP_REASON_MAX - 32] = "", *env = NULL;
	pid_t pgid;
	int r;

	if (devices_busy(l, k, &o->where)) {
		reason_set(l, t, "starting once the preempted tasks on its devices have stopped");
		return;
	}
	spec.user = tenant_user(k, t->tenant);
	if (gp_store_task_env_get(l->store, t->id, &env) == 0)
		spec.env = env;
	r = gp_agent_start(l->agent, &spec, &pgid, why, sizeof(why));
	free(env);
	if (r < 0) {
		t->state = GP_TASK_FAILED;
		t->ended = now_ms();
		snprintf(t->reason, sizeof(t->reason), "could not start: %s",
			 why[0] ? why : strerror(-r));
		gp_store_task_update(l->store, t);
		audit(l, "task.end", t->id, t->reason);
		gp_alerts_task_failed(l->alerts, t, t->reason);
		return;
	}
	t->state = GP_TASK_RUNNING;
	t->pid = pgid;
	t->started = now_ms();
	t->ended = 0;
	gp_meter_start(l->meter, t, spec.device, spec.devices, pgid, t->started);
	gp_histogram_observe(&l->stats.wait, (double)(t->started - t->created) / 1000.0);
	placement_write(gp_agent_node(l->agent), &o->where, t->placement, sizeof(t->placement));
	snprintf(t->reason, sizeof(t->reason), "%s", o->reason);
	gp_store_task_update(l->store, t);
	if (o->borrowed)
		idset_add(&l->borrowed, t->id);
	snprintf(detail, sizeof(detail), "on %s (%s)", t->placement, o->reason);
	audit(l, "task.start", t->id, detail);
}

static void task_preempt(struct gp_loop *l, struct gp_task *t, const struct gp_sched_outcome *o)
{
	if (gp_agent_stop(l->agent, t->id) < 0)
		return;
	idset_add(&l->stopping, t->id);
	reason_set(l, t, o->reason);
	audit(l, "task.preempt", t->id, o->reason);
}

/* A device holds at most as many slices as its region has task entries
 * (GP_REGION_TASKS; the core's max_tasks): when a task waits for want of
 * a device while some device is full that way, its reason says so. */
static void wait_reason(const struct gp_loop *l, const struct tick *k, const char *reason,
			char *buf, size_t len)
{
	unsigned held[GP_AGENT_DEVICES_MAX] = { 0 }, full = 0;
	unsigned devices = gp_agent_node(l->agent)->devices;

	snprintf(buf, len, "%s", reason);
	if (strncmp(reason, "no device fits now", 18) != 0)
		return;
	for (int i = 0; i < k->n_sched; i++)
		for (int d = 0; k->sched[i].running && d < k->sched[i].where.devices; d++)
			if (k->sched[i].where.device[d] < GP_AGENT_DEVICES_MAX)
				held[k->sched[i].where.device[d]]++;
	for (unsigned d = 0; d < devices && d < GP_AGENT_DEVICES_MAX; d++)
		full += held[d] >= GP_REGION_TASKS;
	if (full)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 "; %u device(s) hold %d slices, the most a device's region tracks",
			 full, GP_REGION_TASKS);
}

static void tick_apply(struct gp_loop *l, struct tick *k)
{
	for (int i = 0; i < k->n_out; i++) {
		const struct gp_sched_outcome *o = &k->out[i];
		struct gp_task *t = task_by_id(k, o->task);

		if (!t)
			continue;
		if (o->verdict == GP_SCHED_START)
			task_start(l, k, t, o);
		else if (o->verdict == GP_SCHED_PREEMPT)
			task_preempt(l, t, o);
		else {
			char why[GP_REASON_MAX];

			wait_reason(l, k, o->reason, why, sizeof(why));
			reason_set(l, t, why);
		}
	}
	for (int i = 0; i < k->n; i++)
		if (k->task[i].state == GP_TASK_RUNNING) {
			gp_agent_set(l->agent, k->task[i].id, k->task[i].compute_pct,
				     k->task[i].priority);
			gp_meter_share(l->meter, k->task[i].id, k->task[i].compute_pct);
		}
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

/* One sampling and what follows from it, in one transaction. The alert
 * rules run on what was sampled even when the records could not be
 * written; their failure does not undo the records. */
static void tick_sample(struct gp_loop *l, int64_t now)
{
	int r = gp_store_begin(l->store);

	if (r == 0)
		r = gp_meter_sample(l->meter, now);
	if (r == 0) {
		gp_alerts_check(l->alerts, l->meter);
		r = gp_store_commit(l->store);
	} else {
		gp_store_rollback(l->store);
		gp_alerts_check(l->alerts, l->meter);
	}
	meter_report(l, r);
}

static void tick_free(struct tick *k)
{
	gp_cluster_free(k->cluster);
	free(k->task);
	free(k->sched);
	free(k->out);
	free(k->tenant);
	free(k->user);
	free(k->quota);
}

/* What the tasks' logs lost: an alert for each task, once. */
static void tick_logs(struct gp_loop *l)
{
	struct gp_logpump_drop d[16];
	int n = gp_agent_log_drops(l->agent, d, 16);

	for (int i = 0; i < n && i < 16; i++) {
		if (d[i].capped)
			gp_alerts_log_capped(l->alerts, d[i].task, gp_agent_log_max(l->agent),
					     d[i].capped);
		if (d[i].failed || d[i].error)
			gp_alerts_log_lost(l->alerts, d[i].task, d[i].failed, d[i].error);
	}
}

void gp_loop_tick(struct gp_loop *l)
{
	struct tick k = { 0 };
	int count = 0;

	gp_agent_poll(l->agent, &(struct gp_agent_events){ .ended = task_ended,
							   .violation = task_violation,
							   .ctx = l });
	tick_logs(l);
	if (tick_load(l, &k) == 0 && tick_prepare(l, &k, &count) == 0 &&
	    tick_model_quotas(l, &k) == 0 &&
	    gp_sched_pass(k.cluster, l->policy, k.tenant, k.tenants, k.sched, count, k.out,
			  &k.n_out) == 0)
		tick_apply(l, &k);
	tick_free(&k);
	if (gp_meter_due(l->meter, now_ms()))
		tick_sample(l, now_ms());
}

int gp_loop_cancel(struct gp_loop *l, int64_t task, const char *who)
{
	int r;

	if (!l || !who)
		return -EINVAL;
	r = gp_agent_stop(l->agent, task);
	if (r == 0)
		cancels_add(&l->cancelling, task, who);
	return r;
}

bool gp_loop_cancelling(const struct gp_loop *l, int64_t task)
{
	return l && idset_has(&l->cancelling.ids, task);
}

const struct gp_meter *gp_loop_meter(const struct gp_loop *l)
{
	return l ? l->meter : NULL;
}

const struct gp_loop_stats *gp_loop_stats(const struct gp_loop *l)
{
	return l ? &l->stats : NULL;
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
	gp_store_task_update(l->store, t);
	audit(l, "task.end", t->id, t->reason);
	if (t->state == GP_TASK_FAILED)
		gp_alerts_task_failed(l->alerts, t, t->reason);
}

/* The tasks the store has as running were started by the previous
 * server: those whose processes still run are adopted (the agent takes
 * them over; metering starts again from now: the time no server watched
 * is not metered), the others are recorded as they ended. Then the
 * agent stops what nobody adopted. */
static void tasks_adopt(struct gp_loop *l)
{
	const struct gp_agent_node *node = gp_agent_node(l->agent);
	struct gp_task *running = NULL;
	int n = 0;
	int64_t now = now_ms();

	if (gp_store_task_list(l->store, -1, GP_TASK_RUNNING, &running, &n) < 0)
		n = 0;
	for (int i = 0; i < n; i++) {
		struct gp_task *t = &running[i];
		struct gp_placement where;
		struct gp_agent_task spec;
		int code = -1, r = -EINVAL;

		if (placement_read(node, t->placement, &where)) {
			spec = spec_of(t, &where);
			r = gp_agent_adopt(l->agent, &spec, (pid_t)t->pid, &code);
		}
		if (r == 1) {
			gp_meter_start(l->meter, t, spec.device, spec.devices, (pid_t)t->pid, now);
			audit(l, "task.adopt", t->id, "still running at the server's start");
		} else {
			ended_away(l, t, code, now);
		}
	}
	free(running);
	gp_agent_adopted(l->agent);
}

/* ---- the thread --------------------------------------------------------- */

/* Sleeps until the next tick is due: GP_LOOP_TICK_MS after the last one,
 * or at a wake-up, but not sooner than GP_LOOP_TICK_MIN_MS after it (a
 * burst of submissions does not make the loop take the lock back to back). */
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
		struct timespec start, end;

		gp_http_lock(l->http);
		clock_gettime(CLOCK_MONOTONIC, &start);
		gp_loop_tick(l);
		clock_gettime(CLOCK_MONOTONIC, &end);
		gp_summary_observe(&l->stats.tick,
				   (double)(end.tv_sec - start.tv_sec) +
					   (double)(end.tv_nsec - start.tv_nsec) / 1e9);
		gp_http_unlock(l->http);
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
	gp_meter_free(l->meter);
	gp_alerts_free(l->alerts);
	free(l);
}

int gp_loop_start(struct gp_store *store, struct gp_http *http, struct gp_agent *agent,
		  const struct gp_loop_options *o, struct gp_loop **ret)
{
	struct gp_meter_options mo = meter_options(o);
	struct gp_loop *l = calloc(1, sizeof(*l));
	int r;

	if (!l)
		return -ENOMEM;
	*l = (struct gp_loop){ .store = store, .http = http, .agent = agent };
	if (o)
		l->o = *o;
	r = gp_policy_new("default", &(struct gp_policy_config){ 0 }, &l->policy);
	if (r == 0)
		r = gp_meter_new(store, agent, &mo, &l->meter);
	if (r == 0)
		r = gp_alerts_new(store, &l->alerts);
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
	 * unwatched (the next server marks them lost). */
	gp_http_lock(l->http);
	tick_sample(l, now_ms());
	gp_http_unlock(l->http);
	loop_release(l);
	return NULL;
}
