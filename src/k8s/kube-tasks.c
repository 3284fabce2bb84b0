/* kube-tasks.c — pods as the server's tasks, metered (kube-tasks.h).
 *
 * Each look: the extender's bound pods and those that ended; the node
 * programs' slice figures; then, under the store's lock, the open
 * interval of every followed pod closed into usage records (with the
 * share it had), and the task rows changed: new pods begun, shares and
 * priorities followed, ended pods ended. */
#include "k8s/kube-tasks.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/clock.h"
#include "k8s/kube-tasks-impl.h"
#include "k8s/slice-figures.h"

#define FETCH_MAX (16u << 20)   /* a node's /metrics */
#define FETCH_TIMEOUT_MS 2000L

/* ---- a node's figures ------------------------------------------------------------ */

/* GET http://ADDRESS/metrics: its text (malloc'd), or NULL. */
static char *fetch(const char *address)
{
	struct gp_bytes got = { .max = FETCH_MAX };
	char url[GP_KUBE_ADDRESS_MAX + 32];
	CURL *c = curl_easy_init();
	long status = 0;

	if (!c)
		return NULL;
	snprintf(url, sizeof(url), "http://%s/metrics", address);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, FETCH_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, gp_bytes_curl_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &got);
	if (curl_easy_perform(c) != CURLE_OK ||
	    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK || status != 200)
		gp_bytes_free(&got);
	curl_easy_cleanup(c);
	return got.data;
}

/* Adds address's figures to all (*n of them). A node that does not
 * answer adds none: its pods' time is counted when it answers again. */
/* What one look read of the nodes: every pod's figures, and each node's
 * count of violations by processes of no pod. */
struct node_count {
	char node[GP_KUBE_NAME_MAX], address[GP_KUBE_ADDRESS_MAX];
	uint64_t no_pod;
};
struct read_figures {
	struct gp_slice_figure *fig;
	size_t n_fig;
	struct node_count *node;
	size_t n_node, cap_node;
};

/* Node `node` (its name; "" when only its address is known) at address. */
static void figures_add(struct read_figures *rf, const char *node, const char *address)
{
	struct gp_slice_figure *got = NULL, *more;
	struct node_count c = {0};
	char *text = fetch(address);
	size_t k = 0;

	if (text && gp_node_violations_read(text, &c.no_pod) &&
	    (rf->n_node < rf->cap_node)) {
		snprintf(c.node, sizeof(c.node), "%s", node[0] ? node : address);
		snprintf(c.address, sizeof(c.address), "%s", address);
		rf->node[rf->n_node++] = c;
	}
	if (!text || gp_slice_figures_read(text, &got, &k) < 0 || !k) {
		free(text);
		free(got);
		return;
	}
	free(text);
	more = realloc(rf->fig, (rf->n_fig + k) * sizeof(*more));
	if (more) {
		memcpy(more + rf->n_fig, got, k * sizeof(*got));
		rf->fig = more;
		rf->n_fig += k;
	}
	free(got);
}

/* The figures of every node with devices, and of any other that runs a
 * followed pod (each read once). */
static void figures_read(struct gp_kube_tasks *t, struct read_figures *rf)
{
	struct gp_extender_node_address *nodes = NULL;
	struct gp_strmap asked = { 0 };
	size_t n_nodes = 0;

	*rf = (struct read_figures){0};
	if (gp_extender_node_addresses(t->o.extender, &nodes, &n_nodes) < 0)
		n_nodes = 0;
	rf->cap_node = n_nodes + t->followed.count;
	rf->node = calloc(rf->cap_node + 1, sizeof(*rf->node));
	for (size_t i = 0; i < n_nodes; i++)
		if (!gp_strmap_get(&asked, nodes[i].metrics) &&
		    gp_strmap_put(&asked, nodes[i].metrics, &nodes[i]) == 0)
			figures_add(rf, nodes[i].node, nodes[i].metrics);
	for (size_t i = 0; i < t->followed.cap; i++) {
		const struct followed *f = t->followed.slot[i].value;

		if (!t->followed.slot[i].key || !f->metrics[0] || gp_strmap_get(&asked, f->metrics) ||
		    gp_strmap_put(&asked, f->metrics, (void *)f) < 0)
			continue;
		figures_add(rf, "", f->metrics);
	}
	gp_strmap_release(&asked);
	free(nodes);
	if (!rf->node)
		rf->cap_node = 0;
}

/* Violations by processes of no pod newly counted by a node (a count that
 * went down was restarted; a node read the first time is learnt without
 * telling: it told them itself, in Events on its Node): a node.violation
 * alert and audit row, as on one machine. Under the store's lock. */
static void node_violations_take(struct gp_kube_tasks *t, const struct read_figures *rf)
{
	for (size_t i = 0; i < rf->n_node; i++) {
		const struct node_count *c = &rf->node[i];
		uint64_t *seen = gp_strmap_get(&t->nodes_seen, c->address), added;
		char text[GP_KUBE_NAME_MAX + 160], object[GP_AUDIT_OBJECT_MAX];

		if (!seen) {
			if ((seen = malloc(sizeof(*seen))) &&
			    gp_strmap_put(&t->nodes_seen, c->address, seen) < 0) {
				free(seen);
				continue;
			}
			if (seen)
				*seen = c->no_pod;
			continue;
		}
		added = c->no_pod >= *seen ? c->no_pod - *seen : c->no_pod;
		*seen = c->no_pod;
		if (!added)
			continue;
		snprintf(text, sizeof(text), "node %.200s: %" PRIu64 " device process(es) of no pod "
			 "(its verifier's; kubectl describe node says which)", c->node, added);
		snprintf(object, sizeof(object), "node %.*s", (int)sizeof(object) - 6, c->node);
		if (gp_alerts_violation(t->alerts, NULL, text) < 0 ||
		    gp_store_audit(t->o.store, "server", "node.violation", object, text) < 0)
			fprintf(stderr, "gpupool server: cannot record a violation on node %s: %s\n",
				c->node, gp_store_error(t->o.store));
	}
}

/* Violations on f's device d newly counted by its node (a count that
 * went down was restarted): an alert and an audit row each look that
 * finds some. Under the store's lock. */
static void violations_take(struct gp_kube_tasks *t, struct followed *f, unsigned d,
			    const struct gp_slice_figure *s)
{
	char text[GP_REASON_MAX], object[GP_AUDIT_OBJECT_MAX];
	uint64_t fresh = s->violations >= f->violations[d] ? s->violations - f->violations[d]
							    : s->violations;

	if (!f->violations_known[d] && f->violations_quiet)
		fresh = 0;
	f->violations[d] = s->violations;
	f->violations_known[d] = true;
	if (!fresh)
		return;
	snprintf(text, sizeof(text), "%" PRIu64 " process(es) of pod %.32s/%.48s broke its slice "
		 "on %.44s (node verifier; kubectl describe pod)", fresh, s->ns, s->pod, f->uuid[d]);
	snprintf(object, sizeof(object), "task %" PRId64, f->row.id);
	if (gp_alerts_violation(t->alerts, &f->row, text) < 0 ||
	    gp_store_audit(t->o.store, "server", "task.violation", object, text) < 0)
		fprintf(stderr, "gpupool server: cannot record a violation of task %" PRId64
			": %s\n", f->row.id, gp_store_error(t->o.store));
}

/* f's counters from the figures: the growth of each since the last look,
 * and violations told. Under the store's lock. */
static void counters_take(struct gp_kube_tasks *t, struct followed *f,
			  const struct gp_slice_figure *all, size_t n)
{
	for (unsigned d = 0; d < f->devices; d++)
		for (size_t i = 0; i < n; i++) {
			const struct gp_slice_figure *s = &all[i];
			uint64_t grown;

			if (strcmp(s->uid, f->row.pod_uid) || strcmp(s->uuid, f->uuid[d]))
				continue;
			if (f->counted[d])
				grown = s->used_us >= f->counter[d] ? s->used_us - f->counter[d]
								    : s->used_us;
			else
				grown = s->used_us;
			f->used_us[d] += grown;
			f->counter[d] = s->used_us;
			f->counted[d] = true;
			f->read = true;
			if (s->mem_used_bytes >> 20 > f->mem_peak_mib[d])
				f->mem_peak_mib[d] = s->mem_used_bytes >> 20;
			violations_take(t, f, d, s);
		}
}

/* ---- the rows ------------------------------------------------------------------------ */

/* The tenant of namespace ns: the tenant of that name, else the admin. */
static int64_t tenant_of(struct gp_kube_tasks *t, const char *ns)
{
	struct gp_tenant tenant, *all = NULL;
	int n = 0;

	if (gp_store_tenant_by_name(t->o.store, ns, &tenant) == 0 && !tenant.removed &&
	    !tenant.admin)
		return tenant.id;
	if (!t->admin && gp_store_tenant_list(t->o.store, &all, &n) == 0)
		for (int i = 0; i < n; i++)
			if (all[i].admin)
				t->admin = all[i].id;
	free(all);
	return t->admin;
}

/* "node:GPU-…,GPU-…", as many devices as fit; a MIG partition's card
 * with "@" its start, as the server's placements are ("GPU-…@4"). */
static void placement_text(const struct gp_kube_placement *p, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "%s:", p->node);

	for (unsigned i = 0; used < len && i < p->devices; i++) {
		char dev[GP_KUBE_UUID_MAX + 4];
		size_t need;

		snprintf(dev, sizeof(dev), "%s", p->device[i]);
		if (p->part_start[i])
			snprintf(dev + strlen(dev), sizeof(dev) - strlen(dev), "@%u",
				 p->part_start[i] - 1u);
		need = strlen(dev) + (i ? 1 : 0);
		if (used + need >= len)
			break;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "", dev);
	}
}

/* What the row says of the pod's slice and devices, from its placement. */
static void row_from_pod(struct gp_task *row, const struct gp_extender_pod *pod)
{
	const struct gp_kube_placement *pl = &pod->p.placement;

	row->mem_mib = pl->whole ? pod->device_mib[0] : pl->memory_mib;
	row->compute_pct = pl->whole ? 100 : pl->compute;
	row->devices = pl->devices;
	row->whole = row->exclusive = pl->whole;
	row->hard = pl->isolation == GP_KUBE_HARD;
	row->priority = pl->priority;
	placement_text(pl, row->placement, sizeof(row->placement));
}

/* f's devices as the pod's placement has them now. */
static void devices_from_pod(struct followed *f, const struct gp_extender_pod *pod)
{
	const struct gp_kube_placement *pl = &pod->p.placement;

	f->devices = pl->devices;
	for (unsigned d = 0; d < pl->devices; d++) {
		snprintf(f->uuid[d], sizeof(f->uuid[d]), "%.*s", (int)sizeof(f->uuid[d]) - 1,
			 pl->device[d]);
		snprintf(f->model[d], sizeof(f->model[d]), "%.*s", (int)sizeof(f->model[d]) - 1,
			 pod->model[d]);
		f->mem_mib[d] = pl->whole ? pod->device_mib[d] : pl->memory_mib;
	}
	snprintf(f->metrics, sizeof(f->metrics), "%s", pod->metrics);
}

static int row_write(struct gp_kube_tasks *t, struct gp_task *row)
{
	int r = gp_store_task_update(t->o.store, row);

	if (r == 0)
		gp_pool_task_put(t->o.pool, row);
	else
		fprintf(stderr, "gpupool server: cannot record task %lld (pod %s) as %s: %s\n",
			(long long)row->id, row->name,
			row->state == GP_TASK_RUNNING ? "running" : "ended",
			gp_store_error(t->o.store));
	return r;
}

/* The service whose Deployment the pod is a replica of (in the namespace
 * of its tenant); 0: none. */
static int64_t service_of(struct gp_kube_tasks *t, const struct gp_task *row,
			  const struct gp_extender_pod *pod)
{
	return pod->p.deployment[0]
		       ? gp_services_of_deployment(t->services, row->tenant, pod->p.deployment)
		       : 0;
}

/* A pod seen bound for the first time: its task begins, RUNNING since it
 * was bound. */
static int task_begin(struct gp_kube_tasks *t, const struct gp_extender_pod *pod)
{
	struct followed *f = calloc(1, sizeof(*f));
	struct gp_task *row = f ? &f->row : NULL;
	char full[2 * GP_KUBE_NAME_MAX];
	int64_t bound_ms = pod->p.placement.bound_at / 1000000;
	int r;

	if (!f)
		return -ENOMEM;
	row->tenant = tenant_of(t, pod->p.ns);
	snprintf(full, sizeof(full), "%s/%s", pod->p.ns, pod->p.name);
	snprintf(row->name, sizeof(row->name), "%.*s", (int)sizeof(row->name) - 1, full);
	snprintf(row->kind, sizeof(row->kind), "pod");
	snprintf(row->model, sizeof(row->model), "%.*s", (int)sizeof(row->model) - 1,
		 pod->p.models);
	snprintf(row->pod_uid, sizeof(row->pod_uid), "%s", pod->p.uid);
	row_from_pod(row, pod);
	row->service = service_of(t, row, pod);
	if ((r = gp_store_task_add(t->o.store, row)) < 0 ||
	    (r = gp_pool_task_put(t->o.pool, row)) < 0) {
		free(f);
		return r;
	}
	row->state = GP_TASK_RUNNING;
	row->started = bound_ms > 0 && bound_ms <= gp_unix_ms() ? bound_ms : gp_unix_ms();
	f->since_ms = row->started;
	devices_from_pod(f, pod);
	if ((r = row_write(t, row)) < 0 || (r = gp_strmap_put(&t->followed, pod->p.uid, f)) < 0) {
		free(f);
		return r;
	}
	return 0;
}

/* The share or priority of f's pod changed live (or, taken up after a
 * restart, its devices are learnt): the row follows. */
static void task_follow(struct gp_kube_tasks *t, struct followed *f)
{
	struct gp_task was = f->row;

	int64_t service = service_of(t, &f->row, f->pod);

	devices_from_pod(f, f->pod);
	row_from_pod(&f->row, f->pod);
	f->row.service = service ? service : f->row.service;
	if (was.compute_pct != f->row.compute_pct || was.priority != f->row.priority ||
	    was.service != f->row.service || strcmp(was.placement, f->row.placement) != 0)
		row_write(t, &f->row);
}

/* f's pod has ended at end_ms: its row ends, as its pod did. */
static void task_end(struct gp_kube_tasks *t, struct followed *f, int64_t end_ms)
{
	const struct gp_extender_ended *x = f->ended;
	char object[GP_AUDIT_OBJECT_MAX];

	f->row.ended = end_ms;
	f->row.state = !x ? GP_TASK_CANCELLED
		       : x->reclaimed_for[0] ? GP_TASK_PREEMPTED
		       : x->failed ? GP_TASK_FAILED
		       : x->deleted ? GP_TASK_CANCELLED
				    : GP_TASK_SUCCEEDED;
	f->row.exit_code = f->row.state == GP_TASK_FAILED ? 1 : 0;
	if (x && x->reclaimed_for[0])
		snprintf(f->row.reason, sizeof(f->row.reason), "its pod was evicted for pod %s, "
			 "whose namespace needed its guarantee back (reclaim)", x->reclaimed_for);
	else
		snprintf(f->row.reason, sizeof(f->row.reason), "%s",
			 !x ? "its pod was gone when the server looked (ended while it was away, "
			      "or between two looks)"
			 : x->failed ? "its pod failed (phase Failed)"
			 : x->deleted ? "its pod was deleted or evicted"
				      : "its pod succeeded");
	if (row_write(t, &f->row) < 0 || f->row.state != GP_TASK_PREEMPTED)
		return;
	snprintf(object, sizeof(object), "task %" PRId64, f->row.id);
	if (gp_store_audit(t->o.store, "server", "task.preempt", object, f->row.reason) < 0)
		fprintf(stderr, "gpupool server: cannot audit the preemption of task %" PRId64 ": %s\n",
			f->row.id, gp_store_error(t->o.store));
}

/* What f used of the compute it held from since_ms to `to`, when its
 * figures were read this look. */
static void effective_take(struct followed *f, int64_t to)
{
	uint64_t used = 0;
	double held_us = (double)f->devices * f->row.compute_pct / 100.0 *
			 (double)(to - f->since_ms) * 1000.0;

	for (unsigned d = 0; d < f->devices; d++)
		used += f->used_us[d];
	f->sampled = f->read && held_us > 0;
	if (f->sampled)
		f->effective = (double)used / held_us;
	f->read = false;
}

/* The interval of f since its last record, closed at `to`. */
static int interval_close(struct gp_kube_tasks *t, struct followed *f, int64_t to)
{
	int r = 0;

	effective_take(f, to);
	for (unsigned d = 0; r == 0 && d < f->devices; d++) {
		struct gp_meter_interval iv = { .task = f->row.id, .tenant = f->row.tenant,
						.device_uuid = f->uuid[d], .device_model = f->model[d],
						.mem_mib = f->mem_mib[d],
						.mem_peak_mib = f->mem_peak_mib[d],
						.compute_pct = f->row.compute_pct,
						.used_us = f->used_us[d] };

		r = gp_meter_interval_close(&t->unsaved, &iv, f->since_ms, to);
	}
	memset(f->used_us, 0, sizeof(f->used_us));
	memset(f->mem_peak_mib, 0, sizeof(f->mem_peak_mib));
	if (to > f->since_ms)
		f->since_ms = to;
	return r;
}

/* The RUNNING tasks of pods in the store (a restart): followed again once
 * their pods are seen (resume). Under the store's lock. */
static void take_up(struct gp_kube_tasks *t, int64_t now)
{
	struct gp_task *all = NULL;
	int n = 0;

	if (gp_store_task_list(t->o.store, -1, GP_TASK_RUNNING, &all, &n) < 0)
		return;
	for (int i = 0; i < n; i++) {
		struct followed *f;

		if (!all[i].pod_uid[0] || !(f = calloc(1, sizeof(*f))))
			continue;
		f->row = all[i];
		f->since_ms = now;      /* until its pod's devices are known (resume) */
		f->taken_up = true;
		if (gp_strmap_put(&t->followed, f->row.pod_uid, f) < 0)
			free(f);
	}
	free(all);
	t->taken_up = true;
}

/* A task taken up whose pod runs: its devices from the pod, and for each,
 * its interval from the end of its last record and its counter from what
 * its records add up to (what the node counted since, while the server
 * was away, is counted once: none of it twice). Under the store's lock. */
static void resume(struct gp_kube_tasks *t, struct followed *f)
{
	int64_t used_ms, end_ms, since = 0;

	devices_from_pod(f, f->pod);
	for (unsigned d = 0; d < f->devices; d++)
		if (gp_store_usage_of_task(t->o.store, f->row.id, f->uuid[d], &used_ms, &end_ms) == 0) {
			f->counter[d] = (uint64_t)used_ms * 1000;
			f->counted[d] = true;
			since = end_ms > since ? end_ms : since;
		}
	f->since_ms = since ? since : f->row.started ? f->row.started : f->since_ms;
	f->taken_up = false;
	f->violations_quiet = true;     /* told before the restart */
}

/* ---- one look ------------------------------------------------------------------------ */

/* Marks each followed pod with what the extender says of it now. */
static void match(struct gp_kube_tasks *t, const struct gp_extender_pod *pods, size_t n,
		  const struct gp_extender_ended *ended, size_t n_ended)
{
	for (size_t i = 0; i < t->followed.cap; i++) {
		struct followed *f = t->followed.slot[i].value;

		if (t->followed.slot[i].key)
			f->pod = NULL, f->ended = NULL;
	}
	for (size_t i = 0; i < n; i++) {
		struct followed *f = gp_strmap_get(&t->followed, pods[i].p.uid);

		if (f)
			f->pod = &pods[i];
	}
	for (size_t i = 0; i < n_ended; i++) {
		struct followed *f = gp_strmap_get(&t->followed, ended[i].uid);

		if (f && !f->pod)
			f->ended = &ended[i];
	}
}

/* Under the store's lock: the intervals closed, then the rows changed;
 * the pods that ended are forgotten. */
static void rows_update(struct gp_kube_tasks *t, const struct gp_extender_pod *pods, size_t n,
			const struct gp_slice_figure *figs, size_t n_figs, int64_t now)
{
	struct followed **gone = calloc(t->followed.count + 1, sizeof(*gone));
	size_t n_gone = 0;

	for (size_t i = 0; gone && i < t->followed.cap; i++) {
		struct followed *f = t->followed.slot[i].value;
		int64_t end;

		if (!t->followed.slot[i].key)
			continue;
		if (f->taken_up && f->pod)
			resume(t, f);
		counters_take(t, f, figs, n_figs);
		end = !f->pod && f->ended && f->ended->at_ms < now ? f->ended->at_ms : now;
		interval_close(t, f, end);
		if (f->pod) {
			task_follow(t, f);
		} else {
			task_end(t, f, end);
			gone[n_gone++] = f;
		}
	}
	for (size_t i = 0; i < n_gone; i++)
		free(gp_strmap_remove(&t->followed, gone[i]->row.pod_uid));
	free(gone);
	for (size_t i = 0; i < n; i++)
		if (!gp_strmap_get(&t->followed, pods[i].p.uid) && task_begin(t, &pods[i]) < 0)
			fprintf(stderr, "gpupool server: cannot record pod %s/%s as a task: %s\n",
				pods[i].p.ns, pods[i].p.name, gp_store_error(t->o.store));
	if (t->unsaved.n && gp_meter_records_save(t->o.store, &t->unsaved) < 0)
		fprintf(stderr, "gpupool server: the pods' usage is not recorded yet: %s\n",
			gp_store_error(t->o.store));
}

static void look(struct gp_kube_tasks *t)
{
	struct gp_extender_pod *pods = NULL;
	struct gp_extender_ended *ended = NULL;
	struct read_figures rf;
	size_t n = 0, n_ended = 0;

	if (!t->o.synced(t->o.synced_ctx) ||
	    gp_extender_pods(t->o.extender, &pods, &n, &ended, &n_ended) < 0)
		return;
	if (!t->taken_up) {
		gp_http_lock(t->o.http);
		take_up(t, gp_unix_ms());
		gp_http_unlock(t->o.http);
	}
	match(t, pods, n, ended, n_ended);
	for (size_t i = 0; i < n; i++) {     /* the nodes of pods taken up are read too */
		struct followed *f = gp_strmap_get(&t->followed, pods[i].p.uid);

		if (f && f->taken_up)
			snprintf(f->metrics, sizeof(f->metrics), "%s", pods[i].metrics);
	}
	gp_kube_asks_send(t);
	figures_read(t, &rf);
	gp_http_lock(t->o.http);
	rows_update(t, pods, n, rf.fig, rf.n_fig, gp_unix_ms());
	node_violations_take(t, &rf);
	gp_services_tick(t->services, gp_unix_ms());
	gp_http_unlock(t->o.http);
	gp_kube_asks_send(t);   /* what the services asked */
	free(rf.fig);
	free(rf.node);
	free(pods);
	free(ended);
}

/* ---- the thread ---------------------------------------------------------------------- */

static void *tasks_main(void *arg)
{
	struct gp_kube_tasks *t = arg;

	pthread_mutex_lock(&t->lock);
	while (!t->stopping) {
		struct timespec until =
			gp_timespec_of_ns(gp_monotonic_ns() + (uint64_t)t->o.sample_ms * 1000000ULL);

		if (!t->asks)
			pthread_cond_timedwait(&t->wake, &t->lock, &until);
		pthread_mutex_unlock(&t->lock);
		look(t);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int gp_kube_tasks_start(const struct gp_kube_tasks_options *o, struct gp_kube_tasks **ret)
{
	struct gp_kube_tasks *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->o = *o;
	if ((r = gp_alerts_new(o->store, &t->alerts)) < 0 || (r = gp_kube_services_new(t)) < 0) {
		gp_alerts_free(t->alerts);
		free(t);
		return r;
	}
	pthread_mutex_init(&t->lock, NULL);
	gp_monotonic_cond_init(&t->wake);
	if ((r = -pthread_create(&t->thread, NULL, tasks_main, t)) < 0) {
		pthread_mutex_destroy(&t->lock);
		pthread_cond_destroy(&t->wake);
		gp_alerts_free(t->alerts);
		gp_services_free(t->services);
		free(t);
		return r;
	}
	*ret = t;
	return 0;
}

struct gp_kube_tasks *gp_kube_tasks_stop(struct gp_kube_tasks *t)
{
	if (!t)
		return NULL;
	pthread_mutex_lock(&t->lock);
	t->stopping = true;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	look(t);                        /* the usage up to now */
	for (size_t i = 0; i < t->followed.cap; i++)
		free(t->followed.slot[i].value);
	gp_strmap_release(&t->followed);
	for (size_t i = 0; i < t->nodes_seen.cap; i++)
		free(t->nodes_seen.slot[i].value);
	gp_strmap_release(&t->nodes_seen);
	free(t->unsaved.r);
	gp_alerts_free(t->alerts);
	gp_services_free(t->services);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->wake);
	free(t);
	return NULL;
}
