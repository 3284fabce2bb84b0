/* hog.c — a hostile tenant program for the adversarial tests: it loads
 * the CUDA driver from the path it is given (libcuda.so.1, or a renamed
 * copy the interposer does not recognise), takes device memory straight
 * from the driver, says so, and holds it.
 *
 *   hog LIBRARY MIB [SECONDS]
 *
 * It prints "held N MiB pid P at MS" (MS: CLOCK_REALTIME milliseconds)
 * once the memory is held, then sleeps SECONDS (default: until killed).
 * Exit 2 for bad usage, 1 when the driver refuses (which the test of the
 * interposer's own limit expects, for an honest path). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "driver.h"

#define CHUNK_MIB 256

int main(int argc, char **argv)
{
	struct driver cuda;
	long mib, held = 0;
	CUresult r;

	if (argc < 3 || (mib = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: hog LIBRARY MIB [SECONDS]\n");
		return 2;
	}
	r = driver_open("hog", argv[1], &cuda);
	if (r == CUDA_ERROR_NOT_FOUND)
		return 1;
	while (r == CUDA_SUCCESS && held < mib) {
		long chunk = mib - held < CHUNK_MIB ? mib - held : CHUNK_MIB;
		CUdeviceptr p;

		r = cuda.alloc(&p, (size_t)chunk << 20);
		if (r == CUDA_SUCCESS)
			held += chunk;
	}
	if (r != CUDA_SUCCESS) {
		printf("refused at %ld MiB (CUresult %d)\n", held, (int)r);
		return 1;
	}
	printf("held %ld MiB pid %d at %lld\n", held, (int)getpid(), driver_now_ms());
	fflush(stdout);
	if (argc > 3)
		sleep((unsigned)atoi(argv[3]));
	else
		for (;;)
			pause();
	return 0;
}
