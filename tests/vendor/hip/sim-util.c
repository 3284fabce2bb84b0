/* sim-util.c — the device time processes got on the first simulated HIP
 * device (AMD, else Hygon), from simdev's own record of the quanta
 * (simdev.h): the ground truth the compute-share tests compare (rocm-smi
 * has no per-process time).
 *
 *   sim-util WINDOW_MS PID...   {"util":…, "<pid>": percent, …} over the
 *                               last WINDOW_MS */
#include <stdio.h>
#include <stdlib.h>

#include "simdev/simdev.h"

int main(int argc, char **argv)
{
	char err[SIM_ERR_MAX];
	struct sim *s;
	uint64_t window;
	int dev;

	if (argc < 2) {
		fprintf(stderr, "usage: sim-util WINDOW_MS PID...\n");
		return 2;
	}
	if (sim_open(&s, err, sizeof(err)) != 0) {
		fprintf(stderr, "sim-util: %s\n", err);
		return 1;
	}
	if (sim_vendor_devices(s, "amd", &dev, 1) < 1 && sim_vendor_devices(s, "hygon", &dev, 1) < 1) {
		fprintf(stderr, "sim-util: GPUPOOL_SIM_DEVICES has no AMD or Hygon device\n");
		return 1;
	}
	window = strtoull(argv[1], NULL, 10) * 1000000ull;
	printf("{\"util\":%u", sim_device_utilization(s, dev, window));
	for (int i = 2; i < argc; i++)
		printf(",\"%s\":%u", argv[i],
		       sim_process_utilization(s, dev, (pid_t)atoi(argv[i]), window));
	printf("}\n");
	return 0;
}
