/* rt-ze.c — gpuload's Level Zero runtime (runtime.h): Intel GPUs through
 * the Level Zero loader, libze_loader.so.1, loaded with dlopen at its real
 * name; its functions found with dlsym on the loader's handle (Level Zero
 * has no proc-address call of its own, so --direct is the same).
 *
 * A session is zeInit, the first driver's device --device, a context, a
 * module with gpuload's kernel and one immediate command list (Level
 * Zero's stream: work appended runs at once, in order). A launch is one
 * zeCommandListAppendLaunchKernel of --blocks groups of --threads whose
 * argument 0 is a uint64_t of nanoseconds, which the simulated loader
 * (src/simdev/intel/) charges as device time. gpuload carries no SPIR-V:
 * the module image is a marker, so this runtime drives simdev's devices
 * only (a real driver would refuse the module). Memory is
 * zeMemAllocDevice / zeMemFree; the view is zeDeviceGetMemoryProperties'
 * size and Sysman's zesMemoryGetState free bytes (Level Zero has no
 * cuMemGetInfo). Events are host-visible Level Zero events, without
 * elapsed time (kernel timestamps are not simulated). Every failed call
 * is reported once through gl_report, and remembered for last_error. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-levelzero.h"
#include "runtime.h"

#define FUNCTIONS(X)                                                             \
	X(zeInit) X(zeDriverGet) X(zeDeviceGet) X(zeDeviceGetProperties)         \
	X(zeDeviceGetMemoryProperties) X(zeContextCreate) X(zeContextDestroy)    \
	X(zeMemAllocDevice) X(zeMemFree) X(zeCommandListCreateImmediate)         \
	X(zeCommandListDestroy) X(zeCommandListHostSynchronize)                  \
	X(zeCommandListAppendLaunchKernel) X(zeCommandListAppendSignalEvent)     \
	X(zeModuleCreate) X(zeModuleDestroy) X(zeKernelCreate) X(zeKernelDestroy) \
	X(zeKernelSetArgumentValue) X(zeKernelSetGroupSize) X(zeEventPoolCreate) \
	X(zeEventPoolDestroy) X(zeEventCreate) X(zeEventDestroy)                 \
	X(zeEventHostSynchronize) X(zeEventHostReset)

/* Sysman, for the free bytes: optional. */
#define SYSMAN_FUNCTIONS(X)                                                      \
	X(zesInit) X(zesDriverGet) X(zesDeviceGet) X(zesDeviceGetProperties)     \
	X(zesDeviceEnumMemoryModules) X(zesMemoryGetState)

static struct {
#define FIELD(fn) __typeof__(fn) *fn;
	FUNCTIONS(FIELD)
	SYSMAN_FUNCTIONS(FIELD)
#undef FIELD
	bool sysman;
} ze;

/* The module image: a marker (see the top of the file). */
static const uint8_t spin_image[] = "gpuload_spin";

struct ze_session {
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
	ze_module_handle_t module;
	ze_kernel_handle_t spin;
	ze_command_list_handle_t list;
	zes_mem_handle_t mem[4];        /* the device's Sysman memory modules */
	uint32_t mems;
	unsigned blocks;
	ze_result_t last;               /* the last failure, or ZE_RESULT_SUCCESS */
};

struct ze_event {
	ze_event_pool_handle_t pool;
	ze_event_handle_t event;
};

static const char *result_name(ze_result_t r, char *buf, size_t len)
{
	switch (r) {
#define NAME(code) case code: return #code;
	NAME(ZE_RESULT_SUCCESS) NAME(ZE_RESULT_NOT_READY) NAME(ZE_RESULT_ERROR_DEVICE_LOST)
	NAME(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) NAME(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
	NAME(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS) NAME(ZE_RESULT_ERROR_NOT_AVAILABLE)
	NAME(ZE_RESULT_ERROR_UNINITIALIZED) NAME(ZE_RESULT_ERROR_UNSUPPORTED_VERSION)
	NAME(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) NAME(ZE_RESULT_ERROR_INVALID_ARGUMENT)
	NAME(ZE_RESULT_ERROR_INVALID_NULL_HANDLE) NAME(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
	NAME(ZE_RESULT_ERROR_INVALID_SIZE) NAME(ZE_RESULT_ERROR_UNSUPPORTED_SIZE)
	NAME(ZE_RESULT_ERROR_UNKNOWN)
#undef NAME
	default:
		snprintf(buf, len, "ze_result_t 0x%x", (unsigned)r);
		return buf;
	}
}

/* 0 for success; otherwise remembers r, reports it, returns -EIO. */
static int check(struct ze_session *s, ze_result_t r, const char *call)
{
	char buf[32];

	if (r == ZE_RESULT_SUCCESS)
		return 0;
	if (s)
		s->last = r;
	return gl_report(call, result_name(r, buf, sizeof(buf)), NULL);
}

static int ze_load(bool direct, char *err, size_t err_len)
{
	static void *lib;
	void *h;

	(void)direct;           /* dlsym either way */
	if (lib)
		return 0;
	h = dlopen(GP_ZE_LOADER, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, err_len, "cannot load %s (%s): install the Level Zero loader, or for "
			 "simulated devices set LD_LIBRARY_PATH=build/simdev and "
			 "GPUPOOL_SIM_DEVICES=max1550-128g:1", GP_ZE_LOADER, dlerror());
		return -ENOENT;
	}
#define LOOKUP(fn)                                                               \
	if (!(ze.fn = (__typeof__(fn) *)dlsym(h, #fn))) {                        \
		snprintf(err, err_len, "%s lacks %s: the Level Zero loader is too old", \
			 GP_ZE_LOADER, #fn);                                     \
		dlclose(h);                                                      \
		return -ENOENT;                                                  \
	}
	FUNCTIONS(LOOKUP)
#undef LOOKUP
	ze.sysman = true;
#define OPTIONAL(fn)                                                             \
	if (!(ze.fn = (__typeof__(fn) *)dlsym(h, #fn)))                          \
		ze.sysman = false;
	SYSMAN_FUNCTIONS(OPTIONAL)
#undef OPTIONAL
	lib = h;
	return 0;
}

static int ze_close(void *session)
{
	struct ze_session *s = session;
	int ret = 0;

	if (!s)
		return 0;
	if (s->list)
		ret |= check(s, ze.zeCommandListDestroy(s->list), "zeCommandListDestroy");
	if (s->spin)
		ret |= check(s, ze.zeKernelDestroy(s->spin), "zeKernelDestroy");
	if (s->module)
		ret |= check(s, ze.zeModuleDestroy(s->module), "zeModuleDestroy");
	if (s->ctx)
		ret |= check(s, ze.zeContextDestroy(s->ctx), "zeContextDestroy");
	free(s);
	return ret ? -EIO : 0;
}

/* The device's Sysman memory modules, found by UUID (Sysman's device
 * handles need not be the core's); none when Sysman is absent. */
static void sysman_find(struct ze_session *s)
{
	ze_device_properties_t core = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	zes_driver_handle_t drv;
	zes_device_handle_t dev[16];
	uint32_t n = 1;

	if (!ze.sysman || ze.zesInit(0) != ZE_RESULT_SUCCESS ||
	    ze.zeDeviceGetProperties(s->dev, &core) != ZE_RESULT_SUCCESS ||
	    ze.zesDriverGet(&n, &drv) != ZE_RESULT_SUCCESS || n == 0)
		return;
	n = 16;
	if (ze.zesDeviceGet(drv, &n, dev) != ZE_RESULT_SUCCESS)
		return;
	for (uint32_t i = 0; i < n; i++) {
		zes_device_properties_t p = { .stype = ZES_STRUCTURE_TYPE_DEVICE_PROPERTIES };

		p.core.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
		if (ze.zesDeviceGetProperties(dev[i], &p) != ZE_RESULT_SUCCESS ||
		    memcmp(p.core.uuid.id, core.uuid.id, sizeof(core.uuid.id)) != 0)
			continue;
		s->mems = 4;
		if (ze.zesDeviceEnumMemoryModules(dev[i], &s->mems, s->mem) != ZE_RESULT_SUCCESS)
			s->mems = 0;
		return;
	}
}

static int open_steps(struct ze_session *s, const struct gl_runtime_params *p)
{
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	ze_command_queue_desc_t qd = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				       .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS };
	ze_module_desc_t md = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
				.format = ZE_MODULE_FORMAT_NATIVE, .inputSize = sizeof(spin_image),
				.pInputModule = spin_image };
	ze_kernel_desc_t kd = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
				.pKernelName = "gpuload_spin" };
	ze_device_handle_t dev[16];
	ze_driver_handle_t drv;
	uint32_t n = 1;

	if (check(s, ze.zeInit(0), "zeInit") || check(s, ze.zeDriverGet(&n, &drv), "zeDriverGet"))
		return -EIO;
	n = 16;
	if (check(s, ze.zeDeviceGet(drv, &n, dev), "zeDeviceGet"))
		return -EIO;
	if (p->device < 0 || (uint32_t)p->device >= n) {
		fprintf(stderr, "gpuload: --device %d: Level Zero shows %u device(s)\n", p->device, n);
		return -ENODEV;
	}
	s->dev = dev[p->device];
	if (check(s, ze.zeContextCreate(drv, &cd, &s->ctx), "zeContextCreate") ||
	    check(s, ze.zeModuleCreate(s->ctx, s->dev, &md, &s->module, NULL), "zeModuleCreate") ||
	    check(s, ze.zeKernelCreate(s->module, &kd, &s->spin),
		  "zeKernelCreate(\"gpuload_spin\")") ||
	    check(s, ze.zeKernelSetGroupSize(s->spin, p->threads ? p->threads : 1, 1, 1),
		  "zeKernelSetGroupSize") ||
	    check(s, ze.zeCommandListCreateImmediate(s->ctx, s->dev, &qd, &s->list),
		  "zeCommandListCreateImmediate"))
		return -EIO;
	s->blocks = p->blocks ? p->blocks : 1;
	sysman_find(s);
	return 0;
}

static int ze_open(const struct gl_runtime_params *p, void **ret_session)
{
	struct ze_session *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	if ((r = open_steps(s, p)) < 0) {
		ze_close(s);
		return r;
	}
	*ret_session = s;
	return 0;
}

/* Arguments are captured at the append: one kernel serves every launch. */
static int ze_launch(void *session, uint64_t ns)
{
	struct ze_session *s = session;
	ze_group_count_t groups = { s->blocks, 1, 1 };

	if (check(s, ze.zeKernelSetArgumentValue(s->spin, 0, sizeof(ns), &ns),
		  "zeKernelSetArgumentValue"))
		return -EIO;
	return check(s, ze.zeCommandListAppendLaunchKernel(s->list, s->spin, &groups, NULL, 0, NULL),
		     "zeCommandListAppendLaunchKernel");
}

static int ze_sync(void *session)
{
	struct ze_session *s = session;

	return check(s, ze.zeCommandListHostSynchronize(s->list, UINT64_MAX),
		     "zeCommandListHostSynchronize");
}

static int ze_alloc(void *session, size_t bytes, void **ret_ptr)
{
	struct ze_session *s = session;
	ze_device_mem_alloc_desc_t dd = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	void *ptr;
	ze_result_t r = ze.zeMemAllocDevice(s->ctx, &dd, bytes, 0, s->dev, &ptr);

	if (r == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY) {
		s->last = r;
		return -ENOMEM;
	}
	if (check(s, r, "zeMemAllocDevice"))
		return -EIO;
	*ret_ptr = ptr;
	return 0;
}

static int ze_free(void *session, void *ptr)
{
	struct ze_session *s = session;

	return check(s, ze.zeMemFree(s->ctx, ptr), "zeMemFree");
}

static int ze_mem_info(void *session, size_t *ret_free, size_t *ret_total)
{
	struct ze_session *s = session;
	ze_device_memory_properties_t m[4];
	uint32_t n = 4;
	uint64_t total = 0, free_bytes = 0;

	for (uint32_t i = 0; i < n; i++)
		m[i] = (ze_device_memory_properties_t){ .stype =
								ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES };
	if (check(s, ze.zeDeviceGetMemoryProperties(s->dev, &n, m), "zeDeviceGetMemoryProperties"))
		return -EIO;
	for (uint32_t i = 0; i < n; i++)
		total += m[i].totalSize;
	free_bytes = total;
	if (s->mems > 0) {
		free_bytes = 0;
		for (uint32_t i = 0; i < s->mems; i++) {
			zes_mem_state_t st = { .stype = ZES_STRUCTURE_TYPE_MEM_STATE };

			if (check(s, ze.zesMemoryGetState(s->mem[i], &st), "zesMemoryGetState"))
				return -EIO;
			free_bytes += st.free;
		}
	}
	*ret_free = (size_t)(free_bytes < total ? free_bytes : total);
	*ret_total = (size_t)total;
	return 0;
}

static const char *ze_last_error(void *session, char *buf, size_t len)
{
	struct ze_session *s = session;

	return s && s->last != ZE_RESULT_SUCCESS ? result_name(s->last, buf, len) : NULL;
}

static int ze_event_create(void *session, bool timing, void **ret_event)
{
	struct ze_session *s = session;
	ze_event_pool_desc_t pd = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				    .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1 };
	ze_event_desc_t ed = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
			       .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST };
	struct ze_event *e = calloc(1, sizeof(*e));

	(void)timing;
	if (!e)
		return -ENOMEM;
	if (check(s, ze.zeEventPoolCreate(s->ctx, &pd, 1, &s->dev, &e->pool), "zeEventPoolCreate") ||
	    check(s, ze.zeEventCreate(e->pool, &ed, &e->event), "zeEventCreate")) {
		if (e->pool)
			ze.zeEventPoolDestroy(e->pool);
		free(e);
		return -EIO;
	}
	*ret_event = e;
	return 0;
}

/* A recorded event is signalled again: reset first (gpuload records an
 * event again only after it has waited for it, or never recorded it). */
static int ze_event_record(void *session, void *event)
{
	struct ze_session *s = session;
	struct ze_event *e = event;

	if (check(s, ze.zeEventHostReset(e->event), "zeEventHostReset"))
		return -EIO;
	return check(s, ze.zeCommandListAppendSignalEvent(s->list, e->event),
		     "zeCommandListAppendSignalEvent");
}

static int ze_event_sync(void *session, void *event)
{
	struct ze_session *s = session;
	struct ze_event *e = event;

	return check(s, ze.zeEventHostSynchronize(e->event, UINT64_MAX), "zeEventHostSynchronize");
}

static int ze_event_destroy(void *session, void *event)
{
	struct ze_session *s = session;
	struct ze_event *e = event;
	int ret = 0;

	if (!e)
		return 0;
	ret |= check(s, ze.zeEventDestroy(e->event), "zeEventDestroy");
	ret |= check(s, ze.zeEventPoolDestroy(e->pool), "zeEventPoolDestroy");
	free(e);
	return ret ? -EIO : 0;
}

const struct gl_runtime gl_runtime_ze = {
	.name = "ze",
	.summary = "Intel Level Zero (libze_loader.so.1); simulated devices only "
		   "(kernel: its argument 0, ns)",
	.loader = "dlsym",
	.loader_direct = "dlsym",
	.load = ze_load,
	.open = ze_open,
	.close = ze_close,
	.launch = ze_launch,
	.sync = ze_sync,
	.alloc = ze_alloc,
	.free = ze_free,
	.mem_info = ze_mem_info,
	.last_error = ze_last_error,
	.event_create = ze_event_create,
	.event_record = ze_event_record,
	.event_sync = ze_event_sync,
	.event_elapsed = NULL,
	.event_destroy = ze_event_destroy,
};
