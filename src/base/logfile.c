/* logfile.c — the names of a task's log files and its offset file
 * (logfile.h). */
#include "base/logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

int gp_logfile_name(const char *path, const char *suffix, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s%s", path, suffix);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int gp_logfile_task_path(const char *log_dir, int64_t task, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/task-%" PRId64 ".log", log_dir, task);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int64_t gp_logfile_task_of(const char *name)
{
	long long id;
	char *end;

	if (strncmp(name, "task-", 5) != 0 || name[5] < '1' || name[5] > '9')
		return 0;
	errno = 0;
	id = strtoll(name + 5, &end, 10);
	if (errno || (strcmp(end, ".log") != 0 && strcmp(end, ".log" GP_LOGFILE_OLD_SUFFIX) != 0 &&
		      strcmp(end, ".log" GP_LOGFILE_OFFSET_SUFFIX) != 0))
		return 0;
	return (int64_t)id;
}

int gp_logfile_dir_free(const char *dir, uint64_t *ret_bytes)
{
	struct statvfs st;

	if (statvfs(dir, &st) < 0)
		return -errno;
	*ret_bytes = (uint64_t)st.f_bavail * (uint64_t)st.f_frsize;
	return 0;
}

/* Twenty decimal digits at text: their value. */
static int digits20(const char *text, uint64_t *ret)
{
	uint64_t v = 0;

	for (int i = 0; i < 20; i++) {
		unsigned d = (unsigned)(text[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

int gp_logfile_offset_read(const char *offset_path, uint64_t *ret_start,
			   uint64_t *ret_inode)
{
	char text[GP_LOGFILE_OFFSET_LEN + 1];
	uint64_t start, inode;
	ssize_t n;
	int fd = open(offset_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	do
		n = pread(fd, text, sizeof(text), 0);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -errno;
	/* Exactly one line: a longer file is not one of ours. */
	if (n != GP_LOGFILE_OFFSET_LEN || text[20] != ' ' || text[41] != '\n' ||
	    digits20(text, &start) < 0 || digits20(text + 21, &inode) < 0)
		return -EINVAL;
	*ret_start = start;
	*ret_inode = inode;
	return 0;
}

int gp_logfile_offset_write(int fd, uint64_t start, uint64_t inode)
{
	char text[GP_LOGFILE_OFFSET_LEN + 1];
	ssize_t n;

	snprintf(text, sizeof(text), "%020" PRIu64 " %020" PRIu64 "\n", start, inode);
	do
		n = pwrite(fd, text, GP_LOGFILE_OFFSET_LEN, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == GP_LOGFILE_OFFSET_LEN ? 0 : -EIO;
}
