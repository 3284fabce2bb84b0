/* modes.c — gpuload's five kinds of GPU work, each a gl_mode_fn run on an
 * open session (gpuload.h) and written over the runtime's operations only
 * (runtime.h), so every runtime runs the same work:
 *
 *   burn     keeps the stream fed with back-to-back kernels (at most
 *            BURN_WINDOW in flight) and reports the share of device time
 *            the process got;
 *   latency  a probe: one short kernel and a synchronize every interval;
 *   alloc    allocations in chunks up to a size or out of memory;
 *   serve    Poisson arrivals served in order on one stream, so latency
 *            includes the wait behind earlier requests; the rate may be
 *            read from a file as it changes, and SIGTERM ends it early
 *            with its result (a replica scaled in still reports);
 *   train    steps of several kernels and a synchronize.
 *
 * Every mode prints exactly one result through gl_emit. Where the runtime
 * has no events, burn bounds its window with sync and times with the host
 * clock ("kernel_ms_source": "wall"). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/rng.h"
#include "gpuload.h"

#define BURN_WINDOW 4

static uint64_t duration_ns(const struct gl_options *o)
{
	return (uint64_t)(o->duration_s * 1e9);
}

static uint64_t kernel_ns(const struct gl_options *o)
{
	return (uint64_t)o->kernel_us * 1000u;
}

/* Moves b's members into a; NULL (both released) when either is NULL. */
static json_t *merge(json_t *a, json_t *b)
{
	if (!a || !b || json_object_update(a, b)) {
		json_decref(a);
		json_decref(b);
		return NULL;
	}
	json_decref(b);
	return a;
}

/* The launch shape, then the mode's fields. */
static json_t *launch_fields(const struct gl_options *o, json_t *fields)
{
	return merge(json_pack("{s:I, s:i, s:i}", "kernel_us", (json_int_t)o->kernel_us,
			       "blocks", (int)o->blocks, "threads", (int)o->threads),
		     fields);
}

/* Adds samples/p50_us/p99_us/p999_us/max_us/mean_us of latencies in µs. */
static json_t *latency_fields(json_t *fields, struct gl_samples *us)
{
	struct gl_stats st;

	gl_samples_stats(us, &st);
	return merge(fields, json_pack("{s:I, s:f, s:f, s:f, s:f, s:f}", "samples",
				       (json_int_t)st.n, "p50_us", st.p50, "p99_us", st.p99,
				       "p999_us", st.p999, "max_us", st.max, "mean_us", st.mean));
}

static int launch(const struct gl_session *s, uint64_t ns)
{
	return s->rt->launch(s->rs, ns);
}

static int stream_sync(const struct gl_session *s)
{
	return s->rt->sync(s->rs);
}

/* One kernel of --kernel-us, waited for. */
static int kernel_sync(const struct gl_session *s)
{
	int ret = launch(s, kernel_ns(s->opt));

	return ret ? ret : stream_sync(s);
}

/* burn ------------------------------------------------------------------ */

enum { BURN_FIRST = BURN_WINDOW, BURN_LAST, BURN_EVENTS };

struct burn {
	void *ev[BURN_EVENTS];          /* the window, then two timing events */
	bool events;                    /* false: the runtime has none */
	uint64_t kernels, wall_ns;
};

static int burn_events_create(const struct gl_session *s, struct burn *b)
{
	b->events = s->rt->event_create != NULL;
	for (int i = 0; b->events && i < BURN_EVENTS; i++)
		if (s->rt->event_create(s->rs, i >= BURN_WINDOW, &b->ev[i]) < 0)
			return -EIO;
	return 0;
}

static void burn_events_destroy(const struct gl_session *s, struct burn *b)
{
	for (int i = 0; b->events && i < BURN_EVENTS; i++)
		if (b->ev[i])
			s->rt->event_destroy(s->rs, b->ev[i]);
}

/* One more kernel, first waiting for the one BURN_WINDOW back (without
 * events: for the whole stream, every BURN_WINDOW kernels). */
static int burn_next(const struct gl_session *s, struct burn *b)
{
	void *slot = b->ev[b->kernels % BURN_WINDOW];
	bool full = b->kernels >= BURN_WINDOW;
	int ret = 0;

	if (b->events && full)
		ret = s->rt->event_sync(s->rs, slot);
	else if (!b->events && full && b->kernels % BURN_WINDOW == 0)
		ret = stream_sync(s);
	if (!ret)
		ret = launch(s, kernel_ns(s->opt));
	if (!ret && b->events)
		ret = s->rt->event_record(s->rs, slot);
	b->kernels += !ret;
	return ret;
}

static int burn_record(const struct gl_session *s, const struct burn *b, int which)
{
	return b->events ? s->rt->event_record(s->rs, b->ev[which]) : 0;
}

static int burn_loop(const struct gl_session *s, struct burn *b)
{
	uint64_t start = gl_now_ns(), deadline = start + duration_ns(s->opt);
	int ret = burn_record(s, b, BURN_FIRST);

	while (!ret && gl_now_ns() < deadline)
		ret = burn_next(s, b);
	if (!ret)
		ret = burn_record(s, b, BURN_LAST);
	if (!ret)
		ret = stream_sync(s);
	b->wall_ns = gl_now_ns() - start;
	return ret;
}

/* Mean device time per kernel from the timing events; from the wall clock
 * when the runtime cannot time events. */
static double burn_kernel_ms(const struct gl_session *s, const struct burn *b,
			     const char **ret_source)
{
	double ms = 0;

	*ret_source = "wall";
	if (!b->kernels)
		return 0;
	if (b->events && s->rt->event_elapsed &&
	    s->rt->event_elapsed(s->rs, b->ev[BURN_FIRST], b->ev[BURN_LAST], &ms) == 0) {
		*ret_source = "events";
		return ms / (double)b->kernels;
	}
	return (double)b->wall_ns / 1e6 / (double)b->kernels;
}

int gl_mode_burn(const struct gl_session *s)
{
	const struct gl_options *o = s->opt;
	struct burn b = { 0 };
	const char *source;
	double kernel_ms, busy;
	int ret = burn_events_create(s, &b);

	if (!ret)
		ret = burn_loop(s, &b);
	if (!ret) {
		kernel_ms = burn_kernel_ms(s, &b, &source);
		busy = (double)b.kernels * (double)o->kernel_us / ((double)b.wall_ns / 1e3);
		ret = gl_emit(s, launch_fields(o, json_pack(
			"{s:f, s:I, s:f, s:f, s:f, s:s}", "duration", o->duration_s,
			"kernels", (json_int_t)b.kernels, "seconds", (double)b.wall_ns / 1e9,
			"busy_fraction", busy, "kernel_ms_mean", kernel_ms,
			"kernel_ms_source", source)));
	}
	burn_events_destroy(s, &b);
	return ret;
}

/* latency --------------------------------------------------------------- */

static int latency_loop(const struct gl_session *s, struct gl_samples *us)
{
	uint64_t interval = (uint64_t)(s->opt->interval_ms * 1e6);
	uint64_t next = gl_now_ns(), deadline = next + duration_ns(s->opt);
	int ret = 0;

	while (!ret && next < deadline) {
		uint64_t t0, t1;

		gl_sleep_until(next);
		t0 = gl_now_ns();
		ret = kernel_sync(s);
		t1 = gl_now_ns();
		if (!ret)
			ret = gl_samples_add(us, (double)(t1 - t0) / 1e3);
		next = next + interval > t1 ? next + interval : t1;
	}
	return ret;
}

int gl_mode_latency(const struct gl_session *s)
{
	const struct gl_options *o = s->opt;
	struct gl_samples us = { 0 };
	int ret = latency_loop(s, &us);

	if (!ret)
		ret = gl_emit(s, launch_fields(o, latency_fields(
			json_pack("{s:f, s:f}", "duration", o->duration_s,
				  "interval_ms", o->interval_ms), &us)));
	gl_samples_release(&us);
	return ret;
}

/* alloc ----------------------------------------------------------------- */

struct alloc {
	void **ptr;
	size_t n, cap;
	long mib;               /* allocated so far */
	int error;              /* what stopped it: -ENOMEM, -EIO, or 0 */
};

static int alloc_keep(struct alloc *a, void *p)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		void **ptr = realloc(a->ptr, cap * sizeof(*ptr));

		if (!ptr) {
			fprintf(stderr, "gpuload: out of memory\n");
			return -ENOMEM;
		}
		a->ptr = ptr;
		a->cap = cap;
	}
	a->ptr[a->n++] = p;
	return 0;
}

/* Allocates until --mib or the first failure, which lands in a->error. */
static int alloc_fill(const struct gl_session *s, struct alloc *a)
{
	const struct gl_options *o = s->opt;

	while (!o->mib || a->mib < o->mib) {
		long chunk = o->mib && o->mib - a->mib < o->chunk_mib ? o->mib - a->mib
								       : o->chunk_mib;
		void *p = NULL;

		a->error = s->rt->alloc(s->rs, (size_t)chunk << 20, &p);
		if (a->error)
			return 0;
		if (alloc_keep(a, p) < 0) {
			s->rt->free(s->rs, p);
			return -ENOMEM;
		}
		a->mib += chunk;
	}
	return 0;
}

static void alloc_release(const struct gl_session *s, struct alloc *a)
{
	for (size_t i = 0; i < a->n; i++)
		s->rt->free(s->rs, a->ptr[i]);
	free(a->ptr);
	*a = (struct alloc){ 0 };
}

/* "error" is the runtime's name of what stopped the allocations
 * ("CUDA_ERROR_OUT_OF_MEMORY"), null when nothing did. */
static json_t *alloc_fields(const struct gl_session *s, const struct alloc *a,
			    size_t free_bytes, size_t total_bytes)
{
	const struct gl_options *o = s->opt;
	bool oom = a->error == -ENOMEM;
	char buf[64];

	return json_pack("{s:o, s:I, s:f, s:I, s:b, s:o, s:s?, s:I, s:I}",
			 "mib", o->mib ? json_integer(o->mib) : json_null(),
			 "chunk_mib", (json_int_t)o->chunk_mib, "hold", o->hold_s,
			 "allocated_mib", (json_int_t)a->mib, "oom", oom,
			 "oom_at_mib", oom ? json_integer(a->mib) : json_null(),
			 "error", a->error ? s->rt->last_error(s->rs, buf, sizeof(buf)) : NULL,
			 "free_mib", (json_int_t)(free_bytes >> 20),
			 "total_mib", (json_int_t)(total_bytes >> 20));
}

/* Out of memory is a result, not a failure: exit 0 with "oom": true. Any
 * other allocation error (reported by the runtime) is printed in the result
 * and fails the run. */
int gl_mode_alloc(const struct gl_session *s)
{
	const struct gl_options *o = s->opt;
	struct alloc a = { 0 };
	size_t free_bytes = 0, total_bytes = 0;
	int ret = alloc_fill(s, &a);

	if (!ret)
		ret = s->rt->mem_info(s->rs, &free_bytes, &total_bytes);
	if (!ret)
		ret = gl_emit(s, alloc_fields(s, &a, free_bytes, total_bytes));
	if (!ret && a.error && a.error != -ENOMEM)
		ret = -EIO;
	if (!ret && o->hold_s > 0)
		gl_sleep_until(gl_now_ns() + (uint64_t)(o->hold_s * 1e9));
	alloc_release(s, &a);
	return ret;
}

/* serve ----------------------------------------------------------------- */

/* An exponential gap between arrivals at `qps`, in nanoseconds. */
static uint64_t arrival_gap_ns(struct gp_rng *rng, double qps)
{
	double u = (double)(gp_rng_next(rng) >> 11) * 0x1p-53;     /* [0, 1) */

	return (uint64_t)(-log1p(-u) / qps * 1e9);
}

#define RATE_LOOK_NS 100000000ull /* --qps-file is read this often */

static volatile sig_atomic_t serve_stop;

static void on_stop(int sig)
{
	(void)sig;
	serve_stop = 1;
}

/* The rate in --qps-file, or `was` when it cannot be read now. */
static double rate_read(const char *path, double was)
{
	FILE *f = fopen(path, "r");
	double v;
	int n = f ? fscanf(f, "%lf", &v) : 0;

	if (f)
		fclose(f);
	return n == 1 && v >= 0 && v < 1e7 ? v : was;
}

/* When the next request arrives after `from`: an exponential gap at the
 * rate (Poisson arrivals forget the past, so a new rate draws anew from
 * when it is known); UINT64_MAX for rate 0. */
static uint64_t next_arrival(struct gp_rng *rng, double rate, uint64_t from)
{
	return rate > 0 ? from + arrival_gap_ns(rng, rate) : UINT64_MAX;
}

static void latency_log(FILE *log, uint64_t arrival_ns, uint64_t done_ns)
{
	if (log)
		fprintf(log, "%llu %.1f\n",
			(unsigned long long)(gl_wall_ms() - (gl_now_ns() - arrival_ns) / 1000000),
			(double)(done_ns - arrival_ns) / 1e3);
}

/* Serves each request when it arrives, or as soon as the one before it is
 * done; its latency runs from its arrival to its kernel's completion. */
static int serve_loop(const struct gl_session *s, struct gl_samples *us,
		      uint64_t *ret_wall_ns)
{
	const struct gl_options *o = s->opt;
	uint64_t start = gl_now_ns(), end = start + duration_ns(o), done = start, from = start;
	uint64_t look = start + RATE_LOOK_NS;
	bool varying = o->qps_file != NULL;
	double rate = varying ? rate_read(o->qps_file, 0) : o->qps;
	FILE *log = o->latency_log ? fopen(o->latency_log, "a") : NULL;
	struct gp_rng rng;
	uint64_t arrival;
	int ret = 0;

	if (o->latency_log && !log) {
		fprintf(stderr, "gpuload: --latency-log %s: cannot open it\n", o->latency_log);
		return -EIO;
	}
	signal(SIGTERM, on_stop);
	gp_rng_init(&rng, o->seed);
	while (!ret && !serve_stop && from < end) {
		arrival = next_arrival(&rng, rate, from);
		if (varying && arrival > look) {        /* the rate is looked at first */
			gl_sleep_until(look);
			from = look;
			look += RATE_LOOK_NS;
			rate = rate_read(o->qps_file, rate);
			continue;
		}
		if (arrival >= end)
			break;
		gl_sleep_until(arrival);
		ret = kernel_sync(s);
		done = gl_now_ns();
		if (!ret)
			ret = gl_samples_add(us, (double)(done - arrival) / 1e3);
		latency_log(log, arrival, done);
		from = arrival;
		if (varying && done >= look) {  /* behind: look while catching up */
			rate = rate_read(o->qps_file, rate);
			look = done + RATE_LOOK_NS;
		}
	}
	if (log)
		fclose(log);
	*ret_wall_ns = (done > end || serve_stop ? done : end) - start;
	return ret;
}

int gl_mode_serve(const struct gl_session *s)
{
	const struct gl_options *o = s->opt;
	struct gl_samples us = { 0 };
	uint64_t wall_ns = 0;
	int ret = serve_loop(s, &us, &wall_ns);

	if (!ret)
		ret = gl_emit(s, launch_fields(o, latency_fields(
			json_pack("{s:f, s:f, s:I, s:I, s:f}", "duration", o->duration_s,
				  "qps", o->qps, "seed", (json_int_t)o->seed,
				  "requests", (json_int_t)us.n,
				  "achieved_qps", (double)us.n / ((double)wall_ns / 1e9)),
			&us)));
	gl_samples_release(&us);
	return ret;
}

/* train ----------------------------------------------------------------- */

static int train_step(const struct gl_session *s)
{
	int ret = 0;

	for (long k = 0; !ret && k < s->opt->kernels_per_step; k++)
		ret = launch(s, kernel_ns(s->opt));
	return ret ? ret : stream_sync(s);
}

static int train_loop(const struct gl_session *s, struct gl_samples *ms, uint64_t *ret_wall_ns)
{
	uint64_t start = gl_now_ns(), deadline = start + duration_ns(s->opt), t0;
	int ret = 0;

	for (long long n = 0; !ret && (t0 = gl_now_ns()) < deadline &&
			      (!s->opt->steps || n < s->opt->steps); n++) {
		ret = train_step(s);
		if (!ret)
			ret = gl_samples_add(ms, (double)(gl_now_ns() - t0) / 1e6);
	}
	*ret_wall_ns = gl_now_ns() - start;
	return ret;
}

int gl_mode_train(const struct gl_session *s)
{
	const struct gl_options *o = s->opt;
	struct gl_samples ms = { 0 };
	struct gl_stats st;
	uint64_t wall_ns = 0;
	int ret = train_loop(s, &ms, &wall_ns);

	gl_samples_stats(&ms, &st);
	if (!ret)
		ret = gl_emit(s, launch_fields(o, json_pack(
			"{s:f, s:I, s:I, s:f, s:f, s:f, s:f}", "duration", o->duration_s,
			"kernels_per_step", (json_int_t)o->kernels_per_step,
			"steps", (json_int_t)st.n, "steps_per_sec", (double)st.n / ((double)wall_ns / 1e9),
			"step_ms_p50", st.p50, "step_ms_p99", st.p99, "step_ms_mean", st.mean)));
	gl_samples_release(&ms);
	return ret;
}
