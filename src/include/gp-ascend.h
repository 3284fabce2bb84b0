/* gp-ascend.h — the part of Huawei Ascend's ACL runtime (libascendcl.so)
 * and DCMI management library (libdcmi.so) that gpupool speaks.
 *
 * Type names, enum values, struct layouts and function signatures are
 * facts of the vendor's ABI, written here so that simdev (src/simdev/
 * ascend/), the agent's backend and libgpushare's ACL front end
 * (src/vendor/ascend/) build without CANN. Sources: ACL's acl_rt.h,
 * acl_base_rt.h and rt_error_codes.h (Ascend/pytorch third_party/acl, and
 * hicann/runtime include/external/acl for aclrtLaunchKernel,
 * aclrtBinaryGetFunction, aclrtPhysicalMemProp, the event statuses);
 * DCMI's dcmi_interface_api.h (Ascend/mind-cluster devmanager/dcmi: the
 * prototypes, structs and error codes); CANN's runtime layer (libruntime.so)
 * beneath ACL: rtKernelLaunch, rtKernelLaunchWithFlag with rtArgsEx_t,
 * rtMalloc, rtFree, rtStreamCreate/Destroy/Synchronize, rtSetDevice and
 * rtDeviceReset from Ascend/pytorch torch_npu/csrc/inductor/mlir/hacl_rt.h;
 * the other rt* names (devices, events) as CANN's runtime names them, their
 * prototypes written in the same style (not read from a header). Only what
 * the project uses is declared. Names starting GP_ are gpupool's own, not the vendor's.
 *
 * Conventions: ACL returns aclError (0 = ACL_SUCCESS); handles (streams,
 * events, functions, physical memory) are opaque pointers the runtime owns
 * until their destroy call. DCMI returns int (0 = DCMI_OK, errors are
 * negative, DCMI_ERROR_CODE_BASE - n) and addresses a device by (card,
 * device in card); its logical id is the index the runtime uses. */
#ifndef GP_INCLUDE_ASCEND_H
#define GP_INCLUDE_ASCEND_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- ACL: types ---------------------------------------------------- */

typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtFuncHandle;
typedef void *aclrtBinHandle;
typedef void *aclrtDrvMemHandle;

#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_UNINITIALIZE 100001
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_BAD_ALLOC 200000
#define ACL_ERROR_API_NOT_SUPPORT 200001
#define ACL_ERROR_INVALID_DEVICE 200002
#define ACL_ERROR_FEATURE_UNSUPPORTED 200006
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_CONTEXT_NULL 107002
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001       /* out of device memory */
#define ACL_ERROR_RT_MEMORY_FREE 207002
#define ACL_ERROR_RT_NO_DEVICE 207004
#define ACL_ERROR_RT_NO_PERMISSION 207006
#define ACL_ERROR_RT_INTERNAL_ERROR 507000

typedef enum aclrtMemMallocPolicy {
	ACL_MEM_MALLOC_HUGE_FIRST = 0,
	ACL_MEM_MALLOC_HUGE_ONLY = 1,
	ACL_MEM_MALLOC_NORMAL_ONLY = 2,
	ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
	ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
	ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
	ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
	ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
	ACL_DDR_MEM = 0,
	ACL_HBM_MEM = 1,
	ACL_DDR_MEM_HUGE = 2,
	ACL_DDR_MEM_NORMAL = 3,
	ACL_HBM_MEM_HUGE = 4,
	ACL_HBM_MEM_NORMAL = 5,
	ACL_DDR_MEM_P2P_HUGE = 6,
	ACL_DDR_MEM_P2P_NORMAL = 7,
	ACL_HBM_MEM_P2P_HUGE = 8,
	ACL_HBM_MEM_P2P_NORMAL = 9,
	ACL_HBM_MEM_HUGE1G = 10,
	ACL_HBM_MEM_P2P_HUGE1G = 11,
} aclrtMemAttr;

typedef enum aclrtEventRecordedStatus {
	ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
	ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
} aclrtEventRecordedStatus;

typedef enum aclrtMemLocationType {
	ACL_MEM_LOCATION_TYPE_HOST = 0,
	ACL_MEM_LOCATION_TYPE_DEVICE = 1,
} aclrtMemLocationType;

typedef struct aclrtMemLocation {
	uint32_t id;                    /* the device, for TYPE_DEVICE */
	aclrtMemLocationType type;
} aclrtMemLocation;

typedef enum aclrtMemHandleType { ACL_MEM_HANDLE_TYPE_NONE = 0 } aclrtMemHandleType;
typedef enum aclrtMemAllocationType { ACL_MEM_ALLOCATION_TYPE_PINNED = 0 } aclrtMemAllocationType;

typedef struct aclrtPhysicalMemProp {
	aclrtMemHandleType handleType;
	aclrtMemAllocationType allocationType;
	aclrtMemAttr memAttr;
	aclrtMemLocation location;
	uint64_t reserve;
} aclrtPhysicalMemProp;

/* ---- ACL: functions ------------------------------------------------ */

aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);
/* The user's device id (after ASCEND_RT_VISIBLE_DEVICES) -> the logical
 * id DCMI numbers devices by (hicann/runtime acl_rt.h). */
aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId);
const char *aclrtGetSocName(void);
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);
aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
			     const aclrtPhysicalMemProp *prop, uint64_t flags);
aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeDevice(void);
aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
				aclrtFuncHandle *funcHandle);
/* CANN 8: argsData holds the kernel's arguments (on simdev the first 8
 * bytes are the ns of device time the kernel takes). Asynchronous. */
aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t blockDim, const void *argsData,
			   size_t argsSize, aclrtStream stream);

/* ---- the runtime layer (libruntime.so), beneath ACL ------------------ */

/* rtError_t: 0 is success; the simulated runtime answers the runtime's
 * external codes, the ACL_ERROR_RT_* values above (rt_error_codes.h),
 * which ACL passes on. */
typedef int32_t rtError_t;
typedef void *rtStream_t;
typedef void *rtEvent_t;
typedef uint32_t rtMemType_t;
#define RT_ERROR_NONE 0
#define RT_MEMORY_DEFAULT ((uint32_t)0x0)
#define RT_MEMORY_HBM ((uint32_t)0x2)

typedef struct tagRtSmCtrl rtSmDesc_t;  /* L2 control: opaque here, may be NULL */

/* The arguments of rtKernelLaunchWithFlag (hacl_rt.h's layout). */
typedef struct tagRtArgsEx {
	void *args;
	void *hostInputInfoPtr;
	uint32_t argsSize;
	uint16_t tilingAddrOffset;
	uint16_t tilingDataOffset;
	uint16_t hostInputInfoNum;
	uint8_t hasTiling;
	uint8_t isNoNeedH2DCopy;
	uint8_t reserved[4];
} rtArgsEx_t;

typedef enum rtEventStatus { RT_EVENT_INIT = 0, RT_EVENT_RECORDED = 1 } rtEventStatus_t;

rtError_t rtGetDeviceCount(int32_t *count);
rtError_t rtSetDevice(int32_t device);
rtError_t rtDeviceReset(int32_t device);
rtError_t rtGetDevice(int32_t *device);
rtError_t rtDeviceSynchronize(void);
rtError_t rtMalloc(void **devPtr, uint64_t size, rtMemType_t type);
rtError_t rtFree(void *devPtr);
rtError_t rtStreamCreate(rtStream_t *stream, int32_t priority);
rtError_t rtStreamDestroy(rtStream_t stream);
rtError_t rtStreamSynchronize(rtStream_t stream);
rtError_t rtEventCreate(rtEvent_t *event);
rtError_t rtEventDestroy(rtEvent_t event);
rtError_t rtEventRecord(rtEvent_t event, rtStream_t stream);
rtError_t rtEventQueryStatus(rtEvent_t event, rtEventStatus_t *status);
rtError_t rtEventSynchronize(rtEvent_t event);
/* Asynchronous. On simdev the first 8 bytes of the arguments (args, or
 * argsInfo->args) are the ns of device time the kernel takes. */
rtError_t rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize,
			 rtSmDesc_t *smDesc, rtStream_t stream);
rtError_t rtKernelLaunchWithFlag(const void *stubFunc, uint32_t blockDim, rtArgsEx_t *argsInfo,
				 rtSmDesc_t *smDesc, rtStream_t stream, uint32_t flag);

/* ---- DCMI ---------------------------------------------------------- */

#define DCMI_OK 0
#define DCMI_ERROR_CODE_BASE (-8000)
#define DCMI_ERR_CODE_INVALID_PARAMETER (DCMI_ERROR_CODE_BASE - 1)
#define DCMI_ERR_CODE_OPER_NOT_PERMITTED (DCMI_ERROR_CODE_BASE - 2)
#define DCMI_ERR_CODE_MEM_OPERATE_FAIL (DCMI_ERROR_CODE_BASE - 3)
#define DCMI_ERR_CODE_INNER_ERR (DCMI_ERROR_CODE_BASE - 5)
#define DCMI_ERR_CODE_INVALID_DEVICE_ID (DCMI_ERROR_CODE_BASE - 7)
#define DCMI_ERR_CODE_DEVICE_NOT_EXIST (DCMI_ERROR_CODE_BASE - 8)
#define DCMI_ERR_CODE_NOT_SUPPORT (DCMI_ERROR_CODE_BASE - 255)

/* Utilization kinds of dcmi_get_device_utilization_rate (mind-cluster's
 * constants). */
#define GP_DCMI_UTIL_AICORE 2
#define GP_DCMI_UTIL_HBM 6

/* Health (dcmi_get_device_health): 0 is healthy; npu-smi shows 1 minor,
 * 2 major, 3 critical. */
#define GP_DCMI_HEALTH_OK 0u

struct dcmi_chip_info_v2 {
	unsigned char chip_type[32];    /* "Ascend" */
	unsigned char chip_name[32];    /* "910B2", "310P3" */
	unsigned char chip_ver[32];
	unsigned int aicore_cnt;
	unsigned char npu_name[32];
};

struct dcmi_get_memory_info_stru {
	unsigned long long memory_size;         /* MB */
	unsigned long long memory_available;    /* MB */
	unsigned int freq;
	unsigned long hugepagesize;             /* KB */
	unsigned long hugepages_total;
	unsigned long hugepages_free;
	unsigned int utiliza;
	unsigned char reserve[60];
};

struct dcmi_hbm_info {
	unsigned long long memory_size;         /* MB */
	unsigned int freq;
	unsigned long long memory_usage;        /* MB */
	int temp;
	unsigned int bandwith_util_rate;
};

/* dcmi_get_device_resource_info has no capacity argument: the caller's
 * array holds this many (DCMI's limit of processes per device). */
#define GP_DCMI_PROC_MAX 32
struct dcmi_proc_mem_info {
	int proc_id;
	unsigned long proc_mem_usage;           /* bytes */
};

enum dcmi_die_type { NDIE = 0, VDIE = 1, DDIE = 2 };
#define DIE_ID_COUNT 5
struct dcmi_die_id {
	unsigned int soc_die[DIE_ID_COUNT];
};

struct dcmi_create_vdev_res_stru {
	unsigned int vdev_id;
	unsigned int vfg_id;
	char template_name[32];
	unsigned char reserved[64];
};

struct dcmi_create_vdev_out {
	unsigned int vdev_id;
	unsigned int pcie_bus;
	unsigned int pcie_device;
	unsigned int pcie_func;
	unsigned int vfg_id;
	unsigned char reserved[32];
};

int dcmi_init(void);
int dcmi_get_driver_version(char *driver_ver, unsigned int len);
int dcmi_get_card_list(int *card_num, int *card_list, int list_len);
int dcmi_get_device_num_in_card(int card_id, int *device_num);
int dcmi_get_device_logic_id(int *device_logic_id, int card_id, int device_id);
int dcmi_get_card_id_device_id_from_logicid(int *card_id, int *device_id,
					    unsigned int device_logic_id);
int dcmi_get_device_chip_info_v2(int card_id, int device_id, struct dcmi_chip_info_v2 *chip_info);
int dcmi_get_device_memory_info_v3(int card_id, int device_id,
				   struct dcmi_get_memory_info_stru *memory_info);
int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *hbm_info);
int dcmi_get_device_utilization_rate(int card_id, int device_id, int input_type,
				     unsigned int *utilization_rate);
int dcmi_get_device_health(int card_id, int device_id, unsigned int *health);
int dcmi_get_device_resource_info(int card_id, int device_id, struct dcmi_proc_mem_info *proc_info,
				  int *proc_num);
int dcmi_get_device_die_v2(int card_id, int device_id, enum dcmi_die_type input_type,
			   struct dcmi_die_id *die_id);
int dcmi_create_vdevice(int card_id, int device_id, struct dcmi_create_vdev_res_stru *vdev,
			struct dcmi_create_vdev_out *out);
int dcmi_set_destroy_vdevice(int card_id, int device_id, unsigned int vdevid);

/* ---- gpupool's device id -------------------------------------------- */

/* The text id of an NPU, "NPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", from
 * the first four words of its VDIE die id (dcmi_get_device_die_v2): the
 * name of its region, the same from the agent's backend and from the ACL
 * front end. Needs len >= 41. */
#define GP_ASCEND_UUID_MAX 48
static inline int gp_ascend_uuid_format(const struct dcmi_die_id *die, char *out, size_t len)
{
	int n = snprintf(out, len, "NPU-%08x-%04x-%04x-%04x-%04x%08x", die->soc_die[0],
			 die->soc_die[1] >> 16, die->soc_die[1] & 0xffffu, die->soc_die[2] >> 16,
			 die->soc_die[2] & 0xffffu, die->soc_die[3]);

	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

#endif
