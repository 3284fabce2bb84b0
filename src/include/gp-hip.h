/* gp-hip.h — the part of AMD's HIP runtime and ROCm SMI that gpupool speaks
 * (AMD ROCm, and Hygon's DTK, which is HIP too).
 *
 * Type names, enum values, struct layouts and prototypes are facts of the
 * published headers (ROCm/HIP include/hip/hip_runtime_api.h 6.3,
 * ROCm/rocm_smi_lib include/rocm_smi/rocm_smi.h; see
 * /work/shared/notes/vendor-facts.md §1), written here so that simdev, the
 * interposer's front end and gpuload build without a ROCm installation.
 * Only what the project uses is declared. Offsets we rely on (the device
 * properties' totalGlobalMem, the kernel node's fields) are checked below
 * with _Static_assert (x86-64 / LP64).
 *
 * Ownership: as the runtime's own; nothing here allocates. */
#ifndef GP_INCLUDE_HIP_H
#define GP_INCLUDE_HIP_H

#include <stddef.h>
#include <stdint.h>

/* ---- HIP runtime (libamdhip64.so.6) ------------------------------------ */

typedef enum hipError_t {
	hipSuccess = 0,
	hipErrorInvalidValue = 1,
	hipErrorOutOfMemory = 2,
	hipErrorNotInitialized = 3,
	hipErrorInvalidConfiguration = 9,
	hipErrorInvalidDevicePointer = 17,
	hipErrorInsufficientDriver = 35,
	hipErrorInvalidDeviceFunction = 98,
	hipErrorNoDevice = 100,
	hipErrorInvalidDevice = 101,
	hipErrorInvalidContext = 201,
	hipErrorInvalidHandle = 400,
	hipErrorNotFound = 500,
	hipErrorNotReady = 600,
	hipErrorIllegalAddress = 700,
	hipErrorLaunchOutOfResources = 701,
	hipErrorLaunchFailure = 719,
	hipErrorCooperativeLaunchTooLarge = 720,
	hipErrorNotSupported = 801,
	hipErrorUnknown = 999,
} hipError_t;

typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipMemPoolHandle_t *hipMemPool_t;
typedef struct ihipGraph *hipGraph_t;
typedef struct hipGraphNode *hipGraphNode_t;
typedef struct hipGraphExec *hipGraphExec_t;
typedef int hipDevice_t;
typedef void *hipDeviceptr_t;

typedef struct dim3 {
	uint32_t x, y, z;
} dim3;

typedef struct hipUUID_t {
	char bytes[16];
} hipUUID;

/* The device properties: only the leading fields we read or write. The
 * caller's struct is larger; a runtime writes it whole, we touch only
 * these. R0600 is what hipGetDevicePropertiesR0600 (and the header's
 * hipGetDeviceProperties macro since ROCm 6.0) fills; the plain exported
 * symbol hipGetDeviceProperties takes R0000. */
typedef struct hipDeviceProp_tR0600_head {
	char name[256];
	hipUUID uuid;
	char luid[8];
	unsigned int luidDeviceNodeMask;
	size_t totalGlobalMem;
} hipDeviceProp_tR0600_head;

typedef struct hipDeviceProp_tR0000_head {
	char name[256];
	size_t totalGlobalMem;
} hipDeviceProp_tR0000_head;

_Static_assert(offsetof(hipDeviceProp_tR0600_head, totalGlobalMem) == 288,
	       "hipDeviceProp_tR0600: totalGlobalMem at 288");
_Static_assert(offsetof(hipDeviceProp_tR0000_head, totalGlobalMem) == 256,
	       "hipDeviceProp_tR0000: totalGlobalMem at 256");

typedef struct hipKernelNodeParams {
	dim3 blockDim;
	void **extra;
	void *func;
	dim3 gridDim;
	void **kernelParams;
	unsigned int sharedMemBytes;
} hipKernelNodeParams;

_Static_assert(offsetof(hipKernelNodeParams, func) == 24 &&
		       offsetof(hipKernelNodeParams, kernelParams) == 48,
	       "hipKernelNodeParams layout");

/* hipModuleLaunchKernel's `extra` markers. */
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define HIP_LAUNCH_PARAM_END ((void *)0x03)

typedef enum hipDriverProcAddressQueryResult {
	HIP_GET_PROC_ADDRESS_SUCCESS = 0,
	HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
	HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} hipDriverProcAddressQueryResult;

/* hipExtMallocWithFlags and hipMallocManaged flags. */
#define hipDeviceMallocDefault 0x0
#define hipDeviceMallocFinegrained 0x1
#define hipDeviceMallocUncached 0x3
#define hipMemAttachGlobal 0x01
#define hipMemAttachHost 0x02

typedef enum hipMemcpyKind {
	hipMemcpyHostToHost = 0,
	hipMemcpyHostToDevice = 1,
	hipMemcpyDeviceToHost = 2,
	hipMemcpyDeviceToDevice = 3,
	hipMemcpyDefault = 4,
} hipMemcpyKind;

/* hipVersion of hipGetProcAddress: 100 x major + minor. */
#define GP_HIP_VERSION 603      /* what simdev's runtime is: HIP 6.3 */

hipError_t hipInit(unsigned int flags);
hipError_t hipDriverGetVersion(int *driverVersion);
hipError_t hipRuntimeGetVersion(int *runtimeVersion);
const char *hipGetErrorName(hipError_t hip_error);
const char *hipGetErrorString(hipError_t hipError);
hipError_t hipGetLastError(void);
hipError_t hipGetDeviceCount(int *count);
hipError_t hipSetDevice(int deviceId);
hipError_t hipGetDevice(int *deviceId);
hipError_t hipDeviceGet(hipDevice_t *device, int ordinal);
hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device);
hipError_t hipDeviceGetUuid(hipUUID *uuid, hipDevice_t device);
hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device);
hipError_t hipDeviceGetPCIBusId(char *pciBusId, int len, int device);
hipError_t hipGetDeviceProperties(hipDeviceProp_tR0000_head *prop, int deviceId);
hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600_head *prop, int deviceId);
hipError_t hipDeviceSynchronize(void);
hipError_t hipDeviceReset(void);

hipError_t hipMalloc(void **ptr, size_t size);
hipError_t hipExtMallocWithFlags(void **ptr, size_t sizeBytes, unsigned int flags);
hipError_t hipMallocManaged(void **dev_ptr, size_t size, unsigned int flags);
hipError_t hipMallocAsync(void **dev_ptr, size_t size, hipStream_t stream);
hipError_t hipMallocFromPoolAsync(void **dev_ptr, size_t size, hipMemPool_t mem_pool,
				  hipStream_t stream);
hipError_t hipMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height);
hipError_t hipMemAllocPitch(hipDeviceptr_t *dptr, size_t *pitch, size_t widthInBytes,
			    size_t height, unsigned int elementSizeBytes);
hipError_t hipFree(void *ptr);
hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream);
hipError_t hipMemGetInfo(size_t *free, size_t *total);
hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t *mem_pool, int device);
hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind);
hipError_t hipMemset(void *dst, int value, size_t sizeBytes);

hipError_t hipStreamCreate(hipStream_t *stream);
hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipStreamQuery(hipStream_t stream);
hipError_t hipEventCreate(hipEvent_t *event);
hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags);
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
hipError_t hipEventQuery(hipEvent_t event);
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop);
hipError_t hipEventDestroy(hipEvent_t event);

hipError_t hipModuleLoadData(hipModule_t *module, const void *image);
hipError_t hipModuleUnload(hipModule_t module);
hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname);
hipError_t hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
			   void **args, size_t sharedMemBytes, hipStream_t stream);
hipError_t hipExtLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
			      void **args, size_t sharedMemBytes, hipStream_t stream,
			      hipEvent_t startEvent, hipEvent_t stopEvent, int flags);
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
				 unsigned int gridDimZ, unsigned int blockDimX,
				 unsigned int blockDimY, unsigned int blockDimZ,
				 unsigned int sharedMemBytes, hipStream_t stream,
				 void **kernelParams, void **extra);
hipError_t hipLaunchCooperativeKernel(const void *f, dim3 gridDim, dim3 blockDimX,
				      void **kernelParams, unsigned int sharedMemBytes,
				      hipStream_t stream);
hipError_t hipGraphCreate(hipGraph_t *pGraph, unsigned int flags);
hipError_t hipGraphDestroy(hipGraph_t graph);
hipError_t hipGraphAddKernelNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				 const hipGraphNode_t *pDependencies, size_t numDependencies,
				 const hipKernelNodeParams *pNodeParams);
hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
			       hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize);
hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream);
hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec);
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
			     hipDriverProcAddressQueryResult *symbolStatus);

/* ---- ROCm SMI (librocm_smi64.so.7; Hygon's DTK: librocm_smi64.so.2) ---- */

typedef enum rsmi_status_t {
	RSMI_STATUS_SUCCESS = 0,
	RSMI_STATUS_INVALID_ARGS = 1,
	RSMI_STATUS_NOT_SUPPORTED = 2,
	RSMI_STATUS_FILE_ERROR = 3,
	RSMI_STATUS_PERMISSION = 4,
	RSMI_STATUS_OUT_OF_RESOURCES = 5,
	RSMI_STATUS_INTERNAL_EXCEPTION = 6,
	RSMI_STATUS_INPUT_OUT_OF_BOUNDS = 7,
	RSMI_STATUS_INIT_ERROR = 8,
	RSMI_STATUS_NOT_YET_IMPLEMENTED = 9,
	RSMI_STATUS_NOT_FOUND = 10,
	RSMI_STATUS_INSUFFICIENT_SIZE = 11,
	RSMI_STATUS_INTERRUPT = 12,
	RSMI_STATUS_UNEXPECTED_SIZE = 13,
	RSMI_STATUS_NO_DATA = 14,
	RSMI_STATUS_UNEXPECTED_DATA = 15,
	RSMI_STATUS_BUSY = 16,
	RSMI_STATUS_REFCOUNT_OVERFLOW = 17,
	RSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF,
} rsmi_status_t;

#define RSMI_INIT_FLAG_ALL_GPUS 0x1

typedef enum rsmi_memory_type_t {
	RSMI_MEM_TYPE_VRAM = 0,
	RSMI_MEM_TYPE_VIS_VRAM = 1,
	RSMI_MEM_TYPE_GTT = 2,
} rsmi_memory_type_t;

typedef enum rsmi_sw_component_t {
	RSMI_SW_COMP_DRIVER = 0,
} rsmi_sw_component_t;

typedef struct rsmi_process_info_t {
	uint32_t process_id;
	uint32_t pasid;
	uint64_t vram_usage;
	uint64_t sdma_usage;
	uint32_t cu_occupancy;
} rsmi_process_info_t;

rsmi_status_t rsmi_init(uint64_t init_flags);
rsmi_status_t rsmi_shut_down(void);
rsmi_status_t rsmi_status_string(rsmi_status_t status, const char **status_string);
rsmi_status_t rsmi_version_str_get(rsmi_sw_component_t component, char *ver_str, uint32_t len);
rsmi_status_t rsmi_num_monitor_devices(uint32_t *num_devices);
rsmi_status_t rsmi_dev_name_get(uint32_t dv_ind, char *name, size_t len);
rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv_ind, uint64_t *id);
rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t *bdfid);
rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv_ind, rsmi_memory_type_t mem_type,
					uint64_t *total);
rsmi_status_t rsmi_dev_memory_usage_get(uint32_t dv_ind, rsmi_memory_type_t mem_type,
					uint64_t *used);
rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv_ind, uint32_t *busy_percent);
rsmi_status_t rsmi_compute_process_info_get(rsmi_process_info_t *procs, uint32_t *num_items);
rsmi_status_t rsmi_compute_process_info_by_pid_get(uint32_t pid, rsmi_process_info_t *proc);
rsmi_status_t rsmi_compute_process_gpus_get(uint32_t pid, uint32_t *dv_indices,
					    uint32_t *num_devices);

/* ---- gpupool's convention for a device's UUID text ---------------------
 * ROCr names a GPU "GPU-" and the 16 hex digits of its 64-bit unique id
 * (the form ROCR_VISIBLE_DEVICES takes); HIP's hipDeviceGetUuid gives
 * those 16 characters, rocm-smi the number (rsmi_dev_unique_id_get). Both
 * sides of gpupool write the same text from what they have: "GPU-" (or
 * "DCU-" for Hygon's cards, whose names say "DCU") and 16 lowercase hex
 * digits. That text names the device's region. */
#define GP_HIP_UUID_MAX 24      /* "GPU-" + 16 + NUL, rounded */

#endif
