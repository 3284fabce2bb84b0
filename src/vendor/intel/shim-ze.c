/* shim-ze.c — Level Zero's front end of libgpushare (src/shim/front.h):
 * memory slices, the in-task view of memory and the compute share for
 * programs on Intel GPUs (SYCL's Level Zero adapter, PyTorch XPU, plain
 * Level Zero programs).
 *
 * Programs reach Level Zero through the loader, libze_loader.so.1: linked
 * (symbol interposition gives them our exported hooks) or dlopen'ed
 * (dlsym on a handle of libze_loader.so answers our hook: `library` and
 * `hook` below, through the core's dlsym). The real functions come from
 * our own dlopen of the loader, looked up with glibc's dlsym and cached.
 * A program that fetches the loader's DDI tables (zeGetMemProcAddrTable …)
 * and calls through them goes around us; the loader's own exports are the
 * seam, as in every LD_PRELOAD sharing layer.
 *
 * Devices: an ordinal is a device's index in zeDeviceGet's list (all
 * drivers, in order, after ZE_AFFINITY_MASK); its region is named
 * "XPU-" and the device's 16 UUID bytes, as the agent names it from
 * Sysman (src/vendor/intel/manage.c).
 *
 * Memory: zeMemAllocDevice, and zeMemAllocShared with a device, are
 * admitted before the loader is asked and settled after; past the limit
 * they fail with ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, the runtime's own
 * error. zeMemAllocHost (and shared memory without a device) is host
 * memory: not counted. zeMemFree and zeMemFreeExt take the entry out
 * before the real free and give the bytes back after.
 *
 * The view: Level Zero has no free-memory call like cuMemGetInfo. The
 * device's size (zeDeviceGetMemoryProperties' totalSize, and
 * zeDeviceGetProperties' maxMemAllocSize) is clamped to the slice, and
 * Sysman's zesMemoryGetState, asked from inside the task, shows the
 * slice's size and what the task may still allocate.
 *
 * Compute: work reaches the device at zeCommandQueueExecuteCommandLists
 * (regular command lists: gated there, once per submission) and at the
 * launch appends of an immediate command list (zeCommandListAppendLaunch-
 * Kernel, …Cooperative…, …KernelIndirect, …MultipleKernelsIndirect);
 * each waits for the device's turn. Queued work is bounded with events
 * of our own: signalled by an immediate list's append, or by a one-command
 * list executed on the queue. Synchronizations (queue, immediate list,
 * event) tell the core what was waited for.
 *
 * Not covered: memory of a context destroyed with allocations still in
 * it stays counted until the process exits; sub-device handles
 * (zeDeviceGetSubDevices) are not known devices, and their allocations
 * and launches are refused when a slice applies, never left unlimited.
 *
 * Threads: the tables below are guarded by their locks; a queue's or
 * list's record is immutable once published and freed only by the
 * program's destroy of its handle. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-levelzero.h"
#include "shim/front.h"

extern struct gp_shim_front gp_front_ze;

/* ---- the real loader ------------------------------------------------- */

static struct {
	pthread_mutex_t lock;
	void *handle;
} loader = { PTHREAD_MUTEX_INITIALIZER, NULL };

/* The loader's function `name`, NULL when it has none. */
static void *real(const char *name)
{
	void *h;

	pthread_mutex_lock(&loader.lock);
	if (!loader.handle)
		loader.handle = dlopen(GP_ZE_LOADER, RTLD_NOW | RTLD_LOCAL);
	h = loader.handle;
	pthread_mutex_unlock(&loader.lock);
	return h ? gp_shim_real_dlsym(h, name) : NULL;
}

/* Calls the loader's `name` (of the type of our hook of that name), or
 * answers ZE_RESULT_ERROR_UNINITIALIZED when there is none. */
#define CALL(name, ...)                                                        \
	({                                                                     \
		static void *_Atomic cached_;                                  \
		__typeof__(&name) fn_ = (__typeof__(&name))cached_;            \
		if (!fn_)                                                      \
			cached_ = (void *)(fn_ = (__typeof__(&name))real(#name)); \
		fn_ ? fn_(__VA_ARGS__) : ZE_RESULT_ERROR_UNINITIALIZED;        \
	})

/* A core error as Level Zero would say it. */
static ze_result_t ze_error(int err)
{
	switch (err) {
	case 0: return ZE_RESULT_SUCCESS;
	case -ENOMEM: return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	case -EINVAL: return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	case -EPERM: return ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS;
	case -ENODEV: return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	default: return ZE_RESULT_ERROR_UNKNOWN;
	}
}

/* ---- devices ---------------------------------------------------------- */

/* zeDeviceGet's devices of every driver, in order: the ordinals. Read
 * again when a handle is not there yet (the program initialised after
 * our first look). */
static struct {
	pthread_mutex_t lock;
	int count;
	ze_device_handle_t dev[GP_SHIM_DEVICES_MAX];
} devices = { PTHREAD_MUTEX_INITIALIZER, 0, { NULL } };

static void devices_read(void)
{
	ze_driver_handle_t drv[8];
	uint32_t ndrv = 8;
	int count = 0;

	if (CALL(zeDriverGet, &ndrv, drv) != ZE_RESULT_SUCCESS)
		return;
	for (uint32_t i = 0; i < ndrv && count < GP_SHIM_DEVICES_MAX; i++) {
		uint32_t n = (uint32_t)(GP_SHIM_DEVICES_MAX - count);

		if (CALL(zeDeviceGet, drv[i], &n, devices.dev + count) == ZE_RESULT_SUCCESS)
			count += (int)n;
	}
	devices.count = count;
}

/* The ordinal of hDevice, or -1 when it is none of zeDeviceGet's. */
static int ordinal_of(ze_device_handle_t hDevice)
{
	int found = -1;

	if (!hDevice)
		return -1;
	pthread_mutex_lock(&devices.lock);
	for (int pass = 0; pass < 2 && found < 0; pass++) {
		if (pass == 1)
			devices_read();
		for (int i = 0; i < devices.count && found < 0; i++)
			if (devices.dev[i] == hDevice)
				found = i;
	}
	pthread_mutex_unlock(&devices.lock);
	return found;
}

static ze_device_handle_t handle_of(int ordinal)
{
	ze_device_handle_t h = NULL;

	pthread_mutex_lock(&devices.lock);
	if (ordinal >= devices.count)
		devices_read();
	if (ordinal < devices.count)
		h = devices.dev[ordinal];
	pthread_mutex_unlock(&devices.lock);
	return h;
}

static void uuid_text(const uint8_t id[16], char *out, size_t len)
{
	snprintf(out, len,
		 "XPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10],
		 id[11], id[12], id[13], id[14], id[15]);
}

/* The device's memory: the sum of its memories' sizes. */
static int total_of(ze_device_handle_t h, uint64_t *ret)
{
	ze_device_memory_properties_t mem[8];
	uint32_t n = 8;
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++)
		mem[i] = (ze_device_memory_properties_t){ .stype =
								  ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES };
	if (CALL(zeDeviceGetMemoryProperties, h, &n, mem) != ZE_RESULT_SUCCESS)
		return -ENODEV;
	for (uint32_t i = 0; i < n && i < 8; i++)
		total += mem[i].totalSize;
	*ret = total;
	return 0;
}

static int identify(int ordinal, char *uuid, size_t uuid_len, uint64_t *total_bytes)
{
	ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	ze_device_handle_t h = handle_of(ordinal);

	if (!h || CALL(zeDeviceGetProperties, h, &p) != ZE_RESULT_SUCCESS)
		return -ENODEV;
	uuid_text(p.uuid.id, uuid, uuid_len);
	return total_of(h, total_bytes);
}

/* The slice of hDevice. */
static ze_result_t device_of(ze_device_handle_t hDevice, struct gp_shim_device **ret)
{
	int ordinal;

	if (gp_shim_configured() < 0)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	ordinal = ordinal_of(hDevice);
	if (ordinal < 0) {
		gp_shim_say("gpushare: Level Zero device %p is not one of zeDeviceGet's (a "
			    "sub-device?); its allocations and launches are refused\n",
			    (void *)hDevice);
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	}
	return ze_error(gp_shim_front_device(&gp_front_ze, ordinal, ret));
}

/* ---- queues and immediate lists -------------------------------------- */

/* Where work is submitted: a command queue or an immediate command list,
 * with what our bounding events need. The trail's "stream". */
struct submitter {
	struct submitter *next;
	void *handle;                   /* ze_command_queue_handle_t or list */
	bool immediate;
	ze_context_handle_t ctx;
	ze_device_handle_t dev;
	struct gp_shim_device *d;
};

#define SUBMITTER_BUCKETS 256

static struct {
	pthread_mutex_t lock;
	struct submitter *bucket[SUBMITTER_BUCKETS];
} submitters = { PTHREAD_MUTEX_INITIALIZER, { NULL } };

static size_t submitter_bucket(const void *h)
{
	return (size_t)(((uintptr_t)h >> 4) * 0x9e3779b97f4a7c15ULL >> 56) & (SUBMITTER_BUCKETS - 1);
}

static struct submitter *submitter_find(const void *h)
{
	struct submitter *s;

	pthread_mutex_lock(&submitters.lock);
	for (s = submitters.bucket[submitter_bucket(h)]; s && s->handle != h; s = s->next)
		;
	pthread_mutex_unlock(&submitters.lock);
	return s;
}

/* Remembers a new queue or immediate list (nothing when out of memory:
 * its work then passes ungated, which the next allocation still limits). */
static void submitter_add(void *h, bool immediate, ze_context_handle_t ctx,
			  ze_device_handle_t dev, struct gp_shim_device *d)
{
	struct submitter *s = malloc(sizeof(*s));

	if (!s)
		return;
	*s = (struct submitter){ .handle = h, .immediate = immediate, .ctx = ctx, .dev = dev,
				 .d = d };
	pthread_mutex_lock(&submitters.lock);
	s->next = submitters.bucket[submitter_bucket(h)];
	submitters.bucket[submitter_bucket(h)] = s;
	pthread_mutex_unlock(&submitters.lock);
}

/* Forgets h; its record stays allocated (another thread may be reading
 * it in a call racing with the destroy, which the program must not do,
 * but a freed record would turn that into a crash of ours). */
static void submitter_remove(const void *h)
{
	pthread_mutex_lock(&submitters.lock);
	for (struct submitter **l = &submitters.bucket[submitter_bucket(h)]; *l; l = &(*l)->next)
		if ((*l)->handle == h) {
			(*l)->handle = NULL;
			*l = (*l)->next;
			break;
		}
	pthread_mutex_unlock(&submitters.lock);
}

/* The device that drain() empties: the one this thread is being gated on. */
static __thread struct gp_shim_device *draining;

/* Waits for every queue and immediate list of the device being gated
 * (of every device when none is). */
static void drain(void *unused)
{
	struct submitter *todo[64];
	int n = 0;

	(void)unused;
	pthread_mutex_lock(&submitters.lock);
	for (size_t b = 0; b < SUBMITTER_BUCKETS; b++)
		for (struct submitter *s = submitters.bucket[b]; s && n < 64; s = s->next)
			if (!draining || s->d == draining)
				todo[n++] = s;
	pthread_mutex_unlock(&submitters.lock);
	for (int i = 0; i < n; i++) {
		if (todo[i]->immediate)
			CALL(zeCommandListHostSynchronize, todo[i]->handle, UINT64_MAX);
		else
			CALL(zeCommandQueueSynchronize, todo[i]->handle, UINT64_MAX);
	}
}

static void gate(struct gp_shim_device *d)
{
	draining = d;
	gp_shim_gate(&gp_front_ze, d);
	draining = NULL;
}

/* ---- bounding events -------------------------------------------------- */

/* One event of the trail: made in the context and for the device of the
 * submitter it is first recorded on (again if another's), with a closed
 * one-command list that signals it, for queues. */
struct trail_event {
	ze_context_handle_t ctx;
	ze_device_handle_t dev;
	ze_event_pool_handle_t pool;
	ze_event_handle_t event;
	ze_command_list_handle_t signal_list;
	bool recorded;
};

static void trail_event_clear(struct trail_event *e)
{
	if (e->signal_list)
		CALL(zeCommandListDestroy, e->signal_list);
	if (e->event)
		CALL(zeEventDestroy, e->event);
	if (e->pool)
		CALL(zeEventPoolDestroy, e->pool);
	*e = (struct trail_event){ 0 };
}

static int trail_event_make(struct trail_event *e, const struct submitter *s)
{
	ze_event_pool_desc_t pd = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				    .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1 };
	ze_event_desc_t ed = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
			       .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST };
	ze_command_list_desc_t ld = { .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC };
	ze_device_handle_t dev = s->dev;

	trail_event_clear(e);
	e->ctx = s->ctx;
	e->dev = s->dev;
	if (CALL(zeEventPoolCreate, s->ctx, &pd, 1, &dev, &e->pool) != ZE_RESULT_SUCCESS ||
	    CALL(zeEventCreate, e->pool, &ed, &e->event) != ZE_RESULT_SUCCESS)
		goto fail;
	if (!s->immediate &&
	    (CALL(zeCommandListCreate, s->ctx, s->dev, &ld, &e->signal_list) != ZE_RESULT_SUCCESS ||
	     CALL(zeCommandListAppendSignalEvent, e->signal_list, e->event) != ZE_RESULT_SUCCESS ||
	     CALL(zeCommandListClose, e->signal_list) != ZE_RESULT_SUCCESS))
		goto fail;
	return 0;
fail:
	trail_event_clear(e);
	return -1;
}

static int event_create(void **ret_event)
{
	struct trail_event *e = calloc(1, sizeof(*e));

	if (!e)
		return -1;
	*ret_event = e;
	return 0;
}

/* Records e on submitter `stream` (the trail records an event only once
 * it has seen it done, so its reset and its list's reuse are safe). */
static int event_record(void *event, void *stream, bool flavour)
{
	struct trail_event *e = event;
	struct submitter *s = stream;
	ze_result_t r;

	(void)flavour;
	if ((e->ctx != s->ctx || e->dev != s->dev || !e->event ||
	     (!s->immediate && !e->signal_list)) &&
	    trail_event_make(e, s) < 0)
		return -1;
	if (CALL(zeEventHostReset, e->event) != ZE_RESULT_SUCCESS)
		return -1;
	if (s->immediate)
		r = CALL(zeCommandListAppendSignalEvent, s->handle, e->event);
	else
		r = CALL(zeCommandQueueExecuteCommandLists, s->handle, 1, &e->signal_list, NULL);
	e->recorded = r == ZE_RESULT_SUCCESS;
	return e->recorded ? 0 : -1;
}

static int event_query(void *event)
{
	struct trail_event *e = event;
	ze_result_t r;

	if (!e->recorded)
		return 0;
	r = CALL(zeEventQueryStatus, e->event);
	return r == ZE_RESULT_SUCCESS ? 0 : r == ZE_RESULT_NOT_READY ? 1 : -1;
}

/* ---- memory ------------------------------------------------------------- */

ze_result_t ZE_APICALL zeMemAllocDevice(ze_context_handle_t hContext,
					const ze_device_mem_alloc_desc_t *device_desc, size_t size,
					size_t alignment, ze_device_handle_t hDevice, void **pptr)
{
	struct gp_shim_device *d;
	ze_result_t r = device_of(hDevice, &d);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	if ((r = ze_error(gp_shim_admit(d, size))) != ZE_RESULT_SUCCESS)
		return r;
	r = CALL(zeMemAllocDevice, hContext, device_desc, size, alignment, hDevice, pptr);
	gp_shim_settle(r == ZE_RESULT_SUCCESS, d, r == ZE_RESULT_SUCCESS ? (uintptr_t)*pptr : 0,
		       size);
	return r;
}

/* Shared memory with a device may live on it whole: counted there. */
ze_result_t ZE_APICALL zeMemAllocShared(ze_context_handle_t hContext,
					const ze_device_mem_alloc_desc_t *device_desc,
					const ze_host_mem_alloc_desc_t *host_desc, size_t size,
					size_t alignment, ze_device_handle_t hDevice, void **pptr)
{
	struct gp_shim_device *d;
	ze_result_t r;

	if (!hDevice)
		return CALL(zeMemAllocShared, hContext, device_desc, host_desc, size, alignment,
			    hDevice, pptr);
	if ((r = device_of(hDevice, &d)) != ZE_RESULT_SUCCESS ||
	    (r = ze_error(gp_shim_admit(d, size))) != ZE_RESULT_SUCCESS)
		return r;
	r = CALL(zeMemAllocShared, hContext, device_desc, host_desc, size, alignment, hDevice,
		 pptr);
	gp_shim_settle(r == ZE_RESULT_SUCCESS, d, r == ZE_RESULT_SUCCESS ? (uintptr_t)*pptr : 0,
		       size);
	return r;
}

ze_result_t ZE_APICALL zeMemFree(ze_context_handle_t hContext, void *ptr)
{
	struct gp_shim_held *h = gp_shim_take((uintptr_t)ptr);
	ze_result_t r = CALL(zeMemFree, hContext, ptr);

	gp_shim_freed(h, r == ZE_RESULT_SUCCESS);
	return r;
}

ze_result_t ZE_APICALL zeMemFreeExt(ze_context_handle_t hContext,
				    const ze_memory_free_ext_desc_t *pMemFreeDesc, void *ptr)
{
	struct gp_shim_held *h = gp_shim_take((uintptr_t)ptr);
	ze_result_t r = CALL(zeMemFreeExt, hContext, pMemFreeDesc, ptr);

	gp_shim_freed(h, r == ZE_RESULT_SUCCESS);
	return r;
}

/* ---- the views ---------------------------------------------------------- */

/* The slice's size on hDevice, of a device of `total` bytes (total when
 * no slice applies). */
static uint64_t slice_of(ze_device_handle_t hDevice, uint64_t total)
{
	struct gp_shim_device *d;
	uint64_t t = total;

	if (ordinal_of(hDevice) >= 0 && device_of(hDevice, &d) == ZE_RESULT_SUCCESS)
		gp_shim_view(d, &t, NULL);
	return t;
}

ze_result_t ZE_APICALL zeDeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t *pCount,
						   ze_device_memory_properties_t *pMemProperties)
{
	ze_result_t r = CALL(zeDeviceGetMemoryProperties, hDevice, pCount, pMemProperties);
	uint64_t total = 0, left;

	if (r != ZE_RESULT_SUCCESS || !pMemProperties || !pCount || *pCount == 0)
		return r;
	for (uint32_t i = 0; i < *pCount; i++)
		total += pMemProperties[i].totalSize;
	/* The slice, filled from the first memory on. */
	left = slice_of(hDevice, total);
	for (uint32_t i = 0; i < *pCount; i++) {
		if (pMemProperties[i].totalSize > left)
			pMemProperties[i].totalSize = left;
		left -= pMemProperties[i].totalSize;
	}
	return r;
}

ze_result_t ZE_APICALL zeDeviceGetProperties(ze_device_handle_t hDevice,
					     ze_device_properties_t *pDeviceProperties)
{
	ze_result_t r = CALL(zeDeviceGetProperties, hDevice, pDeviceProperties);
	uint64_t total;

	if (r != ZE_RESULT_SUCCESS || ordinal_of(hDevice) < 0 || total_of(hDevice, &total) < 0)
		return r;
	total = slice_of(hDevice, total);
	if (pDeviceProperties->maxMemAllocSize > total)
		pDeviceProperties->maxMemAllocSize = total;
	return r;
}

/* Sysman's memory modules, and the device of each (for the view). */
#define MODULES_MAX 64

static struct {
	pthread_mutex_t lock;
	int count;
	zes_mem_handle_t mem[MODULES_MAX];
	zes_device_handle_t dev[MODULES_MAX];
} modules = { PTHREAD_MUTEX_INITIALIZER, 0, { NULL }, { NULL } };

ze_result_t ZE_APICALL zesDeviceEnumMemoryModules(zes_device_handle_t hDevice, uint32_t *pCount,
						  zes_mem_handle_t *phMemory)
{
	ze_result_t r = CALL(zesDeviceEnumMemoryModules, hDevice, pCount, phMemory);

	if (r != ZE_RESULT_SUCCESS || !phMemory || !pCount)
		return r;
	pthread_mutex_lock(&modules.lock);
	for (uint32_t i = 0; i < *pCount; i++) {
		int k = 0;

		while (k < modules.count && modules.mem[k] != phMemory[i])
			k++;
		if (k == modules.count && modules.count < MODULES_MAX)
			modules.count++;
		if (k < modules.count) {
			modules.mem[k] = phMemory[i];
			modules.dev[k] = hDevice;
		}
	}
	pthread_mutex_unlock(&modules.lock);
	return r;
}

/* The slice of the device Sysman module `mem` is on: found by UUID among
 * zeDeviceGet's devices, else joined by UUID for the view alone (a tool
 * that uses Sysman only). -1 when none applies. */
static int module_slice(zes_mem_handle_t mem, uint64_t size, struct gp_shim_device **ret)
{
	zes_device_properties_t p = { .stype = ZES_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	zes_device_handle_t dev = NULL;
	char uuid[GP_UUID_STR_MAX];

	pthread_mutex_lock(&modules.lock);
	for (int k = 0; k < modules.count; k++)
		if (modules.mem[k] == mem)
			dev = modules.dev[k];
	pthread_mutex_unlock(&modules.lock);
	if (!dev || gp_shim_configured() < 0)
		return -1;
	p.core.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
	if (CALL(zesDeviceGetProperties, dev, &p) != ZE_RESULT_SUCCESS)
		return -1;
	uuid_text(p.core.uuid.id, uuid, sizeof(uuid));
	for (int ordinal = 0; ordinal < GP_SHIM_DEVICES_MAX; ordinal++) {
		ze_device_properties_t cp = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
		ze_device_handle_t h = handle_of(ordinal);
		char other[GP_UUID_STR_MAX];

		if (!h)
			break;
		if (CALL(zeDeviceGetProperties, h, &cp) != ZE_RESULT_SUCCESS)
			continue;
		uuid_text(cp.uuid.id, other, sizeof(other));
		if (strcmp(uuid, other) == 0)
			return gp_shim_front_device(&gp_front_ze, ordinal, ret) == 0 ? 0 : -1;
	}
	return gp_shim_device_by_uuid(uuid, 0, size, ret) == 0 ? 0 : -1;
}

ze_result_t ZE_APICALL zesMemoryGetState(zes_mem_handle_t hMemory, zes_mem_state_t *pState)
{
	ze_result_t r = CALL(zesMemoryGetState, hMemory, pState);
	struct gp_shim_device *d;
	uint64_t total, free_bytes;

	if (r != ZE_RESULT_SUCCESS || module_slice(hMemory, pState->size, &d) < 0)
		return r;
	total = pState->size;
	free_bytes = pState->free;
	gp_shim_view(d, &total, &free_bytes);
	pState->size = total;
	pState->free = free_bytes;
	return r;
}

/* ---- queues, lists and launches ------------------------------------------ */

ze_result_t ZE_APICALL zeCommandQueueCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					    const ze_command_queue_desc_t *desc,
					    ze_command_queue_handle_t *phCommandQueue)
{
	struct gp_shim_device *d;
	ze_result_t r = device_of(hDevice, &d);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	r = CALL(zeCommandQueueCreate, hContext, hDevice, desc, phCommandQueue);
	if (r == ZE_RESULT_SUCCESS)
		submitter_add(*phCommandQueue, false, hContext, hDevice, d);
	return r;
}

ze_result_t ZE_APICALL zeCommandQueueDestroy(ze_command_queue_handle_t hCommandQueue)
{
	ze_result_t r = CALL(zeCommandQueueDestroy, hCommandQueue);

	if (r == ZE_RESULT_SUCCESS)
		submitter_remove(hCommandQueue);
	return r;
}

ze_result_t ZE_APICALL zeCommandListCreateImmediate(ze_context_handle_t hContext,
						    ze_device_handle_t hDevice,
						    const ze_command_queue_desc_t *altdesc,
						    ze_command_list_handle_t *phCommandList)
{
	struct gp_shim_device *d;
	ze_result_t r = device_of(hDevice, &d);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	r = CALL(zeCommandListCreateImmediate, hContext, hDevice, altdesc, phCommandList);
	if (r == ZE_RESULT_SUCCESS)
		submitter_add(*phCommandList, true, hContext, hDevice, d);
	return r;
}

ze_result_t ZE_APICALL zeCommandListDestroy(ze_command_list_handle_t hCommandList)
{
	ze_result_t r = CALL(zeCommandListDestroy, hCommandList);

	if (r == ZE_RESULT_SUCCESS)
		submitter_remove(hCommandList);
	return r;
}

/* Regular command lists reach the device here: one turn per submission. */
ze_result_t ZE_APICALL zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t hCommandQueue,
							 uint32_t numCommandLists,
							 ze_command_list_handle_t *phCommandLists,
							 ze_fence_handle_t hFence)
{
	struct submitter *s = submitter_find(hCommandQueue);
	ze_result_t r;

	if (s)
		gate(s->d);
	r = CALL(zeCommandQueueExecuteCommandLists, hCommandQueue, numCommandLists, phCommandLists,
		 hFence);
	if (r == ZE_RESULT_SUCCESS && s)
		gp_shim_launched(&gp_front_ze, s->d, s, false);
	return r;
}

/* An append of a launch to an immediate list (a regular list's launches
 * wait for the queue): `call` does it. */
#define IMMEDIATE_LAUNCH(list, call)                                           \
	({                                                                     \
		struct submitter *s_ = submitter_find(list);                   \
		ze_result_t r_;                                                \
		if (s_ && s_->immediate)                                       \
			gate(s_->d);                                           \
		r_ = (call);                                                   \
		if (r_ == ZE_RESULT_SUCCESS && s_ && s_->immediate)            \
			gp_shim_launched(&gp_front_ze, s_->d, s_, false);      \
		r_;                                                            \
	})

ze_result_t ZE_APICALL zeCommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
						       ze_kernel_handle_t hKernel,
						       const ze_group_count_t *pLaunchFuncArgs,
						       ze_event_handle_t hSignalEvent,
						       uint32_t numWaitEvents,
						       ze_event_handle_t *phWaitEvents)
{
	return IMMEDIATE_LAUNCH(hCommandList,
				CALL(zeCommandListAppendLaunchKernel, hCommandList, hKernel,
				     pLaunchFuncArgs, hSignalEvent, numWaitEvents, phWaitEvents));
}

ze_result_t ZE_APICALL zeCommandListAppendLaunchCooperativeKernel(
	ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
	const ze_group_count_t *pLaunchFuncArgs, ze_event_handle_t hSignalEvent,
	uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
	return IMMEDIATE_LAUNCH(hCommandList,
				CALL(zeCommandListAppendLaunchCooperativeKernel, hCommandList,
				     hKernel, pLaunchFuncArgs, hSignalEvent, numWaitEvents,
				     phWaitEvents));
}

ze_result_t ZE_APICALL zeCommandListAppendLaunchKernelIndirect(
	ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
	const ze_group_count_t *pLaunchArgumentsBuffer, ze_event_handle_t hSignalEvent,
	uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
	return IMMEDIATE_LAUNCH(hCommandList,
				CALL(zeCommandListAppendLaunchKernelIndirect, hCommandList, hKernel,
				     pLaunchArgumentsBuffer, hSignalEvent, numWaitEvents,
				     phWaitEvents));
}

ze_result_t ZE_APICALL zeCommandListAppendLaunchMultipleKernelsIndirect(
	ze_command_list_handle_t hCommandList, uint32_t numKernels, ze_kernel_handle_t *phKernels,
	const uint32_t *pCountBuffer, const ze_group_count_t *pLaunchArgumentsBuffer,
	ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
	return IMMEDIATE_LAUNCH(hCommandList,
				CALL(zeCommandListAppendLaunchMultipleKernelsIndirect, hCommandList,
				     numKernels, phKernels, pCountBuffer, pLaunchArgumentsBuffer,
				     hSignalEvent, numWaitEvents, phWaitEvents));
}

/* ---- synchronizations -------------------------------------------------- */

ze_result_t ZE_APICALL zeCommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue,
						 uint64_t timeout)
{
	ze_result_t r = CALL(zeCommandQueueSynchronize, hCommandQueue, timeout);
	struct submitter *s;

	if (r == ZE_RESULT_SUCCESS && (s = submitter_find(hCommandQueue)))
		gp_shim_waited(&gp_front_ze, s->d, GP_WAITED_STREAM, s, false);
	return r;
}

ze_result_t ZE_APICALL zeCommandListHostSynchronize(ze_command_list_handle_t hCommandList,
						    uint64_t timeout)
{
	ze_result_t r = CALL(zeCommandListHostSynchronize, hCommandList, timeout);
	struct submitter *s;

	if (r == ZE_RESULT_SUCCESS && (s = submitter_find(hCommandList)))
		gp_shim_waited(&gp_front_ze, s->d, GP_WAITED_STREAM, s, false);
	return r;
}

/* An event names no device: every device of this front end is told. */
ze_result_t ZE_APICALL zeEventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout)
{
	ze_result_t r = CALL(zeEventHostSynchronize, hEvent, timeout);

	if (r != ZE_RESULT_SUCCESS)
		return r;
	for (int i = 0; i < GP_SHIM_DEVICES_MAX; i++) {
		struct gp_shim_device *d = atomic_load(&gp_front_ze.device[i]);

		if (d)
			gp_shim_waited(&gp_front_ze, d, GP_WAITED_OTHER, NULL, false);
	}
	return r;
}

/* ---- dlsym on the loader's handle ---------------------------------------- */

#define HOOK(name) { #name, (void *)name }

static const struct {
	const char *name;
	void *fn;
} hooks[] = {
	HOOK(zeCommandListAppendLaunchCooperativeKernel),
	HOOK(zeCommandListAppendLaunchKernel),
	HOOK(zeCommandListAppendLaunchKernelIndirect),
	HOOK(zeCommandListAppendLaunchMultipleKernelsIndirect),
	HOOK(zeCommandListCreateImmediate),
	HOOK(zeCommandListDestroy),
	HOOK(zeCommandListHostSynchronize),
	HOOK(zeCommandQueueCreate),
	HOOK(zeCommandQueueDestroy),
	HOOK(zeCommandQueueExecuteCommandLists),
	HOOK(zeCommandQueueSynchronize),
	HOOK(zeDeviceGetMemoryProperties),
	HOOK(zeDeviceGetProperties),
	HOOK(zeEventHostSynchronize),
	HOOK(zeMemAllocDevice),
	HOOK(zeMemAllocShared),
	HOOK(zeMemFree),
	HOOK(zeMemFreeExt),
	HOOK(zesDeviceEnumMemoryModules),
	HOOK(zesMemoryGetState),
};

static void *hook(const char *symbol)
{
	if (strncmp(symbol, "ze", 2) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (strcmp(hooks[i].name, symbol) == 0)
			return hooks[i].fn;
	return NULL;
}

struct gp_shim_front gp_front_ze = {
	.name = "ze",
	.library = "libze_loader.so",
	.hook = hook,
	.identify = identify,
	.event_create = event_create,
	.event_record = event_record,
	.event_query = event_query,
	.drain = drain,
	GP_SHIM_FRONT_INIT,
};
