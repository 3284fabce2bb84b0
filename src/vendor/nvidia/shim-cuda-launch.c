/* shim-cuda-launch.c — every CUDA launch path goes through the compute arbiter.
 *
 * cuLaunchKernel, cuLaunchKernelEx and cooperative launches (and their
 * per-thread-stream forms) and cuGraphLaunch wait for the device's turn
 * before reaching the driver, and after a launch the work queued is
 * bounded with CUDA events (the core's trail: src/shim/trail.c); the
 * synchronizations tell the core what was waited for, so that an idle
 * process's turn is not charged. */
#include <stdbool.h>
#include <stdint.h>

#include "vendor/nvidia/shim-cuda.h"

typedef CUresult (*ctx_sync_fn)(void);
typedef CUresult (*event_create_fn)(CUevent *, unsigned int);
typedef CUresult (*event_record_fn)(CUevent, CUstream);
typedef CUresult (*event_sync_fn)(CUevent);
typedef CUresult (*event_query_fn)(CUevent);

/* ---- the events the core bounds launches with (gp_front_cuda) ---------- */

void gp_cuda_drain(void *unused)
{
	(void)unused;
	GP_REAL(ctx_sync_fn, "cuCtxSynchronize", 12000, 0)();
}

int gp_cuda_event_create(void **ret_event)
{
	CUevent e;

	if (GP_REAL(event_create_fn, "cuEventCreate", 2000, 0)(&e, CU_EVENT_DISABLE_TIMING) !=
	    CUDA_SUCCESS)
		return -1;
	*ret_event = e;
	return 0;
}

int gp_cuda_event_record(void *event, void *stream, bool per_thread)
{
	return GP_REAL(event_record_fn, "cuEventRecord", 2000, per_thread)(event, stream) ==
		       CUDA_SUCCESS ? 0 : -1;
}

int gp_cuda_event_query(void *event)
{
	CUresult r = GP_REAL(event_query_fn, "cuEventQuery", 2000, 0)(event);

	return r == CUDA_SUCCESS ? 0 : r == CUDA_ERROR_NOT_READY ? 1 : -1;
}

/* Runs a launch through the gate; `s` is the stream it goes to. */
#define GATED(s, per_thread, call)                                            \
	do {                                                                  \
		struct gp_shim_device *d_;                                    \
		CUresult r_ = gp_shim_current(&d_, NULL);                     \
		if (r_ != CUDA_SUCCESS)                                       \
			return r_;                                            \
		gp_shim_gate(&gp_front_cuda, d_);                             \
		r_ = call;                                                    \
		if (r_ == CUDA_SUCCESS)                                       \
			gp_shim_launched(&gp_front_cuda, d_, (s), (per_thread)); \
		return r_;                                                    \
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

/* After a successful wait on the current device. */
static CUresult after_wait(CUresult r, enum gp_shim_waited what, CUstream s, bool per_thread)
{
	struct gp_shim_device *d;

	if (r == CUDA_SUCCESS && gp_shim_current(&d, NULL) == CUDA_SUCCESS)
		gp_shim_waited(&gp_front_cuda, d, what, s, per_thread);
	return r;
}

typedef CUresult (*stream_sync_fn)(CUstream);
typedef CUresult (*ctx_sync_v2_fn)(CUcontext);

CUresult CUDAAPI cuStreamSynchronize(CUstream s)
{
	return after_wait(GP_REAL(stream_sync_fn, "cuStreamSynchronize", 2000, 0)(s),
			  GP_WAITED_STREAM, s, false);
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream s)
{
	return after_wait(GP_REAL(stream_sync_fn, "cuStreamSynchronize", 7000, 1)(s),
			  GP_WAITED_STREAM, s, true);
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
	return after_wait(GP_REAL(ctx_sync_fn, "cuCtxSynchronize", 12000, 0)(),
			  GP_WAITED_DEVICE, NULL, false);
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
			  is_current(ctx) ? GP_WAITED_DEVICE : GP_WAITED_OTHER, NULL, false);
}

CUresult CUDAAPI cuEventSynchronize(CUevent e)
{
	return after_wait(GP_REAL(event_sync_fn, "cuEventSynchronize", 2000, 0)(e),
			  GP_WAITED_OTHER, NULL, false);
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream s)
{
	GATED(s, false, GP_REAL(graph_launch_fn, "cuGraphLaunch", 10000, 0)(exec, s));
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec exec, CUstream s)
{
	GATED(s, true, GP_REAL(graph_launch_fn, "cuGraphLaunch", 10000, 1)(exec, s));
}
