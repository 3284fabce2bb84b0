/* visible.c — ASCEND_RT_VISIBLE_DEVICES for simdev's Ascend libraries
 * (visible.h). */
#include <stdio.h>
#include <stdlib.h>

#include "simdev/ascend/visible.h"

int sim_ascend_visible(struct sim *s, int *ret_simdev, int *ret_logical)
{
	int ascend[SIM_DEVICES_MAX];
	int n = sim_vendor_devices(s, "ascend", ascend, SIM_DEVICES_MAX);
	const char *p = getenv("ASCEND_RT_VISIBLE_DEVICES");
	int count = 0;

	if (!p) {
		for (count = 0; count < n; count++) {
			ret_simdev[count] = ascend[count];
			ret_logical[count] = count;
		}
		return count;
	}
	while (count < n) {
		char *end;
		long id = strtol(p, &end, 10);

		if (end == p || id < 0 || id >= n || (*end != ',' && *end != '\0'))
			break;
		for (int i = 0; i < count; i++)
			if (ret_logical[i] == id)
				return count; /* a repeated id ends the list */
		ret_logical[count] = (int)id;
		ret_simdev[count++] = ascend[id];
		if (*end == '\0')
			break;
		p = end + 1;
	}
	return count;
}

int sim_ascend_start(struct sim **ret_sim, int *ret_simdev, int *ret_logical)
{
	char err[SIM_ERR_MAX];
	int n;

	if (sim_open(ret_sim, err, sizeof(err)) != 0) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: %s\n", err);
		return 0;
	}
	n = sim_ascend_visible(*ret_sim, ret_simdev, ret_logical);
	if (n == 0 && getenv("GPUPOOL_LOG"))
		fprintf(stderr, "simdev: no Ascend device visible (GPUPOOL_SIM_DEVICES, "
				"ASCEND_RT_VISIBLE_DEVICES)\n");
	return n;
}
