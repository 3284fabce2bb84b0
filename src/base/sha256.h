/* sha256.h — SHA-256 (FIPS 180-4), for the interposer's task secrets.
 *
 * The limits table of a device (shim/limits.c) is readable by every task
 * on the device and keeps a hash of each task's secret, so the hash must
 * not give the secret back: a one-way hash, not base/hash.h. Written here
 * from the standard (the server links nettle; the interposer, loaded into
 * every task process, links nothing it does not need). One-shot or
 * incremental; no allocation, nothing to free. */
#ifndef GP_BASE_SHA256_H
#define GP_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GP_SHA256_BYTES 32

struct gp_sha256 {
	uint32_t h[8];
	uint64_t length;                /* bytes hashed so far */
	unsigned char block[64];
	size_t used;                    /* bytes waiting in block */
};

void gp_sha256_init(struct gp_sha256 *s);
void gp_sha256_update(struct gp_sha256 *s, const void *data, size_t len);
/* The digest of everything given since init; s must be initialised again
 * before another use. */
void gp_sha256_final(struct gp_sha256 *s, unsigned char ret_digest[GP_SHA256_BYTES]);

#endif
