/* cnrt.c — simdev's libcnrt.so: Cambricon's runtime (CNRT 6) over the
 * simulated driver (libcndrv.so, cndrv.c), as the real runtime sits on
 * CNDrv.
 *
 * The runtime loads the driver with dlopen and takes every driver
 * function from cnGetExportFunction, never through the dynamic linker
 * (what the real stack is suspected to do: an interposer must answer
 * cnGetExportFunction, or catch CNRT's own entry points, to see CNRT's
 * allocations). Its devices are the driver's (MLU_VISIBLE_DEVICES applies
 * there); the current device is per thread, 0 until cnrtSetDevice, and
 * is the driver's current shared context of that device.
 *
 * Queues and notifiers are the driver's, so they are asynchronous as the
 * driver's are: cnrtInvokeKernel returns at once and the kernel runs for
 * the nanoseconds its first argument gives (args[0] points to a uint64_t;
 * cndrv.c). cnrtRet_t shares its codes with CNresult where both have one
 * (out of memory is 100100 in both); the others become
 * cnrtErrorCndrvFuncCall. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "include/gp-cambricon.h"

/* Every non-static function here is a runtime entry point; its prototype
 * is CNRT's ABI (gp-cambricon.h has the typedefs). */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define DRIVER_FUNCTIONS(X)                                                     \
	X(cnInit) X(cnDeviceGetCount) X(cnSharedContextAcquire)                 \
	X(cnCtxSetCurrent) X(cnCtxSync) X(cnMalloc) X(cnFree) X(cnMemGetInfo)   \
	X(cnCreateQueue) X(cnDestroyQueue) X(cnQueueSync) X(cnCreateNotifier)   \
	X(cnDestroyNotifier) X(cnPlaceNotifier) X(cnQueryNotifier)              \
	X(cnInvokeKernel)

static struct {
#define FIELD(fn) gp_##fn##_t fn;
	DRIVER_FUNCTIONS(FIELD)
#undef FIELD
} drv;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static cnrtRet_t init_result = cnrtErrorInit;
static int device_count;
static __thread int current_ordinal;            /* cnrtSetDevice's, 0 before */
static __thread int bound_ordinal = -1;         /* the driver context made current */

static cnrtRet_t from_cn(CNresult r)
{
	switch (r) {
	case CN_SUCCESS:
	case CN_ERROR_NOT_READY:
	case CN_ERROR_NOT_INITIALIZED:
	case CN_ERROR_NO_DEVICE:
	case CN_ERROR_INVALID_DEVICE:
	case CN_ERROR_INVALID_VALUE:
	case CN_ERROR_SYSTEM_OUT_OF_MEMORY:
	case CN_OPS_ERROR_NOT_SUPPORTED:
	case CN_OPS_ERROR_NOT_PERMITTED:
	case CN_MEMORY_ERROR_OUT_OF_MEMORY:
	case CN_ERROR_NOT_FOUND:
		return (cnrtRet_t)r;
	default:
		return cnrtErrorCndrvFuncCall;
	}
}

static void init_once_fn(void)
{
	void *lib = dlopen("libcndrv.so", RTLD_NOW | RTLD_LOCAL);
	gp_cnGetExportFunction_t get;
	const void *fn;

	if (!lib || !(get = (gp_cnGetExportFunction_t)dlsym(lib, "cnGetExportFunction"))) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: libcnrt cannot load libcndrv.so: %s\n", dlerror());
		return;
	}
#define LOOKUP(name)                                                            \
	if (get(#name, &fn) != CN_SUCCESS || !fn)                               \
		return;                                                         \
	drv.name = (gp_##name##_t)fn;
	DRIVER_FUNCTIONS(LOOKUP)
#undef LOOKUP
	init_result = from_cn(drv.cnInit(0));
	if (init_result == cnrtSuccess)
		init_result = from_cn(drv.cnDeviceGetCount(&device_count));
}

/* The runtime started, and the driver's current context is the calling
 * thread's device's. */
static cnrtRet_t ready(void)
{
	CNcontext ctx;
	cnrtRet_t r;

	pthread_once(&init_once, init_once_fn);
	if (init_result != cnrtSuccess)
		return init_result;
	if (bound_ordinal == current_ordinal)
		return cnrtSuccess;
	r = from_cn(drv.cnSharedContextAcquire(&ctx, (CNdev)current_ordinal));
	if (r == cnrtSuccess)
		r = from_cn(drv.cnCtxSetCurrent(ctx));
	if (r == cnrtSuccess)
		bound_ordinal = current_ordinal;
	return r;
}

#define REQUIRE_READY()                                 \
	do {                                            \
		cnrtRet_t r_ = ready();                 \
		if (r_ != cnrtSuccess)                  \
			return r_;                      \
	} while (0)

cnrtRet_t cnrtGetDeviceCount(unsigned int *count)
{
	pthread_once(&init_once, init_once_fn);
	if (init_result != cnrtSuccess)
		return init_result;
	if (!count)
		return cnrtErrorArgsInvalid;
	*count = (unsigned)device_count;
	return cnrtSuccess;
}

cnrtRet_t cnrtSetDevice(int ordinal)
{
	pthread_once(&init_once, init_once_fn);
	if (init_result != cnrtSuccess)
		return init_result;
	if (ordinal < 0 || ordinal >= device_count)
		return cnrtErrorDeviceInvalid;
	current_ordinal = ordinal;
	return ready();
}

cnrtRet_t cnrtGetDevice(int *ordinal)
{
	REQUIRE_READY();
	if (!ordinal)
		return cnrtErrorArgsInvalid;
	*ordinal = current_ordinal;
	return cnrtSuccess;
}

cnrtRet_t cnrtMalloc(void **ptr, size_t bytes)
{
	CNaddr addr = 0;
	cnrtRet_t r;

	REQUIRE_READY();
	if (!ptr)
		return cnrtErrorArgsInvalid;
	r = from_cn(drv.cnMalloc(&addr, bytes));
	if (r == cnrtSuccess)
		*ptr = (void *)(uintptr_t)addr;
	return r;
}

cnrtRet_t cnrtFree(void *ptr)
{
	REQUIRE_READY();
	return ptr ? from_cn(drv.cnFree((CNaddr)(uintptr_t)ptr)) : cnrtSuccess;
}

cnrtRet_t cnrtMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
	cn_uint64_t f = 0, t = 0;
	cnrtRet_t r;

	REQUIRE_READY();
	if (!free_bytes || !total_bytes)
		return cnrtErrorArgsInvalid;
	r = from_cn(drv.cnMemGetInfo(&f, &t));
	if (r == cnrtSuccess) {
		*free_bytes = f;
		*total_bytes = t;
	}
	return r;
}

cnrtRet_t cnrtQueueCreate(cnrtQueue_t *queue)
{
	REQUIRE_READY();
	return queue ? from_cn(drv.cnCreateQueue((CNqueue *)queue, 0)) : cnrtErrorArgsInvalid;
}

cnrtRet_t cnrtQueueDestroy(cnrtQueue_t queue)
{
	REQUIRE_READY();
	return from_cn(drv.cnDestroyQueue((CNqueue)queue));
}

cnrtRet_t cnrtQueueSync(cnrtQueue_t queue)
{
	REQUIRE_READY();
	return from_cn(drv.cnQueueSync((CNqueue)queue));
}

cnrtRet_t cnrtSyncDevice(void)
{
	REQUIRE_READY();
	return from_cn(drv.cnCtxSync());
}

cnrtRet_t cnrtNotifierCreate(cnrtNotifier_t *notifier)
{
	REQUIRE_READY();
	return notifier ? from_cn(drv.cnCreateNotifier((CNnotifier *)notifier, 0))
			: cnrtErrorArgsInvalid;
}

cnrtRet_t cnrtNotifierDestroy(cnrtNotifier_t notifier)
{
	REQUIRE_READY();
	return from_cn(drv.cnDestroyNotifier((CNnotifier)notifier));
}

cnrtRet_t cnrtPlaceNotifier(cnrtNotifier_t notifier, cnrtQueue_t queue)
{
	REQUIRE_READY();
	return from_cn(drv.cnPlaceNotifier((CNnotifier)notifier, (CNqueue)queue));
}

cnrtRet_t cnrtQueryNotifier(cnrtNotifier_t notifier)
{
	REQUIRE_READY();
	return from_cn(drv.cnQueryNotifier((CNnotifier)notifier));
}

cnrtRet_t cnrtInvokeKernel(const void *kernel, cnrtDim3_t dim, cnrtFunctionType_t ktype,
			   void **args, size_t reserved, cnrtQueue_t queue)
{
	(void)reserved;
	REQUIRE_READY();
	if (!kernel)
		return cnrtErrorInvalidKernel;
	return from_cn(drv.cnInvokeKernel((CNkernel)kernel, dim.x, dim.y, dim.z, (KernelClass)ktype,
					  0, (CNqueue)queue, args, NULL));
}

const char *cnrtGetErrorStr(cnrtRet_t error)
{
	switch (error) {
	case cnrtSuccess: return "success";
	case cnrtErrorNotReady: return "work not finished yet";
	case cnrtErrorInit: return "runtime not initialized (no simulated MLU: set GPUPOOL_SIM_DEVICES=mlu370-48g:N)";
	case cnrtErrorNoDevice: return "no MLU device";
	case cnrtErrorDeviceInvalid: return "invalid device ordinal";
	case cnrtErrorArgsInvalid: return "invalid argument";
	case cnrtErrorSysNoMem: return "out of host memory";
	case cnrtErrorOpsNotPermitted: return "operation not permitted";
	case cnrtErrorNoMem: return "out of MLU memory";
	case cnrtErrorInvalidKernel: return "invalid kernel";
	case cnrtErrorCndrvFuncCall: return "a CNDrv call failed";
	default: return "unknown error";
	}
}
