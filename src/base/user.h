/* user.h — the Unix user a tenant's tasks run as.
 *
 * Tasks are untrusted, so each runs as its tenant's Unix user, never as
 * the server's. The admin gives each tenant a user spec (docs/api.md):
 *
 *   ""            automatic: gp_user_auto picks an unprivileged uid and
 *                 gid of gpupool's own range from the tenant's id (the
 *                 range's first id is the group every task shares);
 *   "NAME"        that user's uid and primary gid (getpwnam_r);
 *   "NAME:GROUP"  that user's uid and that group's gid (getgrnam_r);
 *   "UID:GID"     two numerals; no passwd entry is needed.
 *
 * Invariants: a gp_user filled here never has uid 0 or gid 0 (tasks never
 * run as root, whatever the spec says), and its uid and gid are never
 * (uid_t)-1 or (gid_t)-1. Names are looked up on this machine when the
 * function is called: the API checks a spec when the admin gives it, and
 * the agent resolves it again when it starts a task (the user may have
 * been removed or changed since). A NAME or GROUP is 1 to 63 of
 * [A-Za-z0-9._-] (a trailing '$' allowed), not starting with '-', not all
 * digits; a spec is at most GP_USER_SPEC_MAX - 1 bytes.
 *
 * To become the user, a launcher resolves it before fork (the lookups
 * allocate and may load NSS modules, which a child of a threaded process
 * must not), then calls in the child, in this order: setgroups with the
 * user's groups (getgrouplist before fork; none when name is ""),
 * setgid(gid), setuid(uid); and sets HOME to home when it is not "".
 *
 * Functions return 0, or a negative errno with the reason (what was wrong
 * and what to do) in err; err is always terminated when err_len > 0 and
 * may be NULL when err_len is 0. *ret is written only on success.
 * Nothing is allocated for the caller. Thread-safe (the _r lookups). */
#ifndef GP_BASE_USER_H
#define GP_BASE_USER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GP_USER_SPEC_MAX 64 /* a spec, with its NUL */
#define GP_USER_NAME_MAX 64 /* a user or group name, with its NUL */

/* The automatic range: tenant id N runs as uid and gid
 * GP_USER_AUTO_BASE + N, for 1 <= N < GP_USER_AUTO_COUNT. It lies in the
 * block that systemd's UID conventions leave unused (above the container
 * ranges, below 2^31), so it meets neither regular, system, dynamic nor
 * container users. */
#define GP_USER_AUTO_BASE  1879048192u /* 0x70000000 */
#define GP_USER_AUTO_COUNT (1u << 24)
/* Where a server may move the range (--task-uid-base): above the
 * system's users, and the whole range below 2^31. */
#define GP_USER_AUTO_BASE_MIN 65536u
#define GP_USER_AUTO_BASE_MAX ((1u << 31) - GP_USER_AUTO_COUNT)

struct gp_user {
	uid_t uid;
	gid_t gid;
	char name[GP_USER_NAME_MAX]; /* the passwd entry's; "" when there is none */
	char home[PATH_MAX];	     /* likewise */
};

/* Resolves a spec that is not "" (see above). -EINVAL: malformed, or uid
 * or gid 0 ("tasks never run as root: ..."); -ENOENT: no such user or
 * group on this machine; -ENAMETOOLONG: a passwd entry whose name or home
 * does not fit; another negative errno when the lookup itself failed. For
 * "UID:GID", name and home come from the passwd entry of UID when there
 * is one. */
int gp_user_resolve(const char *spec, struct gp_user *ret, char *err, size_t err_len);

/* The automatic user of tenant tenant_id in the range starting at base
 * (GP_USER_AUTO_BASE unless the server moved it): uid and gid base +
 * tenant_id, name and home "". -EINVAL: an id outside 1 ..
 * GP_USER_AUTO_COUNT - 1, or a base outside GP_USER_AUTO_BASE_MIN ..
 * GP_USER_AUTO_BASE_MAX; -EEXIST: a passwd entry or a group of this
 * machine has that uid or gid (the tenant must be given a user instead);
 * another negative errno when a lookup failed. */
int gp_user_auto(uint32_t base, int64_t tenant_id, struct gp_user *ret, char *err,
		 size_t err_len);

#endif
