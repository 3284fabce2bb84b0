/* history.c — the pool's own tasks replayed in time on the core (see
 * history.h for the model): each task made into a request under the
 * setup's slices, a cluster of the setup's cards, then arrivals and
 * departures in time order with a pass over the queue at each.
 *
 * The queue is kept per request shape: tasks of one shape fit, or do not,
 * alike, and where a shape fits nowhere neither does any shape that asks
 * at least as much of each card. A pass takes the first task in queue
 * order among the shapes still in play; one that does not fit takes its
 * shape and every larger one out of the pass. Nothing is freed within a
 * pass, and between two departures only arrivals can fit: a pass after
 * arrivals alone tries only the shapes whose queued tasks all arrived
 * since the last pass. So a pass costs what it places and the shapes it
 * rules out, not the length of the queue. */
#include "sim/history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/cluster.h"
#include "core/models.h"
#include "core/policy.h"
#include "core/workload.h"

#define HOST_PLENTY 1000000000u /* the history says nothing of host CPU, memory */
#define COVERAGE    0.95	/* of the target workload, as the server's loop */
#define POLICY_SEED 1		/* for the random policy: one answer per input */

#define NO_SHAPE SIZE_MAX

/* One task as this setup replays it. */
struct job {
	struct gp_request req;
	int64_t duration_ms;
	unsigned share_pct; /* per device; 100 for whole */
	size_t shape;	    /* NO_SHAPE: no card of its model */
	bool would_fail, stretched;
};

/* The queued tasks of one request shape, the first in queue order on top
 * of the heap. */
struct shape {
	struct gp_request req;
	bool never; /* no state of the pool can take it */
	bool stale; /* its queued tasks did not fit at the last pass */
	size_t *heap;
	size_t len, cap;
	size_t active_at; /* its place in replay.active while it has tasks */
};

struct running {
	int64_t end_ms;
	size_t task;
	struct gp_placement where;
};

struct replay {
	const struct gp_history_task *task;
	size_t n;
	const struct gp_history_setup *setup;
	struct job *job;
	struct gp_cluster *cluster;
	struct gp_policy *policy;
	struct gp_workload *target;
	struct gp_node_spec *node;
	size_t nodes;
	size_t *arrival; /* task indices by arrival time */
	size_t next;	 /* the next in arrival to arrive */
	struct shape *shape;
	size_t shapes;
	size_t *active; /* the shapes with queued tasks */
	size_t n_active;
	size_t *alive;	      /* the shapes still in play in a pass */
	struct running *ends; /* the running tasks, by end time, soonest first */
	size_t running;
	struct gp_history_outcome *out;
	double model_share_ms[GP_MODELS_MAX]; /* share (fraction) × ms */
};

/* ---- the slices a setup gives ----------------------------------------- */

const struct gp_history_override *
gp_history_override_of(const struct gp_history_setup *setup,
		       const struct gp_history_task *t)
{
	bool tpl = t->template_name[0] != '\0';

	if (t->whole)
		return NULL;
	for (size_t i = 0; i < setup->overrides; i++) {
		const struct gp_history_override *o = &setup->override[i];

		if (o->is_template != tpl)
			continue;
		if (tpl && !strcmp(o->name, t->template_name))
			return o;
		if (!tpl && !strcmp(o->name, t->name) &&
		    (!o->tenant[0] || !strcmp(o->tenant, t->tenant)))
			return o;
	}
	return NULL;
}

/* The run of t at share pct (history.h's duration model). */
static int64_t duration_at(const struct gp_history_task *t, unsigned pct,
			   bool *ret_stretched)
{
	int64_t at = (int64_t)pct * t->devices; /* share × devices, in % */

	*ret_stretched = false;
	if (pct == t->compute_pct || t->used_ms * 100 <= at * t->run_ms)
		return t->run_ms;
	*ret_stretched = true;
	return (t->used_ms * 100 + at - 1) / at;
}

/* Job j of task t under the setup's overrides, without its models. */
static void job_make(const struct gp_history_setup *setup,
		     const struct gp_history_task *t, struct job *j)
{
	const struct gp_history_override *o = gp_history_override_of(setup, t);
	uint32_t mem = o && o->mem_mib ? o->mem_mib : t->mem_mib;
	unsigned pct = o && o->compute_pct ? o->compute_pct : t->compute_pct;

	*j = (struct job){.duration_ms = t->run_ms};
	j->req.devices = (uint8_t)t->devices;
	if (t->whole) {
		j->req.whole = true;
		j->share_pct = 100;
		return;
	}
	if (t->mem_peak_mib && mem < t->mem_peak_mib) {
		j->would_fail = true; /* replayed as recorded */
		mem = t->mem_mib;
		pct = t->compute_pct;
	}
	j->req.dev_mem_mib = mem;
	j->req.dev_compute = pct * GP_COMPUTE_WHOLE / 100;
	j->share_pct = pct;
	j->duration_ms = duration_at(t, pct, &j->stretched);
}

static bool task_valid(const struct gp_history_task *t)
{
	return t->devices >= 1 && t->devices <= GP_NODE_DEVICES_MAX && t->run_ms >= 0 &&
	       t->used_ms >= 0 &&
	       (t->whole || (t->compute_pct >= 1 && t->compute_pct <= 100));
}

/* ---- the pool ----------------------------------------------------------- */

/* Does a card named `name` answer to one of the terms of `model` ("A100",
 * "T4|L4", "A100,T4", "nvidia": a part of its name, or its vendor), as
 * the server's loop reads a task's model? */
static bool model_answers(const char *name, const char *model)
{
	return gp_model_answers(name, gp_vendor_name(gp_model_vendor(name)), model);
}

/* The model ids of the pool's cards that answer to `model`. */
static uint64_t models_of(const struct replay *r, const char *model)
{
	uint64_t models = 0;

	for (size_t i = 0; i < r->setup->cards; i++) {
		const char *name = r->setup->card[i].model;

		if (model_answers(name, model))
			models |= 1ULL << gp_cluster_model_id(r->cluster, name, false);
	}
	return models;
}

/* The node that holds cards numbered `node`, made when new; NULL when a
 * node would have too many cards. */
static struct gp_node_spec *node_for(struct replay *r, uint32_t node, uint32_t *numbers)
{
	struct gp_node_spec *s;

	for (size_t i = 0; i < r->nodes; i++)
		if (numbers[i] == node)
			return r->node[i].devices < GP_NODE_DEVICES_MAX ? &r->node[i]
									: NULL;
	numbers[r->nodes] = node;
	s = &r->node[r->nodes++];
	*s = (struct gp_node_spec){.cpu_milli = HOST_PLENTY, .mem_mib = HOST_PLENTY};
	return s;
}

static int nodes_make(struct replay *r)
{
	const struct gp_history_setup *setup = r->setup;
	uint32_t *numbers = calloc(setup->cards, sizeof(*numbers));
	int err = 0;

	r->node = calloc(setup->cards, sizeof(*r->node));
	if (!numbers || !r->node) {
		free(numbers);
		return -ENOMEM;
	}
	for (size_t i = 0; i < setup->cards && err == 0; i++) {
		const struct gp_history_card *card = &setup->card[i];
		struct gp_node_spec *s = node_for(r, card->node, numbers);
		int model = gp_cluster_model_id(r->cluster, card->model, true);

		if (!s || !card->mem_mib || model == -ENOSPC)
			err = -EINVAL; /* too many cards on a node, or models */
		else if (model < 0)
			err = model;
		if (err < 0)
			break;
		s->device[s->devices++] = (struct gp_device_spec){
			.model = (uint8_t)model,
			.vendor = (uint8_t)gp_model_vendor(card->model),
			.mem_mib = card->mem_mib,
			.overcommit = 1000,
			.max_tasks = (uint16_t)setup->max_tasks,
			.healthy = true};
	}
	free(numbers);
	return err;
}

static int cluster_make(struct replay *r)
{
	int err;

	if (r->setup->cards == 0)
		return -EINVAL;
	err = gp_cluster_new(0, &r->cluster);
	if (err == 0)
		err = nodes_make(r);
	for (size_t i = 0; err == 0 && i < r->nodes; i++)
		err = gp_cluster_add_node(r->cluster, &r->node[i], NULL);
	return err;
}

/* ---- the jobs and the policy -------------------------------------------- */

static int jobs_make(struct replay *r)
{
	r->job = calloc(r->n ? r->n : 1, sizeof(*r->job));
	if (!r->job)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		const struct gp_history_task *t = &r->task[i];

		if (!task_valid(t))
			return -EINVAL;
		job_make(r->setup, t, &r->job[i]);
		if (t->model[0]) {
			r->job[i].req.models = models_of(r, t->model);
			if (!r->job[i].req.models)
				r->job[i].shape = NO_SHAPE;
		}
	}
	return 0;
}

/* Orders requests by their fields, so that equal ones are neighbours. */
static int request_compare(const void *a, const void *b, void *ctx)
{
	const struct job *job = ctx;
	const struct gp_request *x = &job[*(const size_t *)a].req,
				*y = &job[*(const size_t *)b].req;

	if (x->whole != y->whole)
		return x->whole - y->whole;
	if (x->devices != y->devices)
		return x->devices - y->devices;
	if (x->dev_mem_mib != y->dev_mem_mib)
		return x->dev_mem_mib < y->dev_mem_mib ? -1 : 1;
	if (x->dev_compute != y->dev_compute)
		return x->dev_compute < y->dev_compute ? -1 : 1;
	return (x->models > y->models) - (x->models < y->models);
}

static bool same_request(const struct gp_request *a, const struct gp_request *b)
{
	return a->whole == b->whole && a->devices == b->devices &&
	       a->dev_mem_mib == b->dev_mem_mib && a->dev_compute == b->dev_compute &&
	       a->models == b->models;
}

/* Gives each job with a model the pool has its shape (by is scratch of n
 * entries). */
static void shapes_assign(struct replay *r, size_t *by)
{
	size_t m = 0;

	for (size_t i = 0; i < r->n; i++)
		if (r->job[i].shape != NO_SHAPE)
			by[m++] = i;
	qsort_r(by, m, sizeof(*by), request_compare, r->job);
	for (size_t k = 0; k < m; k++) {
		struct job *j = &r->job[by[k]];

		if (k == 0 || !same_request(&r->shape[r->shapes - 1].req, &j->req))
			r->shape[r->shapes++].req = j->req;
		j->shape = r->shapes - 1;
	}
}

/* The shapes of the jobs, each marked when even the idle pool cannot
 * take it. */
static int shapes_make(struct replay *r)
{
	size_t *by = calloc(r->n ? r->n : 1, sizeof(*by));
	int err = 0;

	r->shape = calloc(r->n ? r->n : 1, sizeof(*r->shape));
	r->active = calloc(r->n ? r->n : 1, sizeof(*r->active));
	r->alive = calloc(r->n ? r->n : 1, sizeof(*r->alive));
	if (!by || !r->shape || !r->active || !r->alive) {
		free(by);
		return -ENOMEM;
	}
	shapes_assign(r, by);
	free(by);
	for (size_t k = 0; k < r->shapes && err == 0; k++) {
		struct gp_decision d = {0};

		err = gp_place(r->cluster, r->policy, &r->shape[k].req, &d);
		r->shape[k].never = !d.placed;
	}
	return err;
}

/* The policy, with the jobs' shapes as its target where it takes one. */
static int policy_make(struct replay *r)
{
	struct gp_policy_config pc = {.seed = POLICY_SEED};
	struct gp_request *req = NULL;
	size_t m = 0;
	int err = 0;

	if (gp_policy_takes_target(r->setup->policy)) {
		if (!(req = calloc(r->n ? r->n : 1, sizeof(*req))))
			return -ENOMEM;
		for (size_t i = 0; i < r->n; i++)
			if (r->job[i].shape != NO_SHAPE)
				req[m++] = r->job[i].req;
		if (m)
			err = gp_workload_from_requests(req, m, COVERAGE, &r->target);
		if (err == 0 && r->target)
			gp_workload_set_supply(r->target, r->node, r->nodes);
		free(req);
		pc.target = r->target;
	}
	if (err == 0)
		err = gp_policy_new(r->setup->policy, &pc, &r->policy);
	return err;
}

/* ---- the queue and the running tasks ------------------------------------ */

/* Does task a come before task b in the queue? */
static bool queue_before(const struct gp_history_task *a, const struct gp_history_task *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->arrival_ms != b->arrival_ms)
		return a->arrival_ms < b->arrival_ms;
	return a->id < b->id;
}

static bool shape_before(const struct replay *r, size_t a, size_t b)
{
	return queue_before(&r->task[a], &r->task[b]);
}

static void shape_swap(size_t *a, size_t *b)
{
	size_t t = *a;

	*a = *b;
	*b = t;
}

/* Queues task, of shape s (which has room: its heap is grown first). */
static void shape_push(struct replay *r, struct shape *s, size_t task)
{
	size_t i = s->len++;

	s->heap[i] = task;
	while (i > 0 && shape_before(r, s->heap[i], s->heap[(i - 1) / 2])) {
		shape_swap(&s->heap[i], &s->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

/* Takes the first task of shape s out of its queue. */
static size_t shape_pop(struct replay *r, struct shape *s)
{
	size_t top = s->heap[0], i = 0;

	s->heap[0] = s->heap[--s->len];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < s->len && shape_before(r, s->heap[l], s->heap[m]))
			m = l;
		if (l + 1 < s->len && shape_before(r, s->heap[l + 1], s->heap[m]))
			m = l + 1;
		if (m == i)
			return top;
		shape_swap(&s->heap[i], &s->heap[m]);
		i = m;
	}
}

static int queue_add(struct replay *r, size_t task)
{
	size_t k = r->job[task].shape;
	struct shape *s = k == NO_SHAPE ? NULL : &r->shape[k];

	if (!s || s->never)
		return 0; /* never placed */
	if (s->len == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		size_t *grown = realloc(s->heap, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		s->heap = grown;
		s->cap = cap;
	}
	if (s->len == 0) {
		s->stale = false;
		s->active_at = r->n_active;
		r->active[r->n_active++] = k;
	}
	shape_push(r, s, task);
	return 0;
}

/* Takes the first task of shape k out of the queue. */
static size_t queue_take(struct replay *r, size_t k)
{
	struct shape *s = &r->shape[k];
	size_t task = shape_pop(r, s);

	if (s->len == 0) {
		size_t last = r->active[--r->n_active];

		r->active[s->active_at] = last;
		r->shape[last].active_at = s->active_at;
	}
	return task;
}

static bool ends_before(const struct running *a, const struct running *b)
{
	return a->end_ms != b->end_ms ? a->end_ms < b->end_ms : a->task < b->task;
}

static void running_swap(struct running *a, struct running *b)
{
	struct running t = *a;

	*a = *b;
	*b = t;
}

static void running_push(struct replay *r, const struct running *x)
{
	size_t i = r->running++;

	r->ends[i] = *x;
	while (i > 0 && ends_before(&r->ends[i], &r->ends[(i - 1) / 2])) {
		running_swap(&r->ends[i], &r->ends[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

static struct running running_pop(struct replay *r)
{
	struct running top = r->ends[0];
	size_t i = 0;

	r->ends[0] = r->ends[--r->running];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < r->running && ends_before(&r->ends[l], &r->ends[m]))
			m = l;
		if (l + 1 < r->running && ends_before(&r->ends[l + 1], &r->ends[m]))
			m = l + 1;
		if (m == i)
			return top;
		running_swap(&r->ends[i], &r->ends[m]);
		i = m;
	}
}

/* ---- the events --------------------------------------------------------- */

static int64_t next_time(const struct replay *r)
{
	int64_t t = INT64_MAX;

	if (r->next < r->n)
		t = r->task[r->arrival[r->next]].arrival_ms;
	if (r->running && r->ends[0].end_ms < t)
		t = r->ends[0].end_ms;
	return t;
}

/* Ends what ends by `now`; *ret_freed says whether anything did. */
static int departures(struct replay *r, int64_t now, bool *ret_freed)
{
	*ret_freed = false;
	while (r->running && r->ends[0].end_ms <= now) {
		struct running done = running_pop(r);
		int err = gp_cluster_release(r->cluster, &r->job[done.task].req,
					     &done.where);

		if (err < 0)
			return err;
		*ret_freed = true;
	}
	return 0;
}

static int arrivals(struct replay *r, int64_t now)
{
	int err = 0;

	while (err == 0 && r->next < r->n &&
	       r->task[r->arrival[r->next]].arrival_ms <= now)
		err = queue_add(r, r->arrival[r->next++]);
	return err;
}

/* The GPU time of a placed job, per model of the cards it took. */
static void account(struct replay *r, size_t task, const struct gp_placement *where)
{
	const struct job *j = &r->job[task];

	for (int d = 0; d < where->devices; d++) {
		int model = gp_cluster_device_model(r->cluster, where->node,
						    where->device[d]);

		if (model >= 0 && model < GP_MODELS_MAX)
			r->model_share_ms[model] +=
				j->share_pct / 100.0 * (double)j->duration_ms;
	}
}

static int start(struct replay *r, size_t task, const struct gp_placement *where,
		 int64_t now)
{
	const struct job *j = &r->job[task];
	struct running x = {
		.end_ms = now + j->duration_ms, .task = task, .where = *where};
	int err = gp_cluster_commit(r->cluster, &j->req, where);

	if (err < 0)
		return err;
	running_push(r, &x);
	account(r, task, where);
	r->out[task].placed = true;
	r->out[task].start_ms = now;
	r->out[task].end_ms = x.end_ms;
	return 0;
}

/* Does req ask for at least what f asks, on no more models? Then where
 * f fits nowhere, neither does req (cards take software slices: a device
 * that can take req's share and memory can take any less). */
static bool at_least(const struct gp_request *req, const struct gp_request *f)
{
	bool models = !f->models || (req->models && !(req->models & ~f->models));

	return models && req->whole == f->whole && req->devices >= f->devices &&
	       req->dev_mem_mib >= f->dev_mem_mib && req->dev_compute >= f->dev_compute;
}

/* The shapes in play at a pass: all with queued tasks after a departure,
 * else those whose tasks all arrived since the last pass. */
static size_t alive_make(struct replay *r, bool freed)
{
	size_t n = 0;

	for (size_t a = 0; a < r->n_active; a++)
		if (freed || !r->shape[r->active[a]].stale)
			r->alive[n++] = r->active[a];
	return n;
}

/* The place in alive of the shape whose first task is first in the queue. */
static size_t alive_first(const struct replay *r, size_t n)
{
	size_t best = 0;

	for (size_t k = 1; k < n; k++)
		if (shape_before(r, r->shape[r->alive[k]].heap[0],
				 r->shape[r->alive[best]].heap[0]))
			best = k;
	return best;
}

/* Takes out of play every shape that asks at least as much as req. */
static size_t alive_drop(struct replay *r, size_t n, const struct gp_request *req)
{
	size_t kept = 0;

	for (size_t k = 0; k < n; k++)
		if (!at_least(&r->shape[r->alive[k]].req, req))
			r->alive[kept++] = r->alive[k];
	return kept;
}

/* Places, in queue order, what fits now (the header's pass). */
static int pass(struct replay *r, int64_t now, bool freed)
{
	size_t n = alive_make(r, freed);

	while (n > 0) {
		size_t at = alive_first(r, n), k = r->alive[at];
		struct gp_decision d = {0};
		int err = gp_place(r->cluster, r->policy, &r->shape[k].req, &d);

		if (err == 0 && d.placed)
			err = start(r, queue_take(r, k), &d.where, now);
		if (err < 0)
			return err;
		if (!d.placed)
			n = alive_drop(r, n, &r->shape[k].req);
		else if (r->shape[k].len == 0)
			r->alive[at] = r->alive[--n];
	}
	for (size_t a = 0; a < r->n_active; a++)
		r->shape[r->active[a]].stale = true;
	return 0;
}

static int by_arrival_compare(const void *a, const void *b, void *ctx)
{
	const struct gp_history_task *t = ctx;
	const struct gp_history_task *x = &t[*(const size_t *)a],
				     *y = &t[*(const size_t *)b];

	if (x->arrival_ms != y->arrival_ms)
		return x->arrival_ms < y->arrival_ms ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int simulate(struct replay *r)
{
	for (size_t i = 0; i < r->n; i++)
		r->arrival[i] = i;
	qsort_r(r->arrival, r->n, sizeof(*r->arrival), by_arrival_compare,
		(void *)r->task);
	while (r->next < r->n || r->running) {
		int64_t now = next_time(r);
		bool freed;
		int err = departures(r, now, &freed);

		if (err < 0)
			return err;
		err = arrivals(r, now);
		if (err == 0)
			err = pass(r, now, freed);
		if (err < 0)
			return err;
	}
	return 0;
}

/* ---- the figures -------------------------------------------------------- */

static int double_compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p % of them at or below. */
static double percentile(const double *sorted, size_t n, unsigned p)
{
	size_t rank = (p * n + 99) / 100;

	return n ? sorted[rank ? rank - 1 : 0] : 0;
}

static int waits(const struct replay *r, struct gp_history_result *res)
{
	double *w = malloc((res->placed ? res->placed : 1) * sizeof(*w)), sum = 0;
	size_t m = 0;

	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		if (r->out[i].placed) {
			w[m] = (double)(r->out[i].start_ms - r->task[i].arrival_ms) /
			       1000.0;
			sum += w[m++];
		}
	qsort(w, m, sizeof(*w), double_compare);
	res->wait_p50_s = percentile(w, m, 50);
	res->wait_p99_s = percentile(w, m, 99);
	res->wait_max_s = m ? w[m - 1] : 0;
	res->wait_mean_s = m ? sum / (double)m : 0;
	free(w);
	return 0;
}

static void models_sum(const struct replay *r, struct gp_history_result *res)
{
	res->models = 0;
	for (int m = 0; m < GP_MODELS_MAX; m++) {
		const char *name = gp_cluster_model_name(r->cluster, m);
		struct gp_history_model *x;

		if (!name)
			break;
		x = &res->model[res->models++];
		snprintf(x->model, sizeof(x->model), "%s", name);
		x->gpu_hours = r->model_share_ms[m] / 3.6e6;
		res->gpu_hours += x->gpu_hours;
		for (size_t c = 0; c < r->setup->cards; c++)
			x->cards += !strcmp(r->setup->card[c].model, name);
	}
}

static int summarize(const struct replay *r, struct gp_history_result *res)
{
	int64_t first = INT64_MAX, last = INT64_MIN;
	double share_ms = 0, used_ms = 0, capacity;

	*res = (struct gp_history_result){.tasks = r->n, .cards = r->setup->cards};
	for (size_t i = 0; i < r->n; i++) {
		const struct gp_history_outcome *o = &r->out[i];

		first = r->task[i].arrival_ms < first ? r->task[i].arrival_ms : first;
		res->would_fail += o->would_fail;
		res->stretched += o->stretched;
		if (!o->placed) {
			res->never_placed++;
			continue;
		}
		res->placed++;
		last = o->end_ms > last ? o->end_ms : last;
		share_ms += o->compute_pct / 100.0 * r->task[i].devices *
			    (double)(o->end_ms - o->start_ms);
		used_ms += (double)r->task[i].used_ms;
	}
	res->makespan_s = res->placed ? (double)(last - first) / 1000.0 : 0;
	capacity = (double)res->cards * res->makespan_s * 1000.0;
	res->alloc_pct = capacity > 0 ? 100.0 * share_ms / capacity : 0;
	res->util_pct = capacity > 0 ? 100.0 * used_ms / capacity : 0;
	models_sum(r, res);
	return waits(r, res);
}

/* ---- the whole ---------------------------------------------------------- */

static int replay_init(struct replay *r)
{
	r->arrival = calloc(r->n ? r->n : 1, sizeof(*r->arrival));
	r->ends = calloc(r->n ? r->n : 1, sizeof(*r->ends));
	if (!r->arrival || !r->ends)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		r->out[i] =
			(struct gp_history_outcome){.would_fail = r->job[i].would_fail,
						    .stretched = r->job[i].stretched,
						    .compute_pct = r->job[i].share_pct,
						    .mem_mib = r->job[i].req.dev_mem_mib};
	}
	return 0;
}

static void replay_release(struct replay *r)
{
	free(r->arrival);
	for (size_t k = 0; k < r->shapes; k++)
		free(r->shape[k].heap);
	free(r->shape);
	free(r->active);
	free(r->alive);
	free(r->ends);
	free(r->job);
	free(r->node);
	gp_policy_free(r->policy);
	gp_workload_free(r->target);
	gp_cluster_free(r->cluster);
}

int gp_history_run(const struct gp_history_task *task, size_t n,
		   const struct gp_history_setup *setup,
		   struct gp_history_result *ret_result,
		   struct gp_history_outcome *ret_outcome)
{
	struct replay r = {.task = task, .n = n, .setup = setup, .out = ret_outcome};
	struct gp_history_result res;
	int err;

	for (size_t i = 0; i < setup->overrides; i++)
		if (setup->override[i].compute_pct > 100)
			return -EINVAL;
	if (!r.out && !(r.out = calloc(n ? n : 1, sizeof(*r.out))))
		return -ENOMEM;
	err = cluster_make(&r);
	if (err == 0)
		err = jobs_make(&r);
	if (err == 0)
		err = policy_make(&r);
	if (err == 0)
		err = shapes_make(&r);
	if (err == 0)
		err = replay_init(&r);
	if (err == 0)
		err = simulate(&r);
	if (err == 0)
		err = summarize(&r, &res);
	if (err == 0)
		*ret_result = res;
	if (r.out != ret_outcome)
		free(r.out);
	replay_release(&r);
	return err;
}
