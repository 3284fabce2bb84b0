/* arbiter.c — turns on a device, weighted by share (see arbiter.h).
 *
 * The .sched file is a base/shfile.h file: its head never moves, and its
 * slot i (indexed like the region's slots) is a pid slot that whoever holds
 * the region's slot i claims at open, so a dead holder is found by its pid
 * and start time. Within a process, the threads share one struct
 * gp_arbiter: the fast path reads only atomics; ending a turn and waiting
 * for the next happen under the process's turn_lock, by one thread at a
 * time (arbiter.h says which field is guarded by what). */
#include "shim/arbiter.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/pshared.h"
#include "base/shfile.h"

#define SCHED_MAGIC 0x67707368656431ULL
#define SCHED_VERSION 4                 /* bump with any change of the layout */
#define NS_PER_MS 1000000ULL
#define POLL_NS NS_PER_MS               /* waiters look again at least this often */

struct sched_slot {
	struct gp_shfile_slot id;       /* owner (claims, pid; 0: free), start time */
	_Atomic uint32_t waiting;
	_Atomic uint32_t priority;      /* copied from the region when waiting */
	_Atomic uint32_t share;
	_Atomic uint32_t isolation;
	_Atomic int32_t task;           /* the region's task index: its account */
	_Atomic uint64_t since_ns;      /* waiting since */
	_Atomic uint64_t used_ns;       /* device time held, all told */
};

/* A task's account: all its processes draw on one budget and one
 * virtual time, so the share is the task's, not each process's. */
struct sched_task {
	_Atomic uint64_t key;           /* hash of the task id: a reused entry resets */
	_Atomic int64_t budget_ns;      /* hard: device time it may still take */
	_Atomic uint64_t refilled_ns;   /* when the budget was last topped up */
	_Atomic uint64_t vtime;         /* device time per share so far */
};

_Static_assert(offsetof(struct sched_slot, id) == 0, "a slot starts with its owner");

struct sched {
	struct gp_shfile_head head;     /* magic (written last), version, size */
	pthread_mutex_t lock;           /* robust, process-shared */
	_Atomic int32_t holder;         /* slot holding the device, or -1 */
	_Atomic uint64_t until_ns;      /* end of the holder's turn */
	_Atomic uint32_t gen;           /* futex: bumped when the device frees */
	_Atomic uint32_t preempt;       /* a more urgent waiter: end the turn */
	_Atomic uint32_t holder_idle;   /* the holder waited for all its work */
	struct sched_slot slot[GP_REGION_PROCS];
	struct sched_task task[GP_REGION_TASKS];
};

/* This process's side, shared by its threads (arbiter.h). sh, region,
 * slot and slice_ns are set at open and never change. */
struct gp_arbiter {
	struct sched *sh;
	struct gp_region *region;
	int slot;
	uint64_t slice_ns;
	pthread_mutex_t turn_lock;      /* process-private: ends and waits for turns */
	_Atomic uint64_t until;         /* end of the turn held now, 0: none (turn_lock) */
	_Atomic uint64_t turn_start;    /* of the turn held now (turn_lock) */
	/* The turn's use (charged at its end): device time held while busy so
	 * far (turn_lock), and when the busy stretch under way began (0: idle,
	 * all its work finished; set from 0 by one compare-and-swap at a
	 * launch, taken back to 0 under turn_lock). */
	uint64_t held_ns;
	_Atomic uint64_t busy_since;
	_Atomic unsigned short_stretches;       /* interactive while > 0 (turn_lock) */
};

static uint64_t id_key(const char *id)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 0x100000001b3ULL;
	return h | 1;           /* never 0: 0 marks an unused entry */
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void lock(struct sched *sh)
{
	gp_pshared_mutex_lock(&sh->lock);
}

static void wake(struct sched *sh)
{
	atomic_fetch_add(&sh->gen, 1);
	gp_futex_wake_all(&sh->gen);
}

/* ---- the shared file ------------------------------------------------- */

static int sched_init(void *map, const void *arg)
{
	struct sched *sh = map;

	(void)arg;
	atomic_store(&sh->holder, -1);
	return gp_pshared_mutex_init(&sh->lock);
}

/* Maps the file, creating it (or replacing one its creator never
 * finished, or of another layout) as needed. */
static int sched_map(const char *path, struct sched **ret)
{
	static const struct gp_shfile_layout layout = {
		SCHED_MAGIC, SCHED_VERSION, sizeof(struct sched), 0600, sched_init, NULL, NULL,
	};

	return gp_shfile_open(path, &layout, GP_SHFILE_CREATE, (void **)ret);
}

/* Our slot starts afresh: it may have served a dead process. */
static void slot_fill(void *slot, void *arg)
{
	struct sched_slot *me = slot;

	atomic_store(&me->waiting, 0);
	atomic_store(&me->used_ns, 0);
	atomic_store(&me->task, *(const int *)arg);
}

int gp_arbiter_open(const char *dir, const char *uuid, struct gp_region *region, int slot,
		    unsigned slice_ms, struct gp_arbiter **ret)
{
	char base[PATH_MAX - 64], path[PATH_MAX], id[GP_TASK_ID_MAX];
	struct gp_shfile_slots slots;
	struct sched_task *t;
	struct gp_arbiter *a;
	int r, task;

	if (slot < 0 || slot >= GP_REGION_PROCS)
		return -EINVAL;
	gp_region_dir(dir, base, sizeof(base));
	snprintf(path, sizeof(path), "%s/device-%s.sched", base, uuid);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	r = sched_map(path, &a->sh);
	if (r < 0) {
		free(a);
		return r;
	}
	a->region = region;
	a->slot = slot;
	a->slice_ns = (uint64_t)slice_ms * NS_PER_MS;
	pthread_mutex_init(&a->turn_lock, NULL);
	task = gp_region_task_of(region, slot, id, sizeof(id));
	slots = (struct gp_shfile_slots){ a->sh->slot, sizeof(a->sh->slot[0]), GP_REGION_PROCS };
	r = task < 0 ? task
		     : gp_shfile_slot_claim_at(&slots, slot, getpid(),
					       gp_proc_start_time(getpid()), slot_fill, &task);
	if (r < 0) {
		munmap(a->sh, sizeof(*a->sh));
		free(a);
		return r;
	}
	/* The task's account may have served another task. */
	lock(a->sh);
	t = &a->sh->task[task];
	if (atomic_load(&t->key) != id_key(id)) {
		atomic_store(&t->budget_ns, (int64_t)a->slice_ns);
		atomic_store(&t->refilled_ns, now_ns());
		atomic_store(&t->vtime, 0);     /* caught up when it waits */
		atomic_store(&t->key, id_key(id));
	}
	pthread_mutex_unlock(&a->sh->lock);
	/* The slot's last owner may have died holding the device. */
	lock(a->sh);
	if (atomic_load(&a->sh->holder) == slot)
		atomic_store(&a->sh->holder, -1);
	pthread_mutex_unlock(&a->sh->lock);
	*ret = a;
	return 0;
}

int gp_arbiter_prepare(const char *dir, const char *uuid, gid_t group)
{
	char base[PATH_MAX - 64], path[PATH_MAX];
	struct sched *sh;
	int r;

	gp_region_dir(dir, base, sizeof(base));
	snprintf(path, sizeof(path), "%s/device-%s.sched", base, uuid);
	r = gp_pshared_file_vet(path);
	if (r == 0)
		r = sched_map(path, &sh);
	if (r < 0)
		return r;
	munmap(sh, sizeof(*sh));
	return gp_pshared_file_share(path, 0660, group);
}

uint64_t gp_arbiter_used_ns(const struct gp_arbiter *a)
{
	return atomic_load(&a->sh->slot[a->slot].used_ns);
}

/* ---- turns ----------------------------------------------------------- */

/* The account of slot i's task. */
static struct sched_task *account_of(struct sched *sh, int i)
{
	return &sh->task[atomic_load(&sh->slot[i].task)];
}

static bool slot_alive(const struct sched_slot *s)
{
	return gp_shfile_slot_is_alive(&s->id);
}

/* A hard slot's budget as of now: topped up at its share, holding at
 * most two turns' worth (so that waiting out a neighbour's turn costs
 * nothing, but idling buys no burst longer than that). */
static int64_t budget_now(struct sched *sh, int i, uint64_t now, uint64_t slice_ns)
{
	struct sched_task *t = account_of(sh, i);
	int64_t b = atomic_load(&t->budget_ns);
	uint64_t since = atomic_load(&t->refilled_ns);

	if (now > since)
		b += (int64_t)((now - since) * atomic_load(&sh->slot[i].share) / 100);
	return b > 2 * (int64_t)slice_ns ? 2 * (int64_t)slice_ns : b;
}

#define TURN_MIN_NS (10 * NS_PER_MS)

/* A turn's length for a share: that share of GPUPOOL_SLICE_MS (at least
 * 10 ms), so that when the shares on a device add up to 100 % every task
 * gets its share within every slice, and a 1 s window holds many rounds. */
static uint64_t turn_for(const struct sched_slot *s, uint64_t slice_ns)
{
	uint64_t turn = slice_ns * atomic_load(&s->share) / 100;

	return turn > TURN_MIN_NS ? turn : TURN_MIN_NS;
}

/* May a slot take a turn now? Hard slots need a turn's worth of budget. */
static bool eligible(struct sched *sh, int i, uint64_t now, uint64_t slice_ns)
{
	return atomic_load(&sh->slot[i].isolation) == GP_ISOLATION_SHARED ||
	       budget_now(sh, i, now, slice_ns) >= (int64_t)turn_for(&sh->slot[i], slice_ns);
}

/* Is a before b in line? Priority, then least device time per share,
 * then the longest wait. */
static bool before(struct sched *sh, int i, int j)
{
	const struct sched_slot *a = &sh->slot[i], *b = &sh->slot[j];
	uint64_t va = atomic_load(&account_of(sh, i)->vtime), vb = atomic_load(&account_of(sh, j)->vtime);

	if (atomic_load(&a->priority) != atomic_load(&b->priority))
		return atomic_load(&a->priority) > atomic_load(&b->priority);
	if (va != vb)
		return va < vb;
	return atomic_load(&a->since_ns) < atomic_load(&b->since_ns);
}

/* The waiter that goes next, or -1. Called with the lock held. */
static int next_in_line(struct sched *sh, uint64_t now, uint64_t slice_ns)
{
	int best = -1;

	for (int i = 0; i < GP_REGION_PROCS; i++) {
		struct sched_slot *s = &sh->slot[i];

		if (!atomic_load(&s->waiting) || !eligible(sh, i, now, slice_ns) || !slot_alive(s))
			continue;
		if (best < 0 || before(sh, i, best))
			best = i;
	}
	return best;
}

/* A waiter coming back from idling starts level with the others, not
 * with the credit of its idle time. */
static void catch_up(struct sched *sh, int self)
{
	uint64_t least = UINT64_MAX;

	for (int i = 0; i < GP_REGION_PROCS; i++) {
		struct sched_slot *s = &sh->slot[i];

		if (i != self && account_of(sh, i) != account_of(sh, self) &&
		    (atomic_load(&s->waiting) || atomic_load(&sh->holder) == i) &&
		    gp_shfile_slot_pid(&s->id) > 0 && atomic_load(&account_of(sh, i)->vtime) < least)
			least = atomic_load(&account_of(sh, i)->vtime);
	}
	if (least != UINT64_MAX && atomic_load(&account_of(sh, self)->vtime) < least)
		atomic_store(&account_of(sh, self)->vtime, least);
}

/* ---- short work ------------------------------------------------------ */

/* A process is interactive — a service between requests, not a burner —
 * while one of its last SHORT_STRETCHES busy stretches (from taking the
 * turn or resuming work to having waited for all of it) was this short; a
 * stretch cut short by the turn's end counts as long. One slow request on
 * a busy host does not make a service wait out its neighbour's turns. */
#define STRETCH_SHORT_NS (6 * NS_PER_MS)
#define SHORT_STRETCHES 4
#define TURN_SHORT_NS (2 * STRETCH_SHORT_NS)

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

/* An idle holder launches again: its turn is busy from now. Any thread's
 * launch; the first one wins. */
static void busy_resume(struct gp_arbiter *a, uint64_t now)
{
	uint64_t idle = 0;

	if (atomic_compare_exchange_strong(&a->busy_since, &idle, now))
		atomic_store(&a->sh->holder_idle, 0);
}

/* Waits for the turn's queued work (`drain`), which the turn pays for,
 * with its busy stretch up to then — but a stretch still open is cut one
 * slice after the turn's end (`until`), when a waiter may take the device
 * (try_take): a process that launched nothing for a long while does not
 * pay for all of it, while work that ran past its turn is paid for up to
 * there. Returns the time it ended. turn_lock held. */
static uint64_t drain_turn(struct gp_arbiter *a, uint64_t until, void (*drain)(void *), void *ctx)
{
	uint64_t start = now_ns(), now, cut = until + a->slice_ns;

	if (drain)
		drain(ctx);
	now = now_ns();
	busy_end(a, start < cut ? start : cut, false);
	a->held_ns += now - start;
	return now;
}

/* A waiter of the holder's priority that is interactive and may take a
 * turn need not wait out the holder's turn (25 ms at 50 % of the default
 * slice): the turn ends at the holder's next launch (or at once if it is
 * waiting for its own work), as for a more urgent waiter. It gets a short
 * turn, and both are charged what they held, so shares hold over time. */
static bool may_preempt(const struct gp_arbiter *a, const struct gp_task_limits *lim,
			int holder, uint64_t now)
{
	unsigned theirs = atomic_load(&a->sh->slot[holder].priority);

	return lim->priority > theirs ||
	       (lim->priority == theirs && interactive(a) &&
		eligible(a->sh, a->slot, now, a->slice_ns));
}

/* ---- holding and handing over ---------------------------------------- */

/* Gives the device back (if it is still ours) and wakes the waiters. */
static void release(struct gp_arbiter *a)
{
	lock(a->sh);
	if (atomic_load(&a->sh->holder) == a->slot) {
		atomic_store(&a->sh->holder, -1);
		atomic_store(&a->sh->preempt, 0);
	}
	pthread_mutex_unlock(&a->sh->lock);
	wake(a->sh);
}

/* Ends our turn: normally our queued work drains first, so that the next
 * holder finds the device free; when a more urgent task asked for it, the
 * device goes at once and our queued work (at most about a kernel)
 * finishes beside its first launch. Either way the time until the drain
 * is done is ours to pay, but not the time the turn was idle (its work
 * all finished, the device free for any waiter). The caller holds
 * turn_lock: one thread ends the turn, once. */
static void end_turn(struct gp_arbiter *a, void (*drain)(void *), void *ctx)
{
	struct sched_slot *me = &a->sh->slot[a->slot];
	struct sched_task *t = account_of(a->sh, a->slot);
	bool urgent = atomic_load(&a->sh->preempt) != 0;
	uint64_t until, now, held;
	unsigned share;

	until = atomic_exchange(&a->until, 0);  /* the fast path stops here */
	if (!until)
		return;
	if (urgent)
		release(a);
	now = drain_turn(a, until, drain, ctx);
	held = a->held_ns;
	share = atomic_load(&me->share);
	/* The bucket kept filling for the whole turn, idle time included,
	 * without the cap that stops it hoarding while idle; an overrun
	 * leaves it in debt. */
	atomic_fetch_add(&t->budget_ns,
			 (int64_t)((now - atomic_load(&a->turn_start)) * share / 100) - (int64_t)held);
	atomic_store(&t->refilled_ns, now);
	atomic_fetch_add(&t->vtime, held * 100 / (share ? share : 100));
	atomic_fetch_add(&me->used_ns, held);
	gp_region_charge(a->region, a->slot, held);
	if (!urgent)
		release(a);
}

/* How long to sleep before looking again. */
static uint64_t wait_time(struct gp_arbiter *a, uint64_t now)
{
	struct sched_slot *me = &a->sh->slot[a->slot];
	uint64_t until = atomic_load(&a->sh->until_ns);
	int64_t b;

	if (atomic_load(&me->isolation) == GP_ISOLATION_HARD &&
	    (b = budget_now(a->sh, a->slot, now, a->slice_ns)) < (int64_t)turn_for(me, a->slice_ns)) {
		unsigned share = atomic_load(&me->share);
		uint64_t refill = ((uint64_t)((int64_t)turn_for(me, a->slice_ns) - b)) * 100 /
				  (share ? share : 1);

		return refill > POLL_NS ? refill : POLL_NS;
	}
	return until > now && until - now < POLL_NS ? until - now : POLL_NS;
}

/* Takes the turn if it is ours; true when taken. Lock held. */
static bool try_take(struct gp_arbiter *a, uint64_t now, const struct gp_task_limits *lim)
{
	struct sched *sh = a->sh;
	int holder = atomic_load(&sh->holder);

	/* A dead holder, one past its turn (plus one turn to drain), one that
	 * has finished all its work and not launched since, or a stale mark
	 * of our own slot is replaced: nobody waits on it, and an idle holder
	 * keeps no device idle. */
	if (holder >= 0 && (holder == a->slot || !slot_alive(&sh->slot[holder]) ||
			    now > atomic_load(&sh->until_ns) + a->slice_ns ||
			    atomic_load(&sh->holder_idle))) {
		atomic_store(&sh->holder, -1);
		holder = -1;
	}
	if (holder >= 0) {
		if (may_preempt(a, lim, holder, now))
			atomic_store(&sh->preempt, 1);
		return false;
	}
	if (next_in_line(sh, now, a->slice_ns) != a->slot)
		return false;
	struct sched_slot *me = &sh->slot[a->slot];
	struct sched_task *t = account_of(sh, a->slot);
	int64_t budget = budget_now(sh, a->slot, now, a->slice_ns);
	uint64_t turn = turn_for(me, a->slice_ns);

	/* An interactive process's turn is short; a hard slot's lasts no
	 * longer than its budget. */
	if (interactive(a) && turn > TURN_SHORT_NS)
		turn = TURN_SHORT_NS;
	if (atomic_load(&me->isolation) == GP_ISOLATION_HARD && budget < (int64_t)turn)
		turn = (uint64_t)budget;
	atomic_store(&sh->holder, a->slot);
	atomic_store(&sh->until_ns, now + turn);
	atomic_store(&sh->holder_idle, 0);
	atomic_store(&sh->preempt, 0);
	/* Settle the bucket as of the turn's start (end_turn adds the rest). */
	atomic_store(&t->budget_ns, budget);
	atomic_store(&t->refilled_ns, now);
	atomic_store(&a->until, now + turn);
	return true;
}

/* Waits for this process's next turn and takes it; the caller holds
 * turn_lock. */
static void wait_turn(struct gp_arbiter *a)
{
	struct sched *sh = a->sh;
	struct sched_slot *me = &sh->slot[a->slot];
	struct gp_task_limits lim;

	atomic_store(&me->since_ns, now_ns());
	lock(sh);
	catch_up(sh, a->slot);
	atomic_store(&me->waiting, 1);
	pthread_mutex_unlock(&sh->lock);
	for (;;) {
		uint64_t now = now_ns();
		uint32_t gen = atomic_load(&sh->gen);
		bool taken;

		/* Limits are read afresh at every turn: live changes apply. */
		gp_region_limits(a->region, a->slot, &lim);
		atomic_store(&me->priority, lim.priority);
		atomic_store(&me->share, lim.compute);
		atomic_store(&me->isolation, lim.isolation);
		atomic_store(&a->turn_start, now);      /* before try_take publishes until */
		busy_start(a, now);
		lock(sh);
		taken = try_take(a, now, &lim);
		if (taken)
			atomic_store(&me->waiting, 0);
		pthread_mutex_unlock(&sh->lock);
		if (taken)
			return;
		gp_futex_wait(&sh->gen, gen, wait_time(a, now));
	}
}

/* Does the turn this process holds go on at `now`? Loads only: the fast
 * path of every thread. */
static inline bool turn_goes_on(struct gp_arbiter *a, uint64_t now)
{
	uint64_t until = atomic_load_explicit(&a->until, memory_order_acquire);

	return until && now < until && !atomic_load(&a->sh->preempt) &&
	       atomic_load(&a->sh->holder) == a->slot;
}

/* The slow path, out of line so that the fast one stays a few loads: one
 * thread ends the turn and waits for the next; the others wait on
 * turn_lock, and find the new turn when they get it. */
static __attribute__((noinline)) void turn_next(struct gp_arbiter *a, void (*drain)(void *),
						 void *ctx)
{
	pthread_mutex_lock(&a->turn_lock);
	if (!turn_goes_on(a, now_ns())) {
		end_turn(a, drain, ctx);
		wait_turn(a);
	}
	pthread_mutex_unlock(&a->turn_lock);
}

void gp_arbiter_before_launch(struct gp_arbiter *a, void (*drain)(void *), void *ctx)
{
	uint64_t now = now_ns();

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
		busy_end(a, now_ns(), true);
		if (atomic_load(&a->sh->holder) == a->slot) {
			atomic_store(&a->sh->holder_idle, 1);
			wake(a->sh);
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

bool gp_arbiter_wanted(const struct gp_arbiter *a)
{
	return atomic_load(&a->until) && atomic_load(&a->sh->preempt) &&
	       atomic_load(&a->sh->holder) == a->slot;
}

uint64_t gp_arbiter_turn_ns(const struct gp_arbiter *a)
{
	uint64_t until = atomic_load(&a->until);

	return until ? until - atomic_load(&a->turn_start) : 0;
}
