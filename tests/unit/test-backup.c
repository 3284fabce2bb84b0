/* test-backup.c — the database's backups (src/server/backup.c): one
 * taken from a reader while the store stays open (mode 0600 in a
 * directory of mode 0700, named by its time, whole: the same rows); the
 * newest found by name; the store's locks untouched by it (another
 * process that opens and closes the database leaves the WAL the store
 * writes into); the oldest beyond `keep` removed, a leftover
 * temporary file too, other files left alone; the thread (one at once,
 * then one per interval, stopped at once); restoring (the damaged file
 * kept aside with its WAL, the backup's rows back, its counts said); a
 * damaged backup refused with the database left as it was.
 *
 * Each test works in its own directory (mkdtemp, removed afterwards),
 * under an alarm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server/backup.h"
#include "server/store.h"
#include "tree.h"

#define TEST_ALARM_S 60

struct fixture {
	char dir[64];
	char db[PATH_MAX];
	char backups[PATH_MAX];
	struct gp_store *s, *reader;
};

static int setup(void **state)
{
	static struct fixture f;

	alarm(TEST_ALARM_S);
	memset(&f, 0, sizeof(f));
	snprintf(f.dir, sizeof(f.dir), "/tmp/gp-backup-XXXXXX");
	assert_non_null(mkdtemp(f.dir));
	snprintf(f.db, sizeof(f.db), "%s/gpupool.db", f.dir);
	snprintf(f.backups, sizeof(f.backups), "%s/backups", f.dir);
	assert_int_equal(gp_store_open(f.db, &f.s), 0);
	assert_int_equal(gp_store_open_reader(f.s, &f.reader), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	gp_store_close(f->reader);
	gp_store_close(f->s);
	remove_tree(f->dir);
	alarm(0);
	return 0;
}

static void tenant_add(struct gp_store *s, const char *name)
{
	struct gp_tenant t = {0};
	char token[GP_TOKEN_HEX + 1];

	snprintf(t.name, sizeof(t.name), "%s", name);
	assert_int_equal(gp_store_tenant_add(s, &t, token), 0);
}

static void task_add(struct gp_store *s, const char *tenant, const char *command)
{
	struct gp_tenant t;
	struct gp_task k = {.mem_mib = 1, .compute_pct = 1, .devices = 1};

	assert_int_equal(gp_store_tenant_by_name(s, tenant, &t), 0);
	k.tenant = t.id;
	snprintf(k.name, sizeof(k.name), "job");
	snprintf(k.command, sizeof(k.command), "%s", command);
	snprintf(k.kind, sizeof(k.kind), "batch");
	assert_int_equal(gp_store_task_add(s, &k), 0);
}

/* One backup, its path in path. */
static void take(struct fixture *f, unsigned keep, char *path, size_t size)
{
	char err[512] = "";

	assert_int_equal(gp_backup_take(f->reader, f->backups, keep, path, size, err,
					sizeof(err)),
			 0);
	usleep(2000); /* the next one's name is another millisecond's */
}

static unsigned files_in(const char *dir)
{
	char cmd[PATH_MAX + 32];
	unsigned n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%u", &n), 1);
	pclose(p);
	return n;
}

static void test_take(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], newest[PATH_MAX];
	struct gp_store *copy = NULL;
	struct gp_tenant t;
	struct stat st;

	tenant_add(f->s, "vision");
	task_add(f->s, "vision", "python train.py");
	take(f, 3, path, sizeof(path));
	assert_int_equal(strncmp(path, f->backups, strlen(f->backups)), 0);
	assert_non_null(strstr(path, "/gpupool-"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(f->backups, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(gp_backup_newest(f->backups, newest, sizeof(newest)), 0);
	assert_string_equal(newest, path);
	/* The store went on: a tenant added after the backup is not in it. */
	tenant_add(f->s, "nlp");
	assert_int_equal(gp_store_open_readonly(path, &copy), 0);
	assert_int_equal(gp_store_check(copy, true), 0);
	assert_int_equal(gp_store_tenant_by_name(copy, "vision", &t), 0);
	assert_int_equal(gp_store_tenant_by_name(copy, "nlp", &t), -ENOENT);
	assert_int_equal(gp_store_task_count(copy, -1), 1);
	gp_store_close(copy);
}

/* Another process that opens the database and closes it while the
 * store and its backups' reader have it open: the store's locks hold
 * (no descriptor of the file was closed under them), so that process
 * does not take itself for the last and delete the WAL the store writes
 * into. */
static void test_take_keeps_locks(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], wal[PATH_MAX + 8];
	struct gp_backup_options o = {.dir = f->backups, .interval_s = 0};
	struct gp_backup *b = NULL;
	struct gp_tenant t;
	pid_t pid;
	int status;

	tenant_add(f->s, "vision");
	take(f, 3, path, sizeof(path));
	assert_int_equal(gp_backup_start(f->s, &o, &b), 0);
	b = gp_backup_stop(b);
	snprintf(wal, sizeof(wal), "%s-wal", f->db);
	assert_int_equal(access(wal, F_OK), 0);
	/* A process of its own (exec: a fork would share this one's idea of
	 * the locks): the sqlite3 shell, as an operator would use it. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execlp("sqlite3", "sqlite3", f->db, "SELECT COUNT(*) FROM tenants", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
	assert_int_equal(access(wal, F_OK), 0);
	tenant_add(f->s, "nlp");
	gp_store_close(f->reader);
	gp_store_close(f->s);
	f->reader = f->s = NULL;
	assert_int_equal(gp_store_open(f->db, &f->s), 0);
	assert_int_equal(gp_store_tenant_by_name(f->s, "nlp", &t), 0);
}

static void test_newest_and_rotation(void **state)
{
	struct fixture *f = *state;
	char path[5][PATH_MAX], newest[PATH_MAX], other[PATH_MAX + 16], tmp[PATH_MAX + 64];
	FILE *fp;

	assert_int_equal(gp_backup_newest(f->backups, newest, sizeof(newest)), -ENOENT);
	tenant_add(f->s, "vision");
	for (int i = 0; i < 5; i++)
		take(f, 3, path[i], sizeof(path[i]));
	assert_int_equal(files_in(f->backups), 3);
	assert_int_equal(access(path[0], F_OK), -1);
	assert_int_equal(access(path[1], F_OK), -1);
	assert_int_equal(access(path[2], F_OK), 0);
	assert_int_equal(gp_backup_newest(f->backups, newest, sizeof(newest)), 0);
	assert_string_equal(newest, path[4]);
	/* A temporary file a crash left goes; a file of the operator's stays. */
	snprintf(tmp, sizeof(tmp), "%s/.gpupool-20000101T000000.000Z.db.tmp", f->backups);
	snprintf(other, sizeof(other), "%s/notes.txt", f->backups);
	fp = fopen(tmp, "w");
	assert_non_null(fp);
	fclose(fp);
	fp = fopen(other, "w");
	assert_non_null(fp);
	fclose(fp);
	take(f, 3, path[0], sizeof(path[0]));
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(access(other, F_OK), 0);
	assert_int_equal(files_in(f->backups), 4);
}

static void test_thread(void **state)
{
	struct fixture *f = *state;
	struct gp_backup_options o = {.dir = f->backups, .interval_s = 1, .keep = 2};
	struct gp_backup_state st = {0};
	struct gp_backup *b = NULL;
	struct timespec t0, t1;

	tenant_add(f->s, "vision");
	assert_int_equal(gp_backup_start(f->s, &o, &b), 0);
	for (int i = 0; i < 200 && st.taken < 2; i++) {
		usleep(50000);
		gp_backup_state(b, &st);
	}
	assert_true(st.taken >= 2);
	assert_int_equal(st.failed, 0);
	assert_true(st.last_ms > 0);
	assert_int_equal(access(st.last, F_OK), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	b = gp_backup_stop(b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_null(b);
	assert_true(t1.tv_sec - t0.tv_sec < 5); /* woken, not waited for */
	assert_true(files_in(f->backups) <= 2);
}

/* Writes garbage over the middle of the file at path. */
static void damage(const char *path)
{
	unsigned char garbage[4096];
	struct stat st;
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	memset(garbage, 0x5a, sizeof(garbage));
	assert_int_equal(pwrite(fd, garbage, sizeof(garbage), st.st_size / 2), sizeof(garbage));
	close(fd);
}

static void test_restore(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], aside[PATH_MAX], wal[PATH_MAX + 8], err[512] = "";
	struct gp_store *s = NULL;
	struct gp_tenant t;
	int tenants = -1, tasks = -1;

	tenant_add(f->s, "vision");
	tenant_add(f->s, "nlp");
	task_add(f->s, "vision", "a");
	task_add(f->s, "nlp", "b");
	take(f, 3, path, sizeof(path));
	tenant_add(f->s, "later");
	gp_store_close(f->reader);
	gp_store_close(f->s);
	f->reader = f->s = NULL;
	damage(f->db);
	assert_int_equal(gp_backup_restore(path, f->db, aside, sizeof(aside), &tenants, &tasks,
					   err, sizeof(err)),
			 0);
	assert_int_equal(tenants, 2);
	assert_int_equal(tasks, 2);
	assert_non_null(strstr(aside, ".damaged-"));
	assert_int_equal(access(aside, F_OK), 0);
	snprintf(wal, sizeof(wal), "%s-wal", f->db);
	assert_int_equal(access(wal, F_OK), -1);
	assert_int_equal(gp_store_open(f->db, &s), 0);
	assert_false(gp_store_is_new(s));
	assert_int_equal(gp_store_check(s, true), 0);
	assert_int_equal(gp_store_tenant_by_name(s, "nlp", &t), 0);
	assert_int_equal(gp_store_tenant_by_name(s, "later", &t), -ENOENT);
	assert_int_equal(gp_store_task_count(s, -1), 2);
	gp_store_close(s);
}

static void test_restore_refuses_damaged_backup(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX], aside[PATH_MAX], err[512] = "";
	struct gp_tenant t;
	int tenants, tasks;

	tenant_add(f->s, "vision");
	for (int i = 0; i < 300; i++)
		task_add(f->s, "vision",
			 "python train.py --a-long-command-to-fill-the-pages-of-the-tasks-table "
			 "--with-more-words-than-it-needs --and-more --and-more --and-more");
	take(f, 3, path, sizeof(path));
	damage(path);
	assert_int_equal(gp_backup_restore(path, f->db, aside, sizeof(aside), &tenants, &tasks,
					   err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "try an older one"));
	assert_int_equal(gp_store_tenant_by_name(f->s, "vision", &t), 0);
	assert_int_equal(gp_store_task_count(f->s, -1), 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_take, setup, teardown),
		cmocka_unit_test_setup_teardown(test_take_keeps_locks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newest_and_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_refuses_damaged_backup, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
