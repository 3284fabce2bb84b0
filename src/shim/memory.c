/* memory.c — hard device-memory slices.
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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim/shim.h"

#define BUCKETS 1024

struct held {
	struct held *next;
	uint64_t key;           /* device pointer, VMM handle or array */
	int dev;
	uint64_t bytes;
};

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held *held[BUCKETS];

static size_t bucket(uint64_t key)
{
	return (size_t)((key >> 4) * 0x9e3779b97f4a7c15ULL >> 54) & (BUCKETS - 1);
}

static void held_put(struct held *h)
{
	pthread_mutex_lock(&held_lock);
	h->next = held[bucket(h->key)];
	held[bucket(h->key)] = h;
	pthread_mutex_unlock(&held_lock);
}

static void held_add(uint64_t key, int dev, uint64_t bytes)
{
	struct held *h = malloc(sizeof(*h));

	if (!h)
		return;         /* the memory stays counted: safe side */
	*h = (struct held){ .key = key, .dev = dev, .bytes = bytes };
	held_put(h);
}

/* Takes the entry of `key` out of the table; NULL when it has none. */
static struct held *held_take(uint64_t key)
{
	struct held **link, *h = NULL;

	pthread_mutex_lock(&held_lock);
	for (link = &held[bucket(key)]; *link; link = &(*link)->next)
		if ((*link)->key == key) {
			h = *link;
			*link = h->next;
			break;
		}
	pthread_mutex_unlock(&held_lock);
	return h;
}

/* Gives back what entry h (taken out, may be NULL) held on its device. */
static void give_back(struct held *h)
{
	struct gp_shim_device *d;

	if (h && gp_shim_device(h->dev, &d) == CUDA_SUCCESS)
		gp_region_mem_release(d->region, d->slot, h->bytes);
	free(h);
}

/* After the driver answered a free of what h held: the bytes go back, or
 * the entry does when the driver refused. */
static CUresult freed(CUresult r, struct held *h)
{
	if (r == CUDA_SUCCESS)
		give_back(h);
	else if (h)
		held_put(h);
	return r;
}

/* Admits `bytes` on device d (index dev): CUDA_ERROR_OUT_OF_MEMORY past
 * the task's limit, CUDA_ERROR_NOT_PERMITTED when a managed device no
 * longer has the task's limits (its entry was forgotten). */
static CUresult admit(struct gp_shim_device *d, uint64_t bytes)
{
	int err;

	if (!d->limited)
		return CUDA_SUCCESS;
	err = gp_region_mem_reserve(d->region, d->slot, bytes);
	return err == 0 ? CUDA_SUCCESS : err == -EPERM ? CUDA_ERROR_NOT_PERMITTED
						      : CUDA_ERROR_OUT_OF_MEMORY;
}

static void unadmit(struct gp_shim_device *d, uint64_t bytes)
{
	if (d->limited)
		gp_region_mem_release(d->region, d->slot, bytes);
}

/* After the driver answered an admitted request: remember or give back. */
static CUresult settle(CUresult r, struct gp_shim_device *d, int dev, uint64_t key,
		       uint64_t bytes)
{
	if (r != CUDA_SUCCESS)
		unadmit(d, bytes);
	else if (d->limited)
		held_add(key, dev, bytes);
	return r;
}

/* The device of the current context, with `bytes` admitted on it. */
#define ADMIT_CURRENT(d, dev, bytes)                                    \
	struct gp_shim_device *d;                                       \
	int dev;                                                        \
	do {                                                            \
		CUresult r_ = gp_shim_current(&d, &dev);                \
		if (r_ == CUDA_SUCCESS)                                 \
			r_ = admit(d, (bytes));                         \
		if (r_ != CUDA_SUCCESS)                                 \
			return r_;                                      \
	} while (0)

/* ---- allocations ----------------------------------------------------- */

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	ADMIT_CURRENT(d, dev, bytesize);
	CUresult r = GP_REAL(PFN_cuMemAlloc_v2, "cuMemAlloc", 3020, 0)(dptr, bytesize);

	return settle(r, d, dev, r == CUDA_SUCCESS ? *dptr : 0, bytesize);
}

typedef CUresult (*pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);

/* The pitch is the driver's to choose: admit the widest it could be (a
 * row rounded up to 512 bytes), then settle on what it chose. */
CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
				    size_t height, unsigned int element_bytes)
{
	uint64_t most = (uint64_t)((width + 511) / 512 * 512) * height;
	ADMIT_CURRENT(d, dev, most);
	CUresult r = GP_REAL(pitch_fn, "cuMemAllocPitch", 3020, 0)(dptr, pitch, width, height,
								    element_bytes);

	if (r != CUDA_SUCCESS)
		return settle(r, d, dev, 0, most);
	if (d->limited && (uint64_t)*pitch * height < most)
		gp_region_mem_release(d->region, d->slot, most - (uint64_t)*pitch * height);
	return settle(r, d, dev, *dptr, (uint64_t)*pitch * height);
}

typedef CUresult (*managed_fn)(CUdeviceptr *, size_t, unsigned int);

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	ADMIT_CURRENT(d, dev, bytesize);
	CUresult r = GP_REAL(managed_fn, "cuMemAllocManaged", 6000, 0)(dptr, bytesize, flags);

	return settle(r, d, dev, r == CUDA_SUCCESS ? *dptr : 0, bytesize);
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	struct held *h = held_take(dptr);

	return freed(GP_REAL(PFN_cuMemFree_v2, "cuMemFree", 3020, 0)(dptr), h);
}

typedef CUresult (*async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*pool_async_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*host_fn_fn)(CUstream, CUhostFn, void *);

static CUresult alloc_async(CUdeviceptr *dptr, size_t bytes, CUstream s, bool per_thread)
{
	ADMIT_CURRENT(d, dev, bytes);
	CUresult r = GP_REAL(async_fn, "cuMemAllocAsync", 11020, per_thread)(dptr, bytes, s);

	return settle(r, d, dev, r == CUDA_SUCCESS ? *dptr : 0, bytes);
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
	ADMIT_CURRENT(d, dev, bytes);
	CUresult r = GP_REAL(pool_async_fn, "cuMemAllocFromPoolAsync", 11020, per_thread)(
		dptr, bytes, pool, s);

	return settle(r, d, dev, r == CUDA_SUCCESS ? *dptr : 0, bytes);
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
	give_back(h);
}

static CUresult free_async(CUdeviceptr dptr, CUstream s, bool per_thread)
{
	struct held *h = held_take(dptr);
	CUresult r = GP_REAL(free_async_fn, "cuMemFreeAsync", 11020, per_thread)(dptr, s);

	if (r != CUDA_SUCCESS || !h)
		return freed(r, h);
	if (GP_REAL(host_fn_fn, "cuLaunchHostFunc", 10000, per_thread)(
		    s, given_back_in_order, h) != CUDA_SUCCESS)
		give_back(h);           /* no stream callback: now, then */
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
	int dev;

	/* Only memory on a device counts; host-located VMM memory does not. */
	if (!prop || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return GP_REAL(create_fn, "cuMemCreate", 10020, 0)(handle, size, prop, flags);
	dev = prop->location.id;
	r = gp_shim_device(dev, &d);
	if (r == CUDA_SUCCESS)
		r = admit(d, size);
	if (r != CUDA_SUCCESS)
		return r;
	r = GP_REAL(create_fn, "cuMemCreate", 10020, 0)(handle, size, prop, flags);
	return settle(r, d, dev, r == CUDA_SUCCESS ? *handle : 0, size);
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct held *h = held_take(handle);

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
	ADMIT_CURRENT(d, dev, bytes);
	CUresult r = GP_REAL(array_fn, name, 3020, 0)(array, desc);

	return settle(r, d, dev, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*array : 0, bytes);
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
	struct held *h = held_take((uint64_t)(uintptr_t)array);

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
	int dev;

	if (!p || p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return GP_REAL(mem_node_fn, "cuGraphAddMemAllocNode", 11040, 0)(node, graph, deps,
										 ndeps, p);
	dev = p->poolProps.location.id;
	r = gp_shim_device(dev, &d);
	if (r == CUDA_SUCCESS)
		r = admit(d, p->bytesize);
	if (r != CUDA_SUCCESS)
		return r;
	r = GP_REAL(mem_node_fn, "cuGraphAddMemAllocNode", 11040, 0)(node, graph, deps, ndeps, p);
	return settle(r, d, dev, (uint64_t)(uintptr_t)graph, p->bytesize);
}

CUresult CUDAAPI cuGraphDestroy(CUgraph graph)
{
	struct held *nodes = NULL, *h;
	CUresult r;

	/* Every memory node of the graph, out of the table first. */
	while ((h = held_take((uint64_t)(uintptr_t)graph))) {
		h->next = nodes;
		nodes = h;
	}
	r = GP_REAL(graph_destroy_fn, "cuGraphDestroy", 10000, 0)(graph);
	for (; nodes; nodes = h) {
		h = nodes->next;
		freed(r, nodes);
	}
	return r;
}

/* ---- what the program sees ------------------------------------------- */

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	struct gp_shim_device *d;
	struct gp_task_limits lim;
	uint64_t used, limit;
	CUresult r = gp_shim_current(&d, NULL);

	if (r == CUDA_SUCCESS)
		r = GP_REAL(PFN_cuMemGetInfo_v2, "cuMemGetInfo", 3020, 0)(free_bytes, total_bytes);
	if (r != CUDA_SUCCESS || !d->limited)
		return r;
	gp_region_limits(d->region, d->slot, &lim);
	limit = lim.mem_bytes && lim.mem_bytes < *total_bytes ? lim.mem_bytes : *total_bytes;
	used = gp_region_task_used(d->region, d->slot);
	*total_bytes = limit;
	if (used >= limit)
		*free_bytes = 0;
	else if (limit - used < *free_bytes)
		*free_bytes = limit - used;
	return r;
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	struct gp_shim_device *d;
	struct gp_task_limits lim;
	CUresult r = GP_REAL(PFN_cuDeviceTotalMem_v2, "cuDeviceTotalMem", 3020, 0)(bytes, dev);

	if (r != CUDA_SUCCESS || gp_shim_device(dev, &d) != CUDA_SUCCESS || !d->limited)
		return r;
	gp_region_limits(d->region, d->slot, &lim);
	if (lim.mem_bytes && lim.mem_bytes < *bytes)
		*bytes = lim.mem_bytes;
	return r;
}
