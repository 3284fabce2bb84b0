/* simctl.c — changes the state of the simulated devices from outside, as
 * a fault would change a real one's: `simctl lose INDEX` makes device
 * INDEX of $GPUPOOL_SIM_DEVICES fall off the bus (NVML answers
 * GPU_IS_LOST for it), `simctl restore INDEX` brings it back. For tests
 * of health checks (tests/k8s/test-node.sh) and demonstrations. And it
 * tells what only the device knows: `simctl busy INDEX` prints the device
 * time it has given out in all, in µs (tests of metering, the demo's
 * report), and `simctl uuid INDEX` its UUID, which names it in the pool. */
#include <stdio.h>
#include <string.h>

#include "base/parse.h"
#include "simdev/simdev.h"

int main(int argc, char **argv)
{
	char err[SIM_ERR_MAX];
	struct sim *s;
	unsigned dev;

	if (argc != 3 || (strcmp(argv[1], "lose") != 0 && strcmp(argv[1], "restore") != 0 &&
			  strcmp(argv[1], "busy") != 0 && strcmp(argv[1], "uuid") != 0)) {
		fprintf(stderr, "usage: simctl lose|restore|busy|uuid INDEX   (the devices of "
				"GPUPOOL_SIM_DEVICES)\n");
		return 2;
	}
	if (sim_open(&s, err, sizeof(err)) < 0) {
		fprintf(stderr, "simctl: %s\n", err);
		return 1;
	}
	if (!gp_parse_uint(argv[2], 0, (unsigned)sim_device_count(s) - 1, NULL, &dev)) {
		fprintf(stderr, "simctl: device \"%s\": there are %d devices, 0 to %d\n", argv[2],
			sim_device_count(s), sim_device_count(s) - 1);
		return 2;
	}
	if (strcmp(argv[1], "busy") == 0) {
		printf("%llu\n", (unsigned long long)(sim_device_busy_ns(s, (int)dev) / 1000));
		return 0;
	}
	if (strcmp(argv[1], "uuid") == 0) {
		printf("%s\n", sim_device_uuid(s, (int)dev));
		return 0;
	}
	sim_device_set_lost(s, (int)dev, strcmp(argv[1], "lose") == 0);
	printf("device %u (%s): %s\n", dev, sim_device_uuid(s, (int)dev),
	       strcmp(argv[1], "lose") == 0 ? "lost" : "restored");
	return 0;
}
