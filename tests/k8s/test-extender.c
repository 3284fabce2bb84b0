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
 * delivers, answered with how many pods hold a placement), in the order of
 * N, is a request whose answer must equal N-VERB.expected.json (as JSON:
 * key order and spacing do not matter). Bind runs without an API server: it commits in memory only.
 * With GP_GOLDEN_WRITE=1 the answers are written as the expected files
 * instead (to make a new case; read them before committing). Exit 0 when
 * every case passed, 1 with each difference printed. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	*ret = (struct gp_sched_tenant){ .mem_guaranteed_mib = num(t, "memoryMiB"),
					 .mem_borrowable_mib = num(t, "borrowMemoryMiB"),
					 .compute_guaranteed_pct = num(t, "compute"),
					 .compute_borrowable_pct = num(t, "borrowCompute"),
					 .model_quota = q->model };
	json_object_foreach((json_t *)json_object_get(t, "models"), name, m) {
		struct gp_sched_model_quota *mq = &q->model[ret->model_quotas++];

		*mq = (struct gp_sched_model_quota){ .mem_guaranteed_mib = num(m, "memoryMiB"),
						     .compute_guaranteed_pct = num(m, "compute") };
		snprintf(mq->name, sizeof(mq->name), "%s", name);
	}
	return 0;
}

static int step_names(const char *dir, char ***ret, int *ret_n)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort), k = 0;
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

/* Runs the step's verb on the request's text; its answer parsed in *ret
 * (NULL when it is not JSON: a failure). */
static int run_verb(struct gp_extender *e, const char *file, const char *req, json_t **ret)
{
	size_t len = strlen(req);
	char *text = NULL;
	int r = -EINVAL;

	if (strstr(file, "-event."))
		r = informer_event(e, req, &text);
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

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: test-extender CASE-DIR...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		failed |= case_run(argv[i]);
	return failed;
}
