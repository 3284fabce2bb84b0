/* launch-cost.c — the cost of one cuLaunchKernel call as a program sees
 * it, through whatever is loaded (run it with and without LD_PRELOAD of
 * libgpushare.so: the difference is the interposer's cost). Prints the
 * mean nanoseconds per launch call. Launches gpuload's spin kernel with
 * 0 ns, synchronizing every 64 launches. */
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
	uint64_t ns = 0, total = 0;
	void *params[] = { &ns };
	const int rounds = 20000;

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
	for (int i = 0; i < rounds + 1000; i++) {
		uint64_t t0 = now();

		launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
		if (i >= 1000)          /* the first thousand warm up */
			total += now() - t0;
		if (i % 64 == 63)
			sync(NULL);
	}
	sync(NULL);
	printf("%.1f\n", (double)total / rounds);
	return 0;
}
