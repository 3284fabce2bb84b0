/* ze.c — simdev's libze_loader.so.1: Level Zero (core and Sysman) for the
 * simulated Intel GPUs of GPUPOOL_SIM_DEVICES (model max1550-128g).
 *
 * The real loader exports every ze and zes function and dispatches each
 * through DDI tables that it fills from a driver (libze_intel_gpu.so.1)
 * and its layers. That path is not simulated: this library exports the
 * functions directly and answers them itself. Programs, and libgpushare's
 * front end, see only the loader's exported symbols either way. What a
 * program gets:
 *
 * - Devices: the Intel devices of the simdev state, in simdev's order,
 *   as ZE_AFFINITY_MASK leaves them ("0,2": devices 0 and 2, numbered 0
 *   and 1, in the devices' own order; entries out of range are ignored;
 *   unset or empty: all). A sub-device entry ("0.1") makes zeInit fail
 *   with ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: simdev has no tiles
 *   (GPUPOOL_LOG says so). Sysman, like NVML, lists every Intel device
 *   whatever the mask says. A device's UUID is simdev's 16 bytes (the
 *   text form "XPU-…" is the agent's, from the same bytes).
 * - Memory: zeMemAllocDevice and zeMemAllocShared are admitted atomically
 *   across processes against the device's 128 GiB (past it:
 *   ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY) and backed by lazy anonymous
 *   mappings, so copies move real bytes; zeMemAllocHost is not counted
 *   against any device. zeMemFree and zeMemFreeExt give it back; a killed
 *   process's memory goes back at the next look (simdev.h).
 * - Execution: a command queue, and an immediate command list, each has one
 *   work queue (simdev/queue.h: a worker thread) that runs its work in
 *   order: kernels, copies, event signals and waits. A kernel's device time
 *   is its argument 0, a uint64_t of nanoseconds set with
 *   zeKernelSetArgumentValue (gpuload's kernel: any module and kernel name
 *   load; an argument 0 of another size, or none, runs
 *   GPUPOOL_SIM_KERNEL_US, default 10 µs). The worker takes the device's
 *   turn (time-slicing between processes) and sleeps through its quanta.
 *   Regular command lists record until closed and run when
 *   zeCommandQueueExecuteCommandLists submits them (a list can be submitted
 *   again); work appended to an immediate list starts at once. Synchronous
 *   queues and immediate lists wait at submission.
 * - Sysman: devices with properties (driverVersion: GPUPOOL_SIM_INTEL_DRIVER,
 *   default "1.3.29735", the driver's own "1.3.BUILD" form), one HBM memory
 *   module (size, free), two engine groups (ALL and COMPUTE_ALL: active
 *   time accumulated from simdev's quanta, so delta activeTime / delta
 *   timestamp is the device's busy share over the interval), processes
 *   with their device memory. A lost device (simctl lose) answers
 *   ZE_RESULT_ERROR_DEVICE_LOST to memory and engine queries.
 *
 * Not simulated: fences, images, IPC, physical/virtual memory, sub-devices,
 * kernel timestamps, the DDI tables and layers. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "base/clock.h"
#include "include/gp-levelzero.h"
#include "simdev/queue.h"
#include "simdev/simdev.h"

#define MAGIC_DRIVER 0x5a445256u
#define MAGIC_DEVICE 0x5a444556u
#define MAGIC_CTX 0x5a435458u
#define MAGIC_QUEUE 0x5a515545u
#define MAGIC_LIST 0x5a4c5354u
#define MAGIC_POOL 0x5a504f4cu
#define MAGIC_EVENT 0x5a45564eu
#define MAGIC_MODULE 0x5a4d4f44u
#define MAGIC_KERNEL 0x5a4b524eu
#define MAGIC_MEM 0x5a4d454du
#define MAGIC_ENGINE 0x5a454e47u
#define MAGIC_DEAD 0xdeadbeefu

#define DRIVER_DEFAULT "1.3.29735"
#define ALLOC_BUCKETS 1024
#define INTEL_PCI_VENDOR 0x8086
#define MAX1550_PCI_DEVICE 0x0bd5
#define UTIL_WINDOW_MAX_NS 5000000000ULL

/* ---- objects --------------------------------------------------------- */

struct zdevice {
	uint32_t magic;
	int phys;               /* simdev index */
};

struct zcontext {
	uint32_t magic;
};

enum op_kind { OP_KERNEL, OP_SIGNAL, OP_WAIT, OP_COPY };

struct op {
	struct sim_op head;             /* .ns: OP_KERNEL's */
	enum op_kind kind;
	struct zevent *event;           /* OP_SIGNAL, OP_WAIT */
	void *dst;                      /* OP_COPY */
	const void *src;
	size_t count;
};

/* A worker running ops in submission order on one device (queue.h);
 * a synchronous one's submitter waits for what it submitted. */
struct exec {
	struct sim_queue *queue;
	bool synchronous;
};

struct zqueue {
	uint32_t magic;
	struct exec exec;
};

struct zlist {
	uint32_t magic;
	bool immediate;
	int phys;
	pthread_mutex_t lock;           /* ops, of a regular list */
	struct op *ops;
	size_t n, cap;
	bool closed;
	struct exec exec;               /* an immediate list's */
};

struct zevent {
	uint32_t magic;
	bool signaled;                  /* under event_lock */
	bool created;
};

struct zpool {
	uint32_t magic;
	uint32_t count;
	struct zevent *event;
};

struct zmodule {
	uint32_t magic;
};

struct zkernel {
	uint32_t magic;
	pthread_mutex_t lock;
	bool timed;                     /* argument 0 was set as a uint64_t */
	uint64_t ns;
};

struct zmem {
	uint32_t magic;
	int phys;
};

struct zengine {
	uint32_t magic;
	int phys;
	zes_engine_group_t type;
	uint64_t active_us, last_ns;    /* under engine_lock */
};

enum alloc_kind { ALLOC_DEVICE, ALLOC_SHARED, ALLOC_HOST };

struct zalloc {
	struct zalloc *next;
	uintptr_t ptr;
	void *base;                     /* of the mapping */
	size_t map_len, size;
	enum alloc_kind kind;
	int phys;                       /* not ALLOC_HOST */
	struct zcontext *ctx;
};

/* ---- state ----------------------------------------------------------- */

static struct sim *sim;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static ze_result_t init_result = ZE_RESULT_ERROR_UNINITIALIZED;
static bool core_ready, sysman_ready;

static struct { uint32_t magic; } driver = { MAGIC_DRIVER };

static struct zdevice intel[SIM_DEVICES_MAX];   /* every Intel device: Sysman's */
static int intel_count;
static struct zdevice *visible[SIM_DEVICES_MAX]; /* the core's, after the mask */
static int visible_count;
static struct zmem mem_module[SIM_DEVICES_MAX];
static struct zengine engine[SIM_DEVICES_MAX][2];

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct zalloc *allocs[ALLOC_BUCKETS];
static pthread_mutex_t event_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t event_cond;
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	va_list ap;

	if (!getenv("GPUPOOL_LOG"))
		return;
	va_start(ap, fmt);
	fputs("simdev: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static uint64_t default_kernel_ns(void)
{
	const char *us = getenv("GPUPOOL_SIM_KERNEL_US");

	return us && atol(us) > 0 ? (uint64_t)atol(us) * 1000 : 10000;
}

static const char *driver_version(void)
{
	const char *v = getenv("GPUPOOL_SIM_INTEL_DRIVER");

	return v && *v ? v : DRIVER_DEFAULT;
}

/* ZE_AFFINITY_MASK into visible[]: 0 or a ze_result_t. */
static ze_result_t mask_apply(void)
{
	const char *mask = getenv("ZE_AFFINITY_MASK");
	bool want[SIM_DEVICES_MAX] = { false };

	if (!mask || !*mask) {
		for (int i = 0; i < intel_count; i++)
			want[i] = true;
	} else {
		for (const char *p = mask; *p;) {
			size_t len = strcspn(p, ",");
			char entry[32];
			char *end;
			long index;

			snprintf(entry, sizeof(entry), "%.*s", (int)(len < 31 ? len : 31), p);
			index = strtol(entry, &end, 10);
			if (*end == '.') {
				say("ZE_AFFINITY_MASK=\"%s\" names sub-device %s: simdev has no "
				    "sub-devices (tiles); name whole devices (\"0,1\")", mask, entry);
				return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
			}
			if (end != entry && *end == '\0' && index >= 0 && index < intel_count)
				want[index] = true;
			p += len;
			if (*p == ',')
				p++;
		}
	}
	for (int i = 0; i < intel_count; i++)
		if (want[i])
			visible[visible_count++] = &intel[i];
	return ZE_RESULT_SUCCESS;
}

static void init_once_fn(void)
{
	char err[SIM_ERR_MAX];
	int phys[SIM_DEVICES_MAX];

	gp_monotonic_cond_init(&event_cond);
	if (sim_open(&sim, err, sizeof(err)) < 0) {
		say("%s", err);
		return;
	}
	intel_count = sim_vendor_devices(sim, "intel", phys, SIM_DEVICES_MAX);
	if (intel_count == 0) {
		say("GPUPOOL_SIM_DEVICES=\"%s\" has no Intel device (max1550-128g)",
		    getenv("GPUPOOL_SIM_DEVICES") ? getenv("GPUPOOL_SIM_DEVICES") : "");
		return;
	}
	for (int i = 0; i < intel_count; i++) {
		intel[i] = (struct zdevice){ MAGIC_DEVICE, phys[i] };
		mem_module[i] = (struct zmem){ MAGIC_MEM, phys[i] };
		engine[i][0] = (struct zengine){ .magic = MAGIC_ENGINE, .phys = phys[i],
						 .type = ZES_ENGINE_GROUP_ALL };
		engine[i][1] = (struct zengine){ .magic = MAGIC_ENGINE, .phys = phys[i],
						 .type = ZES_ENGINE_GROUP_COMPUTE_ALL };
	}
	init_result = mask_apply();
}

ze_result_t ZE_APICALL zeInit(ze_init_flags_t flags)
{
	if (flags & ~(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (flags == ZE_INIT_FLAG_VPU_ONLY)
		return ZE_RESULT_ERROR_UNINITIALIZED;   /* no VPU driver */
	pthread_once(&init_once, init_once_fn);
	if (init_result == ZE_RESULT_SUCCESS)
		core_ready = true;
	return init_result;
}

ze_result_t ZE_APICALL zesInit(zes_init_flags_t flags)
{
	(void)flags;
	pthread_once(&init_once, init_once_fn);
	if (sim && intel_count > 0)
		sysman_ready = true;
	return sysman_ready ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNINITIALIZED;
}

#define REQUIRE_CORE()                                          \
	do {                                                    \
		if (!core_ready)                                \
			return ZE_RESULT_ERROR_UNINITIALIZED;   \
	} while (0)

#define REQUIRE_SYSMAN()                                        \
	do {                                                    \
		if (!sysman_ready && !core_ready)               \
			return ZE_RESULT_ERROR_UNINITIALIZED;   \
	} while (0)

/* ---- drivers and devices --------------------------------------------- */

/* Both zeDriverGet and zesDriverGet: one driver. */
static ze_result_t driver_list(uint32_t *count, ze_driver_handle_t *out)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count == 0 || !out) {
		*count = 1;
		return ZE_RESULT_SUCCESS;
	}
	out[0] = (ze_driver_handle_t)&driver;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

static bool driver_valid(ze_driver_handle_t h)
{
	return h == (ze_driver_handle_t)&driver;
}

/* A device handle of either list (the core's are Sysman's too). */
static struct zdevice *device_of(ze_device_handle_t h)
{
	struct zdevice *d = (struct zdevice *)h;

	return d && d->magic == MAGIC_DEVICE ? d : NULL;
}

static ze_result_t device_list(struct zdevice *const *list, int n, uint32_t *count,
			       ze_device_handle_t *out)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count == 0 || !out) {
		*count = (uint32_t)n;
		return ZE_RESULT_SUCCESS;
	}
	if (*count > (uint32_t)n)
		*count = (uint32_t)n;
	for (uint32_t i = 0; i < *count; i++)
		out[i] = (ze_device_handle_t)list[i];
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers)
{
	REQUIRE_CORE();
	return driver_list(pCount, phDrivers);
}

/* "1.3.29735" as a uint32_t: major << 24 | minor << 16 | build (simdev's
 * encoding; Sysman's text is the reference). */
static uint32_t driver_version_number(void)
{
	unsigned major = 0, minor = 0, build = 0;

	sscanf(driver_version(), "%u.%u.%u", &major, &minor, &build);
	return (major & 0xff) << 24 | (minor & 0xff) << 16 | (build & 0xffff);
}

ze_result_t ZE_APICALL zeDriverGetProperties(ze_driver_handle_t hDriver,
					     ze_driver_properties_t *pDriverProperties)
{
	REQUIRE_CORE();
	if (!driver_valid(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pDriverProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	memset(pDriverProperties->uuid.id, 0, sizeof(pDriverProperties->uuid.id));
	memcpy(pDriverProperties->uuid.id, "gpupool-simdev", 14);
	pDriverProperties->driverVersion = driver_version_number();
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeDeviceGet(ze_driver_handle_t hDriver, uint32_t *pCount,
				   ze_device_handle_t *phDevices)
{
	REQUIRE_CORE();
	if (!driver_valid(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return device_list(visible, visible_count, pCount, phDevices);
}

static void properties_fill(const struct zdevice *d, ze_device_properties_t *p)
{
	const struct sim_model *m = sim_device_model(sim, d->phys);
	ze_structure_type_t stype = p->stype;
	void *next = p->pNext;

	memset(p, 0, sizeof(*p));
	p->stype = stype;
	p->pNext = next;
	p->type = ZE_DEVICE_TYPE_GPU;
	p->vendorId = INTEL_PCI_VENDOR;
	p->deviceId = MAX1550_PCI_DEVICE;
	p->coreClockRate = (uint32_t)(m->clock_khz / 1000);
	p->maxMemAllocSize = sim_mem_total(sim, d->phys);
	p->maxHardwareContexts = 64;
	p->numThreadsPerEU = 8;
	p->physicalEUSimdWidth = 16;
	p->numEUsPerSubslice = 8;
	p->numSubslicesPerSlice = (uint32_t)m->sms;
	p->numSlices = 1;
	p->timerResolution = 1;
	p->timestampValidBits = 64;
	p->kernelTimestampValidBits = 32;
	sim_device_uuid_bytes(sim, d->phys, p->uuid.id);
	snprintf(p->name, sizeof(p->name), "%s", m->name);
}

ze_result_t ZE_APICALL zeDeviceGetProperties(ze_device_handle_t hDevice,
					     ze_device_properties_t *pDeviceProperties)
{
	struct zdevice *d = device_of(hDevice);

	REQUIRE_SYSMAN();
	if (!d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pDeviceProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	properties_fill(d, pDeviceProperties);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeDeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t *pCount,
						   ze_device_memory_properties_t *pMemProperties)
{
	struct zdevice *d = device_of(hDevice);

	REQUIRE_CORE();
	if (!d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*pCount == 0 || !pMemProperties) {
		*pCount = 1;
		return ZE_RESULT_SUCCESS;
	}
	*pCount = 1;
	pMemProperties->flags = 0;
	pMemProperties->maxClockRate = 3200;
	pMemProperties->maxBusWidth = 8192;
	pMemProperties->totalSize = sim_mem_total(sim, d->phys);
	snprintf(pMemProperties->name, sizeof(pMemProperties->name), "HBM");
	return ZE_RESULT_SUCCESS;
}

/* ---- contexts -------------------------------------------------------- */

static struct zcontext *context_of(ze_context_handle_t h)
{
	struct zcontext *c = (struct zcontext *)h;

	return c && c->magic == MAGIC_CTX ? c : NULL;
}

ze_result_t ZE_APICALL zeContextCreate(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
				       ze_context_handle_t *phContext)
{
	struct zcontext *c;

	REQUIRE_CORE();
	if (!driver_valid(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !phContext)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!(c = calloc(1, sizeof(*c))))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	c->magic = MAGIC_CTX;
	*phContext = (ze_context_handle_t)c;
	return ZE_RESULT_SUCCESS;
}

static void allocs_free_of(struct zcontext *c);

ze_result_t ZE_APICALL zeContextDestroy(ze_context_handle_t hContext)
{
	struct zcontext *c = context_of(hContext);

	REQUIRE_CORE();
	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	allocs_free_of(c);
	c->magic = MAGIC_DEAD;
	free(c);
	return ZE_RESULT_SUCCESS;
}

/* ---- memory ---------------------------------------------------------- */

static size_t bucket(uintptr_t ptr)
{
	return (size_t)((ptr >> 12) * 0x9e3779b97f4a7c15ULL >> 54) & (ALLOC_BUCKETS - 1);
}

static void alloc_release(struct zalloc *a)
{
	munmap(a->base, a->map_len);
	if (a->kind != ALLOC_HOST)
		sim_mem_release(sim, a->phys, a->size);
	free(a);
}

/* A new allocation of `size` bytes aligned to `alignment` (0: any),
 * counted on device phys unless host memory. */
static ze_result_t alloc_new(struct zcontext *c, enum alloc_kind kind, int phys, size_t size,
			     size_t alignment, void **pptr)
{
	struct zalloc *a;
	size_t align = alignment > 4096 ? alignment : 4096;

	if (!pptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (size == 0)
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	if (alignment & (alignment - 1))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	if (kind != ALLOC_HOST && sim_mem_reserve(sim, phys, size) < 0)
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	if (!(a = calloc(1, sizeof(*a))))
		goto undo_reserve;
	a->map_len = size + align - 4096;
	a->base = mmap(NULL, a->map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->base == MAP_FAILED)
		goto undo_alloc;
	a->ptr = ((uintptr_t)a->base + align - 1) & ~(uintptr_t)(align - 1);
	a->size = size;
	a->kind = kind;
	a->phys = phys;
	a->ctx = c;
	pthread_mutex_lock(&alloc_lock);
	a->next = allocs[bucket(a->ptr)];
	allocs[bucket(a->ptr)] = a;
	pthread_mutex_unlock(&alloc_lock);
	*pptr = (void *)a->ptr;
	return ZE_RESULT_SUCCESS;
undo_alloc:
	free(a);
undo_reserve:
	if (kind != ALLOC_HOST)
		sim_mem_release(sim, phys, size);
	return kind == ALLOC_HOST ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
				  : ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
}

ze_result_t ZE_APICALL zeMemAllocDevice(ze_context_handle_t hContext,
					const ze_device_mem_alloc_desc_t *device_desc, size_t size,
					size_t alignment, ze_device_handle_t hDevice, void **pptr)
{
	struct zcontext *c = context_of(hContext);
	struct zdevice *d = device_of(hDevice);

	REQUIRE_CORE();
	if (!c || !d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!device_desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return alloc_new(c, ALLOC_DEVICE, d->phys, size, alignment, pptr);
}

/* Shared memory with a device is counted on it (it may migrate there
 * whole); without one (hDevice NULL) it lives on the host. */
ze_result_t ZE_APICALL zeMemAllocShared(ze_context_handle_t hContext,
					const ze_device_mem_alloc_desc_t *device_desc,
					const ze_host_mem_alloc_desc_t *host_desc, size_t size,
					size_t alignment, ze_device_handle_t hDevice, void **pptr)
{
	struct zcontext *c = context_of(hContext);
	struct zdevice *d = device_of(hDevice);

	REQUIRE_CORE();
	if (!c || (hDevice && !d))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!device_desc || !host_desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return alloc_new(c, d ? ALLOC_SHARED : ALLOC_HOST, d ? d->phys : -1, size, alignment,
			 pptr);
}

ze_result_t ZE_APICALL zeMemAllocHost(ze_context_handle_t hContext,
				      const ze_host_mem_alloc_desc_t *host_desc, size_t size,
				      size_t alignment, void **pptr)
{
	struct zcontext *c = context_of(hContext);

	REQUIRE_CORE();
	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!host_desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return alloc_new(c, ALLOC_HOST, -1, size, alignment, pptr);
}

/* Takes the allocation at ptr out of the table; NULL when none. */
static struct zalloc *alloc_take(struct zcontext *c, uintptr_t ptr)
{
	struct zalloc **link, *a = NULL;

	pthread_mutex_lock(&alloc_lock);
	for (link = &allocs[bucket(ptr)]; *link; link = &(*link)->next)
		if ((*link)->ptr == ptr && (*link)->ctx == c) {
			a = *link;
			*link = a->next;
			break;
		}
	pthread_mutex_unlock(&alloc_lock);
	return a;
}

static void allocs_free_of(struct zcontext *c)
{
	struct zalloc *mine = NULL;

	pthread_mutex_lock(&alloc_lock);
	for (size_t b = 0; b < ALLOC_BUCKETS; b++)
		for (struct zalloc **link = &allocs[b]; *link;) {
			struct zalloc *a = *link;

			if (a->ctx != c) {
				link = &a->next;
				continue;
			}
			*link = a->next;
			a->next = mine;
			mine = a;
		}
	pthread_mutex_unlock(&alloc_lock);
	while (mine) {
		struct zalloc *next = mine->next;

		alloc_release(mine);
		mine = next;
	}
}

ze_result_t ZE_APICALL zeMemFree(ze_context_handle_t hContext, void *ptr)
{
	struct zcontext *c = context_of(hContext);
	struct zalloc *a;

	REQUIRE_CORE();
	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!ptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!(a = alloc_take(c, (uintptr_t)ptr)))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	alloc_release(a);
	return ZE_RESULT_SUCCESS;
}

/* Both policies free at once: simdev's kernels never touch the memory. */
ze_result_t ZE_APICALL zeMemFreeExt(ze_context_handle_t hContext,
				    const ze_memory_free_ext_desc_t *pMemFreeDesc, void *ptr)
{
	if (!pMemFreeDesc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (pMemFreeDesc->freePolicy & ~(ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE |
					 ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	return zeMemFree(hContext, ptr);
}

/* ---- execution ------------------------------------------------------- */

static void event_set(struct zevent *e, bool signaled)
{
	pthread_mutex_lock(&event_lock);
	e->signaled = signaled;
	pthread_cond_broadcast(&event_cond);
	pthread_mutex_unlock(&event_lock);
}

/* Waits for e up to timeout ns (UINT64_MAX: for ever): true if signaled. */
static bool event_wait(struct zevent *e, uint64_t timeout)
{
	struct timespec deadline;
	bool signaled;

	if (timeout != UINT64_MAX)
		sim_deadline_after(&deadline, timeout);
	pthread_mutex_lock(&event_lock);
	while (!e->signaled) {
		if (timeout == UINT64_MAX)
			pthread_cond_wait(&event_cond, &event_lock);
		else if (pthread_cond_timedwait(&event_cond, &event_lock, &deadline) == ETIMEDOUT)
			break;
	}
	signaled = e->signaled;
	pthread_mutex_unlock(&event_lock);
	return signaled;
}

/* What an op does after its device time, on the worker (queue.h). */
static void op_run(const void *arg)
{
	const struct op *op = arg;

	switch (op->kind) {
	case OP_KERNEL:
		break;
	case OP_SIGNAL:
		event_set(op->event, true);
		break;
	case OP_WAIT:
		event_wait(op->event, UINT64_MAX);
		break;
	case OP_COPY:
		memmove(op->dst, op->src, op->count);
		break;
	}
}

static int exec_start(struct exec *x, int phys, bool synchronous)
{
	x->synchronous = synchronous;
	return sim_queue_new(sim, phys, sizeof(struct op), op_run, &x->queue);
}

/* Runs what is queued, stops the worker. */
static void exec_stop(struct exec *x)
{
	x->queue = sim_queue_free(x->queue);
}

/* Waits until the worker passed seq, up to timeout ns: true if it did. */
static bool exec_wait(struct exec *x, uint64_t seq, uint64_t timeout)
{
	return sim_queue_wait(x->queue, seq, timeout) == 0;
}

/* Queues ops[0..n) (n >= 1) in order; returns the last one's sequence
 * number (0 when out of memory: nothing is queued then). */
static uint64_t exec_submit(struct exec *x, const struct op *ops, size_t n)
{
	uint64_t seq;

	if (sim_queue_submit(x->queue, ops, n, NULL, &seq) < 0)
		return 0;
	if (x->synchronous)
		exec_wait(x, seq, UINT64_MAX);
	return seq;
}

static uint64_t exec_submitted(struct exec *x)
{
	return sim_queue_submitted(x->queue);
}

/* ---- command queues -------------------------------------------------- */

static struct zqueue *queue_of(ze_command_queue_handle_t h)
{
	struct zqueue *q = (struct zqueue *)h;

	return q && q->magic == MAGIC_QUEUE ? q : NULL;
}

ze_result_t ZE_APICALL zeCommandQueueCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					    const ze_command_queue_desc_t *desc,
					    ze_command_queue_handle_t *phCommandQueue)
{
	struct zdevice *d = device_of(hDevice);
	struct zqueue *q;

	REQUIRE_CORE();
	if (!context_of(hContext) || !d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !phCommandQueue)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!(q = calloc(1, sizeof(*q))))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	if (exec_start(&q->exec, d->phys, desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) < 0) {
		free(q);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	q->magic = MAGIC_QUEUE;
	*phCommandQueue = (ze_command_queue_handle_t)q;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeCommandQueueDestroy(ze_command_queue_handle_t hCommandQueue)
{
	struct zqueue *q = queue_of(hCommandQueue);

	REQUIRE_CORE();
	if (!q)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	exec_stop(&q->exec);
	q->magic = MAGIC_DEAD;
	free(q);
	return ZE_RESULT_SUCCESS;
}

static struct zlist *list_of(ze_command_list_handle_t h)
{
	struct zlist *l = (struct zlist *)h;

	return l && l->magic == MAGIC_LIST ? l : NULL;
}

ze_result_t ZE_APICALL zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t hCommandQueue,
							 uint32_t numCommandLists,
							 ze_command_list_handle_t *phCommandLists,
							 ze_fence_handle_t hFence)
{
	struct zqueue *q = queue_of(hCommandQueue);

	REQUIRE_CORE();
	if (!q)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!phCommandLists)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (numCommandLists == 0)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	if (hFence)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;     /* no fences here */
	for (uint32_t i = 0; i < numCommandLists; i++) {
		struct zlist *l = list_of(phCommandLists[i]);

		if (!l || l->immediate)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		if (!l->closed)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	for (uint32_t i = 0; i < numCommandLists; i++) {
		struct zlist *l = list_of(phCommandLists[i]);
		uint64_t seq;

		pthread_mutex_lock(&l->lock);
		seq = l->n ? exec_submit(&q->exec, l->ops, l->n) : 1;
		pthread_mutex_unlock(&l->lock);
		if (seq == 0)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeCommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue,
						 uint64_t timeout)
{
	struct zqueue *q = queue_of(hCommandQueue);

	REQUIRE_CORE();
	if (!q)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return exec_wait(&q->exec, exec_submitted(&q->exec), timeout) ? ZE_RESULT_SUCCESS
								       : ZE_RESULT_NOT_READY;
}

/* ---- command lists --------------------------------------------------- */

static ze_result_t list_new(struct zdevice *d, bool immediate, bool synchronous,
			    ze_command_list_handle_t *ret)
{
	struct zlist *l = calloc(1, sizeof(*l));

	if (!l)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	l->immediate = immediate;
	l->phys = d->phys;
	pthread_mutex_init(&l->lock, NULL);
	if (immediate && exec_start(&l->exec, d->phys, synchronous) < 0) {
		free(l);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	l->magic = MAGIC_LIST;
	*ret = (ze_command_list_handle_t)l;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeCommandListCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					   const ze_command_list_desc_t *desc,
					   ze_command_list_handle_t *phCommandList)
{
	struct zdevice *d = device_of(hDevice);

	REQUIRE_CORE();
	if (!context_of(hContext) || !d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !phCommandList)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return list_new(d, false, false, phCommandList);
}

ze_result_t ZE_APICALL zeCommandListCreateImmediate(ze_context_handle_t hContext,
						    ze_device_handle_t hDevice,
						    const ze_command_queue_desc_t *altdesc,
						    ze_command_list_handle_t *phCommandList)
{
	struct zdevice *d = device_of(hDevice);

	REQUIRE_CORE();
	if (!context_of(hContext) || !d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!altdesc || !phCommandList)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return list_new(d, true, altdesc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
			phCommandList);
}

ze_result_t ZE_APICALL zeCommandListClose(ze_command_list_handle_t hCommandList)
{
	struct zlist *l = list_of(hCommandList);

	REQUIRE_CORE();
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&l->lock);
	l->closed = true;
	pthread_mutex_unlock(&l->lock);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeCommandListReset(ze_command_list_handle_t hCommandList)
{
	struct zlist *l = list_of(hCommandList);

	REQUIRE_CORE();
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&l->lock);
	l->n = 0;
	l->closed = false;
	pthread_mutex_unlock(&l->lock);
	if (l->immediate)
		exec_wait(&l->exec, exec_submitted(&l->exec), UINT64_MAX);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeCommandListDestroy(ze_command_list_handle_t hCommandList)
{
	struct zlist *l = list_of(hCommandList);

	REQUIRE_CORE();
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (l->immediate)
		exec_stop(&l->exec);
	l->magic = MAGIC_DEAD;
	free(l->ops);
	free(l);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeCommandListHostSynchronize(ze_command_list_handle_t hCommandList,
						    uint64_t timeout)
{
	struct zlist *l = list_of(hCommandList);

	REQUIRE_CORE();
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!l->immediate)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return exec_wait(&l->exec, exec_submitted(&l->exec), timeout) ? ZE_RESULT_SUCCESS
								       : ZE_RESULT_NOT_READY;
}

static struct zevent *event_of(ze_event_handle_t h)
{
	struct zevent *e = (struct zevent *)h;

	return e && e->magic == MAGIC_EVENT && e->created ? e : NULL;
}

/* Appends ops[0..n) to l, bracketed by waits for wait[] and a signal of
 * `signal`: queued on an immediate list, recorded on a regular one. */
static ze_result_t list_append(struct zlist *l, const struct op *ops, size_t n,
			       ze_event_handle_t signal, uint32_t waits, ze_event_handle_t *wait)
{
	size_t total = n + waits + (signal ? 1 : 0), k = 0;
	struct op *all;
	ze_result_t r = ZE_RESULT_SUCCESS;

	if (waits && !wait)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (signal && !event_of(signal))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	for (uint32_t i = 0; i < waits; i++)
		if (!event_of(wait[i]))
			return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!(all = calloc(total ? total : 1, sizeof(*all))))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	for (uint32_t i = 0; i < waits; i++)
		all[k++] = (struct op){ .kind = OP_WAIT, .event = event_of(wait[i]) };
	for (size_t i = 0; i < n; i++)
		all[k++] = ops[i];
	if (signal)
		all[k++] = (struct op){ .kind = OP_SIGNAL, .event = event_of(signal) };
	if (l->immediate) {
		if (total && exec_submit(&l->exec, all, total) == 0)
			r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		free(all);
		return r;
	}
	pthread_mutex_lock(&l->lock);
	if (l->closed) {
		r = ZE_RESULT_ERROR_INVALID_ARGUMENT;   /* reset it first */
	} else if (l->n + total > l->cap) {
		size_t cap = (l->n + total) * 2;
		struct op *grown = realloc(l->ops, cap * sizeof(*grown));

		if (grown) {
			l->ops = grown;
			l->cap = cap;
		} else {
			r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		}
	}
	if (r == ZE_RESULT_SUCCESS) {
		memcpy(l->ops + l->n, all, total * sizeof(*all));
		l->n += total;
	}
	pthread_mutex_unlock(&l->lock);
	free(all);
	return r;
}

static struct zkernel *kernel_of(ze_kernel_handle_t h)
{
	struct zkernel *k = (struct zkernel *)h;

	return k && k->magic == MAGIC_KERNEL ? k : NULL;
}

/* The kernel's launch as an op: its device time, captured now. */
static struct op kernel_op(struct zkernel *k)
{
	struct op op = { .head.ns = default_kernel_ns(), .kind = OP_KERNEL };

	pthread_mutex_lock(&k->lock);
	if (k->timed)
		op.head.ns = k->ns;
	pthread_mutex_unlock(&k->lock);
	return op;
}

static ze_result_t launch(ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
			  const ze_group_count_t *groups, ze_event_handle_t signal, uint32_t waits,
			  ze_event_handle_t *wait)
{
	struct zlist *l = list_of(hCommandList);
	struct zkernel *k = kernel_of(hKernel);
	struct op op;

	REQUIRE_CORE();
	if (!l || !k)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!groups)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	op = kernel_op(k);
	return list_append(l, &op, 1, signal, waits, wait);
}

ze_result_t ZE_APICALL zeCommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
						       ze_kernel_handle_t hKernel,
						       const ze_group_count_t *pLaunchFuncArgs,
						       ze_event_handle_t hSignalEvent,
						       uint32_t numWaitEvents,
						       ze_event_handle_t *phWaitEvents)
{
	return launch(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent, numWaitEvents,
		      phWaitEvents);
}

ze_result_t ZE_APICALL zeCommandListAppendLaunchCooperativeKernel(
	ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
	const ze_group_count_t *pLaunchFuncArgs, ze_event_handle_t hSignalEvent,
	uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
	return launch(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent, numWaitEvents,
		      phWaitEvents);
}

/* The group counts live in device-visible memory, read when the kernel
 * runs; simdev's kernels do not need them. */
ze_result_t ZE_APICALL zeCommandListAppendLaunchKernelIndirect(
	ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
	const ze_group_count_t *pLaunchArgumentsBuffer, ze_event_handle_t hSignalEvent,
	uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
	return launch(hCommandList, hKernel, pLaunchArgumentsBuffer, hSignalEvent, numWaitEvents,
		      phWaitEvents);
}

/* *pCountBuffer kernels of phKernels run (read at append: simdev's device
 * memory is the host's). */
ze_result_t ZE_APICALL zeCommandListAppendLaunchMultipleKernelsIndirect(
	ze_command_list_handle_t hCommandList, uint32_t numKernels, ze_kernel_handle_t *phKernels,
	const uint32_t *pCountBuffer, const ze_group_count_t *pLaunchArgumentsBuffer,
	ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
	struct zlist *l = list_of(hCommandList);
	struct op *ops;
	uint32_t n;
	ze_result_t r;

	REQUIRE_CORE();
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!phKernels || !pCountBuffer || !pLaunchArgumentsBuffer)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	n = *pCountBuffer < numKernels ? *pCountBuffer : numKernels;
	for (uint32_t i = 0; i < n; i++)
		if (!kernel_of(phKernels[i]))
			return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!(ops = calloc(n ? n : 1, sizeof(*ops))))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	for (uint32_t i = 0; i < n; i++)
		ops[i] = kernel_op(kernel_of(phKernels[i]));
	r = list_append(l, ops, n, hSignalEvent, numWaitEvents, phWaitEvents);
	free(ops);
	return r;
}

ze_result_t ZE_APICALL zeCommandListAppendSignalEvent(ze_command_list_handle_t hCommandList,
						      ze_event_handle_t hEvent)
{
	struct zlist *l = list_of(hCommandList);

	REQUIRE_CORE();
	if (!l || !event_of(hEvent))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return list_append(l, NULL, 0, hEvent, 0, NULL);
}

/* In order already: a barrier is its waits and its signal. */
ze_result_t ZE_APICALL zeCommandListAppendBarrier(ze_command_list_handle_t hCommandList,
						  ze_event_handle_t hSignalEvent,
						  uint32_t numWaitEvents,
						  ze_event_handle_t *phWaitEvents)
{
	struct zlist *l = list_of(hCommandList);

	REQUIRE_CORE();
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return list_append(l, NULL, 0, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t ZE_APICALL zeCommandListAppendMemoryCopy(ze_command_list_handle_t hCommandList,
						     void *dstptr, const void *srcptr, size_t size,
						     ze_event_handle_t hSignalEvent,
						     uint32_t numWaitEvents,
						     ze_event_handle_t *phWaitEvents)
{
	struct zlist *l = list_of(hCommandList);
	struct op op = { .kind = OP_COPY, .dst = dstptr, .src = srcptr, .count = size };

	REQUIRE_CORE();
	if (!l)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!dstptr || !srcptr)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return list_append(l, &op, 1, hSignalEvent, numWaitEvents, phWaitEvents);
}

/* ---- events ---------------------------------------------------------- */

static struct zpool *pool_of(ze_event_pool_handle_t h)
{
	struct zpool *p = (struct zpool *)h;

	return p && p->magic == MAGIC_POOL ? p : NULL;
}

ze_result_t ZE_APICALL zeEventPoolCreate(ze_context_handle_t hContext,
					 const ze_event_pool_desc_t *desc, uint32_t numDevices,
					 ze_device_handle_t *phDevices,
					 ze_event_pool_handle_t *phEventPool)
{
	struct zpool *p;

	REQUIRE_CORE();
	(void)numDevices;
	(void)phDevices;
	if (!context_of(hContext))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !phEventPool)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->count == 0)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	if (!(p = calloc(1, sizeof(*p))) || !(p->event = calloc(desc->count, sizeof(*p->event)))) {
		free(p);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	p->magic = MAGIC_POOL;
	p->count = desc->count;
	for (uint32_t i = 0; i < p->count; i++)
		p->event[i].magic = MAGIC_EVENT;
	*phEventPool = (ze_event_pool_handle_t)p;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeEventPoolDestroy(ze_event_pool_handle_t hEventPool)
{
	struct zpool *p = pool_of(hEventPool);

	REQUIRE_CORE();
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	p->magic = MAGIC_DEAD;
	free(p->event);
	free(p);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeEventCreate(ze_event_pool_handle_t hEventPool, const ze_event_desc_t *desc,
				     ze_event_handle_t *phEvent)
{
	struct zpool *p = pool_of(hEventPool);

	REQUIRE_CORE();
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !phEvent)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->index >= p->count)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&event_lock);
	p->event[desc->index].created = true;
	p->event[desc->index].signaled = false;
	pthread_mutex_unlock(&event_lock);
	*phEvent = (ze_event_handle_t)&p->event[desc->index];
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeEventDestroy(ze_event_handle_t hEvent)
{
	struct zevent *e = event_of(hEvent);

	REQUIRE_CORE();
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	e->created = false;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeEventHostSignal(ze_event_handle_t hEvent)
{
	struct zevent *e = event_of(hEvent);

	REQUIRE_CORE();
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	event_set(e, true);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeEventHostReset(ze_event_handle_t hEvent)
{
	struct zevent *e = event_of(hEvent);

	REQUIRE_CORE();
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	event_set(e, false);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeEventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout)
{
	struct zevent *e = event_of(hEvent);

	REQUIRE_CORE();
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return event_wait(e, timeout) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL zeEventQueryStatus(ze_event_handle_t hEvent)
{
	return zeEventHostSynchronize(hEvent, 0);
}

/* ---- modules and kernels --------------------------------------------- */

ze_result_t ZE_APICALL zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
				      const ze_module_desc_t *desc, ze_module_handle_t *phModule,
				      ze_module_build_log_handle_t *phBuildLog)
{
	struct zmodule *m;

	REQUIRE_CORE();
	if (!context_of(hContext) || !device_of(hDevice))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !phModule)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (phBuildLog)
		*phBuildLog = NULL;
	if (!(m = calloc(1, sizeof(*m))))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	m->magic = MAGIC_MODULE;
	*phModule = (ze_module_handle_t)m;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeModuleDestroy(ze_module_handle_t hModule)
{
	struct zmodule *m = (struct zmodule *)hModule;

	REQUIRE_CORE();
	if (!m || m->magic != MAGIC_MODULE)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	m->magic = MAGIC_DEAD;
	free(m);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
				      ze_kernel_handle_t *phKernel)
{
	struct zmodule *m = (struct zmodule *)hModule;
	struct zkernel *k;

	REQUIRE_CORE();
	if (!m || m->magic != MAGIC_MODULE)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !phKernel || !desc->pKernelName)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!*desc->pKernelName)
		return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
	if (!(k = calloc(1, sizeof(*k))))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	k->magic = MAGIC_KERNEL;
	pthread_mutex_init(&k->lock, NULL);
	*phKernel = (ze_kernel_handle_t)k;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeKernelDestroy(ze_kernel_handle_t hKernel)
{
	struct zkernel *k = kernel_of(hKernel);

	REQUIRE_CORE();
	if (!k)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	k->magic = MAGIC_DEAD;
	free(k);
	return ZE_RESULT_SUCCESS;
}

/* Argument 0, a uint64_t, is the kernel's device time in ns. */
ze_result_t ZE_APICALL zeKernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t argIndex,
						size_t argSize, const void *pArgValue)
{
	struct zkernel *k = kernel_of(hKernel);

	REQUIRE_CORE();
	if (!k)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (argIndex >= 64)
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
	if (argIndex != 0)
		return ZE_RESULT_SUCCESS;
	pthread_mutex_lock(&k->lock);
	k->timed = argSize == sizeof(uint64_t) && pArgValue;
	if (k->timed)
		memcpy(&k->ns, pArgValue, sizeof(k->ns));
	pthread_mutex_unlock(&k->lock);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeKernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t groupSizeX,
					    uint32_t groupSizeY, uint32_t groupSizeZ)
{
	REQUIRE_CORE();
	if (!kernel_of(hKernel))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!groupSizeX || !groupSizeY || !groupSizeZ)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}

/* ---- Sysman ---------------------------------------------------------- */

ze_result_t ZE_APICALL zesDriverGet(uint32_t *pCount, zes_driver_handle_t *phDrivers)
{
	REQUIRE_SYSMAN();
	return driver_list(pCount, phDrivers);
}

ze_result_t ZE_APICALL zesDeviceGet(zes_driver_handle_t hDriver, uint32_t *pCount,
				    zes_device_handle_t *phDevices)
{
	struct zdevice *all[SIM_DEVICES_MAX];

	REQUIRE_SYSMAN();
	if (!driver_valid(hDriver))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	for (int i = 0; i < intel_count; i++)
		all[i] = &intel[i];
	return device_list(all, intel_count, pCount, phDevices);
}

/* Sysman's index of simdev device phys. */
static int intel_index(int phys)
{
	for (int i = 0; i < intel_count; i++)
		if (intel[i].phys == phys)
			return i;
	return 0;
}

ze_result_t ZE_APICALL zesDeviceGetProperties(zes_device_handle_t hDevice,
					      zes_device_properties_t *pProperties)
{
	struct zdevice *d = device_of(hDevice);

	REQUIRE_SYSMAN();
	if (!d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pProperties->core.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
	pProperties->core.pNext = NULL;
	properties_fill(d, &pProperties->core);
	pProperties->numSubdevices = 0;
	snprintf(pProperties->serialNumber, ZES_STRING_PROPERTY_SIZE, "SIMDEV%04d",
		 intel_index(d->phys));
	snprintf(pProperties->boardNumber, ZES_STRING_PROPERTY_SIZE, "simdev");
	snprintf(pProperties->brandName, ZES_STRING_PROPERTY_SIZE, "Intel(R) Data Center GPU Max");
	snprintf(pProperties->modelName, ZES_STRING_PROPERTY_SIZE, "%s",
		 sim_device_model(sim, d->phys)->name);
	snprintf(pProperties->vendorName, ZES_STRING_PROPERTY_SIZE, "Intel(R) Corporation");
	snprintf(pProperties->driverVersion, ZES_STRING_PROPERTY_SIZE, "%s", driver_version());
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zesDeviceEnumMemoryModules(zes_device_handle_t hDevice, uint32_t *pCount,
						  zes_mem_handle_t *phMemory)
{
	struct zdevice *d = device_of(hDevice);

	REQUIRE_SYSMAN();
	if (!d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*pCount == 0 || !phMemory) {
		*pCount = 1;
		return ZE_RESULT_SUCCESS;
	}
	*pCount = 1;
	phMemory[0] = (zes_mem_handle_t)&mem_module[intel_index(d->phys)];
	return ZE_RESULT_SUCCESS;
}

static struct zmem *mem_of(zes_mem_handle_t h)
{
	struct zmem *m = (struct zmem *)h;

	return m && m->magic == MAGIC_MEM ? m : NULL;
}

ze_result_t ZE_APICALL zesMemoryGetProperties(zes_mem_handle_t hMemory,
					      zes_mem_properties_t *pProperties)
{
	struct zmem *m = mem_of(hMemory);

	REQUIRE_SYSMAN();
	if (!m)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pProperties->type = ZES_MEM_TYPE_HBM2E;
	pProperties->onSubdevice = 0;
	pProperties->subdeviceId = 0;
	pProperties->location = ZES_MEM_LOC_DEVICE;
	pProperties->physicalSize = sim_mem_total(sim, m->phys);
	pProperties->busWidth = 8192;
	pProperties->numChannels = 8;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zesMemoryGetState(zes_mem_handle_t hMemory, zes_mem_state_t *pState)
{
	struct zmem *m = mem_of(hMemory);
	uint64_t total, used;

	REQUIRE_SYSMAN();
	if (!m)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pState)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (sim_device_lost(sim, m->phys))
		return ZE_RESULT_ERROR_DEVICE_LOST;
	total = sim_mem_total(sim, m->phys);
	used = sim_mem_used(sim, m->phys);
	pState->health = ZES_MEM_HEALTH_OK;
	pState->size = total;
	pState->free = used < total ? total - used : 0;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zesDeviceEnumEngineGroups(zes_device_handle_t hDevice, uint32_t *pCount,
						 zes_engine_handle_t *phEngine)
{
	struct zdevice *d = device_of(hDevice);
	int i;

	REQUIRE_SYSMAN();
	if (!d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*pCount == 0 || !phEngine) {
		*pCount = 2;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > 2)
		*pCount = 2;
	i = intel_index(d->phys);
	for (uint32_t k = 0; k < *pCount; k++)
		phEngine[k] = (zes_engine_handle_t)&engine[i][k];
	return ZE_RESULT_SUCCESS;
}

static struct zengine *engine_of(zes_engine_handle_t h)
{
	struct zengine *e = (struct zengine *)h;

	return e && e->magic == MAGIC_ENGINE ? e : NULL;
}

ze_result_t ZE_APICALL zesEngineGetProperties(zes_engine_handle_t hEngine,
					      zes_engine_properties_t *pProperties)
{
	struct zengine *e = engine_of(hEngine);

	REQUIRE_SYSMAN();
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pProperties->type = e->type;
	pProperties->onSubdevice = 0;
	pProperties->subdeviceId = 0;
	return ZE_RESULT_SUCCESS;
}

/* The counters are this process's: active time grows by the device's
 * busy share over each interval between calls (simdev's quanta), so that
 * deltas between two calls give the utilization over that interval. */
ze_result_t ZE_APICALL zesEngineGetActivity(zes_engine_handle_t hEngine, zes_engine_stats_t *pStats)
{
	struct zengine *e = engine_of(hEngine);
	uint64_t now = sim_now_ns(), window;

	REQUIRE_SYSMAN();
	if (!e)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pStats)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (sim_device_lost(sim, e->phys))
		return ZE_RESULT_ERROR_DEVICE_LOST;
	pthread_mutex_lock(&engine_lock);
	if (e->last_ns) {
		window = now - e->last_ns;
		if (window > 0) {
			unsigned pct = sim_device_utilization(
				sim, e->phys, window < UTIL_WINDOW_MAX_NS ? window : UTIL_WINDOW_MAX_NS);

			e->active_us += window / 1000 * pct / 100;
		}
	}
	e->last_ns = now;
	pStats->activeTime = e->active_us;
	pStats->timestamp = now / 1000;
	pthread_mutex_unlock(&engine_lock);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zesDeviceProcessesGetState(zes_device_handle_t hDevice, uint32_t *pCount,
						  zes_process_state_t *pProcesses)
{
	struct zdevice *d = device_of(hDevice);
	struct sim_proc_info procs[SIM_PROCS_MAX];
	int n;

	REQUIRE_SYSMAN();
	if (!d)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	n = sim_device_procs(sim, d->phys, procs, SIM_PROCS_MAX);
	if (n < 0)
		return ZE_RESULT_ERROR_UNKNOWN;
	if (n > SIM_PROCS_MAX)
		n = SIM_PROCS_MAX;
	if (*pCount == 0 || !pProcesses) {
		*pCount = (uint32_t)n;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount < (uint32_t)n) {
		*pCount = (uint32_t)n;
		return ZE_RESULT_ERROR_INVALID_SIZE;
	}
	for (int i = 0; i < n; i++) {
		pProcesses[i].processId = (uint32_t)procs[i].pid;
		pProcesses[i].memSize = procs[i].mem_bytes;
		pProcesses[i].sharedSize = 0;
		pProcesses[i].engines = ZES_ENGINE_TYPE_FLAG_COMPUTE;
	}
	*pCount = (uint32_t)n;
	return ZE_RESULT_SUCCESS;
}
