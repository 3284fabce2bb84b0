/* manage.c — AMD's and Hygon's management side (vendor.h): ROCm SMI,
 * loaded with dlopen, for discovery, health and sampling, and each
 * vendor's compatibility table. Two vendors, one library and one HIP
 * front end (shim-hip.c): gp_vendor_amd (ROCm's librocm_smi64.so.7) and
 * gp_vendor_hygon (the DTK's librocm_smi64.so.2, else ROCm's: simdev
 * builds one rocm-smi that answers for both).
 *
 * A device belongs to Hygon when rocm-smi's name for it says "DCU" or
 * "Hygon", else to AMD; `local` is rocm-smi's index, which is also the
 * HIP runtime's ordinal (both number the devices alike). A device's id is
 * "GPU-" ("DCU-" for Hygon) and the 16 hex digits of its unique id
 * (include/gp-hip.h): ROCR_VISIBLE_DEVICES takes it, and the HIP front end
 * names the device's region with the same text.
 *
 * rocm-smi's per-process figures are memory (vram_usage) and CU
 * occupancy, which is not time: `samples` is NULL (vendor.h says how the
 * agent shares the device's busy time then). A process's vram_usage
 * covers all its devices; processes() reports it for each device the
 * process uses (rsmi_compute_process_gpus_get). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-hip.h"
#include "vendor/vendor.h"

extern const struct gp_vendor_ops gp_vendor_amd;
extern const struct gp_vendor_ops gp_vendor_hygon;

#define PROCS_MAX 256

/* ---- compatibility ----------------------------------------------------- */

/* The oldest amdgpu kernel driver (what rocm-smi reports, from
 * /sys/module/amdgpu/version) gpupool runs each device with, by a word of
 * rocm-smi's name; the first match counts. libgpushare's front end hooks
 * libamdhip64.so.6 — the HIP of ROCm 6 — so no device is served by a
 * driver older than ROCm 6.0's (amdgpu 6.3); the MI325X came later (ROCm
 * 6.2, amdgpu 6.8). These floors are gpupool's; a device not in its
 * vendor's table is accepted. */
struct compat_rule {
	const char *word;
	const char *architecture;
	int major, minor;
	const char *release;            /* the ROCm / DTK line that shipped it */
};

static const struct compat_rule amd_table[] = {
	{ "MI325X", "CDNA3, gfx942", 6, 8, "ROCm 6.2" },
	{ "MI300X", "CDNA3, gfx942", 6, 3, "ROCm 6.0" },
	{ "MI300A", "CDNA3, gfx942", 6, 3, "ROCm 6.0" },
	{ "MI250X", "CDNA2, gfx90a", 6, 3, "ROCm 6.0" },
	{ "MI250", "CDNA2, gfx90a", 6, 3, "ROCm 6.0" },
	{ "MI210", "CDNA2, gfx90a", 6, 3, "ROCm 6.0" },
	{ "MI100", "CDNA, gfx908", 6, 3, "ROCm 6.0" },
};

static const struct compat_rule hygon_table[] = {
	{ "K100_AI", "Hygon DCU", 6, 3, "DTK" },
	{ "K100", "Hygon DCU", 6, 3, "DTK" },
	{ "Z100", "Hygon DCU", 6, 3, "DTK" },
};

/* Is `word` in `name` as a whole word (delimited by start, end, space,
 * '-' or '_')? So "MI250" does not match "MI250X". */
static bool has_word(const char *name, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(name, word); p; p = strstr(p + 1, word)) {
		bool starts = p == name || p[-1] == ' ' || p[-1] == '-';
		bool ends = p[n] == '\0' || p[n] == ' ' || p[n] == '-' || p[n] == '_';

		if (starts && ends)
			return true;
	}
	return false;
}

/* The verdict for one device: true, or false with the reason (what is
 * needed, what is installed, what to do). */
static bool compatible(const struct compat_rule *table, size_t rules, const char *fix,
		       const char *name, const char *driver, char *reason, size_t reason_len)
{
	int major = 0, minor = 0;
	bool parsed = sscanf(driver, "%d.%d", &major, &minor) == 2;

	for (size_t i = 0; i < rules; i++) {
		const struct compat_rule *r = &table[i];

		if (!has_word(name, r->word))
			continue;
		if (!parsed || major < r->major || (major == r->major && minor < r->minor)) {
			snprintf(reason, reason_len,
				 "%s (%s) needs driver %d.%d or newer (%s: HIP 6); driver %.16s "
				 "is installed: upgrade the driver (%s)",
				 r->word, r->architecture, r->major, r->minor, r->release, driver, fix);
			return false;
		}
		break;
	}
	if (reason_len)
		reason[0] = '\0';
	return true;
}

/* ---- rocm-smi ------------------------------------------------------------ */

/* The rocm-smi functions we use. The library stays loaded once opened (a
 * driver's library is not made to be unloaded). */
struct rsmi {
	const struct gp_vendor_ops *vendor;
	void *lib;
	rsmi_status_t (*init)(uint64_t);
	rsmi_status_t (*shut_down)(void);
	rsmi_status_t (*status_string)(rsmi_status_t, const char **);
	rsmi_status_t (*version_str)(rsmi_sw_component_t, char *, uint32_t);
	rsmi_status_t (*count)(uint32_t *);
	rsmi_status_t (*name)(uint32_t, char *, size_t);
	rsmi_status_t (*unique_id)(uint32_t, uint64_t *);
	rsmi_status_t (*pci_id)(uint32_t, uint64_t *);
	rsmi_status_t (*mem_total)(uint32_t, rsmi_memory_type_t, uint64_t *);
	rsmi_status_t (*mem_used)(uint32_t, rsmi_memory_type_t, uint64_t *);
	rsmi_status_t (*busy)(uint32_t, uint32_t *);
	rsmi_status_t (*procs)(rsmi_process_info_t *, uint32_t *);
	rsmi_status_t (*proc_gpus)(uint32_t, uint32_t *, uint32_t *);
	rsmi_process_info_t proc[PROCS_MAX];    /* sampling's scratch */
};

static const char *status_text(struct rsmi *r, rsmi_status_t s)
{
	const char *text = NULL;

	if (r->status_string(s, &text) != RSMI_STATUS_SUCCESS || !text)
		return "unknown rocm-smi error";
	return text;
}

static bool is_hygon_name(const char *name)
{
	return strstr(name, "DCU") || strstr(name, "Hygon");
}

/* Opens `library` (dlopen at its soname) and finds the functions. */
static int rsmi_load(struct rsmi *r, const char *library, char *err, size_t err_len)
{
	static const char *const names[] = {
		"rsmi_init",		   "rsmi_shut_down",
		"rsmi_status_string",	   "rsmi_version_str_get",
		"rsmi_num_monitor_devices", "rsmi_dev_name_get",
		"rsmi_dev_unique_id_get",  "rsmi_dev_pci_id_get",
		"rsmi_dev_memory_total_get", "rsmi_dev_memory_usage_get",
		"rsmi_dev_busy_percent_get", "rsmi_compute_process_info_get",
		"rsmi_compute_process_gpus_get",
	};
	void **slot[] = {
		(void **)&r->init,	(void **)&r->shut_down, (void **)&r->status_string,
		(void **)&r->version_str, (void **)&r->count,   (void **)&r->name,
		(void **)&r->unique_id, (void **)&r->pci_id,    (void **)&r->mem_total,
		(void **)&r->mem_used,	(void **)&r->busy,      (void **)&r->procs,
		(void **)&r->proc_gpus,
	};

	r->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	if (!r->lib) {
		snprintf(err, err_len,
			 "cannot load %s (%s): no %s driver here; for simulated devices set "
			 "GPUPOOL_SIM_DEVICES and LD_LIBRARY_PATH=build/simdev",
			 library, dlerror(), r->vendor == &gp_vendor_hygon ? "Hygon DCU" : "AMD ROCm");
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slot[i] = dlsym(r->lib, names[i]);
		if (!*slot[i]) {
			snprintf(err, err_len, "%s lacks %s: rocm-smi is too old for gpupool",
				 library, names[i]);
			return -EIO;
		}
	}
	return 0;
}

/* Loads the vendor's library: `library`, else its variable's, else its
 * default (Hygon: the DTK's, then ROCm's). */
static int rsmi_open(struct rsmi *r, const struct gp_vendor_ops *v, const char *library,
		     char *err, size_t err_len)
{
	const char *env = getenv(v->library_env);
	rsmi_status_t s;
	int ret;

	memset(r, 0, offsetof(struct rsmi, proc));
	r->vendor = v;
	if (!library && env && *env)
		library = env;
	if (library) {
		ret = rsmi_load(r, library, err, err_len);
	} else {
		ret = rsmi_load(r, v->library, err, err_len);
		if (ret == -ENOENT && v == &gp_vendor_hygon)
			ret = rsmi_load(r, gp_vendor_amd.library, err, err_len);
	}
	if (ret < 0)
		return ret;
	if ((s = r->init(0)) != RSMI_STATUS_SUCCESS) {
		snprintf(err, err_len, "rocm-smi would not start: %s", status_text(r, s));
		return -EIO;
	}
	return 0;
}

/* ---- discovery ----------------------------------------------------------- */

static rsmi_status_t device_read(struct rsmi *r, uint32_t i, struct gp_agent_device *d)
{
	uint64_t id, bdf, total;
	rsmi_status_t s;

	if ((s = r->unique_id(i, &id)) != RSMI_STATUS_SUCCESS ||
	    (s = r->pci_id(i, &bdf)) != RSMI_STATUS_SUCCESS ||
	    (s = r->mem_total(i, RSMI_MEM_TYPE_VRAM, &total)) != RSMI_STATUS_SUCCESS)
		return s;
	snprintf(d->uuid, sizeof(d->uuid), "%s%016llx",
		 r->vendor == &gp_vendor_hygon ? "DCU-" : "GPU-", (unsigned long long)id);
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%04x:%02x:%02x.%x",
		 (unsigned)(bdf >> 32), (unsigned)(bdf >> 8 & 0xff), (unsigned)(bdf >> 3 & 0x1f),
		 (unsigned)(bdf & 0x7));
	d->mem_total_mib = total >> 20;
	return RSMI_STATUS_SUCCESS;
}

static int discover_vendor(const struct gp_vendor_ops *v, const struct compat_rule *table,
			   size_t rules, const char *library, struct gp_agent_node *node,
			   char *err, size_t err_len)
{
	char driver[GP_DEVICE_TEXT_MAX];
	struct rsmi *r = malloc(sizeof(*r));
	rsmi_status_t s;
	uint32_t count = 0;
	int ret;

	if (!r)
		return -ENOMEM;
	if ((ret = rsmi_open(r, v, library, err, err_len)) < 0) {
		free(r);
		return ret;
	}
	if ((s = r->version_str(RSMI_SW_COMP_DRIVER, driver, sizeof(driver))) ||
	    (s = r->count(&count)))
		goto fail;
	for (uint32_t i = 0; i < count && node->devices < GP_AGENT_DEVICES_MAX; i++) {
		struct gp_agent_device *d = &node->device[node->devices];
		char name[GP_DEVICE_TEXT_MAX];

		if ((s = r->name(i, name, sizeof(name))) != RSMI_STATUS_SUCCESS)
			goto fail;
		if (is_hygon_name(name) != (v == &gp_vendor_hygon))
			continue;       /* the other vendor's */
		*d = (struct gp_agent_device){ .index = node->devices, .vendor = v, .local = i };
		snprintf(d->name, sizeof(d->name), "%s", name);
		if ((s = device_read(r, i, d)) != RSMI_STATUS_SUCCESS)
			goto fail;
		snprintf(d->driver_version, sizeof(d->driver_version), "%s", driver);
		d->compatible = compatible(table, rules,
					   v == &gp_vendor_hygon ? "Hygon's DCU driver" : "amdgpu-dkms",
					   d->name, driver, d->reason,
					   sizeof(d->reason));
		node->devices++;
	}
	r->shut_down();
	free(r);
	return 0;
fail:
	snprintf(err, err_len, "rocm-smi failed while listing devices: %s", status_text(r, s));
	r->shut_down();
	free(r);
	return -EIO;
}

static int discover_amd(const char *library, struct gp_agent_node *node, char *err,
			size_t err_len)
{
	return discover_vendor(&gp_vendor_amd, amd_table, sizeof(amd_table) / sizeof(amd_table[0]),
			       library, node, err, err_len);
}

static int discover_hygon(const char *library, struct gp_agent_node *node, char *err,
			  size_t err_len)
{
	return discover_vendor(&gp_vendor_hygon, hygon_table,
			       sizeof(hygon_table) / sizeof(hygon_table[0]), library, node, err,
			       err_len);
}

/* ---- sampling ------------------------------------------------------------- */

static int sampler_open(const struct gp_vendor_ops *v, const char *library, void **ret,
			char *err, size_t err_len)
{
	struct rsmi *r = malloc(sizeof(*r));
	int s;

	if (!r)
		return -ENOMEM;
	if ((s = rsmi_open(r, v, library, err, err_len)) < 0) {
		free(r);
		return s;
	}
	*ret = r;
	return 0;
}

static int sampler_open_amd(const char *library, void **ret, char *err, size_t err_len)
{
	return sampler_open(&gp_vendor_amd, library, ret, err, err_len);
}

static int sampler_open_hygon(const char *library, void **ret, char *err, size_t err_len)
{
	return sampler_open(&gp_vendor_hygon, library, ret, err, err_len);
}

/* rocm-smi stays loaded; its init is undone. */
static void sampler_close(void *h)
{
	struct rsmi *r = h;

	if (!r)
		return;
	r->shut_down();
	free(r);
}

static int device_sample(void *h, unsigned local, struct gp_vendor_sample *out)
{
	struct rsmi *r = h;
	uint32_t busy;
	uint64_t used, total;

	if (r->busy(local, &busy) != RSMI_STATUS_SUCCESS ||
	    r->mem_used(local, RSMI_MEM_TYPE_VRAM, &used) != RSMI_STATUS_SUCCESS ||
	    r->mem_total(local, RSMI_MEM_TYPE_VRAM, &total) != RSMI_STATUS_SUCCESS)
		return -EIO;
	out->util_pct = busy > 100 ? 100 : busy;
	out->mem_used_bytes = used;
	out->mem_total_bytes = total;
	return 0;
}

/* Is process pid on device local? */
static bool proc_on(struct rsmi *r, uint32_t pid, unsigned local)
{
	uint32_t gpus[64], n = 64;

	if (r->proc_gpus(pid, gpus, &n) != RSMI_STATUS_SUCCESS)
		return false;
	for (uint32_t i = 0; i < n && i < 64; i++)
		if (gpus[i] == local)
			return true;
	return false;
}

static int processes(void *h, unsigned local, struct gp_vendor_proc *out, int max)
{
	struct rsmi *r = h;
	uint32_t n = PROCS_MAX;
	rsmi_status_t s = r->procs(r->proc, &n);
	int found = 0;

	if (s != RSMI_STATUS_SUCCESS && s != RSMI_STATUS_INSUFFICIENT_SIZE)
		return -EIO;
	for (uint32_t i = 0; i < n && i < PROCS_MAX; i++) {
		if (!proc_on(r, r->proc[i].process_id, local))
			continue;
		if (found < max)
			out[found] = (struct gp_vendor_proc){ .pid = (pid_t)r->proc[i].process_id,
							      .mem_bytes = r->proc[i].vram_usage };
		found++;
	}
	return found;
}

const struct gp_vendor_ops gp_vendor_amd = {
	.name = "amd",
	.library = "librocm_smi64.so.7",
	.library_env = "GPUPOOL_ROCM_SMI_LIBRARY",
	.runtime = "HIP runtime (libamdhip64.so.6)",
	.runtime_name = "hip",
	/* ROCr's variable, by UUID: it hides the other devices from the
	 * whole stack (HIP_VISIBLE_DEVICES indexes what it leaves, so the
	 * two are not set together; an empty HIP_VISIBLE_DEVICES would show
	 * every device). */
	.visible_env = { "ROCR_VISIBLE_DEVICES", NULL },
	.visible_by_uuid = true,
	.isolation = GP_VENDOR_SLICES,
	.discover = discover_amd,
	.open = sampler_open_amd,
	.close = sampler_close,
	.device = device_sample,
	.processes = processes,
	.samples = NULL,
};

const struct gp_vendor_ops gp_vendor_hygon = {
	.name = "hygon",
	.library = "librocm_smi64.so.2",
	.library_env = "GPUPOOL_HYGON_SMI_LIBRARY",
	.runtime = "HIP runtime of Hygon's DTK (libamdhip64.so.6)",
	.runtime_name = "hip",
	.visible_env = { "HIP_VISIBLE_DEVICES", NULL },
	.visible_by_uuid = false,
	.isolation = GP_VENDOR_SLICES,
	.discover = discover_hygon,
	.open = sampler_open_hygon,
	.close = sampler_close,
	.device = device_sample,
	.processes = processes,
	.samples = NULL,
};
