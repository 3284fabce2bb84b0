/* trail.c — every launch goes through the compute arbiter (front.h).
 *
 * A front end calls gp_shim_gate before each launch: it waits for the
 * device's turn (arbiter.h). After a launch, the work this process has
 * queued is bounded, so that a turn ends, and a more urgent task gets the
 * device, within about a kernel: an event follows every `every` launches,
 * and before the next is recorded the previous one must have finished.
 * `every` adapts: when that wait was long (over WAIT_SHORT_NS), kernels
 * are long next to launches and it halves (down to 1: an event per
 * launch); otherwise it doubles (up to EVERY_MAX), so short kernels pay
 * for the bound a runtime call in dozens and queue no more than about
 * WAIT_SHORT_NS of work. The events are the front end's (its runtime's);
 * the trail of launches is per device and per thread (each thread bounds
 * its own launches). After a synchronization that covered everything
 * this process launched on a device (every thread of it waited for all
 * its own work), the turn need not keep the device, and is not charged
 * while it keeps it idle (gp_arbiter_idle). */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "base/clock.h"
#include "shim/arbiter.h"
#include "shim/front.h"

#define EVERY_MAX 64
#define WAIT_SHORT_NS 100000      /* a wait this short: the bound is small */
#define PAUSE_MAX_US 50

static __thread struct {
	void *event[2];
	unsigned last;          /* the one recorded last */
	unsigned every, since;  /* launches per event; launches since one */
	bool ready;
	bool pending;           /* launched since it last waited for all */
	bool several;           /* ... on more than one stream */
	bool flavour;           /* ... else on `stream`, of this flavour */
	void *stream;
} trail[GP_SHIM_DEVICES_MAX];

/* Per device: the threads of this process with work pending. */
static _Atomic int pending_threads[GP_SHIM_DEVICES_MAX];

void gp_shim_gate(struct gp_shim_front *f, struct gp_shim_device *d)
{
	if (d->arbiter)
		gp_arbiter_before_launch(d->arbiter, f->drain, NULL);
}

static bool trail_ready(struct gp_shim_front *f, int dev)
{
	if (trail[dev].ready)
		return true;
	if (!f->event_create || !f->event_record || !f->event_query)
		return false;
	for (int i = 0; i < 2; i++)
		if (f->event_create(&trail[dev].event[i]) != 0)
			return false;
	trail[dev].every = 1;
	trail[dev].ready = true;
	return true;
}

/* Waits for `e`, giving the device up at once if a more urgent task
 * asks for it meanwhile (polling, with pauses growing from a yield to
 * PAUSE_MAX_US: short waits stay short, long ones cost no CPU, and a
 * request is noticed within about PAUSE_MAX_US).
 * Returns how long it waited, in ns. */
static uint64_t wait_event(struct gp_shim_front *f, struct gp_arbiter *a, void *e)
{
	uint64_t start = gp_monotonic_ns();
	unsigned pause_us = 0;

	while (f->event_query(e) == 1) {
		if (a && gp_arbiter_wanted(a))
			gp_arbiter_yield(a);
		if (pause_us)
			usleep(pause_us);
		else
			sched_yield();
		pause_us = pause_us ? (pause_us * 2 < PAUSE_MAX_US ? pause_us * 2 : PAUSE_MAX_US) : 1;
	}
	return gp_monotonic_ns() - start;
}

/* After a launch on `stream` (see the top of the file). */
static void bound(struct gp_shim_front *f, struct gp_shim_device *d, void *stream, bool flavour)
{
	int dev = d->index;
	uint64_t waited = 0;
	void *previous;

	if (!trail_ready(f, dev) || ++trail[dev].since < trail[dev].every)
		return;
	trail[dev].since = 0;
	previous = trail[dev].event[trail[dev].last];
	if (f->event_query(previous) == 1)
		waited = wait_event(f, d->arbiter, previous);
	if (waited > WAIT_SHORT_NS) {
		if (trail[dev].every > 1)
			trail[dev].every /= 2;
	} else if (trail[dev].every < EVERY_MAX) {
		trail[dev].every *= 2;
	}
	trail[dev].last ^= 1;
	f->event_record(trail[dev].event[trail[dev].last], stream, flavour);
}

void gp_shim_launched(struct gp_shim_front *f, struct gp_shim_device *d, void *stream,
		      bool flavour)
{
	int dev = d->index;

	if (dev < 0)
		return;
	if (!trail[dev].pending) {
		trail[dev].pending = true;
		trail[dev].several = false;
		trail[dev].stream = stream;
		trail[dev].flavour = flavour;
		atomic_fetch_add(&pending_threads[dev], 1);
	} else if (stream != trail[dev].stream || flavour != trail[dev].flavour) {
		trail[dev].several = true;
	}
	bound(f, d, stream, flavour);
}

/* Has this thread now waited for all the work it launched on dev? A
 * device's synchronization covers it all; a stream's, if every launch
 * went to that stream; anything, if every launch went to one stream and
 * our last event, recorded after the last of them, is done. */
static bool waited_for_all(struct gp_shim_front *f, int dev, enum gp_shim_waited what,
			   void *stream, bool flavour)
{
	if (what == GP_WAITED_DEVICE)
		return true;
	if (trail[dev].several)
		return false;
	if (what == GP_WAITED_STREAM)
		return stream == trail[dev].stream && flavour == trail[dev].flavour;
	return trail[dev].ready && trail[dev].since == 0 &&
	       f->event_query(trail[dev].event[trail[dev].last]) == 0;
}

void gp_shim_waited(struct gp_shim_front *f, struct gp_shim_device *d, enum gp_shim_waited what,
		    void *stream, bool flavour)
{
	int dev = d->index;

	if (dev < 0 || !d->arbiter)
		return;
	if (trail[dev].pending) {
		if (!waited_for_all(f, dev, what, stream, flavour))
			return;
		trail[dev].pending = false;
		if (atomic_fetch_sub(&pending_threads[dev], 1) != 1)
			return;
	} else if (atomic_load(&pending_threads[dev])) {
		return;
	}
	gp_arbiter_idle(d->arbiter);
}
