/* shim-cuda-memory.c — hard device-memory slices.
 *
 * Every way of getting device memory is hooked: linear (cuMemAlloc_v2),
 * pitched, managed, stream-ordered and pool allocations, VMM physical
 * memory (cuMemCreate), arrays and graph memory nodes. Each one is admitted first — the bytes
 * are counted against the task in the device's region, atomically across
 * its processes — then asked of the driver, and the count is given back if
 * the driver fails. Past the limit the call returns CUDA_ERROR_OUT_OF_MEMORY,
 * the driver's own error, so frameworks raise their usual OOM. Frees give
 * the bytes back: at once for synchronous frees, in stream order for
 * cuMemFreeAsync. The views (cuMemGetInfo, cuDeviceTotalMem) show the
 * slice, clamped, never wrapped.
 *
 * Which allocation holds how much is remembered per process in a small
 * hash table (pointer or handle -> device, bytes), under held_lock. A
 * free takes its entry out before the driver frees, and gives the bytes
 * back only after: the driver may hand the same address to another
 * thread's allocation as soon as it is free, and that one's entry must
 * never be taken for this one's; and the bytes counted never fall below
 * what the driver holds. A free the driver refuses puts the entry back. */
#include <errno.h>
#include <stdint.h>

#include "vendor/nvidia/shim-cuda.h"

/* Admits `bytes` on device d: CUDA_ERROR_OUT_OF_MEMORY past the task's
 * limit, CUDA_ERROR_NOT_PERMITTED when a managed device no longer has the
 * task's limits (its entry was forgotten). */
static CUresult admit(struct gp_shim_device *d, uint64_t bytes)
{
	int err = gp_shim_admit(d, bytes);

	return err == 0 ? CUDA_SUCCESS : err == -EPERM ? CUDA_ERROR_NOT_PERMITTED
						      : CUDA_ERROR_OUT_OF_MEMORY;
}

/* After the driver answered an admitted request: remember or give back. */
static CUresult settle(CUresult r, struct gp_shim_device *d, uint64_t key, uint64_t bytes)
{
	gp_shim_settle(r == CUDA_SUCCESS, d, key, bytes);
	return r;
}

/* After the driver answered a free of what h held. */
static CUresult freed(CUresult r, struct gp_shim_held *h)
{
	gp_shim_freed(h, r == CUDA_SUCCESS);
	return r;
}

/* The device of the current context, with `bytes` admitted on it. */
#define ADMIT_CURRENT(d, bytes)                                         \
	struct gp_shim_device *d;                                       \
	do {                                                            \
		CUresult r_ = gp_shim_current(&d, NULL);                \
		if (r_ == CUDA_SUCCESS)                                 \
			r_ = admit(d, (bytes));                         \
		if (r_ != CUDA_SUCCESS)                                 \
			return r_;                                      \
	} while (0)

/* ---- allocations ----------------------------------------------------- */

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	ADMIT_CURRENT(d, bytesize);
	CUresult r = GP_REAL(PFN_cuMemAlloc_v2, "cuMemAlloc", 3020, 0)(dptr, bytesize);

	return settle(r, d, r == CUDA_SUCCESS ? *dptr : 0, bytesize);
}

typedef CUresult (*pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);

/* The pitch is the driver's to choose: admit the widest it could be (a
 * row rounded up to 512 bytes), then settle on what it chose. */
CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
				    size_t height, unsigned int element_bytes)
{
	uint64_t most = (uint64_t)((width + 511) / 512 * 512) * height;
	ADMIT_CURRENT(d, most);
	CUresult r = GP_REAL(pitch_fn, "cuMemAllocPitch", 3020, 0)(dptr, pitch, width, height,
								    element_bytes);

	if (r != CUDA_SUCCESS)
		return settle(r, d, 0, most);
	if (d->limited && (uint64_t)*pitch * height < most)
		gp_region_mem_release(d->region, d->slot, most - (uint64_t)*pitch * height);
	return settle(r, d, *dptr, (uint64_t)*pitch * height);
}

typedef CUresult (*managed_fn)(CUdeviceptr *, size_t, unsigned int);

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	ADMIT_CURRENT(d, bytesize);
	CUresult r = GP_REAL(managed_fn, "cuMemAllocManaged", 6000, 0)(dptr, bytesize, flags);

	return settle(r, d, r == CUDA_SUCCESS ? *dptr : 0, bytesize);
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	struct gp_shim_held *h = gp_shim_take(dptr);

	return freed(GP_REAL(PFN_cuMemFree_v2, "cuMemFree", 3020, 0)(dptr), h);
}

typedef CUresult (*async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*pool_async_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*host_fn_fn)(CUstream, CUhostFn, void *);

static CUresult alloc_async(CUdeviceptr *dptr, size_t bytes, CUstream s, bool per_thread)
{
	ADMIT_CURRENT(d, bytes);
	CUresult r = GP_REAL(async_fn, "cuMemAllocAsync", 11020, per_thread)(dptr, bytes, s);

	return settle(r, d, r == CUDA_SUCCESS ? *dptr : 0, bytes);
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	return alloc_async(dptr, bytes, s, false);
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	return alloc_async(dptr, bytes, s, true);
}

/* A pool's memory is counted on the current device: pools of other
 * devices are rare, and counted there once they are used there. */
static CUresult alloc_from_pool(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
				CUstream s, bool per_thread)
{
	ADMIT_CURRENT(d, bytes);
	CUresult r = GP_REAL(pool_async_fn, "cuMemAllocFromPoolAsync", 11020, per_thread)(
		dptr, bytes, pool, s);

	return settle(r, d, r == CUDA_SUCCESS ? *dptr : 0, bytes);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
					 CUstream s)
{
	return alloc_from_pool(dptr, bytes, pool, s, false);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes,
					      CUmemoryPool pool, CUstream s)
{
	return alloc_from_pool(dptr, bytes, pool, s, true);
}

/* Runs on the stream, after the free: the memory is back in stream order. */
static void given_back_in_order(void *h)
{
	gp_shim_freed(h, true);
}

static CUresult free_async(CUdeviceptr dptr, CUstream s, bool per_thread)
{
	struct gp_shim_held *h = gp_shim_take(dptr);
	CUresult r = GP_REAL(free_async_fn, "cuMemFreeAsync", 11020, per_thread)(dptr, s);

	if (r != CUDA_SUCCESS || !h)
		return freed(r, h);
	if (GP_REAL(host_fn_fn, "cuLaunchHostFunc", 10000, per_thread)(
		    s, given_back_in_order, h) != CUDA_SUCCESS)
		gp_shim_freed(h, true);         /* no stream callback: now, then */
	return r;
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
	return free_async(dptr, s, false);
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s)
{
	return free_async(dptr, s, true);
}

/* ---- VMM physical memory --------------------------------------------- */

typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t,
			      const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			     const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct gp_shim_device *d;
	CUresult r;

	/* Only memory on a device counts; host-located VMM memory does not. */
	if (!prop || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return GP_REAL(create_fn, "cuMemCreate", 10020, 0)(handle, size, prop, flags);
	r = gp_shim_device(prop->location.id, &d);
	if (r == CUDA_SUCCESS)
		r = admit(d, size);
	if (r != CUDA_SUCCESS)
		return r;
	r = GP_REAL(create_fn, "cuMemCreate", 10020, 0)(handle, size, prop, flags);
	return settle(r, d, r == CUDA_SUCCESS ? *handle : 0, size);
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct gp_shim_held *h = gp_shim_take(handle);

	return freed(GP_REAL(release_fn, "cuMemRelease", 10020, 0)(handle), h);
}

/* ---- arrays ---------------------------------------------------------- */

/* Bytes per channel of a CUarray_format (unknown formats: 16, the widest,
 * so a new format is never under-counted). */
static unsigned format_bytes(CUarray_format format)
{
	switch (format) {
	case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8:
		return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
		return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
		return 4;
	default:
		return 16;
	}
}

typedef CUresult (*array_fn)(CUarray *, const void *);
typedef CUresult (*array_destroy_fn)(CUarray);

static CUresult array_create(CUarray *array, const void *desc, uint64_t bytes, const char *name)
{
	ADMIT_CURRENT(d, bytes);
	CUresult r = GP_REAL(array_fn, name, 3020, 0)(array, desc);

	return settle(r, d, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*array : 0, bytes);
}

CUresult CUDAAPI cuArrayCreate_v2(CUarray *array, const CUDA_ARRAY_DESCRIPTOR *a)
{
	if (!a || !array)
		return CUDA_ERROR_INVALID_VALUE;
	return array_create(array, a, (uint64_t)a->Width * (a->Height ? a->Height : 1) *
					      a->NumChannels * format_bytes(a->Format),
			    "cuArrayCreate");
}

CUresult CUDAAPI cuArray3DCreate_v2(CUarray *array, const CUDA_ARRAY3D_DESCRIPTOR *a)
{
	if (!a || !array)
		return CUDA_ERROR_INVALID_VALUE;
	return array_create(array, a, (uint64_t)a->Width * (a->Height ? a->Height : 1) *
					      (a->Depth ? a->Depth : 1) * a->NumChannels *
					      format_bytes(a->Format),
			    "cuArray3DCreate");
}

CUresult CUDAAPI cuArrayDestroy(CUarray array)
{
	struct gp_shim_held *h = gp_shim_take((uint64_t)(uintptr_t)array);

	return freed(GP_REAL(array_destroy_fn, "cuArrayDestroy", 2000, 0)(array), h);
}

/* ---- graph memory ----------------------------------------------------- */

typedef CUresult (*mem_node_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
				CUDA_MEM_ALLOC_NODE_PARAMS *);
typedef CUresult (*graph_destroy_fn)(CUgraph);

/* A graph's memory is counted from its node's creation to the graph's
 * destruction (the driver keeps freed graph memory in the graph's pool):
 * remembered under the graph's handle, one entry per node. */
CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph graph,
					const CUgraphNode *deps, size_t ndeps,
					CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct gp_shim_device *d;
	CUresult r;

	if (!p || p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return GP_REAL(mem_node_fn, "cuGraphAddMemAllocNode", 11040, 0)(node, graph, deps,
										 ndeps, p);
	r = gp_shim_device(p->poolProps.location.id, &d);
	if (r == CUDA_SUCCESS)
		r = admit(d, p->bytesize);
	if (r != CUDA_SUCCESS)
		return r;
	r = GP_REAL(mem_node_fn, "cuGraphAddMemAllocNode", 11040, 0)(node, graph, deps, ndeps, p);
	return settle(r, d, (uint64_t)(uintptr_t)graph, p->bytesize);
}

CUresult CUDAAPI cuGraphDestroy(CUgraph graph)
{
	/* Every memory node of the graph, out of the table first. */
	struct gp_shim_held *nodes = gp_shim_take_all((uint64_t)(uintptr_t)graph);

	return freed(GP_REAL(graph_destroy_fn, "cuGraphDestroy", 10000, 0)(graph), nodes);
}

/* ---- what the program sees ------------------------------------------- */

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	struct gp_shim_device *d;
	uint64_t total, free_now;
	CUresult r = gp_shim_current(&d, NULL);

	if (r == CUDA_SUCCESS)
		r = GP_REAL(PFN_cuMemGetInfo_v2, "cuMemGetInfo", 3020, 0)(free_bytes, total_bytes);
	if (r != CUDA_SUCCESS)
		return r;
	total = *total_bytes;
	free_now = *free_bytes;
	gp_shim_view(d, &total, &free_now);
	*total_bytes = total;
	*free_bytes = free_now;
	return r;
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	struct gp_shim_device *d;
	CUresult r = GP_REAL(PFN_cuDeviceTotalMem_v2, "cuDeviceTotalMem", 3020, 0)(bytes, dev);
	uint64_t total;

	if (r != CUDA_SUCCESS || gp_shim_device(dev, &d) != CUDA_SUCCESS)
		return r;
	total = *bytes;
	gp_shim_view(d, &total, NULL);
	*bytes = total;
	return r;
}
