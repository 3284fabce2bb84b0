/* pool.c — the queue, the running tasks and the tenants in memory
 * (pool.h).
 *
 * Each task is one allocation that stays where it is while the task is
 * in the pool; three indexes point at it: a hash table by id (open
 * addressing, linear probing, deletion by moving entries back, so no
 * tombstones), the queue (an array sorted in the scheduler's order:
 * binary search, then one memmove, which at 10,000 tasks is a few
 * microseconds) and the running tasks (an unordered array). Tenants and
 * model quotas are small arrays, in the store's order. */
#include "server/pool.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "core/sched.h"

#define MAP_MIN 64 /* slots, a power of two */

/* A tenant and how many of its tasks are queued and running. */
struct tenant {
	struct gp_tenant t;
	int queued, running;
};

/* Growable arrays of pointers to tasks. */
struct tasks {
	struct gp_pool_task **t;
	int n, cap;
};

/* The tasks that changed since the last view, for a view of them alone
 * that does not look at the whole queue: their ids and the gen of each
 * change. Past CHANGES_MAX (no pass looked for a while) it is given up,
 * and the next such view looks at the whole queue after all. */
#define CHANGES_MAX 65536

struct change {
	int64_t id;
	uint64_t gen;
};

struct changes {
	struct change *c;
	int n, cap;
	bool lost;
};

struct gp_pool {
	pthread_mutex_t lock;
	struct gp_pool_task **map; /* by id; NULL: an empty slot */
	size_t slots, used;
	struct tasks queue;        /* in the scheduler's order */
	struct tasks running;
	struct tenant *tenant;     /* by id */
	int tenants;
	struct gp_model_quota *quota; /* by tenant, then model, as the store lists them */
	int quotas;
	uint64_t gen, full_gen;
	uint64_t tenants_gen;      /* counts every tenant and model quota put */
	uint64_t ends;             /* counts the tasks that left */
	struct changes changes;
};

/* ---- the map by id ------------------------------------------------------- */

static size_t slot_of(const struct gp_pool *p, int64_t id)
{
	return gp_hash_mix((uint64_t)id) & (p->slots - 1);
}

static size_t map_find(const struct gp_pool *p, int64_t id)
{
	size_t i = slot_of(p, id);

	while (p->map[i] && p->map[i]->id != id)
		i = (i + 1) & (p->slots - 1);
	return i;
}

static struct gp_pool_task *task_find(const struct gp_pool *p, int64_t id)
{
	return p->map[map_find(p, id)];
}

static int map_grow(struct gp_pool *p)
{
	size_t slots = p->slots ? 2 * p->slots : MAP_MIN;
	struct gp_pool_task **old = p->map, **map = calloc(slots, sizeof(*map));
	size_t old_slots = p->slots;

	if (!map)
		return -ENOMEM;
	p->map = map;
	p->slots = slots;
	for (size_t i = 0; i < old_slots; i++)
		if (old[i])
			p->map[map_find(p, old[i]->id)] = old[i];
	free(old);
	return 0;
}

static int map_add(struct gp_pool *p, struct gp_pool_task *t)
{
	if (2 * (p->used + 1) > p->slots && map_grow(p) < 0)
		return -ENOMEM;
	p->map[map_find(p, t->id)] = t;
	p->used++;
	return 0;
}

/* Is slot i in [from, to), going round? */
static bool between(size_t from, size_t i, size_t to)
{
	return from <= to ? from <= i && i < to : from <= i || i < to;
}

/* Empties id's slot, and moves back into the hole each entry after it
 * whose probe from its home slot passed the hole. */
static void map_remove(struct gp_pool *p, int64_t id)
{
	size_t mask = p->slots - 1, hole = map_find(p, id);

	if (!p->map[hole])
		return;
	p->map[hole] = NULL;
	p->used--;
	for (size_t j = (hole + 1) & mask; p->map[j]; j = (j + 1) & mask)
		if (between(slot_of(p, p->map[j]->id), hole, j)) {
			p->map[hole] = p->map[j];
			p->map[j] = NULL;
			hole = j;
		}
}

/* ---- the queue and the running tasks ------------------------------------ */

static int tasks_add(struct tasks *a, int at, struct gp_pool_task *t)
{
	if (a->n == a->cap) {
		int cap = a->cap ? 2 * a->cap : 64;
		struct gp_pool_task **bigger = realloc(a->t, (size_t)cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		a->t = bigger;
		a->cap = cap;
	}
	memmove(a->t + at + 1, a->t + at, (size_t)(a->n - at) * sizeof(*a->t));
	a->t[at] = t;
	a->n++;
	return 0;
}

static void tasks_remove(struct tasks *a, int at)
{
	memmove(a->t + at, a->t + at + 1, (size_t)(a->n - at - 1) * sizeof(*a->t));
	a->n--;
}

/* The scheduler's order of two tasks (gp_sched_compare). */
static int order(const struct gp_pool_task *a, const struct gp_pool_task *b)
{
	struct gp_sched_task x = { .id = a->id, .priority = a->priority, .created = a->created };
	struct gp_sched_task y = { .id = b->id, .priority = b->priority, .created = b->created };

	return gp_sched_compare(&x, &y);
}

/* Where t is, or would go, in the queue. */
static int queue_at(const struct gp_pool *p, const struct gp_pool_task *t)
{
	int lo = 0, hi = p->queue.n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (order(p->queue.t[mid], t) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int running_at(const struct gp_pool *p, const struct gp_pool_task *t)
{
	for (int i = 0; i < p->running.n; i++)
		if (p->running.t[i] == t)
			return i;
	return -1;
}

static bool is_queued(enum gp_task_state s)
{
	return s == GP_TASK_PENDING || s == GP_TASK_PREEMPTED;
}

static bool is_live(enum gp_task_state s)
{
	return is_queued(s) || s == GP_TASK_RUNNING;
}

static struct tenant *tenant_find(struct gp_pool *p, int64_t id)
{
	for (int i = 0; i < p->tenants; i++)
		if (p->tenant[i].t.id == id)
			return &p->tenant[i];
	return NULL;
}

/* Counts t (by +1 or -1) where it is: the queue or the running tasks. */
static void count(struct gp_pool *p, const struct gp_pool_task *t, int by)
{
	struct tenant *k = tenant_find(p, t->tenant);

	if (k && is_queued(t->state))
		k->queued += by;
	else if (k)
		k->running += by;
}

/* Puts t, taken out of both, into the index of its state. */
static int index_add(struct gp_pool *p, struct gp_pool_task *t)
{
	int r = is_queued(t->state) ? tasks_add(&p->queue, queue_at(p, t), t)
				    : tasks_add(&p->running, p->running.n, t);

	if (r == 0)
		count(p, t, 1);
	return r;
}

static void index_remove(struct gp_pool *p, struct gp_pool_task *t)
{
	int at = is_queued(t->state) ? queue_at(p, t) : running_at(p, t);

	if (is_queued(t->state) && at < p->queue.n && p->queue.t[at] == t)
		tasks_remove(&p->queue, at);
	else if (!is_queued(t->state) && at >= 0)
		tasks_remove(&p->running, at);
	count(p, t, -1);
}

/* ---- changes ------------------------------------------------------------- */

/* Marks t changed; a full change when `full`. */
static void change_note(struct changes *c, int64_t id, uint64_t gen)
{
	if (c->lost)
		return;
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 256;
		struct change *bigger = cap <= CHANGES_MAX
						? realloc(c->c, (size_t)cap * sizeof(*bigger))
						: NULL;

		if (!bigger) {
			c->lost = true;
			return;
		}
		c->c = bigger;
		c->cap = cap;
	}
	c->c[c->n++] = (struct change){ id, gen };
}

/* Marks t changed (noted for a view of what changed); a full change
 * when `full`. */
static void changed(struct gp_pool *p, struct gp_pool_task *t, bool full)
{
	p->gen++;
	if (t) {
		t->gen = p->gen;
		change_note(&p->changes, t->id, p->gen);
	}
	if (full)
		p->full_gen = p->gen;
}

/* The fields of the row that the pool keeps. */
static void row_copy(struct gp_pool_task *to, const struct gp_task *t)
{
	to->id = t->id;
	to->tenant = t->tenant;
	snprintf(to->name, sizeof(to->name), "%s", t->name);
	to->state = t->state;
	to->priority = t->priority;
	to->mem_mib = t->mem_mib;
	to->mem_pct = t->mem_pct;
	to->mixed_models = t->mixed_models;
	to->time_limit_s = t->time_limit_s;
	snprintf(to->after, sizeof(to->after), "%s", t->after);
	to->compute_pct = t->compute_pct;
	to->restart_on_growth = t->restart_on_growth;
	to->service = t->service;
	to->devices = t->devices;
	to->whole = t->whole;
	to->exclusive = t->exclusive;
	to->hard = t->hard;
	snprintf(to->model, sizeof(to->model), "%s", t->model);
	snprintf(to->reason, sizeof(to->reason), "%s", t->reason);
	to->reason_hash = gp_pool_reason_hash(to->reason);
	snprintf(to->placement, sizeof(to->placement), "%s", t->placement);
	to->pid = t->pid;
	to->created = t->created;
	to->started = t->started;
}

/* Does the change from `was` to t matter to a pass: a full change (2),
 * one of this task only (1), or none (0)? */
static int change_kind(const struct gp_pool_task *was, const struct gp_task *t)
{
	bool queued = is_queued(t->state);

	if (is_queued(was->state) != queued)
		return 2; /* started, or requeued */
	if (!queued)
		return was->compute_pct != t->compute_pct || was->priority != t->priority ||
		       strcmp(was->placement, t->placement) ? 2 : 0;
	return was->priority != t->priority || was->created != t->created ||
	       was->mem_mib != t->mem_mib || was->compute_pct != t->compute_pct ||
	       was->devices != t->devices || was->whole != t->whole ||
	       was->exclusive != t->exclusive || strcmp(was->model, t->model) ||
	       was->state != t->state;
}

static int task_new(struct gp_pool *p, const struct gp_task *t)
{
	struct gp_pool_task *n = calloc(1, sizeof(*n));
	int r;

	if (!n)
		return -ENOMEM;
	row_copy(n, t);
	n->held = n->after[0] && is_queued(t->state);
	r = map_add(p, n);
	if (r == 0 && (r = index_add(p, n)) < 0)
		map_remove(p, n->id);
	if (r < 0) {
		free(n);
		return r;
	}
	changed(p, n, t->state == GP_TASK_RUNNING);
	return 0;
}

static void task_drop(struct gp_pool *p, struct gp_pool_task *t)
{
	index_remove(p, t);
	map_remove(p, t->id);
	p->ends++;
	if (t->state == GP_TASK_RUNNING)
		changed(p, NULL, true);
	free(t);
}

/* The loop's flags go when a task stops running. */
static void flags_clear(struct gp_pool_task *t)
{
	t->borrowed = t->stopping = t->cancel_sent = t->time_up = false;
	t->cancel_by[0] = t->restart_why[0] = '\0';
}

static int task_change(struct gp_pool *p, struct gp_pool_task *was, const struct gp_task *t)
{
	int kind = change_kind(was, t), r;

	if (kind == 0) {
		row_copy(was, t);
		return 0;
	}
	index_remove(p, was);
	if (t->state != GP_TASK_RUNNING || was->state != GP_TASK_RUNNING)
		flags_clear(was);
	row_copy(was, t);
	r = index_add(p, was);
	if (r < 0) {            /* out of memory: it leaves the pool */
		map_remove(p, was->id);
		free(was);
		changed(p, NULL, true);
		return r;
	}
	changed(p, was, kind == 2);
	return 0;
}

int gp_pool_task_put(struct gp_pool *p, const struct gp_task *t)
{
	struct gp_pool_task *was;
	int r = 0;

	if (!p || !t)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	was = task_find(p, t->id);
	if (was && !is_live(t->state))
		task_drop(p, was);
	else if (was)
		r = task_change(p, was, t);
	else if (t->state == GP_TASK_PENDING)
		r = task_new(p, t);
	pthread_mutex_unlock(&p->lock);
	return r;
}

int gp_pool_task_reason(struct gp_pool *p, int64_t id, const char *reason)
{
	struct gp_pool_task *t;

	if (!p || !reason)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	t = task_find(p, id);
	if (t) {
		snprintf(t->reason, sizeof(t->reason), "%s", reason);
		t->reason_hash = gp_pool_reason_hash(t->reason);
	}
	pthread_mutex_unlock(&p->lock);
	return t ? 0 : -ENOENT;
}

/* Recounts every tenant's tasks (after its entry was made or moved). */
static void recount(struct gp_pool *p)
{
	for (int i = 0; i < p->tenants; i++)
		p->tenant[i].queued = p->tenant[i].running = 0;
	for (int i = 0; i < p->queue.n; i++)
		count(p, p->queue.t[i], 1);
	for (int i = 0; i < p->running.n; i++)
		count(p, p->running.t[i], 1);
}

static int tenant_add(struct gp_pool *p, const struct gp_tenant *t)
{
	struct tenant *bigger = realloc(p->tenant, (size_t)(p->tenants + 1) * sizeof(*bigger));
	int at = 0;

	if (!bigger)
		return -ENOMEM;
	p->tenant = bigger;
	while (at < p->tenants && p->tenant[at].t.id < t->id)
		at++;
	memmove(p->tenant + at + 1, p->tenant + at, (size_t)(p->tenants - at) * sizeof(*bigger));
	p->tenant[at] = (struct tenant){ .t = *t };
	p->tenants++;
	recount(p);
	return 0;
}

static bool quota_same(const struct gp_tenant *a, const struct gp_tenant *b)
{
	return a->mem_guaranteed_mib == b->mem_guaranteed_mib &&
	       a->mem_borrowable_mib == b->mem_borrowable_mib &&
	       a->compute_guaranteed_pct == b->compute_guaranteed_pct &&
	       a->compute_borrowable_pct == b->compute_borrowable_pct;
}

int gp_pool_tenant_put(struct gp_pool *p, const struct gp_tenant *t)
{
	struct tenant *k;
	int r = 0;

	if (!p || !t)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	p->tenants_gen++;
	k = tenant_find(p, t->id);
	if (!k) {
		r = tenant_add(p, t);
	} else {
		if (!quota_same(&k->t, t) || k->t.removed != t->removed)
			changed(p, NULL, true);
		k->t = *t;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

/* Takes out the model quotas of `tenant`; where they were (or would go). */
static int quotas_remove(struct gp_pool *p, int64_t tenant)
{
	int at = 0, n = 0;

	while (at < p->quotas && p->quota[at].tenant < tenant)
		at++;
	while (at + n < p->quotas && p->quota[at + n].tenant == tenant)
		n++;
	memmove(p->quota + at, p->quota + at + n, (size_t)(p->quotas - at - n) * sizeof(*p->quota));
	p->quotas -= n;
	return at;
}

int gp_pool_model_quotas_put(struct gp_pool *p, int64_t tenant, const struct gp_model_quota *all,
			     int n)
{
	struct gp_model_quota *bigger;
	int at, mine = 0;

	if (!p || n < 0 || (n && !all))
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	bigger = realloc(p->quota, (size_t)(p->quotas + n + 1) * sizeof(*bigger));
	if (!bigger) {
		pthread_mutex_unlock(&p->lock);
		return -ENOMEM;
	}
	p->quota = bigger;
	at = quotas_remove(p, tenant);
	for (int i = 0; i < n; i++)
		mine += all[i].tenant == tenant;
	memmove(p->quota + at + mine, p->quota + at, (size_t)(p->quotas - at) * sizeof(*bigger));
	for (int i = 0; i < n; i++)
		if (all[i].tenant == tenant)
			p->quota[at++] = all[i];
	p->quotas += mine;
	changed(p, NULL, true);
	p->tenants_gen++;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* ---- the loop's flags ------------------------------------------------------- */

/* The running task id, locked; NULL (and unlocked) when it is not. */
static struct gp_pool_task *running_lock(struct gp_pool *p, int64_t id)
{
	struct gp_pool_task *t;

	pthread_mutex_lock(&p->lock);
	t = task_find(p, id);
	if (t && t->state == GP_TASK_RUNNING)
		return t;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int gp_pool_task_borrowed(struct gp_pool *p, int64_t id, bool borrowed)
{
	struct gp_pool_task *t = running_lock(p, id);

	if (!t)
		return -ENOENT;
	if (t->borrowed != borrowed)
		changed(p, t, true);
	t->borrowed = borrowed;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int gp_pool_task_stopping(struct gp_pool *p, int64_t id, const char *restart_why)
{
	struct gp_pool_task *t = running_lock(p, id);

	if (!t)
		return -ENOENT;
	t->stopping = true;
	snprintf(t->restart_why, sizeof(t->restart_why), "%s", restart_why ? restart_why : "");
	changed(p, t, true);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int gp_pool_task_cancel(struct gp_pool *p, int64_t id, const char *by)
{
	struct gp_pool_task *t = running_lock(p, id);
	int r = 1;

	if (!t)
		return -ENOENT;
	if (!t->cancel_by[0]) {
		snprintf(t->cancel_by, sizeof(t->cancel_by), "%s", by && *by ? by : "?");
		changed(p, t, true);
		r = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

int gp_pool_cancels_take(struct gp_pool *p, int64_t *ret_ids, int max)
{
	int n = 0;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->running.n && n < max; i++) {
		struct gp_pool_task *t = p->running.t[i];

		if (t->cancel_by[0] && !t->cancel_sent) {
			t->cancel_sent = true;
			ret_ids[n++] = t->id;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* Has running task t run its time limit by now_ms? */
static bool time_is_up(const struct gp_pool_task *t, int64_t now_ms)
{
	return t->time_limit_s && t->started && !t->cancel_by[0] && !t->stopping &&
	       now_ms - t->started >= (int64_t)t->time_limit_s * 1000;
}

int gp_pool_times_up(struct gp_pool *p, int64_t now_ms, struct gp_pool_task *ret, int max)
{
	int n = 0;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->running.n && n < max; i++) {
		struct gp_pool_task *t = p->running.t[i];

		if (!time_is_up(t, now_ms))
			continue;
		t->time_up = true;
		snprintf(t->cancel_by, sizeof(t->cancel_by), "server");
		changed(p, t, true);
		ret[n++] = *t;
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

int gp_pool_held(struct gp_pool *p, struct gp_pool_task *ret, int max)
{
	int n = 0;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->queue.n && n < max; i++)
		if (p->queue.t[i]->held)
			ret[n++] = *p->queue.t[i];
	pthread_mutex_unlock(&p->lock);
	return n;
}

int gp_pool_task_release(struct gp_pool *p, int64_t id)
{
	struct gp_pool_task *t;

	pthread_mutex_lock(&p->lock);
	t = task_find(p, id);
	if (t && t->held) {
		t->held = false;
		changed(p, t, false);
	}
	pthread_mutex_unlock(&p->lock);
	return t ? 0 : -ENOENT;
}

uint64_t gp_pool_ends(struct gp_pool *p)
{
	uint64_t ends;

	pthread_mutex_lock(&p->lock);
	ends = p->ends;
	pthread_mutex_unlock(&p->lock);
	return ends;
}

/* ---- reading ------------------------------------------------------------- */

int gp_pool_tenant_get(struct gp_pool *p, int64_t id, struct gp_tenant *ret)
{
	struct tenant *k;

	pthread_mutex_lock(&p->lock);
	k = tenant_find(p, id);
	if (k)
		*ret = k->t;
	pthread_mutex_unlock(&p->lock);
	return k ? 0 : -ENOENT;
}

int gp_pool_task_get(struct gp_pool *p, int64_t id, struct gp_pool_task *ret)
{
	struct gp_pool_task *t;
	int r = -ENOENT;

	pthread_mutex_lock(&p->lock);
	t = task_find(p, id);
	if (t) {
		*ret = *t;
		r = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

int gp_pool_reasons_changed(struct gp_pool *p, struct gp_pool_reason *r, int n)
{
	int kept = 0;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < n; i++) {
		const struct gp_pool_task *t = task_find(p, r[i].id);

		if (t && is_queued(t->state) && t->gen == r[i].gen && strcmp(t->reason, r[i].reason))
			r[kept++] = r[i];
	}
	pthread_mutex_unlock(&p->lock);
	return kept;
}

bool gp_pool_cancelling(struct gp_pool *p, int64_t id)
{
	struct gp_pool_task *t = running_lock(p, id);
	bool asked = t && t->cancel_by[0];

	if (t)
		pthread_mutex_unlock(&p->lock);
	return asked;
}

void gp_pool_counts(struct gp_pool *p, int64_t tenant, int *ret_queued, int *ret_running)
{
	struct tenant *k;

	pthread_mutex_lock(&p->lock);
	k = tenant < 0 ? NULL : tenant_find(p, tenant);
	*ret_queued = tenant < 0 ? p->queue.n : k ? k->queued : 0;
	*ret_running = tenant < 0 ? p->running.n : k ? k->running : 0;
	pthread_mutex_unlock(&p->lock);
}

void gp_pool_task_row(const struct gp_pool_task *pt, struct gp_task *t)
{
	*t = (struct gp_task){ .id = pt->id, .tenant = pt->tenant, .state = pt->state,
			       .priority = pt->priority, .mem_mib = pt->mem_mib,
			       .mem_pct = pt->mem_pct, .time_limit_s = pt->time_limit_s,
			       .compute_pct = pt->compute_pct, .devices = pt->devices,
			       .whole = pt->whole, .exclusive = pt->exclusive, .hard = pt->hard,
			       .mixed_models = pt->mixed_models,
			       .restart_on_growth = pt->restart_on_growth,
			       .service = pt->service, .pid = pt->pid, .created = pt->created,
			       .started = pt->started };
	memcpy(t->name, pt->name, sizeof(t->name));
	memcpy(t->model, pt->model, sizeof(t->model));
	memcpy(t->reason, pt->reason, sizeof(t->reason));
	memcpy(t->placement, pt->placement, sizeof(t->placement));
	memcpy(t->after, pt->after, sizeof(t->after));
}

/* Adds the tasks of `service` in list to ret[n..max); the new n. */
static int service_add(const struct tasks *list, int64_t service, struct gp_pool_task *ret,
		       int n, int max)
{
	for (int i = 0; i < list->n && n < max; i++)
		if (list->t[i]->service == service)
			ret[n++] = *list->t[i];
	return n;
}

int gp_pool_service_tasks(struct gp_pool *p, int64_t service, struct gp_pool_task *ret,
			  int max)
{
	int n;

	pthread_mutex_lock(&p->lock);
	n = service_add(&p->running, service, ret, 0, max);
	n = service_add(&p->queue, service, ret, n, max);
	pthread_mutex_unlock(&p->lock);
	return n;
}

void gp_pool_queue_stats(struct gp_pool *p, int *ret_n, int64_t *ret_oldest)
{
	int64_t oldest = 0;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->queue.n; i++)
		if (!oldest || p->queue.t[i]->created < oldest)
			oldest = p->queue.t[i]->created;
	*ret_n = p->queue.n;
	*ret_oldest = oldest;
	pthread_mutex_unlock(&p->lock);
}

int gp_pool_queue_page(struct gp_pool *p, int64_t tenant, unsigned states, int after, int limit,
		       struct gp_pool_task *ret, int *ret_position, int *ret_n, int *ret_length)
{
	int n = 0;

	if (!p || after < 0 || limit < 0 || (limit && (!ret || !ret_position)))
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	for (int i = after; i < p->queue.n && n < limit; i++) {
		const struct gp_pool_task *t = p->queue.t[i];

		if ((tenant >= 0 && t->tenant != tenant) ||
		    (states && !(states & GP_TASK_STATE_BIT(t->state))))
			continue;
		ret[n] = *t;
		ret_position[n++] = i + 1;
	}
	*ret_n = n;
	*ret_length = p->queue.n;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

uint64_t gp_pool_reason_hash(const char *reason)
{
	return gp_hash_bytes(reason, strlen(reason));
}

/* t as the pass needs it; its model, if any, added to v's. */
static struct gp_pool_queued queued_of(const struct gp_pool_task *t, struct gp_pool_view *v)
{
	struct gp_pool_queued q = { .id = t->id, .tenant = t->tenant, .priority = t->priority,
				    .created = t->created, .mem_mib = t->mem_mib,
				    .mem_pct = t->mem_pct, .compute_pct = t->compute_pct,
				    .devices = t->devices,
				    .whole = t->whole, .exclusive = t->exclusive,
				    .mixed_models = t->mixed_models, .model = -1,
				    .reason_hash = t->reason_hash, .gen = t->gen };

	if (t->model[0]) {
		if (!v->n_models || strcmp(v->models[v->n_models - 1], t->model))
			memcpy(v->models[v->n_models++], t->model, sizeof(t->model));
		q.model = v->n_models - 1;
	}
	return q;
}

/* Copies n elements of `size` at src into a new array (one more, so
 * that none is NULL); -ENOMEM. */
static int array_copy(const void *src, int n, size_t size, void **ret)
{
	*ret = malloc(((size_t)n + 1) * size);
	if (!*ret)
		return -ENOMEM;
	if (n)
		memcpy(*ret, src, (size_t)n * size);
	return 0;
}

/* Adds queued task t to v, which has room for `room` of them. */
static int view_add(struct gp_pool_view *v, size_t room, const struct gp_pool_task *t)
{
	if (t->held) /* no pass looks at it (gp_pool_task_release) */
		return 0;
	/* Room for a model per task, once one asks for a model. */
	if (t->model[0] && !v->models && !(v->models = malloc(room * sizeof(*v->models))))
		return -ENOMEM;
	v->queued[v->n_queued++] = queued_of(t, v);
	return 0;
}

/* The queued tasks of the scope into v (room for `room`). Those that
 * changed come from the record of changes (in the order they changed,
 * each once, at its latest change), unless it was given up; the record
 * starts again. */
static int view_queued(struct gp_pool *p, enum gp_pool_scope scope, uint64_t since,
		       size_t room, struct gp_pool_view *v)
{
	struct changes *c = &p->changes;
	int r = 0;

	if (scope == GP_POOL_CHANGED && !c->lost) {
		for (int i = 0; r == 0 && i < c->n; i++) {
			const struct gp_pool_task *t = task_find(p, c->c[i].id);

			if (t && t->gen == c->c[i].gen && t->gen > since && is_queued(t->state))
				r = view_add(v, room, t);
		}
	} else {
		for (int i = 0; r == 0 && i < p->queue.n; i++)
			if (scope == GP_POOL_ALL || p->queue.t[i]->gen > since)
				r = view_add(v, room, p->queue.t[i]);
	}
	c->n = 0;
	c->lost = false;
	return r;
}

static int view_copy(struct gp_pool *p, enum gp_pool_scope scope, uint64_t since,
		     struct gp_pool_view *v)
{
	size_t room = scope == GP_POOL_RUNNING ? 1 : (size_t)p->queue.n + 1;
	int r = 0;

	v->running = malloc(((size_t)p->running.n + 1) * sizeof(*v->running));
	v->queued = malloc(room * sizeof(*v->queued));
	v->tenants = malloc(((size_t)p->tenants + 1) * sizeof(*v->tenants));
	if (!v->running || !v->queued || !v->tenants)
		return -ENOMEM;
	for (int i = 0; i < p->running.n; i++)
		v->running[v->n_running++] = *p->running.t[i];
	if (scope != GP_POOL_RUNNING)
		r = view_queued(p, scope, since, room, v);
	for (int i = 0; i < p->tenants; i++)
		v->tenants[v->n_tenants++] = p->tenant[i].t;
	if (r == 0)
		r = array_copy(p->quota, p->quotas, sizeof(*p->quota), (void **)&v->quotas);
	v->n_quotas = r == 0 ? p->quotas : 0;
	v->gen = p->gen;
	v->full_gen = p->full_gen;
	return r;
}

int gp_pool_view_init(struct gp_pool *p, enum gp_pool_scope scope, uint64_t since,
		      struct gp_pool_view *v)
{
	int r;

	*v = (struct gp_pool_view){ 0 };
	pthread_mutex_lock(&p->lock);
	r = view_copy(p, scope, since, v);
	pthread_mutex_unlock(&p->lock);
	if (r < 0)
		gp_pool_view_release(v);
	return r;
}

void gp_pool_view_release(struct gp_pool_view *v)
{
	free(v->running);
	free(v->queued);
	free(v->models);
	free(v->tenants);
	free(v->quotas);
	*v = (struct gp_pool_view){ 0 };
}

uint64_t gp_pool_tenants_gen(struct gp_pool *p)
{
	uint64_t gen;

	pthread_mutex_lock(&p->lock);
	gen = p->tenants_gen;
	pthread_mutex_unlock(&p->lock);
	return gen;
}

uint64_t gp_pool_gen(struct gp_pool *p, uint64_t *ret_full)
{
	uint64_t gen;

	pthread_mutex_lock(&p->lock);
	gen = p->gen;
	*ret_full = p->full_gen;
	pthread_mutex_unlock(&p->lock);
	return gen;
}

/* ---- loading and comparing --------------------------------------------- */

static int load_tasks(struct gp_pool *p, struct gp_store *s, enum gp_task_state state)
{
	struct gp_task *all = NULL;
	int n = 0, r = gp_store_task_list(s, -1, (int)state, &all, &n);

	for (int i = 0; r == 0 && i < n; i++)
		r = task_new(p, &all[i]);
	free(all);
	return r;
}

static int load(struct gp_pool *p, struct gp_store *s)
{
	static const enum gp_task_state states[] = { GP_TASK_RUNNING, GP_TASK_PENDING,
						     GP_TASK_PREEMPTED };
	struct gp_tenant *tenants = NULL;
	int n = 0, r = gp_store_tenant_list(s, &tenants, &n);

	for (int i = 0; r == 0 && i < n; i++)
		r = tenant_add(p, &tenants[i]);
	free(tenants);
	if (r == 0)
		r = gp_store_model_quota_list(s, -1, &p->quota, &p->quotas);
	for (size_t i = 0; r == 0 && i < sizeof(states) / sizeof(states[0]); i++)
		r = load_tasks(p, s, states[i]);
	return r;
}

int gp_pool_load(struct gp_store *s, struct gp_pool **ret)
{
	struct gp_pool *p;
	int r;

	if (!s || !ret)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	r = map_grow(p);
	if (r == 0)
		r = load(p, s);
	if (r < 0) {
		gp_pool_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

struct gp_pool *gp_pool_free(struct gp_pool *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->slots; i++)
		free(p->map[i]);
	free(p->map);
	free(p->queue.t);
	free(p->running.t);
	free(p->tenant);
	free(p->quota);
	free(p->changes.c);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return NULL;
}

/* The fields of a task the store has, compared; the first that differs. */
static const char *task_differs(const struct gp_pool_task *a, const struct gp_pool_task *b)
{
	static const char *const names[] = { "tenant", "name", "state", "priority", "shape",
					     "reason", "placement", "pid", "times" };
	bool differs[] = {
		a->tenant != b->tenant,
		strcmp(a->name, b->name) != 0,
		a->state != b->state,
		a->priority != b->priority,
		a->mem_mib != b->mem_mib || a->mem_pct != b->mem_pct ||
			a->compute_pct != b->compute_pct || a->time_limit_s != b->time_limit_s ||
			strcmp(a->after, b->after) != 0 ||
			a->devices != b->devices || a->whole != b->whole ||
			a->exclusive != b->exclusive || a->hard != b->hard ||
			a->mixed_models != b->mixed_models ||
			strcmp(a->model, b->model) != 0,
		strcmp(a->reason, b->reason) != 0,
		strcmp(a->placement, b->placement) != 0,
		a->pid != b->pid,
		a->created != b->created || a->started != b->started,
	};

	for (size_t i = 0; i < sizeof(differs) / sizeof(differs[0]); i++)
		if (differs[i])
			return names[i];
	return NULL;
}

static bool tenant_same(const struct tenant *a, const struct tenant *b)
{
	return a->t.id == b->t.id && !strcmp(a->t.name, b->t.name) && a->t.admin == b->t.admin &&
	       quota_same(&a->t, &b->t) && !strcmp(a->t.user, b->t.user) &&
	       a->t.removed == b->t.removed && a->queued == b->queued &&
	       a->running == b->running;
}

static bool quota_entry_same(const struct gp_model_quota *a, const struct gp_model_quota *b)
{
	return a->tenant == b->tenant && !strcmp(a->model, b->model) &&
	       a->mem_guaranteed_mib == b->mem_guaranteed_mib &&
	       a->mem_borrowable_mib == b->mem_borrowable_mib &&
	       a->compute_guaranteed_pct == b->compute_guaranteed_pct &&
	       a->compute_borrowable_pct == b->compute_borrowable_pct;
}

static int compare_tasks(struct gp_pool *a, struct gp_pool *b, char *why, size_t len)
{
	if (a->used != b->used || a->queue.n != b->queue.n || a->running.n != b->running.n) {
		snprintf(why, len, "%zu tasks (%d queued, %d running) against %zu (%d, %d)",
			 a->used, a->queue.n, a->running.n, b->used, b->queue.n, b->running.n);
		return -EDOM;
	}
	for (int i = 0; i < a->queue.n; i++)
		if (a->queue.t[i]->id != b->queue.t[i]->id) {
			snprintf(why, len, "position %d of the queue: task %" PRId64 " against %" PRId64,
				 i + 1, a->queue.t[i]->id, b->queue.t[i]->id);
			return -EDOM;
		}
	for (size_t i = 0; i < a->slots; i++) {
		const struct gp_pool_task *x = a->map[i], *y = x ? task_find(b, x->id) : NULL;
		const char *field = x && y ? task_differs(x, y) : NULL;

		if (x && (!y || field)) {
			snprintf(why, len, "task %" PRId64 ": %s", x->id, y ? field : "missing");
			return -EDOM;
		}
	}
	return 0;
}

static int compare_tenants(struct gp_pool *a, struct gp_pool *b, char *why, size_t len)
{
	if (a->tenants != b->tenants || a->quotas != b->quotas) {
		snprintf(why, len, "%d tenants and %d model quotas against %d and %d", a->tenants,
			 a->quotas, b->tenants, b->quotas);
		return -EDOM;
	}
	for (int i = 0; i < a->tenants; i++)
		if (!tenant_same(&a->tenant[i], &b->tenant[i])) {
			snprintf(why, len, "tenant %" PRId64 " (%s)", a->tenant[i].t.id,
				 a->tenant[i].t.name);
			return -EDOM;
		}
	for (int i = 0; i < a->quotas; i++)
		if (!quota_entry_same(&a->quota[i], &b->quota[i])) {
			snprintf(why, len, "model quota %d (tenant %" PRId64 ", %s)", i,
				 a->quota[i].tenant, a->quota[i].model);
			return -EDOM;
		}
	return 0;
}

int gp_pool_compare(struct gp_pool *a, struct gp_pool *b, char *why, size_t len)
{
	int r;

	if (!a || !b || !why)
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	pthread_mutex_lock(&b->lock);
	r = compare_tasks(a, b, why, len);
	if (r == 0)
		r = compare_tenants(a, b, why, len);
	pthread_mutex_unlock(&b->lock);
	pthread_mutex_unlock(&a->lock);
	return r;
}
