/* test-turn-rules.c — the arbiter's rules (src/shim/turn-rules.c) on a
 * clock of the test's own: the order of waiters and what may cut a turn,
 * and then whole seconds of turns played by the rules, as the arbiter
 * charges them, for the shares they give: a priority-9 burner beside a
 * hard 50 % one leaves it its half; a hard cap holds alone; a probe of
 * higher priority beside a hard burner is let in at once while it has
 * used less. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shim/turn-rules.h"

#define MS 1000000ULL
#define SLICE (50 * MS)

static struct gp_turn_view view(unsigned priority, unsigned share, bool hard, uint64_t vtime,
				int64_t budget)
{
	return (struct gp_turn_view){ .priority = priority, .share = share, .hard = hard,
				      .vtime = vtime, .budget_ns = budget };
}

static void lengths_and_budgets(void **state)
{
	struct gp_turn_view v = view(5, 30, true, 0, 100 * MS);

	(void)state;
	assert_int_equal(gp_turn_length(50, SLICE), 25 * MS);
	assert_int_equal(gp_turn_length(10, SLICE), 10 * MS); /* at least 10 ms */
	assert_int_equal(gp_turn_budget(0, 0, 50, 20 * MS, SLICE), 10 * MS);
	assert_int_equal(gp_turn_budget(0, 0, 50, 10000 * MS, SLICE), 2 * SLICE); /* held */
	assert_int_equal(gp_turn_budget(-5 * MS, 0, 100, 0, SLICE), -5 * (int64_t)MS);
	assert_int_equal(gp_turn_vtime(10 * MS, 50), 20 * MS);
	assert_int_equal(gp_turn_granted(&v, SLICE), 15 * MS);
	v.budget_ns = 12 * MS;
	assert_false(gp_turn_eligible(&v, SLICE));
	v.hard = false;
	assert_true(gp_turn_eligible(&v, SLICE));
	v.interactive = true;
	v.share = 100;
	assert_int_equal(gp_turn_granted(&v, SLICE), GP_TURN_SHORT_NS);
}

static void the_order_of_waiters(void **state)
{
	struct gp_turn_view hard = view(5, 50, true, 100 * MS, 25 * MS);
	struct gp_turn_view urgent = view(9, 50, false, 150 * MS, 0);

	(void)state;
	/* Owed and behind: the hard one first, whatever the other's priority. */
	assert_true(gp_turn_before(&hard, &urgent, SLICE));
	assert_false(gp_turn_before(&urgent, &hard, SLICE));
	/* Not owed (no budget for a turn), or not behind: priority decides. */
	hard.budget_ns = 10 * MS;
	assert_true(gp_turn_before(&urgent, &hard, SLICE));
	hard.budget_ns = 25 * MS;
	hard.vtime = 150 * MS;
	assert_true(gp_turn_before(&urgent, &hard, SLICE));
	/* Equal priorities: least device time per share, then the longest
	 * wait, then the fixed order. */
	struct gp_turn_view a = view(5, 50, false, 10, 0), b = view(5, 50, false, 20, 0);

	assert_true(gp_turn_before(&a, &b, SLICE));
	b.vtime = 10;
	a.since_ns = 5;
	b.since_ns = 3;
	assert_true(gp_turn_before(&b, &a, SLICE));
	b.since_ns = 5;
	a.order = 1;
	b.order = 2;
	assert_true(gp_turn_before(&a, &b, SLICE));
}

static void what_may_cut_a_turn(void **state)
{
	struct gp_turn_view holder = view(2, 50, true, 100 * MS, 0);
	struct gp_turn_view w = view(8, 50, false, 120 * MS, 0);

	(void)state;
	/* Ahead of a hard holder: not even priority 8 cuts it... */
	assert_false(gp_turn_may_preempt(&w, &holder, 0, SLICE));
	/* ... until the holder's turn so far makes it the one ahead. */
	assert_true(gp_turn_may_preempt(&w, &holder, 11 * MS, SLICE));
	/* A holder that is not hard: priority cuts it at once. */
	holder.hard = false;
	assert_true(gp_turn_may_preempt(&w, &holder, 0, SLICE));
	/* Same priority: only an interactive waiter that may take a turn. */
	w.priority = 2;
	assert_false(gp_turn_may_preempt(&w, &holder, 0, SLICE));
	w.interactive = true;
	assert_true(gp_turn_may_preempt(&w, &holder, 0, SLICE));
	w.hard = true;
	w.budget_ns = 0;
	assert_false(gp_turn_may_preempt(&w, &holder, 0, SLICE));
	/* Lower priority: never. */
	w = view(1, 50, false, 0, 0);
	w.interactive = true;
	assert_false(gp_turn_may_preempt(&w, &holder, 0, SLICE));
}

/* ---- turns played on the test's clock -------------------------------------- */

/* A task that always has work queued, as the arbiter keeps its account. */
struct player {
	unsigned priority, share;
	bool hard;
	uint64_t vtime, refilled, used;
	int64_t budget;
};

static struct gp_turn_view view_at(const struct player *p, uint64_t now, unsigned order)
{
	struct gp_turn_view v = view(p->priority, p->share, p->hard, p->vtime,
				     gp_turn_budget(p->budget, p->refilled, p->share, now, SLICE));

	v.order = order;
	return v;
}

/* The next holder among the eligible, or -1. */
static int next_of(struct player *p, int n, uint64_t now)
{
	int best = -1;

	for (int i = 0; i < n; i++) {
		struct gp_turn_view v = view_at(&p[i], now, (unsigned)i);

		if (!gp_turn_eligible(&v, SLICE))
			continue;
		if (best < 0) {
			best = i;
			continue;
		}
		struct gp_turn_view b = view_at(&p[best], now, (unsigned)best);

		if (gp_turn_before(&v, &b, SLICE))
			best = i;
	}
	return best;
}

/* Does a waiter cut holder h's turn after `held`, looking every ms? */
static bool cut(struct player *p, int n, int h, uint64_t now, uint64_t held)
{
	struct gp_turn_view hv = view_at(&p[h], now, (unsigned)h);

	for (int i = 0; i < n; i++) {
		struct gp_turn_view w = view_at(&p[i], now, (unsigned)i);

		if (i != h && gp_turn_may_preempt(&w, &hv, held, SLICE))
			return true;
	}
	return false;
}

/* Plays `seconds` of turns among n burners; each one's device time in
 * p[i].used. A hand-over costs `handover` of idle device. */
static void play(struct player *p, int n, unsigned seconds, uint64_t handover)
{
	uint64_t now = 0, end = (uint64_t)seconds * 1000 * MS;

	for (int i = 0; i < n; i++)
		p[i].budget = (int64_t)SLICE;
	while (now < end) {
		int h = next_of(p, n, now);
		uint64_t turn, held = 0;

		if (h < 0) {
			now += MS;
			continue;
		}
		struct gp_turn_view v = view_at(&p[h], now, (unsigned)h);

		turn = gp_turn_granted(&v, SLICE);
		p[h].budget = v.budget_ns;
		p[h].refilled = now;
		while (held < turn && !(held && cut(p, n, h, now + held, held)))
			held += MS;
		p[h].budget += (int64_t)(held * p[h].share / 100) - (int64_t)held;
		p[h].refilled = now + held;
		p[h].vtime += gp_turn_vtime(held, p[h].share);
		p[h].used += held;
		now += held + handover;
	}
}

static void priority_leaves_a_hard_share_its_half(void **state)
{
	struct player p[] = {
		{ .priority = 5, .share = 50, .hard = true },  /* a tenant's hard 50 % */
		{ .priority = 9, .share = 50, .hard = false }, /* another's priority 9 */
	};
	double hard;

	(void)state;
	play(p, 2, 10, 100000);
	hard = (double)p[0].used / (double)(p[0].used + p[1].used);
	print_message("hard %.3f, priority 9 %.3f of the busy time\n", hard, 1 - hard);
	assert_true(hard >= 0.45);
	assert_true(hard <= 0.52); /* and its cap holds */
}

static void a_hard_cap_holds_alone(void **state)
{
	struct player p[] = { { .priority = 5, .share = 30, .hard = true } };

	(void)state;
	play(p, 1, 10, 0);
	assert_in_range(p[0].used, 2900 * MS, 3100 * MS);
}

static void equal_tasks_split_evenly_and_shares_hold(void **state)
{
	struct player even[] = { { .priority = 5, .share = 50 }, { .priority = 5, .share = 50 } };
	struct player split[] = { { .priority = 5, .share = 70, .hard = true },
				  { .priority = 5, .share = 30, .hard = true } };

	(void)state;
	play(even, 2, 10, 0);
	assert_in_range(even[0].used * 100 / (even[0].used + even[1].used), 48, 52);
	play(split, 2, 10, 0);
	assert_in_range(split[0].used * 100 / (split[0].used + split[1].used), 68, 72);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lengths_and_budgets),
		cmocka_unit_test(the_order_of_waiters),
		cmocka_unit_test(what_may_cut_a_turn),
		cmocka_unit_test(priority_leaves_a_hard_share_its_half),
		cmocka_unit_test(a_hard_cap_holds_alone),
		cmocka_unit_test(equal_tasks_split_evenly_and_shares_hold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
