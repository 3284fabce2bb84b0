/* gp-cambricon.h — the part of Cambricon's Neuware stack that gpupool
 * speaks: the CNRT 6 runtime (libcnrt.so), the CNDrv driver API
 * (libcndrv.so) and the CNDev management library (libcndev.so).
 *
 * Type names, enum values, struct layouts and function signatures are
 * facts of the vendor's ABI (x86-64), written here so that simdev
 * (src/simdev/cambricon/), the agent's backend and libgpushare's CNRT and
 * CNDrv front ends (src/vendor/cambricon/) build without Neuware.
 * Sources: CNRT 6.14's cnrt.h and CN 2.15's cn_api.h (public copies), the
 * CNDev header cndev.h (Cambricon/cambricon-k8s-device-plugin and later
 * public copies), summarised in /work/shared/notes/vendor-facts.md §3.
 * Where a prototype was not read from a header (it is marked "assumed"),
 * it follows the shape of its neighbours and of the driver API CNDrv
 * mirrors; docs/vendors.md lists them. Only what the project uses is
 * declared; names starting GP_ are gpupool's own.
 *
 * Conventions: CNRT returns cnrtRet_t, CNDrv CNresult, CNDev cndevRet_t,
 * 0 being success in all three. Handles (queues, notifiers, contexts) are
 * opaque pointers the library owns until their destroy call. CNDev's
 * versioned structs have their `version` set by the caller
 * (CNDEV_VERSION_6). */
#ifndef GP_INCLUDE_CAMBRICON_H
#define GP_INCLUDE_CAMBRICON_H

#include <stddef.h>
#include <stdint.h>

/* ---- CNRT 6 (libcnrt.so) ------------------------------------------ */

typedef enum {
	cnrtSuccess = 0,
	cnrtErrorNotReady = 1,
	cnrtErrorInit = 100002,
	cnrtErrorNoDevice = 100004,
	cnrtErrorDeviceInvalid = 100005,
	cnrtErrorArgsInvalid = 100006,
	cnrtErrorSysNoMem = 100010,
	cnrtErrorInvalidResourceHandle = 100014,
	cnrtErrorNotSupport = 100050,
	cnrtErrorOpsNotPermitted = 100051,
	cnrtErrorQueue = 100060,
	cnrtErrorNoMem = 100100,
	cnrtErrorNotFound = 100301,
	cnrtErrorInvalidKernel = 100302,
	cnrtErrorNoKernel = 101312,
	cnrtErrorCndrvFuncCall = 632015,
	cnrtErrorCndevFuncCall = 632017,
	cnrtErrorUnknown = 999991,
} cnrtRet_t;

typedef enum {
	cnrtFuncTypeBlock = 1,
	cnrtFuncTypeUnion1 = 4,
	cnrtFuncTypeUnion2 = 8,
	cnrtFuncTypeUnion4 = 16,
	cnrtFuncTypeUnion8 = 32,
	cnrtFuncTypeUnion16 = 64,
} cnrtFunctionType_t;

typedef struct {
	unsigned int x, y, z;
} cnrtDim3_t;

typedef struct cnrtQueue *cnrtQueue_t;
typedef struct cnrtNotifier *cnrtNotifier_t;

typedef cnrtRet_t (*gp_cnrtGetDeviceCount_t)(unsigned int *count);
typedef cnrtRet_t (*gp_cnrtSetDevice_t)(int ordinal);
typedef cnrtRet_t (*gp_cnrtGetDevice_t)(int *ordinal);
typedef cnrtRet_t (*gp_cnrtMalloc_t)(void **ptr, size_t bytes);
typedef cnrtRet_t (*gp_cnrtFree_t)(void *ptr);
typedef cnrtRet_t (*gp_cnrtMemGetInfo_t)(size_t *free_bytes, size_t *total_bytes);
typedef cnrtRet_t (*gp_cnrtQueueCreate_t)(cnrtQueue_t *queue);
typedef cnrtRet_t (*gp_cnrtQueueDestroy_t)(cnrtQueue_t queue);
typedef cnrtRet_t (*gp_cnrtQueueSync_t)(cnrtQueue_t queue);
typedef cnrtRet_t (*gp_cnrtSyncDevice_t)(void);
typedef cnrtRet_t (*gp_cnrtNotifierCreate_t)(cnrtNotifier_t *notifier);
typedef cnrtRet_t (*gp_cnrtNotifierDestroy_t)(cnrtNotifier_t notifier);
typedef cnrtRet_t (*gp_cnrtPlaceNotifier_t)(cnrtNotifier_t notifier, cnrtQueue_t queue);
/* cnrtSuccess once the queue passed it, cnrtErrorNotReady before. */
typedef cnrtRet_t (*gp_cnrtQueryNotifier_t)(cnrtNotifier_t notifier);
typedef cnrtRet_t (*gp_cnrtInvokeKernel_t)(const void *kernel, cnrtDim3_t dim,
					   cnrtFunctionType_t ktype, void **args, size_t reserved,
					   cnrtQueue_t queue);
typedef const char *(*gp_cnrtGetErrorStr_t)(cnrtRet_t error);

/* ---- CNDrv (libcndrv.so) ------------------------------------------ */

typedef enum {
	CN_SUCCESS = 0,
	CN_ERROR_NOT_READY = 1,
	CN_ERROR_NOT_INITIALIZED = 100002,
	CN_ERROR_NO_DEVICE = 100004,
	CN_ERROR_INVALID_DEVICE = 100005,
	CN_ERROR_INVALID_VALUE = 100006,
	CN_ERROR_SYSTEM_OUT_OF_MEMORY = 100010,
	CN_OPS_ERROR_NOT_SUPPORTED = 100050,
	CN_OPS_ERROR_NOT_PERMITTED = 100051,
	CN_OPS_ERROR_OUT_OF_RESOURCES = 100053,
	CN_MEMORY_ERROR_OUT_OF_MEMORY = 100100,
	CN_MEMORY_ERROR_OUT_OF_PROCESS_MAX_MEMORY = 100101,
	CN_MEMORY_ERROR_INVALID_ADDRESS = 100102,
	CN_INVOKE_ERROR_OUT_OF_RESOURCES = 100120,
	CN_CONTEXT_ERROR_INVALID = 100201,
	CN_ERROR_NOT_FOUND = 100301,
} CNresult;

typedef uint64_t cn_uint64_t;
typedef cn_uint64_t CNaddr;
typedef cn_uint64_t CNdev;
typedef struct CNqueue_st *CNqueue;
typedef struct CNcontext_st *CNcontext;
typedef struct CNnotifier_st *CNnotifier;       /* name assumed (CNqueue's pattern) */
typedef struct CNkernel_st *CNkernel;
typedef int KernelClass;                        /* the cnrtFunctionType_t values */

/* cnInvokeKernel's `extra`: pairs ending with CN_INVOKE_PARAM_END. */
#define CN_INVOKE_PARAM_END ((void *)0x0)
#define CN_INVOKE_PARAM_BUFFER_POINTER ((void *)0x1)
#define CN_INVOKE_PARAM_BUFFER_SIZE ((void *)0x2)

typedef CNresult (*gp_cnInit_t)(unsigned int flags);
typedef CNresult (*gp_cnGetLibVersion_t)(int *major, int *minor, int *patch);
typedef CNresult (*gp_cnGetExportFunction_t)(const char *name, const void **func);
typedef CNresult (*gp_cnMalloc_t)(CNaddr *addr, cn_uint64_t bytes);   /* also Security, Zmalloc */
typedef CNresult (*gp_cnFree_t)(CNaddr addr);                           /* assumed */
typedef CNresult (*gp_cnMemGetInfo_t)(cn_uint64_t *free_bytes, cn_uint64_t *total_bytes);
typedef CNresult (*gp_cnInvokeKernel_t)(CNkernel kernel, unsigned dimx, unsigned dimy,
					unsigned dimz, KernelClass c, unsigned reserve,
					CNqueue queue, void **kernel_params, void **extra);
/* Assumed, as the driver API CNDrv mirrors: */
typedef CNresult (*gp_cnDeviceGetCount_t)(int *count);
typedef CNresult (*gp_cnDeviceGet_t)(CNdev *dev, int ordinal);
typedef CNresult (*gp_cnSharedContextAcquire_t)(CNcontext *ctx, CNdev dev);
typedef CNresult (*gp_cnCtxSetCurrent_t)(CNcontext ctx);
typedef CNresult (*gp_cnCtxGetCurrent_t)(CNcontext *ctx);
typedef CNresult (*gp_cnCtxGetDevice_t)(CNdev *dev);
typedef CNresult (*gp_cnCtxSync_t)(void);
typedef CNresult (*gp_cnCreateQueue_t)(CNqueue *queue, unsigned int flags);
typedef CNresult (*gp_cnDestroyQueue_t)(CNqueue queue);
typedef CNresult (*gp_cnQueueSync_t)(CNqueue queue);
typedef CNresult (*gp_cnCreateNotifier_t)(CNnotifier *notifier, unsigned int flags);
typedef CNresult (*gp_cnDestroyNotifier_t)(CNnotifier notifier);
typedef CNresult (*gp_cnPlaceNotifier_t)(CNnotifier notifier, CNqueue queue);
typedef CNresult (*gp_cnQueryNotifier_t)(CNnotifier notifier);   /* CN_ERROR_NOT_READY before */

/* ---- CNDev (libcndev.so) ------------------------------------------ */

typedef enum {
	CNDEV_SUCCESS = 0,
	CNDEV_ERROR_NO_DRIVER = 1,
	CNDEV_ERROR_LOW_DRIVER_VERSION = 2,
	CNDEV_ERROR_UNSUPPORTED_API_VERSION = 3,
	CNDEV_ERROR_UNINITIALIZED = 4,
	CNDEV_ERROR_INVALID_ARGUMENT = 5,
	CNDEV_ERROR_INVALID_DEVICE_ID = 6,
	CNDEV_ERROR_UNKNOWN = 7,
	CNDEV_ERROR_MALLOC = 8,
	CNDEV_ERROR_INSUFFICIENT_SPACE = 9,
	CNDEV_ERROR_NOT_SUPPORTED = 10,
	CNDEV_ERROR_NO_DEVICES = 12,
	CNDEV_ERROR_NO_PERMISSION = 13,
	CNDEV_ERROR_NOT_FOUND = 14,
	CNDEV_ERROR_IN_USE = 15,
	CNDEV_ERROR_TIMEOUT = 17,
} cndevRet_t;

#define CNDEV_VERSION_6 6
#define CNDEV_UUID_SIZE 37
#define CNDEV_DEVICE_TYPE_MLU370 23

typedef int32_t cndevDevice_t;

typedef struct {
	int32_t version;
	uint32_t number;                /* devices */
} cndevCardInfo_t;

typedef struct {
	int32_t version;
	uint8_t uuid[CNDEV_UUID_SIZE];  /* the bare UUID text; tools print "MLU-" before it */
	uint64_t ncsUUID64;
} cndevUUID_t;

typedef struct {
	int32_t version;
	int32_t id;                     /* cndevNameEnum_t: CNDEV_DEVICE_TYPE_* */
} cndevCardName_t;

/* MB throughout; no version field. */
typedef struct {
	int64_t physicalMemoryTotal, physicalMemoryUsed, reservedMemory;
	int64_t virtualMemoryTotal, virtualMemoryUsed;
	uint64_t globalMemory;
	uint64_t reserved[16];
} cndevMemoryInfoV2_t;

typedef struct {
	int32_t version;
	uint32_t mcuMajorVersion, mcuMinorVersion, mcuBuildVersion;
	uint32_t driverMajorVersion, driverMinorVersion, driverBuildVersion;
} cndevVersionInfo_t;

typedef struct {
	int32_t version;
	int32_t averageCoreUtilization;  /* percent */
	int32_t coreUtilization[80];
} cndevUtilizationInfo_t;

typedef struct {
	int32_t version;
	uint32_t pid;
	uint64_t physicalMemoryUsed;    /* KiB */
	uint64_t virtualMemoryUsed;     /* KiB */
} cndevProcessInfo_t;

typedef struct {
	int32_t version;
	uint32_t pid;
	uint32_t ipuUtil;               /* percent of the device, now */
	uint32_t jpuUtil, vpuDecUtil, vpuEncUtil, memUtil;
} cndevProcessUtilization_t;

#define CNDEV_HEALTH_STATE_DEVICE_IN_PROBLEM 0
#define CNDEV_HEALTH_STATE_DEVICE_GOOD 1
#define CNDEV_HEALTH_STATE_DRIVER_RUNNING 4
#define CNDEV_HEALTH_STATE_DRIVER_UNKNOWN 8

typedef struct {
	int32_t version;
	int32_t health;                 /* 1: healthy */
	int32_t deviceState;            /* CNDEV_HEALTH_STATE_DEVICE_* */
	int32_t driverState;            /* CNDEV_HEALTH_STATE_DRIVER_* */
} cndevCardHealthState_t;

typedef cndevRet_t (*gp_cndevInit_t)(int32_t reserved);
typedef cndevRet_t (*gp_cndevRelease_t)(void);
typedef const char *(*gp_cndevGetErrorString_t)(cndevRet_t error);
typedef cndevRet_t (*gp_cndevGetDeviceCount_t)(cndevCardInfo_t *info);
typedef cndevRet_t (*gp_cndevGetDeviceHandleByIndex_t)(int32_t index, cndevDevice_t *handle);
typedef cndevRet_t (*gp_cndevGetCardName_t)(cndevCardName_t *name, cndevDevice_t device);
typedef const char *(*gp_cndevGetCardNameStringByDevId_t)(cndevDevice_t device);
typedef cndevRet_t (*gp_cndevGetUUID_t)(cndevUUID_t *uuid, cndevDevice_t device);
typedef cndevRet_t (*gp_cndevGetMemoryUsageV2_t)(cndevMemoryInfoV2_t *mem, cndevDevice_t device);
typedef cndevRet_t (*gp_cndevGetVersionInfo_t)(cndevVersionInfo_t *info, cndevDevice_t device);
typedef cndevRet_t (*gp_cndevGetDeviceUtilizationInfo_t)(cndevUtilizationInfo_t *util,
							  cndevDevice_t device);
/* count in: the array's size; out: the processes (INSUFFICIENT_SPACE when
 * the array is too small). */
typedef cndevRet_t (*gp_cndevGetProcessInfo_t)(unsigned *count, cndevProcessInfo_t *info,
						cndevDevice_t device);
typedef cndevRet_t (*gp_cndevGetProcessUtilization_t)(unsigned *count,
						       cndevProcessUtilization_t *util,
						       cndevDevice_t device);
typedef cndevRet_t (*gp_cndevGetCardHealthState_t)(cndevCardHealthState_t *health,
						    cndevDevice_t device);

#endif
