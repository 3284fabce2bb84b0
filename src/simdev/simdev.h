/* simdev.h — the state of the simulated devices, shared by every process.
 *
 * simdev stands in for accelerators on machines without them: it builds a
 * libcuda.so.1 (cuda.c) and a libnvidia-ml.so.1 (nvml.c) that programs
 * load as they would the real ones. Both sides see the same devices
 * because their state lives in one shared-memory file per device set:
 *
 *   $GPUPOOL_SIM_DIR (default $XDG_RUNTIME_DIR/gpupool-sim, else
 *   /tmp/gpupool-sim-UID) / sim-HASH.shm, HASH from $GPUPOOL_SIM_DEVICES.
 *
 * The default directories are the user's own (mode 0700). A directory
 * named with GPUPOOL_SIM_DIR holds the machine's devices: the directory
 * is made 0755 and the file 0666, so that tasks running as other users
 * share them, as every user shares a real driver's device files. (A real
 * driver keeps its truth in the kernel; simdev's is a file its users can
 * write, so on simdev a hostile program could forge what NVML reports.)
 *
 * $GPUPOOL_SIM_DEVICES lists devices as MODEL:COUNT, comma separated, e.g.
 * "a100-80g:2,t4-16g:2"; models come from a small built-in catalogue.
 *
 * What is shared: per device, memory admission (a robust process-shared
 * mutex), the device's turn (who is executing now: the time-slicing of
 * contexts) and a ring of the quanta of device time given out (end time,
 * process, length), from which NVML computes utilization; per process, a
 * slot with its pid, start time, memory per device and contexts. A process
 * killed at any point leaves nothing stuck: a slot changes hands by one
 * compare-and-swap (simdev.c), any later call that needs the truth (memory
 * admission, NVML queries) first reclaims the slots of dead processes, and
 * a robust mutex held by a dead process passes on.
 *
 * Ownership: sim_open returns a handle the caller keeps for the life of
 * the process (one per process is plenty); everything it points into is
 * owned by the mapping. Functions return 0 or a negative errno. */
#ifndef GP_SIMDEV_SIMDEV_H
#define GP_SIMDEV_SIMDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SIM_DEVICES_MAX 16
#define SIM_PROCS_MAX 64
#define SIM_ERR_MAX 512
/* MIG instances at once, over all cards (mig.h). Each is a device of its
 * own at an index above the cards': every `dev` below may be a card
 * (0 … SIM_DEVICES_MAX - 1) or an instance (SIM_DEVICES_MAX + slot). */
#define SIM_MIG_MAX 32
#define SIM_INDEX_MAX (SIM_DEVICES_MAX + SIM_MIG_MAX)

struct sim;

/* One entry of the built-in catalogue. */
struct sim_model {
	const char *key;        /* as written in GPUPOOL_SIM_DEVICES */
	const char *name;       /* what cuDeviceGetName / NVML report */
	uint64_t mem_bytes;
	int sms;
	int cc_major, cc_minor;
	int clock_khz;
	const char *vendor;     /* "nvidia", "ascend", "amd", "hygon", "cambricon", "intel" */
	const char *partitions; /* NULL: none; else the kind of hardware partitions ("mig", "vnpu") */
	/* Devices per NVLink island on a board of this model (an HGX board's
	 * 8, joined through NVSwitch); 0: PCIe only. */
	int link_group;
};

/* The catalogue, terminated by an entry with key NULL. */
const struct sim_model *sim_catalogue(void);

/* Attaches to (creating when needed) the state for $GPUPOOL_SIM_DEVICES.
 * On failure err says why, in one line fit for the user (an unknown model
 * lists the catalogue). Registers the calling process in a slot. */
int sim_open(struct sim **ret_sim, char *err, size_t err_len);

int sim_device_count(const struct sim *s);
const struct sim_model *sim_device_model(const struct sim *s, int dev);
/* The devices of one vendor, as its own libraries number them: fills
 * out[0..] with the simdev indices of that vendor's devices in order and
 * returns how many (each vendor's library sees only its own devices, as
 * on a machine with cards of several vendors). */
int sim_vendor_devices(const struct sim *s, const char *vendor, int *out, int max);

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", stable for a device set. */
const char *sim_device_uuid(const struct sim *s, int dev);
/* 16 raw bytes of the same UUID (cuDeviceGetUuid). */
void sim_device_uuid_bytes(const struct sim *s, int dev, unsigned char out[16]);
/* PCI bus of the device (0x10 + index), for the PCI ids NVML reports. */
int sim_device_pci_bus(const struct sim *s, int dev);
/* The NVLink island of card dev: its model's cards in the order listed,
 * link_group at a time, share one; -1: none (a model without NVLink). */
int sim_device_link_island(const struct sim *s, int dev);

/* A lost device has fallen off the bus: NVML answers GPU_IS_LOST for it
 * (a health check sees it), as a real driver does after an Xid 79.
 * `simctl lose|restore INDEX` sets it (src/simdev/simctl.c). */
bool sim_device_lost(const struct sim *s, int dev);
void sim_device_set_lost(struct sim *s, int dev, bool lost);
/* The device time it has given out since it was made, in all (the sum of
 * its quanta; `simctl busy INDEX` prints it in µs). */
uint64_t sim_device_busy_ns(const struct sim *s, int dev);

/* Gives back the memory and contexts of processes that died. */
void sim_reclaim(struct sim *s);

/* Slots in use once those of the dead are given back: the processes that
 * use the simulated devices, the caller included. */
int sim_proc_count(struct sim *s);

/* Device memory. Admission is atomic across processes: -ENOMEM when the
 * device lacks `bytes`. Counted against the calling process. */
int sim_mem_reserve(struct sim *s, int dev, uint64_t bytes);
void sim_mem_release(struct sim *s, int dev, uint64_t bytes);
uint64_t sim_mem_used(struct sim *s, int dev);  /* reclaims first */
uint64_t sim_mem_total(const struct sim *s, int dev);

/* Contexts of the calling process on a device (NVML lists a process as
 * running on a device while it has one). */
void sim_context_add(struct sim *s, int dev);
void sim_context_remove(struct sim *s, int dev);

/* Processes with a context or memory on a device, as NVML lists them,
 * with the most memory each held there (NVML's accounting). */
struct sim_proc_info {
	pid_t pid;
	uint64_t mem_bytes;
	uint64_t mem_max_bytes;
};
int sim_device_procs(struct sim *s, int dev, struct sim_proc_info *out, int max);

/* The most memory process pid held on the device since it started (over
 * every slot of it: a process that loads the driver twice has two), 0 for
 * a pid that has none; no reclaiming, no system call. */
uint64_t sim_process_mem_max(struct sim *s, int dev, pid_t pid);

/* Occupies the device for `ns` of device time on behalf of the calling
 * process, waiting for its turn: devices time-slice between processes in
 * quanta ($GPUPOOL_SIM_QUANTUM_US, default 1000), like a GPU between
 * contexts. Sleeps rather than spins. Returns when the work is done. */
void sim_device_run(struct sim *s, int dev, uint64_t ns);

/* Utilization over the last `window_ns` (default 1 s when 0), in percent:
 * of the device, and of one pid on it. */
unsigned sim_device_utilization(struct sim *s, int dev, uint64_t window_ns);
unsigned sim_process_utilization(struct sim *s, int dev, pid_t pid, uint64_t window_ns);

/* Per-process samples since `since_us` (CLOCK_REALTIME µs, as NVML's
 * timestamps): one per process that ran on the device since then (in the
 * last 5 s at most), with its utilization over that time (over the last
 * second when since_us is 0 or older). */
struct sim_proc_sample {
	pid_t pid;
	uint64_t timestamp_us;
	unsigned sm_util;       /* percent */
};
int sim_device_samples(struct sim *s, int dev, uint64_t since_us,
		       struct sim_proc_sample *out, int max);

/* Monotonic nanoseconds (CLOCK_MONOTONIC), the clock of the quanta. */
uint64_t sim_now_ns(void);

/* ---- for mig.c: the parts of a card ------------------------------------ */

struct sim_mig_shared;

/* The MIG area of the shared state (its layout is mig.h's) and the robust
 * lock that guards its changes. */
struct sim_mig_shared *sim_mig_area(struct sim *s);
int sim_mig_lock(struct sim *s);
void sim_mig_unlock(struct sim *s);
/* Makes index `dev` (SIM_DEVICES_MAX + slot, unused by anyone) a device
 * of its own on card `card`: `mem_bytes` of memory, `gpcs` of 7 compute
 * slices (its kernels take 7 / gpcs of their time in wall time), an
 * empty quanta ring, and a UUID "MIG-…" made from the card's and
 * `serial`. */
void sim_part_init(struct sim *s, int dev, int card, uint64_t mem_bytes, unsigned gpcs,
		   uint64_t serial);
/* The card of device `dev`: dev itself for a card. */
int sim_device_card(const struct sim *s, int dev);
/* Does a live process hold memory or a context on `dev`? (Reclaims the
 * dead first.) */
bool sim_device_busy(struct sim *s, int dev);

#endif
