/* gp-levelzero.h — the part of Intel's Level Zero (core and Sysman) that
 * gpupool speaks.
 *
 * Type names, enum values, struct layouts and prototypes are facts of the
 * Level Zero ABI (spec 1.17, oneapi-src/level-zero include/ze_api.h and
 * zes_api.h at loader 1.32.0; docs/vendors.md), written here so that
 * simdev's libze_loader.so.1, the agent's Sysman backend
 * (src/vendor/intel/manage.c), libgpushare's Level Zero front end
 * (src/vendor/intel/shim-ze.c), gpuload and the tests build without the
 * SDK. Only what the project uses is declared. Handles are opaque
 * pointers; Sysman's device and driver handles are the core's types, as
 * in the spec. */
#ifndef GP_INCLUDE_LEVELZERO_H
#define GP_INCLUDE_LEVELZERO_H

#include <stddef.h>
#include <stdint.h>

#define ZE_APICALL

/* The loader's soname (SOVERSION = the project's major, 1). */
#define GP_ZE_LOADER "libze_loader.so.1"

typedef enum _ze_result_t {
	ZE_RESULT_SUCCESS = 0,
	ZE_RESULT_NOT_READY = 1,
	ZE_RESULT_ERROR_DEVICE_LOST = 0x70000001,
	ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY = 0x70000002,
	ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY = 0x70000003,
	ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS = 0x70010000,
	ZE_RESULT_ERROR_NOT_AVAILABLE = 0x70010001,
	ZE_RESULT_ERROR_UNINITIALIZED = 0x78000001,
	ZE_RESULT_ERROR_UNSUPPORTED_VERSION = 0x78000002,
	ZE_RESULT_ERROR_UNSUPPORTED_FEATURE = 0x78000003,
	ZE_RESULT_ERROR_INVALID_ARGUMENT = 0x78000004,
	ZE_RESULT_ERROR_INVALID_NULL_HANDLE = 0x78000005,
	ZE_RESULT_ERROR_INVALID_NULL_POINTER = 0x78000007,
	ZE_RESULT_ERROR_INVALID_SIZE = 0x78000008,
	ZE_RESULT_ERROR_UNSUPPORTED_SIZE = 0x78000009,
	ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT = 0x7800000a,
	ZE_RESULT_ERROR_INVALID_ENUMERATION = 0x7800000c,
	ZE_RESULT_ERROR_INVALID_KERNEL_NAME = 0x78000011,
	ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX = 0x78000015,
	ZE_RESULT_ERROR_UNKNOWN = 0x7ffffffe,
} ze_result_t;

typedef uint8_t ze_bool_t;
typedef struct _ze_driver_handle_t *ze_driver_handle_t;
typedef struct _ze_device_handle_t *ze_device_handle_t;
typedef struct _ze_context_handle_t *ze_context_handle_t;
typedef struct _ze_command_queue_handle_t *ze_command_queue_handle_t;
typedef struct _ze_command_list_handle_t *ze_command_list_handle_t;
typedef struct _ze_fence_handle_t *ze_fence_handle_t;
typedef struct _ze_event_pool_handle_t *ze_event_pool_handle_t;
typedef struct _ze_event_handle_t *ze_event_handle_t;
typedef struct _ze_module_handle_t *ze_module_handle_t;
typedef struct _ze_module_build_log_handle_t *ze_module_build_log_handle_t;
typedef struct _ze_kernel_handle_t *ze_kernel_handle_t;

typedef enum _ze_structure_type_t {
	ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES = 0x1,
	ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES = 0x3,
	ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES = 0x7,
	ZE_STRUCTURE_TYPE_CONTEXT_DESC = 0xd,
	ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC = 0xe,
	ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC = 0xf,
	ZE_STRUCTURE_TYPE_EVENT_POOL_DESC = 0x10,
	ZE_STRUCTURE_TYPE_EVENT_DESC = 0x11,
	ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC = 0x15,
	ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC = 0x16,
	ZE_STRUCTURE_TYPE_MODULE_DESC = 0x1b,
	ZE_STRUCTURE_TYPE_KERNEL_DESC = 0x1d,
	ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC = 0x1000a,
	ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 = 0x00020006,
	ZE_STRUCTURE_TYPE_FORCE_UINT32 = 0x7fffffff,
} ze_structure_type_t;

typedef uint32_t ze_init_flags_t;
#define ZE_INIT_FLAG_GPU_ONLY 1u
#define ZE_INIT_FLAG_VPU_ONLY 2u

#define ZE_MAX_DRIVER_UUID_SIZE 16
#define ZE_MAX_DEVICE_UUID_SIZE 16
#define ZE_MAX_DEVICE_NAME 256

typedef struct _ze_driver_uuid_t {
	uint8_t id[ZE_MAX_DRIVER_UUID_SIZE];
} ze_driver_uuid_t;

typedef struct _ze_device_uuid_t {
	uint8_t id[ZE_MAX_DEVICE_UUID_SIZE];
} ze_device_uuid_t;

typedef struct _ze_driver_properties_t {
	ze_structure_type_t stype;
	void *pNext;
	ze_driver_uuid_t uuid;
	uint32_t driverVersion;
} ze_driver_properties_t;

typedef enum _ze_device_type_t {
	ZE_DEVICE_TYPE_GPU = 1,
	ZE_DEVICE_TYPE_FORCE_UINT32 = 0x7fffffff,
} ze_device_type_t;

typedef struct _ze_device_properties_t {
	ze_structure_type_t stype;      /* ..._DEVICE_PROPERTIES or _1_2 */
	void *pNext;
	ze_device_type_t type;
	uint32_t vendorId;              /* Intel: 0x8086 */
	uint32_t deviceId;
	uint32_t flags;
	uint32_t subdeviceId;
	uint32_t coreClockRate;         /* MHz */
	uint64_t maxMemAllocSize;
	uint32_t maxHardwareContexts;
	uint32_t maxCommandQueuePriority;
	uint32_t numThreadsPerEU;
	uint32_t physicalEUSimdWidth;
	uint32_t numEUsPerSubslice;
	uint32_t numSubslicesPerSlice;
	uint32_t numSlices;
	uint64_t timerResolution;
	uint32_t timestampValidBits;
	uint32_t kernelTimestampValidBits;
	ze_device_uuid_t uuid;
	char name[ZE_MAX_DEVICE_NAME];
} ze_device_properties_t;

typedef struct _ze_device_memory_properties_t {
	ze_structure_type_t stype;
	void *pNext;
	uint32_t flags;
	uint32_t maxClockRate;
	uint32_t maxBusWidth;
	uint64_t totalSize;
	char name[ZE_MAX_DEVICE_NAME];
} ze_device_memory_properties_t;

typedef struct _ze_context_desc_t {
	ze_structure_type_t stype;
	const void *pNext;
	uint32_t flags;
} ze_context_desc_t;

typedef enum _ze_command_queue_mode_t {
	ZE_COMMAND_QUEUE_MODE_DEFAULT = 0,
	ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS = 1,
	ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS = 2,
	ZE_COMMAND_QUEUE_MODE_FORCE_UINT32 = 0x7fffffff,
} ze_command_queue_mode_t;

typedef enum _ze_command_queue_priority_t {
	ZE_COMMAND_QUEUE_PRIORITY_NORMAL = 0,
	ZE_COMMAND_QUEUE_PRIORITY_FORCE_UINT32 = 0x7fffffff,
} ze_command_queue_priority_t;

typedef struct _ze_command_queue_desc_t {
	ze_structure_type_t stype;
	const void *pNext;
	uint32_t ordinal;
	uint32_t index;
	uint32_t flags;
	ze_command_queue_mode_t mode;
	ze_command_queue_priority_t priority;
} ze_command_queue_desc_t;

typedef struct _ze_command_list_desc_t {
	ze_structure_type_t stype;
	const void *pNext;
	uint32_t commandQueueGroupOrdinal;
	uint32_t flags;
} ze_command_list_desc_t;

#define ZE_EVENT_POOL_FLAG_HOST_VISIBLE 1u
#define ZE_EVENT_SCOPE_FLAG_HOST 4u

typedef struct _ze_event_pool_desc_t {
	ze_structure_type_t stype;
	const void *pNext;
	uint32_t flags;
	uint32_t count;
} ze_event_pool_desc_t;

typedef struct _ze_event_desc_t {
	ze_structure_type_t stype;
	const void *pNext;
	uint32_t index;
	uint32_t signal;
	uint32_t wait;
} ze_event_desc_t;

typedef struct _ze_device_mem_alloc_desc_t {
	ze_structure_type_t stype;      /* 0x15 */
	const void *pNext;
	uint32_t flags;
	uint32_t ordinal;
} ze_device_mem_alloc_desc_t;

typedef struct _ze_host_mem_alloc_desc_t {
	ze_structure_type_t stype;      /* 0x16 */
	const void *pNext;
	uint32_t flags;
} ze_host_mem_alloc_desc_t;

#define ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE 1u
#define ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE 2u

typedef struct _ze_memory_free_ext_desc_t {
	ze_structure_type_t stype;      /* 0x1000a */
	const void *pNext;
	uint32_t freePolicy;
} ze_memory_free_ext_desc_t;

typedef enum _ze_module_format_t {
	ZE_MODULE_FORMAT_IL_SPIRV = 0,
	ZE_MODULE_FORMAT_NATIVE = 1,
	ZE_MODULE_FORMAT_FORCE_UINT32 = 0x7fffffff,
} ze_module_format_t;

typedef struct _ze_module_constants_t ze_module_constants_t;

typedef struct _ze_module_desc_t {
	ze_structure_type_t stype;
	const void *pNext;
	ze_module_format_t format;
	size_t inputSize;
	const uint8_t *pInputModule;
	const char *pBuildFlags;
	const ze_module_constants_t *pConstants;
} ze_module_desc_t;

typedef struct _ze_kernel_desc_t {
	ze_structure_type_t stype;
	const void *pNext;
	uint32_t flags;
	const char *pKernelName;
} ze_kernel_desc_t;

typedef struct _ze_group_count_t {
	uint32_t groupCountX, groupCountY, groupCountZ;
} ze_group_count_t;

/* ---- core functions ---------------------------------------------------- */

ze_result_t ZE_APICALL zeInit(ze_init_flags_t flags);
ze_result_t ZE_APICALL zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers);
ze_result_t ZE_APICALL zeDriverGetProperties(ze_driver_handle_t hDriver,
					     ze_driver_properties_t *pDriverProperties);
ze_result_t ZE_APICALL zeDeviceGet(ze_driver_handle_t hDriver, uint32_t *pCount,
				   ze_device_handle_t *phDevices);
ze_result_t ZE_APICALL zeDeviceGetProperties(ze_device_handle_t hDevice,
					     ze_device_properties_t *pDeviceProperties);
ze_result_t ZE_APICALL zeDeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t *pCount,
						   ze_device_memory_properties_t *pMemProperties);
ze_result_t ZE_APICALL zeContextCreate(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
				       ze_context_handle_t *phContext);
ze_result_t ZE_APICALL zeContextDestroy(ze_context_handle_t hContext);

ze_result_t ZE_APICALL zeMemAllocDevice(ze_context_handle_t hContext,
					const ze_device_mem_alloc_desc_t *device_desc, size_t size,
					size_t alignment, ze_device_handle_t hDevice, void **pptr);
ze_result_t ZE_APICALL zeMemAllocShared(ze_context_handle_t hContext,
					const ze_device_mem_alloc_desc_t *device_desc,
					const ze_host_mem_alloc_desc_t *host_desc, size_t size,
					size_t alignment, ze_device_handle_t hDevice, void **pptr);
ze_result_t ZE_APICALL zeMemAllocHost(ze_context_handle_t hContext,
				      const ze_host_mem_alloc_desc_t *host_desc, size_t size,
				      size_t alignment, void **pptr);
ze_result_t ZE_APICALL zeMemFree(ze_context_handle_t hContext, void *ptr);
ze_result_t ZE_APICALL zeMemFreeExt(ze_context_handle_t hContext,
				    const ze_memory_free_ext_desc_t *pMemFreeDesc, void *ptr);

ze_result_t ZE_APICALL zeCommandQueueCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					    const ze_command_queue_desc_t *desc,
					    ze_command_queue_handle_t *phCommandQueue);
ze_result_t ZE_APICALL zeCommandQueueDestroy(ze_command_queue_handle_t hCommandQueue);
ze_result_t ZE_APICALL zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t hCommandQueue,
							 uint32_t numCommandLists,
							 ze_command_list_handle_t *phCommandLists,
							 ze_fence_handle_t hFence);
ze_result_t ZE_APICALL zeCommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue,
						 uint64_t timeout);

ze_result_t ZE_APICALL zeCommandListCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					   const ze_command_list_desc_t *desc,
					   ze_command_list_handle_t *phCommandList);
ze_result_t ZE_APICALL zeCommandListCreateImmediate(ze_context_handle_t hContext,
						    ze_device_handle_t hDevice,
						    const ze_command_queue_desc_t *altdesc,
						    ze_command_list_handle_t *phCommandList);
ze_result_t ZE_APICALL zeCommandListClose(ze_command_list_handle_t hCommandList);
ze_result_t ZE_APICALL zeCommandListReset(ze_command_list_handle_t hCommandList);
ze_result_t ZE_APICALL zeCommandListDestroy(ze_command_list_handle_t hCommandList);
ze_result_t ZE_APICALL zeCommandListHostSynchronize(ze_command_list_handle_t hCommandList,
						    uint64_t timeout);
ze_result_t ZE_APICALL zeCommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
						       ze_kernel_handle_t hKernel,
						       const ze_group_count_t *pLaunchFuncArgs,
						       ze_event_handle_t hSignalEvent,
						       uint32_t numWaitEvents,
						       ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zeCommandListAppendLaunchCooperativeKernel(
	ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
	const ze_group_count_t *pLaunchFuncArgs, ze_event_handle_t hSignalEvent,
	uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zeCommandListAppendLaunchKernelIndirect(
	ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
	const ze_group_count_t *pLaunchArgumentsBuffer, ze_event_handle_t hSignalEvent,
	uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zeCommandListAppendLaunchMultipleKernelsIndirect(
	ze_command_list_handle_t hCommandList, uint32_t numKernels, ze_kernel_handle_t *phKernels,
	const uint32_t *pCountBuffer, const ze_group_count_t *pLaunchArgumentsBuffer,
	ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zeCommandListAppendSignalEvent(ze_command_list_handle_t hCommandList,
						      ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zeCommandListAppendBarrier(ze_command_list_handle_t hCommandList,
						  ze_event_handle_t hSignalEvent,
						  uint32_t numWaitEvents,
						  ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zeCommandListAppendMemoryCopy(ze_command_list_handle_t hCommandList,
						     void *dstptr, const void *srcptr, size_t size,
						     ze_event_handle_t hSignalEvent,
						     uint32_t numWaitEvents,
						     ze_event_handle_t *phWaitEvents);

ze_result_t ZE_APICALL zeEventPoolCreate(ze_context_handle_t hContext,
					 const ze_event_pool_desc_t *desc, uint32_t numDevices,
					 ze_device_handle_t *phDevices,
					 ze_event_pool_handle_t *phEventPool);
ze_result_t ZE_APICALL zeEventPoolDestroy(ze_event_pool_handle_t hEventPool);
ze_result_t ZE_APICALL zeEventCreate(ze_event_pool_handle_t hEventPool, const ze_event_desc_t *desc,
				     ze_event_handle_t *phEvent);
ze_result_t ZE_APICALL zeEventDestroy(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zeEventHostSignal(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zeEventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout);
ze_result_t ZE_APICALL zeEventQueryStatus(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zeEventHostReset(ze_event_handle_t hEvent);

ze_result_t ZE_APICALL zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
				      const ze_module_desc_t *desc, ze_module_handle_t *phModule,
				      ze_module_build_log_handle_t *phBuildLog);
ze_result_t ZE_APICALL zeModuleDestroy(ze_module_handle_t hModule);
ze_result_t ZE_APICALL zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
				      ze_kernel_handle_t *phKernel);
ze_result_t ZE_APICALL zeKernelDestroy(ze_kernel_handle_t hKernel);
ze_result_t ZE_APICALL zeKernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t argIndex,
						size_t argSize, const void *pArgValue);
ze_result_t ZE_APICALL zeKernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t groupSizeX,
					    uint32_t groupSizeY, uint32_t groupSizeZ);

/* ---- Sysman ------------------------------------------------------------ */

typedef ze_driver_handle_t zes_driver_handle_t;
typedef ze_device_handle_t zes_device_handle_t;
typedef struct _zes_engine_handle_t *zes_engine_handle_t;
typedef struct _zes_mem_handle_t *zes_mem_handle_t;
typedef uint32_t zes_init_flags_t;

typedef enum _zes_structure_type_t {
	ZES_STRUCTURE_TYPE_DEVICE_PROPERTIES = 0x1,
	ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES = 0x5,
	ZES_STRUCTURE_TYPE_MEM_PROPERTIES = 0xb,
	ZES_STRUCTURE_TYPE_PROCESS_STATE = 0x16,
	ZES_STRUCTURE_TYPE_MEM_STATE = 0x1e,
	ZES_STRUCTURE_TYPE_FORCE_UINT32 = 0x7fffffff,
} zes_structure_type_t;

#define ZES_STRING_PROPERTY_SIZE 64

typedef struct _zes_device_properties_t {
	zes_structure_type_t stype;
	void *pNext;
	ze_device_properties_t core;
	uint32_t numSubdevices;
	char serialNumber[ZES_STRING_PROPERTY_SIZE];
	char boardNumber[ZES_STRING_PROPERTY_SIZE];
	char brandName[ZES_STRING_PROPERTY_SIZE];
	char modelName[ZES_STRING_PROPERTY_SIZE];
	char vendorName[ZES_STRING_PROPERTY_SIZE];
	char driverVersion[ZES_STRING_PROPERTY_SIZE];
} zes_device_properties_t;

typedef enum _zes_engine_group_t {
	ZES_ENGINE_GROUP_ALL = 0,
	ZES_ENGINE_GROUP_COMPUTE_ALL = 1,
	ZES_ENGINE_GROUP_COMPUTE_SINGLE = 4,
	ZES_ENGINE_GROUP_RENDER_ALL = 12,
	ZES_ENGINE_GROUP_FORCE_UINT32 = 0x7fffffff,
} zes_engine_group_t;

typedef struct _zes_engine_properties_t {
	zes_structure_type_t stype;
	void *pNext;
	zes_engine_group_t type;
	ze_bool_t onSubdevice;
	uint32_t subdeviceId;
} zes_engine_properties_t;

/* Utilization over an interval: delta activeTime / delta timestamp (µs). */
typedef struct _zes_engine_stats_t {
	uint64_t activeTime;
	uint64_t timestamp;
} zes_engine_stats_t;

typedef enum _zes_mem_type_t {
	ZES_MEM_TYPE_HBM = 0,
	ZES_MEM_TYPE_HBM2E = 23,
	ZES_MEM_TYPE_FORCE_UINT32 = 0x7fffffff,
} zes_mem_type_t;

typedef enum _zes_mem_loc_t {
	ZES_MEM_LOC_SYSTEM = 0,
	ZES_MEM_LOC_DEVICE = 1,
	ZES_MEM_LOC_FORCE_UINT32 = 0x7fffffff,
} zes_mem_loc_t;

typedef enum _zes_mem_health_t {
	ZES_MEM_HEALTH_UNKNOWN = 0,
	ZES_MEM_HEALTH_OK = 1,
	ZES_MEM_HEALTH_FORCE_UINT32 = 0x7fffffff,
} zes_mem_health_t;

typedef struct _zes_mem_properties_t {
	zes_structure_type_t stype;
	void *pNext;
	zes_mem_type_t type;
	ze_bool_t onSubdevice;
	uint32_t subdeviceId;
	zes_mem_loc_t location;
	uint64_t physicalSize;
	int32_t busWidth;
	int32_t numChannels;
} zes_mem_properties_t;

typedef struct _zes_mem_state_t {
	zes_structure_type_t stype;
	const void *pNext;
	zes_mem_health_t health;
	uint64_t free;
	uint64_t size;
} zes_mem_state_t;

typedef uint32_t zes_engine_type_flags_t;
#define ZES_ENGINE_TYPE_FLAG_COMPUTE 2u

typedef struct _zes_process_state_t {
	zes_structure_type_t stype;
	const void *pNext;
	uint32_t processId;
	uint64_t memSize;
	uint64_t sharedSize;
	zes_engine_type_flags_t engines;
} zes_process_state_t;

ze_result_t ZE_APICALL zesInit(zes_init_flags_t flags);
ze_result_t ZE_APICALL zesDriverGet(uint32_t *pCount, zes_driver_handle_t *phDrivers);
ze_result_t ZE_APICALL zesDeviceGet(zes_driver_handle_t hDriver, uint32_t *pCount,
				    zes_device_handle_t *phDevices);
ze_result_t ZE_APICALL zesDeviceGetProperties(zes_device_handle_t hDevice,
					      zes_device_properties_t *pProperties);
ze_result_t ZE_APICALL zesDeviceEnumMemoryModules(zes_device_handle_t hDevice, uint32_t *pCount,
						  zes_mem_handle_t *phMemory);
ze_result_t ZE_APICALL zesMemoryGetProperties(zes_mem_handle_t hMemory,
					      zes_mem_properties_t *pProperties);
ze_result_t ZE_APICALL zesMemoryGetState(zes_mem_handle_t hMemory, zes_mem_state_t *pState);
ze_result_t ZE_APICALL zesDeviceEnumEngineGroups(zes_device_handle_t hDevice, uint32_t *pCount,
						 zes_engine_handle_t *phEngine);
ze_result_t ZE_APICALL zesEngineGetProperties(zes_engine_handle_t hEngine,
					      zes_engine_properties_t *pProperties);
ze_result_t ZE_APICALL zesEngineGetActivity(zes_engine_handle_t hEngine,
					    zes_engine_stats_t *pStats);
ze_result_t ZE_APICALL zesDeviceProcessesGetState(zes_device_handle_t hDevice, uint32_t *pCount,
						  zes_process_state_t *pProcesses);

#endif
