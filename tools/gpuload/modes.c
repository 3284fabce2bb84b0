/* modes.c — gpuload's five kinds of GPU work, each a gl_mode_fn run on an
 * open session (gpuload.h):
 *
 *   burn     keeps the stream fed with back-to-back kernels (at most
 *            BURN_WINDOW in flight) and reports the share of device time
 *            the process got;
 *   latency  a probe: one short kernel and a synchronize every interval;
 *   alloc    cuMemAlloc_v2 in chunks up to a size or out of memory;
 *   serve    Poisson arrivals served in order on one stream, so latency
 *            includes the wait behind earlier requests;
 *   train    steps of several kernels and a synchronize.
 *
 * Every mode prints exactly one result through gl_emit. */
#include <errno.h>
#include <math.h>
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

/* One kernel of --kernel-us, waited for. */
static int kernel_sync(const struct gl_session *s)
{
	int ret = gl_launch(s, kernel_ns(s->opt));

	return ret ? ret : gl_check(gl_cu.cuStreamSynchronize(s->stream), "cuStreamSynchronize");
}

/* burn ------------------------------------------------------------------ */

enum { BURN_FIRST = BURN_WINDOW, BURN_LAST, BURN_EVENTS };

struct burn {
	CUevent ev[BURN_EVENTS];        /* the window, then two timing events */
	uint64_t kernels, wall_ns;
};

static int burn_events_create(struct burn *b)
{
	for (int i = 0; i < BURN_EVENTS; i++) {
		unsigned flags = i < BURN_WINDOW ? CU_EVENT_DISABLE_TIMING : CU_EVENT_DEFAULT;

		if (gl_check(gl_cu.cuEventCreate(&b->ev[i], flags), "cuEventCreate"))
			return -EIO;
	}
	return 0;
}

static void burn_events_destroy(struct burn *b)
{
	for (int i = 0; i < BURN_EVENTS; i++)
		if (b->ev[i])
			gl_check(gl_cu.cuEventDestroy(b->ev[i]), "cuEventDestroy_v2");
}

/* One more kernel, first waiting for the one BURN_WINDOW back. */
static int burn_next(const struct gl_session *s, struct burn *b)
{
	CUevent slot = b->ev[b->kernels % BURN_WINDOW];
	int ret = 0;

	if (b->kernels >= BURN_WINDOW)
		ret = gl_check(gl_cu.cuEventSynchronize(slot), "cuEventSynchronize");
	if (!ret)
		ret = gl_launch(s, kernel_ns(s->opt));
	if (!ret)
		ret = gl_check(gl_cu.cuEventRecord(slot, s->stream), "cuEventRecord");
	b->kernels += !ret;
	return ret;
}

static int burn_loop(const struct gl_session *s, struct burn *b)
{
	uint64_t start = gl_now_ns(), deadline = start + duration_ns(s->opt);
	int ret = gl_check(gl_cu.cuEventRecord(b->ev[BURN_FIRST], s->stream), "cuEventRecord");

	while (!ret && gl_now_ns() < deadline)
		ret = burn_next(s, b);
	if (!ret)
		ret = gl_check(gl_cu.cuEventRecord(b->ev[BURN_LAST], s->stream), "cuEventRecord");
	if (!ret)
		ret = gl_check(gl_cu.cuStreamSynchronize(s->stream), "cuStreamSynchronize");
	b->wall_ns = gl_now_ns() - start;
	return ret;
}

/* Mean device time per kernel from the timing events; from the wall clock
 * when the driver cannot time events. */
static double burn_kernel_ms(const struct burn *b, const char **ret_source)
{
	float ms = 0;

	*ret_source = "wall";
	if (!b->kernels)
		return 0;
	if (gl_cu.cuEventElapsedTime &&
	    gl_cu.cuEventElapsedTime(&ms, b->ev[BURN_FIRST], b->ev[BURN_LAST]) == CUDA_SUCCESS) {
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
	int ret = burn_events_create(&b);

	if (!ret)
		ret = burn_loop(s, &b);
	if (!ret) {
		kernel_ms = burn_kernel_ms(&b, &source);
		busy = (double)b.kernels * (double)o->kernel_us / ((double)b.wall_ns / 1e3);
		ret = gl_emit(s, launch_fields(o, json_pack(
			"{s:f, s:I, s:f, s:f, s:f, s:s}", "duration", o->duration_s,
			"kernels", (json_int_t)b.kernels, "seconds", (double)b.wall_ns / 1e9,
			"busy_fraction", busy, "kernel_ms_mean", kernel_ms,
			"kernel_ms_source", source)));
	}
	burn_events_destroy(&b);
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
	CUdeviceptr *ptr;
	size_t n, cap;
	long mib;               /* allocated so far */
	CUresult error;         /* what stopped it, or CUDA_SUCCESS */
};

static int alloc_keep(struct alloc *a, CUdeviceptr p)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		CUdeviceptr *ptr = realloc(a->ptr, cap * sizeof(*ptr));

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
static int alloc_fill(const struct gl_options *o, struct alloc *a)
{
	while (!o->mib || a->mib < o->mib) {
		long chunk = o->mib && o->mib - a->mib < o->chunk_mib ? o->mib - a->mib
								       : o->chunk_mib;
		CUdeviceptr p = 0;

		a->error = gl_cu.cuMemAlloc(&p, (size_t)chunk << 20);
		if (a->error != CUDA_SUCCESS)
			return 0;
		if (alloc_keep(a, p) < 0) {
			gl_cu.cuMemFree(p);
			return -ENOMEM;
		}
		a->mib += chunk;
	}
	return 0;
}

static void alloc_release(struct alloc *a)
{
	for (size_t i = 0; i < a->n; i++)
		gl_check(gl_cu.cuMemFree(a->ptr[i]), "cuMemFree_v2");
	free(a->ptr);
	*a = (struct alloc){ 0 };
}

static json_t *alloc_fields(const struct gl_options *o, const struct alloc *a,
			    size_t free_bytes, size_t total_bytes)
{
	bool oom = a->error == CUDA_ERROR_OUT_OF_MEMORY;
	char buf[32];

	return json_pack("{s:o, s:I, s:f, s:I, s:b, s:o, s:s?, s:I, s:I}",
			 "mib", o->mib ? json_integer(o->mib) : json_null(),
			 "chunk_mib", (json_int_t)o->chunk_mib, "hold", o->hold_s,
			 "allocated_mib", (json_int_t)a->mib, "oom", oom,
			 "oom_at_mib", oom ? json_integer(a->mib) : json_null(),
			 "error", a->error ? gl_driver_error_name(a->error, buf, sizeof(buf)) : NULL,
			 "free_mib", (json_int_t)(free_bytes >> 20),
			 "total_mib", (json_int_t)(total_bytes >> 20));
}

/* Out of memory is a result, not a failure: exit 0 with "oom": true. Any
 * other allocation error is printed in the result and fails the run. */
int gl_mode_alloc(const struct gl_session *s)
{
	const struct gl_options *o = s->opt;
	struct alloc a = { 0 };
	size_t free_bytes = 0, total_bytes = 0;
	int ret = alloc_fill(o, &a);

	if (!ret)
		ret = gl_check(gl_cu.cuMemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo_v2");
	if (!ret)
		ret = gl_emit(s, alloc_fields(o, &a, free_bytes, total_bytes));
	if (!ret && a.error != CUDA_SUCCESS && a.error != CUDA_ERROR_OUT_OF_MEMORY)
		ret = gl_check(a.error, "cuMemAlloc_v2");
	if (!ret && o->hold_s > 0)
		gl_sleep_until(gl_now_ns() + (uint64_t)(o->hold_s * 1e9));
	alloc_release(&a);
	return ret;
}

/* serve ----------------------------------------------------------------- */

/* An exponential gap between arrivals at `qps`, in nanoseconds. */
static uint64_t arrival_gap_ns(struct gp_rng *rng, double qps)
{
	double u = (double)(gp_rng_next(rng) >> 11) * 0x1p-53;     /* [0, 1) */

	return (uint64_t)(-log1p(-u) / qps * 1e9);
}

/* Serves each request when it arrives, or as soon as the one before it is
 * done; its latency runs from its arrival to its kernel's completion. */
static int serve_loop(const struct gl_session *s, struct gl_samples *us,
		      uint64_t *ret_wall_ns)
{
	const struct gl_options *o = s->opt;
	uint64_t start = gl_now_ns(), end = start + duration_ns(o), done = start;
	struct gp_rng rng;
	uint64_t arrival;
	int ret = 0;

	gp_rng_init(&rng, o->seed);
	for (arrival = start + arrival_gap_ns(&rng, o->qps); !ret && arrival < end;
	     arrival += arrival_gap_ns(&rng, o->qps)) {
		gl_sleep_until(arrival);
		ret = kernel_sync(s);
		done = gl_now_ns();
		if (!ret)
			ret = gl_samples_add(us, (double)(done - arrival) / 1e3);
	}
	*ret_wall_ns = (done > end ? done : end) - start;
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
		ret = gl_launch(s, kernel_ns(s->opt));
	return ret ? ret : gl_check(gl_cu.cuStreamSynchronize(s->stream), "cuStreamSynchronize");
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
