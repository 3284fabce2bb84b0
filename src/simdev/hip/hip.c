/* hip.c — simdev's libamdhip64.so.6: a HIP runtime for simulated AMD
 * Instinct and Hygon DCU devices.
 *
 * Programs link it or dlopen it as they would ROCm's; its functions carry
 * the real library's symbol versions (hip_4.2 … hip_6.1, libamdhip64.map),
 * so a binary built against ROCm binds them. It sees the AMD devices of
 * $GPUPOOL_SIM_DEVICES, then the Hygon ones (hip-ids.h), and shows those
 * that ROCR_VISIBLE_DEVICES (indices or GPU-/DCU-<unique id>) and then
 * HIP_VISIBLE_DEVICES (indices among those; CUDA_VISIBLE_DEVICES when it
 * is unset or empty) leave, numbered 0, 1, … in the order listed.
 *
 * What is real: device memory (lazy anonymous mappings) admitted across
 * processes through simdev's shared state, streams, events, and time.
 * Simulated kernels: a launch carries how long it runs — the kernel's
 * first argument is a uint64_t of nanoseconds of device time (args[0] /
 * kernelParams[0] points at it, or the first 8 bytes of the `extra`
 * buffer); a launch without arguments runs GPUPOOL_SIM_KERNEL_US (default
 * 10 µs). Kernels compute nothing. Any non-NULL function address is a
 * kernel; hipModuleLoadData accepts any image and hipModuleGetFunction
 * any name.
 *
 * Execution is asynchronous, as on the real runtime: each device this process
 * uses has one work queue (simdev/queue.h: a worker thread) that executes
 * its operations (kernels, event records, stream-ordered frees) in
 * submission order across all of its streams, taking turns on the device
 * with other processes (sim_device_run). A stream or event is done when the
 * worker has passed its last operation. Graphs: the explicit API only
 * (hipGraphCreate, hipGraphAddKernelNode, hipGraphInstantiate); a launch
 * queues its kernels in order. hipGetProcAddress answers from the table of
 * exported functions below, with their versions; hipGetDeviceProperties
 * (the plain symbol) fills the R0000 layout and hipGetDevicePropertiesR0600
 * the 6.0 one (name, uuid and totalGlobalMem; nothing past them is
 * written). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "include/gp-hip.h"
#include "simdev/hip/hip-ids.h"
#include "simdev/queue.h"
#include "simdev/simdev.h"

/* Every non-static function here is a runtime entry point; its prototype
 * is in include/gp-hip.h where gpupool uses it, else the HIP ABI. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define MAGIC_STREAM 0x48535431u
#define MAGIC_EVENT 0x48455631u
#define MAGIC_MODULE 0x484d4f31u
#define MAGIC_FUNC 0x48464e31u
#define MAGIC_GRAPH 0x48475231u
#define MAGIC_EXEC 0x48455831u
#define MAGIC_POOL 0x48504f31u
#define MAGIC_DEAD 0xdeadbeefu

#define PITCH_ALIGN 512
#define ALLOC_BUCKETS 4096
#define STREAM_PER_THREAD ((hipStream_t)2)      /* hipStreamPerThread */

/* ---- objects --------------------------------------------------------- */

struct hdev;

struct ihipStream_t {
	uint32_t magic;
	struct hdev *dev;
	_Atomic uint64_t last_seq;      /* of its last operation (sim_queue_submit) */
};

struct ihipEvent_t {
	uint32_t magic;
	struct hdev *dev;       /* of its last record; NULL: never recorded */
	uint64_t seq;
	_Atomic uint64_t time_ns;
};

struct ihipModule_t {
	uint32_t magic;
};

struct ihipModuleSymbol_t {
	uint32_t magic;
};

struct ihipMemPoolHandle_t {
	uint32_t magic;
	int phys;
};

struct ihipGraph {
	uint32_t magic;
	uint64_t *ns;
	size_t nodes, cap;
};

struct hipGraphExec {
	uint32_t magic;
	uint64_t *ns;
	size_t nodes;
};

enum op_kind { OP_KERNEL, OP_EVENT, OP_FREE };

/* An operation of a device's work queue (queue.h). */
struct op {
	struct sim_op head;             /* .ns: OP_KERNEL's */
	enum op_kind kind;
	struct ihipEvent_t *event;      /* OP_EVENT */
	void *ptr;                      /* OP_FREE */
};

/* This process's use of one physical device: its work queue (one for
 * all of its streams), started on first use. */
struct hdev {
	int phys;
	bool started;                   /* under global_lock; then `work` is set */
	struct sim_queue *work;
	struct ihipStream_t null_stream;
	struct ihipMemPoolHandle_t pool;
};

struct alloc {
	struct alloc *next;
	uintptr_t ptr;
	size_t size;
	int phys;
};

static struct sim *sim;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static hipError_t init_result = hipErrorNotInitialized;
static char init_error[SIM_ERR_MAX];

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hdev devs[SIM_DEVICES_MAX];
static struct alloc *allocs[ALLOC_BUCKETS];    /* under global_lock */

/* hipDevice_t values are the ordinals the visibility variables leave;
 * everything else holds the physical (simdev) index: visible[ordinal]. */
static int visible[SIM_DEVICES_MAX];
static int visible_count;

static __thread int current;            /* the thread's device ordinal */
static __thread hipError_t last_error;

/* ---- errors ---------------------------------------------------------- */

#define HIP_ERRORS(X)                                                          \
	X(hipSuccess, "no error")                                              \
	X(hipErrorInvalidValue, "invalid argument")                            \
	X(hipErrorOutOfMemory, "out of memory")                                \
	X(hipErrorNotInitialized, "initialization error")                      \
	X(hipErrorInvalidDevicePointer, "invalid device pointer")              \
	X(hipErrorInvalidDeviceFunction, "invalid device function")            \
	X(hipErrorNoDevice, "no ROCm-capable device is detected")              \
	X(hipErrorInvalidDevice, "invalid device ordinal")                     \
	X(hipErrorInvalidHandle, "invalid resource handle")                    \
	X(hipErrorNotFound, "named symbol not found")                          \
	X(hipErrorNotReady, "device not ready")                                \
	X(hipErrorNotSupported, "operation not supported")                     \
	X(hipErrorUnknown, "unknown error")

const char *hipGetErrorName(hipError_t e)
{
#define NAME_CASE(code, text) case code: return #code;
	switch (e) {
		HIP_ERRORS(NAME_CASE)
	default:
		return "hipErrorUnknown";
	}
#undef NAME_CASE
}

const char *hipGetErrorString(hipError_t e)
{
#define TEXT_CASE(code, text) case code: return text;
	switch (e) {
		HIP_ERRORS(TEXT_CASE)
	default:
		return "unknown error";
	}
#undef TEXT_CASE
}

static hipError_t fail(hipError_t e)
{
	if (e != hipSuccess)
		last_error = e;
	return e;
}

hipError_t hipGetLastError(void)
{
	hipError_t e = last_error;

	last_error = hipSuccess;
	return e;
}

hipError_t hipPeekAtLastError(void)
{
	return last_error;
}

/* ---- set-up and visibility ------------------------------------------ */

/* The entry s (len bytes) of a list: an index into from[0..n), or (when
 * ids) a UUID text or a unique prefix of one; -1 when it names none. */
static int list_entry(const char *s, size_t len, const int *from, int n, bool ids)
{
	int found = -1, index = 0;

	if (len > 0 && strspn(s, "0123456789") >= len) {
		for (size_t i = 0; i < len; i++) {
			index = index * 10 + (s[i] - '0');
			if (index >= n)
				return -1;
		}
		return from[index];
	}
	if (!ids || len < 5)
		return -1;
	for (int i = 0; i < n; i++) {
		char text[GP_HIP_UUID_MAX];

		hipsim_uuid_text(sim, from[i], text, sizeof(text));
		if (strncasecmp(text, s, len) != 0)
			continue;
		if (found >= 0)
			return -1;
		found = from[i];
	}
	return found;
}

/* Keeps of from[0..n) those `list` names, in its order, up to the first
 * entry that is invalid or a repeat; returns how many (into out). */
static int list_apply(const char *list, const int *from, int n, bool ids, int *out)
{
	int count = 0;

	while (*list && count < n) {
		size_t len = strcspn(list, ",");
		int d = list_entry(list, len, from, n, ids);
		bool repeat = false;

		for (int i = 0; i < count; i++)
			repeat |= out[i] == d;
		if (d < 0 || repeat)
			break;
		out[count++] = d;
		if (list[len] != ',')
			break;
		list += len + 1;
	}
	return count;
}

static void visible_init(void)
{
	int all[SIM_DEVICES_MAX], rocr[SIM_DEVICES_MAX];
	int n = hipsim_devices(sim, all, SIM_DEVICES_MAX);
	const char *r = getenv("ROCR_VISIBLE_DEVICES");
	const char *h = getenv("HIP_VISIBLE_DEVICES");

	if (r)
		n = list_apply(r, all, n, true, rocr);
	else
		memcpy(rocr, all, sizeof(all));
	if (!h || !*h)
		h = getenv("CUDA_VISIBLE_DEVICES");
	if (h && *h) {
		visible_count = list_apply(h, rocr, n, false, visible);
	} else {
		memcpy(visible, rocr, sizeof(rocr));
		visible_count = n;
	}
}

static void init_once_fn(void)
{
	int r = sim_open(&sim, init_error, sizeof(init_error));

	if (r < 0) {
		init_result = r == -ENODEV || r == -EINVAL ? hipErrorNoDevice : hipErrorUnknown;
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: %s\n", init_error);
		return;
	}
	for (int d = 0; d < SIM_DEVICES_MAX; d++) {
		devs[d].phys = d;
		devs[d].null_stream = (struct ihipStream_t){ MAGIC_STREAM, &devs[d], 0 };
		devs[d].pool = (struct ihipMemPoolHandle_t){ MAGIC_POOL, d };
	}
	visible_init();
	if (visible_count == 0) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: no AMD or Hygon device is visible (GPUPOOL_SIM_DEVICES, "
					"ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES)\n");
		init_result = hipErrorNoDevice;
		return;
	}
	init_result = hipSuccess;
}

/* Every call initialises the runtime implicitly, as HIP does. */
#define REQUIRE_INIT()                                            \
	do {                                                      \
		pthread_once(&init_once, init_once_fn);           \
		if (init_result != hipSuccess)                    \
			return fail(init_result);                 \
	} while (0)

hipError_t hipInit(unsigned int flags)
{
	if (flags != 0)
		return fail(hipErrorInvalidValue);
	REQUIRE_INIT();
	return hipSuccess;
}

hipError_t hipDriverGetVersion(int *v)
{
	if (!v)
		return fail(hipErrorInvalidValue);
	*v = GP_HIP_VERSION / 100 * 10000000 + GP_HIP_VERSION % 100 * 100000;
	return hipSuccess;
}

hipError_t hipRuntimeGetVersion(int *v)
{
	return hipDriverGetVersion(v);
}

/* ---- devices --------------------------------------------------------- */

static int phys_of(int ordinal)
{
	return ordinal >= 0 && ordinal < visible_count ? visible[ordinal] : -1;
}

hipError_t hipGetDeviceCount(int *count)
{
	if (!count)
		return fail(hipErrorInvalidValue);
	pthread_once(&init_once, init_once_fn);
	*count = init_result == hipSuccess ? visible_count : 0;
	return init_result == hipSuccess ? hipSuccess : fail(hipErrorNoDevice);
}

hipError_t hipSetDevice(int id)
{
	REQUIRE_INIT();
	if (phys_of(id) < 0)
		return fail(hipErrorInvalidDevice);
	current = id;
	return hipSuccess;
}

hipError_t hipGetDevice(int *id)
{
	REQUIRE_INIT();
	if (!id)
		return fail(hipErrorInvalidValue);
	*id = current;
	return hipSuccess;
}

hipError_t hipDeviceGet(hipDevice_t *device, int ordinal)
{
	REQUIRE_INIT();
	if (!device)
		return fail(hipErrorInvalidValue);
	if (phys_of(ordinal) < 0)
		return fail(hipErrorInvalidDevice);
	*device = ordinal;
	return hipSuccess;
}

#define DEVICE_OR_FAIL(phys, ordinal)                            \
	REQUIRE_INIT();                                          \
	int phys = phys_of(ordinal);                             \
	if (phys < 0)                                            \
		return fail(hipErrorInvalidDevice)

hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device)
{
	DEVICE_OR_FAIL(phys, device);
	if (!name || len <= 0)
		return fail(hipErrorInvalidValue);
	snprintf(name, (size_t)len, "%s", sim_device_model(sim, phys)->name);
	return hipSuccess;
}

/* ROCr's form: the 16 hex digits of the unique id, as characters. */
hipError_t hipDeviceGetUuid(hipUUID *uuid, hipDevice_t device)
{
	char text[GP_HIP_UUID_MAX];

	DEVICE_OR_FAIL(phys, device);
	if (!uuid)
		return fail(hipErrorInvalidValue);
	hipsim_uuid_text(sim, phys, text, sizeof(text));
	memcpy(uuid->bytes, text + 4, 16);
	return hipSuccess;
}

hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device)
{
	DEVICE_OR_FAIL(phys, device);
	if (!bytes)
		return fail(hipErrorInvalidValue);
	*bytes = sim_mem_total(sim, phys);
	return hipSuccess;
}

hipError_t hipDeviceGetPCIBusId(char *bus, int len, int device)
{
	DEVICE_OR_FAIL(phys, device);
	if (!bus || len <= 0)
		return fail(hipErrorInvalidValue);
	snprintf(bus, (size_t)len, "0000:%02x:00.0", sim_device_pci_bus(sim, phys));
	return hipSuccess;
}

hipError_t hipGetDeviceProperties(hipDeviceProp_tR0000_head *prop, int device)
{
	DEVICE_OR_FAIL(phys, device);
	if (!prop)
		return fail(hipErrorInvalidValue);
	snprintf(prop->name, sizeof(prop->name), "%s", sim_device_model(sim, phys)->name);
	prop->totalGlobalMem = sim_mem_total(sim, phys);
	return hipSuccess;
}

hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600_head *prop, int device)
{
	DEVICE_OR_FAIL(phys, device);
	if (!prop)
		return fail(hipErrorInvalidValue);
	memset(prop, 0, sizeof(*prop));
	snprintf(prop->name, sizeof(prop->name), "%s", sim_device_model(sim, phys)->name);
	hipDeviceGetUuid(&prop->uuid, device);
	prop->totalGlobalMem = sim_mem_total(sim, phys);
	return hipSuccess;
}

/* ---- the work queue: executing a device's operations ----------------- */

static uint64_t default_kernel_ns(void)
{
	const char *us = getenv("GPUPOOL_SIM_KERNEL_US");

	return us && atol(us) > 0 ? (uint64_t)atol(us) * 1000 : 10000;
}

static void alloc_release(void *ptr);

/* What an operation does after its device time (queue.h). */
static void op_run(const void *arg)
{
	const struct op *op = arg;

	switch (op->kind) {
	case OP_KERNEL:
		break;
	case OP_EVENT:
		atomic_store(&op->event->time_ns, sim_now_ns());
		break;
	case OP_FREE:
		alloc_release(op->ptr);
		break;
	}
}

/* The device's queue, its worker started (and the process counted as
 * running on it) on first use. NULL: no thread could be made. */
static struct hdev *dev_use(int phys)
{
	struct hdev *d = &devs[phys];

	pthread_mutex_lock(&global_lock);
	if (!d->started && !sim_queue_new(sim, phys, sizeof(struct op), op_run, &d->work))
		d->started = true;
	pthread_mutex_unlock(&global_lock);
	return d->started ? d : NULL;
}

/* Queues op on s's device as s's last operation: its sequence number, 0
 * when out of host memory. */
static uint64_t op_submit(struct ihipStream_t *s, const struct op *op)
{
	uint64_t seq;

	return sim_queue_submit(s->dev->work, op, 1, &s->last_seq, &seq) < 0 ? 0 : seq;
}

static void wait_for(struct hdev *d, uint64_t seq)
{
	sim_queue_wait(d->work, seq, SIM_QUEUE_FOREVER);
}

/* The stream a handle names (NULL and hipStreamPerThread: the current
 * device's null stream), its device started. */
static hipError_t stream_resolve(hipStream_t h, struct ihipStream_t **ret)
{
	struct ihipStream_t *s = h;

	if (!h || h == STREAM_PER_THREAD) {
		int phys = phys_of(current);
		struct hdev *d;

		if (phys < 0)
			return hipErrorInvalidDevice;
		if (!(d = dev_use(phys)))
			return hipErrorUnknown;
		s = &d->null_stream;
	} else if (s->magic != MAGIC_STREAM) {
		return hipErrorInvalidHandle;
	}
	*ret = s;
	return hipSuccess;
}

static hipError_t enqueue(hipStream_t h, struct op op)
{
	struct ihipStream_t *s;
	hipError_t e = stream_resolve(h, &s);

	if (e != hipSuccess)
		return fail(e);
	if (!op_submit(s, &op))
		return fail(hipErrorOutOfMemory);
	return hipSuccess;
}

/* ---- streams, events, synchronization -------------------------------- */

hipError_t hipStreamCreate(hipStream_t *stream)
{
	struct ihipStream_t *s;
	struct hdev *d;

	REQUIRE_INIT();
	if (!stream)
		return fail(hipErrorInvalidValue);
	if (!(d = dev_use(phys_of(current))))
		return fail(hipErrorUnknown);
	if (!(s = calloc(1, sizeof(*s))))
		return fail(hipErrorOutOfMemory);
	*s = (struct ihipStream_t){ MAGIC_STREAM, d, 0 };
	*stream = s;
	return hipSuccess;
}

hipError_t hipStreamDestroy(hipStream_t stream)
{
	REQUIRE_INIT();
	if (!stream || stream->magic != MAGIC_STREAM || stream == &stream->dev->null_stream)
		return fail(hipErrorInvalidHandle);
	wait_for(stream->dev, atomic_load(&stream->last_seq));
	stream->magic = MAGIC_DEAD;
	free(stream);
	return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t h)
{
	struct ihipStream_t *s;
	hipError_t e;

	REQUIRE_INIT();
	if ((e = stream_resolve(h, &s)) != hipSuccess)
		return fail(e);
	/* The null stream synchronizes with the device's other streams. */
	if (s == &s->dev->null_stream)
		sim_queue_drain(s->dev->work);
	else
		wait_for(s->dev, atomic_load(&s->last_seq));
	return hipSuccess;
}

hipError_t hipStreamQuery(hipStream_t h)
{
	struct ihipStream_t *s;
	hipError_t e;

	REQUIRE_INIT();
	if ((e = stream_resolve(h, &s)) != hipSuccess)
		return fail(e);
	if (!sim_queue_done(s->dev->work, atomic_load(&s->last_seq)))
		return hipErrorNotReady;
	return hipSuccess;
}

hipError_t hipDeviceSynchronize(void)
{
	struct hdev *d;

	REQUIRE_INIT();
	if (!(d = dev_use(phys_of(current))))
		return fail(hipErrorUnknown);
	sim_queue_drain(d->work);
	return hipSuccess;
}

hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
	struct ihipEvent_t *e;

	(void)flags;
	REQUIRE_INIT();
	if (!event)
		return fail(hipErrorInvalidValue);
	if (!(e = calloc(1, sizeof(*e))))
		return fail(hipErrorOutOfMemory);
	e->magic = MAGIC_EVENT;
	*event = e;
	return hipSuccess;
}

hipError_t hipEventCreate(hipEvent_t *event)
{
	return hipEventCreateWithFlags(event, 0);
}

static bool event_valid(hipEvent_t e)
{
	return e && e->magic == MAGIC_EVENT;
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t h)
{
	struct ihipStream_t *s;
	struct op op = { .kind = OP_EVENT, .event = event };
	uint64_t seq;
	hipError_t e;

	REQUIRE_INIT();
	if (!event_valid(event))
		return fail(hipErrorInvalidHandle);
	if ((e = stream_resolve(h, &s)) != hipSuccess)
		return fail(e);
	atomic_store(&event->time_ns, 0);
	event->dev = s->dev;
	if (!(seq = op_submit(s, &op)))
		return fail(hipErrorOutOfMemory);
	event->seq = seq;
	return hipSuccess;
}

hipError_t hipEventQuery(hipEvent_t event)
{
	REQUIRE_INIT();
	if (!event_valid(event))
		return fail(hipErrorInvalidHandle);
	if (!event->dev)
		return hipSuccess;
	if (!sim_queue_done(event->dev->work, event->seq))
		return hipErrorNotReady;
	return hipSuccess;
}

hipError_t hipEventSynchronize(hipEvent_t event)
{
	REQUIRE_INIT();
	if (!event_valid(event))
		return fail(hipErrorInvalidHandle);
	if (event->dev)
		wait_for(event->dev, event->seq);
	return hipSuccess;
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
	uint64_t a, b;

	REQUIRE_INIT();
	if (!ms)
		return fail(hipErrorInvalidValue);
	if (!event_valid(start) || !event_valid(stop) || !start->dev || !stop->dev)
		return fail(hipErrorInvalidHandle);
	a = atomic_load(&start->time_ns);
	b = atomic_load(&stop->time_ns);
	if (!a || !b)
		return hipErrorNotReady;
	*ms = (float)((double)((int64_t)(b - a)) / 1e6);
	return hipSuccess;
}

hipError_t hipEventDestroy(hipEvent_t event)
{
	REQUIRE_INIT();
	if (!event_valid(event))
		return fail(hipErrorInvalidHandle);
	if (event->dev)
		wait_for(event->dev, event->seq);
	event->magic = MAGIC_DEAD;
	free(event);
	return hipSuccess;
}

/* ---- memory ---------------------------------------------------------- */

static size_t bucket_of(uintptr_t ptr)
{
	return (size_t)((ptr >> 12) * 0x9e3779b97f4a7c15ULL >> 52) % ALLOC_BUCKETS;
}

static void alloc_add(struct alloc *a)
{
	size_t b = bucket_of(a->ptr);

	pthread_mutex_lock(&global_lock);
	a->next = allocs[b];
	allocs[b] = a;
	pthread_mutex_unlock(&global_lock);
}

static struct alloc *alloc_take(uintptr_t ptr)
{
	struct alloc **pp, *a = NULL;

	pthread_mutex_lock(&global_lock);
	for (pp = &allocs[bucket_of(ptr)]; *pp; pp = &(*pp)->next)
		if ((*pp)->ptr == ptr) {
			a = *pp;
			*pp = a->next;
			break;
		}
	pthread_mutex_unlock(&global_lock);
	return a;
}

static bool alloc_known(uintptr_t ptr)
{
	bool found = false;

	pthread_mutex_lock(&global_lock);
	for (struct alloc *a = allocs[bucket_of(ptr)]; a && !found; a = a->next)
		found = a->ptr == ptr;
	pthread_mutex_unlock(&global_lock);
	return found;
}

static void alloc_release(void *ptr)
{
	struct alloc *a = alloc_take((uintptr_t)ptr);

	if (!a)
		return;
	munmap((void *)a->ptr, a->size);
	sim_mem_release(sim, a->phys, a->size);
	free(a);
}

/* Device memory of `bytes` on physical device phys: admitted against the
 * device (hipErrorOutOfMemory past it), backed by a lazy mapping. Size 0
 * gives NULL, as HIP does. */
static hipError_t device_alloc(int phys, size_t bytes, void **ret)
{
	struct alloc *a;
	void *p;

	if (!ret)
		return fail(hipErrorInvalidValue);
	if (bytes == 0) {
		*ret = NULL;
		return hipSuccess;
	}
	if (!dev_use(phys))
		return fail(hipErrorUnknown);
	if (sim_mem_reserve(sim, phys, bytes) < 0)
		return fail(hipErrorOutOfMemory);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED || !(a = malloc(sizeof(*a)))) {
		if (p != MAP_FAILED)
			munmap(p, bytes);
		sim_mem_release(sim, phys, bytes);
		return fail(hipErrorOutOfMemory);
	}
	*a = (struct alloc){ NULL, (uintptr_t)p, bytes, phys };
	alloc_add(a);
	*ret = p;
	return hipSuccess;
}

#define CURRENT_PHYS(phys)                                       \
	REQUIRE_INIT();                                          \
	int phys = phys_of(current);                             \
	if (phys < 0)                                            \
		return fail(hipErrorInvalidDevice)

hipError_t hipMalloc(void **ptr, size_t size)
{
	CURRENT_PHYS(phys);
	return device_alloc(phys, size, ptr);
}

hipError_t hipExtMallocWithFlags(void **ptr, size_t size, unsigned int flags)
{
	CURRENT_PHYS(phys);
	if (flags > 0x4)
		return fail(hipErrorInvalidValue);
	return device_alloc(phys, size, ptr);
}

hipError_t hipMallocManaged(void **ptr, size_t size, unsigned int flags)
{
	CURRENT_PHYS(phys);
	if (flags != hipMemAttachGlobal && flags != hipMemAttachHost)
		return fail(hipErrorInvalidValue);
	return device_alloc(phys, size, ptr);
}

static size_t pitch_of(size_t width)
{
	return (width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
}

hipError_t hipMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
	hipError_t e;
	size_t p = pitch_of(width);

	CURRENT_PHYS(phys);
	if (!pitch)
		return fail(hipErrorInvalidValue);
	if (height && p > SIZE_MAX / height)
		return fail(hipErrorOutOfMemory);
	if ((e = device_alloc(phys, p * height, ptr)) == hipSuccess)
		*pitch = p;
	return e;
}

hipError_t hipMemAllocPitch(hipDeviceptr_t *dptr, size_t *pitch, size_t width, size_t height,
			    unsigned int element)
{
	if (element != 4 && element != 8 && element != 16)
		return fail(hipErrorInvalidValue);
	return hipMallocPitch(dptr, pitch, width, height);
}

hipError_t hipMallocAsync(void **ptr, size_t size, hipStream_t h)
{
	struct ihipStream_t *s;
	hipError_t e;

	REQUIRE_INIT();
	if ((e = stream_resolve(h, &s)) != hipSuccess)
		return fail(e);
	return device_alloc(s->dev->phys, size, ptr);
}

hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t *pool, int device)
{
	DEVICE_OR_FAIL(phys, device);
	if (!pool)
		return fail(hipErrorInvalidValue);
	*pool = &devs[phys].pool;
	return hipSuccess;
}

hipError_t hipMallocFromPoolAsync(void **ptr, size_t size, hipMemPool_t pool, hipStream_t h)
{
	struct ihipStream_t *s;
	hipError_t e;

	REQUIRE_INIT();
	if (!pool || pool->magic != MAGIC_POOL)
		return fail(hipErrorInvalidValue);
	if ((e = stream_resolve(h, &s)) != hipSuccess)
		return fail(e);
	return device_alloc(pool->phys, size, ptr);
}

hipError_t hipFree(void *ptr)
{
	REQUIRE_INIT();
	if (!ptr)
		return hipSuccess;
	if (!alloc_known((uintptr_t)ptr))
		return fail(hipErrorInvalidValue);
	/* hipFree synchronizes the device first, as the real one does. */
	for (int d = 0; d < SIM_DEVICES_MAX; d++)
		if (devs[d].started)
			sim_queue_drain(devs[d].work);
	alloc_release(ptr);
	return hipSuccess;
}

hipError_t hipFreeAsync(void *ptr, hipStream_t h)
{
	REQUIRE_INIT();
	if (!ptr)
		return hipSuccess;
	if (!alloc_known((uintptr_t)ptr))
		return fail(hipErrorInvalidValue);
	return enqueue(h, (struct op){ .kind = OP_FREE, .ptr = ptr });
}

hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
	uint64_t total, used;

	CURRENT_PHYS(phys);
	if (!free_bytes || !total_bytes)
		return fail(hipErrorInvalidValue);
	total = sim_mem_total(sim, phys);
	used = sim_mem_used(sim, phys);
	*total_bytes = total;
	*free_bytes = total - used;
	return hipSuccess;
}

hipError_t hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind kind)
{
	REQUIRE_INIT();
	if ((unsigned)kind > hipMemcpyDefault || (n && (!dst || !src)))
		return fail(hipErrorInvalidValue);
	hipDeviceSynchronize();
	memmove(dst, src, n);
	return hipSuccess;
}

hipError_t hipMemset(void *dst, int value, size_t n)
{
	REQUIRE_INIT();
	if (n && !dst)
		return fail(hipErrorInvalidValue);
	hipDeviceSynchronize();
	memset(dst, value, n);
	return hipSuccess;
}

/* ---- modules and launches -------------------------------------------- */

static struct ihipModule_t the_module = { MAGIC_MODULE };
static struct ihipModuleSymbol_t the_function = { MAGIC_FUNC };

hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
	REQUIRE_INIT();
	if (!module || !image)
		return fail(hipErrorInvalidValue);
	*module = &the_module;
	return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t module)
{
	REQUIRE_INIT();
	if (!module || module->magic != MAGIC_MODULE)
		return fail(hipErrorInvalidHandle);
	return hipSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t module, const char *name)
{
	REQUIRE_INIT();
	if (!f || !name || !*name)
		return fail(hipErrorInvalidValue);
	if (!module || module->magic != MAGIC_MODULE)
		return fail(hipErrorInvalidHandle);
	*f = &the_function;
	return hipSuccess;
}

/* Kernel argument 0 as nanoseconds of device time. */
static uint64_t kernel_ns(void **params, void **extra)
{
	uint64_t ns;

	if (params && params[0]) {
		memcpy(&ns, params[0], sizeof(ns));
		return ns;
	}
	for (size_t i = 0; extra && extra[i] != HIP_LAUNCH_PARAM_END; i += 2)
		if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_POINTER && extra[i + 1]) {
			memcpy(&ns, extra[i + 1], sizeof(ns));
			return ns;
		}
	return default_kernel_ns();
}

static bool dims_valid(dim3 g, dim3 b)
{
	return g.x && g.y && g.z && b.x && b.y && b.z && (uint64_t)b.x * b.y * b.z <= 1024;
}

static hipError_t launch(bool valid, dim3 g, dim3 b, uint64_t ns, hipStream_t stream)
{
	REQUIRE_INIT();
	if (!valid)
		return fail(hipErrorInvalidDeviceFunction);
	if (!dims_valid(g, b))
		return fail(hipErrorInvalidConfiguration);
	return enqueue(stream, (struct op){ .head.ns = ns, .kind = OP_KERNEL });
}

hipError_t hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shared,
			   hipStream_t stream)
{
	(void)shared;
	return launch(f != NULL, g, b, kernel_ns(args, NULL), stream);
}

hipError_t hipLaunchCooperativeKernel(const void *f, dim3 g, dim3 b, void **args,
				      unsigned int shared, hipStream_t stream)
{
	(void)shared;
	return launch(f != NULL, g, b, kernel_ns(args, NULL), stream);
}

hipError_t hipExtLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shared,
			      hipStream_t stream, hipEvent_t start, hipEvent_t stop, int flags)
{
	hipError_t e;

	(void)shared;
	(void)flags;
	if (start && (e = hipEventRecord(start, stream)) != hipSuccess)
		return e;
	if ((e = launch(f != NULL, g, b, kernel_ns(args, NULL), stream)) != hipSuccess)
		return e;
	return stop ? hipEventRecord(stop, stream) : hipSuccess;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
				 unsigned bx, unsigned by, unsigned bz, unsigned shared,
				 hipStream_t stream, void **params, void **extra)
{
	(void)shared;
	return launch(f && f->magic == MAGIC_FUNC, (dim3){ gx, gy, gz }, (dim3){ bx, by, bz },
		      kernel_ns(params, extra), stream);
}

/* ---- graphs (explicit API) ------------------------------------------- */

hipError_t hipGraphCreate(hipGraph_t *graph, unsigned int flags)
{
	struct ihipGraph *g;

	REQUIRE_INIT();
	if (!graph || flags != 0)
		return fail(hipErrorInvalidValue);
	if (!(g = calloc(1, sizeof(*g))))
		return fail(hipErrorOutOfMemory);
	g->magic = MAGIC_GRAPH;
	*graph = g;
	return hipSuccess;
}

hipError_t hipGraphDestroy(hipGraph_t g)
{
	REQUIRE_INIT();
	if (!g || g->magic != MAGIC_GRAPH)
		return fail(hipErrorInvalidValue);
	g->magic = MAGIC_DEAD;
	free(g->ns);
	free(g);
	return hipSuccess;
}

hipError_t hipGraphAddKernelNode(hipGraphNode_t *node, hipGraph_t g, const hipGraphNode_t *deps,
				 size_t ndeps, const hipKernelNodeParams *p)
{
	REQUIRE_INIT();
	(void)deps;
	(void)ndeps;
	if (!node || !g || g->magic != MAGIC_GRAPH || !p || !p->func)
		return fail(hipErrorInvalidValue);
	if (g->nodes == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		uint64_t *ns = realloc(g->ns, cap * sizeof(*ns));

		if (!ns)
			return fail(hipErrorOutOfMemory);
		g->ns = ns;
		g->cap = cap;
	}
	g->ns[g->nodes++] = kernel_ns(p->kernelParams, p->extra);
	*node = (hipGraphNode_t)(uintptr_t)g->nodes;     /* an opaque token */
	return hipSuccess;
}

hipError_t hipGraphInstantiate(hipGraphExec_t *exec, hipGraph_t g, hipGraphNode_t *error_node,
			       char *log, size_t log_len)
{
	struct hipGraphExec *x;

	REQUIRE_INIT();
	(void)error_node;
	if (log && log_len)
		log[0] = '\0';
	if (!exec || !g || g->magic != MAGIC_GRAPH)
		return fail(hipErrorInvalidValue);
	if (!(x = calloc(1, sizeof(*x))) ||
	    (g->nodes && !(x->ns = malloc(g->nodes * sizeof(*x->ns))))) {
		free(x);
		return fail(hipErrorOutOfMemory);
	}
	x->magic = MAGIC_EXEC;
	x->nodes = g->nodes;
	if (g->nodes)
		memcpy(x->ns, g->ns, g->nodes * sizeof(*x->ns));
	*exec = x;
	return hipSuccess;
}

hipError_t hipGraphLaunch(hipGraphExec_t x, hipStream_t stream)
{
	hipError_t e = hipSuccess;

	REQUIRE_INIT();
	if (!x || x->magic != MAGIC_EXEC)
		return fail(hipErrorInvalidValue);
	for (size_t i = 0; i < x->nodes && e == hipSuccess; i++)
		e = enqueue(stream, (struct op){ .head.ns = x->ns[i], .kind = OP_KERNEL });
	return e;
}

hipError_t hipGraphExecDestroy(hipGraphExec_t x)
{
	REQUIRE_INIT();
	if (!x || x->magic != MAGIC_EXEC)
		return fail(hipErrorInvalidValue);
	x->magic = MAGIC_DEAD;
	free(x->ns);
	free(x);
	return hipSuccess;
}

hipError_t hipDeviceReset(void)
{
	return hipDeviceSynchronize();
}

/* ---- hipGetProcAddress ----------------------------------------------- */

/* Every exported function and the HIP version whose symbol version node
 * it is in (libamdhip64.map): what hipGetProcAddress hands out. */
#define HIP_EXPORTS(X)                                                      \
	X(hipInit, 402) X(hipDriverGetVersion, 402) X(hipRuntimeGetVersion, 402) \
	X(hipGetErrorName, 402) X(hipGetErrorString, 402) X(hipGetLastError, 402) \
	X(hipPeekAtLastError, 402) X(hipGetDeviceCount, 402) X(hipSetDevice, 402) \
	X(hipGetDevice, 402) X(hipDeviceGet, 402) X(hipDeviceGetName, 402)       \
	X(hipDeviceGetUuid, 402) X(hipDeviceTotalMem, 402)                      \
	X(hipDeviceGetPCIBusId, 402) X(hipGetDeviceProperties, 402)             \
	X(hipGetDevicePropertiesR0600, 600) X(hipDeviceSynchronize, 402)        \
	X(hipDeviceReset, 402) X(hipMalloc, 402) X(hipExtMallocWithFlags, 402)   \
	X(hipMallocManaged, 402) X(hipMallocPitch, 402) X(hipMemAllocPitch, 402) \
	X(hipMallocAsync, 501) X(hipMallocFromPoolAsync, 501)                   \
	X(hipDeviceGetDefaultMemPool, 501) X(hipFree, 402) X(hipFreeAsync, 501)  \
	X(hipMemGetInfo, 402) X(hipMemcpy, 402) X(hipMemset, 402)               \
	X(hipStreamCreate, 402) X(hipStreamDestroy, 402)                        \
	X(hipStreamSynchronize, 402) X(hipStreamQuery, 402)                     \
	X(hipEventCreate, 402) X(hipEventCreateWithFlags, 402)                  \
	X(hipEventRecord, 402) X(hipEventQuery, 402)                            \
	X(hipEventSynchronize, 402) X(hipEventElapsedTime, 402)                 \
	X(hipEventDestroy, 402) X(hipModuleLoadData, 402)                       \
	X(hipModuleUnload, 402) X(hipModuleGetFunction, 402)                    \
	X(hipLaunchKernel, 402) X(hipExtLaunchKernel, 402)                      \
	X(hipModuleLaunchKernel, 402) X(hipLaunchCooperativeKernel, 402)        \
	X(hipGraphCreate, 403) X(hipGraphDestroy, 403)                          \
	X(hipGraphAddKernelNode, 403) X(hipGraphInstantiate, 403)               \
	X(hipGraphLaunch, 403) X(hipGraphExecDestroy, 403)                      \
	X(hipGetProcAddress, 601)

static const struct export {
	const char *name;
	void *fn;
	int version;
} exports[] = {
#define EXPORT_ROW(name, version) { #name, (void *)name, version },
	HIP_EXPORTS(EXPORT_ROW)
#undef EXPORT_ROW
};

hipError_t hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags,
			     hipDriverProcAddressQueryResult *status)
{
	if (!symbol || !pfn || flags != 0)
		return fail(hipErrorInvalidValue);
	*pfn = NULL;
	/* From 6.0 the header's hipGetDeviceProperties is the R0600 one. */
	if (version >= 600 && strcmp(symbol, "hipGetDeviceProperties") == 0)
		symbol = "hipGetDevicePropertiesR0600";
	for (size_t i = 0; i < sizeof(exports) / sizeof(exports[0]); i++) {
		if (strcmp(exports[i].name, symbol) != 0)
			continue;
		if (version < exports[i].version) {
			if (status)
				*status = HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
			return fail(hipErrorNotFound);
		}
		*pfn = exports[i].fn;
		if (status)
			*status = HIP_GET_PROC_ADDRESS_SUCCESS;
		return hipSuccess;
	}
	if (status)
		*status = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return fail(hipErrorNotFound);
}
