/* autoscale.c — a service's scaling decisions (autoscale.h). */
#include "core/autoscale.h"

#include <errno.h>
#include <stdio.h>

#define MS_PER_S 1000

struct gp_scale_policy gp_scale_policy_default(unsigned share_pct)
{
	return (struct gp_scale_policy){
		.out_pct = 80,
		.in_pct = 20,
		.margin_pct = 10,
		.out_window_s = 300,
		.in_window_s = 1800,
		.cooldown_s = 300,
		.min_replicas = 1,
		.max_replicas = 8,
		.step_pct = 30,
		.share_min_pct = share_pct,
		.share_max_pct = share_pct,
	};
}

int gp_scale_policy_check(const struct gp_scale_policy *p, char *err, size_t err_len)
{
	const char *why = NULL;

	if (p->out_pct < 1 || p->out_pct > 100)
		why = "the scale-out threshold must be 1 to 100 %";
	else if (p->margin_pct > p->out_pct ||
		 p->in_pct + p->margin_pct >= p->out_pct - p->margin_pct)
		why = "the thresholds' bands overlap: give in + margin below out - "
		      "margin "
		      "(e.g. 20 + 10 < 80 - 10)";
	else if (!p->out_window_s || !p->in_window_s)
		why = "the windows must be at least 1 s";
	else if (!p->min_replicas || p->max_replicas < p->min_replicas)
		why = "replicas: give 1 <= min <= max";
	else if (!p->step_pct || p->step_pct > 100)
		why = "the share's step must be 1 to 100 %";
	else if (!p->share_min_pct || p->share_max_pct < p->share_min_pct ||
		 p->share_max_pct > 100)
		why = "the share's bounds: give 1 <= the template's share <= ceiling <= "
		      "100 %";
	if (!why)
		return 0;
	snprintf(err, err_len, "%s", why);
	return -EINVAL;
}

const char *gp_scale_step_name(enum gp_scale_step step)
{
	static const char *const names[] = {"hold", "grow", "out", "shrink", "in"};

	return step <= GP_SCALE_IN ? names[step] : "?";
}

/* ---- streaks -------------------------------------------------------------- */

/* Above out_pct starts a streak above, below out_pct - margin ends it;
 * below in_pct starts one below, above in_pct + margin ends it. */
static void streaks_update(const struct gp_scale_policy *p, struct gp_scale_state *s,
			   double pct, int64_t now_ms)
{
	if (pct > p->out_pct && !s->above) {
		s->above = true;
		s->above_since_ms = now_ms;
	} else if (pct < (double)(p->out_pct - p->margin_pct)) {
		s->above = false;
	}
	if (pct < p->in_pct && !s->below) {
		s->below = true;
		s->below_since_ms = now_ms;
	} else if (pct > (double)(p->in_pct + p->margin_pct)) {
		s->below = false;
	}
}

static int64_t streak_s(bool on, int64_t since_ms, int64_t now_ms)
{
	return on ? (now_ms - since_ms) / MS_PER_S : -1;
}

/* ---- steps ---------------------------------------------------------------- */

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

static void scale_out(const struct gp_scale_policy *p, const struct gp_scale_view *v,
		      double pct, int64_t held_s, struct gp_scale_decision *d)
{
	unsigned ceiling = min_u(p->share_max_pct, v->share_pct + v->grow_room_pct);
	unsigned most = min_u(p->max_replicas, v->quota_replicas);
	int n = snprintf(d->reason, sizeof(d->reason),
			 "utilization %.0f %% above %u %% for %lld s (window %u s): ",
			 pct, p->out_pct, (long long)held_s, p->out_window_s);
	char *at = d->reason + n;
	size_t left = sizeof(d->reason) - (size_t)n;

	if (v->share_pct < ceiling) {
		d->step = GP_SCALE_GROW;
		d->share_pct = min_u(v->share_pct + p->step_pct, ceiling);
		snprintf(at, left,
			 "each replica's share %u %% -> %u %% (step %u, ceiling %u %%)",
			 v->share_pct, d->share_pct, p->step_pct, ceiling);
	} else if (v->replicas < most) {
		d->step = GP_SCALE_OUT;
		d->replicas = v->replicas + 1;
		snprintf(at, left, "share at its ceiling (%u %%): replicas %u -> %u",
			 v->share_pct, v->replicas, d->replicas);
	} else {
		snprintf(at, left,
			 "held at the ceiling: share %u %% (ceiling %u %%), replicas %u "
			 "(max "
			 "%u, quota %u)",
			 v->share_pct, ceiling, v->replicas, p->max_replicas,
			 v->quota_replicas);
	}
}

static void scale_in(const struct gp_scale_policy *p, const struct gp_scale_view *v,
		     double pct, int64_t held_s, struct gp_scale_decision *d)
{
	double low = p->out_pct - p->margin_pct, after;
	int n = snprintf(d->reason, sizeof(d->reason),
			 "utilization %.0f %% below %u %% for %lld s (window %u s): ",
			 pct, p->in_pct, (long long)held_s, p->in_window_s);
	char *at = d->reason + n;
	size_t left = sizeof(d->reason) - (size_t)n;

	if (v->share_pct > p->share_min_pct) {
		unsigned to = v->share_pct > p->share_min_pct + p->step_pct
				      ? v->share_pct - p->step_pct
				      : p->share_min_pct;

		after = pct * v->share_pct / to;
		if (after < low) {
			d->step = GP_SCALE_SHRINK;
			d->share_pct = to;
		}
		snprintf(at, left,
			 "each replica's share %u %% -> %u %% would leave %.0f %%%s",
			 v->share_pct, to, after,
			 after < low ? "" : ", too near scaling out");
	} else if (v->replicas > p->min_replicas) {
		after = pct * v->replicas / (v->replicas - 1);
		if (after < low) {
			d->step = GP_SCALE_IN;
			d->replicas = v->replicas - 1;
		}
		snprintf(at, left, "replicas %u -> %u would leave %.0f %%%s", v->replicas,
			 v->replicas - 1, after,
			 after < low ? "" : ", too near scaling out");
	} else {
		snprintf(at, left, "held at the floor: share %u %%, %u replica(s)",
			 v->share_pct, v->replicas);
	}
}

void gp_scale_decide(const struct gp_scale_policy *p, struct gp_scale_state *s,
		     const struct gp_scale_view *v, int64_t now_ms,
		     struct gp_scale_decision *ret)
{
	double pct = v->util * 100;
	int64_t above = streak_s(s->above, s->above_since_ms, now_ms);
	int64_t below;

	*ret = (struct gp_scale_decision){.share_pct = v->share_pct,
					  .replicas = v->replicas};
	streaks_update(p, s, pct, now_ms);
	above = streak_s(s->above, s->above_since_ms, now_ms);
	below = streak_s(s->below, s->below_since_ms, now_ms);
	if (s->stepped && now_ms - s->last_step_ms < (int64_t)p->cooldown_s * MS_PER_S)
		snprintf(ret->reason, sizeof(ret->reason),
			 "cooling down: %lld s of %u since the last step",
			 (long long)((now_ms - s->last_step_ms) / MS_PER_S),
			 p->cooldown_s);
	else if (above >= p->out_window_s)
		scale_out(p, v, pct, above, ret);
	else if (below >= p->in_window_s)
		scale_in(p, v, pct, below, ret);
	else
		snprintf(ret->reason, sizeof(ret->reason), "utilization %.0f %%: holding",
			 pct);
	if (ret->step == GP_SCALE_HOLD)
		return;
	s->stepped = true;
	s->last_step_ms = now_ms;
	s->above = s->below = false;
}
