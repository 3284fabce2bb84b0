/* clock.h — the wall clock as unix milliseconds: the times the store's
 * rows, usage records, audit entries and rules are written in (the
 * server's files read it through here, not each with a copy). Intervals
 * that must not jump with the wall clock use CLOCK_MONOTONIC instead. */
#ifndef GP_BASE_CLOCK_H
#define GP_BASE_CLOCK_H

#include <stdint.h>

/* CLOCK_REALTIME in milliseconds since 1970-01-01 UTC. */
int64_t gp_unix_ms(void);

#endif
