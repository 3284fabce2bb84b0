/* cuda.c — simdev's libcuda.so.1: a CUDA driver for simulated devices.
 *
 * Programs load it as they load the real driver (dlopen + cuGetProcAddress_v2,
 * or direct linking) and get devices from GPUPOOL_SIM_DEVICES (simdev.h),
 * of which CUDA_VISIBLE_DEVICES shows some, renumbered, as the real driver.
 * What is real: device memory (anonymous mappings, so copies and memsets
 * work), its accounting across processes, streams, events, and time: a
 * kernel occupies its device for the time its parameters ask for (the
 * gpuload_spin kernel: its first parameter, in ns; any other kernel
 * GPUPOOL_SIM_KERNEL_US, default 10 µs), taking turns with other processes'
 * contexts in quanta, without burning host CPU. What is not: kernels do not
 * compute anything. See docs/simdev.md.
 *
 * Each context has one worker thread that executes its queue of operations
 * (kernels, async copies and memsets, event records, host functions, async
 * frees) in submission order across all of its streams; a stream, an event
 * or the context is finished when the worker has passed its last operation.
 * Every symbol of the CUDA 13 ABI map (src/include/cuda-abi-map.txt) is
 * exported and answered by cuGetProcAddress: functions the simulation does
 * not provide are generated stubs that answer CUDA_ERROR_NOT_SUPPORTED (see
 * "finding functions" below); cuGetExportTable answers CUDA_ERROR_NOT_FOUND.
 *
 * MIG (mig.h): a card in MIG mode is no CUDA device of its own; its MIG
 * devices are, when CUDA_VISIBLE_DEVICES names them by UUID ("MIG-…").
 * A MIG device is a simdev device of its own (an index past the cards'):
 * its memory, its SM count, its UUID, and kernels on its own turn that
 * take 7 / g of their time on a g-slice instance. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/proc-table.h"
#include "include/gp-cuda.h"
#include "simdev/mig.h"
#include "simdev/simdev.h"

/* Every non-static function here is a driver entry point; its prototype
 * is the CUDA ABI, not a header of ours. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define MAGIC_CTX 0x43545831u
#define MAGIC_STREAM 0x53545231u
#define MAGIC_EVENT 0x45564e31u
#define MAGIC_MODULE 0x4d4f4431u
#define MAGIC_FUNC 0x46554e31u
#define MAGIC_GRAPH 0x47524131u
#define MAGIC_EXEC 0x47455831u
#define MAGIC_POOL 0x504f4f31u
#define MAGIC_VMM 0x564d4d31u
#define MAGIC_DEAD 0xdeadbeefu

#define SPIN_KERNEL "gpuload_spin"
#define CTX_STACK_MAX 16
#define PITCH_ALIGN 512
#define VMM_GRANULARITY (2u << 20)
#define ALLOC_BUCKETS 4096

/* CUDA 13 layout of cuCtxCreate_v4's parameters: only passed through. */
typedef struct CUctxCreateParams_st CUctxCreateParams;

/* ---- errors ---------------------------------------------------------- */

#define CUDA_ERRORS(X)                                                          \
	X(CUDA_SUCCESS, "no error")                                             \
	X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                         \
	X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                            \
	X(CUDA_ERROR_NOT_INITIALIZED, "initialization error")                   \
	X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                     \
	X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")           \
	X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                  \
	X(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")           \
	X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                 \
	X(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device") \
	X(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed")               \
	X(CUDA_ERROR_FILE_NOT_FOUND, "file not found")                          \
	X(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS") \
	X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                 \
	X(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state") \
	X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                       \
	X(CUDA_ERROR_NOT_READY, "device not ready")                             \
	X(CUDA_ERROR_NOT_PERMITTED, "operation not permitted")                  \
	X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                  \
	X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing") \
	X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture") \
	X(CUDA_ERROR_UNKNOWN, "unknown error")

/* ---- objects --------------------------------------------------------- */

struct ctx;

struct stream {
	uint32_t magic;
	struct ctx *ctx;
	uint64_t last_seq;              /* of its last operation */
	struct graph *capture;          /* being captured into, or NULL */
	unsigned flags;
	int priority;
};

struct event {
	uint32_t magic;
	struct ctx *ctx;
	unsigned flags;
	uint64_t seq;                   /* operation that records it; 0 = never */
	_Atomic uint64_t time_ns;       /* when the worker passed it */
};

enum op_kind { OP_KERNEL, OP_COPY, OP_SET8, OP_SET32, OP_EVENT, OP_HOST_FN, OP_FREE };

struct op {
	struct op *next;
	enum op_kind kind;
	uint64_t seq;
	uint64_t ns;                    /* OP_KERNEL */
	void *dst;                      /* OP_COPY, OP_SET* */
	const void *src;
	size_t count;
	uint32_t value;
	struct event *event;            /* OP_EVENT */
	CUhostFn fn;                    /* OP_HOST_FN */
	void *data;
	CUdeviceptr ptr;                /* OP_FREE */
};

struct ctx {
	uint32_t magic;
	int dev;                        /* physical index, as in pools and allocs */
	bool primary;
	int retained;                   /* primary contexts */
	unsigned flags;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct op *head, *tail;
	uint64_t submitted, completed;
	bool stopping;
	pthread_t worker;
	struct stream null_stream;      /* NULL, legacy and per-thread */
};

struct module {
	uint32_t magic;
	int entries;
	char **entry;
	struct func **func; /* entry i's function once asked for; the module owns them */
};

struct func {
	uint32_t magic;
	struct module *module;
	bool spin;
};

struct graph_node {
	uint64_t ns;
};

struct graph {
	uint32_t magic;
	struct graph_node *node;
	size_t nodes, cap;
	CUdeviceptr *mem;               /* its memory nodes' allocations */
	size_t mems;
};

struct graph_exec {
	uint32_t magic;
	struct ctx *ctx;
	struct graph_node *node;
	size_t nodes;
};

struct pool {
	uint32_t magic;
	int dev;
};

struct vmm {                            /* a cuMemCreate handle */
	uint32_t magic;
	int dev;
	size_t size;
	int fd;                         /* memfd backing the "physical" memory */
};

enum alloc_kind { ALLOC_DEVICE, ALLOC_HOST, ALLOC_RESERVED };

struct alloc {
	struct alloc *next;
	uintptr_t ptr;
	size_t size;
	enum alloc_kind kind;
	int dev;                        /* ALLOC_DEVICE */
	struct ctx *ctx;                /* freed with its context */
};

static struct sim *sim;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CUresult init_result = CUDA_ERROR_NOT_INITIALIZED;
static char init_error[SIM_ERR_MAX];
static bool initialized;

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ctx *primary[SIM_INDEX_MAX];
static struct pool default_pool[SIM_INDEX_MAX];
static struct pool *current_pool[SIM_INDEX_MAX];
static struct alloc *allocs[ALLOC_BUCKETS];

/* CUdevice values are the ordinals CUDA_VISIBLE_DEVICES leaves visible;
 * everything else (contexts, pools, allocations, the shared state) holds
 * the physical index: visible[ordinal]. */
static int visible[SIM_INDEX_MAX];
static int visible_count;
static int nvidia[SIM_DEVICES_MAX];     /* the NVIDIA devices' simdev indices */
static int nvidia_count;

static __thread struct ctx *ctx_stack[CTX_STACK_MAX];
static __thread int ctx_depth;

/* ---- set-up ---------------------------------------------------------- */

/* The physical device one entry of CUDA_VISIBLE_DEVICES (s, len bytes)
 * names: an index, or a UUID ("GPU-...", "MIG-...") or a prefix of one
 * that fits exactly one device; -1 when it names none. A card in MIG mode
 * is none: only its MIG devices are CUDA devices. */
static int visible_entry(const char *s, size_t len)
{
	int n = nvidia_count, found = -1, index = 0;

	if (len > 0 && strspn(s, "0123456789") >= len) {
		for (size_t i = 0; i < len; i++) {
			index = index * 10 + (s[i] - '0');
			if (index >= n)
				return -1;
		}
		return sim_mig_enabled(sim, nvidia[index]) ? -1 : nvidia[index];
	}
	if (len > 4 && strncmp(s, "MIG-", 4) == 0)
		return sim_mig_device_by_uuid(sim, s, len);
	if (len < 4 || strncmp(s, "GPU-", 4) != 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (strncmp(sim_device_uuid(sim, nvidia[i]), s, len) != 0)
			continue;
		if (found >= 0)
			return -1;      /* ambiguous prefix */
		found = nvidia[i];
	}
	return found >= 0 && sim_mig_enabled(sim, found) ? -1 : found;
}

/* The ordinal of physical device phys, or -1 if it is not visible (the
 * devices of contexts, pools and allocations always are). */
static CUdevice device_ordinal(int phys)
{
	for (int i = 0; i < visible_count; i++)
		if (visible[i] == phys)
			return i;
	return -1;
}

/* Fills visible[] as NVIDIA's driver reads CUDA_VISIBLE_DEVICES: unset,
 * every device; else the devices listed, in that order, up to the first
 * entry that is invalid or a repeat (empty: none). */
static void visible_init(void)
{
	const char *p = getenv("CUDA_VISIBLE_DEVICES");
	int n;

	n = nvidia_count = sim_vendor_devices(sim, "nvidia", nvidia, SIM_DEVICES_MAX);
	if (!p) {
		for (int i = 0; i < n; i++)
			if (!sim_mig_enabled(sim, nvidia[i]))
				visible[visible_count++] = nvidia[i];
		return;
	}
	while (visible_count < SIM_INDEX_MAX) {
		size_t len = strcspn(p, ",");
		int d = visible_entry(p, len);

		if (d < 0 || device_ordinal(d) >= 0)
			break;
		visible[visible_count++] = d;
		if (p[len] != ',')
			break;
		p += len + 1;
	}
}

static void init_once_fn(void)
{
	int r = sim_open(&sim, init_error, sizeof(init_error));

	if (r < 0) {
		init_result = r == -ENODEV || r == -EINVAL ? CUDA_ERROR_NO_DEVICE
							   : CUDA_ERROR_OPERATING_SYSTEM;
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: %s\n", init_error);
		return;
	}
	for (int d = 0; d < SIM_INDEX_MAX; d++) {
		default_pool[d] = (struct pool){ MAGIC_POOL, d };
		current_pool[d] = &default_pool[d];
	}
	visible_init();
	if (visible_count == 0) {
		if (nvidia_count == 0)
			snprintf(init_error, sizeof(init_error),
				 "GPUPOOL_SIM_DEVICES has no NVIDIA device");
		else
			snprintf(init_error, sizeof(init_error),
				 "CUDA_VISIBLE_DEVICES=\"%s\" leaves none of the %d devices visible",
				 getenv("CUDA_VISIBLE_DEVICES"), nvidia_count);
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: %s\n", init_error);
		init_result = CUDA_ERROR_NO_DEVICE;
		return;
	}
	init_result = CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int flags)
{
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&init_once, init_once_fn);
	if (init_result == CUDA_SUCCESS)
		initialized = true;
	return init_result;
}

#define REQUIRE_INIT()                                          \
	do {                                                    \
		if (!initialized)                               \
			return CUDA_ERROR_NOT_INITIALIZED;      \
	} while (0)

CUresult CUDAAPI cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = GP_CUDA_VERSION;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **str)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	if (error == init_result && error != CUDA_SUCCESS && init_error[0]) {
		*str = init_error;      /* says what to set, e.g. GPUPOOL_SIM_DEVICES */
		return CUDA_SUCCESS;
	}
	switch (error) {
#define ERROR_STRING(code, text) case code: *str = text; return CUDA_SUCCESS;
		CUDA_ERRORS(ERROR_STRING)
#undef ERROR_STRING
	default:
		*str = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **str)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	switch (error) {
#define ERROR_NAME(code, text) case code: *str = #code; return CUDA_SUCCESS;
		CUDA_ERRORS(ERROR_NAME)
#undef ERROR_NAME
	default:
		*str = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* ---- devices --------------------------------------------------------- */

/* The physical index of visible ordinal dev, or -1 if there is none. */
static int device_physical(CUdevice dev)
{
	return initialized && dev >= 0 && dev < visible_count ? visible[dev] : -1;
}

/* Declares phys, the physical index of the call's CUdevice dev. */
#define REQUIRE_DEVICE(phys, dev)                                       \
	REQUIRE_INIT();                                                 \
	int phys = device_physical(dev);                                \
	if (phys < 0)                                                   \
		return CUDA_ERROR_INVALID_DEVICE

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	REQUIRE_INIT();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = visible_count;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	REQUIRE_INIT();
	if (device_physical(ordinal) < 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	const struct sim_mig_profile *mig;

	REQUIRE_DEVICE(phys, dev);
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	mig = sim_mig_device_profile(sim, phys);
	if (mig)                /* "NVIDIA A100-SXM4-80GB MIG 3g.40gb" */
		snprintf(name, (size_t)len, "%s MIG %s", sim_device_model(sim, phys)->name,
			 mig->name);
	else
		snprintf(name, (size_t)len, "%s", sim_device_model(sim, phys)->name);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	REQUIRE_DEVICE(phys, dev);
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	sim_device_uuid_bytes(sim, phys, (unsigned char *)uuid->bytes);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid(uuid, dev);
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	REQUIRE_DEVICE(phys, dev);
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = sim_mem_total(sim, phys);
	return CUDA_SUCCESS;
}

/* A card's SMs, or a MIG device's. */
static int multiprocessors(const struct sim_model *m, int phys)
{
	const struct sim_mig_profile *mig = sim_mig_device_profile(sim, phys);

	return mig ? (int)mig->sms : m->sms;
}

static int attribute(const struct sim_model *m, int phys, CUdevice_attribute a)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return m->clock_khz;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return multiprocessors(m, phys);
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return sim_device_pci_bus(sim, phys);
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 1215000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 40 << 20;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 2;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return m->cc_major;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return m->cc_minor;
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
	default: return 0;
	}
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute a, CUdevice dev)
{
	REQUIRE_DEVICE(phys, dev);
	if (!value || (int)a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*value = attribute(sim_device_model(sim, phys), phys, a);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	REQUIRE_DEVICE(phys, dev);
	if (!major || !minor)
		return CUDA_ERROR_INVALID_VALUE;
	*major = sim_device_model(sim, phys)->cc_major;
	*minor = sim_device_model(sim, phys)->cc_minor;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char *bus_id, int len, CUdevice dev)
{
	REQUIRE_DEVICE(phys, dev);
	if (!bus_id || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(bus_id, (size_t)len, "00000000:%02X:00.0", sim_device_pci_bus(sim, phys));
	return CUDA_SUCCESS;
}

/* ---- the worker: executing a context's queue ------------------------- */

static uint64_t default_kernel_ns(void)
{
	const char *us = getenv("GPUPOOL_SIM_KERNEL_US");

	return us && atol(us) > 0 ? (uint64_t)atol(us) * 1000 : 10000;
}

static void alloc_release(uintptr_t ptr);

static void op_execute(struct ctx *c, struct op *op)
{
	switch (op->kind) {
	case OP_KERNEL:
		sim_device_run(sim, c->dev, op->ns);
		break;
	case OP_COPY:
		memmove(op->dst, op->src, op->count);
		break;
	case OP_SET8:
		memset(op->dst, (int)op->value, op->count);
		break;
	case OP_SET32:
		for (size_t i = 0; i < op->count; i++)
			((uint32_t *)op->dst)[i] = op->value;
		break;
	case OP_EVENT:
		atomic_store(&op->event->time_ns, sim_now_ns());
		break;
	case OP_HOST_FN:
		op->fn(op->data);
		break;
	case OP_FREE:
		alloc_release((uintptr_t)op->ptr);
		break;
	}
}

static void *worker_main(void *arg)
{
	struct ctx *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct op *op;

		while (!c->head && !c->stopping)
			pthread_cond_wait(&c->work, &c->lock);
		if (!c->head)
			break;
		op = c->head;
		c->head = op->next;
		if (!c->head)
			c->tail = NULL;
		pthread_mutex_unlock(&c->lock);
		op_execute(c, op);
		pthread_mutex_lock(&c->lock);
		c->completed = op->seq;
		pthread_cond_broadcast(&c->done);
		free(op);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* Queues op on stream s (which belongs to context c); takes ownership
 * (the worker may free op at once) and returns its sequence number. */
static uint64_t op_submit(struct ctx *c, struct stream *s, struct op *op)
{
	uint64_t seq;

	pthread_mutex_lock(&c->lock);
	seq = op->seq = ++c->submitted;
	s->last_seq = op->seq;
	if (c->tail)
		c->tail->next = op;
	else
		c->head = op;
	c->tail = op;
	pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&c->lock);
	return seq;
}

static void wait_for(struct ctx *c, uint64_t seq)
{
	pthread_mutex_lock(&c->lock);
	while (c->completed < seq)
		pthread_cond_wait(&c->done, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

static bool is_done(struct ctx *c, uint64_t seq)
{
	bool done;

	pthread_mutex_lock(&c->lock);
	done = c->completed >= seq;
	pthread_mutex_unlock(&c->lock);
	return done;
}

/* ---- contexts -------------------------------------------------------- */

static struct ctx *ctx_current(void)
{
	return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
}

static bool ctx_valid(const struct ctx *c)
{
	return c && c->magic == MAGIC_CTX;
}

static struct ctx *ctx_new(int dev, bool is_primary, unsigned flags)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->magic = MAGIC_CTX;
	c->dev = dev;
	c->primary = is_primary;
	c->flags = flags;
	c->null_stream = (struct stream){ .magic = MAGIC_STREAM, .ctx = c };
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->done, NULL);
	if (pthread_create(&c->worker, NULL, worker_main, c) != 0) {
		free(c);
		return NULL;
	}
	sim_context_add(sim, dev);
	return c;
}

static void allocs_free_of(struct ctx *c);

/* Finishes the queue, stops the worker, frees what the context owns. */
static void ctx_free(struct ctx *c)
{
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->worker, NULL);
	allocs_free_of(c);
	sim_context_remove(sim, c->dev);
	for (int i = 0; i < ctx_depth; i++)
		if (ctx_stack[i] == c)
			ctx_stack[i] = NULL;
	c->magic = MAGIC_DEAD;
	free(c);
}

/* The context of a call: the current one, which must exist. */
#define REQUIRE_CTX(c)                                          \
	REQUIRE_INIT();                                         \
	struct ctx *c = ctx_current();                          \
	if (!ctx_valid(c))                                      \
		return CUDA_ERROR_INVALID_CONTEXT

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	REQUIRE_DEVICE(phys, dev);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&global_lock);
	if (!primary[phys])
		primary[phys] = ctx_new(phys, true, 0);
	if (primary[phys])
		primary[phys]->retained++;
	*pctx = (CUcontext)primary[phys];
	pthread_mutex_unlock(&global_lock);
	return *pctx ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	struct ctx *c = NULL;

	REQUIRE_DEVICE(phys, dev);
	pthread_mutex_lock(&global_lock);
	if (primary[phys] && --primary[phys]->retained == 0) {
		c = primary[phys];
		primary[phys] = NULL;
	}
	pthread_mutex_unlock(&global_lock);
	if (c)
		ctx_free(c);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	struct ctx *c;

	REQUIRE_DEVICE(phys, dev);
	pthread_mutex_lock(&global_lock);
	c = primary[phys];
	primary[phys] = NULL;
	pthread_mutex_unlock(&global_lock);
	if (c)
		ctx_free(c);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
	return cuDevicePrimaryCtxReset_v2(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	REQUIRE_DEVICE(phys, dev);
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&global_lock);
	*flags = primary[phys] ? primary[phys]->flags : 0;
	*active = primary[phys] != NULL;
	pthread_mutex_unlock(&global_lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	REQUIRE_DEVICE(phys, dev);
	pthread_mutex_lock(&global_lock);
	if (primary[phys])
		primary[phys]->flags = flags;
	pthread_mutex_unlock(&global_lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
	return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

static CUresult ctx_push(struct ctx *c)
{
	if (ctx_depth == CTX_STACK_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	ctx_stack[ctx_depth++] = c;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct ctx *c;

	REQUIRE_DEVICE(phys, dev);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	c = ctx_new(phys, false, flags);
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pctx = (CUcontext)c;
	return ctx_push(c);
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, void *params, int num_params,
				unsigned int flags, CUdevice dev)
{
	(void)params;
	(void)num_params;
	return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
				unsigned int flags, CUdevice dev)
{
	(void)params;
	return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
	struct ctx *c = (struct ctx *)ctx;

	REQUIRE_INIT();
	if (!ctx_valid(c) || c->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_free(c);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	struct ctx *c = (struct ctx *)ctx;

	REQUIRE_INIT();
	if (c && !ctx_valid(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!c) {
		if (ctx_depth > 0)
			ctx_depth--;
		return CUDA_SUCCESS;
	}
	if (ctx_depth == 0)
		return ctx_push(c);
	ctx_stack[ctx_depth - 1] = c;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	REQUIRE_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)ctx_current();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
	REQUIRE_INIT();
	if (!ctx_valid((struct ctx *)ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	return ctx_push((struct ctx *)ctx);
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
	REQUIRE_INIT();
	if (ctx_depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_depth--;
	if (pctx)
		*pctx = (CUcontext)ctx_stack[ctx_depth];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	REQUIRE_CTX(c);
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = device_ordinal(c->dev);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	struct ctx *c = ctx ? (struct ctx *)ctx : ctx_current();

	REQUIRE_INIT();
	if (!ctx_valid(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = device_ordinal(c->dev);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
	REQUIRE_CTX(c);
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = c->flags;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	REQUIRE_INIT();
	if (ctx && !ctx_valid((struct ctx *)ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = 12050;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
	REQUIRE_CTX(c);
	pthread_mutex_lock(&c->lock);
	uint64_t last = c->submitted;
	pthread_mutex_unlock(&c->lock);
	wait_for(c, last);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	struct ctx *c = (struct ctx *)ctx;

	REQUIRE_INIT();
	if (!c)
		return cuCtxSynchronize();
	if (!ctx_valid(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&c->lock);
	uint64_t last = c->submitted;
	pthread_mutex_unlock(&c->lock);
	wait_for(c, last);
	return CUDA_SUCCESS;
}

/* ---- the allocation registry ----------------------------------------- */

static size_t bucket_of(uintptr_t ptr)
{
	return (ptr >> 12) * 0x9e3779b97f4a7c15ULL >> 52 & (ALLOC_BUCKETS - 1);
}

static void alloc_add(struct alloc *a)
{
	pthread_mutex_lock(&global_lock);
	a->next = allocs[bucket_of(a->ptr)];
	allocs[bucket_of(a->ptr)] = a;
	pthread_mutex_unlock(&global_lock);
}

/* Unlinks and returns the record of ptr, or NULL. */
static struct alloc *alloc_take(uintptr_t ptr)
{
	struct alloc **link, *a = NULL;

	pthread_mutex_lock(&global_lock);
	for (link = &allocs[bucket_of(ptr)]; *link; link = &(*link)->next)
		if ((*link)->ptr == ptr) {
			a = *link;
			*link = a->next;
			break;
		}
	pthread_mutex_unlock(&global_lock);
	return a;
}

static void alloc_destroy(struct alloc *a)
{
	if (a->kind == ALLOC_HOST) {
		free((void *)a->ptr);
	} else {
		munmap((void *)a->ptr, a->size);
		if (a->kind == ALLOC_DEVICE)
			sim_mem_release(sim, a->dev, a->size);
	}
	free(a);
}

static void alloc_release(uintptr_t ptr)
{
	struct alloc *a = alloc_take(ptr);

	if (a)
		alloc_destroy(a);
}

static void allocs_free_of(struct ctx *c)
{
	struct alloc *mine = NULL;

	pthread_mutex_lock(&global_lock);
	for (size_t b = 0; b < ALLOC_BUCKETS; b++)
		for (struct alloc **link = &allocs[b]; *link;) {
			struct alloc *a = *link;

			if (a->ctx != c) {
				link = &a->next;
				continue;
			}
			*link = a->next;
			a->next = mine;
			mine = a;
		}
	pthread_mutex_unlock(&global_lock);
	while (mine) {
		struct alloc *next = mine->next;

		alloc_destroy(mine);
		mine = next;
	}
}

/* Device memory: admitted against the device, backed by a lazy anonymous
 * mapping so that copies and memsets work. */
static CUresult device_alloc(struct ctx *c, int dev, size_t bytes, CUdeviceptr *ret)
{
	struct alloc *a;
	void *p;

	if (!ret || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_mem_reserve(sim, dev, bytes) < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	a = calloc(1, sizeof(*a));
	if (p == MAP_FAILED || !a) {
		if (p != MAP_FAILED)
			munmap(p, bytes);
		free(a);
		sim_mem_release(sim, dev, bytes);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*a = (struct alloc){ .ptr = (uintptr_t)p, .size = bytes, .kind = ALLOC_DEVICE,
			     .dev = dev, .ctx = c };
	alloc_add(a);
	*ret = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	REQUIRE_CTX(c);
	return device_alloc(c, c->dev, bytesize, dptr);
}

CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
				    size_t height, unsigned int element_bytes)
{
	size_t row;

	REQUIRE_CTX(c);
	if (!pitch || (element_bytes != 4 && element_bytes != 8 && element_bytes != 16) ||
	    width == 0 || height == 0)
		return CUDA_ERROR_INVALID_VALUE;
	row = (width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
	*pitch = row;
	return device_alloc(c, c->dev, row * height, dptr);
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	REQUIRE_CTX(c);
	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	return device_alloc(c, c->dev, bytesize, dptr);
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	struct alloc *a;

	REQUIRE_INIT();
	if (dptr == 0)
		return CUDA_SUCCESS;
	a = alloc_take((uintptr_t)dptr);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->kind != ALLOC_DEVICE) {
		alloc_add(a);
		return CUDA_ERROR_INVALID_VALUE;
	}
	alloc_destroy(a);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	uint64_t total, used;

	REQUIRE_CTX(c);
	if (!free_bytes || !total_bytes)
		return CUDA_ERROR_INVALID_VALUE;
	total = sim_mem_total(sim, c->dev);
	used = sim_mem_used(sim, c->dev);
	*total_bytes = total;
	*free_bytes = total - used;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	struct alloc *a;
	void *p;

	REQUIRE_CTX(c);
	if (!pp || bytesize == 0)
		return CUDA_ERROR_INVALID_VALUE;
	p = aligned_alloc(4096, (bytesize + 4095) / 4096 * 4096);
	a = calloc(1, sizeof(*a));
	if (!p || !a) {
		free(p);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*a = (struct alloc){ .ptr = (uintptr_t)p, .size = bytesize, .kind = ALLOC_HOST, .ctx = c };
	alloc_add(a);
	*pp = p;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	(void)flags;
	return cuMemAllocHost_v2(pp, bytesize);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
	struct alloc *a;

	REQUIRE_INIT();
	a = alloc_take((uintptr_t)p);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->kind != ALLOC_HOST) {
		alloc_add(a);
		return CUDA_ERROR_INVALID_VALUE;
	}
	alloc_destroy(a);
	return CUDA_SUCCESS;
}

/* ---- virtual memory management --------------------------------------- */

static struct vmm *vmm_of(CUmemGenericAllocationHandle h)
{
	struct vmm *v = (struct vmm *)(uintptr_t)h;

	return v && v->magic == MAGIC_VMM ? v : NULL;
}

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity,
					       const CUmemAllocationProp *prop,
					       CUmemAllocationGranularity_flags option)
{
	REQUIRE_INIT();
	(void)option;
	if (!granularity || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	*granularity = VMM_GRANULARITY;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			     const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct vmm *v;
	int dev;

	REQUIRE_INIT();
	(void)flags;
	if (!handle || !prop || size == 0 || size % VMM_GRANULARITY ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	dev = device_physical(prop->location.id);
	if (dev < 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (sim_mem_reserve(sim, dev, size) < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	v = calloc(1, sizeof(*v));
	if (v)
		v->fd = memfd_create("simdev-vmm", MFD_CLOEXEC);
	if (!v || v->fd < 0 || ftruncate(v->fd, (off_t)size) < 0) {
		if (v && v->fd >= 0)
			close(v->fd);
		free(v);
		sim_mem_release(sim, dev, size);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*v = (struct vmm){ MAGIC_VMM, dev, size, v->fd };
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)v;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct vmm *v = vmm_of(handle);

	REQUIRE_INIT();
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	sim_mem_release(sim, v->dev, v->size);
	close(v->fd);           /* mappings keep the memory until unmapped */
	v->magic = MAGIC_DEAD;
	free(v);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
				     CUdeviceptr addr, unsigned long long flags)
{
	struct alloc *a;
	void *p;

	REQUIRE_INIT();
	(void)alignment;
	(void)flags;
	if (!ptr || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	p = mmap((void *)(uintptr_t)addr, size, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	a = calloc(1, sizeof(*a));
	if (p == MAP_FAILED || !a) {
		if (p != MAP_FAILED)
			munmap(p, size);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*a = (struct alloc){ .ptr = (uintptr_t)p, .size = size, .kind = ALLOC_RESERVED };
	alloc_add(a);
	*ptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct alloc *a;

	REQUIRE_INIT();
	a = alloc_take((uintptr_t)ptr);
	if (!a || a->kind != ALLOC_RESERVED || a->size != size) {
		if (a)
			alloc_add(a);
		return CUDA_ERROR_INVALID_VALUE;
	}
	alloc_destroy(a);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct vmm *v = vmm_of(handle);

	REQUIRE_INIT();
	(void)flags;
	if (!v || ptr == 0 || offset + size > v->size)
		return CUDA_ERROR_INVALID_VALUE;
	if (mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, v->fd,
		 (off_t)offset) == MAP_FAILED)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	REQUIRE_INIT();
	if (ptr == 0 || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	/* Back to a reservation: address space without memory. */
	if (mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
				size_t count)
{
	REQUIRE_INIT();
	if (ptr == 0 || !desc || count == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (mprotect((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* ---- streams --------------------------------------------------------- */

/* The context and stream a stream handle names: the null, legacy and
 * per-thread default streams are the current context's own. */
static CUresult stream_resolve(CUstream h, struct ctx **ret_ctx, struct stream **ret_stream)
{
	struct stream *s = (struct stream *)h;

	if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
		struct ctx *c = ctx_current();

		if (!ctx_valid(c))
			return CUDA_ERROR_INVALID_CONTEXT;
		*ret_ctx = c;
		*ret_stream = &c->null_stream;
		return CUDA_SUCCESS;
	}
	if (s->magic != MAGIC_STREAM)
		return CUDA_ERROR_INVALID_HANDLE;
	*ret_ctx = s->ctx;
	*ret_stream = s;
	return CUDA_SUCCESS;
}

#define REQUIRE_STREAM(c, s, h)                                         \
	REQUIRE_INIT();                                                 \
	struct ctx *c;                                                  \
	struct stream *s;                                               \
	do {                                                            \
		CUresult r_ = stream_resolve((h), &c, &s);              \
		if (r_ != CUDA_SUCCESS)                                 \
			return r_;                                      \
	} while (0)

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int flags)
{
	struct stream *s;

	REQUIRE_CTX(c);
	if (!phStream)
		return CUDA_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*s = (struct stream){ .magic = MAGIC_STREAM, .ctx = c, .flags = flags };
	*phStream = (CUstream)s;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
	CUresult r = cuStreamCreate(phStream, flags);

	if (r == CUDA_SUCCESS)
		((struct stream *)*phStream)->priority = priority;
	return r;
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
	REQUIRE_STREAM(c, s, hStream);
	if (s == &c->null_stream)
		return CUDA_ERROR_INVALID_HANDLE;
	wait_for(c, s->last_seq);
	s->magic = MAGIC_DEAD;
	free(s);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	REQUIRE_STREAM(c, s, hStream);
	if (s->capture)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	wait_for(c, s->last_seq);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
	REQUIRE_STREAM(c, s, hStream);
	return is_done(c, s->last_seq) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int flags)
{
	struct event *e = (struct event *)hEvent;

	(void)flags;
	REQUIRE_STREAM(c, s, hStream);
	(void)s;
	if (!e || e->magic != MAGIC_EVENT)
		return CUDA_ERROR_INVALID_HANDLE;
	/* One worker runs a context's operations in order, so whatever is
	 * queued after this call already follows the event. Across
	 * contexts, wait here. */
	if (e->ctx != c)
		wait_for(e->ctx, e->seq);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
	REQUIRE_STREAM(c, s, hStream);
	if (!priority)
		return CUDA_ERROR_INVALID_VALUE;
	*priority = s->priority;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	REQUIRE_STREAM(c, s, hStream);
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = s->flags;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	struct op *op;

	REQUIRE_STREAM(c, s, hStream);
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	if (s->capture)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	op = calloc(1, sizeof(*op));
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*op = (struct op){ .kind = OP_HOST_FN, .fn = fn, .data = userData };
	op_submit(c, s, op);
	return CUDA_SUCCESS;
}

/* ---- events ---------------------------------------------------------- */

static struct event *event_of(CUevent h)
{
	struct event *e = (struct event *)h;

	return e && e->magic == MAGIC_EVENT ? e : NULL;
}

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int flags)
{
	struct event *e;

	REQUIRE_CTX(c);
	if (!phEvent)
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = MAGIC_EVENT;
	e->ctx = c;
	e->flags = flags;
	*phEvent = (CUevent)e;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
	struct event *e = event_of(hEvent);
	struct op *op;

	REQUIRE_STREAM(c, s, hStream);
	if (!e || e->ctx != c)
		return CUDA_ERROR_INVALID_HANDLE;
	if (s->capture)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	op = calloc(1, sizeof(*op));
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*op = (struct op){ .kind = OP_EVENT, .event = e };
	atomic_store(&e->time_ns, 0);
	e->seq = op_submit(c, s, op);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	(void)flags;
	return cuEventRecord(hEvent, hStream);
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
	struct event *e = event_of(hEvent);

	REQUIRE_INIT();
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	return is_done(e->ctx, e->seq) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	struct event *e = event_of(hEvent);

	REQUIRE_INIT();
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	wait_for(e->ctx, e->seq);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	struct event *a = event_of(hStart), *b = event_of(hEnd);
	uint64_t ta, tb;

	REQUIRE_INIT();
	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	if (!a || !b || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) || !a->seq || !b->seq)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!is_done(a->ctx, a->seq) || !is_done(b->ctx, b->seq))
		return CUDA_ERROR_NOT_READY;
	ta = atomic_load(&a->time_ns);
	tb = atomic_load(&b->time_ns);
	*pMilliseconds = (float)((double)((int64_t)(tb - ta)) / 1e6);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	return cuEventElapsedTime(pMilliseconds, hStart, hEnd);
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
	struct event *e = event_of(hEvent);

	REQUIRE_INIT();
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	wait_for(e->ctx, e->seq);       /* the worker may still touch it */
	e->magic = MAGIC_DEAD;
	free(e);
	return CUDA_SUCCESS;
}

/* ---- copies and memsets ---------------------------------------------- */

/* Queues an operation on a stream; refused while the stream is captured. */
static CUresult enqueue(CUstream h, struct op proto)
{
	struct op *op;

	REQUIRE_STREAM(c, s, h);
	if (s->capture)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	op = malloc(sizeof(*op));
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*op = proto;
	op->next = NULL;
	op_submit(c, s, op);
	return CUDA_SUCCESS;
}

/* A synchronous copy or memset: queued on the null stream, waited for. */
static CUresult run_sync(struct op proto)
{
	CUresult r;

	REQUIRE_CTX(c);
	r = enqueue(NULL, proto);
	if (r == CUDA_SUCCESS)
		wait_for(c, c->null_stream.last_seq);
	return r;
}

static struct op copy_op(void *dst, const void *src, size_t n)
{
	return (struct op){ .kind = OP_COPY, .dst = dst, .src = src, .count = n };
}

static struct op set_op(enum op_kind kind, CUdeviceptr dst, uint32_t value, size_t n)
{
	return (struct op){ .kind = kind, .dst = (void *)(uintptr_t)dst, .value = value, .count = n };
}

#define DPTR(p) ((void *)(uintptr_t)(p))

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return run_sync(copy_op(DPTR(dst), DPTR(src), n));
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	return run_sync(copy_op(DPTR(dst), src, n));
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	return run_sync(copy_op(dst, DPTR(src), n));
}

CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return run_sync(copy_op(DPTR(dst), DPTR(src), n));
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return enqueue(s, copy_op(DPTR(dst), DPTR(src), n));
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	return enqueue(s, copy_op(DPTR(dst), src, n));
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	return enqueue(s, copy_op(dst, DPTR(src), n));
}

CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return enqueue(s, copy_op(DPTR(dst), DPTR(src), n));
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n)
{
	return run_sync(set_op(OP_SET8, dst, uc, n));
}

CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n)
{
	return run_sync(set_op(OP_SET32, dst, ui, n));
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
	return enqueue(s, set_op(OP_SET8, dst, uc, n));
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s)
{
	return enqueue(s, set_op(OP_SET32, dst, ui, n));
}

/* ---- stream-ordered allocation and pools ----------------------------- */

static struct pool *pool_of(CUmemoryPool h)
{
	struct pool *p = (struct pool *)h;

	return p && p->magic == MAGIC_POOL ? p : NULL;
}

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
	REQUIRE_DEVICE(phys, dev);
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	*pool = (CUmemoryPool)&default_pool[phys];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	REQUIRE_DEVICE(phys, dev);
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	*pool = (CUmemoryPool)current_pool[phys];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	struct pool *p = pool_of(pool);

	REQUIRE_DEVICE(phys, dev);
	if (!p || p->dev != phys)
		return CUDA_ERROR_INVALID_VALUE;
	current_pool[phys] = p;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	struct pool *p;
	int dev;

	REQUIRE_INIT();
	if (!pool || !props || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	dev = device_physical(props->location.id);
	if (dev < 0)
		return CUDA_ERROR_INVALID_DEVICE;
	p = malloc(sizeof(*p));
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (struct pool){ MAGIC_POOL, dev };
	*pool = (CUmemoryPool)p;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
	struct pool *p = pool_of(pool);

	REQUIRE_INIT();
	if (!p || p == &default_pool[p->dev])
		return CUDA_ERROR_INVALID_VALUE;
	if (current_pool[p->dev] == p)
		current_pool[p->dev] = &default_pool[p->dev];
	p->magic = MAGIC_DEAD;
	free(p);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
	REQUIRE_INIT();
	(void)keep;
	return pool_of(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Pools hand memory out at once and take it back in stream order; freed
 * memory is not kept resident (no release threshold). */
static CUresult pool_alloc(struct pool *p, CUdeviceptr *dptr, size_t bytes, CUstream h)
{
	REQUIRE_STREAM(c, s, h);
	if (s->capture)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return device_alloc(c, p->dev, bytes, dptr);
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	REQUIRE_STREAM(c, s, hStream);
	(void)s;
	return pool_alloc(current_pool[c->dev], dptr, bytesize, hStream);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
					 CUmemoryPool pool, CUstream hStream)
{
	struct pool *p = pool_of(pool);

	REQUIRE_INIT();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return pool_alloc(p, dptr, bytesize, hStream);
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return enqueue(hStream, (struct op){ .kind = OP_FREE, .ptr = dptr });
}

/* ---- modules and functions ------------------------------------------- */

static bool is_binary_image(const unsigned char *image)
{
	static const unsigned char elf[4] = { 0x7f, 'E', 'L', 'F' };
	static const unsigned char fatbin[4] = { 0x50, 0xed, 0x55, 0xba };

	return memcmp(image, elf, 4) == 0 || memcmp(image, fatbin, 4) == 0;
}

/* Collects the names after ".entry" in PTX text. */
static int ptx_entries(const char *ptx, struct module *m)
{
	for (const char *p = strstr(ptx, ".entry"); p; p = strstr(p + 6, ".entry")) {
		const char *name = p + 6;
		size_t len;
		char **grown;

		while (*name == ' ' || *name == '\t')
			name++;
		len = strcspn(name, " \t\r\n(");
		if (len == 0)
			continue;
		grown = realloc(m->entry, (size_t)(m->entries + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		m->entry = grown;
		m->entry[m->entries] = strndup(name, len);
		if (!m->entry[m->entries])
			return -ENOMEM;
		m->entries++;
	}
	return 0;
}

static void module_free(struct module *m)
{
	for (int i = 0; i < m->entries; i++) {
		free(m->entry[i]);
		if (m->func && m->func[i]) {
			m->func[i]->magic = MAGIC_DEAD;
			free(m->func[i]);
		}
	}
	free(m->entry);
	free(m->func);
	m->magic = MAGIC_DEAD;
	free(m);
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	struct module *m;

	REQUIRE_CTX(c);
	(void)c;
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = MAGIC_MODULE;
	/* Binary images (cubin, fatbin) load, but their kernels are unknown
	 * to the simulation; PTX must look like PTX. */
	if (!is_binary_image(image)) {
		if (!strstr(image, ".version") || !strstr(image, ".target")) {
			module_free(m);
			return CUDA_ERROR_INVALID_PTX;
		}
		if (ptx_entries(image, m) < 0) {
			module_free(m);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	*module = (CUmodule)m;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n,
				    CUjit_option *options, void **values)
{
	(void)n;
	(void)options;
	(void)values;
	return cuModuleLoadData(module, image);
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	CUresult r;

	REQUIRE_INIT();
	if (!fname)
		return CUDA_ERROR_INVALID_VALUE;
	f = fopen(fname, "re");
	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	if (getdelim(&text, &len, '\0', f) < 0) {
		fclose(f);
		free(text);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	fclose(f);
	r = cuModuleLoadData(module, text);
	free(text);
	return r;
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
	struct module *m = (struct module *)hmod;

	REQUIRE_INIT();
	if (!m || m->magic != MAGIC_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	module_free(m);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	struct module *m = (struct module *)hmod;
	struct func *f;

	REQUIRE_INIT();
	if (!m || m->magic != MAGIC_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < m->entries; i++) {
		if (strcmp(m->entry[i], name) != 0)
			continue;
		if (!m->func)
			m->func = calloc((size_t)m->entries, sizeof(*m->func));
		if (m->func && !m->func[i])
			m->func[i] = calloc(1, sizeof(*f));
		f = m->func ? m->func[i] : NULL;
		if (!f)
			return CUDA_ERROR_OUT_OF_MEMORY;
		*f = (struct func){ MAGIC_FUNC, m, strcmp(name, SPIN_KERNEL) == 0 };
		*hfunc = (CUfunction)f;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_NOT_FOUND;
}

/* ---- launches and graphs --------------------------------------------- */

#define LAUNCH_PARAM_END ((void *)0x00)
#define LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)

/* Device time a launch of f asks for: gpuload_spin's first parameter (a
 * u64 of nanoseconds, from kernelParams or the packed `extra` buffer);
 * any other kernel the default. */
static uint64_t kernel_ns(const struct func *f, void **params, void **extra)
{
	uint64_t ns = 0;

	if (!f->spin)
		return default_kernel_ns();
	if (params && params[0])
		memcpy(&ns, params[0], sizeof(ns));
	for (int i = 0; !params && extra && extra[i] != LAUNCH_PARAM_END; i += 2)
		if (extra[i] == LAUNCH_PARAM_BUFFER_POINTER && extra[i + 1])
			memcpy(&ns, extra[i + 1], sizeof(ns));
	return ns;
}

static bool dims_valid(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz)
{
	return gx && gy && gz && bx && by && bz && (uint64_t)bx * by * bz <= 1024;
}

static CUresult graph_add(struct graph *g, uint64_t ns)
{
	if (g->nodes == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct graph_node *grown = realloc(g->node, cap * sizeof(*grown));

		if (!grown)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->node = grown;
		g->cap = cap;
	}
	g->node[g->nodes++] = (struct graph_node){ ns };
	return CUDA_SUCCESS;
}

/* Every launch path ends here: recorded into a graph while the stream is
 * captured, otherwise queued. */
static CUresult launch(CUfunction hf, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		       unsigned by, unsigned bz, CUstream h, void **params, void **extra)
{
	struct func *f = (struct func *)hf;
	struct op *op;

	REQUIRE_STREAM(c, s, h);
	if (!f || f->magic != MAGIC_FUNC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!dims_valid(gx, gy, gz, bx, by, bz))
		return CUDA_ERROR_INVALID_VALUE;
	if (s->capture)
		return graph_add(s->capture, kernel_ns(f, params, extra));
	op = calloc(1, sizeof(*op));
	if (!op)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*op = (struct op){ .kind = OP_KERNEL, .ns = kernel_ns(f, params, extra) };
	op_submit(c, s, op);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				unsigned int gridDimZ, unsigned int blockDimX,
				unsigned int blockDimY, unsigned int blockDimZ,
				unsigned int sharedMemBytes, CUstream hStream,
				void **kernelParams, void **extra)
{
	(void)sharedMemBytes;
	return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
		      hStream, kernelParams, extra);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
				  void **kernelParams, void **extra)
{
	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, config->gridDimX, config->gridDimY, config->gridDimZ,
		      config->blockDimX, config->blockDimY, config->blockDimZ, config->hStream,
		      kernelParams, extra);
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					   unsigned int gridDimY, unsigned int gridDimZ,
					   unsigned int blockDimX, unsigned int blockDimY,
					   unsigned int blockDimZ, unsigned int sharedMemBytes,
					   CUstream hStream, void **kernelParams)
{
	(void)sharedMemBytes;
	return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
		      hStream, kernelParams, NULL);
}

static struct graph *graph_of(CUgraph h)
{
	struct graph *g = (struct graph *)h;

	return g && g->magic == MAGIC_GRAPH ? g : NULL;
}

CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	struct graph *g;

	REQUIRE_INIT();
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->magic = MAGIC_GRAPH;
	*phGraph = (CUgraph)g;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
	struct graph *g = graph_of(hGraph);

	REQUIRE_INIT();
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < g->mems; i++)
		alloc_release((uintptr_t)g->mem[i]);
	free(g->mem);
	free(g->node);
	g->magic = MAGIC_DEAD;
	free(g);
	return CUDA_SUCCESS;
}

/* A graph's memory node: simdev allocates at once (a GPU does when the
 * graph first runs) and frees with the graph (a free node, in a real
 * driver, returns it to the graph's pool, which keeps it). */
CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode *phNode, CUgraph hGraph,
					const CUgraphNode *deps, size_t numDeps,
					CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	struct graph *g = graph_of(hGraph);
	CUdeviceptr *grown;
	CUresult r;
	int dev;

	(void)deps;
	(void)numDeps;
	REQUIRE_CTX(c);
	if (!g || !p || !phNode || p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	dev = device_physical(p->poolProps.location.id);
	if (dev < 0)
		return CUDA_ERROR_INVALID_DEVICE;
	grown = realloc(g->mem, (g->mems + 1) * sizeof(*grown));
	if (!grown)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->mem = grown;
	r = device_alloc(c, dev, p->bytesize, &p->dptr);
	if (r != CUDA_SUCCESS)
		return r;
	g->mem[g->mems++] = p->dptr;
	*phNode = (CUgraphNode)(uintptr_t)(g->nodes + g->mems);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode *phNode, CUgraph hGraph,
				       const CUgraphNode *deps, size_t numDeps, CUdeviceptr dptr)
{
	struct graph *g = graph_of(hGraph);

	(void)deps;
	(void)numDeps;
	(void)dptr;
	REQUIRE_INIT();
	if (!g || !phNode)
		return CUDA_ERROR_INVALID_VALUE;
	*phNode = (CUgraphNode)(uintptr_t)(g->nodes + g->mems + 1);
	return CUDA_SUCCESS;
}

/* Nodes run in the order they were added; dependencies are not needed
 * for that and are not kept. */
CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phNode, CUgraph hGraph,
					 const CUgraphNode *deps, size_t numDeps,
					 const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	struct graph *g = graph_of(hGraph);
	struct func *f;
	CUresult r;

	REQUIRE_INIT();
	(void)deps;
	(void)numDeps;
	if (!g || !p || !phNode)
		return CUDA_ERROR_INVALID_VALUE;
	f = (struct func *)p->func;
	if (!f || f->magic != MAGIC_FUNC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!dims_valid(p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
			p->blockDimZ))
		return CUDA_ERROR_INVALID_VALUE;
	r = graph_add(g, kernel_ns(f, p->kernelParams, p->extra));
	if (r == CUDA_SUCCESS)
		*phNode = (CUgraphNode)(uintptr_t)g->nodes;
	return r;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phExec, CUgraph hGraph,
					     unsigned long long flags)
{
	struct graph *g = graph_of(hGraph);
	struct graph_exec *x;

	REQUIRE_CTX(c);
	(void)flags;
	if (!g || !phExec)
		return CUDA_ERROR_INVALID_VALUE;
	x = calloc(1, sizeof(*x));
	if (x && g->nodes) {
		x->node = malloc(g->nodes * sizeof(*x->node));
		if (!x->node) {
			free(x);
			x = NULL;
		}
	}
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->magic = MAGIC_EXEC;
	x->ctx = c;
	x->nodes = g->nodes;
	if (g->nodes)
		memcpy(x->node, g->node, g->nodes * sizeof(*x->node));
	*phExec = (CUgraphExec)x;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phExec, CUgraph hGraph,
				       CUgraphNode *phErrorNode, char *logBuffer,
				       size_t bufferSize)
{
	(void)phErrorNode;
	if (logBuffer && bufferSize)
		logBuffer[0] = '\0';
	return cuGraphInstantiateWithFlags(phExec, hGraph, 0);
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hExec, CUstream hStream)
{
	struct graph_exec *x = (struct graph_exec *)hExec;

	REQUIRE_STREAM(c, s, hStream);
	if (!x || x->magic != MAGIC_EXEC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (s->capture)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	for (size_t i = 0; i < x->nodes; i++) {
		struct op *op = calloc(1, sizeof(*op));

		if (!op)
			return CUDA_ERROR_OUT_OF_MEMORY;
		*op = (struct op){ .kind = OP_KERNEL, .ns = x->node[i].ns };
		op_submit(c, s, op);
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphUpload(CUgraphExec hExec, CUstream hStream)
{
	struct graph_exec *x = (struct graph_exec *)hExec;

	(void)hStream;
	REQUIRE_INIT();
	return x && x->magic == MAGIC_EXEC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hExec)
{
	struct graph_exec *x = (struct graph_exec *)hExec;

	REQUIRE_INIT();
	if (!x || x->magic != MAGIC_EXEC)
		return CUDA_ERROR_INVALID_HANDLE;
	free(x->node);
	x->magic = MAGIC_DEAD;
	free(x);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	CUgraph g;
	CUresult r;

	REQUIRE_STREAM(c, s, hStream);
	(void)mode;
	(void)c;
	if (s->capture)
		return CUDA_ERROR_ILLEGAL_STATE;
	if (s == &c->null_stream)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	r = cuGraphCreate(&g, 0);
	if (r == CUDA_SUCCESS)
		s->capture = graph_of(g);
	return r;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	REQUIRE_STREAM(c, s, hStream);
	(void)c;
	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	if (!s->capture)
		return CUDA_ERROR_ILLEGAL_STATE;
	*phGraph = (CUgraph)s->capture;
	s->capture = NULL;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *status)
{
	REQUIRE_STREAM(c, s, hStream);
	(void)c;
	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	*status = s->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

/* ---- per-thread default stream variants ------------------------------ */

/* The _ptsz/_ptds entry points differ only in what a NULL stream means;
 * here every default stream is the context's one, so they forward. */
GP_CUDA_FORWARD(cuLaunchKernel_ptsz, cuLaunchKernel,
	   (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
	    unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void **p, void **e),
	   (f, gx, gy, gz, bx, by, bz, shm, s, p, e))
GP_CUDA_FORWARD(cuLaunchKernelEx_ptsz, cuLaunchKernelEx,
	   (const CUlaunchConfig *cfg, CUfunction f, void **p, void **e), (cfg, f, p, e))
GP_CUDA_FORWARD(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel,
	   (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
	    unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void **p),
	   (f, gx, gy, gz, bx, by, bz, shm, s, p))
GP_CUDA_FORWARD(cuLaunchHostFunc_ptsz, cuLaunchHostFunc, (CUstream s, CUhostFn fn, void *d),
	   (s, fn, d))
GP_CUDA_FORWARD(cuGraphLaunch_ptsz, cuGraphLaunch, (CUgraphExec x, CUstream s), (x, s))
GP_CUDA_FORWARD(cuGraphUpload_ptsz, cuGraphUpload, (CUgraphExec x, CUstream s), (x, s))
GP_CUDA_FORWARD(cuStreamSynchronize_ptsz, cuStreamSynchronize, (CUstream s), (s))
GP_CUDA_FORWARD(cuStreamQuery_ptsz, cuStreamQuery, (CUstream s), (s))
GP_CUDA_FORWARD(cuStreamWaitEvent_ptsz, cuStreamWaitEvent, (CUstream s, CUevent e, unsigned int f),
	   (s, e, f))
GP_CUDA_FORWARD(cuStreamGetPriority_ptsz, cuStreamGetPriority, (CUstream s, int *p), (s, p))
GP_CUDA_FORWARD(cuStreamGetFlags_ptsz, cuStreamGetFlags, (CUstream s, unsigned int *f), (s, f))
GP_CUDA_FORWARD(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture_v2,
	   (CUstream s, CUstreamCaptureMode m), (s, m))
GP_CUDA_FORWARD(cuStreamEndCapture_ptsz, cuStreamEndCapture, (CUstream s, CUgraph *g), (s, g))
GP_CUDA_FORWARD(cuStreamIsCapturing_ptsz, cuStreamIsCapturing,
	   (CUstream s, CUstreamCaptureStatus *st), (s, st))
GP_CUDA_FORWARD(cuEventRecord_ptsz, cuEventRecord, (CUevent e, CUstream s), (e, s))
GP_CUDA_FORWARD(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags,
	   (CUevent e, CUstream s, unsigned int f), (e, s, f))
GP_CUDA_FORWARD(cuMemcpy_ptds, cuMemcpy, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n))
GP_CUDA_FORWARD(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2, (CUdeviceptr d, const void *s, size_t n),
	   (d, s, n))
GP_CUDA_FORWARD(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2, (void *d, CUdeviceptr s, size_t n), (d, s, n))
GP_CUDA_FORWARD(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2, (CUdeviceptr d, CUdeviceptr s, size_t n),
	   (d, s, n))
GP_CUDA_FORWARD(cuMemcpyAsync_ptsz, cuMemcpyAsync,
	   (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
GP_CUDA_FORWARD(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2,
	   (CUdeviceptr d, const void *s, size_t n, CUstream st), (d, s, n, st))
GP_CUDA_FORWARD(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2,
	   (void *d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
GP_CUDA_FORWARD(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2,
	   (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
GP_CUDA_FORWARD(cuMemsetD8_v2_ptds, cuMemsetD8_v2, (CUdeviceptr d, unsigned char v, size_t n),
	   (d, v, n))
GP_CUDA_FORWARD(cuMemsetD32_v2_ptds, cuMemsetD32_v2, (CUdeviceptr d, unsigned int v, size_t n),
	   (d, v, n))
GP_CUDA_FORWARD(cuMemsetD8Async_ptsz, cuMemsetD8Async,
	   (CUdeviceptr d, unsigned char v, size_t n, CUstream s), (d, v, n, s))
GP_CUDA_FORWARD(cuMemsetD32Async_ptsz, cuMemsetD32Async,
	   (CUdeviceptr d, unsigned int v, size_t n, CUstream s), (d, v, n, s))
GP_CUDA_FORWARD(cuMemAllocAsync_ptsz, cuMemAllocAsync, (CUdeviceptr *p, size_t n, CUstream s),
	   (p, n, s))
GP_CUDA_FORWARD(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync,
	   (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s), (p, n, pool, s))
GP_CUDA_FORWARD(cuMemFreeAsync_ptsz, cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, s))

/* Legacy names with the same ABI as their successors. */
GP_CUDA_FORWARD(cuCtxDestroy, cuCtxDestroy_v2, (CUcontext c), (c))
GP_CUDA_FORWARD(cuCtxPushCurrent, cuCtxPushCurrent_v2, (CUcontext c), (c))
GP_CUDA_FORWARD(cuCtxPopCurrent, cuCtxPopCurrent_v2, (CUcontext *c), (c))
GP_CUDA_FORWARD(cuStreamDestroy, cuStreamDestroy_v2, (CUstream s), (s))
GP_CUDA_FORWARD(cuEventDestroy, cuEventDestroy_v2, (CUevent e), (e))
GP_CUDA_FORWARD(cuStreamBeginCapture, cuStreamBeginCapture_v2, (CUstream s, CUstreamCaptureMode m),
	   (s, m))

/* ---- finding functions ----------------------------------------------- */

CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	(void)pExportTableId;
	if (ppExportTable)
		*ppExportTable = NULL;
	return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags, CUdriverProcAddressQueryResult *status);
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags);

/* Arrays are not simulated either, but libgpushare hooks them, so
 * include/gp-cuda.h declares them with their types and a stub without
 * parameters would contradict that: these are typed. */
CUresult CUDAAPI cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
	(void)pHandle;
	(void)pAllocateArray;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
	(void)pHandle;
	(void)pAllocateArray;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuArrayDestroy(CUarray hArray)
{
	(void)hArray;
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* The functions of the map that simdev does not simulate: one stub each,
 * named by procs.gen.h (gen-procs.awk -v stubs=1), exported under the
 * driver's name and in the cuGetProcAddress table like any other.
 *
 * A stub declares no parameters, reads none and returns
 * CUDA_ERROR_NOT_SUPPORTED, and that is safe whatever its caller passes:
 * in the C calling conventions simdev runs on (x86-64 System V, AArch64
 * AAPCS64; CUDAAPI is empty on Linux, no callee-pops convention such as
 * Windows' __stdcall) the caller puts the arguments in registers and in
 * its own stack frame and takes them away itself after the call, so a
 * callee that touches none of them and only sets the return register
 * leaves registers and stack as the caller expects, for any number and
 * type of arguments. Every driver function returns CUresult, an int in
 * the return register, so no caller expects a result elsewhere (as with a
 * structure returned through memory). Only C's type rules are bent, and
 * only across the library boundary, where no compiler sees both sides. */
#define GP_PROC_STUB(symbol)                                                             \
	CUresult CUDAAPI symbol(void);                                                   \
	CUresult CUDAAPI symbol(void)                                                    \
	{                                                                                \
		return CUDA_ERROR_NOT_SUPPORTED;                                         \
	}

#include "procs.gen.h"

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	const struct proc_entry *e;
	bool known;

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	if (cudaVersion > GP_CUDA_VERSION)
		return CUDA_ERROR_INVALID_VALUE;
	e = gp_proc_find(proc_table, sizeof(proc_table) / sizeof(proc_table[0]), symbol,
			 cudaVersion, flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &known);
	if (!e) {
		if (status)
			*status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
					: CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return known ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
	}
	*pfn = (void *)e->fn;           /* never NULL: a stub where simdev has none */
	if (status)
		*status = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
