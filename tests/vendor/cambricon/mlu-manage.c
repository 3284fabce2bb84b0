/* mlu-manage.c — the agent's view of the node's MLUs for the Cambricon
 * tests: gp_vendor_cambricon (src/vendor/cambricon/manage.c, linked in)
 * discovers the devices through CNDev and samples each once; printed as
 * one JSON object:
 *   {"devices":[{"index","local","uuid","name","driver","mem_total_mib",
 *                "compatible","reason","util","mem_used_mib","procs":[{"pid",
 *                "mem_mib"}],"samples":[{"pid","util"}]}]}
 * usage: mlu-manage [LIBRARY]   (default: libcndev.so)
 * Exit status: 0, 1 with the backend's one-line error (no library, CNDev
 * failed). */
#include <stdio.h>
#include <string.h>

#include "vendor/vendor.h"

#define MAX 64

extern const struct gp_vendor_ops gp_vendor_cambricon;

static void print_samples(void *h, unsigned local)
{
	struct gp_vendor_sample s = { 0 };
	struct gp_vendor_proc procs[MAX];
	struct gp_vendor_proc_sample samples[MAX];
	const struct gp_vendor_ops *v = &gp_vendor_cambricon;
	int np = v->processes(h, local, procs, MAX);
	int ns = v->samples(h, local, 0, samples, MAX);

	if (v->device(h, local, &s) < 0 || np < 0 || ns < 0) {
		printf("\"sampling\":\"failed\"");
		return;
	}
	printf("\"util\":%u,\"mem_used_mib\":%llu,\"procs\":[", s.util_pct,
	       (unsigned long long)(s.mem_used_bytes >> 20));
	for (int i = 0; i < np && i < MAX; i++)
		printf("%s{\"pid\":%d,\"mem_mib\":%llu}", i ? "," : "", (int)procs[i].pid,
		       (unsigned long long)(procs[i].mem_bytes >> 20));
	printf("],\"samples\":[");
	for (int i = 0; i < ns && i < MAX; i++)
		printf("%s{\"pid\":%d,\"util\":%u}", i ? "," : "", (int)samples[i].pid,
		       samples[i].util_pct);
	printf("]");
}

int main(int argc, char **argv)
{
	const struct gp_vendor_ops *v = &gp_vendor_cambricon;
	const char *library = argc > 1 ? argv[1] : NULL;
	struct gp_agent_node node;
	char err[256] = "";
	void *h = NULL;

	memset(&node, 0, sizeof(node));
	if (v->discover(library, &node, err, sizeof(err)) < 0 ||
	    v->open(library, &h, err, sizeof(err)) < 0) {
		fprintf(stderr, "mlu-manage: %s\n", err);
		return 1;
	}
	printf("{\"vendor\":\"%s\",\"visible_env\":\"%s\",\"devices\":[", v->name,
	       v->visible_env[0]);
	for (unsigned i = 0; i < node.devices; i++) {
		const struct gp_agent_device *d = &node.device[i];

		printf("%s{\"index\":%u,\"local\":%u,\"uuid\":\"%s\",\"name\":\"%s\","
		       "\"driver\":\"%s\",\"mem_total_mib\":%llu,\"compatible\":%s,\"reason\":\"%s\",",
		       i ? "," : "", d->index, d->local, d->uuid, d->name, d->driver_version,
		       (unsigned long long)d->mem_total_mib, d->compatible ? "true" : "false",
		       d->reason);
		print_samples(h, d->local);
		printf("}");
	}
	printf("]}\n");
	v->close(h);
	return 0;
}
