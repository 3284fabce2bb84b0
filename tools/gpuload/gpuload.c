/* gpuload.c — `gpuload MODE [OPTIONS]`: the workload generator's command
 * line. It parses the options, picks the runtime (--runtime: runtime.h,
 * rt-NAME.c), loads it, opens a session on the device — for CUDA: cuInit,
 * the primary context, the gpuload_spin module and one stream — runs the
 * mode (modes.c) and closes the session again (the runtime itself stays
 * loaded). Exit status: 0 done, 1 a runtime call failed (stderr names it),
 * 2 bad usage. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuload.h"
#include "kernel.h"
#include "runtime.h"

enum { EXIT_USAGE = 2 };

static const struct gl_mode {
	const char *name;
	gl_mode_fn *run;
	long kernel_us;         /* default --kernel-us */
	const char *summary;
} modes[] = {
	{ "burn", gl_mode_burn, 1000, "back-to-back kernels for --duration; the share of device time got" },
	{ "latency", gl_mode_latency, 100, "one short kernel every --interval-ms; launch-to-sync latency" },
	{ "alloc", gl_mode_alloc, 0, "allocate --mib (default: until out of memory) in --chunk-mib pieces" },
	{ "serve", gl_mode_serve, 500, "Poisson requests at --qps, one kernel each; latency with queueing" },
	{ "train", gl_mode_train, 2000, "steps of --kernels-per-step kernels and a synchronize" },
};

#define MODES (sizeof(modes) / sizeof(modes[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: gpuload MODE [OPTIONS]\n"
		     "       gpuload --print-ptx\n"
		     "\n"
		     "Generates GPU work through a vendor's runtime, loaded with dlopen at its real\n"
		     "soname (CUDA: libcuda.so.1, then cuGetProcAddress_v2, as the CUDA runtime\n"
		     "loads it), and reports what it measured.\n"
		     "\n"
		     "modes:\n");
	for (size_t i = 0; i < MODES; i++)
		fprintf(out, "  %-8s %s\n", modes[i].name, modes[i].summary);
	fprintf(out, "\n"
		     "runtimes (--runtime):\n");
	for (size_t i = 0; gl_runtimes[i]; i++)
		fprintf(out, "  %-8s %s\n", gl_runtimes[i]->name, gl_runtimes[i]->summary);
	fprintf(out, "\n"
		     "options:\n"
		     "  --runtime NAME        the runtime to load (default %s)\n"
		     "  --device N            the runtime's device ordinal (default 0)\n"
		     "  --duration SECONDS    how long to generate work (default 2)\n"
		     "  --kernel-us N         length of each kernel in microseconds (default: burn\n"
		     "                        1000, latency 100, serve 500, train 2000)\n"
		     "  --blocks N            grid size X of each launch, where the runtime has a\n"
		     "                        grid (default 1)\n"
		     "  --threads N           block size X of each launch, likewise (default 32)\n"
		     "  --json                print one JSON object instead of a summary\n"
		     "  --direct              dlsym each exported symbol instead of the runtime's\n"
		     "                        proc-address call (cuda: cuGetProcAddress_v2)\n"
		     "  --print-ptx           print the CUDA kernel's PTX and exit\n"
		     "  --interval-ms MS      latency: time between probes (default 10)\n"
		     "  --mib N               alloc: MiB to allocate (default: until out of memory)\n"
		     "  --chunk-mib N         alloc: MiB per allocation (default 256)\n"
		     "  --hold SECONDS        alloc: print, then keep the memory this long (default 0)\n"
		     "  --qps Q               serve: mean requests per second (default 100)\n"
		     "  --qps-file PATH       serve: read the mean rate from PATH (a number; 0\n"
		     "                        idles) every 0.1 s instead, so that another program\n"
		     "                        (a load balancer) can vary it\n"
		     "  --latency-log PATH    serve: append each request's arrival (unix ms) and\n"
		     "                        latency (us) to PATH, one line each\n"
		     "  --seed N              serve: seed of the arrival times (default 1)\n"
		     "  --kernels-per-step N  train: kernels per step (default 4)\n"
		     "  --steps N             train: stop after N steps (a fixed amount of work)\n"
		     "                        or at --duration, whichever comes first\n",
		GL_RUNTIME_DEFAULT);
}

static int bad_value(const char *flag, const char *text, const char *what)
{
	fprintf(stderr, "gpuload: --%s \"%s\" must be %s\n", flag, text, what);
	usage(stderr);
	return -EINVAL;
}

static int parse_real(const char *flag, const char *text, double min, double max,
		      const char *what, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end || errno || !(v >= min && v <= max))
		return bad_value(flag, text, what);
	*ret = v;
	return 0;
}

static int parse_whole(const char *flag, const char *text, long long min, long long max,
		       const char *what, long long *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (end == text || *end || errno || v < min || v > max)
		return bad_value(flag, text, what);
	*ret = v;
	return 0;
}

enum {
	OPT_DEVICE = 256, OPT_DURATION, OPT_KERNEL_US, OPT_BLOCKS, OPT_THREADS, OPT_JSON,
	OPT_DIRECT, OPT_PRINT_PTX, OPT_INTERVAL_MS, OPT_MIB, OPT_CHUNK_MIB, OPT_HOLD,
	OPT_QPS, OPT_QPS_FILE, OPT_LATENCY_LOG, OPT_SEED, OPT_KERNELS_PER_STEP, OPT_STEPS, OPT_RUNTIME, OPT_HELP,
};

static const struct option longopts[] = {
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "kernel-us", required_argument, NULL, OPT_KERNEL_US },
	{ "blocks", required_argument, NULL, OPT_BLOCKS },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "direct", no_argument, NULL, OPT_DIRECT },
	{ "print-ptx", no_argument, NULL, OPT_PRINT_PTX },
	{ "interval-ms", required_argument, NULL, OPT_INTERVAL_MS },
	{ "mib", required_argument, NULL, OPT_MIB },
	{ "chunk-mib", required_argument, NULL, OPT_CHUNK_MIB },
	{ "hold", required_argument, NULL, OPT_HOLD },
	{ "qps", required_argument, NULL, OPT_QPS },
	{ "qps-file", required_argument, NULL, OPT_QPS_FILE },
	{ "latency-log", required_argument, NULL, OPT_LATENCY_LOG },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "kernels-per-step", required_argument, NULL, OPT_KERNELS_PER_STEP },
	{ "steps", required_argument, NULL, OPT_STEPS },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "help", no_argument, NULL, OPT_HELP },
	{ 0 },
};

/* The whole-number options: where each goes and its range. */
static int parse_whole_option(int c, const char *flag, struct gl_options *o)
{
	long long v = 0;
	int ret;

	switch (c) {
	case OPT_DEVICE:
		ret = parse_whole(flag, optarg, 0, INT_MAX, "a device ordinal (0, 1, ...)", &v);
		o->device = (int)v;
		return ret;
	case OPT_KERNEL_US:
		ret = parse_whole(flag, optarg, 1, 60000000, "microseconds from 1 to 60000000", &v);
		o->kernel_us = (long)v;
		return ret;
	case OPT_BLOCKS:
		ret = parse_whole(flag, optarg, 1, INT_MAX, "a whole number of blocks >= 1", &v);
		o->blocks = (unsigned)v;
		return ret;
	case OPT_THREADS:
		ret = parse_whole(flag, optarg, 1, 1024, "a whole number from 1 to 1024", &v);
		o->threads = (unsigned)v;
		return ret;
	case OPT_MIB:
	case OPT_CHUNK_MIB:
		ret = parse_whole(flag, optarg, 1, 1 << 24, "a whole number of MiB >= 1", &v);
		*(c == OPT_MIB ? &o->mib : &o->chunk_mib) = (long)v;
		return ret;
	case OPT_SEED:
		ret = parse_whole(flag, optarg, 0, LLONG_MAX, "a whole number >= 0", &v);
		o->seed = (unsigned long long)v;
		return ret;
	case OPT_KERNELS_PER_STEP:
		ret = parse_whole(flag, optarg, 1, 1000000, "a whole number from 1 to 1000000", &v);
		o->kernels_per_step = (long)v;
		return ret;
	case OPT_STEPS:
		ret = parse_whole(flag, optarg, 1, LLONG_MAX, "a whole number of steps >= 1", &v);
		o->steps = v;
		return ret;
	default:
		usage(stderr);
		return -EINVAL;
	}
}

/* --runtime NAME; a name it does not know is one line listing those it does. */
static int parse_runtime(const char *text, struct gl_options *o)
{
	o->runtime = gl_runtime_find(text);
	if (o->runtime)
		return 0;
	fprintf(stderr, "gpuload: unknown runtime \"%s\"; --runtime takes one of:", text);
	for (size_t i = 0; gl_runtimes[i]; i++)
		fprintf(stderr, "%s %s", i ? "," : "", gl_runtimes[i]->name);
	fputc('\n', stderr);
	return -EINVAL;
}

/* One option; 1 when it finished the work (--help, --print-ptx). */
static int parse_option(int c, const char *flag, struct gl_options *o)
{
	switch (c) {
	case OPT_DURATION:
		return parse_real(flag, optarg, 1e-3, 1e6, "seconds > 0", &o->duration_s);
	case OPT_INTERVAL_MS:
		return parse_real(flag, optarg, 0, 1e6, "milliseconds >= 0", &o->interval_ms);
	case OPT_HOLD:
		return parse_real(flag, optarg, 0, 1e6, "seconds >= 0", &o->hold_s);
	case OPT_QPS:
		return parse_real(flag, optarg, 1e-3, 1e7, "requests per second > 0", &o->qps);
	case OPT_QPS_FILE: o->qps_file = optarg; return 0;
	case OPT_LATENCY_LOG: o->latency_log = optarg; return 0;
	case OPT_RUNTIME: return parse_runtime(optarg, o);
	case OPT_JSON: o->json = true; return 0;
	case OPT_DIRECT: o->direct = true; return 0;
	case OPT_PRINT_PTX: fputs(gl_kernel_ptx, stdout); return 1;
	case OPT_HELP: usage(stdout); return 1;
	case '?': usage(stderr); return -EINVAL;
	default: return parse_whole_option(c, flag, o);
	}
}

/* The mode named on the command line, or NULL after saying what is wrong. */
static const struct gl_mode *find_mode(int argc, char **argv)
{
	if (optind >= argc) {
		fprintf(stderr, "gpuload: no mode given\n");
	} else if (optind + 1 < argc) {
		fprintf(stderr, "gpuload: unexpected argument \"%s\"\n", argv[optind + 1]);
	} else {
		for (size_t i = 0; i < MODES; i++)
			if (!strcmp(argv[optind], modes[i].name))
				return &modes[i];
		fprintf(stderr, "gpuload: unknown mode \"%s\"\n", argv[optind]);
	}
	usage(stderr);
	return NULL;
}

/* 0 with the options and mode filled, 1 when done already, -EINVAL. */
static int parse_args(int argc, char **argv, struct gl_options *o,
		      const struct gl_mode **ret_mode)
{
	int c, index = 0, ret;

	*o = (struct gl_options){ .runtime = gl_runtime_find(GL_RUNTIME_DEFAULT),
				  .duration_s = 2, .kernel_us = -1, .blocks = 1, .threads = 32,
				  .interval_ms = 10, .chunk_mib = 256, .qps = 100, .seed = 1,
				  .kernels_per_step = 4 };
	while ((c = getopt_long(argc, argv, "h", longopts, &index)) != -1) {
		ret = parse_option(c == 'h' ? OPT_HELP : c, longopts[index].name, o);
		if (ret)
			return ret;
	}
	*ret_mode = find_mode(argc, argv);
	if (!*ret_mode)
		return -EINVAL;
	o->mode = (*ret_mode)->name;
	if (o->kernel_us < 0)
		o->kernel_us = (*ret_mode)->kernel_us;
	return 0;
}

static void print_summary(json_t *result)
{
	const char *key;
	json_t *value;

	printf("gpuload %s\n", json_string_value(json_object_get(result, "mode")));
	json_object_foreach(result, key, value) {
		char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));

		if (strcmp(key, "mode"))
			printf("  %-18s %s\n", key, text ? text : "?");
		free(text);
	}
}

int gl_emit(const struct gl_session *s, json_t *fields)
{
	json_t *result = json_pack("{s:s, s:i, s:s, s:s}", "mode", s->opt->mode, "device",
				   s->opt->device, "runtime", s->rt->name, "loader",
				   s->opt->direct ? s->rt->loader_direct : s->rt->loader);

	if (!result || !fields || json_object_update(result, fields)) {
		json_decref(result);
		json_decref(fields);
		fprintf(stderr, "gpuload: out of memory\n");
		return -ENOMEM;
	}
	json_decref(fields);
	if (s->opt->json) {
		json_dumpf(result, stdout, JSON_COMPACT | JSON_REAL_PRECISION(6));
		putchar('\n');
	} else {
		print_summary(result);
	}
	fflush(stdout);
	json_decref(result);
	return 0;
}

static int run(const struct gl_mode *mode, const struct gl_options *o)
{
	const struct gl_runtime *rt = o->runtime;
	struct gl_runtime_params p = { .device = o->device, .blocks = o->blocks,
				       .threads = o->threads };
	struct gl_session s = { .opt = o, .rt = rt };
	char err[512];
	int ret = rt->load(o->direct, err, sizeof(err));

	if (ret < 0) {
		fprintf(stderr, "gpuload: %s\n", err);
		return ret;
	}
	ret = rt->open(&p, &s.rs);
	if (ret < 0)
		return ret;
	ret = mode->run(&s);
	if (rt->close(s.rs) < 0 && ret == 0)
		ret = -EIO;
	return ret;
}

int main(int argc, char **argv)
{
	const struct gl_mode *mode = NULL;
	struct gl_options o;
	int ret = parse_args(argc, argv, &o, &mode);

	if (ret)
		return ret > 0 ? EXIT_SUCCESS : EXIT_USAGE;
	return run(mode, &o) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
