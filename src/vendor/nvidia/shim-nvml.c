/* shim-nvml.c — what NVML tells a task about device memory: its slice.
 *
 * nvmlDeviceGetMemoryInfo (v1 and v2) inside a task report the task's
 * memory limit as the total, what the task's processes hold as used, and
 * the rest of the limit (never more than the device has free) as free —
 * so nvidia-smi in a task shows its slice. NVML itself is found the way a
 * program finds it (libnvidia-ml.so.1); a process that uses NVML without
 * CUDA (nvidia-smi) joins the task's region by the device's UUID. Process
 * lists are passed through (not yet filtered to the task). */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "include/gp-nvml.h"
#include "vendor/nvidia/shim-cuda.h"

#pragma GCC diagnostic ignored "-Wmissing-prototypes"   /* NVML ABI entry points */

typedef nvmlReturn_t (*mem_fn)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*mem_v2_fn)(nvmlDevice_t, nvmlMemory_v2_t *);
typedef nvmlReturn_t (*uuid_fn)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*index_fn)(nvmlDevice_t, unsigned int *);

static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;
static void *nvml;

void *gp_shim_nvml_handle(void)
{
	pthread_mutex_lock(&nvml_lock);
	if (!nvml)
		nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	pthread_mutex_unlock(&nvml_lock);
	return nvml;
}

static void *real(const char *name)
{
	void *h = gp_shim_nvml_handle();

	return h ? gp_shim_real_dlsym(h, name) : NULL;
}

/* The slice of the task on NVML device d: limit and use, or false when no
 * memory limit applies (or the device is unknown). */
static bool slice_of(nvmlDevice_t d, uint64_t device_total, uint64_t *ret_limit,
		     uint64_t *ret_used)
{
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	struct gp_task_limits lim;
	struct gp_shim_device *dev;
	unsigned index;
	uuid_fn get_uuid = (uuid_fn)real("nvmlDeviceGetUUID");
	index_fn get_index = (index_fn)real("nvmlDeviceGetIndex");

	if (!get_uuid || !get_index || get_uuid(d, uuid, sizeof(uuid)) != NVML_SUCCESS ||
	    get_index(d, &index) != NVML_SUCCESS ||
	    gp_shim_device_by_uuid(uuid, (int)index, device_total, &dev) != 0 ||
	    !dev->limited)
		return false;
	gp_region_limits(dev->region, dev->slot, &lim);
	*ret_limit = lim.mem_bytes && lim.mem_bytes < device_total ? lim.mem_bytes : device_total;
	*ret_used = gp_region_task_used(dev->region, dev->slot);
	return true;
}

/* Rewrites (total, free, used) to the slice; free never exceeds what the
 * device has free, and nothing wraps. */
static void clamp(nvmlDevice_t d, unsigned long long *total, unsigned long long *free_bytes,
		  unsigned long long *used)
{
	uint64_t limit, mine;

	if (!slice_of(d, *total, &limit, &mine))
		return;
	*total = limit;
	*used = mine < limit ? mine : limit;
	if (limit - *used < *free_bytes)
		*free_bytes = limit - *used;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	mem_fn fn = (mem_fn)real("nvmlDeviceGetMemoryInfo");
	nvmlReturn_t r = fn ? fn(device, memory) : NVML_ERROR_LIBRARY_NOT_FOUND;

	if (r == NVML_SUCCESS)
		clamp(device, &memory->total, &memory->free, &memory->used);
	return r;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	mem_v2_fn fn = (mem_v2_fn)real("nvmlDeviceGetMemoryInfo_v2");
	nvmlReturn_t r = fn ? fn(device, memory) : NVML_ERROR_LIBRARY_NOT_FOUND;

	if (r == NVML_SUCCESS)
		clamp(device, &memory->total, &memory->free, &memory->used);
	return r;
}

/* ---- process lists --------------------------------------------------- */

#define PROCS_MAX 256

typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
typedef nvmlReturn_t (*total_fn)(nvmlDevice_t, nvmlMemory_t *);

/* Keeps the entries of `info` whose process belongs to our task on d;
 * returns how many remain (all of them when no task applies). */
static unsigned only_ours(nvmlDevice_t d, nvmlProcessInfo_t *info, unsigned n)
{
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	struct gp_shim_device *dev;
	pid_t ours[GP_REGION_PROCS];
	unsigned index, kept = 0;
	nvmlMemory_t m;
	int count;
	uuid_fn get_uuid = (uuid_fn)real("nvmlDeviceGetUUID");
	index_fn get_index = (index_fn)real("nvmlDeviceGetIndex");
	total_fn get_mem = (total_fn)real("nvmlDeviceGetMemoryInfo");

	if (!get_uuid || !get_index || !get_mem || get_uuid(d, uuid, sizeof(uuid)) != NVML_SUCCESS ||
	    get_index(d, &index) != NVML_SUCCESS || get_mem(d, &m) != NVML_SUCCESS ||
	    gp_shim_device_by_uuid(uuid, (int)index, m.total, &dev) != 0)
		return n;
	count = gp_region_task_pids(dev->region, dev->slot, ours, GP_REGION_PROCS);
	for (unsigned i = 0; i < n; i++)
		for (int j = 0; j < count && j < GP_REGION_PROCS; j++)
			if ((pid_t)info[i].pid == ours[j]) {
				info[kept++] = info[i];
				break;
			}
	return kept;
}

/* The NVML convention: with room for *count entries, fill them; without
 * enough, NVML_ERROR_INSUFFICIENT_SIZE and the number needed. */
static nvmlReturn_t running(const char *name, nvmlDevice_t d, unsigned *count,
			    nvmlProcessInfo_t *infos)
{
	procs_fn fn = (procs_fn)real(name);
	nvmlProcessInfo_t all[PROCS_MAX];
	unsigned n = PROCS_MAX;
	nvmlReturn_t r;

	if (!fn)
		return NVML_ERROR_LIBRARY_NOT_FOUND;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = fn(d, &n, all);
	if (r != NVML_SUCCESS)
		return r;
	n = only_ours(d, all, n);
	if (!infos || *count < n) {
		*count = n;
		return n ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
	}
	memcpy(infos, all, n * sizeof(*infos));
	*count = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
						     nvmlProcessInfo_t *infos)
{
	return running("nvmlDeviceGetComputeRunningProcesses_v3", d, count, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *count,
						     nvmlProcessInfo_t *infos)
{
	return running("nvmlDeviceGetComputeRunningProcesses_v2", d, count, infos);
}

/* Our NVML hooks, for dlsym on NVML's handle. */
static void *nvml_hook(const char *symbol)
{
	static const struct {
		const char *name;
		void *fn;
	} hooks[] = {
		{ "nvmlDeviceGetMemoryInfo", (void *)nvmlDeviceGetMemoryInfo },
		{ "nvmlDeviceGetMemoryInfo_v2", (void *)nvmlDeviceGetMemoryInfo_v2 },
		{ "nvmlDeviceGetComputeRunningProcesses_v3",
		  (void *)nvmlDeviceGetComputeRunningProcesses_v3 },
		{ "nvmlDeviceGetComputeRunningProcesses_v2",
		  (void *)nvmlDeviceGetComputeRunningProcesses_v2 },
	};

	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (strcmp(symbol, hooks[i].name) == 0)
			return hooks[i].fn;
	return NULL;
}

/* NVML's views: a front end that only answers dlsym on NVML's handle (its
 * devices are joined by UUID, gp_shim_device_by_uuid). */
struct gp_shim_front gp_front_nvml = {
	.name = "nvml",
	.library = "libnvidia-ml.so",
	.hook = nvml_hook,
	GP_SHIM_FRONT_INIT,
};
