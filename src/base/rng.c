/* rng.c — xoshiro256** seeded through splitmix64 (public-domain algorithms by
 * Blackman and Vigna, written here from their published description). */
#include "base/rng.h"

#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void gp_rng_init(struct gp_rng *rng, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&seed);
}

uint64_t gp_rng_next(struct gp_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t gp_rng_below(struct gp_rng *rng, uint64_t bound)
{
	/* Reject the top partial block so every value is equally likely. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
	uint64_t x;

	do
		x = gp_rng_next(rng);
	while (x >= limit);
	return x % bound;
}

void gp_rng_shuffle(struct gp_rng *rng, void *base, size_t n, size_t size)
{
	unsigned char tmp[256];
	unsigned char *a = base;

	for (size_t i = n; i > 1; i--) {
		size_t j = gp_rng_below(rng, i);

		if (j == i - 1)
			continue;
		memcpy(tmp, a + (i - 1) * size, size);
		memcpy(a + (i - 1) * size, a + j * size, size);
		memcpy(a + j * size, tmp, size);
	}
}
