/* launcher.c — a task's process group: start, reap, stop (launcher.h).
 *
 * Everything the child needs is prepared before fork (the environment,
 * the log and /dev/null descriptors, the cgroup's procs file, the user's
 * groups), so that the child only calls async-signal-safe functions
 * between fork and exec. A pipe closed on exec carries back which step of
 * the child's set-up failed and its errno: gp_launch_start then reports
 * the error instead of a task that died at once. */
#include "agent/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SHELL "/bin/sh"
#define STOP_POLL_NS 5000000L   /* 5 ms */
#define KILL_WAIT_MS 1000       /* for SIGKILLed members to be reaped */

/* The steps of the child's set-up, in order: the one that failed goes
 * back to the parent with its errno. */
enum step {
	STEP_TIE,
	STEP_CGROUP,
	STEP_OUTPUT,
	STEP_LIMITS,
	STEP_MARK,
	STEP_KEEPER,
	STEP_MOUNTS,
	STEP_GROUPS,
	STEP_GID,
	STEP_UID,
	STEP_PRIVS,
	STEP_WORKDIR,
	STEP_PRELOAD,
	STEP_EXEC,
};

struct report {
	int step;
	int err;
};

/* In the child, first, when it is to make a start mark: it dies with the
 * thread that forked it (the agent's), until it has made the mark
 * (launcher.h); an agent already gone means no start. */
static bool child_tie(const struct gp_launch *spec, pid_t agent, int *ret_step)
{
	*ret_step = STEP_TIE;
	if (!spec->start_mark || !spec->keeper_status)
		return true;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return false;
	if (getppid() == agent)
		return true;
	errno = ESRCH;
	return false;
}

/* The options of the task's own mounts, written before fork. */
struct mount_opts {
	char tmp[64];
	char home[128];
};

/* In the child, before the identity changes: its own process group and
 * cgroup, a clean signal state, its output, its limits. */
static bool child_prepare(const struct gp_launch *spec, int in, int out, int *ret_step)
{
	struct rlimit files = { spec->max_open_files, spec->max_open_files };
	sigset_t none;

	/* The task starts with no signal blocked or ignored, whatever the
	 * agent inherited (a shell's `&` ignores SIGINT and SIGQUIT). */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	*ret_step = STEP_CGROUP;
	if (setpgid(0, 0) < 0)
		return false;
	for (int i = 0; i < spec->cgroup_fds_n; i++)
		if (write(spec->cgroup_fds[i], "0", 1) != 1)
			return false;
	*ret_step = STEP_OUTPUT;
	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(out, STDERR_FILENO) < 0)
		return false;
	*ret_step = STEP_LIMITS;
	return !spec->max_open_files || setrlimit(RLIMIT_NOFILE, &files) == 0;
}

/* In the shell's child, still root: the task's own mounts (launcher.h). */
static bool child_mounts(const struct gp_launch *spec, const struct mount_opts *m,
			 int *ret_step)
{
	const unsigned long flags = MS_NOSUID | MS_NODEV;

	*ret_step = STEP_MOUNTS;
	if (!spec->tmp_bytes && !spec->private_proc)
		return true;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return false;
	if (spec->tmp_bytes && (mount("tmpfs", "/tmp", "tmpfs", flags, m->tmp) < 0 ||
				mount("tmpfs", "/dev/shm", "tmpfs", flags, m->tmp) < 0))
		return false;
	if (spec->tmp_bytes && spec->tmp_home &&
	    mount("tmpfs", spec->tmp_home, "tmpfs", flags, m->home) < 0)
		return false;
	return !spec->private_proc || mount("proc", "/proc", "proc", flags | MS_NOEXEC,
					    "hidepid=invisible") == 0;
}

/* In the child: becomes the task's user, for good (no set-uid program
 * gives privileges back), then enters its directory as that user. */
static bool child_become(const struct gp_launch *spec, int *ret_step)
{
	const struct gp_launch_user *u = spec->user;

	if (u) {
		*ret_step = STEP_GROUPS;
		if (setgroups((size_t)u->groups_n, u->groups) < 0)
			return false;
		*ret_step = STEP_GID;
		if (setresgid(u->gid, u->gid, u->gid) < 0)
			return false;
		*ret_step = STEP_UID;
		if (setresuid(u->uid, u->uid, u->uid) < 0)
			return false;
		*ret_step = STEP_PRIVS;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			return false;
	}
	*ret_step = STEP_WORKDIR;
	if (spec->workdir && chdir(spec->workdir) < 0)
		return false;
	*ret_step = STEP_PRELOAD;
	return !spec->preload || access(spec->preload, R_OK) == 0;
}

static int exit_code(int status);

/* v in decimal, written backwards from end (which is not written);
 * returns where it starts. Async-signal-safe. */
static char *decimal(char *end, unsigned long v)
{
	do
		*--end = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	return end;
}

/* In the child, the keeper-to-be: makes the start mark, a symbolic link
 * to its pid, in one step that fails when the name is taken; only then
 * does it outlive the agent (launcher.h). Async-signal-safe. */
static bool mark_make(const struct gp_launch *spec, int *ret_step)
{
	char pid[24];

	*ret_step = STEP_MARK;
	pid[sizeof(pid) - 1] = '\0';
	if (!spec->start_mark)
		return true;
	if (symlink(decimal(pid + sizeof(pid) - 1, (unsigned long)getpid()),
		    spec->start_mark) < 0)
		return false;
	return prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0) == 0;
}

/* Writes "CODE\n" into path; async-signal-safe. */
static void status_write(const char *path, int code)
{
	char text[16], *p = text + sizeof(text);
	int fd;

	*--p = '\n';
	p = decimal(p, (unsigned long)code);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, p, (size_t)(text + sizeof(text) - p)) < 0) {
		/* the next agent will not know the code */
	}
	close(fd);
}

/* The kernel never kills the keeper for memory: when its task reaches
 * its memory.max, the task dies (memory.oom.group), and the keeper lives
 * to say how. Root may set this; anyone else changes nothing. */
static void oom_spare(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "-1000", 5) < 0) {
		/* not root: the keeper is no more likely a victim than any */
	}
	close(fd);
}

/* The keeper (launcher.h): waits for the shell, says how it ended. */
static void keeper_run(const struct gp_launch *spec, pid_t shell)
{
	int status, code = 127;
	pid_t p;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGCHLD)
			signal(sig, SIG_IGN); /* SIGKILL and SIGSTOP stay as they are */
	if (spec->keeper_name)
		prctl(PR_SET_NAME, spec->keeper_name, 0, 0, 0);
	oom_spare();
	/* It holds no end of the task's output (the log sees the end when
	 * the task's processes are gone), nothing of the agent's, but the
	 * descriptor it is to keep. */
	if (spec->keep_fd > 0)
		dup2(spec->keep_fd, STDIN_FILENO);
	syscall(SYS_close_range, 1U, ~0U, 0U);
	do
		p = waitpid(shell, &status, 0);
	while (p < 0 && errno == EINTR);
	if (p == shell)
		code = exit_code(status);
	status_write(spec->keeper_status, code);
	_exit(code);
}

/* In the child: set up, exec the shell (after forking off the keeper,
 * when there is one: the shell is then its child). On failure, writes
 * the step and errno to `report` and exits 127. Only async-signal-safe
 * calls. */
static void child_run(const struct gp_launch *spec, const struct mount_opts *m, pid_t agent,
		      int in, int out, int report)
{
	char *argv[] = { "sh", "-c", (char *)spec->command, NULL };
	struct report what = { 0 };
	bool ready = child_tie(spec, agent, &what.step) &&
		     child_prepare(spec, in, out, &what.step);

	if (ready && spec->keeper_status && (ready = mark_make(spec, &what.step))) {
		pid_t shell;

		what.step = STEP_KEEPER;
		shell = fork();
		ready = shell >= 0;
		if (shell > 0)
			keeper_run(spec, shell);
	}
	if (ready && child_mounts(spec, m, &what.step) && child_become(spec, &what.step)) {
		/* Every descriptor of the agent's but the report pipe (itself
		 * close-on-exec) is closed at exec, whoever opened it. */
		syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
		what.step = STEP_EXEC;
		execve(SHELL, argv, (char **)spec->env);
	}
	what.err = errno;
	if (write(report, &what, sizeof(what)) < 0) {
		/* nobody to tell */
	}
	_exit(127);
}

/* Is path in /tmp or /dev/shm, which a task with its own sees empty? */
static bool under_tmp(const char *path)
{
	return !strncmp(path, "/tmp/", 5) || !strncmp(path, "/dev/shm/", 9) ||
	       !strcmp(path, "/tmp") || !strcmp(path, "/dev/shm");
}

/* What a failed step means, for the reason. */
static void step_text(const struct gp_launch *spec, const struct report *what, char *err,
		      size_t len)
{
	static const char *const steps[] = {
		[STEP_TIE] = "cannot tie its keeper to the agent",
		[STEP_CGROUP] = "cannot join its cgroup",
		[STEP_OUTPUT] = "cannot take its output",
		[STEP_LIMITS] = "cannot set its open-file limit",
		[STEP_MARK] = "cannot make its start mark",
		[STEP_KEEPER] = "cannot fork its keeper",
		[STEP_MOUNTS] = "cannot make its own /tmp, /dev/shm, $HOME or /proc",
		[STEP_GROUPS] = "cannot set its groups",
		[STEP_GID] = "cannot take its group id",
		[STEP_UID] = "cannot take its user id",
		[STEP_PRIVS] = "cannot drop the right to gain privileges",
		[STEP_WORKDIR] = "cannot enter the working directory",
		[STEP_PRELOAD] = "cannot read the interposer",
		[STEP_EXEC] = "cannot start " SHELL,
	};
	const char *path = what->step == STEP_WORKDIR   ? spec->workdir
			   : what->step == STEP_PRELOAD ? spec->preload
			   : what->step == STEP_MARK	? spec->start_mark
							: NULL;
	char who[48] = "";

	if (spec->user)
		snprintf(who, sizeof(who), "as uid %u: ", (unsigned)spec->user->uid);
	snprintf(err, len, "%s%s%s%s: %s%s", who,
		 what->step >= 0 && what->step <= STEP_EXEC ? steps[what->step] : "set-up",
		 path ? " " : "", path ? path : "", strerror(what->err),
		 spec->tmp_bytes && path && under_tmp(path)
			 ? " (the task's /tmp and /dev/shm are its own, empty at its start)"
			 : "");
}

/* The parent's side: the child's errno if it failed before exec, else 0. */
static int child_outcome(const struct gp_launch *spec, pid_t pid, int report, char *err,
			 size_t err_len)
{
	struct report what = { 0 };
	ssize_t got;

	do
		got = read(report, &what, sizeof(what));
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof(what))
		return 0;
	waitpid(pid, NULL, 0);
	step_text(spec, &what, err, err_len);
	return what.err ? -what.err : -EIO;
}

/* The descriptors the child's output goes to: the log (opened here) or
 * the given one, and /dev/null for its input. */
static int output_open(const struct gp_launch *spec, int *ret_in, int *ret_out, bool *ret_own,
		       char *err, size_t err_len)
{
	const char *path = spec->log_path ? spec->log_path : "/dev/null";
	int r;

	*ret_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	*ret_own = !(spec->log_path == NULL && spec->log_fd > 0);
	*ret_out = *ret_own ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)
			    : spec->log_fd;
	if (*ret_in >= 0 && *ret_out >= 0)
		return 0;
	r = -errno;
	snprintf(err, err_len, "cannot open %s: %s", *ret_in < 0 ? "/dev/null" : path,
		 strerror(-r));
	return r;
}

int gp_launch_start(const struct gp_launch *spec, pid_t *ret_pgid, char *err,
		    size_t err_len)
{
	int in = -1, out = -1, pipefd[2] = { -1, -1 }, r;
	struct mount_opts m;
	bool own_out = true;
	pid_t pid, agent = getpid();

	if (!spec || !spec->command || !*spec->command || !spec->env || !ret_pgid) {
		snprintf(err, err_len, "no command or no environment to start");
		return -EINVAL;
	}
	r = output_open(spec, &in, &out, &own_out, err, err_len);
	if (r == 0 && pipe2(pipefd, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(err, err_len, "cannot make a pipe: %s", strerror(-r));
	}
	if (r < 0)
		goto out;
	snprintf(m.tmp, sizeof(m.tmp), "size=%llu,mode=1777", spec->tmp_bytes);
	if (spec->user)
		snprintf(m.home, sizeof(m.home), "size=%llu,mode=0700,uid=%u,gid=%u",
			 spec->tmp_bytes, (unsigned)spec->user->uid, (unsigned)spec->user->gid);
	else
		snprintf(m.home, sizeof(m.home), "size=%llu,mode=0700", spec->tmp_bytes);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		snprintf(err, err_len, "cannot fork: %s", strerror(-r));
		goto out;
	}
	if (pid == 0)
		child_run(spec, &m, agent, in, out, pipefd[1]);
	setpgid(pid, pid);      /* also here: signals may follow at once */
	close(pipefd[1]);
	pipefd[1] = -1;
	r = child_outcome(spec, pid, pipefd[0], err, err_len);
	if (r == 0)
		*ret_pgid = pid;
out:
	for (int i = 0; i < 2; i++)
		if (pipefd[i] >= 0)
			close(pipefd[i]);
	if (in >= 0)
		close(in);
	if (out >= 0 && own_out)
		close(out);
	return r;
}

/* In the probe's child: 0 or the errno of each mount, into report. */
static void probe_child(int report)
{
	int e[2] = { 0, 0 };

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		e[0] = e[1] = errno;
	if (!e[0] && mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0)
		e[0] = errno;
	if (!e[1] && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			   "hidepid=invisible") < 0)
		e[1] = errno;
	if (write(report, e, sizeof(e)) < 0) {
		/* the parent sees nothing, and takes it as no */
	}
	_exit(0);
}

int gp_launch_mounts_probe(bool *ret_tmp, bool *ret_proc, char *err, size_t err_len)
{
	int p[2], e[2] = { EIO, EIO };
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid == 0)
		probe_child(p[1]);
	close(p[1]);
	if (pid > 0 && read(p[0], e, sizeof(e)) != (ssize_t)sizeof(e))
		e[0] = e[1] = EIO;
	close(p[0]);
	if (pid < 0)
		return -errno;
	waitpid(pid, NULL, 0);
	*ret_tmp = e[0] == 0;
	*ret_proc = e[1] == 0;
	snprintf(err, err_len, "%s%s%s%s%s", e[0] ? "cannot mount a tmpfs (" : "",
		 e[0] ? strerror(e[0]) : "", e[0] ? ": it needs root with CAP_SYS_ADMIN)" : "",
		 e[0] && e[1] ? "; " : "",
		 e[1] == 0		   ? ""
		 : e[1] == EINVAL	   ? "cannot mount a /proc with hidepid=invisible (Linux "
					     "5.8 and later)"
		 : e[1] == e[0]	   ? "nor a /proc"
					   : "cannot mount a /proc with hidepid=invisible");
	return 0;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* Has the leader exited? Looks without reaping it: while it is an
 * unreaped zombie, its pid, and so the group id, cannot be reused. */
static int leader_exited(pid_t pgid, bool block)
{
	siginfo_t info = { 0 };
	int r;

	do
		r = waitid(P_PID, (id_t)pgid, &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return info.si_pid != 0;
}

int gp_launch_reap(pid_t pgid, bool block, int *ret_code)
{
	int status, r;

	if (pgid <= 0)
		return -EINVAL;
	r = leader_exited(pgid, block);
	if (r <= 0)
		return r;
	/* The task ended with its shell: what it left behind goes too,
	 * killed while the zombie still holds the group id. */
	kill(-pgid, SIGKILL);
	while (waitpid(pgid, &status, 0) < 0 && errno == EINTR)
		;
	if (ret_code)
		*ret_code = exit_code(status);
	return 1;
}

int gp_launch_reap_leader(pid_t pgid, int *ret_code)
{
	int status;
	pid_t p;

	if (pgid <= 0)
		return -EINVAL;
	do
		p = waitpid(pgid, &status, WNOHANG);
	while (p < 0 && errno == EINTR);
	if (p <= 0)
		return p < 0 ? -errno : 0;
	if (ret_code)
		*ret_code = exit_code(status);
	return 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Reaps what of the group has exited (noting the leader's code) and
 * tells whether any member is left that is ours to wait for. With the
 * caller a child subreaper, every member is, in the end: orphans are
 * reparented to it. While it has one, alive or zombie, the group id is
 * held, so signalling the group cannot reach a stranger. */
static bool group_left(pid_t pgid, bool *leader_gone, int *code)
{
	for (;;) {
		int status;
		pid_t p = waitpid(-pgid, &status, WNOHANG);

		if (p <= 0)
			return p == 0;
		if (p == pgid) {
			*leader_gone = true;
			*code = exit_code(status);
		}
	}
}

int gp_launch_reap_group(pid_t pgid, struct gp_launch_exit *state)
{
	if (pgid <= 0 || !state)
		return -EINVAL;
	return group_left(pgid, &state->leader_gone, &state->code) ? 0 : 1;
}

int gp_launch_stop(pid_t pgid, unsigned grace_ms, int *ret_code)
{
	const struct timespec poll = { 0, STOP_POLL_NS };
	uint64_t deadline = now_ms() + grace_ms;
	bool leader_gone = false, killed = false;
	int code = 0;

	if (pgid <= 0)
		return -EINVAL;
	if (group_left(pgid, &leader_gone, &code))
		kill(-pgid, SIGTERM);
	else if (!leader_gone)
		return -ECHILD;
	while (group_left(pgid, &leader_gone, &code)) {
		if (now_ms() >= deadline) {
			if (killed)
				break;  /* unkillable (uninterruptible sleep): give up waiting */
			kill(-pgid, SIGKILL);
			killed = true;
			deadline = now_ms() + KILL_WAIT_MS;
		}
		nanosleep(&poll, NULL);
	}
	if (ret_code)
		*ret_code = code;
	return leader_gone ? 0 : -ETIMEDOUT;
}
