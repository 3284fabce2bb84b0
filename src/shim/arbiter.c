/* arbiter.c — turns on a device, weighted by share (see arbiter.h).
 *
 * A process's turn lives in its slot of its task's file; the device's
 * other processes are read from their tasks' files (region.h's peers),
 * read-only, into a look: the candidates, each with its view for the
 * rules (turn-rules.h) and what was claimed. What this process believes
 * of another's claim it checks against the table's limits and against
 * its own memory of when it first saw the claim (sightings), never
 * against a time the claimant wrote:
 *   - a holder is believed while alive, not idle, and within its task's
 *     longest turn plus one slice (to drain) since first seen holding;
 *   - a taker (announcing, then looking) is believed for TAKING_NS since
 *     first seen;
 *   - a task whose waiters stay ahead of ours must take the device within
 *     NEXT_NS; a task that did not is passed over (its waiters are not
 *     waited for) for PASS_NS, or until one of its processes is seen
 *     holding. Its holders are always respected.
 * Within a process, the threads share one struct gp_arbiter: the fast
 * path reads only atomics; ending a turn, looking and waiting happen
 * under the process's turn_lock, by one thread at a time (arbiter.h says
 * which field is guarded by what). */
#include "shim/arbiter.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/pshared.h"
#include "base/shfile.h"
#include "shim/taskfile.h"
#include "shim/turn-rules.h"

#define NS_PER_MS GP_TURN_NS_PER_MS
#define POLL_NS NS_PER_MS               /* waiters look again at least this often */
#define TAKING_NS NS_PER_MS             /* a taker decides within this */
#define NEXT_NS (5 * NS_PER_MS)         /* the next in line takes within this */
#define PASS_NS (50 * NS_PER_MS)        /* or its task's waiters are passed over so long */
#define CANDS_MAX 256                   /* candidates looked at per look */
#define SEEN_MAX (GP_REGION_TASKS * GP_TASK_PROCS)

/* Another process's claim, as one look found it. */
struct cand {
	const struct gp_taskfile_slot *s;
	int task;
	struct gp_turn_view v;
	uint32_t state, turns;
	uint64_t until;
	bool idle;
};

/* When this process first saw a slot's claim (state and turns). */
struct sighting {
	uint32_t state, turns;
	uint64_t first_ns;
};


/* What a look of the device found (turn_lock). */
struct look {
	int n;
	struct cand c[CANDS_MAX];
	struct gp_task_limits limits[GP_REGION_TASKS];
};

struct gp_arbiter {
	struct gp_region *region;
	struct gp_taskfile *tf;         /* our task's file */
	struct gp_taskfile_slot *me;    /* our slot in it */
	int task, slot;
	uint64_t slice_ns;
	pthread_mutex_t turn_lock;      /* process-private: ends and waits for turns */
	_Atomic uint64_t until;         /* end of the turn held now, 0: none */
	_Atomic uint64_t look_at;       /* when the holder looks for urgent waiters */
	_Atomic uint32_t wanted;        /* the turn ends at the next launch */
	_Atomic uint64_t turn_start;    /* of the turn held now */
	/* The turn's use (charged at its end): device time held while busy so
	 * far, and when the busy stretch under way began (0: idle). */
	uint64_t held_ns;
	_Atomic uint64_t busy_since;
	_Atomic unsigned short_stretches; /* interactive while > 0 */
	/* This process's memory of the others (turn_lock). */
	struct look *look;
	struct sighting *seen;          /* [task * GP_TASK_PROCS + slot] */
	int ahead_task;                 /* whose waiters were ahead of ours, -1 */
	uint64_t ahead_since;           /* since when, without taking */
	uint64_t passed_until[GP_REGION_TASKS]; /* its waiters are not waited for */
};

static void slot_turn_bump(struct gp_taskfile_slot *s)
{
	atomic_fetch_add(&s->turns, 1);
	gp_futex_wake_all(&s->turns);
}

/* Sleeps until the watched word moves from `seen`, or timeout_ns. */
static void watch(const struct gp_taskfile_slot *s, uint32_t seen, uint64_t timeout_ns)
{
	gp_futex_wait((_Atomic uint32_t *)&s->turns, seen, timeout_ns ? timeout_ns : 1);
}

/* ---- opening ------------------------------------------------------------- */

/* A task's account starts full: a new hard task may take a turn at once. */
static void account_start(struct gp_taskfile *tf, uint64_t slice_ns)
{
	uint64_t never = 0;

	if (atomic_compare_exchange_strong(&tf->refilled_ns, &never, gp_monotonic_ns()))
		atomic_store(&tf->budget_ns, (int64_t)slice_ns);
}

int gp_arbiter_open(struct gp_region *region, int slot, unsigned slice_ms,
		    struct gp_arbiter **ret)
{
	struct gp_arbiter *a;
	int task;
	struct gp_taskfile *tf = gp_region_mine(region, &task);

	if (!tf || slot < 0 || slot >= GP_TASK_PROCS)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->look = calloc(1, sizeof(*a->look));
	a->seen = calloc(SEEN_MAX, sizeof(*a->seen));
	if (!a->look || !a->seen) {
		free(a->look);
		free(a->seen);
		free(a);
		return -ENOMEM;
	}
	a->region = region;
	a->tf = tf;
	a->task = task;
	a->slot = slot;
	a->me = &tf->slot[slot];
	a->slice_ns = (uint64_t)slice_ms * NS_PER_MS;
	a->ahead_task = -1;
	pthread_mutex_init(&a->turn_lock, NULL);
	account_start(tf, a->slice_ns);
	/* The slot's last owner may have died holding the device. */
	atomic_store(&a->me->state, GP_TURN_NONE);
	atomic_store(&a->me->idle, 0);
	*ret = a;
	return 0;
}

uint64_t gp_arbiter_used_ns(const struct gp_arbiter *a)
{
	return atomic_load(&a->me->used_ns);
}

/* ---- looking at the others -------------------------------------------------- */

/* A process's view for the rules: its task's limits (the table's) and
 * account (its file's), what it said of itself, and its place in the
 * fixed order. */
static struct gp_turn_view view_of(const struct gp_taskfile *tf,
				   const struct gp_task_limits *lim, bool interactive,
				   uint64_t since, unsigned order, uint64_t now, uint64_t slice_ns)
{
	return (struct gp_turn_view){
		.priority = lim->priority,
		.share = lim->compute,
		.hard = lim->isolation == GP_ISOLATION_HARD,
		.interactive = interactive,
		.vtime = atomic_load(&tf->vtime),
		.budget_ns = gp_turn_budget(atomic_load(&tf->budget_ns),
					    atomic_load(&tf->refilled_ns), lim->compute, now, slice_ns),
		.since_ns = since < now ? since : now,
		.order = order,
	};
}

/* Our own view, with our task's limits now. */
static struct gp_turn_view view_mine(struct gp_arbiter *a, const struct gp_task_limits *lim,
				     bool interactive, uint64_t now)
{
	return view_of(a->tf, lim, interactive, atomic_load(&a->me->since_ns),
		       (unsigned)(a->task * GP_TASK_PROCS + a->slot), now, a->slice_ns);
}

/* Adds slot j of task k (file tf) to the look, when it claims anything. */
static void look_add(struct gp_arbiter *a, struct look *l, int k, const struct gp_taskfile *tf,
		     int j, uint64_t now)
{
	const struct gp_taskfile_slot *s = &tf->slot[j];
	uint32_t state = atomic_load(&s->state);
	struct cand *c;

	if (l->n == CANDS_MAX || gp_shfile_slot_pid(&s->id) <= 0 || state == GP_TURN_NONE ||
	    state > GP_TURN_HOLDING)
		return;
	if (now < a->passed_until[k] && state != GP_TURN_HOLDING)
		return;
	c = &l->c[l->n++];
	*c = (struct cand){
		.s = s,
		.task = k,
		.state = state,
		.turns = atomic_load(&s->turns),
		.until = atomic_load(&s->until_ns),
		.idle = atomic_load(&s->idle) != 0,
		.v = view_of(tf, &l->limits[k], atomic_load(&s->interactive) != 0,
			     atomic_load(&s->since_ns), (unsigned)(k * GP_TASK_PROCS + j), now,
			     a->slice_ns),
	};
}

/* Looks at every other process of the device that claims a turn. */
static void look_all(struct gp_arbiter *a, uint64_t now)
{
	struct look *l = a->look;

	l->n = 0;
	for (int k = 0; k < GP_REGION_TASKS; k++) {
		struct gp_region_peer p;

		if (gp_region_peer(a->region, k, &p) < 0 || !p.tf)
			continue;
		l->limits[k] = p.limits;
		for (int j = 0, n = gp_taskfile_slots(p.tf); j < n; j++)
			if (!(k == a->task && j == a->slot))
				look_add(a, l, k, p.tf, j, now);
	}
}

/* When this process first saw c's claim as it is now. */
static uint64_t first_seen(struct gp_arbiter *a, const struct cand *c, uint64_t now)
{
	struct sighting *s = &a->seen[c->v.order % SEEN_MAX];

	if (s->state != c->state || s->turns != c->turns || !s->first_ns) {
		*s = (struct sighting){ c->state, c->turns, now };
		if (c->state == GP_TURN_HOLDING)
			a->passed_until[c->task] = 0;
	}
	return s->first_ns;
}

static bool cand_alive(const struct cand *c)
{
	return gp_shfile_slot_is_alive(&c->s->id);
}

/* Is c a holder to wait for? Not idle, alive, and within its task's
 * longest turn plus a slice to drain, counted from when it was first seen
 * holding, and by its own word. */
static bool holds(struct gp_arbiter *a, const struct cand *c, uint64_t now)
{
	uint64_t longest = gp_turn_length(c->v.share, a->slice_ns) + a->slice_ns;

	if (c->state != GP_TURN_HOLDING || c->idle || now > c->until + a->slice_ns ||
	    c->until > now + longest)
		return false;
	return now < first_seen(a, c, now) + longest && cand_alive(c);
}

/* The other process that holds the device, or -1. */
static int holder_of(struct gp_arbiter *a, uint64_t now)
{
	struct look *l = a->look;

	for (int i = 0; i < l->n; i++)
		if (holds(a, &l->c[i], now))
			return i;
	return -1;
}

/* Looks at every other process at `now` (a->look holds what it saw):
 * does another hold the device? */
static bool other_holds(struct gp_arbiter *a, uint64_t now)
{
	look_all(a, now);
	return holder_of(a, now) >= 0;
}

/* Is c a taker to reckon with (first seen taking within TAKING_NS)? */
static bool takes(struct gp_arbiter *a, const struct cand *c, uint64_t now)
{
	return c->state == GP_TURN_TAKING && now < first_seen(a, c, now) + TAKING_NS &&
	       cand_alive(c);
}

/* ---- who is next ------------------------------------------------------------ */

/* The best eligible waiter or taker of the look that is alive, or -1. */
static int best_other(struct gp_arbiter *a)
{
	struct look *l = a->look;

	for (;;) {
		int best = -1;

		for (int i = 0; i < l->n; i++) {
			const struct cand *c = &l->c[i];

			if ((c->state == GP_TURN_WAITING || c->state == GP_TURN_TAKING) &&
			    c->v.since_ns && gp_turn_eligible(&c->v, a->slice_ns) &&
			    (best < 0 || gp_turn_before(&c->v, &l->c[best].v, a->slice_ns)))
				best = i;
		}
		if (best < 0 || cand_alive(&l->c[best]))
			return best;
		l->c[best].state = GP_TURN_NONE; /* dead: look again without it */
	}
}

/* Task k's waiter is ahead of ours: is it still owed that, or has task k
 * been ahead too long without taking (then it is passed over)? A task
 * cannot restart the clock by changing its own claims, only by holding. */
static bool still_ahead(struct gp_arbiter *a, int k, uint64_t now)
{
	if (a->ahead_task != k) {
		a->ahead_task = k;
		a->ahead_since = now;
	}
	if (now < a->ahead_since + NEXT_NS)
		return true;
	a->passed_until[k] = now + PASS_NS;
	a->ahead_task = -1;
	return false;
}

/* A waiter coming back from idling starts level with the others, not
 * with the credit of its idle time. */
static void catch_up(struct gp_arbiter *a)
{
	struct look *l = a->look;
	uint64_t least = UINT64_MAX;

	for (int i = 0; i < l->n; i++)
		if (l->c[i].task != a->task && l->c[i].v.vtime < least)
			least = l->c[i].v.vtime;
	if (least != UINT64_MAX && atomic_load(&a->tf->vtime) < least)
		atomic_store(&a->tf->vtime, least);
}

/* ---- short work ------------------------------------------------------ */

/* A process is interactive — a service between requests, not a burner —
 * while one of its last SHORT_STRETCHES busy stretches (from taking the
 * turn or resuming work to having waited for all of it) was this short; a
 * stretch cut short by the turn's end counts as long. One slow request on
 * a busy host does not make a service wait out its neighbour's turns. */
#define STRETCH_SHORT_NS (6 * NS_PER_MS)
#define SHORT_STRETCHES 4

static bool interactive(const struct gp_arbiter *a)
{
	return atomic_load(&a->short_stretches) > 0;
}

/* The turn about to start is busy from now. turn_lock held. */
static void busy_start(struct gp_arbiter *a, uint64_t now)
{
	a->held_ns = 0;
	atomic_store(&a->busy_since, now);
}

/* Until `now` the turn was busy; `idle`: then all its work was done (a
 * stretch cut short by the turn's end tells nothing of the work's
 * length, and counts as long). turn_lock held. */
static void busy_end(struct gp_arbiter *a, uint64_t now, bool idle)
{
	uint64_t since = atomic_exchange(&a->busy_since, 0);
	unsigned left = atomic_load(&a->short_stretches);

	if (!since)
		return;
	a->held_ns += now > since ? now - since : 0;
	if (idle && now - since <= STRETCH_SHORT_NS)
		atomic_store(&a->short_stretches, SHORT_STRETCHES);
	else if (left)
		atomic_store(&a->short_stretches, left - 1);
}

/* Waits for the turn's queued work (`drain`), which the turn pays for,
 * with its busy stretch up to then — but a stretch still open is cut one
 * slice after the turn's end (`until`), when a waiter may take the
 * device: a process that launched nothing for a long while does not pay
 * for all of it, while work that ran past its turn is paid for up to
 * there. Returns the time it ended. turn_lock held. */
static uint64_t drain_turn(struct gp_arbiter *a, uint64_t until, void (*drain)(void *), void *ctx)
{
	uint64_t start = gp_monotonic_ns(), now, cut = until + a->slice_ns;

	if (drain)
		drain(ctx);
	now = gp_monotonic_ns();
	busy_end(a, start < cut ? start : cut, false);
	a->held_ns += now - start;
	return now;
}

/* ---- holding and handing over ------------------------------------------------ */

/* Gives the device back (if we hold it) and wakes those watching us. */
static void release(struct gp_arbiter *a)
{
	uint32_t holding = GP_TURN_HOLDING;

	if (atomic_compare_exchange_strong(&a->me->state, &holding, GP_TURN_NONE)) {
		atomic_store(&a->me->idle, 0);
		slot_turn_bump(a->me);
	}
}

/* Ends our turn: normally our queued work drains first, so that the next
 * holder finds the device free; when a more urgent task asked for it, the
 * device goes at once and our queued work (at most about a kernel)
 * finishes beside its first launch. Either way the time until the drain
 * is done is ours to pay, but not the time the turn was idle. The caller
 * holds turn_lock: one thread ends the turn, once. */
static void end_turn(struct gp_arbiter *a, void (*drain)(void *), void *ctx)
{
	struct gp_taskfile *tf = a->tf;
	bool urgent = atomic_load(&a->wanted) != 0;
	struct gp_task_limits lim;
	uint64_t until, now, held;

	until = atomic_exchange(&a->until, 0); /* the fast path stops here */

	atomic_store(&a->wanted, 0);
	if (!until)
		return;
	if (urgent)
		release(a);
	now = drain_turn(a, until, drain, ctx);
	held = a->held_ns;
	gp_region_limits(a->region, a->slot, &lim);

	/* The bucket kept filling for the whole turn, idle time included,
	 * without the cap that stops it hoarding while idle; an overrun
	 * leaves it in debt. */
	atomic_fetch_add(&tf->budget_ns,
			 (int64_t)((now - atomic_load(&a->turn_start)) * lim.compute / 100) -
				 (int64_t)held);
	atomic_store(&tf->refilled_ns, now);
	atomic_fetch_add(&tf->vtime, gp_turn_vtime(held, lim.compute));
	atomic_fetch_add(&a->me->used_ns, held);
	gp_region_charge(a->region, a->slot, held);
	if (!urgent)
		release(a);
}

/* Announces we take the device, then looks: true when we hold it (no
 * other holds, no other taker goes first); else back to waiting. Two
 * honest processes doing this at once: each stores TAKING, then looks, so
 * at least one sees the other, and the fixed order (or a HOLDING seen
 * after) leaves one. turn_lock held. */
static bool claim(struct gp_arbiter *a, const struct gp_turn_view *mine, uint64_t now)
{
	struct gp_taskfile_slot *me = a->me;
	uint64_t until, deadline = now + TAKING_NS;

	atomic_store(&me->state, GP_TURN_TAKING);
	atomic_thread_fence(memory_order_seq_cst);
	for (bool settled = false; !settled;) {
		uint64_t t = gp_monotonic_ns();
		int first = -1;

		if (other_holds(a, t))
			goto back;
		for (int i = 0; i < a->look->n && first < 0; i++)
			if (takes(a, &a->look->c[i], t))
				first = i;
		if (first < 0 || t > deadline)
			settled = true;
		else if (a->look->c[first].v.order < mine->order)
			goto back;
		else
			sched_yield(); /* a later taker: it sees us and steps back */
	}
	until = now + gp_turn_granted(mine, a->slice_ns);
	atomic_store(&me->until_ns, until);
	atomic_store(&me->idle, 0);
	atomic_store(&me->state, GP_TURN_HOLDING);
	slot_turn_bump(me); /* wakes those that waited for us to take */
	atomic_thread_fence(memory_order_seq_cst);
	if (other_holds(a, gp_monotonic_ns())) { /* took it beside another: both step back */
		atomic_store(&me->state, GP_TURN_WAITING);
		slot_turn_bump(me);
		return false;
	}
	/* Settle the bucket as of the turn's start (end_turn adds the rest). */
	atomic_store(&a->tf->budget_ns, mine->budget_ns);
	atomic_store(&a->tf->refilled_ns, now);
	atomic_store(&a->look_at, now + GP_ARBITER_LOOK_NS);
	atomic_store(&a->until, until);
	return true;
back:
	atomic_store(&me->state, GP_TURN_WAITING);
	return false;
}

/* How long a waiter not yet eligible (a hard share short of a turn's
 * budget) may sleep: until its budget refills, POLL_NS at the least. */
static uint64_t refill_time(struct gp_arbiter *a, const struct gp_turn_view *mine)
{
	int64_t turn = (int64_t)gp_turn_length(mine->share, a->slice_ns);
	uint64_t refill = (uint64_t)(turn - mine->budget_ns) * 100 / (mine->share ? mine->share : 1);

	return refill > POLL_NS ? refill : POLL_NS;
}

/* Waits for this process's next turn and takes it; the caller holds
 * turn_lock. */
static void wait_turn(struct gp_arbiter *a)
{
	struct gp_taskfile_slot *me = a->me;
	bool caught_up = false;

	atomic_store(&me->interactive, interactive(a));
	atomic_store(&me->since_ns, gp_monotonic_ns());
	atomic_store(&me->state, GP_TURN_WAITING);
	for (;;) {
		uint64_t now = gp_monotonic_ns();
		struct gp_task_limits lim;
		struct gp_turn_view mine;
		int h, best;

		look_all(a, now);
		if (!caught_up) {
			catch_up(a);
			caught_up = true;
		}
		/* Limits are read afresh at every look: live changes apply. */
		gp_region_limits(a->region, a->slot, &lim);
		mine = view_mine(a, &lim, interactive(a), now);
		atomic_store(&a->turn_start, now); /* before claim publishes until */
		busy_start(a, now);
		h = holder_of(a, now);
		if (h >= 0) {
			const struct cand *c = &a->look->c[h];

			watch(c->s, c->turns, c->until + a->slice_ns > now
						      ? c->until + a->slice_ns - now
						      : POLL_NS);
			continue;
		}
		best = best_other(a);
		if (best >= 0 && !gp_turn_before(&mine, &a->look->c[best].v, a->slice_ns) &&
		    still_ahead(a, a->look->c[best].task, now)) {
			const struct cand *c = &a->look->c[best];

			watch(c->s, c->turns, POLL_NS);
			continue;
		}
		a->ahead_task = -1;
		if (!gp_turn_eligible(&mine, a->slice_ns)) {
			watch(me, atomic_load(&me->turns), refill_time(a, &mine));
			continue;
		}
		if (claim(a, &mine, now))
			return;
	}
}

/* ---- the holder's looks ---------------------------------------------------- */

/* Does a waiter want our turn now (turn-rules.h: may it preempt us)? */
static bool urgent_waiter(struct gp_arbiter *a, uint64_t now)
{
	struct gp_task_limits lim;
	struct gp_turn_view mine;
	uint64_t held = now - atomic_load(&a->turn_start);

	gp_region_limits(a->region, a->slot, &lim);
	mine = view_mine(a, &lim, interactive(a), now);
	look_all(a, now);
	for (int i = 0; i < a->look->n; i++) {
		const struct cand *c = &a->look->c[i];

		if (c->state == GP_TURN_WAITING &&
		    gp_turn_may_preempt(&c->v, &mine, held, a->slice_ns) && cand_alive(c))
			return true;
	}
	return false;
}

/* We went idle holding the device, and launch again: has another taken it
 * meanwhile? Announce we are busy, then look (as claim does). */
static bool lost_while_idle(struct gp_arbiter *a, uint64_t now)
{
	atomic_store(&a->me->idle, 0);
	atomic_thread_fence(memory_order_seq_cst);
	return other_holds(a, now);
}

/* Does the turn this process holds go on at `now`? Loads only: the fast
 * path of every thread. */
static inline bool turn_goes_on(struct gp_arbiter *a, uint64_t now)
{
	uint64_t until = atomic_load_explicit(&a->until, memory_order_acquire);

	return until && now < until && now < atomic_load_explicit(&a->look_at, memory_order_relaxed) &&
	       !atomic_load_explicit(&a->wanted, memory_order_relaxed) &&
	       !atomic_load_explicit(&a->me->idle, memory_order_relaxed);
}

/* Under turn_lock, with the turn held: when it is time to look, a waiter
 * that may preempt us makes the turn wanted (false), else the next look
 * is set; true when the turn is not wanted. */
static bool look_if_due(struct gp_arbiter *a, uint64_t now)
{
	if (now < atomic_load(&a->look_at))
		return true;
	if (urgent_waiter(a, now)) {
		atomic_store(&a->wanted, 1);
		return false;
	}
	atomic_store(&a->look_at, now + GP_ARBITER_LOOK_NS);
	return true;
}

/* Under turn_lock, with the turn not over: looks when it is time, comes
 * back from idle; true when the turn goes on. */
static bool turn_checked(struct gp_arbiter *a, uint64_t now)
{
	uint64_t until = atomic_load(&a->until);

	if (!until || now >= until || atomic_load(&a->wanted))
		return false;
	if (atomic_load(&a->me->idle) && lost_while_idle(a, now))
		return false;
	return look_if_due(a, now);
}

/* An idle holder launches again: its turn is busy from now. Any thread's
 * launch; the first one wins. */
static void busy_resume(struct gp_arbiter *a, uint64_t now)
{
	uint64_t idle = 0;

	atomic_compare_exchange_strong(&a->busy_since, &idle, now);
}

/* The slow path, out of line so that the fast one stays a few loads: one
 * thread looks, or ends the turn and waits for the next; the others wait
 * on turn_lock, and find the turn as it is when they get it. */
static __attribute__((noinline)) void turn_next(struct gp_arbiter *a, void (*drain)(void *),
						 void *ctx)
{
	uint64_t now;

	pthread_mutex_lock(&a->turn_lock);
	now = gp_monotonic_ns();
	if (!turn_goes_on(a, now) && !turn_checked(a, now)) {
		end_turn(a, drain, ctx);
		wait_turn(a);
	} else if (!atomic_load(&a->busy_since)) {
		busy_resume(a, gp_monotonic_ns());
	}
	pthread_mutex_unlock(&a->turn_lock);
}

void gp_arbiter_before_launch(struct gp_arbiter *a, void (*drain)(void *), void *ctx)
{
	uint64_t now = gp_monotonic_ns();

	if (!turn_goes_on(a, now)) {
		turn_next(a, drain, ctx);
		return;
	}
	/* The fast path: our turn goes on, busy from now if it was idle. */
	if (!atomic_load_explicit(&a->busy_since, memory_order_relaxed))
		busy_resume(a, now);
}

/* Runs beside launches and waits in other threads: when another thread
 * holds turn_lock it is ending the turn or waiting for the next one, so
 * there is nothing for it to do. */
void gp_arbiter_idle(struct gp_arbiter *a)
{
	if (!atomic_load(&a->until) || pthread_mutex_trylock(&a->turn_lock) != 0)
		return;
	if (atomic_load(&a->until)) {
		busy_end(a, gp_monotonic_ns(), true);
		if (atomic_load(&a->me->state) == GP_TURN_HOLDING) {
			atomic_store(&a->me->idle, 1);
			slot_turn_bump(a->me);
		}
	}
	pthread_mutex_unlock(&a->turn_lock);
}

/* Gives the device up only: the next launch finds the turn gone, waits
 * for the work still queued, and charges the turn for it (end_turn). */
void gp_arbiter_yield(struct gp_arbiter *a)
{
	if (gp_arbiter_wanted(a))
		release(a);
}

bool gp_arbiter_wanted(struct gp_arbiter *a)
{
	uint64_t now;

	if (!atomic_load(&a->until))
		return false;
	if (atomic_load(&a->wanted))
		return true;
	now = gp_monotonic_ns();
	if (now < atomic_load(&a->look_at) || pthread_mutex_trylock(&a->turn_lock) != 0)
		return false;
	if (atomic_load(&a->until))
		look_if_due(a, now);
	pthread_mutex_unlock(&a->turn_lock);
	return atomic_load(&a->wanted) != 0;
}

uint64_t gp_arbiter_turn_ns(const struct gp_arbiter *a)
{
	uint64_t until = atomic_load(&a->until);

	return until ? until - atomic_load(&a->turn_start) : 0;
}
