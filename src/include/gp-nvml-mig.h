/* gp-nvml-mig.h — the part of NVML's Multi-Instance GPU (MIG) API that
 * gpupool speaks: GPU instance profiles and placements, GPU and compute
 * instances, MIG device handles.
 *
 * Facts of NVML's ABI (nvml.h of NVML 13, as published in NVIDIA's
 * go-nvml repository, pkg/nvml/nvml.h; /work/shared/notes/vendor-facts.md
 * §5): names, values, struct layouts and prototypes, written here so that
 * simdev and the agent build without NVIDIA's headers. Only what we use.
 * It extends gp-nvml.h, whose conventions hold (handles belong to the
 * library; lists follow the INSUFFICIENT_SIZE protocol unless said).
 *
 * What MIG adds: a card in MIG mode is split into GPU instances, each one
 * profile (a fixed number of compute and memory slices) at one placement
 * (its first memory slice); a compute instance in a GPU instance is what
 * CUDA runs on, seen by NVML as a "MIG device" handle (an nvmlDevice_t of
 * its own) and by CUDA through CUDA_VISIBLE_DEVICES=MIG-<uuid>. The
 * `profile` argument of the ProfileInfo calls is an index
 * (NVML_GPU_INSTANCE_PROFILE_*); the info's `id` is the profile id that
 * the Create and Placements calls take. */
#ifndef GP_INCLUDE_NVML_MIG_H
#define GP_INCLUDE_NVML_MIG_H

#include <stddef.h>

#include "include/gp-nvml.h"

/* Return codes MIG calls add to gp-nvml.h's. */
#define NVML_ERROR_IN_USE ((nvmlReturn_t)19)
#define NVML_ERROR_INSUFFICIENT_RESOURCES ((nvmlReturn_t)23)

/* GPU instance profile indices (nvmlDeviceGetGpuInstanceProfileInfo). */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE 0x0u
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE 0x1u
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE 0x2u
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE 0x3u
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE 0x4u
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 0x9u
#define NVML_GPU_INSTANCE_PROFILE_COUNT 0x12u

/* Compute instance profile indices, and the one engine profile. */
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE 0x0u
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE 0x1u
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE 0x2u
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE 0x3u
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE 0x4u
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT 0x9u
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0u

typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;

/* Where a GPU instance sits: its first memory slice and how many. */
typedef struct nvmlGpuInstancePlacement_st {
	unsigned int start;
	unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
	unsigned int id;                  /* the profile id */
	unsigned int isP2pSupported;
	unsigned int sliceCount;          /* compute (GPU) slices */
	unsigned int instanceCount;       /* instances of it a card holds */
	unsigned int multiprocessorCount;
	unsigned int copyEngineCount;
	unsigned int decoderCount;
	unsigned int encoderCount;
	unsigned int jpegCount;
	unsigned int ofaCount;
	unsigned long long memorySizeMB;  /* MiB */
} nvmlGpuInstanceProfileInfo_t;

/* v2: a leading version (nvmlGpuInstanceProfileInfo_v2) and the name. */
typedef struct nvmlGpuInstanceProfileInfo_v2_st {
	unsigned int version;
	unsigned int id;
	unsigned int isP2pSupported;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int copyEngineCount;
	unsigned int decoderCount;
	unsigned int encoderCount;
	unsigned int jpegCount;
	unsigned int ofaCount;
	unsigned long long memorySizeMB;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlGpuInstanceProfileInfo_v2_t;
#define nvmlGpuInstanceProfileInfo_v2 0x02000098u

typedef struct nvmlGpuInstanceInfo_st {
	nvmlDevice_t device;              /* its card */
	unsigned int id;                  /* GPU instance id on the card */
	unsigned int profileId;
	nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstancePlacement_st {
	unsigned int start;
	unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
	unsigned int id;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct nvmlComputeInstanceInfo_st {
	nvmlDevice_t device;
	nvmlGpuInstance_t gpuInstance;
	unsigned int id;                  /* compute instance id in its GPU instance */
	unsigned int profileId;
	nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

_Static_assert(sizeof(nvmlGpuInstancePlacement_t) == 8, "nvmlGpuInstancePlacement_t ABI");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48, "nvmlGpuInstanceProfileInfo_t ABI");
_Static_assert(offsetof(nvmlGpuInstanceProfileInfo_t, memorySizeMB) == 40,
	       "nvmlGpuInstanceProfileInfo_t ABI");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_v2_t) == 152,
	       "nvmlGpuInstanceProfileInfo_v2_t ABI");
_Static_assert(offsetof(nvmlGpuInstanceProfileInfo_v2_t, memorySizeMB) == 48,
	       "nvmlGpuInstanceProfileInfo_v2_t ABI");
_Static_assert(nvmlGpuInstanceProfileInfo_v2 ==
		       GP_NVML_STRUCT_VERSION(nvmlGpuInstanceProfileInfo_v2_t, 2),
	       "nvmlGpuInstanceProfileInfo_v2");
_Static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24, "nvmlGpuInstanceInfo_t ABI");
_Static_assert(sizeof(nvmlComputeInstanceProfileInfo_t) == 36,
	       "nvmlComputeInstanceProfileInfo_t ABI");
_Static_assert(sizeof(nvmlComputeInstanceInfo_t) == 32, "nvmlComputeInstanceInfo_t ABI");

/* Profiles and placements. NOT_SUPPORTED on a card without MIG mode or
 * for a profile it lacks; INVALID_ARGUMENT for an index past the last. */
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
						 nvmlGpuInstanceProfileInfo_t *info);
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
						  nvmlGpuInstanceProfileInfo_v2_t *info);
/* placements NULL: *count gets how many there are. */
nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device,
							   unsigned int profileId,
							   nvmlGpuInstancePlacement_t *placements,
							   unsigned int *count);
/* The unversioned name of the same call. */
nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements(nvmlDevice_t device,
							unsigned int profileId,
							nvmlGpuInstancePlacement_t *placements,
							unsigned int *count);
nvmlReturn_t nvmlDeviceGetGpuInstanceRemainingCapacity(nvmlDevice_t device,
						       unsigned int profileId,
						       unsigned int *count);

/* GPU instances. Create: INSUFFICIENT_RESOURCES when it does not fit;
 * Destroy: IN_USE while it has a compute instance or processes. Get:
 * the array must hold the profile's instanceCount; *count is set. */
nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t device, unsigned int profileId,
					 nvmlGpuInstance_t *gpuInstance);
nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
						      const nvmlGpuInstancePlacement_t *placement,
						      nvmlGpuInstance_t *gpuInstance);
nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance);
nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId,
				       nvmlGpuInstance_t *gpuInstances, unsigned int *count);
nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
					  nvmlGpuInstance_t *gpuInstance);
nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info);

/* Compute instances. */
nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance,
							  unsigned int profile,
							  unsigned int engProfile,
							  nvmlComputeInstanceProfileInfo_t *info);
nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance,
						  unsigned int profileId,
						  nvmlComputeInstance_t *computeInstance);
nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance);
nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance,
						unsigned int profileId,
						nvmlComputeInstance_t *computeInstances,
						unsigned int *count);
nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance,
					   nvmlComputeInstanceInfo_t *info);
nvmlReturn_t nvmlComputeInstanceGetInfo(nvmlComputeInstance_t computeInstance,
					nvmlComputeInstanceInfo_t *info);

/* MIG device handles: nvmlDevice_t values of their own, which the device
 * calls (name, UUID, memory, processes) take. */
nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id);
nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id);
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count);
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
						 nvmlDevice_t *migDevice);
nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice,
							  nvmlDevice_t *device);

#endif
