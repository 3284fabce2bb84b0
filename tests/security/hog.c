/* hog.c — a hostile tenant program for the adversarial tests: it loads
 * the CUDA driver from the path it is given (libcuda.so.1, or a renamed
 * copy the interposer does not recognise), takes device memory straight
 * from the driver, says so, and holds it.
 *
 *   hog LIBRARY MIB [SECONDS]
 *
 * It prints "held N MiB pid P at MS" (MS: CLOCK_REALTIME milliseconds)
 * once the memory is held, then sleeps SECONDS (default: until killed).
 * Exit 2 for bad usage, 1 when the driver refuses (which the test of the
 * interposer's own limit expects, for an honest path). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "include/gp-cuda.h"

#define CHUNK_MIB 256

typedef CUresult (*init_fn)(unsigned);
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*set_fn)(CUcontext);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);

static void *need(void *lib, const char *name)
{
	void *fn = dlsym(lib, name);

	if (!fn) {
		fprintf(stderr, "hog: %s: %s\n", name, dlerror());
		exit(1);
	}
	return fn;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	void *lib;
	CUdevice dev;
	CUcontext ctx;
	long mib, held = 0;
	CUresult r;

	if (argc < 3 || (mib = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: hog LIBRARY MIB [SECONDS]\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "hog: %s\n", dlerror());
		return 1;
	}
	r = ((init_fn)need(lib, "cuInit"))(0);
	if (r == CUDA_SUCCESS)
		r = ((device_get_fn)need(lib, "cuDeviceGet"))(&dev, 0);
	if (r == CUDA_SUCCESS)
		r = ((retain_fn)need(lib, "cuDevicePrimaryCtxRetain"))(&ctx, dev);
	if (r == CUDA_SUCCESS)
		r = ((set_fn)need(lib, "cuCtxSetCurrent"))(ctx);
	while (r == CUDA_SUCCESS && held < mib) {
		long chunk = mib - held < CHUNK_MIB ? mib - held : CHUNK_MIB;
		CUdeviceptr p;

		r = ((alloc_fn)need(lib, "cuMemAlloc_v2"))(&p, (size_t)chunk << 20);
		if (r == CUDA_SUCCESS)
			held += chunk;
	}
	if (r != CUDA_SUCCESS) {
		printf("refused at %ld MiB (CUresult %d)\n", held, (int)r);
		return 1;
	}
	printf("held %ld MiB pid %d at %lld\n", held, (int)getpid(), now_ms());
	fflush(stdout);
	if (argc > 3)
		sleep((unsigned)atoi(argv[3]));
	else
		for (;;)
			pause();
	return 0;
}
