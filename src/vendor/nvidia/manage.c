/* manage.c — NVIDIA's management side (vendor.h): NVML, loaded with
 * dlopen, for discovery, health and sampling, and the driver
 * compatibility table.
 *
 * Lists follow NVML's protocol: a call with too small an array answers
 * INSUFFICIENT_SIZE and the count needed, which is what `processes` and
 * `samples` return then (the caller grows its array and asks again). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-nvml.h"
#include "vendor/nvidia/mig.h"   /* the partition ops: MIG (mig.c) */
#include "vendor/vendor.h"

extern const struct gp_vendor_ops gp_vendor_nvidia;

/* libgpushare finds the driver's functions with cuGetProcAddress, which
 * the driver API has had since CUDA 11.3. */
#define CUDA_API_MIN 11030

#define MIG_DEVICES_MAX 8       /* a card has at most 7 MIG devices */

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

/* ---- NVML ----------------------------------------------------------------- */

/* The NVML functions we use. The library stays loaded once opened
 * (dlopen counts references; a driver's library is not made to be
 * unloaded, and the agent asks again at every sampling period). */
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
	nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*procs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
	nvmlReturn_t (*samples)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *,
				unsigned long long);
	/* accounting (NULL where NVML lacks it): the most each process held */
	nvmlReturn_t (*accounting)(nvmlDevice_t, unsigned, nvmlAccountingStats_t *);
	nvmlReturn_t (*accounting_on)(nvmlDevice_t, nvmlEnableState_t);
	/* NULL: a driver without it (every card then is an island of one) */
	nvmlReturn_t (*p2p)(nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t,
			    nvmlGpuP2PStatus_t *);
	/* MIG devices (NULL in an NVML without MIG) */
	nvmlReturn_t (*mig_by_index)(nvmlDevice_t, unsigned, nvmlDevice_t *);
	nvmlReturn_t (*gi_id)(nvmlDevice_t, unsigned *);
	/* sampling: scratch for the lists, grown as NVML asks */
	nvmlProcessInfo_t *proc;
	unsigned proc_cap;
	nvmlProcessUtilizationSample_t *sample;
	unsigned sample_cap;
};

static const char *library_of(const char *library)
{
	const char *env = getenv("GPUPOOL_NVML_LIBRARY");

	return library ? library : env && *env ? env : "libnvidia-ml.so.1";
}

static int nvml_load(struct nvml *n, const char *library, char *err, size_t err_len)
{
	static const char *const names[] = {
		"nvmlInit_v2",	      "nvmlShutdown",		  "nvmlErrorString",
		"nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion_v2",
		"nvmlDeviceGetCount_v2",      "nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetName",	      "nvmlDeviceGetUUID",
		"nvmlDeviceGetPciInfo_v3",    "nvmlDeviceGetMemoryInfo",
		"nvmlDeviceGetUtilizationRates", "nvmlDeviceGetComputeRunningProcesses_v3",
		"nvmlDeviceGetProcessUtilization",
	};
	void **slot[] = {
		(void **)&n->init,	   (void **)&n->shutdown, (void **)&n->error_string,
		(void **)&n->driver_version, (void **)&n->cuda_version, (void **)&n->count,
		(void **)&n->by_index,	   (void **)&n->name,	  (void **)&n->uuid,
		(void **)&n->pci,	   (void **)&n->memory,	  (void **)&n->util,
		(void **)&n->procs,	   (void **)&n->samples,
	};

	memset(n, 0, sizeof(*n));
	n->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(err, err_len,
			 "cannot load %s (%s): no NVIDIA driver here; for simulated devices set "
			 "GPUPOOL_SIM_DEVICES and LD_LIBRARY_PATH=build/simdev",
			 library, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slot[i] = dlsym(n->lib, names[i]);
		if (!*slot[i]) {
			snprintf(err, err_len, "%s lacks %s: the driver is too old for gpupool",
				 library, names[i]);
			return -ENOTSUP;
		}
	}
	n->mig_by_index = (nvmlReturn_t(*)(nvmlDevice_t, unsigned, nvmlDevice_t *))dlsym(
		n->lib, "nvmlDeviceGetMigDeviceHandleByIndex");
	n->gi_id = (nvmlReturn_t(*)(nvmlDevice_t, unsigned *))dlsym(n->lib,
								      "nvmlDeviceGetGpuInstanceId");
	n->accounting = (nvmlReturn_t(*)(nvmlDevice_t, unsigned, nvmlAccountingStats_t *))dlsym(
		n->lib, "nvmlDeviceGetAccountingStats");
	n->accounting_on = (nvmlReturn_t(*)(nvmlDevice_t, nvmlEnableState_t))dlsym(
		n->lib, "nvmlDeviceSetAccountingMode");
	n->p2p = (nvmlReturn_t(*)(nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t,
				  nvmlGpuP2PStatus_t *))dlsym(n->lib, "nvmlDeviceGetP2PStatus");
	return 0;
}

/* ---- discovery -------------------------------------------------------------- */

static nvmlReturn_t device_read(struct nvml *n, unsigned index, struct gp_agent_device *d)
{
	nvmlDevice_t h;
	nvmlPciInfo_t pci;
	nvmlMemory_t mem;
	nvmlReturn_t r;

	if ((r = n->by_index(index, &h)) != NVML_SUCCESS ||
	    (r = n->name(h, d->name, sizeof(d->name))) != NVML_SUCCESS ||
	    (r = n->uuid(h, d->uuid, sizeof(d->uuid))) != NVML_SUCCESS ||
	    (r = n->pci(h, &pci)) != NVML_SUCCESS || (r = n->memory(h, &mem)) != NVML_SUCCESS)
		return r;
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", pci.busId);
	d->mem_total_mib = mem.total >> 20;
	return NVML_SUCCESS;
}

/* Are NVIDIA cards a and b (NVML's indexes) joined by NVLink? */
static bool nvlinked(struct nvml *n, unsigned a, unsigned b)
{
	nvmlGpuP2PStatus_t status = NVML_P2P_STATUS_UNKNOWN;
	nvmlDevice_t ha, hb;

	return n->p2p && n->by_index(a, &ha) == NVML_SUCCESS &&
	       n->by_index(b, &hb) == NVML_SUCCESS &&
	       n->p2p(ha, hb, NVML_P2P_CAPS_INDEX_NVLINK, &status) == NVML_SUCCESS &&
	       status == NVML_P2P_STATUS_OK;
}

/* The NVLink islands of node's cards device[first..]: cards joined by
 * NVLink, directly or through others (or NVSwitch), share one, named by
 * 1 + the node index of its first card; a card joined to none has 0. */
static void islands_find(struct nvml *n, struct gp_agent_node *node, unsigned first)
{
	for (unsigned i = first; i < node->devices; i++)
		for (unsigned j = first; j < i; j++) {
			struct gp_agent_device *a = &node->device[j], *b = &node->device[i];

			if (!nvlinked(n, a->local, b->local))
				continue;
			if (!a->nvlink)
				a->nvlink = (uint8_t)(a->index + 1);
			if (!b->nvlink)
				b->nvlink = a->nvlink;
			else if (b->nvlink != a->nvlink) {      /* two islands are one */
				uint8_t gone = b->nvlink;

				for (unsigned k = first; k < node->devices; k++)
					if (node->device[k].nvlink == gone)
						node->device[k].nvlink = a->nvlink;
			}
		}
}

static int discover(const char *library, struct gp_agent_node *node, char *err, size_t err_len)
{
	struct nvml n;
	nvmlReturn_t r;
	unsigned count = 0, first;
	int ret;

	library = library_of(library);
	ret = nvml_load(&n, library, err, err_len);
	if (ret < 0)
		return ret == -ENOTSUP ? -EIO : ret;
	if ((r = n.init()) != NVML_SUCCESS) {
		snprintf(err, err_len, "NVML would not start: %s", n.error_string(r));
		return -EIO;
	}
	if ((r = n.driver_version(node->driver_version, sizeof(node->driver_version))) ||
	    (r = n.cuda_version(&node->cuda_version)) || (r = n.count(&count)))
		goto fail;
	first = node->devices;
	for (unsigned i = 0; i < count && node->devices < GP_AGENT_DEVICES_MAX; i++) {
		struct gp_agent_device *d = &node->device[node->devices];

		*d = (struct gp_agent_device){ .index = node->devices, .vendor = &gp_vendor_nvidia,
					       .local = i };
		if ((r = device_read(&n, i, d)) != NVML_SUCCESS)
			goto fail;
		snprintf(d->driver_version, sizeof(d->driver_version), "%s", node->driver_version);
		d->compatible = gp_devices_compatible(d->name, node->driver_version,
						      node->cuda_version, d->reason,
						      sizeof(d->reason));
		node->devices++;
	}
	islands_find(&n, node, first);
	n.shutdown();
	return 0;
fail:
	snprintf(err, err_len, "NVML failed while listing devices: %s", n.error_string(r));
	n.shutdown();
	return -EIO;
}

/* ---- sampling ------------------------------------------------------------------ */

/* Turns each card's accounting on where it can (root): then NVML keeps the
 * most memory each process held, which the verifier reads, so that memory
 * taken and given back between two of its looks is seen. Where it cannot,
 * the verifier sees only what each look finds. */
static void accounting_start(struct nvml *n)
{
	unsigned count = 0;
	nvmlDevice_t d;

	if (!n->accounting_on || n->count(&count) != NVML_SUCCESS)
		return;
	for (unsigned i = 0; i < count; i++)
		if (n->by_index(i, &d) == NVML_SUCCESS)
			n->accounting_on(d, NVML_FEATURE_ENABLED);
}

static int sampler_open(const char *library, void **ret, char *err, size_t err_len)
{
	struct nvml *n = calloc(1, sizeof(*n));
	int r;

	if (!n)
		return -ENOMEM;
	library = library_of(library);
	r = nvml_load(n, library, err, err_len);
	if (r == 0 && n->init() != NVML_SUCCESS) {
		snprintf(err, err_len, "NVML would not start for usage sampling");
		r = -EIO;
	}
	if (r < 0) {
		free(n);
		return r;
	}
	accounting_start(n);
	*ret = n;
	return 0;
}

/* NVML stays loaded (a driver's library is not made to be unloaded); the
 * init is undone. */
static void sampler_close(void *h)
{
	struct nvml *n = h;

	n->shutdown();
	free(n->proc);
	free(n->sample);
	free(n);
}

/* The handle of a card, or of a MIG device (GP_VENDOR_PART_LOCAL: its
 * card's index and its GPU instance's id). */
static int handle_of(struct nvml *n, unsigned local, nvmlDevice_t *ret)
{
	nvmlDevice_t card;
	unsigned id;

	if (!GP_VENDOR_LOCAL_IS_PART(local))
		return n->by_index(local, ret) == NVML_SUCCESS ? 0 : -ENODEV;
	if (!n->mig_by_index || !n->gi_id || n->by_index(local & 0xffu, &card) != NVML_SUCCESS)
		return -ENODEV;
	for (unsigned i = 0; i < MIG_DEVICES_MAX; i++)
		if (n->mig_by_index(card, i, ret) == NVML_SUCCESS &&
		    n->gi_id(*ret, &id) == NVML_SUCCESS && id == (local >> 8 & 0xffu))
			return 0;
	return -ENODEV;
}

static int device_sample(void *h, unsigned local, struct gp_vendor_sample *out)
{
	struct nvml *n = h;
	nvmlUtilization_t util;
	nvmlMemory_t mem;
	nvmlDevice_t d;
	nvmlReturn_t r;

	if (handle_of(n, local, &d) < 0 || n->memory(d, &mem) != NVML_SUCCESS)
		return -EIO;
	/* A card in MIG mode has no utilization (NVML answers NOT_SUPPORTED;
	 * DCGM's profiling metrics would have it): 0, docs/vendors.md. */
	r = n->util(d, &util);
	if (r == NVML_ERROR_NOT_SUPPORTED)
		util.gpu = 0;
	else if (r != NVML_SUCCESS)
		return -EIO;
	out->util_pct = util.gpu > 100 ? 100 : util.gpu;
	out->mem_used_bytes = mem.used;
	out->mem_total_bytes = mem.total;
	return 0;
}

/* Grows *array to hold want entries of size `size`. */
static int grow(void **array, unsigned *cap, unsigned want, size_t size)
{
	void *bigger;

	if (want <= *cap)
		return 0;
	bigger = realloc(*array, (size_t)want * size);
	if (!bigger)
		return -ENOMEM;
	*array = bigger;
	*cap = want;
	return 0;
}

static int processes(void *h, unsigned local, struct gp_vendor_proc *out, int max)
{
	struct nvml *n = h;
	unsigned count = (unsigned)max;
	nvmlReturn_t r;
	nvmlDevice_t d;

	if (handle_of(n, local, &d) < 0 || grow((void **)&n->proc, &n->proc_cap,
						(unsigned)(max > 0 ? max : 1), sizeof(*n->proc)) < 0)
		return -EIO;
	r = n->procs(d, &count, max > 0 ? n->proc : NULL);
	if (r == NVML_ERROR_INSUFFICIENT_SIZE)
		return (int)count;
	if (r != NVML_SUCCESS)
		return -EIO;
	for (unsigned i = 0; i < count && (int)i < max; i++) {
		nvmlAccountingStats_t stats;

		out[i] = (struct gp_vendor_proc){ .pid = (pid_t)n->proc[i].pid,
						  .mem_bytes = n->proc[i].usedGpuMemory };
		if (n->accounting && n->accounting(d, n->proc[i].pid, &stats) == NVML_SUCCESS)
			out[i].mem_max_bytes = stats.maxMemoryUsage;
	}
	return (int)count;
}

static int samples(void *h, unsigned local, uint64_t since_us, struct gp_vendor_proc_sample *out,
		   int max)
{
	struct nvml *n = h;
	unsigned count = (unsigned)max;
	nvmlReturn_t r;
	nvmlDevice_t d;

	if (handle_of(n, local, &d) < 0 || grow((void **)&n->sample, &n->sample_cap,
						(unsigned)(max > 0 ? max : 1), sizeof(*n->sample)) < 0)
		return -EIO;
	r = n->samples(d, max > 0 ? n->sample : NULL, &count, since_us);
	if (r == NVML_ERROR_NOT_FOUND)
		return 0;               /* none newer */
	if (r == NVML_ERROR_INSUFFICIENT_SIZE)
		return (int)count;
	if (r != NVML_SUCCESS)
		return -EIO;
	for (unsigned i = 0; i < count && (int)i < max; i++)
		out[i] = (struct gp_vendor_proc_sample){
			.pid = (pid_t)n->sample[i].pid,
			.timestamp_us = n->sample[i].timeStamp,
			.util_pct = n->sample[i].smUtil > 100 ? 100 : n->sample[i].smUtil,
		};
	return (int)count;
}

const struct gp_vendor_ops gp_vendor_nvidia = {
	.name = "nvidia",
	.library = "libnvidia-ml.so.1",
	.library_env = "GPUPOOL_NVML_LIBRARY",
	.runtime = "CUDA driver API (libcuda.so.1)",
	.runtime_name = "cuda",
	.visible_env = { "CUDA_VISIBLE_DEVICES", NULL },
	.visible_by_uuid = true,
	.isolation = GP_VENDOR_SLICES | GP_VENDOR_PARTITIONS,
	.discover = discover,
	.open = sampler_open,
	.close = sampler_close,
	.device = device_sample,
	.processes = processes,
	.samples = samples,
	.profiles = gp_nvidia_profiles,
	.partitions = gp_nvidia_partitions,
	.partition_create = gp_nvidia_partition_create,
	.partition_destroy = gp_nvidia_partition_destroy,
};
