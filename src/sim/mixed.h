/* mixed.h — a generated trace of a heterogeneous pool: nodes of six
 * vendors' cards, some of them partitioned (MIG, vNPU), and pods asking
 * for shares, whole cards and gangs of one vendor's models each.
 *
 * The openb traces know NVIDIA only; this one exercises what issue 13
 * adds to the core (vendors, partitions) at any size, with the openb
 * trace's mix of shapes: about 55 % shares (0.1 to 0.7 of a card), 35 %
 * one whole card, 10 % gangs of 2, 4 or 8 cards, with 4 or 8 cores a
 * share and 8 or 16 a card (4 GiB of host memory a core, the standard
 * sizes tasks are given); each pod asks for one
 * vendor family (its gpu_spec lists that family's models, e.g.
 * "910B|910B-VNPU"), chosen in proportion to the family's cards, and 5 %
 * ask for any card. docs/scheduling.md has the table of node kinds.
 * Deterministic for a seed (base/rng.h). */
#ifndef GP_SIM_MIXED_H
#define GP_SIM_MIXED_H

#include <stddef.h>
#include <stdint.h>

#include "sim/trace.h"

struct gp_mixed_options {
	size_t nodes;           /* 8 cards each */
	size_t pods;
	uint64_t seed;
};

/* Fills an empty *t (release it with gp_trace_release). */
int gp_mixed_generate(const struct gp_mixed_options *o, struct gp_trace *t, char *err,
		      size_t err_len);

/* Writes t as openb CSV files: dir/nodes.csv and dir/pods.csv (made, or
 * replaced). */
int gp_mixed_write(const struct gp_trace *t, const char *dir, char *err, size_t err_len);

#endif
