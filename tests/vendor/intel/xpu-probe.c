/* xpu-probe.c — the agent's Intel backend (src/vendor/intel/manage.c,
 * linked in) run by hand, for the Intel tests: what discovery finds with
 * the compatibility verdict, and what sampling reads.
 *
 *   xpu-probe discover           one JSON line: {"devices":[{local, uuid, name, driver,
 *                                mem_mib, compatible, reason}]}; exit 1 with the
 *                                backend's one-line error when it finds none
 *   xpu-probe sample SECONDS     opens the sampler, waits SECONDS, then one JSON line:
 *                                {"devices":[{util, used_mib, total_mib,
 *                                processes:[{pid, mib}]}]}
 *
 * The management library is the backend's default (GPUPOOL_ZE_LIBRARY or
 * libze_loader.so.1 from LD_LIBRARY_PATH). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vendor/vendor.h"

extern const struct gp_vendor_ops gp_vendor_intel;

/* s as a JSON string's contents (quotes and backslashes escaped). */
static void json_text(const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
}

static int discover(void)
{
	static struct gp_agent_node node;
	char err[512];
	int r = gp_vendor_intel.discover(NULL, &node, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "xpu-probe: %s\n", err);
		return 1;
	}
	printf("{\"devices\":[");
	for (unsigned i = 0; i < node.devices; i++) {
		const struct gp_agent_device *d = &node.device[i];

		printf("%s{\"local\":%u,\"vendor\":\"%s\",\"uuid\":\"%s\",\"name\":\"", i ? "," : "",
		       d->local, d->vendor->name, d->uuid);
		json_text(d->name);
		printf("\",\"driver\":\"");
		json_text(d->driver_version);
		printf("\",\"mem_mib\":%llu,\"compatible\":%s,\"reason\":\"",
		       (unsigned long long)d->mem_total_mib, d->compatible ? "true" : "false");
		json_text(d->reason);
		printf("\"}");
	}
	printf("]}\n");
	return 0;
}

static int sample(double seconds)
{
	static struct gp_agent_node node;
	struct gp_vendor_proc procs[64];
	char err[512];
	void *h;

	if (gp_vendor_intel.discover(NULL, &node, err, sizeof(err)) < 0 ||
	    gp_vendor_intel.open(NULL, &h, err, sizeof(err)) < 0) {
		fprintf(stderr, "xpu-probe: %s\n", err);
		return 1;
	}
	usleep((useconds_t)(seconds * 1e6));
	printf("{\"devices\":[");
	for (unsigned i = 0; i < node.devices; i++) {
		struct gp_vendor_sample s;
		int n;

		if (gp_vendor_intel.device(h, i, &s) < 0 ||
		    (n = gp_vendor_intel.processes(h, i, procs, 64)) < 0) {
			fprintf(stderr, "xpu-probe: sampling device %u failed\n", i);
			return 1;
		}
		printf("%s{\"util\":%u,\"used_mib\":%llu,\"total_mib\":%llu,\"processes\":[",
		       i ? "," : "", s.util_pct, (unsigned long long)(s.mem_used_bytes >> 20),
		       (unsigned long long)(s.mem_total_bytes >> 20));
		for (int k = 0; k < n && k < 64; k++)
			printf("%s{\"pid\":%d,\"mib\":%llu}", k ? "," : "", (int)procs[k].pid,
			       (unsigned long long)(procs[k].mem_bytes >> 20));
		printf("]}");
	}
	printf("]}\n");
	gp_vendor_intel.close(h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "discover"))
		return discover();
	if (argc == 3 && !strcmp(argv[1], "sample"))
		return sample(atof(argv[2]));
	fprintf(stderr, "usage: xpu-probe discover | sample SECONDS\n");
	return 2;
}
