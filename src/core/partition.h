/* partition.h — hardware partitions as the core sees them: discrete
 * shapes on a card (NVIDIA MIG profiles, Ascend vNPU templates).
 *
 * A partitionable card is `units` placement units wide (MIG: its memory
 * slices). Each profile of its set takes a fixed number of units, may
 * start only at some of them, and gives a fixed memory and compute. A
 * share asked of such a card gets the smallest profile that holds it (by
 * memory, then compute), at the start that leaves the card able to hold
 * the most profiles afterwards (least fragmentation); when that profile
 * has no free start the card does not fit, even if a larger one would
 * (a partitioned card serves its profiles, not arbitrary sizes).
 *
 * The sets are a small catalogue, named like the device models that use
 * them ("A100-MIG"); set 0 means a card of software slices. Pure
 * computation: no state, no I/O. */
#ifndef GP_CORE_PARTITION_H
#define GP_CORE_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#define GP_PART_PROFILES_MAX 8
#define GP_PART_UNITS_MAX 8

struct gp_part_profile {
	const char *name;               /* "3g.40gb", "vir10_3c_32g" */
	uint8_t units;
	uint8_t starts;                 /* bit i: may start at unit i */
	uint32_t mem_mib;
	uint16_t compute;               /* thousandths of the card */
};

struct gp_part_set {
	const char *model;              /* the model name that has it: "A100-MIG" */
	const char *kind;               /* "mig", "vnpu" */
	uint8_t units;
	uint8_t profiles;
	struct gp_part_profile profile[GP_PART_PROFILES_MAX];   /* smallest first */
};

/* Set `id` (1…), or NULL. */
const struct gp_part_set *gp_part_set(unsigned id);

/* The set of model `name` (case-insensitive), or 0 when it has none. */
unsigned gp_part_set_of_model(const char *name);

/* The set whose every profile is among `names` (a card's profiles, as
 * its vendor names them: "3g.40gb"), or 0 when none is. */
unsigned gp_part_set_of_profiles(const char *const *names, int n);

/* The profile a share of (mem_mib, compute) gets on set `id`: its index,
 * or -1 when no profile holds it. */
int gp_part_profile_for(unsigned id, uint32_t mem_mib, uint16_t compute);

/* The units a profile at `start` takes (a bit per unit). */
static inline uint8_t gp_part_units(const struct gp_part_profile *p, unsigned start)
{
	return (uint8_t)(((1u << p->units) - 1) << start);
}

/* The starts (a bit each) where profile p is free with `used` taken: a
 * start is blocked when any of the p->units units from it is used. */
static inline uint8_t gp_part_free_starts(const struct gp_part_profile *p, uint8_t used)
{
	unsigned blocked = used;

	for (unsigned i = 1; i < p->units; i++)
		blocked |= (unsigned)used >> i;
	return (uint8_t)(p->starts & ~blocked & ((1u << (GP_PART_UNITS_MAX - p->units + 1)) - 1));
}

/* Where that profile goes on a card whose units `used` are taken: its
 * start, or -1 when it has no free start. */
int gp_part_start(unsigned id, int profile, uint8_t used);

/* Has that profile any free start? (What fitting asks: cheaper than
 * choosing the start.) */
bool gp_part_fits(unsigned id, int profile, uint8_t used);

/* Can `profile` start at `start` with `used` taken? */
static inline bool gp_part_free_at(const struct gp_part_profile *p, unsigned start, uint8_t used)
{
	return start < GP_PART_UNITS_MAX && (gp_part_free_starts(p, used) >> start & 1);
}

#endif
