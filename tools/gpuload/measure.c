/* measure.c — gpuload's clock and the statistics its modes report:
 * CLOCK_MONOTONIC nanoseconds, sleeping to an absolute time (no busy
 * waiting), and nearest-rank percentiles over a sorted sample array. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpuload.h"

uint64_t gl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t gl_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void gl_sleep_until(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int gl_samples_add(struct gl_samples *s, double x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		double *v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			fprintf(stderr, "gpuload: out of memory\n");
			return -ENOMEM;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

void gl_samples_release(struct gl_samples *s)
{
	free(s->v);
	*s = (struct gl_samples){ 0 };
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the smallest sample with at least `permille`/1000 of the
 * samples at or below it. Integer arithmetic keeps p99 of 100 at rank 99. */
static double nearest_rank(const double *sorted, size_t n, unsigned permille)
{
	size_t rank = (n * permille + 999) / 1000;

	return sorted[rank ? rank - 1 : 0];
}

void gl_samples_stats(struct gl_samples *s, struct gl_stats *ret_stats)
{
	double sum = 0;

	*ret_stats = (struct gl_stats){ .n = s->n };
	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(s->v[0]), compare_doubles);
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	ret_stats->mean = sum / (double)s->n;
	ret_stats->max = s->v[s->n - 1];
	ret_stats->p50 = nearest_rank(s->v, s->n, 500);
	ret_stats->p99 = nearest_rank(s->v, s->n, 990);
	ret_stats->p999 = nearest_rank(s->v, s->n, 999);
}
