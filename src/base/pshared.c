/* pshared.c — robust process-shared mutexes and futexes (see
 * pshared.h). */
#include "base/pshared.h"
#include "base/clock.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
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
	struct timespec ts = gp_timespec_of_ns(timeout_ns);

	syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, NULL, 0);
}

void gp_futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
