/* rt-cuda.c — gpuload's CUDA runtime (runtime.h): the CUDA driver API,
 * loaded by driver.c like the CUDA runtime loads it (libcuda.so.1, then
 * cuGetProcAddress_v2; plain dlsym with --direct).
 *
 * A session is cuInit, the device's primary context (made current on
 * gpuload's one thread), the gpuload_spin module (kernel.c: PTX that the
 * driver JIT-compiles; the simulated driver charges its first parameter in
 * nanoseconds of device time) and one stream. A launch is one
 * cuLaunchKernel of gpuload_spin on that stream with --blocks x --threads.
 * Every failed driver call is reported once through gl_report with the
 * driver's name and text of the CUresult, and remembered for last_error. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "driver.h"
#include "kernel.h"
#include "runtime.h"

struct cuda_session {
	CUdevice dev;
	CUcontext ctx;          /* the retained primary context, or NULL */
	CUmodule module;
	CUfunction spin;
	CUstream stream;
	unsigned blocks, threads;
	CUresult last;          /* the last failure, or CUDA_SUCCESS */
};

/* 0 for CUDA_SUCCESS; otherwise remembers r, reports "gpuload: CALL: NAME
 * (text)" and returns -EIO. */
static int check(struct cuda_session *s, CUresult r, const char *call)
{
	char buf[32];

	if (r == CUDA_SUCCESS)
		return 0;
	if (s)
		s->last = r;
	return gl_report(call, gl_driver_error_name(r, buf, sizeof(buf)),
			 gl_driver_error_text(r));
}

static int cuda_load(bool direct, char *err, size_t err_len)
{
	return gl_driver_load(direct, err, err_len);
}

static int cuda_close(void *session)
{
	struct cuda_session *s = session;
	int ret = 0;

	if (!s)
		return 0;
	if (s->stream)
		ret |= check(s, gl_cu.cuStreamDestroy(s->stream), "cuStreamDestroy_v2");
	if (s->module)
		ret |= check(s, gl_cu.cuModuleUnload(s->module), "cuModuleUnload");
	if (s->ctx) {
		ret |= check(s, gl_cu.cuCtxSetCurrent(NULL), "cuCtxSetCurrent");
		ret |= check(s, gl_cu.cuDevicePrimaryCtxRelease(s->dev),
			     "cuDevicePrimaryCtxRelease_v2");
	}
	free(s);
	return ret ? -EIO : 0;
}

static int open_steps(struct cuda_session *s, int device)
{
	if (check(s, gl_cu.cuInit(0), "cuInit") ||
	    check(s, gl_cu.cuDeviceGet(&s->dev, device), "cuDeviceGet") ||
	    check(s, gl_cu.cuDevicePrimaryCtxRetain(&s->ctx, s->dev), "cuDevicePrimaryCtxRetain"))
		return -EIO;
	if (check(s, gl_cu.cuCtxSetCurrent(s->ctx), "cuCtxSetCurrent") ||
	    check(s, gl_cu.cuModuleLoadData(&s->module, gl_kernel_ptx), "cuModuleLoadData") ||
	    check(s, gl_cu.cuModuleGetFunction(&s->spin, s->module, GL_KERNEL_NAME),
		  "cuModuleGetFunction(\"" GL_KERNEL_NAME "\")") ||
	    check(s, gl_cu.cuStreamCreate(&s->stream, 0), "cuStreamCreate"))
		return -EIO;
	return 0;
}

static int cuda_open(const struct gl_runtime_params *p, void **ret_session)
{
	struct cuda_session *s = calloc(1, sizeof(*s));

	if (!s) {
		gl_report("calloc", "out of memory", NULL);
		return -ENOMEM;
	}
	s->blocks = p->blocks;
	s->threads = p->threads;
	if (open_steps(s, p->device) < 0) {
		cuda_close(s);
		return -EIO;
	}
	*ret_session = s;
	return 0;
}

static int cuda_launch(void *session, uint64_t ns)
{
	struct cuda_session *s = session;
	void *params[] = { &ns };

	return check(s, gl_cu.cuLaunchKernel(s->spin, s->blocks, 1, 1, s->threads, 1, 1, 0,
					     s->stream, params, NULL),
		     "cuLaunchKernel");
}

static int cuda_sync(void *session)
{
	struct cuda_session *s = session;

	return check(s, gl_cu.cuStreamSynchronize(s->stream), "cuStreamSynchronize");
}

static int cuda_alloc(void *session, size_t bytes, void **ret_ptr)
{
	struct cuda_session *s = session;
	CUdeviceptr p = 0;
	CUresult r = gl_cu.cuMemAlloc(&p, bytes);

	if (r == CUDA_ERROR_OUT_OF_MEMORY) {
		s->last = r;
		return -ENOMEM;
	}
	if (check(s, r, "cuMemAlloc_v2"))
		return -EIO;
	*ret_ptr = (void *)(uintptr_t)p;
	return 0;
}

static int cuda_free(void *session, void *ptr)
{
	return check(session, gl_cu.cuMemFree((CUdeviceptr)(uintptr_t)ptr), "cuMemFree_v2");
}

static int cuda_mem_info(void *session, size_t *ret_free, size_t *ret_total)
{
	size_t free_bytes = 0, total_bytes = 0;

	if (check(session, gl_cu.cuMemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo_v2"))
		return -EIO;
	*ret_free = free_bytes;
	*ret_total = total_bytes;
	return 0;
}

static const char *cuda_last_error(void *session, char *buf, size_t len)
{
	struct cuda_session *s = session;

	return s->last == CUDA_SUCCESS ? NULL : gl_driver_error_name(s->last, buf, len);
}

static int cuda_event_create(void *session, bool timing, void **ret_event)
{
	CUevent ev = NULL;

	if (check(session, gl_cu.cuEventCreate(&ev, timing ? CU_EVENT_DEFAULT
							   : CU_EVENT_DISABLE_TIMING),
		  "cuEventCreate"))
		return -EIO;
	*ret_event = ev;
	return 0;
}

static int cuda_event_record(void *session, void *event)
{
	struct cuda_session *s = session;

	return check(s, gl_cu.cuEventRecord(event, s->stream), "cuEventRecord");
}

static int cuda_event_sync(void *session, void *event)
{
	return check(session, gl_cu.cuEventSynchronize(event), "cuEventSynchronize");
}

/* cuEventElapsedTime_v2 is optional in the table (driver.h); a failure is
 * the caller's cue to use the host clock, so it is not reported. */
static int cuda_event_elapsed(void *session, void *start, void *end, double *ret_ms)
{
	float ms = 0;

	(void)session;
	if (!gl_cu.cuEventElapsedTime)
		return -ENOSYS;
	if (gl_cu.cuEventElapsedTime(&ms, start, end) != CUDA_SUCCESS)
		return -EIO;
	*ret_ms = ms;
	return 0;
}

static int cuda_event_destroy(void *session, void *event)
{
	return event ? check(session, gl_cu.cuEventDestroy(event), "cuEventDestroy_v2") : 0;
}

const struct gl_runtime gl_runtime_cuda = {
	.name = "cuda",
	.summary = "CUDA driver API (libcuda.so.1); kernel: gpuload_spin PTX",
	.loader = "cuGetProcAddress_v2",
	.loader_direct = "dlsym",
	.load = cuda_load,
	.open = cuda_open,
	.close = cuda_close,
	.launch = cuda_launch,
	.sync = cuda_sync,
	.alloc = cuda_alloc,
	.free = cuda_free,
	.mem_info = cuda_mem_info,
	.last_error = cuda_last_error,
	.event_create = cuda_event_create,
	.event_record = cuda_event_record,
	.event_sync = cuda_event_sync,
	.event_elapsed = cuda_event_elapsed,
	.event_destroy = cuda_event_destroy,
};
