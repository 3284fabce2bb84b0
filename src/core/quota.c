/* quota.c — what a quota allows (quota.h). */
#include "core/quota.h"

#include <limits.h>

struct gp_quota gp_quota_overall(uint64_t mem_guaranteed_mib, uint64_t mem_borrowable_mib,
				 uint64_t compute_guaranteed_pct, uint64_t compute_borrowable_pct)
{
	return (struct gp_quota){ mem_guaranteed_mib, mem_borrowable_mib, compute_guaranteed_pct,
				  compute_borrowable_pct,
				  .unlimited = !mem_guaranteed_mib && !mem_borrowable_mib &&
					       !compute_guaranteed_pct && !compute_borrowable_pct };
}

struct gp_quota_use gp_quota_limit(const struct gp_quota *q)
{
	return (struct gp_quota_use){ q->mem_guaranteed_mib + q->mem_borrowable_mib,
				      q->compute_guaranteed_pct + q->compute_borrowable_pct };
}

struct gp_quota_use gp_quota_sum(struct gp_quota_use a, struct gp_quota_use b)
{
	return (struct gp_quota_use){ a.mem_mib + b.mem_mib, a.compute_pct + b.compute_pct };
}

bool gp_quota_within(const struct gp_quota *q, struct gp_quota_use use, bool borrow)
{
	struct gp_quota_use most = borrow ? gp_quota_limit(q)
					  : (struct gp_quota_use){ q->mem_guaranteed_mib,
								   q->compute_guaranteed_pct };

	if (q->unlimited)       /* no limit, and nothing guaranteed */
		return borrow || (use.mem_mib == 0 && use.compute_pct == 0);
	return use.mem_mib <= most.mem_mib && use.compute_pct <= most.compute_pct;
}

bool gp_quota_borrowing(const struct gp_quota *q, struct gp_quota_use use)
{
	return !gp_quota_within(q, use, false);
}

/* How many `each` fit in `limit` beside `held`, at most UINT_MAX. */
static unsigned times_in(uint64_t limit, uint64_t held, uint64_t each)
{
	uint64_t left = limit > held ? limit - held : 0, n;

	if (!each)
		return UINT_MAX;
	n = left / each;
	return n < UINT_MAX ? (unsigned)n : UINT_MAX;
}

unsigned gp_quota_room(const struct gp_quota *q, struct gp_quota_use held,
		       struct gp_quota_use each)
{
	struct gp_quota_use most = gp_quota_limit(q);
	unsigned by_mem, by_compute;

	if (q->unlimited)
		return UINT_MAX;
	by_mem = times_in(most.mem_mib, held.mem_mib, each.mem_mib);
	by_compute = times_in(most.compute_pct, held.compute_pct, each.compute_pct);
	return by_mem < by_compute ? by_mem : by_compute;
}
