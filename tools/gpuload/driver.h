/* driver.h — gpuload's table of CUDA driver functions.
 *
 * gpuload reaches the driver the way the CUDA runtime does, so that it
 * passes through whatever a sharing layer puts in front of the driver:
 * one dlopen("libcuda.so.1"), one dlsym of cuGetProcAddress_v2, and every
 * other function through cuGetProcAddress_v2(name, …, 13000, default
 * flags). With `direct` it instead dlsyms each exported symbol, as a
 * program linked with -lcuda would bind them.
 *
 * The table is the program's one global. Members are named after the
 * unversioned API name and hold the variant CUDA 13 headers bind that name
 * to (cuMemAlloc holds cuMemAlloc_v2). Optional members (error strings,
 * event timing) may be NULL after a successful load; the others never are.
 * Once loaded, the driver stays loaded for the life of the process, as the
 * CUDA runtime leaves it: a driver keeps process-wide state (its worker
 * threads, its handle on the devices) that unloading it would strand. */
#ifndef GPULOAD_DRIVER_H
#define GPULOAD_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "include/gp-cuda.h"

/* Not declared by gp-cuda.h; the signature is the driver's. */
typedef CUresult (*PFN_cuGetErrorName)(CUresult error, const char **str);

/* X(member, exported symbol at version 13000, type, required) */
#define GL_DRIVER_FUNCTIONS(X)                                                          \
	X(cuInit, "cuInit", PFN_cuInit, true)                                           \
	X(cuGetErrorString, "cuGetErrorString", PFN_cuGetErrorString, false)            \
	X(cuGetErrorName, "cuGetErrorName", PFN_cuGetErrorName, false)                  \
	X(cuDeviceGet, "cuDeviceGet", PFN_cuDeviceGet, true)                            \
	X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",                         \
	  PFN_cuDevicePrimaryCtxRetain, true)                                           \
	X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",                    \
	  PFN_cuDevicePrimaryCtxRelease_v2, true)                                       \
	X(cuCtxSetCurrent, "cuCtxSetCurrent", PFN_cuCtxSetCurrent, true)                \
	X(cuModuleLoadData, "cuModuleLoadData", PFN_cuModuleLoadData, true)             \
	X(cuModuleUnload, "cuModuleUnload", PFN_cuModuleUnload, true)                   \
	X(cuModuleGetFunction, "cuModuleGetFunction", PFN_cuModuleGetFunction, true)    \
	X(cuLaunchKernel, "cuLaunchKernel", PFN_cuLaunchKernel, true)                   \
	X(cuStreamCreate, "cuStreamCreate", PFN_cuStreamCreate, true)                   \
	X(cuStreamDestroy, "cuStreamDestroy_v2", PFN_cuStreamDestroy_v2, true)          \
	X(cuStreamSynchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize, true)    \
	X(cuEventCreate, "cuEventCreate", PFN_cuEventCreate, true)                      \
	X(cuEventRecord, "cuEventRecord", PFN_cuEventRecord, true)                      \
	X(cuEventSynchronize, "cuEventSynchronize", PFN_cuEventSynchronize, true)       \
	X(cuEventElapsedTime, "cuEventElapsedTime_v2", PFN_cuEventElapsedTime, false)   \
	X(cuEventDestroy, "cuEventDestroy_v2", PFN_cuEventDestroy_v2, true)             \
	X(cuMemAlloc, "cuMemAlloc_v2", PFN_cuMemAlloc_v2, true)                         \
	X(cuMemFree, "cuMemFree_v2", PFN_cuMemFree_v2, true)                            \
	X(cuMemGetInfo, "cuMemGetInfo_v2", PFN_cuMemGetInfo_v2, true)

#define GL_CUDA_VERSION 13000

struct gl_driver {
	void *handle;
#define GL_DRIVER_MEMBER(member, symbol, type, required) type member;
	GL_DRIVER_FUNCTIONS(GL_DRIVER_MEMBER)
#undef GL_DRIVER_MEMBER
};

/* The loaded functions; all NULL before gl_driver_load. */
extern struct gl_driver gl_cu;

/* Loads libcuda.so.1 and fills gl_cu; once per process. On failure returns
 * a negative errno, leaves nothing loaded and writes one line saying which
 * call failed and why into err. */
int gl_driver_load(bool direct, char *err, size_t err_len);

/* The name of a result ("CUDA_ERROR_OUT_OF_MEMORY") from the driver, or
 * "CUresult N" written into buf when it cannot say. */
const char *gl_driver_error_name(CUresult r, char *buf, size_t len);

/* The driver's description of a result ("out of memory"), or a generic
 * text. The string is static. */
const char *gl_driver_error_text(CUresult r);

#endif
