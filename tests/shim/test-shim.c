/* test-shim.c — libgpushare's memory slices, with real processes on simdev.
 *
 * Runs with LD_PRELOAD=build/libgpushare.so over the simulated driver
 * (LD_LIBRARY_PATH=build/simdev), GPUPOOL_MEM_LIMIT=64M and a task id of
 * its own (meson sets them), and reaches the driver as the CUDA runtime
 * does: dlopen("libcuda.so.1") and cuGetProcAddress_v2. */
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "include/gp-cuda.h"
#include "include/gp-nvml.h"

#define MiB (1024ULL * 1024)
#define LIMIT (64 * MiB)

static PFN_cuGetProcAddress_v2 gpa;
static CUstream stream;

static void *get(const char *name, int version)
{
	CUdriverProcAddressQueryResult status;
	void *fn = NULL;

	assert_int_equal(gpa(name, &fn, version, 0, &status), CUDA_SUCCESS);
	assert_non_null(fn);
	return fn;
}

#define FN(type, name) ((type)get(name, 13000))

typedef CUresult (*pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
typedef CUresult (*managed_fn)(CUdeviceptr *, size_t, unsigned int);
typedef CUresult (*async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*default_pool_fn)(CUmemoryPool *, CUdevice);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			      unsigned long long);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*any_fn)(void *, void *);
typedef CUresult (*graph_create_fn)(CUgraph *, unsigned int);
typedef CUresult (*graph_destroy_fn)(CUgraph);
typedef CUresult (*mem_node_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
				CUDA_MEM_ALLOC_NODE_PARAMS *);

/* Starts the driver in this process (each forked child calls it too). */
static void driver_start(void)
{
	CUcontext ctx;

	assert_int_equal(FN(PFN_cuInit, "cuInit")(0), CUDA_SUCCESS);
	assert_int_equal(FN(PFN_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")(&ctx, 0), 0);
	assert_int_equal(FN(PFN_cuCtxSetCurrent, "cuCtxSetCurrent")(ctx), 0);
}

static int setup(void **state)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	(void)state;

	gpa = lib ? (PFN_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2") : NULL;
	if (!gpa)
		return -1;
	driver_start();
	FN(PFN_cuStreamCreate, "cuStreamCreate")(&stream, 0);
	return 0;
}

static size_t task_free(size_t *ret_total)
{
	size_t free_bytes, total;

	assert_int_equal(FN(PFN_cuMemGetInfo_v2, "cuMemGetInfo")(&free_bytes, &total), 0);
	if (ret_total)
		*ret_total = total;
	return free_bytes;
}

static void the_program_sees_its_slice(void **state)
{
	size_t total, device_total;
	(void)state;

	assert_int_equal(task_free(&total), LIMIT);
	assert_int_equal(total, LIMIT);
	assert_int_equal(FN(PFN_cuDeviceTotalMem_v2, "cuDeviceTotalMem")(&device_total, 0), 0);
	assert_int_equal(device_total, LIMIT);
}

/* Each path: 48 MiB fits the 64 MiB slice, 32 MiB more does not, and the
 * free gives the slice back. */
static void every_allocation_path_is_limited(void **state)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUdeviceptr a, b;
	CUmemGenericAllocationHandle h, h2;
	CUmemoryPool pool;
	size_t pitch;
	(void)state;

	assert_int_equal(FN(PFN_cuMemAlloc_v2, "cuMemAlloc")(&a, 48 * MiB), 0);
	assert_int_equal(FN(PFN_cuMemAlloc_v2, "cuMemAlloc")(&b, 32 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(task_free(NULL), 16 * MiB);
	assert_int_equal(FN(PFN_cuMemFree_v2, "cuMemFree")(a), 0);

	assert_int_equal(FN(pitch_fn, "cuMemAllocPitch")(&a, &pitch, 48 * 1024, 1024, 4), 0);
	assert_int_equal(FN(pitch_fn, "cuMemAllocPitch")(&b, &pitch, 32 * 1024, 1024, 4),
			 CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(FN(PFN_cuMemFree_v2, "cuMemFree")(a), 0);

	assert_int_equal(FN(managed_fn, "cuMemAllocManaged")(&a, 48 * MiB, CU_MEM_ATTACH_GLOBAL), 0);
	assert_int_equal(FN(managed_fn, "cuMemAllocManaged")(&b, 32 * MiB, CU_MEM_ATTACH_GLOBAL),
			 CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(FN(PFN_cuMemFree_v2, "cuMemFree")(a), 0);

	assert_int_equal(FN(async_fn, "cuMemAllocAsync")(&a, 48 * MiB, stream), 0);
	assert_int_equal(FN(async_fn, "cuMemAllocAsync")(&b, 32 * MiB, stream), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(FN(free_async_fn, "cuMemFreeAsync")(a, stream), 0);
	assert_int_equal(FN(PFN_cuStreamSynchronize, "cuStreamSynchronize")(stream), 0);

	assert_int_equal(FN(default_pool_fn, "cuDeviceGetDefaultMemPool")(&pool, 0), 0);
	assert_int_equal(FN(pool_fn, "cuMemAllocFromPoolAsync")(&a, 48 * MiB, pool, stream), 0);
	assert_int_equal(FN(pool_fn, "cuMemAllocFromPoolAsync")(&b, 32 * MiB, pool, stream),
			 CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(FN(free_async_fn, "cuMemFreeAsync")(a, stream), 0);
	assert_int_equal(FN(PFN_cuStreamSynchronize, "cuStreamSynchronize")(stream), 0);

	assert_int_equal(FN(create_fn, "cuMemCreate")(&h, 48 * MiB, &prop, 0), 0);
	assert_int_equal(FN(create_fn, "cuMemCreate")(&h2, 32 * MiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(FN(release_fn, "cuMemRelease")(h), 0);

	/* Graph memory nodes: counted until the graph goes. */
	CUDA_MEM_ALLOC_NODE_PARAMS node = { .poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
							   .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } },
					    .bytesize = 48 * MiB };
	CUgraphNode n1, n2;
	CUgraph graph;

	assert_int_equal(FN(graph_create_fn, "cuGraphCreate")(&graph, 0), 0);
	assert_int_equal(FN(mem_node_fn, "cuGraphAddMemAllocNode")(&n1, graph, NULL, 0, &node), 0);
	node.bytesize = 32 * MiB;
	assert_int_equal(FN(mem_node_fn, "cuGraphAddMemAllocNode")(&n2, graph, NULL, 0, &node),
			 CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(FN(graph_destroy_fn, "cuGraphDestroy")(graph), 0);

	assert_int_equal(task_free(NULL), LIMIT);
}

/* A failed driver call gives the admitted bytes back. */
static void driver_failures_give_back(void **state)
{
	CUdeviceptr p;
	size_t pitch;
	(void)state;

	/* simdev wants element sizes 4, 8 or 16: the driver refuses 3. */
	assert_int_equal(FN(pitch_fn, "cuMemAllocPitch")(&p, &pitch, 1024, 1024, 3),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(task_free(NULL), LIMIT);
}

/* The runtime asks for old ABI versions too: the 32-bit cuMemAlloc of
 * CUDA 2.0 is refused, not passed to the driver unaccounted; cuMemAlloc
 * at 3.2 and later is the limited one. */
static void old_abi_versions_are_intercepted(void **state)
{
	CUdeviceptr p;
	(void)state;

	assert_int_equal(((any_fn)get("cuMemAlloc", 2000))(&p, (void *)(uintptr_t)(1 * MiB)),
			 CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(((PFN_cuMemAlloc_v2)get("cuMemAlloc", 3020))(&p, 80 * MiB),
			 CUDA_ERROR_OUT_OF_MEMORY);
	/* cuGetProcAddress itself comes back as ours. */
	assert_ptr_equal(get("cuGetProcAddress", 12000), (void *)gpa);
}

static nvmlReturn_t (*nvml_by_index)(unsigned, nvmlDevice_t *);
static nvmlReturn_t (*nvml_mem)(nvmlDevice_t, nvmlMemory_t *);
static nvmlReturn_t (*nvml_procs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);

static nvmlDevice_t nvml_device(void)
{
	static nvmlDevice_t dev;

	if (!dev) {
		void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
		nvmlReturn_t (*init)(void);

		assert_non_null(lib);
		*(void **)&init = dlsym(lib, "nvmlInit_v2");
		*(void **)&nvml_by_index = dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
		*(void **)&nvml_mem = dlsym(lib, "nvmlDeviceGetMemoryInfo");
		*(void **)&nvml_procs = dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
		assert_int_equal(init(), NVML_SUCCESS);
		assert_int_equal(nvml_by_index(0, &dev), NVML_SUCCESS);
	}
	return dev;
}

/* Device memory in use as the (simulated) driver counts it: the sum over
 * NVML's process list, which the interposer passes through untouched. */
static uint64_t device_used(void)
{
	nvmlProcessInfo_t info[64];
	unsigned count = 64;
	uint64_t used = 0;

	assert_int_equal(nvml_procs(nvml_device(), &count, info), NVML_SUCCESS);
	for (unsigned i = 0; i < count; i++)
		used += info[i].usedGpuMemory;
	return used;
}

/* NVML's memory view inside the task is its slice, too. */
static void nvml_shows_the_slice(void **state)
{
	nvmlDevice_t dev = nvml_device();
	nvmlMemory_t m;
	CUdeviceptr p;
	(void)state;

	assert_int_equal(FN(PFN_cuMemAlloc_v2, "cuMemAlloc")(&p, 48 * MiB), 0);
	assert_int_equal(nvml_mem(dev, &m), NVML_SUCCESS);
	assert_int_equal(m.total, LIMIT);
	assert_int_equal(m.used, 48 * MiB);
	assert_int_equal(m.free, 16 * MiB);
	assert_int_equal(device_used(), 48 * MiB);
	assert_int_equal(FN(PFN_cuMemFree_v2, "cuMemFree")(p), 0);
}

/* 8 processes of one task racing allocations never exceed the limit
 * together (1,000 rounds each): after every allocation, what the device
 * holds for all of them is within the task's 64 MiB. */
static void racing_processes_stay_within_the_limit(void **state)
{
	pid_t child[8];
	(void)state;

	for (int i = 0; i < 8; i++) {
		child[i] = fork();
		assert_true(child[i] >= 0);
		if (child[i] == 0) {
			unsigned seed = (unsigned)(i * 7919 + 1);
			int over = 0;

			nvml_device();  /* this process's own NVML session */
			for (int round = 0; round < 1000; round++) {
				CUdeviceptr p;
				size_t bytes = (1 + rand_r(&seed) % 16) * MiB;

				if (FN(PFN_cuMemAlloc_v2, "cuMemAlloc")(&p, bytes) != CUDA_SUCCESS)
					continue;
				over |= device_used() > LIMIT;
				FN(PFN_cuMemFree_v2, "cuMemFree")(p);
			}
			_exit(over);
		}
	}
	for (int i = 0; i < 8; i++) {
		int status;

		assert_int_equal(waitpid(child[i], &status, 0), child[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(task_free(NULL), LIMIT);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* SIGKILL at random points (100 trials): the others never stall, and the
 * dead process's memory is back within 1 s. */
static void killed_processes_never_block_others(void **state)
{
	unsigned seed = 12345;
	(void)state;

	for (int trial = 0; trial < 100; trial++) {
		pid_t pid = fork();
		CUdeviceptr p = 0;
		double start;

		assert_true(pid >= 0);
		if (pid == 0) {
			for (;;) {
				CUdeviceptr q;

				if (FN(PFN_cuMemAlloc_v2, "cuMemAlloc")(&q, 40 * MiB) == CUDA_SUCCESS)
					FN(PFN_cuMemFree_v2, "cuMemFree")(q);
			}
		}
		usleep(rand_r(&seed) % 3000);
		kill(pid, SIGKILL);
		start = now_ms();
		while (FN(PFN_cuMemAlloc_v2, "cuMemAlloc")(&p, LIMIT) != CUDA_SUCCESS)
			assert_true(now_ms() - start < 1000);
		assert_int_equal(FN(PFN_cuMemFree_v2, "cuMemFree")(p), 0);
		waitpid(pid, NULL, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_program_sees_its_slice),
		cmocka_unit_test(every_allocation_path_is_limited),
		cmocka_unit_test(driver_failures_give_back),
		cmocka_unit_test(old_abi_versions_are_intercepted),
		cmocka_unit_test(nvml_shows_the_slice),
		cmocka_unit_test(racing_processes_stay_within_the_limit),
		cmocka_unit_test(killed_processes_never_block_others),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
