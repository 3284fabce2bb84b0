/* rt-hip.c — gpuload's HIP runtime (runtime.h): AMD ROCm's and Hygon's
 * DTK's libamdhip64.so.6, loaded with dlopen at its real name; its
 * functions found with hipGetProcAddress (HIP 6.1), as frameworks find
 * them, or with dlsym under --direct.
 *
 * A session is hipSetDevice(--device), a module with gpuload's kernel and
 * one stream. A launch is one hipModuleLaunchKernel of --blocks x
 * --threads on that stream whose first argument is a uint64_t of
 * nanoseconds, which the simulated runtime (src/simdev/hip/) charges as
 * device time. gpuload carries no AMD code object: the module image is a
 * marker, so this runtime drives simdev's devices only (a real runtime
 * would refuse the module). Events are HIP events, with elapsed time.
 * Every failed call is reported once through gl_report with HIP's name
 * and text of the error, and remembered for last_error. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "include/gp-hip.h"
#include "runtime.h"

#define FUNCTIONS(X)                                                             \
	X(hipGetErrorName) X(hipGetErrorString) X(hipInit) X(hipSetDevice)       \
	X(hipMalloc) X(hipFree) X(hipMemGetInfo) X(hipStreamCreate)              \
	X(hipStreamDestroy) X(hipStreamSynchronize) X(hipModuleLoadData)         \
	X(hipModuleUnload) X(hipModuleGetFunction) X(hipModuleLaunchKernel)      \
	X(hipEventCreate) X(hipEventRecord) X(hipEventSynchronize)               \
	X(hipEventElapsedTime) X(hipEventDestroy)

static struct {
#define FIELD(fn) __typeof__(fn) *fn;
	FUNCTIONS(FIELD)
#undef FIELD
} hip;

/* The module image: a marker (see the top of the file). */
static const char spin_image[] = "gpuload_spin";

struct hip_session {
	hipModule_t module;
	hipFunction_t spin;
	hipStream_t stream;
	unsigned blocks, threads;
	hipError_t last;        /* the last failure, or hipSuccess */
};

/* 0 for hipSuccess; otherwise remembers r, reports it, returns -EIO. */
static int check(struct hip_session *s, hipError_t r, const char *call)
{
	if (r == hipSuccess)
		return 0;
	if (s)
		s->last = r;
	return gl_report(call, hip.hipGetErrorName(r), hip.hipGetErrorString(r));
}

static int hip_load(bool direct, char *err, size_t err_len)
{
	static void *lib;
	hipError_t (*proc)(const char *, void **, int, uint64_t, hipDriverProcAddressQueryResult *);
	void *fn;

	if (lib)
		return 0;
	lib = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, err_len, "cannot load libamdhip64.so.6 (%s): no ROCm runtime here; for "
			 "simulated devices set GPUPOOL_SIM_DEVICES=mi300x-192g:N and "
			 "LD_LIBRARY_PATH=build/simdev", dlerror());
		return -ENOENT;
	}
	proc = direct ? NULL : (__typeof__(proc))dlsym(lib, "hipGetProcAddress");
	if (!direct && !proc) {
		snprintf(err, err_len, "libamdhip64.so.6 lacks hipGetProcAddress: HIP 6.1 or newer "
			 "is needed (or use --direct)");
		goto fail;
	}
#define LOOKUP(name)                                                                  \
	fn = NULL;                                                                    \
	if (proc)                                                                     \
		proc(#name, &fn, GP_HIP_VERSION, 0, NULL);                            \
	else                                                                          \
		fn = dlsym(lib, #name);                                               \
	if (!fn) {                                                                    \
		snprintf(err, err_len, "libamdhip64.so.6 lacks %s: HIP 6 is needed", #name); \
		goto fail;                                                            \
	}                                                                             \
	hip.name = (__typeof__(hip.name))fn;
	FUNCTIONS(LOOKUP)
#undef LOOKUP
	return 0;
fail:
	dlclose(lib);
	lib = NULL;
	return -ENOENT;
}

static int hip_close(void *session)
{
	struct hip_session *s = session;
	int ret = 0;

	if (!s)
		return 0;
	if (s->stream)
		ret |= check(s, hip.hipStreamDestroy(s->stream), "hipStreamDestroy");
	if (s->module)
		ret |= check(s, hip.hipModuleUnload(s->module), "hipModuleUnload");
	free(s);
	return ret ? -EIO : 0;
}

static int hip_open(const struct gl_runtime_params *p, void **ret_session)
{
	struct hip_session *s = calloc(1, sizeof(*s));

	if (!s) {
		gl_report("calloc", "out of memory", NULL);
		return -ENOMEM;
	}
	s->blocks = p->blocks ? p->blocks : 1;
	s->threads = p->threads ? p->threads : 1;
	if (check(s, hip.hipInit(0), "hipInit") ||
	    check(s, hip.hipSetDevice(p->device), "hipSetDevice") ||
	    check(s, hip.hipModuleLoadData(&s->module, spin_image), "hipModuleLoadData") ||
	    check(s, hip.hipModuleGetFunction(&s->spin, s->module, "gpuload_spin"),
		  "hipModuleGetFunction") ||
	    check(s, hip.hipStreamCreate(&s->stream), "hipStreamCreate")) {
		hip_close(s);
		return -EIO;
	}
	*ret_session = s;
	return 0;
}

static int hip_launch(void *session, uint64_t ns)
{
	struct hip_session *s = session;
	void *args[] = { &ns };

	return check(s, hip.hipModuleLaunchKernel(s->spin, s->blocks, 1, 1, s->threads, 1, 1, 0,
						  s->stream, args, NULL),
		     "hipModuleLaunchKernel");
}

static int hip_sync(void *session)
{
	struct hip_session *s = session;

	return check(s, hip.hipStreamSynchronize(s->stream), "hipStreamSynchronize");
}

static int hip_alloc(void *session, size_t bytes, void **ret_ptr)
{
	struct hip_session *s = session;
	void *p = NULL;
	hipError_t r = hip.hipMalloc(&p, bytes);

	if (r == hipErrorOutOfMemory) {
		s->last = r;
		return -ENOMEM;
	}
	if (check(s, r, "hipMalloc"))
		return -EIO;
	*ret_ptr = p;
	return 0;
}

static int hip_free(void *session, void *ptr)
{
	return check(session, hip.hipFree(ptr), "hipFree");
}

static int hip_mem_info(void *session, size_t *ret_free, size_t *ret_total)
{
	size_t f = 0, t = 0;

	if (check(session, hip.hipMemGetInfo(&f, &t), "hipMemGetInfo"))
		return -EIO;
	*ret_free = f;
	*ret_total = t;
	return 0;
}

static const char *hip_last_error(void *session, char *buf, size_t len)
{
	struct hip_session *s = session;

	(void)buf;
	(void)len;
	return s->last == hipSuccess ? NULL : hip.hipGetErrorName(s->last);
}

static int hip_event_create(void *session, bool timing, void **ret_event)
{
	hipEvent_t e = NULL;

	(void)timing;
	if (check(session, hip.hipEventCreate(&e), "hipEventCreate"))
		return -EIO;
	*ret_event = e;
	return 0;
}

static int hip_event_record(void *session, void *event)
{
	struct hip_session *s = session;

	return check(s, hip.hipEventRecord(event, s->stream), "hipEventRecord");
}

static int hip_event_sync(void *session, void *event)
{
	return check(session, hip.hipEventSynchronize(event), "hipEventSynchronize");
}

/* Not reported: the caller falls back to the host clock. */
static int hip_event_elapsed(void *session, void *start, void *end, double *ret_ms)
{
	float ms;

	(void)session;
	if (hip.hipEventElapsedTime(&ms, start, end) != hipSuccess)
		return -EIO;
	*ret_ms = ms;
	return 0;
}

static int hip_event_destroy(void *session, void *event)
{
	return event ? check(session, hip.hipEventDestroy(event), "hipEventDestroy") : 0;
}

const struct gl_runtime gl_runtime_hip = {
	.name = "hip",
	.summary = "AMD ROCm / Hygon DTK HIP 6 (libamdhip64.so.6); simulated devices only "
		   "(kernel: its first argument, ns)",
	.loader = "hipGetProcAddress",
	.loader_direct = "dlsym",
	.load = hip_load,
	.open = hip_open,
	.close = hip_close,
	.launch = hip_launch,
	.sync = hip_sync,
	.alloc = hip_alloc,
	.free = hip_free,
	.mem_info = hip_mem_info,
	.last_error = hip_last_error,
	.event_create = hip_event_create,
	.event_record = hip_event_record,
	.event_sync = hip_event_sync,
	.event_elapsed = hip_event_elapsed,
	.event_destroy = hip_event_destroy,
};
