/* turn-rules.h — who takes the device next, and for how long: the
 * arbiter's rules (arbiter.h), as pure functions of what it found.
 *
 * No clock, no files, no threads: arbiter.c reads the processes' turns
 * from their tasks' files, checks them, and asks these rules; the unit
 * test asks them on a clock of its own (tests/unit/test-turn-rules.c).
 *
 *   order    A waiter of a hard task that is owed device time (its budget
 *            holds a whole turn) and behind in device time per share goes
 *            before one that is not; then the higher priority; then the
 *            least device time per share (stride scheduling: a 30 % task
 *            gets 30 % of the device); then the longest wait; then a fixed
 *            order. So a priority orders turns among work that shares a
 *            card, but a hard share stays a promise to its owner: a
 *            neighbour's priority never takes the time a hard task is
 *            owed while that neighbour is ahead of it.
 *   preempt  A waiter of higher priority ends the holder's turn at its
 *            next launch, but never a hard holder's while the waiter is
 *            ahead of that holder in device time per share; an interactive
 *            waiter of the same priority (a service between requests) that
 *            may take a turn ends it too (its turn is short, and charged).
 *   length   A turn is the task's share of the slice (at least 10 ms); an
 *            interactive turn is short; a hard turn lasts no longer than
 *            its budget, which fills at the share's rate and holds at
 *            most two slices.
 */
#ifndef GP_SHIM_TURN_RULES_H
#define GP_SHIM_TURN_RULES_H

#include <stdbool.h>
#include <stdint.h>

#define GP_TURN_NS_PER_MS 1000000ULL
#define GP_TURN_MIN_NS (10 * GP_TURN_NS_PER_MS)
#define GP_TURN_SHORT_NS (12 * GP_TURN_NS_PER_MS) /* an interactive turn */

/* A process that waits for the device (or holds it), as the rules see it. */
struct gp_turn_view {
	unsigned priority;      /* 0-9, its task's (the trusted table's) */
	unsigned share;         /* 1-100 %, its task's */
	bool hard;              /* its task's isolation */
	bool interactive;       /* its recent work came in short stretches */
	uint64_t vtime;         /* its task's device time per share */
	int64_t budget_ns;      /* its task's hard budget, as of now */
	uint64_t since_ns;      /* waiting since */
	unsigned order;         /* a fixed order: the last tiebreak */
};

/* The turn of a share: that share of the slice, at least GP_TURN_MIN_NS. */
uint64_t gp_turn_length(unsigned share, uint64_t slice_ns);

/* A hard task's budget as of `now`: `budget` when it was last topped up
 * at `refilled`, plus the share's rate since, held to two slices. */
int64_t gp_turn_budget(int64_t budget, uint64_t refilled, unsigned share, uint64_t now,
		       uint64_t slice_ns);

/* What a turn of `held_ns` adds to its task's device time per share. */
uint64_t gp_turn_vtime(uint64_t held_ns, unsigned share);

/* May it take a turn now? A hard one needs a whole turn of budget. */
bool gp_turn_eligible(const struct gp_turn_view *v, uint64_t slice_ns);

/* Does a go before b (see the top)? */
bool gp_turn_before(const struct gp_turn_view *a, const struct gp_turn_view *b,
		    uint64_t slice_ns);

/* May waiter w end holder h's turn, h having held it `held_ns` so far? */
bool gp_turn_may_preempt(const struct gp_turn_view *w, const struct gp_turn_view *h,
			 uint64_t held_ns, uint64_t slice_ns);

/* How long a turn taken now lasts: the share's, short when interactive,
 * no longer than a hard task's budget. */
uint64_t gp_turn_granted(const struct gp_turn_view *v, uint64_t slice_ns);

#endif
