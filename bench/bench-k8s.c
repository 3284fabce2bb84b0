/* bench-k8s.c — the client side of bench/bench-k8s.sh (make bench): the
 * scheduler extender of `gpupool server --kubernetes` driven over HTTP as
 * kube-scheduler drives it (filter, the one node it answers, bind; or
 * prioritize and the best score, should filter answer several),
 * against the API server double (tests/k8s/apiserver-double.js), beside
 * `gpupool sim`'s own replay of the same pods (the baseline). Each mode
 * prints one JSON object on one line; the script merges them.
 *
 *   bench-k8s tie-seed --nodes CSV --pods CSV --seed N
 *       the tie seed the replay of that seed uses (for the server's
 *       --tie-seed, so that both break ties alike)
 *   bench-k8s replay --api URL --extender URL --nodes CSV --pods CSV --seed N
 *       the openb protocol (src/sim/replay.h) through the extender: every
 *       trace node a Node (devices with split 1000, so that a unit is a
 *       trace's thousandth), every pod a Pod, in the replay's order;
 *       extender_alloc_pct_at_100 beside sim_alloc_pct_at_100
 *   bench-k8s rate --api URL --extender URL --nodes N --pods N
 *       N nodes of 8 devices, then N pods of a few shapes: decisions
 *       (filter + bind of one pod) per second, and empty
 *       round trips per second on the same connection (the baseline) */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/workload.h"
#include "sim/replay.h"
#include "sim/trace.h"

#define MIB_PER_NODE_DEVICE 0   /* the trace has no device memory */
#define TRACE_SPLIT 1000

struct options {
	const char *mode, *api, *extender, *nodes_csv, *pods_csv;
	uint64_t seed;
	long nodes, pods;
};

/* ---- HTTP ------------------------------------------------------------------ */

struct http {
	CURL *easy;
	struct curl_slist *headers;
	char *buf;
	size_t len, cap;
};

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
	struct http *h = ctx;
	size_t add = size * n;

	if (h->len + add + 1 > h->cap) {
		size_t cap = (h->len + add + 1) * 2;
		char *grown = realloc(h->buf, cap);

		if (!grown)
			return 0;
		h->buf = grown;
		h->cap = cap;
	}
	memcpy(h->buf + h->len, p, add);
	h->len += add;
	h->buf[h->len] = 0;
	return add;
}

static void http_init(struct http *h)
{
	memset(h, 0, sizeof(*h));
	h->easy = curl_easy_init();
	h->headers = curl_slist_append(NULL, "Content-Type: application/json");
	/* as Go's client: no "Expect: 100-continue" wait before a body */
	h->headers = curl_slist_append(h->headers, "Expect:");
	curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(h->easy, CURLOPT_TCP_NODELAY, 1L);
}

static void http_release(struct http *h)
{
	curl_easy_cleanup(h->easy);
	curl_slist_free_all(h->headers);
	free(h->buf);
}

/* method url [body]: the reply as JSON (NULL when it is not), the status
 * in *ret_status. */
static json_t *http_call(struct http *h, const char *method, const char *url, const char *body,
			 long *ret_status)
{
	long status = 0;

	h->len = 0;
	curl_easy_setopt(h->easy, CURLOPT_URL, url);
	curl_easy_setopt(h->easy, CURLOPT_HTTPGET, 1L);
	if (body)
		curl_easy_setopt(h->easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h->easy, CURLOPT_CUSTOMREQUEST, method);
	if (curl_easy_perform(h->easy) != CURLE_OK)
		return NULL;
	curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &status);
	if (ret_status)
		*ret_status = status;
	return h->len ? json_loadb(h->buf, h->len, 0, NULL) : NULL;
}

static json_t *http_json(struct http *h, const char *method, const char *url, json_t *body,
			 long *ret_status)
{
	char *text = json_dumps(body, JSON_COMPACT);
	json_t *r = text ? http_call(h, method, url, text, ret_status) : NULL;

	free(text);
	return r;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- objects ----------------------------------------------------------------- */

struct dev_spec {
	const char *model;
	unsigned memory_mib, split;
};

static json_t *node_object(const char *name, uint32_t cpu_milli, uint32_t mem_mib,
			   const struct dev_spec *devs, int n)
{
	json_t *list = json_array(), *doc, *node;
	char *text, cpu[32], mem[32];

	for (int i = 0; i < n; i++)
		json_array_append_new(list, json_pack("{s:o, s:s, s:i, s:i, s:i, s:i}",
			"uuid", json_sprintf("GPU-%s-%d", name, i), "model", devs[i].model,
			"memoryMiB", (int)devs[i].memory_mib, "numa", 0, "nvlink", 0,
			"split", (int)devs[i].split));
	doc = json_pack("{s:i, s:s, s:i, s:o}", "version", 1, "driver", "bench", "cuda", 12040,
			"devices", list);
	text = json_dumps(doc, JSON_COMPACT);
	snprintf(cpu, sizeof(cpu), "%um", cpu_milli);
	snprintf(mem, sizeof(mem), "%uMi", mem_mib);
	node = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s, s:s}, s:[{s:s, s:s}]}}",
			 "apiVersion", "v1", "kind", "Node", "metadata", "name", name,
			 "annotations", "gpupool.io/devices", text, "status", "allocatable",
			 "cpu", cpu, "memory", mem, "conditions", "type", "Ready", "status", "True");
	free(text);
	json_decref(doc);
	return node;
}

/* A pod asking for what request r asks, models by name. */
static json_t *pod_object(const char *name, const struct gp_request *r, unsigned split,
			  char (*model_names)[GP_NAME_MAX], int models)
{
	char models_text[512] = "", cpu[32], mem[32], units[32], count[8];
	json_t *ann = json_object(), *pod;

	for (int m = 0; m < models; m++)
		if (r->models >> m & 1)
			snprintf(models_text + strlen(models_text), sizeof(models_text) - strlen(models_text),
				 "%s%s", models_text[0] ? "|" : "", model_names[m]);
	snprintf(cpu, sizeof(cpu), "%um", r->cpu_milli);
	snprintf(mem, sizeof(mem), "%uMi", r->mem_mib);
	snprintf(units, sizeof(units), "%u",
		 r->devices * (r->whole ? split : r->dev_compute));
	snprintf(count, sizeof(count), "%u", r->devices ? r->devices : 1);
	if (r->devices > 1)
		json_object_set_new(ann, "gpupool.io/gpu-count", json_string(count));
	if (models_text[0])
		json_object_set_new(ann, "gpupool.io/gpu-model", json_string(models_text));
	pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:{s:s, s:[{s:s, s:s, s:{s:{s:s, s:s}}}]}}",
			"apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
			"default", "annotations", ann, "spec", "schedulerName", "gpupool-scheduler",
			"containers", "name", "main", "image", "bench", "resources", "requests",
			"cpu", cpu, "memory", mem);
	if (r->devices)
		json_object_set_new(json_object_get(json_array_get(json_object_get(json_object_get(
			pod, "spec"), "containers"), 0), "resources"), "limits",
			json_pack("{s:s}", "gpupool.io/gpu", units));
	return pod;
}

/* ---- kube-scheduler's side ----------------------------------------------------------- */

struct sched {
	struct http api, ext;
	const char *api_url, *ext_url;
	json_t *names;                  /* every node's name */
	char *names_text;               /* the same, as JSON text (made once) */
};

/* Creates obj at path; 0 or -EIO. */
static int create(struct sched *s, const char *path, json_t *obj, json_t **ret)
{
	char url[1024];
	long status = 0;
	json_t *got;

	snprintf(url, sizeof(url), "%s%s", s->api_url, path);
	got = http_json(&s->api, "POST", url, obj, &status);
	if (status != 201 && status != 200) {
		fprintf(stderr, "bench-k8s: POST %s: HTTP %ld: %s\n", url, status,
			got ? json_string_value(json_object_get(got, "message")) : "no answer");
		json_decref(got);
		return -EIO;
	}
	if (ret)
		*ret = got;
	else
		json_decref(got);
	return 0;
}

/* POST body to the extender's verb; the reply's text (s->ext.buf) or NULL. */
static const char *ext_post(struct sched *s, const char *verb, const char *body)
{
	char url[1024];
	long status = 0;

	snprintf(url, sizeof(url), "%s/%s", s->ext_url, verb);
	s->ext.len = 0;
	curl_easy_setopt(s->ext.easy, CURLOPT_URL, url);
	curl_easy_setopt(s->ext.easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(s->ext.easy, CURLOPT_CUSTOMREQUEST, "POST");
	if (curl_easy_perform(s->ext.easy) != CURLE_OK)
		return NULL;
	curl_easy_getinfo(s->ext.easy, CURLINFO_RESPONSE_CODE, &status);
	return status == 200 && s->ext.len ? s->ext.buf : NULL;
}

/* The text of the array after `"key":` in a reply (the extender writes
 * compact JSON); *ret_len its length. As kube-scheduler hands the filter's
 * NodeNames to prioritize, without looking into them. */
static const char *array_in(const char *reply, const char *key, size_t *ret_len)
{
	const char *p = strstr(reply, key), *end;

	if (!p || !(p = strchr(p, '[')) || !(end = strchr(p, ']')))
		return NULL;
	*ret_len = (size_t)(end - p + 1);
	return p;
}

/* The host with the highest score of a prioritize reply (the first of
 * equals), into host. */
static bool best_host(const char *reply, char *host, size_t len)
{
	long best = -1;

	for (const char *p = strstr(reply, "\"Host\":\""); p; p = strstr(p + 1, "\"Host\":\"")) {
		const char *name = p + 8, *q = strchr(name, '"'), *score = q ? strstr(q, "\"Score\":") : NULL;
		long v = score ? strtol(score + 8, NULL, 10) : -1;

		if (q && v > best && (size_t)(q - name) < len) {
			best = v;
			snprintf(host, len, "%.*s", (int)(q - name), name);
		}
	}
	return best >= 0;
}

/* The one name of a NodeNames array's text, into host; false when it has
 * none or several (node names hold no comma). */
static bool only_name(const char *names, size_t len, char *host, size_t host_len)
{
	if (len < 4 || memchr(names, ',', len) || len - 4 >= host_len)
		return false;
	snprintf(host, host_len, "%.*s", (int)(len - 4), names + 2);
	return true;
}

/* filter, then, as kube-scheduler's scheduling cycle: the one node it
 * answers (kube-scheduler takes a single feasible node without scoring),
 * else prioritize and the best score (first of equals). The bind request
 * for the pod into bind (len bytes), or false when no node fits. */
static bool decide(struct sched *s, json_t *pod, const char *text, char *bind, size_t len)
{
	json_t *meta = json_object_get(pod, "metadata");
	char *pod_text = text ? strdup(text) : json_dumps(pod, JSON_COMPACT), *args = NULL, host[256];
	const char *reply, *names;
	size_t names_len = 0;
	bool ok = false;

	if (!pod_text || asprintf(&args, "{\"Pod\":%s,\"NodeNames\":%s}", pod_text, s->names_text) < 0)
		goto out;
	reply = ext_post(s, "filter", args);
	names = reply ? array_in(reply, "\"NodeNames\"", &names_len) : NULL;
	if (!names || names_len <= 2)
		goto out;
	if (only_name(names, names_len, host, sizeof(host)))
		goto chosen;
	free(args);
	args = NULL;
	if (asprintf(&args, "{\"Pod\":%s,\"NodeNames\":%.*s}", pod_text, (int)names_len, names) < 0)
		goto out;
	reply = ext_post(s, "prioritize", args);
	if (!reply || !best_host(reply, host, sizeof(host)))
		goto out;
chosen:
	snprintf(bind, len,
		 "{\"PodName\":\"%s\",\"PodNamespace\":\"%s\",\"PodUID\":\"%s\",\"Node\":\"%s\"}",
		 json_string_value(json_object_get(meta, "name")),
		 json_string_value(json_object_get(meta, "namespace")),
		 json_string_value(json_object_get(meta, "uid")), host);
	ok = true;
out:
	free(args);
	free(pod_text);
	return ok;
}

/* kube-scheduler's binding cycle: true when the extender bound the pod. */
static bool bind_send(struct sched *s, const char *bind)
{
	const char *reply = ext_post(s, "bind", bind);

	return reply && strstr(reply, "\"Error\":\"\"");
}

static bool schedule(struct sched *s, json_t *pod)
{
	char bind[1024];

	return decide(s, pod, NULL, bind, sizeof(bind)) && bind_send(s, bind);
}

/* Binds sent from BINDERS threads, each on a connection of its own, while
 * the next pods are decided: kube-scheduler's binding goroutines, one per
 * pod, which run beside its scheduling cycle. */
#define BINDERS 8

struct binder {
	pthread_mutex_t lock;
	pthread_cond_t more;
	char (*queue)[1024];
	long head, tail, bound;
	bool closing;
};

struct binder_thread {
	struct binder *b;
	struct sched s;                 /* its own connection */
	pthread_t thread;
};

static void *binder_main(void *arg)
{
	struct binder_thread *bt = arg;
	struct binder *b = bt->b;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		long mine;

		while (b->head == b->tail && !b->closing)
			pthread_cond_wait(&b->more, &b->lock);
		if (b->head == b->tail)
			break;
		mine = b->head++;
		pthread_mutex_unlock(&b->lock);
		bool ok = bind_send(&bt->s, b->queue[mine]);
		pthread_mutex_lock(&b->lock);
		b->bound += ok;
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* Waits until the extender knows `nodes` nodes (its informers caught up). */
static int wait_nodes(struct sched *s, long nodes)
{
	char url[1024];

	free(s->names_text);
	s->names_text = json_dumps(s->names, JSON_COMPACT);

	snprintf(url, sizeof(url), "%s/healthz", s->ext_url);
	for (int i = 0; i < 600; i++) {
		json_t *h = http_call(&s->ext, "GET", url, NULL, NULL);
		long known = json_integer_value(json_object_get(h, "nodes"));

		json_decref(h);
		if (known >= nodes)
			return 0;
		usleep(100000);
	}
	fprintf(stderr, "bench-k8s: the extender never saw the %ld nodes\n", nodes);
	return -ETIMEDOUT;
}

static void sched_init(struct sched *s, const struct options *o)
{
	memset(s, 0, sizeof(*s));
	http_init(&s->api);
	http_init(&s->ext);
	s->api_url = o->api;
	s->ext_url = o->extender;
	s->names = json_array();
}

static void sched_release(struct sched *s)
{
	http_release(&s->api);
	http_release(&s->ext);
	json_decref(s->names);
	free(s->names_text);
}

/* ---- replay ---------------------------------------------------------------------------- */

static int trace_load(const struct options *o, struct gp_trace *t)
{
	char err[512];

	memset(t, 0, sizeof(*t));
	if (gp_trace_load_nodes(t, o->nodes_csv, err, sizeof(err)) < 0 ||
	    gp_trace_load_pods(t, o->pods_csv, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-k8s: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

/* `gpupool sim`'s replay of the same seed with the default policy. */
static int sim_replay(const struct gp_trace *t, uint64_t seed, struct gp_replay_result *ret)
{
	struct gp_replay_config cfg = { .policy = "default", .inflate = 1.3, .seed = seed };
	struct gp_workload *w = NULL;
	int r = gp_workload_from_requests(t->pod, t->pods, 0.95, &w);

	if (r < 0)
		return r;
	gp_workload_set_supply(w, t->node, t->nodes);
	r = gp_replay_run(t, w, &cfg, ret);
	gp_workload_free(w);
	return r;
}

static int nodes_create(struct sched *s, const struct gp_trace *t)
{
	for (size_t i = 0; i < t->nodes; i++) {
		const struct gp_node_spec *n = &t->node[i];
		struct dev_spec devs[GP_NODE_DEVICES_MAX];
		char name[64];
		json_t *obj;
		int r;

		snprintf(name, sizeof(name), "openb-node-%04zu", i);
		for (int d = 0; d < n->devices; d++)
			devs[d] = (struct dev_spec){ t->model[n->device[d].model], MIB_PER_NODE_DEVICE,
						     TRACE_SPLIT };
		obj = node_object(name, n->cpu_milli, n->mem_mib, devs, n->devices);
		r = create(s, "/api/v1/nodes", obj, NULL);
		json_decref(obj);
		if (r < 0)
			return r;
		json_array_append_new(s->names, json_string(name));
	}
	return 0;
}

static int mode_replay(const struct options *o)
{
	struct gp_replay_config cfg = { .inflate = 1.3, .seed = o->seed };
	double arrived = 0, allocated = 0, at_100 = -1, capacity, start;
	struct gp_replay_result sim = { 0 };
	struct gp_trace t;
	struct sched s;
	uint32_t *order = NULL;
	uint64_t tie;
	size_t n = 0, placed = 0;
	int r;

	if (trace_load(o, &t) < 0)
		return 1;
	capacity = (double)t.gpus * GP_COMPUTE_WHOLE;
	sched_init(&s, o);
	r = sim_replay(&t, o->seed, &sim);
	if (r == 0)
		r = gp_replay_order(&t, &cfg, &order, &n, &tie);
	if (r == 0)
		r = nodes_create(&s, &t);
	if (r == 0)
		r = wait_nodes(&s, (long)t.nodes);
	start = now_s();
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct gp_request *req = &t.pod[order[i]];
		char name[64];
		json_t *pod = NULL, *made = NULL;

		snprintf(name, sizeof(name), "p-%06zu", i);
		pod = pod_object(name, req, TRACE_SPLIT, t.model, t.models);
		r = create(&s, "/api/v1/namespaces/default/pods", pod, &made);
		if (r == 0 && schedule(&s, made)) {
			allocated += (double)gp_request_gpu_milli(req);
			placed++;
		}
		arrived += (double)gp_request_gpu_milli(req);
		if (at_100 < 0 && arrived >= capacity)
			at_100 = 100.0 * allocated / capacity;
		json_decref(pod);
		json_decref(made);
	}
	if (at_100 < 0)
		at_100 = 100.0 * allocated / capacity;
	if (r == 0)
		printf("{\"seed\":%llu,\"nodes\":%zu,\"pods\":%zu,\"extender_placed\":%zu,"
		       "\"sim_placed\":%zu,\"extender_alloc_pct_at_100\":%.3f,"
		       "\"sim_alloc_pct_at_100\":%.3f,\"alloc_diff_points\":%.3f,"
		       "\"replay_seconds\":%.1f}\n",
		       (unsigned long long)o->seed, t.nodes, n, placed, sim.placed, at_100,
		       sim.alloc_pct_at_100, at_100 - sim.alloc_pct_at_100, now_s() - start);
	free(order);
	sched_release(&s);
	gp_trace_release(&t);
	return r == 0 ? 0 : 1;
}

static int mode_tie_seed(const struct options *o)
{
	struct gp_replay_config cfg = { .inflate = 1.3, .seed = o->seed };
	struct gp_trace t;
	uint32_t *order;
	uint64_t tie;
	size_t n;

	if (trace_load(o, &t) < 0 || gp_replay_order(&t, &cfg, &order, &n, &tie) < 0)
		return 1;
	printf("%llu\n", (unsigned long long)tie);
	free(order);
	gp_trace_release(&t);
	return 0;
}

/* ---- rate ------------------------------------------------------------------------------- */

static const struct dev_spec rate_models[] = {
	{ "NVIDIA A100-SXM4-80GB", 81920, 10 },
	{ "Tesla T4", 15360, 10 },
	{ "NVIDIA H100 80GB HBM3", 81920, 10 },
};

static int mode_rate(const struct options *o)
{
	static const struct gp_request shapes[] = {
		{ .cpu_milli = 2000, .mem_mib = 8192, .devices = 1, .dev_compute = 3 },
		{ .cpu_milli = 4000, .mem_mib = 16384, .devices = 1, .dev_compute = 5 },
		{ .cpu_milli = 1000, .mem_mib = 4096, .devices = 1, .dev_compute = 1 },
		{ .cpu_milli = 8000, .mem_mib = 32768, .devices = 2, .whole = true },
	};
	json_t **pods = calloc((size_t)o->pods, sizeof(*pods));
	double start, decide_s, rtt_s, scheduled_s = 0;
	char url[1024];
	struct sched s;
	long bound = 0, i;
	int r = 0;

	sched_init(&s, o);
	for (i = 0; r == 0 && i < o->nodes; i++) {
		struct dev_spec devs[8];
		char name[64];
		json_t *obj;

		for (int d = 0; d < 8; d++)
			devs[d] = rate_models[i % 3];
		snprintf(name, sizeof(name), "node-%05ld", i);
		obj = node_object(name, 128000, 1048576, devs, 8);
		r = create(&s, "/api/v1/nodes", obj, NULL);
		json_decref(obj);
		json_array_append_new(s.names, json_string(name));
	}
	if (r == 0)
		r = wait_nodes(&s, o->nodes);
	for (i = 0; r == 0 && i < o->pods; i++) {        /* made before the clock starts */
		char name[64];
		json_t *pod;

		snprintf(name, sizeof(name), "rate-%06ld", i);
		pod = pod_object(name, &shapes[i % 4], 10, NULL, 0);
		r = create(&s, "/api/v1/namespaces/default/pods", pod, &pods[i]);
		json_decref(pod);
	}
	struct binder b = { .queue = calloc((size_t)o->pods + 1, sizeof(*b.queue)) };
	struct binder_thread bt[BINDERS];
	/* The pods as kube-scheduler holds them, encoded before the clock
	 * starts: what is timed is the extender's part. */
	char **texts = calloc((size_t)o->pods + 1, sizeof(*texts));

	for (i = 0; texts && r == 0 && i < o->pods; i++)
		texts[i] = json_dumps(pods[i], JSON_COMPACT);

	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.more, NULL);
	for (int t = 0; t < BINDERS; t++) {
		bt[t].b = &b;
		sched_init(&bt[t].s, o);
		pthread_create(&bt[t].thread, NULL, binder_main, &bt[t]);
	}
	start = now_s();
	for (i = 0; r == 0 && i < o->pods; i++) {
		if (!decide(&s, pods[i], texts ? texts[i] : NULL, b.queue[b.tail], sizeof(b.queue[0])))
			continue;
		pthread_mutex_lock(&b.lock);
		b.tail++;
		pthread_cond_signal(&b.more);
		pthread_mutex_unlock(&b.lock);
	}
	scheduled_s = now_s() - start;
	pthread_mutex_lock(&b.lock);
	b.closing = true;
	pthread_cond_broadcast(&b.more);
	pthread_mutex_unlock(&b.lock);
	for (int t = 0; t < BINDERS; t++) {
		pthread_join(bt[t].thread, NULL);
		sched_release(&bt[t].s);
	}
	bound = b.bound;
	free(b.queue);
	for (i = 0; texts && i < o->pods; i++)
		free(texts[i]);
	free(texts);
	decide_s = now_s() - start;
	snprintf(url, sizeof(url), "%s/healthz", s.ext_url);
	start = now_s();
	for (i = 0; r == 0 && i < o->pods; i++)
		json_decref(http_call(&s.ext, "GET", url, NULL, NULL));
	rtt_s = now_s() - start;
	if (r == 0)
		printf("{\"rate_nodes\":%ld,\"rate_pods\":%ld,\"rate_bound\":%ld,"
		       "\"extender_decisions_per_sec\":%.0f,\"scheduling_cycles_per_sec\":%.0f,"
		       "\"http_roundtrips_per_sec\":%.0f,\"decision_cost_in_roundtrips\":%.1f}\n",
		       o->nodes, o->pods, bound, (double)o->pods / decide_s,
		       (double)o->pods / scheduled_s, (double)o->pods / rtt_s, decide_s / rtt_s);
	for (i = 0; i < o->pods; i++)
		json_decref(pods[i]);
	free(pods);
	sched_release(&s);
	return r == 0 ? 0 : 1;
}

/* ---- main ------------------------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: bench-k8s tie-seed --nodes CSV --pods CSV --seed N\n"
			"       bench-k8s replay --api URL --extender URL --nodes CSV --pods CSV --seed N\n"
			"       bench-k8s rate --api URL --extender URL --nodes N --pods N\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option flags[] = {
		{ "api", required_argument, NULL, 'a' }, { "extender", required_argument, NULL, 'e' },
		{ "nodes", required_argument, NULL, 'n' }, { "pods", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' }, { 0 },
	};
	struct options o = { .seed = 1 };
	int c;

	if (argc < 2)
		return usage();
	o.mode = argv[1];
	while ((c = getopt_long(argc - 1, argv + 1, "", flags, NULL)) != -1) {
		switch (c) {
		case 'a': o.api = optarg; break;
		case 'e': o.extender = optarg; break;
		case 'n': o.nodes_csv = optarg; o.nodes = atol(optarg); break;
		case 'p': o.pods_csv = optarg; o.pods = atol(optarg); break;
		case 's': o.seed = strtoull(optarg, NULL, 10); break;
		default: return usage();
		}
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (strcmp(o.mode, "tie-seed") == 0 && o.nodes_csv && o.pods_csv)
		return mode_tie_seed(&o);
	if (!o.api || !o.extender)
		return usage();
	if (strcmp(o.mode, "replay") == 0 && o.nodes_csv && o.pods_csv)
		return mode_replay(&o);
	if (strcmp(o.mode, "rate") == 0 && o.nodes > 0 && o.pods > 0)
		return mode_rate(&o);
	return usage();
}
