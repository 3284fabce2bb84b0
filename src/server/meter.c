/* meter.c — usage intervals, records and live numbers (meter.h).
 *
 * Each followed task keeps an open interval: since when, and the device
 * time used in it per device (µs, from the samplings). A sampling asks the
 * agent about every followed task's process group on each of its devices
 * at once, adds the used time to the open intervals, then closes them:
 * each becomes a record per device (cut at month boundaries) and a new
 * interval starts. Device averages over the utilization window are kept in
 * a ring of buckets, so the memory they need does not depend on the
 * window's length. After each sampling that answered, the live numbers
 * also go to the store's history (the console's charts over time). */
#include "server/meter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/month.h"

_Static_assert(GP_AGENT_DEVICES_MAX <= 32, "a device set is a uint32_t");

#define BUCKETS	    60	    /* of the utilization window */
#define UNSAVED_MAX 1000000 /* records kept while the store fails */
#define HOUR_MS	    3600000
#define DAY_MS	    86400000

/* A followed task: its public numbers and its open interval. */
struct followed {
	struct gp_meter_task pub;
	int64_t since_ms;			/* the open interval's start */
	uint64_t used_us[GP_AGENT_DEVICES_MAX]; /* in it, per device */
	uint64_t mem_peak_mib[GP_AGENT_DEVICES_MAX]; /* in it, per device, as sampled */
	int64_t ended_ms;			/* 0 while it runs */
	bool whole;				/* whole devices: the share is 100 % */
	unsigned next_pct;			/* the share from the next interval on */
	uint64_t mem_seen[GP_METER_GROW_MAX + 1]; /* the last samplings', oldest first */
	unsigned mem_seen_n;
};

/* A device's utilization integrated over time, per bucket of the window. */
struct window {
	int64_t bucket_ms;
	int64_t epoch[BUCKETS];		     /* which bucket_ms-long slot each holds */
	double busy[BUCKETS], time[BUCKETS]; /* pct x ms, ms */
	int64_t watched_since, last_ms;
};

struct gp_meter {
	struct gp_store *store;
	struct gp_agent *agent;
	struct gp_meter_options o;
	struct followed task[GP_AGENT_TASKS_MAX];
	int tasks;
	struct gp_meter_device device[GP_AGENT_DEVICES_MAX];
	struct window window[GP_AGENT_DEVICES_MAX];
	int64_t last_ms;
	int64_t series_ms, pruned_ms; /* the history's last sample, and prune */
	bool urgent;		/* a task ended or a share changed */
	struct gp_meter_records unsaved; /* made, not yet in the store */
};

int gp_meter_new(struct gp_store *store, struct gp_agent *agent,
		 const struct gp_meter_options *o, struct gp_meter **ret)
{
	struct gp_meter *m;
	int64_t bucket;

	if (!store || !agent || !o || !ret || !o->sample_ms || !o->util_window_s ||
	    o->grow_samples > GP_METER_GROW_MAX)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	*m = (struct gp_meter){.store = store, .agent = agent, .o = *o};
	bucket = (int64_t)o->util_window_s * 1000 / BUCKETS;
	for (int i = 0; i < GP_AGENT_DEVICES_MAX; i++)
		m->window[i].bucket_ms = bucket > 0 ? bucket : 1;
	*ret = m;
	return 0;
}

struct gp_meter *gp_meter_free(struct gp_meter *m)
{
	if (m)
		free(m->unsaved.r);
	free(m);
	return NULL;
}

/* The running task id. One that ended keeps its entry until the next
 * sampling, and may meanwhile start again (queued again after a
 * preemption): that is a new entry. */
static struct followed *followed_find(struct gp_meter *m, int64_t id)
{
	for (int i = 0; i < m->tasks; i++)
		if (m->task[i].pub.id == id && !m->task[i].ended_ms)
			return &m->task[i];
	return NULL;
}

/* ---- the loop's news ---------------------------------------------------- */

int gp_meter_start(struct gp_meter *m, const struct gp_task *t, const unsigned *dev,
		   unsigned n, pid_t pgid, int64_t now_ms)
{
	const struct gp_agent_node *node = gp_agent_node(m->agent);
	bool whole = t->whole || t->exclusive;
	struct followed *f;

	if (m->tasks == GP_AGENT_TASKS_MAX)
		return -ENOSPC;
	if (n == 0 || n > GP_AGENT_DEVICES_MAX)
		return -EINVAL;
	f = &m->task[m->tasks++];
	*f = (struct followed){.since_ms = now_ms, .whole = whole};
	f->pub = (struct gp_meter_task){.id = t->id,
					.tenant = t->tenant,
					.pgid = pgid,
					.devices = n,
					.compute_pct = whole ? 100 : t->compute_pct};
	for (unsigned i = 0; i < n; i++) {
		f->pub.device[i] = dev[i];
		f->pub.mem_mib[i] =
			whole ? node->device[dev[i]].mem_total_mib : t->mem_mib;
	}
	f->next_pct = f->pub.compute_pct;
	return 0;
}

void gp_meter_end(struct gp_meter *m, int64_t id, int64_t now_ms)
{
	struct followed *f = followed_find(m, id);

	if (f && !f->ended_ms) {
		f->ended_ms = now_ms > f->since_ms ? now_ms : f->since_ms;
		m->urgent = true;
	}
}

void gp_meter_share(struct gp_meter *m, int64_t id, unsigned compute_pct)
{
	struct followed *f = followed_find(m, id);

	if (!f || f->whole || f->next_pct == compute_pct || !compute_pct ||
	    compute_pct > 100)
		return;
	f->next_pct = compute_pct;
	m->urgent = true;
}

bool gp_meter_due(const struct gp_meter *m, int64_t now_ms)
{
	return m->urgent || now_ms - m->last_ms >= (int64_t)m->o.sample_ms;
}

/* ---- records ------------------------------------------------------------ */

static int records_push(struct gp_meter_records *rs, const struct gp_usage_record *rec)
{
	if (rs->n == rs->cap) {
		int cap = rs->cap ? 2 * rs->cap : 64;
		struct gp_usage_record *bigger =
			realloc(rs->r, (size_t)cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		rs->r = bigger;
		rs->cap = cap;
	}
	rs->r[rs->n++] = *rec;
	return 0;
}

/* rec over [from, to) with `used` ms, cut at the UTC month boundaries
 * (used pro rata), so that a month's bill is the records that start in it. */
static int records_cut(struct gp_meter_records *rs, struct gp_usage_record rec, int64_t from,
		       int64_t to, uint64_t used)
{
	while (from < to) {
		int64_t month_from, month_to, end;
		uint64_t part;
		int r;

		gp_month_bounds(from, &month_from, &month_to);
		end = to < month_to ? to : month_to;
		part = end == to ? used
				 : used * (uint64_t)(end - from) / (uint64_t)(to - from);
		rec.start_ms = from;
		rec.end_ms = end;
		rec.used_ms = part;
		if ((r = records_push(rs, &rec)) < 0)
			return r;
		used -= part;
		from = end;
	}
	return 0;
}

int gp_meter_records_save(struct gp_store *s, struct gp_meter_records *rs)
{
	int r = gp_store_usage_add(s, rs->r, rs->n);

	if (r == 0 || r == -EINVAL || r == -ENOENT || rs->n > UNSAVED_MAX)
		rs->n = 0;
	return r;
}

int gp_meter_interval_close(struct gp_meter_records *rs, const struct gp_meter_interval *iv,
			    int64_t from, int64_t to)
{
	struct gp_usage_record rec = { .task = iv->task, .tenant = iv->tenant,
				       .mem_mib = iv->mem_mib, .compute_pct = iv->compute_pct,
				       .mem_peak_mib = iv->mem_peak_mib };
	uint64_t used = (iv->used_us + 500) / 1000;

	if (to <= from)
		return 0;
	snprintf(rec.device_uuid, sizeof(rec.device_uuid), "%s", iv->device_uuid);
	snprintf(rec.device_model, sizeof(rec.device_model), "%s", iv->device_model);
	return records_cut(rs, rec, from, to,
			   used < (uint64_t)(to - from) ? used : (uint64_t)(to - from));
}

/* The records of f's open interval up to `to`; the interval restarts there. */
static int records_close(struct gp_meter *m, struct followed *f, int64_t to,
			 struct gp_meter_records *rs)
{
	const struct gp_agent_node *node = gp_agent_node(m->agent);
	int r = 0;

	for (unsigned i = 0; r == 0 && i < f->pub.devices; i++) {
		const struct gp_agent_device *d = &node->device[f->pub.device[i]];
		struct gp_meter_interval iv = { .task = f->pub.id, .tenant = f->pub.tenant,
						.device_uuid = d->uuid, .device_model = d->name,
						.mem_mib = f->pub.mem_mib[i],
						.mem_peak_mib = f->mem_peak_mib[i],
						.compute_pct = f->pub.compute_pct,
						.used_us = f->used_us[i] };

		r = gp_meter_interval_close(rs, &iv, f->since_ms, to);
	}
	memset(f->used_us, 0, sizeof(f->used_us));
	memset(f->mem_peak_mib, 0, sizeof(f->mem_peak_mib));
	f->since_ms = to > f->since_ms ? to : f->since_ms;
	f->pub.compute_pct = f->next_pct;
	return r;
}

/* ---- live numbers ------------------------------------------------------- */

static void window_add(struct window *w, int64_t now, unsigned util_pct)
{
	int64_t slot = now / w->bucket_ms, dt;
	int b = (int)(slot % BUCKETS);

	if (!w->watched_since)
		w->watched_since = w->last_ms = now;
	dt = now - w->last_ms;
	w->last_ms = now;
	if (w->epoch[b] != slot) {
		w->epoch[b] = slot;
		w->busy[b] = w->time[b] = 0;
	}
	w->busy[b] += (double)util_pct * (double)dt;
	w->time[b] += (double)dt;
}

/* The average over the buckets still inside the window. */
static double window_avg(const struct window *w, int64_t now)
{
	int64_t slot = now / w->bucket_ms;
	double busy = 0, time = 0;

	for (int b = 0; b < BUCKETS; b++)
		if (slot - w->epoch[b] < BUCKETS) {
			busy += w->busy[b];
			time += w->time[b];
		}
	return time > 0 ? busy / time : 0;
}

static void devices_update(struct gp_meter *m, const struct gp_usage_device *dev,
			   int64_t now)
{
	const struct gp_agent_node *node = gp_agent_node(m->agent);

	for (unsigned i = 0; i < node->devices; i++) {
		struct gp_meter_device *d = &m->device[i];
		struct window *w = &m->window[i];

		*d = (struct gp_meter_device){.ok = dev[i].ok,
					      .util_pct = dev[i].util_pct,
					      .mem_used_mib = dev[i].mem_used_mib,
					      .mem_total_mib = dev[i].mem_total_mib};
		if (!d->ok)
			continue;
		window_add(w, now, d->util_pct);
		d->util_avg_pct = window_avg(w, now);
		d->window_full =
			now - w->watched_since >= (int64_t)m->o.util_window_s * 1000;
	}
	for (int t = 0; t < m->tasks; t++)
		for (unsigned i = 0; !m->task[t].ended_ms && i < m->task[t].pub.devices;
		     i++) {
			struct gp_meter_device *d = &m->device[m->task[t].pub.device[i]];

			d->alloc_mem_mib += m->task[t].pub.mem_mib[i];
			d->alloc_pct += m->task[t].pub.compute_pct;
		}
}

/* Remembers the memory of this sampling and says whether it rose in each
 * of the last grow_samples. */
static bool memory_grows(struct followed *f, unsigned want)
{
	unsigned keep = want + 1;

	if (f->mem_seen_n == keep)
		memmove(f->mem_seen, f->mem_seen + 1,
			(keep - 1) * sizeof(f->mem_seen[0]));
	else
		f->mem_seen_n++;
	f->mem_seen[f->mem_seen_n - 1] = f->pub.mem_used_mib;
	if (!want || f->mem_seen_n < keep)
		return false;
	for (unsigned i = 1; i < keep; i++)
		if (f->mem_seen[i] <= f->mem_seen[i - 1])
			return false;
	return true;
}

/* Adds what f's groups g[0..devices-1] used since the last sampling, and
 * takes their memory now. */
static void task_update(struct gp_meter *m, struct followed *f,
			const struct gp_usage_group *g, int64_t now)
{
	int64_t to = f->ended_ms ? f->ended_ms : now;
	double used = 0, span_us = (double)(to - f->since_ms) * 1000.0;

	f->pub.mem_used_mib = 0;
	for (unsigned i = 0; i < f->pub.devices; i++) {
		f->used_us[i] += g[i].used_us;
		f->pub.mem_used_mib += g[i].mem_mib;
		if (g[i].mem_mib > f->mem_peak_mib[i])
			f->mem_peak_mib[i] = g[i].mem_mib;
		used += (double)f->used_us[i];
	}
	if (span_us > 0) {
		f->pub.effective =
			used / (span_us * f->pub.devices * f->pub.compute_pct / 100.0);
		f->pub.sampled = true;
	}
	f->pub.mem_growing = memory_grows(f, m->o.grow_samples);
}

/* ---- one sampling ------------------------------------------------------- */

static int groups_build(struct gp_meter *m, struct gp_usage_group **ret, size_t *ret_n)
{
	int64_t now = gp_unix_ms();
	size_t n = 0;

	for (int t = 0; t < m->tasks; t++)
		n += m->task[t].pub.devices;
	*ret = calloc(n + 1, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	n = 0;
	for (int t = 0; t < m->tasks; t++)
		for (unsigned i = 0; i < m->task[t].pub.devices; i++)
			(*ret)[n++] = (struct gp_usage_group){
				.task = m->task[t].pub.id,
				.device = m->task[t].pub.device[i],
				.weight = m->task[t].pub.compute_pct,
				.span_max_us = now > m->task[t].since_ms
						       ? (uint64_t)(now - m->task[t].since_ms) * 1000
						       : 1};
	*ret_n = n;
	return 0;
}

/* Closes every interval into records; forgets the tasks that ended. */
static int records_make(struct gp_meter *m, int64_t now, struct gp_meter_records *rs)
{
	int r = 0;

	for (int t = 0; r == 0 && t < m->tasks; t++) {
		struct followed *f = &m->task[t];

		r = records_close(m, f, f->ended_ms ? f->ended_ms : now, rs);
	}
	for (int t = 0; t < m->tasks;)
		if (m->task[t].ended_ms)
			m->task[t] = m->task[--m->tasks];
		else
			t++;
	return r;
}

int gp_meter_probe(struct gp_meter *m, struct gp_meter_probe *ret)
{
	*ret = (struct gp_meter_probe){ 0 };
	ret->sampled = groups_build(m, &ret->groups, &ret->n);
	if (ret->sampled == 0)
		ret->sampled = gp_agent_sample(m->agent, ret->dev, ret->groups, ret->n);
	return ret->sampled;
}

/* ---- the history ----------------------------------------------------- */

/* What each tenant's running tasks hold and use now, into t (at most
 * GP_AGENT_TASKS_MAX); how many tenants. */
static int series_tenants(const struct gp_meter *m, struct gp_series_tenant *t)
{
	int n = 0;

	for (int i = 0; i < m->tasks; i++) {
		const struct followed *f = &m->task[i];
		int k = 0;

		if (f->ended_ms)
			continue;
		while (k < n && t[k].tenant != f->pub.tenant)
			k++;
		if (k == n)
			t[n++] = (struct gp_series_tenant){.tenant = f->pub.tenant};
		t[k].mem_used_mib += f->pub.mem_used_mib;
		for (unsigned d = 0; d < f->pub.devices; d++) {
			t[k].mem_alloc_mib += f->pub.mem_mib[d];
			t[k].compute_alloc_pct += f->pub.compute_pct;
		}
	}
	return n;
}

/* One sample of the history at now (at most one per
 * GP_METER_SERIES_STEP_MS), from the live numbers just updated, and once
 * an hour the prune. The history is for charts: when the store refuses
 * it, the sample is lost, and the records are not held up for it. */
static void series_take(struct gp_meter *m, int64_t now)
{
	const struct gp_agent_node *node = gp_agent_node(m->agent);
	struct gp_series_device dev[GP_AGENT_DEVICES_MAX];
	struct gp_series_tenant *ten = calloc(GP_AGENT_TASKS_MAX, sizeof(*ten));
	struct gp_series_sample x = {.ts_ms = now, .device = dev, .tenant = ten};
	int64_t oldest = 0;
	int queued = 0;

	if (!ten || now - m->series_ms < GP_METER_SERIES_STEP_MS) {
		free(ten);
		return;
	}
	for (unsigned i = 0; i < node->devices; i++) {
		const struct gp_meter_device *d = &m->device[i];

		dev[x.devices++] = (struct gp_series_device){
			.sampled = d->ok, .mem_used_mib = d->mem_used_mib,
			.mem_alloc_mib = d->alloc_mem_mib, .mem_total_mib = d->mem_total_mib,
			.compute_alloc_pct = d->alloc_pct, .util_pct = d->util_pct};
		snprintf(dev[i].device, sizeof(dev[i].device), "%s", node->device[i].uuid);
		snprintf(dev[i].model, sizeof(dev[i].model), "%s", node->device[i].name);
	}
	x.tenants = series_tenants(m, ten);
	if (gp_store_queue_stats(m->store, &queued, &oldest) == 0 && queued > 0) {
		x.queue_length = (unsigned)queued;
		x.queue_oldest_wait_ms = oldest && now > oldest ? now - oldest : 0;
	}
	if (gp_store_series_add(m->store, &x) == 0)
		m->series_ms = now;
	free(ten);
	if (now - m->pruned_ms >= HOUR_MS &&
	    gp_store_series_prune(m->store, now - GP_METER_SERIES_KEEP_DAYS * DAY_MS,
				  now - DAY_MS) == 0)
		m->pruned_ms = now;
}

int gp_meter_take(struct gp_meter *m, struct gp_meter_probe *pr, int64_t now_ms)
{
	size_t at = 0;
	int r;

	m->last_ms = now_ms;
	m->urgent = false;
	if (pr->sampled == 0) {
		for (int t = 0; t < m->tasks; t++) {
			task_update(m, &m->task[t], pr->groups + at, now_ms);
			at += m->task[t].pub.devices;
		}
		devices_update(m, pr->dev, now_ms);
		series_take(m, now_ms);
	}
	free(pr->groups);
	pr->groups = NULL;
	/* Without a sample the intervals still close: held, nothing used. */
	r = records_make(m, now_ms, &m->unsaved);
	return r < 0 ? r : gp_meter_records_save(m->store, &m->unsaved);
}

int gp_meter_sample(struct gp_meter *m, int64_t now_ms)
{
	struct gp_meter_probe pr;

	gp_meter_probe(m, &pr);
	return gp_meter_take(m, &pr, now_ms);
}

/* ---- reading ------------------------------------------------------------ */

const struct gp_meter_device *gp_meter_device(const struct gp_meter *m, unsigned i)
{
	return i < gp_agent_node(m->agent)->devices ? &m->device[i] : NULL;
}

int gp_meter_tasks(const struct gp_meter *m)
{
	return m->tasks;
}

const struct gp_meter_task *gp_meter_task(const struct gp_meter *m, int i)
{
	return i >= 0 && i < m->tasks ? &m->task[i].pub : NULL;
}

const struct gp_meter_task *gp_meter_task_of(const struct gp_meter *m, int64_t id)
{
	for (int i = 0; m && i < gp_meter_tasks(m); i++)
		if (gp_meter_task(m, i)->id == id)
			return gp_meter_task(m, i);
	return NULL;
}

unsigned gp_meter_period_ms(const struct gp_meter *m)
{
	return m->o.sample_ms;
}

unsigned gp_meter_grow_samples(const struct gp_meter *m)
{
	return m->o.grow_samples;
}

int64_t gp_meter_last_ms(const struct gp_meter *m)
{
	return m->last_ms;
}

const struct gp_agent_node *gp_meter_node(const struct gp_meter *m)
{
	return gp_agent_node(m->agent);
}

/* What tenant's running tasks hold on the node's devices in the set
 * `devices` (bit i: device i). */
static void use_on(const struct gp_meter *m, int64_t tenant, uint32_t devices,
		   uint64_t *ret_mem_mib, uint64_t *ret_pct)
{
	uint64_t mem = 0, pct = 0;

	for (int t = 0; t < m->tasks; t++) {
		const struct gp_meter_task *task = &m->task[t].pub;

		if (task->tenant != tenant || m->task[t].ended_ms)
			continue;
		for (unsigned i = 0; i < task->devices; i++)
			if (devices >> task->device[i] & 1) {
				mem += task->mem_mib[i];
				pct += task->compute_pct;
			}
	}
	*ret_mem_mib = mem;
	*ret_pct = pct;
}

void gp_meter_tenant_use(const struct gp_meter *m, int64_t tenant, uint64_t *ret_mem_mib,
			 uint64_t *ret_pct)
{
	use_on(m, tenant, UINT32_MAX, ret_mem_mib, ret_pct);
}

void gp_meter_model_use(const struct gp_meter *m, const struct gp_model_quota *all, int n,
			int q, uint64_t *ret_mem_mib, uint64_t *ret_pct)
{
	const struct gp_agent_node *node = gp_agent_node(m->agent);
	uint32_t devices = 0;

	for (unsigned i = 0; i < node->devices; i++)
		if (gp_store_model_quota_find(all, n, all[q].tenant,
					      node->device[i].name) == q)
			devices |= 1u << i;
	use_on(m, all[q].tenant, devices, ret_mem_mib, ret_pct);
}
