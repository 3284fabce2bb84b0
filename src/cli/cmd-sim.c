/* cmd-sim.c — `gpupool sim`: replays a trace under placement policies and
 * reports GPU allocation as in the openb protocol (sim/replay.h); with
 * --history, the pool's own tasks instead (cmd-sim-history.c). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/csvfile.h"
#include "cli/commands.h"
#include "core/policy.h"
#include "base/parse.h"
#include "sim/mixed.h"
#include "sim/published.h"
#include "sim/replay.h"

#define SEEDS_MAX 1000
#define POLICIES_MAX 32

struct sim_options {
	const char *nodes, *pods, *policy, *devices;
	const char *generate_mixed;     /* write the mixed trace there, then stop */
	unsigned mixed_nodes, mixed_pods;
	unsigned long long seed[SEEDS_MAX];
	int seeds;
	double inflate;
	bool json, exhaustive;
};

static void sim_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool sim --nodes FILE --pods FILE [OPTIONS]\n"
		"       gpupool sim --generate-mixed DIR [--mixed-nodes N] [--mixed-pods M]\n"
		"                   [--seeds S]\n"
		"       gpupool sim --history [OPTIONS]   the pool's own tasks replayed in\n"
		"                   time under a variant (gpupool sim --history --help)\n"
		"\n"
		"Replays an openb-style trace: shuffle the pods per seed, inflate them\n"
		"to --inflate x the cluster's GPUs, place them in order (nothing departs,\n"
		"no retry), and report GPU allocated %% when arrived = 100 %% and at the end.\n"
		"\n"
		"  --nodes FILE     node list (sn,cpu_milli,memory_mib,gpu,model)\n"
		"  --pods FILE      pod list (11- or 5-column openb layout)\n"
		"  --policy NAMES   a policy, a comma list, or \"all\" (default: default);\n"
		"                   `gpupool policies` lists them\n"
		"  --devices NAME   override the device-level choice: first, bestfit,\n"
		"                   spread, random\n"
		"  --seeds LIST     e.g. 42-51 or 1,2,3 (default: 42-51)\n"
		"  --inflate X      arrived GPU demand to reach, x cluster GPUs (default 1.3)\n"
		"  --exhaustive     score every node that fits, not two per index bucket\n"
		"                   (the exact placement; slower on large clusters)\n"
		"  --json           one JSON object per policy per line\n"
		"  --generate-mixed DIR  write a generated trace of a heterogeneous pool\n"
		"                   (six vendors, MIG and vNPU cards: docs/scheduling.md)\n"
		"                   as DIR/nodes.csv and DIR/pods.csv, and stop; sized by\n"
		"                   --mixed-nodes (default 1000) and --mixed-pods (default\n"
		"                   8 per node), seeded by the first of --seeds\n");
}

int gp_parse_seeds(const char *text, unsigned long long *seeds, int max)
{
	const char *p = text;
	int n = 0;

	while (*p) {
		char *end;
		unsigned long long lo, hi;

		errno = 0;
		lo = strtoull(p, &end, 10);
		if (end == p || errno || *p == '-')
			return -1;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtoull(p, &end, 10);
			if (end == p || errno || hi < lo)
				return -1;
		}
		for (unsigned long long s = lo; s <= hi; s++) {
			if (n == max)
				return -1;
			seeds[n++] = s;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return n > 0 ? n : -1;
}

static int parse_args(int argc, char **argv, struct sim_options *o)
{
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "pods", required_argument, NULL, 'p' },
		{ "policy", required_argument, NULL, 'P' },
		{ "devices", required_argument, NULL, 'd' },
		{ "seeds", required_argument, NULL, 's' },
		{ "inflate", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "exhaustive", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ "generate-mixed", required_argument, NULL, 'g' },
		{ "mixed-nodes", required_argument, NULL, 'N' },
		{ "mixed-pods", required_argument, NULL, 'M' },
		{ 0 },
	};
	char *end;
	int c;

	*o = (struct sim_options){ .policy = "default", .inflate = 1.3 };
	o->seeds = gp_parse_seeds("42-51", o->seed, SEEDS_MAX);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->nodes = optarg; break;
		case 'p': o->pods = optarg; break;
		case 'P': o->policy = optarg; break;
		case 'd': o->devices = optarg; break;
		case 'j': o->json = true; break;
		case 'x': o->exhaustive = true; break;
		case 'g': o->generate_mixed = optarg; break;
		case 'N':
		case 'M':
			if (!gp_parse_uint(optarg, 1, 1000000, NULL,
					   c == 'N' ? &o->mixed_nodes : &o->mixed_pods)) {
				fprintf(stderr, "gpupool sim: --%s \"%s\" must be a whole number from 1 to 1000000\n",
					c == 'N' ? "mixed-nodes" : "mixed-pods", optarg);
				return -EINVAL;
			}
			break;
		case 's':
			o->seeds = gp_parse_seeds(optarg, o->seed, SEEDS_MAX);
			if (o->seeds < 0) {
				fprintf(stderr, "gpupool sim: --seeds \"%s\" is not a list like 42-51 or 1,2,3 (at most %d seeds)\n",
					optarg, SEEDS_MAX);
				return -EINVAL;
			}
			break;
		case 'i':
			o->inflate = strtod(optarg, &end);
			if (*end || !(o->inflate >= 1.0 && o->inflate <= 10.0)) {
				fprintf(stderr, "gpupool sim: --inflate \"%s\" must be a number from 1 to 10\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'h': sim_usage(stdout); return 1;
		default: sim_usage(stderr); return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpupool sim: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->generate_mixed && (!o->nodes || !o->pods)) {
		fprintf(stderr, "gpupool sim: both --nodes and --pods are required\n");
		sim_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* Splits the --policy value into names; "all" means every policy. */
static int policy_list(const char *spec, char names[][GP_NAME_MAX], int max)
{
	int n = 0;

	if (!strcmp(spec, "all")) {
		for (size_t i = 0; gp_policy_name_at(i) && n < max; i++)
			snprintf(names[n++], GP_NAME_MAX, "%s", gp_policy_name_at(i));
		return n;
	}
	for (const char *p = spec; *p && n < max;) {
		size_t len = strcspn(p, ",");
		bool known = false;

		snprintf(names[n], GP_NAME_MAX, "%.*s", (int)len, p);
		for (size_t i = 0; gp_policy_name_at(i); i++)
			known |= !strcmp(gp_policy_name_at(i), names[n]);
		if (!known) {
			fprintf(stderr, "gpupool sim: unknown policy \"%s\"; `gpupool policies` lists them\n",
				names[n]);
			return -ENOENT;
		}
		n++;
		p += len + (p[len] == ',');
	}
	return n;
}

struct summary {
	const char *policy;
	double at_100, at_target, seconds;
	size_t decisions;
	struct gp_replay_result *per_seed;
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run_policy(const struct gp_trace *t, const struct gp_workload *w,
		      const struct sim_options *o, struct summary *s)
{
	for (int i = 0; i < o->seeds; i++) {
		struct gp_replay_config cfg = { .policy = s->policy,
						.devices = o->devices,
						.inflate = o->inflate,
						.seed = o->seed[i],
						.exhaustive = o->exhaustive };
		struct gp_replay_result *r = &s->per_seed[i];
		double start = now_seconds();
		int err = gp_replay_run(t, w, &cfg, r);

		if (err < 0) {
			fprintf(stderr, "gpupool sim: policy %s, seed %llu: %s\n",
				s->policy, o->seed[i], strerror(-err));
			return err;
		}
		r->seconds = now_seconds() - start;
		s->at_100 += r->alloc_pct_at_100 / o->seeds;
		s->at_target += r->alloc_pct_at_target / o->seeds;
		s->seconds += r->seconds;
		s->decisions += r->pods;
	}
	return 0;
}

static double round2(double x)
{
	return round(x * 100.0) / 100.0;
}

static void print_json(const struct sim_options *o, const char *trace,
		       const struct summary *s)
{
	char key[32];
	int target = (int)lround(o->inflate * 100);
	json_t *obj = json_object(), *seeds = json_array(), *per = json_array();
	double pub_100, pub_130;

	snprintf(key, sizeof(key), "alloc_pct_at_%d", target);
	json_object_set_new(obj, "policy", json_string(s->policy));
	if (trace)
		json_object_set_new(obj, "trace", json_string(trace));
	for (int i = 0; i < o->seeds; i++) {
		const struct gp_replay_result *r = &s->per_seed[i];
		json_t *one = json_object();

		json_array_append_new(seeds, json_integer((json_int_t)o->seed[i]));
		json_object_set_new(one, "seed", json_integer((json_int_t)r->seed));
		json_object_set_new(one, "alloc_pct_at_100", json_real(round2(r->alloc_pct_at_100)));
		json_object_set_new(one, key, json_real(round2(r->alloc_pct_at_target)));
		json_object_set_new(one, "pods", json_integer((json_int_t)r->pods));
		json_object_set_new(one, "failed", json_integer((json_int_t)r->failed));
		json_array_append_new(per, one);
	}
	json_object_set_new(obj, "seeds", seeds);
	json_object_set_new(obj, "inflate", json_real(o->inflate));
	json_object_set_new(obj, "alloc_pct_at_100", json_real(round2(s->at_100)));
	json_object_set_new(obj, key, json_real(round2(s->at_target)));
	if (trace && target == 130 && gp_published_alloc(trace, s->policy, &pub_100, &pub_130)) {
		json_t *pub = json_object();

		json_object_set_new(pub, "alloc_pct_at_100", json_real(pub_100));
		json_object_set_new(pub, "alloc_pct_at_130", json_real(pub_130));
		json_object_set_new(obj, "published", pub);
	}
	json_object_set_new(obj, "decisions_per_sec",
			    json_integer((json_int_t)(s->decisions / s->seconds)));
	json_object_set_new(obj, "per_seed", per);
	json_dumpf(obj, stdout, JSON_COMPACT | JSON_REAL_PRECISION(6));
	putchar('\n');
	fflush(stdout);
	json_decref(obj);
}

static void print_header(const struct sim_options *o, const char *trace)
{
	int target = (int)lround(o->inflate * 100);

	printf("trace %s, %d seed(s), inflated to %d %% of cluster GPUs\n\n",
	       trace ? trace : o->pods, o->seeds, target);
	char at_target[16];

	snprintf(at_target, sizeof(at_target), "@%d%%", target);
	printf("%-14s %9s %9s   %9s %9s %12s\n", "policy", "@100%", at_target,
	       "paper@100", "paper@130", "decisions/s");
}

static void print_row(const char *trace, const struct summary *s)
{
	double pub_100, pub_130;

	printf("%-14s %9.2f %9.2f   ", s->policy, s->at_100, s->at_target);
	if (trace && gp_published_alloc(trace, s->policy, &pub_100, &pub_130))
		printf("%9.2f %9.2f", pub_100, pub_130);
	else
		printf("%9s %9s", "-", "-");
	printf(" %12.0f\n", s->decisions / s->seconds);
	fflush(stdout);
}

static int load_trace(const struct sim_options *o, struct gp_trace *t,
		      struct gp_workload **ret_w)
{
	char err[GP_ERR_MAX];
	int r;

	r = gp_trace_load_nodes(t, o->nodes, err, sizeof(err));
	if (r == 0)
		r = gp_trace_load_pods(t, o->pods, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "gpupool sim: %s\n", err);
		return r;
	}
	if (t->gpus == 0) {
		fprintf(stderr, "gpupool sim: %s: the cluster has no GPUs\n", o->nodes);
		return -EINVAL;
	}
	r = gp_workload_from_requests(t->pod, t->pods, 0.95, ret_w);
	if (r < 0) {
		fprintf(stderr, "gpupool sim: %s\n", strerror(-r));
		return r;
	}
	gp_workload_set_supply(*ret_w, t->node, t->nodes);
	return 0;
}

/* --generate-mixed: the trace of mixed.h, written as openb CSV files. */
static int generate_mixed(const struct sim_options *o)
{
	struct gp_mixed_options m = {
		.nodes = o->mixed_nodes ? o->mixed_nodes : 1000,
		.seed = o->seed[0],
	};
	struct gp_trace t;
	char err[512];
	int r;

	m.pods = o->mixed_pods ? o->mixed_pods : 8 * m.nodes;
	r = gp_mixed_generate(&m, &t, err, sizeof(err));
	if (r == 0)
		r = gp_mixed_write(&t, o->generate_mixed, err, sizeof(err));
	gp_trace_release(&t);
	if (r < 0) {
		fprintf(stderr, "gpupool sim: %s\n", err);
		return GP_EXIT_FAIL;
	}
	printf("gpupool sim: wrote %zu nodes and %zu pods to %s/nodes.csv and %s/pods.csv\n",
	       m.nodes, m.pods, o->generate_mixed, o->generate_mixed);
	return GP_EXIT_OK;
}

/* Does argv ask for the pool's own history (--history, before any "--")? */
static bool has_history_flag(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--history"))
			return true;
	return false;
}

int gp_cmd_sim(int argc, char **argv)
{
	struct sim_options o;
	struct gp_trace t = { 0 };
	struct gp_workload *w = NULL;
	char names[POLICIES_MAX][GP_NAME_MAX], trace_buf[GP_NAME_MAX];
	const char *trace = NULL;
	int n, r, status = GP_EXIT_OK;

	if (has_history_flag(argc, argv))
		return gp_cmd_sim_history(argc, argv);
	r = parse_args(argc, argv, &o);
	if (r != 0)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	if (o.generate_mixed)
		return generate_mixed(&o);
	n = policy_list(o.policy, names, POLICIES_MAX);
	if (n < 0)
		return GP_EXIT_USAGE;
	if (o.devices && !gp_device_choice_exists(o.devices)) {
		fprintf(stderr, "gpupool sim: unknown --devices \"%s\"; use first, bestfit, spread or random\n",
			o.devices);
		return GP_EXIT_USAGE;
	}
	if (load_trace(&o, &t, &w) < 0) {
		status = GP_EXIT_FAIL;
		goto out;
	}
	if (gp_published_trace_name(o.pods, trace_buf, sizeof(trace_buf)))
		trace = trace_buf;
	if (!o.json)
		print_header(&o, trace);
	for (int i = 0; i < n; i++) {
		struct summary s = { .policy = names[i] };

		s.per_seed = calloc((size_t)o.seeds, sizeof(*s.per_seed));
		if (!s.per_seed || run_policy(&t, w, &o, &s) < 0) {
			free(s.per_seed);
			status = GP_EXIT_FAIL;
			break;
		}
		if (o.json)
			print_json(&o, trace, &s);
		else
			print_row(trace, &s);
		free(s.per_seed);
	}
out:
	gp_workload_free(w);
	gp_trace_release(&t);
	return status;
}
