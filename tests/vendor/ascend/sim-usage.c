/* sim-usage.c — the device time processes got on the first simulated
 * Ascend NPU, from simdev's own record of the quanta (simdev.h): the
 * ground truth the compute-share tests compare (DCMI has no per-process
 * utilization).
 *
 *   sim-usage WINDOW_MS PID...   {"device":…, "<pid>": percent, …} over the
 *                                last WINDOW_MS of device time */
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
		fprintf(stderr, "usage: sim-usage WINDOW_MS PID...\n");
		return 2;
	}
	if (sim_open(&s, err, sizeof(err)) != 0) {
		fprintf(stderr, "sim-usage: %s\n", err);
		return 1;
	}
	if (sim_vendor_devices(s, "ascend", &dev, 1) < 1) {
		fprintf(stderr, "sim-usage: GPUPOOL_SIM_DEVICES has no Ascend device\n");
		return 1;
	}
	window = strtoull(argv[1], NULL, 10) * 1000000ULL;
	printf("{\"device\":%u", sim_device_utilization(s, dev, window));
	for (int i = 2; i < argc; i++)
		printf(",\"%s\":%u", argv[i],
		       sim_process_utilization(s, dev, (pid_t)atoi(argv[i]), window));
	printf("}\n");
	return 0;
}
