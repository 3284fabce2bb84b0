/* proc.c — process identity from /proc (see proc.h), and from kill(pid, 0)
 * where /proc hides it. */
#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

bool gp_proc_hidden(pid_t pid)
{
	char path[32];
	struct stat st;
	int saved = errno;
	bool hidden;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	hidden = pid > 0 && stat(path, &st) < 0 && errno == ENOENT && kill(pid, 0) < 0 &&
		 errno == EPERM;
	errno = saved;
	return hidden;
}

uint64_t gp_proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');          /* the command name may hold spaces */
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	/* After ") S": fields 4..21, then starttime (field 22). */
	p += 2;
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start) != 1)
		return 0;
	return start;
}

void gp_proc_kill_if(pid_t pid, bool (*still)(pid_t pid, const void *ctx), const void *ctx)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		return;
	if (still(pid, ctx))
		syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
	close(fd);
}
