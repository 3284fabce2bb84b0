/* cgroup.h — a cgroup (v2) per task, so that a task's processes stay its
 * own whatever they do.
 *
 * A process group is not enough to hold a task: a child that calls
 * setsid(), a double fork or a daemon leaves it, keeps its device memory
 * and outlives the task. A cgroup cannot be left without write access to
 * another cgroup, which tasks (unprivileged users) do not have; so the
 * agent puts each task in its own cgroup before its first instruction,
 * stops it with cgroup.kill, and knows that it has ended when the cgroup
 * is empty. A process's cgroup also tells the verifier which task a
 * device process belongs to.
 *
 * Layout: the agent's subtree is
 *
 *   <cgroup2 mount><the server's own cgroup>/gpupool-<tag>/task-ID
 *
 * where tag names the agent (its run directory), so that two servers on
 * one machine (tests do that) never touch each other's tasks, and a
 * restarted server finds the tasks its predecessor left
 * (gp_cgroups_tasks): it adopts those it knows and clears the others. A
 * server in a cgroup named "supervisor" (systemd's DelegateSubgroup=)
 * makes its subtree beside it, in its parent, which then holds no process
 * and may hand controllers down.
 *
 * Limits (gp_cgroups_limit): memory.max (no swap beyond it, the whole
 * task killed when the kernel kills one of it for memory) and pids.max
 * in each task's cgroup. The memory and pids controllers are enabled in
 * the subtree's cgroup.subtree_control, and in its parent's when that has
 * no process of its own ("no internal processes": a cgroup v2 that holds
 * processes cannot hand controllers down). Where cgroup v2 does not have
 * a controller (a machine whose controllers are cgroup v1's: systemd's
 * "hybrid" layout), the task gets a cgroup of the v1 hierarchy that has
 * it, gpupool-<tag>/task-ID under the server's own there, and its limit
 * there (memory.limit_in_bytes and memsw, pids.max); the v2 cgroup still
 * holds, stops and names the task. Where neither has it, that limit is
 * not applied, and gp_cgroups_limits_text says why.
 *
 * Where the machine has no cgroup v2, or it is not writable (an
 * unprivileged server), gp_cgroups_open fails with the reason and the
 * agent falls back to process groups (agent.h).
 *
 * Used from the agent's threads: gp_cgroups_task_of only reads /proc and
 * may be called from any thread; the others from one thread at a time.
 * Functions return 0 or a negative errno; nothing prints. Ownership:
 * gp_cgroups_open returns a handle freed with gp_cgroups_free. */
#ifndef GP_AGENT_CGROUP_H
#define GP_AGENT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gp_cgroups;

/* What each task's cgroup is held to; 0: not limited. */
struct gp_cgroup_limits {
	uint64_t memory_max; /* bytes of RAM; no swap past it */
	uint64_t pids_max;   /* processes and threads */
};

/* The cgroups a new task's first process joins, by writing "0" to each
 * descriptor (cgroup.procs files, O_CLOEXEC): the v2 cgroup first, then
 * v1 ones for limits. The caller closes them (gp_cgroup_join_close). */
#define GP_CGROUP_JOIN_MAX 3
struct gp_cgroup_join {
	int fd[GP_CGROUP_JOIN_MAX];
	int n;
};
void gp_cgroup_join_close(struct gp_cgroup_join *j);

/* Opens (making) the agent's subtree. `where`: NULL or "auto" for the
 * layout above, else the absolute path of the subtree to use (it must
 * be in a cgroup2 filesystem). How many task cgroups a previous agent
 * left in it in *ret_left (may be NULL); nothing is killed. On failure
 * says why in err (-ENOENT: no cgroup v2 here; -EACCES: not writable;
 * -ENOTSUP: no cgroup.kill, a kernel older than 5.14). */
int gp_cgroups_open(const char *where, const char *tag, struct gp_cgroups **ret,
		    int *ret_left, char *err, size_t err_len);
/* Removes the cgroups of tasks that have ended, and the subtree when no
 * other is left in it (the tasks that still run keep theirs, for the
 * next agent to find); accepts NULL, returns NULL. */
struct gp_cgroups *gp_cgroups_free(struct gp_cgroups *c);

/* The subtree's path, for messages. */
const char *gp_cgroups_path(const struct gp_cgroups *c);

/* Sets the limits of the tasks made from now on, enabling the
 * controllers they need (above). Never fails: a limit that cannot be
 * applied is left out, and said so in gp_cgroups_limits_text. */
void gp_cgroups_limit(struct gp_cgroups *c, const struct gp_cgroup_limits *limits);

/* What the limits are and where they hold, or why not (one line, for the
 * server's start-up lines). */
const char *gp_cgroups_limits_text(const struct gp_cgroups *c);

/* Makes the cgroup of task `task` (a leftover of the same id is killed
 * and removed first), with its limits, and opens what a child writes "0"
 * to, to move itself in (gp_launch does, before exec), into *ret. On
 * failure nothing is left made or open. */
int gp_cgroups_make(struct gp_cgroups *c, int64_t task, struct gp_cgroup_join *ret);

/* How many of the task's processes the kernel killed for memory (its
 * memory.events, or v1's memory.oom_control): 0 when none or when memory
 * is not limited, or a negative errno. Read before the cgroup is removed. */
int gp_cgroups_oom_kills(const struct gp_cgroups *c, int64_t task);

/* Sends sig to every process in the task's cgroup (there is no cgroup-
 * wide signal but SIGKILL): for SIGTERM at the start of a grace period.
 * Returns how many were signalled. */
int gp_cgroups_signal(struct gp_cgroups *c, int64_t task, int sig);

/* SIGKILL to every process in the cgroup, at once and atomically with
 * respect to forks (cgroup.kill). */
int gp_cgroups_kill(struct gp_cgroups *c, int64_t task);

/* 1 while a process is in the task's cgroup, 0 once it is empty (or
 * gone), or a negative errno. */
int gp_cgroups_populated(struct gp_cgroups *c, int64_t task);

/* The tasks whose cgroups the subtree holds, up to max ids in out;
 * returns how many there are (out may be NULL when max is 0). */
int gp_cgroups_tasks(const struct gp_cgroups *c, int64_t *out, int max);

/* Kills what is in the task's cgroup, waits (up to 2 s) for it to
 * empty, and removes it. */
int gp_cgroups_clear(struct gp_cgroups *c, int64_t task);

/* Removes the (empty) cgroup, and its v1 ones: -EBUSY while a process is
 * in it. */
int gp_cgroups_remove(struct gp_cgroups *c, int64_t task);

/* The task whose cgroup pid is in, from /proc/PID/cgroup; -ENOENT when
 * it is in none of this subtree's (or has exited). */
int gp_cgroups_task_of(const struct gp_cgroups *c, pid_t pid, int64_t *ret_task);

#endif
