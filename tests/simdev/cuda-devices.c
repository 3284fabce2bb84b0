/* cuda-devices.c — prints the devices the CUDA driver shows this process as
 * one JSON line, for tests of CUDA_VISIBLE_DEVICES (test-visible.sh; it works
 * as well over NVIDIA's driver).
 *
 * It loads libcuda.so.1 with dlopen and dlsym. For each visible ordinal it
 * reports what the driver says about the device, and checks that the
 * device's own calls agree with the ordinal: its primary context's
 * cuCtxGetDevice, and memory from cuMemCreate and from a pool created for
 * the ordinal lowering that device's free memory (cuMemGetInfo). Output:
 *
 *   {"init":"CUDA_SUCCESS","count":2,"beyond":"CUDA_ERROR_INVALID_DEVICE",
 *    "devices":[{"ordinal":0,"device":0,"name":"…","uuid":"GPU-…",
 *    "mem_total_mib":…,"bus_id":"…","ctx_device":0,"info_total_mib":…,
 *    "vmm_here":true,"pool_here":true,"set_pool":"CUDA_SUCCESS"}]}
 *
 * "beyond" is what cuDeviceGet answers for the first ordinal past the
 * count. When cuInit fails the line is {"init":"CUDA_ERROR_…"} and the exit
 * status 0; any other failure: a message on stderr and exit 1. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "include/gp-cuda.h"

#define MIB (1024ull * 1024ull)
#define VMM_BYTES (2u << 20)
#define POOL_BYTES (1u << 20)

static struct {
	CUresult (*cuInit)(unsigned int);
	CUresult (*cuGetErrorName)(CUresult, const char **);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
	CUresult (*cuDeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxGetDevice)(CUdevice *);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuMemGetInfo_v2)(size_t *, size_t *);
	CUresult (*cuMemCreate)(CUmemGenericAllocationHandle *, size_t,
				const CUmemAllocationProp *, unsigned long long);
	CUresult (*cuMemRelease)(CUmemGenericAllocationHandle);
	CUresult (*cuMemPoolCreate)(CUmemoryPool *, const CUmemPoolProps *);
	CUresult (*cuMemPoolDestroy)(CUmemoryPool);
	CUresult (*cuMemAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
	CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
	CUresult (*cuDeviceSetMemPool)(CUdevice, CUmemoryPool);
} cu;

static const char *error_name(CUresult r)
{
	const char *name = NULL;

	if (cu.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
		return "unknown CUresult";
	return name;
}

/* call(what, r): r must be CUDA_SUCCESS, else the probe stops. */
#define CALL(expr) call(#expr, (expr))

static void call(const char *what, CUresult r)
{
	if (r == CUDA_SUCCESS)
		return;
	fprintf(stderr, "cuda-devices: %s: %s\n", what, error_name(r));
	exit(1);
}

static void load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		fprintf(stderr, "cuda-devices: %s\n", dlerror());
		exit(1);
	}
#define LOAD(name)                                                                       \
	do {                                                                             \
		cu.name = (__typeof__(cu.name))dlsym(lib, #name);                        \
		if (!cu.name) {                                                          \
			fprintf(stderr, "cuda-devices: libcuda.so.1 lacks %s\n", #name); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)
	LOAD(cuInit);
	LOAD(cuGetErrorName);
	LOAD(cuDeviceGetCount);
	LOAD(cuDeviceGet);
	LOAD(cuDeviceGetName);
	LOAD(cuDeviceGetUuid);
	LOAD(cuDeviceTotalMem_v2);
	LOAD(cuDeviceGetPCIBusId);
	LOAD(cuDevicePrimaryCtxRetain);
	LOAD(cuDevicePrimaryCtxRelease_v2);
	LOAD(cuCtxSetCurrent);
	LOAD(cuCtxGetDevice);
	LOAD(cuCtxSynchronize);
	LOAD(cuMemGetInfo_v2);
	LOAD(cuMemCreate);
	LOAD(cuMemRelease);
	LOAD(cuMemPoolCreate);
	LOAD(cuMemPoolDestroy);
	LOAD(cuMemAllocFromPoolAsync);
	LOAD(cuMemFreeAsync);
	LOAD(cuDeviceGetDefaultMemPool);
	LOAD(cuDeviceSetMemPool);
#undef LOAD
}

static size_t free_bytes(void)
{
	size_t free_mem, total;

	CALL(cu.cuMemGetInfo_v2(&free_mem, &total));
	return free_mem;
}

/* Does memory cuMemCreate makes for `ordinal` count against the current
 * context's device? */
static bool vmm_lands_here(int ordinal)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, ordinal } };
	CUmemGenericAllocationHandle handle;
	size_t before = free_bytes(), during;

	CALL(cu.cuMemCreate(&handle, VMM_BYTES, &prop, 0));
	during = free_bytes();
	CALL(cu.cuMemRelease(handle));
	return before - during == VMM_BYTES;
}

/* And memory from a pool created for `ordinal`? */
static bool pool_lands_here(int ordinal)
{
	CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				 .location = { CU_MEM_LOCATION_TYPE_DEVICE, ordinal } };
	CUmemoryPool pool;
	CUdeviceptr p;
	size_t before = free_bytes(), during;

	CALL(cu.cuMemPoolCreate(&pool, &props));
	CALL(cu.cuMemAllocFromPoolAsync(&p, POOL_BYTES, pool, NULL));
	during = free_bytes();
	CALL(cu.cuMemFreeAsync(p, NULL));
	CALL(cu.cuCtxSynchronize());
	CALL(cu.cuMemPoolDestroy(pool));
	return before - during == POOL_BYTES;
}

static void print_device(int ordinal)
{
	char name[256], bus_id[32];
	const unsigned char *b;
	CUmemoryPool pool;
	CUcontext ctx;
	CUdevice dev, ctx_dev;
	size_t total, info_free, info_total;
	CUuuid uuid;

	CALL(cu.cuDeviceGet(&dev, ordinal));
	CALL(cu.cuDeviceGetName(name, sizeof(name), dev));
	CALL(cu.cuDeviceGetUuid(&uuid, dev));
	CALL(cu.cuDeviceTotalMem_v2(&total, dev));
	CALL(cu.cuDeviceGetPCIBusId(bus_id, sizeof(bus_id), dev));
	CALL(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
	CALL(cu.cuCtxSetCurrent(ctx));
	CALL(cu.cuCtxGetDevice(&ctx_dev));
	CALL(cu.cuMemGetInfo_v2(&info_free, &info_total));
	CALL(cu.cuDeviceGetDefaultMemPool(&pool, dev));

	b = (const unsigned char *)uuid.bytes;
	printf("%s{\"ordinal\":%d,\"device\":%d,\"name\":\"%s\",\"uuid\":\"GPU-"
	       "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\","
	       "\"mem_total_mib\":%llu,\"bus_id\":\"%s\",\"ctx_device\":%d,"
	       "\"info_total_mib\":%llu,",
	       ordinal ? "," : "", ordinal, (int)dev, name, b[0], b[1], b[2], b[3], b[4], b[5],
	       b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15],
	       (unsigned long long)(total / MIB), bus_id, (int)ctx_dev,
	       (unsigned long long)(info_total / MIB));
	printf("\"vmm_here\":%s,\"pool_here\":%s,\"set_pool\":\"%s\"}",
	       vmm_lands_here(ordinal) ? "true" : "false",
	       pool_lands_here(ordinal) ? "true" : "false",
	       error_name(cu.cuDeviceSetMemPool(dev, pool)));

	CALL(cu.cuCtxSetCurrent(NULL));
	CALL(cu.cuDevicePrimaryCtxRelease_v2(dev));
}

int main(void)
{
	CUdevice beyond;
	CUresult r;
	int count;

	load();
	r = cu.cuInit(0);
	if (r != CUDA_SUCCESS) {
		printf("{\"init\":\"%s\"}\n", error_name(r));
		return 0;
	}
	CALL(cu.cuDeviceGetCount(&count));
	printf("{\"init\":\"CUDA_SUCCESS\",\"count\":%d,\"beyond\":\"%s\",\"devices\":[", count,
	       error_name(cu.cuDeviceGet(&beyond, count)));
	for (int i = 0; i < count; i++)
		print_device(i);
	printf("]}\n");
	return 0;
}
