/* manage.c — Cambricon's management side (vendor.h): CNDev
 * (libcndev.so), loaded with dlopen, for discovery, health and sampling,
 * and the driver compatibility table of the MLU generations.
 *
 * A device's UUID is CNDev's with the "MLU-" every Cambricon tool prints
 * before it: the name of its region, which libgpushare's CNRT and CNDrv
 * front ends (shim-cnrt.c) find the same way. CNDev numbers the devices as
 * the runtime does without MLU_VISIBLE_DEVICES (`local`). Lists follow
 * CNDev's protocol: a call with too small an array answers
 * CNDEV_ERROR_INSUFFICIENT_SPACE and the count needed, which `processes`
 * and `samples` return then (the caller grows its array and asks again). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "include/gp-cambricon.h"
#include "vendor/vendor.h"

extern const struct gp_vendor_ops gp_vendor_cambricon;

#define PROCS_MAX 256
#define MiB (1024ULL * 1024)

/* The oldest MLU driver gpupool accepts for each generation, matched by
 * the start of CNDev's card name; the first match counts. The floors are
 * gpupool's, not Cambricon's support matrix: the release of the driver
 * stack (CNDrv 2.x with cnGetExportFunction, CNRT 6) that libgpushare's
 * front ends are written against, as far as gpupool knows it; they have
 * been checked on simdev only (docs/vendors.md). A card this table does
 * not name is refused: nothing is known of its stack. */
static const struct compat_rule {
	const char *prefix;
	const char *generation;
	unsigned major, minor;
} compat_table[] = {
	{ "MLU220", "MLU200", 0, 0 },   { "MLU270", "MLU200", 0, 0 },
	{ "MLU290", "MLU200", 0, 0 },   { "MLU365", "MLU300", 5, 10 },
	{ "MLU370", "MLU300", 5, 10 },  { "MLU570", "MLU500", 5, 10 },
	{ "MLU580", "MLU500", 5, 10 },  { "MLU585", "MLU500", 5, 10 },
	{ "MLU590", "MLU500", 5, 10 },
};

/* Fills reason (empty when compatible) for card `name` with driver
 * major.minor.build. */
static bool compatible(const char *name, const cndevVersionInfo_t *v, char *reason,
		       size_t reason_len)
{
	for (size_t i = 0; i < sizeof(compat_table) / sizeof(compat_table[0]); i++) {
		const struct compat_rule *r = &compat_table[i];

		if (strncmp(name, r->prefix, strlen(r->prefix)) != 0)
			continue;
		if (r->major == 0) {
			snprintf(reason, reason_len,
				 "%.24s (%s) runs CNRT 4/5; libgpushare hooks CNRT 6 and "
				 "CNDrv 2.x: keep this card out of the pool",
				 name, r->generation);
			return false;
		}
		if (v->driverMajorVersion < r->major ||
		    (v->driverMajorVersion == r->major && v->driverMinorVersion < r->minor)) {
			snprintf(reason, reason_len,
				 "%s (%s) needs MLU driver %u.%u or newer (CNRT 6 over CNDrv "
				 "2.x); driver %u.%u.%u is installed: upgrade the driver",
				 r->prefix, r->generation, r->major, r->minor,
				 v->driverMajorVersion, v->driverMinorVersion,
				 v->driverBuildVersion);
			return false;
		}
		if (reason_len)
			reason[0] = '\0';
		return true;
	}
	snprintf(reason, reason_len,
		 "%.40s is not in gpupool's table of MLU generations "
		 "(src/vendor/cambricon/manage.c): its driver stack is unknown", name);
	return false;
}

/* ---- CNDev ---------------------------------------------------------------- */

/* The CNDev functions we use. The library stays loaded once opened (a
 * driver's library is not made to be unloaded). */
struct cndev {
	void *lib;
	gp_cndevInit_t init;
	gp_cndevRelease_t release;
	gp_cndevGetErrorString_t error_string;
	gp_cndevGetDeviceCount_t count;
	gp_cndevGetDeviceHandleByIndex_t by_index;
	gp_cndevGetCardNameStringByDevId_t name;
	gp_cndevGetUUID_t uuid;
	gp_cndevGetMemoryUsageV2_t memory;
	gp_cndevGetVersionInfo_t version;
	gp_cndevGetCardHealthState_t health;
	gp_cndevGetDeviceUtilizationInfo_t util;
	gp_cndevGetProcessInfo_t procs;
	gp_cndevGetProcessUtilization_t proc_util;
	/* sampling: scratch for the lists */
	cndevProcessInfo_t proc[PROCS_MAX];
	cndevProcessUtilization_t sample[PROCS_MAX];
};

static const char *library_of(const char *library)
{
	const char *env = getenv("GPUPOOL_CNDEV_LIBRARY");

	return library ? library : env && *env ? env : "libcndev.so";
}

static int cndev_load(struct cndev *c, const char *library, char *err, size_t err_len)
{
	static const char *const names[] = {
		"cndevInit",	      "cndevRelease",		   "cndevGetErrorString",
		"cndevGetDeviceCount", "cndevGetDeviceHandleByIndex",
		"cndevGetCardNameStringByDevId", "cndevGetUUID",   "cndevGetMemoryUsageV2",
		"cndevGetVersionInfo", "cndevGetCardHealthState", "cndevGetDeviceUtilizationInfo",
		"cndevGetProcessInfo", "cndevGetProcessUtilization",
	};
	void **slot[] = {
		(void **)&c->init,     (void **)&c->release,  (void **)&c->error_string,
		(void **)&c->count,    (void **)&c->by_index, (void **)&c->name,
		(void **)&c->uuid,     (void **)&c->memory,   (void **)&c->version,
		(void **)&c->health,   (void **)&c->util,     (void **)&c->procs,
		(void **)&c->proc_util,
	};

	c->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	if (!c->lib) {
		snprintf(err, err_len,
			 "cannot load %s (%s): no Cambricon driver here; for simulated devices "
			 "set GPUPOOL_SIM_DEVICES and LD_LIBRARY_PATH=build/simdev",
			 library, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slot[i] = dlsym(c->lib, names[i]);
		if (!*slot[i]) {
			snprintf(err, err_len, "%s lacks %s: the CNDev is too old for gpupool",
				 library, names[i]);
			return -EIO;
		}
	}
	return 0;
}

/* ---- discovery -------------------------------------------------------------- */

static cndevRet_t device_read(struct cndev *c, unsigned local, struct gp_agent_device *d)
{
	cndevDevice_t h;
	cndevUUID_t uuid = { .version = CNDEV_VERSION_6 };
	cndevMemoryInfoV2_t mem;
	cndevVersionInfo_t ver = { .version = CNDEV_VERSION_6 };
	cndevCardHealthState_t health = { .version = CNDEV_VERSION_6 };
	cndevRet_t r;

	if ((r = c->by_index((int32_t)local, &h)) || (r = c->uuid(&uuid, h)) ||
	    (r = c->memory(&mem, h)) || (r = c->version(&ver, h)) || (r = c->health(&health, h)))
		return r;
	snprintf(d->name, sizeof(d->name), "%s", c->name(h));
	snprintf(d->uuid, sizeof(d->uuid), "MLU-%.*s", (int)sizeof(uuid.uuid),
		 (const char *)uuid.uuid);
	snprintf(d->driver_version, sizeof(d->driver_version), "%u.%u.%u",
		 ver.driverMajorVersion, ver.driverMinorVersion, ver.driverBuildVersion);
	d->mem_total_mib = mem.physicalMemoryTotal > 0 ? (uint64_t)mem.physicalMemoryTotal : 0;
	if (!health.health || health.deviceState != CNDEV_HEALTH_STATE_DEVICE_GOOD)
		snprintf(d->reason, sizeof(d->reason),
			 "CNDev reports this MLU unhealthy (device state %d, driver state %d): "
			 "check it with cnmon and the kernel log",
			 health.deviceState, health.driverState);
	else
		d->compatible = compatible(d->name, &ver, d->reason, sizeof(d->reason));
	return CNDEV_SUCCESS;
}

static int discover(const char *library, struct gp_agent_node *node, char *err, size_t err_len)
{
	struct cndev *c = calloc(1, sizeof(*c));
	cndevCardInfo_t info = { .version = CNDEV_VERSION_6 };
	cndevRet_t r;
	int ret = 0;

	if (!c)
		return -ENOMEM;
	library = library_of(library);
	if ((ret = cndev_load(c, library, err, err_len)) < 0)
		goto out;
	if ((r = c->init(0)) != CNDEV_SUCCESS) {
		snprintf(err, err_len, "CNDev would not start: %s", c->error_string(r));
		ret = -EIO;
		goto out;
	}
	if ((r = c->count(&info)) != CNDEV_SUCCESS)
		goto fail;
	for (unsigned i = 0; i < info.number && node->devices < GP_AGENT_DEVICES_MAX; i++) {
		struct gp_agent_device *d = &node->device[node->devices];

		*d = (struct gp_agent_device){ .index = node->devices, .vendor = &gp_vendor_cambricon,
					       .local = i };
		if ((r = device_read(c, i, d)) != CNDEV_SUCCESS)
			goto fail;
		node->devices++;
	}
	c->release();
	goto out;
fail:
	snprintf(err, err_len, "CNDev failed while listing devices: %s", c->error_string(r));
	c->release();
	ret = -EIO;
out:
	free(c);
	return ret;
}

/* ---- sampling ------------------------------------------------------------------ */

static int sampler_open(const char *library, void **ret, char *err, size_t err_len)
{
	struct cndev *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	r = cndev_load(c, library_of(library), err, err_len);
	if (r == 0 && c->init(0) != CNDEV_SUCCESS) {
		snprintf(err, err_len, "CNDev would not start for usage sampling");
		r = -EIO;
	}
	if (r < 0) {
		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* CNDev stays loaded; the init is undone. */
static void sampler_close(void *h)
{
	struct cndev *c = h;

	c->release();
	free(c);
}

static int device_sample(void *h, unsigned local, struct gp_vendor_sample *out)
{
	struct cndev *c = h;
	cndevUtilizationInfo_t util = { .version = CNDEV_VERSION_6 };
	cndevMemoryInfoV2_t mem;
	cndevDevice_t d;

	if (c->by_index((int32_t)local, &d) || c->util(&util, d) || c->memory(&mem, d))
		return -EIO;
	out->util_pct = util.averageCoreUtilization < 0	   ? 0
			: util.averageCoreUtilization > 100 ? 100
							    : (unsigned)util.averageCoreUtilization;
	out->mem_used_bytes = mem.physicalMemoryUsed > 0 ? (uint64_t)mem.physicalMemoryUsed * MiB : 0;
	out->mem_total_bytes =
		mem.physicalMemoryTotal > 0 ? (uint64_t)mem.physicalMemoryTotal * MiB : 0;
	return 0;
}

static int processes(void *h, unsigned local, struct gp_vendor_proc *out, int max)
{
	struct cndev *c = h;
	unsigned count = PROCS_MAX;
	cndevDevice_t d;
	cndevRet_t r;

	if (c->by_index((int32_t)local, &d))
		return -EIO;
	c->proc[0].version = CNDEV_VERSION_6;
	r = c->procs(&count, c->proc, d);
	if (r == CNDEV_ERROR_INSUFFICIENT_SPACE)
		return (int)count;
	if (r != CNDEV_SUCCESS)
		return -EIO;
	for (unsigned i = 0; i < count && (int)i < max; i++)
		out[i] = (struct gp_vendor_proc){ .pid = (pid_t)c->proc[i].pid,
						  .mem_bytes = c->proc[i].physicalMemoryUsed * 1024 };
	return (int)count;
}

/* CNDev's per-process utilization is a figure of now, without a time:
 * each process gets one sample stamped with the time of the call. */
static int samples(void *h, unsigned local, uint64_t since_us, struct gp_vendor_proc_sample *out,
		   int max)
{
	struct cndev *c = h;
	unsigned count = PROCS_MAX;
	struct timespec ts;
	uint64_t now_us;
	cndevDevice_t d;
	cndevRet_t r;

	clock_gettime(CLOCK_REALTIME, &ts);
	now_us = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
	if (now_us <= since_us)
		return 0;
	if (c->by_index((int32_t)local, &d))
		return -EIO;
	c->sample[0].version = CNDEV_VERSION_6;
	r = c->proc_util(&count, c->sample, d);
	if (r == CNDEV_ERROR_INSUFFICIENT_SPACE)
		return (int)count;
	if (r != CNDEV_SUCCESS)
		return -EIO;
	for (unsigned i = 0; i < count && (int)i < max; i++)
		out[i] = (struct gp_vendor_proc_sample){
			.pid = (pid_t)c->sample[i].pid,
			.timestamp_us = now_us,
			.util_pct = c->sample[i].ipuUtil > 100 ? 100 : c->sample[i].ipuUtil,
		};
	return (int)count;
}

const struct gp_vendor_ops gp_vendor_cambricon = {
	.name = "cambricon",
	.library = "libcndev.so",
	.library_env = "GPUPOOL_CNDEV_LIBRARY",
	.runtime = "CNRT 6 (libcnrt.so) and CNDrv (libcndrv.so)",
	.runtime_name = "cnrt",
	.visible_env = { "MLU_VISIBLE_DEVICES", NULL },
	.visible_by_uuid = false,
	.isolation = GP_VENDOR_SLICES,
	.discover = discover,
	.open = sampler_open,
	.close = sampler_close,
	.device = device_sample,
	.processes = processes,
	.samples = samples,
};
