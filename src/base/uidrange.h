/* uidrange.h — the automatic uid ranges of the servers on one machine.
 *
 * A server run as root gives a tenant without a Unix user the uid base +
 * the tenant's id (base/user.h). Two servers with the same base give
 * tenants of the same id the same uid: each could read the other's files
 * and kill the other's tasks. So a server claims its range here before
 * it starts a task, and holds it while it runs; a server whose range
 * overlaps one that a running server holds is refused, told whose it is
 * and which base is free.
 *
 * The registry is a directory of root's (GP_UIDRANGE_DIR, mode 0700):
 * one file per claimed range, "range-BASE", holding who claimed it, and
 * locked (flock) by the claiming process for as long as it runs. A lock
 * is the kernel's, so a server that dies, even by SIGKILL, lets its range
 * go at once; a file nobody locks is a range nobody holds, removed by
 * the next claim. Every range is GP_USER_AUTO_COUNT ids long; a claim
 * runs under the directory's own lock ("lock"), so two servers starting
 * at once cannot both take a range.
 *
 * "auto" (any) takes the first free of the aligned ranges
 * GP_USER_AUTO_BASE + k * GP_USER_AUTO_COUNT that fit below 2^31 (16 of
 * them): for servers whose tenants keep no files of their own between
 * starts, since the range may differ from one start to the next.
 *
 * Ownership: gp_uidrange_claim returns a claim freed (its range let go)
 * with gp_uidrange_free. The claim's descriptor is close-on-exec; a
 * child that outlives its server does not hold the range. Functions
 * return 0 or a negative errno, with what was wrong and what to do in
 * err. Thread-safe. */
#ifndef GP_BASE_UIDRANGE_H
#define GP_BASE_UIDRANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_UIDRANGE_DIR "/run/gpupool-uids"

struct gp_uidrange;

/* Claims the range at base (any: the first free aligned one, base
 * ignored) in the registry at dir (made 0700 when missing; it must be a
 * directory of this user's that nobody else may write). owner says who
 * claims it, for the message another server gets (one line). -EADDRINUSE
 * when a running server holds an overlapping range (err: its base, pid
 * and owner, and a free base), or when any finds none free; -EPERM when
 * dir is not safe to use; another negative errno when it cannot be read
 * or written. */
int gp_uidrange_claim(const char *dir, uint32_t base, bool any, const char *owner,
		      struct gp_uidrange **ret, char *err, size_t err_len);

/* The base a claim holds. */
uint32_t gp_uidrange_base(const struct gp_uidrange *c);

/* Lets the range go; accepts NULL, returns NULL. */
struct gp_uidrange *gp_uidrange_free(struct gp_uidrange *c);

#endif
