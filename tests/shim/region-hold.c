/* region-hold.c — a process of a task on a device, for the CLI tests:
 * joins TASK in the region of device UUID (made with TOTAL bytes when it
 * does not exist yet) with the given limits, reserves HOLD bytes, prints
 * "ready" and sleeps until it is killed.
 *
 * usage: region-hold DIR UUID TOTAL TASK MEM COMPUTE PRIORITY hard|shared HOLD
 * (sizes as gp_parse_size reads them: 16G, 512M, 0) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "shim/region.h"

static int size_arg(const char *what, const char *text, uint64_t *ret)
{
	if (gp_parse_size(text, ret) == 0)
		return 0;
	fprintf(stderr, "region-hold: %s \"%s\" is not a size\n", what, text);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct gp_task_limits l = { 0 };
	struct gp_region *r = NULL;
	uint64_t total, hold;
	int slot, err;

	if (argc != 10) {
		fprintf(stderr, "usage: region-hold DIR UUID TOTAL TASK MEM COMPUTE PRIORITY hard|shared HOLD\n");
		return 2;
	}
	if (size_arg("TOTAL", argv[3], &total) < 0 || size_arg("MEM", argv[5], &l.mem_bytes) < 0 ||
	    size_arg("HOLD", argv[9], &hold) < 0)
		return 2;
	l.compute = (unsigned)atoi(argv[6]);
	l.priority = (unsigned)atoi(argv[7]);
	l.isolation = strcmp(argv[8], "shared") ? GP_ISOLATION_HARD : GP_ISOLATION_SHARED;
	err = gp_region_open(argv[1], argv[2], total, &r);
	if (err == 0)
		err = gp_region_join(r, argv[4], &l, &slot);
	if (err == 0)
		err = gp_region_mem_reserve(r, slot, hold);
	if (err < 0) {
		fprintf(stderr, "region-hold: %s\n", strerror(-err));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
