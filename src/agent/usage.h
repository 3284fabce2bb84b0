/* usage.h — what this node's devices, and the tasks on them, use now:
 * sampled from NVML.
 *
 * A sampler loads NVML with dlopen (like devices.c: nothing links it) and
 * keeps it loaded and initialised for its life, so that sampling every
 * few seconds costs a handful of NVML calls. Each gp_usage_sample call
 * answers
 *   - per device: utilization (percent, over NVML's last sample period),
 *     memory used and total;
 *   - per group (a task's processes on one device): the device time they
 *     used since the previous call, and the memory they hold now.
 * Used time comes from NVML's per-process utilization samples newer than
 * the last one seen: each adds smUtil % of its duration (from the
 * previous sample of that process, or the last one seen on the device,
 * never more than the time since the previous call). A process belongs
 * to the task the sampler's resolver names (the agent's: the task's
 * cgroup, or its process group); the task of a process seen once is
 * remembered, so that samples of a process that has exited since still
 * count for its task.
 *
 * A sampler is used from one thread (the verifier has one of its own).
 * Functions return 0 or a negative errno; the caller owns the sampler
 * (gp_usage_close accepts NULL, returns NULL). */
#ifndef GP_AGENT_USAGE_H
#define GP_AGENT_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gp_usage;

struct gp_usage_device {
	bool ok;	   /* NVML answered for this device */
	unsigned util_pct; /* 0-100 */
	uint64_t mem_used_mib, mem_total_mib;
};

/* In: task and device. Out: the rest, for the time since the last call. */
struct gp_usage_group {
	int64_t task;
	unsigned device; /* NVML index, as gp_agent_node's devices */
	uint64_t used_us;
	uint64_t mem_mib;
	unsigned processes; /* of the group that NVML lists on the device */
};

/* Opens NVML at `library` (NULL: libnvidia-ml.so.1) for `devices`
 * devices (indices 0..devices-1). On failure says why in err. */
int gp_usage_open(const char *library, unsigned devices, struct gp_usage **ret, char *err,
		  size_t err_len);
struct gp_usage *gp_usage_close(struct gp_usage *u);

/* The task of a live process: 0 with its id in *ret_task, or -ENOENT. */
typedef int gp_usage_resolver(void *ctx, pid_t pid, int64_t *ret_task);

/* Sets how processes are mapped to tasks (none: no process is any
 * task's). */
void gp_usage_set_resolver(struct gp_usage *u, gp_usage_resolver *fn, void *ctx);

/* A process on a device, as the device library lists it. */
struct gp_usage_process {
	pid_t pid;
	uint64_t mem_bytes;
	int util_pct; /* its SM utilization in its newest sample; -1: none */
};

/* The compute processes of device d, up to max of them in out, each with
 * its utilization from the samples newer than this sampler's last call
 * (where the library keeps per-process samples); returns how many there
 * are (which may be more than max), or a negative errno. For a sampler
 * of its own (the verifier's): it moves the sampler's last-seen time. */
int gp_usage_processes(struct gp_usage *u, unsigned d, struct gp_usage_process *out,
		       int max);

/* Fills devices[0..devices-1] and the out fields of groups[0..n-1]. A
 * device NVML fails for gets ok false and adds nothing to the groups. */
int gp_usage_sample(struct gp_usage *u, struct gp_usage_device *devices,
		    struct gp_usage_group *groups, size_t n);

#endif
