/* shim-cnrt.c — the Cambricon front ends of libgpushare (src/shim/front.h):
 * memory slices, the in-task view of memory and the compute share for
 * programs on MLUs, through the CNRT 6 runtime (gp_front_cnrt) and the
 * CNDrv driver API beneath it (gp_front_cndrv).
 *
 * Two layers, counted once. CNRT sits on CNDrv, and how libcnrt reaches
 * the driver is its own business: through the dynamic linker (then it
 * calls our CNDrv hooks), through cnGetExportFunction (which we answer
 * with our hooks, as we answer dlsym on either library's handle), or
 * inside itself (then only our CNRT hooks see the call). So both layers
 * are hooked, and a thread-local depth says "inside a CNRT hook": a CNDrv
 * hook called there passes straight to the driver. An allocation made
 * through CNRT is admitted and settled by the CNRT hook alone, one made
 * through CNDrv by the CNDrv hook alone, whatever path lies between; the
 * same holds for frees, launches, waits and memory figures. (The
 * allocation's key is its device address, the same number in both layers,
 * so memory allocated in one and freed in the other is given back.)
 *
 * Hooked: allocations (cnrtMalloc; cnMalloc, cnMallocSecurity, cnZmalloc)
 * are admitted before the runtime is asked and settled after; past the
 * limit they fail with the layer's own out-of-memory error
 * (cnrtErrorNoMem, CN_MEMORY_ERROR_OUT_OF_MEMORY). Frees (cnrtFree,
 * cnFree) take the entry out before the real free and give the bytes back
 * after. cnrtMemGetInfo and cnMemGetInfo show the slice. Launches
 * (cnrtInvokeKernel, cnInvokeKernel) wait for the device's turn and their
 * queued work is bounded with CNDrv notifiers; synchronizations
 * (cnrtQueueSync, cnrtSyncDevice, cnQueueSync, cnCtxSync) tell the core
 * what was waited for.
 *
 * A device is the runtime's ordinal (after MLU_VISIBLE_DEVICES, which we
 * read as the runtime does: indices; any other form leaves the device
 * unidentified, and its calls fail); its region is named by CNDev's UUID
 * with "MLU-" before it, as the agent's backend (manage.c) names it, and
 * CNDev (libcndev.so, loaded here) gives its memory. Assumed, true on
 * simdev, to be checked on hardware: a cnrtQueue_t is a CNqueue (the
 * notifiers that bound queued work are CNDrv's, for both layers). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-cambricon.h"
#include "shim/front.h"

/* Every hook is a CNRT or CNDrv entry point: its prototype is
 * gp-cambricon.h's. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

extern struct gp_shim_front gp_front_cnrt, gp_front_cndrv;

/* How deep the calling thread is inside our CNRT hooks. */
static __thread int inside_cnrt;

/* ---- the real libraries ------------------------------------------------ */

enum { LIB_CNRT, LIB_CNDRV, LIB_CNDEV, LIBS };

static const char *const lib_names[LIBS] = { "libcnrt.so", "libcndrv.so", "libcndev.so" };

static struct {
	pthread_mutex_t lock;
	void *handle[LIBS];
	bool cndev_ready;
} lib = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *lib_handle(int which)
{
	void *h;

	pthread_mutex_lock(&lib.lock);
	if (!lib.handle[which])
		lib.handle[which] = dlopen(lib_names[which], RTLD_NOW | RTLD_LOCAL);
	h = lib.handle[which];
	pthread_mutex_unlock(&lib.lock);
	return h;
}

/* The real function `name` of library `which`, NULL when it has none. */
static void *real(int which, const char *name)
{
	void *h = lib_handle(which);

	return h ? gp_shim_real_dlsym(h, name) : NULL;
}

#define REAL(which, name)                                                      \
	({                                                                     \
		static void *_Atomic cached;                                   \
		void *fn_ = cached;                                            \
		if (!fn_)                                                      \
			cached = fn_ = real(which, #name);                     \
		(gp_##name##_t) fn_;                                           \
	})

/* Calls CNRT's `name`, or answers cnrtErrorInit when it cannot be found. */
#define CNRT(name, ...)                                                        \
	({                                                                     \
		gp_##name##_t fn__ = REAL(LIB_CNRT, name);                     \
		fn__ ? fn__(__VA_ARGS__) : cnrtErrorInit;                      \
	})

/* Calls CNDrv's `name`, or answers CN_ERROR_NOT_INITIALIZED. */
#define CNDRV(name, ...)                                                       \
	({                                                                     \
		gp_##name##_t fn__ = REAL(LIB_CNDRV, name);                    \
		fn__ ? fn__(__VA_ARGS__) : CN_ERROR_NOT_INITIALIZED;           \
	})

/* CNDev's function `name`, CNDev started once, under lib.lock. */
static void *cndev_fn(const char *name)
{
	void *fn = NULL, *h = lib_handle(LIB_CNDEV);

	pthread_mutex_lock(&lib.lock);
	if (h && !lib.cndev_ready) {
		gp_cndevInit_t init = (gp_cndevInit_t)gp_shim_real_dlsym(h, "cndevInit");

		lib.cndev_ready = init && init(0) == CNDEV_SUCCESS;
	}
	if (lib.cndev_ready)
		fn = gp_shim_real_dlsym(h, name);
	pthread_mutex_unlock(&lib.lock);
	return fn;
}

/* ---- the front ends' callbacks ------------------------------------------- */

/* CNDev's index of the runtime's device `ordinal`: MLU_VISIBLE_DEVICES
 * read as the runtime reads it (cndrv.c), -1 when it names none. */
static int cndev_index(int ordinal, unsigned count)
{
	const char *p = getenv("MLU_VISIBLE_DEVICES");
	long seen[GP_SHIM_DEVICES_MAX];
	int n = 0;

	if (!p)
		return ordinal < (int)count ? ordinal : -1;
	while (*p && n < GP_SHIM_DEVICES_MAX) {
		char *end;
		long i = strtol(p, &end, 10);
		bool repeat = false;

		for (int j = 0; j < n; j++)
			repeat |= seen[j] == i;
		if (end == p || (*end != ',' && *end) || i < 0 || i >= (long)count || repeat)
			break;
		if (n == ordinal)
			return (int)i;
		seen[n++] = i;
		if (!*end)
			break;
		p = end + 1;
	}
	return -1;
}

static int identify(int ordinal, char *uuid, size_t uuid_len, uint64_t *total_bytes)
{
	gp_cndevGetDeviceCount_t count = (gp_cndevGetDeviceCount_t)cndev_fn("cndevGetDeviceCount");
	gp_cndevGetDeviceHandleByIndex_t by_index =
		(gp_cndevGetDeviceHandleByIndex_t)cndev_fn("cndevGetDeviceHandleByIndex");
	gp_cndevGetUUID_t get_uuid = (gp_cndevGetUUID_t)cndev_fn("cndevGetUUID");
	gp_cndevGetMemoryUsageV2_t memory = (gp_cndevGetMemoryUsageV2_t)cndev_fn("cndevGetMemoryUsageV2");
	cndevCardInfo_t info = { .version = CNDEV_VERSION_6 };
	cndevUUID_t id = { .version = CNDEV_VERSION_6 };
	cndevMemoryInfoV2_t mem;
	cndevDevice_t h;
	int index;

	if (!count || !by_index || !get_uuid || !memory) {
		gp_shim_say("gpushare: cannot load libcndev.so to identify MLU %d\n", ordinal);
		return -ENODEV;
	}
	if (count(&info) != CNDEV_SUCCESS || (index = cndev_index(ordinal, info.number)) < 0) {
		gp_shim_say("gpushare: MLU %d is not a device CNDev knows (MLU_VISIBLE_DEVICES "
			    "takes indices)\n", ordinal);
		return -ENODEV;
	}
	if (by_index(index, &h) != CNDEV_SUCCESS || get_uuid(&id, h) != CNDEV_SUCCESS ||
	    memory(&mem, h) != CNDEV_SUCCESS || mem.physicalMemoryTotal <= 0)
		return -ENODEV;
	snprintf(uuid, uuid_len, "MLU-%.*s", (int)sizeof(id.uuid), (const char *)id.uuid);
	*total_bytes = (uint64_t)mem.physicalMemoryTotal << 20;
	return 0;
}

/* Both layers bound their queued work with CNDrv's notifiers. */
static int event_create(void **ret_event)
{
	CNnotifier n;

	if (CNDRV(cnCreateNotifier, &n, 0) != CN_SUCCESS)
		return -1;
	*ret_event = n;
	return 0;
}

static int event_record(void *event, void *stream, bool flavour)
{
	(void)flavour;
	return CNDRV(cnPlaceNotifier, event, stream) == CN_SUCCESS ? 0 : -1;
}

static int event_query(void *event)
{
	CNresult r = CNDRV(cnQueryNotifier, event);

	return r == CN_SUCCESS ? 0 : r == CN_ERROR_NOT_READY ? 1 : -1;
}

/* Waits for the current context's work (what cnrtSyncDevice does). */
static void drain(void *unused)
{
	(void)unused;
	CNDRV(cnCtxSync);
}

/* ---- errors and devices ---------------------------------------------------- */

/* A core error as each layer would say it. */
static cnrtRet_t cnrt_error(int err)
{
	switch (err) {
	case 0: return cnrtSuccess;
	case -EINVAL: return cnrtErrorArgsInvalid;
	case -EPERM: return cnrtErrorOpsNotPermitted;
	case -ENOMEM: return cnrtErrorNoMem;
	case -ENODEV: return cnrtErrorDeviceInvalid;
	default: return cnrtErrorInit;
	}
}

static CNresult cn_error(int err)
{
	switch (err) {
	case 0: return CN_SUCCESS;
	case -EINVAL: return CN_ERROR_INVALID_VALUE;
	case -EPERM: return CN_OPS_ERROR_NOT_PERMITTED;
	case -ENOMEM: return CN_MEMORY_ERROR_OUT_OF_MEMORY;
	case -ENODEV: return CN_ERROR_INVALID_DEVICE;
	default: return CN_ERROR_NOT_INITIALIZED;
	}
}

/* The slice of the calling thread's current CNRT device. */
static cnrtRet_t cnrt_current(struct gp_shim_device **ret)
{
	int ordinal;
	cnrtRet_t r;

	if (gp_shim_configured() < 0)
		return cnrtErrorArgsInvalid;
	if ((r = CNRT(cnrtGetDevice, &ordinal)) != cnrtSuccess)
		return r;
	return cnrt_error(gp_shim_front_device(&gp_front_cnrt, ordinal, ret));
}

/* The slice of the device of the calling thread's current CNDrv context. */
static CNresult cn_current(struct gp_shim_device **ret)
{
	CNdev dev;
	CNresult r;

	if (gp_shim_configured() < 0)
		return CN_ERROR_INVALID_VALUE;
	if ((r = CNDRV(cnCtxGetDevice, &dev)) != CN_SUCCESS)
		return r;
	return cn_error(gp_shim_front_device(&gp_front_cndrv, (int)dev, ret));
}

/* ---- CNRT ----------------------------------------------------------------- */

cnrtRet_t cnrtMalloc(void **ptr, size_t bytes)
{
	struct gp_shim_device *d;
	cnrtRet_t r = cnrt_current(&d);

	if (r != cnrtSuccess)
		return r;
	if ((r = cnrt_error(gp_shim_admit(d, bytes))) != cnrtSuccess)
		return r;
	inside_cnrt++;
	r = CNRT(cnrtMalloc, ptr, bytes);
	inside_cnrt--;
	gp_shim_settle(r == cnrtSuccess, d, r == cnrtSuccess ? (uintptr_t)*ptr : 0, bytes);
	return r;
}

cnrtRet_t cnrtFree(void *ptr)
{
	struct gp_shim_held *h = ptr ? gp_shim_take((uintptr_t)ptr) : NULL;
	cnrtRet_t r;

	inside_cnrt++;
	r = CNRT(cnrtFree, ptr);
	inside_cnrt--;
	gp_shim_freed(h, r == cnrtSuccess);
	return r;
}

cnrtRet_t cnrtMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
	struct gp_shim_device *d;
	uint64_t f, t;
	cnrtRet_t r;

	inside_cnrt++;
	r = CNRT(cnrtMemGetInfo, free_bytes, total_bytes);
	inside_cnrt--;
	if (r != cnrtSuccess || cnrt_current(&d) != cnrtSuccess)
		return r;
	f = *free_bytes;
	t = *total_bytes;
	gp_shim_view(d, &t, &f);
	*free_bytes = (size_t)f;
	*total_bytes = (size_t)t;
	return r;
}

cnrtRet_t cnrtInvokeKernel(const void *kernel, cnrtDim3_t dim, cnrtFunctionType_t ktype,
			   void **args, size_t reserved, cnrtQueue_t queue)
{
	struct gp_shim_device *d;
	cnrtRet_t r = cnrt_current(&d);

	if (r != cnrtSuccess)
		return r;
	gp_shim_gate(&gp_front_cnrt, d);
	inside_cnrt++;
	r = CNRT(cnrtInvokeKernel, kernel, dim, ktype, args, reserved, queue);
	inside_cnrt--;
	if (r == cnrtSuccess)
		gp_shim_launched(&gp_front_cnrt, d, queue, false);
	return r;
}

/* After a successful wait on the current device. */
static cnrtRet_t cnrt_waited(cnrtRet_t r, enum gp_shim_waited what, void *queue)
{
	struct gp_shim_device *d;

	if (r == cnrtSuccess && cnrt_current(&d) == cnrtSuccess)
		gp_shim_waited(&gp_front_cnrt, d, what, queue, false);
	return r;
}

cnrtRet_t cnrtQueueSync(cnrtQueue_t queue)
{
	cnrtRet_t r;

	inside_cnrt++;
	r = CNRT(cnrtQueueSync, queue);
	inside_cnrt--;
	return cnrt_waited(r, GP_WAITED_STREAM, queue);
}

cnrtRet_t cnrtSyncDevice(void)
{
	cnrtRet_t r;

	inside_cnrt++;
	r = CNRT(cnrtSyncDevice);
	inside_cnrt--;
	return cnrt_waited(r, GP_WAITED_DEVICE, NULL);
}

/* ---- CNDrv (each hook passes straight through inside a CNRT hook) -------- */

static CNresult cn_alloc(gp_cnMalloc_t fn, CNaddr *addr, cn_uint64_t bytes)
{
	struct gp_shim_device *d;
	CNresult r;

	if (!fn)
		return CN_ERROR_NOT_INITIALIZED;
	if (inside_cnrt)
		return fn(addr, bytes);
	if ((r = cn_current(&d)) != CN_SUCCESS || (r = cn_error(gp_shim_admit(d, bytes))) != CN_SUCCESS)
		return r;
	r = fn(addr, bytes);
	gp_shim_settle(r == CN_SUCCESS, d, r == CN_SUCCESS ? *addr : 0, bytes);
	return r;
}

CNresult cnMalloc(CNaddr *addr, cn_uint64_t bytes)
{
	return cn_alloc(REAL(LIB_CNDRV, cnMalloc), addr, bytes);
}

CNresult cnMallocSecurity(CNaddr *addr, cn_uint64_t bytes)
{
	return cn_alloc((gp_cnMalloc_t)real(LIB_CNDRV, "cnMallocSecurity"), addr, bytes);
}

CNresult cnZmalloc(CNaddr *addr, cn_uint64_t bytes)
{
	return cn_alloc((gp_cnMalloc_t)real(LIB_CNDRV, "cnZmalloc"), addr, bytes);
}

CNresult cnFree(CNaddr addr)
{
	struct gp_shim_held *h;
	CNresult r;

	if (inside_cnrt)
		return CNDRV(cnFree, addr);
	h = gp_shim_take(addr);
	r = CNDRV(cnFree, addr);
	gp_shim_freed(h, r == CN_SUCCESS);
	return r;
}

CNresult cnMemGetInfo(cn_uint64_t *free_bytes, cn_uint64_t *total_bytes)
{
	struct gp_shim_device *d;
	CNresult r = CNDRV(cnMemGetInfo, free_bytes, total_bytes);

	if (r != CN_SUCCESS || inside_cnrt || cn_current(&d) != CN_SUCCESS)
		return r;
	gp_shim_view(d, total_bytes, free_bytes);
	return r;
}

CNresult cnInvokeKernel(CNkernel kernel, unsigned dimx, unsigned dimy, unsigned dimz,
			KernelClass c, unsigned reserve, CNqueue queue, void **params, void **extra)
{
	struct gp_shim_device *d;
	CNresult r;

	if (inside_cnrt)
		return CNDRV(cnInvokeKernel, kernel, dimx, dimy, dimz, c, reserve, queue, params,
			     extra);
	if ((r = cn_current(&d)) != CN_SUCCESS)
		return r;
	gp_shim_gate(&gp_front_cndrv, d);
	r = CNDRV(cnInvokeKernel, kernel, dimx, dimy, dimz, c, reserve, queue, params, extra);
	if (r == CN_SUCCESS)
		gp_shim_launched(&gp_front_cndrv, d, queue, false);
	return r;
}

static CNresult cn_waited(CNresult r, enum gp_shim_waited what, void *queue)
{
	struct gp_shim_device *d;

	if (r == CN_SUCCESS && !inside_cnrt && cn_current(&d) == CN_SUCCESS)
		gp_shim_waited(&gp_front_cndrv, d, what, queue, false);
	return r;
}

CNresult cnQueueSync(CNqueue queue)
{
	return cn_waited(CNDRV(cnQueueSync, queue), GP_WAITED_STREAM, queue);
}

CNresult cnCtxSync(void)
{
	return cn_waited(CNDRV(cnCtxSync), GP_WAITED_DEVICE, NULL);
}

/* ---- finding functions: dlsym on either handle, cnGetExportFunction ------- */

static const struct {
	const char *name;
	void *fn;
} hooks[] = {
	{ "cnCtxSync", (void *)cnCtxSync },
	{ "cnFree", (void *)cnFree },
	{ "cnInvokeKernel", (void *)cnInvokeKernel },
	{ "cnMalloc", (void *)cnMalloc },
	{ "cnMallocSecurity", (void *)cnMallocSecurity },
	{ "cnMemGetInfo", (void *)cnMemGetInfo },
	{ "cnQueueSync", (void *)cnQueueSync },
	{ "cnZmalloc", (void *)cnZmalloc },
	{ "cnrtFree", (void *)cnrtFree },
	{ "cnrtInvokeKernel", (void *)cnrtInvokeKernel },
	{ "cnrtMalloc", (void *)cnrtMalloc },
	{ "cnrtMemGetInfo", (void *)cnrtMemGetInfo },
	{ "cnrtQueueSync", (void *)cnrtQueueSync },
	{ "cnrtSyncDevice", (void *)cnrtSyncDevice },
};

CNresult cnGetExportFunction(const char *name, const void **func);

static void *find(const char *symbol)
{
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (strcmp(hooks[i].name, symbol) == 0)
			return hooks[i].fn;
	return NULL;
}

/* dlsym on libcnrt.so's handle: its hooked functions. */
static void *cnrt_hook(const char *symbol)
{
	return strncmp(symbol, "cnrt", 4) == 0 ? find(symbol) : NULL;
}

/* dlsym on libcndrv.so's handle, and cnGetExportFunction: CNDrv's. */
static void *cndrv_hook(const char *symbol)
{
	if (strncmp(symbol, "cn", 2) != 0 || strncmp(symbol, "cnrt", 4) == 0)
		return NULL;
	if (strcmp(symbol, "cnGetExportFunction") == 0)
		return (void *)cnGetExportFunction;
	return find(symbol);
}

/* The driver's answer, with our hook in place of a function we hook (the
 * driver's verdict, found or not, is kept). */
CNresult cnGetExportFunction(const char *name, const void **func)
{
	CNresult r = CNDRV(cnGetExportFunction, name, func);
	void *ours;

	if (r == CN_SUCCESS && func && *func && name && (ours = cndrv_hook(name)))
		*func = ours;
	return r;
}

struct gp_shim_front gp_front_cnrt = {
	.name = "cnrt",
	.library = "libcnrt.so",
	.hook = cnrt_hook,
	.identify = identify,
	.event_create = event_create,
	.event_record = event_record,
	.event_query = event_query,
	.drain = drain,
	GP_SHIM_FRONT_INIT,
};

struct gp_shim_front gp_front_cndrv = {
	.name = "cndrv",
	.library = "libcndrv.so",
	.hook = cndrv_hook,
	.identify = identify,
	.event_create = event_create,
	.event_record = event_record,
	.event_query = event_query,
	.drain = drain,
	GP_SHIM_FRONT_INIT,
};
