/* runtime.c — simdev's libruntime.so: the runtime layer of Huawei's CANN,
 * beneath ACL, for simulated Ascend NPUs.
 *
 * The real stack is layered: libascendcl.so (ACL, acl.c here) calls the
 * runtime, and operators (aclnn, torch_npu's inductor kernels) launch
 * straight into it with rtKernelLaunch and rtKernelLaunchWithFlag. So this
 * library holds what a process has of an NPU: the devices it opened, their
 * queues and workers, streams, events, kernels and device memory; ACL's
 * calls for those are this library's. A launch through either layer goes
 * into one device's queue.
 *
 * Devices are those of GPUPOOL_SIM_DEVICES that are Ascend, of which
 * ASCEND_RT_VISIBLE_DEVICES shows some (visible.h), numbered 0..n-1 as the
 * user's device ids (ACL's are the same). The current device is per
 * thread. rtSetDevice opens a device (counted), rtDeviceReset undoes one;
 * the last one drains its queue, stops its worker and frees the device
 * memory the process still holds there.
 *
 * What is real: device memory (anonymous mappings, counted in the shared
 * state, so every process and DCMI see it; ACL_ERROR_RT_MEMORY_ALLOCATION
 * when the device is full), streams, events, and time. A kernel occupies
 * its device for the time its arguments ask: the first 8 bytes of the
 * arguments (rtKernelLaunch's args, rtKernelLaunchWithFlag's
 * argsInfo->args) are a uint64_t of nanoseconds of device time (any
 * pointer the process can read: on simdev device memory is host memory;
 * fewer than 8 bytes: GPUPOOL_SIM_KERNEL_US, default 10 us), taking turns
 * with other processes in quanta (sim_device_run). What is not: kernels
 * compute nothing; any stub function launches.
 *
 * Launches are asynchronous as on a real NPU: each opened device has one
 * work queue (simdev/queue.h: its worker executes kernels and event
 * records in submission order across the device's streams); a stream, an event or the device is
 * finished when the worker has passed its last operation. Errors are the
 * runtime's external codes (ACL_ERROR_RT_*, gp-ascend.h), which ACL passes
 * on. Only the rt* names are exported (libruntime.map). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "include/gp-ascend.h"
#include "simdev/ascend/visible.h"
#include "simdev/queue.h"
#include "simdev/simdev.h"

#define MAGIC_STREAM 0x4153544du
#define MAGIC_EVENT 0x4145564eu
#define MAGIC_DEAD 0xdeadbeefu
#define ALLOC_BUCKETS 1024

struct npu;

struct stream {
	uint32_t magic;
	struct npu *npu;
	_Atomic uint64_t last_seq;      /* of its last operation (sim_queue_submit's `last`) */
};

struct event {
	uint32_t magic;
	struct npu *npu;                /* of its last record; NULL: never recorded */
	uint64_t seq;                   /* operation that records it */
};

/* A device this process opened: its queue. Lives from the first
 * rtSetDevice to the last rtDeviceReset. */
struct npu {
	int dev;                        /* simdev index */
	int opened;                     /* SetDevice calls not yet reset; under global_lock */
	struct sim_queue *q;            /* kernels (their device time) and event records (none) */
	struct stream default_stream;
};

struct alloc {                          /* a device allocation (rtMalloc) */
	struct alloc *next;
	uintptr_t ptr;
	size_t size;
	int dev;
};

static struct sim *sim;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static rtError_t init_result = ACL_ERROR_RT_NO_DEVICE;

/* User device id -> simdev index, and the logical id (DCMI's) of each. */
static int visible[SIM_DEVICES_MAX];
static int visible_logical[SIM_DEVICES_MAX];
static int visible_count;

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static struct npu *npus[SIM_DEVICES_MAX];       /* by user device id; under global_lock */
static struct alloc *allocs[ALLOC_BUCKETS];     /* under global_lock */


static __thread int current = -1;               /* the thread's device id */

/* ---- start-up: the devices this process sees ------------------------ */

static void init_once_fn(void)
{
	visible_count = sim_ascend_start(&sim, visible, visible_logical);
	if (visible_count > 0)
		init_result = RT_ERROR_NONE;
}

static rtError_t ready(void)
{
	pthread_once(&init_once, init_once_fn);
	return init_result;
}

#define REQUIRE_READY()                         \
	do {                                    \
		rtError_t r_ = ready();         \
		if (r_ != RT_ERROR_NONE)        \
			return r_;              \
	} while (0)

/* ---- the device's queue ---------------------------------------------- */

static uint64_t default_kernel_ns(void)
{
	const char *us = getenv("GPUPOOL_SIM_KERNEL_US");

	return us && atol(us) > 0 ? (uint64_t)atol(us) * 1000 : 10000;
}

/* Queues an operation of ns of device time (0: an event record) on
 * stream s; returns its sequence number, 0 when out of host memory. */
static uint64_t op_submit(struct stream *s, uint64_t ns)
{
	uint64_t seq = 0;

	if (sim_queue_submit(s->npu->q, &(struct sim_op){ .ns = ns }, 1, &s->last_seq, &seq) < 0)
		return 0;
	return seq;
}

static void wait_for(struct npu *d, uint64_t seq)
{
	sim_queue_wait(d->q, seq, SIM_QUEUE_FOREVER);
}

static struct npu *npu_new(int dev)
{
	struct npu *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->dev = dev;
	d->default_stream = (struct stream){ .magic = MAGIC_STREAM, .npu = d };
	if (sim_queue_new(sim, dev, sizeof(struct sim_op), NULL, &d->q) < 0) {
		free(d);
		return NULL;
	}
	return d;
}

static void allocs_free_on(int dev);

/* Drains the queue, stops the worker, frees the device's memory. Called
 * under global_lock. */
static void npu_free(struct npu *d)
{
	d->q = sim_queue_free(d->q);
	allocs_free_on(d->dev);
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
static struct stream *stream_of(rtStream_t stream)
{
	struct stream *s = stream;

	if (!s) {
		struct npu *d = npu_current();

		return d ? &d->default_stream : NULL;
	}
	return s->magic == MAGIC_STREAM ? s : NULL;
}

/* ---- devices -------------------------------------------------------- */

rtError_t rtGetDeviceCount(int32_t *count)
{
	if (!count)
		return ACL_ERROR_RT_PARAM_INVALID;
	REQUIRE_READY();
	*count = visible_count;
	return RT_ERROR_NONE;
}

rtError_t rtSetDevice(int32_t device)
{
	rtError_t r = RT_ERROR_NONE;

	REQUIRE_READY();
	if (device < 0 || device >= visible_count)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	if (sim_device_lost(sim, visible[device]))
		return ACL_ERROR_RT_NO_DEVICE;
	pthread_mutex_lock(&global_lock);
	if (!npus[device])
		npus[device] = npu_new(visible[device]);
	if (npus[device])
		npus[device]->opened++;
	else
		r = ACL_ERROR_RT_INTERNAL_ERROR;
	pthread_mutex_unlock(&global_lock);
	if (r == RT_ERROR_NONE)
		current = device;
	return r;
}

rtError_t rtDeviceReset(int32_t device)
{
	REQUIRE_READY();
	if (device < 0 || device >= visible_count)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	pthread_mutex_lock(&global_lock);
	if (npus[device] && --npus[device]->opened == 0) {
		npu_free(npus[device]);
		npus[device] = NULL;
	}
	pthread_mutex_unlock(&global_lock);
	if (current == device)
		current = -1;
	return RT_ERROR_NONE;
}

rtError_t rtGetDevice(int32_t *device)
{
	REQUIRE_READY();
	if (!device)
		return ACL_ERROR_RT_PARAM_INVALID;
	if (!npu_current())
		return ACL_ERROR_RT_CONTEXT_NULL;
	*device = current;
	return RT_ERROR_NONE;
}

rtError_t rtDeviceSynchronize(void)
{
	struct npu *d;

	REQUIRE_READY();
	d = npu_current();
	if (!d)
		return ACL_ERROR_RT_CONTEXT_NULL;
	sim_queue_drain(d->q);
	return RT_ERROR_NONE;
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

/* Device memory of the current device; the type (HBM, DDR, policy bits)
 * does not matter on simdev. */
rtError_t rtMalloc(void **devPtr, uint64_t size, rtMemType_t type)
{
	struct npu *d;
	struct alloc *a;
	void *p;

	(void)type;
	REQUIRE_READY();
	if (!devPtr || size == 0)
		return ACL_ERROR_RT_PARAM_INVALID;
	d = npu_current();
	if (!d)
		return ACL_ERROR_RT_CONTEXT_NULL;
	a = malloc(sizeof(*a));
	if (!a)
		return ACL_ERROR_RT_INTERNAL_ERROR;
	if (sim_mem_reserve(sim, d->dev, size) != 0) {
		free(a);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		sim_mem_release(sim, d->dev, size);
		free(a);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	*a = (struct alloc){ .ptr = (uintptr_t)p, .size = (size_t)size, .dev = d->dev };
	pthread_mutex_lock(&global_lock);
	a->next = allocs[bucket(a->ptr)];
	allocs[bucket(a->ptr)] = a;
	pthread_mutex_unlock(&global_lock);
	*devPtr = p;
	return RT_ERROR_NONE;
}

rtError_t rtFree(void *devPtr)
{
	struct alloc **link, *a = NULL;

	REQUIRE_READY();
	if (!devPtr)
		return ACL_ERROR_RT_PARAM_INVALID;
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
	return RT_ERROR_NONE;
}

/* ---- streams and events ---------------------------------------------- */

rtError_t rtStreamCreate(rtStream_t *stream, int32_t priority)
{
	struct npu *d;
	struct stream *s;

	(void)priority;
	REQUIRE_READY();
	if (!stream)
		return ACL_ERROR_RT_PARAM_INVALID;
	d = npu_current();
	if (!d)
		return ACL_ERROR_RT_CONTEXT_NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ACL_ERROR_RT_INTERNAL_ERROR;
	*s = (struct stream){ .magic = MAGIC_STREAM, .npu = d };
	*stream = s;
	return RT_ERROR_NONE;
}

/* Waits for the last operation queued on s. */
static void stream_wait(struct stream *s)
{
	wait_for(s->npu, atomic_load(&s->last_seq));
}

rtError_t rtStreamDestroy(rtStream_t stream)
{
	struct stream *s = stream;

	REQUIRE_READY();
	if (!s || s->magic != MAGIC_STREAM || s == &s->npu->default_stream)
		return ACL_ERROR_RT_PARAM_INVALID;
	stream_wait(s);
	s->magic = MAGIC_DEAD;
	free(s);
	return RT_ERROR_NONE;
}

rtError_t rtStreamSynchronize(rtStream_t stream)
{
	struct stream *s;

	REQUIRE_READY();
	s = stream_of(stream);
	if (!s)
		return stream ? ACL_ERROR_RT_PARAM_INVALID : ACL_ERROR_RT_CONTEXT_NULL;
	stream_wait(s);
	return RT_ERROR_NONE;
}

rtError_t rtEventCreate(rtEvent_t *event)
{
	struct event *e;

	REQUIRE_READY();
	if (!event)
		return ACL_ERROR_RT_PARAM_INVALID;
	if (!npu_current())
		return ACL_ERROR_RT_CONTEXT_NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ACL_ERROR_RT_INTERNAL_ERROR;
	e->magic = MAGIC_EVENT;
	*event = e;
	return RT_ERROR_NONE;
}

rtError_t rtEventDestroy(rtEvent_t event)
{
	struct event *e = event;

	REQUIRE_READY();
	if (!e || e->magic != MAGIC_EVENT)
		return ACL_ERROR_RT_PARAM_INVALID;
	if (e->npu)
		wait_for(e->npu, e->seq);       /* the worker may still pass it */
	e->magic = MAGIC_DEAD;
	free(e);
	return RT_ERROR_NONE;
}

rtError_t rtEventRecord(rtEvent_t event, rtStream_t stream)
{
	struct event *e = event;
	struct stream *s;
	uint64_t seq;

	REQUIRE_READY();
	if (!e || e->magic != MAGIC_EVENT)
		return ACL_ERROR_RT_PARAM_INVALID;
	s = stream_of(stream);
	if (!s)
		return stream ? ACL_ERROR_RT_PARAM_INVALID : ACL_ERROR_RT_CONTEXT_NULL;
	seq = op_submit(s, 0);
	if (!seq)
		return ACL_ERROR_RT_INTERNAL_ERROR;
	e->npu = s->npu;
	e->seq = seq;
	return RT_ERROR_NONE;
}

rtError_t rtEventQueryStatus(rtEvent_t event, rtEventStatus_t *status)
{
	struct event *e = event;

	REQUIRE_READY();
	if (!e || e->magic != MAGIC_EVENT || !status)
		return ACL_ERROR_RT_PARAM_INVALID;
	*status = !e->npu || sim_queue_done(e->npu->q, e->seq) ? RT_EVENT_RECORDED : RT_EVENT_INIT;
	return RT_ERROR_NONE;
}

rtError_t rtEventSynchronize(rtEvent_t event)
{
	struct event *e = event;

	REQUIRE_READY();
	if (!e || e->magic != MAGIC_EVENT)
		return ACL_ERROR_RT_PARAM_INVALID;
	if (e->npu)
		wait_for(e->npu, e->seq);
	return RT_ERROR_NONE;
}

/* ---- launches --------------------------------------------------------- */

static rtError_t launch(const void *stub, uint32_t blockDim, const void *args, uint32_t argsSize,
			rtStream_t stream)
{
	struct stream *s;
	uint64_t ns = default_kernel_ns();

	REQUIRE_READY();
	if (!stub || blockDim == 0 || (argsSize && !args))
		return ACL_ERROR_RT_PARAM_INVALID;
	s = stream_of(stream);
	if (!s)
		return stream ? ACL_ERROR_RT_PARAM_INVALID : ACL_ERROR_RT_CONTEXT_NULL;
	if (argsSize >= sizeof(ns))
		memcpy(&ns, args, sizeof(ns));
	return op_submit(s, ns) ? RT_ERROR_NONE : ACL_ERROR_RT_INTERNAL_ERROR;
}

rtError_t rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize,
			 rtSmDesc_t *smDesc, rtStream_t stream)
{
	(void)smDesc;
	return launch(stubFunc, blockDim, args, argsSize, stream);
}

rtError_t rtKernelLaunchWithFlag(const void *stubFunc, uint32_t blockDim, rtArgsEx_t *argsInfo,
				 rtSmDesc_t *smDesc, rtStream_t stream, uint32_t flag)
{
	(void)smDesc;
	(void)flag;
	if (!argsInfo)
		return ACL_ERROR_RT_PARAM_INVALID;
	return launch(stubFunc, blockDim, argsInfo->args, argsInfo->argsSize, stream);
}
