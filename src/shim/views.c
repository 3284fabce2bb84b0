/* views.c — what NVML tells a task about device memory: its slice.
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
#include "shim/shim.h"

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
	    gp_shim_device_by_uuid(uuid, (int)index, device_total, &dev) != CUDA_SUCCESS ||
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

/* Our NVML hooks, for dlsym on NVML's handle. */
void *gp_shim_nvml_hook(const char *symbol)
{
	if (strcmp(symbol, "nvmlDeviceGetMemoryInfo") == 0)
		return (void *)nvmlDeviceGetMemoryInfo;
	if (strcmp(symbol, "nvmlDeviceGetMemoryInfo_v2") == 0)
		return (void *)nvmlDeviceGetMemoryInfo_v2;
	return NULL;
}
