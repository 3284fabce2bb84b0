/* partition.c — the catalogue of partition sets and the choice of a
 * profile and its start (partition.h).
 *
 * MIG (NVIDIA's MIG user guide, "Supported MIG profiles", A100-SXM4-80GB
 * and 40GB, H100/H200 by the same slice geometry): units are the 8
 * memory slices; compute is g of 7 GPU slices. Memory is the profile's
 * nominal size. vNPU (Huawei's virtualization templates; sizes from
 * vendor-facts): modelled as aligned blocks of 1, 2 and 4 eighths of the
 * chip — stricter than Huawei's own rules, which place any free
 * AICores, so every placement the core makes can be made. */
#include "core/partition.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#define G7(g) ((uint16_t)((g) * 1000 / 7))

static const struct gp_part_set sets[] = {
	{ "A100-MIG", "mig", 8, 6, {
		{ "1g.10gb", 1, 0x7f, 10240, G7(1) },
		{ "1g.20gb", 2, 0x55, 20480, G7(1) },
		{ "2g.20gb", 2, 0x15, 20480, G7(2) },
		{ "3g.40gb", 4, 0x11, 40960, G7(3) },
		{ "4g.40gb", 4, 0x01, 40960, G7(4) },
		{ "7g.80gb", 8, 0x01, 81920, 1000 },
	} },
	{ "A100-40G-MIG", "mig", 8, 6, {
		{ "1g.5gb", 1, 0x7f, 5120, G7(1) },
		{ "1g.10gb", 2, 0x55, 10240, G7(1) },
		{ "2g.10gb", 2, 0x15, 10240, G7(2) },
		{ "3g.20gb", 4, 0x11, 20480, G7(3) },
		{ "4g.20gb", 4, 0x01, 20480, G7(4) },
		{ "7g.40gb", 8, 0x01, 40960, 1000 },
	} },
	{ "910B-VNPU", "vnpu", 8, 4, {
		{ "vir03_1c_8g", 1, 0xff, 8192, 125 },
		{ "vir06_1c_16g", 2, 0x55, 16384, 250 },
		{ "vir12_3c_32g", 4, 0x11, 32768, 500 },
		{ "whole", 8, 0x01, 65536, 1000 },
	} },
	{ "310P-VNPU", "vnpu", 8, 4, {
		{ "vir01", 1, 0xff, 3072, 125 },
		{ "vir02", 2, 0x55, 6144, 250 },
		{ "vir04", 4, 0x11, 12288, 500 },
		{ "whole", 8, 0x01, 24576, 1000 },
	} },
};

#define SETS (sizeof(sets) / sizeof(sets[0]))

const struct gp_part_set *gp_part_set(unsigned id)
{
	return id >= 1 && id <= SETS ? &sets[id - 1] : NULL;
}

unsigned gp_part_set_of_model(const char *name)
{
	for (size_t i = 0; name && i < SETS; i++)
		if (strcasecmp(name, sets[i].model) == 0)
			return (unsigned)i + 1;
	return 0;
}

unsigned gp_part_set_of_profiles(const char *const *names, int n)
{
	for (size_t i = 0; i < SETS; i++) {
		int found = 0;

		for (int k = 0; k < sets[i].profiles; k++)
			for (int j = 0; j < n; j++)
				if (strcmp(names[j], sets[i].profile[k].name) == 0) {
					found++;
					break;
				}
		if (found == sets[i].profiles)
			return (unsigned)i + 1;
	}
	return 0;
}

int gp_part_profile_for(unsigned id, uint32_t mem_mib, uint16_t compute)
{
	const struct gp_part_set *s = gp_part_set(id);

	for (int i = 0; s && i < s->profiles; i++)
		if (s->profile[i].mem_mib >= mem_mib && s->profile[i].compute >= compute)
			return i;
	return -1;
}

bool gp_part_fits(unsigned id, int profile, uint8_t used)
{
	const struct gp_part_set *s = gp_part_set(id);

	return s && profile >= 0 && profile < s->profiles &&
	       gp_part_free_starts(&s->profile[profile], used) != 0;
}

/* How much a card with `used` taken can still hold: every (profile,
 * start) still free, weighted by the profile's units. */
static unsigned room(const struct gp_part_set *s, uint8_t used)
{
	unsigned sum = 0;

	for (int i = 0; i < s->profiles; i++)
		sum += s->profile[i].units *
		       (unsigned)__builtin_popcount(gp_part_free_starts(&s->profile[i], used));
	return sum;
}

int gp_part_start(unsigned id, int profile, uint8_t used)
{
	const struct gp_part_set *s = gp_part_set(id);
	int best = -1;
	unsigned best_room = 0;

	if (!s || profile < 0 || profile >= s->profiles)
		return -1;
	for (unsigned start = 0; start < s->units; start++) {
		const struct gp_part_profile *p = &s->profile[profile];
		unsigned r;

		if (!gp_part_free_at(p, start, used))
			continue;
		r = room(s, used | gp_part_units(p, start));
		if (best < 0 || r > best_room) {
			best = (int)start;
			best_room = r;
		}
	}
	return best;
}
