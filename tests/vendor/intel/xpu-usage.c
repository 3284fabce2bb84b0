/* xpu-usage.c — the device time processes got on the first simulated
 * Intel GPU, from simdev's own record of the quanta (simdev.h): the ground
 * truth the compute-share tests compare (Sysman keeps no per-process
 * utilization).
 *
 *   xpu-usage WINDOW_MS PID...   one JSON line {"device":P, "PID":P, …}: percent of
 *                                the last WINDOW_MS the device, and each process, was busy */
#include <stdio.h>
#include <stdlib.h>

#include "simdev/simdev.h"

int main(int argc, char **argv)
{
	char err[SIM_ERR_MAX];
	struct sim *s;
	uint64_t window;
	int dev;

	if (argc < 2 || atol(argv[1]) <= 0) {
		fprintf(stderr, "usage: xpu-usage WINDOW_MS PID...\n");
		return 2;
	}
	if (sim_open(&s, err, sizeof(err)) != 0) {
		fprintf(stderr, "xpu-usage: %s\n", err);
		return 1;
	}
	if (sim_vendor_devices(s, "intel", &dev, 1) < 1) {
		fprintf(stderr, "xpu-usage: GPUPOOL_SIM_DEVICES has no Intel device\n");
		return 1;
	}
	window = (uint64_t)atol(argv[1]) * 1000000ULL;
	printf("{\"device\":%u", sim_device_utilization(s, dev, window));
	for (int i = 2; i < argc; i++)
		printf(",\"%d\":%u", atoi(argv[i]),
		       sim_process_utilization(s, dev, (pid_t)atoi(argv[i]), window));
	printf("}\n");
	return 0;
}
