/* gp-nvml.h — the part of NVML (the NVIDIA Management Library) that gpupool
 * speaks.
 *
 * Type names, enum values, struct layouts and function signatures are facts
 * of NVML's ABI (API 13, x86-64), written here so that simdev, the probe and
 * later the interposer build on machines without the CUDA toolkit. Only what
 * the project uses is declared. Versioned entry points are declared under
 * their exported names (nvmlInit_v2 …); the unversioned names that old
 * clients still link against are declared too where simdev exports them.
 *
 * Conventions of the API, which every function below follows:
 * - Every call except nvmlInit*, nvmlErrorString returns
 *   NVML_ERROR_UNINITIALIZED until an init succeeds; inits nest, each
 *   nvmlShutdown undoes one.
 * - Handles (nvmlDevice_t) are owned by the library and stay valid for the
 *   life of the process; callers never free them.
 * - Strings are copied into caller buffers; a buffer too small for the
 *   string and its NUL gives NVML_ERROR_INSUFFICIENT_SIZE.
 * - Lists (processes, samples) are copied into caller arrays. When the array
 *   is NULL or too small the call returns NVML_ERROR_INSUFFICIENT_SIZE and sets
 *   the count to the number of entries needed. The list can change between
 *   two calls: callers allow some room or retry.
 * - Structs whose first field is `version` must have it set by the caller to
 *   the matching constant (nvmlMemory_v2 …); another value gives
 *   NVML_ERROR_ARGUMENT_VERSION_MISMATCH.
 * Names starting GP_NVML_ are gpupool's own, not NVML's. */
#ifndef GP_INCLUDE_NVML_H
#define GP_INCLUDE_NVML_H

#include <stddef.h>

typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

/* Flags of nvmlInitWithFlags. */
#define NVML_INIT_FLAG_NO_GPUS	 1u /* succeed even when there is no device */
#define NVML_INIT_FLAG_NO_ATTACH 2u /* do not attach to the devices */

/* Buffer sizes, NUL included. */
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE	       96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE	       96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE     32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE  16

/* MIG modes (nvmlDeviceGetMigMode). */
#define NVML_DEVICE_MIG_DISABLE 0u
#define NVML_DEVICE_MIG_ENABLE	1u

/* gpuInstanceId / computeInstanceId of a process when MIG is off. */
#define GP_NVML_NO_INSTANCE 0xFFFFFFFFu

/* A struct's version: its size in the low bits, the version number in the
 * top byte. */
#define GP_NVML_STRUCT_VERSION(type, ver)                                                \
	((unsigned int)(sizeof(type) | ((unsigned int)(ver) << 24)))

typedef struct nvmlDevice_st *nvmlDevice_t;

/* Device memory, in bytes. */
typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
	unsigned int version; /* nvmlMemory_v2 */
	unsigned long long total;
	unsigned long long reserved; /* held by the driver and firmware */
	unsigned long long free;
	unsigned long long used; /* excludes reserved */
} nvmlMemory_v2_t;
#define nvmlMemory_v2 0x02000028u

/* Percent of time over the last sample period. */
typedef struct nvmlUtilization_st {
	unsigned int gpu;    /* a kernel was executing */
	unsigned int memory; /* device memory was being read or written */
} nvmlUtilization_t;

/* A process on a device (the v2 layout, used by the _v2 and _v3 getters). */
typedef struct nvmlProcessInfo_st {
	unsigned int pid;		  /* host pid */
	unsigned long long usedGpuMemory; /* bytes */
	unsigned int gpuInstanceId;	  /* GP_NVML_NO_INSTANCE without MIG */
	unsigned int computeInstanceId;	  /* GP_NVML_NO_INSTANCE without MIG */
} nvmlProcessInfo_t;
typedef nvmlProcessInfo_t nvmlProcessInfo_v2_t;

/* The v1 layout, used by the unversioned nvmlDeviceGetComputeRunningProcesses. */
typedef struct nvmlProcessInfo_v1_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* A feature's state (accounting mode, and others). */
typedef enum nvmlEnableState_enum {
	NVML_FEATURE_DISABLED = 0,
	NVML_FEATURE_ENABLED = 1,
} nvmlEnableState_t;

/* What two GPUs can do peer to peer (nvmlDeviceGetP2PStatus): the index of
 * the capability asked, and the answer (OK: they can; over NVLINK, they
 * are joined by NVLink, directly or through NVSwitch). */
typedef enum nvmlGpuP2PCapsIndex_enum {
	NVML_P2P_CAPS_INDEX_READ = 0,
	NVML_P2P_CAPS_INDEX_WRITE = 1,
	NVML_P2P_CAPS_INDEX_NVLINK = 2,
	NVML_P2P_CAPS_INDEX_ATOMICS = 3,
	NVML_P2P_CAPS_INDEX_PROP = 4,
	NVML_P2P_CAPS_INDEX_UNKNOWN = 5,
} nvmlGpuP2PCapsIndex_t;

typedef enum nvmlGpuP2PStatus_enum {
	NVML_P2P_STATUS_OK = 0,
	NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
	NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
	NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
	NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
	NVML_P2P_STATUS_NOT_SUPPORTED = 5,
	NVML_P2P_STATUS_UNKNOWN = 6,
} nvmlGpuP2PStatus_t;

/* A process's statistics over its lifetime, kept by the driver while the
 * device's accounting mode is on (nvmlDeviceGetAccountingStats). */
typedef struct nvmlAccountingStats_st {
	unsigned int gpuUtilization;	  /* percent of its lifetime a kernel ran */
	unsigned int memoryUtilization;	  /* percent of its lifetime memory was busy */
	unsigned long long maxMemoryUsage; /* the most device memory it held, bytes */
	unsigned long long time;	  /* its context's lifetime so far, ms */
	unsigned long long startTime;	  /* CPU timestamp of its start, µs */
	unsigned int isRunning;		  /* 1 running, 0 ended */
	unsigned int reserved[5];
} nvmlAccountingStats_t;

/* One process's utilization over one sample period (percent). */
typedef struct nvmlProcessUtilizationSample_st {
	unsigned int pid;
	unsigned long long timeStamp; /* CLOCK_REALTIME, µs */
	unsigned int smUtil;
	unsigned int memUtil;
	unsigned int encUtil;
	unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* The same with the JPEG and optical-flow engines (nvmlDeviceGetProcesses-
 * UtilizationInfo). Layout assumed from NVML's header: the timestamp comes
 * first, then pid and the six percentages; 36 bytes of fields, padded to 40. */
typedef struct nvmlProcessUtilizationInfo_v1_st {
	unsigned long long timeStamp; /* CLOCK_REALTIME, µs */
	unsigned int pid;
	unsigned int smUtil;
	unsigned int memUtil;
	unsigned int encUtil;
	unsigned int decUtil;
	unsigned int jpgUtil;
	unsigned int ofaUtil;
} nvmlProcessUtilizationInfo_v1_t;

typedef struct nvmlProcessesUtilizationInfo_v1_st {
	unsigned int version;		  /* nvmlProcessesUtilizationInfo_v1 */
	unsigned int processSamplesCount; /* in: room in procUtilArray; out: entries */
	unsigned long long lastSeenTimeStamp; /* only samples newer than this (µs) */
	nvmlProcessUtilizationInfo_v1_t *procUtilArray;
} nvmlProcessesUtilizationInfo_v1_t;
typedef nvmlProcessesUtilizationInfo_v1_t nvmlProcessesUtilizationInfo_t;
#define nvmlProcessesUtilizationInfo_v1 0x01000018u

/* PCI identity. busId is "DDDDDDDD:BB:DD.F", busIdLegacy "DDDD:BB:DD.F";
 * pciDeviceId has the device id in the high 16 bits and the vendor id
 * (0x10DE) in the low 16. */
typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t ABI");
_Static_assert(offsetof(nvmlMemory_t, used) == 16, "nvmlMemory_t ABI");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t ABI");
_Static_assert(offsetof(nvmlMemory_v2_t, total) == 8, "nvmlMemory_v2_t ABI");
_Static_assert(offsetof(nvmlMemory_v2_t, reserved) == 16, "nvmlMemory_v2_t ABI");
_Static_assert(offsetof(nvmlMemory_v2_t, free) == 24, "nvmlMemory_v2_t ABI");
_Static_assert(offsetof(nvmlMemory_v2_t, used) == 32, "nvmlMemory_v2_t ABI");
_Static_assert(nvmlMemory_v2 == GP_NVML_STRUCT_VERSION(nvmlMemory_v2_t, 2),
	       "nvmlMemory_v2");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t ABI");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t ABI");
_Static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8, "nvmlProcessInfo_t ABI");
_Static_assert(offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16, "nvmlProcessInfo_t ABI");
_Static_assert(offsetof(nvmlProcessInfo_t, computeInstanceId) == 20,
	       "nvmlProcessInfo_t ABI");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t ABI");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32,
	       "nvmlProcessUtilizationSample_t ABI");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8,
	       "nvmlProcessUtilizationSample_t ABI");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16,
	       "nvmlProcessUtilizationSample_t ABI");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, decUtil) == 28,
	       "nvmlProcessUtilizationSample_t ABI");
_Static_assert(sizeof(nvmlProcessUtilizationInfo_v1_t) == 40,
	       "nvmlProcessUtilizationInfo_v1_t ABI");
_Static_assert(offsetof(nvmlProcessUtilizationInfo_v1_t, pid) == 8,
	       "nvmlProcessUtilizationInfo_v1_t ABI");
_Static_assert(sizeof(nvmlProcessesUtilizationInfo_v1_t) == 24,
	       "nvmlProcessesUtilizationInfo_v1_t ABI");
_Static_assert(offsetof(nvmlProcessesUtilizationInfo_v1_t, lastSeenTimeStamp) == 8,
	       "nvmlProcessesUtilizationInfo_v1_t ABI");
_Static_assert(offsetof(nvmlProcessesUtilizationInfo_v1_t, procUtilArray) == 16,
	       "nvmlProcessesUtilizationInfo_v1_t ABI");
_Static_assert(nvmlProcessesUtilizationInfo_v1 ==
		       GP_NVML_STRUCT_VERSION(nvmlProcessesUtilizationInfo_v1_t, 1),
	       "nvmlProcessesUtilizationInfo_v1");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t ABI");
_Static_assert(offsetof(nvmlPciInfo_t, domain) == 16, "nvmlPciInfo_t ABI");
_Static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t ABI");

/* Library. nvmlInit is the legacy name of nvmlInit_v2; flags of
 * nvmlInitWithFlags are NVML_INIT_FLAG_*. */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t nvmlShutdown(void);
/* A static string; never NULL, works before init. */
const char *nvmlErrorString(nvmlReturn_t result);

/* System. The CUDA version is 1000 × major + 10 × minor. */
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);

/* Devices. The unversioned names are the legacy forms with the same ABI. */
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
				    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t *p2pStatus);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
					   nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
				  unsigned int *pendingMode);

/* Processes with a context or memory on the device. *infoCount: in, the
 * room in infos; out, the number of processes. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
						     unsigned int *infoCount,
						     nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
						     unsigned int *infoCount,
						     nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
						  unsigned int *infoCount,
						  nvmlProcessInfo_v1_t *infos);

/* Per-process utilization samples newer than lastSeenTimeStamp (µs, 0 for
 * all kept). NVML_ERROR_NOT_FOUND when there is none. */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
					     nvmlProcessUtilizationSample_t *utilization,
					     unsigned int *processSamplesCount,
					     unsigned long long lastSeenTimeStamp);
nvmlReturn_t
nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device,
				      nvmlProcessesUtilizationInfo_t *procesesUtilInfo);

/* Accounting: per-process statistics the driver keeps while the mode is
 * on (set by root with nvmlDeviceSetAccountingMode; off after the driver
 * loads). NVML_ERROR_NOT_FOUND for a pid it has none of. */
nvmlReturn_t nvmlDeviceGetAccountingMode(nvmlDevice_t device, nvmlEnableState_t *mode);
nvmlReturn_t nvmlDeviceSetAccountingMode(nvmlDevice_t device, nvmlEnableState_t mode);
nvmlReturn_t nvmlDeviceGetAccountingStats(nvmlDevice_t device, unsigned int pid,
					  nvmlAccountingStats_t *stats);

#endif
