/* arbiter.h — the time-slice compute arbiter of one device.
 *
 * Processes sharing a device take turns holding it; a process launches
 * work only while it holds the device. A turn lasts its share of
 * GPUPOOL_SLICE_MS; at its end the holder waits for its queued work to
 * drain and hands over. Who goes next, how long a turn lasts and who may
 * cut one short are the rules of turn-rules.h (priority, stride
 * scheduling by device time per share, hard budgets; a hard share is
 * never cut by a neighbour's priority while that neighbour is ahead). A
 * waiting task of higher priority ends the current turn at the holder's
 * next launch (the holder looks every GP_ARBITER_LOOK_NS); so does an
 * interactive one of the same priority (one of its last few stretches of
 * work, up to waiting for all of it, was short: a service between
 * requests), which then gets a short turn. Time is charged as used,
 * overruns included (debt), but not while the holder is idle (it waited
 * for all its work and launched nothing since; any waiter may take the
 * device then).
 *
 *   hard    the share is a cap: device time is metered through a bucket
 *           that fills at the share's rate, even when nobody else waits;
 *   shared  the share is a guarantee: an idle device's time may be
 *           borrowed, and a waiting owner takes its turn back at the
 *           borrower's next launch.
 *
 * There is no file every task writes. Each process keeps its turn in its
 * own slot of its task's file (taskfile.h: waiting since, holding until,
 * idle, a counter of takes and hand-overs that watchers sleep on), and
 * its task's account (device time per share, the hard budget) there too.
 * Every process reads the others' slots read-only and believes a claim
 * only within what it can check: the claimant alive, its task in the
 * device's table, a turn no longer than its task's share allows (from the
 * table, not from the claim) counted from when this process first saw it,
 * a claim to be next honoured only while it is taken up. Taking the
 * device is "announce, then look": a process marks its slot TAKING, looks
 * at every other slot, and holds only when no other holds and no other
 * taker goes first in a fixed order; two honest processes never both
 * hold, and a task that writes anything into its own file stops nobody
 * (it can take turns it is not owed, as a task that bypasses the
 * interposer can: compute time is cooperative; docs/security.md).
 *
 * Limits are read with gp_region_limits at every turn (from the limits
 * table where the device is managed), so live changes apply at the next
 * turn. Functions return 0 or a negative errno; nothing prints or exits.
 *
 * Threads. A process has one struct gp_arbiter per device (one slot, one
 * turn at a time), which all its threads use at once. What guards its
 * fields:
 *   region, tf, me, task, slot,  set by gp_arbiter_open, then read only;
 *   slice_ns
 *   until                       the end of the turn this process holds (0:
 *                               none); written under turn_lock, read by the
 *                               fast path with one atomic load;
 *   look_at                     when the holder next looks for urgent
 *                               waiters; written under turn_lock;
 *   wanted                      an urgent waiter was found, or the device
 *                               was yielded: the turn ends at the next
 *                               launch; set under turn_lock or by yield,
 *                               cleared when the turn ends;
 *   turn_start, held_ns,        written under turn_lock;
 *   short_stretches, scratch
 *   busy_since                  when the turn's busy stretch began (0: idle);
 *                               set from 0 by one compare-and-swap at the
 *                               first launch after idling (any thread),
 *                               taken back to 0 under turn_lock;
 *   turn_lock                   a process-private mutex, held by the one
 *                               thread that ends the turn (charging it once)
 *                               and waits for the next; the others block on
 *                               it and find the new turn when they get it.
 * The fast path (this process holds an unexpired, busy turn nobody needs
 * back, and it is not time to look) takes no lock and makes no
 * read-modify-write: a few atomic loads. gp_arbiter_idle and
 * gp_arbiter_wanted only try the lock: if another thread holds it, that
 * thread is ending the turn or waiting for the next, and there is nothing
 * for them to do. */
#ifndef GP_SHIM_ARBITER_H
#define GP_SHIM_ARBITER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shim/region.h"

#define GP_ARBITER_LOOK_NS 250000ULL /* a holder looks for urgent waiters this often */

struct gp_arbiter;

/* Opens the arbiter of the device whose region is `region`, which the
 * calling process joined (slot `slot`). */
int gp_arbiter_open(struct gp_region *region, int slot, unsigned slice_ms,
		    struct gp_arbiter **ret);

/* Before a launch: returns at once while this process holds an unexpired
 * turn nobody needs back; otherwise ends the turn (calling drain(ctx) to
 * wait for queued work) and waits for the next one. */
void gp_arbiter_before_launch(struct gp_arbiter *a, void (*drain)(void *), void *ctx);

/* While waiting for its own work: does a more urgent task want the
 * device? gp_arbiter_yield then gives it up at once; the next launch
 * waits for the work still queued (charging the turn for it) and for a
 * new turn. */
bool gp_arbiter_wanted(struct gp_arbiter *a);
void gp_arbiter_yield(struct gp_arbiter *a);

/* After the process waited for all the work it launched: while it holds
 * the device but has nothing running, others may take the device. */
void gp_arbiter_idle(struct gp_arbiter *a);

/* Length of the turn this process holds now, 0 when none (for tests). */
uint64_t gp_arbiter_turn_ns(const struct gp_arbiter *a);

/* Device time this process has held, in ns (for tests and metering). */
uint64_t gp_arbiter_used_ns(const struct gp_arbiter *a);

#endif
