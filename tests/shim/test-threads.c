/* test-threads.c — libgpushare in a program whose threads all use the
 * driver at once, as PyTorch's autograd engine, data loaders and NCCL do.
 * Meson runs it with LD_PRELOAD=build/libgpushare.so over build/simdev,
 * GPUPOOL_MEM_LIMIT=64M and GPUPOOL_COMPUTE=50 (hard), and again built
 * with the interposer's sources linked in (GP_TEST_LINKED: test-threads-
 * linked, which reaches the hooks through the interposer's own
 * cuGetProcAddress_v2): that build is the one the ThreadSanitizer pass of
 * `make check` (check-tsan) runs, since a preloaded library's dlsym would
 * run before the sanitizer's runtime is set up.
 *
 * 1. In each of 100 processes (forked from this one before it has threads,
 *    which ThreadSanitizer needs), eight threads released together by a
 *    barrier race into the device's set-up with their first calls: each
 *    process maps the device's region and arbiter once.
 * 2. Eight threads of this process launch kernels and allocate and free
 *    memory (synchronously and in stream order) on the same simulated
 *    device for about two seconds: the device is set up once, what the
 *    driver holds for the task never passes the limit, the kernels get no
 *    more than the share, nothing hangs (an alarm), and at the end the
 *    counts agree: everything allocated was freed, the task's use is 0.
 * The threads never use cmocka's assertions: they count what they see, and
 * the main thread checks the counts. */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "include/gp-cuda.h"
#include "include/gp-nvml.h"

#define MiB (1024ULL * 1024)
#define LIMIT (64 * MiB)                /* GPUPOOL_MEM_LIMIT */
#define SHARE 0.50                      /* GPUPOOL_COMPUTE */
#define THREADS 8
#define RUN_NS 2000000000ULL
#define KERNEL_NS 200000ULL             /* each kernel: 200 µs of device time */
#define HELD_MAX 2                      /* allocations a thread holds at once */
#define SETUP_RACES 100
#define TEST_ALARM_S 120

typedef CUresult (*async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*ctx_sync_fn)(CUcontext);     /* cuCtxSynchronize at 13.0 */

#ifdef GP_TEST_LINKED
CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags, CUdriverProcAddressQueryResult *status);
#endif

static PFN_cuGetProcAddress_v2 gpa;
static CUcontext ctx;
static CUfunction spin;
static nvmlDevice_t nvml_dev;
static nvmlReturn_t (*nvml_procs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);

static const char spin_ptx[] =
	".version 8.0\n.target sm_80\n.address_size 64\n"
	".visible .entry gpuload_spin(.param .u64 ns)\n{\n\tret;\n}\n";

static void *get(const char *name)
{
	CUdriverProcAddressQueryResult status;
	void *fn = NULL;

	return gpa(name, &fn, 13000, 0, &status) == CUDA_SUCCESS ? fn : NULL;
}

#define FN(type, name) ((type)get(name))

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* How many mappings of this process name a file ending in `suffix`. */
static int mappings_of(const char *suffix)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	char line[4096];
	int n = 0;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		size_t len = strcspn(line, "\n");

		line[len] = '\0';
		n += len >= strlen(suffix) && strcmp(line + len - strlen(suffix), suffix) == 0;
	}
	fclose(fp);
	return n;
}

/* Starts the driver in this process: cuInit, the primary context made
 * current, the spin kernel. Nothing here sets the device up in the
 * interposer: only hooked calls that need the device do. */
static int driver_start(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	CUmodule mod;

#ifdef GP_TEST_LINKED
	gpa = lib ? cuGetProcAddress_v2 : NULL;         /* the interposer's */
#else
	gpa = lib ? (PFN_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2") : NULL;
#endif
	if (!gpa || FN(PFN_cuInit, "cuInit")(0) != CUDA_SUCCESS ||
	    FN(PFN_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")(&ctx, 0) != CUDA_SUCCESS ||
	    FN(PFN_cuCtxSetCurrent, "cuCtxSetCurrent")(ctx) != CUDA_SUCCESS ||
	    FN(PFN_cuModuleLoadData, "cuModuleLoadData")(&mod, spin_ptx) != CUDA_SUCCESS ||
	    FN(PFN_cuModuleGetFunction, "cuModuleGetFunction")(&spin, mod, "gpuload_spin") !=
		    CUDA_SUCCESS)
		return -1;
	return 0;
}

/* ---- 1. the set-up race ------------------------------------------------ */

/* A thread of a forked process: its first call that needs the device
 * comes with the seven others'. */
static void *racer_main(void *arg)
{
	pthread_barrier_t *start = arg;
	CUdeviceptr p;

	if (FN(PFN_cuCtxSetCurrent, "cuCtxSetCurrent")(ctx) != CUDA_SUCCESS)
		return arg;
	pthread_barrier_wait(start);
	if (FN(PFN_cuMemAlloc_v2, "cuMemAlloc")(&p, MiB) != CUDA_SUCCESS ||
	    FN(PFN_cuMemFree_v2, "cuMemFree")(p) != CUDA_SUCCESS)
		return arg;
	return NULL;
}

/* In a forked process: 0 when the racing threads set the device up once
 * (one mapping of its region and one of its arbiter), else 1. */
static int setup_race(void)
{
	pthread_t thread[THREADS];
	pthread_barrier_t start;
	int failed = 0;
	void *ret;

	if (driver_start() < 0)
		return 1;
	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&thread[i], NULL, racer_main, &start) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(thread[i], &ret);
		failed |= ret != NULL;
	}
	return failed || mappings_of(".region") != 1 || mappings_of(".tasks/task-0") != 1;
}

static void the_device_is_set_up_once(void **state)
{
	int once = 0;
	(void)state;

	alarm(TEST_ALARM_S);
	for (int i = 0; i < SETUP_RACES; i++) {
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0)
			_exit(setup_race());
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		once += WEXITSTATUS(status) == 0;
	}
	assert_int_equal(once, SETUP_RACES);
}

/* ---- 2. the program ----------------------------------------------------- */

/* What the threads saw, for the main thread to check. */
static struct {
	pthread_barrier_t start;
	uint64_t until;
	atomic_ullong held;             /* bytes the program holds now */
	atomic_ullong most_held, most_device;
	atomic_ulong allocated, refused, freed, kernels, errors;
} seen;

static void note_most(atomic_ullong *most, uint64_t value)
{
	unsigned long long m = atomic_load(most);

	while (value > m && !atomic_compare_exchange_weak(most, &m, value))
		;
}

/* Device memory as the (simulated) driver counts it for this task: the
 * sum over NVML's process list, which the interposer only filters. */
static uint64_t device_used(void)
{
	nvmlProcessInfo_t info[64];
	unsigned count = 64;
	uint64_t used = 0;

	if (nvml_procs(nvml_dev, &count, info) != NVML_SUCCESS) {
		atomic_fetch_add(&seen.errors, 1);
		return 0;
	}
	for (unsigned i = 0; i < count; i++)
		used += info[i].usedGpuMemory;
	return used;
}

struct held {
	CUdeviceptr ptr;
	size_t bytes;
};

/* Allocates 1..16 MiB, synchronously or in stream order. */
static void allocate(struct held *h, CUstream s, unsigned *seed)
{
	size_t bytes = (1 + rand_r(seed) % 16) * MiB;
	CUresult r = rand_r(seed) % 2 ? FN(PFN_cuMemAlloc_v2, "cuMemAlloc")(&h->ptr, bytes)
				      : FN(async_fn, "cuMemAllocAsync")(&h->ptr, bytes, s);

	if (r == CUDA_ERROR_OUT_OF_MEMORY) {
		atomic_fetch_add(&seen.refused, 1);
		return;
	}
	if (r != CUDA_SUCCESS) {
		atomic_fetch_add(&seen.errors, 1);
		return;
	}
	h->bytes = bytes;
	atomic_fetch_add(&seen.allocated, 1);
	note_most(&seen.most_held, atomic_fetch_add(&seen.held, bytes) + bytes);
	note_most(&seen.most_device, device_used());
}

/* Frees it, synchronously or in stream order (counted as freed at once:
 * the program's count may only be below the driver's). */
static void release(struct held *h, CUstream s, unsigned *seed)
{
	CUresult r;

	atomic_fetch_sub(&seen.held, h->bytes);
	if (rand_r(seed) % 2)
		r = FN(PFN_cuMemFree_v2, "cuMemFree")(h->ptr);
	else
		r = FN(free_async_fn, "cuMemFreeAsync")(h->ptr, s);
	atomic_fetch_add(r == CUDA_SUCCESS ? &seen.freed : &seen.errors, 1);
	h->bytes = 0;
}

static void launch(CUstream s)
{
	uint64_t ns = KERNEL_NS;
	void *params[] = { &ns };

	if (FN(PFN_cuLaunchKernel, "cuLaunchKernel")(spin, 1, 1, 1, 1, 1, 1, 0, s, params,
						      NULL) == CUDA_SUCCESS)
		atomic_fetch_add(&seen.kernels, 1);
	else
		atomic_fetch_add(&seen.errors, 1);
}

static void *thread_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919 + 1;
	struct held held[HELD_MAX] = { 0 };
	CUstream s = NULL;

	if (FN(PFN_cuCtxSetCurrent, "cuCtxSetCurrent")(ctx) != CUDA_SUCCESS ||
	    FN(PFN_cuStreamCreate, "cuStreamCreate")(&s, 0) != CUDA_SUCCESS)
		atomic_fetch_add(&seen.errors, 1);
	pthread_barrier_wait(&seen.start);
	/* The first calls of all threads race into the device's set-up. */
	for (unsigned round = 0; now_ns() < seen.until; round++) {
		struct held *h = &held[round % HELD_MAX];

		if (h->bytes)
			release(h, s, &seed);
		allocate(h, s, &seed);
		launch(s);
		launch(s);
		if (round % 8 == 7)
			FN(PFN_cuStreamSynchronize, "cuStreamSynchronize")(s);
	}
	for (int i = 0; i < HELD_MAX; i++)
		if (held[i].bytes)
			release(&held[i], s, &seed);
	FN(PFN_cuStreamSynchronize, "cuStreamSynchronize")(s);
	return NULL;
}

static int setup(void **state)
{
	void *ml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	nvmlReturn_t (*init)(void), (*by_index)(unsigned, nvmlDevice_t *);
	(void)state;

	alarm(TEST_ALARM_S);
	if (!ml || driver_start() < 0)
		return -1;
	*(void **)&init = dlsym(ml, "nvmlInit_v2");
	*(void **)&by_index = dlsym(ml, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&nvml_procs = dlsym(ml, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!init || !by_index || !nvml_procs || init() != NVML_SUCCESS ||
	    by_index(0, &nvml_dev) != NVML_SUCCESS)
		return -1;
	return 0;
}

static void eight_threads_launch_and_allocate_at_once(void **state)
{
	pthread_t thread[THREADS];
	size_t free_bytes, total;
	uint64_t start, elapsed;
	double busy;
	(void)state;

	assert_int_equal(mappings_of(".region"), 0);
	assert_int_equal(pthread_barrier_init(&seen.start, NULL, THREADS + 1), 0);
	start = now_ns();
	seen.until = start + RUN_NS;
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&thread[i], NULL, thread_main, (void *)(uintptr_t)i), 0);
	pthread_barrier_wait(&seen.start);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(thread[i], NULL), 0);
	assert_int_equal(FN(ctx_sync_fn, "cuCtxSynchronize")(ctx), CUDA_SUCCESS);
	elapsed = now_ns() - start;
	busy = (double)atomic_load(&seen.kernels) * KERNEL_NS / (double)elapsed;
	printf("# %lu kernels (%.0f %% of the device), %lu allocations, %lu refused, "
	       "most held %llu MiB (driver: %llu MiB)\n",
	       atomic_load(&seen.kernels), busy * 100, atomic_load(&seen.allocated),
	       atomic_load(&seen.refused), atomic_load(&seen.most_held) / MiB,
	       atomic_load(&seen.most_device) / MiB);

	/* Set up once: one region and one task file for this process. */
	assert_int_equal(mappings_of(".region"), 1);
	assert_int_equal(mappings_of(".tasks/task-0"), 1);
	/* The limit held, for the program and for the driver. */
	assert_int_equal(atomic_load(&seen.errors), 0);
	assert_true(atomic_load(&seen.allocated) > 0);
	assert_true(atomic_load(&seen.refused) > 0);
	assert_true(atomic_load(&seen.most_held) <= LIMIT);
	assert_true(atomic_load(&seen.most_device) <= LIMIT);
	/* The share held: a hard 50 % is a cap (plus the bucket's two slices
	 * of 50 ms over the run), and every thread's kernels ran (a floor that
	 * only shows they ran: under ThreadSanitizer on a busy host the
	 * threads may keep the device far below its share). */
	assert_true(busy <= SHARE + 0.12);
	assert_true(busy >= 0.03);
	/* The counts agree: all freed, the task's use back to nothing. */
	assert_int_equal(atomic_load(&seen.freed), atomic_load(&seen.allocated));
	assert_int_equal(atomic_load(&seen.held), 0);
	assert_int_equal(FN(PFN_cuMemGetInfo_v2, "cuMemGetInfo")(&free_bytes, &total), 0);
	assert_int_equal(total, LIMIT);
	assert_int_equal(free_bytes, LIMIT);
	assert_int_equal(device_used(), 0);
	pthread_barrier_destroy(&seen.start);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_device_is_set_up_once),    /* first: no threads yet */
		cmocka_unit_test_setup(eight_threads_launch_and_allocate_at_once, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
