/* test-user.c — the Unix users tasks run as (src/base/user.c): a real
 * user of this machine by name, with a group, and by UID:GID (with and
 * without a passwd entry); root refused however it is named (uid 0, gid
 * 0, the root group); malformed specs refused without a lookup; unknown
 * users and groups; the automatic range; messages that fit and stay
 * terminated in a short buffer, and outputs untouched on failure.
 *
 * The real user and group are whatever this machine's databases hold
 * first that is not root (getpwent, getgrent), so the test needs no
 * account of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "base/user.h"

#define ERR_MAX 512

/* The first passwd entry that is not root's, in either id, with a name
 * the spec grammar takes. */
static struct passwd *some_user(void)
{
	struct passwd *pw;

	setpwent();
	while ((pw = getpwent()))
		if (pw->pw_uid && pw->pw_gid && strlen(pw->pw_name) < GP_USER_NAME_MAX &&
		    strspn(pw->pw_name, "0123456789") != strlen(pw->pw_name) &&
		    pw->pw_name[0] != '-' && !strchr(pw->pw_name, ':'))
			break;
	endpwent();
	return pw;
}

static struct group *some_group(void)
{
	struct group *gr;

	setgrent();
	while ((gr = getgrent()))
		if (gr->gr_gid && strlen(gr->gr_name) < GP_USER_NAME_MAX &&
		    strspn(gr->gr_name, "0123456789") != strlen(gr->gr_name))
			break;
	endgrent();
	return gr;
}

/* A uid (and gid) no entry of this machine has. */
static unsigned unused_id(void)
{
	unsigned id = 4242000;

	while (getpwuid(id) || getgrgid(id))
		id++;
	return id;
}

/* What gp_user_resolve says of spec: its code, the message in err. */
static int resolve(const char *spec, struct gp_user *u, char *err)
{
	memset(err, 0, ERR_MAX);
	return gp_user_resolve(spec, u, err, ERR_MAX);
}

static void test_real_user(void **state)
{
	struct passwd *pw = some_user();
	char err[ERR_MAX], name[GP_USER_NAME_MAX], home[512];
	struct gp_user u;
	uid_t uid;
	gid_t gid;

	(void)state;
	if (!pw)
		skip(); /* a machine with no user but root */
	snprintf(name, sizeof(name), "%s", pw->pw_name);
	snprintf(home, sizeof(home), "%s", pw->pw_dir);
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	assert_int_equal(resolve(name, &u, err), 0);
	assert_int_equal(u.uid, uid);
	assert_int_equal(u.gid, gid);
	assert_string_equal(u.name, name);
	assert_string_equal(u.home, home);
}

static void test_user_and_group(void **state)
{
	struct passwd *pw = some_user();
	struct group *gr = some_group();
	char err[ERR_MAX], spec[GP_USER_SPEC_MAX * 2], user[GP_USER_NAME_MAX];
	struct gp_user u;
	gid_t gid;

	(void)state;
	if (!pw || !gr)
		skip();
	snprintf(user, sizeof(user), "%s", pw->pw_name);
	gid = gr->gr_gid;
	snprintf(spec, sizeof(spec), "%s:%s", user, gr->gr_name);
	if (strlen(spec) >= GP_USER_SPEC_MAX)
		skip();
	assert_int_equal(resolve(spec, &u, err), 0);
	assert_int_equal(u.gid, gid); /* the group's, not the user's own */
	assert_string_equal(u.name, user);
}

static void test_numeric(void **state)
{
	struct passwd *pw = some_user();
	char err[ERR_MAX], spec[64];
	unsigned id = unused_id();
	struct gp_user u;

	(void)state;
	/* No passwd entry: no name, no home. */
	snprintf(spec, sizeof(spec), "%u:%u", id, id + 1);
	memset(&u, 0x55, sizeof(u));
	assert_int_equal(resolve(spec, &u, err), 0);
	assert_int_equal(u.uid, id);
	assert_int_equal(u.gid, id + 1);
	assert_string_equal(u.name, "");
	assert_string_equal(u.home, "");
	/* The largest id there is. */
	assert_int_equal(resolve("4294967294:4294967294", &u, err), 0);
	assert_int_equal(u.uid, 4294967294u);
	/* An entry: its name and home. */
	if (!pw)
		return;
	snprintf(spec, sizeof(spec), "%u:%u", (unsigned)pw->pw_uid, id);
	snprintf(err, sizeof(err), "%s", pw->pw_name);
	assert_int_equal(gp_user_resolve(spec, &u, NULL, 0), 0);
	assert_string_equal(u.name, err);
	assert_int_equal(u.gid, id);
}

/* Root, by uid, by gid, by name, by group. */
static void test_root_refused(void **state)
{
	struct passwd *pw = some_user();
	struct group *root_group = getgrgid(0);
	char err[ERR_MAX], spec[GP_USER_SPEC_MAX * 2];
	static const char *const specs[] = {"root", "0:0", "0:1000", "1000:0", "00:5"};
	struct gp_user u = {.uid = 77};

	(void)state;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		if (i == 0 && !getpwnam("root"))
			continue;
		assert_int_equal(resolve(specs[i], &u, err), -EINVAL);
		assert_non_null(strstr(err,
				       "tasks never run as root: map the tenant to an "
				       "unprivileged user"));
		assert_int_equal(u.uid, 77);
	}
	if (!pw || !root_group)
		return;
	snprintf(spec, sizeof(spec), "%s:%s", pw->pw_name, root_group->gr_name);
	assert_int_equal(resolve(spec, &u, err), -EINVAL);
	assert_non_null(strstr(err, "gid 0"));
	assert_int_equal(u.uid, 77);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		":",
		"a:",
		":b",
		"a:b:c",
		"1000",
		"alice:1000",
		"1000:alice",
		"-1:5",
		"+5:5",
		" 5:5",
		"5:5 ",
		"4294967295:5",
		"5:4294967295",
		"99999999999:1",
		"bad name",
		"a\nb",
		"-alice",
		".",
		"..",
		"a$b",
		"$",
		"é",
		"a/b",
		"0123456789012345678901234567890123456789012345678901234567890123",
	};
	struct gp_user u = {.uid = 77};
	char err[ERR_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = resolve(bad[i], &u, err);

		if (r != -EINVAL)
			fail_msg("\"%s\": %d, want -EINVAL", bad[i], r);
		assert_true(strlen(err) > 0);
		assert_int_equal(u.uid, 77);
	}
	assert_int_equal(gp_user_resolve(NULL, &u, err, sizeof(err)), -EINVAL);
	resolve("1000", &u, err);
	assert_non_null(strstr(err, "UID:GID"));
	resolve("alice:1000", &u, err);
	assert_non_null(strstr(err, "not one of each"));
}

static void test_unknown(void **state)
{
	struct passwd *pw = some_user();
	char err[ERR_MAX], spec[GP_USER_SPEC_MAX * 2];
	struct gp_user u = {.uid = 77};

	(void)state;
	assert_int_equal(resolve("gp-no-such-user", &u, err), -ENOENT);
	assert_non_null(strstr(err, "no user \"gp-no-such-user\" on this machine"));
	assert_int_equal(resolve("gp-no-such-user:gp-no-such-group", &u, err), -ENOENT);
	assert_int_equal(u.uid, 77);
	if (!pw)
		return;
	snprintf(spec, sizeof(spec), "%s:gp-no-such-group", pw->pw_name);
	if (strlen(spec) >= GP_USER_SPEC_MAX)
		return;
	assert_int_equal(resolve(spec, &u, err), -ENOENT);
	assert_non_null(strstr(err, "no group \"gp-no-such-group\""));
	assert_int_equal(u.uid, 77);
}

/* A short buffer holds the start of the message, terminated; none at all is fine. */
static void test_short_err(void **state)
{
	char err[8];
	struct gp_user u;

	(void)state;
	memset(err, 'x', sizeof(err));
	assert_int_equal(gp_user_resolve("root", &u, err, 5), -EINVAL);
	assert_int_equal(strlen(err), 4);
	assert_int_equal(err[5], 'x');
	assert_int_equal(gp_user_resolve(":", &u, NULL, 0), -EINVAL);
}

static void test_auto(void **state)
{
	struct gp_user u = {.uid = 77};
	char err[ERR_MAX];
	int r;

	(void)state;
	r = gp_user_auto(GP_USER_AUTO_BASE, 3, &u, err, sizeof(err));
	if (r == -EEXIST)
		skip(); /* this machine has a user in gpupool's range */
	assert_int_equal(r, 0);
	assert_int_equal(u.uid, GP_USER_AUTO_BASE + 3);
	assert_int_equal(u.gid, GP_USER_AUTO_BASE + 3);
	assert_string_equal(u.name, "");
	assert_string_equal(u.home, "");
	u.uid = 77;
	assert_int_equal(gp_user_auto(GP_USER_AUTO_BASE, 0, &u, err, sizeof(err)), -EINVAL);
	assert_int_equal(gp_user_auto(GP_USER_AUTO_BASE, -1, &u, err, sizeof(err)), -EINVAL);
	assert_int_equal(gp_user_auto(GP_USER_AUTO_BASE, GP_USER_AUTO_COUNT, &u, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "give it a user"));
	assert_int_equal(gp_user_auto(GP_USER_AUTO_BASE, GP_USER_AUTO_COUNT - 1, &u, err, sizeof(err)), 0);
	assert_int_equal(u.uid, GP_USER_AUTO_BASE + GP_USER_AUTO_COUNT - 1);
	assert_true(u.uid < 2147483648u); /* not negative as a signed id */
	/* A server may move the range, within its bounds. */
	assert_int_equal(gp_user_auto(700000, 3, &u, err, sizeof(err)), 0);
	assert_int_equal(u.uid, 700003);
	assert_int_equal(gp_user_auto(GP_USER_AUTO_BASE_MIN - 1, 3, &u, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(gp_user_auto(GP_USER_AUTO_BASE_MAX + 1, 3, &u, err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_user), cmocka_unit_test(test_user_and_group),
		cmocka_unit_test(test_numeric),	  cmocka_unit_test(test_root_refused),
		cmocka_unit_test(test_malformed), cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_short_err), cmocka_unit_test(test_auto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
