/* devices.c — the node's devices, of every vendor: each registered vendor
 * backend (src/vendor/vendor.h) discovers its own, in registration
 * order, and the node numbers them all. */
#include "agent/devices.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vendor/vendor.h"

int gp_devices_discover(const char *nvml_library, struct gp_agent_node *ret, char *err,
			size_t err_len)
{
	size_t said = 0;
	bool nvml = false;      /* NVIDIA's library answered (with devices or none) */

	memset(ret, 0, sizeof(*ret));
	if (err_len)
		err[0] = '\0';
	for (size_t i = 0; gp_vendors[i]; i++) {
		const struct gp_vendor_ops *v = gp_vendors[i];
		const char *library = strcmp(v->name, "nvidia") == 0 ? nvml_library : NULL;
		char why[512];
		int r = v->discover(library, ret, why, sizeof(why));

		if (r == -ENOENT) {             /* none of this vendor here */
			if (said < err_len)
				said += (size_t)snprintf(err + said, err_len - said, "%s%s: %s",
							 said ? "; " : "", v->name, why);
			continue;
		}
		if (r < 0) {
			snprintf(err, err_len, "%s: %s", v->name, why);
			return r;
		}
		nvml |= strcmp(v->name, "nvidia") == 0;
	}
	/* A library that answers but lists no device is no device of its
	 * vendor; NVML alone keeps its old meaning (the node has NVML). */
	return ret->devices || nvml ? 0 : -ENOENT;
}
