/* nvml-probe.c — prints what NVML reports about every device as one JSON
 * line, for tests of simdev (and, on a real machine, of the real NVML).
 *
 * It loads libnvidia-ml.so.1 the way monitoring tools do, with dlopen and
 * dlsym, and uses NVML's calling conventions (ask for the size of a list,
 * then fetch it). Output, one line on stdout:
 *
 *   {"driver":"…","cuda":13000,"devices":[{"index":0,"name":"…","uuid":"…",
 *    "bus_id":"…","mem_total_mib":…,"mem_used_mib":…,"util_gpu":…,
 *    "processes":[{"pid":…,"mem_mib":…}],"samples":[{"pid":…,"sm_util":…}]}]}
 *
 * samples are the per-process utilization samples NVML keeps (all of them:
 * lastSeenTimeStamp 0). Any NVML error: a message on stderr and exit 1. */
#include "include/gp-nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define MIB	   (1024ull * 1024ull)
#define LIST_TRIES 5 /* lists can grow between the size query and the fetch */

#define PROBE_FUNCS(X)                                                                   \
	X(nvmlInit_v2)                                                                   \
	X(nvmlShutdown)                                                                  \
	X(nvmlErrorString)                                                               \
	X(nvmlSystemGetDriverVersion)                                                    \
	X(nvmlSystemGetCudaDriverVersion_v2)                                             \
	X(nvmlDeviceGetCount_v2)                                                         \
	X(nvmlDeviceGetHandleByIndex_v2)                                                 \
	X(nvmlDeviceGetName)                                                             \
	X(nvmlDeviceGetUUID)                                                             \
	X(nvmlDeviceGetPciInfo_v3)                                                       \
	X(nvmlDeviceGetMemoryInfo_v2)                                                    \
	X(nvmlDeviceGetUtilizationRates)                                                 \
	X(nvmlDeviceGetComputeRunningProcesses_v3)                                       \
	X(nvmlDeviceGetProcessUtilization)

#define FUNC_FIELD(name) __typeof__(name) *name;
static struct {
	PROBE_FUNCS(FUNC_FIELD)
} nvml;
#undef FUNC_FIELD

static void die(const char *what, nvmlReturn_t rc) __attribute__((noreturn));

static void die(const char *what, nvmlReturn_t rc)
{
	fprintf(stderr, "nvml-probe: %s: %s (%d)\n", what,
		nvml.nvmlErrorString ? nvml.nvmlErrorString(rc) : "?", (int)rc);
	exit(1);
}

static void check(const char *what, nvmlReturn_t rc)
{
	if (rc != NVML_SUCCESS)
		die(what, rc);
}

static void load(void)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);

	if (!lib) {
		fprintf(stderr, "nvml-probe: %s\n", dlerror());
		exit(1);
	}
#define FUNC_LOAD(name)                                                                  \
	nvml.name = (__typeof__(nvml.name))dlsym(lib, #name);                            \
	if (!nvml.name) {                                                                \
		fprintf(stderr, "nvml-probe: libnvidia-ml.so.1 lacks %s\n", #name);      \
		exit(1);                                                                 \
	}
	PROBE_FUNCS(FUNC_LOAD)
#undef FUNC_LOAD
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	void *q = realloc(p, n * size);

	if (!q) {
		fprintf(stderr, "nvml-probe: out of memory\n");
		exit(1);
	}
	return q;
}

/* The processes on a device; *ret_n entries, the caller frees. */
static nvmlProcessInfo_t *processes_get(nvmlDevice_t dev, unsigned int *ret_n)
{
	nvmlProcessInfo_t *infos = NULL;
	unsigned int room = 0, n = 0;
	nvmlReturn_t rc;

	for (int i = 0; i < LIST_TRIES; i++) {
		n = room;
		rc = nvml.nvmlDeviceGetComputeRunningProcesses_v3(dev, &n, infos);
		if (rc == NVML_SUCCESS) {
			*ret_n = n;
			return infos;
		}
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
			die("nvmlDeviceGetComputeRunningProcesses_v3", rc);
		room = n + 4;
		infos = xrealloc(infos, room, sizeof(*infos));
	}
	die("nvmlDeviceGetComputeRunningProcesses_v3 (list keeps growing)",
	    NVML_ERROR_INSUFFICIENT_SIZE);
}

/* The per-process utilization samples of a device; *ret_n entries. */
static nvmlProcessUtilizationSample_t *samples_get(nvmlDevice_t dev, unsigned int *ret_n)
{
	nvmlProcessUtilizationSample_t *samples = NULL;
	unsigned int room = 0, n = 0;
	nvmlReturn_t rc;

	for (int i = 0; i < LIST_TRIES; i++) {
		n = room;
		rc = nvml.nvmlDeviceGetProcessUtilization(dev, samples, &n, 0);
		if (rc == NVML_SUCCESS || rc == NVML_ERROR_NOT_FOUND) {
			*ret_n = rc == NVML_SUCCESS ? n : 0;
			return samples;
		}
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
			die("nvmlDeviceGetProcessUtilization", rc);
		room = n + 4;
		samples = xrealloc(samples, room, sizeof(*samples));
	}
	die("nvmlDeviceGetProcessUtilization (list keeps growing)",
	    NVML_ERROR_INSUFFICIENT_SIZE);
}

static void device_print(FILE *out, unsigned int index)
{
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
	nvmlProcessUtilizationSample_t *samples;
	nvmlProcessInfo_t *procs;
	unsigned int nprocs, nsamples;
	nvmlUtilization_t util;
	nvmlPciInfo_t pci;
	nvmlDevice_t dev;

	check("nvmlDeviceGetHandleByIndex_v2",
	      nvml.nvmlDeviceGetHandleByIndex_v2(index, &dev));
	check("nvmlDeviceGetName", nvml.nvmlDeviceGetName(dev, name, sizeof(name)));
	check("nvmlDeviceGetUUID", nvml.nvmlDeviceGetUUID(dev, uuid, sizeof(uuid)));
	check("nvmlDeviceGetPciInfo_v3", nvml.nvmlDeviceGetPciInfo_v3(dev, &pci));
	check("nvmlDeviceGetMemoryInfo_v2", nvml.nvmlDeviceGetMemoryInfo_v2(dev, &mem));
	check("nvmlDeviceGetUtilizationRates",
	      nvml.nvmlDeviceGetUtilizationRates(dev, &util));
	procs = processes_get(dev, &nprocs);
	samples = samples_get(dev, &nsamples);

	fprintf(out, "{\"index\":%u,\"name\":", index);
	json_string(out, name);
	fprintf(out, ",\"uuid\":");
	json_string(out, uuid);
	fprintf(out, ",\"bus_id\":");
	json_string(out, pci.busId);
	fprintf(out,
		",\"mem_total_mib\":%llu,\"mem_used_mib\":%llu,\"util_gpu\":%u,"
		"\"processes\":[",
		mem.total / MIB, mem.used / MIB, util.gpu);
	for (unsigned int i = 0; i < nprocs; i++)
		fprintf(out, "%s{\"pid\":%u,\"mem_mib\":%llu}", i ? "," : "",
			procs[i].pid, procs[i].usedGpuMemory / MIB);
	fprintf(out, "],\"samples\":[");
	for (unsigned int i = 0; i < nsamples; i++)
		fprintf(out, "%s{\"pid\":%u,\"sm_util\":%u}", i ? "," : "",
			samples[i].pid, samples[i].smUtil);
	fprintf(out, "]}");
	free(procs);
	free(samples);
}

int main(void)
{
	char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	unsigned int count;
	char *line = NULL;
	size_t len = 0;
	FILE *out;
	int cuda;

	load();
	check("nvmlInit_v2", nvml.nvmlInit_v2());
	check("nvmlSystemGetDriverVersion",
	      nvml.nvmlSystemGetDriverVersion(driver, sizeof(driver)));
	check("nvmlSystemGetCudaDriverVersion_v2",
	      nvml.nvmlSystemGetCudaDriverVersion_v2(&cuda));
	check("nvmlDeviceGetCount_v2", nvml.nvmlDeviceGetCount_v2(&count));

	/* Printed only when complete: an error leaves stdout empty. */
	out = open_memstream(&line, &len);
	if (!out) {
		perror("nvml-probe: open_memstream");
		return 1;
	}
	fprintf(out, "{\"driver\":");
	json_string(out, driver);
	fprintf(out, ",\"cuda\":%d,\"devices\":[", cuda);
	for (unsigned int i = 0; i < count; i++) {
		if (i)
			fputc(',', out);
		device_print(out, i);
	}
	fprintf(out, "]}\n");
	check("nvmlShutdown", nvml.nvmlShutdown());
	if (fclose(out) != 0) {
		perror("nvml-probe: open_memstream");
		return 1;
	}
	fputs(line, stdout);
	free(line);
	return fflush(stdout) == 0 ? 0 : 1;
}
