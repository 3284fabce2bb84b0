/* pulse.c — a hostile tenant program for the verifier's tests: it joins
 * its task through the interposer (a small allocation by libcuda.so.1,
 * which the interposer answers), then, through a copy of the driver the
 * interposer does not recognise, takes MIB of device memory for PULSE_MS
 * every PERIOD_MS and gives it back, COUNT times: more than its slice, but
 * never while a look that comes once a second would see it.
 *
 *   pulse BYPASS-LIBRARY MIB PULSE_MS PERIOD_MS COUNT
 *
 * It prints "joined pid P" once joined and "pulse N at MS" (MS:
 * CLOCK_REALTIME milliseconds) as each pulse takes the memory. Exit 2 for
 * bad usage, 1 when a driver refuses. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "include/gp-cuda.h"

typedef CUresult (*init_fn)(unsigned);
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*set_fn)(CUcontext);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);

struct driver {
	alloc_fn alloc;
	free_fn free;
};

static void *need(void *lib, const char *name)
{
	void *fn = dlsym(lib, name);

	if (!fn) {
		fprintf(stderr, "pulse: %s: %s\n", name, dlerror());
		exit(1);
	}
	return fn;
}

/* Loads a driver by path and makes the first device's context current. */
static int driver_open(const char *path, struct driver *ret)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CUdevice dev;
	CUcontext ctx;
	CUresult r;

	if (!lib) {
		fprintf(stderr, "pulse: %s\n", dlerror());
		return -1;
	}
	r = ((init_fn)need(lib, "cuInit"))(0);
	if (r == CUDA_SUCCESS)
		r = ((device_get_fn)need(lib, "cuDeviceGet"))(&dev, 0);
	if (r == CUDA_SUCCESS)
		r = ((retain_fn)need(lib, "cuDevicePrimaryCtxRetain"))(&ctx, dev);
	if (r == CUDA_SUCCESS)
		r = ((set_fn)need(lib, "cuCtxSetCurrent"))(ctx);
	ret->alloc = (alloc_fn)need(lib, "cuMemAlloc_v2");
	ret->free = (free_fn)need(lib, "cuMemFree_v2");
	return r == CUDA_SUCCESS ? 0 : -1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	struct driver honest, bypass;
	long mib, pulse_ms, period_ms, count;
	CUdeviceptr small, big;

	if (argc != 6 || (mib = atol(argv[2])) <= 0 || (pulse_ms = atol(argv[3])) <= 0 ||
	    (period_ms = atol(argv[4])) <= pulse_ms || (count = atol(argv[5])) <= 0) {
		fprintf(stderr, "usage: pulse BYPASS-LIBRARY MIB PULSE_MS PERIOD_MS COUNT\n");
		return 2;
	}
	if (driver_open("libcuda.so.1", &honest) < 0 || honest.alloc(&small, 1 << 20) != CUDA_SUCCESS)
		return 1;
	printf("joined pid %d\n", (int)getpid());
	fflush(stdout);
	if (driver_open(argv[1], &bypass) < 0)
		return 1;
	for (long n = 1; n <= count; n++) {
		long long start = now_ms();

		if (bypass.alloc(&big, (size_t)mib << 20) != CUDA_SUCCESS)
			return 1;
		printf("pulse %ld at %lld\n", n, start);
		fflush(stdout);
		sleep_ms(pulse_ms);
		bypass.free(big);
		sleep_ms(period_ms - pulse_ms);
	}
	return 0;
}
