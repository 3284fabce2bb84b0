/* launch.c — every launch path goes through the compute arbiter.
 *
 * cuLaunchKernel, cuLaunchKernelEx and cooperative launches (and their
 * per-thread-stream forms) and cuGraphLaunch wait for the device's turn
 * (arbiter.h) before reaching the driver. After a launch, the work this
 * process has queued is bounded, so that a turn ends, and a more urgent
 * task gets the device, within about a kernel: an event follows every
 * `every` launches, and before the next is recorded the previous one must
 * have finished. `every` adapts: when that wait was long (over
 * WAIT_SHORT_NS), kernels are long next to launches and it halves (down to
 * 1: an event per launch); otherwise it doubles (up to EVERY_MAX), so short
 * kernels pay for the bound a driver call in dozens and queue no more than
 * about WAIT_SHORT_NS of work. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "shim/arbiter.h"
#include "shim/shim.h"

#define EVERY_MAX 64

typedef CUresult (*ctx_sync_fn)(void);
typedef CUresult (*event_create_fn)(CUevent *, unsigned int);
typedef CUresult (*event_record_fn)(CUevent, CUstream);
typedef CUresult (*event_sync_fn)(CUevent);
typedef CUresult (*event_query_fn)(CUevent);

/* Per device and per thread (each thread bounds its own launches): the two
 * events that alternate behind them, and the work this thread launched
 * since it last waited for all of it. */
static __thread struct {
	CUevent event[2];
	unsigned last;          /* the one recorded last */
	unsigned every, since;  /* launches per event; launches since one */
	bool ready;
	bool pending;           /* launched since it last waited for all */
	bool several;           /* ... on more than one stream */
	bool per_thread;        /* ... else on `stream`, of this flavour */
	CUstream stream;
} trail[GP_SHIM_DEVICES_MAX];

/* Per device: the threads of this process with work pending. */
static _Atomic int pending_threads[GP_SHIM_DEVICES_MAX];

static void drain(void *unused)
{
	(void)unused;
	GP_REAL(ctx_sync_fn, "cuCtxSynchronize", 12000, 0)();
}

/* Waits for the device's turn; the device to launch on in *ret_index. */
static CUresult gate(int *ret_index)
{
	struct gp_shim_device *d;
	CUresult r = gp_shim_current(&d, ret_index);

	if (r == CUDA_SUCCESS && d->arbiter)
		gp_arbiter_before_launch(d->arbiter, drain, NULL);
	return r;
}

static bool trail_ready(int dev)
{
	if (trail[dev].ready)
		return true;
	for (int i = 0; i < 2; i++)
		if (GP_REAL(event_create_fn, "cuEventCreate", 2000, 0)(
			    &trail[dev].event[i], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
			return false;
	trail[dev].every = 1;
	trail[dev].ready = true;
	return true;
}

#define WAIT_SHORT_NS 100000      /* a wait this short: the bound is small */
#define PAUSE_MAX_US 50

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Waits for `e`, giving the device up at once if a more urgent task
 * asks for it meanwhile (polling, with pauses growing from a yield to
 * PAUSE_MAX_US: short waits stay short, long ones cost no CPU, and a
 * request is noticed within about PAUSE_MAX_US).
 * Returns how long it waited, in ns. */
static uint64_t wait_event(struct gp_arbiter *a, CUevent e)
{
	event_query_fn query = GP_REAL(event_query_fn, "cuEventQuery", 2000, 0);
	uint64_t start = now_ns();
	unsigned pause_us = 0;

	while (query(e) == CUDA_ERROR_NOT_READY) {
		if (a && gp_arbiter_wanted(a))
			gp_arbiter_yield(a);
		if (pause_us)
			usleep(pause_us);
		else
			sched_yield();
		pause_us = pause_us ? (pause_us * 2 < PAUSE_MAX_US ? pause_us * 2 : PAUSE_MAX_US) : 1;
	}
	return now_ns() - start;
}

/* After a launch on stream s (see the top of the file). */
static void bound(int dev, CUstream s, bool per_thread)
{
	struct gp_shim_device *d;
	CUevent previous;
	uint64_t waited = 0;

	if (!trail_ready(dev) || ++trail[dev].since < trail[dev].every)
		return;
	trail[dev].since = 0;
	previous = trail[dev].event[trail[dev].last];
	if (GP_REAL(event_query_fn, "cuEventQuery", 2000, 0)(previous) == CUDA_ERROR_NOT_READY)
		waited = wait_event(gp_shim_device(dev, &d) == CUDA_SUCCESS ? d->arbiter : NULL,
				    previous);
	if (waited > WAIT_SHORT_NS) {
		if (trail[dev].every > 1)
			trail[dev].every /= 2;
	} else if (trail[dev].every < EVERY_MAX) {
		trail[dev].every *= 2;
	}
	trail[dev].last ^= 1;
	GP_REAL(event_record_fn, "cuEventRecord", 2000, per_thread)(
		trail[dev].event[trail[dev].last], s);
}

/* After a launch on stream s: its work is pending, and bounded. */
static void launched(int dev, CUstream s, bool per_thread)
{
	if (!trail[dev].pending) {
		trail[dev].pending = true;
		trail[dev].several = false;
		trail[dev].stream = s;
		trail[dev].per_thread = per_thread;
		atomic_fetch_add(&pending_threads[dev], 1);
	} else if (s != trail[dev].stream || per_thread != trail[dev].per_thread) {
		trail[dev].several = true;
	}
	bound(dev, s, per_thread);
}

/* Runs a launch through the gate; `s` is the stream it goes to. */
#define GATED(s, per_thread, call)                         \
	do {                                               \
		int dev_;                                  \
		CUresult r_ = gate(&dev_);                 \
		if (r_ != CUDA_SUCCESS)                    \
			return r_;                         \
		r_ = call;                                 \
		if (r_ == CUDA_SUCCESS)                    \
			launched(dev_, (s), (per_thread)); \
		return r_;                                 \
	} while (0)

typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			    unsigned, unsigned, CUstream, void **);
typedef CUresult (*graph_launch_fn)(CUgraphExec, CUstream);

static CUresult launch_kernel(bool pt, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			      unsigned bx, unsigned by, unsigned bz, unsigned shm, CUstream s,
			      void **params, void **extra)
{
	GATED(s, pt, GP_REAL(PFN_cuLaunchKernel, "cuLaunchKernel", pt ? 7000 : 4000, pt)(
			     f, gx, gy, gz, bx, by, bz, shm, s, params, extra));
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
				unsigned int bx, unsigned int by, unsigned int bz,
				unsigned int shm, CUstream s, void **params, void **extra)
{
	return launch_kernel(false, f, gx, gy, gz, bx, by, bz, shm, s, params, extra);
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
				     unsigned int gz, unsigned int bx, unsigned int by,
				     unsigned int bz, unsigned int shm, CUstream s, void **params,
				     void **extra)
{
	return launch_kernel(true, f, gx, gy, gz, bx, by, bz, shm, s, params, extra);
}

static CUresult launch_ex(bool pt, const CUlaunchConfig *cfg, CUfunction f, void **params,
			  void **extra)
{
	if (!cfg)
		return CUDA_ERROR_INVALID_VALUE;
	GATED(cfg->hStream, pt,
	      GP_REAL(launch_ex_fn, "cuLaunchKernelEx", 11060, pt)(cfg, f, params, extra));
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params,
				  void **extra)
{
	return launch_ex(false, cfg, f, params, extra);
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params,
				       void **extra)
{
	return launch_ex(true, cfg, f, params, extra);
}

static CUresult launch_coop(bool pt, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			    unsigned bx, unsigned by, unsigned bz, unsigned shm, CUstream s,
			    void **params)
{
	GATED(s, pt, GP_REAL(coop_fn, "cuLaunchCooperativeKernel", 9000, pt)(
			     f, gx, gy, gz, bx, by, bz, shm, s, params));
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
					   unsigned int gz, unsigned int bx, unsigned int by,
					   unsigned int bz, unsigned int shm, CUstream s,
					   void **params)
{
	return launch_coop(false, f, gx, gy, gz, bx, by, bz, shm, s, params);
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx,
						unsigned int gy, unsigned int gz,
						unsigned int bx, unsigned int by,
						unsigned int bz, unsigned int shm, CUstream s,
						void **params)
{
	return launch_coop(true, f, gx, gy, gz, bx, by, bz, shm, s, params);
}

/* ---- synchronization: telling the arbiter when we are idle ------------ */

/* What a synchronization waited for: the current context, a stream (of
 * a flavour: per-thread or legacy default), or something else (an event,
 * another context). */
struct waited {
	enum { WAITED_CONTEXT, WAITED_STREAM, WAITED_OTHER } what;
	CUstream stream;
	bool per_thread;
};

/* Has this thread now waited for all the work it launched? A context
 * synchronization covers it all; a stream's, if every launch went to that
 * stream; anything, if every launch went to one stream and our last
 * event, recorded after the last of them, is done. */
static bool waited_for_all(int dev, const struct waited *w)
{
	if (w->what == WAITED_CONTEXT)
		return true;
	if (trail[dev].several)
		return false;
	if (w->what == WAITED_STREAM)
		return w->stream == trail[dev].stream && w->per_thread == trail[dev].per_thread;
	return trail[dev].ready && trail[dev].since == 0 &&
	       GP_REAL(event_query_fn, "cuEventQuery", 2000, 0)(
		       trail[dev].event[trail[dev].last]) == CUDA_SUCCESS;
}

/* After a wait: if everything this process launched on the current
 * device has finished (every thread of it has waited for all its own
 * work), its turn need not keep the device, and is not charged while it
 * keeps it idle. */
static CUresult after_wait(CUresult r, struct waited w)
{
	struct gp_shim_device *d;
	int dev;

	if (r != CUDA_SUCCESS || gp_shim_current(&d, &dev) != CUDA_SUCCESS || !d->arbiter)
		return r;
	if (trail[dev].pending) {
		if (!waited_for_all(dev, &w))
			return r;
		trail[dev].pending = false;
		if (atomic_fetch_sub(&pending_threads[dev], 1) != 1)
			return r;
	} else if (atomic_load(&pending_threads[dev])) {
		return r;
	}
	gp_arbiter_idle(d->arbiter);
	return r;
}

typedef CUresult (*stream_sync_fn)(CUstream);
typedef CUresult (*ctx_sync_v2_fn)(CUcontext);

CUresult CUDAAPI cuStreamSynchronize(CUstream s)
{
	return after_wait(GP_REAL(stream_sync_fn, "cuStreamSynchronize", 2000, 0)(s),
			  (struct waited){ WAITED_STREAM, s, false });
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream s)
{
	return after_wait(GP_REAL(stream_sync_fn, "cuStreamSynchronize", 7000, 1)(s),
			  (struct waited){ WAITED_STREAM, s, true });
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
	return after_wait(GP_REAL(ctx_sync_fn, "cuCtxSynchronize", 12000, 0)(),
			  (struct waited){ WAITED_CONTEXT, NULL, false });
}

typedef CUresult (*ctx_get_current_fn)(CUcontext *);

/* cuCtxSynchronize_v2 waits for `ctx`, the current context when NULL. */
static bool is_current(CUcontext ctx)
{
	CUcontext current;

	return !ctx || (GP_REAL(ctx_get_current_fn, "cuCtxGetCurrent", 4000, 0)(&current) ==
				CUDA_SUCCESS &&
			current == ctx);
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	return after_wait(GP_REAL(ctx_sync_v2_fn, "cuCtxSynchronize", 13000, 0)(ctx),
			  (struct waited){ is_current(ctx) ? WAITED_CONTEXT : WAITED_OTHER, NULL,
					   false });
}

CUresult CUDAAPI cuEventSynchronize(CUevent e)
{
	return after_wait(GP_REAL(event_sync_fn, "cuEventSynchronize", 2000, 0)(e),
			  (struct waited){ WAITED_OTHER, NULL, false });
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream s)
{
	GATED(s, false, GP_REAL(graph_launch_fn, "cuGraphLaunch", 10000, 0)(exec, s));
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec exec, CUstream s)
{
	GATED(s, true, GP_REAL(graph_launch_fn, "cuGraphLaunch", 10000, 1)(exec, s));
}
