/* agent-impl.h — what the parts of the agent share; internal to
 * src/agent/ (agent.c: the tasks' lives; identity.c: who a task runs as
 * and what environment it gets; watch.c: the verifier's thread).
 *
 * Locking: `lock` guards the task table (task[], tasks) and the queue of
 * strangers found; the loop's thread changes the table, the verifier's
 * thread reads a snapshot and marks violations. Everything else in
 * struct gp_agent is set up before the verifier's thread starts and is
 * read-only after, but `usage` (the loop's sampler) and `watch_usage`
 * (the verifier's), each used by its own thread. */
#ifndef GP_AGENT_AGENT_IMPL_H
#define GP_AGENT_AGENT_IMPL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/cgroup.h"
#include "agent/launcher.h"
#include "agent/logpump.h"
#include "agent/partitions.h"
#include "agent/verifier.h"
#include "base/uidrange.h"
#include "shim/region.h"
#include "vendor/vendor.h"

#define GP_AGENT_GROUPS_MAX 16
#define GP_AGENT_STRANGERS  32

/* A task this agent started and has not reported ended yet. */
struct running {
	struct gp_agent_task spec;      /* command, workdir, env, user: not kept */
	pid_t pgid;
	bool stopping;
	uint64_t kill_at_ms;            /* when stopping: SIGKILL then */
	struct gp_launch_exit exit;     /* what of the group has ended */
	uint64_t leader_gone_ms;        /* cgroup: when the shell was reaped */
	unsigned applied_compute, applied_priority;     /* in the regions */
	bool adopted;                   /* started by a previous agent: not our child */
	char violation[GP_AGENT_WHY_MAX];       /* the verifier's; "" none */
	bool violation_told;            /* reported through gp_agent_poll */
	bool violation_stops;           /* the policy stops the task */
	int oom_kills;                  /* its processes the kernel killed for memory */
};

/* A task's id in the regions and the limits tables: "task-ID". */
void gp_agent_task_name(int64_t id, char *buf, size_t len);

/* A process of no task that the verifier found. */
struct stranger {
	pid_t pid;
	uint64_t start;
	bool told;
	char text[GP_VIOLATION_TEXT_MAX];
};

struct gp_agent {
	struct gp_agent_options o;
	struct gp_agent_node node;
	char run_dir[PATH_MAX];         /* resolved */
	bool privileged;                /* root: tasks run as their tenants' users */
	struct gp_uidrange *uids;       /* root: the automatic uids' range, claimed */
	unsigned long long tmp_bytes;   /* root: each task's own /tmp, /dev/shm and
					 * (made by the agent) $HOME; 0: none */
	bool private_proc;              /* root: each task's own /proc (hidepid) */
	char mounts_why[256];           /* why not, when either is off */
	gid_t task_gid;                 /* the group of every task (the regions) */
	gid_t groups[GP_AGENT_GROUPS_MAX];      /* task_gid, then the extra ones */
	int groups_n;
	struct gp_cgroups *cgroups;     /* NULL: process groups only */
	char cgroup_why[256];           /* why not, when NULL */
	struct gp_region *region[GP_AGENT_DEVICES_MAX]; /* opened at start */
	struct gp_usage *usage;         /* the loop's sampler */
	struct gp_logpump *logs;        /* the tasks' output into their logs */
	struct gp_parts parts;          /* the loop's thread's only (partitions.h) */
	time_t began;                   /* when gp_agent_new made it */

	pthread_mutex_t lock;           /* the task table and the strangers */
	struct running task[GP_AGENT_TASKS_MAX];
	int tasks;
	struct stranger stranger[GP_AGENT_STRANGERS];

	struct gp_verifier *verifier;   /* NULL: no verifier */
	struct gp_usage *watch_usage;   /* the verifier's sampler */
	pthread_t watch;
	atomic_bool watch_stop;
	_Atomic uint32_t watch_gen;     /* futex: gp_agent_free wakes the thread */
};

uint64_t gp_agent_now_ms(void);

/* The file of task `task` in the agent's own directory (RUN_DIR/tasks,
 * mode 0700): "status" (its keeper writes the shell's code there) or
 * "fifo" (its output, for the log pump). */
void gp_agent_task_file(const struct gp_agent *a, int64_t task, const char *what, char *buf,
			size_t len);

/* The running task with this id (the caller holds the lock), or NULL. */
struct running *gp_agent_running(struct gp_agent *a, int64_t id);

/* The task of a live process: by its cgroup, else by its process group.
 * Takes the lock. */
int gp_agent_task_of(void *agent, pid_t pid, int64_t *ret_task);

/* identity.c: the user, groups and environment of a task, all owned by
 * the struct (freed with gp_task_identity_release). */
struct gp_task_identity {
	struct gp_launch_user user;     /* when switch_user */
	bool switch_user;
	char home[PATH_MAX];            /* its $HOME */
	bool home_ours;                 /* made by the agent (not the user's passwd home) */
	char **env;                     /* NULL-terminated, malloc'd strings */
	char secret[GP_TASK_SECRET_LEN + 1];
};

/* Parses the extra groups of the options into a->groups (after
 * task_gid); on failure says which name is unknown. */
int gp_agent_groups_parse(struct gp_agent *a, char *err, size_t err_len);

int gp_task_identity_make(struct gp_agent *a, const struct gp_agent_task *t,
			  struct gp_task_identity *ret, char *err, size_t err_len);
void gp_task_identity_release(struct gp_task_identity *id);

/* agent.c over partitions.h: the cards in partition mode and the
 * partitions of the tasks on them, each task's owned by its id in
 * decimal. gp_agent_parts_open reads them (and what a previous agent
 * made: the ledger RUN_DIR/tasks/partitions); gp_agent_parts_make makes
 * task t's (1), or none when its cards are not in partition mode (0);
 * gp_agent_part_of is task's partition on device d, or NULL;
 * gp_agent_parts_end destroys a task's; gp_agent_parts_adopted, those of
 * tasks a previous agent left that no adoption took (the loop's thread,
 * which alone changes the task table). */
int gp_agent_parts_open(struct gp_agent *a, char *err, size_t err_len);
int gp_agent_parts_make(struct gp_agent *a, const struct gp_agent_task *t, char *err,
			size_t err_len);
const struct gp_part *gp_agent_part_of(const struct gp_agent *a, int64_t task, unsigned d);
void gp_agent_parts_end(struct gp_agent *a, int64_t task);
void gp_agent_parts_adopted(struct gp_agent *a);

/* watch.c: the verifier's thread. */
int gp_agent_watch_start(struct gp_agent *a, char *err, size_t err_len);
void gp_agent_watch_stop(struct gp_agent *a);

#endif
