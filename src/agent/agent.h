/* agent.h — the node side of gpupool: this node's devices and the tasks
 * running on them.
 *
 * The agent starts each task as a process group (launcher.h) with the
 * environment that confines it to its slice: CUDA_VISIBLE_DEVICES (the
 * UUIDs of its devices), LD_PRELOAD of libgpushare and the GPUPOOL_*
 * limits, its task id (task-ID) and run directory. It stops tasks
 * without blocking (SIGTERM now, SIGKILL once the grace period is over,
 * at a later gp_agent_poll), reaps them, and applies live changes of a
 * running task's share and priority to its devices' regions (shim/region.h).
 * It samples what the devices and the tasks' process groups use
 * (usage.h), for metering, metrics and alerts.
 *
 * It is used from one thread (the server's loop). Functions return 0 or a
 * negative errno. */
#ifndef GP_AGENT_AGENT_H
#define GP_AGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/devices.h"
#include "agent/usage.h"

#define GP_AGENT_TASKS_MAX 256

struct gp_agent;

struct gp_agent_options {
	const char *nvml_library;       /* NULL: libnvidia-ml.so.1 */
	const char *shim_path;          /* libgpushare.so; NULL: tasks run unconfined */
	const char *run_dir;            /* the regions; NULL: the shim's default */
	const char *log_dir;            /* task-ID.log files */
	unsigned grace_ms;              /* from SIGTERM to SIGKILL */
};

/* What to run, and on which of this node's devices (indices into
 * gp_agent_node's devices). */
struct gp_agent_task {
	int64_t id;
	const char *command;
	const char *workdir;            /* where it runs; NULL or "": the agent's */
	unsigned devices;
	unsigned device[GP_AGENT_DEVICES_MAX];
	bool whole;                     /* whole devices: no slice limits */
	uint64_t mem_mib;               /* per device */
	unsigned compute_pct;
	unsigned priority;
	bool hard;
};

/* Discovers the devices and opens NVML for sampling; on failure says
 * why in err. */
int gp_agent_new(const struct gp_agent_options *o, struct gp_agent **ret, char *err,
		 size_t err_len);
void gp_agent_free(struct gp_agent *a);    /* stops nothing: tasks outlive it */

const struct gp_agent_node *gp_agent_node(const struct gp_agent *a);

/* Starts a task; its process group in *ret_pgid. -ENOSPC when the agent
 * runs GP_AGENT_TASKS_MAX tasks already. */
int gp_agent_start(struct gp_agent *a, const struct gp_agent_task *t, pid_t *ret_pgid);

/* Asks a running task to stop (SIGTERM to its group); gp_agent_poll
 * kills what is left after the grace period. -ENOENT: not running here. */
int gp_agent_stop(struct gp_agent *a, int64_t task);

/* Reaps the tasks that ended, calling ended(ctx, id, code, stopped) for
 * each (code as a shell reports it; stopped: gp_agent_stop asked), and
 * kills the groups whose grace period is over. A task ends with its
 * shell, what it leaves behind killed; a task being stopped ends once
 * its whole group has (the shell may die of SIGTERM first; its program
 * still has the grace period), with the shell's code. */
void gp_agent_poll(struct gp_agent *a,
		   void (*ended)(void *ctx, int64_t task, int code, bool stopped), void *ctx);

/* Applies a running task's share and priority to its devices' regions.
 * -EAGAIN while its processes have not joined a region yet (call again
 * later); 0 once applied (again with the same values: nothing to do). */
int gp_agent_set(struct gp_agent *a, int64_t task, unsigned compute_pct, unsigned priority);

/* Samples this node: devices[] (gp_agent_node's count of them) and, for
 * each group (a task's process group on one of its devices), what it used
 * since the previous sampling (usage.h). */
int gp_agent_sample(struct gp_agent *a, struct gp_usage_device *devices,
		    struct gp_usage_group *groups, size_t n);

#endif
