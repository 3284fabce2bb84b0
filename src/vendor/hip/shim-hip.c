/* shim-hip.c — the HIP runtime's front end of libgpushare
 * (src/shim/front.h): memory slices, the in-task view of memory and the
 * compute share for programs on AMD Instinct GPUs and Hygon DCUs
 * (PyTorch's ROCm build, HIP samples, anything over libamdhip64).
 *
 * Programs reach HIP three ways, and each gets our hooks: by linking
 * libamdhip64 (the library exports the hooks under the same names; a
 * reference to hipMalloc@hip_4.2 binds to our unversioned definition);
 * by dlopen + dlsym (dlsym on a handle of libamdhip64.so answers our
 * hook: `library` and `hook` below, through the core's dlsym); and by
 * hipGetProcAddress (HIP 6.1), which looks names up inside the runtime and
 * would bypass an interposer: we ask the runtime, keep its verdict, and
 * hand out our hook for a hooked name. The real functions come from our
 * own dlopen of libamdhip64.so.6, looked up with glibc's dlsym and cached.
 *
 * Memory: hipMalloc, hipExtMallocWithFlags, hipMallocManaged,
 * hipMallocAsync, hipMallocFromPoolAsync, hipMallocPitch and
 * hipMemAllocPitch are admitted before the runtime is asked (the pitched
 * ones at the widest pitch, 512-byte rows, then settled on the runtime's
 * pitch) and settled after; past the limit they fail with
 * hipErrorOutOfMemory, the runtime's own. hipFree and hipFreeAsync take
 * the entry out before the real free and give the bytes back after (an
 * async free's bytes come back when the call returns, not in stream
 * order). The async and pool allocations are counted on the calling
 * thread's current device. Views: hipMemGetInfo, hipDeviceTotalMem and
 * the properties' totalGlobalMem (R0000 and R0600 layouts) show the slice.
 *
 * Compute: hipLaunchKernel, hipModuleLaunchKernel, hipExtLaunchKernel,
 * hipLaunchCooperativeKernel and hipGraphLaunch wait for the device's
 * turn and their queued work is bounded with HIP events; device, stream
 * and event synchronizations tell the core what was waited for.
 *
 * A device is the runtime's ordinal (after ROCR_VISIBLE_DEVICES and
 * HIP_VISIBLE_DEVICES); its region is named "GPU-" ("DCU-" when the name
 * says DCU, Hygon's cards) and the 16 hex digits hipDeviceGetUuid gives
 * (include/gp-hip.h), as the agent's rocm-smi backend names it. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "include/gp-hip.h"
#include "shim/front.h"

/* Every hook is a HIP entry point: its prototype is gp-hip.h's. */

extern struct gp_shim_front gp_front_hip;

#define PITCH_MOST 512  /* the widest row alignment admitted for a pitched allocation */

/* ---- the real runtime ----------------------------------------------------- */

static struct {
	pthread_mutex_t lock;
	void *hip;
} lib = { PTHREAD_MUTEX_INITIALIZER, NULL };

static void *hip_handle(void)
{
	void *h;

	pthread_mutex_lock(&lib.lock);
	if (!lib.hip)
		lib.hip = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL);
	h = lib.hip;
	pthread_mutex_unlock(&lib.lock);
	return h;
}

/* The runtime's function `name`, NULL when it has none. */
static void *real(const char *name)
{
	void *h = hip_handle();

	return h ? gp_shim_real_dlsym(h, name) : NULL;
}

#define REAL(type, name)                                                       \
	({                                                                     \
		static void *_Atomic cached;                                   \
		void *fn_ = cached;                                            \
		if (!fn_)                                                      \
			cached = fn_ = real(name);                             \
		(type) fn_;                                                    \
	})

/* Calls the runtime's `name`, or answers hipErrorNotInitialized when it
 * cannot be found. */
#define CALL(type, name, ...)                                                  \
	({                                                                     \
		type fn__ = REAL(type, name);                                  \
		fn__ ? fn__(__VA_ARGS__) : hipErrorNotInitialized;             \
	})

typedef hipError_t (*int_fn)(int *);
typedef hipError_t (*void_fn)(void);
typedef hipError_t (*name_fn)(char *, int, hipDevice_t);
typedef hipError_t (*uuid_fn)(hipUUID *, hipDevice_t);
typedef hipError_t (*total_fn)(size_t *, hipDevice_t);
typedef hipError_t (*meminfo_fn)(size_t *, size_t *);
typedef hipError_t (*props0_fn)(hipDeviceProp_tR0000_head *, int);
typedef hipError_t (*props6_fn)(hipDeviceProp_tR0600_head *, int);
typedef hipError_t (*malloc_fn)(void **, size_t);
typedef hipError_t (*malloc_flags_fn)(void **, size_t, unsigned int);
typedef hipError_t (*malloc_async_fn)(void **, size_t, hipStream_t);
typedef hipError_t (*malloc_pool_fn)(void **, size_t, hipMemPool_t, hipStream_t);
typedef hipError_t (*pitch_fn)(void **, size_t *, size_t, size_t);
typedef hipError_t (*mem_pitch_fn)(hipDeviceptr_t *, size_t *, size_t, size_t, unsigned int);
typedef hipError_t (*free_fn)(void *);
typedef hipError_t (*free_async_fn)(void *, hipStream_t);
typedef hipError_t (*stream_fn)(hipStream_t);
typedef hipError_t (*event_create_fn)(hipEvent_t *);
typedef hipError_t (*event_record_fn)(hipEvent_t, hipStream_t);
typedef hipError_t (*event_fn)(hipEvent_t);
typedef hipError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t);
typedef hipError_t (*ext_launch_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t,
				    hipEvent_t, hipEvent_t, int);
typedef hipError_t (*coop_fn)(const void *, dim3, dim3, void **, unsigned int, hipStream_t);
typedef hipError_t (*module_launch_fn)(hipFunction_t, unsigned, unsigned, unsigned, unsigned,
				       unsigned, unsigned, unsigned, hipStream_t, void **,
				       void **);
typedef hipError_t (*graph_launch_fn)(hipGraphExec_t, hipStream_t);
typedef hipError_t (*proc_fn)(const char *, void **, int, uint64_t,
			      hipDriverProcAddressQueryResult *);

/* ---- the front end --------------------------------------------------------- */

/* gpupool's UUID text (gp-hip.h) from what hipDeviceGetUuid gives: ROCr's
 * 16 hex characters, or (a runtime that gives raw bytes) the hex of the
 * first 8. */
static void uuid_text(const hipUUID *u, bool hygon, char *out, size_t len)
{
	char hex[17];
	bool text = true;

	for (int i = 0; i < 16; i++)
		text &= isxdigit((unsigned char)u->bytes[i]) != 0;
	for (int i = 0; i < 16; i++)
		hex[i] = text ? (char)tolower((unsigned char)u->bytes[i])
			      : "0123456789abcdef"[(unsigned char)u->bytes[i / 2] >> (i % 2 ? 0 : 4) & 0xf];
	hex[16] = '\0';
	snprintf(out, len, "%s%s", hygon ? "DCU-" : "GPU-", hex);
}

static int identify(int ordinal, char *uuid, size_t uuid_len, uint64_t *total_bytes)
{
	char name[256];
	hipUUID u;
	size_t total;

	if (CALL(uuid_fn, "hipDeviceGetUuid", &u, ordinal) != hipSuccess ||
	    CALL(name_fn, "hipDeviceGetName", name, (int)sizeof(name), ordinal) != hipSuccess ||
	    CALL(total_fn, "hipDeviceTotalMem", &total, ordinal) != hipSuccess)
		return -ENODEV;
	uuid_text(&u, strstr(name, "DCU") || strstr(name, "Hygon"), uuid, uuid_len);
	*total_bytes = total;
	return 0;
}

static int event_create(void **ret_event)
{
	hipEvent_t e;

	if (CALL(event_create_fn, "hipEventCreate", &e) != hipSuccess)
		return -1;
	*ret_event = e;
	return 0;
}

static int event_record(void *event, void *stream, bool flavour)
{
	(void)flavour;
	return CALL(event_record_fn, "hipEventRecord", event, stream) == hipSuccess ? 0 : -1;
}

static int event_query(void *event)
{
	hipError_t r = CALL(event_fn, "hipEventQuery", event);

	return r == hipSuccess ? 0 : r == hipErrorNotReady ? 1 : -1;
}

static void drain(void *unused)
{
	(void)unused;
	CALL(void_fn, "hipDeviceSynchronize");
}

/* A core error as HIP would say it. */
static hipError_t hip_error(int err)
{
	switch (err) {
	case 0: return hipSuccess;
	case -EINVAL: return hipErrorInvalidValue;
	case -ENOMEM: return hipErrorOutOfMemory;
	case -EPERM: return hipErrorNoDevice;
	case -ENODEV: return hipErrorInvalidDevice;
	default: return hipErrorUnknown;
	}
}

/* The slice of device `ordinal`. */
static hipError_t device_of(int ordinal, struct gp_shim_device **ret)
{
	if (gp_shim_configured() < 0)
		return hipErrorInvalidValue;
	if (!hip_handle()) {
		gp_shim_say("gpushare: cannot load libamdhip64.so.6\n");
		return hipErrorNoDevice;
	}
	return hip_error(gp_shim_front_device(&gp_front_hip, ordinal, ret));
}

/* The slice of the calling thread's current device. */
static hipError_t current(struct gp_shim_device **ret)
{
	int dev;
	hipError_t r = gp_shim_configured() < 0 ? hipErrorInvalidValue
						: CALL(int_fn, "hipGetDevice", &dev);

	return r == hipSuccess ? device_of(dev, ret) : r;
}

/* ---- memory ---------------------------------------------------------------- */

/* Admits `bytes` on the current device: hipSuccess with *ret set, or the
 * error to return. */
static hipError_t admit(uint64_t bytes, struct gp_shim_device **ret)
{
	hipError_t r = current(ret);

	return r == hipSuccess ? hip_error(gp_shim_admit(*ret, bytes)) : r;
}

static hipError_t settle(hipError_t r, struct gp_shim_device *d, void **ptr, uint64_t bytes)
{
	gp_shim_settle(r == hipSuccess, d, r == hipSuccess ? (uintptr_t)*ptr : 0, bytes);
	return r;
}

#define ALLOC(bytes, call)                                                     \
	({                                                                     \
		struct gp_shim_device *d_;                                     \
		hipError_t r_ = admit((bytes), &d_);                           \
		r_ == hipSuccess ? settle((call), d_, ptr, (bytes)) : r_;      \
	})

hipError_t hipMalloc(void **ptr, size_t size)
{
	return ALLOC(size, CALL(malloc_fn, "hipMalloc", ptr, size));
}

hipError_t hipExtMallocWithFlags(void **ptr, size_t size, unsigned int flags)
{
	return ALLOC(size, CALL(malloc_flags_fn, "hipExtMallocWithFlags", ptr, size, flags));
}

hipError_t hipMallocManaged(void **ptr, size_t size, unsigned int flags)
{
	return ALLOC(size, CALL(malloc_flags_fn, "hipMallocManaged", ptr, size, flags));
}

hipError_t hipMallocAsync(void **ptr, size_t size, hipStream_t stream)
{
	return ALLOC(size, CALL(malloc_async_fn, "hipMallocAsync", ptr, size, stream));
}

hipError_t hipMallocFromPoolAsync(void **ptr, size_t size, hipMemPool_t pool, hipStream_t stream)
{
	return ALLOC(size, CALL(malloc_pool_fn, "hipMallocFromPoolAsync", ptr, size, pool, stream));
}

/* A pitched allocation: the widest pitch admitted, the runtime's kept. */
static hipError_t pitched(hipError_t r, struct gp_shim_device *d, void **ptr, size_t *pitch,
			  size_t height, uint64_t most)
{
	uint64_t got;

	if (r != hipSuccess)
		return settle(r, d, ptr, most);
	got = (uint64_t)*pitch * height;
	if (d->limited && got < most)
		gp_region_mem_release(d->region, d->slot, most - got);
	return settle(r, d, ptr, got < most ? got : most);
}

static uint64_t pitch_most(size_t width, size_t height)
{
	return (uint64_t)((width + PITCH_MOST - 1) / PITCH_MOST * PITCH_MOST) * height;
}

hipError_t hipMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
	uint64_t most = pitch_most(width, height);
	struct gp_shim_device *d;
	hipError_t r = admit(most, &d);

	if (r != hipSuccess)
		return r;
	r = CALL(pitch_fn, "hipMallocPitch", ptr, pitch, width, height);
	return pitched(r, d, ptr, pitch, height, most);
}

hipError_t hipMemAllocPitch(hipDeviceptr_t *ptr, size_t *pitch, size_t width, size_t height,
			    unsigned int element)
{
	uint64_t most = pitch_most(width, height);
	struct gp_shim_device *d;
	hipError_t r = admit(most, &d);

	if (r != hipSuccess)
		return r;
	r = CALL(mem_pitch_fn, "hipMemAllocPitch", ptr, pitch, width, height, element);
	return pitched(r, d, ptr, pitch, height, most);
}

hipError_t hipFree(void *ptr)
{
	struct gp_shim_held *h = gp_shim_take((uintptr_t)ptr);
	hipError_t r = CALL(free_fn, "hipFree", ptr);

	gp_shim_freed(h, r == hipSuccess);
	return r;
}

hipError_t hipFreeAsync(void *ptr, hipStream_t stream)
{
	struct gp_shim_held *h = gp_shim_take((uintptr_t)ptr);
	hipError_t r = CALL(free_async_fn, "hipFreeAsync", ptr, stream);

	gp_shim_freed(h, r == hipSuccess);
	return r;
}

/* ---- views ------------------------------------------------------------------ */

hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total)
{
	struct gp_shim_device *d;
	hipError_t r = CALL(meminfo_fn, "hipMemGetInfo", free_bytes, total);
	uint64_t t, f;

	if (r != hipSuccess || current(&d) != hipSuccess)
		return r;
	t = *total;
	f = *free_bytes;
	gp_shim_view(d, &t, &f);
	*total = (size_t)t;
	*free_bytes = (size_t)f;
	return r;
}

/* bytes, the runtime's figure for device `ordinal`, clamped to its slice. */
static size_t clamped(int ordinal, size_t bytes)
{
	struct gp_shim_device *d;
	uint64_t t = bytes;

	if (device_of(ordinal, &d) == hipSuccess)
		gp_shim_view(d, &t, NULL);
	return (size_t)t;
}

hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device)
{
	hipError_t r = CALL(total_fn, "hipDeviceTotalMem", bytes, device);

	if (r == hipSuccess)
		*bytes = clamped(device, *bytes);
	return r;
}

hipError_t hipGetDeviceProperties(hipDeviceProp_tR0000_head *prop, int device)
{
	hipError_t r = CALL(props0_fn, "hipGetDeviceProperties", prop, device);

	if (r == hipSuccess)
		prop->totalGlobalMem = clamped(device, prop->totalGlobalMem);
	return r;
}

hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600_head *prop, int device)
{
	hipError_t r = CALL(props6_fn, "hipGetDevicePropertiesR0600", prop, device);

	if (r == hipSuccess)
		prop->totalGlobalMem = clamped(device, prop->totalGlobalMem);
	return r;
}

/* ---- compute --------------------------------------------------------------- */

/* The gate before a launch on the current device: hipSuccess with *ret
 * set, or the error to return. */
static hipError_t gate(struct gp_shim_device **ret)
{
	hipError_t r = current(ret);

	if (r == hipSuccess)
		gp_shim_gate(&gp_front_hip, *ret);
	return r;
}

static hipError_t launched(hipError_t r, struct gp_shim_device *d, hipStream_t stream)
{
	if (r == hipSuccess)
		gp_shim_launched(&gp_front_hip, d, stream, false);
	return r;
}

#define LAUNCH(stream, call)                                                   \
	({                                                                     \
		struct gp_shim_device *d_;                                     \
		hipError_t r_ = gate(&d_);                                     \
		r_ == hipSuccess ? launched((call), d_, (stream)) : r_;        \
	})

hipError_t hipLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shared,
			   hipStream_t stream)
{
	return LAUNCH(stream, CALL(launch_fn, "hipLaunchKernel", f, grid, block, args, shared,
				   stream));
}

hipError_t hipExtLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shared,
			      hipStream_t stream, hipEvent_t start, hipEvent_t stop, int flags)
{
	return LAUNCH(stream, CALL(ext_launch_fn, "hipExtLaunchKernel", f, grid, block, args,
				   shared, stream, start, stop, flags));
}

hipError_t hipLaunchCooperativeKernel(const void *f, dim3 grid, dim3 block, void **args,
				      unsigned int shared, hipStream_t stream)
{
	return LAUNCH(stream, CALL(coop_fn, "hipLaunchCooperativeKernel", f, grid, block, args,
				   shared, stream));
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
				 unsigned bx, unsigned by, unsigned bz, unsigned shared,
				 hipStream_t stream, void **params, void **extra)
{
	return LAUNCH(stream, CALL(module_launch_fn, "hipModuleLaunchKernel", f, gx, gy, gz, bx,
				   by, bz, shared, stream, params, extra));
}

hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream)
{
	return LAUNCH(stream, CALL(graph_launch_fn, "hipGraphLaunch", exec, stream));
}

/* After a successful wait on the current device. */
static hipError_t after_wait(hipError_t r, enum gp_shim_waited what, hipStream_t stream)
{
	struct gp_shim_device *d;

	if (r == hipSuccess && current(&d) == hipSuccess)
		gp_shim_waited(&gp_front_hip, d, what, stream, false);
	return r;
}

hipError_t hipDeviceSynchronize(void)
{
	return after_wait(CALL(void_fn, "hipDeviceSynchronize"), GP_WAITED_DEVICE, NULL);
}

hipError_t hipStreamSynchronize(hipStream_t stream)
{
	return after_wait(CALL(stream_fn, "hipStreamSynchronize", stream), GP_WAITED_STREAM,
			  stream);
}

hipError_t hipEventSynchronize(hipEvent_t event)
{
	return after_wait(CALL(event_fn, "hipEventSynchronize", event), GP_WAITED_OTHER, NULL);
}

/* ---- finding functions: dlsym and hipGetProcAddress ----------------------------- */

static void *hook(const char *symbol);

hipError_t hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags,
			     hipDriverProcAddressQueryResult *status)
{
	hipError_t r = CALL(proc_fn, "hipGetProcAddress", symbol, pfn, version, flags, status);
	void *ours;

	if (r != hipSuccess || !symbol || !pfn || !*pfn)
		return r;
	/* From 6.0 the header's hipGetDeviceProperties is the R0600 one. */
	if (version >= 600 && strcmp(symbol, "hipGetDeviceProperties") == 0)
		symbol = "hipGetDevicePropertiesR0600";
	if ((ours = hook(symbol)))
		*pfn = ours;
	return r;
}

/* Sorted by name (hook() searches it in halves). */
static const struct {
	const char *name;
	void *fn;
} hooks[] = {
	{ "hipDeviceSynchronize", (void *)hipDeviceSynchronize },
	{ "hipDeviceTotalMem", (void *)hipDeviceTotalMem },
	{ "hipEventSynchronize", (void *)hipEventSynchronize },
	{ "hipExtLaunchKernel", (void *)hipExtLaunchKernel },
	{ "hipExtMallocWithFlags", (void *)hipExtMallocWithFlags },
	{ "hipFree", (void *)hipFree },
	{ "hipFreeAsync", (void *)hipFreeAsync },
	{ "hipGetDeviceProperties", (void *)hipGetDeviceProperties },
	{ "hipGetDevicePropertiesR0600", (void *)hipGetDevicePropertiesR0600 },
	{ "hipGetProcAddress", (void *)hipGetProcAddress },
	{ "hipGraphLaunch", (void *)hipGraphLaunch },
	{ "hipLaunchCooperativeKernel", (void *)hipLaunchCooperativeKernel },
	{ "hipLaunchKernel", (void *)hipLaunchKernel },
	{ "hipMalloc", (void *)hipMalloc },
	{ "hipMallocAsync", (void *)hipMallocAsync },
	{ "hipMallocFromPoolAsync", (void *)hipMallocFromPoolAsync },
	{ "hipMallocManaged", (void *)hipMallocManaged },
	{ "hipMallocPitch", (void *)hipMallocPitch },
	{ "hipMemAllocPitch", (void *)hipMemAllocPitch },
	{ "hipMemGetInfo", (void *)hipMemGetInfo },
	{ "hipModuleLaunchKernel", (void *)hipModuleLaunchKernel },
	{ "hipStreamSynchronize", (void *)hipStreamSynchronize },
};

static void *hook(const char *symbol)
{
	size_t lo = 0, hi = sizeof(hooks) / sizeof(hooks[0]);

	if (strncmp(symbol, "hip", 3) != 0)
		return NULL;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(symbol, hooks[mid].name);

		if (c == 0)
			return hooks[mid].fn;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

struct gp_shim_front gp_front_hip = {
	.name = "hip",
	.library = "libamdhip64.so",
	.hook = hook,
	.identify = identify,
	.event_create = event_create,
	.event_record = event_record,
	.event_query = event_query,
	.drain = drain,
	GP_SHIM_FRONT_INIT,
};
