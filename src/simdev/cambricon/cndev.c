/* cndev.c — simdev's libcndev.so: Cambricon's management library (CNDev)
 * for the simulated MLUs of GPUPOOL_SIM_DEVICES.
 *
 * It sees every simdev device of vendor "cambricon", in simdev's order
 * (like the real CNDev it ignores MLU_VISIBLE_DEVICES); a device handle
 * is its index. What it answers, from simdev's shared state (simdev.h):
 * the card's name and type (MLU370), its UUID (the text after simdev's
 * "MLU-": tools print the prefix), memory in MB, the average core
 * utilization and each process's share over the last second, the
 * processes holding memory or a context (memory in KiB), health (a device
 * lost with `simctl lose` is in problem) and the driver's version, which
 * GPUPOOL_SIM_CAMBRICON_DRIVER sets ("MAJOR.MINOR.BUILD", default
 * 5.10.22) so that a test can show the compatibility table refusing one.
 * Versioned structs must carry a version from 1 to 6. Lists follow CNDev's
 * protocol: count in is the array's size, out the number of entries;
 * CNDEV_ERROR_INSUFFICIENT_SPACE when it was too small. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-cambricon.h"
#include "simdev/simdev.h"

/* Every non-static function here is a CNDev entry point; its prototype is
 * CNDev's ABI (gp-cambricon.h has the typedefs). */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define DRIVER_DEFAULT "5.10.22"
#define MiB (1024ULL * 1024)

static struct sim *sim;
static int mlu[SIM_DEVICES_MAX];
static int mlu_count;
static int initialized;

cndevRet_t cndevInit(int32_t reserved)
{
	char err[SIM_ERR_MAX];

	(void)reserved;
	if (initialized++)
		return CNDEV_SUCCESS;
	if (!sim && sim_open(&sim, err, sizeof(err)) < 0) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: %s\n", err);
		initialized = 0;
		return CNDEV_ERROR_NO_DRIVER;
	}
	mlu_count = sim_vendor_devices(sim, "cambricon", mlu, SIM_DEVICES_MAX);
	return CNDEV_SUCCESS;
}

cndevRet_t cndevRelease(void)
{
	if (initialized > 0)
		initialized--;
	return CNDEV_SUCCESS;
}

const char *cndevGetErrorString(cndevRet_t error)
{
	switch (error) {
	case CNDEV_SUCCESS: return "success";
	case CNDEV_ERROR_NO_DRIVER: return "no MLU driver (simdev: set GPUPOOL_SIM_DEVICES)";
	case CNDEV_ERROR_UNSUPPORTED_API_VERSION: return "unsupported API version";
	case CNDEV_ERROR_UNINITIALIZED: return "CNDev is not initialized";
	case CNDEV_ERROR_INVALID_ARGUMENT: return "invalid argument";
	case CNDEV_ERROR_INVALID_DEVICE_ID: return "invalid device";
	case CNDEV_ERROR_INSUFFICIENT_SPACE: return "insufficient space";
	case CNDEV_ERROR_NOT_SUPPORTED: return "not supported";
	default: return "unknown error";
	}
}

/* Checks the call's state and struct version; sets *phys for a device. */
static cndevRet_t check(int32_t version, cndevDevice_t device, int *phys)
{
	if (!initialized)
		return CNDEV_ERROR_UNINITIALIZED;
	if (version < 1 || version > CNDEV_VERSION_6)
		return CNDEV_ERROR_UNSUPPORTED_API_VERSION;
	if (device < 0 || device >= mlu_count)
		return CNDEV_ERROR_INVALID_DEVICE_ID;
	*phys = mlu[device];
	return CNDEV_SUCCESS;
}

#define REQUIRE(version, device, phys)                          \
	int phys = -1;                                          \
	cndevRet_t r_ = check(version, device, &phys);          \
	if (r_ != CNDEV_SUCCESS)                                \
		return r_

cndevRet_t cndevGetDeviceCount(cndevCardInfo_t *info)
{
	if (!info)
		return CNDEV_ERROR_INVALID_ARGUMENT;
	if (!initialized)
		return CNDEV_ERROR_UNINITIALIZED;
	if (info->version < 1 || info->version > CNDEV_VERSION_6)
		return CNDEV_ERROR_UNSUPPORTED_API_VERSION;
	info->number = (uint32_t)mlu_count;
	return CNDEV_SUCCESS;
}

cndevRet_t cndevGetDeviceHandleByIndex(int32_t index, cndevDevice_t *handle)
{
	if (!initialized)
		return CNDEV_ERROR_UNINITIALIZED;
	if (!handle)
		return CNDEV_ERROR_INVALID_ARGUMENT;
	if (index < 0 || index >= mlu_count)
		return CNDEV_ERROR_INVALID_DEVICE_ID;
	*handle = index;
	return CNDEV_SUCCESS;
}

cndevRet_t cndevGetCardName(cndevCardName_t *name, cndevDevice_t device)
{
	if (!name)
		return CNDEV_ERROR_INVALID_ARGUMENT;
	REQUIRE(name->version, device, phys);
	(void)phys;
	name->id = CNDEV_DEVICE_TYPE_MLU370;
	return CNDEV_SUCCESS;
}

const char *cndevGetCardNameStringByDevId(cndevDevice_t device)
{
	int phys;

	if (check(CNDEV_VERSION_6, device, &phys) != CNDEV_SUCCESS)
		return "Unknown";
	return sim_device_model(sim, phys)->name;
}

cndevRet_t cndevGetUUID(cndevUUID_t *uuid, cndevDevice_t device)
{
	const char *text;

	if (!uuid)
		return CNDEV_ERROR_INVALID_ARGUMENT;
	REQUIRE(uuid->version, device, phys);
	text = sim_device_uuid(sim, phys);
	if (strncmp(text, "MLU-", 4) == 0)
		text += 4;
	snprintf((char *)uuid->uuid, sizeof(uuid->uuid), "%s", text);
	uuid->ncsUUID64 = 0;
	return CNDEV_SUCCESS;
}

/* The struct has no version. */
cndevRet_t cndevGetMemoryUsageV2(cndevMemoryInfoV2_t *mem, cndevDevice_t device)
{
	if (!mem)
		return CNDEV_ERROR_INVALID_ARGUMENT;
	REQUIRE(CNDEV_VERSION_6, device, phys);
	memset(mem, 0, sizeof(*mem));
	mem->physicalMemoryTotal = (int64_t)(sim_mem_total(sim, phys) / MiB);
	mem->physicalMemoryUsed = (int64_t)((sim_mem_used(sim, phys) + MiB - 1) / MiB);
	mem->virtualMemoryTotal = mem->physicalMemoryTotal;
	mem->virtualMemoryUsed = mem->physicalMemoryUsed;
	return CNDEV_SUCCESS;
}

cndevRet_t cndevGetVersionInfo(cndevVersionInfo_t *info, cndevDevice_t device)
{
	const char *v = getenv("GPUPOOL_SIM_CAMBRICON_DRIVER");
	unsigned major, minor, build;
	char end;

	if (!info)
		return CNDEV_ERROR_INVALID_ARGUMENT;
	REQUIRE(info->version, device, phys);
	(void)phys;
	if (!v || !*v)
		v = DRIVER_DEFAULT;
	if (sscanf(v, "%u.%u.%u%c", &major, &minor, &build, &end) != 3) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: GPUPOOL_SIM_CAMBRICON_DRIVER=\"%s\": expected "
				"MAJOR.MINOR.BUILD, e.g. 5.10.22\n", v);
		return CNDEV_ERROR_UNKNOWN;
	}
	info->mcuMajorVersion = 1;
	info->mcuMinorVersion = 1;
	info->mcuBuildVersion = 6;
	info->driverMajorVersion = major;
	info->driverMinorVersion = minor;
	info->driverBuildVersion = build;
	return CNDEV_SUCCESS;
}

cndevRet_t cndevGetDeviceUtilizationInfo(cndevUtilizationInfo_t *util, cndevDevice_t device)
{
	int cores;

	if (!util)
		return CNDEV_ERROR_INVALID_ARGUMENT;
	REQUIRE(util->version, device, phys);
	util->averageCoreUtilization = (int32_t)sim_device_utilization(sim, phys, 0);
	cores = sim_device_model(sim, phys)->sms;
	for (int i = 0; i < 80; i++)
		util->coreUtilization[i] = i < cores ? util->averageCoreUtilization : 0;
	return CNDEV_SUCCESS;
}

cndevRet_t cndevGetProcessInfo(unsigned *count, cndevProcessInfo_t *info, cndevDevice_t device)
{
	struct sim_proc_info procs[SIM_PROCS_MAX];
	int n;

	if (!count || (*count && !info))
		return CNDEV_ERROR_INVALID_ARGUMENT;
	REQUIRE(*count ? info[0].version : CNDEV_VERSION_6, device, phys);
	n = sim_device_procs(sim, phys, procs, SIM_PROCS_MAX);
	if (n < 0)
		return CNDEV_ERROR_UNKNOWN;
	if ((unsigned)n > *count) {
		*count = (unsigned)n;
		return CNDEV_ERROR_INSUFFICIENT_SPACE;
	}
	for (int i = 0; i < n; i++) {
		info[i].version = CNDEV_VERSION_6;
		info[i].pid = (uint32_t)procs[i].pid;
		info[i].physicalMemoryUsed = procs[i].mem_bytes / 1024;
		info[i].virtualMemoryUsed = procs[i].mem_bytes / 1024;
	}
	*count = (unsigned)n;
	return CNDEV_SUCCESS;
}

cndevRet_t cndevGetProcessUtilization(unsigned *count, cndevProcessUtilization_t *util,
				      cndevDevice_t device)
{
	struct sim_proc_sample samples[SIM_PROCS_MAX];
	int n;

	if (!count || (*count && !util))
		return CNDEV_ERROR_INVALID_ARGUMENT;
	REQUIRE(*count ? util[0].version : CNDEV_VERSION_6, device, phys);
	n = sim_device_samples(sim, phys, 0, samples, SIM_PROCS_MAX);
	if (n < 0)
		return CNDEV_ERROR_UNKNOWN;
	if ((unsigned)n > *count) {
		*count = (unsigned)n;
		return CNDEV_ERROR_INSUFFICIENT_SPACE;
	}
	for (int i = 0; i < n; i++) {
		memset(&util[i], 0, sizeof(util[i]));
		util[i].version = CNDEV_VERSION_6;
		util[i].pid = (uint32_t)samples[i].pid;
		util[i].ipuUtil = samples[i].sm_util;
	}
	*count = (unsigned)n;
	return CNDEV_SUCCESS;
}

cndevRet_t cndevGetCardHealthState(cndevCardHealthState_t *health, cndevDevice_t device)
{
	bool lost;

	if (!health)
		return CNDEV_ERROR_INVALID_ARGUMENT;
	REQUIRE(health->version, device, phys);
	lost = sim_device_lost(sim, phys);
	health->health = lost ? 0 : 1;
	health->deviceState = lost ? CNDEV_HEALTH_STATE_DEVICE_IN_PROBLEM
				   : CNDEV_HEALTH_STATE_DEVICE_GOOD;
	health->driverState = CNDEV_HEALTH_STATE_DRIVER_RUNNING;
	return CNDEV_SUCCESS;
}
