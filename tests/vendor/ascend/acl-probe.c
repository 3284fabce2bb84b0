/* acl-probe.c — a small ACL program for the Ascend tests: allocates,
 * frees, reads the memory view, holds memory and burns device time on a
 * (simulated) NPU, and prints what it saw as one JSON object per line.
 *
 * Built twice: linked against libascendcl.so (acl-probe: symbol
 * interposition reaches libgpushare's hooks) and with -DPROBE_DLOPEN
 * (acl-probe-dl: dlopen + dlsym on the runtime's handle, as torch_npu's
 * FunctionLoader does).
 *
 *   acl-probe alloc PATH MIB       allocate MIB-MiB blocks until one fails
 *                                  (PATH: malloc, cached, align32, physical);
 *                                  then free one and allocate again
 *   acl-probe meminfo              aclrtGetMemInfo of device 0 (HBM, DDR)
 *   acl-probe hold MIB [GO-FILE]   allocate MIB MiB, print, wait (below)
 *   acl-probe burn SECONDS [US]    launch kernels of US µs (default 1000)
 *                                  for SECONDS, synchronizing each 4
 *
 * hold: allocates 1-MiB blocks up to MIB MiB or the first failure, prints
 * {"held_mib":…} and waits until GO-FILE exists (or forever), then exits.
 * Exit status 0 unless an unexpected error; a refused allocation is data. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef PROBE_DLOPEN
#include <dlfcn.h>
#endif

#include "include/gp-ascend.h"

#define MiB (1024ULL * 1024)
#define BLOCKS_MAX 65536

static struct {
	aclError (*set_device)(int32_t);
	aclError (*reset_device)(int32_t);
	aclError (*malloc_)(void **, size_t, aclrtMemMallocPolicy);
	aclError (*cached)(void **, size_t, aclrtMemMallocPolicy);
	aclError (*align32)(void **, size_t, aclrtMemMallocPolicy);
	aclError (*free_)(void *);
	aclError (*phys)(aclrtDrvMemHandle *, size_t, const aclrtPhysicalMemProp *, uint64_t);
	aclError (*phys_free)(aclrtDrvMemHandle);
	aclError (*meminfo)(aclrtMemAttr, size_t *, size_t *);
	aclError (*get_function)(const aclrtBinHandle, const char *, aclrtFuncHandle *);
	aclError (*launch)(aclrtFuncHandle, uint32_t, const void *, size_t, aclrtStream);
	aclError (*create_stream)(aclrtStream *);
	aclError (*sync_stream)(aclrtStream);
} acl;

static int load(void)
{
#ifdef PROBE_DLOPEN
	void *h = dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL);
#define GET(field, name) *(void **)&acl.field = h ? dlsym(h, #name) : NULL
#else
#define GET(field, name) acl.field = name
#endif
	GET(set_device, aclrtSetDevice);
	GET(reset_device, aclrtResetDevice);
	GET(malloc_, aclrtMalloc);
	GET(cached, aclrtMallocCached);
	GET(align32, aclrtMallocAlign32);
	GET(free_, aclrtFree);
	GET(phys, aclrtMallocPhysical);
	GET(phys_free, aclrtFreePhysical);
	GET(meminfo, aclrtGetMemInfo);
	GET(get_function, aclrtBinaryGetFunction);
	GET(launch, aclrtLaunchKernel);
	GET(create_stream, aclrtCreateStream);
	GET(sync_stream, aclrtSynchronizeStream);
	if (!acl.set_device || !acl.sync_stream) {
		fprintf(stderr, "acl-probe: cannot find the ACL runtime (libascendcl.so)\n");
		return -1;
	}
	return 0;
}

/* One allocation of `bytes` by `path`; the block's key in *ret. */
static aclError alloc_one(const char *path, size_t bytes, void **ret)
{
	if (strcmp(path, "malloc") == 0)
		return acl.malloc_(ret, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
	if (strcmp(path, "cached") == 0)
		return acl.cached(ret, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
	if (strcmp(path, "align32") == 0)
		return acl.align32(ret, bytes, ACL_MEM_MALLOC_NORMAL_ONLY);
	if (strcmp(path, "physical") == 0) {
		aclrtPhysicalMemProp prop = { .memAttr = ACL_HBM_MEM_HUGE,
					      .location = { .id = 0,
							    .type = ACL_MEM_LOCATION_TYPE_DEVICE } };

		return acl.phys((aclrtDrvMemHandle *)ret, bytes, &prop, 0);
	}
	return ACL_ERROR_INVALID_PARAM;
}

static aclError free_one(const char *path, void *p)
{
	return strcmp(path, "physical") == 0 ? acl.phys_free(p) : acl.free_(p);
}

static int cmd_alloc(const char *path, unsigned long mib)
{
	static void *block[BLOCKS_MAX];
	int n = 0, again;
	aclError r = ACL_SUCCESS, refree = ACL_SUCCESS;

	while (n < BLOCKS_MAX && (r = alloc_one(path, mib * MiB, &block[n])) == ACL_SUCCESS)
		n++;
	/* The one past the limit failed: a free gives room for one more. */
	if (n > 0)
		refree = free_one(path, block[--n]);
	again = alloc_one(path, mib * MiB, &block[n]);
	if (again == ACL_SUCCESS)
		n++;
	printf("{\"path\":\"%s\",\"blocks\":%d,\"mib\":%lu,\"error\":%d,\"free\":%d,"
	       "\"again\":%d}\n", path, n, (unsigned long)n * mib, r, refree, again);
	while (n > 0)
		if (free_one(path, block[--n]) != ACL_SUCCESS)
			return 1;
	return 0;
}

/* Fills MIB of the slice, resets the device without freeing (the runtime
 * frees it all at the last reset), opens it again and fills it again:
 * how many 64 MiB blocks each time. */
static int cmd_reset(unsigned long mib)
{
	unsigned long before = 0, after = 0;
	aclError r;
	void *p;

	while (before < mib / 64 && acl.malloc_(&p, 64 * MiB, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS)
		before++;
	r = acl.reset_device(0);
	if (r == ACL_SUCCESS)
		r = acl.set_device(0);
	while (r == ACL_SUCCESS && after < BLOCKS_MAX &&
	       acl.malloc_(&p, 64 * MiB, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS)
		after++;
	printf("{\"before_mib\":%lu,\"after_mib\":%lu,\"error\":%d}\n", before * 64, after * 64, r);
	return r != ACL_SUCCESS;
}

static int cmd_meminfo(void)
{
	size_t hbm_free = 0, hbm_total = 0, ddr_free = 0, ddr_total = 0;
	aclError a = acl.meminfo(ACL_HBM_MEM, &hbm_free, &hbm_total);
	aclError b = acl.meminfo(ACL_DDR_MEM, &ddr_free, &ddr_total);

	printf("{\"hbm_total_mib\":%zu,\"hbm_free_mib\":%zu,\"ddr_total_mib\":%zu,"
	       "\"ddr_free_mib\":%zu,\"error\":%d}\n",
	       hbm_total >> 20, hbm_free >> 20, ddr_total >> 20, ddr_free >> 20, a ? a : b);
	return a || b;
}

static int cmd_hold(unsigned long mib, const char *go)
{
	unsigned long held = 0;
	void *p;
	aclError r = ACL_SUCCESS;

	while (held < mib && (r = acl.malloc_(&p, MiB, ACL_MEM_MALLOC_HUGE_FIRST)) == ACL_SUCCESS)
		held++;
	printf("{\"pid\":%d,\"held_mib\":%lu,\"error\":%d}\n", (int)getpid(), held,
	       held < mib ? r : 0);
	fflush(stdout);
	while (!go || access(go, F_OK) != 0)
		usleep(20000);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_burn(double seconds, unsigned long us)
{
	aclrtFuncHandle f;
	aclrtStream s;
	uint64_t args[2] = { (uint64_t)us * 1000, 0 };
	unsigned long kernels = 0;
	double end = now_s() + seconds;

	if (acl.get_function(NULL, "spin", &f) != ACL_SUCCESS ||
	    acl.create_stream(&s) != ACL_SUCCESS)
		return 1;
	while (now_s() < end) {
		for (int i = 0; i < 4; i++)
			if (acl.launch(f, 1, args, sizeof(args), s) != ACL_SUCCESS)
				return 1;
		if (acl.sync_stream(s) != ACL_SUCCESS)
			return 1;
		kernels += 4;
	}
	printf("{\"pid\":%d,\"kernels\":%lu,\"device_s\":%.3f}\n", (int)getpid(), kernels,
	       (double)kernels * (double)us / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	aclError r;

	if (argc < 2) {
		fprintf(stderr, "usage: acl-probe alloc PATH MIB | meminfo | reset MIB | hold MIB [GO-FILE] | "
				"burn SECONDS [US]\n");
		return 2;
	}
	if (load() < 0)
		return 1;
	if ((r = acl.set_device(0)) != ACL_SUCCESS) {
		printf("{\"error\":%d}\n", r);
		return 1;
	}
	if (strcmp(argv[1], "alloc") == 0 && argc == 4)
		return cmd_alloc(argv[2], strtoul(argv[3], NULL, 10));
	if (strcmp(argv[1], "meminfo") == 0)
		return cmd_meminfo();
	if (strcmp(argv[1], "reset") == 0 && argc == 3)
		return cmd_reset(strtoul(argv[2], NULL, 10));
	if (strcmp(argv[1], "hold") == 0 && argc >= 3)
		return cmd_hold(strtoul(argv[2], NULL, 10), argc > 3 ? argv[3] : NULL);
	if (strcmp(argv[1], "burn") == 0 && argc >= 3)
		return cmd_burn(atof(argv[2]), argc > 3 ? strtoul(argv[3], NULL, 10) : 1000);
	fprintf(stderr, "acl-probe: unknown command \"%s\": alloc, meminfo, reset, hold or burn\n",
		argv[1]);
	return 2;
}
