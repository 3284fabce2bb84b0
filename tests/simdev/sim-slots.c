/* sim-slots.c — a process of the simulated devices for tests of the slot
 * protocol: it opens the shared state (claiming a slot) and then either
 * holds it or says how many slots are in use.
 *
 * usage: sim-slots hold     prints "ready", then sleeps until killed
 *        sim-slots count    prints the slots in use (itself included),
 *                           once the dead processes' are given back
 *
 * Built with the test hooks of base/shfile.c (where simdev's slots change
 * hands): GPUPOOL_SHFILE_TEST_STOP=claim or =reclaim stops the process
 * (SIGSTOP) in the middle of changing a slot, for the test to kill it
 * there. Exit status 0, 1 when the state cannot
 * be opened, 2 bad usage. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "simdev/simdev.h"

/* Kept where a leak checker sees it: simdev has no close. */
static struct sim *s;

int main(int argc, char **argv)
{
	char err[SIM_ERR_MAX];

	if (argc != 2 ||
	    (strcmp(argv[1], "hold") != 0 && strcmp(argv[1], "count") != 0)) {
		fprintf(stderr, "usage: sim-slots hold|count\n");
		return 2;
	}
	if (sim_open(&s, err, sizeof(err)) < 0) {
		fprintf(stderr, "sim-slots: %s\n", err);
		return 1;
	}
	if (strcmp(argv[1], "count") == 0) {
		printf("%d\n", sim_proc_count(s));
		return 0;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
