/* user.c — user specs resolved against this machine's passwd and group
 * databases (see user.h). A spec is parsed into its parts first, so that
 * a malformed one is refused without a lookup; then the lookups
 * (getpwnam_r, getgrnam_r, getpwuid_r, getgrgid_r, with a buffer that
 * grows while they say ERANGE) fill the ids, and root is refused last,
 * whichever way the spec reached it. */
#include "base/user.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"

#define BUF_FIRST   1024
#define BUF_MAX	    (1 << 20)
#define ID_MAX	    4294967294ULL /* (uid_t)-1 means "no id" to the kernel */
#define ID_DIGITS   10
#define NAME_CHARS  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
#define ROOT_ADVICE "tasks never run as root: map the tenant to an unprivileged user"
#define FORMS	    "give NAME, NAME:GROUP or UID:GID"

_Static_assert(sizeof(uid_t) >= 4 && sizeof(gid_t) >= 4, "ids of 32 bits");


/* ---- parsing ---------------------------------------------------------- */

/* A spec taken apart: user (a name or a number), and group when given. */
struct spec {
	char user[GP_USER_NAME_MAX], group[GP_USER_NAME_MAX];
	bool numeric, has_group;
	unsigned long long uid, gid;
};

enum part { PART_BAD, PART_NAME, PART_NUMBER };

static enum part part_kind(const char *s)
{
	size_t n = strlen(s), digits = strspn(s, "0123456789");
	size_t body = n && s[n - 1] == '$' ? n - 1 : n; /* a trailing '$' */

	if (n == 0 || n >= GP_USER_NAME_MAX)
		return PART_BAD;
	if (digits == n)
		return n <= ID_DIGITS ? PART_NUMBER : PART_BAD;
	if (body == 0 || strspn(s, NAME_CHARS) != body || s[0] == '-' ||
	    !strcmp(s, ".") || !strcmp(s, ".."))
		return PART_BAD;
	return PART_NAME;
}

static int part_bad(const char *spec, const char *part, char *err, size_t len)
{
	return gp_fail(
		err, len, -EINVAL,
		"user \"%s\": \"%s\" is neither a name (1 to %d letters, digits, '.', "
		"'_' or '-', not starting with '-') nor a number; " FORMS,
		spec, part, GP_USER_NAME_MAX - 1);
}

static int number_parse(const char *spec, const char *text, unsigned long long *ret,
			char *err, size_t len)
{
	unsigned long long v = strtoull(text, NULL, 10);

	if (v > ID_MAX)
		return gp_fail(err, len, -EINVAL,
			    "user \"%s\": %s is over the largest id, %llu", spec, text,
			    ID_MAX);
	*ret = v;
	return 0;
}

/* The two parts' kinds make the form: NAME, NAME:GROUP or UID:GID. */
static int form_check(const char *spec, enum part user, enum part group, bool has_group,
		      char *err, size_t len)
{
	if (!has_group && user == PART_NUMBER)
		return gp_fail(err, len, -EINVAL,
			    "user \"%s\": a uid alone is not enough; give UID:GID (two "
			    "numbers), or a user name",
			    spec);
	if (has_group && user != group)
		return gp_fail(err, len, -EINVAL,
			    "user \"%s\": give NAME:GROUP (two names) or UID:GID (two "
			    "numbers), not one of each",
			    spec);
	return 0;
}

static int spec_parse(const char *spec, struct spec *ret, char *err, size_t len)
{
	const char *colon;
	enum part user, group = PART_BAD;
	int r;

	if (!spec)
		return gp_fail(err, len, -EINVAL, "no user spec; " FORMS);
	if (!*spec)
		return gp_fail(err, len, -EINVAL,
			    "an empty user spec means automatic (gp_user_auto); " FORMS);
	if (strlen(spec) >= GP_USER_SPEC_MAX)
		return gp_fail(err, len, -EINVAL, "user \"%.*s...\": over %d bytes; " FORMS,
			    16, spec, GP_USER_SPEC_MAX - 1);
	memset(ret, 0, sizeof(*ret));
	colon = strchr(spec, ':');
	snprintf(ret->user, sizeof(ret->user), "%.*s",
		 (int)(colon ? (size_t)(colon - spec) : strlen(spec)), spec);
	ret->has_group = colon != NULL;
	if (colon)
		snprintf(ret->group, sizeof(ret->group), "%s", colon + 1);
	user = part_kind(ret->user);
	if (user == PART_BAD)
		return part_bad(spec, ret->user, err, len);
	if (colon && (group = part_kind(ret->group)) == PART_BAD)
		return part_bad(spec, ret->group, err, len);
	r = form_check(spec, user, group, colon != NULL, err, len);
	ret->numeric = user == PART_NUMBER;
	if (r == 0 && ret->numeric)
		r = number_parse(spec, ret->user, &ret->uid, err, len);
	if (r == 0 && ret->numeric)
		r = number_parse(spec, ret->group, &ret->gid, err, len);
	return r;
}

/* ---- lookups ---------------------------------------------------------- */

/* Did a lookup find nothing? getpwnam_r(3) lists the codes that mean so. */
static bool is_not_found(int rc)
{
	return rc == 0 || rc == ENOENT || rc == ESRCH || rc == EBADF || rc == EPERM;
}

/* One passwd or group entry, by name (name set) or by id. */
struct query {
	bool group;
	const char *name;
	unsigned long long id;
	bool found, too_long;
	struct gp_user out; /* a group fills only gid and name */
};

static void copy_field(struct query *q, char *dst, size_t size, const char *src)
{
	if (strlen(src) >= size)
		q->too_long = true;
	else
		snprintf(dst, size, "%s", src);
}

static int passwd_look(struct query *q, char *buf, size_t size)
{
	struct passwd pw, *found = NULL;
	int rc = q->name ? getpwnam_r(q->name, &pw, buf, size, &found)
			 : getpwuid_r((uid_t)q->id, &pw, buf, size, &found);

	if (rc == 0 && found) {
		q->found = true;
		q->out.uid = pw.pw_uid;
		q->out.gid = pw.pw_gid;
		copy_field(q, q->out.name, sizeof(q->out.name), pw.pw_name);
		copy_field(q, q->out.home, sizeof(q->out.home),
			   pw.pw_dir ? pw.pw_dir : "");
	}
	return rc;
}

static int group_look(struct query *q, char *buf, size_t size)
{
	struct group gr, *found = NULL;
	int rc = q->name ? getgrnam_r(q->name, &gr, buf, size, &found)
			 : getgrgid_r((gid_t)q->id, &gr, buf, size, &found);

	if (rc == 0 && found) {
		q->found = true;
		q->out.gid = gr.gr_gid;
		copy_field(q, q->out.name, sizeof(q->out.name), gr.gr_name);
	}
	return rc;
}

/* Runs the query with a buffer that grows while the lookup says ERANGE:
 * 0 (q->found says whether there was an entry) or a negative errno. */
static int query_run(struct query *q)
{
	size_t size = BUF_FIRST;

	for (;;) {
		char *buf = malloc(size);
		int rc;

		if (!buf)
			return -ENOMEM;
		q->found = false;
		rc = q->group ? group_look(q, buf, size) : passwd_look(q, buf, size);
		free(buf);
		if (rc == ERANGE && size < BUF_MAX) {
			size *= 2;
			continue;
		}
		if (q->found || is_not_found(rc))
			return 0;
		return -rc;
	}
}

static int lookup_failed(const char *what, const char *key, int r, char *err, size_t len)
{
	return gp_fail(err, len, r, "looking up %s \"%s\": %s", what, key, strerror(-r));
}

/* ---- resolving -------------------------------------------------------- */

static int root_refused(const struct gp_user *u, const char *spec, char *err, size_t len)
{
	if (u->uid == 0)
		return gp_fail(err, len, -EINVAL, "user \"%s\" is uid 0; " ROOT_ADVICE,
			    spec);
	if (u->gid == 0)
		return gp_fail(err, len, -EINVAL,
			    "user \"%s\" has gid 0 (the root group); " ROOT_ADVICE, spec);
	return 0;
}

/* UID:GID: name and home from the passwd entry of UID, when there is one. */
static int numeric_resolve(const char *spec, const struct spec *p, struct gp_user *u,
			   char *err, size_t len)
{
	struct query q = {.id = p->uid};
	int r;

	u->uid = (uid_t)p->uid;
	u->gid = (gid_t)p->gid;
	r = root_refused(u, spec, err, len);
	if (r < 0)
		return r;
	r = query_run(&q);
	if (r < 0)
		return lookup_failed("uid", p->user, r, err, len);
	if (q.too_long)
		return gp_fail(
			err, len, -ENAMETOOLONG,
			"user \"%s\": the passwd entry of uid %s has a name or home too "
			"long to use",
			spec, p->user);
	if (q.found) {
		memcpy(u->name, q.out.name, sizeof(u->name));
		memcpy(u->home, q.out.home, sizeof(u->home));
	}
	return 0;
}

/* NAME or NAME:GROUP. */
static int named_resolve(const struct spec *p, struct gp_user *u, char *err, size_t len)
{
	struct query q = {.name = p->user}, g = {.group = true, .name = p->group};
	int r = query_run(&q);

	if (r < 0)
		return lookup_failed("user", p->user, r, err, len);
	if (!q.found)
		return gp_fail(
			err, len, -ENOENT,
			"no user \"%s\" on this machine (getent passwd %s); create it, "
			"or give UID:GID",
			p->user, p->user);
	if (q.too_long)
		return gp_fail(err, len, -ENAMETOOLONG,
			    "user \"%s\": its passwd entry has a name or home too long "
			    "to use",
			    p->user);
	*u = q.out;
	if (!p->has_group)
		return 0;
	r = query_run(&g);
	if (r < 0)
		return lookup_failed("group", p->group, r, err, len);
	if (!g.found)
		return gp_fail(err, len, -ENOENT,
			    "no group \"%s\" on this machine (getent group %s); create "
			    "it, or "
			    "give the user alone to use its own group",
			    p->group, p->group);
	u->gid = g.out.gid;
	return 0;
}

int gp_user_resolve(const char *spec, struct gp_user *ret, char *err, size_t err_len)
{
	struct gp_user u = {0};
	struct spec p;
	int r = spec_parse(spec, &p, err, err_len);

	if (r == 0 && !ret)
		r = gp_fail(err, err_len, -EINVAL, "gp_user_resolve: no place for the user");
	if (r == 0)
		r = p.numeric ? numeric_resolve(spec, &p, &u, err, err_len)
			      : named_resolve(&p, &u, err, err_len);
	if (r == 0)
		r = root_refused(&u, spec, err, err_len);
	if (r == 0 && (u.uid == (uid_t)-1 || u.gid == (gid_t)-1))
		r = gp_fail(err, err_len, -EINVAL, "user \"%s\": its uid or gid is -1",
			 spec);
	if (r == 0)
		*ret = u;
	return r;
}

int gp_user_auto(uint32_t base, int64_t tenant_id, struct gp_user *ret, char *err,
		 size_t err_len)
{
	struct query q = {0}, g = {.group = true};
	int r;

	if (!ret || tenant_id < 1 || tenant_id >= GP_USER_AUTO_COUNT)
		return gp_fail(err, err_len, -EINVAL,
			    "tenant %lld has no automatic user (ids 1 to %u have one); "
			    "give it "
			    "a user",
			    (long long)tenant_id, GP_USER_AUTO_COUNT - 1);
	if (base < GP_USER_AUTO_BASE_MIN || base > GP_USER_AUTO_BASE_MAX)
		return gp_fail(err, err_len, -EINVAL,
			    "the automatic users' base %u is not from %u to %u", base,
			    GP_USER_AUTO_BASE_MIN, GP_USER_AUTO_BASE_MAX);
	q.id = g.id = base + (unsigned long long)tenant_id;
	r = query_run(&q);
	if (r == 0 && !q.found)
		r = query_run(&g);
	if (r < 0)
		return gp_fail(err, err_len, r, "looking up id %llu: %s", q.id,
			    strerror(-r));
	if (q.found || g.found)
		return gp_fail(
			err, err_len, -EEXIST,
			"id %llu, the automatic user of tenant %lld, is the %s \"%s\" of "
			"this machine; give the tenant a user of its own",
			q.id, (long long)tenant_id, q.found ? "user" : "group",
			q.found ? q.out.name : g.out.name);
	memset(ret, 0, sizeof(*ret));
	ret->uid = (uid_t)q.id;
	ret->gid = (gid_t)q.id;
	return 0;
}
