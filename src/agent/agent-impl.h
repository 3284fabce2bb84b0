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

/* Hardware partitions (partitions.c). */
#define GP_AGENT_PROFILES_MAX 16
#define GP_AGENT_PARTS_MAX    (GP_AGENT_DEVICES_MAX * 8)
#define GP_AGENT_VENDORS_MAX  8

/* A card in partition mode: its vendor's handle (NULL: not in that mode)
 * and profiles. */
struct gp_agent_card {
	void *h;
	struct gp_partition_profile profile[GP_AGENT_PROFILES_MAX];
	int profiles;
};

/* A partition on one of the cards. */
struct gp_agent_part {
	int64_t task;                   /* its task; 0: ended, being destroyed; -1: made
					 * by hand, not the agent's */
	unsigned device;                /* its card, as the node numbers it */
	char uuid[GP_DEVICE_TEXT_MAX];
	uint8_t units;                  /* of its card, a bit each */
	struct gp_region *region;       /* its task's limits: the agent's, while it runs */
	uint64_t retry_ms;              /* ended: when to try destroying it again */
};

struct gp_agent_parts {
	struct {
		const struct gp_vendor_ops *ops;
		void *h;
	} vendor[GP_AGENT_VENDORS_MAX]; /* each opened once */
	unsigned vendors;
	struct gp_agent_card card[GP_AGENT_DEVICES_MAX];
	struct gp_agent_part part[GP_AGENT_PARTS_MAX];
	int n;
	uint64_t refresh_ms;            /* when to look for partitions made by hand */
};

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
	struct gp_agent_parts parts;    /* the loop's thread's only */
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

/* partitions.c: the cards in partition mode and the partitions of the
 * tasks on them. gp_parts_open reads each card's profiles (setting its
 * partition_set, or saying why it is not used) and what a previous agent
 * made (the ledger in RUN_DIR/tasks). gp_parts_make makes task t's
 * partitions (1), or none when its cards are not in partition mode (0);
 * on failure says why and leaves none. gp_parts_end destroys a task's
 * (now, or at a later gp_parts_retry while its driver holds them);
 * gp_parts_adopted, those of tasks a previous agent left that no
 * adoption took (the loop's thread, which alone changes the task
 * table). */
int gp_parts_open(struct gp_agent *a, char *err, size_t err_len);
void gp_parts_close(struct gp_agent *a);
bool gp_parts_card(const struct gp_agent *a, unsigned device);
int gp_parts_make(struct gp_agent *a, const struct gp_agent_task *t, char *err, size_t err_len);
const struct gp_agent_part *gp_parts_of(const struct gp_agent *a, int64_t task, unsigned device);
void gp_parts_end(struct gp_agent *a, int64_t task);
void gp_parts_retry(struct gp_agent *a);
void gp_parts_adopted(struct gp_agent *a);

/* watch.c: the verifier's thread. */
int gp_agent_watch_start(struct gp_agent *a, char *err, size_t err_len);
void gp_agent_watch_stop(struct gp_agent *a);

#endif
