/* shim-dcmi.c — what DCMI tells a task about its NPU: its slice.
 *
 * DCMI (libdcmi.so) is what npu-smi, mind-cluster's exporters and torch_npu
 * read to see an NPU's memory and processes. Inside a task under
 * libgpushare it shows the task's slice, as shim-nvml.c does for NVML:
 *
 *   dcmi_get_device_hbm_info      memory_size is the task's limit (never more
 *                                 than the device), memory_usage what the
 *                                 task's processes hold (MB, rounded up);
 *   dcmi_get_device_memory_info_v3  the same, where the device keeps its
 *                                 memory in DDR (the 310P: hbm_info is not
 *                                 supported or reports none); on the 910
 *                                 series this call reports the control
 *                                 CPU's DDR, which is not the slice, and is
 *                                 passed through;
 *   dcmi_get_device_resource_info only the task's own processes.
 *
 * Nothing changes where no memory limit applies (the process lists are
 * still the task's). A device is found by its "NPU-…" id, the VDIE die id
 * (dcmi_get_device_die_v2, as the ACL front end and the agent name it),
 * through gp_shim_device_by_uuid: a process that reads DCMI without ACL
 * (npu-smi) joins the task's region by that id. A front end that only
 * answers dlsym on libdcmi.so's handle (mind-cluster dlopens it): no
 * identify, no launches. The real functions come from our own dlopen of
 * libdcmi.so (the program's copy: DCMI's state, dcmi_init included, is the
 * library's), looked up with glibc's dlsym. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "include/gp-ascend.h"
#include "shim/front.h"

#define MiB (1024ULL * 1024)

typedef int (*hbm_fn)(int, int, struct dcmi_hbm_info *);
typedef int (*mem_fn)(int, int, struct dcmi_get_memory_info_stru *);
typedef int (*procs_fn)(int, int, struct dcmi_proc_mem_info *, int *);
typedef int (*die_fn)(int, int, enum dcmi_die_type, struct dcmi_die_id *);
typedef int (*logic_fn)(int *, int, int);

static pthread_mutex_t dcmi_lock = PTHREAD_MUTEX_INITIALIZER;
static void *dcmi;

static void *real(const char *name)
{
	void *h;

	pthread_mutex_lock(&dcmi_lock);
	if (!dcmi)
		dcmi = dlopen("libdcmi.so", RTLD_NOW | RTLD_LOCAL);
	h = dcmi;
	pthread_mutex_unlock(&dcmi_lock);
	return h ? gp_shim_real_dlsym(h, name) : NULL;
}

/* The runtime's device id of DCMI's logical id `logic`: its place in
 * ASCEND_RT_VISIBLE_DEVICES when that is set (the per-device limits follow
 * the task's own numbering), else the logical id itself. */
static int user_id_of(int logic)
{
	const char *p = getenv("ASCEND_RT_VISIBLE_DEVICES");
	int user = 0;

	if (!p)
		return logic;
	while (*p) {
		char *end;
		long id = strtol(p, &end, 10);

		if (end == p)
			break;
		if (id == logic)
			return user;
		user++;
		p = *end == ',' ? end + 1 : end;
	}
	return logic;
}

/* The device's memory as the agent and the ACL front end count it: HBM
 * where it has some, else DDR (memory_info_v3). 0 when DCMI cannot say. */
static uint64_t device_bytes(int card, int chip, bool *ret_in_ddr)
{
	hbm_fn hbm = (hbm_fn)real("dcmi_get_device_hbm_info");
	mem_fn mem = (mem_fn)real("dcmi_get_device_memory_info_v3");
	struct dcmi_hbm_info h;
	struct dcmi_get_memory_info_stru m;

	*ret_in_ddr = false;
	if (hbm && hbm(card, chip, &h) == DCMI_OK && h.memory_size > 0)
		return (uint64_t)h.memory_size * MiB;
	*ret_in_ddr = true;
	if (mem && mem(card, chip, &m) == DCMI_OK)
		return (uint64_t)m.memory_size * MiB;
	return 0;
}

/* The task's device at (card, chip), or false when DCMI cannot name it or
 * the core has no slice for it. *ret_in_ddr: its memory is DDR. */
static bool device_at(int card, int chip, struct gp_shim_device **ret, bool *ret_in_ddr)
{
	die_fn die = (die_fn)real("dcmi_get_device_die_v2");
	logic_fn logic = (logic_fn)real("dcmi_get_device_logic_id");
	char uuid[GP_UUID_STR_MAX];
	struct dcmi_die_id id;
	uint64_t total;
	int l;

	if (!die || !logic || die(card, chip, VDIE, &id) != DCMI_OK ||
	    gp_ascend_uuid_format(&id, uuid, sizeof(uuid)) < 0 ||
	    logic(&l, card, chip) != DCMI_OK)
		return false;
	total = device_bytes(card, chip, ret_in_ddr);
	return total > 0 && gp_shim_device_by_uuid(uuid, user_id_of(l), total, ret) == 0;
}

/* The slice on (card, chip) in MiB: the limit (never more than the
 * device's `device_mib`) and what the task holds, rounded up. False when
 * no memory limit applies there. */
static bool slice_of(int card, int chip, bool want_ddr, unsigned long long device_mib,
		     unsigned long long *ret_limit_mib, unsigned long long *ret_used_mib)
{
	struct gp_task_limits lim;
	struct gp_shim_device *d;
	unsigned long long limit, used;
	bool in_ddr;

	if (!device_at(card, chip, &d, &in_ddr) || in_ddr != want_ddr || !d->limited)
		return false;
	gp_region_limits(d->region, d->slot, &lim);
	limit = lim.mem_bytes ? lim.mem_bytes / MiB : device_mib;
	if (limit > device_mib)
		limit = device_mib;
	used = (gp_region_task_used(d->region, d->slot) + MiB - 1) / MiB;
	*ret_limit_mib = limit;
	*ret_used_mib = used < limit ? used : limit;
	return true;
}

int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *hbm_info)
{
	hbm_fn fn = (hbm_fn)real("dcmi_get_device_hbm_info");
	int r = fn ? fn(card_id, device_id, hbm_info) : DCMI_ERR_CODE_INNER_ERR;
	unsigned long long limit, used;

	if (r == DCMI_OK && hbm_info->memory_size > 0 &&
	    slice_of(card_id, device_id, false, hbm_info->memory_size, &limit, &used)) {
		hbm_info->memory_size = limit;
		hbm_info->memory_usage = used;
	}
	return r;
}

int dcmi_get_device_memory_info_v3(int card_id, int device_id,
				   struct dcmi_get_memory_info_stru *memory_info)
{
	mem_fn fn = (mem_fn)real("dcmi_get_device_memory_info_v3");
	int r = fn ? fn(card_id, device_id, memory_info) : DCMI_ERR_CODE_INNER_ERR;
	unsigned long long limit, used;

	if (r == DCMI_OK &&
	    slice_of(card_id, device_id, true, memory_info->memory_size, &limit, &used)) {
		/* free: the rest of the slice, never more than the device has */
		if (limit - used < memory_info->memory_available)
			memory_info->memory_available = limit - used;
		memory_info->memory_size = limit;
		memory_info->utiliza = limit ? (unsigned)(used * 100 / limit) : 0;
	}
	return r;
}

/* DCMI fills up to GP_DCMI_PROC_MAX entries of the caller's array (it
 * takes no capacity) and says how many; we keep the task's. */
int dcmi_get_device_resource_info(int card_id, int device_id, struct dcmi_proc_mem_info *proc_info,
				  int *proc_num)
{
	procs_fn fn = (procs_fn)real("dcmi_get_device_resource_info");
	struct gp_shim_device *d;
	pid_t ours[GP_REGION_PROCS];
	int r = fn ? fn(card_id, device_id, proc_info, proc_num) : DCMI_ERR_CODE_INNER_ERR;
	int count, kept = 0;
	bool in_ddr;

	if (r != DCMI_OK || !device_at(card_id, device_id, &d, &in_ddr))
		return r;
	count = gp_region_task_pids(d->region, d->slot, ours, GP_REGION_PROCS);
	for (int i = 0; i < *proc_num; i++)
		for (int j = 0; j < count && j < GP_REGION_PROCS; j++)
			if ((pid_t)proc_info[i].proc_id == ours[j]) {
				proc_info[kept++] = proc_info[i];
				break;
			}
	*proc_num = kept;
	return r;
}

/* Our DCMI hooks, for dlsym on DCMI's handle. */
static void *dcmi_hook(const char *symbol)
{
	static const struct {
		const char *name;
		void *fn;
	} hooks[] = {
		{ "dcmi_get_device_hbm_info", (void *)dcmi_get_device_hbm_info },
		{ "dcmi_get_device_memory_info_v3", (void *)dcmi_get_device_memory_info_v3 },
		{ "dcmi_get_device_resource_info", (void *)dcmi_get_device_resource_info },
	};

	if (strncmp(symbol, "dcmi_", 5) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (strcmp(symbol, hooks[i].name) == 0)
			return hooks[i].fn;
	return NULL;
}

/* DCMI's views: a front end that only answers dlsym on DCMI's handle (its
 * devices are joined by their "NPU-…" id, gp_shim_device_by_uuid). */
struct gp_shim_front gp_front_dcmi = {
	.name = "dcmi",
	.library = "libdcmi.so",
	.hook = dcmi_hook,
	GP_SHIM_FRONT_INIT,
};
