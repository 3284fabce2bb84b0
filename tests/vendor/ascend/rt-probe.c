/* rt-probe.c — a program that launches straight into CANN's runtime layer
 * (libruntime.so, linked), as operators do beneath ACL, for the tests of
 * libgpushare's rt* hooks (src/vendor/ascend/shim-acl.c).
 *
 *   rt-probe burn SECONDS [US] [flag]   on device 0 and a stream of its own,
 *                                       launch kernels of US µs (default
 *                                       1000) for SECONDS, 4 at a time, then
 *                                       rtStreamSynchronize; with "flag",
 *                                       rtKernelLaunchWithFlag instead of
 *                                       rtKernelLaunch
 *
 *   rt-probe alloc MIB                   rtMalloc 64 MiB blocks on device 0
 *                                       until one fails (at most MIB), free
 *                                       one with rtFree and allocate again;
 *                                       prints {"blocks", "error", "again"}
 *
 * burn prints {"pid":…, "kernels":…, "error":…}; exit status 0 unless a call
 * failed. On simdev a kernel's first 8 argument bytes are its device time
 * in ns. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/gp-ascend.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static rtError_t launch(bool flag, uint64_t *args, rtStream_t s)
{
	static const char stub[] = "rt-probe-kernel";
	rtArgsEx_t ex = { .args = args, .argsSize = 2 * sizeof(*args) };

	return flag ? rtKernelLaunchWithFlag(stub, 1, &ex, NULL, s, 0)
		    : rtKernelLaunch(stub, 1, args, 2 * sizeof(*args), NULL, s);
}

static int burn(double seconds, unsigned long us, bool flag)
{
	uint64_t args[2] = { (uint64_t)us * 1000, 0 };
	unsigned long kernels = 0;
	double end = now_s() + seconds;
	rtStream_t s;
	rtError_t r;

	if ((r = rtSetDevice(0)) != RT_ERROR_NONE || (r = rtStreamCreate(&s, 0)) != RT_ERROR_NONE)
		goto out;
	while (now_s() < end) {
		for (int i = 0; i < 4; i++)
			if ((r = launch(flag, args, s)) != RT_ERROR_NONE)
				goto out;
		if ((r = rtStreamSynchronize(s)) != RT_ERROR_NONE)
			goto out;
		kernels += 4;
	}
	rtStreamDestroy(s);
	rtDeviceReset(0);
out:
	printf("{\"pid\":%d,\"kernels\":%lu,\"error\":%d}\n", (int)getpid(), kernels, r);
	return r != RT_ERROR_NONE;
}

static int alloc(unsigned long mib)
{
	static void *block[1024];
	unsigned long n = 0, blocks;
	rtError_t r, again = -1;

	if ((r = rtSetDevice(0)) != RT_ERROR_NONE)
		goto out;
	while (n < mib / 64 && n < 1024 &&
	       (r = rtMalloc(&block[n], 64ULL << 20, RT_MEMORY_HBM)) == RT_ERROR_NONE)
		n++;
	/* The one past the limit failed: a free gives room for one more. */
	if (n > 0 && rtFree(block[--n]) == RT_ERROR_NONE &&
	    (again = rtMalloc(&block[n], 64ULL << 20, RT_MEMORY_HBM)) == RT_ERROR_NONE)
		n++;
out:
	blocks = n;
	while (n > 0)
		rtFree(block[--n]);
	printf("{\"blocks\":%lu,\"error\":%d,\"again\":%d}\n", blocks, r, again);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "burn") == 0)
		return burn(atof(argv[2]), argc > 3 ? strtoul(argv[3], NULL, 10) : 1000,
			    argc > 4 && strcmp(argv[4], "flag") == 0);
	if (argc == 3 && strcmp(argv[1], "alloc") == 0)
		return alloc(strtoul(argv[2], NULL, 10));
	fprintf(stderr, "usage: rt-probe burn SECONDS [US] [flag] | alloc MIB\n");
	return 2;
}
