/* launcher.h — starting, watching and stopping a task's processes.
 *
 * The agent runs each task as its own process group (the task's shell
 * and everything it starts), so that one signal reaches all of it: a
 * cancel or a preemption sends SIGTERM to the group and, when the group
 * outlives the grace period, SIGKILL. The task's output goes to a log
 * file or pipe (`gpupool logs ID` reads it); its environment is exactly
 * the one it is given (agent.c builds it: nothing of the agent's leaks),
 * and it may run as another user, in a cgroup of its own (cgroup.h).
 * Failures to start (no such directory, a log that cannot be written, a
 * user who cannot read the interposer) come back as errors from
 * gp_launch_start, with the reason, not as a task that dies at once.
 *
 * Functions return 0 or a negative errno; nothing prints or exits. */
#ifndef GP_AGENT_LAUNCHER_H
#define GP_AGENT_LAUNCHER_H

#include <stdbool.h>
#include <sys/types.h>

/* The Unix identity a task runs as. */
struct gp_launch_user {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;            /* supplementary groups (groups_n of them) */
	int groups_n;
};

struct gp_launch {
	const char *command;            /* run by /bin/sh -c */
	const char *workdir;            /* entered as the task's user; NULL: the agent's */
	const char *log_path;           /* stdout and stderr, appended; NULL: log_fd */
	int log_fd;                     /* when log_path is NULL and log_fd > 0: stdout and
					 * stderr go there (a pipe); else /dev/null */
	const char *const *env;         /* the task's whole environment, NULL-terminated:
					 * nothing of the agent's is inherited */
	unsigned long max_open_files;   /* RLIMIT_NOFILE; 0: the agent's */
	const struct gp_launch_user *user;      /* NULL: the agent's own user */
	const int *cgroup_fds;          /* cgroup.procs files the child joins first, in
					 * order (cgroup.h: its v2 cgroup, v1 ones) */
	int cgroup_fds_n;
	const char *preload;            /* when set: must be readable by the task's user */
	const char *keeper_status;      /* when set: a keeper leads the task (below) and
					 * writes the shell's exit code into this file */
	const char *keeper_name;        /* the keeper's name (/proc/PID/comm), 15 bytes */
	int keep_fd;                    /* > 0: held by the keeper for the task's life */
	const char *start_mark;         /* with a keeper: its start mark (below); NULL:
					 * none */
	/* As root, a mount namespace of the task's own (below): */
	unsigned long long tmp_bytes;   /* > 0: a tmpfs of this size on /tmp, /dev/shm */
	const char *tmp_home;           /* ... and on this directory (the task's $HOME),
					 * the task's user's (mode 0700); NULL: none */
	bool private_proc;              /* a /proc of its user's processes only */
};

/* A task's own mounts. When tmp_bytes or private_proc is set, the shell
 * (not its keeper) enters a mount namespace of its own before its
 * identity changes, which no mount of the task's reaches the machine
 * from (/ made a slave: the machine's later mounts still reach it). In
 * it, /tmp and /dev/shm are tmpfs of at most tmp_bytes each (mode 1777,
 * nosuid, nodev), and so is tmp_home, the user's alone; what the task
 * writes there is its alone, and is freed with its last process, when
 * the namespace goes. private_proc mounts a fresh /proc with
 * hidepid=invisible (Linux 5.8: each such mount is its own instance, so
 * the machine's /proc is untouched): the task sees only its own user's
 * processes, not other tenants' command lines. A task whose working
 * directory or interposer lies under /tmp does not start (its /tmp is
 * empty): the error says so. */

/* A keeper: the task's group leader (its pgid, the pid gp_launch_start
 * gives) is then not the shell but a process of the agent's own, forked
 * before the identity changes: it stays root (no task can signal,
 * trace or kill it), ignores every signal it may, holds keep_fd (the
 * task's log: its writers never get SIGPIPE while no server reads it),
 * waits for the shell, writes the shell's code (as a shell reports it)
 * into keeper_status, and exits with that code. So a task outlives the
 * agent that started it, and the next one learns how it ended. */

/* The start mark: whether the task's program may have run, as a file
 * that exists or not. The keeper makes it — a symbolic link whose
 * target is its pid, made in one step (symlink(2)), which fails when the
 * name exists — after it has joined the task's cgroup and before it
 * forks the shell that runs the task's program; when the name is taken
 * it runs nothing (the start fails with -EEXIST). Until the mark is
 * made, the keeper dies with the thread that launched it
 * (PR_SET_PDEATHSIG, SIGKILL). So once the agent that launched a task is
 * gone, no mark means that no process of the task ran its program, and
 * none ever will: a later agent can claim the name itself (making the
 * keeper's attempt fail, should one still be on its way) and queue the
 * task again without running it twice (agent.h, gp_agent_adopt). A mark
 * means it may have run. The caller removes a stale mark before a
 * start. */
/* Can this process give tasks their own mounts (above)? Tries each, in a
 * child of its own, and says in *ret_tmp and *ret_proc which work (a
 * tmpfs on /tmp; a /proc with hidepid=invisible); for each that does
 * not, why in err ("" when both work: a mount needs root with
 * CAP_SYS_ADMIN, and hidepid=invisible Linux 5.8). 0, or a negative errno
 * when the child could not be made. */
int gp_launch_mounts_probe(bool *ret_tmp, bool *ret_proc, char *err, size_t err_len);

/* Starts the task; its process group id (= the shell's pid) in *ret_pgid.
 * The child joins its cgroup, takes its output, limits and identity
 * (setgroups, setgid, setuid, and no_new_privs so that no set-uid
 * program gives any back), closes every other descriptor of the agent's
 * at exec, and only then enters its working directory and checks that it
 * can read its preload, as the task's user. When a step fails the child
 * says which, and gp_launch_start returns its errno with the reason in
 * err ("as uid 600002: cannot enter the working directory /root/x:
 * Permission denied"). */
int gp_launch_start(const struct gp_launch *spec, pid_t *ret_pgid, char *err,
		    size_t err_len);

/* Has the group's leader exited? Returns 1 and its exit code in *ret_code
 * (128 + N when killed by signal N, as shells report it), 0 while it
 * runs, or a negative errno. Waits for the exit when `block`. The task
 * ends with its shell: members of the group still running then are
 * killed (SIGKILL) before the shell is reaped. */
int gp_launch_reap(pid_t pgid, bool block, int *ret_code);

/* Reaps the group's leader if it has exited, killing nothing: 1 with
 * its code, 0 while it runs, or a negative errno. For a task in a
 * cgroup, whose members are stopped through the cgroup. */
int gp_launch_reap_leader(pid_t pgid, int *ret_code);

/* What gp_launch_reap_group has seen of a group: the leader's code once
 * it has exited. Starts zeroed. */
struct gp_launch_exit {
	bool leader_gone;
	int code; /* as gp_launch_reap gives it */
};

/* For a group being stopped without blocking (the caller sent SIGTERM
 * and sends SIGKILL once the grace period is over): reaps what of the
 * group has exited, keeping the leader's code in *state, and kills
 * nothing, so that the members left when the shell exits first (a shell
 * that runs the program as its child dies of SIGTERM at once) still get
 * their grace period. Returns 1 once no member that is ours to wait for
 * is left (the caller should be a child subreaper, as for
 * gp_launch_stop), 0 while some are. */
int gp_launch_reap_group(pid_t pgid, struct gp_launch_exit *state);

/* Stops the whole group: SIGTERM, then SIGKILL to whatever is left after
 * grace_ms. Returns once no member is left that is ours to wait for, the
 * leader's code in *ret_code (which may be NULL); -ECHILD when the group
 * was already gone. The caller should be a child subreaper
 * (PR_SET_CHILD_SUBREAPER), so that members orphaned by their shell are
 * its children: they are then waited for (and killed after the grace)
 * too. The group is only ever signalled while one of its members is an
 * unreaped child, so a recycled group id is never hit. */
int gp_launch_stop(pid_t pgid, unsigned grace_ms, int *ret_code);

#endif
