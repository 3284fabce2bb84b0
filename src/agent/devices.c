/* devices.c — NVML discovery and the driver compatibility table. */
#include "agent/devices.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-nvml.h"

/* libgpushare finds the driver's functions with cuGetProcAddress, which
 * the driver API has had since CUDA 11.3. */
#define CUDA_API_MIN 11030

/* The oldest driver branch that supports each architecture (NVIDIA's CUDA
 * release notes: Volta came with CUDA 9.0 / R384, Turing with 10.0 / R410,
 * Ampere with 11.0 / R450, Ada and Hopper with 11.8 / R520). Matched by a
 * word of the NVML name; the first match counts. A newer model may need a
 * newer branch than its architecture's first: this is a floor. */
static const struct compat_rule {
	const char *word;
	const char *architecture;
	int driver_min;
} compat_table[] = {
	{ "V100", "Volta", 384 },   { "T4", "Turing", 410 },   { "A100", "Ampere", 450 },
	{ "A800", "Ampere", 450 },  { "A30", "Ampere", 450 },  { "A10", "Ampere", 450 },
	{ "L40S", "Ada", 520 },     { "L40", "Ada", 520 },     { "L4", "Ada", 520 },
	{ "H100", "Hopper", 520 },  { "H800", "Hopper", 520 }, { "H200", "Hopper", 520 },
	{ "H20", "Hopper", 520 },
};

/* Is `word` in `name` as a whole word (delimited by start, end, space or
 * '-')? So "A10" does not match "A100". */
static bool has_word(const char *name, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(name, word); p; p = strstr(p + 1, word)) {
		bool starts = p == name || p[-1] == ' ' || p[-1] == '-';
		bool ends = p[n] == '\0' || p[n] == ' ' || p[n] == '-';

		if (starts && ends)
			return true;
	}
	return false;
}

bool gp_devices_compatible(const char *name, const char *driver_version, int cuda_version,
			   char *reason, size_t reason_len)
{
	int branch = atoi(driver_version ? driver_version : "");

	if (cuda_version < CUDA_API_MIN) {
		snprintf(reason, reason_len,
			 "the driver offers CUDA %d.%d; libgpushare needs CUDA 11.3 or newer "
			 "(cuGetProcAddress): upgrade the driver",
			 cuda_version / 1000, cuda_version % 1000 / 10);
		return false;
	}
	for (size_t i = 0; i < sizeof(compat_table) / sizeof(compat_table[0]); i++) {
		const struct compat_rule *r = &compat_table[i];

		if (!has_word(name, r->word))
			continue;
		if (branch < r->driver_min) {
			snprintf(reason, reason_len,
				 "%s (%s) needs driver R%d or newer; driver %s is installed: "
				 "upgrade the driver",
				 r->word, r->architecture, r->driver_min,
				 driver_version ? driver_version : "?");
			return false;
		}
		break;
	}
	if (reason_len)
		reason[0] = '\0';
	return true;
}

/* The NVML functions discovery uses. The library stays loaded once
 * opened (dlopen counts references; a driver's library is not made to
 * be unloaded, and the agent asks again at every sampling period). */
struct nvml {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*driver_version)(char *, unsigned);
	nvmlReturn_t (*cuda_version)(int *);
	nvmlReturn_t (*count)(unsigned *);
	nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
};

static bool nvml_load(struct nvml *n, const char *library, char *err, size_t err_len)
{
	static const char *const names[] = {
		"nvmlInit_v2",	      "nvmlShutdown",		  "nvmlErrorString",
		"nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion_v2",
		"nvmlDeviceGetCount_v2",      "nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetName",	      "nvmlDeviceGetUUID",
		"nvmlDeviceGetPciInfo_v3",    "nvmlDeviceGetMemoryInfo",
	};
	void **slot[] = {
		(void **)&n->init,	   (void **)&n->shutdown, (void **)&n->error_string,
		(void **)&n->driver_version, (void **)&n->cuda_version, (void **)&n->count,
		(void **)&n->by_index,	   (void **)&n->name,	  (void **)&n->uuid,
		(void **)&n->pci,	   (void **)&n->memory,
	};

	n->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(err, err_len,
			 "cannot load %s (%s): no NVIDIA driver here; for simulated devices set "
			 "GPUPOOL_SIM_DEVICES and LD_LIBRARY_PATH=build/simdev",
			 library, dlerror());
		return false;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slot[i] = dlsym(n->lib, names[i]);
		if (!*slot[i]) {
			snprintf(err, err_len, "%s lacks %s: the driver is too old for gpupool",
				 library, names[i]);
			return false;
		}
	}
	return true;
}

static int device_read(struct nvml *n, unsigned index, struct gp_agent_device *d)
{
	nvmlDevice_t h;
	nvmlPciInfo_t pci;
	nvmlMemory_t mem;
	nvmlReturn_t r;

	memset(d, 0, sizeof(*d));
	d->index = index;
	if ((r = n->by_index(index, &h)) != NVML_SUCCESS ||
	    (r = n->name(h, d->name, sizeof(d->name))) != NVML_SUCCESS ||
	    (r = n->uuid(h, d->uuid, sizeof(d->uuid))) != NVML_SUCCESS ||
	    (r = n->pci(h, &pci)) != NVML_SUCCESS || (r = n->memory(h, &mem)) != NVML_SUCCESS)
		return (int)r;
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", pci.busId);
	d->mem_total_mib = mem.total >> 20;
	return NVML_SUCCESS;
}

int gp_devices_discover(const char *library, struct gp_agent_node *ret, char *err, size_t err_len)
{
	struct nvml n;
	nvmlReturn_t r;
	unsigned count = 0;

	library = library ? library : "libnvidia-ml.so.1";
	if (!nvml_load(&n, library, err, err_len))
		return -ENOENT;
	memset(ret, 0, sizeof(*ret));
	if ((r = n.init()) != NVML_SUCCESS) {
		snprintf(err, err_len, "NVML would not start: %s", n.error_string(r));
		return -EIO;
	}
	if ((r = n.driver_version(ret->driver_version, sizeof(ret->driver_version))) ||
	    (r = n.cuda_version(&ret->cuda_version)) || (r = n.count(&count)))
		goto fail;
	for (unsigned i = 0; i < count && i < GP_AGENT_DEVICES_MAX; i++) {
		struct gp_agent_device *d = &ret->device[i];

		if ((r = (nvmlReturn_t)device_read(&n, i, d)) != NVML_SUCCESS)
			goto fail;
		d->compatible = gp_devices_compatible(d->name, ret->driver_version,
						      ret->cuda_version, d->reason,
						      sizeof(d->reason));
		ret->devices++;
	}
	n.shutdown();
	return 0;
fail:
	snprintf(err, err_len, "NVML failed while listing devices: %s", n.error_string(r));
	n.shutdown();
	return -EIO;
}
