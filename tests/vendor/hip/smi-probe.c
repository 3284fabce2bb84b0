/* smi-probe.c — the agent's AMD and Hygon backends (src/vendor/hip/
 * manage.c, linked in) as the agent calls them, over rocm-smi:
 *
 *   smi-probe discover amd|hygon       {"devices":[{"local","uuid","name","pci_bus_id",
 *                                       "mem_total_mib","driver","compatible","reason"}]}
 *   smi-probe sample amd|hygon LOCAL   {"util","mem_used_mib","mem_total_mib",
 *                                       "processes":[{"pid","mem_mib"}]}
 *
 * A backend's error: its message on stderr, exit 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/vendor.h"

extern const struct gp_vendor_ops gp_vendor_amd, gp_vendor_hygon;

#define MiB (1024ull * 1024ull)

static int discover(const struct gp_vendor_ops *v)
{
	static struct gp_agent_node node;
	char err[512];
	int r = v->discover(NULL, &node, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "smi-probe: %s\n", err);
		return 1;
	}
	printf("{\"devices\":[");
	for (unsigned i = 0; i < node.devices; i++) {
		const struct gp_agent_device *d = &node.device[i];

		printf("%s{\"vendor\":\"%s\",\"local\":%u,\"uuid\":\"%s\",\"name\":\"%s\","
		       "\"pci_bus_id\":\"%s\",\"mem_total_mib\":%llu,\"driver\":\"%s\","
		       "\"compatible\":%s,\"reason\":\"%s\"}",
		       i ? "," : "", d->vendor->name, d->local, d->uuid, d->name, d->pci_bus_id,
		       (unsigned long long)d->mem_total_mib, d->driver_version,
		       d->compatible ? "true" : "false", d->reason);
	}
	printf("]}\n");
	return 0;
}

static int sample(const struct gp_vendor_ops *v, unsigned local)
{
	struct gp_vendor_proc procs[64];
	struct gp_vendor_sample s;
	char err[512];
	void *h;
	int n;

	if (v->open(NULL, &h, err, sizeof(err)) < 0) {
		fprintf(stderr, "smi-probe: %s\n", err);
		return 1;
	}
	if (v->device(h, local, &s) < 0 || (n = v->processes(h, local, procs, 64)) < 0) {
		fprintf(stderr, "smi-probe: sampling device %u failed\n", local);
		v->close(h);
		return 1;
	}
	printf("{\"util\":%u,\"mem_used_mib\":%llu,\"mem_total_mib\":%llu,\"processes\":[",
	       s.util_pct, (unsigned long long)(s.mem_used_bytes / MiB),
	       (unsigned long long)(s.mem_total_bytes / MiB));
	for (int i = 0; i < n && i < 64; i++)
		printf("%s{\"pid\":%d,\"mem_mib\":%llu}", i ? "," : "", (int)procs[i].pid,
		       (unsigned long long)(procs[i].mem_bytes / MiB));
	printf("]}\n");
	v->close(h);
	return 0;
}

int main(int argc, char **argv)
{
	const struct gp_vendor_ops *v = NULL;

	if (argc >= 3)
		v = strcmp(argv[2], "amd") == 0	    ? &gp_vendor_amd
		    : strcmp(argv[2], "hygon") == 0 ? &gp_vendor_hygon
						    : NULL;
	if (v && argc == 3 && strcmp(argv[1], "discover") == 0)
		return discover(v);
	if (v && argc == 4 && strcmp(argv[1], "sample") == 0)
		return sample(v, (unsigned)atoi(argv[3]));
	fprintf(stderr, "usage: smi-probe discover amd|hygon | sample amd|hygon LOCAL\n");
	return 2;
}
