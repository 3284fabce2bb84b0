/* quota.h — what a quota allows, written once for every engine (the
 * server's pass, the Kubernetes extender, the alerts and the services'
 * ceiling): a guaranteed part, the tenant's own, and a borrowable part on
 * top of it, which runs on capacity nobody else needs now and is taken
 * back when a lender needs it (sched.h). Memory is in MiB and compute in
 * percent of a device, each summed over the devices a task (or pod)
 * holds. A tenant's quota and each of its model quotas are such quotas.
 * Pure: no I/O, no state. */
#ifndef GP_CORE_QUOTA_H
#define GP_CORE_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

struct gp_quota {
	uint64_t mem_guaranteed_mib, mem_borrowable_mib;
	uint64_t compute_guaranteed_pct, compute_borrowable_pct;
	/* No limit, and nothing guaranteed: every use is borrowed, taken
	 * back like anyone's borrowing; it never takes back another's. */
	bool unlimited;
};

/* What is held, or asked for: memory and compute, summed over devices. */
struct gp_quota_use {
	uint64_t mem_mib, compute_pct;
};

/* A tenant's overall quota from its parts: one of nothing at all (the
 * admin's, or a tenant made --unlimited) is no limit and no guarantee.
 * (A model quota of nothing is a limit of nothing: its fields, unlimited
 * false.) */
struct gp_quota gp_quota_overall(uint64_t mem_guaranteed_mib, uint64_t mem_borrowable_mib,
				 uint64_t compute_guaranteed_pct, uint64_t compute_borrowable_pct);
/* The whole quota: guaranteed + borrowable. */
struct gp_quota_use gp_quota_limit(const struct gp_quota *q);
/* a + b. */
struct gp_quota_use gp_quota_sum(struct gp_quota_use a, struct gp_quota_use b);
/* Does `use` stay within the guarantee, or, with `borrow`, within the
 * whole quota? (An unlimited quota: any use with `borrow`, none without.) */
bool gp_quota_within(const struct gp_quota *q, struct gp_quota_use use, bool borrow);
/* Does `use` go past the guarantee (in memory or compute): is it
 * borrowing? */
bool gp_quota_borrowing(const struct gp_quota *q, struct gp_quota_use use);
/* How many more asks of `each` the whole quota holds beside `held`: the
 * fewest its memory and its compute leave room for (0 when held is past
 * the quota already); UINT_MAX for an unlimited quota, and for a part of
 * nothing asked (a service's replicas against its tenant's quota). */
unsigned gp_quota_room(const struct gp_quota *q, struct gp_quota_use held,
		       struct gp_quota_use each);

#endif
