/* usage.h — what this node's devices, and the tasks on them, use now:
 * sampled through each device's vendor backend (src/vendor/vendor.h:
 * NVML for NVIDIA, DCMI for Ascend, …).
 *
 * A sampler opens each vendor's library (with dlopen: nothing links it)
 * once and keeps it for its life, so that sampling every few seconds
 * costs a handful of calls. Each gp_usage_sample call
 * answers
 *   - per device: utilization (percent, over its library's last period),
 *     memory used and total;
 *   - per group (a task's processes on one device): the device time they
 *     used since the previous call, and the memory they hold now.
 * Used time comes from the library's per-process utilization samples
 * newer than the last one seen (NVML's): each adds its percentage of its
 * duration (from the previous sample of that process, or the last one
 * seen on the device, never more than the time since the previous call).
 * Where the library keeps no per-process samples, the device's busy time
 * since the previous call is shared among the groups on it (the tasks
 * placed there), by their weights (their compute shares: the
 * interposer's arbiter holds each to its share). A process belongs
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
	bool ok;	   /* its library answered for this device */
	unsigned util_pct; /* 0-100 */
	uint64_t mem_used_mib, mem_total_mib;
};

/* In: task, device and weight. Out: the rest, for the time since the
 * last call. */
struct gp_usage_group {
	int64_t task;
	unsigned device; /* the node's index, as gp_agent_node's devices */
	unsigned weight; /* its compute share (any unit; 0 counts as 1) */
	/* How far back its use may go (the task started since the last
	 * sampling, or it is the first): a device whose library keeps no
	 * per-process samples is read as its busy share over the span, and
	 * a task is counted only over its part of it. 0: the whole span. */
	uint64_t span_max_us;
	uint64_t used_us;
	uint64_t mem_mib;
	unsigned processes; /* of the group that the library lists on the device */
};

/* Opens the samplers of the vendors of node's devices (`nvml_library`:
 * NVIDIA's, as gp_devices_discover). On failure says why in err. */
struct gp_agent_node;
int gp_usage_open(const char *nvml_library, const struct gp_agent_node *node,
		  struct gp_usage **ret, char *err, size_t err_len);
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
	uint64_t mem_max_bytes; /* the most it held, where the library keeps it
				 * (NVML's accounting), else mem_bytes */
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
 * device its library fails for gets ok false and adds nothing to the
 * groups. */
int gp_usage_sample(struct gp_usage *u, struct gp_usage_device *devices,
		    struct gp_usage_group *groups, size_t n);

#endif
