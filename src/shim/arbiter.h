/* arbiter.h — the time-slice compute arbiter of one device.
 *
 * Processes sharing a device take turns holding it; a process launches
 * work only while it holds the device. A turn lasts its share of
 * GPUPOOL_SLICE_MS; at its end the holder waits for its queued work to
 * drain and hands over. Who goes next: the waiting process of highest
 * priority, then the one with the least device time per share so far
 * (stride scheduling), so a 30 % task gets 30 % of the device over any
 * window of a second or more. A waiting task of higher priority ends the
 * current turn at the holder's next launch; so does an interactive one of
 * the same priority (one of its last few stretches of work, up to waiting
 * for all of it, was short: a service between requests), which then gets
 * a short turn. Time is charged as used, overruns included (debt), but
 * not while the holder is idle (it waited for all its work and launched
 * nothing since; any waiter may take the device then).
 *
 *   hard    the share is a cap: device time is metered through a bucket
 *           that fills at the share's rate, even when nobody else waits;
 *   shared  the share is a guarantee: an idle device's time may be
 *           borrowed, and a waiting owner takes its turn back at the
 *           borrower's next launch.
 *
 * The state is a file beside the device's region (device-UUID.sched),
 * writable by every task on the device, with one entry per region slot; a
 * holder that died or overstays its turn is replaced by the next waiter,
 * so nobody waits on the dead. Limits are read with gp_region_limits at
 * every turn (from the limits table where the device is managed, never
 * from this file), so live changes apply at the next turn. Functions
 * return 0 or a negative errno; nothing prints or exits.
 *
 * Threads. A process has one struct gp_arbiter (one slot, one turn at a
 * time), which all its threads use at once. What guards its fields:
 *   sh, region, slot, slice_ns  set by gp_arbiter_open, then read only;
 *   until                       the end of the turn this process holds (0:
 *                               none); written under turn_lock, read by the
 *                               fast path with one atomic load;
 *   turn_start, held_ns,        written under turn_lock;
 *   short_stretches
 *   busy_since                  when the turn's busy stretch began (0: idle);
 *                               set from 0 by one compare-and-swap at the
 *                               first launch after idling (any thread),
 *                               taken back to 0 under turn_lock;
 *   turn_lock                   a process-private mutex, held by the one
 *                               thread that ends the turn (charging it once)
 *                               and waits for the next; the others block on
 *                               it and find the new turn when they get it.
 * The fast path (this process holds an unexpired, busy turn nobody needs
 * back) takes no lock and makes no read-modify-write: a few atomic loads.
 * The shared file's fields are atomics, changed under its robust mutex
 * where several must agree. gp_arbiter_idle only tries the lock: if
 * another thread holds it, that thread is ending the turn or waiting for
 * the next, and there is nothing for it to do; gp_arbiter_yield touches
 * the shared file only. A launch that passed the fast path as another
 * thread ends the turn runs beside the next holder's first launch, as
 * after an urgent hand-over. */
#ifndef GP_SHIM_ARBITER_H
#define GP_SHIM_ARBITER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shim/region.h"

struct gp_arbiter;

/* Opens (creating) the arbiter of the device whose region is `region`,
 * for the calling process in region slot `slot`. */
int gp_arbiter_open(const char *dir, const char *uuid, struct gp_region *region, int slot,
		    unsigned slice_ms, struct gp_arbiter **ret);

/* Makes (or repairs) the device's .sched file for tasks of several users:
 * mode 0660, the caller's and `group`'s; one of another layout is
 * replaced, a link where the file belongs removed first (for
 * gp_region_prepare). */
int gp_arbiter_prepare(const char *dir, const char *uuid, gid_t group);

/* Before a launch: returns at once while this process holds an unexpired
 * turn nobody needs back; otherwise ends the turn (calling drain(ctx) to
 * wait for queued work) and waits for the next one. */
void gp_arbiter_before_launch(struct gp_arbiter *a, void (*drain)(void *), void *ctx);

/* While waiting for its own work: does a more urgent task want the
 * device? gp_arbiter_yield then gives it up at once; the next launch
 * waits for the work still queued (charging the turn for it) and for a
 * new turn. */
bool gp_arbiter_wanted(const struct gp_arbiter *a);
void gp_arbiter_yield(struct gp_arbiter *a);

/* After the process waited for all the work it launched: while it holds
 * the device but has nothing running, others may take the device. */
void gp_arbiter_idle(struct gp_arbiter *a);

/* Length of the turn this process holds now, 0 when none (for tests). */
uint64_t gp_arbiter_turn_ns(const struct gp_arbiter *a);

/* Device time this process has held, in ns (for tests and metering). */
uint64_t gp_arbiter_used_ns(const struct gp_arbiter *a);

#endif
