/* mlu-task.c — a task on a simulated MLU for the Cambricon tests: it
 * allocates, frees, reads the memory view and launches through either
 * layer of the stack (CNRT 6 or CNDrv), found the ways programs find them,
 * and prints what it saw as one JSON object.
 *
 * usage: mlu-task alloc PATH CHUNK_MIB MAX_MIB [HOLD_S]
 *          allocates CHUNK_MIB at a time through PATH until MAX_MIB or the
 *          layer's out-of-memory error; reads the layer's memory view;
 *          with HOLD_S prints a first line {"held":MIB} and waits; frees
 *          everything and allocates again as far as it can (the frees gave
 *          it back), frees again.
 *        mlu-task burn LAYER SECONDS KERNEL_US
 *          launches kernels of KERNEL_US through LAYER (cnrt|cndrv), up to
 *          4 queued, for SECONDS.
 * PATH: cnrt (dlsym on libcnrt.so's handle), linked (dlsym(RTLD_DEFAULT):
 * what a program linked against libcnrt.so calls), cnMalloc,
 * cnMallocSecurity, cnZmalloc (dlsym on libcndrv.so's handle), export
 * (cnMalloc from cnGetExportFunction), mixed (cnMalloc, freed by
 * cnrtFree). Exit status: 0 done (out of memory is a result), 1 a call
 * failed otherwise, 2 bad usage. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/gp-cambricon.h"

#define MiB (1024ULL * 1024)
#define ALLOCS_MAX 4096

static void *cnrt_lib, *cndrv_lib;

/* The function `name` as PATH finds it; exits 1 when it is not there. */
static void *fn(void *lib, const char *name)
{
	void *f = dlsym(lib, name);

	if (!f) {
		fprintf(stderr, "mlu-task: %s not found: %s\n", name, dlerror());
		exit(1);
	}
	return f;
}

static void load(void)
{
	cnrt_lib = dlopen("libcnrt.so", RTLD_NOW | RTLD_GLOBAL);
	cndrv_lib = dlopen("libcndrv.so", RTLD_NOW | RTLD_GLOBAL);
	if (!cnrt_lib || !cndrv_lib) {
		fprintf(stderr, "mlu-task: cannot load the Cambricon stack: %s\n", dlerror());
		exit(1);
	}
	if (((gp_cnInit_t)fn(cndrv_lib, "cnInit"))(0) != CN_SUCCESS) {
		fprintf(stderr, "mlu-task: cnInit failed (GPUPOOL_SIM_DEVICES?)\n");
		exit(1);
	}
}

/* One allocation path: how memory is taken, given back and seen. */
struct path {
	const char *name;
	int (*alloc)(struct path *p, size_t bytes, uint64_t *ret); /* 0, 1 OOM, -1 other */
	int (*free)(struct path *p, uint64_t addr);
	int (*view)(struct path *p, uint64_t *free_bytes, uint64_t *total);
	gp_cnrtMalloc_t cnrt_malloc;
	gp_cnrtFree_t cnrt_free;
	gp_cnrtMemGetInfo_t cnrt_info;
	gp_cnMalloc_t cn_malloc;
	gp_cnFree_t cn_free;
	gp_cnMemGetInfo_t cn_info;
	int last;                       /* the last error code */
};

static int cnrt_alloc(struct path *p, size_t bytes, uint64_t *ret)
{
	void *ptr = NULL;

	p->last = p->cnrt_malloc(&ptr, bytes);
	*ret = (uintptr_t)ptr;
	return p->last == cnrtSuccess ? 0 : p->last == cnrtErrorNoMem ? 1 : -1;
}

static int cnrt_free_(struct path *p, uint64_t addr)
{
	return p->cnrt_free((void *)(uintptr_t)addr) == cnrtSuccess ? 0 : -1;
}

static int cnrt_view(struct path *p, uint64_t *f, uint64_t *t)
{
	size_t a = 0, b = 0;
	int r = p->cnrt_info(&a, &b);

	*f = a;
	*t = b;
	return r == cnrtSuccess ? 0 : -1;
}

static int cn_alloc(struct path *p, size_t bytes, uint64_t *ret)
{
	CNaddr addr = 0;

	p->last = p->cn_malloc(&addr, bytes);
	*ret = addr;
	return p->last == CN_SUCCESS ? 0 : p->last == CN_MEMORY_ERROR_OUT_OF_MEMORY ? 1 : -1;
}

static int cn_free_(struct path *p, uint64_t addr)
{
	return p->cn_free(addr) == CN_SUCCESS ? 0 : -1;
}

static int cn_view(struct path *p, uint64_t *f, uint64_t *t)
{
	return p->cn_info(f, t) == CN_SUCCESS ? 0 : -1;
}

static int path_init(struct path *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	p->name = name;
	if (!strcmp(name, "cnrt") || !strcmp(name, "linked")) {
		void *lib = !strcmp(name, "cnrt") ? cnrt_lib : RTLD_DEFAULT;

		p->cnrt_malloc = (gp_cnrtMalloc_t)fn(lib, "cnrtMalloc");
		p->cnrt_free = (gp_cnrtFree_t)fn(lib, "cnrtFree");
		p->cnrt_info = (gp_cnrtMemGetInfo_t)fn(lib, "cnrtMemGetInfo");
		p->alloc = cnrt_alloc;
		p->free = cnrt_free_;
		p->view = cnrt_view;
		return 0;
	}
	p->cn_free = (gp_cnFree_t)fn(cndrv_lib, "cnFree");
	p->cn_info = (gp_cnMemGetInfo_t)fn(cndrv_lib, "cnMemGetInfo");
	p->alloc = cn_alloc;
	p->free = cn_free_;
	p->view = cn_view;
	if (!strcmp(name, "cnMalloc") || !strcmp(name, "cnMallocSecurity") ||
	    !strcmp(name, "cnZmalloc")) {
		p->cn_malloc = (gp_cnMalloc_t)fn(cndrv_lib, name);
	} else if (!strcmp(name, "export") || !strcmp(name, "mixed")) {
		gp_cnGetExportFunction_t get =
			(gp_cnGetExportFunction_t)fn(cndrv_lib, "cnGetExportFunction");
		const void *f = NULL;

		if (get("cnMalloc", &f) != CN_SUCCESS || !f || get("cnFree", &f) != CN_SUCCESS) {
			fprintf(stderr, "mlu-task: cnGetExportFunction failed\n");
			exit(1);
		}
		get("cnMalloc", &f);
		p->cn_malloc = (gp_cnMalloc_t)f;
		get("cnFree", &f);
		p->cn_free = (gp_cnFree_t)f;
		if (!strcmp(name, "mixed")) {
			p->cnrt_free = (gp_cnrtFree_t)fn(cnrt_lib, "cnrtFree");
			p->free = cnrt_free_;
		}
	} else {
		return -1;
	}
	return 0;
}

/* Allocates chunks until max or an error; returns how many. */
static int fill(struct path *p, size_t chunk, uint64_t max, uint64_t *addrs, int *ret_oom)
{
	int n = 0, r = 0;

	*ret_oom = 0;
	while ((uint64_t)(n + 1) * chunk <= max && n < ALLOCS_MAX &&
	       (r = p->alloc(p, chunk, &addrs[n])) == 0)
		n++;
	if (r < 0) {
		fprintf(stderr, "mlu-task: %s failed: error %d\n", p->name, p->last);
		exit(1);
	}
	*ret_oom = r == 1;
	return n;
}

static void empty(struct path *p, uint64_t *addrs, int n)
{
	for (int i = 0; i < n; i++)
		if (p->free(p, addrs[i]) < 0) {
			fprintf(stderr, "mlu-task: freeing through %s failed\n", p->name);
			exit(1);
		}
}

static int do_alloc(int argc, char **argv)
{
	static uint64_t addrs[ALLOCS_MAX];
	struct path p;
	size_t chunk;
	uint64_t max, f = 0, t = 0;
	int n, again, oom, oom_again, error;
	double hold = argc > 5 ? atof(argv[5]) : 0;

	if (argc < 5 || path_init(&p, argv[2]) < 0)
		return 2;
	chunk = (size_t)atoll(argv[3]) * MiB;
	max = (uint64_t)atoll(argv[4]) * MiB;
	n = fill(&p, chunk, max, addrs, &oom);
	error = oom ? p.last : 0;
	if (p.view(&p, &f, &t) < 0) {
		fprintf(stderr, "mlu-task: the memory view failed\n");
		return 1;
	}
	if (hold > 0) {
		printf("{\"held_mib\":%llu,\"pid\":%d}\n", (unsigned long long)(n * chunk / MiB),
		       (int)getpid());
		fflush(stdout);
		usleep((useconds_t)(hold * 1e6));
	}
	empty(&p, addrs, n);
	again = fill(&p, chunk, max, addrs, &oom_again);
	empty(&p, addrs, again);
	printf("{\"path\":\"%s\",\"allocated_mib\":%llu,\"oom\":%s,\"error\":%d,"
	       "\"view_free_mib\":%llu,\"view_total_mib\":%llu,\"again_mib\":%llu}\n",
	       p.name, (unsigned long long)(n * chunk / MiB), oom ? "true" : "false", error,
	       (unsigned long long)(f / MiB), (unsigned long long)(t / MiB),
	       (unsigned long long)(again * chunk / MiB));
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Launches through the driver: cnInvokeKernel on the default queue, a
 * cnQueueSync every 4 launches. */
static int burn_cndrv(double seconds, uint64_t ns, long *ret_kernels)
{
	gp_cnInvokeKernel_t invoke = (gp_cnInvokeKernel_t)fn(cndrv_lib, "cnInvokeKernel");
	gp_cnQueueSync_t sync = (gp_cnQueueSync_t)fn(cndrv_lib, "cnQueueSync");
	static char kernel[] = "spin";
	void *params[] = { &ns };
	double end = now_s() + seconds;
	long n = 0;

	while (now_s() < end) {
		if (invoke((CNkernel)(void *)kernel, 1, 1, 1, cnrtFuncTypeBlock, 0, NULL, params,
			   NULL) != CN_SUCCESS)
			return -1;
		if (++n % 4 == 0 && sync(NULL) != CN_SUCCESS)
			return -1;
	}
	*ret_kernels = n;
	return sync(NULL) == CN_SUCCESS ? 0 : -1;
}

/* Launches through the runtime: cnrtInvokeKernel on a queue of its own. */
static int burn_cnrt(double seconds, uint64_t ns, long *ret_kernels)
{
	gp_cnrtQueueCreate_t create = (gp_cnrtQueueCreate_t)fn(cnrt_lib, "cnrtQueueCreate");
	gp_cnrtInvokeKernel_t invoke = (gp_cnrtInvokeKernel_t)fn(cnrt_lib, "cnrtInvokeKernel");
	gp_cnrtQueueSync_t sync = (gp_cnrtQueueSync_t)fn(cnrt_lib, "cnrtQueueSync");
	static const char kernel[] = "spin";
	void *args[] = { &ns };
	cnrtDim3_t dim = { 1, 1, 1 };
	double end = now_s() + seconds;
	cnrtQueue_t q;
	long n = 0;

	if (create(&q) != cnrtSuccess)
		return -1;
	while (now_s() < end) {
		if (invoke(kernel, dim, cnrtFuncTypeBlock, args, 0, q) != cnrtSuccess)
			return -1;
		if (++n % 4 == 0 && sync(q) != cnrtSuccess)
			return -1;
	}
	*ret_kernels = n;
	return sync(q) == cnrtSuccess ? 0 : -1;
}

static int do_burn(int argc, char **argv)
{
	double seconds, start;
	uint64_t ns;
	long kernels = 0;
	int r;

	if (argc != 5 || (strcmp(argv[2], "cnrt") && strcmp(argv[2], "cndrv")))
		return 2;
	seconds = atof(argv[3]);
	ns = (uint64_t)atoll(argv[4]) * 1000;
	start = now_s();
	r = !strcmp(argv[2], "cnrt") ? burn_cnrt(seconds, ns, &kernels)
				     : burn_cndrv(seconds, ns, &kernels);
	if (r < 0) {
		fprintf(stderr, "mlu-task: launching through %s failed\n", argv[2]);
		return 1;
	}
	printf("{\"layer\":\"%s\",\"kernels\":%ld,\"busy_fraction\":%.4f}\n", argv[2], kernels,
	       (double)kernels * (double)ns / 1e9 / (now_s() - start));
	return 0;
}

int main(int argc, char **argv)
{
	int r = 2;

	if (argc >= 2) {
		load();
		if (!strcmp(argv[1], "alloc"))
			r = do_alloc(argc, argv);
		else if (!strcmp(argv[1], "burn"))
			r = do_burn(argc, argv);
	}
	if (r == 2)
		fprintf(stderr, "usage: mlu-task alloc PATH CHUNK_MIB MAX_MIB [HOLD_S] | "
			"mlu-task burn cnrt|cndrv SECONDS KERNEL_US\n"
			"PATH: cnrt linked cnMalloc cnMallocSecurity cnZmalloc export mixed\n");
	return r;
}
