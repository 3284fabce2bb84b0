/* test-driver.c — simdev's libcuda.so.1 through the door real programs use:
 * dlopen("libcuda.so.1") and cuGetProcAddress_v2 (meson runs it with
 * LD_LIBRARY_PATH=build/simdev and a private GPUPOOL_SIM_DIR). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "include/gp-cuda.h"

static PFN_cuGetProcAddress_v2 gpa;

/* The function `name` for cudaVersion and flags, as the runtime asks. */
static void *get(const char *name, int version, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult status = 99;
	void *fn = NULL;

	assert_int_equal(gpa(name, &fn, version, flags, &status), CUDA_SUCCESS);
	assert_int_equal(status, CU_GET_PROC_ADDRESS_SUCCESS);
	assert_non_null(fn);
	return fn;
}

#define FN(type, name) ((type)get(name, 13000, 0))

typedef CUresult (*PFN_ptr_size)(CUdeviceptr *, size_t);
typedef CUresult (*PFN_free)(CUdeviceptr);
typedef CUresult (*PFN_pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
typedef CUresult (*PFN_managed)(CUdeviceptr *, size_t, unsigned int);
typedef CUresult (*PFN_async)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*PFN_free_async)(CUdeviceptr, CUstream);
typedef CUresult (*PFN_pool_async)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*PFN_default_pool)(CUmemoryPool *, CUdevice);
typedef CUresult (*PFN_create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			       unsigned long long);
typedef CUresult (*PFN_release)(CUmemGenericAllocationHandle);
typedef CUresult (*PFN_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*PFN_map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			    unsigned long long);
typedef CUresult (*PFN_set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*PFN_unmap)(CUdeviceptr, size_t);
typedef CUresult (*PFN_htod)(CUdeviceptr, const void *, size_t);
typedef CUresult (*PFN_dtoh)(void *, CUdeviceptr, size_t);
typedef CUresult (*PFN_memset32)(CUdeviceptr, unsigned int, size_t);
typedef CUresult (*PFN_launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*PFN_coop)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, unsigned int, CUstream, void **);
typedef CUresult (*PFN_begin_capture)(CUstream, CUstreamCaptureMode);
typedef CUresult (*PFN_end_capture)(CUstream, CUgraph *);
typedef CUresult (*PFN_instantiate)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*PFN_graph_launch)(CUgraphExec, CUstream);
typedef CUresult (*PFN_export)(const void **, const CUuuid *);
typedef CUresult (*PFN_sync_ctx_v2)(CUcontext);
typedef CUresult (*PFN_graph_destroy)(CUgraph);
typedef CUresult (*PFN_exec_destroy)(CUgraphExec);

static void graph_free(CUgraph graph, CUgraphExec exec)
{
	assert_int_equal(FN(PFN_exec_destroy, "cuGraphExecDestroy")(exec), 0);
	assert_int_equal(FN(PFN_graph_destroy, "cuGraphDestroy")(graph), 0);
}

static const char spin_ptx[] =
	".version 8.0\n.target sm_80\n.address_size 64\n"
	".visible .entry gpuload_spin(.param .u64 ns)\n{\n\tret;\n}\n";

static CUfunction spin;
static CUstream stream;
static size_t total_mem;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int setup(void **state)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	CUcontext ctx;
	CUmodule mod;
	size_t free_mem;
	(void)state;

	if (!lib)
		return -1;
	gpa = (PFN_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2");
	if (!gpa || FN(PFN_cuInit, "cuInit")(0) != CUDA_SUCCESS)
		return -1;
	FN(PFN_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")(&ctx, 0);
	FN(PFN_cuCtxSetCurrent, "cuCtxSetCurrent")(ctx);
	FN(PFN_cuModuleLoadData, "cuModuleLoadData")(&mod, spin_ptx);
	FN(PFN_cuModuleGetFunction, "cuModuleGetFunction")(&spin, mod, "gpuload_spin");
	FN(PFN_cuStreamCreate, "cuStreamCreate")(&stream, 0);
	FN(PFN_cuMemGetInfo_v2, "cuMemGetInfo")(&free_mem, &total_mem);
	return 0;
}

static size_t used(void)
{
	size_t free_mem, total;

	assert_int_equal(FN(PFN_cuMemGetInfo_v2, "cuMemGetInfo")(&free_mem, &total), 0);
	return total - free_mem;
}

static void abi_versions_are_honoured(void **state)
{
	void *legacy = NULL, *v2 = NULL, *ptsz = NULL, *plain = NULL, *fn = NULL;
	CUdriverProcAddressQueryResult status;
	(void)state;

	/* cuMemAlloc@2000 is the 32-bit legacy ABI: a different function. */
	legacy = get("cuMemAlloc", 2000, 0);
	v2 = get("cuMemAlloc", 3020, 0);
	assert_ptr_not_equal(legacy, v2);
	assert_ptr_equal(v2, get("cuMemAlloc", 13000, 0));
	/* Per-thread default stream variants on request. */
	ptsz = get("cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	plain = get("cuLaunchKernel", 13000, 0);
	assert_ptr_not_equal(ptsz, plain);
	/* cuCtxSynchronize@13000 is the new form that takes a context. */
	assert_ptr_not_equal(get("cuCtxSynchronize", 12000, 0), get("cuCtxSynchronize", 13000, 0));
	assert_int_equal(((PFN_sync_ctx_v2)get("cuCtxSynchronize", 13000, 0))(NULL), 0);
	/* Unknown names: success, no function. Too old a version: not found. */
	assert_int_equal(gpa("cuNoSuchThing", &fn, 13000, 0, &status), CUDA_SUCCESS);
	assert_null(fn);
	assert_int_equal(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	assert_int_equal(gpa("cuMemAllocAsync", &fn, 11000, 0, &status), CUDA_ERROR_NOT_FOUND);
	assert_int_equal(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	/* cuGetProcAddress hands back itself. */
	assert_non_null(get("cuGetProcAddress", 12000, 0));
}

static void unsupported_calls_say_so(void **state)
{
	typedef CUresult (*PFN_any)(void *, void *, void *);
	const void *table = (void *)1;
	CUuuid id = { { 0 } };
	(void)state;

	/* A runtime function simdev does not simulate answers, never crashes. */
	assert_int_equal(((PFN_any)get("cuArrayCreate", 13000, 0))(NULL, NULL, NULL),
			 CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(((PFN_any)get("cuMemAlloc", 2000, 0))(NULL, NULL, NULL),
			 CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(FN(PFN_export, "cuGetExportTable")(&table, &id), CUDA_ERROR_NOT_FOUND);
}

static void every_allocation_path_is_counted(void **state)
{
	CUdeviceptr linear, pitched, managed, async, pooled, va;
	CUmemGenericAllocationHandle handle;
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUmemAccessDesc access = { .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 }, .flags = 3 };
	CUmemoryPool pool;
	size_t base = used(), pitch;
	(void)state;

	assert_int_equal(FN(PFN_ptr_size, "cuMemAlloc")(&linear, 1 << 20), 0);
	assert_int_equal(used(), base + (1 << 20));
	assert_int_equal(FN(PFN_pitch, "cuMemAllocPitch")(&pitched, &pitch, 1000, 100, 4), 0);
	assert_int_equal(pitch, 1024);
	assert_int_equal(used(), base + (1 << 20) + 102400);
	assert_int_equal(FN(PFN_managed, "cuMemAllocManaged")(&managed, 4096, CU_MEM_ATTACH_GLOBAL), 0);
	assert_int_equal(FN(PFN_async, "cuMemAllocAsync")(&async, 8192, stream), 0);
	assert_int_equal(FN(PFN_default_pool, "cuDeviceGetDefaultMemPool")(&pool, 0), 0);
	assert_int_equal(FN(PFN_pool_async, "cuMemAllocFromPoolAsync")(&pooled, 16384, pool, stream), 0);
	assert_int_equal(used(), base + (1 << 20) + 102400 + 4096 + 8192 + 16384);
	assert_int_equal(FN(PFN_create, "cuMemCreate")(&handle, 2 << 20, &prop, 0), 0);
	assert_int_equal(used(), base + (1 << 20) + 102400 + 4096 + 8192 + 16384 + (2 << 20));

	/* VMM memory is usable once mapped and given access. */
	assert_int_equal(FN(PFN_reserve, "cuMemAddressReserve")(&va, 2 << 20, 0, 0, 0), 0);
	assert_int_equal(FN(PFN_map, "cuMemMap")(va, 2 << 20, 0, handle, 0), 0);
	assert_int_equal(FN(PFN_set_access, "cuMemSetAccess")(va, 2 << 20, &access, 1), 0);
	assert_int_equal(FN(PFN_memset32, "cuMemsetD32")(va, 0xabcdef01u, 16), 0);
	uint32_t back[16];
	assert_int_equal(FN(PFN_dtoh, "cuMemcpyDtoH")(back, va, sizeof(back)), 0);
	assert_int_equal(back[15], 0xabcdef01u);
	assert_int_equal(FN(PFN_unmap, "cuMemUnmap")(va, 2 << 20), 0);

	assert_int_equal(FN(PFN_release, "cuMemRelease")(handle), 0);
	assert_int_equal(FN(PFN_free_async, "cuMemFreeAsync")(async, stream), 0);
	assert_int_equal(FN(PFN_free_async, "cuMemFreeAsync")(pooled, stream), 0);
	assert_int_equal(FN(PFN_cuStreamSynchronize, "cuStreamSynchronize")(stream), 0);
	assert_int_equal(FN(PFN_free, "cuMemFree")(managed), 0);
	assert_int_equal(FN(PFN_free, "cuMemFree")(pitched), 0);
	assert_int_equal(FN(PFN_free, "cuMemFree")(linear), 0);
	assert_int_equal(used(), base);
	/* Freeing what was never allocated is an error, not a crash. */
	assert_int_equal(FN(PFN_free, "cuMemFree")(linear), CUDA_ERROR_INVALID_VALUE);
}

static void memory_runs_out_like_a_gpu(void **state)
{
	CUdeviceptr p, q;
	(void)state;

	assert_int_equal(FN(PFN_ptr_size, "cuMemAlloc")(&p, total_mem + 1), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(FN(PFN_ptr_size, "cuMemAlloc")(&p, total_mem - used()), 0);
	assert_int_equal(FN(PFN_ptr_size, "cuMemAlloc")(&q, 1), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(FN(PFN_free, "cuMemFree")(p), 0);
}

static void copies_and_memsets_move_bytes(void **state)
{
	CUdeviceptr d;
	char in[64] = "simdev keeps what you copy", out[64] = { 0 };
	(void)state;

	assert_int_equal(FN(PFN_ptr_size, "cuMemAlloc")(&d, sizeof(in)), 0);
	assert_int_equal(FN(PFN_htod, "cuMemcpyHtoD")(d, in, sizeof(in)), 0);
	assert_int_equal(FN(PFN_dtoh, "cuMemcpyDtoH")(out, d, sizeof(out)), 0);
	assert_string_equal(out, in);
	assert_int_equal(FN(PFN_free, "cuMemFree")(d), 0);
}

/* A 10 ms kernel takes 10 ms, and events time it: never less (nothing cuts
 * a kernel short); a busy host, late to wake the worker that times it,
 * only adds (up to 13 ms measured beside two CPU hogs on 2 cores), while a
 * kernel run twice would take 20. */
static void kernels_take_their_time(void **state)
{
	uint64_t ns = 10000000;
	void *params[] = { &ns };
	CUevent a, b;
	float ms = 0;
	double start, took;
	(void)state;

	FN(PFN_cuEventCreate, "cuEventCreate")(&a, 0);
	FN(PFN_cuEventCreate, "cuEventCreate")(&b, 0);
	start = now_ms();
	assert_int_equal(FN(PFN_cuEventRecord, "cuEventRecord")(a, stream), 0);
	assert_int_equal(FN(PFN_cuLaunchKernel, "cuLaunchKernel")(spin, 1, 1, 1, 32, 1, 1, 0, stream,
								params, NULL), 0);
	assert_int_equal(FN(PFN_cuEventRecord, "cuEventRecord")(b, stream), 0);
	assert_int_equal(FN(PFN_cuEventSynchronize, "cuEventSynchronize")(b), 0);
	took = now_ms() - start;
	assert_int_equal(FN(PFN_cuEventElapsedTime, "cuEventElapsedTime")(&ms, a, b), 0);
	assert_true(ms >= 9.9 && ms <= 15.0);
	assert_true(took >= ms && took <= 16.0);
	FN(PFN_cuEventDestroy_v2, "cuEventDestroy")(a);
	FN(PFN_cuEventDestroy_v2, "cuEventDestroy")(b);
}

/* cuLaunchKernelEx, cooperative launches and graphs (captured and run)
 * all occupy the device. */
static void every_launch_path_runs(void **state)
{
	uint64_t ns = 2000000;
	void *params[] = { &ns };
	CUlaunchConfig cfg = { 1, 1, 1, 32, 1, 1, 0, stream, NULL, 0 };
	CUgraph graph;
	CUgraphExec exec;
	double start;
	(void)state;

	start = now_ms();
	assert_int_equal(FN(PFN_launch_ex, "cuLaunchKernelEx")(&cfg, spin, params, NULL), 0);
	assert_int_equal(FN(PFN_coop, "cuLaunchCooperativeKernel")(spin, 1, 1, 1, 32, 1, 1, 0, stream,
								  params), 0);
	assert_int_equal(FN(PFN_begin_capture, "cuStreamBeginCapture")(stream,
								       CU_STREAM_CAPTURE_MODE_GLOBAL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(FN(PFN_cuLaunchKernel, "cuLaunchKernel")(spin, 1, 1, 1, 32, 1, 1, 0,
									stream, params, NULL), 0);
	assert_int_equal(FN(PFN_end_capture, "cuStreamEndCapture")(stream, &graph), 0);
	assert_true(now_ms() - start < 5.0 + 1.0);      /* captured, not run */
	assert_int_equal(FN(PFN_instantiate, "cuGraphInstantiateWithFlags")(&exec, graph, 0), 0);
	assert_int_equal(FN(PFN_graph_launch, "cuGraphLaunch")(exec, stream), 0);
	assert_int_equal(FN(PFN_cuStreamSynchronize, "cuStreamSynchronize")(stream), 0);
	/* Ex + cooperative + a graph of three: 5 × 2 ms. */
	assert_true(now_ms() - start >= 10.0);
	graph_free(graph, exec);
}

typedef CUresult (*PFN_graph_create)(CUgraph *, unsigned int);
typedef CUresult (*PFN_add_kernel)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
				   const CUDA_KERNEL_NODE_PARAMS_v2 *);
typedef CUresult (*PFN_ctx_create)(CUcontext *, unsigned int, CUdevice);
typedef CUresult (*PFN_ctx_destroy)(CUcontext);

/* A graph built node by node runs its kernels on launch. */
static void explicit_graphs_run(void **state)
{
	uint64_t ns = 3000000;
	void *params[] = { &ns };
	CUDA_KERNEL_NODE_PARAMS_v2 p = { .func = spin, .gridDimX = 1, .gridDimY = 1,
					 .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1,
					 .blockDimZ = 1, .kernelParams = params };
	CUgraphNode first, second;
	CUgraph graph;
	CUgraphExec exec;
	double start;
	(void)state;

	assert_int_equal(FN(PFN_graph_create, "cuGraphCreate")(&graph, 0), 0);
	assert_int_equal(FN(PFN_add_kernel, "cuGraphAddKernelNode")(&first, graph, NULL, 0, &p), 0);
	assert_int_equal(FN(PFN_add_kernel, "cuGraphAddKernelNode")(&second, graph, &first, 1, &p), 0);
	assert_int_equal(FN(PFN_instantiate, "cuGraphInstantiateWithFlags")(&exec, graph, 0), 0);
	start = now_ms();
	assert_int_equal(FN(PFN_graph_launch, "cuGraphLaunch")(exec, stream), 0);
	assert_int_equal(FN(PFN_cuStreamSynchronize, "cuStreamSynchronize")(stream), 0);
	assert_true(now_ms() - start >= 6.0);
	graph_free(graph, exec);
}

typedef CUresult (*PFN_mem_node)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
				 CUDA_MEM_ALLOC_NODE_PARAMS *);

/* A graph's memory node holds device memory until the graph goes. */
static void graph_memory_nodes_hold_memory(void **state)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p = { .poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
							.location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } },
					 .bytesize = 4 << 20 };
	CUgraphNode node;
	CUgraph graph;
	size_t base = used();
	(void)state;

	assert_int_equal(FN(PFN_graph_create, "cuGraphCreate")(&graph, 0), 0);
	assert_int_equal(FN(PFN_mem_node, "cuGraphAddMemAllocNode")(&node, graph, NULL, 0, &p), 0);
	assert_true(p.dptr != 0);
	assert_int_equal(used(), base + (4 << 20));
	assert_int_equal(FN(PFN_graph_destroy, "cuGraphDestroy")(graph), 0);
	assert_int_equal(used(), base);
}

/* An explicit context is current once created, and gone once destroyed. */
static void explicit_contexts_come_and_go(void **state)
{
	CUcontext mine, before, now;
	CUdeviceptr p;
	size_t base = used();
	(void)state;

	assert_int_equal(((CUresult(*)(CUcontext *))get("cuCtxGetCurrent", 13000, 0))(&before), 0);
	/* cuCtxCreate@13000 is _v4 (with parameters); the _v2 ABI is 3020. */
	assert_int_equal(((PFN_ctx_create)get("cuCtxCreate", 3020, 0))(&mine, 0, 0), 0);
	assert_int_equal(((CUresult(*)(CUcontext *))get("cuCtxGetCurrent", 13000, 0))(&now), 0);
	assert_ptr_equal(now, mine);
	assert_int_equal(FN(PFN_ptr_size, "cuMemAlloc")(&p, 1 << 20), 0);
	assert_int_equal(used(), base + (1 << 20));
	/* Destroying a context frees what was allocated in it. */
	assert_int_equal(FN(PFN_ctx_destroy, "cuCtxDestroy")(mine), 0);
	assert_int_equal(FN(PFN_cuCtxSetCurrent, "cuCtxSetCurrent")(before), 0);
	assert_int_equal(used(), base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abi_versions_are_honoured),
		cmocka_unit_test(unsupported_calls_say_so),
		cmocka_unit_test(every_allocation_path_is_counted),
		cmocka_unit_test(memory_runs_out_like_a_gpu),
		cmocka_unit_test(copies_and_memsets_move_bytes),
		cmocka_unit_test(kernels_take_their_time),
		cmocka_unit_test(every_launch_path_runs),
		cmocka_unit_test(explicit_graphs_run),
		cmocka_unit_test(graph_memory_nodes_hold_memory),
		cmocka_unit_test(explicit_contexts_come_and_go),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
