/* mlu-usage.c — simdev's record of the device time each process got on a
 * simulated MLU, for the Cambricon compute tests: the share (percent of
 * the device) of each PID over the last WINDOW_MS on the MLU of index
 * INDEX (simdev's numbering of the cambricon devices, CNDev's), as one
 * JSON object {"PID": percent, ...}. The quanta record is what CNDev's
 * utilization figures come from, over a window the test chooses.
 * usage: mlu-usage INDEX WINDOW_MS PID... */
#include <stdio.h>
#include <stdlib.h>

#include "simdev/simdev.h"

int main(int argc, char **argv)
{
	int mlu[SIM_DEVICES_MAX], n, index;
	char err[SIM_ERR_MAX];
	struct sim *s;
	uint64_t window;

	if (argc < 4) {
		fprintf(stderr, "usage: mlu-usage INDEX WINDOW_MS PID...\n");
		return 2;
	}
	if (sim_open(&s, err, sizeof(err)) < 0) {
		fprintf(stderr, "mlu-usage: %s\n", err);
		return 1;
	}
	index = atoi(argv[1]);
	window = (uint64_t)atoll(argv[2]) * 1000000;
	n = sim_vendor_devices(s, "cambricon", mlu, SIM_DEVICES_MAX);
	if (index < 0 || index >= n) {
		fprintf(stderr, "mlu-usage: no MLU %d (GPUPOOL_SIM_DEVICES has %d)\n", index, n);
		return 1;
	}
	printf("{");
	for (int i = 3; i < argc; i++)
		printf("%s\"%s\":%u", i > 3 ? "," : "", argv[i],
		       sim_process_utilization(s, mlu[index], (pid_t)atoi(argv[i]), window));
	printf("}\n");
	return 0;
}
