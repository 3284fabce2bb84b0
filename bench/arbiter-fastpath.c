/* arbiter-fastpath.c — what the arbiter adds to a launch while the turn is
 * held: gp_arbiter_before_launch on its fast path, timed over a million
 * calls, beside an empty loop of the same length (the baseline). Prints
 * the difference in ns per call. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "shim/arbiter.h"
#include "shim/region.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void no_drain(void *unused)
{
	(void)unused;
}

int main(void)
{
	char dir[] = "/tmp/gp-fastpath-XXXXXX";
	struct gp_task_limits limits = { .compute = 100, .priority = 5 };
	struct gp_region *region;
	struct gp_arbiter *arbiter;
	const int calls = 1000000;
	volatile int sink = 0;
	double start, hooked, bare;
	int slot;

	if (!mkdtemp(dir) || gp_region_open(dir, "GPU-fastpath", 1 << 30, &region) < 0 ||
	    gp_region_join(region, "bench", &limits, &slot) < 0 ||
	    gp_arbiter_open(region, slot, 1000, &arbiter) < 0) {
		fprintf(stderr, "arbiter-fastpath: cannot set up in %s\n", dir);
		return 1;
	}
	gp_arbiter_before_launch(arbiter, no_drain, NULL);      /* take the turn */
	start = now_ns();
	for (int i = 0; i < calls; i++)
		gp_arbiter_before_launch(arbiter, no_drain, NULL);
	hooked = now_ns() - start;
	start = now_ns();
	for (int i = 0; i < calls; i++)
		sink += i;
	bare = now_ns() - start;
	printf("%.1f\n", (hooked - bare) / calls);
	return 0;
}
