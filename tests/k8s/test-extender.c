/* test-extender.c — the extender's verbs against golden files, with
 * kube-scheduler's real JSON (extender/v1: CamelCase keys; the NodeNames
 * and the Nodes forms).
 *
 *   test-extender CASE-DIR...
 *
 * A case is a folder: cluster.json ({"nodes": [v1 Node...], "pods": [v1
 * Pod...], "quotas": {"NAMESPACE": {"memoryMiB": N, "compute": N,
 * "borrowMemoryMiB": N, "borrowCompute": N, "models": {"T4": {...}}}}})
 * is what the informers deliver; then every file N-VERB.json (VERB:
 * filter, prioritize, bind; or event, a watch event the pods' informer
 * delivers, answered with how many pods hold a placement; or placement,
 * {"PodUID": ...} answered with the placement that pod holds, without its
 * time, or {"placed": false}), in the order of
 * N, is a request whose answer must equal N-VERB.expected.json (as JSON:
 * key order and spacing do not matter). Bind runs without an API server: it commits in memory only.
 * With GP_GOLDEN_WRITE=1 the answers are written as the expected files
 * instead (to make a new case; read them before committing). Exit 0 when
 * every case passed, 1 with each difference printed.
 *
 *   test-extender --threads    the verbs beside the informers (below)
 *   test-extender --reasons    no '%' in any reason the extender answers */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/extender-impl.h"
#include "k8s/extender.h"

#define PATH_LEN 1024

struct quotas {
	json_t *all;                    /* "quotas" of cluster.json */
	struct gp_sched_model_quota model[GP_MODELS_MAX];
};

static uint64_t num(const json_t *o, const char *key)
{
	return (uint64_t)json_integer_value(json_object_get(o, key));
}

static int quota_of(void *ctx, const char *ns, struct gp_sched_tenant *ret)
{
	struct quotas *q = ctx;
	const json_t *t = json_object_get(q->all, ns), *m;
	const char *name;

	if (!t)
		return -ENOENT;
	*ret = (struct gp_sched_tenant){
		.quota = gp_quota_overall(num(t, "memoryMiB"), num(t, "borrowMemoryMiB"),
					  num(t, "compute"), num(t, "borrowCompute")),
		.model_quota = q->model };
	json_object_foreach((json_t *)json_object_get(t, "models"), name, m) {
		struct gp_sched_model_quota *mq = &q->model[ret->model_quotas++];

		*mq = (struct gp_sched_model_quota){
			.quota = { .mem_guaranteed_mib = num(m, "memoryMiB"),
				   .compute_guaranteed_pct = num(m, "compute") } };
		snprintf(mq->name, sizeof(mq->name), "%s", name);
	}
	return 0;
}

static int step_names(const char *dir, char ***ret, int *ret_n)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, versionsort), k = 0;
	char **names;

	if (n < 0)
		return -errno;
	names = calloc((size_t)n + 1, sizeof(*names));
	for (int i = 0; i < n; i++) {
		const char *f = list[i]->d_name;
		size_t len = strlen(f);

		if (names && f[0] >= '0' && f[0] <= '9' && len > 5 && !strstr(f, ".expected.") &&
		    strcmp(f + len - 5, ".json") == 0)
			names[k++] = strdup(f);
		free(list[i]);
	}
	free(list);
	*ret = names;
	*ret_n = k;
	return names ? 0 : -ENOMEM;
}

/* An event step: {"type": "ADDED"|"MODIFIED"|"DELETED", "object": {pod}}
 * from the pods' informer; the answer is how many pods hold a placement
 * then. */
static int informer_event(struct gp_extender *e, const char *req, char **ret)
{
	static const char *const types[] = { "ADDED", "MODIFIED", "DELETED" };
	json_t *ev = json_loads(req, 0, NULL);
	const char *type = json_string_value(json_object_get(ev, "type"));
	struct gp_extender_stats st;
	int t = 0;

	while (type && t < 3 && strcmp(types[t], type) != 0)
		t++;
	if (!type || t == 3) {
		json_decref(ev);
		return -EINVAL;
	}
	gp_extender_pod_ops.on_event(e, (enum gp_kube_event_type)t, json_object_get(ev, "object"));
	json_decref(ev);
	gp_extender_stats(e, &st);
	return asprintf(ret, "{\"podsPlaced\": %u}", st.pods_placed) < 0 ? -ENOMEM : 0;
}

/* A placement step: {"PodUID": "..."}; the answer is the placement that
 * pod holds (as its annotation says it, without boundAt and sealedAt), or
 * {"placed": false}. */
static int placement_step(struct gp_extender *e, const char *req, char **ret)
{
	json_t *args = json_loads(req, 0, NULL), *pl;
	const char *uid = json_string_value(json_object_get(args, "PodUID"));
	struct gp_kube_placement p;
	char *text;

	if (!uid || gp_extender_placement_of(e, uid, &p) < 0) {
		json_decref(args);
		*ret = strdup("{\"placed\": false}");
		return uid ? 0 : -EINVAL;
	}
	json_decref(args);
	text = gp_kube_placement_text(&p);
	pl = text ? json_loads(text, 0, NULL) : NULL;
	json_object_del(pl, "boundAt");
	json_object_del(pl, "sealedAt");
	*ret = pl ? json_dumps(pl, JSON_COMPACT) : NULL;
	json_decref(pl);
	free(text);
	return *ret ? 0 : -ENOMEM;
}

/* Runs the step's verb on the request's text; its answer parsed in *ret
 * (NULL when it is not JSON: a failure). */
static int run_verb(struct gp_extender *e, const char *file, const char *req, json_t **ret)
{
	size_t len = strlen(req);
	char *text = NULL;
	int r = -EINVAL;

	if (strstr(file, "-event."))
		r = informer_event(e, req, &text);
	else if (strstr(file, "-placement."))
		r = placement_step(e, req, &text);
	else if (strstr(file, "-filter."))
		r = gp_extender_filter(e, req, len, &text);
	else if (strstr(file, "-prioritize."))
		r = gp_extender_prioritize(e, req, len, &text);
	else if (strstr(file, "-bind."))
		r = gp_extender_bind(e, req, len, &text);
	else
		fprintf(stderr, "%s: not a filter, prioritize or bind step\n", file);
	*ret = text ? json_loads(text, 0, NULL) : NULL;
	if (text && !*ret)
		fprintf(stderr, "%s: the answer is not JSON: %s\n", file, text);
	free(text);
	return r;
}

/* One step: 0 when the answer is the expected one. */
static int step_run(struct gp_extender *e, const char *dir, const char *file)
{
	char path[PATH_LEN], expected_path[PATH_LEN], *text;
	json_error_t jerr;
	json_t *req, *got = NULL, *want;
	int r, failed = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	snprintf(expected_path, sizeof(expected_path), "%s/%.*s.expected.json", dir,
		 (int)(strlen(file) - 5), file);
	req = json_load_file(path, 0, &jerr);
	if (!req) {
		fprintf(stderr, "%s:%d: %s\n", path, jerr.line, jerr.text);
		return 1;
	}
	text = json_dumps(req, JSON_COMPACT | JSON_ENCODE_ANY);
	r = run_verb(e, file, text, &got);
	free(text);
	if (got && getenv("GP_GOLDEN_WRITE")) {
		json_dump_file(got, expected_path, JSON_INDENT(2) | JSON_SORT_KEYS);
	} else if (!(want = json_load_file(expected_path, 0, &jerr))) {
		fprintf(stderr, "%s:%d: %s\n", expected_path, jerr.line, jerr.text);
		failed = 1;
	} else {
		if (!got || !json_equal(got, want)) {
			char *g = got ? json_dumps(got, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;

			fprintf(stderr, "FAIL %s (returned %d)\ngot:\n%s\nwant: %s\n", path, r,
				g ? g : "(nothing)", expected_path);
			free(g);
			failed = 1;
		}
		json_decref(want);
	}
	json_decref(req);
	json_decref(got);
	return failed;
}

static int case_run(const char *dir)
{
	char path[PATH_LEN], err[256];
	struct quotas q = { 0 };
	struct gp_extender_options o = { .policy = "default", .tie_seed = 1, .quota = quota_of,
					 .quota_ctx = &q };
	struct gp_extender *e;
	json_error_t jerr;
	json_t *cluster;
	char **steps = NULL;
	int n = 0, failed = 0;

	snprintf(path, sizeof(path), "%s/cluster.json", dir);
	cluster = json_load_file(path, 0, &jerr);
	if (!cluster) {
		fprintf(stderr, "%s:%d: %s\n", path, jerr.line, jerr.text);
		return 1;
	}
	q.all = json_object_get(cluster, "quotas");
	if (gp_extender_new(&o, &e, err, sizeof(err)) < 0 || step_names(dir, &steps, &n) < 0) {
		fprintf(stderr, "%s: cannot start: %s\n", dir, err);
		json_decref(cluster);
		return 1;
	}
	gp_extender_node_ops.on_sync(e, json_object_get(cluster, "nodes"));
	gp_extender_pod_ops.on_sync(e, json_object_get(cluster, "pods"));
	for (int i = 0; i < n; i++) {
		failed |= step_run(e, dir, steps[i]);
		free(steps[i]);
	}
	printf("%s %s (%d steps)\n", failed ? "FAIL" : "ok  ", dir, n);
	free(steps);
	gp_extender_free(e);
	json_decref(cluster);
	return failed;
}

/* ---- --threads: the verbs beside the informers -----------------------------
 * kube-scheduler's calls come on several connections (binds beside the next
 * pods' filters) while the informers deliver Nodes and Pods: two threads
 * run filter, prioritize and bind for pods of their own while a third
 * delivers pod and node events. Run under ThreadSanitizer (suite threads),
 * any race fails; here, every placed pod must be one a bind placed, and
 * no device may be given more than it has. */

#define NODES 40
#define PODS_PER_THREAD 150

struct race {
	struct gp_extender *e;
	json_t *nodes;
	int thread;
	unsigned bound;
};

static char *pod_text(int thread, int i, int units)
{
	char *text = NULL;

	if (asprintf(&text, "{\"metadata\": {\"name\": \"p%d-%d\", \"namespace\": \"t\","
			    " \"uid\": \"u%d-%d\"}, \"spec\": {\"containers\": [{\"name\": \"m\","
			    " \"resources\": {\"limits\": {\"gpupool.io/gpu\": \"%d\"}}}]}}",
		     thread, i, thread, i, units) < 0)
		return NULL;
	return text;
}

static void *scheduler_main(void *arg)
{
	struct race *r = arg;

	for (int i = 0; i < PODS_PER_THREAD; i++) {
		char *pod = pod_text(r->thread, i, 1 + i % 4), *args = NULL, *out = NULL, *bind = NULL;
		char node[32];

		snprintf(node, sizeof(node), "n%02d", (i * 7 + r->thread) % NODES);
		if (pod && asprintf(&args, "{\"Pod\": %s, \"NodeNames\": [\"%s\", \"n00\"]}", pod, node) > 0) {
			gp_extender_filter(r->e, args, strlen(args), &out);
			free(out);
			gp_extender_prioritize(r->e, args, strlen(args), &out);
			free(out);
		}
		if (asprintf(&bind, "{\"PodName\": \"p%d-%d\", \"PodNamespace\": \"t\", \"PodUID\":"
				    " \"u%d-%d\", \"Node\": \"%s\"}", r->thread, i, r->thread, i, node) > 0) {
			gp_extender_bind(r->e, bind, strlen(bind), &out);
			r->bound += out && strstr(out, "\"Error\":\"\"");
			free(out);
		}
		free(bind);
		free(args);
		free(pod);
	}
	return NULL;
}

/* Events of pods of a thread of their own (thread 9), added and deleted,
 * and nodes delivered again (a heartbeat, and now and then a change). */
static void *informer_main(void *arg)
{
	struct race *r = arg;

	for (int i = 0; i < 2 * PODS_PER_THREAD; i++) {
		char *text = pod_text(9, i % 20, 1);
		json_t *pod = text ? json_loads(text, 0, NULL) : NULL;

		gp_extender_pod_ops.on_event(r->e, i % 3 == 2 ? GP_KUBE_DELETED : GP_KUBE_ADDED, pod);
		if (i % 25 == 0)
			gp_extender_node_ops.on_event(r->e, GP_KUBE_MODIFIED,
						      json_array_get(r->nodes, (size_t)i % NODES));
		json_decref(pod);
		free(text);
	}
	return NULL;
}

static int threads_run(void)
{
	struct gp_extender_options o = { .policy = "default", .tie_seed = 1 };
	struct race r[3] = { 0 };
	struct gp_extender_stats st;
	pthread_t t[3];
	char err[256];
	json_t *nodes = json_array();

	for (int n = 0; n < NODES; n++)
		json_array_append_new(nodes, json_pack("{s:{s:s+, s:{s:s}}, s:{s:{s:s, s:s}}}",
			"metadata", "name", "n", n < 10 ? "0" : "", "annotations",
			"gpupool.io/devices", "{\"devices\": [{\"uuid\": \"GPU-a\", \"model\": \"T4\","
			" \"memoryMiB\": 15360}, {\"uuid\": \"GPU-b\", \"model\": \"T4\", \"memoryMiB\":"
			" 15360}]}", "status", "allocatable", "cpu", "64", "memory", "256Gi"));
	for (int n = 0; n < NODES; n++) {
		char name[8];

		snprintf(name, sizeof(name), "n%02d", n);
		json_object_set_new(json_object_get(json_array_get(nodes, (size_t)n), "metadata"), "name",
				    json_string(name));
	}
	if (gp_extender_new(&o, &r[0].e, err, sizeof(err)) < 0)
		return 1;
	gp_extender_node_ops.on_sync(r[0].e, nodes);
	for (int i = 0; i < 3; i++) {
		r[i].e = r[0].e;
		r[i].nodes = nodes;
		r[i].thread = i;
		pthread_create(&t[i], NULL, i == 2 ? informer_main : scheduler_main, &r[i]);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	gp_extender_stats(r[0].e, &st);
	printf("threads: %u + %u bound, %u placed (%u of them held for a bind), %u nodes\n",
	       r[0].bound, r[1].bound, st.pods_placed, st.pods_reserved, st.nodes);
	gp_extender_free(r[0].e);
	json_decref(nodes);
	/* Each bind placed exactly one pod; the others placed are held by
	 * prioritize for a bind that went elsewhere and failed there. */
	return st.pods_placed == r[0].bound + r[1].bound + st.pods_reserved && st.nodes == NODES &&
	       r[0].bound + r[1].bound > PODS_PER_THREAD ? 0 : 1;
}

/* ---- --reasons: no '%' in any reason ---------------------------------------
 * kube-scheduler's event recorder takes a filter's reasons as a format
 * string (a reason "30% compute" shows as "30%!c(MISSING)ompute"): no
 * text the extender answers (FailedNodes, FailedAndUnresolvableNodes,
 * Error) may hold a '%', not even one that echoes a user's annotation.
 * Every kind is made here: each miss of the core for each shape of ask,
 * then filter and bind on a small cluster, for pods that are wrong in
 * every way the extender tells, in a namespace with quotas and one
 * without. */

static const char reasons_nodes[] =
	"[{\"metadata\": {\"name\": \"t4\", \"annotations\": {\"gpupool.io/devices\": \"{\\\"devices\\\":"
	" [{\\\"uuid\\\": \\\"GPU-t\\\", \\\"model\\\": \\\"Tesla T4\\\", \\\"memoryMiB\\\": 15360}]}\"}},"
	" \"status\": {\"allocatable\": {\"cpu\": \"4\", \"memory\": \"8Gi\"}}},"
	" {\"metadata\": {\"name\": \"a100\", \"annotations\": {\"gpupool.io/devices\": \"{\\\"devices\\\":"
	" [{\\\"uuid\\\": \\\"GPU-a\\\", \\\"model\\\": \\\"NVIDIA A100-SXM4-80GB\\\", \\\"memoryMiB\\\":"
	" 81920}]}\"}}, \"status\": {\"allocatable\": {\"cpu\": \"64\", \"memory\": \"256Gi\"}}},"
	" {\"metadata\": {\"name\": \"bare\"}, \"status\": {\"allocatable\": {\"cpu\": \"4\"}}}]";

static const char reasons_quotas[] =
	"{\"q\": {\"memoryMiB\": 4096, \"compute\": 50, \"models\": {\"A100\": {\"memoryMiB\": 1024,"
	" \"compute\": 10}}}}";

/* A pod in `ns` with these annotations (a JSON object's members), units
 * of gpupool.io/gpu (a JSON value) and host requests. */
static char *reasons_pod(int i, const char *ns, const char *annotations, const char *units,
			 const char *cpu, const char *memory)
{
	char *text = NULL;

	if (asprintf(&text, "{\"metadata\": {\"name\": \"p%d\", \"namespace\": \"%s\", \"uid\": \"u%d\","
			    " \"annotations\": {%s}}, \"spec\": {\"containers\": [{\"name\": \"m\","
			    " \"resources\": {\"requests\": {\"cpu\": \"%s\", \"memory\": \"%s\"},"
			    " \"limits\": {\"gpupool.io/gpu\": %s}}}]}}", i, ns, i, annotations, cpu,
		     memory, units) < 0)
		return NULL;
	return text;
}

static int percent_check(const char *what, const char *text)
{
	if (text && !strchr(text, '%'))
		return 0;
	fprintf(stderr, "FAIL %s: %s\n", what, text ? text : "(no answer)");
	return 1;
}

/* Every miss of the core, for a whole device, one share, and a gang. */
static int reasons_of_misses(void)
{
	static const struct ask shapes[] = {
		{ .req = { .devices = 1, .whole = true }, .compute_pct = 100, .memory_mib = 15360 },
		{ .req = { .devices = 1 }, .compute_pct = 30, .memory_mib = 4096 },
		{ .req = { .devices = 3 }, .compute_pct = 30, .memory_mib = 4096 },
	};
	int failed = 0;

	for (int r = GP_NOFIT_NONE; r <= GP_NOFIT_EMPTY; r++)
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			char why[REASON_MAX];

			gp_extender_nofit_text((enum gp_nofit)r, &shapes[s], why, sizeof(why));
			failed |= percent_check("a miss of the core", why);
		}
	return failed;
}

static int reasons_run(void)
{
	static const struct {
		const char *ns, *annotations, *units, *cpu, *memory;
	} pods[] = {
		{ "free", "\"gpupool.io/gpu-memory\": \"50%\"", "\"3\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/compute\": \"300%\"", "\"3\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/priority\": \"9%\"", "\"3\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/gpu-count\": \"2%\"", "\"3\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/isolation\": \"50%\"", "\"3\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/placement\": \"100%\"", "\"3\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/gpu-count\": \"2\"", "\"3\"", "1", "1Gi" },
		{ "free", "", "\"1.5\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/gpu-model\": \"H%100\"", "\"3\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/gpu-model\": \"A100\"", "\"3\"", "1", "1Gi" },
		{ "free", "", "\"30\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/gpu-memory\": \"100Gi\"", "\"3\"", "1", "1Gi" },
		/* fits nowhere, for a reason per node (filter names one node
		 * alone, with no reasons, for a pod that fits somewhere) */
		{ "free", "\"gpupool.io/gpu-memory\": \"100Gi\", \"gpupool.io/gpu-model\": \"A100\"",
		  "\"3\"", "1", "1Gi" },
		{ "free", "", "\"3\"", "100", "1Gi" },
		{ "free", "", "\"3\"", "1", "1Ti" },
		{ "free", "\"gpupool.io/gpu-count\": \"2\"", "\"20\"", "1", "1Gi" },
		{ "free", "\"gpupool.io/gpu-count\": \"2\"", "\"6\"", "1", "1Gi" },
		{ "q", "\"gpupool.io/gpu-memory\": \"8Gi\"", "\"5\"", "1", "1Gi" },
		{ "q", "\"gpupool.io/gpu-memory\": \"2Gi\", \"gpupool.io/gpu-model\": \"A100\"", "\"3\"",
		  "1", "1Gi" },
	};
	static const char unseen[] =
		"{\"PodName\": \"x%\", \"PodNamespace\": \"n\", \"PodUID\": \"u%\", \"Node\": \"t4\"}";
	struct quotas q = { .all = json_loads(reasons_quotas, 0, NULL) };
	struct gp_extender_options o = { .policy = "default", .tie_seed = 1, .quota = quota_of,
					 .quota_ctx = &q };
	json_t *nodes = json_loads(reasons_nodes, 0, NULL), *none = json_array();
	struct gp_extender *e;
	char err[256], *out;
	int failed = reasons_of_misses();

	if (!q.all || !nodes || gp_extender_new(&o, &e, err, sizeof(err)) < 0)
		return 1;
	gp_extender_node_ops.on_sync(e, nodes);
	gp_extender_pod_ops.on_sync(e, none);
	for (int i = 0; i < (int)(sizeof(pods) / sizeof(pods[0])); i++) {
		char *pod = reasons_pod(i, pods[i].ns, pods[i].annotations, pods[i].units, pods[i].cpu,
					pods[i].memory), *args = NULL, *bind = NULL;

		if (pod && asprintf(&args, "{\"Pod\": %s, \"NodeNames\": [\"t4\", \"a100\", \"bare\"]}",
				    pod) > 0) {
			gp_extender_filter(e, args, strlen(args), &out);
			failed |= percent_check(pod, out);
			free(out);
		}
		if (asprintf(&bind, "{\"PodName\": \"p%d\", \"PodNamespace\": \"%s\", \"PodUID\": \"u%d\","
				    " \"Node\": \"%s\"}", i, pods[i].ns, i, i % 2 ? "t4" : "nowhere") > 0) {
			gp_extender_bind(e, bind, strlen(bind), &out);
			failed |= percent_check(bind, out);
			free(out);
		}
		free(bind);
		free(args);
		free(pod);
	}
	gp_extender_bind(e, unseen, strlen(unseen), &out);
	failed |= percent_check("bind of a pod never seen", out);
	free(out);
	gp_extender_filter(e, "{\"Pod\": 5%}", strlen("{\"Pod\": 5%}"), &out);
	failed |= percent_check("filter of no ExtenderArgs", out);
	free(out);
	printf("%s reasons without '%%'\n", failed ? "FAIL" : "ok  ");
	gp_extender_free(e);
	json_decref(nodes);
	json_decref(none);
	json_decref(q.all);
	return failed;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc == 2 && strcmp(argv[1], "--threads") == 0)
		return threads_run();
	if (argc == 2 && strcmp(argv[1], "--reasons") == 0)
		return reasons_run();
	if (argc < 2) {
		fprintf(stderr, "usage: test-extender CASE-DIR... | --threads | --reasons\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		failed |= case_run(argv[i]);
	return failed;
}
