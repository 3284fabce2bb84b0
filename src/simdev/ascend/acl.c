/* acl.c — simdev's libascendcl.so: Huawei's ACL runtime for simulated
 * Ascend NPUs, over simdev's runtime layer (libruntime.so, runtime.c).
 *
 * Programs load it as the real one (linked, or dlopen + dlsym as torch_npu's
 * FunctionLoader does) and see the Ascend devices of GPUPOOL_SIM_DEVICES
 * (simdev.h: only this vendor's, in DCMI's logical order), of which
 * ASCEND_RT_VISIBLE_DEVICES (logical ids, comma separated) shows some,
 * renumbered 0..n-1 as the user's device ids (visible.h, as the runtime
 * numbers them). The subset of ACL in src/include/gp-ascend.h is answered
 * with ACL's own error codes.
 *
 * Layering, as on a real stack: devices, streams, events, kernel launches
 * and device memory (aclrtMalloc*) are the runtime's; these functions check
 * ACL's own parameters and call rtSetDevice, rtStreamCreate, rtKernelLaunch,
 * rtMalloc and the rest, passing the runtime's errors on (the ACL_ERROR_RT_*
 * codes). The runtime's functions are resolved as a program linked against
 * both libraries resolves them: libruntime.so is loaded into the global
 * scope and each rt* name looked up there (dlsym(RTLD_DEFAULT)), so an
 * interposer that defines rtKernelLaunch sees ACL's launches as it would on
 * a real stack (libascendcl.so links libruntime.so). (Not linked at build
 * time: simdev's vendor libraries carry no link_with.) What ACL keeps
 * itself: physical memory handles (aclrtMallocPhysical, counted in the
 * shared state), aclrtGetMemInfo, the SoC name and the logical ids. Only
 * the ACL names are exported (libascendcl.map). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-ascend.h"
#include "simdev/ascend/visible.h"
#include "simdev/simdev.h"

#define MAGIC_PHYS 0x41504859u
#define MAGIC_DEAD 0xdeadbeefu

struct phys {                           /* an aclrtMallocPhysical handle */
	uint32_t magic;
	int dev;
	size_t size;
};

/* The runtime layer's functions, as the global scope resolves them. */
#define RT_FUNCTIONS(X)                                                              \
	X(rtGetDeviceCount) X(rtSetDevice) X(rtDeviceReset) X(rtGetDevice)          \
	X(rtDeviceSynchronize) X(rtMalloc) X(rtFree) X(rtStreamCreate)              \
	X(rtStreamDestroy) X(rtStreamSynchronize) X(rtEventCreate) X(rtEventDestroy) \
	X(rtEventRecord) X(rtEventQueryStatus) X(rtEventSynchronize) X(rtKernelLaunch)

static struct {
#define RT_FIELD(fn) __typeof__(&fn) fn;
	RT_FUNCTIONS(RT_FIELD)
#undef RT_FIELD
} rt;

static struct sim *sim;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static aclError init_result = ACL_ERROR_RT_NO_DEVICE;
static atomic_bool acl_initialized;

/* User device id -> simdev index, and the logical id (DCMI's) of each. */
static int visible[SIM_DEVICES_MAX];
static int visible_logical[SIM_DEVICES_MAX];
static int visible_count;

/* ---- start-up: the runtime, and the devices this process sees -------- */

static bool runtime_load(void)
{
	if (!dlopen("libruntime.so", RTLD_NOW | RTLD_GLOBAL)) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: libascendcl cannot load libruntime.so: %s\n",
				dlerror());
		return false;
	}
#define RT_GET(fn) *(void **)&rt.fn = dlsym(RTLD_DEFAULT, #fn);
	RT_FUNCTIONS(RT_GET)
#undef RT_GET
#define RT_FOUND(fn) &&rt.fn
	return true RT_FUNCTIONS(RT_FOUND);
#undef RT_FOUND
}

static void init_once_fn(void)
{
	if (!runtime_load())
		return;
	visible_count = sim_ascend_start(&sim, visible, visible_logical);
	if (visible_count > 0)
		init_result = ACL_SUCCESS;
}

static aclError ready(void)
{
	pthread_once(&init_once, init_once_fn);
	return init_result;
}

#define REQUIRE_READY()                         \
	do {                                    \
		aclError r_ = ready();          \
		if (r_ != ACL_SUCCESS)          \
			return r_;              \
	} while (0)

/* The simdev index of the calling thread's device, or -1. */
static int current_dev(void)
{
	int32_t id;

	return rt.rtGetDevice(&id) == RT_ERROR_NONE && id >= 0 && id < visible_count ? visible[id]
										      : -1;
}

/* ---- init and devices ----------------------------------------------- */

aclError aclInit(const char *configPath)
{
	(void)configPath;
	REQUIRE_READY();
	if (atomic_exchange(&acl_initialized, true))
		return ACL_ERROR_REPEAT_INITIALIZE;
	return ACL_SUCCESS;
}

aclError aclFinalize(void)
{
	if (!atomic_exchange(&acl_initialized, false))
		return ACL_ERROR_UNINITIALIZE;
	return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
	int32_t n;
	aclError r;

	if (!count)
		return ACL_ERROR_INVALID_PARAM;
	REQUIRE_READY();
	if ((r = rt.rtGetDeviceCount(&n)) == ACL_SUCCESS)
		*count = (uint32_t)n;
	return r;
}

aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId)
{
	REQUIRE_READY();
	if (!logicDevId)
		return ACL_ERROR_INVALID_PARAM;
	if (userDevid < 0 || userDevid >= visible_count)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	*logicDevId = visible_logical[userDevid];
	return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId)
{
	REQUIRE_READY();
	return rt.rtSetDevice(deviceId);
}

aclError aclrtResetDevice(int32_t deviceId)
{
	REQUIRE_READY();
	return rt.rtDeviceReset(deviceId);
}

aclError aclrtGetDevice(int32_t *deviceId)
{
	REQUIRE_READY();
	if (!deviceId)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtGetDevice(deviceId);
}

const char *aclrtGetSocName(void)
{
	int dev;

	if (ready() != ACL_SUCCESS)
		return NULL;
	dev = current_dev();
	return sim_device_model(sim, dev >= 0 ? dev : visible[0])->name;
}

/* ---- memory ---------------------------------------------------------- */

static aclError device_alloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	REQUIRE_READY();
	if (!devPtr || size == 0 || (unsigned)policy > 0x1fffffu)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtMalloc(devPtr, size, RT_MEMORY_HBM);
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return device_alloc(devPtr, size, policy);
}

aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return device_alloc(devPtr, size, policy);
}

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return device_alloc(devPtr, size, policy);
}

aclError aclrtFree(void *devPtr)
{
	REQUIRE_READY();
	if (!devPtr)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtFree(devPtr);
}

/* Host memory: page-locked on a real host; not device memory. */
aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	REQUIRE_READY();
	if (!hostPtr || size == 0)
		return ACL_ERROR_INVALID_PARAM;
	*hostPtr = malloc(size);
	return *hostPtr ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}

aclError aclrtFreeHost(void *hostPtr)
{
	REQUIRE_READY();
	if (!hostPtr)
		return ACL_ERROR_INVALID_PARAM;
	free(hostPtr);
	return ACL_SUCCESS;
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
			     const aclrtPhysicalMemProp *prop, uint64_t flags)
{
	struct phys *h;
	int dev;

	REQUIRE_READY();
	if (!handle || !prop || size == 0 || flags != 0 ||
	    prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
		return ACL_ERROR_INVALID_PARAM;
	if (prop->location.id >= (uint32_t)visible_count)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	dev = visible[prop->location.id];
	h = malloc(sizeof(*h));
	if (!h)
		return ACL_ERROR_BAD_ALLOC;
	if (sim_mem_reserve(sim, dev, size) != 0) {
		free(h);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	*h = (struct phys){ .magic = MAGIC_PHYS, .dev = dev, .size = size };
	*handle = h;
	return ACL_SUCCESS;
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
	struct phys *h = handle;

	REQUIRE_READY();
	if (!h || h->magic != MAGIC_PHYS)
		return ACL_ERROR_INVALID_PARAM;
	h->magic = MAGIC_DEAD;
	sim_mem_release(sim, h->dev, h->size);
	free(h);
	return ACL_SUCCESS;
}

/* The 910 series keeps its memory in HBM, the 310P in DDR: the other kind
 * reads as none, as on the real chips. */
static bool attr_is_hbm(aclrtMemAttr attr)
{
	switch (attr) {
	case ACL_HBM_MEM:
	case ACL_HBM_MEM_HUGE:
	case ACL_HBM_MEM_NORMAL:
	case ACL_HBM_MEM_P2P_HUGE:
	case ACL_HBM_MEM_P2P_NORMAL:
	case ACL_HBM_MEM_HUGE1G:
	case ACL_HBM_MEM_P2P_HUGE1G:
		return true;
	default:
		return false;
	}
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_bytes, size_t *total)
{
	uint64_t all, used;
	int dev;
	bool hbm;

	REQUIRE_READY();
	if (!free_bytes || !total || (unsigned)attr > ACL_HBM_MEM_P2P_HUGE1G)
		return ACL_ERROR_INVALID_PARAM;
	dev = current_dev();
	if (dev < 0)
		return ACL_ERROR_RT_CONTEXT_NULL;
	hbm = strstr(sim_device_model(sim, dev)->name, "910") != NULL;
	if (attr_is_hbm(attr) != hbm) {
		*free_bytes = *total = 0;
		return ACL_SUCCESS;
	}
	all = sim_mem_total(sim, dev);
	used = sim_mem_used(sim, dev);
	*total = (size_t)all;
	*free_bytes = (size_t)(used < all ? all - used : 0);
	return ACL_SUCCESS;
}

/* ---- streams, events, launches: the runtime's ----------------------- */

aclError aclrtCreateStream(aclrtStream *stream)
{
	REQUIRE_READY();
	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtStreamCreate(stream, 0);
}

aclError aclrtDestroyStream(aclrtStream stream)
{
	REQUIRE_READY();
	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtStreamDestroy(stream);
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	REQUIRE_READY();
	return rt.rtStreamSynchronize(stream);
}

aclError aclrtSynchronizeDevice(void)
{
	REQUIRE_READY();
	return rt.rtDeviceSynchronize();
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
	REQUIRE_READY();
	if (!event)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtEventCreate(event);
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
	REQUIRE_READY();
	if (!event)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtEventDestroy(event);
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	REQUIRE_READY();
	if (!event)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtEventRecord(event, stream);
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
	rtEventStatus_t s;
	aclError r;

	REQUIRE_READY();
	if (!event || !status)
		return ACL_ERROR_INVALID_PARAM;
	if ((r = rt.rtEventQueryStatus(event, &s)) == ACL_SUCCESS)
		*status = s == RT_EVENT_RECORDED ? ACL_EVENT_RECORDED_STATUS_COMPLETE
						 : ACL_EVENT_RECORDED_STATUS_NOT_READY;
	return r;
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	REQUIRE_READY();
	if (!event)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtEventSynchronize(event);
}

/* Any binary and kernel name: simdev's kernels only take time. */
aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
				aclrtFuncHandle *funcHandle)
{
	static const char spin[] = "simdev-kernel";

	(void)binHandle;
	REQUIRE_READY();
	if (!kernelName || !funcHandle)
		return ACL_ERROR_INVALID_PARAM;
	*funcHandle = (aclrtFuncHandle)spin;
	return ACL_SUCCESS;
}

/* The kernel's arguments go to the runtime's rtKernelLaunch, which reads
 * the device time from their first 8 bytes. */
aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t blockDim, const void *argsData,
			   size_t argsSize, aclrtStream stream)
{
	REQUIRE_READY();
	if (!funcHandle || blockDim == 0 || (argsSize && !argsData) || argsSize > UINT32_MAX)
		return ACL_ERROR_INVALID_PARAM;
	return rt.rtKernelLaunch(funcHandle, blockDim, (void *)argsData, (uint32_t)argsSize, NULL,
				 stream);
}
