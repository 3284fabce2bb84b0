/* autoscale.h — when an inference service grows, shrinks, adds or
 * removes a replica (issue 16; docs/operations.md).
 *
 * The signal is the replicas' mean effective utilization: the device
 * time they used over the compute share they hold (1.0: all of it), or
 * a replica's own probe standing in for it, sampled by the caller at any
 * rate. Scaling out waits for the signal to stay above `out_pct` for
 * `out_window_s`; scaling in, below `in_pct` for the longer
 * `in_window_s` (the seeds' 80 %/5 min and 20 %/30 min). Hysteresis: a
 * streak above starts over the threshold but ends only below it less
 * `margin_pct`, and a streak below likewise, so noise within the margin
 * neither starts nor breaks one; a step in is taken only when the load
 * it leaves would stay below out_pct less the margin (no in-then-out
 * flapping); after any step, `cooldown_s` without another, and both
 * streaks start over.
 *
 * Fraction-aware: out first grows each replica's compute share, live, by
 * at most `step_pct` of a card up to the template's ceiling where the
 * cards have room, and adds a replica only at the ceiling (within
 * max_replicas and the tenant's quota); in first shrinks the share back
 * towards the template's, then removes replicas down to min_replicas.
 * Every decision says why, with its figures, for the audit log.
 *
 * Pure computation: the caller owns the state and the clock (tests
 * compress time by passing their own). */
#ifndef GP_CORE_AUTOSCALE_H
#define GP_CORE_AUTOSCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_SCALE_REASON_MAX 240

struct gp_scale_policy {
	unsigned out_pct, in_pct, margin_pct;  /* 80, 20, 10 */
	unsigned out_window_s, in_window_s;    /* 300, 1800 */
	unsigned cooldown_s;		       /* 300 */
	unsigned min_replicas, max_replicas;   /* 1, 8 */
	unsigned step_pct;		       /* 30: a share moves by at most 0.3 card */
	unsigned share_min_pct, share_max_pct; /* the template's share and its ceiling */
};

/* The defaults above, for a template's share of share_pct (its ceiling:
 * share_pct too, that is no growing, unless the caller raises it). */
struct gp_scale_policy gp_scale_policy_default(unsigned share_pct);

/* A policy's bounds hold together; -EINVAL with the reason in err. */
int gp_scale_policy_check(const struct gp_scale_policy *p, char *err, size_t err_len);

/* What the policy remembers between samples; zero it to start. */
struct gp_scale_state {
	bool above, below, stepped;		/* a streak above, below; a step taken */
	int64_t above_since_ms, below_since_ms; /* when those streaks started */
	int64_t last_step_ms;			/* when the last step was taken */
};

/* The service as it is now. */
struct gp_scale_view {
	double util;		 /* mean effective utilization, 0 to 1 (more: borrowed) */
	unsigned replicas;	 /* running or starting */
	unsigned share_pct;	 /* each replica's compute share now */
	unsigned grow_room_pct;	 /* how far every replica's card lets its share grow */
	unsigned quota_replicas; /* the most replicas the tenant's quota holds */
};

enum gp_scale_step {
	GP_SCALE_HOLD,	 /* nothing */
	GP_SCALE_GROW,	 /* each replica's share to .share_pct */
	GP_SCALE_OUT,	 /* .replicas replicas (one more) */
	GP_SCALE_SHRINK, /* each replica's share to .share_pct */
	GP_SCALE_IN,	 /* .replicas replicas (one fewer) */
};

struct gp_scale_decision {
	enum gp_scale_step step;
	unsigned share_pct, replicas; /* after the step */
	char reason[GP_SCALE_REASON_MAX];
};

/* One sample at now_ms: updates *s and says what to do. A step other
 * than HOLD is taken by the caller, who must not call again with an
 * earlier now_ms. */
void gp_scale_decide(const struct gp_scale_policy *p, struct gp_scale_state *s,
		     const struct gp_scale_view *v, int64_t now_ms,
		     struct gp_scale_decision *ret);

const char *gp_scale_step_name(enum gp_scale_step step);

#endif
