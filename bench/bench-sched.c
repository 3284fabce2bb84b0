/* bench-sched.c — how fast the core places work on a large cluster.
 *
 * Builds N nodes of 8 devices (nine in ten with 144 cores and 640 GiB, one
 * in ten with 192 cores and 1 TiB: 18 to 24 cores per device, so that the
 * devices, not the CPUs, fill up first — the trace asks about 14 per GPU),
 * draws requests uniformly from a trace's pods (default: the openb default
 * trace) and places them one by one until `--fill` of the device capacity
 * is allocated or placements keep failing. Reports, for the default policy
 * and for binpack on the same request sequence, decisions per second and
 * latency percentiles of one decision (place + commit).
 *
 * slices_cost_ratio compares the default policy's mean decision cost when
 * each device may hold 32 slices (tasks) with the cost when it may hold 1,
 * as a slice-counting scheduler is configured (HAMi's split count). Both
 * runs see the same request stream and make the same number of decisions:
 * as many as the 32-slice run needed to reach the fill target.
 *
 * mixed_vs_nvidia_cost_ratio compares the default policy's mean decision
 * cost on a cluster of the same size from the generated mixed trace (six
 * vendors, MIG and vNPU cards, pods bound to vendor families: sim/mixed.h)
 * with the NVIDIA-only one, same run; target (issue 13) at most 1.5 at
 * 10,000 nodes or more (mixed_target_met: null on smaller clusters), and
 * the bench exits 1 when it is missed.
 *
 * `gpupool bench sched-scale` runs the same fill (default policy and
 * binpack, 32 slices) at 1,000, 10,000, 50,000 and 100,000 nodes (or
 * --nodes LIST) and reports how the cost of a decision grows with the
 * nodes: scale_cost_ratio_100k_vs_1k is the mean time per decision of the
 * default policy at 100,000 nodes over that at 1,000, same run. Targets
 * (issue 11): at least 30,000 decisions/s at 100,000 nodes and a ratio of
 * at most 3; exits 1 when one is missed. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/csvfile.h"
#include "base/rng.h"
#include "bench/bench.h"
#include "cli/commands.h"
#include "sim/mixed.h"
#include "sim/trace.h"

#define DEFAULT_PODS "data/openb/openb_pod_list_default.csv"
#define GIVE_UP_AFTER 2000      /* consecutive failed placements */
#define SIZES_MAX 8
#define TARGET_RATE_100K 30000  /* default policy, decisions/s */
#define TARGET_RATIO_100K 3.0   /* time per decision, 100,000 vs 1,000 nodes */
#define TARGET_RATIO_MIXED 1.5  /* time per decision, mixed vendors vs NVIDIA only */

struct bench_options {
	unsigned long nodes;    /* the first of sizes */
	unsigned long size[SIZES_MAX];
	int sizes;
	double fill;
	const char *pods;
	unsigned long long seed;
	unsigned repeat;
	bool json;
};

struct run_result {
	const char *policy;
	unsigned max_tasks;
	bool mixed;             /* on the mixed trace's cluster and pods (sim/mixed.h) */
	size_t budget;          /* decisions to make; 0: until the fill target */
	size_t decisions, placed;
	double seconds, p50_us, p99_us, p999_us, fill_pct;
	unsigned classes, buckets;
	size_t bytes;           /* the cluster's, after the fill */
	double candidates;      /* nodes scored, summed over decisions */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int build_cluster(const struct gp_trace *t, unsigned long nodes,
			 unsigned max_tasks, struct gp_cluster **ret)
{
	struct gp_cluster *c;
	int r = gp_cluster_new(7, &c), g2, g3;

	if (r < 0)
		return r;
	g2 = gp_cluster_model_id(c, "G2", true);
	g3 = gp_cluster_model_id(c, "G3", true);
	for (int i = 0; i < t->models; i++)
		gp_cluster_model_id(c, t->model[i], true);
	for (unsigned long i = 0; i < nodes && r >= 0; i++) {
		bool big = i % 10 == 9;
		struct gp_node_spec spec = {
			.cpu_milli = big ? 192000 : 144000,
			.mem_mib = big ? 1048576 : 655360,
			.devices = 8,
		};

		for (int d = 0; d < 8; d++)
			spec.device[d] = (struct gp_device_spec){
				.model = (uint8_t)(big ? g3 : g2), .mem_mib = 81920,
				.overcommit = 1000, .max_tasks = (uint16_t)max_tasks,
				.healthy = true, .nvlink = 1,
			};
		r = gp_cluster_add_node(c, &spec, NULL);
	}
	if (r < 0) {
		gp_cluster_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* The mixed trace's nodes, each device holding up to max_tasks slices. */
static int build_mixed_cluster(const struct gp_trace *t, unsigned max_tasks,
			       struct gp_cluster **ret)
{
	struct gp_cluster *c;
	int r = gp_cluster_new(7, &c);

	for (int i = 0; r >= 0 && i < t->models; i++)
		r = gp_cluster_model_id(c, t->model[i], true);
	for (size_t i = 0; i < t->nodes && r >= 0; i++) {
		struct gp_node_spec spec = t->node[i];

		for (int d = 0; d < spec.devices; d++)
			spec.device[d].max_tasks = (uint16_t)max_tasks;
		r = gp_cluster_add_node(c, &spec, NULL);
	}
	if (r < 0) {
		gp_cluster_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double percentile(double *sorted, size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n);

	return n ? sorted[i ? i - 1 : 0] : 0;
}

/* Requests with a device share; CPU-only pods go along (the trace mix). */
static int run(const struct gp_trace *t, const struct gp_workload *w,
	       const struct bench_options *o, struct run_result *res)
{
	struct gp_policy_config pc = { .seed = o->seed, .target = w };
	double capacity = (double)o->nodes * 8 * GP_COMPUTE_WHOLE, used = 0;
	size_t cap = 1u << 16, fails = 0;
	double *lat = malloc(cap * sizeof(*lat));
	struct gp_cluster *c = NULL;
	struct gp_policy *p = NULL;
	struct gp_rng rng;
	int r;

	if (!lat)
		return -ENOMEM;
	r = res->mixed ? build_mixed_cluster(t, res->max_tasks, &c)
		       : build_cluster(t, o->nodes, res->max_tasks, &c);
	if (r == 0)
		r = gp_policy_new(res->policy, &pc, &p);
	gp_rng_init(&rng, o->seed);
	while (r == 0 && (res->budget ? res->decisions < res->budget
				      : used < o->fill * capacity && fails < GIVE_UP_AFTER)) {
		struct gp_request req = t->pod[gp_rng_below(&rng, t->pods)];
		struct gp_decision d;
		double start = now();

		r = gp_place(c, p, &req, &d);
		if (r == 0 && d.placed)
			r = gp_cluster_commit(c, &req, &d.where);
		if (res->decisions == cap) {
			double *grown = realloc(lat, 2 * cap * sizeof(*lat));

			if (!grown) {
				r = -ENOMEM;
				break;
			}
			lat = grown;
			cap *= 2;
		}
		lat[res->decisions++] = now() - start;
		res->candidates += d.candidates;
		fails = d.placed ? 0 : fails + 1;
		if (d.placed) {
			used += (double)gp_request_gpu_milli(&req);
			res->placed++;
		}
	}
	if (r == 0) {
		for (size_t i = 0; i < res->decisions; i++)
			res->seconds += lat[i];
		qsort(lat, res->decisions, sizeof(*lat), cmp_double);
		res->p50_us = 1e6 * percentile(lat, res->decisions, 0.50);
		res->p99_us = 1e6 * percentile(lat, res->decisions, 0.99);
		res->p999_us = 1e6 * percentile(lat, res->decisions, 0.999);
		res->fill_pct = 100.0 * used / capacity;
		res->classes = gp_cluster_class_count(c);
		res->bytes = gp_cluster_bytes(c);
		res->buckets = gp_cluster_bucket_count(c);
	}
	gp_policy_free(p);
	gp_cluster_free(c);
	free(lat);
	return r;
}

static json_t *result_json(const struct run_result *r)
{
	return json_pack("{s:s, s:s, s:i, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:i, s:i, s:f}",
			 "policy", r->policy, "cluster", r->mixed ? "mixed" : "nvidia",
			 "slices_per_device", (int)r->max_tasks,
			 "decisions", (json_int_t)r->decisions,
			 "placed", (json_int_t)r->placed,
			 "decisions_per_sec", (json_int_t)(r->decisions / r->seconds),
			 "p50_us", round(r->p50_us * 10) / 10,
			 "p99_us", round(r->p99_us * 10) / 10,
			 "p999_us", round(r->p999_us * 10) / 10,
			 "fill_pct", round(r->fill_pct * 100) / 100,
			 "classes_at_end", (int)r->classes,
			 "buckets_at_end", (int)r->buckets,
			 "candidates_per_decision",
			 round(r->candidates / (double)r->decisions * 10) / 10);
}

/* "1000,10000,…" into o->size; o->nodes is the first. */
static int parse_sizes(const char *text, struct bench_options *o)
{
	const char *p = text;
	char *end;

	o->sizes = 0;
	do {
		unsigned long n = strtoul(p, &end, 10);

		if (end == p || n == 0 || n > 1000000 || o->sizes == SIZES_MAX ||
		    (*end && *end != ','))
			return -EINVAL;
		o->size[o->sizes++] = n;
		p = end + 1;
	} while (*end == ',');
	o->nodes = o->size[0];
	return 0;
}

static void usage(bool scale)
{
	if (scale)
		printf("usage: gpupool bench sched-scale [--nodes LIST] [--fill F] [--pods FILE]\n"
		       "                                [--seed S] [--repeat R] [--json]\n"
		       "The fill of `gpupool bench sched` at each cluster size in LIST (default\n"
		       "1000,10000,50000,100000), default policy and binpack, each R times\n"
		       "(default 2), keeping the least disturbed run; reports decisions/s, p99,\n"
		       "bytes per node and the growth of a decision's cost with the nodes.\n");
	else
		printf("usage: gpupool bench sched [--nodes N] [--fill F] [--pods FILE] [--seed S]\n"
		       "                          [--repeat R] [--json]\n"
		       "Places requests drawn from FILE (default %s)\n"
		       "on N nodes of 8 devices (default 10000) until F of the devices are\n"
		       "allocated (default 0.95); default policy vs binpack, 32 vs 1 slices;\n"
		       "each R times (default 3), keeping the least disturbed run.\n",
		       DEFAULT_PODS);
}

static int parse(int argc, char **argv, bool scale, struct bench_options *o)
{
	const char *name = scale ? "sched-scale" : "sched";
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "fill", required_argument, NULL, 'f' },
		{ "pods", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c;

	*o = (struct bench_options){ .nodes = 10000, .fill = 0.95, .size = { 10000 },
				     .sizes = 1, .pods = DEFAULT_PODS, .seed = 42,
				     .repeat = 3 };
	if (scale) {
		parse_sizes("1000,10000,50000,100000", o);
		o->repeat = 2;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_sizes(optarg, o) < 0) {
				fprintf(stderr, "gpupool bench %s: --nodes must be 1 to 1000000, or a comma list of up to %d such numbers\n",
					name, SIZES_MAX);
				return -EINVAL;
			}
			break;
		case 'f':
			o->fill = strtod(optarg, &end);
			if (*end || !(o->fill > 0 && o->fill <= 1)) {
				fprintf(stderr, "gpupool bench %s: --fill must be in (0, 1]\n", name);
				return -EINVAL;
			}
			break;
		case 'p': o->pods = optarg; break;
		case 's': o->seed = strtoull(optarg, NULL, 10); break;
		case 'r':
			o->repeat = (unsigned)strtoul(optarg, &end, 10);
			if (*end || o->repeat == 0 || o->repeat > 100) {
				fprintf(stderr, "gpupool bench %s: --repeat must be 1 to 100\n", name);
				return -EINVAL;
			}
			break;
		case 'j': o->json = true; break;
		case 'h':
			usage(scale);
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (!scale && o->sizes > 1) {
		fprintf(stderr, "gpupool bench sched: --nodes takes one number here; `gpupool bench sched-scale` takes a list\n");
		return -EINVAL;
	}
	return 0;
}

/* Runs every configuration `repeat` times, interleaved so that machine
 * noise hits all of them alike, and keeps each one's least disturbed run
 * (lowest total time). The 1-slice run makes as many decisions as the
 * first run did to reach the fill target. */
static int run_all(const struct gp_trace *t, const struct gp_workload *w,
		   const struct gp_trace *mt, const struct gp_workload *mw,
		   const struct bench_options *o, struct run_result *best, size_t n)
{
	for (unsigned rep = 0; rep < o->repeat; rep++)
		for (size_t i = 0; i < n; i++) {
			struct run_result r = { .policy = best[i].policy,
						.max_tasks = best[i].max_tasks,
						.mixed = best[i].mixed };
			int err;

			if (r.max_tasks == 1)
				r.budget = best[0].decisions;
			err = r.mixed ? run(mt, mw, o, &r) : run(t, w, o, &r);
			if (err < 0)
				return err;
			if (rep == 0 || r.seconds < best[i].seconds)
				best[i] = r;
		}
	return 0;
}

/* The trace's pods and the target workload made from them. */
static int load(const struct bench_options *o, struct gp_trace *t,
		struct gp_workload **ret_w)
{
	char err[GP_ERR_MAX];
	int r = gp_trace_load_pods(t, o->pods, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "gpupool bench sched: %s (pass --pods FILE)\n", err);
		return r;
	}
	r = gp_workload_from_requests(t->pod, t->pods, 0.95, ret_w);
	if (r < 0)
		gp_trace_release(t);
	return r;
}

/* The mixed trace of o->nodes nodes (8 pods a node) and its workload. */
static int load_mixed(const struct bench_options *o, struct gp_trace *t,
		      struct gp_workload **ret_w)
{
	struct gp_mixed_options m = { .nodes = o->nodes, .pods = 8 * o->nodes, .seed = o->seed };
	char err[GP_ERR_MAX];
	int r = gp_mixed_generate(&m, t, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "gpupool bench sched: %s\n", err);
		return r;
	}
	r = gp_workload_from_requests(t->pod, t->pods, 0.95, ret_w);
	if (r < 0)
		gp_trace_release(t);
	return r;
}

int gp_bench_sched(int argc, char **argv)
{
	struct run_result runs[] = {
		{ .policy = "default", .max_tasks = 32 },
		{ .policy = "binpack", .max_tasks = 32 },
		{ .policy = "default", .max_tasks = 1 },
		{ .policy = "default", .max_tasks = 32, .mixed = true },
	};
	struct bench_options o;
	struct gp_trace t = { 0 }, mt = { 0 };
	struct gp_workload *w = NULL, *mw = NULL;
	int r = parse(argc, argv, false, &o), status = GP_EXIT_FAIL;

	if (r != 0)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	if (load(&o, &t, &w) < 0 || load_mixed(&o, &mt, &mw) < 0)
		goto out;
	r = run_all(&t, w, &mt, mw, &o, runs, sizeof(runs) / sizeof(runs[0]));
	if (r < 0) {
		fprintf(stderr, "gpupool bench sched: %s\n", strerror(-r));
		goto out;
	}
	double cost_32 = runs[0].seconds / runs[0].decisions;
	double cost_1 = runs[2].seconds / runs[2].decisions;
	double cost_mixed = runs[3].seconds / runs[3].decisions;
	/* The target is the issue's, at 10,000 nodes or more; a small cluster's
	 * run is too short to judge (caches still cold): reported only. */
	bool judged = o.nodes >= 10000;
	bool mixed_met = !judged || cost_mixed / cost_32 <= TARGET_RATIO_MIXED;
	json_t *out = json_pack("{s:s, s:i, s:i, s:f, s:i, s:I, s:f, s:f, s:f, s:I, s:f, s:f, s:o, s:o}",
		"bench", "sched", "nodes", (int)o.nodes, "devices_per_node", 8,
		"fill_target", o.fill, "repeat", (int)o.repeat,
		"decisions_per_sec", (json_int_t)(runs[0].decisions / runs[0].seconds),
		"p99_us", round(runs[0].p99_us * 10) / 10,
		"slices_cost_ratio", round(cost_32 / cost_1 * 1000) / 1000,
		"default_vs_binpack_cost_ratio",
		round(cost_32 / (runs[1].seconds / runs[1].decisions) * 1000) / 1000,
		"mixed_decisions_per_sec", (json_int_t)(runs[3].decisions / runs[3].seconds),
		"mixed_fill_pct", round(runs[3].fill_pct * 100) / 100,
		"mixed_vs_nvidia_cost_ratio", round(cost_mixed / cost_32 * 1000) / 1000,
		"mixed_target_met", judged ? json_boolean(mixed_met) : json_null(),
		"runs", json_pack("[o, o, o, o]", result_json(&runs[0]), result_json(&runs[1]),
				  result_json(&runs[2]), result_json(&runs[3])));

	json_dumpf(out, stdout, o.json ? JSON_COMPACT : JSON_INDENT(2));
	putchar('\n');
	json_decref(out);
	if (!mixed_met)
		fprintf(stderr, "gpupool bench sched: a decision on the mixed cluster costs %.2f x the NVIDIA-only one (target %.1f)\n",
			cost_mixed / cost_32, TARGET_RATIO_MIXED);
	status = mixed_met ? GP_EXIT_OK : GP_EXIT_FAIL;
out:
	gp_workload_free(w);
	gp_workload_free(mw);
	gp_trace_release(&t);
	gp_trace_release(&mt);
	return status;
}

/* ---- sched-scale ------------------------------------------------------ */

static double cost_per_decision(const struct run_result *r)
{
	return r->seconds / (double)r->decisions;
}

/* One cluster size: default and binpack, the bytes the default's cluster
 * held per node. */
static json_t *size_json(unsigned long nodes, const struct run_result *runs)
{
	return json_pack("{s:I, s:I, s:i, s:[o, o]}", "nodes", (json_int_t)nodes,
			 "bytes_per_node", (json_int_t)(runs[0].bytes / nodes),
			 "classes_at_end", (int)runs[0].classes, "runs",
			 result_json(&runs[0]), result_json(&runs[1]));
}

/* The figures of the sizes named in issue 11, and whether the targets are
 * met; only when the sizes run were 1,000 … 100,000. */
static bool scale_verdict(json_t *out, const struct bench_options *o,
			  const struct run_result (*runs)[2])
{
	int last = o->sizes - 1;
	double ratio = cost_per_decision(&runs[last][0]) / cost_per_decision(&runs[0][0]);
	double rate = runs[last][0].decisions / runs[last][0].seconds;
	bool met = rate >= TARGET_RATE_100K && ratio <= TARGET_RATIO_100K;

	json_object_set_new(out, "scale_cost_ratio_largest_vs_smallest",
			    json_real(round(ratio * 1000) / 1000));
	if (o->size[0] != 1000 || o->size[last] != 100000)
		return true;
	json_object_set_new(out, "default_decisions_per_sec_100k", json_integer((json_int_t)rate));
	json_object_set_new(out, "default_p99_us_100k",
			    json_real(round(runs[last][0].p99_us * 10) / 10));
	json_object_set_new(out, "binpack_decisions_per_sec_100k",
			    json_integer((json_int_t)(runs[last][1].decisions / runs[last][1].seconds)));
	json_object_set_new(out, "scale_cost_ratio_100k_vs_1k", json_real(round(ratio * 1000) / 1000));
	json_object_set_new(out, "targets",
			    json_pack("{s:i, s:f}", "default_decisions_per_sec_100k_min",
				      TARGET_RATE_100K, "scale_cost_ratio_100k_vs_1k_max",
				      TARGET_RATIO_100K));
	json_object_set_new(out, "targets_met", json_boolean(met));
	return met;
}

int gp_bench_sched_scale(int argc, char **argv)
{
	struct run_result runs[SIZES_MAX][2];
	struct bench_options o;
	struct gp_trace t = { 0 };
	struct gp_workload *w = NULL;
	json_t *out, *sizes;
	bool met;
	int r = parse(argc, argv, true, &o);

	if (r != 0)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	if (load(&o, &t, &w) < 0)
		return GP_EXIT_FAIL;
	sizes = json_array();
	for (int i = 0; i < o.sizes && r == 0; i++) {
		struct bench_options one = o;

		one.nodes = o.size[i];
		runs[i][0] = (struct run_result){ .policy = "default", .max_tasks = 32 };
		runs[i][1] = (struct run_result){ .policy = "binpack", .max_tasks = 32 };
		r = run_all(&t, w, NULL, NULL, &one, runs[i], 2);
		if (r == 0)
			json_array_append_new(sizes, size_json(o.size[i], runs[i]));
	}
	gp_workload_free(w);
	gp_trace_release(&t);
	if (r < 0) {
		fprintf(stderr, "gpupool bench sched-scale: %s\n", strerror(-r));
		json_decref(sizes);
		return GP_EXIT_FAIL;
	}
	out = json_pack("{s:s, s:i, s:f, s:i, s:o}", "bench", "sched-scale",
			"devices_per_node", 8, "fill_target", o.fill, "repeat", (int)o.repeat,
			"sizes", sizes);
	met = scale_verdict(out, &o, runs);
	json_dumpf(out, stdout, o.json ? JSON_COMPACT : JSON_INDENT(2));
	putchar('\n');
	json_decref(out);
	return met ? GP_EXIT_OK : GP_EXIT_FAIL;
}
