/* gpuload.h — what the parts of gpuload share.
 *
 * gpuload generates GPU work through a vendor's runtime and reports what it
 * measured; it is how gpupool's tests and benchmarks load a device,
 * simulated (src/simdev) or real. gpuload.c parses the options, picks the
 * runtime (--runtime, runtime.h: CUDA by default), loads it, opens a
 * session and hands it to a mode in modes.c; each mode runs over the
 * runtime's operations only, prints one result through gl_emit and
 * returns. measure.c holds the clock and the latency statistics.
 *
 * Errors: functions return 0 or a negative errno. A failed runtime call is
 * reported on stderr once, by the runtime where it happens (gl_report);
 * callers only pass the error up. */
#ifndef GPULOAD_GPULOAD_H
#define GPULOAD_GPULOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime.h"

struct gl_options {
	const char *mode;
	const struct gl_runtime *runtime;       /* --runtime; cuda by default */
	int device;
	double duration_s;
	long kernel_us;
	unsigned blocks, threads;       /* grid X and block X of each launch */
	bool json, direct;
	double interval_ms;             /* latency */
	long mib, chunk_mib;            /* alloc; mib 0 = until out of memory */
	double hold_s;                  /* alloc */
	double qps;                     /* serve */
	const char *qps_file;           /* serve: the rate read from here; NULL: qps */
	const char *latency_log;        /* serve: each request's latency appended here */
	unsigned long long seed;        /* serve */
	long kernels_per_step;          /* train */
	long long steps;                /* train: stop after this many; 0: --duration only */
};

/* What a mode works with; opened and closed by gpuload.c. `rs` is the
 * runtime's own session (runtime.h), owned by the runtime. */
struct gl_session {
	const struct gl_options *opt;
	const struct gl_runtime *rt;
	void *rs;
};

/* A mode runs on an open session and prints its result with gl_emit. */
typedef int gl_mode_fn(const struct gl_session *s);
gl_mode_fn gl_mode_burn, gl_mode_latency, gl_mode_alloc, gl_mode_serve, gl_mode_train;

/* Prints one result: the mode, device, runtime and loader followed by
 * `fields` (a JSON object, consumed; NULL counts as out of memory), as one
 * JSON line with --json or as a short summary, and flushes stdout. */
int gl_emit(const struct gl_session *s, json_t *fields);

/* CLOCK_MONOTONIC in nanoseconds; sleeping until such a time (returns at
 * once when it has passed). */
uint64_t gl_now_ns(void);
uint64_t gl_wall_ms(void);      /* CLOCK_REALTIME, for logs others read */
void gl_sleep_until(uint64_t ns);

/* A growing array of measurements; zero-initialise, then _add (which says
 * so on stderr when it runs out of memory) and _release. */
struct gl_samples {
	double *v;
	size_t n, cap;
};

struct gl_stats {
	size_t n;
	double mean, max, p50, p99, p999;       /* nearest-rank percentiles */
};

int gl_samples_add(struct gl_samples *s, double x);
void gl_samples_release(struct gl_samples *s);
/* Sorts the samples and summarises them; all zero when there are none. */
void gl_samples_stats(struct gl_samples *s, struct gl_stats *ret_stats);

#endif
