/* acl.c — simdev's libascendcl.so: Huawei's ACL runtime for simulated
 * Ascend NPUs.
 *
 * Programs load it as the real one (linked, or dlopen + dlsym as torch_npu's
 * FunctionLoader does) and see the Ascend devices of GPUPOOL_SIM_DEVICES
 * (simdev.h: only this vendor's, in DCMI's logical order), of which
 * ASCEND_RT_VISIBLE_DEVICES (logical ids, comma separated) shows some,
 * renumbered 0..n-1 as the user's device ids. The subset of ACL in
 * src/include/gp-ascend.h is answered with ACL's own error codes.
 *
 * What is real: device memory (anonymous mappings, counted in the shared
 * state, so every process and DCMI see it; ACL_ERROR_RT_MEMORY_ALLOCATION
 * when the device is full), physical memory handles (aclrtMallocPhysical),
 * streams, events, and time. A kernel launched with aclrtLaunchKernel
 * occupies its device for the time its arguments ask: the first 8 bytes of
 * argsData are a uint64_t of nanoseconds of device time (any pointer the
 * process can read: on simdev device memory is host memory; fewer than 8
 * bytes: GPUPOOL_SIM_KERNEL_US, default 10 µs), taking turns with other
 * processes in quanta (sim_device_run). What is not: kernels compute
 * nothing; any binary handle and kernel name give a function handle.
 *
 * Launches are asynchronous as on a real NPU: each device opened by
 * aclrtSetDevice has one worker thread that executes its queue (kernels,
 * event records) in submission order across its streams; a stream, an
 * event or the device is finished when the worker has passed its last
 * operation. The current device is per thread, as ACL's context is.
 * aclrtResetDevice undoes one aclrtSetDevice; the last one drains the
 * queue, stops the worker and frees the device memory the process still
 * holds there. Only the ACL names are exported (libascendcl.map). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "include/gp-ascend.h"
#include "simdev/simdev.h"

#define MAGIC_STREAM 0x4153544du
#define MAGIC_EVENT 0x4145564eu
#define MAGIC_PHYS 0x41504859u
#define MAGIC_DEAD 0xdeadbeefu
#define ALLOC_BUCKETS 1024

struct npu;

struct stream {
	uint32_t magic;
	struct npu *npu;
	uint64_t last_seq;              /* of its last operation; under npu->lock */
};

struct event {
	uint32_t magic;
	struct npu *npu;                /* of its last record; NULL: never recorded */
	uint64_t seq;                   /* operation that records it */
};

enum op_kind { OP_KERNEL, OP_EVENT };

struct op {
	struct op *next;
	enum op_kind kind;
	uint64_t seq;
	uint64_t ns;                    /* OP_KERNEL */
};

/* A device this process opened: its queue and worker. Lives from the
 * first aclrtSetDevice to the last aclrtResetDevice. */
struct npu {
	int dev;                        /* simdev index */
	int opened;                     /* SetDevice calls not yet reset; under global_lock */
	pthread_mutex_t lock;           /* guards the queue and counters below */
	pthread_cond_t work, done;
	struct op *head, *tail;
	uint64_t submitted, completed;
	bool stopping;
	pthread_t worker;
	struct stream default_stream;
};

struct phys {                           /* an aclrtMallocPhysical handle */
	uint32_t magic;
	int dev;
	size_t size;
};

struct alloc {                          /* a device allocation (aclrtMalloc*) */
	struct alloc *next;
	uintptr_t ptr;
	size_t size;
	int dev;
};

static struct sim *sim;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static aclError init_result = ACL_ERROR_RT_NO_DEVICE;
static atomic_bool acl_initialized;

/* User device id -> simdev index, and the logical id (DCMI's) of each. */
static int visible[SIM_DEVICES_MAX];
static int visible_logical[SIM_DEVICES_MAX];
static int visible_count;

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static struct npu *npus[SIM_DEVICES_MAX];       /* by user device id; under global_lock */
static struct alloc *allocs[ALLOC_BUCKETS];     /* under global_lock */

static __thread int current = -1;               /* the thread's user device id */

/* ---- start-up: the devices this process sees ------------------------ */

/* ASCEND_RT_VISIBLE_DEVICES: logical ids, comma separated; the list ends
 * at the first entry that names no device (as CUDA_VISIBLE_DEVICES). */
static void visible_init(void)
{
	int ascend[SIM_DEVICES_MAX];
	int n = sim_vendor_devices(sim, "ascend", ascend, SIM_DEVICES_MAX);
	const char *p = getenv("ASCEND_RT_VISIBLE_DEVICES");

	if (!p) {
		for (visible_count = 0; visible_count < n; visible_count++) {
			visible[visible_count] = ascend[visible_count];
			visible_logical[visible_count] = visible_count;
		}
		return;
	}
	while (visible_count < n) {
		char *end;
		long id = strtol(p, &end, 10);

		if (end == p || id < 0 || id >= n || (*end != ',' && *end != '\0'))
			break;
		for (int i = 0; i < visible_count; i++)
			if (visible_logical[i] == id)
				return; /* a repeated id ends the list */
		visible_logical[visible_count] = (int)id;
		visible[visible_count++] = ascend[id];
		if (*end == '\0')
			break;
		p = end + 1;
	}
}

static void init_once_fn(void)
{
	char err[SIM_ERR_MAX];

	if (sim_open(&sim, err, sizeof(err)) != 0) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: %s\n", err);
		return;
	}
	visible_init();
	if (visible_count == 0) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: no Ascend device visible (GPUPOOL_SIM_DEVICES, "
					"ASCEND_RT_VISIBLE_DEVICES)\n");
		return;
	}
	init_result = ACL_SUCCESS;
}

static aclError ready(void)
{
	pthread_once(&init_once, init_once_fn);
	return init_result;
}

#define REQUIRE_READY()                         \
	do {                                    \
		aclError r_ = ready();          \
		if (r_ != ACL_SUCCESS)          \
			return r_;              \
	} while (0)

/* ---- the worker: executing a device's queue ------------------------- */

static uint64_t default_kernel_ns(void)
{
	const char *us = getenv("GPUPOOL_SIM_KERNEL_US");

	return us && atol(us) > 0 ? (uint64_t)atol(us) * 1000 : 10000;
}

static void *worker_main(void *arg)
{
	struct npu *d = arg;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct op *op;

		while (!d->head && !d->stopping)
			pthread_cond_wait(&d->work, &d->lock);
		if (!d->head)
			break;
		op = d->head;
		d->head = op->next;
		if (!d->head)
			d->tail = NULL;
		pthread_mutex_unlock(&d->lock);
		if (op->kind == OP_KERNEL)
			sim_device_run(sim, d->dev, op->ns);
		pthread_mutex_lock(&d->lock);
		d->completed = op->seq;
		pthread_cond_broadcast(&d->done);
		free(op);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* Queues an operation on stream s; returns its sequence number, 0 when
 * out of host memory. */
static uint64_t op_submit(struct stream *s, enum op_kind kind, uint64_t ns)
{
	struct npu *d = s->npu;
	struct op *op = calloc(1, sizeof(*op));
	uint64_t seq;

	if (!op)
		return 0;
	op->kind = kind;
	op->ns = ns;
	pthread_mutex_lock(&d->lock);
	seq = op->seq = ++d->submitted;
	s->last_seq = seq;
	if (d->tail)
		d->tail->next = op;
	else
		d->head = op;
	d->tail = op;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
	return seq;
}

static void wait_for(struct npu *d, uint64_t seq)
{
	pthread_mutex_lock(&d->lock);
	while (d->completed < seq)
		pthread_cond_wait(&d->done, &d->lock);
	pthread_mutex_unlock(&d->lock);
}

static bool is_done(struct npu *d, uint64_t seq)
{
	bool done;

	pthread_mutex_lock(&d->lock);
	done = d->completed >= seq;
	pthread_mutex_unlock(&d->lock);
	return done;
}

static struct npu *npu_new(int dev)
{
	struct npu *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->dev = dev;
	d->default_stream = (struct stream){ .magic = MAGIC_STREAM, .npu = d };
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->work, NULL);
	pthread_cond_init(&d->done, NULL);
	if (pthread_create(&d->worker, NULL, worker_main, d) != 0) {
		free(d);
		return NULL;
	}
	sim_context_add(sim, dev);
	return d;
}

static void allocs_free_on(int dev);

/* Drains the queue, stops the worker, frees the device's memory. Called
 * under global_lock. */
static void npu_free(struct npu *d)
{
	pthread_mutex_lock(&d->lock);
	d->stopping = true;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->worker, NULL);
	allocs_free_on(d->dev);
	sim_context_remove(sim, d->dev);
	d->default_stream.magic = MAGIC_DEAD;
	free(d);
}

/* The calling thread's device, opened. */
static struct npu *npu_current(void)
{
	struct npu *d;

	if (current < 0)
		return NULL;
	pthread_mutex_lock(&global_lock);
	d = npus[current];
	pthread_mutex_unlock(&global_lock);
	return d;
}

/* The stream a call names: NULL is the current device's default stream. */
static struct stream *stream_of(aclrtStream stream)
{
	struct stream *s = stream;

	if (!s) {
		struct npu *d = npu_current();

		return d ? &d->default_stream : NULL;
	}
	return s->magic == MAGIC_STREAM ? s : NULL;
}

/* ---- init and devices ----------------------------------------------- */

aclError aclInit(const char *configPath)
{
	(void)configPath;
	REQUIRE_READY();
	if (atomic_exchange(&acl_initialized, true))
		return ACL_ERROR_REPEAT_INITIALIZE;
	return ACL_SUCCESS;
}

aclError aclFinalize(void)
{
	if (!atomic_exchange(&acl_initialized, false))
		return ACL_ERROR_UNINITIALIZE;
	return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
	if (!count)
		return ACL_ERROR_INVALID_PARAM;
	REQUIRE_READY();
	*count = (uint32_t)visible_count;
	return ACL_SUCCESS;
}

aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId)
{
	REQUIRE_READY();
	if (!logicDevId)
		return ACL_ERROR_INVALID_PARAM;
	if (userDevid < 0 || userDevid >= visible_count)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	*logicDevId = visible_logical[userDevid];
	return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId)
{
	aclError r = ACL_SUCCESS;

	REQUIRE_READY();
	if (deviceId < 0 || deviceId >= visible_count)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	if (sim_device_lost(sim, visible[deviceId]))
		return ACL_ERROR_RT_NO_DEVICE;
	pthread_mutex_lock(&global_lock);
	if (!npus[deviceId])
		npus[deviceId] = npu_new(visible[deviceId]);
	if (npus[deviceId])
		npus[deviceId]->opened++;
	else
		r = ACL_ERROR_BAD_ALLOC;
	pthread_mutex_unlock(&global_lock);
	if (r == ACL_SUCCESS)
		current = deviceId;
	return r;
}

aclError aclrtResetDevice(int32_t deviceId)
{
	REQUIRE_READY();
	if (deviceId < 0 || deviceId >= visible_count)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	pthread_mutex_lock(&global_lock);
	if (npus[deviceId] && --npus[deviceId]->opened == 0) {
		npu_free(npus[deviceId]);
		npus[deviceId] = NULL;
	}
	pthread_mutex_unlock(&global_lock);
	if (current == deviceId)
		current = -1;
	return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId)
{
	REQUIRE_READY();
	if (!deviceId)
		return ACL_ERROR_INVALID_PARAM;
	if (!npu_current())
		return ACL_ERROR_RT_CONTEXT_NULL;
	*deviceId = current;
	return ACL_SUCCESS;
}

const char *aclrtGetSocName(void)
{
	if (ready() != ACL_SUCCESS)
		return NULL;
	return sim_device_model(sim, visible[current >= 0 ? current : 0])->name;
}

/* ---- memory ---------------------------------------------------------- */

static size_t bucket(uintptr_t p)
{
	return (size_t)((p >> 12) * 0x9e3779b97f4a7c15ULL >> 54) & (ALLOC_BUCKETS - 1);
}

static void alloc_unmap(struct alloc *a)
{
	munmap((void *)a->ptr, a->size);
	sim_mem_release(sim, a->dev, a->size);
	free(a);
}

/* Frees what this process still holds on simdev device dev. Under
 * global_lock. */
static void allocs_free_on(int dev)
{
	for (size_t b = 0; b < ALLOC_BUCKETS; b++) {
		struct alloc **link = &allocs[b];

		while (*link) {
			struct alloc *a = *link;

			if (a->dev != dev) {
				link = &a->next;
				continue;
			}
			*link = a->next;
			alloc_unmap(a);
		}
	}
}

static aclError device_alloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	struct npu *d;
	struct alloc *a;
	void *p;

	REQUIRE_READY();
	if (!devPtr || size == 0 || (unsigned)policy > 0x1fffffu)
		return ACL_ERROR_INVALID_PARAM;
	d = npu_current();
	if (!d)
		return ACL_ERROR_RT_CONTEXT_NULL;
	a = malloc(sizeof(*a));
	if (!a)
		return ACL_ERROR_BAD_ALLOC;
	if (sim_mem_reserve(sim, d->dev, size) != 0) {
		free(a);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED) {
		sim_mem_release(sim, d->dev, size);
		free(a);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	*a = (struct alloc){ .ptr = (uintptr_t)p, .size = size, .dev = d->dev };
	pthread_mutex_lock(&global_lock);
	a->next = allocs[bucket(a->ptr)];
	allocs[bucket(a->ptr)] = a;
	pthread_mutex_unlock(&global_lock);
	*devPtr = p;
	return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return device_alloc(devPtr, size, policy);
}

aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return device_alloc(devPtr, size, policy);
}

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return device_alloc(devPtr, size, policy);
}

aclError aclrtFree(void *devPtr)
{
	struct alloc **link, *a = NULL;

	REQUIRE_READY();
	if (!devPtr)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&global_lock);
	for (link = &allocs[bucket((uintptr_t)devPtr)]; *link; link = &(*link)->next)
		if ((*link)->ptr == (uintptr_t)devPtr) {
			a = *link;
			*link = a->next;
			break;
		}
	pthread_mutex_unlock(&global_lock);
	if (!a)
		return ACL_ERROR_RT_MEMORY_FREE;
	alloc_unmap(a);
	return ACL_SUCCESS;
}

/* Host memory: page-locked on a real host; not device memory. */
aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	REQUIRE_READY();
	if (!hostPtr || size == 0)
		return ACL_ERROR_INVALID_PARAM;
	*hostPtr = malloc(size);
	return *hostPtr ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}

aclError aclrtFreeHost(void *hostPtr)
{
	REQUIRE_READY();
	if (!hostPtr)
		return ACL_ERROR_INVALID_PARAM;
	free(hostPtr);
	return ACL_SUCCESS;
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
			     const aclrtPhysicalMemProp *prop, uint64_t flags)
{
	struct phys *h;
	int dev;

	REQUIRE_READY();
	if (!handle || !prop || size == 0 || flags != 0 ||
	    prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
		return ACL_ERROR_INVALID_PARAM;
	if (prop->location.id >= (uint32_t)visible_count)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	dev = visible[prop->location.id];
	h = malloc(sizeof(*h));
	if (!h)
		return ACL_ERROR_BAD_ALLOC;
	if (sim_mem_reserve(sim, dev, size) != 0) {
		free(h);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	*h = (struct phys){ .magic = MAGIC_PHYS, .dev = dev, .size = size };
	*handle = h;
	return ACL_SUCCESS;
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
	struct phys *h = handle;

	REQUIRE_READY();
	if (!h || h->magic != MAGIC_PHYS)
		return ACL_ERROR_INVALID_PARAM;
	h->magic = MAGIC_DEAD;
	sim_mem_release(sim, h->dev, h->size);
	free(h);
	return ACL_SUCCESS;
}

/* The 910 series keeps its memory in HBM, the 310P in DDR: the other kind
 * reads as none, as on the real chips. */
static bool attr_is_hbm(aclrtMemAttr attr)
{
	switch (attr) {
	case ACL_HBM_MEM:
	case ACL_HBM_MEM_HUGE:
	case ACL_HBM_MEM_NORMAL:
	case ACL_HBM_MEM_P2P_HUGE:
	case ACL_HBM_MEM_P2P_NORMAL:
	case ACL_HBM_MEM_HUGE1G:
	case ACL_HBM_MEM_P2P_HUGE1G:
		return true;
	default:
		return false;
	}
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_bytes, size_t *total)
{
	struct npu *d;
	uint64_t all, used;
	bool hbm;

	REQUIRE_READY();
	if (!free_bytes || !total || (unsigned)attr > ACL_HBM_MEM_P2P_HUGE1G)
		return ACL_ERROR_INVALID_PARAM;
	d = npu_current();
	if (!d)
		return ACL_ERROR_RT_CONTEXT_NULL;
	hbm = strstr(sim_device_model(sim, d->dev)->name, "910") != NULL;
	if (attr_is_hbm(attr) != hbm) {
		*free_bytes = *total = 0;
		return ACL_SUCCESS;
	}
	all = sim_mem_total(sim, d->dev);
	used = sim_mem_used(sim, d->dev);
	*total = (size_t)all;
	*free_bytes = (size_t)(used < all ? all - used : 0);
	return ACL_SUCCESS;
}

/* ---- streams, events, launches ---------------------------------------- */

aclError aclrtCreateStream(aclrtStream *stream)
{
	struct npu *d;
	struct stream *s;

	REQUIRE_READY();
	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	d = npu_current();
	if (!d)
		return ACL_ERROR_RT_CONTEXT_NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ACL_ERROR_BAD_ALLOC;
	*s = (struct stream){ .magic = MAGIC_STREAM, .npu = d };
	*stream = s;
	return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
	struct stream *s = stream;
	uint64_t seq;

	REQUIRE_READY();
	if (!s || s->magic != MAGIC_STREAM || s == &s->npu->default_stream)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&s->npu->lock);
	seq = s->last_seq;
	pthread_mutex_unlock(&s->npu->lock);
	wait_for(s->npu, seq);
	s->magic = MAGIC_DEAD;
	free(s);
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	struct stream *s;
	uint64_t seq;

	REQUIRE_READY();
	s = stream_of(stream);
	if (!s)
		return stream ? ACL_ERROR_INVALID_PARAM : ACL_ERROR_RT_CONTEXT_NULL;
	pthread_mutex_lock(&s->npu->lock);
	seq = s->last_seq;
	pthread_mutex_unlock(&s->npu->lock);
	wait_for(s->npu, seq);
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void)
{
	struct npu *d;
	uint64_t seq;

	REQUIRE_READY();
	d = npu_current();
	if (!d)
		return ACL_ERROR_RT_CONTEXT_NULL;
	pthread_mutex_lock(&d->lock);
	seq = d->submitted;
	pthread_mutex_unlock(&d->lock);
	wait_for(d, seq);
	return ACL_SUCCESS;
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
	struct event *e;

	REQUIRE_READY();
	if (!event)
		return ACL_ERROR_INVALID_PARAM;
	if (!npu_current())
		return ACL_ERROR_RT_CONTEXT_NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ACL_ERROR_BAD_ALLOC;
	e->magic = MAGIC_EVENT;
	*event = e;
	return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
	struct event *e = event;

	REQUIRE_READY();
	if (!e || e->magic != MAGIC_EVENT)
		return ACL_ERROR_INVALID_PARAM;
	if (e->npu)
		wait_for(e->npu, e->seq);       /* the worker may still pass it */
	e->magic = MAGIC_DEAD;
	free(e);
	return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	struct event *e = event;
	struct stream *s;
	uint64_t seq;

	REQUIRE_READY();
	if (!e || e->magic != MAGIC_EVENT)
		return ACL_ERROR_INVALID_PARAM;
	s = stream_of(stream);
	if (!s)
		return stream ? ACL_ERROR_INVALID_PARAM : ACL_ERROR_RT_CONTEXT_NULL;
	seq = op_submit(s, OP_EVENT, 0);
	if (!seq)
		return ACL_ERROR_BAD_ALLOC;
	e->npu = s->npu;
	e->seq = seq;
	return ACL_SUCCESS;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
	struct event *e = event;

	REQUIRE_READY();
	if (!e || e->magic != MAGIC_EVENT || !status)
		return ACL_ERROR_INVALID_PARAM;
	*status = !e->npu || is_done(e->npu, e->seq) ? ACL_EVENT_RECORDED_STATUS_COMPLETE
						    : ACL_EVENT_RECORDED_STATUS_NOT_READY;
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	struct event *e = event;

	REQUIRE_READY();
	if (!e || e->magic != MAGIC_EVENT)
		return ACL_ERROR_INVALID_PARAM;
	if (e->npu)
		wait_for(e->npu, e->seq);
	return ACL_SUCCESS;
}

/* Any binary and kernel name: simdev's kernels only take time. */
aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
				aclrtFuncHandle *funcHandle)
{
	static const char spin[] = "simdev-kernel";

	(void)binHandle;
	REQUIRE_READY();
	if (!kernelName || !funcHandle)
		return ACL_ERROR_INVALID_PARAM;
	*funcHandle = (aclrtFuncHandle)spin;
	return ACL_SUCCESS;
}

aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t blockDim, const void *argsData,
			   size_t argsSize, aclrtStream stream)
{
	struct stream *s;
	uint64_t ns = default_kernel_ns();

	REQUIRE_READY();
	if (!funcHandle || blockDim == 0 || (argsSize && !argsData))
		return ACL_ERROR_INVALID_PARAM;
	s = stream_of(stream);
	if (!s)
		return stream ? ACL_ERROR_INVALID_PARAM : ACL_ERROR_RT_CONTEXT_NULL;
	if (argsSize >= sizeof(ns))
		memcpy(&ns, argsData, sizeof(ns));
	return op_submit(s, OP_KERNEL, ns) ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}
