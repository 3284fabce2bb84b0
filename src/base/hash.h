/* hash.h — a byte-string hash for in-memory hash tables (not for security).
 *
 * FNV-1a over 64-bit words followed by a final avalanche; keys are fixed-size
 * structs that the caller zero-fills, so padding never changes a hash. */
#ifndef GP_BASE_HASH_H
#define GP_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t gp_hash_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static inline uint64_t gp_hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return gp_hash_mix(h);
}

#endif
