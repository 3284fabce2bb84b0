/* dcmi-probe.c — what a DCMI reader (npu-smi info, an exporter) sees of
 * the NPUs, for the tests of libgpushare's DCMI views (shim-dcmi.c).
 *
 * Built twice: linked against libdcmi.so (dcmi-probe: symbol interposition
 * reaches libgpushare's hooks) and with -DPROBE_DLOPEN (dcmi-probe-dl:
 * dlopen(RTLD_LAZY|RTLD_GLOBAL) + dlsym on the library's handle, as
 * mind-cluster loads DCMI).
 *
 *   dcmi-probe     {"cards":[{card, hbm_mib, hbm_used_mib (or hbm_error),
 *                  mem_mib, mem_free_mib, procs:[{pid, mem_mib}]}]}
 *
 * Exit status 0, or 1 when DCMI cannot be loaded or started. */
#include <stdio.h>

#ifdef PROBE_DLOPEN
#include <dlfcn.h>
#endif

#include "include/gp-ascend.h"

#define CARDS_MAX 16

static struct {
	int (*init)(void);
	int (*card_list)(int *, int *, int);
	int (*hbm)(int, int, struct dcmi_hbm_info *);
	int (*mem)(int, int, struct dcmi_get_memory_info_stru *);
	int (*procs)(int, int, struct dcmi_proc_mem_info *, int *);
} dcmi;

static int load(void)
{
#ifdef PROBE_DLOPEN
	void *h = dlopen("libdcmi.so", RTLD_LAZY | RTLD_GLOBAL);
#define GET(field, name) *(void **)&dcmi.field = h ? dlsym(h, #name) : NULL
#else
#define GET(field, name) dcmi.field = name
#endif
	GET(init, dcmi_init);
	GET(card_list, dcmi_get_card_list);
	GET(hbm, dcmi_get_device_hbm_info);
	GET(mem, dcmi_get_device_memory_info_v3);
	GET(procs, dcmi_get_device_resource_info);
	if (!dcmi.init || !dcmi.card_list || !dcmi.hbm || !dcmi.mem || !dcmi.procs) {
		fprintf(stderr, "dcmi-probe: cannot find DCMI (libdcmi.so)\n");
		return -1;
	}
	return 0;
}

static void card(int id)
{
	struct dcmi_hbm_info h;
	struct dcmi_get_memory_info_stru m;
	struct dcmi_proc_mem_info procs[GP_DCMI_PROC_MAX];
	int r, n = 0;

	printf("{\"card\":%d", id);
	if ((r = dcmi.hbm(id, 0, &h)) == DCMI_OK)
		printf(",\"hbm_mib\":%llu,\"hbm_used_mib\":%llu", h.memory_size, h.memory_usage);
	else
		printf(",\"hbm_error\":%d", r);
	if ((r = dcmi.mem(id, 0, &m)) == DCMI_OK)
		printf(",\"mem_mib\":%llu,\"mem_free_mib\":%llu", m.memory_size,
		       m.memory_available);
	else
		printf(",\"mem_error\":%d", r);
	printf(",\"procs\":[");
	if (dcmi.procs(id, 0, procs, &n) == DCMI_OK)
		for (int i = 0; i < n && i < GP_DCMI_PROC_MAX; i++)
			printf("%s{\"pid\":%d,\"mem_mib\":%lu}", i ? "," : "", procs[i].proc_id,
			       procs[i].proc_mem_usage >> 20);
	printf("]}");
}

int main(void)
{
	int list[CARDS_MAX], n = 0;

	if (load() < 0)
		return 1;
	if (dcmi.init() != DCMI_OK || dcmi.card_list(&n, list, CARDS_MAX) != DCMI_OK) {
		fprintf(stderr, "dcmi-probe: DCMI did not start (GPUPOOL_SIM_DEVICES?)\n");
		return 1;
	}
	printf("{\"cards\":[");
	for (int i = 0; i < n; i++) {
		printf(i ? "," : "");
		card(list[i]);
	}
	printf("]}\n");
	return 0;
}
