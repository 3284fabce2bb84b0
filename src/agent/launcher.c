/* launcher.c — a task's process group: start, reap, stop (launcher.h).
 *
 * Everything the child needs is prepared before fork (the environment,
 * the log and /dev/null descriptors), so that the child only calls
 * async-signal-safe functions between fork and exec. A pipe closed on exec
 * carries the child's errno back when it cannot set itself up or exec the
 * shell: gp_launch_start then reports the error instead of a task that
 * died at once. */
#include "agent/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define SHELL "/bin/sh"
#define STOP_POLL_NS 5000000L   /* 5 ms */
#define KILL_WAIT_MS 1000       /* for SIGKILLed members to be reaped */

/* Does "NAME=value" entry `e` set the same name as `extra`? */
static bool same_name(const char *e, const char *extra)
{
	size_t n = strcspn(extra, "=");

	return !strncmp(e, extra, n) && e[n] == '=';
}

static bool overridden(const char *e, const char *const *extra)
{
	for (; extra && *extra; extra++)
		if (same_name(e, *extra))
			return true;
	return false;
}

/* The agent's environment with the task's entries added or replacing
 * ours. The array is malloc'ed; its strings are borrowed. */
static char **env_build(const char *const *extra)
{
	size_t n = 0, k = 0;
	char **env;

	for (char **e = environ; *e; e++)
		n++;
	for (const char *const *x = extra; x && *x; x++)
		n++;
	env = malloc((n + 1) * sizeof(*env));
	if (!env)
		return NULL;
	for (char **e = environ; *e; e++)
		if (!overridden(*e, extra))
			env[k++] = *e;
	for (const char *const *x = extra; x && *x; x++)
		env[k++] = (char *)*x;
	env[k] = NULL;
	return env;
}

/* In the child: become the group's leader, set up, exec the shell. On
 * failure, writes errno to `report` and exits 127. */
static void child_run(const struct gp_launch *spec, char **env, int in, int out, int report)
{
	char *argv[] = { "sh", "-c", (char *)spec->command, NULL };
	struct rlimit files = { spec->max_open_files, spec->max_open_files };
	sigset_t none;
	int err;

	/* The task starts with no signal blocked or ignored, whatever the
	 * agent inherited (a shell's `&` ignores SIGINT and SIGQUIT). */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (setpgid(0, 0) < 0 || (spec->workdir && chdir(spec->workdir) < 0) ||
	    dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(out, STDERR_FILENO) < 0 ||
	    (spec->max_open_files && setrlimit(RLIMIT_NOFILE, &files) < 0))
		goto fail;
	execve(SHELL, argv, env);
fail:
	err = errno;
	if (write(report, &err, sizeof(err)) < 0) {
		/* nobody to tell */
	}
	_exit(127);
}

/* The parent's side: the child's errno if it failed before exec, else 0. */
static int child_outcome(pid_t pid, int report)
{
	int err = 0;
	ssize_t got;

	do
		got = read(report, &err, sizeof(err));
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof(err)) {
		waitpid(pid, NULL, 0);
		return -err;
	}
	return 0;
}

int gp_launch_start(const struct gp_launch *spec, pid_t *ret_pgid)
{
	int in = -1, out = -1, pipefd[2] = { -1, -1 }, r = 0;
	char **env = NULL;
	pid_t pid;

	if (!spec || !spec->command || !*spec->command || !ret_pgid)
		return -EINVAL;
	in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	out = open(spec->log_path ? spec->log_path : "/dev/null",
		   O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	env = env_build(spec->env);
	if (in < 0 || out < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
		r = -errno;
		goto out;
	}
	if (!env) {
		r = -ENOMEM;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	if (pid == 0)
		child_run(spec, env, in, out, pipefd[1]);
	setpgid(pid, pid);      /* also here: signals may follow at once */
	close(pipefd[1]);
	pipefd[1] = -1;
	r = child_outcome(pid, pipefd[0]);
	if (r == 0)
		*ret_pgid = pid;
out:
	free(env);
	for (int i = 0; i < 2; i++)
		if (pipefd[i] >= 0)
			close(pipefd[i]);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return r;
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
