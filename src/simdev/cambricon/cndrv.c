/* cndrv.c — simdev's libcndrv.so: Cambricon's driver API (CNDrv) for the
 * simulated MLUs of GPUPOOL_SIM_DEVICES (model mlu370-48g, simdev.h).
 *
 * The devices are the simdev devices of vendor "cambricon", in simdev's
 * order, of which MLU_VISIBLE_DEVICES shows some, renumbered 0..n-1 as the
 * real driver does: a comma list of indices; the list ends at the first
 * entry that is not an index or repeats one; empty: no device. (The real
 * variable may take more forms; simdev takes indices only.)
 *
 * Each device has, per process, one shared context (cnSharedContextAcquire;
 * the current one is per thread, device 0's when none was set) whose work
 * queue's worker thread (simdev/queue.h) runs its queues' work in
 * submission order, so a launch returns at once and a queue, notifier or
 * context is done when the worker has passed its last operation. A kernel
 * (cnInvokeKernel) occupies its device for the time its first parameter
 * asks for: a uint64_t of nanoseconds, through kernelParams[0] or the
 * first 8 bytes of the packed `extra` buffer
 * (CN_INVOKE_PARAM_BUFFER_POINTER); without one, GPUPOOL_SIM_KERNEL_US
 * (default 10 µs). The kernel handle is not looked at (modules are not
 * simulated): any non-NULL value runs.
 *
 * Memory (cnMalloc, cnMallocSecurity, cnZmalloc) is admitted atomically
 * across processes against the device (sim_mem_reserve) and backed by a
 * lazy anonymous mapping; cnFree gives it back. Past the device:
 * CN_MEMORY_ERROR_OUT_OF_MEMORY.
 *
 * cnGetExportFunction hands out this library's own functions by name, as
 * the real driver does for CNRT: a caller that uses them never goes through
 * the dynamic linker again (libcnrt.so, cnrt.c, finds everything so). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "include/gp-cambricon.h"
#include "simdev/queue.h"
#include "simdev/simdev.h"

/* Every non-static function here is a driver entry point; its prototype
 * is CNDrv's ABI (gp-cambricon.h has the typedefs). */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define MAGIC_CTX 0x434e4358u
#define MAGIC_QUEUE 0x434e5155u
#define MAGIC_NOTIFIER 0x434e4e54u
#define ALLOC_BUCKETS 1024

struct ctx;

struct queue {
	uint32_t magic;
	struct ctx *ctx;
	_Atomic uint64_t last_seq;      /* of its last operation (sim_queue_submit) */
};

struct notifier {
	uint32_t magic;
	struct ctx *ctx;                /* where it was placed last; NULL: never */
	uint64_t seq;
};


/* One device's shared context in this process: its queues' work runs
 * on the one work queue of the context, in submission order. */
struct ctx {
	uint32_t magic;
	int ordinal, phys;
	struct sim_queue *work;
	struct queue default_queue;     /* the NULL queue */
};

struct alloc {
	struct alloc *next;
	CNaddr addr;
	uint64_t size;
	int phys;
};

static struct sim *sim;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CNresult init_result = CN_ERROR_NOT_INITIALIZED;
static bool initialized;
static int visible[SIM_DEVICES_MAX];
static int visible_count;

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ctx *contexts[SIM_DEVICES_MAX];   /* by ordinal, made once */
static struct alloc *allocs[ALLOC_BUCKETS];     /* under global_lock */
static __thread struct ctx *current;

/* ---- set-up ---------------------------------------------------------- */

static bool is_visible(int phys)
{
	for (int i = 0; i < visible_count; i++)
		if (visible[i] == phys)
			return true;
	return false;
}

/* MLU_VISIBLE_DEVICES as described at the top. */
static void visible_init(void)
{
	const char *p = getenv("MLU_VISIBLE_DEVICES");
	int mlu[SIM_DEVICES_MAX], n = sim_vendor_devices(sim, "cambricon", mlu, SIM_DEVICES_MAX);

	if (!p) {
		for (visible_count = 0; visible_count < n; visible_count++)
			visible[visible_count] = mlu[visible_count];
		return;
	}
	while (*p && visible_count < n) {
		char *end;
		long i = strtol(p, &end, 10);

		if (end == p || (*end != ',' && *end) || i < 0 || i >= n || is_visible(mlu[i]))
			break;
		visible[visible_count++] = mlu[i];
		if (!*end)
			break;
		p = end + 1;
	}
}

static void init_once_fn(void)
{
	char err[SIM_ERR_MAX];

	if (sim_open(&sim, err, sizeof(err)) < 0) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: %s\n", err);
		init_result = CN_ERROR_NO_DEVICE;
		return;
	}
	visible_init();
	if (visible_count == 0) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: no Cambricon device (GPUPOOL_SIM_DEVICES needs "
				"mlu370-48g; MLU_VISIBLE_DEVICES may hide them)\n");
		init_result = CN_ERROR_NO_DEVICE;
		return;
	}
	init_result = CN_SUCCESS;
}

CNresult cnInit(unsigned int flags)
{
	if (flags != 0)
		return CN_ERROR_INVALID_VALUE;
	pthread_once(&init_once, init_once_fn);
	if (init_result == CN_SUCCESS)
		initialized = true;
	return init_result;
}

CNresult cnGetLibVersion(int *major, int *minor, int *patch)
{
	if (!major || !minor || !patch)
		return CN_ERROR_INVALID_VALUE;
	*major = 2;
	*minor = 15;
	*patch = 5;
	return CN_SUCCESS;
}

CNresult cnDeviceGetCount(int *count)
{
	if (!initialized)
		return CN_ERROR_NOT_INITIALIZED;
	if (!count)
		return CN_ERROR_INVALID_VALUE;
	*count = visible_count;
	return CN_SUCCESS;
}

CNresult cnDeviceGet(CNdev *dev, int ordinal)
{
	if (!initialized)
		return CN_ERROR_NOT_INITIALIZED;
	if (ordinal < 0 || ordinal >= visible_count)
		return CN_ERROR_INVALID_DEVICE;
	if (!dev)
		return CN_ERROR_INVALID_VALUE;
	*dev = (CNdev)ordinal;
	return CN_SUCCESS;
}

/* ---- the work queue -------------------------------------------------- */

static uint64_t default_kernel_ns(void)
{
	const char *us = getenv("GPUPOOL_SIM_KERNEL_US");

	return us && atol(us) > 0 ? (uint64_t)atol(us) * 1000 : 10000;
}

/* Queues work of `ns` (a kernel; 0: a marker, a notifier) on q; returns
 * its sequence number, 0 when out of host memory. */
static uint64_t op_submit(struct queue *q, uint64_t ns)
{
	struct sim_op op = { .ns = ns };
	uint64_t seq;

	return sim_queue_submit(q->ctx->work, &op, 1, &q->last_seq, &seq) < 0 ? 0 : seq;
}

static void wait_for(struct ctx *c, uint64_t seq)
{
	sim_queue_wait(c->work, seq, SIM_QUEUE_FOREVER);
}

/* ---- contexts -------------------------------------------------------- */

/* The shared context of ordinal, made on first use (its worker lives as
 * long as the process: a driver's contexts are not torn down at exit). */
static struct ctx *ctx_of(int ordinal)
{
	struct ctx *c;

	pthread_mutex_lock(&global_lock);
	c = contexts[ordinal];
	if (!c && (c = calloc(1, sizeof(*c)))) {
		c->magic = MAGIC_CTX;
		c->ordinal = ordinal;
		c->phys = visible[ordinal];
		c->default_queue = (struct queue){ .magic = MAGIC_QUEUE, .ctx = c };
		if (sim_queue_new(sim, c->phys, sizeof(struct sim_op), NULL, &c->work)) {
			free(c);
			c = NULL;
		} else {
			contexts[ordinal] = c;
		}
	}
	pthread_mutex_unlock(&global_lock);
	return c;
}

/* The calling thread's context: the one made current, else device 0's. */
static struct ctx *ctx_current(void)
{
	if (!current)
		current = ctx_of(0);
	return current;
}

#define REQUIRE_CTX(c)                                          \
	if (!initialized)                                       \
		return CN_ERROR_NOT_INITIALIZED;                \
	struct ctx *c = ctx_current();                          \
	if (!c)                                                 \
		return CN_ERROR_SYSTEM_OUT_OF_MEMORY

CNresult cnSharedContextAcquire(CNcontext *pctx, CNdev dev)
{
	struct ctx *c;

	if (!initialized)
		return CN_ERROR_NOT_INITIALIZED;
	if (dev >= (CNdev)visible_count)
		return CN_ERROR_INVALID_DEVICE;
	if (!pctx)
		return CN_ERROR_INVALID_VALUE;
	if (!(c = ctx_of((int)dev)))
		return CN_ERROR_SYSTEM_OUT_OF_MEMORY;
	*pctx = (CNcontext)c;
	return CN_SUCCESS;
}

CNresult cnCtxSetCurrent(CNcontext ctx)
{
	struct ctx *c = (struct ctx *)ctx;

	if (!initialized)
		return CN_ERROR_NOT_INITIALIZED;
	if (c && c->magic != MAGIC_CTX)
		return CN_CONTEXT_ERROR_INVALID;
	current = c;
	return CN_SUCCESS;
}

CNresult cnCtxGetCurrent(CNcontext *ctx)
{
	if (!initialized)
		return CN_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return CN_ERROR_INVALID_VALUE;
	*ctx = (CNcontext)current;
	return CN_SUCCESS;
}

CNresult cnCtxGetDevice(CNdev *dev)
{
	REQUIRE_CTX(c);
	if (!dev)
		return CN_ERROR_INVALID_VALUE;
	*dev = (CNdev)c->ordinal;
	return CN_SUCCESS;
}

CNresult cnCtxSync(void)
{
	REQUIRE_CTX(c);
	sim_queue_drain(c->work);
	return CN_SUCCESS;
}

/* ---- memory ---------------------------------------------------------- */

static size_t bucket(CNaddr addr)
{
	return (size_t)((addr >> 12) * 0x9e3779b97f4a7c15ULL >> 54) % ALLOC_BUCKETS;
}

static CNresult mem_alloc(CNaddr *paddr, cn_uint64_t bytes)
{
	struct alloc *a;
	void *p;

	REQUIRE_CTX(c);
	if (!paddr || bytes == 0)
		return CN_ERROR_INVALID_VALUE;
	if (!(a = calloc(1, sizeof(*a))))
		return CN_ERROR_SYSTEM_OUT_OF_MEMORY;
	if (sim_mem_reserve(sim, c->phys, bytes) < 0) {
		free(a);
		return CN_MEMORY_ERROR_OUT_OF_MEMORY;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		sim_mem_release(sim, c->phys, bytes);
		free(a);
		return CN_ERROR_SYSTEM_OUT_OF_MEMORY;
	}
	*a = (struct alloc){ .addr = (CNaddr)(uintptr_t)p, .size = bytes, .phys = c->phys };
	pthread_mutex_lock(&global_lock);
	a->next = allocs[bucket(a->addr)];
	allocs[bucket(a->addr)] = a;
	pthread_mutex_unlock(&global_lock);
	*paddr = a->addr;
	return CN_SUCCESS;
}

CNresult cnMalloc(CNaddr *paddr, cn_uint64_t bytes)
{
	return mem_alloc(paddr, bytes);
}

CNresult cnMallocSecurity(CNaddr *paddr, cn_uint64_t bytes)
{
	return mem_alloc(paddr, bytes);
}

/* The mapping is zero-filled already. */
CNresult cnZmalloc(CNaddr *paddr, cn_uint64_t bytes)
{
	return mem_alloc(paddr, bytes);
}

CNresult cnFree(CNaddr addr)
{
	struct alloc **pp, *a = NULL;

	if (!initialized)
		return CN_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&global_lock);
	for (pp = &allocs[bucket(addr)]; *pp; pp = &(*pp)->next)
		if ((*pp)->addr == addr) {
			a = *pp;
			*pp = a->next;
			break;
		}
	pthread_mutex_unlock(&global_lock);
	if (!a)
		return CN_MEMORY_ERROR_INVALID_ADDRESS;
	munmap((void *)(uintptr_t)a->addr, a->size);
	sim_mem_release(sim, a->phys, a->size);
	free(a);
	return CN_SUCCESS;
}

CNresult cnMemGetInfo(cn_uint64_t *pfree, cn_uint64_t *ptotal)
{
	uint64_t total, used;

	REQUIRE_CTX(c);
	if (!pfree || !ptotal)
		return CN_ERROR_INVALID_VALUE;
	total = sim_mem_total(sim, c->phys);
	used = sim_mem_used(sim, c->phys);
	*ptotal = total;
	*pfree = used < total ? total - used : 0;
	return CN_SUCCESS;
}

/* ---- queues, notifiers, kernels -------------------------------------- */

/* The queue of a call: NULL is the current context's default queue. */
static struct queue *queue_of(CNqueue hq, struct ctx *c)
{
	struct queue *q = (struct queue *)hq;

	if (!q)
		return &c->default_queue;
	return q->magic == MAGIC_QUEUE ? q : NULL;
}

CNresult cnCreateQueue(CNqueue *pqueue, unsigned int flags)
{
	struct queue *q;

	(void)flags;
	REQUIRE_CTX(c);
	if (!pqueue)
		return CN_ERROR_INVALID_VALUE;
	if (!(q = calloc(1, sizeof(*q))))
		return CN_ERROR_SYSTEM_OUT_OF_MEMORY;
	*q = (struct queue){ .magic = MAGIC_QUEUE, .ctx = c };
	*pqueue = (CNqueue)q;
	return CN_SUCCESS;
}

/* Waits for the queue's work first, as the real driver does. */
CNresult cnDestroyQueue(CNqueue hq)
{
	struct queue *q = (struct queue *)hq;

	if (!initialized)
		return CN_ERROR_NOT_INITIALIZED;
	if (!q || q->magic != MAGIC_QUEUE || q == &q->ctx->default_queue)
		return CN_ERROR_INVALID_VALUE;
	wait_for(q->ctx, atomic_load(&q->last_seq));
	q->magic = 0;
	free(q);
	return CN_SUCCESS;
}

CNresult cnQueueSync(CNqueue hq)
{
	struct queue *q;

	REQUIRE_CTX(c);
	if (!(q = queue_of(hq, c)))
		return CN_ERROR_INVALID_VALUE;
	wait_for(q->ctx, atomic_load(&q->last_seq));
	return CN_SUCCESS;
}

CNresult cnCreateNotifier(CNnotifier *pnotifier, unsigned int flags)
{
	struct notifier *n;

	(void)flags;
	if (!initialized)
		return CN_ERROR_NOT_INITIALIZED;
	if (!pnotifier)
		return CN_ERROR_INVALID_VALUE;
	if (!(n = calloc(1, sizeof(*n))))
		return CN_ERROR_SYSTEM_OUT_OF_MEMORY;
	n->magic = MAGIC_NOTIFIER;
	*pnotifier = (CNnotifier)n;
	return CN_SUCCESS;
}

CNresult cnDestroyNotifier(CNnotifier hn)
{
	struct notifier *n = (struct notifier *)hn;

	if (!n || n->magic != MAGIC_NOTIFIER)
		return CN_ERROR_INVALID_VALUE;
	n->magic = 0;
	free(n);
	return CN_SUCCESS;
}

CNresult cnPlaceNotifier(CNnotifier hn, CNqueue hq)
{
	struct notifier *n = (struct notifier *)hn;
	struct queue *q;
	uint64_t seq;

	REQUIRE_CTX(c);
	if (!n || n->magic != MAGIC_NOTIFIER || !(q = queue_of(hq, c)))
		return CN_ERROR_INVALID_VALUE;
	if (!(seq = op_submit(q, 0)))
		return CN_ERROR_SYSTEM_OUT_OF_MEMORY;
	n->ctx = q->ctx;
	n->seq = seq;
	return CN_SUCCESS;
}

/* CN_SUCCESS once its queue passed it (or it was never placed). */
CNresult cnQueryNotifier(CNnotifier hn)
{
	struct notifier *n = (struct notifier *)hn;

	if (!n || n->magic != MAGIC_NOTIFIER)
		return CN_ERROR_INVALID_VALUE;
	if (n->ctx && !sim_queue_done(n->ctx->work, n->seq))
		return CN_ERROR_NOT_READY;
	return CN_SUCCESS;
}

/* The kernel's device time: its first parameter, as the top says. */
static uint64_t kernel_ns(void **params, void **extra)
{
	uint64_t ns = 0;

	if (params && params[0]) {
		memcpy(&ns, params[0], sizeof(ns));
		return ns;
	}
	for (size_t i = 0; extra && extra[i] != CN_INVOKE_PARAM_END; i += 2) {
		if (extra[i] == CN_INVOKE_PARAM_BUFFER_POINTER && extra[i + 1]) {
			memcpy(&ns, extra[i + 1], sizeof(ns));
			return ns;
		}
	}
	return default_kernel_ns();
}

CNresult cnInvokeKernel(CNkernel kernel, unsigned dimx, unsigned dimy, unsigned dimz,
			KernelClass c_, unsigned reserve, CNqueue hq, void **params, void **extra)
{
	struct queue *q;
	uint64_t ns;

	(void)c_;
	(void)reserve;
	REQUIRE_CTX(c);
	if (!kernel || !dimx || !dimy || !dimz || !(q = queue_of(hq, c)))
		return CN_ERROR_INVALID_VALUE;
	ns = kernel_ns(params, extra);
	return op_submit(q, ns ? ns : 1) ? CN_SUCCESS : CN_ERROR_SYSTEM_OUT_OF_MEMORY;
}

/* ---- finding functions ----------------------------------------------- */

#define EXPORTS(X)                                                              \
	X(cnInit) X(cnGetLibVersion) X(cnDeviceGetCount) X(cnDeviceGet)         \
	X(cnSharedContextAcquire) X(cnCtxSetCurrent) X(cnCtxGetCurrent)         \
	X(cnCtxGetDevice) X(cnCtxSync) X(cnMalloc) X(cnMallocSecurity)          \
	X(cnZmalloc) X(cnFree) X(cnMemGetInfo) X(cnCreateQueue)                 \
	X(cnDestroyQueue) X(cnQueueSync) X(cnCreateNotifier)                    \
	X(cnDestroyNotifier) X(cnPlaceNotifier) X(cnQueryNotifier)              \
	X(cnInvokeKernel) X(cnGetExportFunction)

CNresult cnGetExportFunction(const char *name, const void **func)
{
#define ENTRY(fn) { #fn, (const void *)fn },
	static const struct {
		const char *name;
		const void *fn;
	} table[] = { EXPORTS(ENTRY) };
#undef ENTRY

	if (!name || !func)
		return CN_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, name) == 0) {
			*func = table[i].fn;
			return CN_SUCCESS;
		}
	*func = NULL;
	return CN_ERROR_NOT_FOUND;
}
