/* manage.c — Intel's management side (vendor.h): Level Zero Sysman, from
 * the loader (libze_loader.so.1, loaded with dlopen), for discovery,
 * health and sampling, and the driver compatibility table.
 *
 * Devices are numbered as Sysman lists them (`local`), which is the core
 * API's order without ZE_AFFINITY_MASK, the variable a task gets. A
 * device's UUID is "XPU-" and its 16 Sysman bytes in the 8-4-4-4-12 form
 * (libgpushare's Level Zero front end names its region the same way).
 * Utilization is an engine group's active time over the wall time between
 * two calls (zesEngineGetActivity); Level Zero keeps no per-process
 * utilization samples, so `samples` is NULL and a task's used time is
 * shared out by compute share (docs/vendors.md). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-levelzero.h"
#include "vendor/vendor.h"

extern const struct gp_vendor_ops gp_vendor_intel;

/* ---- the compatibility table ----------------------------------------- */

/* libgpushare's front end hooks zeMemFreeExt and immediate command lists
 * (Level Zero 1.3 drivers have both). */
#define API_MAJOR_MIN 1
#define API_MINOR_MIN 3

/* The oldest Level Zero GPU driver (compute-runtime) build that gpupool
 * accepts per GPU family, matched by a word of the device's name; the
 * first match counts. Sysman reports the driver as "1.3.BUILD". These are
 * floors of gpupool's own (the first compute-runtime releases of 2022-Q4
 * that list the family as supported), checked only on simdev so far. */
static const struct compat_rule {
	const char *word;
	const char *family;
	unsigned build_min;
	const char *release;
} compat_table[] = {
	{ "Max", "Data Center GPU Max (Xe HPC)", 24595, "22.43" },
	{ "Flex", "Data Center GPU Flex (Xe HPG)", 24595, "22.43" },
	{ "Arc", "Arc (Xe HPG)", 24595, "22.43" },
};

/* Is `word` in `name` as a whole word (delimited by start, end, space,
 * '-' or '(')? */
static bool has_word(const char *name, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(name, word); p; p = strstr(p + 1, word)) {
		bool starts = p == name || p[-1] == ' ' || p[-1] == '-' || p[-1] == ')';
		bool ends = p[n] == '\0' || p[n] == ' ' || p[n] == '-' || p[n] == '(';

		if (starts && ends)
			return true;
	}
	return false;
}

/* The verdict for a device named `name` under driver `version`
 * ("MAJOR.MINOR.BUILD"): true, or false with the reason. */
static bool compatible(const char *name, const char *version, char *reason, size_t reason_len)
{
	unsigned major = 0, minor = 0, build = 0;

	if (sscanf(version, "%u.%u.%u", &major, &minor, &build) != 3) {
		snprintf(reason, reason_len,
			 "driver version \"%.24s\" is not MAJOR.MINOR.BUILD: install "
			 "intel-level-zero-gpu 1.3 or newer", version);
		return false;
	}
	if (major < API_MAJOR_MIN || (major == API_MAJOR_MIN && minor < API_MINOR_MIN)) {
		snprintf(reason, reason_len,
			 "needs Level Zero driver 1.3+ (zeMemFreeExt); %.24s is installed: "
			 "upgrade intel-level-zero-gpu", version);
		return false;
	}
	for (size_t i = 0; i < sizeof(compat_table) / sizeof(compat_table[0]); i++) {
		const struct compat_rule *r = &compat_table[i];

		if (!has_word(name, r->word))
			continue;
		if (major == API_MAJOR_MIN && minor == API_MINOR_MIN && build < r->build_min) {
			snprintf(reason, reason_len,
				 "%s needs driver 1.3.%u+ (compute-runtime %s); %.24s is installed: "
				 "upgrade intel-level-zero-gpu",
				 r->family, r->build_min, r->release, version);
			return false;
		}
		break;
	}
	if (reason_len)
		reason[0] = '\0';
	return true;
}

/* ---- Sysman ---------------------------------------------------------- */

#define ENGINE_NONE 0xffffffffu

/* The Sysman functions we use, and the sampler's state. The library stays
 * loaded once opened (a driver's loader is not made to be unloaded). */
struct sysman {
	void *lib;
	ze_result_t (*init)(zes_init_flags_t);
	ze_result_t (*driver_get)(uint32_t *, zes_driver_handle_t *);
	ze_result_t (*device_get)(zes_driver_handle_t, uint32_t *, zes_device_handle_t *);
	ze_result_t (*properties)(zes_device_handle_t, zes_device_properties_t *);
	ze_result_t (*mem_modules)(zes_device_handle_t, uint32_t *, zes_mem_handle_t *);
	ze_result_t (*mem_state)(zes_mem_handle_t, zes_mem_state_t *);
	ze_result_t (*engine_groups)(zes_device_handle_t, uint32_t *, zes_engine_handle_t *);
	ze_result_t (*engine_properties)(zes_engine_handle_t, zes_engine_properties_t *);
	ze_result_t (*engine_activity)(zes_engine_handle_t, zes_engine_stats_t *);
	ze_result_t (*processes)(zes_device_handle_t, uint32_t *, zes_process_state_t *);
	uint32_t devices;
	zes_device_handle_t device[GP_AGENT_DEVICES_MAX];
	/* sampling: each device's engine group, and its counters last read */
	zes_engine_handle_t engine[GP_AGENT_DEVICES_MAX];
	zes_engine_stats_t last[GP_AGENT_DEVICES_MAX];
	zes_process_state_t *proc;
	uint32_t proc_cap;
};

static const char *library_of(const char *library)
{
	const char *env = getenv("GPUPOOL_ZE_LIBRARY");

	return library ? library : env && *env ? env : GP_ZE_LOADER;
}

static int sysman_load(struct sysman *z, const char *library, char *err, size_t err_len)
{
	static const char *const names[] = {
		"zesInit", "zesDriverGet", "zesDeviceGet", "zesDeviceGetProperties",
		"zesDeviceEnumMemoryModules", "zesMemoryGetState", "zesDeviceEnumEngineGroups",
		"zesEngineGetProperties", "zesEngineGetActivity", "zesDeviceProcessesGetState",
	};
	void **slot[] = {
		(void **)&z->init,	    (void **)&z->driver_get,	 (void **)&z->device_get,
		(void **)&z->properties,    (void **)&z->mem_modules,	 (void **)&z->mem_state,
		(void **)&z->engine_groups, (void **)&z->engine_properties,
		(void **)&z->engine_activity, (void **)&z->processes,
	};

	memset(z, 0, sizeof(*z));
	z->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	if (!z->lib) {
		snprintf(err, err_len,
			 "cannot load %s (%s): no Level Zero loader here; for simulated devices set "
			 "GPUPOOL_SIM_DEVICES=max1550-128g:N and LD_LIBRARY_PATH=build/simdev",
			 library, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slot[i] = dlsym(z->lib, names[i]);
		if (!*slot[i]) {
			snprintf(err, err_len, "%s lacks %s: the Level Zero loader is too old for "
				 "gpupool (Sysman 1.3 or newer)", library, names[i]);
			return -EIO;
		}
	}
	return 0;
}

/* zesInit and the first driver's devices into z->device[]: 0, -ENOENT
 * when Sysman has no Intel device, -EIO when it failed. */
static int sysman_start(struct sysman *z, const char *library, char *err, size_t err_len)
{
	zes_driver_handle_t drv;
	uint32_t n = 1;
	ze_result_t r;

	if ((r = z->init(0)) != ZE_RESULT_SUCCESS) {
		snprintf(err, err_len, "%s: zesInit answers 0x%x: no Level Zero GPU driver has a "
			 "device here", library, (unsigned)r);
		return -ENOENT;
	}
	if ((r = z->driver_get(&n, &drv)) != ZE_RESULT_SUCCESS || n == 0) {
		snprintf(err, err_len, "%s: zesDriverGet finds no driver (0x%x)", library,
			 (unsigned)r);
		return -ENOENT;
	}
	n = GP_AGENT_DEVICES_MAX;
	if ((r = z->device_get(drv, &n, z->device)) != ZE_RESULT_SUCCESS) {
		snprintf(err, err_len, "%s: zesDeviceGet failed (0x%x)", library, (unsigned)r);
		return -EIO;
	}
	if (n == 0) {
		snprintf(err, err_len, "%s: Sysman lists no Intel device", library);
		return -ENOENT;
	}
	z->devices = n;
	return 0;
}

/* "XPU-" and the 16 bytes as 8-4-4-4-12 hexadecimal digits. */
static void uuid_text(const uint8_t id[16], char *out, size_t len)
{
	snprintf(out, len,
		 "XPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10],
		 id[11], id[12], id[13], id[14], id[15]);
}

/* Memory of device i, summed over its modules: 0 or a ze_result_t. */
static ze_result_t memory_of(struct sysman *z, uint32_t i, uint64_t *ret_total,
			     uint64_t *ret_free)
{
	zes_mem_handle_t mem[8];
	uint32_t n = 8;
	uint64_t total = 0, free_bytes = 0;
	ze_result_t r;

	if ((r = z->mem_modules(z->device[i], &n, mem)) != ZE_RESULT_SUCCESS)
		return r;
	for (uint32_t m = 0; m < n; m++) {
		zes_mem_state_t st = { .stype = ZES_STRUCTURE_TYPE_MEM_STATE };

		if ((r = z->mem_state(mem[m], &st)) != ZE_RESULT_SUCCESS)
			return r;
		total += st.size;
		free_bytes += st.free;
	}
	*ret_total = total;
	*ret_free = free_bytes;
	return ZE_RESULT_SUCCESS;
}

/* ---- discovery ------------------------------------------------------- */

static int device_read(struct sysman *z, uint32_t i, struct gp_agent_device *d, char *err,
		       size_t err_len)
{
	zes_device_properties_t p = { .stype = ZES_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	uint64_t total = 0, free_bytes = 0;
	ze_result_t r;

	p.core.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
	if ((r = z->properties(z->device[i], &p)) != ZE_RESULT_SUCCESS) {
		snprintf(err, err_len, "zesDeviceGetProperties of device %u failed (0x%x)", i,
			 (unsigned)r);
		return -EIO;
	}
	snprintf(d->name, sizeof(d->name), "%.*s", (int)sizeof(d->name) - 1, p.core.name);
	uuid_text(p.core.uuid.id, d->uuid, sizeof(d->uuid));
	snprintf(d->driver_version, sizeof(d->driver_version), "%.*s",
		 (int)sizeof(d->driver_version) - 1, p.driverVersion);
	r = memory_of(z, i, &total, &free_bytes);
	if (r == ZE_RESULT_ERROR_DEVICE_LOST) {
		d->compatible = false;
		snprintf(d->reason, sizeof(d->reason),
			 "the device is lost (Sysman: ZE_RESULT_ERROR_DEVICE_LOST): check the "
			 "card and reset it or the node");
		return 0;
	}
	if (r != ZE_RESULT_SUCCESS) {
		snprintf(err, err_len, "zesMemoryGetState of device %u failed (0x%x)", i,
			 (unsigned)r);
		return -EIO;
	}
	d->mem_total_mib = total >> 20;
	d->compatible = compatible(p.core.name, p.driverVersion, d->reason, sizeof(d->reason));
	return 0;
}

static int discover(const char *library, struct gp_agent_node *node, char *err, size_t err_len)
{
	struct sysman z;
	int ret;

	library = library_of(library);
	if ((ret = sysman_load(&z, library, err, err_len)) < 0 ||
	    (ret = sysman_start(&z, library, err, err_len)) < 0)
		return ret;
	for (uint32_t i = 0; i < z.devices && node->devices < GP_AGENT_DEVICES_MAX; i++) {
		struct gp_agent_device *d = &node->device[node->devices];

		*d = (struct gp_agent_device){ .index = node->devices, .vendor = &gp_vendor_intel,
					       .local = i };
		if ((ret = device_read(&z, i, d, err, err_len)) < 0)
			return ret;
		node->devices++;
	}
	return 0;
}

/* ---- sampling -------------------------------------------------------- */

/* Device i's engine group for utilization: all compute engines, else all
 * engines; NULL when it has neither. */
static zes_engine_handle_t engine_pick(struct sysman *z, uint32_t i)
{
	zes_engine_handle_t e[32], all = NULL;
	uint32_t n = 32;

	if (z->engine_groups(z->device[i], &n, e) != ZE_RESULT_SUCCESS)
		return NULL;
	for (uint32_t k = 0; k < n; k++) {
		zes_engine_properties_t p = { .stype = ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES };

		if (z->engine_properties(e[k], &p) != ZE_RESULT_SUCCESS || p.onSubdevice)
			continue;
		if (p.type == ZES_ENGINE_GROUP_COMPUTE_ALL)
			return e[k];
		if (p.type == ZES_ENGINE_GROUP_ALL)
			all = e[k];
	}
	return all;
}

static int sampler_open(const char *library, void **ret, char *err, size_t err_len)
{
	struct sysman *z = malloc(sizeof(*z));
	int r;

	if (!z)
		return -ENOMEM;
	library = library_of(library);
	if ((r = sysman_load(z, library, err, err_len)) < 0 ||
	    (r = sysman_start(z, library, err, err_len)) < 0) {
		free(z);
		return r;
	}
	for (uint32_t i = 0; i < z->devices; i++) {
		z->engine[i] = engine_pick(z, i);
		if (z->engine[i])       /* the first interval starts now */
			z->engine_activity(z->engine[i], &z->last[i]);
	}
	*ret = z;
	return 0;
}

/* The loader stays loaded; Sysman has no shutdown call. */
static void sampler_close(void *h)
{
	struct sysman *z = h;

	if (!z)
		return;
	free(z->proc);
	free(z);
}

static int device_sample(void *h, unsigned local, struct gp_vendor_sample *out)
{
	struct sysman *z = h;
	zes_engine_stats_t now;
	uint64_t total, free_bytes, dt, da;

	if (local >= z->devices || memory_of(z, local, &total, &free_bytes) != ZE_RESULT_SUCCESS)
		return -EIO;
	out->mem_total_bytes = total;
	out->mem_used_bytes = total > free_bytes ? total - free_bytes : 0;
	out->util_pct = 0;
	if (!z->engine[local] || z->engine_activity(z->engine[local], &now) != ZE_RESULT_SUCCESS)
		return 0;
	dt = now.timestamp - z->last[local].timestamp;
	da = now.activeTime - z->last[local].activeTime;
	if (now.timestamp > z->last[local].timestamp && now.activeTime >= z->last[local].activeTime)
		out->util_pct = da >= dt ? 100 : (unsigned)(da * 100 / dt);
	z->last[local] = now;
	return 0;
}

static int processes(void *h, unsigned local, struct gp_vendor_proc *out, int max)
{
	struct sysman *z = h;
	uint32_t count = 0;
	ze_result_t r;

	if (local >= z->devices)
		return -ENODEV;
	for (int tries = 0; tries < 4; tries++) {
		if (count > z->proc_cap) {
			zes_process_state_t *bigger = realloc(z->proc, count * sizeof(*bigger));

			if (!bigger)
				return -ENOMEM;
			z->proc = bigger;
			z->proc_cap = count;
		}
		count = z->proc_cap;
		for (uint32_t i = 0; i < count; i++)
			z->proc[i] = (zes_process_state_t){ .stype = ZES_STRUCTURE_TYPE_PROCESS_STATE };
		r = z->processes(z->device[local], &count, count ? z->proc : NULL);
		if (r == ZE_RESULT_SUCCESS && (count <= z->proc_cap))
			break;
		if (r != ZE_RESULT_SUCCESS && r != ZE_RESULT_ERROR_INVALID_SIZE)
			return -EIO;
		if (count <= z->proc_cap)       /* went away meanwhile */
			count = z->proc_cap + 1;
	}
	if (count > z->proc_cap)
		return -EAGAIN;
	for (uint32_t i = 0; i < count && (int)i < max; i++)
		out[i] = (struct gp_vendor_proc){ .pid = (pid_t)z->proc[i].processId,
						  .mem_bytes = z->proc[i].memSize };
	return (int)count;
}

const struct gp_vendor_ops gp_vendor_intel = {
	.name = "intel",
	.library = GP_ZE_LOADER,
	.library_env = "GPUPOOL_ZE_LIBRARY",
	.runtime = "Level Zero (libze_loader.so.1)",
	.runtime_name = "ze",
	.visible_env = { "ZE_AFFINITY_MASK", NULL },
	.isolation = GP_VENDOR_SLICES,
	.discover = discover,
	.open = sampler_open,
	.close = sampler_close,
	.device = device_sample,
	.processes = processes,
	.samples = NULL,
};
