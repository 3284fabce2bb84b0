/* kube-server.c — the Kubernetes mode of the server (see kube-server.h):
 * the extender's HTTP front, its informers and its quotas. */
#include "k8s/kube-server.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/clock.h"
#include "base/http.h"
#include "k8s/client.h"
#include "k8s/extender.h"
#include "k8s/kube-tasks.h"

#define BODY_MAX (64 * 1024 * 1024)     /* a Nodes form with thousands of nodes */
#define RETRY_TICK_MS 500               /* how often pods to try again are looked for */

struct gp_kube_server {
	struct gp_kube_config *config;
	struct gp_kube *api[GP_EXTENDER_API_MAX];   /* binds', one each at a time */
	struct gp_extender *extender;
	struct gp_kube_informer *nodes, *pods;
	struct gp_http *http;
	struct gp_pool *pool;
	pthread_mutex_t quota_lock;     /* the view below */
	struct gp_pool_view view;       /* the tenants, as of view_gen */
	uint64_t view_gen;
	bool viewed;
	struct gp_sched_model_quota model[GP_MODELS_MAX];
	struct gp_seal_key seal;        /* placements are sealed with it */
	struct gp_kube_tasks *tasks;    /* pods as tasks; NULL: no store */
	pthread_t retry_thread;         /* asks kube-scheduler to try pods again */
	bool retry_started;
	pthread_mutex_t retry_lock;     /* the wait on retry_wake */
	pthread_cond_t retry_wake;
	atomic_bool retry_stopping;
};

/* ---- quotas from the tenants ------------------------------------------------- */

/* The tenants and their quotas, copied again when the pool counted a
 * change of them. */
static int view_fresh(struct gp_kube_server *s)
{
	uint64_t gen = gp_pool_tenants_gen(s->pool);

	if (s->viewed && gen == s->view_gen)
		return 0;
	if (s->viewed)
		gp_pool_view_release(&s->view);
	s->viewed = gp_pool_view_init(s->pool, GP_POOL_RUNNING, 0, &s->view) == 0;
	s->view_gen = gen;
	return s->viewed ? 0 : -ENOMEM;
}

static void model_quotas(struct gp_kube_server *s, const struct gp_tenant *t,
			 struct gp_sched_tenant *ret)
{
	for (int i = 0; i < s->view.n_quotas && ret->model_quotas < GP_MODELS_MAX; i++) {
		const struct gp_model_quota *q = &s->view.quotas[i];
		struct gp_sched_model_quota *m = &s->model[ret->model_quotas];

		if (q->tenant != t->id)
			continue;
		*m = (struct gp_sched_model_quota){ .quota = gp_model_quota_quota(q) };
		snprintf(m->name, sizeof(m->name), "%s", q->model);
		ret->model_quotas++;
	}
	ret->model_quota = s->model;
}

/* The extender's quota callback: the tenant named as the namespace. It
 * runs under the extender's lock, one call at a time. */
static int quota_of(void *ctx, const char *ns, struct gp_sched_tenant *ret)
{
	struct gp_kube_server *s = ctx;
	int r = -ENOENT;

	pthread_mutex_lock(&s->quota_lock);
	if (view_fresh(s) == 0)
		for (int i = 0; i < s->view.n_tenants; i++) {
			const struct gp_tenant *t = &s->view.tenants[i];

			if (t->admin || t->removed || strcmp(t->name, ns) != 0)
				continue;
			*ret = (struct gp_sched_tenant){ .id = t->id, .quota = gp_tenant_quota(t),
							 .priority_max = t->priority_max };
			model_quotas(s, t, ret);
			r = 0;
			break;
		}
	pthread_mutex_unlock(&s->quota_lock);
	return r;
}

/* ---- the HTTP front ------------------------------------------------------------ */

typedef int verb_fn(struct gp_extender *e, const char *body, size_t len, char **ret);

static void verb(struct gp_kube_server *s, const struct gp_http_request *req,
		 struct gp_http_reply *ret, verb_fn *fn)
{
	char *out = NULL;

	fn(s->extender, req->body, req->body_len, &out);
	if (out)
		gp_http_bytes(ret, 200, out, strlen(out), "application/json");
	else
		gp_http_error(ret, 500, "out of memory");
}

static void filter(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	verb(ctx, req, ret, gp_extender_filter);
}

static void prioritize(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	verb(ctx, req, ret, gp_extender_prioritize);
}

static void bind(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	verb(ctx, req, ret, gp_extender_bind);
}

static void healthz(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_kube_server *s = ctx;
	bool synced = gp_kube_informer_synced(s->nodes) && gp_kube_informer_synced(s->pods);
	struct gp_extender_stats st;

	(void)req;
	gp_extender_stats(s->extender, &st);
	gp_http_json(ret, synced ? 200 : 503,
		     json_pack("{s:b, s:i, s:i, s:i, s:i, s:I, s:I, s:I}", "synced", synced, "nodes",
			       (int)st.nodes, "devices", (int)st.devices, "podsPlaced",
			       (int)st.pods_placed, "podsReserved", (int)st.pods_reserved,
			       "filters", (json_int_t)st.filters, "binds",
			       (json_int_t)st.binds, "bindFailures", (json_int_t)st.bind_failures));
}

char *gp_kube_server_metrics(struct gp_kube_server *s)
{
	bool synced = gp_kube_informer_synced(s->nodes) && gp_kube_informer_synced(s->pods);
	struct gp_extender_stats st;
	char *text = NULL;

	gp_extender_stats(s->extender, &st);
	if (asprintf(&text,
		     "# HELP gpupool_extender_synced 1 once the Nodes and Pods have been listed.\n"
		     "# TYPE gpupool_extender_synced gauge\ngpupool_extender_synced %d\n"
		     "# TYPE gpupool_extender_nodes gauge\ngpupool_extender_nodes %u\n"
		     "# TYPE gpupool_extender_devices gauge\ngpupool_extender_devices %u\n"
		     "# HELP gpupool_extender_pods_placed Pods holding a placement (bound, or held for "
		     "their bind).\n"
		     "# TYPE gpupool_extender_pods_placed gauge\ngpupool_extender_pods_placed %u\n"
		     "# TYPE gpupool_extender_pods_reserved gauge\ngpupool_extender_pods_reserved %u\n"
		     "# TYPE gpupool_extender_filters_total counter\n"
		     "gpupool_extender_filters_total %llu\n"
		     "# TYPE gpupool_extender_binds_total counter\ngpupool_extender_binds_total %llu\n"
		     "# TYPE gpupool_extender_bind_failures_total counter\n"
		     "gpupool_extender_bind_failures_total %llu\n"
		     "# HELP gpupool_extender_gangs_placed_total Pod groups placed, every member "
		     "at once.\n"
		     "# TYPE gpupool_extender_gangs_placed_total counter\n"
		     "gpupool_extender_gangs_placed_total %llu\n",
		     synced, st.nodes, st.devices, st.pods_placed, st.pods_reserved,
		     (unsigned long long)st.filters, (unsigned long long)st.binds,
		     (unsigned long long)st.bind_failures, (unsigned long long)st.gangs_placed) < 0)
		return NULL;
	return text;
}

static const struct gp_http_route routes[] = {
	{ "POST", "/extender/filter", filter },
	{ "POST", "/extender/prioritize", prioritize },
	{ "POST", "/extender/bind", bind },
	{ "GET", "/extender/healthz", healthz },
};

/* ---- the informers ------------------------------------------------------------------ */

/* The informers' callbacks go to the extender's, and their news of the
 * API server to the log, once per change. */
static void nodes_sync(void *ctx, json_t *items)
{
	gp_extender_node_ops.on_sync(((struct gp_kube_server *)ctx)->extender, items);
}

static void nodes_event(void *ctx, enum gp_kube_event_type type, json_t *obj)
{
	gp_extender_node_ops.on_event(((struct gp_kube_server *)ctx)->extender, type, obj);
}

static void pods_sync(void *ctx, json_t *items)
{
	gp_extender_pod_ops.on_sync(((struct gp_kube_server *)ctx)->extender, items);
}

static void pods_event(void *ctx, enum gp_kube_event_type type, json_t *obj)
{
	gp_extender_pod_ops.on_event(((struct gp_kube_server *)ctx)->extender, type, obj);
}

static void api_state(void *ctx, bool connected, const char *message)
{
	(void)ctx;
	fprintf(stderr, "gpupool server: %s%s\n",
		connected ? "watching the API server" : "lost the API server: ",
		connected ? "" : message ? message : "");
}

static int informers_start(struct gp_kube_server *s, char *err, size_t len)
{
	static const struct gp_kube_informer_ops node_ops = { nodes_sync, nodes_event, api_state };
	static const struct gp_kube_informer_ops pod_ops = { pods_sync, pods_event, api_state };
	int r = gp_kube_informer_start(s->config, "/api/v1/nodes", &node_ops, s, &s->nodes);

	if (r == 0)
		r = gp_kube_informer_start(s->config, "/api/v1/pods", &pod_ops, s, &s->pods);
	if (r < 0)
		snprintf(err, len, "cannot start watching the API server: %s", strerror(-r));
	return r;
}

/* ---- asking kube-scheduler to try again --------------------------------------- */

static bool synced(const struct gp_kube_server *s)
{
	return gp_kube_informer_synced(s->nodes) && gp_kube_informer_synced(s->pods);
}

static bool synced_of(void *ctx)
{
	return synced(ctx);
}

/* Every RETRY_TICK_MS: once the informers have listed, every pending pod
 * of our scheduler (they may have failed while we were not there), then
 * the pods the extender refused, when a placed pod has ended or gone
 * (gp_extender_retry). */
static void *retry_main(void *arg)
{
	struct gp_kube_server *s = arg;
	bool started = false;
	struct timespec until;

	pthread_mutex_lock(&s->retry_lock);
	while (!atomic_load(&s->retry_stopping)) {
		uint64_t at = gp_monotonic_ns() + RETRY_TICK_MS * 1000000ULL;

		until = gp_timespec_of_ns(at);
		pthread_cond_timedwait(&s->retry_wake, &s->retry_lock, &until);
		if (atomic_load(&s->retry_stopping) || (!started && !synced(s)))
			continue;
		pthread_mutex_unlock(&s->retry_lock);
		if (!started) {
			fprintf(stderr, "gpupool server: asked kube-scheduler to try %d pending pods "
				"again\n", gp_extender_retry(s->extender, true, &s->retry_stopping));
			started = true;
		} else {
			gp_extender_retry(s->extender, false, &s->retry_stopping);
		}
		pthread_mutex_lock(&s->retry_lock);
	}
	pthread_mutex_unlock(&s->retry_lock);
	return NULL;
}

static int retry_start(struct gp_kube_server *s, char *err, size_t len)
{
	int r = -pthread_create(&s->retry_thread, NULL, retry_main, s);

	if (r < 0)
		snprintf(err, len, "cannot start a thread: %s", strerror(-r));
	s->retry_started = r == 0;
	return r;
}

static void retry_stop(struct gp_kube_server *s)
{
	if (!s->retry_started)
		return;
	pthread_mutex_lock(&s->retry_lock);
	atomic_store(&s->retry_stopping, true);
	pthread_cond_signal(&s->retry_wake);
	pthread_mutex_unlock(&s->retry_lock);
	pthread_join(s->retry_thread, NULL);
	s->retry_started = false;
}

/* ---- life ------------------------------------------------------------------------ */

/* Bind's calls to the API server run without the HTTP lock: filters of
 * the next pods go on meanwhile, as kube-scheduler sends them. */
static void bind_io(void *ctx, bool start)
{
	struct gp_kube_server *s = ctx;

	if (start)
		gp_http_unlock(s->http);
	else
		gp_http_lock(s->http);
}

static int extender_make(struct gp_kube_server *s, const struct gp_kube_server_options *o,
			 char *err, size_t len)
{
	struct gp_extender_options eo = {
		.policy = o->policy, .scheduler_name = o->scheduler_name,
		.workload_trace = o->workload_trace, .tie_seed = o->tie_seed,
		.quota = o->pool ? quota_of : NULL, .quota_ctx = s, .api = s->api,
		.apis = GP_EXTENDER_API_MAX,
		.io = bind_io, .io_ctx = s, .seal = &s->seal,
	};

	return gp_extender_new(&eo, &s->extender, err, len);
}

static int tasks_start(struct gp_kube_server *s, const struct gp_kube_server_options *o)
{
	struct gp_kube_tasks_options to = { .extender = s->extender, .store = o->store,
					    .pool = o->pool, .http = o->api_http,
					    .sample_ms = o->sample_ms, .synced = synced_of,
					    .synced_ctx = s };

	return gp_kube_tasks_start(&to, &s->tasks);
}

int gp_kube_server_start(const struct gp_kube_server_options *o, struct gp_kube_server **ret,
			 char *err, size_t err_len)
{
	struct gp_kube_options ko = { o->api_url, o->token_file, o->kubeconfig };
	struct gp_http_options ho = { .socket_path = o->socket_path,
				      .tcp_port = o->port ? o->port : GP_KUBE_EXTENDER_PORT,
				      .body_max = BODY_MAX, .concurrent = true };
	struct gp_kube_server *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->quota_lock, NULL);
	pthread_mutex_init(&s->retry_lock, NULL);
	gp_monotonic_cond_init(&s->retry_wake);
	s->pool = o->pool;
	r = gp_seal_key_load(o->placement_key ? o->placement_key : GP_SEAL_KEY_PATH_DEFAULT,
			     &s->seal, err, err_len);
	if (r == 0)
		r = gp_kube_config_load(&ko, &s->config, err, err_len);
	for (int i = 0; r == 0 && i < GP_EXTENDER_API_MAX; i++)
		if ((r = gp_kube_new(s->config, &s->api[i])) < 0)
			snprintf(err, err_len, "cannot make an API client: %s", strerror(-r));
	if (r == 0)
		r = extender_make(s, o, err, err_len);
	if (r == 0 && (r = gp_http_listen(&ho, &s->http)) < 0)
		snprintf(err, err_len, "cannot listen on 127.0.0.1:%u and %s: %s", ho.tcp_port,
			 o->socket_path, strerror(-r));
	if (r == 0)
		r = informers_start(s, err, err_len);
	if (r == 0)
		r = retry_start(s, err, err_len);
	if (r == 0 && o->store && (r = tasks_start(s, o)) < 0)
		snprintf(err, err_len, "cannot start following the pods as tasks: %s", strerror(-r));
	if (r == 0 && (r = gp_http_serve(s->http, routes, sizeof(routes) / sizeof(routes[0]), s)) < 0)
		snprintf(err, err_len, "cannot serve the extender: %s", strerror(-r));
	if (r < 0) {
		gp_kube_server_stop(s);
		return r;
	}
	*ret = s;
	return 0;
}

int gp_kube_server_cancel(void *ctx, const struct gp_task *t, const char *who)
{
	struct gp_kube_server *s = ctx;

	return s->tasks ? gp_kube_tasks_cancel(s->tasks, t->pod_uid, who) : -ENOTSUP;
}

int gp_kube_server_share(void *ctx, const struct gp_task *t, unsigned compute_pct,
			 unsigned priority, const char *who)
{
	struct gp_kube_server *s = ctx;

	return s->tasks ? gp_kube_tasks_share(s->tasks, t->pod_uid, compute_pct, priority, who)
			: -ENOTSUP;
}

struct gp_services *gp_kube_server_services(void *ctx)
{
	return gp_kube_tasks_services(((struct gp_kube_server *)ctx)->tasks);
}

int gp_kube_server_nodes(void *ctx, struct gp_api_node **ret)
{
	struct gp_kube_server *s = ctx;

	return gp_extender_nodes(s->extender, ret);
}

struct gp_kube_server *gp_kube_server_stop(struct gp_kube_server *s)
{
	if (!s)
		return NULL;
	retry_stop(s);
	s->tasks = gp_kube_tasks_stop(s->tasks);
	s->http = gp_http_stop(s->http);
	s->nodes = gp_kube_informer_stop(s->nodes);
	s->pods = gp_kube_informer_stop(s->pods);
	s->extender = gp_extender_free(s->extender);
	for (int i = 0; i < GP_EXTENDER_API_MAX; i++)
		s->api[i] = gp_kube_free(s->api[i]);
	s->config = gp_kube_config_free(s->config);
	if (s->viewed)
		gp_pool_view_release(&s->view);
	pthread_mutex_destroy(&s->quota_lock);
	gp_seal_key_wipe(&s->seal);
	pthread_mutex_destroy(&s->retry_lock);
	pthread_cond_destroy(&s->retry_wake);
	free(s);
	return NULL;
}
