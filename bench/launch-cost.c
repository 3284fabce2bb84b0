/* launch-cost.c — the cost of cuLaunchKernel as a program sees it,
 * through whatever is loaded (run it with and without LD_PRELOAD of
 * libgpushare.so: the difference is the interposer's cost). Times a loop
 * of empty kernels, synchronizing every 64 launches, and prints the
 * nanoseconds per launch, the synchronizations included: what a program
 * pays, whether the interposer's in-flight bound makes it wait at a launch
 * or the driver at the synchronization. (Timing each call alone would
 * measure the simulated device's thread wake-ups, not the interposer.) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "include/gp-cuda.h"

static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
			  ".visible .entry gpuload_spin(.param .u64 ns)\n{\n\tret;\n}\n";

static PFN_cuGetProcAddress_v2 gpa;

static void *get(const char *name)
{
	void *fn = NULL;

	gpa(name, &fn, 13000, 0, NULL);
	return fn;
}

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	PFN_cuLaunchKernel launch;
	PFN_cuStreamSynchronize sync;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	uint64_t ns = 0, loop;
	void *params[] = { &ns };
	const int rounds = 50000, warm = 1000;

	if (!lib || !(gpa = (PFN_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2")) ||
	    ((PFN_cuInit)get("cuInit"))(0) != CUDA_SUCCESS) {
		fprintf(stderr, "launch-cost: no driver\n");
		return 1;
	}
	((PFN_cuDevicePrimaryCtxRetain)get("cuDevicePrimaryCtxRetain"))(&ctx, 0);
	((PFN_cuCtxSetCurrent)get("cuCtxSetCurrent"))(ctx);
	((PFN_cuModuleLoadData)get("cuModuleLoadData"))(&mod, ptx);
	((PFN_cuModuleGetFunction)get("cuModuleGetFunction"))(&f, mod, "gpuload_spin");
	launch = (PFN_cuLaunchKernel)get("cuLaunchKernel");
	sync = (PFN_cuStreamSynchronize)get("cuStreamSynchronize");
	for (int i = 0; i < warm; i++)
		launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
	sync(NULL);
	loop = now();
	for (int i = 0; i < rounds; i++) {
		launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
		if (i % 64 == 63)
			sync(NULL);
	}
	sync(NULL);
	loop = now() - loop;
	printf("%.1f\n", (double)loop / rounds);
	return 0;
}
