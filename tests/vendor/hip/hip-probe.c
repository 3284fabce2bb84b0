/* hip-probe.c — a HIP program for the tests of the HIP front end, linked
 * against (simdev's) libamdhip64.so.6 like a program built with ROCm: its
 * references carry ROCm's symbol versions, and under LD_PRELOAD they bind
 * to libgpushare's hooks. One mode per run, one JSON object per line:
 *
 *   hip-probe devices              {"count":N,"devices":[{"name","uuid","total_mib"}]}
 *   hip-probe paths LIMIT CHUNK    per allocation path (MiB): allocates CHUNK
 *                                  until it fails (at most LIMIT/CHUNK + 2),
 *                                  frees all, allocates once more:
 *                                  {"path","allocated_mib","error","again"}
 *   hip-probe view HOLD            holds HOLD MiB, then the memory figures (MiB):
 *                                  mem_free, mem_total, device_total, props0,
 *                                  props6, props_proc (R0600 via hipGetProcAddress)
 *   hip-probe hold MIB             holds MIB, prints "held", waits to be killed
 *   hip-probe race CHUNK GO        waits for file GO, allocates CHUNK MiB until
 *                                  out of memory, prints {"allocated_mib","error"},
 *                                  holds it until GO.done exists (30 s at most)
 *   hip-probe launch NS            every launch path once, a kernel of NS ns each,
 *                                  then a sync: {"path","error","ms"}
 *   hip-probe lookup               dlsym on libamdhip64's handle and
 *                                  hipGetProcAddress give the function this
 *                                  program is linked to, for every hooked name
 *
 * Exit 0 unless a call that must work failed (then a message on stderr). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/gp-hip.h"

#define MiB (1024ull * 1024ull)
#define CHUNKS_MAX 4096

static void must(hipError_t r, const char *what)
{
	if (r != hipSuccess) {
		fprintf(stderr, "hip-probe: %s: %s (%d)\n", what, hipGetErrorName(r), (int)r);
		exit(1);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int devices(void)
{
	int n = 0;

	must(hipGetDeviceCount(&n), "hipGetDeviceCount");
	printf("{\"count\":%d,\"devices\":[", n);
	for (int i = 0; i < n; i++) {
		char name[256];
		hipUUID u;
		size_t total;

		must(hipDeviceGetName(name, sizeof(name), i), "hipDeviceGetName");
		must(hipDeviceGetUuid(&u, i), "hipDeviceGetUuid");
		must(hipDeviceTotalMem(&total, i), "hipDeviceTotalMem");
		printf("%s{\"name\":\"%s\",\"uuid\":\"%.16s\",\"total_mib\":%llu}", i ? "," : "", name,
		       u.bytes, (unsigned long long)(total / MiB));
	}
	printf("]}\n");
	return 0;
}

/* ---- allocation paths ------------------------------------------------ */

enum path { MALLOC, EXT, MANAGED, ASYNC, POOL, PITCH, MEMPITCH, PATHS };
static const char *const path_name[PATHS] = {
	"hipMalloc",	      "hipExtMallocWithFlags", "hipMallocManaged", "hipMallocAsync",
	"hipMallocFromPoolAsync", "hipMallocPitch",	   "hipMemAllocPitch",
};

static hipError_t alloc_one(enum path p, size_t bytes, void **ptr, hipStream_t s)
{
	hipMemPool_t pool;
	size_t pitch;
	hipError_t r;

	switch (p) {
	case MALLOC: return hipMalloc(ptr, bytes);
	case EXT: return hipExtMallocWithFlags(ptr, bytes, hipDeviceMallocDefault);
	case MANAGED: return hipMallocManaged(ptr, bytes, hipMemAttachGlobal);
	case ASYNC: return hipMallocAsync(ptr, bytes, s);
	case POOL:
		if ((r = hipDeviceGetDefaultMemPool(&pool, 0)) != hipSuccess)
			return r;
		return hipMallocFromPoolAsync(ptr, bytes, pool, s);
	case PITCH: return hipMallocPitch(ptr, &pitch, MiB, bytes / MiB);
	case MEMPITCH: return hipMemAllocPitch(ptr, &pitch, MiB, bytes / MiB, 4);
	default: return hipErrorInvalidValue;
	}
}

static void free_one(enum path p, void *ptr, hipStream_t s)
{
	if (p == ASYNC || p == POOL)
		must(hipFreeAsync(ptr, s), "hipFreeAsync");
	else
		must(hipFree(ptr), "hipFree");
}

static int paths(unsigned long limit, unsigned long chunk)
{
	static void *held[CHUNKS_MAX];
	hipStream_t s;

	must(hipStreamCreate(&s), "hipStreamCreate");
	for (enum path p = 0; p < PATHS; p++) {
		unsigned long n = 0, tries = limit / chunk + 2;
		hipError_t r = hipSuccess, again;
		void *ptr;

		while (n < tries && n < CHUNKS_MAX &&
		       (r = alloc_one(p, chunk * MiB, &held[n], s)) == hipSuccess)
			n++;
		for (unsigned long i = 0; i < n; i++)
			free_one(p, held[i], s);
		must(hipStreamSynchronize(s), "hipStreamSynchronize");
		again = alloc_one(p, chunk * MiB, &ptr, s);
		if (again == hipSuccess)
			free_one(p, ptr, s);
		must(hipStreamSynchronize(s), "hipStreamSynchronize");
		printf("{\"path\":\"%s\",\"allocated_mib\":%lu,\"error\":%d,\"again\":%d}\n",
		       path_name[p], n * chunk, (int)r, (int)again);
	}
	must(hipStreamDestroy(s), "hipStreamDestroy");
	return 0;
}

/* ---- views ------------------------------------------------------------ */

static int view(unsigned long hold)
{
	hipError_t (*props)(hipDeviceProp_tR0600_head *, int) = NULL;
	struct {
		hipDeviceProp_tR0600_head head;
		char rest[4096];        /* the real struct is larger */
	} p6, pp;
	struct {
		hipDeviceProp_tR0000_head head;
		char rest[4096];
	} p0;
	size_t free_bytes, total, device_total;
	void *ptr = NULL;

	if (hold)
		must(hipMalloc(&ptr, hold * MiB), "hipMalloc");
	must(hipMemGetInfo(&free_bytes, &total), "hipMemGetInfo");
	must(hipDeviceTotalMem(&device_total, 0), "hipDeviceTotalMem");
	must(hipGetDeviceProperties(&p0.head, 0), "hipGetDeviceProperties");
	must(hipGetDevicePropertiesR0600(&p6.head, 0), "hipGetDevicePropertiesR0600");
	must(hipGetProcAddress("hipGetDeviceProperties", (void **)&props, 601, 0, NULL),
	     "hipGetProcAddress");
	must(props(&pp.head, 0), "hipGetDeviceProperties (hipGetProcAddress, 601)");
	printf("{\"mem_free\":%llu,\"mem_total\":%llu,\"device_total\":%llu,\"props0\":%llu,"
	       "\"props6\":%llu,\"props_proc\":%llu,\"name\":\"%s\"}\n",
	       (unsigned long long)(free_bytes / MiB), (unsigned long long)(total / MiB),
	       (unsigned long long)(device_total / MiB),
	       (unsigned long long)(p0.head.totalGlobalMem / MiB),
	       (unsigned long long)(p6.head.totalGlobalMem / MiB),
	       (unsigned long long)(pp.head.totalGlobalMem / MiB), p6.head.name);
	if (ptr)
		must(hipFree(ptr), "hipFree");
	return 0;
}

static int hold(unsigned long mib) __attribute__((noreturn));

static int hold(unsigned long mib)
{
	void *ptr;

	must(hipMalloc(&ptr, mib * MiB), "hipMalloc");
	printf("held\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int race(unsigned long chunk, const char *go)
{
	char done[4096];
	unsigned long n = 0;
	hipError_t r;
	void *ptr;

	snprintf(done, sizeof(done), "%s.done", go);
	while (access(go, F_OK) != 0)
		usleep(1000);
	while (n < CHUNKS_MAX && (r = hipMalloc(&ptr, chunk * MiB)) == hipSuccess)
		n++;
	printf("{\"allocated_mib\":%lu,\"error\":%d}\n", n * chunk, (int)r);
	fflush(stdout);
	for (int i = 0; i < 30000 && access(done, F_OK) != 0; i++)
		usleep(1000);
	return 0;
}

/* ---- launches ----------------------------------------------------------- */

static char kernel_stub;        /* any host address is a kernel on simdev */

static void launched(const char *path, hipError_t r, hipStream_t s, double start)
{
	if (r == hipSuccess)
		r = hipStreamSynchronize(s);
	printf("{\"path\":\"%s\",\"error\":%d,\"ms\":%.3f}\n", path, (int)r, now_ms() - start);
}

static int launch(unsigned long long ns)
{
	hipModule_t m;
	hipFunction_t f;
	hipStream_t s;
	hipEvent_t a, b;
	hipGraph_t g;
	hipGraphExec_t x;
	hipGraphNode_t node;
	uint64_t arg = ns;
	void *args[] = { &arg };
	size_t size = sizeof(arg);
	void *extra[] = { HIP_LAUNCH_PARAM_BUFFER_POINTER, &arg, HIP_LAUNCH_PARAM_BUFFER_SIZE,
			  &size, HIP_LAUNCH_PARAM_END };
	dim3 one = { 1, 1, 1 }, block = { 64, 1, 1 };
	hipKernelNodeParams kp = { .blockDim = block, .func = &kernel_stub, .gridDim = one,
				   .kernelParams = args };
	double t;

	must(hipStreamCreate(&s), "hipStreamCreate");
	must(hipEventCreate(&a), "hipEventCreate");
	must(hipEventCreate(&b), "hipEventCreate");
	must(hipModuleLoadData(&m, "gpuload_spin"), "hipModuleLoadData");
	must(hipModuleGetFunction(&f, m, "gpuload_spin"), "hipModuleGetFunction");
	t = now_ms();
	launched("hipLaunchKernel", hipLaunchKernel(&kernel_stub, one, block, args, 0, s), s, t);
	t = now_ms();
	launched("hipModuleLaunchKernel",
		 hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, args, NULL), s, t);
	t = now_ms();
	launched("hipModuleLaunchKernel-extra",
		 hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, NULL, extra), s, t);
	t = now_ms();
	launched("hipExtLaunchKernel",
		 hipExtLaunchKernel(&kernel_stub, one, block, args, 0, s, a, b, 0), s, t);
	t = now_ms();
	launched("hipLaunchCooperativeKernel",
		 hipLaunchCooperativeKernel(&kernel_stub, one, block, args, 0, s), s, t);
	must(hipGraphCreate(&g, 0), "hipGraphCreate");
	must(hipGraphAddKernelNode(&node, g, NULL, 0, &kp), "hipGraphAddKernelNode");
	must(hipGraphInstantiate(&x, g, NULL, NULL, 0), "hipGraphInstantiate");
	t = now_ms();
	launched("hipGraphLaunch", hipGraphLaunch(x, s), s, t);
	t = now_ms();
	must(hipLaunchKernel(&kernel_stub, one, block, args, 0, NULL), "hipLaunchKernel (null stream)");
	must(hipDeviceSynchronize(), "hipDeviceSynchronize");
	printf("{\"path\":\"null-stream+hipDeviceSynchronize\",\"error\":0,\"ms\":%.3f}\n", now_ms() - t);
	must(hipGraphExecDestroy(x), "hipGraphExecDestroy");
	must(hipGraphDestroy(g), "hipGraphDestroy");
	must(hipEventDestroy(a), "hipEventDestroy");
	must(hipEventDestroy(b), "hipEventDestroy");
	must(hipStreamDestroy(s), "hipStreamDestroy");
	return 0;
}

/* ---- lookups ------------------------------------------------------------ */

static int lookup(void)
{
	static const struct {
		const char *name;
		void *linked;
	} names[] = {
		{ "hipMalloc", (void *)hipMalloc },
		{ "hipExtMallocWithFlags", (void *)hipExtMallocWithFlags },
		{ "hipMallocManaged", (void *)hipMallocManaged },
		{ "hipMallocAsync", (void *)hipMallocAsync },
		{ "hipMallocFromPoolAsync", (void *)hipMallocFromPoolAsync },
		{ "hipMallocPitch", (void *)hipMallocPitch },
		{ "hipMemAllocPitch", (void *)hipMemAllocPitch },
		{ "hipFree", (void *)hipFree },
		{ "hipFreeAsync", (void *)hipFreeAsync },
		{ "hipMemGetInfo", (void *)hipMemGetInfo },
		{ "hipDeviceTotalMem", (void *)hipDeviceTotalMem },
		{ "hipGetDevicePropertiesR0600", (void *)hipGetDevicePropertiesR0600 },
		{ "hipLaunchKernel", (void *)hipLaunchKernel },
		{ "hipModuleLaunchKernel", (void *)hipModuleLaunchKernel },
		{ "hipExtLaunchKernel", (void *)hipExtLaunchKernel },
		{ "hipLaunchCooperativeKernel", (void *)hipLaunchCooperativeKernel },
		{ "hipGraphLaunch", (void *)hipGraphLaunch },
		{ "hipDeviceSynchronize", (void *)hipDeviceSynchronize },
		{ "hipStreamSynchronize", (void *)hipStreamSynchronize },
		{ "hipEventSynchronize", (void *)hipEventSynchronize },
		{ "hipStreamCreate", (void *)hipStreamCreate },      /* not hooked: the runtime's */
	};
	void *h = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_NOLOAD);
	int bad = 0;

	if (!h) {
		fprintf(stderr, "hip-probe: libamdhip64.so.6 is not loaded: %s\n", dlerror());
		return 1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *by_dlsym = dlsym(h, names[i].name), *by_proc = NULL;
		hipDriverProcAddressQueryResult st = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;

		hipGetProcAddress(names[i].name, &by_proc, 601, 0, &st);
		if (by_dlsym != names[i].linked || by_proc != names[i].linked ||
		    st != HIP_GET_PROC_ADDRESS_SUCCESS) {
			printf("{\"name\":\"%s\",\"dlsym_ok\":%s,\"proc_ok\":%s}\n", names[i].name,
			       by_dlsym == names[i].linked ? "true" : "false",
			       by_proc == names[i].linked ? "true" : "false");
			bad++;
		}
	}
	printf("{\"lookup_mismatches\":%d}\n", bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "devices") == 0)
		return devices();
	if (strcmp(mode, "paths") == 0 && argc == 4)
		return paths(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10));
	if (strcmp(mode, "view") == 0 && argc == 3)
		return view(strtoul(argv[2], NULL, 10));
	if (strcmp(mode, "hold") == 0 && argc == 3)
		return hold(strtoul(argv[2], NULL, 10));
	if (strcmp(mode, "race") == 0 && argc == 4)
		return race(strtoul(argv[2], NULL, 10), argv[3]);
	if (strcmp(mode, "launch") == 0 && argc == 3)
		return launch(strtoull(argv[2], NULL, 10));
	if (strcmp(mode, "lookup") == 0)
		return lookup();
	fprintf(stderr, "usage: hip-probe devices | paths LIMIT_MIB CHUNK_MIB | view HOLD_MIB | "
			"hold MIB | race CHUNK_MIB GO_FILE | launch NS | lookup\n");
	return 2;
}
