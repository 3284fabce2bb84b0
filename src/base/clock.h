/* clock.h — the wall clock as unix milliseconds: the times the store's
 * rows, usage records, audit entries and rules are written in (the
 * server's files read it through here, not each with a copy). Intervals
 * that must not jump with the wall clock use CLOCK_MONOTONIC instead. */
#ifndef GP_BASE_CLOCK_H
#define GP_BASE_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_REALTIME in milliseconds since 1970-01-01 UTC. */
int64_t gp_unix_ms(void);

/* Unix ms as people read it in a message: "2026-12-01 12:00:01 UTC". */
void gp_unix_ms_text(int64_t ms, char *buf, size_t len);

#endif
