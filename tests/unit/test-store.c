/* test-store.c — the server's SQLite store (src/server/store.c): schema
 * and migrations, the refusal of newer files, tenants and their tokens,
 * model quotas (set, replace, list, remove; a file at schema 3 upgraded in
 * place; which quota governs a device), tenants' Unix users and tasks'
 * declared variables (a file at schema 5 upgraded in place; the variables
 * written in the submission's transaction), templates, tasks, the audit log,
 * usage records (one transaction per batch, all or none; sums per tenant;
 * a task's pages), the audit log filtered and paged both ways, the
 * meter's history (buckets, prune), services' steps
 * and model), alerts (one active per kind and object), argument checks,
 * tenants removed (their tasks and name kept, their token and model
 * quotas gone; a file at schema 6 upgraded in place), new tokens,
 * templates removed, pages of tasks (after an id, by tenant and by a set
 * of states), durability when a writer is killed with SIGKILL at a
 * random moment, and damage: an empty file refused (never made anew), a
 * missing one made whole, garbage in a page found by the checks and by
 * an ordinary read (writes refused after it), a copy by VACUUM INTO.
 *
 * Each test has its own directory (mkdtemp, removed afterwards) and an
 * alarm, so that a hang fails the run instead of stopping it. Some checks
 * read the file with sqlite3 directly, past the store's API. The forked
 * writer never uses cmocka's assertions: it reports through a pipe and
 * its exit status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "server/store.h"

#define TEST_ALARM_S   60
#define DURABLE_TASKS  200
#define DURABLE_ROUNDS 3

struct fixture {
	char dir[64];
	char path[PATH_MAX];
	struct gp_store *s;
};

/* ---- fixtures ---- */

static int setup_dir(void **state)
{
	static struct fixture f;

	alarm(TEST_ALARM_S);
	memset(&f, 0, sizeof(f));
	snprintf(f.dir, sizeof(f.dir), "/tmp/gp-store-XXXXXX");
	assert_non_null(mkdtemp(f.dir));
	snprintf(f.path, sizeof(f.path), "%s/gpupool.db", f.dir);
	*state = &f;
	return 0;
}

static int setup_store(void **state)
{
	struct fixture *f;

	setup_dir(state);
	f = *state;
	assert_int_equal(gp_store_open(f->path, &f->s), 0);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	gp_store_close(f->s);
	f->s = NULL;
	remove_tree(f->dir);
	alarm(0);
	return 0;
}

/* ---- builders ---- */

static struct gp_tenant tenant(const char *name)
{
	struct gp_tenant t = {.mem_guaranteed_mib = 8192,
			      .mem_borrowable_mib = 4096,
			      .compute_guaranteed_pct = 150,
			      .compute_borrowable_pct = 50};

	snprintf(t.name, sizeof(t.name), "%s", name);
	return t;
}

static int64_t add_tenant(struct gp_store *s, const char *name)
{
	struct gp_tenant t = tenant(name);
	char token[GP_TOKEN_HEX + 1];

	assert_int_equal(gp_store_tenant_add(s, &t, token), 0);
	return t.id;
}

static struct gp_task task(int64_t tenant_id, const char *name)
{
	struct gp_task t = {.tenant = tenant_id,
			    .mem_mib = 4096,
			    .compute_pct = 30,
			    .devices = 1,
			    .hard = true,
			    .priority = 5};

	snprintf(t.name, sizeof(t.name), "%s", name);
	snprintf(t.command, sizeof(t.command), "python train.py --name '%s'", name);
	snprintf(t.kind, sizeof(t.kind), "training");
	snprintf(t.model, sizeof(t.model), "A100");
	return t;
}

static int64_t add_task(struct gp_store *s, int64_t tenant_id, const char *name)
{
	struct gp_task t = task(tenant_id, name);

	assert_int_equal(gp_store_task_add(s, &t), 0);
	return t.id;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void assert_template_equal(const struct gp_template *a,
				  const struct gp_template *b)
{
	assert_int_equal(a->id, b->id);
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->models, b->models);
	assert_int_equal(a->mem_mib, b->mem_mib);
	assert_int_equal(a->compute_pct, b->compute_pct);
	assert_int_equal(a->hard, b->hard);
}

static void assert_task_equal(const struct gp_task *a, const struct gp_task *b)
{
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->tenant, b->tenant);
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->command, b->command);
	assert_int_equal(a->mem_mib, b->mem_mib);
	assert_int_equal(a->compute_pct, b->compute_pct);
	assert_int_equal(a->devices, b->devices);
	assert_int_equal(a->whole, b->whole);
	assert_int_equal(a->exclusive, b->exclusive);
	assert_int_equal(a->hard, b->hard);
	assert_int_equal(a->priority, b->priority);
	assert_string_equal(a->kind, b->kind);
	assert_string_equal(a->model, b->model);
	assert_int_equal(a->state, b->state);
	assert_string_equal(a->reason, b->reason);
	assert_string_equal(a->placement, b->placement);
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->exit_code, b->exit_code);
	assert_int_equal(a->created, b->created);
	assert_int_equal(a->started, b->started);
	assert_int_equal(a->ended, b->ended);
}

/* ---- reading the file directly ---- */

static sqlite3 *raw_open(const char *path)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	return db;
}

static int64_t raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
}

static char *read_file(const char *path, size_t *ret_n)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(fp);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	assert_true(n >= 0);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*ret_n = (size_t)n;
	return buf;
}

/* ---- schema ---- */

static void test_open_creates_schema(void **state)
{
	struct fixture *f = *state;
	const char *tables =
		"SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND "
		"name IN ('tenants', 'templates', 'tasks', 'audit')";
	const char *indexes =
		"SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND "
		"tbl_name = 'tasks' AND sql IS NOT NULL";
	struct stat st;
	sqlite3 *db;

	assert_int_equal(gp_store_schema_version(f->s), GP_STORE_SCHEMA_VERSION);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	db = raw_open(f->path);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GP_STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(db, tables), 4);
	assert_int_equal(raw_int(db, indexes), 2);
	assert_int_equal(raw_int(db, "SELECT COUNT(*) FROM pragma_journal_mode "
				     "WHERE journal_mode = 'wal'"),
			 1);
	sqlite3_close(db);
}

static void test_open_in_memory(void **state)
{
	struct gp_store *s = NULL;

	(void)state;
	assert_int_equal(gp_store_open(":memory:", &s), 0);
	assert_int_equal(gp_store_schema_version(s), GP_STORE_SCHEMA_VERSION);
	assert_true(add_tenant(s, "mem") > 0);
	gp_store_close(s);
}

static void test_reopen_keeps_data(void **state)
{
	struct fixture *f = *state;
	struct gp_template tpl = {.name = "t4-half", .mem_mib = 8192, .compute_pct = 50};
	struct gp_tenant t;
	struct gp_template got_tpl;
	struct gp_task got;
	int64_t tenant_id = add_tenant(f->s, "vision");
	int64_t task_id = add_task(f->s, tenant_id, "resnet");

	assert_int_equal(gp_store_template_add(f->s, &tpl), 0);
	gp_store_close(f->s);
	f->s = NULL;
	assert_int_equal(gp_store_open(f->path, &f->s), 0);
	assert_int_equal(gp_store_schema_version(f->s), GP_STORE_SCHEMA_VERSION);
	assert_int_equal(gp_store_tenant_by_name(f->s, "vision", &t), 0);
	assert_int_equal(t.id, tenant_id);
	assert_int_equal(gp_store_task_get(f->s, task_id, &got), 0);
	assert_string_equal(got.name, "resnet");
	assert_int_equal(gp_store_template_by_name(f->s, "t4-half", &got_tpl), 0);
	assert_int_equal(got_tpl.mem_mib, 8192);
}

static void test_newer_schema_refused(void **state)
{
	struct fixture *f = *state;
	struct gp_store *s = (struct gp_store *)f; /* a sentinel: must stay as is */
	char sql[64];
	size_t n_before, n_after;
	char *before, *after;
	sqlite3 *db = raw_open(f->path);

	raw_exec(db, "CREATE TABLE future (x INTEGER); INSERT INTO future VALUES (42)");
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		 GP_STORE_SCHEMA_VERSION + 1);
	raw_exec(db, sql);
	sqlite3_close(db);
	before = read_file(f->path, &n_before);

	assert_int_equal(gp_store_open(f->path, &s), -EPROTO);
	assert_ptr_equal(s, f);
	assert_non_null(strstr(gp_store_error(NULL), "newer"));

	after = read_file(f->path, &n_after);
	assert_int_equal(n_before, n_after);
	assert_memory_equal(before, after, n_before);
	db = raw_open(f->path);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GP_STORE_SCHEMA_VERSION + 1);
	assert_int_equal(raw_int(db, "SELECT COUNT(*) FROM sqlite_master"), 1);
	sqlite3_close(db);
	free(before);
	free(after);
}

static void test_not_a_database(void **state)
{
	struct fixture *f = *state;
	struct gp_store *s = NULL;
	FILE *fp = fopen(f->path, "w");

	assert_non_null(fp);
	fputs("this is not an SQLite database, but it is long enough to look like one.\n"
	      "this is not an SQLite database, but it is long enough to look like one.\n",
	      fp);
	fclose(fp);
	assert_int_equal(gp_store_open(f->path, &s), -EBADMSG);
	assert_null(s);
	assert_true(strlen(gp_store_error(NULL)) > 0);
}

/* An existing empty file is a truncated database, never made anew. */
static void test_empty_file_refused(void **state)
{
	struct fixture *f = *state;
	struct gp_store *s = (struct gp_store *)f; /* a sentinel: must stay as is */
	char leftover[PATH_MAX + 8];
	struct stat st;
	FILE *fp = fopen(f->path, "w");

	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(gp_store_open(f->path, &s), -ENODATA);
	assert_ptr_equal(s, f);
	assert_non_null(strstr(gp_store_error(NULL), "the file is empty (0 bytes)"));
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, 0);
	snprintf(leftover, sizeof(leftover), "%s.new", f->path);
	assert_int_equal(access(leftover, F_OK), -1);
}

/* Something at the path that is not a file is refused, not replaced. */
static void test_not_a_file_refused(void **state)
{
	struct fixture *f = *state;
	struct gp_store *s = NULL;
	struct stat st;

	assert_int_equal(mkdir(f->path, 0700), 0);
	assert_int_equal(gp_store_open(f->path, &s), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(gp_store_error(NULL), "not a regular file"));
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(rmdir(f->path), 0);
}

/* A missing file is made, whole, under its own name, mode 0600. */
static void test_missing_file_made(void **state)
{
	struct fixture *f = *state;
	char leftover[PATH_MAX + 8];
	struct stat st;

	assert_int_equal(gp_store_open(f->path, &f->s), 0);
	assert_true(gp_store_is_new(f->s));
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(st.st_size > 0);
	snprintf(leftover, sizeof(leftover), "%s.new", f->path);
	assert_int_equal(access(leftover, F_OK), -1);
	add_tenant(f->s, "vision");
	gp_store_close(f->s);
	assert_int_equal(gp_store_open(f->path, &f->s), 0);
	assert_false(gp_store_is_new(f->s));
	assert_int_equal(gp_store_check(f->s, false), 0);
	assert_int_equal(gp_store_check(f->s, true), 0);
}

/* Fills the store with enough tasks for many pages, closes it, and
 * writes garbage over a page in the middle of the file. */
static void damage_middle_page(struct fixture *f)
{
	int64_t tenant_id = add_tenant(f->s, "vision");
	unsigned char garbage[4096];
	struct stat st;
	int fd;

	/* 400 tasks of 600-byte commands: their table is most of the file. */
	for (int i = 0; i < 400; i++) {
		struct gp_task t = task(tenant_id, "filler");

		memset(t.command, 'x', 600);
		t.command[600] = '\0';
		assert_int_equal(gp_store_task_add(f->s, &t), 0);
	}
	gp_store_close(f->s);
	f->s = NULL;
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(st.st_size >= 64 * 4096);
	memset(garbage, 0x5a, sizeof(garbage));
	fd = open(f->path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, garbage, sizeof(garbage), st.st_size / 4096 / 2 * 4096),
			 (ssize_t)sizeof(garbage));
	close(fd);
}

static unsigned damage_calls;

static void on_damage(void *ctx, const char *message)
{
	assert_ptr_equal(ctx, &damage_calls);
	assert_non_null(strstr(message, "the database is damaged"));
	damage_calls++;
}

/* Damage inside the file: the checks find it, and from then on nothing
 * is written. */
static void test_check_finds_damage(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t = tenant("nlp");
	char token[GP_TOKEN_HEX + 1];

	damage_middle_page(f);
	assert_int_equal(gp_store_open(f->path, &f->s), 0);
	assert_false(gp_store_is_damaged(f->s));
	assert_int_equal(gp_store_check(f->s, false), -EBADMSG);
	assert_non_null(strstr(gp_store_error(f->s), "PRAGMA quick_check"));
	assert_true(gp_store_is_damaged(f->s));
	assert_int_equal(gp_store_check(f->s, true), -EBADMSG);
	assert_non_null(strstr(gp_store_error(f->s), "PRAGMA integrity_check"));
	assert_int_equal(gp_store_tenant_add(f->s, &t, token), -EBADMSG);
	assert_non_null(strstr(gp_store_error(f->s), "restore"));
}

/* Damage met by an ordinary read while serving: said once, and writes
 * refused after it. */
static void test_damage_met_while_serving(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t = tenant("nlp");
	char token[GP_TOKEN_HEX + 1];
	struct gp_task *tasks = NULL;
	int n = 0;

	damage_middle_page(f);
	assert_int_equal(gp_store_open(f->path, &f->s), 0);
	damage_calls = 0;
	gp_store_on_damage(f->s, on_damage, &damage_calls);
	assert_int_equal(gp_store_task_list(f->s, -1, -1, &tasks, &n), -EBADMSG);
	assert_int_equal(damage_calls, 1);
	assert_true(gp_store_is_damaged(f->s));
	assert_int_equal(gp_store_tenant_add(f->s, &t, token), -EBADMSG);
	assert_int_equal(damage_calls, 1);
	free(tasks);
}

/* A copy from a reader, while the writer stays open: a database of its
 * own with the same rows; never over a file that has something in it. */
static void test_backup_into(void **state)
{
	struct fixture *f = *state;
	struct gp_store *reader = NULL, *copy = NULL;
	char path[PATH_MAX + 16];
	struct gp_tenant t;
	int64_t tenant_id = add_tenant(f->s, "vision");
	int64_t task_id = add_task(f->s, tenant_id, "resnet");
	struct gp_task got;

	assert_int_equal(gp_store_open_reader(f->s, &reader), 0);
	snprintf(path, sizeof(path), "%s/copy.db", f->dir);
	assert_int_equal(gp_store_backup_into(reader, path), 0);
	assert_int_not_equal(gp_store_backup_into(reader, path), 0);
	gp_store_close(reader);
	assert_int_equal(gp_store_open(path, &copy), 0);
	assert_false(gp_store_is_new(copy));
	assert_int_equal(gp_store_check(copy, true), 0);
	assert_int_equal(gp_store_tenant_by_name(copy, "vision", &t), 0);
	assert_int_equal(gp_store_task_get(copy, task_id, &got), 0);
	assert_string_equal(got.name, "resnet");
	gp_store_close(copy);
}

/* ---- tenants ---- */

static void test_tenant_add_and_lookup(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t = tenant("nlp"), got;
	char token[GP_TOKEN_HEX + 1];
	int64_t before = now_ms() / 1000;

	t.admin = true;
	assert_int_equal(gp_store_tenant_add(f->s, &t, token), 0);
	assert_true(t.id > 0);
	assert_true(t.created >= before && t.created <= now_ms() / 1000);
	assert_int_equal(strlen(token), GP_TOKEN_HEX);
	assert_int_equal(strspn(token, "0123456789abcdef"), GP_TOKEN_HEX);

	assert_int_equal(gp_store_tenant_by_name(f->s, "nlp", &got), 0);
	assert_int_equal(got.id, t.id);
	assert_true(got.admin);
	assert_int_equal(got.mem_guaranteed_mib, 8192);
	assert_int_equal(got.mem_borrowable_mib, 4096);
	assert_int_equal(got.compute_guaranteed_pct, 150);
	assert_int_equal(got.compute_borrowable_pct, 50);
	assert_int_equal(got.created, t.created);

	memset(&got, 0, sizeof(got));
	assert_int_equal(gp_store_tenant_by_token(f->s, token, &got), 0);
	assert_int_equal(got.id, t.id);
	assert_string_equal(got.name, "nlp");
}

static void test_tenant_wrong_token(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t = tenant("nlp"), got = {.id = 77};
	char token[GP_TOKEN_HEX + 1];

	assert_int_equal(gp_store_tenant_add(f->s, &t, token), 0);
	token[10] = token[10] == '0' ? '1' : '0';
	assert_int_equal(gp_store_tenant_by_token(f->s, token, &got), -ENOENT);
	assert_int_equal(got.id, 77);
	assert_int_equal(gp_store_tenant_by_token(f->s, "", &got), -ENOENT);
	assert_int_equal(gp_store_tenant_by_name(f->s, "nobody", &got), -ENOENT);
}

/* Every column of every tenant row, and the file's bytes, lack the token. */
static void test_tenant_token_not_stored(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t = tenant("nlp");
	char token[GP_TOKEN_HEX + 1];
	sqlite3_stmt *st = NULL;
	size_t n;
	char *bytes;
	int rows = 0;
	sqlite3 *db;

	assert_int_equal(gp_store_tenant_add(f->s, &t, token), 0);
	db = raw_open(f->path);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT * FROM tenants", -1, &st, NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		rows++;
		for (int c = 0; c < sqlite3_column_count(st); c++) {
			const char *v = (const char *)sqlite3_column_text(st, c);

			assert_null(v ? strstr(v, token) : NULL);
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_int_equal(rows, 1);

	gp_store_close(f->s); /* checkpoints the WAL into the file */
	f->s = NULL;
	bytes = read_file(f->path, &n);
	assert_null(memmem(bytes, n, token, GP_TOKEN_HEX));
	free(bytes);
}

static void test_tenant_duplicate(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t = tenant("nlp");
	char token[GP_TOKEN_HEX + 1] = "untouched";

	add_tenant(f->s, "nlp");
	assert_int_equal(gp_store_tenant_add(f->s, &t, token), -EEXIST);
	assert_string_equal(token, "untouched");
	assert_non_null(strstr(gp_store_error(f->s), "nlp"));
}

static void test_tenant_list_and_quota(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant *list = NULL, got, missing = {.id = 9999};
	int n = -1;

	assert_int_equal(gp_store_tenant_list(f->s, &list, &n), 0);
	assert_int_equal(n, 0);
	assert_null(list);

	add_tenant(f->s, "a");
	add_tenant(f->s, "b");
	assert_int_equal(gp_store_tenant_by_name(f->s, "b", &got), 0);
	got.mem_guaranteed_mib = 1;
	got.mem_borrowable_mib = 2;
	got.compute_guaranteed_pct = 3;
	got.compute_borrowable_pct = 4;
	assert_int_equal(gp_store_tenant_set_quota(f->s, &got), 0);
	assert_int_equal(gp_store_tenant_set_quota(f->s, &missing), -ENOENT);

	assert_int_equal(gp_store_tenant_list(f->s, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].name, "a");
	assert_int_equal(list[0].mem_guaranteed_mib, 8192);
	assert_string_equal(list[1].name, "b");
	assert_int_equal(list[1].mem_guaranteed_mib, 1);
	assert_int_equal(list[1].mem_borrowable_mib, 2);
	assert_int_equal(list[1].compute_guaranteed_pct, 3);
	assert_int_equal(list[1].compute_borrowable_pct, 4);
	free(list);
}

/* ---- templates ---- */

static void test_template_add_and_list(void **state)
{
	struct fixture *f = *state;
	struct gp_template a = {.name = "a100-20g",
				.models = "A100,A800",
				.mem_mib = 20480,
				.compute_pct = 30,
				.hard = true};
	struct gp_template b = {.name = "t4-half", .mem_mib = 8192, .compute_pct = 50};
	struct gp_template dup = {.name = "t4-half"}, got, *list = NULL;
	int n = 0;

	assert_int_equal(gp_store_template_add(f->s, &a), 0);
	assert_int_equal(gp_store_template_add(f->s, &b), 0);
	assert_true(a.id > 0 && b.id > a.id);
	assert_int_equal(gp_store_template_add(f->s, &dup), -EEXIST);
	assert_int_equal(gp_store_template_by_name(f->s, "nope", &got), -ENOENT);

	assert_int_equal(gp_store_template_by_name(f->s, "a100-20g", &got), 0);
	assert_template_equal(&got, &a);
	assert_int_equal(gp_store_template_list(f->s, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_template_equal(&list[0], &a);
	assert_template_equal(&list[1], &b);
	free(list);
}

/* ---- tasks ---- */

static void test_task_add(void **state)
{
	struct fixture *f = *state;
	int64_t tenant_id = add_tenant(f->s, "nlp");
	struct gp_task t = task(tenant_id, "bert"), got, orphan = task(4242, "x");
	int64_t before = now_ms();

	t.state = GP_TASK_RUNNING; /* ignored: a new task is pending */
	snprintf(t.workdir, sizeof(t.workdir), "/srv/jobs/bert");
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	assert_true(t.id > 0);
	assert_int_equal(t.state, GP_TASK_PENDING);
	assert_true(t.created >= before && t.created <= now_ms());

	assert_int_equal(gp_store_task_get(f->s, t.id, &got), 0);
	assert_task_equal(&got, &t);
	assert_string_equal(got.workdir, "/srv/jobs/bert");
	assert_int_equal(gp_store_task_get(f->s, t.id + 1, &got), -ENOENT);
	assert_int_equal(gp_store_task_add(f->s, &orphan), -ENOENT);
	assert_int_equal(orphan.id, 0);

	/* Task names may repeat; each task is its id. */
	assert_true(add_task(f->s, tenant_id, "bert") > t.id);
}

static void test_task_list(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_tenant(f->s, "a"), b = add_tenant(f->s, "b");
	int64_t a1 = add_task(f->s, a, "a1"), b1 = add_task(f->s, b, "b1");
	int64_t a2 = add_task(f->s, a, "a2");
	struct gp_task *list = NULL, t;
	int n = 0;

	assert_int_equal(gp_store_task_get(f->s, a2, &t), 0);
	t.state = GP_TASK_RUNNING;
	assert_int_equal(gp_store_task_update(f->s, &t), 0);

	assert_int_equal(gp_store_task_list(f->s, -1, -1, &list, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(list[0].id, a1);
	assert_int_equal(list[1].id, b1);
	assert_int_equal(list[2].id, a2);
	free(list);

	assert_int_equal(gp_store_task_list(f->s, a, -1, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].id, a1);
	assert_int_equal(list[1].id, a2);
	free(list);

	assert_int_equal(gp_store_task_list(f->s, -1, GP_TASK_PENDING, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].id, a1);
	assert_int_equal(list[1].id, b1);
	free(list);

	assert_int_equal(gp_store_task_list(f->s, a, GP_TASK_RUNNING, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(list[0].id, a2);
	free(list);

	list = (struct gp_task *)&t;
	assert_int_equal(gp_store_task_list(f->s, b, GP_TASK_RUNNING, &list, &n), 0);
	assert_int_equal(n, 0);
	assert_null(list);
}

/* The shapes of the recent tasks, newest first, for the target workload. */
static void test_task_shapes(void **state)
{
	struct fixture *f = *state;
	int64_t tenant_id = add_tenant(f->s, "nlp");
	struct gp_task a = task(tenant_id, "a"), b = task(tenant_id, "b"), c = task(tenant_id, "c");
	struct gp_task_shape *sh = NULL;
	int n = 0;

	a.compute_pct = 30;
	b.whole = true;
	b.devices = 2;
	c.exclusive = true;
	snprintf(c.model, sizeof(c.model), "T4");
	assert_int_equal(gp_store_task_add(f->s, &a), 0);
	assert_int_equal(gp_store_task_add(f->s, &b), 0);
	assert_int_equal(gp_store_task_add(f->s, &c), 0);
	assert_int_equal(gp_store_task_shapes(f->s, 0, 2, &sh, &n), 0);
	assert_int_equal(n, 2);
	assert_true(sh[0].whole);
	assert_string_equal(sh[0].model, "T4");
	assert_true(sh[1].whole);
	assert_int_equal(sh[1].devices, 2);
	free(sh);
	assert_int_equal(gp_store_task_shapes(f->s, a.created, 100, &sh, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(sh[2].compute_pct, 30);
	assert_int_equal(sh[2].mem_mib, a.mem_mib);
	assert_false(sh[2].whole);
	free(sh);
	assert_int_equal(gp_store_task_shapes(f->s, now_ms() + 1000, 100, &sh, &n), 0);
	assert_int_equal(n, 0);
	assert_null(sh);
	assert_int_equal(gp_store_task_shapes(f->s, 0, 0, &sh, &n), -EINVAL);
}

static void test_task_update(void **state)
{
	struct fixture *f = *state;
	int64_t tenant_id = add_tenant(f->s, "nlp");
	struct gp_task t = task(tenant_id, "bert"), want, got, missing;

	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	want = t;
	want.state = GP_TASK_FAILED;
	snprintf(want.reason, sizeof(want.reason), "exited with status 3");
	snprintf(want.placement, sizeof(want.placement), "node0:GPU-1234,node0:GPU-5678");
	want.pid = 123456789012;
	want.exit_code = -9;
	want.started = t.created + 1000;
	want.ended = t.created + 5000;
	want.compute_pct = 80;
	want.priority = 9;
	assert_int_equal(gp_store_task_update(f->s, &want), 0);
	assert_int_equal(gp_store_task_get(f->s, t.id, &got), 0);
	assert_task_equal(&got, &want);

	/* The other fields are fixed at submission. */
	want.mem_mib = 1;
	want.devices = 8;
	snprintf(want.command, sizeof(want.command), "rm -rf /");
	assert_int_equal(gp_store_task_update(f->s, &want), 0);
	assert_int_equal(gp_store_task_get(f->s, t.id, &got), 0);
	assert_int_equal(got.mem_mib, t.mem_mib);
	assert_int_equal(got.devices, t.devices);
	assert_string_equal(got.command, t.command);

	missing = want;
	missing.id = t.id + 100;
	assert_int_equal(gp_store_task_update(f->s, &missing), -ENOENT);
}

static void test_task_count(void **state)
{
	struct fixture *f = *state;
	int64_t tenant_id = add_tenant(f->s, "nlp");
	struct gp_task t;

	assert_int_equal(gp_store_task_count(f->s, -1), 0);
	for (int i = 0; i < 5; i++)
		add_task(f->s, tenant_id, "job");
	assert_int_equal(gp_store_task_get(f->s, 1, &t), 0);
	t.state = GP_TASK_SUCCEEDED;
	assert_int_equal(gp_store_task_update(f->s, &t), 0);
	assert_int_equal(gp_store_task_count(f->s, -1), 5);
	assert_int_equal(gp_store_task_count(f->s, GP_TASK_PENDING), 4);
	assert_int_equal(gp_store_task_count(f->s, GP_TASK_SUCCEEDED), 1);
	assert_int_equal(gp_store_task_count(f->s, GP_TASK_LOST), 0);
}

/* The queue's length stays right through adds, updates and rollbacks. */
static void test_queue_length(void **state)
{
	struct fixture *f = *state;
	int64_t tenant_id = add_tenant(f->s, "nlp");
	struct gp_task t;

	assert_int_equal(gp_store_queue_length(f->s), 0);
	for (int i = 0; i < 3; i++)
		add_task(f->s, tenant_id, "job");
	assert_int_equal(gp_store_queue_length(f->s), 3);
	assert_int_equal(gp_store_task_get(f->s, 1, &t), 0);
	t.state = GP_TASK_RUNNING;
	assert_int_equal(gp_store_task_update(f->s, &t), 0);
	assert_int_equal(gp_store_queue_length(f->s), 2);
	t.state = GP_TASK_PREEMPTED;    /* queued again */
	assert_int_equal(gp_store_task_update(f->s, &t), 0);
	assert_int_equal(gp_store_queue_length(f->s), 3);
	assert_int_equal(gp_store_begin(f->s), 0);
	add_task(f->s, tenant_id, "undone");
	assert_int_equal(gp_store_queue_length(f->s), 4);
	gp_store_rollback(f->s);
	assert_int_equal(gp_store_queue_length(f->s), 3);
	add_task(f->s, tenant_id, "job");
	assert_int_equal(gp_store_queue_length(f->s), 4);
}

/* ---- audit ---- */

static void test_audit(void **state)
{
	struct fixture *f = *state;
	struct gp_audit_entry *log = NULL;
	char long_detail[GP_REASON_MAX * 2];
	int64_t before = now_ms();
	int n = 0;

	memset(long_detail, 'x', sizeof(long_detail) - 1);
	long_detail[sizeof(long_detail) - 1] = '\0';
	assert_int_equal(gp_store_audit_list(f->s, &log, &n), 0);
	assert_int_equal(n, 0);
	assert_null(log);

	assert_int_equal(
		gp_store_audit(f->s, "admin", "tenant.add", "tenant/nlp", "quota 8G"), 0);
	assert_int_equal(gp_store_audit(f->s, "nlp", "task.cancel", "task/7", NULL), 0);
	assert_int_equal(gp_store_audit(f->s, "server", "task.lost", NULL, long_detail),
			 0);
	assert_int_equal(gp_store_audit_list(f->s, &log, &n), 0);
	assert_int_equal(n, 3);
	assert_true(log[0].id < log[1].id && log[1].id < log[2].id);
	assert_true(log[0].ts >= before && log[2].ts <= now_ms());
	assert_string_equal(log[0].who, "admin");
	assert_string_equal(log[0].action, "tenant.add");
	assert_string_equal(log[0].object, "tenant/nlp");
	assert_string_equal(log[0].detail, "quota 8G");
	assert_string_equal(log[1].detail, "");
	assert_string_equal(log[2].object, "");
	assert_int_equal(strlen(log[2].detail), GP_REASON_MAX - 1);
	free(log);
}

/* ---- arguments ---- */

static void test_bad_arguments(void **state)
{
	struct fixture *f = *state;
	int64_t tenant_id = add_tenant(f->s, "nlp");
	struct gp_tenant t = tenant(""), got, *tenants;
	struct gp_template tpl = {.name = "x", .compute_pct = 101};
	struct gp_task k = task(tenant_id, "job"), *tasks;
	struct gp_audit_entry *log;
	char token[GP_TOKEN_HEX + 1], big[GP_STORE_NAME_MAX + 8];
	struct gp_store *s = NULL;
	int n;

	memset(big, 'n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(gp_store_open(NULL, &s), -EINVAL);
	assert_int_equal(gp_store_open(f->path, NULL), -EINVAL);
	assert_int_equal(gp_store_schema_version(NULL), -EINVAL);

	assert_int_equal(gp_store_tenant_add(f->s, &t, token), -EINVAL);
	memset(t.name, 'n', sizeof(t.name)); /* not terminated */
	assert_int_equal(gp_store_tenant_add(f->s, &t, token), -EINVAL);
	t = tenant("ok");
	assert_int_equal(gp_store_tenant_add(NULL, &t, token), -EINVAL);
	assert_int_equal(gp_store_tenant_add(f->s, NULL, token), -EINVAL);
	assert_int_equal(gp_store_tenant_add(f->s, &t, NULL), -EINVAL);
	assert_int_equal(gp_store_tenant_by_token(f->s, NULL, &got), -EINVAL);
	assert_int_equal(gp_store_tenant_by_name(f->s, "nlp", NULL), -EINVAL);
	assert_int_equal(gp_store_tenant_list(f->s, &tenants, NULL), -EINVAL);
	assert_int_equal(gp_store_tenant_set_quota(f->s, NULL), -EINVAL);

	assert_int_equal(gp_store_template_add(f->s, &tpl), -EINVAL);
	tpl.compute_pct = 10;
	tpl.name[0] = '\0';
	assert_int_equal(gp_store_template_add(f->s, &tpl), -EINVAL);
	assert_int_equal(gp_store_template_by_name(f->s, NULL, &tpl), -EINVAL);
	assert_int_equal(gp_store_template_list(f->s, NULL, &n), -EINVAL);

	k.priority = 10;
	assert_int_equal(gp_store_task_add(f->s, &k), -EINVAL);
	k.priority = 0;
	k.compute_pct = 101;
	assert_int_equal(gp_store_task_add(f->s, &k), -EINVAL);
	k.compute_pct = 100;
	assert_int_equal(gp_store_task_add(f->s, &k), 0);
	k.state = (enum gp_task_state)42;
	assert_int_equal(gp_store_task_update(f->s, &k), -EINVAL);
	k.state = GP_TASK_RUNNING;
	k.priority = 12;
	assert_int_equal(gp_store_task_update(f->s, &k), -EINVAL);
	assert_int_equal(gp_store_task_add(f->s, NULL), -EINVAL);
	assert_int_equal(gp_store_task_get(f->s, k.id, NULL), -EINVAL);
	assert_int_equal(gp_store_task_list(f->s, -1, 42, &tasks, &n), -EINVAL);
	assert_int_equal(gp_store_task_list(NULL, -1, -1, &tasks, &n), -EINVAL);
	assert_int_equal(gp_store_task_count(f->s, 42), -EINVAL);

	assert_int_equal(gp_store_audit(f->s, NULL, "x", "y", "z"), -EINVAL);
	assert_int_equal(gp_store_audit(f->s, "", "x", "y", "z"), -EINVAL);
	assert_int_equal(gp_store_audit(f->s, "admin", "", "y", "z"), -EINVAL);
	assert_int_equal(gp_store_audit(f->s, big, "x", "y", "z"), -EINVAL);
	assert_int_equal(gp_store_audit(f->s, "admin", "x", big, "z"), -EINVAL);
	assert_int_equal(gp_store_audit_list(f->s, &log, NULL), -EINVAL);
	assert_int_equal(gp_store_task_count(f->s, -1), 1);
}

/* A string bound as a parameter is data: SQL in it does nothing. */
static void test_names_are_not_sql(void **state)
{
	struct fixture *f = *state;
	const char *evil = "x'); DROP TABLE tasks; --";
	struct gp_tenant got;

	add_tenant(f->s, evil);
	assert_int_equal(gp_store_tenant_by_name(f->s, evil, &got), 0);
	assert_string_equal(got.name, evil);
	assert_int_equal(gp_store_task_count(f->s, -1), 0);
}

/* ---- migrations from older files ---- */

/* What schema 15 added (the meter's history, services' steps, usage by
 * task), taken away again (every older file lacks it). */
#define SCHEMA_15_DROP                                                                   \
	"DROP TABLE device_series; DROP TABLE tenant_series; DROP TABLE queue_series; "  \
	"DROP TABLE service_steps; DROP INDEX usage_task; "

/* What schema 14 added (the job options), and after. */
#define SCHEMA_14_DROP                                                                   \
	SCHEMA_15_DROP                                                                   \
	"ALTER TABLE tasks DROP COLUMN time_limit_s; ALTER TABLE tasks DROP COLUMN timed_out; " \
	"ALTER TABLE tasks DROP COLUMN after; ALTER TABLE tasks DROP COLUMN array_id; "  \
	"ALTER TABLE tasks DROP COLUMN array_index; ALTER TABLE tasks DROP COLUMN mem_pct; " \
	"ALTER TABLE tasks DROP COLUMN mixed_models; "                                   \
	"ALTER TABLE templates DROP COLUMN runtime; "                                    \
	"ALTER TABLE templates DROP COLUMN time_limit_s; "

/* What schema 13 added (a task's runtime), and after. */
#define SCHEMA_13_DROP SCHEMA_14_DROP "ALTER TABLE tasks DROP COLUMN runtime; "

/* What schema 12 added (a task's pod), and after. */
#define SCHEMA_12_DROP SCHEMA_13_DROP "ALTER TABLE tasks DROP COLUMN pod_uid; "

/* What schema 11 added (task logs removed), and after. */
#define SCHEMA_11_DROP SCHEMA_12_DROP "DROP TABLE task_logs_removed; "

/* What schema 10 added (tenants' priority bounds), and after. */
#define SCHEMA_10_DROP SCHEMA_11_DROP "ALTER TABLE tenants DROP COLUMN priority_max; "

/* What schema 9 added, and after. */
#define SCHEMA_9_DROP                                                                    \
	SCHEMA_10_DROP                                                                   \
	"DROP TABLE services; DROP TABLE schedules; ALTER TABLE tasks DROP COLUMN service; "

/* Closes the store, runs `older` on its file (what later schemas added
 * taken away, and the older user_version), and opens it again: brought
 * up to date in place. */
static void reopen_from_older(struct fixture *f, const char *older)
{
	sqlite3 *db;

	gp_store_close(f->s);
	db = raw_open(f->path);
	raw_exec(db, older);
	sqlite3_close(db);
	assert_int_equal(gp_store_open(f->path, &f->s), 0);
	assert_int_equal(gp_store_schema_version(f->s), GP_STORE_SCHEMA_VERSION);
}

static void test_migrates_from_schema_1(void **state)
{
	struct fixture *f = *state;
	struct gp_usage_record u = {
		.start_ms = 0, .end_ms = 1000, .mem_mib = 1, .used_ms = 1};
	int64_t tenant_id, task_id;

	/* A file as the first release left it: schema 1, no usage or alerts. */
	tenant_id = add_tenant(f->s, "old");
	task_id = add_task(f->s, tenant_id, "old-task");
	reopen_from_older(f, SCHEMA_9_DROP "DROP TABLE usage; DROP TABLE alerts; "
			  "DROP TABLE tenant_model_quotas; "
			  "ALTER TABLE tasks DROP COLUMN template; "
			  "ALTER TABLE tasks DROP COLUMN memory_restart; "
			  "ALTER TABLE tasks DROP COLUMN workdir; ALTER TABLE tasks DROP COLUMN "
			  "env; "
			  "ALTER TABLE tenants DROP COLUMN unix_user; "
			  "ALTER TABLE tenants DROP COLUMN removed; PRAGMA user_version = 1");

	u.task = task_id;
	u.tenant = tenant_id;
	snprintf(u.device_uuid, sizeof(u.device_uuid), "GPU-1");
	snprintf(u.device_model, sizeof(u.device_model), "Tesla T4");
	assert_int_equal(gp_store_usage_add(f->s, &u, 1), 0);
	assert_true(u.id > 0);
}

/* A file at schema 3 (before model quotas and task directories) is
 * brought up to date in place, keeping its rows. */
static void test_migrates_from_schema_3(void **state)
{
	struct fixture *f = *state;
	struct gp_model_quota q = {.model = "T4", .compute_guaranteed_pct = 50};
	struct gp_model_quota *list = NULL;
	struct gp_tenant t;
	struct gp_task got;
	int64_t tenant_id, task_id;
	int n = -1;

	tenant_id = add_tenant(f->s, "old");
	task_id = add_task(f->s, tenant_id, "old-task");
	reopen_from_older(f, SCHEMA_9_DROP "DROP TABLE tenant_model_quotas; "
			  "ALTER TABLE tasks DROP COLUMN workdir; "
			  "ALTER TABLE tasks DROP COLUMN template; "
			  "ALTER TABLE tasks DROP COLUMN memory_restart; "
			  "ALTER TABLE usage DROP COLUMN mem_peak_mib; "
			  "ALTER TABLE tasks DROP COLUMN env; ALTER TABLE tenants DROP COLUMN "
			  "unix_user; ALTER TABLE tenants DROP COLUMN removed; "
			  "PRAGMA user_version = 3");

	assert_int_equal(gp_store_tenant_by_name(f->s, "old", &t), 0);
	assert_int_equal(t.mem_guaranteed_mib, 8192);
	assert_int_equal(gp_store_task_get(f->s, task_id, &got), 0);
	assert_string_equal(got.name, "old-task");
	assert_string_equal(got.workdir, "");   /* an old task: the agent's directory */
	q.tenant = tenant_id;
	assert_int_equal(gp_store_model_quota_set(f->s, &q), 0);
	assert_int_equal(gp_store_model_quota_list(f->s, tenant_id, &list, &n), 0);
	assert_int_equal(n, 1);
	free(list);
}

/* A file at schema 5 (before tenants' users and tasks' variables) is
 * brought up to date in place: old tenants are automatic, old tasks
 * declared nothing, and both can be written. */
static void test_migrates_from_schema_5(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t;
	int64_t tenant_id, task_id;
	char *env = NULL;
	sqlite3 *db;

	tenant_id = add_tenant(f->s, "old");
	task_id = add_task(f->s, tenant_id, "old-task");
	reopen_from_older(f, SCHEMA_9_DROP "ALTER TABLE tasks DROP COLUMN env; "
			  "ALTER TABLE tenants DROP COLUMN "
			  "unix_user; ALTER TABLE tenants DROP COLUMN removed; "
			  "ALTER TABLE tasks DROP COLUMN template; "
			  "ALTER TABLE tasks DROP COLUMN memory_restart; "
			  "ALTER TABLE usage DROP COLUMN mem_peak_mib; "
			  "PRAGMA user_version = 5");

	assert_int_equal(gp_store_tenant_by_name(f->s, "old", &t), 0);
	assert_string_equal(t.user, "");
	assert_int_equal(t.mem_guaranteed_mib, 8192);
	assert_int_equal(gp_store_task_env_get(f->s, task_id, &env), 0);
	assert_string_equal(env, "{}");
	free(env);
	snprintf(t.user, sizeof(t.user), "1000:1000");
	assert_int_equal(gp_store_tenant_set_user(f->s, &t), 0);
	assert_int_equal(gp_store_task_env_set(f->s, task_id, "{\"A\":\"1\"}"), 0);
	gp_store_close(f->s);
	db = raw_open(f->path);
	assert_int_equal(
		raw_int(db, "SELECT COUNT(*) FROM tenants WHERE unix_user = '1000:1000'"),
		1);
	assert_int_equal(
		raw_int(db, "SELECT COUNT(*) FROM tasks WHERE env = '{\"A\":\"1\"}'"), 1);
	sqlite3_close(db);
	f->s = NULL;
}

static void test_migrates_from_schema_6(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t;

	add_tenant(f->s, "old");
	reopen_from_older(f, SCHEMA_9_DROP "ALTER TABLE tenants DROP COLUMN removed; "
			  "ALTER TABLE tasks DROP COLUMN template; "
			  "ALTER TABLE tasks DROP COLUMN memory_restart; "
			  "ALTER TABLE usage DROP COLUMN mem_peak_mib; PRAGMA user_version = 6");

	assert_int_equal(gp_store_tenant_by_name(f->s, "old", &t), 0);
	assert_int_equal(t.removed, 0);
	assert_int_equal(gp_store_tenant_remove(f->s, t.id), 0);
	assert_int_equal(gp_store_tenant_by_name(f->s, "old", &t), 0);
	assert_true(t.removed > 0);
}

/* A file of schema 7: its tasks get no template and the alert policy,
 * its records a peak of 0; new ones keep theirs. */
static void test_migrates_from_schema_7(void **state)
{
	struct fixture *f = *state;
	struct gp_usage_record u = {.start_ms = 0, .end_ms = 1000, .mem_mib = 1, .used_ms = 1,
				    .mem_peak_mib = 700},
			       *got = NULL;
	struct gp_task t, *all = NULL;
	int64_t tenant_id, task_id;
	int n = 0;

	tenant_id = add_tenant(f->s, "old");
	task_id = add_task(f->s, tenant_id, "old-task");
	reopen_from_older(f, SCHEMA_9_DROP "ALTER TABLE tasks DROP COLUMN template; "
			  "ALTER TABLE tasks DROP COLUMN memory_restart; "
			  "ALTER TABLE usage DROP COLUMN mem_peak_mib; PRAGMA user_version = 7");

	assert_int_equal(gp_store_task_get(f->s, task_id, &t), 0);
	assert_string_equal(t.template_name, "");
	assert_false(t.restart_on_growth);
	t = (struct gp_task){.tenant = tenant_id, .mem_mib = 1, .compute_pct = 1};
	snprintf(t.name, sizeof(t.name), "new");
	snprintf(t.template_name, sizeof(t.template_name), "t4-half");
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	assert_int_equal(gp_store_task_list(f->s, tenant_id, -1, &all, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(all[1].template_name, "t4-half");
	free(all);
	u.task = task_id;
	u.tenant = tenant_id;
	snprintf(u.device_uuid, sizeof(u.device_uuid), "GPU-1");
	snprintf(u.device_model, sizeof(u.device_model), "Tesla T4");
	assert_int_equal(gp_store_usage_add(f->s, &u, 1), 0);
	assert_int_equal(gp_store_usage_list(f->s, -1, 0, 1000, 0, 10, &got, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(got[0].mem_peak_mib, 700);
	free(got);
}

/* A file at schema 9: its tenants may give priorities up to 5, the
 * admin up to 9. */
static void test_migrates_from_schema_9(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant admin = {.admin = true, .priority_max = 9}, t;
	char token[GP_TOKEN_HEX + 1];

	snprintf(admin.name, sizeof(admin.name), "root");
	assert_int_equal(gp_store_tenant_add(f->s, &admin, token), 0);
	add_tenant(f->s, "old");
	reopen_from_older(f, SCHEMA_10_DROP "PRAGMA user_version = 9");

	assert_int_equal(gp_store_tenant_by_name(f->s, "old", &t), 0);
	assert_int_equal(t.priority_max, GP_TENANT_PRIORITY_MAX_DEFAULT);
	assert_int_equal(gp_store_tenant_by_name(f->s, "root", &t), 0);
	assert_int_equal(t.priority_max, 9);
	t.priority_max = 10;
	assert_int_equal(gp_store_tenant_set_quota(f->s, &t), -EINVAL);
	t.priority_max = 3;
	assert_int_equal(gp_store_tenant_set_quota(f->s, &t), 0);
	assert_int_equal(gp_store_tenant_by_name(f->s, "root", &t), 0);
	assert_int_equal(t.priority_max, 3);
}

/* A file of schema 8: its tasks are no service's replicas; services and
 * schedules can be added, listed and removed (a removed service's name
 * is free again). */
static void test_migrates_from_schema_8(void **state)
{
	struct fixture *f = *state;
	struct gp_service_row v = {.replicas = 2, .share_pct = 30}, *list = NULL;
	struct gp_schedule_row r = {0}, *rules = NULL;
	int64_t tenant_id, task_id;
	struct gp_task t;
	int n = 0;

	tenant_id = add_tenant(f->s, "old");
	task_id = add_task(f->s, tenant_id, "old-task");
	reopen_from_older(f, SCHEMA_9_DROP "PRAGMA user_version = 8");

	assert_int_equal(gp_store_task_get(f->s, task_id, &t), 0);
	assert_int_equal(t.service, 0);
	v.tenant = tenant_id;
	snprintf(v.name, sizeof(v.name), "web");
	snprintf(v.spec, sizeof(v.spec), "{}");
	assert_int_equal(gp_store_service_add(f->s, &v), 0);
	assert_int_equal(gp_store_service_add(f->s, &v), -EEXIST);
	v.replicas = 3;
	v.share_pct = 60;
	assert_int_equal(gp_store_service_scale(f->s, &v), 0);
	assert_int_equal(gp_store_service_list(f->s, tenant_id, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(list[0].replicas, 3);
	assert_int_equal(list[0].share_pct, 60);
	free(list);
	assert_int_equal(gp_store_service_remove(f->s, v.id), 0);
	assert_int_equal(gp_store_service_remove(f->s, v.id), -ENOENT);
	assert_int_equal(gp_store_service_list(f->s, -1, &list, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(gp_store_service_add(f->s, &v), 0);
	t = (struct gp_task){.tenant = tenant_id, .mem_mib = 1, .compute_pct = 1, .service = v.id};
	snprintf(t.name, sizeof(t.name), "web");
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	assert_int_equal(gp_store_task_get(f->s, t.id, &t), 0);
	assert_int_equal(t.service, v.id);
	snprintf(r.name, sizeof(r.name), "night");
	snprintf(r.rule, sizeof(r.rule), "{\"at\":\"20:00:00\"}");
	assert_int_equal(gp_store_schedule_add(f->s, &r), 0);
	assert_int_equal(gp_store_schedule_add(f->s, &r), -EEXIST);
	assert_int_equal(gp_store_schedule_list(f->s, &rules, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rules[0].rule, "{\"at\":\"20:00:00\"}");
	free(rules);
	assert_int_equal(gp_store_schedule_remove(f->s, "night"), 0);
	assert_int_equal(gp_store_schedule_remove(f->s, "night"), -ENOENT);
}

/* A file at schema 12: its tasks get no runtime (""), a new task keeps
 * the one it is stored with. */
static void test_migrates_from_schema_12(void **state)
{
	struct fixture *f = *state;
	struct gp_task t, got;
	int64_t tenant_id, old_id;

	tenant_id = add_tenant(f->s, "old");
	old_id = add_task(f->s, tenant_id, "old-task");
	reopen_from_older(f, SCHEMA_13_DROP "PRAGMA user_version = 12");
	assert_int_equal(gp_store_task_get(f->s, old_id, &got), 0);
	assert_string_equal(got.runtime, "");
	t = task(tenant_id, "new-task");
	snprintf(t.runtime, sizeof(t.runtime), "acl");
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	assert_int_equal(gp_store_task_get(f->s, t.id, &got), 0);
	assert_string_equal(got.runtime, "acl");
}

/* A file at schema 13: its tasks have no time limit, dependency, array
 * or percent, its templates no runtime or time; new ones keep theirs, and
 * an update writes what the loop owns of them (timed out, the memory a
 * percent came to). */
static void test_migrates_from_schema_13(void **state)
{
	struct fixture *f = *state;
	struct gp_template tpl = {.mem_mib = 1, .compute_pct = 1, .time_limit_s = 600}, gtpl;
	struct gp_task t, got;
	int64_t tenant_id, old_id;

	tenant_id = add_tenant(f->s, "old");
	old_id = add_task(f->s, tenant_id, "old-task");
	snprintf(tpl.name, sizeof(tpl.name), "old-tpl");
	assert_int_equal(gp_store_template_add(f->s, &tpl), 0);
	reopen_from_older(f, SCHEMA_14_DROP "PRAGMA user_version = 13");
	assert_int_equal(gp_store_task_get(f->s, old_id, &got), 0);
	assert_true(got.time_limit_s == 0 && !got.timed_out && !got.after[0] && !got.array_id &&
		    !got.mem_pct);
	assert_int_equal(gp_store_template_by_name(f->s, "old-tpl", &gtpl), 0);
	assert_true(gtpl.time_limit_s == 0 && !gtpl.runtime[0]);

	t = task(tenant_id, "new-task");
	t.time_limit_s = 120;
	snprintf(t.after, sizeof(t.after), "%lld:ok", (long long)old_id);
	t.array_id = old_id;
	t.array_index = 3;
	t.mem_pct = 50;
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	t.timed_out = true;
	t.mem_mib = 40960;
	t.time_limit_s = 1; /* not the loop's to change */
	assert_int_equal(gp_store_task_update(f->s, &t), 0);
	assert_int_equal(gp_store_task_get(f->s, t.id, &got), 0);
	assert_true(got.time_limit_s == 120 && got.timed_out && got.array_id == old_id &&
		    got.array_index == 3 && got.mem_pct == 50 && got.mem_mib == 40960);
	assert_string_equal(got.after, t.after);
	t.mem_pct = 101;
	assert_int_equal(gp_store_task_add(f->s, &t), -EINVAL);

	snprintf(tpl.name, sizeof(tpl.name), "new-tpl");
	snprintf(tpl.runtime, sizeof(tpl.runtime), "hip");
	assert_int_equal(gp_store_template_add(f->s, &tpl), 0);
	assert_int_equal(gp_store_template_by_name(f->s, "new-tpl", &gtpl), 0);
	assert_true(gtpl.time_limit_s == 600);
	assert_string_equal(gtpl.runtime, "hip");
}

/* A file at schema 10 gains the table of removed logs; a removal is kept
 * for a task that exists, replaced by a later one, and read back. */
static void test_migrates_from_schema_10(void **state)
{
	struct fixture *f = *state;
	struct gp_log_removal rm = {.removed = 1000, .bytes = 4096}, got;
	int64_t tenant_id, task_id;

	tenant_id = add_tenant(f->s, "old");
	task_id = add_task(f->s, tenant_id, "old-task");
	reopen_from_older(f, SCHEMA_11_DROP "PRAGMA user_version = 10");

	assert_int_equal(gp_store_log_removal_get(f->s, task_id, &got), -ENOENT);
	rm.task = task_id;
	snprintf(rm.why, sizeof(rm.why), "to keep the logs under the cap");
	assert_int_equal(gp_store_log_removed(f->s, &rm), 0);
	rm.removed = 2000;
	assert_int_equal(gp_store_log_removed(f->s, &rm), 0);
	assert_int_equal(gp_store_log_removal_get(f->s, task_id, &got), 0);
	assert_int_equal(got.task, task_id);
	assert_int_equal(got.removed, 2000);
	assert_int_equal(got.bytes, 4096);
	assert_string_equal(got.why, "to keep the logs under the cap");
	rm.task = task_id + 100;
	assert_int_equal(gp_store_log_removed(f->s, &rm), -ENOENT);
}

/* ---- tenants' users and tasks' variables ---- */

static void test_tenant_user(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t = tenant("vision"), got, *list = NULL, missing = {.id = 9999};
	char token[GP_TOKEN_HEX + 1];
	int n = 0;

	add_tenant(f->s, "auto");
	snprintf(t.user, sizeof(t.user), "alice:render");
	assert_int_equal(gp_store_tenant_add(f->s, &t, token), 0);
	assert_int_equal(gp_store_tenant_by_name(f->s, "vision", &got), 0);
	assert_string_equal(got.user, "alice:render");
	assert_int_equal(gp_store_tenant_by_token(f->s, token, &got), 0);
	assert_string_equal(got.user, "alice:render");
	assert_int_equal(gp_store_tenant_list(f->s, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].user, "");
	assert_string_equal(list[1].user, "alice:render");
	free(list);

	/* set_user changes the user alone; the quotas stay. */
	snprintf(got.user, sizeof(got.user), "4242:4243");
	got.mem_guaranteed_mib = 1;
	assert_int_equal(gp_store_tenant_set_user(f->s, &got), 0);
	assert_int_equal(gp_store_tenant_by_name(f->s, "vision", &got), 0);
	assert_string_equal(got.user, "4242:4243");
	assert_int_equal(got.mem_guaranteed_mib, 8192);
	got.user[0] = '\0';
	assert_int_equal(gp_store_tenant_set_user(f->s, &got), 0);
	assert_int_equal(gp_store_tenant_by_name(f->s, "vision", &got), 0);
	assert_string_equal(got.user, "");

	assert_int_equal(gp_store_tenant_set_user(f->s, &missing), -ENOENT);
	assert_int_equal(gp_store_tenant_set_user(f->s, NULL), -EINVAL);
	memset(got.user, 'u', sizeof(got.user)); /* not terminated */
	assert_int_equal(gp_store_tenant_set_user(f->s, &got), -EINVAL);
	t = tenant("long");
	memset(t.user, 'u', sizeof(t.user));
	assert_int_equal(gp_store_tenant_add(f->s, &t, token), -EINVAL);
}

static void test_task_env(void **state)
{
	struct fixture *f = *state;
	int64_t tenant_id = add_tenant(f->s, "nlp");
	int64_t id = add_task(f->s, tenant_id, "job"),
		other = add_task(f->s, tenant_id, "other");
	const char *env = "{\"A\":\"1\",\"LD_LIBRARY_PATH\":\"/opt/lib\"}";
	char *got = NULL, *untouched = (char *)&got;
	struct gp_task t;

	assert_int_equal(gp_store_task_env_get(f->s, id, &got), 0);
	assert_string_equal(got, "{}"); /* none declared */
	free(got);
	assert_int_equal(gp_store_task_env_set(f->s, id, env), 0);
	assert_int_equal(gp_store_task_env_get(f->s, id, &got), 0);
	assert_string_equal(got, env);
	free(got);
	assert_int_equal(gp_store_task_env_get(f->s, other, &got), 0);
	assert_string_equal(got, "{}");
	free(got);
	/* The task itself is as it was. */
	assert_int_equal(gp_store_task_get(f->s, id, &t), 0);
	assert_string_equal(t.name, "job");

	static const char *const bad[] = {"",  "not json", "[1]", "\"A=1\"",
					  "1", "{\"A\":",  "null"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (gp_store_task_env_set(f->s, id, bad[i]) != -EINVAL)
			fail_msg("%s was stored", bad[i]);
	assert_int_equal(gp_store_task_env_get(f->s, id, &got), 0);
	assert_string_equal(got, env);
	free(got);
	assert_int_equal(gp_store_task_env_set(f->s, 9999, "{}"), -ENOENT);
	assert_int_equal(gp_store_task_env_set(f->s, id, NULL), -EINVAL);
	assert_int_equal(gp_store_task_env_set(NULL, id, "{}"), -EINVAL);
	got = untouched;
	assert_int_equal(gp_store_task_env_get(f->s, 9999, &got), -ENOENT);
	assert_ptr_equal(got, untouched);
	assert_int_equal(gp_store_task_env_get(f->s, id, NULL), -EINVAL);
}

/* A submission writes its task and variables at once: a rollback leaves
 * neither. */
static void test_task_env_in_transaction(void **state)
{
	struct fixture *f = *state;
	int64_t tenant_id = add_tenant(f->s, "nlp");
	struct gp_task t = task(tenant_id, "job");
	char *got = NULL;

	assert_int_equal(gp_store_begin(f->s), 0);
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	assert_int_equal(gp_store_task_env_set(f->s, t.id, "{\"A\":\"1\"}"), 0);
	gp_store_rollback(f->s);
	assert_int_equal(gp_store_task_count(f->s, -1), 0);
	assert_int_equal(gp_store_task_env_get(f->s, t.id, &got), -ENOENT);

	assert_int_equal(gp_store_begin(f->s), 0);
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	assert_int_equal(gp_store_task_env_set(f->s, t.id, "{\"A\":\"2\"}"), 0);
	assert_int_equal(gp_store_commit(f->s), 0);
	assert_int_equal(gp_store_task_env_get(f->s, t.id, &got), 0);
	assert_string_equal(got, "{\"A\":\"2\"}");
	free(got);
}

/* ---- model quotas ---- */

static struct gp_model_quota model_quota(int64_t tenant_id, const char *model, unsigned pct)
{
	struct gp_model_quota q = {.tenant = tenant_id,
				   .mem_guaranteed_mib = 1024,
				   .mem_borrowable_mib = 2048,
				   .compute_guaranteed_pct = pct,
				   .compute_borrowable_pct = 2 * pct};

	snprintf(q.model, sizeof(q.model), "%s", model);
	return q;
}

static void test_model_quota_set_list_remove(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_tenant(f->s, "a"), b = add_tenant(f->s, "b");
	struct gp_model_quota q, *list = NULL;
	int n = -1;

	assert_int_equal(gp_store_model_quota_list(f->s, -1, &list, &n), 0);
	assert_int_equal(n, 0);
	assert_null(list);
	q = model_quota(b, "T4", 200);
	assert_int_equal(gp_store_model_quota_set(f->s, &q), 0);
	q = model_quota(a, "T4", 50);
	assert_int_equal(gp_store_model_quota_set(f->s, &q), 0);
	q = model_quota(a, "A100", 100);
	assert_int_equal(gp_store_model_quota_set(f->s, &q), 0);
	q = model_quota(a, "a100", 150); /* the same model: replaced */
	assert_int_equal(gp_store_model_quota_set(f->s, &q), 0);

	assert_int_equal(gp_store_model_quota_list(f->s, -1, &list, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(list[0].tenant, a);
	assert_string_equal(list[0].model, "a100");
	assert_int_equal(list[0].mem_guaranteed_mib, 1024);
	assert_int_equal(list[0].mem_borrowable_mib, 2048);
	assert_int_equal(list[0].compute_guaranteed_pct, 150);
	assert_int_equal(list[0].compute_borrowable_pct, 300);
	assert_string_equal(list[1].model, "T4");
	assert_int_equal(list[2].tenant, b);
	free(list);

	assert_int_equal(gp_store_model_quota_list(f->s, b, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(list[0].compute_guaranteed_pct, 200);
	free(list);

	assert_int_equal(gp_store_model_quota_remove(f->s, a, "A100"), 0);
	assert_int_equal(gp_store_model_quota_remove(f->s, a, "A100"), -ENOENT);
	assert_int_equal(gp_store_model_quota_remove(f->s, b, "H100"), -ENOENT);
	assert_int_equal(gp_store_model_quota_list(f->s, a, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(list[0].model, "T4");
	free(list);
}

static void test_model_quota_bad_arguments(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_tenant(f->s, "a");
	struct gp_model_quota q = model_quota(a, "", 10);
	struct gp_model_quota *list = NULL;
	int n = 0;

	assert_int_equal(gp_store_model_quota_set(f->s, &q), -EINVAL);
	q = model_quota(a + 100, "T4", 10);
	assert_int_equal(gp_store_model_quota_set(f->s, &q), -ENOENT);
	assert_non_null(strstr(gp_store_error(f->s), "no tenant"));
	memset(q.model, 'x', sizeof(q.model));
	q.tenant = a;
	assert_int_equal(gp_store_model_quota_set(f->s, &q), -EINVAL);
	assert_int_equal(gp_store_model_quota_set(f->s, NULL), -EINVAL);
	assert_int_equal(gp_store_model_quota_remove(f->s, a, NULL), -EINVAL);
	assert_int_equal(gp_store_model_quota_list(NULL, -1, &list, &n), -EINVAL);
}

/* The matching the scheduler, the alerts and the metrics share: the
 * tenant's quota whose model is the longest part of the device's name,
 * without case; none of another tenant's. */
static void test_model_quota_find(void **state)
{
	struct gp_model_quota q[] = {
		model_quota(1, "A100", 10), model_quota(1, "a100-sxm4-80gb", 10),
		model_quota(2, "T4", 10), model_quota(1, "t4", 10), model_quota(1, "A10", 10),
	};
	int n = (int)(sizeof(q) / sizeof(q[0]));

	(void)state;
	assert_int_equal(gp_store_model_quota_find(q, n, 1, "Tesla T4"), 3);
	assert_int_equal(gp_store_model_quota_find(q, n, 2, "Tesla T4"), 2);
	assert_int_equal(gp_store_model_quota_find(q, n, 1, "NVIDIA A100-SXM4-80GB"), 1);
	assert_int_equal(gp_store_model_quota_find(q, n, 1, "NVIDIA A100-SXM4-40GB"), 0);
	/* By name, not by letters: A10 is an A10's quota, never an A100's. */
	assert_int_equal(gp_store_model_quota_find(q, n, 1, "NVIDIA A10"), 4);
	assert_int_equal(gp_store_model_quota_find(q, n, 1, "NVIDIA A100 80GB PCIe"), 0);
	assert_int_equal(gp_store_model_quota_find(q, n, 2, "NVIDIA A100-SXM4-40GB"), -1);
	assert_int_equal(gp_store_model_quota_find(q, n, 3, "Tesla T4"), -1);
	assert_int_equal(gp_store_model_quota_find(NULL, 0, 1, "Tesla T4"), -1);
}

/* ---- removing tenants and templates, new tokens, pages of tasks ---- */

static void test_tenant_token_new(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t = tenant("vision"), got;
	char old[GP_TOKEN_HEX + 1], fresh[GP_TOKEN_HEX + 1] = "";

	assert_int_equal(gp_store_tenant_add(f->s, &t, old), 0);
	assert_int_equal(gp_store_tenant_token_new(f->s, t.id, fresh), 0);
	assert_int_equal(strlen(fresh), GP_TOKEN_HEX);
	assert_string_not_equal(fresh, old);
	assert_int_equal(gp_store_tenant_by_token(f->s, old, &got), -ENOENT);
	assert_int_equal(gp_store_tenant_by_token(f->s, fresh, &got), 0);
	assert_int_equal(got.id, t.id);
	assert_int_equal(gp_store_tenant_token_new(f->s, t.id + 1, fresh), -ENOENT);
	assert_int_equal(gp_store_tenant_token_new(f->s, t.id, NULL), -EINVAL);
}

static void test_tenant_remove(void **state)
{
	struct fixture *f = *state;
	struct gp_tenant t = tenant("vision"), got, *list = NULL;
	struct gp_model_quota q = model_quota(0, "T4", 50), *quotas = NULL;
	char token[GP_TOKEN_HEX + 1];
	int64_t running, other = add_tenant(f->s, "other");
	int queued = -1, run = -1, all = -1, n = 0;
	struct gp_task task_row;

	assert_int_equal(gp_store_tenant_add(f->s, &t, token), 0);
	q.tenant = t.id;
	assert_int_equal(gp_store_model_quota_set(f->s, &q), 0);
	add_task(f->s, t.id, "queued");
	running = add_task(f->s, t.id, "running");
	add_task(f->s, other, "not-its");
	assert_int_equal(gp_store_task_get(f->s, running, &task_row), 0);
	task_row.state = GP_TASK_RUNNING;
	assert_int_equal(gp_store_task_update(f->s, &task_row), 0);
	assert_int_equal(gp_store_tenant_task_counts(f->s, t.id, &queued, &run, &all), 0);
	assert_int_equal(queued, 1);
	assert_int_equal(run, 1);
	assert_int_equal(all, 2);

	assert_int_equal(gp_store_tenant_remove(f->s, t.id), 0);
	assert_int_equal(gp_store_tenant_by_token(f->s, token, &got), -ENOENT);
	assert_int_equal(gp_store_tenant_by_name(f->s, "vision", &got), 0);
	assert_true(got.removed > 0);
	assert_int_equal(gp_store_tenant_list(f->s, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].removed, 0);
	assert_true(list[1].removed > 0);
	free(list);
	assert_int_equal(gp_store_model_quota_list(f->s, t.id, &quotas, &n), 0);
	assert_int_equal(n, 0);
	assert_null(quotas);
	/* Its tasks stay, and its name stays taken. */
	assert_int_equal(gp_store_task_get(f->s, running, &task_row), 0);
	assert_int_equal(gp_store_tenant_task_counts(f->s, t.id, &queued, &run, &all), 0);
	assert_int_equal(all, 2);
	t = tenant("vision");
	assert_int_equal(gp_store_tenant_add(f->s, &t, token), -EEXIST);
	assert_int_equal(gp_store_tenant_remove(f->s, got.id), -ENOENT);
	assert_int_equal(gp_store_tenant_token_new(f->s, got.id, token), -ENOENT);
	assert_int_equal(gp_store_tenant_remove(f->s, 9999), -ENOENT);
}

static void test_template_remove(void **state)
{
	struct fixture *f = *state;
	struct gp_template t = {.mem_mib = 1024, .compute_pct = 10, .hard = true}, got;

	snprintf(t.name, sizeof(t.name), "small");
	assert_int_equal(gp_store_template_add(f->s, &t), 0);
	assert_int_equal(gp_store_template_remove(f->s, t.id), 0);
	assert_int_equal(gp_store_template_by_name(f->s, "small", &got), -ENOENT);
	assert_int_equal(gp_store_template_remove(f->s, t.id), -ENOENT);
	assert_int_equal(gp_store_template_add(f->s, &t), 0); /* the name is free again */
}

static void test_task_page(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_tenant(f->s, "a"), b = add_tenant(f->s, "b"), ids[6];
	struct gp_task *page = NULL, t;
	int n = 0;

	for (int i = 0; i < 6; i++)
		ids[i] = add_task(f->s, i % 2 ? b : a, "t");
	assert_int_equal(gp_store_task_get(f->s, ids[2], &t), 0);
	t.state = GP_TASK_FAILED;
	assert_int_equal(gp_store_task_update(f->s, &t), 0);
	assert_int_equal(gp_store_task_get(f->s, ids[3], &t), 0);
	t.state = GP_TASK_RUNNING;
	assert_int_equal(gp_store_task_update(f->s, &t), 0);

	/* Pages of two, in id order, each after the last of the one before. */
	assert_int_equal(gp_store_task_page(f->s, -1, 0, 0, 2, &page, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(page[0].id, ids[0]);
	assert_int_equal(page[1].id, ids[1]);
	free(page);
	assert_int_equal(gp_store_task_page(f->s, -1, 0, ids[1], 2, &page, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(page[0].id, ids[2]);
	free(page);
	assert_int_equal(gp_store_task_page(f->s, -1, 0, ids[5], 2, &page, &n), 0);
	assert_int_equal(n, 0);
	assert_null(page);

	/* A tenant's; a set of states; both. */
	assert_int_equal(gp_store_task_page(f->s, b, 0, 0, 10, &page, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(page[2].id, ids[5]);
	free(page);
	assert_int_equal(gp_store_task_page(f->s, -1,
					    GP_TASK_STATE_BIT(GP_TASK_FAILED) |
						    GP_TASK_STATE_BIT(GP_TASK_RUNNING),
					    0, 10, &page, &n),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(page[0].id, ids[2]);
	assert_int_equal(page[1].id, ids[3]);
	free(page);
	assert_int_equal(gp_store_task_page(f->s, a, GP_TASK_STATE_BIT(GP_TASK_PENDING),
					    ids[0], 10, &page, &n),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(page[0].id, ids[4]);
	free(page);

	assert_int_equal(gp_store_task_page(f->s, -1, 0, 0, 0, &page, &n), -EINVAL);
	assert_int_equal(gp_store_task_page(f->s, -1, 1u << 7, 0, 1, &page, &n), -EINVAL);
	assert_int_equal(
		gp_store_task_page(f->s, -1, 0, 0, GP_STORE_PAGE_MAX + 1, &page, &n),
		-EINVAL);
}

/* ---- usage ---- */

static struct gp_usage_record usage(int64_t task_id, int64_t tenant_id, const char *model,
				    int64_t start, int64_t end, unsigned pct,
				    uint64_t used)
{
	struct gp_usage_record u = {.task = task_id,
				    .tenant = tenant_id,
				    .start_ms = start,
				    .end_ms = end,
				    .mem_mib = 2048,
				    .compute_pct = pct,
				    .used_ms = used};

	snprintf(u.device_uuid, sizeof(u.device_uuid), "GPU-%s", model);
	snprintf(u.device_model, sizeof(u.device_model), "%s", model);
	return u;
}

static int64_t usage_count(struct gp_store *s)
{
	struct gp_usage_record *all = NULL;
	int n = -1;

	assert_int_equal(
		gp_store_usage_list(s, -1, INT64_MIN, INT64_MAX, 0, INT32_MAX, &all, &n),
		0);
	free(all);
	return n;
}

static void test_usage_add_list_sum(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_tenant(f->s, "a"), b = add_tenant(f->s, "b");
	int64_t ta = add_task(f->s, a, "x"), tb = add_task(f->s, b, "y");
	struct gp_usage_record recs[] = {
		usage(ta, a, "Tesla T4", 1000, 2000, 30, 250),
		usage(ta, a, "Tesla T4", 2000, 4000, 30, 700),
		usage(ta, a, "NVIDIA A100", 1000, 2000, 100, 1000),
		usage(tb, b, "Tesla T4", 5000, 6000, 50, 0),
		usage(tb, b, "Tesla T4", 9000, 9500, 50, 500), /* starts past the range */
	};
	struct gp_usage_record *got = NULL;
	struct gp_usage_sum *sums = NULL;
	int n = 0;

	assert_int_equal(gp_store_usage_add(f->s, recs, 5), 0);
	for (int i = 0; i < 5; i++)
		assert_true(recs[i].id > 0);

	/* Records whose start is in [from, to), of one tenant or all. */
	assert_int_equal(gp_store_usage_list(f->s, a, 0, 9000, 0, 100, &got, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(got[1].start_ms, 2000);
	assert_int_equal(got[1].used_ms, 700);
	assert_string_equal(got[2].device_model, "NVIDIA A100");
	free(got);
	assert_int_equal(gp_store_usage_list(f->s, -1, 0, 9000, 0, 100, &got, &n), 0);
	assert_int_equal(n, 4);
	free(got);
	/* Pages: after an id, at most limit. */
	assert_int_equal(gp_store_usage_list(f->s, -1, 0, 9000, recs[1].id, 2, &got, &n),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(got[0].id, recs[2].id);
	assert_int_equal(got[1].id, recs[3].id);
	free(got);
	/* One task's records, a page at a time. */
	assert_int_equal(gp_store_usage_of_task_page(f->s, tb, 0, 100, &got, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(got[1].start_ms, 9000);
	free(got);
	assert_int_equal(gp_store_usage_of_task_page(f->s, ta, recs[0].id, 1, &got, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(got[0].id, recs[1].id);
	free(got);
	assert_int_equal(gp_store_usage_list(f->s, -1, 0, 9000, 0, 0, &got, &n), -EINVAL);

	/* Sums per tenant and model, exact integers. */
	assert_int_equal(gp_store_usage_sum(f->s, -1, 0, 9000, &sums, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(sums[0].tenant, a);
	assert_string_equal(sums[0].device_model, "NVIDIA A100");
	assert_int_equal(sums[1].records, 2);
	assert_int_equal(sums[1].duration_ms, 3000);
	assert_int_equal(sums[1].pct_ms, 30 * 3000);
	assert_int_equal(sums[1].mib_ms, 2048 * 3000);
	assert_int_equal(sums[1].used_ms, 950);
	assert_int_equal(sums[2].tenant, b);
	free(sums);
	assert_int_equal(gp_store_usage_sum(f->s, b, 100000, 200000, &sums, &n), 0);
	assert_int_equal(n, 0);
	assert_null(sums);
}

static void test_usage_all_or_none(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_tenant(f->s, "a"), ta = add_task(f->s, a, "x");
	struct gp_usage_record recs[] = {
		usage(ta, a, "Tesla T4", 0, 1000, 30, 100),
		usage(ta, a, "Tesla T4", 1000, 2000, 30, 100),
	};

	/* An invalid record: nothing is written. */
	recs[1].used_ms = 1001; /* more than the interval */
	assert_int_equal(gp_store_usage_add(f->s, recs, 2), -EINVAL);
	recs[1].used_ms = 100;
	recs[1].end_ms = 500; /* ends before it starts */
	assert_int_equal(gp_store_usage_add(f->s, recs, 2), -EINVAL);
	recs[1].end_ms = 2000;
	recs[1].device_model[0] = '\0';
	assert_int_equal(gp_store_usage_add(f->s, recs, 2), -EINVAL);
	snprintf(recs[1].device_model, sizeof(recs[1].device_model), "Tesla T4");
	/* A record of no task: the first, already inserted, is rolled back. */
	recs[1].task = ta + 100;
	assert_int_equal(gp_store_usage_add(f->s, recs, 2), -ENOENT);
	assert_int_equal(usage_count(f->s), 0);
	recs[1].task = ta;
	assert_int_equal(gp_store_usage_add(f->s, recs, 0), 0);
	assert_int_equal(gp_store_usage_add(f->s, NULL, 1), -EINVAL);

	/* Inside the caller's transaction: its rollback undoes the records. */
	assert_int_equal(gp_store_begin(f->s), 0);
	assert_int_equal(gp_store_usage_add(f->s, recs, 2), 0);
	assert_int_equal(gp_store_audit(f->s, "server", "test", "x", NULL), 0);
	gp_store_rollback(f->s);
	assert_int_equal(usage_count(f->s), 0);
	assert_int_equal(gp_store_begin(f->s), 0);
	assert_int_equal(gp_store_usage_add(f->s, recs, 2), 0);
	assert_int_equal(gp_store_commit(f->s), 0);
	assert_int_equal(usage_count(f->s), 2);
	gp_store_rollback(f->s); /* no transaction: nothing happens */
	assert_int_equal(usage_count(f->s), 2);
}

static void test_queue_stats(void **state)
{
	struct fixture *f = *state;
	int64_t a = add_tenant(f->s, "a"), first;
	struct gp_task t;
	int64_t oldest = -1;
	int n = -1;

	assert_int_equal(gp_store_queue_stats(f->s, &n, &oldest), 0);
	assert_int_equal(n, 0);
	assert_int_equal(oldest, 0);
	first = add_task(f->s, a, "one");
	add_task(f->s, a, "two");
	assert_int_equal(gp_store_task_get(f->s, first, &t), 0);
	assert_int_equal(gp_store_queue_stats(f->s, &n, &oldest), 0);
	assert_int_equal(n, 2);
	assert_int_equal(oldest, t.created);
	/* Preempted tasks wait too; running ones do not. */
	t.state = GP_TASK_RUNNING;
	assert_int_equal(gp_store_task_update(f->s, &t), 0);
	assert_int_equal(gp_store_queue_stats(f->s, &n, &oldest), 0);
	assert_int_equal(n, 1);
	t.state = GP_TASK_PREEMPTED;
	assert_int_equal(gp_store_task_update(f->s, &t), 0);
	assert_int_equal(gp_store_queue_stats(f->s, &n, &oldest), 0);
	assert_int_equal(n, 2);
}

/* ---- alerts ---- */

static struct gp_alert alert(enum gp_alert_level level, const char *kind,
			     const char *object)
{
	struct gp_alert a = {.level = level};

	snprintf(a.kind, sizeof(a.kind), "%s", kind);
	snprintf(a.object, sizeof(a.object), "%s", object);
	snprintf(a.message, sizeof(a.message), "%s on %s", kind, object);
	return a;
}

static void test_alerts_deduplicated(void **state)
{
	struct fixture *f = *state;
	struct gp_alert a = alert(GP_ALERT_WARNING, "device.busy", "device GPU-1");
	struct gp_alert b = alert(GP_ALERT_CRITICAL, "task.failed", "task 7");
	struct gp_alert *got = NULL, got1;
	int64_t cleared;
	bool fresh = false;
	int n = 0;

	b.tenant = 2;
	assert_int_equal(gp_store_alert_raise(f->s, &a, &fresh), 0);
	assert_true(fresh);
	assert_true(a.id > 0 && a.created > 0);
	/* The same kind on the same object while active: nothing new. */
	a.id = 0;
	assert_int_equal(gp_store_alert_raise(f->s, &a, &fresh), 0);
	assert_false(fresh);
	assert_int_equal(a.id, 0);
	assert_int_equal(gp_store_alert_raise(f->s, &b, &fresh), 0);
	assert_true(fresh);

	/* Cleared, it may be raised again. */
	assert_int_equal(gp_store_alert_clear(f->s, "device.busy", "device GPU-1"), 0);
	assert_int_equal(gp_store_alert_clear(f->s, "device.busy", "device GPU-1"), 0);
	assert_int_equal(gp_store_alert_raise(f->s, &a, &fresh), 0);
	assert_true(fresh);

	assert_int_equal(gp_store_alert_list(f->s, -1, false, 100, &got, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(got[0].kind, "device.busy"); /* newest first */
	assert_int_equal(got[0].cleared, 0);
	assert_int_equal(got[1].level, GP_ALERT_CRITICAL);
	assert_true(got[2].cleared > 0);
	free(got);
	assert_int_equal(gp_store_alert_list(f->s, -1, true, 100, &got, &n), 0);
	assert_int_equal(n, 2);
	free(got);
	assert_int_equal(gp_store_alert_list(f->s, 2, true, 100, &got, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(got[0].object, "task 7");
	free(got);
	assert_int_equal(gp_store_alert_list(f->s, -1, false, 1, &got, &n), 0);
	assert_int_equal(n, 1);
	free(got);
	/* An operator clears one by id; again changes nothing; no such id. */
	assert_int_equal(gp_store_alert_clear_id(f->s, b.id, &got1), 0);
	assert_true(got1.cleared > 0);
	assert_string_equal(got1.object, "task 7");
	cleared = got1.cleared;
	assert_int_equal(gp_store_alert_clear_id(f->s, b.id, &got1), 0);
	assert_int_equal(got1.cleared, cleared);
	assert_int_equal(gp_store_alert_clear_id(f->s, b.id + 100, &got1), -ENOENT);
	a.kind[0] = '\0';
	assert_int_equal(gp_store_alert_raise(f->s, &a, &fresh), -EINVAL);
	assert_int_equal(gp_store_alert_list(f->s, -1, false, 0, &got, &n), -EINVAL);
}

/* Pages of the audit log: the newest, or after an entry, oldest first. */
static void test_audit_page(void **state)
{
	struct fixture *f = *state;
	struct gp_audit_entry *log = NULL;
	char object[16];
	int64_t after;
	int n = 0;

	for (int i = 1; i <= 5; i++) {
		snprintf(object, sizeof(object), "task %d", i);
		assert_int_equal(gp_store_audit(f->s, "admin", "task.submit", object, NULL), 0);
	}
	assert_int_equal(gp_store_audit_page(f->s, -1, 2, &log, &n), 0);
	assert_int_equal(n, 2);                         /* the newest two, oldest first */
	assert_string_equal(log[0].object, "task 4");
	assert_string_equal(log[1].object, "task 5");
	free(log);
	assert_int_equal(gp_store_audit_page(f->s, 0, 2, &log, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(log[1].object, "task 2");
	after = log[1].id;
	free(log);
	assert_int_equal(gp_store_audit_page(f->s, after, 10, &log, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(log[0].object, "task 3");
	free(log);
	assert_int_equal(gp_store_audit_page(f->s, 0, 0, &log, &n), -EINVAL);
}

/* The audit log filtered (who, an action or its prefix, an object, a
 * time range) and paged both ways: before an entry, after one. */
static void test_audit_query(void **state)
{
	struct fixture *f = *state;
	struct gp_audit_entry *log = NULL;
	struct gp_audit_filter by_alpha = {.who = "alpha"}, tasks = {.action = "task."},
			       one = {.object = "3"}, future = {.since_ms = INT64_MAX / 2};
	char object[16];
	bool any = true;
	int64_t first;
	int n = 0;

	for (int i = 1; i <= 6; i++) {
		snprintf(object, sizeof(object), "%d", i);
		assert_int_equal(gp_store_audit(f->s, i % 2 ? "alpha" : "beta",
						i <= 4 ? "task.submit" : "template.add", object,
						NULL),
				 0);
	}
	assert_int_equal(gp_store_audit_query(f->s, &by_alpha, -1, 0, 10, &log, &n), 0);
	assert_int_equal(n, 3); /* 1, 3, 5, oldest first */
	assert_string_equal(log[0].object, "1");
	assert_string_equal(log[2].object, "5");
	free(log);
	assert_int_equal(gp_store_audit_query(f->s, &tasks, -1, 0, 2, &log, &n), 0);
	assert_int_equal(n, 2); /* the newest two of task.*: 3 and 4 */
	assert_string_equal(log[0].object, "3");
	assert_string_equal(log[1].object, "4");
	first = log[0].id;
	free(log);
	assert_int_equal(gp_store_audit_any_before(f->s, &tasks, first, &any), 0);
	assert_true(any);
	/* the page before it: 1 and 2; none before those */
	assert_int_equal(gp_store_audit_query(f->s, &tasks, -1, first, 2, &log, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(log[0].object, "1");
	assert_int_equal(gp_store_audit_any_before(f->s, &tasks, log[0].id, &any), 0);
	assert_false(any);
	free(log);
	/* after 1, of task.*: 2, 3 (limit 2) */
	assert_int_equal(gp_store_audit_query(f->s, &tasks, 1, 0, 2, &log, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(log[0].object, "2");
	free(log);
	assert_int_equal(gp_store_audit_query(f->s, &one, -1, 0, 10, &log, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(log[0].who, "alpha");
	free(log);
	log = NULL;
	assert_int_equal(gp_store_audit_query(f->s, &future, -1, 0, 10, &log, &n), 0);
	assert_int_equal(n, 0);
	assert_null(log);
	assert_int_equal(gp_store_audit_query(f->s, NULL, -1, 0, 10, &log, &n), 0);
	assert_int_equal(n, 6);
	free(log);
}

/* The meter's history: samples in, buckets out (averages and most), per
 * device, per tenant and of the queue; pruned by age and thinned. */
static void test_series(void **state)
{
	struct fixture *f = *state;
	int64_t alpha = add_tenant(f->s, "alpha"), since = -1;
	struct gp_series_point *p = NULL;
	int n = 0;

	for (int i = 0; i < 4; i++) {
		struct gp_series_device d[2] = {
			{.device = "GPU-a", .model = "Tesla T4", .sampled = true,
			 .mem_used_mib = 1000 + 100 * (uint64_t)i, .mem_alloc_mib = 2048,
			 .mem_total_mib = 15360, .compute_alloc_pct = 30, .util_pct = 10},
			{.device = "GPU-b", .model = "Tesla T4", .sampled = i != 1,
			 .mem_used_mib = 500, .mem_total_mib = 15360},
		};
		struct gp_series_tenant t = {.tenant = alpha, .mem_used_mib = 1000,
					     .mem_alloc_mib = 2048, .compute_alloc_pct = 30};
		struct gp_series_sample x = {.ts_ms = 60000 + 1000 * i, .device = d,
					     .devices = 2, .tenant = &t, .tenants = 1,
					     .queue_length = (unsigned)i,
					     .queue_oldest_wait_ms = 500 * i};

		assert_int_equal(gp_store_series_add(f->s, &x), 0);
	}
	assert_int_equal(gp_store_series_devices(f->s, 60000, 70000, 2000, &p, &n), 0);
	assert_int_equal(n, 4); /* two buckets of each device */
	assert_string_equal(p[0].device, "GPU-a");
	assert_int_equal(p[0].t_ms, 60000);
	assert_int_equal(p[0].samples, 2);
	assert_true(p[0].used);
	assert_true(p[0].mem_used_mib > 1049.9 && p[0].mem_used_mib < 1050.1);
	assert_int_equal(p[1].mem_used_max_mib, 1300);
	assert_int_equal(p[1].mem_total_mib, 15360);
	assert_true(p[0].util_pct > 9.9 && p[0].util_pct < 10.1);
	assert_string_equal(p[2].device, "GPU-b");
	assert_true(p[2].used); /* one of its two samples was */
	free(p);
	assert_int_equal(gp_store_series_tenants(f->s, alpha, 60000, 70000, 10000, &p, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].tenant, alpha);
	assert_int_equal(p[0].samples, 4);
	assert_int_equal(p[0].mem_alloc_max_mib, 2048);
	free(p);
	assert_int_equal(gp_store_series_queue(f->s, 60000, 70000, 10000, &p, &n), 0);
	assert_int_equal(n, 1);
	assert_true(p[0].mem_used_mib > 1.49 && p[0].mem_used_mib < 1.51); /* length */
	assert_int_equal(p[0].mem_used_max_mib, 3);
	assert_int_equal(p[0].mem_alloc_max_mib, 1500); /* the oldest wait, ms */
	free(p);
	assert_int_equal(gp_store_metered_since(f->s, &since), 0);
	assert_int_equal(since, 60000);
	/* Thinned to one a minute: the first of 60000..63000 stays. */
	assert_int_equal(gp_store_series_prune(f->s, 0, 120000), 0);
	assert_int_equal(gp_store_series_devices(f->s, 0, 120000, 120000, &p, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(p[0].samples, 1);
	assert_int_equal(p[0].mem_used_max_mib, 1000);
	free(p);
	p = NULL;
	assert_int_equal(gp_store_series_prune(f->s, 120000, 120000), 0);
	assert_int_equal(gp_store_series_queue(f->s, 0, 120000, 1000, &p, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(gp_store_series_prune(f->s, 2, 1), -EINVAL);
	assert_int_equal(gp_store_series_devices(f->s, 0, 1, 0, &p, &n), -EINVAL);
}

/* A service's steps, newest first; a step of no service is refused. */
static void test_service_steps(void **state)
{
	struct fixture *f = *state;
	struct gp_service_row v = {.tenant = add_tenant(f->s, "alpha"), .name = "web",
				   .spec = "{}", .replicas = 1, .share_pct = 30};
	struct gp_service_step a = {.who = "service:web", .step = "grow", .replicas = 1,
				    .share_pct = 60, .reason = "used 95 % for 2 s"},
			       b = {.who = "alpha", .step = "set", .replicas = 2,
				    .share_pct = 60, .reason = "by hand"};
	struct gp_service_step *got = NULL;
	int n = 0;

	assert_int_equal(gp_store_service_add(f->s, &v), 0);
	a.service = b.service = v.id;
	assert_int_equal(gp_store_service_step_add(f->s, &a), 0);
	assert_int_equal(gp_store_service_step_add(f->s, &b), 0);
	assert_true(a.ts_ms > 0 && b.id > a.id);
	assert_int_equal(gp_store_service_steps(f->s, v.id, 10, &got, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(got[0].step, "set");
	assert_string_equal(got[1].reason, "used 95 % for 2 s");
	assert_int_equal(got[1].share_pct, 60);
	free(got);
	b.service = v.id + 7;
	assert_int_equal(gp_store_service_step_add(f->s, &b), -ENOENT);
}

/* Pages of alerts, newest first: after an alert come the older ones. */
static void test_alert_page(void **state)
{
	struct fixture *f = *state;
	struct gp_alert a = { .level = GP_ALERT_WARNING }, *got = NULL;
	int64_t id[4];
	bool fresh;
	int n = 0;

	for (int i = 0; i < 4; i++) {
		snprintf(a.kind, sizeof(a.kind), "task.failed");
		snprintf(a.object, sizeof(a.object), "task %d", i);
		snprintf(a.message, sizeof(a.message), "failed");
		assert_int_equal(gp_store_alert_raise(f->s, &a, &fresh), 0);
		id[i] = a.id;
	}
	assert_int_equal(gp_store_alert_page(f->s, -1, false, 0, 2, &got, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(got[0].id, id[3]);
	assert_int_equal(got[1].id, id[2]);
	free(got);
	assert_int_equal(gp_store_alert_page(f->s, -1, false, id[2], 10, &got, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(got[0].id, id[1]);
	assert_int_equal(got[1].id, id[0]);
	free(got);
	assert_int_equal(gp_store_alert_page(f->s, -1, false, -1, 10, &got, &n), -EINVAL);
}

/* A reason alone is written, in a transaction that does not wait for the
 * disk; a reader sees what the store committed and cannot write. */
static void test_reason_unsynced_reader(void **state)
{
	struct fixture *f = *state;
	int64_t id = add_task(f->s, add_tenant(f->s, "nlp"), "job");
	struct gp_store *reader = NULL;
	struct gp_task t;

	assert_int_equal(gp_store_begin_unsynced(f->s), 0);
	assert_int_equal(gp_store_task_reason(f->s, id, "no device fits now"), 0);
	assert_int_equal(gp_store_task_reason(f->s, id + 100, "x"), -ENOENT);
	assert_int_equal(gp_store_commit(f->s), 0);
	assert_int_equal(gp_store_task_get(f->s, id, &t), 0);
	assert_string_equal(t.reason, "no device fits now");
	assert_int_equal(t.state, GP_TASK_PENDING);
	assert_int_equal(gp_store_queue_length(f->s), 1);
	assert_int_equal(gp_store_open_reader(f->s, &reader), 0);
	assert_int_equal(gp_store_task_get(reader, id, &t), 0);
	assert_string_equal(t.reason, "no device fits now");
	assert_int_not_equal(gp_store_task_reason(reader, id, "y"), 0);
	gp_store_close(reader);
}

/* ---- durability ---- */

/* The writer: adds tasks and reports each id once the call returned.
 * Exits 0 after all of them, 1 if a call failed. */
static void writer(const char *path, int64_t tenant_id, int fd)
{
	struct gp_store *s = NULL;

	if (gp_store_open(path, &s) < 0)
		_exit(1);
	for (int i = 0; i < DURABLE_TASKS; i++) {
		struct gp_task t = task(tenant_id, "durable");

		if (gp_store_task_add(s, &t) < 0)
			_exit(1);
		if (write(fd, &t.id, sizeof(t.id)) != (ssize_t)sizeof(t.id))
			_exit(1);
	}
	gp_store_close(s);
	_exit(0);
}

/* Reads ids from fd into ids (at most DURABLE_TASKS); returns how many. */
static int read_ids(int fd, int64_t *ids, int n, int want)
{
	while (n < want) {
		ssize_t got = read(fd, &ids[n], sizeof(ids[n]));

		if (got <= 0)
			break;
		assert_int_equal(got, sizeof(ids[n]));
		n++;
	}
	return n;
}

/* Kills a writer after a random number of reported ids plus a random
 * delay; returns how many ids it reported in all. */
static int run_killed_writer(const char *path, int64_t tenant_id, int64_t *ids)
{
	int fds[2], status, n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		writer(path, tenant_id, fds[1]);
	}
	close(fds[1]);
	n = read_ids(fds[0], ids, 0, rand() % DURABLE_TASKS);
	usleep((useconds_t)(rand() % 3000));
	kill(pid, SIGKILL);
	n = read_ids(fds[0], ids, n, DURABLE_TASKS);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) ||
		    (WIFEXITED(status) && WEXITSTATUS(status) == 0));
	return n;
}

static void test_durable_after_sigkill(void **state)
{
	struct fixture *f = *state;
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	int64_t ids[DURABLE_TASKS], tenant_id = add_tenant(f->s, "durable");
	struct gp_task t;

	print_message("durability seed %u\n", seed);
	srand(seed);
	gp_store_close(f->s); /* no open store across fork */
	f->s = NULL;
	for (int round = 0; round < DURABLE_ROUNDS; round++) {
		int n = run_killed_writer(f->path, tenant_id, ids);

		assert_int_equal(gp_store_open(f->path, &f->s), 0);
		for (int i = 0; i < n; i++)
			assert_int_equal(gp_store_task_get(f->s, ids[i], &t), 0);
		assert_true(gp_store_task_count(f->s, -1) >= n);
		gp_store_close(f->s);
		f->s = NULL;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_creates_schema, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_open_in_memory, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_queue_length, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_keeps_data, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup_dir,
						teardown),
		cmocka_unit_test_setup_teardown(test_not_a_database, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_empty_file_refused, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_file_refused, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file_made, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_check_finds_damage, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_damage_met_while_serving, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_backup_into, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_tenant_add_and_lookup, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_tenant_wrong_token, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_tenant_token_not_stored, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_tenant_duplicate, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_tenant_list_and_quota, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_template_add_and_list, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_task_add, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_task_list, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_task_shapes, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_task_update, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_task_count, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_audit, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_audit_page, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_audit_query, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_series, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_service_steps, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_alert_page, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_reason_unsynced_reader, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_arguments, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_names_are_not_sql, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_5, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_tenant_user, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_6, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_9, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_8, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_10,
						setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_13, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_12,
						setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_7, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_tenant_token_new, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_tenant_remove, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_template_remove, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_task_page, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_task_env, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_task_env_in_transaction, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_3, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_model_quota_set_list_remove,
						setup_store, teardown),
		cmocka_unit_test(test_model_quota_find),
		cmocka_unit_test_setup_teardown(test_model_quota_bad_arguments,
						setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_migrates_from_schema_1, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_usage_add_list_sum, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_usage_all_or_none, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_alerts_deduplicated, setup_store,
						teardown),
		cmocka_unit_test_setup_teardown(test_queue_stats, setup_store, teardown),
		cmocka_unit_test_setup_teardown(test_durable_after_sigkill, setup_store,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
