/* shim-acl.c — the Ascend ACL runtime's front end of libgpushare
 * (src/shim/front.h): memory slices, the in-task view of memory and the
 * compute share for programs on Ascend NPUs (torch_npu, ACL samples).
 *
 * Programs reach ACL by linking libascendcl.so (symbol interposition gives
 * them our exported hooks) or by dlopen + dlsym (torch_npu's
 * FunctionLoader): dlsym on a handle of libascendcl.so answers our hook
 * (`library` and `hook` below, through the core's dlsym). The real
 * functions come from our own dlopen of libascendcl.so, looked up with
 * glibc's dlsym and cached.
 *
 * Hooked: device allocations (aclrtMalloc, aclrtMallocCached,
 * aclrtMallocAlign32, aclrtMallocPhysical) are admitted before the
 * runtime is asked and settled after; past the limit they fail with
 * ACL_ERROR_RT_MEMORY_ALLOCATION, the runtime's own out-of-memory error.
 * Frees (aclrtFree, aclrtFreePhysical) take the entry out before the real
 * free and give the bytes back after. aclrtMallocHost is host memory and
 * passes through. aclrtGetMemInfo shows the slice (gp_shim_view).
 * aclrtLaunchKernel waits for the device's turn and its queued work is
 * bounded with ACL events; the synchronizations (stream, device, event)
 * tell the core what was waited for.
 *
 * A device is the runtime's user device id (after ASCEND_RT_VISIBLE_
 * DEVICES); its region is named by the chip's "NPU-…" id, which the agent
 * reads from DCMI too: aclrtGetLogicDevIdByUserDevId gives the logical id,
 * DCMI (libdcmi.so, loaded here) its card, chip and VDIE die id.
 * aclrtSetDevice and aclrtResetDevice are counted per device, as the
 * runtime counts them: at the last reset the runtime frees every
 * allocation the process had there, and so do we (gp_shim_forget).
 *
 * The runtime layer beneath ACL (libruntime.so) is hooked too: operators
 * (aclnn, torch_npu's inductor kernels) launch with rtKernelLaunch and
 * rtKernelLaunchWithFlag, wait with rtStreamSynchronize and may allocate
 * with rtMalloc/rtFree, and ACL's own aclrtLaunchKernel and aclrtMalloc
 * reach them inside the real stack. So a thread-local depth says "inside
 * an ACL hook": there the rt* hooks pass straight through, and each launch
 * and allocation is gated or counted once whichever layer the program
 * called. The runtime's device ids are ACL's (user
 * device ids), so its launches use ACL's slices, arbiter and events
 * (gp_front_acl); gp_front_rt only answers dlsym on libruntime.so's
 * handle. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "include/gp-ascend.h"
#include "shim/front.h"

/* Every hook is an ACL or runtime-layer entry point: its prototype is
 * gp-ascend.h's. */

extern struct gp_shim_front gp_front_acl;

/* How deep the calling thread is inside our ACL hooks that reach the
 * runtime layer (launches, synchronizations). */
static __thread int inside_acl;

/* ---- the real libraries ------------------------------------------------ */

static struct {
	pthread_mutex_t lock;
	void *acl, *rt, *dcmi;
	bool dcmi_ready;
} lib = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL, false };

static void *acl_handle(void)
{
	void *h;

	pthread_mutex_lock(&lib.lock);
	if (!lib.acl)
		lib.acl = dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL);
	h = lib.acl;
	pthread_mutex_unlock(&lib.lock);
	return h;
}

/* The runtime's function `name`, NULL when it has none. */
static void *real(const char *name)
{
	void *h = acl_handle();

	return h ? gp_shim_real_dlsym(h, name) : NULL;
}

/* The runtime layer's function `name`, NULL when it has none. */
static void *real_rt(const char *name)
{
	void *h;

	pthread_mutex_lock(&lib.lock);
	if (!lib.rt)
		lib.rt = dlopen("libruntime.so", RTLD_NOW | RTLD_LOCAL);
	h = lib.rt;
	pthread_mutex_unlock(&lib.lock);
	return h ? gp_shim_real_dlsym(h, name) : NULL;
}

#define REAL_FROM(lookup, type, name)                                          \
	({                                                                     \
		static void *_Atomic cached;                                   \
		void *fn_ = cached;                                            \
		if (!fn_)                                                      \
			cached = fn_ = lookup(name);                           \
		(type) fn_;                                                    \
	})
#define REAL(type, name) REAL_FROM(real, type, name)

/* Calls the runtime's `name`, or answers ACL_ERROR_RT_INTERNAL_ERROR
 * when it cannot be found. */
#define CALL(type, name, ...)                                                  \
	({                                                                     \
		type fn__ = REAL(type, name);                                  \
		fn__ ? fn__(__VA_ARGS__) : ACL_ERROR_RT_INTERNAL_ERROR;        \
	})

typedef aclError (*alloc_fn)(void **, size_t, aclrtMemMallocPolicy);
typedef aclError (*free_fn)(void *);
typedef aclError (*phys_fn)(aclrtDrvMemHandle *, size_t, const aclrtPhysicalMemProp *, uint64_t);
typedef aclError (*phys_free_fn)(aclrtDrvMemHandle);
typedef aclError (*meminfo_fn)(aclrtMemAttr, size_t *, size_t *);
typedef aclError (*get_device_fn)(int32_t *);
typedef aclError (*logic_fn)(const int32_t, int32_t *const);
typedef aclError (*launch_fn)(aclrtFuncHandle, uint32_t, const void *, size_t, aclrtStream);
typedef aclError (*stream_fn)(aclrtStream);
typedef aclError (*void_fn)(void);
typedef aclError (*event_create_fn)(aclrtEvent *);
typedef aclError (*event_record_fn)(aclrtEvent, aclrtStream);
typedef aclError (*event_status_fn)(aclrtEvent, aclrtEventRecordedStatus *);
typedef aclError (*event_fn)(aclrtEvent);

/* DCMI, for the chip's id: loaded and started once, under lib.lock. */
static void *dcmi_fn(const char *name)
{
	void *fn = NULL;

	pthread_mutex_lock(&lib.lock);
	if (!lib.dcmi)
		lib.dcmi = dlopen("libdcmi.so", RTLD_NOW | RTLD_LOCAL);
	if (lib.dcmi && !lib.dcmi_ready) {
		int (*init)(void) = (int (*)(void))gp_shim_real_dlsym(lib.dcmi, "dcmi_init");

		lib.dcmi_ready = init && init() == DCMI_OK;
	}
	if (lib.dcmi_ready)
		fn = gp_shim_real_dlsym(lib.dcmi, name);
	pthread_mutex_unlock(&lib.lock);
	return fn;
}

/* ---- the front end ------------------------------------------------------- */

static int identify(int ordinal, char *uuid, size_t uuid_len, uint64_t *total_bytes)
{
	int (*from_logic)(int *, int *, unsigned) =
		(int (*)(int *, int *, unsigned))dcmi_fn("dcmi_get_card_id_device_id_from_logicid");
	int (*die)(int, int, enum dcmi_die_type, struct dcmi_die_id *) =
		(int (*)(int, int, enum dcmi_die_type, struct dcmi_die_id *))dcmi_fn(
			"dcmi_get_device_die_v2");
	int (*hbm)(int, int, struct dcmi_hbm_info *) =
		(int (*)(int, int, struct dcmi_hbm_info *))dcmi_fn("dcmi_get_device_hbm_info");
	int (*mem)(int, int, struct dcmi_get_memory_info_stru *) =
		(int (*)(int, int, struct dcmi_get_memory_info_stru *))dcmi_fn(
			"dcmi_get_device_memory_info_v3");
	struct dcmi_die_id id;
	struct dcmi_hbm_info h;
	struct dcmi_get_memory_info_stru m;
	int32_t logic;
	int card, chip;

	if (!from_logic || !die || !hbm || !mem) {
		gp_shim_say("gpushare: cannot load libdcmi.so to identify NPU %d\n", ordinal);
		return -ENODEV;
	}
	if (CALL(logic_fn, "aclrtGetLogicDevIdByUserDevId", ordinal, &logic) != ACL_SUCCESS ||
	    from_logic(&card, &chip, (unsigned)logic) != DCMI_OK ||
	    die(card, chip, VDIE, &id) != DCMI_OK || gp_ascend_uuid_format(&id, uuid, uuid_len) < 0)
		return -ENODEV;
	if (hbm(card, chip, &h) == DCMI_OK && h.memory_size > 0)
		*total_bytes = (uint64_t)h.memory_size << 20;
	else if (mem(card, chip, &m) == DCMI_OK)
		*total_bytes = (uint64_t)m.memory_size << 20;
	else
		return -ENODEV;
	return 0;
}

static int event_create(void **ret_event)
{
	aclrtEvent e;

	if (CALL(event_create_fn, "aclrtCreateEvent", &e) != ACL_SUCCESS)
		return -1;
	*ret_event = e;
	return 0;
}

static int event_record(void *event, void *stream, bool flavour)
{
	(void)flavour;
	return CALL(event_record_fn, "aclrtRecordEvent", event, stream) == ACL_SUCCESS ? 0 : -1;
}

static int event_query(void *event)
{
	aclrtEventRecordedStatus s;

	if (CALL(event_status_fn, "aclrtQueryEventStatus", event, &s) != ACL_SUCCESS)
		return -1;
	return s == ACL_EVENT_RECORDED_STATUS_COMPLETE ? 0 : 1;
}

static void drain(void *unused)
{
	(void)unused;
	CALL(void_fn, "aclrtSynchronizeDevice");
}

/* A core error as ACL would say it. */
static aclError acl_error(int err)
{
	switch (err) {
	case 0: return ACL_SUCCESS;
	case -EINVAL: return ACL_ERROR_INVALID_PARAM;
	case -EPERM: return ACL_ERROR_RT_NO_PERMISSION;
	case -ENOMEM: return ACL_ERROR_RT_MEMORY_ALLOCATION;
	case -ENODEV: return ACL_ERROR_RT_INVALID_DEVICEID;
	default: return ACL_ERROR_RT_INTERNAL_ERROR;
	}
}

/* The slice of user device `ordinal`. */
static aclError device_of(int32_t ordinal, struct gp_shim_device **ret)
{
	if (gp_shim_configured() < 0)
		return ACL_ERROR_INVALID_PARAM;
	if (!acl_handle()) {
		gp_shim_say("gpushare: cannot load libascendcl.so\n");
		return ACL_ERROR_RT_NO_DEVICE;
	}
	return acl_error(gp_shim_front_device(&gp_front_acl, ordinal, ret));
}

/* The slice of the calling thread's current device. */
static aclError current(struct gp_shim_device **ret)
{
	int32_t dev;
	aclError r = gp_shim_configured() < 0 ? ACL_ERROR_INVALID_PARAM
					      : CALL(get_device_fn, "aclrtGetDevice", &dev);

	return r == ACL_SUCCESS ? device_of(dev, ret) : r;
}

/* ---- devices opened and reset ------------------------------------------------- */

typedef aclError (*set_device_fn)(int32_t);

/* aclrtSetDevice calls not yet undone, per user device. */
static _Atomic int opened[GP_SHIM_DEVICES_MAX];

aclError aclrtSetDevice(int32_t deviceId)
{
	aclError r = CALL(set_device_fn, "aclrtSetDevice", deviceId);

	if (r == ACL_SUCCESS && deviceId >= 0 && deviceId < GP_SHIM_DEVICES_MAX)
		atomic_fetch_add(&opened[deviceId], 1);
	return r;
}

aclError aclrtResetDevice(int32_t deviceId)
{
	struct gp_shim_device *d;
	aclError r = CALL(set_device_fn, "aclrtResetDevice", deviceId);

	if (r != ACL_SUCCESS || deviceId < 0 || deviceId >= GP_SHIM_DEVICES_MAX ||
	    atomic_fetch_sub(&opened[deviceId], 1) != 1)
		return r;
	if (device_of(deviceId, &d) == ACL_SUCCESS)
		gp_shim_forget(d);
	return r;
}

/* ---- memory ------------------------------------------------------------------ */

static aclError alloc(const char *name, void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	struct gp_shim_device *d;
	alloc_fn fn = (alloc_fn)real(name);
	aclError r = current(&d);

	if (r != ACL_SUCCESS)
		return r;
	if (!fn)
		return ACL_ERROR_RT_INTERNAL_ERROR;
	if ((r = acl_error(gp_shim_admit(d, size))) != ACL_SUCCESS)
		return r;
	inside_acl++;
	r = fn(devPtr, size, policy);
	inside_acl--;
	gp_shim_settle(r == ACL_SUCCESS, d, r == ACL_SUCCESS ? (uintptr_t)*devPtr : 0, size);
	return r;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return alloc("aclrtMalloc", devPtr, size, policy);
}

aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return alloc("aclrtMallocCached", devPtr, size, policy);
}

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return alloc("aclrtMallocAlign32", devPtr, size, policy);
}

aclError aclrtFree(void *devPtr)
{
	struct gp_shim_held *h = gp_shim_take((uintptr_t)devPtr);
	aclError r;

	inside_acl++;
	r = CALL(free_fn, "aclrtFree", devPtr);
	inside_acl--;
	gp_shim_freed(h, r == ACL_SUCCESS);
	return r;
}

/* Physical memory of the device the properties name (a user device id). */
aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
			     const aclrtPhysicalMemProp *prop, uint64_t flags)
{
	struct gp_shim_device *d;
	aclError r;

	if (!handle || !prop || prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
		return CALL(phys_fn, "aclrtMallocPhysical", handle, size, prop, flags);
	if ((r = device_of((int32_t)prop->location.id, &d)) != ACL_SUCCESS ||
	    (r = acl_error(gp_shim_admit(d, size))) != ACL_SUCCESS)
		return r;
	r = CALL(phys_fn, "aclrtMallocPhysical", handle, size, prop, flags);
	gp_shim_settle(r == ACL_SUCCESS, d, r == ACL_SUCCESS ? (uintptr_t)*handle : 0, size);
	return r;
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
	struct gp_shim_held *h = gp_shim_take((uintptr_t)handle);
	aclError r = CALL(phys_free_fn, "aclrtFreePhysical", handle);

	gp_shim_freed(h, r == ACL_SUCCESS);
	return r;
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_bytes, size_t *total)
{
	struct gp_shim_device *d;
	aclError r = CALL(meminfo_fn, "aclrtGetMemInfo", attr, free_bytes, total);
	uint64_t t, f;

	if (r != ACL_SUCCESS || current(&d) != ACL_SUCCESS)
		return r;
	t = *total;
	f = *free_bytes;
	gp_shim_view(d, &t, &f);
	*total = (size_t)t;
	*free_bytes = (size_t)f;
	return r;
}

/* ---- compute ------------------------------------------------------------------- */

aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t blockDim, const void *argsData,
			   size_t argsSize, aclrtStream stream)
{
	struct gp_shim_device *d;
	aclError r = current(&d);

	if (r != ACL_SUCCESS)
		return r;
	gp_shim_gate(&gp_front_acl, d);
	inside_acl++;
	r = CALL(launch_fn, "aclrtLaunchKernel", funcHandle, blockDim, argsData, argsSize, stream);
	inside_acl--;
	if (r == ACL_SUCCESS)
		gp_shim_launched(&gp_front_acl, d, stream, false);
	return r;
}

/* After a successful wait on the current device. */
static aclError after_wait(aclError r, enum gp_shim_waited what, aclrtStream stream)
{
	struct gp_shim_device *d;

	if (r == ACL_SUCCESS && current(&d) == ACL_SUCCESS)
		gp_shim_waited(&gp_front_acl, d, what, stream, false);
	return r;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	aclError r;

	inside_acl++;
	r = CALL(stream_fn, "aclrtSynchronizeStream", stream);
	inside_acl--;
	return after_wait(r, GP_WAITED_STREAM, stream);
}

aclError aclrtSynchronizeDevice(void)
{
	aclError r;

	inside_acl++;
	r = CALL(void_fn, "aclrtSynchronizeDevice");
	inside_acl--;
	return after_wait(r, GP_WAITED_DEVICE, NULL);
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	aclError r;

	inside_acl++;
	r = CALL(event_fn, "aclrtSynchronizeEvent", event);
	inside_acl--;
	return after_wait(r, GP_WAITED_OTHER, NULL);
}

/* ---- the runtime layer (each hook passes straight through inside an ACL hook) */

typedef rtError_t (*rt_launch_fn)(const void *, uint32_t, void *, uint32_t, rtSmDesc_t *,
				  rtStream_t);
typedef rtError_t (*rt_launch_flag_fn)(const void *, uint32_t, rtArgsEx_t *, rtSmDesc_t *,
				       rtStream_t, uint32_t);
typedef rtError_t (*rt_stream_fn)(rtStream_t);
typedef rtError_t (*rt_malloc_fn)(void **, uint64_t, rtMemType_t);
typedef rtError_t (*rt_free_fn)(void *);

#define RT_CALL(type, name, ...)                                               \
	({                                                                     \
		type fn__ = REAL_FROM(real_rt, type, name);                    \
		fn__ ? fn__(__VA_ARGS__) : ACL_ERROR_RT_INTERNAL_ERROR;        \
	})

rtError_t rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize,
			 rtSmDesc_t *smDesc, rtStream_t stream)
{
	struct gp_shim_device *d;
	rtError_t r;

	if (inside_acl)
		return RT_CALL(rt_launch_fn, "rtKernelLaunch", stubFunc, blockDim, args, argsSize,
			       smDesc, stream);
	if ((r = current(&d)) != ACL_SUCCESS)
		return r;
	gp_shim_gate(&gp_front_acl, d);
	r = RT_CALL(rt_launch_fn, "rtKernelLaunch", stubFunc, blockDim, args, argsSize, smDesc,
		    stream);
	if (r == RT_ERROR_NONE)
		gp_shim_launched(&gp_front_acl, d, stream, false);
	return r;
}

rtError_t rtKernelLaunchWithFlag(const void *stubFunc, uint32_t blockDim, rtArgsEx_t *argsInfo,
				 rtSmDesc_t *smDesc, rtStream_t stream, uint32_t flag)
{
	struct gp_shim_device *d;
	rtError_t r;

	if (inside_acl)
		return RT_CALL(rt_launch_flag_fn, "rtKernelLaunchWithFlag", stubFunc, blockDim,
			       argsInfo, smDesc, stream, flag);
	if ((r = current(&d)) != ACL_SUCCESS)
		return r;
	gp_shim_gate(&gp_front_acl, d);
	r = RT_CALL(rt_launch_flag_fn, "rtKernelLaunchWithFlag", stubFunc, blockDim, argsInfo,
		    smDesc, stream, flag);
	if (r == RT_ERROR_NONE)
		gp_shim_launched(&gp_front_acl, d, stream, false);
	return r;
}

rtError_t rtStreamSynchronize(rtStream_t stream)
{
	rtError_t r = RT_CALL(rt_stream_fn, "rtStreamSynchronize", stream);

	return inside_acl ? r : after_wait(r, GP_WAITED_STREAM, stream);
}

/* ---- dlsym on libascendcl's handle -------------------------------------------- */

static const struct {
	const char *name;
	void *fn;
} hooks[] = {
	{ "aclrtFree", (void *)aclrtFree },
	{ "aclrtFreePhysical", (void *)aclrtFreePhysical },
	{ "aclrtGetMemInfo", (void *)aclrtGetMemInfo },
	{ "aclrtLaunchKernel", (void *)aclrtLaunchKernel },
	{ "aclrtMalloc", (void *)aclrtMalloc },
	{ "aclrtMallocAlign32", (void *)aclrtMallocAlign32 },
	{ "aclrtMallocCached", (void *)aclrtMallocCached },
	{ "aclrtMallocPhysical", (void *)aclrtMallocPhysical },
	{ "aclrtResetDevice", (void *)aclrtResetDevice },
	{ "aclrtSetDevice", (void *)aclrtSetDevice },
	{ "aclrtSynchronizeDevice", (void *)aclrtSynchronizeDevice },
	{ "aclrtSynchronizeEvent", (void *)aclrtSynchronizeEvent },
	{ "aclrtSynchronizeStream", (void *)aclrtSynchronizeStream },
};

static void *hook(const char *symbol)
{
	if (strncmp(symbol, "aclrt", 5) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (strcmp(hooks[i].name, symbol) == 0)
			return hooks[i].fn;
	return NULL;
}

/* Device memory straight from the runtime layer: admitted and settled
 * as ACL's (inside an ACL hook, ACL's own allocation passes through). */
rtError_t rtMalloc(void **devPtr, uint64_t size, rtMemType_t type)
{
	struct gp_shim_device *d;
	rtError_t r;

	if (inside_acl)
		return RT_CALL(rt_malloc_fn, "rtMalloc", devPtr, size, type);
	if ((r = current(&d)) != ACL_SUCCESS)
		return r;
	if ((r = acl_error(gp_shim_admit(d, size))) != ACL_SUCCESS)
		return r;
	r = RT_CALL(rt_malloc_fn, "rtMalloc", devPtr, size, type);
	gp_shim_settle(r == RT_ERROR_NONE, d, r == RT_ERROR_NONE ? (uintptr_t)*devPtr : 0, size);
	return r;
}

rtError_t rtFree(void *devPtr)
{
	struct gp_shim_held *h;
	rtError_t r;

	if (inside_acl)
		return RT_CALL(rt_free_fn, "rtFree", devPtr);
	h = gp_shim_take((uintptr_t)devPtr);
	r = RT_CALL(rt_free_fn, "rtFree", devPtr);
	gp_shim_freed(h, r == RT_ERROR_NONE);
	return r;
}

static void *rt_hook(const char *symbol)
{
	if (strcmp(symbol, "rtMalloc") == 0)
		return (void *)rtMalloc;
	if (strcmp(symbol, "rtFree") == 0)
		return (void *)rtFree;
	if (strcmp(symbol, "rtKernelLaunch") == 0)
		return (void *)rtKernelLaunch;
	if (strcmp(symbol, "rtKernelLaunchWithFlag") == 0)
		return (void *)rtKernelLaunchWithFlag;
	if (strcmp(symbol, "rtStreamSynchronize") == 0)
		return (void *)rtStreamSynchronize;
	return NULL;
}

/* dlsym on libruntime.so's handle answers the rt* hooks; their devices
 * are gp_front_acl's. */
struct gp_shim_front gp_front_rt = {
	.name = "rt",
	.library = "libruntime.so",
	.hook = rt_hook,
	GP_SHIM_FRONT_INIT,
};

struct gp_shim_front gp_front_acl = {
	.name = "acl",
	.library = "libascendcl.so",
	.hook = hook,
	.identify = identify,
	.event_create = event_create,
	.event_record = event_record,
	.event_query = event_query,
	.drain = drain,
	GP_SHIM_FRONT_INIT,
};
