/* npu-probe.c — the agent's view of the Ascend NPUs, for the tests: the
 * Ascend backend (src/vendor/ascend/manage.c, linked in) discovers the
 * devices through DCMI and samples them, as the agent would, and this
 * prints what it got as one JSON object.
 *
 *   npu-probe discover   {"devices":[{local, uuid, name, driver, mem_total_mib,
 *                         compatible, reason}]} or {"error": …} (exit 1)
 *   npu-probe sample     {"devices":[{local, util, mem_used_mib, mem_total_mib,
 *                         processes:[{pid, mem_mib}]}]}: every device found */
#include <stdio.h>
#include <string.h>

#include "vendor/vendor.h"

extern const struct gp_vendor_ops gp_vendor_ascend;

/* Prints s as a JSON string (the reasons hold quotes). */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

static int discover(struct gp_agent_node *node)
{
	char err[512];
	int r = gp_vendor_ascend.discover(NULL, node, err, sizeof(err));

	if (r < 0) {
		printf("{\"error\":");
		json_string(err);
		printf(",\"errno\":%d}\n", -r);
	}
	return r;
}

static int cmd_discover(void)
{
	static struct gp_agent_node node;

	if (discover(&node) < 0)
		return 1;
	printf("{\"devices\":[");
	for (unsigned i = 0; i < node.devices; i++) {
		const struct gp_agent_device *d = &node.device[i];

		printf("%s{\"local\":%u,\"uuid\":\"%s\",\"name\":\"%s\",\"driver\":\"%s\","
		       "\"mem_total_mib\":%llu,\"compatible\":%s,\"reason\":",
		       i ? "," : "", d->local, d->uuid, d->name, d->driver_version,
		       (unsigned long long)d->mem_total_mib, d->compatible ? "true" : "false");
		json_string(d->reason);
		printf("}");
	}
	printf("]}\n");
	return 0;
}

static int cmd_sample(void)
{
	static struct gp_agent_node node;
	struct gp_vendor_proc procs[64];
	char err[512];
	void *h;

	if (discover(&node) < 0)
		return 1;
	if (gp_vendor_ascend.open(NULL, &h, err, sizeof(err)) < 0) {
		printf("{\"error\":");
		json_string(err);
		printf("}\n");
		return 1;
	}
	printf("{\"devices\":[");
	for (unsigned i = 0; i < node.devices; i++) {
		struct gp_vendor_sample s;
		unsigned local = node.device[i].local;
		int n, r = gp_vendor_ascend.device(h, local, &s);

		printf("%s{\"local\":%u,\"ok\":%s", i ? "," : "", local, r == 0 ? "true" : "false");
		if (r == 0)
			printf(",\"util\":%u,\"mem_used_mib\":%llu,\"mem_total_mib\":%llu", s.util_pct,
			       (unsigned long long)(s.mem_used_bytes >> 20),
			       (unsigned long long)(s.mem_total_bytes >> 20));
		n = gp_vendor_ascend.processes(h, local, procs, 64);
		printf(",\"processes\":[");
		for (int p = 0; p < n && p < 64; p++)
			printf("%s{\"pid\":%d,\"mem_mib\":%llu}", p ? "," : "", (int)procs[p].pid,
			       (unsigned long long)(procs[p].mem_bytes >> 20));
		printf("]}");
	}
	printf("]}\n");
	gp_vendor_ascend.close(h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "discover") == 0)
		return cmd_discover();
	if (argc == 2 && strcmp(argv[1], "sample") == 0)
		return cmd_sample();
	fprintf(stderr, "usage: npu-probe discover|sample\n");
	return 2;
}
