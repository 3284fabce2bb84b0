/* rng.h — a small, fast, seedable pseudo-random generator (xoshiro256**).
 *
 * Everything in gpupool that needs randomness (the trace simulator's shuffles,
 * the random policy, tie-breaking orders) takes a struct gp_rng so that a run
 * is reproducible from its seed. The state lives in the caller's storage. */
#ifndef GP_BASE_RNG_H
#define GP_BASE_RNG_H

#include <stddef.h>
#include <stdint.h>

struct gp_rng {
	uint64_t s[4];
};

/* Seeds the generator; any seed, including 0, gives a usable state. */
void gp_rng_init(struct gp_rng *rng, uint64_t seed);

/* Next 64 uniformly distributed bits. */
uint64_t gp_rng_next(struct gp_rng *rng);

/* Uniform integer in [0, bound); bound must be > 0. Unbiased (rejection). */
uint64_t gp_rng_below(struct gp_rng *rng, uint64_t bound);

/* A wait drawn from mean/2 to 3·mean/2 (uniform): the verifiers' looks,
 * so that a task cannot time what it does between two of them. */
static inline uint64_t gp_rng_around(struct gp_rng *rng, uint64_t mean)
{
	return mean / 2 + gp_rng_below(rng, mean + 1);
}

/* Fisher–Yates shuffle of n elements of `size` bytes each (size <= 256). */
void gp_rng_shuffle(struct gp_rng *rng, void *base, size_t n, size_t size);

#endif
