/* nvml.c — the NVML of the simulated devices: simdev's libnvidia-ml.so.1.
 *
 * Monitoring tools, the agent and the interposer ask NVML what devices there
 * are, how much memory they use, which processes run on them and how busy
 * they are. This library answers from the shared simdev state (simdev.h), so
 * it sees what every process using simdev's libcuda.so.1 does. It implements
 * the NVML subset listed in gp-nvml.h with NVML's calling conventions
 * (return codes, buffer sizes, the INSUFFICIENT_SIZE protocol for lists),
 * and exports every other name of NVML as a stub that answers
 * NVML_ERROR_NOT_SUPPORTED (the end of this file).
 *
 * The state is opened once per process, by the first successful init, and
 * kept (simdev has no close); inits nest and nvmlShutdown undoes one, after
 * which calls fail with NVML_ERROR_UNINITIALIZED again. A handle points into
 * a static array of devices and stays valid for the life of the process.
 * Nothing here prints unless $GPUPOOL_LOG is set, and nothing exits. Only
 * the nvml* functions are exported (simdev/libnvidia-ml.map). */
#include "include/gp-cuda.h"
#include "include/gp-nvml.h"
#include "simdev/simdev.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What nvmlSystemGetDriverVersion reports: a plausible version of the
 * driver branch that ships with CUDA 13.0. Simulated; no such driver runs. */
#define SIMDEV_DRIVER_VERSION "580.65.06"

#define PCI_VENDOR_NVIDIA 0x10DEu

struct nvmlDevice_st {
	int index;
};

static struct {
	pthread_mutex_t lock; /* guards the fields below */
	unsigned int refs;    /* successful inits not yet shut down */
	struct sim *sim;      /* opened by the first init, then kept */
	int count;
	struct nvmlDevice_st dev[SIM_DEVICES_MAX];
} lib = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Return codes and their texts, written once. */
#define NVML_RETURN_TEXTS(X)                                                             \
	X(NVML_SUCCESS, "Success")                                                       \
	X(NVML_ERROR_UNINITIALIZED, "Uninitialized")                                     \
	X(NVML_ERROR_INVALID_ARGUMENT, "Invalid Argument")                               \
	X(NVML_ERROR_NOT_SUPPORTED, "Not Supported")                                     \
	X(NVML_ERROR_NO_PERMISSION, "Insufficient Permissions")                          \
	X(NVML_ERROR_NOT_FOUND, "Not Found")                                             \
	X(NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient Size")                             \
	X(NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded")                             \
	X(NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found")                 \
	X(NVML_ERROR_GPU_IS_LOST, "GPU is lost")                                         \
	X(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "Argument version mismatch")             \
	X(NVML_ERROR_UNKNOWN, "Unknown Error")

/* PCI device ids of the real cards of simdev's catalogue, by a part of the
 * model's name, for tools that key on them; the first match wins, so longer
 * names come first. A model not listed reports device id 0. */
/* clang-format off */
static const struct {
	const char *name_part;
	unsigned int device_id;
} pci_ids[] = {
	{"H200", 0x2335},
	{"H100", 0x2330},
	{"A100-SXM4-80GB", 0x20B2},
	{"A100", 0x20B0},
	{"A10", 0x2236},
	{"L40S", 0x26B9},
	{"V100-SXM2-32GB", 0x1DB5},
	{"V100", 0x1DB1},
	{"T4", 0x1EB8},
};
/* clang-format on */

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void log_line(const char *fmt, ...)
{
	const char *want = getenv("GPUPOOL_LOG");
	va_list ap;

	if (!want || !*want)
		return;
	va_start(ap, fmt);
	fputs("gpupool simdev nvml: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A negative errno from simdev, at the NVML edge. */
static nvmlReturn_t from_errno(int err)
{
	switch (err) {
	case -EINVAL: return NVML_ERROR_INVALID_ARGUMENT;
	case -ENOENT:
	case -ENODEV: return NVML_ERROR_NOT_FOUND;
	case -EPERM:
	case -EACCES: return NVML_ERROR_NO_PERMISSION;
	case -ENOTSUP: return NVML_ERROR_NOT_SUPPORTED;
	default: return NVML_ERROR_UNKNOWN;
	}
}

/* A fork while another thread holds the lock would leave it held forever
 * in the child. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&lib.lock);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&lib.lock);
}

static void atfork_register(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}

/* Opens the simdev state, under the lock. */
static nvmlReturn_t sim_attach(void)
{
	const char *spec = getenv("GPUPOOL_SIM_DEVICES");
	char err[SIM_ERR_MAX];
	struct sim *s;
	int count;

	if (!spec || !*spec) {
		log_line("GPUPOOL_SIM_DEVICES is not set: no simulated devices");
		return NVML_ERROR_DRIVER_NOT_LOADED;
	}
	err[0] = '\0';
	if (sim_open(&s, err, sizeof(err)) < 0) {
		log_line("%s", err[0] ? err : "cannot open the simulated devices");
		return NVML_ERROR_DRIVER_NOT_LOADED;
	}
	count = sim_device_count(s);
	if (count < 0)
		count = 0;
	if (count > SIM_DEVICES_MAX)
		count = SIM_DEVICES_MAX;
	for (int i = 0; i < count; i++)
		lib.dev[i].index = i;
	lib.count = count;
	lib.sim = s;
	return NVML_SUCCESS;
}

static nvmlReturn_t init(void)
{
	nvmlReturn_t ret = NVML_SUCCESS;

	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&lib.lock);
	if (!lib.sim)
		ret = sim_attach();
	if (ret == NVML_SUCCESS && lib.refs < UINT_MAX)
		lib.refs++;
	pthread_mutex_unlock(&lib.lock);
	return ret;
}

/* The state when the library is initialized, else NULL. The state itself
 * is never freed, so it may be used after the lock is let go. */
static struct sim *attached(int *ret_count)
{
	struct sim *s;

	pthread_mutex_lock(&lib.lock);
	s = lib.refs ? lib.sim : NULL;
	if (s && ret_count)
		*ret_count = lib.count;
	pthread_mutex_unlock(&lib.lock);
	return s;
}

/* Resolves a handle to the state and the device index. */
static nvmlReturn_t device_resolve(nvmlDevice_t device, struct sim **ret_sim,
				   int *ret_index)
{
	uintptr_t p = (uintptr_t)device, base = (uintptr_t)lib.dev;
	struct sim *s;
	size_t i;
	int count;

	s = attached(&count);
	if (!s)
		return NVML_ERROR_UNINITIALIZED;
	if (p < base || (p - base) % sizeof(lib.dev[0]) != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	i = (p - base) / sizeof(lib.dev[0]);
	if (i >= (size_t)count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sim_device_lost(s, (int)i))
		return NVML_ERROR_GPU_IS_LOST;
	*ret_sim = s;
	*ret_index = (int)i;
	return NVML_SUCCESS;
}

/* Resolves device into s and dev, or returns its error from the caller. */
#define RESOLVE_DEVICE(device, s, dev)                                         \
	do {                                                                   \
		nvmlReturn_t resolved_ = device_resolve(device, &(s), &(dev)); \
		if (resolved_ != NVML_SUCCESS)                                 \
			return resolved_;                                      \
	} while (0)

static nvmlReturn_t string_copy(char *buf, unsigned int length, const char *s)
{
	size_t n = strlen(s);

	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (n >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, n + 1);
	return NVML_SUCCESS;
}

static unsigned int percent_clamp(unsigned int v)
{
	return v > 100 ? 100 : v;
}

/* Memory of a device, clamped so that used never exceeds total and free
 * never wraps. */
static void memory_read(struct sim *s, int dev, uint64_t *ret_total, uint64_t *ret_used)
{
	uint64_t total = sim_mem_total(s, dev);
	uint64_t used = sim_mem_used(s, dev);

	*ret_total = total;
	*ret_used = used > total ? total : used;
}

/* Processes on a device, checked against the caller's room (*count
 * entries; a NULL array has none). On NVML_SUCCESS *ret_n entries of out
 * are to be copied; on INSUFFICIENT_SIZE *count says how many are needed. */
static nvmlReturn_t procs_list(nvmlDevice_t device, unsigned int *count, const void *room,
			       struct sim_proc_info out[SIM_PROCS_MAX],
			       unsigned int *ret_n)
{
	struct sim *s;
	int dev, n;

	RESOLVE_DEVICE(device, s, dev);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = sim_device_procs(s, dev, out, SIM_PROCS_MAX);
	if (n < 0)
		return from_errno(n);
	if (n > SIM_PROCS_MAX)
		n = SIM_PROCS_MAX;
	if (!room || *count < (unsigned int)n) {
		if (n == 0) {
			*count = 0;
			*ret_n = 0;
			return NVML_SUCCESS;
		}
		*count = (unsigned int)n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*count = (unsigned int)n;
	*ret_n = (unsigned int)n;
	return NVML_SUCCESS;
}

/* Per-process samples newer than `since` (µs), checked against the
 * caller's room like procs_list; NVML_ERROR_NOT_FOUND when there is none. */
static nvmlReturn_t samples_list(nvmlDevice_t device, unsigned int *count,
				 const void *room, unsigned long long since,
				 struct sim_proc_sample out[SIM_PROCS_MAX],
				 unsigned int *ret_n)
{
	struct sim *s;
	int dev, got;
	unsigned int n = 0;

	RESOLVE_DEVICE(device, s, dev);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	got = sim_device_samples(s, dev, since, out, SIM_PROCS_MAX);
	if (got < 0)
		return from_errno(got);
	if (got > SIM_PROCS_MAX)
		got = SIM_PROCS_MAX;
	/* NVML returns samples strictly newer than the last one seen. */
	for (int i = 0; i < got; i++)
		if (out[i].timestamp_us > since)
			out[n++] = out[i];
	if (n == 0) {
		*count = 0;
		return NVML_ERROR_NOT_FOUND;
	}
	if (!room || *count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*count = n;
	*ret_n = n;
	return NVML_SUCCESS;
}

/* ---- Library ---------------------------------------------------------- */

nvmlReturn_t nvmlInit_v2(void)
{
	return init();
}

nvmlReturn_t nvmlInit(void)
{
	return init();
}

/* Both flags only relax what a real driver requires; simdev always has its
 * devices and never attaches, so they change nothing. */
nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	(void)flags;
	return init();
}

nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t ret = NVML_SUCCESS;

	pthread_mutex_lock(&lib.lock);
	if (lib.refs == 0)
		ret = NVML_ERROR_UNINITIALIZED;
	else
		lib.refs--;
	pthread_mutex_unlock(&lib.lock);
	return ret;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	switch (result) {
#define RETURN_TEXT(code, text)                                                          \
	case code: return text;
		NVML_RETURN_TEXTS(RETURN_TEXT)
#undef RETURN_TEXT
	}
	return "Unknown Error";
}

/* ---- System ----------------------------------------------------------- */

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	if (!attached(NULL))
		return NVML_ERROR_UNINITIALIZED;
	return string_copy(version, length, SIMDEV_DRIVER_VERSION);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	if (!attached(NULL))
		return NVML_ERROR_UNINITIALIZED;
	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cudaDriverVersion = GP_CUDA_VERSION;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
	return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

/* ---- Devices ---------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	int count;

	if (!attached(&count))
		return NVML_ERROR_UNINITIALIZED;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = (unsigned int)count;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
	return nvmlDeviceGetCount_v2(deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	int count;

	if (!attached(&count))
		return NVML_ERROR_UNINITIALIZED;
	if (!device || index >= (unsigned int)count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &lib.dev[index];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	struct sim *s;
	int count;

	s = attached(&count);
	if (!s)
		return NVML_ERROR_UNINITIALIZED;
	if (!uuid || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < count; i++) {
		if (strcmp(uuid, sim_device_uuid(s, i)) == 0) {
			*device = &lib.dev[i];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

/* "DDDDDDDD:BB:DD.F", "DDDD:BB:DD.F" or "BB:DD.F", hexadecimal. The
 * character check keeps out what sscanf would also take ("0x", signs,
 * spaces); the widths keep the numbers in range. */
static bool bus_id_parse(const char *s, unsigned int *domain, unsigned int *bus,
			 unsigned int *slot, unsigned int *function)
{
	int end = -1;

	if (s[strspn(s, "0123456789abcdefABCDEF:.")] != '\0')
		return false;
	if (sscanf(s, "%8x:%2x:%2x.%1x%n", domain, bus, slot, function, &end) == 4 &&
	    end > 0 && s[end] == '\0')
		return true;
	*domain = 0;
	end = -1;
	return sscanf(s, "%2x:%2x.%1x%n", bus, slot, function, &end) == 3 && end > 0 &&
	       s[end] == '\0';
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
	unsigned int domain, bus, slot, function;
	struct sim *s;
	int count;

	s = attached(&count);
	if (!s)
		return NVML_ERROR_UNINITIALIZED;
	if (!pciBusId || !device ||
	    !bus_id_parse(pciBusId, &domain, &bus, &slot, &function))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (domain != 0 || slot != 0 || function != 0)
		return NVML_ERROR_NOT_FOUND;
	for (int i = 0; i < count; i++) {
		if ((unsigned int)sim_device_pci_bus(s, i) == bus) {
			*device = &lib.dev[i];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = (unsigned int)dev;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	return string_copy(name, length, sim_device_model(s, dev)->name);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	return string_copy(uuid, length, sim_device_uuid(s, dev));
}

static unsigned int pci_device_id(const char *name)
{
	for (size_t i = 0; i < sizeof(pci_ids) / sizeof(pci_ids[0]); i++)
		if (strstr(name, pci_ids[i].name_part))
			return pci_ids[i].device_id;
	return 0;
}

/* Domain 0, the device's bus, slot 0, function 0; subsystem id 0. */
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	struct sim *s;
	unsigned int bus;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	bus = (unsigned int)sim_device_pci_bus(s, dev) & 0xFFu;
	memset(pci, 0, sizeof(*pci));
	pci->domain = 0;
	pci->bus = bus;
	pci->device = 0;
	pci->pciDeviceId =
		pci_device_id(sim_device_model(s, dev)->name) << 16 | PCI_VENDOR_NVIDIA;
	pci->pciSubSystemId = 0;
	snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", 0u, bus, 0u);
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", 0u, bus,
		 0u);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	uint64_t total, used;
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	memory_read(s, dev, &total, &used);
	memory->total = total;
	memory->used = used;
	memory->free = total - used;
	return NVML_SUCCESS;
}

/* simdev reserves nothing for firmware: reserved is 0. */
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	uint64_t total, used;
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (memory->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	memory_read(s, dev, &total, &used);
	memory->total = total;
	memory->reserved = 0;
	memory->used = used;
	memory->free = total - used;
	return NVML_SUCCESS;
}

/* gpu: share of the last second the device was executing; simdev does not
 * model memory traffic, so memory is 0. */
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
					   nvmlUtilization_t *utilization)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!utilization)
		return NVML_ERROR_INVALID_ARGUMENT;
	utilization->gpu = percent_clamp(sim_device_utilization(s, dev, 0));
	utilization->memory = 0;
	return NVML_SUCCESS;
}

/* simdev has no MIG: disabled now and after the next reset. */
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
				  unsigned int *pendingMode)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!currentMode || !pendingMode)
		return NVML_ERROR_INVALID_ARGUMENT;
	*currentMode = NVML_DEVICE_MIG_DISABLE;
	*pendingMode = NVML_DEVICE_MIG_DISABLE;
	return NVML_SUCCESS;
}

/* ---- Processes -------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
						     unsigned int *infoCount,
						     nvmlProcessInfo_t *infos)
{
	struct sim_proc_info procs[SIM_PROCS_MAX];
	nvmlReturn_t ret;
	unsigned int n;

	ret = procs_list(device, infoCount, infos, procs, &n);
	if (ret != NVML_SUCCESS)
		return ret;
	for (unsigned int i = 0; i < n; i++) {
		infos[i] = (nvmlProcessInfo_t){
			.pid = (unsigned int)procs[i].pid,
			.usedGpuMemory = procs[i].mem_bytes,
			.gpuInstanceId = GP_NVML_NO_INSTANCE,
			.computeInstanceId = GP_NVML_NO_INSTANCE,
		};
	}
	return NVML_SUCCESS;
}

/* The _v2 getter has the same 24-byte entries as _v3. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
						     unsigned int *infoCount,
						     nvmlProcessInfo_v2_t *infos)
{
	return nvmlDeviceGetComputeRunningProcesses_v3(device, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
						  unsigned int *infoCount,
						  nvmlProcessInfo_v1_t *infos)
{
	struct sim_proc_info procs[SIM_PROCS_MAX];
	nvmlReturn_t ret;
	unsigned int n;

	ret = procs_list(device, infoCount, infos, procs, &n);
	if (ret != NVML_SUCCESS)
		return ret;
	for (unsigned int i = 0; i < n; i++) {
		infos[i] = (nvmlProcessInfo_v1_t){
			.pid = (unsigned int)procs[i].pid,
			.usedGpuMemory = procs[i].mem_bytes,
		};
	}
	return NVML_SUCCESS;
}

/* simdev models only SM time: memory, encoder and decoder shares are 0. */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
					     nvmlProcessUtilizationSample_t *utilization,
					     unsigned int *processSamplesCount,
					     unsigned long long lastSeenTimeStamp)
{
	struct sim_proc_sample samples[SIM_PROCS_MAX];
	nvmlReturn_t ret;
	unsigned int n;

	ret = samples_list(device, processSamplesCount, utilization, lastSeenTimeStamp,
			   samples, &n);
	if (ret != NVML_SUCCESS)
		return ret;
	for (unsigned int i = 0; i < n; i++) {
		utilization[i] = (nvmlProcessUtilizationSample_t){
			.pid = (unsigned int)samples[i].pid,
			.timeStamp = samples[i].timestamp_us,
			.smUtil = percent_clamp(samples[i].sm_util),
		};
	}
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device,
				      nvmlProcessesUtilizationInfo_t *procesesUtilInfo)
{
	struct sim_proc_sample samples[SIM_PROCS_MAX];
	nvmlProcessesUtilizationInfo_t *info = procesesUtilInfo;
	nvmlReturn_t ret;
	struct sim *s;
	unsigned int n;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (info->version != nvmlProcessesUtilizationInfo_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	ret = samples_list(device, &info->processSamplesCount, info->procUtilArray,
			   info->lastSeenTimeStamp, samples, &n);
	if (ret != NVML_SUCCESS)
		return ret;
	for (unsigned int i = 0; i < n; i++) {
		info->procUtilArray[i] = (nvmlProcessUtilizationInfo_v1_t){
			.timeStamp = samples[i].timestamp_us,
			.pid = (unsigned int)samples[i].pid,
			.smUtil = percent_clamp(samples[i].sm_util),
		};
	}
	return NVML_SUCCESS;
}

/* ---- Everything else ---------------------------------------------------- */

/* The rest of NVML's names (src/include/nvml-names.txt): one stub each,
 * named by nvml-stubs.gen.h (gen-nvml-stubs.awk), so that a tool that
 * looks any of them up finds a function that answers
 * NVML_ERROR_NOT_SUPPORTED. A stub declares no parameters and reads none;
 * that is safe whatever the caller passes, since in the C calling
 * conventions simdev runs on (x86-64 System V, AArch64 AAPCS64) the
 * caller places the arguments in registers and its own stack frame and
 * removes them itself, and the callee only sets the return register. Every
 * NVML function returns nvmlReturn_t in that register, except
 * nvmlErrorString, which is not a stub. */
#define GP_NVML_STUB(name)                                                               \
	nvmlReturn_t name(void);                                                         \
	nvmlReturn_t name(void)                                                          \
	{                                                                                \
		return NVML_ERROR_NOT_SUPPORTED;                                         \
	}

#include "nvml-stubs.gen.h"
