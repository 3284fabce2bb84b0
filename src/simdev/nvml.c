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
 * the nvml* functions are exported (simdev/libnvidia-ml.map).
 *
 * MIG (mig.h; the MIG section below): a card whose model is in MIG mode
 * offers GPU instance profiles and placements, GPU and compute instances
 * (handles into static arrays, one per instance slot: as NVML's, a
 * handle of a destroyed instance may come to mean a later one), and MIG
 * device handles (lib.mig), which the device calls take like a card's.
 * As NVML on a MIG-mode card, utilization rates and per-process
 * utilization answer NOT_SUPPORTED for the card and its MIG devices;
 * the card's memory is the sum of its instances'. */
#include "include/gp-cuda.h"
#include "include/gp-nvml.h"
#include "include/gp-nvml-mig.h"
#include "simdev/mig.h"
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
	int index;              /* simdev's: a card, or SIM_DEVICES_MAX + slot */
};

struct nvmlGpuInstance_st {
	int slot;
};

struct nvmlComputeInstance_st {
	int slot;
};

static struct {
	pthread_mutex_t lock; /* guards the fields below */
	unsigned int refs;    /* successful inits not yet shut down */
	struct sim *sim;      /* opened by the first init, then kept */
	int count;
	struct nvmlDevice_st dev[SIM_DEVICES_MAX];
	/* by MIG slot: constant, set at attach */
	struct nvmlDevice_st mig[SIM_MIG_MAX];
	struct nvmlGpuInstance_st gi[SIM_MIG_MAX];
	struct nvmlComputeInstance_st ci[SIM_MIG_MAX];
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
	case -EBUSY: return NVML_ERROR_IN_USE;
	case -ENOSPC: return NVML_ERROR_INSUFFICIENT_RESOURCES;
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
	int phys[SIM_DEVICES_MAX];
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
	count = sim_vendor_devices(s, "nvidia", phys, SIM_DEVICES_MAX);
	for (int i = 0; i < count; i++)
		lib.dev[i].index = phys[i];
	for (int i = 0; i < SIM_MIG_MAX; i++) {
		lib.mig[i].index = SIM_DEVICES_MAX + i;
		lib.gi[i].slot = i;
		lib.ci[i].slot = i;
	}
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
	if (p >= (uintptr_t)lib.mig && p < (uintptr_t)(lib.mig + SIM_MIG_MAX)) {
		i = (p - (uintptr_t)lib.mig) / sizeof(lib.mig[0]);
		if ((p - (uintptr_t)lib.mig) % sizeof(lib.mig[0]) != 0 ||
		    !sim_mig_device_profile(s, lib.mig[i].index))
			return NVML_ERROR_INVALID_ARGUMENT;
		if (sim_device_lost(s, lib.mig[i].index))
			return NVML_ERROR_GPU_IS_LOST;
		*ret_sim = s;
		*ret_index = lib.mig[i].index;
		return NVML_SUCCESS;
	}
	if (p < base || (p - base) % sizeof(lib.dev[0]) != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	i = (p - base) / sizeof(lib.dev[0]);
	if (i >= (size_t)count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sim_device_lost(s, (int)lib.dev[i].index))
		return NVML_ERROR_GPU_IS_LOST;
	*ret_sim = s;
	*ret_index = (int)lib.dev[i].index;
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

	for (int i = 0; sim_mig_enabled(s, dev) && i < SIM_MIG_MAX; i++)
		if (sim_mig_device_profile(s, SIM_DEVICES_MAX + i) &&
		    sim_device_card(s, SIM_DEVICES_MAX + i) == dev)
			used += sim_mem_used(s, SIM_DEVICES_MAX + i);

	*ret_total = total;
	*ret_used = used > total ? total : used;
}

/* The GPU instance id of MIG device `dev`, GP_NVML_NO_INSTANCE for a card. */
static unsigned int gi_id_of(struct sim *s, int dev)
{
	struct sim_mig_gi g;

	if (dev < SIM_DEVICES_MAX || !sim_mig_gi_get(s, dev - SIM_DEVICES_MAX, &g))
		return GP_NVML_NO_INSTANCE;
	return g.id;
}

/* The processes of a device: of a card in MIG mode, those of each of its
 * MIG devices (a process once per instance it uses). gi[i] is entry i's
 * GPU instance id (GP_NVML_NO_INSTANCE without MIG). */
static int procs_gather(struct sim *s, int dev, struct sim_proc_info out[SIM_PROCS_MAX],
			unsigned int gi[SIM_PROCS_MAX])
{
	int n = 0;

	if (!sim_mig_enabled(s, dev)) {
		n = sim_device_procs(s, dev, out, SIM_PROCS_MAX);
		n = n > SIM_PROCS_MAX ? SIM_PROCS_MAX : n;
		for (int i = 0; i < n; i++)
			gi[i] = gi_id_of(s, dev);
		return n;
	}
	for (int k = 0; k < SIM_MIG_MAX && n < SIM_PROCS_MAX; k++) {
		struct sim_proc_info some[SIM_PROCS_MAX];
		int inst = SIM_DEVICES_MAX + k, got;

		if (!sim_mig_device_profile(s, inst) || sim_device_card(s, inst) != dev)
			continue;
		got = sim_device_procs(s, inst, some, SIM_PROCS_MAX);
		for (int i = 0; i < got && i < SIM_PROCS_MAX && n < SIM_PROCS_MAX; i++) {
			gi[n] = gi_id_of(s, inst);
			out[n++] = some[i];
		}
	}
	return n;
}

/* Processes on a device, checked against the caller's room (*count
 * entries; a NULL array has none). On NVML_SUCCESS *ret_n entries of out
 * are to be copied; on INSUFFICIENT_SIZE *count says how many are needed. */
static nvmlReturn_t procs_list(nvmlDevice_t device, unsigned int *count, const void *room,
			       struct sim_proc_info out[SIM_PROCS_MAX],
			       unsigned int gi[SIM_PROCS_MAX], unsigned int *ret_n)
{
	struct sim *s;
	int dev, n;

	RESOLVE_DEVICE(device, s, dev);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = procs_gather(s, dev, out, gi);
	if (n < 0)
		return from_errno(n);
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
	if (sim_mig_enabled(s, dev) || dev >= SIM_DEVICES_MAX)
		return NVML_ERROR_NOT_SUPPORTED;        /* as NVML on MIG */
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
	/* MIG's codes, outside gp-nvml.h's enum (gp-nvml-mig.h) */
	if (result == NVML_ERROR_IN_USE)
		return "In use by another client";
	if (result == NVML_ERROR_INSUFFICIENT_RESOURCES)
		return "Insufficient resources";
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
		if (strcmp(uuid, sim_device_uuid(s, (int)lib.dev[i].index)) == 0) {
			*device = &lib.dev[i];
			return NVML_SUCCESS;
		}
	}
	if (strncmp(uuid, "MIG-", 4) == 0) {
		int dev = sim_mig_device_by_uuid(s, uuid, strlen(uuid) + 1);

		if (dev >= 0) {
			*device = &lib.mig[dev - SIM_DEVICES_MAX];
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
		if ((unsigned int)sim_device_pci_bus(s, (int)lib.dev[i].index) == bus) {
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
	if (dev >= SIM_DEVICES_MAX)
		return NVML_ERROR_NOT_SUPPORTED;        /* a MIG device has no index */
	*index = (unsigned int)((struct nvmlDevice_st *)device - lib.dev); /* NVIDIA's own numbering */
	(void)dev;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	struct sim *s;
	int dev;

	const struct sim_mig_profile *p;
	char mig[NVML_DEVICE_NAME_V2_BUFFER_SIZE];

	RESOLVE_DEVICE(device, s, dev);
	p = sim_mig_device_profile(s, dev);
	if (p) {                /* "NVIDIA A100-SXM4-80GB MIG 3g.40gb" */
		snprintf(mig, sizeof(mig), "%s MIG %s", sim_device_model(s, dev)->name, p->name);
		return string_copy(name, length, mig);
	}
	return string_copy(name, length, sim_device_model(s, dev)->name);
}

/* Peer to peer between two cards: over NVLink when they are of one NVLink
 * island (sim_device_link_island: an SXM board's cards); the other
 * capabilities are not simulated. */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
				    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t *p2pStatus)
{
	struct sim *s;
	int dev1, dev2, island;
	nvmlReturn_t r;

	RESOLVE_DEVICE(device1, s, dev1);
	if ((r = device_resolve(device2, &s, &dev2)) != NVML_SUCCESS)
		return r;
	if (!p2pStatus || p2pIndex >= NVML_P2P_CAPS_INDEX_UNKNOWN)
		return NVML_ERROR_INVALID_ARGUMENT;
	island = sim_device_link_island(s, dev1);
	*p2pStatus = p2pIndex == NVML_P2P_CAPS_INDEX_NVLINK && dev1 != dev2 && island >= 0 &&
			     island == sim_device_link_island(s, dev2)
			     ? NVML_P2P_STATUS_OK
			     : NVML_P2P_STATUS_NOT_SUPPORTED;
	return NVML_SUCCESS;
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
	if (sim_mig_enabled(s, dev) || dev >= SIM_DEVICES_MAX)
		return NVML_ERROR_NOT_SUPPORTED;        /* as NVML on MIG */
	utilization->gpu = percent_clamp(sim_device_utilization(s, dev, 0));
	utilization->memory = 0;
	return NVML_SUCCESS;
}

/* A model with MIG (a100-80g-mig) is in MIG mode for good; the others
 * never are. The same now and after the next reset. */
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
				  unsigned int *pendingMode)
{
	unsigned int mode;
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!currentMode || !pendingMode)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (dev >= SIM_DEVICES_MAX)
		return NVML_ERROR_NOT_SUPPORTED;        /* a MIG device */
	mode = sim_mig_enabled(s, dev) ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
	*currentMode = mode;
	*pendingMode = mode;
	return NVML_SUCCESS;
}

/* ---- Processes -------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
						     unsigned int *infoCount,
						     nvmlProcessInfo_t *infos)
{
	struct sim_proc_info procs[SIM_PROCS_MAX];
	unsigned int gi[SIM_PROCS_MAX];
	nvmlReturn_t ret;
	unsigned int n;

	ret = procs_list(device, infoCount, infos, procs, gi, &n);
	if (ret != NVML_SUCCESS)
		return ret;
	for (unsigned int i = 0; i < n; i++) {
		infos[i] = (nvmlProcessInfo_t){
			.pid = (unsigned int)procs[i].pid,
			.usedGpuMemory = procs[i].mem_bytes,
			.gpuInstanceId = gi[i],
			/* simdev's one compute instance of a GI has id 0 */
			.computeInstanceId = gi[i] == GP_NVML_NO_INSTANCE ? GP_NVML_NO_INSTANCE : 0,
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
	unsigned int gi[SIM_PROCS_MAX];
	nvmlReturn_t ret;
	unsigned int n;

	ret = procs_list(device, infoCount, infos, procs, gi, &n);
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

/* ---- accounting: on from the start (a real driver needs root to turn it
 * on); the most memory each live process held, which a sampler that looks
 * now and then would miss when it came and went between two looks. */

nvmlReturn_t nvmlDeviceGetAccountingMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	(void)s;
	(void)dev;
	if (!mode)
		return NVML_ERROR_INVALID_ARGUMENT;
	*mode = NVML_FEATURE_ENABLED;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetAccountingMode(nvmlDevice_t device, nvmlEnableState_t mode)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	(void)s;
	(void)dev;
	return mode == NVML_FEATURE_ENABLED ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetAccountingStats(nvmlDevice_t device, unsigned int pid,
					  nvmlAccountingStats_t *stats)
{
	struct sim *s;
	uint64_t most;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!stats)
		return NVML_ERROR_INVALID_ARGUMENT;
	most = sim_process_mem_max(s, dev, (pid_t)pid);
	if (!most)
		return NVML_ERROR_NOT_FOUND;
	*stats = (nvmlAccountingStats_t){ .maxMemoryUsage = most, .isRunning = 1 };
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

/* ---- MIG -------------------------------------------------------------- */

/* The card a handle names, in MIG mode: NOT_SUPPORTED for another card
 * or a MIG device, as NVML answers. */
static nvmlReturn_t mig_card(nvmlDevice_t device, struct sim **ret_sim, int *ret_dev)
{
	nvmlReturn_t r = device_resolve(device, ret_sim, ret_dev);

	if (r != NVML_SUCCESS)
		return r;
	if (*ret_dev >= SIM_DEVICES_MAX || !sim_mig_enabled(*ret_sim, *ret_dev))
		return NVML_ERROR_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

/* The slot a GPU instance handle names, with its record; INVALID_ARGUMENT
 * when it names none (destroyed, or no handle of ours). */
static nvmlReturn_t gi_resolve(nvmlGpuInstance_t gpuInstance, struct sim **ret_sim,
			       struct sim_mig_gi *ret)
{
	uintptr_t p = (uintptr_t)gpuInstance, base = (uintptr_t)lib.gi;
	struct sim *s = attached(NULL);
	size_t i;

	if (!s)
		return NVML_ERROR_UNINITIALIZED;
	if (p < base || (p - base) % sizeof(lib.gi[0]) != 0 ||
	    (i = (p - base) / sizeof(lib.gi[0])) >= SIM_MIG_MAX ||
	    !sim_mig_gi_get(s, (int)i, ret))
		return NVML_ERROR_INVALID_ARGUMENT;
	*ret_sim = s;
	return NVML_SUCCESS;
}

/* The card handle of simdev card `dev`. */
static nvmlDevice_t card_handle(int dev)
{
	for (int i = 0; i < lib.count; i++)
		if (lib.dev[i].index == dev)
			return &lib.dev[i];
	return NULL;
}

static void profile_fill(const struct sim_mig_profile *p, nvmlGpuInstanceProfileInfo_t *info)
{
	*info = (nvmlGpuInstanceProfileInfo_t){
		.id = p->id,
		.sliceCount = p->gpcs,
		.instanceCount = p->max_count,
		.multiprocessorCount = p->sms,
		.copyEngineCount = p->copy_engines,
		.memorySizeMB = p->mem_mib,
	};
}

/* The profile of index `profile` on a MIG-mode card. */
static nvmlReturn_t profile_of(nvmlDevice_t device, unsigned int profile, const void *info,
			       const struct sim_mig_profile **ret)
{
	nvmlReturn_t r;
	struct sim *s;
	int dev;

	if ((r = mig_card(device, &s, &dev)) != NVML_SUCCESS)
		return r;
	if (!info || profile >= NVML_GPU_INSTANCE_PROFILE_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	*ret = sim_mig_profile_by_index(profile);
	return *ret ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
						 nvmlGpuInstanceProfileInfo_t *info)
{
	const struct sim_mig_profile *p;
	nvmlReturn_t r = profile_of(device, profile, info, &p);

	if (r == NVML_SUCCESS)
		profile_fill(p, info);
	return r;
}

/* The name is nvidia-smi's ("MIG 3g.40gb"). */
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
						  nvmlGpuInstanceProfileInfo_v2_t *info)
{
	const struct sim_mig_profile *p;
	nvmlGpuInstanceProfileInfo_t v1;
	nvmlReturn_t r = profile_of(device, profile, info, &p);

	if (r != NVML_SUCCESS)
		return r;
	if (info->version != nvmlGpuInstanceProfileInfo_v2)
		return NVML_ERROR_INVALID_ARGUMENT;
	profile_fill(p, &v1);
	*info = (nvmlGpuInstanceProfileInfo_v2_t){
		.version = info->version,
		.id = v1.id,
		.sliceCount = v1.sliceCount,
		.instanceCount = v1.instanceCount,
		.multiprocessorCount = v1.multiprocessorCount,
		.copyEngineCount = v1.copyEngineCount,
		.memorySizeMB = v1.memorySizeMB,
	};
	snprintf(info->name, sizeof(info->name), "MIG %s", p->name);
	return NVML_SUCCESS;
}

/* Every start the profile may take, free or not (as NVML's). */
nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device,
							   unsigned int profileId,
							   nvmlGpuInstancePlacement_t *placements,
							   unsigned int *count)
{
	const struct sim_mig_profile *p;
	unsigned int n = 0;
	nvmlReturn_t r;
	struct sim *s;
	int dev;

	if ((r = mig_card(device, &s, &dev)) != NVML_SUCCESS)
		return r;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!(p = sim_mig_profile_by_id(profileId)))
		return NVML_ERROR_NOT_SUPPORTED;
	for (unsigned int st = 0; st < SIM_MIG_SLICES; st++)
		n += p->starts >> st & 1;
	if (!placements) {
		*count = n;
		return NVML_SUCCESS;
	}
	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	n = 0;
	for (unsigned int st = 0; st < SIM_MIG_SLICES; st++)
		if (p->starts >> st & 1)
			placements[n++] = (nvmlGpuInstancePlacement_t){ st, p->slices };
	*count = n;
	return NVML_SUCCESS;
}

/* The unversioned name of the same call. */
nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements(nvmlDevice_t device,
							unsigned int profileId,
							nvmlGpuInstancePlacement_t *placements,
							unsigned int *count)
{
	return nvmlDeviceGetGpuInstancePossiblePlacements_v2(device, profileId, placements,
							     count);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceRemainingCapacity(nvmlDevice_t device,
						       unsigned int profileId,
						       unsigned int *count)
{
	nvmlReturn_t r;
	struct sim *s;
	int dev;

	if ((r = mig_card(device, &s, &dev)) != NVML_SUCCESS)
		return r;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!sim_mig_profile_by_id(profileId))
		return NVML_ERROR_NOT_SUPPORTED;
	*count = sim_mig_remaining(s, dev, profileId);
	return NVML_SUCCESS;
}

static nvmlReturn_t gi_create(nvmlDevice_t device, unsigned int profileId, int start,
			      nvmlGpuInstance_t *gpuInstance)
{
	nvmlReturn_t r;
	struct sim *s;
	int dev, slot, e;

	if ((r = mig_card(device, &s, &dev)) != NVML_SUCCESS)
		return r;
	if (!gpuInstance)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!sim_mig_profile_by_id(profileId))
		return NVML_ERROR_INVALID_ARGUMENT;
	e = sim_mig_gi_create(s, dev, profileId, start, &slot);
	if (e < 0)
		return from_errno(e);
	*gpuInstance = &lib.gi[slot];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t device, unsigned int profileId,
					 nvmlGpuInstance_t *gpuInstance)
{
	return gi_create(device, profileId, -1, gpuInstance);
}

nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
						      const nvmlGpuInstancePlacement_t *placement,
						      nvmlGpuInstance_t *gpuInstance)
{
	const struct sim_mig_profile *p = sim_mig_profile_by_id(profileId);

	if (!placement || (p && placement->size != p->slices) || placement->start >= SIM_MIG_SLICES)
		return attached(NULL) ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_UNINITIALIZED;
	return gi_create(device, profileId, (int)placement->start, gpuInstance);
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance)
{
	struct sim_mig_gi g;
	nvmlReturn_t r;
	struct sim *s;
	int e;

	if ((r = gi_resolve(gpuInstance, &s, &g)) != NVML_SUCCESS)
		return r;
	e = sim_mig_gi_destroy(s, ((struct nvmlGpuInstance_st *)gpuInstance)->slot);
	return e < 0 ? from_errno(e) : NVML_SUCCESS;
}

/* The GPU instances of a card of one profile id, in the order of their
 * ids; the array holds the profile's instanceCount. */
nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId,
				       nvmlGpuInstance_t *gpuInstances, unsigned int *count)
{
	const struct sim_mig_profile *p = sim_mig_profile_by_id(profileId);
	nvmlReturn_t r;
	unsigned int n = 0;
	struct sim *s;
	int dev;

	if ((r = mig_card(device, &s, &dev)) != NVML_SUCCESS)
		return r;
	if (!gpuInstances || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!p)
		return NVML_ERROR_NOT_SUPPORTED;
	for (unsigned int id = 1; id <= 64 && n < p->max_count; id++) {
		for (int i = 0; i < SIM_MIG_MAX; i++) {
			struct sim_mig_gi g;

			if (sim_mig_gi_get(s, i, &g) && (int)g.card == dev && g.id == id &&
			    sim_mig_profiles()[g.profile].id == profileId)
				gpuInstances[n++] = &lib.gi[i];
		}
	}
	*count = n;
	return NVML_SUCCESS;
}

/* The slot of GPU instance `id` on card `dev`, or -1. */
static int gi_slot_by_id(struct sim *s, int dev, unsigned int id)
{
	struct sim_mig_gi g;

	for (int i = 0; i < SIM_MIG_MAX; i++)
		if (sim_mig_gi_get(s, i, &g) && (int)g.card == dev && g.id == id)
			return i;
	return -1;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
					  nvmlGpuInstance_t *gpuInstance)
{
	nvmlReturn_t r;
	struct sim *s;
	int dev, slot;

	if ((r = mig_card(device, &s, &dev)) != NVML_SUCCESS)
		return r;
	if (!gpuInstance)
		return NVML_ERROR_INVALID_ARGUMENT;
	slot = gi_slot_by_id(s, dev, id);
	if (slot < 0)
		return NVML_ERROR_NOT_FOUND;
	*gpuInstance = &lib.gi[slot];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info)
{
	const struct sim_mig_profile *p;
	struct sim_mig_gi g;
	nvmlReturn_t r;
	struct sim *s;

	if ((r = gi_resolve(gpuInstance, &s, &g)) != NVML_SUCCESS)
		return r;
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	p = &sim_mig_profiles()[g.profile];
	*info = (nvmlGpuInstanceInfo_t){
		.device = card_handle((int)g.card),
		.id = g.id,
		.profileId = p->id,
		.placement = { g.start, p->slices },
	};
	return NVML_SUCCESS;
}

/* simdev makes one compute instance per GPU instance, the whole of it:
 * its profile's index and id are those of the GI's slice count. */
static unsigned int ci_profile(unsigned int gpcs)
{
	return gpcs == 7 ? NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE : gpcs - 1;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance,
							  unsigned int profile,
							  unsigned int engProfile,
							  nvmlComputeInstanceProfileInfo_t *info)
{
	const struct sim_mig_profile *p;
	struct sim_mig_gi g;
	nvmlReturn_t r;
	struct sim *s;

	if ((r = gi_resolve(gpuInstance, &s, &g)) != NVML_SUCCESS)
		return r;
	if (!info || profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT ||
	    engProfile != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		return NVML_ERROR_INVALID_ARGUMENT;
	p = &sim_mig_profiles()[g.profile];
	if (profile != ci_profile(p->gpcs))
		return NVML_ERROR_NOT_SUPPORTED;
	*info = (nvmlComputeInstanceProfileInfo_t){
		.id = profile,
		.sliceCount = p->gpcs,
		.instanceCount = 1,
		.multiprocessorCount = p->sms,
		.sharedCopyEngineCount = p->copy_engines,
	};
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance,
						  unsigned int profileId,
						  nvmlComputeInstance_t *computeInstance)
{
	struct sim_mig_gi g;
	nvmlReturn_t r;
	struct sim *s;
	int slot, e;

	if ((r = gi_resolve(gpuInstance, &s, &g)) != NVML_SUCCESS)
		return r;
	if (!computeInstance)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (profileId != ci_profile(sim_mig_profiles()[g.profile].gpcs))
		return NVML_ERROR_NOT_SUPPORTED;
	slot = ((struct nvmlGpuInstance_st *)gpuInstance)->slot;
	e = sim_mig_ci_create(s, slot);
	if (e < 0)
		return from_errno(e);
	*computeInstance = &lib.ci[slot];
	return NVML_SUCCESS;
}

/* The slot of a compute instance handle whose instance exists, or -1. */
static int ci_slot(struct sim *s, nvmlComputeInstance_t computeInstance)
{
	uintptr_t p = (uintptr_t)computeInstance, base = (uintptr_t)lib.ci;
	size_t i;

	if (p < base || (p - base) % sizeof(lib.ci[0]) != 0 ||
	    (i = (p - base) / sizeof(lib.ci[0])) >= SIM_MIG_MAX ||
	    !sim_mig_device_profile(s, SIM_DEVICES_MAX + (int)i))
		return -1;
	return (int)i;
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance)
{
	struct sim *s = attached(NULL);
	int slot, e;

	if (!s)
		return NVML_ERROR_UNINITIALIZED;
	if ((slot = ci_slot(s, computeInstance)) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	e = sim_mig_ci_destroy(s, slot);
	return e < 0 ? from_errno(e) : NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance,
						unsigned int profileId,
						nvmlComputeInstance_t *computeInstances,
						unsigned int *count)
{
	struct sim_mig_gi g;
	nvmlReturn_t r;
	struct sim *s;

	if ((r = gi_resolve(gpuInstance, &s, &g)) != NVML_SUCCESS)
		return r;
	if (!computeInstances || !count || profileId >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = 0;
	if (g.state == SIM_MIG_CI && profileId == ci_profile(sim_mig_profiles()[g.profile].gpcs)) {
		computeInstances[0] = &lib.ci[((struct nvmlGpuInstance_st *)gpuInstance)->slot];
		*count = 1;
	}
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance,
					   nvmlComputeInstanceInfo_t *info)
{
	const struct sim_mig_profile *p;
	struct sim *s = attached(NULL);
	struct sim_mig_gi g;
	int slot;

	if (!s)
		return NVML_ERROR_UNINITIALIZED;
	if ((slot = ci_slot(s, computeInstance)) < 0 || !info || !sim_mig_gi_get(s, slot, &g))
		return NVML_ERROR_INVALID_ARGUMENT;
	p = &sim_mig_profiles()[g.profile];
	*info = (nvmlComputeInstanceInfo_t){
		.device = card_handle((int)g.card),
		.gpuInstance = &lib.gi[slot],
		.id = 0,
		.profileId = ci_profile(p->gpcs),
		.placement = { 0, p->gpcs },
	};
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceGetInfo(nvmlComputeInstance_t computeInstance,
					nvmlComputeInstanceInfo_t *info)
{
	return nvmlComputeInstanceGetInfo_v2(computeInstance, info);
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!isMigDevice)
		return NVML_ERROR_INVALID_ARGUMENT;
	*isMigDevice = dev >= SIM_DEVICES_MAX;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!id)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (dev < SIM_DEVICES_MAX)
		return NVML_ERROR_NOT_SUPPORTED;
	*id = gi_id_of(s, dev);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!id)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (dev < SIM_DEVICES_MAX)
		return NVML_ERROR_NOT_SUPPORTED;
	*id = 0;
	return NVML_SUCCESS;
}

/* 7 on a card in MIG mode (its compute slices), 0 on others. */
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(device, s, dev);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = sim_mig_enabled(s, dev) ? SIM_MIG_GPCS : 0;
	return NVML_SUCCESS;
}

/* The card's MIG devices, numbered in the order of their GPU instance
 * ids. */
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
						 nvmlDevice_t *migDevice)
{
	unsigned int n = 0;
	nvmlReturn_t r;
	struct sim *s;
	int dev;

	if ((r = mig_card(device, &s, &dev)) != NVML_SUCCESS)
		return r;
	if (!migDevice || index >= SIM_MIG_GPCS)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned int id = 1; id <= 64; id++) {
		int slot = gi_slot_by_id(s, dev, id);

		if (slot < 0 || !sim_mig_device_profile(s, SIM_DEVICES_MAX + slot))
			continue;
		if (n++ == index) {
			*migDevice = &lib.mig[slot];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice,
							  nvmlDevice_t *device)
{
	struct sim *s;
	int dev;

	RESOLVE_DEVICE(migDevice, s, dev);
	if (!device)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (dev < SIM_DEVICES_MAX)
		return NVML_ERROR_NOT_SUPPORTED;
	*device = card_handle(sim_device_card(s, dev));
	return *device ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
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
