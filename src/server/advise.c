/* advise.c — right-sizing from usage records (advise.h). */
#include "server/advise.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS_PER_HOUR 3.6e6
#define MIB_PER_GIB 1024.0
#define BIN_PCT	    0.1	 /* the histogram's step */
#define BINS	    2001 /* 0 to 200 % */

/* A group being added up: its advice so far, and the used share's
 * histogram (time in each 0.1 % step). */
struct group {
	struct gp_advice a;
	double used_ms[BINS];
	double held_pct_ms, held_mib_ms; /* allocated x time */
};

struct gp_advise {
	struct gp_advise_options o;
	const struct gp_task *tasks; /* sorted by id, as the store lists them */
	int n_tasks;
	int *group_of_task; /* -1: none yet */
	struct group **groups;
	int n_groups;
};

int gp_advise_begin(const struct gp_task *tasks, int n_tasks,
		    const struct gp_advise_options *o, struct gp_advise **ret)
{
	struct gp_advise *a;

	if (!o || o->headroom_pct > 100 || o->percentile < 50 || o->percentile > 100 ||
	    n_tasks < 0)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a || !(a->group_of_task = malloc(((size_t)n_tasks + 1) * sizeof(int)))) {
		free(a);
		return -ENOMEM;
	}
	for (int i = 0; i < n_tasks; i++)
		a->group_of_task[i] = -1;
	a->o = *o;
	a->tasks = tasks;
	a->n_tasks = n_tasks;
	*ret = a;
	return 0;
}

/* The index of task id in a->tasks (sorted by id); -1 when absent. */
static int task_index(const struct gp_advise *a, int64_t id)
{
	int lo = 0, hi = a->n_tasks - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (a->tasks[mid].id == id)
			return mid;
		if (a->tasks[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* The group of task t (made when new), counting t as one of its runs. */
static struct group *group_for(struct gp_advise *a, int t)
{
	const struct gp_task *task = &a->tasks[t];
	bool tpl = task->template_name[0] != '\0';
	const char *name = tpl ? task->template_name : task->name;
	struct group **more;
	int i;

	if (a->group_of_task[t] >= 0)
		return a->groups[a->group_of_task[t]];
	for (i = 0; i < a->n_groups; i++)
		if (a->groups[i]->a.is_template == tpl &&
		    !strcmp(a->groups[i]->a.name, name) &&
		    (tpl || a->groups[i]->a.tenant == task->tenant))
			break;
	if (i == a->n_groups) {
		more = realloc(a->groups, (size_t)(i + 1) * sizeof(*more));
		if (!more)
			return NULL;
		a->groups = more;
		if (!(more[i] = calloc(1, sizeof(**more))))
			return NULL;
		more[i]->a.is_template = tpl;
		more[i]->a.tenant = tpl ? 0 : task->tenant;
		snprintf(more[i]->a.name, sizeof(more[i]->a.name), "%s", name);
		a->n_groups++;
	}
	a->group_of_task[t] = i;
	a->groups[i]->a.runs++;
	return a->groups[i];
}

static void record_add(struct group *g, const struct gp_usage_record *r)
{
	double ms = (double)(r->end_ms - r->start_ms);
	double used = ms > 0 ? (double)r->used_ms * 100.0 / ms : 0;
	int bin = (int)ceil(used / BIN_PCT - 1e-9);

	if (ms <= 0)
		return;
	g->used_ms[bin < 0 ? 0 : bin >= BINS ? BINS - 1 : bin] += ms;
	g->a.records++;
	g->a.hours += ms / MS_PER_HOUR;
	g->held_pct_ms += (double)r->compute_pct * ms;
	g->held_mib_ms += (double)r->mem_mib * ms;
	if (used > g->a.compute_max_pct)
		g->a.compute_max_pct = used;
	if (r->mem_mib > g->a.mem_held_mib)
		g->a.mem_held_mib = r->mem_mib;
	if (r->mem_peak_mib > g->a.mem_peak_mib)
		g->a.mem_peak_mib = r->mem_peak_mib;
	if (r->compute_pct > g->a.compute_held_pct)
		g->a.compute_held_pct = r->compute_pct;
}

int gp_advise_add(struct gp_advise *a, const struct gp_usage_record *recs, int n)
{
	for (int i = 0; i < n; i++) {
		int t = task_index(a, recs[i].task);
		struct group *g;

		if (t < 0 || a->tasks[t].whole)
			continue;
		if (!(g = group_for(a, t)))
			return -ENOMEM;
		record_add(g, &recs[i]);
	}
	return 0;
}

/* The share used at percentile p over time: the upper edge of the step
 * where the time below it reaches p % of the whole. */
static double percentile(const struct group *g, unsigned p)
{
	double total = g->a.hours * MS_PER_HOUR, seen = 0;

	for (int b = 0; b < BINS; b++) {
		seen += g->used_ms[b];
		if (g->used_ms[b] > 0 && seen >= total * p / 100.0 - 1e-6)
			return b * BIN_PCT;
	}
	return 0;
}

static void group_finish(struct group *g, const struct gp_advise_options *o)
{
	struct gp_advice *a = &g->a;
	double total = a->hours * MS_PER_HOUR, step = GP_ADVISE_MEM_STEP_MIB;
	double proposed;

	a->compute_median_pct = percentile(g, 50);
	a->compute_percentile_pct = percentile(g, o->percentile);
	/* A step's upper edge may pass the most used; it is not more than that. */
	if (a->compute_percentile_pct > a->compute_max_pct)
		a->compute_percentile_pct = a->compute_max_pct;
	if (a->compute_median_pct > a->compute_max_pct)
		a->compute_median_pct = a->compute_max_pct;
	proposed = ceil(a->compute_percentile_pct - 1e-9);
	a->compute_proposed_pct = proposed < 1	   ? 1
				  : proposed > 100 ? 100
						   : (unsigned)proposed;
	a->freed_gpu_hours = (g->held_pct_ms - (double)a->compute_proposed_pct * total) /
			     100.0 / MS_PER_HOUR;
	if (!a->mem_peak_mib)
		return;
	a->mem_proposed_mib = (uint64_t)(ceil((double)a->mem_peak_mib *
					      (100 + o->headroom_pct) / 100.0 / step) *
					 step);
	a->freed_mem_gib_hours = (g->held_mib_ms - (double)a->mem_proposed_mib * total) /
				 MIB_PER_GIB / MS_PER_HOUR;
}

static int advice_order(const void *x, const void *y)
{
	const struct gp_advice *a = x, *b = y;

	if (a->is_template != b->is_template)
		return a->is_template ? -1 : 1;
	if (strcmp(a->name, b->name))
		return strcmp(a->name, b->name);
	return (a->tenant > b->tenant) - (a->tenant < b->tenant);
}

int gp_advise_end(struct gp_advise *a, struct gp_advice **ret, int *ret_n)
{
	struct gp_advice *out = calloc((size_t)a->n_groups + 1, sizeof(*out));
	int n = a->n_groups;

	for (int i = 0; i < n; i++) {
		if (out) {
			group_finish(a->groups[i], &a->o);
			out[i] = a->groups[i]->a;
		}
		free(a->groups[i]);
	}
	free(a->groups);
	free(a->group_of_task);
	free(a);
	if (!out)
		return -ENOMEM;
	qsort(out, (size_t)n, sizeof(*out), advice_order);
	*ret = out;
	*ret_n = n;
	return 0;
}

/* ---- applying it ---------------------------------------------------------- */

static const struct gp_template *template_named(const struct gp_template *all, int n,
						const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(all[i].name, name))
			return &all[i];
	return NULL;
}

int gp_advise_version_name(const struct gp_template *all, int n, const char *name,
			   uint64_t mem_mib, unsigned compute_pct, char *buf, size_t size)
{
	for (int v = 2; v <= GP_ADVISE_VERSION_MAX; v++) {
		const struct gp_template *t;

		if ((size_t)snprintf(buf, size, "%s.v%d", name, v) >= size)
			return -ENOSPC;
		if (!(t = template_named(all, n, buf)))
			return 0;
		if (t->mem_mib == mem_mib && t->compute_pct == compute_pct)
			return -EEXIST;
	}
	return -ENOSPC;
}
