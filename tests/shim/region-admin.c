/* region-admin.c — the agent's side of a managed device, for the tests:
 * prepares a device's files and admits, changes and forgets tasks in its
 * limits table through the region API, as the server's agent does.
 *
 * usage: region-admin DIR UUID prepare TOTAL
 *        region-admin DIR UUID admit TASK SECRET MEM COMPUTE PRIORITY hard|shared
 *        region-admin DIR UUID set TASK MEM COMPUTE PRIORITY hard|shared
 *        region-admin DIR UUID forget TASK
 *        region-admin secret
 * (sizes as gp_parse_size reads them; `secret` prints a new secret).
 * Exit 0, or 1 with the error on stderr, or 2 for bad usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "shim/region.h"

static int usage(void)
{
	fprintf(stderr, "usage: region-admin DIR UUID prepare TOTAL\n"
			"       region-admin DIR UUID admit TASK SECRET MEM COMPUTE PRIORITY hard|shared\n"
			"       region-admin DIR UUID set TASK MEM COMPUTE PRIORITY hard|shared\n"
			"       region-admin DIR UUID forget TASK\n"
			"       region-admin secret\n");
	return 2;
}

/* MEM COMPUTE PRIORITY ISOLATION from argv[0..3]. */
static int limits_arg(char **argv, struct gp_task_limits *ret)
{
	if (gp_parse_size(argv[0], &ret->mem_bytes) < 0) {
		fprintf(stderr, "region-admin: MEM \"%s\" is not a size\n", argv[0]);
		return -EINVAL;
	}
	ret->compute = (unsigned)atoi(argv[1]);
	ret->priority = (unsigned)atoi(argv[2]);
	ret->isolation = strcmp(argv[3], "shared") ? GP_ISOLATION_HARD : GP_ISOLATION_SHARED;
	return 0;
}

static int prepare(char **argv)
{
	uint64_t total;

	if (gp_parse_size(argv[4], &total) < 0) {
		fprintf(stderr, "region-admin: TOTAL \"%s\" is not a size\n", argv[4]);
		return -EINVAL;
	}
	return gp_region_prepare(argv[1], argv[2], total);
}

/* admit, set or forget, on the opened region. */
static int change(struct gp_region *r, int argc, char **argv)
{
	struct gp_task_limits l = { 0 };
	const char *what = argv[3];

	if (!strcmp(what, "admit") && argc == 10)
		return limits_arg(argv + 6, &l) < 0 ? -EINVAL :
		       gp_region_task_admit(r, argv[4], argv[5], &l, NULL);
	if (!strcmp(what, "set") && argc == 9)
		return limits_arg(argv + 5, &l) < 0 ? -EINVAL : gp_region_set(r, argv[4], &l);
	if (!strcmp(what, "forget") && argc == 5)
		return gp_region_task_forget(r, argv[4]);
	return -E2BIG;
}

int main(int argc, char **argv)
{
	char secret[GP_TASK_SECRET_LEN + 1];
	struct gp_region *r = NULL;
	int err;

	if (argc == 2 && !strcmp(argv[1], "secret")) {
		err = gp_task_secret_new(secret);
		if (err == 0)
			printf("%s\n", secret);
	} else if (argc == 5 && !strcmp(argv[3], "prepare")) {
		err = prepare(argv);
	} else if (argc >= 5) {
		err = gp_region_open(argv[1], argv[2], 0, &r);
		if (err == 0)
			err = change(r, argc, argv);
		gp_region_close(r);
		if (err == -E2BIG)
			return usage();
	} else {
		return usage();
	}
	if (err < 0) {
		fprintf(stderr, "region-admin: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
