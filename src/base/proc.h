/* proc.h — telling whether a process is still the one we knew.
 *
 * Shared state keyed by pid (simdev's process slots, the interposer's
 * regions) must notice a process that died, including one killed with
 * SIGKILL, one that is a zombie, and a pid the kernel has since reused. A
 * process is identified by (pid, start time); gp_proc_start_time gives the
 * second half, or 0 when there is no live, non-zombie process. */
#ifndef GP_BASE_PROC_H
#define GP_BASE_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Start time of pid in clock ticks since boot (/proc/PID/stat field 22),
 * or 0 when it does not exist, is a zombie or is dead. Async-signal-safe
 * in practice (open/read/close only). */
uint64_t gp_proc_start_time(pid_t pid);

/* Does pid exist, though this process cannot see it in /proc? So it is
 * with another user's process in a task's /proc, mounted with
 * hidepid=invisible (agent/launcher.h): /proc/PID is not there, yet
 * kill(pid, 0) says EPERM, not ESRCH. Leaves errno as it was. */
bool gp_proc_hidden(pid_t pid);

/* Kills pid with SIGKILL if still(pid, ctx) says it is still the process
 * meant (asked after a pidfd pins it, so that a pid reused meanwhile is
 * never hit): the verifiers' kill, once. */
void gp_proc_kill_if(pid_t pid, bool (*still)(pid_t pid, const void *ctx), const void *ctx);

/* Is (pid, start_time) still alive? A hidden process (above) is taken to
 * be the one we knew: its start time cannot be read, and taking it for
 * dead would free what it holds in shared state. At worst a pid reused
 * by another user keeps a slot until it exits; the agent, which sees
 * every process, frees it at its task's end. */
static inline bool gp_proc_alive(pid_t pid, uint64_t start_time)
{
	uint64_t now;

	if (pid <= 0 || start_time == 0)
		return false;
	now = gp_proc_start_time(pid);
	return now == start_time || (now == 0 && gp_proc_hidden(pid));
}

#endif
