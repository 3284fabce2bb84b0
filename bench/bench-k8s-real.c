/* bench-k8s-real.c — the client side of bench/bench-k8s-real.sh: a real
 * kube-apiserver's cluster made as kubelets and `gpupool node` make it,
 * then pods created in bulk and watched until kube-scheduler has bound
 * them all. Talks to the API server through the project's own client
 * (k8s/client.h: the kubeconfig, TLS, a bearer token, informers). Each
 * mode prints one JSON object on one line; the script merges them.
 *
 *   bench-k8s-real nodes --kubeconfig FILE --nodes N
 *       N Nodes "bench-node-00000".., each of 8 devices of one model (A100
 *       80 GB, T4, H100 in turn) published in gpupool.io/devices as the
 *       node program writes it (gp_kube_devices_text), gpupool.io/gpu in
 *       capacity and allocatable as the kubelet advertises the device
 *       plugin's units, Ready, and without the not-ready taint that the
 *       API server's TaintNodesByCondition adds at create (the node
 *       lifecycle controller would lift it; none runs here)
 *   bench-k8s-real pods --kubeconfig FILE --namespace NS --run NAME
 *                  --scheduler NAME --pods N [--warmup W]
 *       W pods bound first, untimed (the scheduler is up, its caches and
 *       connections warm); then N pods created at once from CREATORS
 *       connections; the seconds from the first creation to the last
 *       bind seen on a watch, and the pods bound per second. Every pod
 *       carries the label gpupool.io/bench-run=NAME (the script deletes
 *       them by it). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "k8s/client.h"
#include "k8s/names.h"
#include "k8s/objects.h"

#define NODE_DEVICES 8
#define CREATORS 4              /* connections that create nodes and pods */
#define BOUND_LIMIT_S 180       /* every pod bound within this, or a failure */
#define RUN_LABEL "gpupool.io/bench-run"

struct options {
	const char *mode, *kubeconfig, *ns, *run, *scheduler;
	long nodes, pods, warmup;
};

/* ---- threads that share a counter of work ------------------------------------- */

struct crew {
	const struct gp_kube_config *config;
	const struct options *o;
	long first, total;              /* items first .. first + total - 1 */
	atomic_long next;               /* the next item to take */
	atomic_int failed;              /* the first error, 0 when none */
	int (*one)(struct crew *c, struct gp_kube *k, long item);
};

static void *crew_main(void *arg)
{
	struct crew *c = arg;
	struct gp_kube *k = NULL;
	int r = gp_kube_new(c->config, &k);

	for (long i; r == 0 && (i = atomic_fetch_add(&c->next, 1)) < c->total;)
		r = c->one(c, k, c->first + i);
	if (r < 0) {
		int none = 0;

		atomic_compare_exchange_strong(&c->failed, &none, r);
	}
	gp_kube_free(k);
	return NULL;
}

/* Runs c->one for every item from CREATORS threads; 0 or the first error. */
static int crew_run(struct crew *c)
{
	pthread_t t[CREATORS];
	int started = 0;

	atomic_init(&c->next, 0);
	atomic_init(&c->failed, 0);
	while (started < CREATORS && pthread_create(&t[started], NULL, crew_main, c) == 0)
		started++;
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	return started ? atomic_load(&c->failed) : -EAGAIN;
}

/* ---- nodes ------------------------------------------------------------------- */

static const struct gp_kube_device node_models[] = {
	{ .model = "NVIDIA A100-SXM4-80GB", .memory_mib = 81920, .split = 10 },
	{ .model = "Tesla T4", .memory_mib = 15360, .split = 10 },
	{ .model = "NVIDIA H100 80GB HBM3", .memory_mib = 81920, .split = 10 },
};

/* The node's gpupool.io/devices text, as `gpupool node` publishes it. */
static char *devices_text(long i)
{
	struct gp_kube_device d[NODE_DEVICES];

	for (int j = 0; j < NODE_DEVICES; j++) {
		d[j] = node_models[i % 3];
		snprintf(d[j].uuid, sizeof(d[j].uuid), "GPU-bench-%05ld-%d", i, j);
		d[j].numa = j / 4;
		d[j].healthy = d[j].compatible = true;
	}
	return gp_kube_devices_text(d, NODE_DEVICES, "bench", 12040);
}

/* What the kubelet reports: capacity = allocatable, Ready. */
static json_t *node_status(const char *name)
{
	char now[40], units[16];
	time_t t = time(NULL);
	struct tm tm;
	json_t *res;

	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	snprintf(units, sizeof(units), "%d", NODE_DEVICES * 10);
	res = json_pack("{s:s, s:s, s:s, s:s}", "cpu", "128", "memory", "1Ti", "pods", "110",
			GP_KUBE_RESOURCE, units);
	return json_pack("{s:O, s:o, s:[{s:s, s:s, s:s, s:s, s:s, s:s}], s:[{s:s, s:s}, {s:s, s:s}],"
			 " s:{s:s, s:s, s:s}}",
			 "capacity", res, "allocatable", res,
			 "conditions", "type", "Ready", "status", "True", "reason", "KubeletReady",
			 "message", "kubelet is posting ready status", "lastHeartbeatTime", now,
			 "lastTransitionTime", now,
			 "addresses", "type", "InternalIP", "address", "127.0.0.1", "type", "Hostname",
			 "address", name,
			 "nodeInfo", "kubeletVersion", "v1.28.4", "architecture", "amd64",
			 "operatingSystem", "linux");
}

static json_t *node_new(const char *name, long i)
{
	char *devices = devices_text(i);
	json_t *node = devices ? json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s, s:s}, s:{s:s}}, s:o}",
		"apiVersion", "v1", "kind", "Node",
		"metadata", "name", name, "labels", "kubernetes.io/hostname", name,
		"kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64",
		"gpupool.io/accelerator", "true", "annotations", GP_KUBE_ANN_DEVICES, devices,
		"status", node_status(name)) : NULL;

	free(devices);
	return node;
}

/* POST the Node with its status, as the kubelet registers (the API
 * server keeps a Node's status at create), then lift the not-ready taint. */
static int node_make(struct crew *c, struct gp_kube *k, long i)
{
	char name[64], path[128];
	json_t *node, *made = NULL, *patch;
	int r;

	(void)c;
	snprintf(name, sizeof(name), "bench-node-%05ld", i);
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	node = node_new(name, i);
	r = node ? gp_kube_post(k, "/api/v1/nodes", node, &made, NULL) : -ENOMEM;
	if (r == 0 && json_array_size(json_object_get(json_object_get(made, "spec"), "taints"))) {
		patch = json_pack("{s:{s:n}}", "spec", "taints");
		r = gp_kube_merge_patch(k, path, patch, NULL, NULL);
		json_decref(patch);
	}
	if (r < 0)
		fprintf(stderr, "bench-k8s-real: node %s: %s (%s)\n", name, strerror(-r),
			gp_kube_error(k));
	json_decref(node);
	json_decref(made);
	return r;
}

static int mode_nodes(const struct gp_kube_config *config, const struct options *o)
{
	struct crew c = { .config = config, .o = o, .total = o->nodes, .one = node_make };
	uint64_t start = gp_monotonic_ns();
	int r = crew_run(&c);

	if (r == 0)
		printf("{\"nodes\":%ld,\"nodes_seconds\":%.1f}\n", o->nodes,
		       (double)(gp_monotonic_ns() - start) / 1e9);
	return r == 0 ? 0 : 1;
}

/* ---- pods, and the watch that sees them bound ------------------------------------ */

/* The pods' shapes, in turn: a share of one device with its memory, and
 * two whole devices. */
static const struct shape {
	const char *units, *count, *gpu_memory, *cpu, *memory;
} shapes[] = {
	{ "3", NULL, "4Gi", "2", "8Gi" },
	{ "5", NULL, "8Gi", "4", "16Gi" },
	{ "1", NULL, "2Gi", "1", "4Gi" },
	{ "20", "2", NULL, "8", "32Gi" },
};

static json_t *pod_new(const struct options *o, const char *name, long i)
{
	const struct shape *s = &shapes[i % 4];
	json_t *ann = json_object();

	if (s->gpu_memory)
		json_object_set_new(ann, GP_KUBE_ANN_MEMORY, json_string(s->gpu_memory));
	if (s->count)
		json_object_set_new(ann, GP_KUBE_ANN_COUNT, json_string(s->count));
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:o}, s:{s:s, s:i, s:b, s:s,"
			 " s:[{s:s, s:s, s:{s:{s:s, s:s}, s:{s:s}}}]}}",
			 "apiVersion", "v1", "kind", "Pod",
			 "metadata", "name", name, "namespace", o->ns, "labels", RUN_LABEL, o->run,
			 "annotations", ann,
			 "spec", "schedulerName", o->scheduler, "terminationGracePeriodSeconds", 0,
			 "automountServiceAccountToken", 0, "restartPolicy", "Never",
			 "containers", "name", "main", "image", "registry.invalid/none:1",
			 "resources", "requests", "cpu", s->cpu, "memory", s->memory,
			 "limits", GP_KUBE_RESOURCE, s->units);
}

static int pod_make(struct crew *c, struct gp_kube *k, long i)
{
	char name[96], path[256];
	json_t *pod;
	int r;

	snprintf(name, sizeof(name), "%s-%05ld", c->o->run, i);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", c->o->ns);
	pod = pod_new(c->o, name, i);
	r = pod ? gp_kube_post(k, path, pod, NULL, NULL) : -ENOMEM;
	if (r < 0)
		fprintf(stderr, "bench-k8s-real: pod %s: %s (%s)\n", name, strerror(-r),
			gp_kube_error(k));
	json_decref(pod);
	return r;
}

/* The run's pods as the watch shows them. `lock` guards all of it. */
struct binds {
	pthread_mutex_t lock;
	pthread_cond_t more;
	json_t *bound;                  /* names of the pods seen bound */
	uint64_t last_ns;               /* when the last of them was seen */
};

static void binds_see(struct binds *b, json_t *pod)
{
	const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"),
							     "nodeName"));
	const char *name = json_string_value(json_object_get(json_object_get(pod, "metadata"),
							     "name"));

	if (!node || !node[0] || !name)
		return;
	pthread_mutex_lock(&b->lock);
	if (!json_object_get(b->bound, name)) {
		json_object_set_new(b->bound, name, json_true());
		b->last_ns = gp_monotonic_ns();
		pthread_cond_broadcast(&b->more);
	}
	pthread_mutex_unlock(&b->lock);
}

static void binds_on_sync(void *ctx, json_t *items)
{
	size_t i;
	json_t *pod;

	json_array_foreach(items, i, pod)
		binds_see(ctx, pod);
}

static void binds_on_event(void *ctx, enum gp_kube_event_type type, json_t *pod)
{
	if (type != GP_KUBE_DELETED)
		binds_see(ctx, pod);
}

/* Waits until `count` pods are seen bound; 0, or -ETIMEDOUT. */
static int binds_wait(struct binds *b, size_t count)
{
	struct timespec until = gp_timespec_of_ns(gp_monotonic_ns() +
						  (uint64_t)BOUND_LIMIT_S * 1000000000u);
	int r = 0;

	pthread_mutex_lock(&b->lock);
	while (json_object_size(b->bound) < count && r == 0)
		if (pthread_cond_timedwait(&b->more, &b->lock, &until) == ETIMEDOUT)
			r = -ETIMEDOUT;
	if (r < 0)
		fprintf(stderr, "bench-k8s-real: %zu of %zu pods bound in %d s\n",
			json_object_size(b->bound), count, BOUND_LIMIT_S);
	pthread_mutex_unlock(&b->lock);
	return r;
}

/* Pods first .. first + n - 1 created, then all first + n seen bound;
 * when the creations began and ended in ret_times[0] and [1]. */
static int pods_batch(struct crew *c, struct binds *b, long first, long n, uint64_t ret_times[2])
{
	uint64_t start = gp_monotonic_ns();
	int r;

	c->first = first;
	c->total = n;
	r = crew_run(c);
	ret_times[0] = start;
	ret_times[1] = gp_monotonic_ns();
	return r < 0 ? r : binds_wait(b, (size_t)(first + n));
}

/* The watch of the run's pods, synced (it saw the list) within 30 s. */
static int watch_start(const struct gp_kube_config *config, const struct options *o,
		       struct binds *b, struct gp_kube_informer **ret)
{
	static const struct gp_kube_informer_ops ops = { binds_on_sync, binds_on_event, NULL };
	char path[256];
	int r;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?labelSelector=%s%%3D%s", o->ns,
		 RUN_LABEL, o->run);
	r = gp_kube_informer_start(config, path, &ops, b, ret);
	for (int i = 0; r == 0 && !gp_kube_informer_synced(*ret) && i < 300; i++)
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	return r == 0 && !gp_kube_informer_synced(*ret) ? -ETIMEDOUT : r;
}

static int mode_pods(const struct gp_kube_config *config, const struct options *o)
{
	struct binds b = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct crew c = { .config = config, .o = o, .one = pod_make };
	struct gp_kube_informer *watch = NULL;
	uint64_t warm[2], timed[2];
	double seconds;
	int r = gp_monotonic_cond_init(&b.more);

	if (r < 0)
		return 1;
	b.bound = json_object();
	r = watch_start(config, o, &b, &watch);
	if (r == 0)
		r = pods_batch(&c, &b, 0, o->warmup, warm);
	if (r == 0)
		r = pods_batch(&c, &b, o->warmup, o->pods, timed);
	watch = gp_kube_informer_stop(watch);
	seconds = (double)(b.last_ns - timed[0]) / 1e9;
	if (r == 0)
		printf("{\"run\":\"%s\",\"pods\":%ld,\"create_seconds\":%.2f,\"bound_seconds\":%.2f,"
		       "\"pods_bound_per_sec\":%.1f}\n", o->run, o->pods,
		       (double)(timed[1] - timed[0]) / 1e9, seconds, (double)o->pods / seconds);
	else
		fprintf(stderr, "bench-k8s-real: run %s: %s\n", o->run, strerror(-r));
	json_decref(b.bound);
	pthread_cond_destroy(&b.more);
	return r == 0 ? 0 : 1;
}

/* ---- main ---------------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: bench-k8s-real nodes --kubeconfig FILE --nodes N\n"
			"       bench-k8s-real pods --kubeconfig FILE --namespace NS --run NAME\n"
			"                      --scheduler NAME --pods N [--warmup W]\n");
	return 2;
}

static int options_read(int argc, char **argv, struct options *o)
{
	static const struct option flags[] = {
		{ "kubeconfig", required_argument, NULL, 'k' }, { "nodes", required_argument, NULL, 'n' },
		{ "namespace", required_argument, NULL, 's' }, { "run", required_argument, NULL, 'r' },
		{ "scheduler", required_argument, NULL, 'S' }, { "pods", required_argument, NULL, 'p' },
		{ "warmup", required_argument, NULL, 'w' }, { 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", flags, NULL)) != -1) {
		switch (c) {
		case 'k': o->kubeconfig = optarg; break;
		case 'n': o->nodes = atol(optarg); break;
		case 's': o->ns = optarg; break;
		case 'r': o->run = optarg; break;
		case 'S': o->scheduler = optarg; break;
		case 'p': o->pods = atol(optarg); break;
		case 'w': o->warmup = atol(optarg); break;
		default: return -EINVAL;
		}
	}
	return o->kubeconfig ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct options o = { .warmup = 0 };
	struct gp_kube_options ko = { 0 };
	struct gp_kube_config *config = NULL;
	char err[512];
	int r;

	if (argc < 2 || options_read(argc - 1, argv + 1, &o) < 0)
		return usage();
	o.mode = argv[1];
	ko.kubeconfig = o.kubeconfig;
	if (gp_kube_config_load(&ko, &config, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-k8s-real: %s\n", err);
		return 1;
	}
	if (strcmp(o.mode, "nodes") == 0 && o.nodes > 0)
		r = mode_nodes(config, &o);
	else if (strcmp(o.mode, "pods") == 0 && o.ns && o.run && o.scheduler && o.pods > 0 &&
		 o.warmup >= 0)
		r = mode_pods(config, &o);
	else
		r = usage();
	gp_kube_config_free(config);
	return r;
}
