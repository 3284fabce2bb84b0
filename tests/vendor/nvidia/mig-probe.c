/* mig-probe.c — MIG on simulated A100s for the NVIDIA vendor tests: NVML's
 * MIG calls made directly (nvml-* commands: what a tool such as
 * nvidia-smi sees), and the agent's partition ops, gp_vendor_nvidia
 * (src/vendor/nvidia/manage.c and mig.c, linked in). One line of JSON
 * out, or for nvml-create/nvml-destroy the NVML result's name.
 *
 * usage: mig-probe discover
 *        mig-probe profiles|partitions LOCAL
 *        mig-probe create LOCAL PROFILE_ID START | destroy LOCAL UUID
 *        mig-probe nvml-profile LOCAL PROFILE_INDEX
 *        mig-probe nvml-create LOCAL PROFILE_ID START   (GI and its CI)
 *        mig-probe nvml-gi LOCAL PROFILE_ID START        (a GI alone)
 *        mig-probe nvml-destroy-gi LOCAL GI_ID           (the GI alone)
 *        mig-probe mem UUID | procs UUID
 * Exit status: 0; 1 when a call failed (its error on stderr; for the
 * ops, "errno NAME: message"); 2 bad usage. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-nvml-mig.h"
#include "include/gp-nvml.h"
#include "vendor/vendor.h"

#define MAX 16

extern const struct gp_vendor_ops gp_vendor_nvidia;

static void *nvml;

/* NVML's function `f`, with its own type (gp-nvml*.h). */
#define NV(f) ((__typeof__(&f))sym(#f))

static void *sym(const char *name)
{
	void *p = nvml ? dlsym(nvml, name) : NULL;

	if (!p) {
		fprintf(stderr, "mig-probe: no %s in libnvidia-ml.so.1\n", name);
		exit(1);
	}
	return p;
}

static const char *result_name(nvmlReturn_t r)
{
	switch ((int)r) {
	case 0: return "SUCCESS";
	case 2: return "INVALID_ARGUMENT";
	case 3: return "NOT_SUPPORTED";
	case 6: return "NOT_FOUND";
	case 7: return "INSUFFICIENT_SIZE";
	case 19: return "IN_USE";
	case 23: return "INSUFFICIENT_RESOURCES";
	default: return "OTHER";
	}
}

static const char *errno_name(int e)
{
	switch (e) {
	case -EBUSY: return "EBUSY";
	case -ENOSPC: return "ENOSPC";
	case -EINVAL: return "EINVAL";
	case -ENOTSUP: return "ENOTSUP";
	case -ENOENT: return "ENOENT";
	case -ENODEV: return "ENODEV";
	default: return "EIO";
	}
}

static nvmlDevice_t card(const char *local)
{
	nvmlDevice_t d;
	nvmlReturn_t r = NV(nvmlDeviceGetHandleByIndex_v2)((unsigned)atoi(local), &d);

	if (r != NVML_SUCCESS) {
		fprintf(stderr, "mig-probe: device %s: %s\n", local, result_name(r));
		exit(1);
	}
	return d;
}

static int nvml_profile(const char *local, const char *index)
{
	nvmlGpuInstanceProfileInfo_v2_t info = { .version = nvmlGpuInstanceProfileInfo_v2 };
	nvmlGpuInstancePlacement_t pl[MAX];
	unsigned count = MAX;
	nvmlDevice_t d = card(local);
	nvmlReturn_t r = NV(nvmlDeviceGetGpuInstanceProfileInfoV)(d, (unsigned)atoi(index), &info);

	if (r != NVML_SUCCESS) {
		printf("{\"result\":\"%s\"}\n", result_name(r));
		return 0;
	}
	r = NV(nvmlDeviceGetGpuInstancePossiblePlacements_v2)(d, info.id, pl, &count);
	printf("{\"result\":\"%s\",\"id\":%u,\"name\":\"%s\",\"slices\":%u,\"count\":%u,"
	       "\"sms\":%u,\"mem_mib\":%llu,\"placements\":[",
	       result_name(r), info.id, info.name, info.sliceCount, info.instanceCount,
	       info.multiprocessorCount, info.memorySizeMB);
	for (unsigned i = 0; r == NVML_SUCCESS && i < count; i++)
		printf("%s{\"start\":%u,\"size\":%u}", i ? "," : "", pl[i].start, pl[i].size);
	printf("]}\n");
	return 0;
}

/* Makes a GPU instance (and, with ci, its compute instance of all of it). */
static int nvml_create(const char *local, const char *id, const char *start, int ci)
{
	nvmlGpuInstancePlacement_t pl = { (unsigned)atoi(start), 0 };
	nvmlGpuInstanceProfileInfo_v2_t info;
	nvmlComputeInstanceProfileInfo_t cinfo;
	nvmlDevice_t d = card(local);
	nvmlGpuInstanceInfo_t gi_info;
	nvmlComputeInstance_t c;
	nvmlGpuInstance_t gi;
	nvmlReturn_t r;

	for (unsigned i = 0; i < NVML_GPU_INSTANCE_PROFILE_COUNT; i++) {
		info = (nvmlGpuInstanceProfileInfo_v2_t){ .version = nvmlGpuInstanceProfileInfo_v2 };
		if (NV(nvmlDeviceGetGpuInstanceProfileInfoV)(d, i, &info) == NVML_SUCCESS &&
		    info.id == (unsigned)atoi(id))
			break;
		info.sliceCount = 0;
	}
	{       /* the size that goes with the profile: its placements' */
		nvmlGpuInstancePlacement_t all[MAX];
		unsigned count = MAX;

		if (NV(nvmlDeviceGetGpuInstancePossiblePlacements_v2)(d, (unsigned)atoi(id), all,
								     &count) == NVML_SUCCESS &&
		    count > 0)
			pl.size = all[0].size;
	}
	r = NV(nvmlDeviceCreateGpuInstanceWithPlacement)(d, (unsigned)atoi(id), &pl, &gi);
	if (r != NVML_SUCCESS) {
		printf("%s\n", result_name(r));
		return 0;
	}
	NV(nvmlGpuInstanceGetInfo)(gi, &gi_info);
	if (ci) {
		unsigned idx = info.sliceCount == 7 ? NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE
						    : info.sliceCount - 1;

		r = NV(nvmlGpuInstanceGetComputeInstanceProfileInfo)(
			gi, idx, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &cinfo);
		if (r == NVML_SUCCESS)
			r = NV(nvmlGpuInstanceCreateComputeInstance)(gi, cinfo.id, &c);
		if (r != NVML_SUCCESS) {
			fprintf(stderr, "mig-probe: compute instance: %s\n", result_name(r));
			return 1;
		}
	}
	printf("SUCCESS gi=%u start=%u\n", gi_info.id, gi_info.placement.start);
	return 0;
}

static int nvml_destroy_gi(const char *local, const char *id)
{
	nvmlGpuInstance_t gi;
	nvmlReturn_t r = NV(nvmlDeviceGetGpuInstanceById)(card(local), (unsigned)atoi(id), &gi);

	if (r == NVML_SUCCESS)
		r = NV(nvmlGpuInstanceDestroy)(gi);
	printf("%s\n", result_name(r));
	return 0;
}

static nvmlDevice_t mig(const char *uuid)
{
	nvmlDevice_t d;
	unsigned is = 0;
	nvmlReturn_t r = NV(nvmlDeviceGetHandleByUUID)(uuid, &d);

	if (r == NVML_SUCCESS)
		r = NV(nvmlDeviceIsMigDeviceHandle)(d, &is);
	if (r != NVML_SUCCESS || !is) {
		fprintf(stderr, "mig-probe: %s is no MIG device: %s\n", uuid, result_name(r));
		exit(1);
	}
	return d;
}

static int mem(const char *uuid)
{
	nvmlMemory_t m;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	nvmlDevice_t d = mig(uuid);

	if (NV(nvmlDeviceGetMemoryInfo)(d, &m) != NVML_SUCCESS ||
	    NV(nvmlDeviceGetName)(d, name, sizeof(name)) != NVML_SUCCESS)
		return 1;
	printf("{\"name\":\"%s\",\"total_mib\":%llu,\"used_mib\":%llu}\n", name, m.total >> 20,
	       m.used >> 20);
	return 0;
}

static int procs(const char *uuid)
{
	nvmlProcessInfo_t p[MAX];
	unsigned n = MAX;
	nvmlReturn_t r = NV(nvmlDeviceGetComputeRunningProcesses_v3)(mig(uuid), &n, p);

	if (r != NVML_SUCCESS)
		return 1;
	printf("[");
	for (unsigned i = 0; i < n; i++)
		printf("%s{\"pid\":%u,\"mem_mib\":%llu,\"gi\":%u}", i ? "," : "", p[i].pid,
		       p[i].usedGpuMemory >> 20, p[i].gpuInstanceId);
	printf("]\n");
	return 0;
}

/* ---- the agent's ops ---------------------------------------------------------- */

static void *opened; /* the probe's one sampler, closed at exit */

static void sampler_close(void)
{
	gp_vendor_nvidia.close(opened);
}

static void *sampler(void)
{
	char err[256] = "";

	if (opened)
		return opened;
	if (gp_vendor_nvidia.open(NULL, &opened, err, sizeof(err)) < 0) {
		fprintf(stderr, "mig-probe: %s\n", err);
		exit(1);
	}
	atexit(sampler_close);
	return opened;
}

static void profile_print(const struct gp_partition_profile *p, int first)
{
	printf("%s{\"name\":\"%s\",\"id\":%u,\"mem_mib\":%llu,\"compute\":%u,\"units\":%u,"
	       "\"starts\":[",
	       first ? "" : ",", p->name, p->id, (unsigned long long)p->mem_mib,
	       p->compute_permille, p->units);
	for (unsigned b = 0, k = 0; b < 32; b++)
		if (p->starts >> b & 1)
			printf("%s%u", k++ ? "," : "", b);
	printf("]}");
}

static int profiles(unsigned local)
{
	struct gp_partition_profile p[MAX];
	unsigned units = 99;
	int n = gp_vendor_nvidia.profiles(sampler(), local, p, MAX, &units);

	if (n < 0)
		return 1;
	printf("{\"units\":%u,\"profiles\":[", units);
	for (int i = 0; i < n && i < MAX; i++)
		profile_print(&p[i], i == 0);
	printf("]}\n");
	return 0;
}

static int partitions(unsigned local)
{
	struct gp_partition p[MAX];
	int n = gp_vendor_nvidia.partitions(sampler(), local, p, MAX);

	if (n < 0)
		return 1;
	printf("[");
	for (int i = 0; i < n && i < MAX; i++)
		printf("%s{\"uuid\":\"%s\",\"profile_id\":%u,\"start\":%u}", i ? "," : "", p[i].uuid,
		       p[i].profile_id, p[i].start);
	printf("]\n");
	return 0;
}

static int create(unsigned local, unsigned id, unsigned start)
{
	struct gp_partition p;
	char err[256] = "";
	int r = gp_vendor_nvidia.partition_create(sampler(), local, id, start, &p, err,
						  sizeof(err));

	if (r < 0) {
		fprintf(stderr, "errno %s: %s\n", errno_name(r), err);
		return 1;
	}
	printf("{\"uuid\":\"%s\",\"profile_id\":%u,\"start\":%u}\n", p.uuid, p.profile_id,
	       p.start);
	return 0;
}

static int destroy(unsigned local, const char *uuid)
{
	char err[256] = "";
	int r = gp_vendor_nvidia.partition_destroy(sampler(), local, uuid, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "errno %s: %s\n", errno_name(r), err);
		return 1;
	}
	printf("{\"destroyed\":\"%s\"}\n", uuid);
	return 0;
}

/* Every NVIDIA device as discovery reports it, with its profile count. */
static int discover(void)
{
	struct gp_partition_profile p[MAX];
	struct gp_agent_node node;
	char err[256] = "";
	void *h;

	memset(&node, 0, sizeof(node));
	if (gp_vendor_nvidia.discover(NULL, &node, err, sizeof(err)) < 0) {
		fprintf(stderr, "mig-probe: %s\n", err);
		return 1;
	}
	h = sampler();
	printf("[");
	for (unsigned i = 0; i < node.devices; i++) {
		unsigned units = 0;
		int n = gp_vendor_nvidia.profiles(h, node.device[i].local, p, MAX, &units);

		printf("%s{\"local\":%u,\"name\":\"%s\",\"uuid\":\"%s\",\"compatible\":%s,"
		       "\"profiles\":%d,\"units\":%u}",
		       i ? "," : "", node.device[i].local, node.device[i].name, node.device[i].uuid,
		       node.device[i].compatible ? "true" : "false", n, units);
	}
	printf("]\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nvml || NV(nvmlInit_v2)() != NVML_SUCCESS) {
		fprintf(stderr, "mig-probe: NVML would not start\n");
		return 1;
	}
	if (strcmp(cmd, "discover") == 0)
		return discover();
	if (strcmp(cmd, "profiles") == 0 && argc == 3)
		return profiles((unsigned)atoi(argv[2]));
	if (strcmp(cmd, "partitions") == 0 && argc == 3)
		return partitions((unsigned)atoi(argv[2]));
	if (strcmp(cmd, "create") == 0 && argc == 5)
		return create((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]),
			      (unsigned)atoi(argv[4]));
	if (strcmp(cmd, "destroy") == 0 && argc == 4)
		return destroy((unsigned)atoi(argv[2]), argv[3]);
	if (strcmp(cmd, "nvml-profile") == 0 && argc == 4)
		return nvml_profile(argv[2], argv[3]);
	if (strcmp(cmd, "nvml-create") == 0 && argc == 5)
		return nvml_create(argv[2], argv[3], argv[4], 1);
	if (strcmp(cmd, "nvml-gi") == 0 && argc == 5)
		return nvml_create(argv[2], argv[3], argv[4], 0);
	if (strcmp(cmd, "nvml-destroy-gi") == 0 && argc == 4)
		return nvml_destroy_gi(argv[2], argv[3]);
	if (strcmp(cmd, "mem") == 0 && argc == 3)
		return mem(argv[2]);
	if (strcmp(cmd, "procs") == 0 && argc == 3)
		return procs(argv[2]);
	fprintf(stderr, "usage: mig-probe discover | profiles|partitions LOCAL | create LOCAL "
			"PROFILE_ID START | destroy LOCAL UUID | nvml-profile LOCAL INDEX | "
			"nvml-create|nvml-gi LOCAL PROFILE_ID START | nvml-destroy-gi LOCAL GI_ID "
			"| mem|procs UUID\n");
	return 2;
}
