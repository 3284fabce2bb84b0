/* driver.h — what the hostile programs of the adversarial tests (hog.c,
 * pulse.c) share: a CUDA driver loaded from the path they are given (the
 * real name, which the interposer answers, or a renamed copy it does not
 * recognise), its first device's context made current, the memory calls.
 * Header-only: each program is one file. */
#ifndef GP_TESTS_SECURITY_DRIVER_H
#define GP_TESTS_SECURITY_DRIVER_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "include/gp-cuda.h"

struct driver {
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*free)(CUdeviceptr);
};

/* dlsym, or exit 1 saying which name is missing (`who`: the program). */
static inline void *driver_need(const char *who, void *lib, const char *name)
{
	void *fn = dlsym(lib, name);

	if (!fn) {
		fprintf(stderr, "%s: %s: %s\n", who, name, dlerror());
		exit(1);
	}
	return fn;
}

/* Loads the driver at path and makes its first device's primary context
 * current: CUDA_SUCCESS, or the driver's error (CUDA_ERROR_NOT_FOUND when
 * it cannot be loaded, said on stderr). */
static inline CUresult driver_open(const char *who, const char *path, struct driver *ret)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CUdevice dev;
	CUcontext ctx;
	CUresult r;

	if (!lib) {
		fprintf(stderr, "%s: %s\n", who, dlerror());
		return CUDA_ERROR_NOT_FOUND;
	}
	r = ((CUresult (*)(unsigned))driver_need(who, lib, "cuInit"))(0);
	if (r == CUDA_SUCCESS)
		r = ((CUresult (*)(CUdevice *, int))driver_need(who, lib, "cuDeviceGet"))(&dev, 0);
	if (r == CUDA_SUCCESS)
		r = ((CUresult (*)(CUcontext *, CUdevice))driver_need(
			who, lib, "cuDevicePrimaryCtxRetain"))(&ctx, dev);
	if (r == CUDA_SUCCESS)
		r = ((CUresult (*)(CUcontext))driver_need(who, lib, "cuCtxSetCurrent"))(ctx);
	ret->alloc = (CUresult (*)(CUdeviceptr *, size_t))driver_need(who, lib, "cuMemAlloc_v2");
	ret->free = (CUresult (*)(CUdeviceptr))driver_need(who, lib, "cuMemFree_v2");
	return r;
}

/* CLOCK_REALTIME in ms: what the tests compare with their own clock. */
static inline long long driver_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
