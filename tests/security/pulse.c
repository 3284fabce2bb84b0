/* pulse.c — a hostile tenant program for the verifier's tests: it joins
 * its task through the interposer (a small allocation by libcuda.so.1,
 * which the interposer answers), then, through a copy of the driver the
 * interposer does not recognise, takes MIB of device memory for PULSE_MS
 * every PERIOD_MS and gives it back, COUNT times: more than its slice, but
 * never while a look that comes once a second would see it.
 *
 *   pulse BYPASS-LIBRARY MIB PULSE_MS PERIOD_MS COUNT
 *
 * It prints "joined pid P" once joined and "pulse N at MS" (MS:
 * CLOCK_REALTIME milliseconds) as each pulse takes the memory. Exit 2 for
 * bad usage, 1 when a driver refuses. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	struct driver honest, bypass;
	long mib, pulse_ms, period_ms, count;
	CUdeviceptr small, big;

	if (argc != 6 || (mib = atol(argv[2])) <= 0 || (pulse_ms = atol(argv[3])) <= 0 ||
	    (period_ms = atol(argv[4])) <= pulse_ms || (count = atol(argv[5])) <= 0) {
		fprintf(stderr, "usage: pulse BYPASS-LIBRARY MIB PULSE_MS PERIOD_MS COUNT\n");
		return 2;
	}
	if (driver_open("pulse", "libcuda.so.1", &honest) != CUDA_SUCCESS ||
	    honest.alloc(&small, 1 << 20) != CUDA_SUCCESS)
		return 1;
	printf("joined pid %d\n", (int)getpid());
	fflush(stdout);
	if (driver_open("pulse", argv[1], &bypass) != CUDA_SUCCESS)
		return 1;
	for (long n = 1; n <= count; n++) {
		long long start = driver_now_ms();

		if (bypass.alloc(&big, (size_t)mib << 20) != CUDA_SUCCESS)
			return 1;
		printf("pulse %ld at %lld\n", n, start);
		fflush(stdout);
		sleep_ms(pulse_ms);
		bypass.free(big);
		sleep_ms(period_ms - pulse_ms);
	}
	return 0;
}
