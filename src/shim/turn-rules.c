/* turn-rules.c — the arbiter's rules (turn-rules.h). */
#include "shim/turn-rules.h"

uint64_t gp_turn_length(unsigned share, uint64_t slice_ns)
{
	uint64_t turn = slice_ns * share / 100;

	return turn > GP_TURN_MIN_NS ? turn : GP_TURN_MIN_NS;
}

int64_t gp_turn_budget(int64_t budget, uint64_t refilled, unsigned share, uint64_t now,
		       uint64_t slice_ns)
{
	int64_t most = 2 * (int64_t)slice_ns;

	if (now > refilled)
		budget += (int64_t)((now - refilled) * share / 100);
	return budget > most ? most : budget;
}

uint64_t gp_turn_vtime(uint64_t held_ns, unsigned share)
{
	return held_ns * 100 / (share ? share : 100);
}

bool gp_turn_eligible(const struct gp_turn_view *v, uint64_t slice_ns)
{
	return !v->hard || v->budget_ns >= (int64_t)gp_turn_length(v->share, slice_ns);
}

/* A hard waiter that is owed a turn and has had less than `other`. */
static bool owed_and_behind(const struct gp_turn_view *v, const struct gp_turn_view *other,
			    uint64_t slice_ns)
{
	return v->hard && gp_turn_eligible(v, slice_ns) && v->vtime < other->vtime;
}

bool gp_turn_before(const struct gp_turn_view *a, const struct gp_turn_view *b,
		    uint64_t slice_ns)
{
	bool a_owed = owed_and_behind(a, b, slice_ns), b_owed = owed_and_behind(b, a, slice_ns);

	if (a_owed != b_owed)
		return a_owed;
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->vtime != b->vtime)
		return a->vtime < b->vtime;
	if (a->since_ns != b->since_ns)
		return a->since_ns < b->since_ns;
	return a->order < b->order;
}

bool gp_turn_may_preempt(const struct gp_turn_view *w, const struct gp_turn_view *h,
			 uint64_t held_ns, uint64_t slice_ns)
{
	if (w->priority == h->priority)
		return w->interactive && gp_turn_eligible(w, slice_ns);
	/* A higher priority, but a hard share is not cut by one that had more. */
	return w->priority > h->priority &&
	       !(h->hard && w->vtime > h->vtime + gp_turn_vtime(held_ns, h->share));
}

uint64_t gp_turn_granted(const struct gp_turn_view *v, uint64_t slice_ns)
{
	uint64_t turn = gp_turn_length(v->share, slice_ns);

	if (v->interactive && turn > GP_TURN_SHORT_NS)
		turn = GP_TURN_SHORT_NS;
	if (v->hard && v->budget_ns < (int64_t)turn)
		turn = v->budget_ns > 0 ? (uint64_t)v->budget_ns : 0;
	return turn;
}
