/* pshared.c — robust process-shared mutexes, futexes and the files they
 * live in (see pshared.h). */
#include "base/pshared.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int gp_pshared_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int r = pthread_mutexattr_init(&a);

	if (r)
		return -r;
	r = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (!r)
		r = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (!r)
		r = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -r;
}

int gp_pshared_mutex_lock(pthread_mutex_t *m)
{
	int r = pthread_mutex_lock(m);

	if (r == EOWNERDEAD)
		r = pthread_mutex_consistent(m);
	return -r;
}

void gp_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	struct timespec ts = {(time_t)(timeout_ns / 1000000000ULL),
			      (long)(timeout_ns % 1000000000ULL)};

	syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, NULL, 0);
}

void gp_futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static bool plain_file(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_nlink == 1;
}

int gp_pshared_file_vet(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (plain_file(&st) || unlink(path) == 0 || errno == ENOENT)
		return 0;
	return -errno;
}

int gp_pshared_file_share(const char *path, mode_t mode, gid_t group)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), r = 0;

	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!plain_file(&st))
		r = -EPERM;
	else if (fchown(fd, geteuid(), group) < 0 || fchmod(fd, mode) < 0)
		r = -errno;
	close(fd);
	return r;
}
