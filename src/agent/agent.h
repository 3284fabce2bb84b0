/* agent.h — the node side of gpupool: this node's devices and the tasks
 * running on them.
 *
 * Tasks are untrusted. The agent starts each one
 *   - as its tenant's Unix user (an unprivileged uid of the tenant's own
 *     when the tenant has none: uid_base + the tenant's id, base/user.h),
 *     with the group every task shares for the devices' regions (gid
 *     uid_base) and the configured extra groups, and no way to gain
 *     privileges back — when the agent
 *     runs as root; an unprivileged agent runs every task as itself, and
 *     gp_agent_isolated() says tenants are then not isolated;
 *   - in a cgroup of its own where the machine has cgroup v2 (cgroup.h),
 *     held to memory_max and pids_max where a controller allows, else as
 *     a process group (launcher.h);
 *   - with a clean environment: the names the configuration passes from
 *     the agent's own (PATH, locale, the driver's library path, simdev's
 *     variables), HOME, USER, LOGNAME, its devices (CUDA_VISIBLE_DEVICES
 *     by UUID), its task id and secret, the region directory, LD_PRELOAD
 *     of libgpushare, and the variables its submitter declared;
 *   - with its limits written into its devices' regions, where the task
 *     can read but not change them (shim/region.h), keyed by its task id
 *     and a per-task secret only its environment holds.
 * Its output goes through a pipe to the log pump (logpump.h), which keeps
 * the newest part of it under the cap in LOG_DIR/task-ID.log (and .1).
 * Each task is led by a keeper (launcher.h), so that it outlives the
 * agent: a later agent adopts it (gp_agent_adopt), and learns how it
 * ended if it ended meanwhile. It stops tasks without blocking (SIGTERM now, SIGKILL once the grace
 * period is over, at a later gp_agent_poll), reaps them and every orphan
 * they leave (the server is a child subreaper), and applies live changes
 * of a running task's share and priority to its devices' regions.
 *
 * The verifier (verifier.h) runs in a thread of the agent's own: at
 * jittered moments, verify_ms apart on average, it checks each device's
 * processes, from the device library, against the running tasks, and
 * each task's files on its devices; a violation is reported through
 * gp_agent_poll's events and, by policy, the process is killed at once
 * and its task stopped and reported failed with the reason.
 *
 * The agent samples what the devices and the tasks use (usage.h), for
 * metering, metrics and alerts.
 *
 * Threads: the functions below are called from one thread (the server's
 * loop); the verifier's thread shares the task table under the agent's
 * lock. Functions return 0 or a negative errno. */
#ifndef GP_AGENT_AGENT_H
#define GP_AGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/devices.h"
#include "agent/logpump.h"
#include "agent/usage.h"

#define GP_AGENT_TASKS_MAX  256
#define GP_AGENT_VERIFY_MS  200	   /* between two checks of the devices, on average */
#define GP_AGENT_SLACK_MIB  512	   /* what the driver counts beyond a slice */
#define GP_AGENT_WHY_MAX    320
/* What a task gets of the agent's environment (NAME, or NAME* for every
 * name that starts so): the command path, the locale, the driver's
 * library path, and simdev's variables (the simulated driver's). */
#define GP_AGENT_TASK_ENV   "PATH LANG LANGUAGE LC_* TZ LD_LIBRARY_PATH GPUPOOL_SIM_*"

struct gp_agent;

enum gp_verify_policy {
	GP_VERIFY_KILL,  /* alert, kill the process, stop and fail its task */
	GP_VERIFY_ALERT, /* alert only */
	GP_VERIFY_OFF,   /* no verifier */
};

struct gp_agent_options {
	const char *nvml_library;       /* NULL: libnvidia-ml.so.1 */
	const char *shim_path;          /* libgpushare.so; NULL: tasks run unconfined */
	const char *run_dir;            /* the regions; NULL: the shim's default */
	const char *log_dir;            /* task-ID.log files */
	unsigned grace_ms;              /* from SIGTERM to SIGKILL */
	const char *cgroup;             /* NULL or "auto", a cgroup2 path, or "off" */
	unsigned uid_base;              /* automatic users' range; 0: GP_USER_AUTO_BASE */
	bool uid_auto;                  /* ... or the first free range (base/uidrange.h) */
	const char *owner;              /* who runs the agent, for the uid registry: "the
					 * server of /var/lib/gpupool/gpupool.db" */
	const char *task_groups;        /* more groups for every task: "video,render" */
	const char *task_env;           /* NULL: GP_AGENT_TASK_ENV */
	enum gp_verify_policy verify;
	unsigned verify_ms;             /* 0: GP_AGENT_VERIFY_MS */
	uint64_t verify_slack_mib;      /* UINT64_MAX: GP_AGENT_SLACK_MIB */
	uint64_t log_max;               /* a task's log, at most (logpump.h) */
	uint64_t log_free_min;          /* the free space the logs leave in log_dir
					 * (logpump.h's floor); 0: none */
	uint64_t memory_max;            /* each task's memory.max, bytes; 0: none */
	uint64_t pids_max;              /* each task's pids.max; 0: none */
	uint64_t tmp_max;               /* as root: each task's own /tmp, /dev/shm and
					 * (made by the agent) $HOME, tmpfs of at most
					 * this many bytes each; 0: none, the machine's */
	bool shared_proc;               /* tasks see the machine's /proc (else, as root, a
					 * /proc of their user's processes only) */
};

/* What to run, and on which of this node's devices (indices into
 * gp_agent_node's devices). */
struct gp_agent_task {
	int64_t id;
	int64_t tenant;
	const char *user;               /* the tenant's user (base/user.h); NULL or "":
					 * automatic, uid_base + tenant */
	const char *command;
	const char *workdir;            /* where it runs; NULL or "": the agent's */
	const char *env;                /* the submitter's variables, as the store keeps
					 * them (agent/taskenv.h); NULL: none */
	unsigned devices;
	unsigned device[GP_AGENT_DEVICES_MAX];
	/* On a card in partition mode: the start unit the core chose for
	 * the task's partition, plus one (0: none; a whole card gets its
	 * largest profile); the agent makes the partition (partitions.c). */
	uint8_t part_start[GP_AGENT_DEVICES_MAX];
	bool whole;                     /* whole devices: no slice limits */
	uint64_t mem_mib;               /* per device */
	unsigned compute_pct;
	unsigned priority;
	bool hard;
	/* Of a task array: its first task's id and this one's index, in the
	 * task's environment (GPUPOOL_ARRAY_ID, GPUPOOL_ARRAY_INDEX); array_id
	 * 0: not of one. */
	int64_t array_id;
	unsigned array_index;
};

/* What gp_agent_poll reports. */
struct gp_agent_events {
	/* A task ended: code as a shell reports it; stopped: gp_agent_stop
	 * asked; violation: why the verifier stopped it, or NULL; failure:
	 * what else the agent knows of why it failed (the kernel killed it
	 * for memory, at its memory.max), or NULL. */
	void (*ended)(void *ctx, int64_t task, int code, bool stopped, const char *violation,
		      const char *failure);
	/* The verifier found a violation (task 0: a process of no task); once
	 * per task, and once per stranger process. */
	void (*violation)(void *ctx, int64_t task, const char *text);
	void *ctx;
};

/* Discovers the devices, opens NVML for sampling, prepares the devices'
 * regions, the cgroups and the verifier; on failure says why in err. */
int gp_agent_new(const struct gp_agent_options *o, struct gp_agent **ret, char *err,
		 size_t err_len);
void gp_agent_free(struct gp_agent *a);    /* stops nothing: tasks outlive it */

const struct gp_agent_node *gp_agent_node(const struct gp_agent *a);

/* Are tenants' tasks isolated from each other (separate users)? With
 * how in text (for the server's start-up lines). */
bool gp_agent_isolated(const struct gp_agent *a, char *text, size_t len);

/* Starts a task; its process group in *ret_pgid. -ENOSPC when the agent
 * runs GP_AGENT_TASKS_MAX tasks already; -EAGAIN (and no other failure)
 * when its log could not be opened (a full disk, say): nothing of the
 * task ran, and the same start may succeed later. On failure says why in
 * err. */
int gp_agent_start(struct gp_agent *a, const struct gp_agent_task *t, pid_t *ret_pgid,
		   char *err, size_t err_len);

/* What became of a task a previous agent was starting or running. */
enum gp_agent_found {
	GP_AGENT_FOUND_RUNNING,   /* it runs, and is adopted */
	GP_AGENT_FOUND_ENDED,     /* it ran and is gone (code: how, -1 not known) */
	GP_AGENT_FOUND_UNSTARTED, /* its program never ran and never will: it may
				   * be queued again, nothing of it is left */
};

struct gp_agent_adoption {
	enum gp_agent_found found;
	pid_t pgid; /* RUNNING: its process group (its keeper's pid) */
	int code;   /* ENDED: the code its keeper left; -1: none (killed with its
		     * keeper, say) */
};

/* A task the store has as running, started (or being started) by a
 * previous agent of this node (its processes outlive their agent:
 * launcher.h's keeper). Whether its program may have run is its start
 * mark's to say (launcher.h), unless pgid > 0 (the store has its process
 * group: it ran); a keeper of it alive (by its name, of this agent's user,
 * in the task's cgroup) or processes in its cgroup say it may have, mark
 * or not (a gpupool from before start marks). It may not have: then the
 * mark is claimed, so that no keeper still on its way can run it, and it
 * is UNSTARTED. It may have:
 * it is adopted when it still runs — its processes (its cgroup, or its
 * keeper, pgid or the mark's), its limits in the regions, its log
 * (through its FIFO) are taken over, and it ends like any other, with
 * the code its keeper leaves (or -1) — else it ENDED. When the mark
 * cannot be read or claimed, it may have run. 0, or -ENOSPC (the table
 * is full) or -EINVAL (a device not here). Call after gp_agent_new and
 * before gp_agent_start, then gp_agent_adopted once. */
int gp_agent_adopt(struct gp_agent *a, const struct gp_agent_task *t, pid_t pgid,
		   struct gp_agent_adoption *ret);

/* Is the keeper of task `task` the process pgid, alive (its process
 * group's leader, with the keeper's name, which no task can give a
 * process of root's)? */
bool gp_agent_keeper_alive(pid_t pgid, int64_t task);

/* Stops and forgets what a previous agent left that no gp_agent_adopt
 * took: the tasks still in their cgroups, their limits, their files
 * (the start marks claimed before this agent began too). */
void gp_agent_adopted(struct gp_agent *a);

/* Asks a running task to stop (SIGTERM to all its processes);
 * gp_agent_poll kills what is left after the grace period. -ENOENT: not
 * running here. */
int gp_agent_stop(struct gp_agent *a, int64_t task);

/* Reports the violations found and the tasks that ended (ev->ended for
 * each), and kills the tasks whose grace period is over or whose
 * violation stops them. A task ends with its shell, what it leaves
 * killed; a task being stopped ends once all its processes have (the
 * shell may die of SIGTERM first; its program still has the grace
 * period), with the shell's code. Also reaps every orphan. */
void gp_agent_poll(struct gp_agent *a, const struct gp_agent_events *ev);

/* What the tasks' logs lost since the last call (logpump.h), and their
 * cap. */
int gp_agent_log_drops(struct gp_agent *a, struct gp_logpump_drop *out, int max);
uint64_t gp_agent_log_max(const struct gp_agent *a);

/* Applies a running task's share and priority to its devices' regions.
 * 0 once applied (again with the same values: nothing to do). */
int gp_agent_set(struct gp_agent *a, int64_t task, unsigned compute_pct, unsigned priority);

/* Samples this node: devices[] (gp_agent_node's count of them) and, for
 * each group (a task on one of its devices), what it used since the
 * previous sampling (usage.h). */
int gp_agent_sample(struct gp_agent *a, struct gp_usage_device *devices,
		    struct gp_usage_group *groups, size_t n);

#endif
