/* quota.c — what a quota allows (quota.h). */
#include "core/quota.h"

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

	return q->unlimited ||
	       (use.mem_mib <= most.mem_mib && use.compute_pct <= most.compute_pct);
}

bool gp_quota_borrowing(const struct gp_quota *q, struct gp_quota_use use)
{
	return !gp_quota_within(q, use, false);
}
