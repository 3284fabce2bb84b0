/* clock.h — the wall clock as unix milliseconds: the times the store's
 * rows, usage records, audit entries and rules are written in (the
 * server's files read it through here, not each with a copy); and the
 * monotonic clock, for intervals that must not jump with the wall clock
 * (inline: the interposer reads it on every launch), and condition
 * variables whose timed waits count on it. */
#ifndef GP_BASE_CLOCK_H
#define GP_BASE_CLOCK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_REALTIME in milliseconds since 1970-01-01 UTC. */
int64_t gp_unix_ms(void);
/* ... and in nanoseconds (the Kubernetes placements' times). */
int64_t gp_unix_ns(void);

/* Unix ms as people read it in a message: "2026-12-01 12:00:01 UTC". */
void gp_unix_ms_text(int64_t ms, char *buf, size_t len);

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t gp_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A time in nanoseconds (a monotonic deadline, a timeout) as a timespec. */
static inline struct timespec gp_timespec_of_ns(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };
}

/* Initialises cond so that pthread_cond_timedwait's deadlines are
 * CLOCK_MONOTONIC times: 0, or pthreads' error negated. */
static inline int gp_monotonic_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int err = pthread_condattr_init(&attr);

	if (err == 0) {
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		err = pthread_cond_init(cond, &attr);
		pthread_condattr_destroy(&attr);
	}
	return -err;
}

#endif
