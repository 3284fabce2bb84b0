/* test-uidrange.c — the registry of automatic uid ranges
 * (src/base/uidrange.c), in a directory of the test's own: a range held
 * refuses the same and any overlapping one, saying whose it is and which
 * is free; ranges side by side are both given; auto takes the first free;
 * a range is let go by gp_uidrange_free, by its holder's death (SIGKILL
 * too), and a file nobody holds is taken over; an unsafe directory is
 * refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/uidrange.h"
#include "base/user.h"

#define BASE  GP_USER_AUTO_BASE
#define COUNT GP_USER_AUTO_COUNT

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gp-uidrange-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	strcat(dir, "/r"); /* made by the first claim */
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strlen(dir) - 2), dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct gp_uidrange *claim_ok(uint32_t base, bool any, const char *owner)
{
	struct gp_uidrange *c = NULL;
	char err[512] = "";

	assert_int_equal(gp_uidrange_claim(dir, base, any, owner, &c, err, sizeof(err)), 0);
	assert_non_null(c);
	return c;
}

/* base is refused; err in buf. */
static void claim_refused(uint32_t base, bool any, char *err, size_t len)
{
	struct gp_uidrange *c = NULL;

	assert_int_equal(gp_uidrange_claim(dir, base, any, "second", &c, err, len), -EADDRINUSE);
	assert_null(c);
}

static void test_overlap_refused(void **state)
{
	struct gp_uidrange *a, *b;
	char err[512], want[128];

	(void)state;
	a = claim_ok(BASE, false, "server of /a.db");
	assert_int_equal(gp_uidrange_base(a), BASE);
	claim_refused(BASE, false, err, sizeof(err));
	snprintf(want, sizeof(want), "pid %d, server of /a.db", (int)getpid());
	assert_non_null(strstr(err, want));
	snprintf(want, sizeof(want), "the range at %u is free", BASE + COUNT);
	assert_non_null(strstr(err, want));
	/* Any overlap: half a range above, one id below the end. */
	claim_refused(BASE + COUNT / 2, false, err, sizeof(err));
	claim_refused(BASE - (COUNT - 1), false, err, sizeof(err));
	/* Side by side: both given. */
	b = claim_ok(BASE + COUNT, false, "server of /b.db");
	gp_uidrange_free(b);
	b = claim_ok(BASE - COUNT, false, "server of /c.db");
	gp_uidrange_free(b);
	/* Let go: the same range is given again. */
	gp_uidrange_free(a);
	a = claim_ok(BASE, false, "again");
	gp_uidrange_free(a);
}

static void test_auto(void **state)
{
	struct gp_uidrange *a, *b, *c;

	(void)state;
	a = claim_ok(0, true, "first");
	assert_int_equal(gp_uidrange_base(a), BASE);
	b = claim_ok(BASE + 2 * COUNT, false, "third");
	c = claim_ok(0, true, "second");
	assert_int_equal(gp_uidrange_base(c), BASE + COUNT);
	gp_uidrange_free(c);
	gp_uidrange_free(b);
	gp_uidrange_free(a);
}

static void test_all_held(void **state)
{
	struct gp_uidrange *held[16];
	char err[512];
	int n = 0;

	(void)state;
	for (uint64_t b = BASE; b <= GP_USER_AUTO_BASE_MAX; b += COUNT)
		held[n++] = claim_ok((uint32_t)b, false, "x");
	assert_int_equal(n, 16);
	claim_refused(0, true, err, sizeof(err));
	assert_non_null(strstr(err, "every aligned range"));
	while (n)
		gp_uidrange_free(held[--n]);
}

/* A holder that dies, by exit or by SIGKILL, lets its range go. */
static void test_holder_dies(void **state)
{
	int sync[2], status;
	char c;

	(void)state;
	for (int sig = 0; sig <= SIGKILL; sig += SIGKILL) {
		pid_t pid;

		assert_int_equal(pipe(sync), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct gp_uidrange *r = NULL;
			char err[256];

			close(sync[0]);
			if (gp_uidrange_claim(dir, BASE, false, "child", &r, err, sizeof(err)) < 0)
				_exit(1);
			if (write(sync[1], "x", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		close(sync[1]);
		assert_int_equal(read(sync[0], &c, 1), 1);
		close(sync[0]);
		claim_refused(BASE, false, (char[512]){ 0 }, 512);
		kill(pid, sig ? sig : SIGTERM);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		gp_uidrange_free(claim_ok(BASE, false, "after the child"));
	}
}

/* A range file nobody locks (its server gone before this registry's
 * time) is nobody's range. */
static void test_stale_file(void **state)
{
	char path[128];
	FILE *f;

	(void)state;
	gp_uidrange_free(claim_ok(BASE + COUNT, false, "makes the directory"));
	snprintf(path, sizeof(path), "%s/range-%u", dir, BASE);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "pid 1, long gone\n");
	fclose(f);
	gp_uidrange_free(claim_ok(BASE, false, "takes it over"));
}

static void test_unsafe_dir(void **state)
{
	struct gp_uidrange *c = NULL;
	char err[512];

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(gp_uidrange_claim(dir, BASE, false, "x", &c, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "only it may write"));
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_overlap_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holder_dies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsafe_dir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
