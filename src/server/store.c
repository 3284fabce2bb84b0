/* store.c — the server's durable state in one SQLite file (see store.h).
 *
 * The file runs in WAL mode with synchronous=FULL, and every write is a
 * single autocommit statement, so a function that writes returns only
 * after its commit is synced. The schema is the list `migrations` below:
 * migration N takes the file from user_version N-1 to N inside one
 * transaction when the store is opened. Every statement is constant SQL
 * with bound parameters; nothing a user sends becomes SQL text.
 *
 * Tokens are 32 bytes from getrandom(), shown once as hex; the tenants
 * table keeps only the hex SHA-256 of that hex string (nettle).
 *
 * Usage records and alerts are written many at a time by the loop's
 * sampling: gp_store_begin/commit make them one transaction, and the
 * functions that write several rows open their own when the caller has
 * none (sqlite3_get_autocommit tells). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>
#include <sqlite3.h>

#include "base/clock.h"
#include "core/models.h"
#include "server/store.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define ERROR_MAX	512
#define BUSY_TIMEOUT_MS 5000
#define TOKEN_BYTES	32
#define PRIORITY_MAX	9
#define PCT_MAX		100
#define MEMORY_PATH	":memory:"

/* Statements are prepared once and kept (every SQL text here is a
 * literal, so its address names it); a call resets its statement when it
 * is done. The number of distinct statements is fixed by the code. */
#define STATEMENTS_MAX 128

struct gp_store {
	sqlite3 *db;
	char error[ERROR_MAX];
	int queued;     /* pending + preempted tasks; -1 until counted */
	bool unsynced;  /* in a transaction of gp_store_begin_unsynced */
	bool created;   /* the file was made by this open */
	bool damaged;   /* SQLite found the file damaged: writes are refused */
	gp_store_damage_fn *on_damage;
	void *on_damage_ctx;
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} statement[STATEMENTS_MAX];
	int statements;
};

/* Migration i + 1 is migrations[i]: to change the schema, append one
 * here and raise GP_STORE_SCHEMA_VERSION in store.h; never edit a
 * released one. Each runs inside the opening transaction, with
 * foreign_keys on (a table rebuild must not rely on turning it off). */
static const char *const migrations[] = {
	/* 1: the first schema. */
	"CREATE TABLE tenants ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  name TEXT NOT NULL UNIQUE,"
	"  token_sha256 TEXT NOT NULL UNIQUE,"
	"  admin INTEGER NOT NULL DEFAULT 0,"
	"  mem_guaranteed_mib INTEGER NOT NULL DEFAULT 0,"
	"  mem_borrowable_mib INTEGER NOT NULL DEFAULT 0,"
	"  compute_guaranteed_pct INTEGER NOT NULL DEFAULT 0,"
	"  compute_borrowable_pct INTEGER NOT NULL DEFAULT 0,"
	"  created INTEGER NOT NULL);"
	"CREATE TABLE templates ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  name TEXT NOT NULL UNIQUE,"
	"  models TEXT NOT NULL DEFAULT '',"
	"  mem_mib INTEGER NOT NULL,"
	"  compute_pct INTEGER NOT NULL,"
	"  hard INTEGER NOT NULL);"
	"CREATE TABLE tasks ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  tenant INTEGER NOT NULL REFERENCES tenants(id),"
	"  name TEXT NOT NULL,"
	"  command TEXT NOT NULL,"
	"  mem_mib INTEGER NOT NULL,"
	"  compute_pct INTEGER NOT NULL,"
	"  devices INTEGER NOT NULL,"
	"  whole INTEGER NOT NULL,"
	"  exclusive INTEGER NOT NULL,"
	"  hard INTEGER NOT NULL,"
	"  priority INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  model TEXT NOT NULL,"
	"  state INTEGER NOT NULL,"
	"  reason TEXT NOT NULL,"
	"  placement TEXT NOT NULL,"
	"  pid INTEGER NOT NULL,"
	"  exit_code INTEGER NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  started INTEGER NOT NULL,"
	"  ended INTEGER NOT NULL);"
	"CREATE INDEX tasks_state ON tasks(state);"
	"CREATE INDEX tasks_tenant ON tasks(tenant);"
	"CREATE TABLE audit ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  ts INTEGER NOT NULL,"
	"  who TEXT NOT NULL,"
	"  action TEXT NOT NULL,"
	"  object TEXT NOT NULL,"
	"  detail TEXT NOT NULL);",
	/* 2: metering — one row per task, device and sampling interval. */
	"CREATE TABLE usage ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  task INTEGER NOT NULL REFERENCES tasks(id),"
	"  tenant INTEGER NOT NULL REFERENCES tenants(id),"
	"  device_uuid TEXT NOT NULL,"
	"  device_model TEXT NOT NULL,"
	"  start_ms INTEGER NOT NULL,"
	"  end_ms INTEGER NOT NULL,"
	"  mem_mib INTEGER NOT NULL,"
	"  compute_pct INTEGER NOT NULL,"
	"  used_ms INTEGER NOT NULL,"
	"  CHECK (start_ms <= end_ms AND used_ms <= end_ms - start_ms));"
	"CREATE INDEX usage_start ON usage(start_ms);"
	"CREATE INDEX usage_tenant_start ON usage(tenant, start_ms);",
	/* 3: alerts; at most one active per kind and object. */
	"CREATE TABLE alerts ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  level INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  object TEXT NOT NULL,"
	"  tenant INTEGER NOT NULL,"
	"  message TEXT NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  cleared INTEGER NOT NULL DEFAULT 0);"
	"CREATE UNIQUE INDEX alerts_active ON alerts(kind, object) WHERE cleared = 0;"
	"CREATE INDEX alerts_tenant ON alerts(tenant);",
	/* 4: quotas per device model, on top of a tenant's overall quota. */
	"CREATE TABLE tenant_model_quotas ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  tenant INTEGER NOT NULL REFERENCES tenants(id),"
	"  model TEXT NOT NULL COLLATE NOCASE,"
	"  mem_guaranteed_mib INTEGER NOT NULL,"
	"  mem_borrowable_mib INTEGER NOT NULL,"
	"  compute_guaranteed_pct INTEGER NOT NULL,"
	"  compute_borrowable_pct INTEGER NOT NULL,"
	"  UNIQUE (tenant, model));",
	/* 5: where a task runs (the submitter's directory); "" the agent's. */
	"ALTER TABLE tasks ADD COLUMN workdir TEXT NOT NULL DEFAULT '';",
	/* 6: the Unix user a tenant's tasks run as ("" automatic), and the
	 * environment variables a task's submitter declared (a JSON object). */
	"ALTER TABLE tenants ADD COLUMN unix_user TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE tasks ADD COLUMN env TEXT NOT NULL DEFAULT '{}';",
	/* 7: a tenant removed (unix seconds; 0: not), kept for its tasks,
	 * usage records and audit rows, which name it. */
	"ALTER TABLE tenants ADD COLUMN removed INTEGER NOT NULL DEFAULT 0;",
	/* 8: the template a task was submitted with ("" none), and the most
	 * memory a task's processes held on a device in a record's interval
	 * (as sampled; 0 where unknown): what right-sizing reads. */
	"ALTER TABLE tasks ADD COLUMN template TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE usage ADD COLUMN mem_peak_mib INTEGER NOT NULL DEFAULT 0;"
	/* ... and whether a task whose memory only grows is restarted before
	 * its limit (1) rather than only warned of (0). */
	"ALTER TABLE tasks ADD COLUMN memory_restart INTEGER NOT NULL DEFAULT 0;",
	/* 9: services (replicated tasks that scale: their spec as JSON, the
	 * replicas and share they have now), the service a task is a replica
	 * of (0: none), and time-of-day schedules (their rule as JSON). */
	"CREATE TABLE services ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  tenant INTEGER NOT NULL REFERENCES tenants(id),"
	"  name TEXT NOT NULL,"
	"  spec TEXT NOT NULL,"
	"  replicas INTEGER NOT NULL,"
	"  share_pct INTEGER NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  removed INTEGER NOT NULL DEFAULT 0);"
	"CREATE UNIQUE INDEX services_live ON services (tenant, name) WHERE removed = 0;"
	"ALTER TABLE tasks ADD COLUMN service INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE schedules ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  name TEXT NOT NULL UNIQUE,"
	"  rule TEXT NOT NULL,"
	"  created INTEGER NOT NULL);",
	/* 10: the highest priority a tenant may give its tasks (issue 25:
	 * priority was the tenant's own choice); the admin's is 9. */
	"ALTER TABLE tenants ADD COLUMN priority_max INTEGER NOT NULL DEFAULT 5;"
	"UPDATE tenants SET priority_max = 9 WHERE admin = 1;",
	/* 11: the logs of ended tasks the server removed to keep the logs
	 * under their total cap, or the free space where they are above its
	 * floor: when (unix ms), their size, and why. */
	"CREATE TABLE task_logs_removed ("
	"  task INTEGER PRIMARY KEY REFERENCES tasks(id),"
	"  removed INTEGER NOT NULL,"
	"  bytes INTEGER NOT NULL,"
	"  why TEXT NOT NULL);",
	/* 12: a task that is a Kubernetes pod (the server's kubernetes
	 * engine): its UID ("" for the tasks the server runs itself). */
	"ALTER TABLE tasks ADD COLUMN pod_uid TEXT NOT NULL DEFAULT '';",
	/* 13: the runtime a task's program is built for (server/runtime.h);
	 * "" for the tasks from before. */
	"ALTER TABLE tasks ADD COLUMN runtime TEXT NOT NULL DEFAULT '';",
	/* 14: the job options a Slurm user gives (issue 27): a task's time
	 * limit in seconds (0: none) and whether it ended it; the tasks it
	 * waits for ("3:ok,5:any"); the array it is of (its first task's id;
	 * 0: none) and its index there; its memory as a percent of its card's
	 * (0: mem_mib); whether a gang's devices may be of several models. A
	 * template's runtime ("": none) and time limit. */
	"ALTER TABLE tasks ADD COLUMN time_limit_s INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN timed_out INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN after TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE tasks ADD COLUMN array_id INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN array_index INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN mem_pct INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN mixed_models INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE templates ADD COLUMN runtime TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE templates ADD COLUMN time_limit_s INTEGER NOT NULL DEFAULT 0;",
	/* 15: the meter's history, for the console's charts (meter.h): at
	 * each sampling (at most one a second) each device's memory used,
	 * held and total, compute held and utilization (NULL when the device
	 * did not answer); each tenant's memory and compute held by its
	 * running tasks and the memory their processes used; the queue's
	 * length and oldest wait. Kept for days, older rows thinned
	 * (gp_store_series_prune). A service's scaling steps with their
	 * reasons (service.h), and usage records by task (a task's charts). */
	"CREATE TABLE device_series ("
	"  ts_ms INTEGER NOT NULL,"
	"  device TEXT NOT NULL,"
	"  model TEXT NOT NULL,"
	"  mem_used_mib INTEGER,"
	"  mem_alloc_mib INTEGER NOT NULL,"
	"  mem_total_mib INTEGER NOT NULL,"
	"  compute_alloc_pct INTEGER NOT NULL,"
	"  util_pct INTEGER);"
	"CREATE INDEX device_series_ts ON device_series(ts_ms);"
	"CREATE TABLE tenant_series ("
	"  ts_ms INTEGER NOT NULL,"
	"  tenant INTEGER NOT NULL REFERENCES tenants(id),"
	"  mem_used_mib INTEGER NOT NULL,"
	"  mem_alloc_mib INTEGER NOT NULL,"
	"  compute_alloc_pct INTEGER NOT NULL);"
	"CREATE INDEX tenant_series_ts ON tenant_series(ts_ms);"
	"CREATE TABLE queue_series ("
	"  ts_ms INTEGER NOT NULL,"
	"  length INTEGER NOT NULL,"
	"  oldest_wait_ms INTEGER NOT NULL);"
	"CREATE INDEX queue_series_ts ON queue_series(ts_ms);"
	"CREATE TABLE service_steps ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  service INTEGER NOT NULL REFERENCES services(id),"
	"  ts_ms INTEGER NOT NULL,"
	"  who TEXT NOT NULL,"
	"  step TEXT NOT NULL,"
	"  replicas INTEGER NOT NULL,"
	"  share_pct INTEGER NOT NULL,"
	"  reason TEXT NOT NULL);"
	"CREATE INDEX service_steps_service ON service_steps(service, id);"
	"CREATE INDEX usage_task ON usage(task, id);",
};

_Static_assert(ARRAY_SIZE(migrations) == GP_STORE_SCHEMA_VERSION,
	       "GP_STORE_SCHEMA_VERSION must equal the number of migrations");

/* Where gp_store_open reports why it failed: there is no store yet. */
static _Thread_local char open_error[ERROR_MAX];

/* ---- errors ---- */

/* Records a message for gp_store_error and returns err. */
static int fail(struct gp_store *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct gp_store *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	return err;
}

static int fail_open(int err, const char *msg)
{
	snprintf(open_error, sizeof(open_error), "%s", msg);
	return err;
}

/* The errno for SQLite's last failure on db. */
static int sqlite_errno(sqlite3 *db)
{
	int rc = sqlite3_extended_errcode(db);

	switch (rc) {
	case SQLITE_CONSTRAINT_UNIQUE:
	case SQLITE_CONSTRAINT_PRIMARYKEY: return -EEXIST;
	case SQLITE_CONSTRAINT_FOREIGNKEY: return -ENOENT;
	case SQLITE_NOMEM: return -ENOMEM;
	}
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		return -EINVAL;
	if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB)
		return -EBADMSG;
	return -EIO;
}

/* s's file is damaged: say so from now on, and to the caller's
 * function the first time. */
static int damaged(struct gp_store *s, const char *what)
{
	bool first = !s->damaged;

	s->damaged = true;
	fail(s, -EBADMSG,
	     "%s: the database is damaged (%s); writes are refused until it is "
	     "restored: stop the server and restore the newest backup (gpupool server "
	     "--restore-db, docs/install.md)",
	     what, sqlite3_errmsg(s->db));
	if (first && s->on_damage)
		s->on_damage(s->on_damage_ctx, s->error);
	return -EBADMSG;
}

/* Fails with SQLite's last error on s, prefixed with what was being done. */
static int fail_sqlite(struct gp_store *s, const char *what)
{
	int err = sqlite_errno(s->db);

	if (err == -EBADMSG)
		return damaged(s, what);
	return fail(s, err, "%s: %s", what, sqlite3_errmsg(s->db));
}

/* ---- small helpers ---- */

static void hex_encode(const uint8_t *bytes, size_t n, char *ret)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		ret[2 * i] = digits[bytes[i] >> 4];
		ret[2 * i + 1] = digits[bytes[i] & 0xf];
	}
	ret[2 * n] = '\0';
}

/* ret: GP_TOKEN_HEX + 1 bytes, the hex SHA-256 of token. */
static void token_hash(const char *token, char *ret)
{
	struct sha256_ctx ctx;
	uint8_t digest[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, strlen(token), (const uint8_t *)token);
	sha256_digest(&ctx, sizeof(digest), digest);
	hex_encode(digest, sizeof(digest), ret);
}

/* ret: GP_TOKEN_HEX + 1 bytes, a fresh random token in hex. */
static int token_new(char *ret)
{
	uint8_t bytes[TOKEN_BYTES];
	size_t got = 0;

	while (got < sizeof(bytes)) {
		ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	hex_encode(bytes, sizeof(bytes), ret);
	return 0;
}

/* A fixed-size field holds a terminated string. */
static bool fits(const char *field, size_t size)
{
	return strnlen(field, size) < size;
}

static bool is_blank(const char *str)
{
	return str[0] == '\0';
}

/* The length of str cut to at most max bytes, not inside a UTF-8 character. */
static int utf8_cut(const char *str, size_t max)
{
	size_t n = strnlen(str, max + 1);

	if (n <= max)
		return (int)n;
	n = max;
	while (n > 0 && ((unsigned char)str[n] & 0xc0) == 0x80)
		n--;
	return (int)n;
}

static void copy_text(sqlite3_stmt *st, int col, char *buf, size_t size)
{
	const char *text = (const char *)sqlite3_column_text(st, col);

	snprintf(buf, size, "%s", text ? text : "");
}

/* ---- statements ---- */

/* Done with a kept statement: ready for its next use. */
static void release(sqlite3_stmt **st)
{
	if (*st) {
		sqlite3_reset(*st);
		sqlite3_clear_bindings(*st);
	}
}

#define auto_stmt __attribute__((cleanup(release))) sqlite3_stmt

/* st, unless it writes to a store found damaged. */
static int usable(struct gp_store *s, sqlite3_stmt *st, sqlite3_stmt **ret)
{
	if (s->damaged && !sqlite3_stmt_readonly(st))
		return fail(s, -EBADMSG,
			    "the database is damaged; writes are refused until it is "
			    "restored: stop the server and restore the newest backup "
			    "(gpupool server --restore-db, docs/install.md)");
	*ret = st;
	return 0;
}

/* The statement of `sql` (a string literal), prepared at its first use. */
static int prepare(struct gp_store *s, const char *sql, sqlite3_stmt **ret)
{
	sqlite3_stmt *st;

	for (int i = 0; i < s->statements; i++)
		if (s->statement[i].sql == sql)
			return usable(s, s->statement[i].st, ret);
	if (s->statements == STATEMENTS_MAX)
		return fail(s, -ENOSPC, "prepare: more than %d statements; raise STATEMENTS_MAX",
			    STATEMENTS_MAX);
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
		return fail_sqlite(s, "prepare");
	s->statement[s->statements].sql = sql;
	s->statement[s->statements++].st = st;
	return usable(s, st, ret);
}

/* Runs a statement that returns no rows; 0 once it is committed. */
static int step_done(struct gp_store *s, sqlite3_stmt *st, const char *what)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		return fail_sqlite(s, what);
	return 0;
}

/* 1: a row, 0: no more rows, < 0: failed. */
static int step_row(struct gp_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return fail_sqlite(s, what);
}

typedef void read_row_fn(sqlite3_stmt *st, void *ret);

/* Reads the one row st selects into ret; -ENOENT with `missing` if none. */
static int get_one(struct gp_store *s, sqlite3_stmt *st, read_row_fn *read, void *ret,
		   const char *missing)
{
	int r = step_row(s, st, missing);

	if (r < 0)
		return r;
	if (r == 0)
		return fail(s, -ENOENT, "%s", missing);
	read(st, ret);
	return 0;
}

/* Reads every row st selects into a malloc'd array of elements of size
 * `size`; no rows gives *ret = NULL, *ret_n = 0. */
static int get_all(struct gp_store *s, sqlite3_stmt *st, size_t size, read_row_fn *read,
		   void **ret_rows, int *ret_n)
{
	char *rows = NULL;
	int n = 0, cap = 0, r;

	while ((r = step_row(s, st, "list")) == 1) {
		if (n == cap) {
			int grown = cap ? 2 * cap : 16;
			char *bigger = realloc(rows, (size_t)grown * size);

			if (!bigger) {
				free(rows);
				return fail(s, -ENOMEM, "list: out of memory");
			}
			rows = bigger;
			cap = grown;
		}
		read(st, rows + (size_t)n++ * size);
	}
	if (r < 0) {
		free(rows);
		return r;
	}
	*ret_rows = rows;
	*ret_n = n;
	return 0;
}

/* The one row `sql` selects with the text `key` as ?1. */
static int get_one_by(struct gp_store *s, const char *sql, const char *key, read_row_fn *read,
		      void *ret, const char *missing)
{
	auto_stmt *st = NULL;
	int r = prepare(s, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	return get_one(s, st, read, ret, missing);
}

/* Every row `sql` (without parameters) selects, as get_all. */
static int get_all_of(struct gp_store *s, const char *sql, size_t size, read_row_fn *read,
		      void **ret_rows, int *ret_n)
{
	auto_stmt *st = NULL;
	int r = prepare(s, sql, &st);

	return r < 0 ? r : get_all(s, st, size, read, ret_rows, ret_n);
}

/* Every row `sql` selects with the integer `key` as ?1, as get_all. */
static int get_all_by_int(struct gp_store *s, const char *sql, int64_t key, size_t size,
			  read_row_fn *read, void **ret_rows, int *ret_n)
{
	auto_stmt *st = NULL;
	int r = prepare(s, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, key);
	return get_all(s, st, size, read, ret_rows, ret_n);
}

/* The single integer a query such as a PRAGMA or COUNT(*) returns. */
static int query_int(struct gp_store *s, const char *sql, int64_t *ret)
{
	auto_stmt *st = NULL;
	int r = prepare(s, sql, &st);

	if (r < 0)
		return r;
	r = step_row(s, st, sql);
	if (r < 0)
		return r;
	*ret = r ? sqlite3_column_int64(st, 0) : 0;
	return 0;
}

/* Opens a transaction unless the caller holds one; *ret_own says which. */
static int begin_own(struct gp_store *s, bool *ret_own)
{
	*ret_own = sqlite3_get_autocommit(s->db) != 0;
	return *ret_own ? gp_store_begin(s) : 0;
}

/* Ends what begin_own began: commit after r == 0, else roll back. */
static int end_own(struct gp_store *s, bool own, int r)
{
	if (!own)
		return r;
	if (r < 0) {
		gp_store_rollback(s);
		return r;
	}
	return gp_store_commit(s);
}

/* ---- opening and migrations ---- */

static int exec(struct gp_store *s, const char *sql, const char *what)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return fail_sqlite(s, what);
	return 0;
}

static int set_journal_wal(struct gp_store *s, bool in_memory)
{
	const char *want = in_memory ? "memory" : "wal", *mode;
	auto_stmt *st = NULL;
	int r = prepare(s, "PRAGMA journal_mode=WAL", &st);

	if (r < 0)
		return r;
	r = step_row(s, st, "journal_mode");
	if (r < 0)
		return r;
	mode = (const char *)sqlite3_column_text(st, 0);
	if (r == 0 || !mode || strcmp(mode, want) != 0)
		return fail(s, -EIO, "journal_mode: could not switch to WAL");
	return 0;
}

static int configure(struct gp_store *s, bool in_memory)
{
	int r;

	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	r = exec(s, "PRAGMA foreign_keys=ON", "foreign_keys");
	if (r == 0)
		r = set_journal_wal(s, in_memory);
	if (r == 0)
		r = exec(s, "PRAGMA synchronous=FULL", "synchronous");
	return r;
}

static int check_version(struct gp_store *s, int64_t *ret)
{
	int r = query_int(s, "PRAGMA user_version", ret);

	if (r < 0)
		return r;
	if (*ret < 0)
		return fail(s, -EPROTO, "database schema version %lld is not gpupool's",
			    (long long)*ret);
	if (*ret > GP_STORE_SCHEMA_VERSION)
		return fail(s, -EPROTO,
			    "database schema version %lld is newer than this gpupool "
			    "knows (%d); refusing to open it",
			    (long long)*ret, GP_STORE_SCHEMA_VERSION);
	return 0;
}

/* Applies the migrations after the file's version, in the transaction
 * the caller holds (the version is read again there: another process
 * may have migrated the file meanwhile). */
static int apply_migrations(struct gp_store *s)
{
	char sql[64];
	int64_t version;
	int r = check_version(s, &version);

	for (int64_t v = version; r == 0 && v < GP_STORE_SCHEMA_VERSION; v++)
		r = exec(s, migrations[v], "migration");
	if (r < 0 || version == GP_STORE_SCHEMA_VERSION)
		return r;
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", GP_STORE_SCHEMA_VERSION);
	return exec(s, sql, "user_version");
}

static int migrate(struct gp_store *s)
{
	int r = exec(s, "BEGIN IMMEDIATE", "begin migration");

	if (r < 0)
		return r;
	r = apply_migrations(s);
	if (r == 0)
		r = exec(s, "COMMIT", "commit migration");
	if (r < 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

/* Forgets the prepared statements (before the file they were made for
 * is closed). */
static void statements_drop(struct gp_store *s)
{
	for (int i = 0; i < s->statements; i++)
		sqlite3_finalize(s->statement[i].st);
	s->statements = 0;
}

/* Syncs the directory that holds path, so that a rename in it lasts. */
static int dir_sync(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, r = 0;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? (slash == path ? "/" : path) : ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		r = -errno;
	if (fd >= 0)
		close(fd);
	return r;
}

static int file_sync(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0 || fsync(fd) < 0)
		r = -errno;
	if (fd >= 0)
		close(fd);
	return r;
}

/* Removes what a start that died while making PATH.new left. */
static void new_leftovers_remove(const char *tmp)
{
	char side[PATH_MAX + 16];

	unlink(tmp);
	snprintf(side, sizeof(side), "%s-wal", tmp);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", tmp);
	unlink(side);
}

/* A new database at path, made whole under PATH.new (mode 0600 from
 * its first byte: the tenants' token hashes are nobody else's business;
 * its schema; WAL mode), closed (its WAL folded in), synced, then
 * renamed: a start that dies meanwhile never leaves an empty or
 * half-made file at path, which the next one would refuse. */
static int create_new(struct gp_store *s, const char *path)
{
	char tmp[PATH_MAX + 8];
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
		return fail(s, -ENAMETOOLONG, "%s: the path is too long", path);
	new_leftovers_remove(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(s, -errno, "%s: cannot make it: %s", tmp, strerror(errno));
	close(fd);
	if (sqlite3_open_v2(tmp, &s->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		r = s->db ? fail_sqlite(s, tmp) : fail(s, -ENOMEM, "out of memory");
	else
		r = configure(s, false);
	if (r == 0)
		r = migrate(s);
	statements_drop(s);
	if (sqlite3_close(s->db) != SQLITE_OK && r == 0)
		r = fail_sqlite(s, "closing the new database");
	s->db = NULL;
	if (r == 0 && ((r = file_sync(tmp)) < 0 || rename(tmp, path) < 0 ||
		       (r = dir_sync(path)) < 0))
		r = fail(s, r ? r : -errno, "%s: cannot put the new database in place: %s",
			 path, strerror(r ? -r : errno));
	if (r < 0)
		new_leftovers_remove(tmp);
	return r;
}

/* Whether the file at path may be opened: -ENOENT when it is missing
 * (a new one is made), -ENODATA when it is empty, -EBADMSG when it is
 * not an SQLite database, another -errno when it cannot be read (the
 * message does not repeat the path: the caller names the file). A
 * database that exists is never made anew: an empty file at its path is
 * a truncated or replaced database, not a first start. */
static int file_check(struct gp_store *s, const char *path)
{
	static const char magic[16] = "SQLite format 3";
	char head[sizeof(magic)];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n = -1;
	int r = 0;

	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0 || fstat(fd, &st) < 0 ||
	    (S_ISREG(st.st_mode) && st.st_size > 0 && (n = read(fd, head, sizeof(head))) < 0))
		r = fail(s, -errno, "cannot read it: %s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		r = fail(s, -EINVAL, "not a regular file; give the database's file");
	else if (st.st_size == 0)
		r = fail(s, -ENODATA,
			 "the file is empty (0 bytes): it was truncated or replaced, so it is "
			 "refused rather than made anew (which would make a new admin and lose "
			 "every tenant and task)");
	else if (n != (ssize_t)sizeof(head) || memcmp(head, magic, sizeof(magic)) != 0)
		r = fail(s, -EBADMSG, "not an SQLite database (its first bytes are not "
				      "\"SQLite format 3\")");
	if (fd >= 0)
		close(fd);
	return r;
}

static int open_db(struct gp_store *s, const char *path)
{
	bool in_memory = strcmp(path, MEMORY_PATH) == 0;
	int64_t version;
	int r = in_memory ? 0 : file_check(s, path);

	if (r == -ENOENT) {
		r = create_new(s, path);
		s->created = r == 0;
	}
	if (r < 0)
		return r;
	if (sqlite3_open_v2(path, &s->db,
			    SQLITE_OPEN_READWRITE | (in_memory ? SQLITE_OPEN_CREATE : 0),
			    NULL) != SQLITE_OK)
		return s->db ? fail_sqlite(s, path) : fail(s, -ENOMEM, "out of memory");
	/* Refuse a newer file before any pragma could write to it. */
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	r = check_version(s, &version);
	if (r == 0)
		r = configure(s, in_memory);
	if (r == 0 && version < GP_STORE_SCHEMA_VERSION)
		r = migrate(s);
	return r;
}

int gp_store_open(const char *path, struct gp_store **ret)
{
	struct gp_store *s;
	int r;

	if (!path || !ret)
		return fail_open(-EINVAL, "gp_store_open: NULL argument");
	s = calloc(1, sizeof(*s));
	if (s)
		s->queued = -1;
	if (!s)
		return fail_open(-ENOMEM, "gp_store_open: out of memory");
	r = open_db(s, path);
	if (r < 0) {
		snprintf(open_error, sizeof(open_error), "%s", s->error);
		gp_store_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

/* A store that only reads the file at path. file_check looks at the
 * file first, but never for a file this process has open in SQLite
 * already: closing any descriptor of a file drops every POSIX lock the
 * process holds on it, and SQLite's locks are those (another process
 * would then take the server's connection for gone and delete its WAL). */
static int open_readonly(const char *path, bool check, struct gp_store **ret)
{
	struct gp_store *reader;
	int64_t version;
	int r = 0;

	if (!path || !ret)
		return fail_open(-EINVAL, "gp_store_open_readonly: NULL argument");
	reader = calloc(1, sizeof(*reader));
	if (!reader)
		return fail_open(-ENOMEM, "gp_store_open_readonly: out of memory");
	reader->queued = -1;
	if (check)
		r = file_check(reader, path);
	if (r == -ENOENT)
		r = fail(reader, r, "no such file");
	if (r == 0 && sqlite3_open_v2(path, &reader->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		r = reader->db ? fail_sqlite(reader, path) : fail(reader, -ENOMEM, "out of memory");
	if (r == 0) {
		sqlite3_extended_result_codes(reader->db, 1);
		sqlite3_busy_timeout(reader->db, BUSY_TIMEOUT_MS);
		r = check_version(reader, &version);
	}
	if (r < 0) {
		snprintf(open_error, sizeof(open_error), "%s", reader->error);
		gp_store_close(reader);
		return r;
	}
	*ret = reader;
	return 0;
}

int gp_store_open_readonly(const char *path, struct gp_store **ret)
{
	return open_readonly(path, true, ret);
}

int gp_store_open_reader(const struct gp_store *s, struct gp_store **ret)
{
	const char *path = s ? sqlite3_db_filename(s->db, "main") : NULL;

	if (!s || !ret)
		return -EINVAL;
	if (!path || !*path)
		return fail_open(-ENOTSUP, "gp_store_open_reader: an in-memory store has no file");
	return open_readonly(path, false, ret);
}

void gp_store_close(struct gp_store *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->statements; i++)
		sqlite3_finalize(s->statement[i].st);
	sqlite3_close_v2(s->db);
	free(s);
}

bool gp_store_is_new(const struct gp_store *s)
{
	return s && s->created;
}

bool gp_store_is_damaged(const struct gp_store *s)
{
	return s && s->damaged;
}

void gp_store_on_damage(struct gp_store *s, gp_store_damage_fn *fn, void *ctx)
{
	s->on_damage = fn;
	s->on_damage_ctx = ctx;
}

/* A statement run once (not kept among the prepared ones). */
static int prepare_once(struct gp_store *s, const char *sql, sqlite3_stmt **ret)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, ret, NULL) != SQLITE_OK)
		return fail_sqlite(s, sql);
	return 0;
}

/* The check's rows, its first (which is not "ok") included, in
 * s->error on one line, as many as fit. */
static int check_problems(struct gp_store *s, sqlite3_stmt *st, const char *name)
{
	size_t used = (size_t)snprintf(s->error, sizeof(s->error), "PRAGMA %s: %s", name,
				       (const char *)sqlite3_column_text(st, 0));

	while (used < sizeof(s->error) && sqlite3_step(st) == SQLITE_ROW)
		used += (size_t)snprintf(s->error + used, sizeof(s->error) - used, "; %s",
					 (const char *)sqlite3_column_text(st, 0));
	for (char *c = s->error; *c; c++)
		if (*c == '\n')
			*c = ' ';
	s->damaged = true;
	return -EBADMSG;
}

int gp_store_check(struct gp_store *s, bool full)
{
	const char *name = full ? "integrity_check" : "quick_check";
	const char *sql = full ? "PRAGMA integrity_check(20)" : "PRAGMA quick_check(20)";
	sqlite3_stmt *st = NULL;
	const char *first;
	int r;

	if (!s)
		return -EINVAL;
	r = prepare_once(s, sql, &st);
	if (r == 0 && (r = step_row(s, st, sql)) == 0)
		r = fail(s, -EIO, "%s: no answer", sql);
	if (r == 1) {
		first = (const char *)sqlite3_column_text(st, 0);
		r = first && !strcmp(first, "ok") ? 0 : check_problems(s, st, name);
	}
	sqlite3_finalize(st);
	return r;
}

int gp_store_backup_into(struct gp_store *s, const char *path)
{
	sqlite3_stmt *st = NULL;
	int r;

	if (!s || !path)
		return -EINVAL;
	r = prepare_once(s, "VACUUM INTO ?1", &st);
	if (r == 0) {
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		r = step_done(s, st, "VACUUM INTO");
	}
	sqlite3_finalize(st);
	return r;
}

const char *gp_store_error(const struct gp_store *s)
{
	return s ? s->error : open_error;
}

int gp_store_schema_version(struct gp_store *s)
{
	int64_t version;
	int r;

	if (!s)
		return -EINVAL;
	r = query_int(s, "PRAGMA user_version", &version);
	return r < 0 ? r : (int)version;
}

/* ---- tenants ---- */

#define TENANT_COLUMNS                                                                   \
	"id, name, admin, mem_guaranteed_mib, mem_borrowable_mib, "                      \
	"compute_guaranteed_pct, compute_borrowable_pct, created, unix_user, removed, "    \
	"priority_max"

static void read_tenant(sqlite3_stmt *st, void *ret)
{
	struct gp_tenant *t = ret;

	memset(t, 0, sizeof(*t));
	t->id = sqlite3_column_int64(st, 0);
	copy_text(st, 1, t->name, sizeof(t->name));
	t->admin = sqlite3_column_int(st, 2) != 0;
	t->mem_guaranteed_mib = (uint64_t)sqlite3_column_int64(st, 3);
	t->mem_borrowable_mib = (uint64_t)sqlite3_column_int64(st, 4);
	t->compute_guaranteed_pct = (unsigned)sqlite3_column_int64(st, 5);
	t->compute_borrowable_pct = (unsigned)sqlite3_column_int64(st, 6);
	t->created = sqlite3_column_int64(st, 7);
	copy_text(st, 8, t->user, sizeof(t->user));
	t->removed = sqlite3_column_int64(st, 9);
	t->priority_max = (unsigned)sqlite3_column_int64(st, 10);
}

/* The quota and the priority bound: what the admin grants a tenant. */
static void bind_quota(sqlite3_stmt *st, int first, const struct gp_tenant *t)
{
	sqlite3_bind_int64(st, first, (int64_t)t->mem_guaranteed_mib);
	sqlite3_bind_int64(st, first + 1, (int64_t)t->mem_borrowable_mib);
	sqlite3_bind_int64(st, first + 2, t->compute_guaranteed_pct);
	sqlite3_bind_int64(st, first + 3, t->compute_borrowable_pct);
	sqlite3_bind_int64(st, first + 4, t->priority_max);
}

int gp_store_tenant_add(struct gp_store *s, struct gp_tenant *t, char *token_out)
{
	char token[GP_TOKEN_HEX + 1], hash[GP_TOKEN_HEX + 1];
	int64_t created = gp_unix_ms() / 1000;
	auto_stmt *st = NULL;
	int r;

	if (!s || !t || !token_out)
		return -EINVAL;
	if (!fits(t->name, sizeof(t->name)) || is_blank(t->name))
		return fail(s, -EINVAL, "tenant_add: the name is empty or too long");
	if (!fits(t->user, sizeof(t->user)))
		return fail(s, -EINVAL, "tenant_add: the user is too long");
	if (t->priority_max > 9)
		return fail(s, -EINVAL, "tenant_add: priority_max %u is over 9", t->priority_max);
	r = token_new(token);
	if (r < 0)
		return fail(s, r, "tenant_add: getrandom: %s", strerror(-r));
	token_hash(token, hash);
	r = prepare(s,
		    "INSERT INTO tenants (name, token_sha256, admin, mem_guaranteed_mib, "
		    "mem_borrowable_mib, compute_guaranteed_pct, compute_borrowable_pct, "
		    "priority_max, created, unix_user) "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, hash, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, t->admin);
	bind_quota(st, 4, t);
	sqlite3_bind_int64(st, 9, created);
	sqlite3_bind_text(st, 10, t->user, -1, SQLITE_STATIC);
	r = step_done(s, st, "tenant_add");
	if (r == -EEXIST)
		return fail(s, r, "tenant_add: a tenant named '%s' exists", t->name);
	if (r < 0)
		return r;
	t->id = sqlite3_last_insert_rowid(s->db);
	t->created = created;
	memcpy(token_out, token, sizeof(token));
	return 0;
}

int gp_store_tenant_by_token(struct gp_store *s, const char *token, struct gp_tenant *ret)
{
	char hash[GP_TOKEN_HEX + 1];
	auto_stmt *st = NULL;
	int r;

	if (!s || !token || !ret)
		return -EINVAL;
	token_hash(token, hash);
	r = prepare(s,
		    "SELECT " TENANT_COLUMNS
		    " FROM tenants WHERE token_sha256 = ?1 AND removed = 0",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	return get_one(s, st, read_tenant, ret, "no tenant has this token");
}

int gp_store_tenant_by_name(struct gp_store *s, const char *name, struct gp_tenant *ret)
{
	if (!s || !name || !ret)
		return -EINVAL;
	return get_one_by(s, "SELECT " TENANT_COLUMNS " FROM tenants WHERE name = ?1", name,
			  read_tenant, ret, "no such tenant");
}

int gp_store_tenant_list(struct gp_store *s, struct gp_tenant **ret, int *ret_n)
{
	void *rows;
	int r;

	if (!s || !ret || !ret_n)
		return -EINVAL;
	r = get_all_of(s, "SELECT " TENANT_COLUMNS " FROM tenants ORDER BY id",
		       sizeof(**ret), read_tenant, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

int gp_store_tenant_set_quota(struct gp_store *s, const struct gp_tenant *t)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !t)
		return -EINVAL;
	if (t->priority_max > 9)
		return fail(s, -EINVAL, "tenant_set_quota: priority_max %u is over 9",
			    t->priority_max);
	r = prepare(s,
		    "UPDATE tenants SET mem_guaranteed_mib = ?1, mem_borrowable_mib = ?2, "
		    "compute_guaranteed_pct = ?3, compute_borrowable_pct = ?4, "
		    "priority_max = ?5 WHERE id = ?6",
		    &st);
	if (r < 0)
		return r;
	bind_quota(st, 1, t);
	sqlite3_bind_int64(st, 6, t->id);
	r = step_done(s, st, "tenant_set_quota");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no tenant %lld", (long long)t->id);
	return r;
}

int gp_store_tenant_set_user(struct gp_store *s, const struct gp_tenant *t)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !t)
		return -EINVAL;
	if (!fits(t->user, sizeof(t->user)))
		return fail(s, -EINVAL, "tenant_set_user: the user is too long");
	r = prepare(s, "UPDATE tenants SET unix_user = ?1 WHERE id = ?2", &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, t->user, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, t->id);
	r = step_done(s, st, "tenant_set_user");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no tenant %lld", (long long)t->id);
	return r;
}

int gp_store_tenant_token_new(struct gp_store *s, int64_t id, char *token_out)
{
	char token[GP_TOKEN_HEX + 1], hash[GP_TOKEN_HEX + 1];
	auto_stmt *st = NULL;
	int r;

	if (!s || !token_out)
		return -EINVAL;
	r = token_new(token);
	if (r < 0)
		return fail(s, r, "tenant_token_new: getrandom: %s", strerror(-r));
	token_hash(token, hash);
	r = prepare(s,
		    "UPDATE tenants SET token_sha256 = ?1 WHERE id = ?2 AND removed = 0",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, id);
	r = step_done(s, st, "tenant_token_new");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no tenant %lld", (long long)id);
	if (r == 0)
		memcpy(token_out, token, sizeof(token));
	return r;
}

int gp_store_tenant_task_counts(struct gp_store *s, int64_t tenant, int *ret_queued,
				int *ret_running, int *ret_all)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !ret_queued || !ret_running || !ret_all)
		return -EINVAL;
	r = prepare(
		s,
		"SELECT COALESCE(SUM(state IN (?2, ?3)), 0), "
		"COALESCE(SUM(state = ?4), 0), COUNT(*) FROM tasks WHERE tenant = ?1",
		&st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, tenant);
	sqlite3_bind_int(st, 2, GP_TASK_PENDING);
	sqlite3_bind_int(st, 3, GP_TASK_PREEMPTED);
	sqlite3_bind_int(st, 4, GP_TASK_RUNNING);
	r = step_row(s, st, "tenant_task_counts");
	if (r < 0)
		return r;
	*ret_queued = sqlite3_column_int(st, 0);
	*ret_running = sqlite3_column_int(st, 1);
	*ret_all = sqlite3_column_int(st, 2);
	return 0;
}

int gp_store_tenant_remove(struct gp_store *s, int64_t id)
{
	auto_stmt *mark = NULL, *quotas = NULL;
	bool own = false;
	int r;

	if (!s)
		return -EINVAL;
	/* Its token: a text no SHA-256 in hex can be, unique as the column
	 * wants. */
	r = prepare(s,
		    "UPDATE tenants SET removed = ?2, token_sha256 = 'removed:' || id "
		    "WHERE id = ?1 AND removed = 0",
		    &mark);
	if (r == 0)
		r = prepare(s, "DELETE FROM tenant_model_quotas WHERE tenant = ?1",
			    &quotas);
	if (r == 0)
		r = begin_own(s, &own);
	if (r < 0)
		return r;
	sqlite3_bind_int64(mark, 1, id);
	sqlite3_bind_int64(mark, 2, gp_unix_ms() / 1000);
	r = step_done(s, mark, "tenant_remove");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		r = fail(s, -ENOENT, "no tenant %lld", (long long)id);
	sqlite3_bind_int64(quotas, 1, id);
	if (r == 0)
		r = step_done(s, quotas, "tenant_remove: model quotas");
	return end_own(s, own, r);
}

/* ---- model quotas ---- */

#define MODEL_QUOTA_COLUMNS                                                              \
	"tenant, model, mem_guaranteed_mib, mem_borrowable_mib, "                        \
	"compute_guaranteed_pct, compute_borrowable_pct"

static void read_model_quota(sqlite3_stmt *st, void *ret)
{
	struct gp_model_quota *q = ret;

	memset(q, 0, sizeof(*q));
	q->tenant = sqlite3_column_int64(st, 0);
	copy_text(st, 1, q->model, sizeof(q->model));
	q->mem_guaranteed_mib = (uint64_t)sqlite3_column_int64(st, 2);
	q->mem_borrowable_mib = (uint64_t)sqlite3_column_int64(st, 3);
	q->compute_guaranteed_pct = (unsigned)sqlite3_column_int64(st, 4);
	q->compute_borrowable_pct = (unsigned)sqlite3_column_int64(st, 5);
}

int gp_store_model_quota_set(struct gp_store *s, const struct gp_model_quota *q)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !q)
		return -EINVAL;
	if (!fits(q->model, sizeof(q->model)) || is_blank(q->model))
		return fail(s, -EINVAL, "model_quota_set: the model is empty or too long");
	r = prepare(s,
		    "INSERT INTO tenant_model_quotas (" MODEL_QUOTA_COLUMNS ") "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
		    "ON CONFLICT (tenant, model) DO UPDATE SET model = excluded.model, "
		    "mem_guaranteed_mib = excluded.mem_guaranteed_mib, "
		    "mem_borrowable_mib = excluded.mem_borrowable_mib, "
		    "compute_guaranteed_pct = excluded.compute_guaranteed_pct, "
		    "compute_borrowable_pct = excluded.compute_borrowable_pct",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, q->tenant);
	sqlite3_bind_text(st, 2, q->model, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (int64_t)q->mem_guaranteed_mib);
	sqlite3_bind_int64(st, 4, (int64_t)q->mem_borrowable_mib);
	sqlite3_bind_int64(st, 5, q->compute_guaranteed_pct);
	sqlite3_bind_int64(st, 6, q->compute_borrowable_pct);
	r = step_done(s, st, "model_quota_set");
	if (r == -ENOENT)
		return fail(s, r, "model_quota_set: no tenant %lld", (long long)q->tenant);
	return r;
}

int gp_store_model_quota_remove(struct gp_store *s, int64_t tenant, const char *model)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !model)
		return -EINVAL;
	r = prepare(s, "DELETE FROM tenant_model_quotas WHERE tenant = ?1 AND model = ?2",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, tenant);
	sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
	r = step_done(s, st, "model_quota_remove");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no quota for model \"%s\"", model);
	return r;
}

int gp_store_model_quota_list(struct gp_store *s, int64_t tenant,
			      struct gp_model_quota **ret, int *ret_n)
{
	void *rows;
	int r;

	if (!s || !ret || !ret_n)
		return -EINVAL;
	r = get_all_by_int(s,
			   "SELECT " MODEL_QUOTA_COLUMNS " FROM tenant_model_quotas "
			   "WHERE ?1 < 0 OR tenant = ?1 ORDER BY tenant, model",
			   tenant, sizeof(**ret), read_model_quota, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

int gp_store_model_quota_find(const struct gp_model_quota *all, int n, int64_t tenant,
			      const char *device_name)
{
	size_t best_rank = 0;
	int best = -1;

	for (int i = 0; i < n; i++) {   /* the tenant's, by the core's rule */
		size_t rank = all[i].tenant == tenant
				      ? gp_model_rank(device_name, NULL, all[i].model)
				      : 0;

		if (rank > best_rank) {
			best_rank = rank;
			best = i;
		}
	}
	return best;
}

/* ---- templates ---- */

#define TEMPLATE_COLUMNS "id, name, models, mem_mib, compute_pct, hard, runtime, time_limit_s"

static void read_template(sqlite3_stmt *st, void *ret)
{
	struct gp_template *t = ret;

	memset(t, 0, sizeof(*t));
	t->id = sqlite3_column_int64(st, 0);
	copy_text(st, 1, t->name, sizeof(t->name));
	copy_text(st, 2, t->models, sizeof(t->models));
	t->mem_mib = (uint64_t)sqlite3_column_int64(st, 3);
	t->compute_pct = (unsigned)sqlite3_column_int64(st, 4);
	t->hard = sqlite3_column_int(st, 5) != 0;
	copy_text(st, 6, t->runtime, sizeof(t->runtime));
	t->time_limit_s = (uint64_t)sqlite3_column_int64(st, 7);
}

static bool template_is_valid(const struct gp_template *t)
{
	return fits(t->name, sizeof(t->name)) && !is_blank(t->name) &&
	       fits(t->models, sizeof(t->models)) && fits(t->runtime, sizeof(t->runtime)) &&
	       t->compute_pct <= PCT_MAX;
}

int gp_store_template_add(struct gp_store *s, struct gp_template *t)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !t)
		return -EINVAL;
	if (!template_is_valid(t))
		return fail(s, -EINVAL, "template_add: invalid template");
	r = prepare(s,
		    "INSERT INTO templates (name, models, mem_mib, compute_pct, hard, runtime, "
		    "time_limit_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, t->models, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (int64_t)t->mem_mib);
	sqlite3_bind_int64(st, 4, t->compute_pct);
	sqlite3_bind_int(st, 5, t->hard);
	sqlite3_bind_text(st, 6, t->runtime, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, (int64_t)t->time_limit_s);
	r = step_done(s, st, "template_add");
	if (r == -EEXIST)
		return fail(s, r, "template_add: a template named '%s' exists", t->name);
	if (r == 0)
		t->id = sqlite3_last_insert_rowid(s->db);
	return r;
}

int gp_store_template_by_name(struct gp_store *s, const char *name,
			      struct gp_template *ret)
{
	if (!s || !name || !ret)
		return -EINVAL;
	return get_one_by(s, "SELECT " TEMPLATE_COLUMNS " FROM templates WHERE name = ?1", name,
			  read_template, ret, "no such template");
}

int gp_store_template_list(struct gp_store *s, struct gp_template **ret, int *ret_n)
{
	void *rows;
	int r;

	if (!s || !ret || !ret_n)
		return -EINVAL;
	r = get_all_of(s, "SELECT " TEMPLATE_COLUMNS " FROM templates ORDER BY id",
		       sizeof(**ret), read_template, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

int gp_store_template_remove(struct gp_store *s, int64_t id)
{
	auto_stmt *st = NULL;
	int r;

	if (!s)
		return -EINVAL;
	r = prepare(s, "DELETE FROM templates WHERE id = ?1", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	r = step_done(s, st, "template_remove");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no template %lld", (long long)id);
	return r;
}

/* ---- tasks ---- */

/* The columns in the order read_task reads and bind_task binds them. */
#define TASK_COLUMNS                                                                     \
	"id, tenant, name, command, mem_mib, compute_pct, devices, whole, exclusive, "   \
	"hard, "                                                                         \
	"priority, kind, model, state, reason, placement, pid, exit_code, created, "     \
	"started, ended, workdir, template, memory_restart, service, pod_uid, runtime, "  \
	"time_limit_s, timed_out, after, array_id, array_index, mem_pct, mixed_models"

static void read_task(sqlite3_stmt *st, void *ret)
{
	struct gp_task *t = ret;

	memset(t, 0, sizeof(*t));
	t->id = sqlite3_column_int64(st, 0);
	t->tenant = sqlite3_column_int64(st, 1);
	copy_text(st, 2, t->name, sizeof(t->name));
	copy_text(st, 3, t->command, sizeof(t->command));
	t->mem_mib = (uint64_t)sqlite3_column_int64(st, 4);
	t->compute_pct = (unsigned)sqlite3_column_int64(st, 5);
	t->devices = (unsigned)sqlite3_column_int64(st, 6);
	t->whole = sqlite3_column_int(st, 7) != 0;
	t->exclusive = sqlite3_column_int(st, 8) != 0;
	t->hard = sqlite3_column_int(st, 9) != 0;
	t->priority = (unsigned)sqlite3_column_int64(st, 10);
	copy_text(st, 11, t->kind, sizeof(t->kind));
	copy_text(st, 12, t->model, sizeof(t->model));
	t->state = (enum gp_task_state)sqlite3_column_int(st, 13);
	copy_text(st, 14, t->reason, sizeof(t->reason));
	copy_text(st, 15, t->placement, sizeof(t->placement));
	t->pid = sqlite3_column_int64(st, 16);
	t->exit_code = sqlite3_column_int(st, 17);
	t->created = sqlite3_column_int64(st, 18);
	t->started = sqlite3_column_int64(st, 19);
	t->ended = sqlite3_column_int64(st, 20);
	copy_text(st, 21, t->workdir, sizeof(t->workdir));
	copy_text(st, 22, t->template_name, sizeof(t->template_name));
	t->restart_on_growth = sqlite3_column_int(st, 23) != 0;
	t->service = sqlite3_column_int64(st, 24);
	copy_text(st, 25, t->pod_uid, sizeof(t->pod_uid));
	copy_text(st, 26, t->runtime, sizeof(t->runtime));
	t->time_limit_s = (uint64_t)sqlite3_column_int64(st, 27);
	t->timed_out = sqlite3_column_int(st, 28) != 0;
	copy_text(st, 29, t->after, sizeof(t->after));
	t->array_id = sqlite3_column_int64(st, 30);
	t->array_index = (unsigned)sqlite3_column_int64(st, 31);
	t->mem_pct = (unsigned)sqlite3_column_int64(st, 32);
	t->mixed_models = sqlite3_column_int(st, 33) != 0;
}

/* Binds every column but id, as parameters 2..34 in TASK_COLUMNS order. */
static void bind_task(sqlite3_stmt *st, const struct gp_task *t)
{
	sqlite3_bind_int64(st, 2, t->tenant);
	sqlite3_bind_text(st, 3, t->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, t->command, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (int64_t)t->mem_mib);
	sqlite3_bind_int64(st, 6, t->compute_pct);
	sqlite3_bind_int64(st, 7, t->devices);
	sqlite3_bind_int(st, 8, t->whole);
	sqlite3_bind_int(st, 9, t->exclusive);
	sqlite3_bind_int(st, 10, t->hard);
	sqlite3_bind_int64(st, 11, t->priority);
	sqlite3_bind_text(st, 12, t->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 13, t->model, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 14, (int)t->state);
	sqlite3_bind_text(st, 15, t->reason, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 16, t->placement, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 17, t->pid);
	sqlite3_bind_int(st, 18, t->exit_code);
	sqlite3_bind_int64(st, 19, t->created);
	sqlite3_bind_int64(st, 20, t->started);
	sqlite3_bind_int64(st, 21, t->ended);
	sqlite3_bind_text(st, 22, t->workdir, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 23, t->template_name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 24, t->restart_on_growth);
	sqlite3_bind_int64(st, 25, t->service);
	sqlite3_bind_text(st, 26, t->pod_uid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 27, t->runtime, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 28, (int64_t)t->time_limit_s);
	sqlite3_bind_int(st, 29, t->timed_out);
	sqlite3_bind_text(st, 30, t->after, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 31, t->array_id);
	sqlite3_bind_int64(st, 32, t->array_index);
	sqlite3_bind_int64(st, 33, t->mem_pct);
	sqlite3_bind_int(st, 34, t->mixed_models);
}

static bool state_is_valid(int state)
{
	return state >= GP_TASK_PENDING && state <= GP_TASK_LOST;
}

static bool task_strings_fit(const struct gp_task *t)
{
	return fits(t->name, sizeof(t->name)) && fits(t->command, sizeof(t->command)) &&
	       fits(t->workdir, sizeof(t->workdir)) &&
	       fits(t->template_name, sizeof(t->template_name)) &&
	       fits(t->kind, sizeof(t->kind)) && fits(t->model, sizeof(t->model)) &&
	       fits(t->reason, sizeof(t->reason)) &&
	       fits(t->placement, sizeof(t->placement)) && fits(t->pod_uid, sizeof(t->pod_uid)) &&
	       fits(t->runtime, sizeof(t->runtime)) && fits(t->after, sizeof(t->after));
}

static bool task_is_valid(const struct gp_task *t)
{
	return task_strings_fit(t) && t->priority <= PRIORITY_MAX &&
	       t->compute_pct <= PCT_MAX && t->mem_pct <= PCT_MAX &&
	       state_is_valid((int)t->state);
}

int gp_store_task_add(struct gp_store *s, struct gp_task *t)
{
	struct gp_task row;
	auto_stmt *st = NULL;
	int r;

	if (!s || !t)
		return -EINVAL;
	row = *t;
	row.state = GP_TASK_PENDING;
	row.created = gp_unix_ms();
	if (!task_is_valid(&row))
		return fail(s, -EINVAL, "task_add: invalid task");
	r = prepare(s,
		    "INSERT INTO tasks (" TASK_COLUMNS
		    ") VALUES (NULL, ?2, ?3, ?4, ?5, ?6, ?7, "
		    "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, "
		    "?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34)",
		    &st);
	if (r < 0)
		return r;
	bind_task(st, &row);
	r = step_done(s, st, "task_add");
	if (r == -ENOENT)
		return fail(s, r, "task_add: no tenant %lld", (long long)t->tenant);
	if (r < 0)
		return r;
	row.id = sqlite3_last_insert_rowid(s->db);
	*t = row;
	if (s->queued >= 0)
		s->queued++;    /* a new task is pending */
	return 0;
}

int gp_store_task_get(struct gp_store *s, int64_t id, struct gp_task *ret)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !ret)
		return -EINVAL;
	r = prepare(s, "SELECT " TASK_COLUMNS " FROM tasks WHERE id = ?1", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	return get_one(s, st, read_task, ret, "no such task");
}

/* One constant query per filter, so that each can use its index. */
static const char *task_list_sql(bool by_tenant, bool by_state)
{
	static const char *const sql[2][2] = {
		{"SELECT " TASK_COLUMNS " FROM tasks ORDER BY id",
		 "SELECT " TASK_COLUMNS " FROM tasks WHERE state = ?2 ORDER BY id"},
		{"SELECT " TASK_COLUMNS " FROM tasks WHERE tenant = ?1 ORDER BY id",
		 "SELECT " TASK_COLUMNS " FROM tasks WHERE tenant = ?1 AND state = ?2 "
		 "ORDER BY id"},
	};

	return sql[by_tenant][by_state];
}

int gp_store_task_list(struct gp_store *s, int64_t tenant, int state,
		       struct gp_task **ret, int *ret_n)
{
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n || (state >= 0 && !state_is_valid(state)))
		return -EINVAL;
	r = prepare(s, task_list_sql(tenant >= 0, state >= 0), &st);
	if (r < 0)
		return r;
	if (tenant >= 0)
		sqlite3_bind_int64(st, 1, tenant);
	if (state >= 0)
		sqlite3_bind_int(st, 2, state);
	r = get_all(s, st, sizeof(**ret), read_task, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

/* A page's query, one constant text per filter so that each can use its
 * index: ?1 after, ?2 limit, ?3..?9 the states (-1 for none), ?10 the
 * tenant. */
#define PAGE_STATES "state IN (?3, ?4, ?5, ?6, ?7, ?8, ?9)"
static const char *task_page_sql(bool by_tenant, bool by_state)
{
	static const char *const sql[2][2] = {
		{"SELECT " TASK_COLUMNS " FROM tasks WHERE id > ?1 ORDER BY id LIMIT ?2",
		 "SELECT " TASK_COLUMNS " FROM tasks WHERE " PAGE_STATES
		 " AND id > ?1 ORDER BY id LIMIT ?2"},
		{"SELECT " TASK_COLUMNS " FROM tasks WHERE tenant = ?10 AND id > ?1 "
		 "ORDER BY id LIMIT ?2",
		 "SELECT " TASK_COLUMNS " FROM tasks WHERE tenant = ?10 AND " PAGE_STATES
		 " AND id > ?1 ORDER BY id LIMIT ?2"},
	};

	return sql[by_tenant][by_state];
}

int gp_store_task_page(struct gp_store *s, int64_t tenant, unsigned states, int64_t after,
		       int limit, struct gp_task **ret, int *ret_n)
{
	unsigned all = GP_TASK_STATE_BIT(GP_TASK_LOST + 1) - 1;
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n || (states & ~all) || limit < 1 ||
	    limit > GP_STORE_PAGE_MAX)
		return -EINVAL;
	r = prepare(s, task_page_sql(tenant >= 0, states != 0), &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, after);
	sqlite3_bind_int(st, 2, limit);
	for (int i = GP_TASK_PENDING; states && i <= GP_TASK_LOST; i++)
		sqlite3_bind_int(st, 3 + i, states & GP_TASK_STATE_BIT(i) ? i : -1);
	if (tenant >= 0)
		sqlite3_bind_int64(st, 10, tenant);
	r = get_all(s, st, sizeof(**ret), read_task, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

int gp_store_task_count(struct gp_store *s, int state)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || (state >= 0 && !state_is_valid(state)))
		return -EINVAL;
	r = prepare(s,
		    state < 0 ? "SELECT COUNT(*) FROM tasks"
			      : "SELECT COUNT(*) FROM tasks WHERE state = ?1",
		    &st);
	if (r < 0)
		return r;
	if (state >= 0)
		sqlite3_bind_int(st, 1, state);
	r = step_row(s, st, "task_count");
	if (r < 0)
		return r;
	return sqlite3_column_int(st, 0);
}

/* Newest first by id (which follows created), stopping at the first row
 * older than since_ms: no scan of the tasks of days past. */
int gp_store_task_shapes(struct gp_store *s, int64_t since_ms, int limit,
			 struct gp_task_shape **ret, int *ret_n)
{
	auto_stmt *st = NULL;
	struct gp_task_shape *all = NULL;
	int n = 0, cap = 0, r;

	if (!s || !ret || !ret_n || limit < 1)
		return -EINVAL;
	r = prepare(s,
		    "SELECT mem_mib, compute_pct, devices, whole, exclusive, model, created "
		    "FROM tasks ORDER BY id DESC",
		    &st);
	while (r == 0 && n < limit && (r = step_row(s, st, "task_shapes")) == 1) {
		struct gp_task_shape *sh;

		r = 0;
		if (sqlite3_column_int64(st, 6) < since_ms)
			break;
		if (n == cap) {
			int grown = cap ? 2 * cap : 64;
			struct gp_task_shape *bigger = realloc(all, (size_t)grown * sizeof(*all));

			if (!bigger) {
				r = fail(s, -ENOMEM, "task_shapes: out of memory");
				break;
			}
			all = bigger;
			cap = grown;
		}
		sh = &all[n++];
		*sh = (struct gp_task_shape){
			.mem_mib = (uint64_t)sqlite3_column_int64(st, 0),
			.compute_pct = (unsigned)sqlite3_column_int64(st, 1),
			.devices = (unsigned)sqlite3_column_int64(st, 2),
			.whole = sqlite3_column_int(st, 3) || sqlite3_column_int(st, 4),
		};
		copy_text(st, 5, sh->model, sizeof(sh->model));
	}
	if (r < 0) {
		free(all);
		return r;
	}
	*ret = n ? all : NULL;
	if (!n)
		free(all);
	*ret_n = n;
	return 0;
}

int gp_store_queue_stats(struct gp_store *s, int *ret_n, int64_t *ret_oldest)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !ret_n || !ret_oldest)
		return -EINVAL;
	r = prepare(s,
		    "SELECT COUNT(*), COALESCE(MIN(created), 0) FROM tasks "
		    "WHERE state IN (?1, ?2)",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int(st, 1, GP_TASK_PENDING);
	sqlite3_bind_int(st, 2, GP_TASK_PREEMPTED);
	r = step_row(s, st, "queue_stats");
	if (r < 0)
		return r;
	*ret_n = sqlite3_column_int(st, 0);
	*ret_oldest = sqlite3_column_int64(st, 1);
	return 0;
}

int gp_store_task_update(struct gp_store *s, const struct gp_task *t)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !t)
		return -EINVAL;
	if (!task_is_valid(t))
		return fail(s, -EINVAL, "task_update: invalid task");
	r = prepare(
		s,
		"UPDATE tasks SET state = ?14, reason = ?15, placement = ?16, pid = ?17, "
		"exit_code = ?18, started = ?20, ended = ?21, compute_pct = ?6, "
		"priority = ?11, timed_out = ?29, "
		"mem_mib = CASE WHEN mem_pct > 0 THEN ?5 ELSE mem_mib END WHERE id = ?1",
		&st);
	if (r < 0)
		return r;
	bind_task(st, t);
	sqlite3_bind_int64(st, 1, t->id);
	r = step_done(s, st, "task_update");
	s->queued = -1;         /* the state may have changed: count again */
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no task %lld", (long long)t->id);
	return r;
}

int gp_store_task_array_set(struct gp_store *s, int64_t id, int64_t array_id)
{
	auto_stmt *st = NULL;
	int r;

	if (!s)
		return -EINVAL;
	r = prepare(s, "UPDATE tasks SET array_id = ?2 WHERE id = ?1", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, array_id);
	r = step_done(s, st, "task_array_set");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no task %lld", (long long)id);
	return r;
}

int gp_store_task_reason(struct gp_store *s, int64_t id, const char *reason)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !reason)
		return -EINVAL;
	if (!fits(reason, GP_REASON_MAX))
		return fail(s, -EINVAL, "task_reason: a reason of over %d bytes", GP_REASON_MAX - 1);
	r = prepare(s, "UPDATE tasks SET reason = ?2 WHERE id = ?1", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, reason, -1, SQLITE_STATIC);
	r = step_done(s, st, "task_reason");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no task %lld", (long long)id);
	return r;
}

/* ---- a task's log removed ---- */

int gp_store_log_removed(struct gp_store *s, const struct gp_log_removal *rm)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !rm || !fits(rm->why, GP_REASON_MAX))
		return -EINVAL;
	r = prepare(s,
		    "INSERT OR REPLACE INTO task_logs_removed (task, removed, bytes, why) "
		    "SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM tasks WHERE id = ?1)",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, rm->task);
	sqlite3_bind_int64(st, 2, rm->removed);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)rm->bytes);
	sqlite3_bind_text(st, 4, rm->why, -1, SQLITE_STATIC);
	r = step_done(s, st, "log_removed");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no task %lld", (long long)rm->task);
	return r;
}

int gp_store_log_removal_get(struct gp_store *s, int64_t task, struct gp_log_removal *ret)
{
	auto_stmt *st = NULL;
	const char *why;
	int r;

	if (!s || !ret)
		return -EINVAL;
	r = prepare(s, "SELECT removed, bytes, why FROM task_logs_removed WHERE task = ?1", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, task);
	r = step_row(s, st, "log_removal_get");
	if (r < 0)
		return r;
	if (r == 0)
		return -ENOENT;
	why = (const char *)sqlite3_column_text(st, 2);
	*ret = (struct gp_log_removal){ .task = task, .removed = sqlite3_column_int64(st, 0),
					.bytes = (uint64_t)sqlite3_column_int64(st, 1) };
	snprintf(ret->why, sizeof(ret->why), "%s", why ? why : "");
	return 0;
}

/* ---- a task's declared environment ---- */

/* Is json the text of a JSON object? SQLite's JSON functions say. */
static int is_json_object(struct gp_store *s, const char *json, bool *ret)
{
	auto_stmt *st = NULL;
	int r = prepare(s,
			"SELECT CASE WHEN json_valid(?1) THEN json_type(?1) = 'object' "
			"ELSE 0 END",
			&st);

	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
	r = step_row(s, st, "task_env_set");
	if (r < 0)
		return r;
	*ret = r && sqlite3_column_int(st, 0) == 1;
	return 0;
}

int gp_store_task_env_set(struct gp_store *s, int64_t id, const char *json)
{
	auto_stmt *st = NULL;
	bool object = false;
	int r;

	if (!s || !json)
		return -EINVAL;
	r = is_json_object(s, json, &object);
	if (r < 0)
		return r;
	if (!object)
		return fail(s, -EINVAL, "task_env_set: not the text of a JSON object");
	r = prepare(s, "UPDATE tasks SET env = ?2 WHERE id = ?1", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, json, -1, SQLITE_STATIC);
	r = step_done(s, st, "task_env_set");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no task %lld", (long long)id);
	return r;
}

int gp_store_task_env_get(struct gp_store *s, int64_t id, char **ret_json)
{
	auto_stmt *st = NULL;
	const char *text;
	char *copy;
	int r;

	if (!s || !ret_json)
		return -EINVAL;
	r = prepare(s, "SELECT env FROM tasks WHERE id = ?1", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	r = step_row(s, st, "task_env_get");
	if (r < 0)
		return r;
	if (r == 0)
		return fail(s, -ENOENT, "no task %lld", (long long)id);
	text = (const char *)sqlite3_column_text(st, 0);
	copy = strdup(text && *text ? text : "{}");
	if (!copy)
		return fail(s, -ENOMEM, "task_env_get: out of memory");
	*ret_json = copy;
	return 0;
}

/* ---- audit ---- */

static bool audit_is_valid(const char *who, const char *action, const char *object)
{
	return who && action && !is_blank(who) && !is_blank(action) &&
	       strlen(who) < GP_STORE_NAME_MAX && strlen(action) < GP_AUDIT_ACTION_MAX &&
	       (!object || strlen(object) < GP_AUDIT_OBJECT_MAX);
}

int gp_store_audit(struct gp_store *s, const char *who, const char *action,
		   const char *object, const char *detail)
{
	auto_stmt *st = NULL;
	int r;

	if (!s)
		return -EINVAL;
	if (!audit_is_valid(who, action, object))
		return fail(s, -EINVAL, "audit: invalid who, action or object");
	r = prepare(s,
		    "INSERT INTO audit (ts, who, action, object, detail) "
		    "VALUES (?1, ?2, ?3, ?4, ?5)",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, gp_unix_ms());
	sqlite3_bind_text(st, 2, who, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, action, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, object ? object : "", -1, SQLITE_STATIC);
	detail = detail ? detail : "";
	sqlite3_bind_text(st, 5, detail, utf8_cut(detail, GP_REASON_MAX - 1),
			  SQLITE_STATIC);
	return step_done(s, st, "audit");
}

static void read_audit(sqlite3_stmt *st, void *ret)
{
	struct gp_audit_entry *e = ret;

	memset(e, 0, sizeof(*e));
	e->id = sqlite3_column_int64(st, 0);
	e->ts = sqlite3_column_int64(st, 1);
	copy_text(st, 2, e->who, sizeof(e->who));
	copy_text(st, 3, e->action, sizeof(e->action));
	copy_text(st, 4, e->object, sizeof(e->object));
	copy_text(st, 5, e->detail, sizeof(e->detail));
}

int gp_store_audit_page(struct gp_store *s, int64_t after, int limit,
			struct gp_audit_entry **ret, int *ret_n)
{
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n || limit < 1 || limit > GP_STORE_PAGE_MAX)
		return -EINVAL;
	r = prepare(s,
		    after >= 0 ? "SELECT id, ts, who, action, object, detail FROM audit "
				 "WHERE id > ?1 ORDER BY id LIMIT ?2"
			       : "SELECT * FROM (SELECT id, ts, who, action, object, detail "
				 "FROM audit ORDER BY id DESC LIMIT ?2) ORDER BY id",
		    &st);
	if (r < 0)
		return r;
	if (after >= 0)
		sqlite3_bind_int64(st, 1, after);
	sqlite3_bind_int(st, 2, limit);
	r = get_all(s, st, sizeof(**ret), read_audit, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

int gp_store_audit_list(struct gp_store *s, struct gp_audit_entry **ret, int *ret_n)
{
	void *rows;
	int r;

	if (!s || !ret || !ret_n)
		return -EINVAL;
	r = get_all_of(s, "SELECT id, ts, who, action, object, detail FROM audit ORDER BY id",
		       sizeof(**ret), read_audit, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

/* ---- transactions ---- */

int gp_store_begin(struct gp_store *s)
{
	if (!s)
		return -EINVAL;
	return exec(s, "BEGIN IMMEDIATE", "begin");
}

static void synced(struct gp_store *s);

int gp_store_begin_unsynced(struct gp_store *s)
{
	int r;

	if (!s)
		return -EINVAL;
	r = exec(s, "PRAGMA synchronous=NORMAL", "synchronous");
	s->unsynced = r == 0;
	if (r == 0)
		r = gp_store_begin(s);
	if (r < 0)
		synced(s);
	return r;
}

/* Back to commits that wait for the disk, after an unsynced transaction. */
static void synced(struct gp_store *s)
{
	if (s->unsynced)
		sqlite3_exec(s->db, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
	s->unsynced = false;
}

int gp_store_commit(struct gp_store *s)
{
	int r;

	if (!s)
		return -EINVAL;
	r = exec(s, "COMMIT", "commit");
	if (r < 0)
		gp_store_rollback(s);
	synced(s);
	return r;
}

void gp_store_rollback(struct gp_store *s)
{
	if (s && !sqlite3_get_autocommit(s->db)) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		s->queued = -1;
	}
	if (s)
		synced(s);
}

int gp_store_queue_length(struct gp_store *s)
{
	int pending, preempted;

	if (!s)
		return -EINVAL;
	if (s->queued >= 0)
		return s->queued;
	pending = gp_store_task_count(s, GP_TASK_PENDING);
	preempted = gp_store_task_count(s, GP_TASK_PREEMPTED);
	if (pending < 0 || preempted < 0)
		return pending < 0 ? pending : preempted;
	s->queued = pending + preempted;
	return s->queued;
}

/* ---- usage ---- */

#define USAGE_COLUMNS                                                                    \
	"id, task, tenant, device_uuid, device_model, start_ms, end_ms, mem_mib, "       \
	"compute_pct, used_ms, mem_peak_mib"

static void read_usage(sqlite3_stmt *st, void *ret)
{
	struct gp_usage_record *u = ret;

	memset(u, 0, sizeof(*u));
	u->id = sqlite3_column_int64(st, 0);
	u->task = sqlite3_column_int64(st, 1);
	u->tenant = sqlite3_column_int64(st, 2);
	copy_text(st, 3, u->device_uuid, sizeof(u->device_uuid));
	copy_text(st, 4, u->device_model, sizeof(u->device_model));
	u->start_ms = sqlite3_column_int64(st, 5);
	u->end_ms = sqlite3_column_int64(st, 6);
	u->mem_mib = (uint64_t)sqlite3_column_int64(st, 7);
	u->compute_pct = (unsigned)sqlite3_column_int64(st, 8);
	u->used_ms = (uint64_t)sqlite3_column_int64(st, 9);
	u->mem_peak_mib = (uint64_t)sqlite3_column_int64(st, 10);
}

static bool usage_is_valid(const struct gp_usage_record *u)
{
	return fits(u->device_uuid, sizeof(u->device_uuid)) &&
	       !is_blank(u->device_uuid) &&
	       fits(u->device_model, sizeof(u->device_model)) &&
	       !is_blank(u->device_model) && u->start_ms <= u->end_ms &&
	       u->used_ms <= (uint64_t)(u->end_ms - u->start_ms) &&
	       u->compute_pct <= PCT_MAX && u->mem_mib <= INT64_MAX &&
	       u->mem_peak_mib <= INT64_MAX;
}

static int usage_insert(struct gp_store *s, sqlite3_stmt *st, struct gp_usage_record *u)
{
	int r;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, u->task);
	sqlite3_bind_int64(st, 2, u->tenant);
	sqlite3_bind_text(st, 3, u->device_uuid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, u->device_model, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, u->start_ms);
	sqlite3_bind_int64(st, 6, u->end_ms);
	sqlite3_bind_int64(st, 7, (int64_t)u->mem_mib);
	sqlite3_bind_int64(st, 8, u->compute_pct);
	sqlite3_bind_int64(st, 9, (int64_t)u->used_ms);
	sqlite3_bind_int64(st, 10, (int64_t)u->mem_peak_mib);
	r = step_done(s, st, "usage_add");
	if (r == -ENOENT)
		return fail(s, r, "usage_add: no task %lld of tenant %lld",
			    (long long)u->task, (long long)u->tenant);
	return r;
}

static int usage_insert_all(struct gp_store *s, struct gp_usage_record *recs, int n,
			    int64_t *ids)
{
	auto_stmt *st = NULL;
	int r = prepare(s,
			"INSERT INTO usage (task, tenant, device_uuid, device_model, "
			"start_ms, end_ms, mem_mib, compute_pct, used_ms, mem_peak_mib) "
			"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
			&st);

	for (int i = 0; r == 0 && i < n; i++) {
		r = usage_insert(s, st, &recs[i]);
		ids[i] = sqlite3_last_insert_rowid(s->db);
	}
	return r;
}

int gp_store_usage_add(struct gp_store *s, struct gp_usage_record *recs, int n)
{
	int64_t *ids;
	bool own = false;
	int r;

	if (!s || n < 0 || (n && !recs))
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (!usage_is_valid(&recs[i]))
			return fail(s, -EINVAL, "usage_add: record %d is invalid", i);
	if (n == 0)
		return 0;
	ids = calloc((size_t)n, sizeof(*ids));
	if (!ids)
		return fail(s, -ENOMEM, "usage_add: out of memory");
	r = begin_own(s, &own);
	if (r == 0)
		r = end_own(s, own, usage_insert_all(s, recs, n, ids));
	for (int i = 0; r == 0 && i < n; i++)
		recs[i].id = ids[i];
	free(ids);
	return r;
}

/* Binds the tenant (?1, < 0: all) and the range (?2, ?3) of a usage query. */
static void bind_usage_range(sqlite3_stmt *st, int64_t tenant, int64_t from, int64_t to)
{
	sqlite3_bind_int64(st, 1, tenant);
	sqlite3_bind_int64(st, 2, from);
	sqlite3_bind_int64(st, 3, to);
}

int gp_store_usage_list(struct gp_store *s, int64_t tenant, int64_t from_ms,
			int64_t to_ms, int64_t after_id, int limit,
			struct gp_usage_record **ret, int *ret_n)
{
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n || limit < 1)
		return -EINVAL;
	r = prepare(
		s,
		"SELECT " USAGE_COLUMNS " FROM usage WHERE (?1 < 0 OR tenant = ?1) "
		"AND start_ms >= ?2 AND start_ms < ?3 AND id > ?4 ORDER BY id LIMIT ?5",
		&st);
	if (r < 0)
		return r;
	bind_usage_range(st, tenant, from_ms, to_ms);
	sqlite3_bind_int64(st, 4, after_id);
	sqlite3_bind_int(st, 5, limit);
	r = get_all(s, st, sizeof(**ret), read_usage, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

static void read_usage_sum(sqlite3_stmt *st, void *ret)
{
	struct gp_usage_sum *u = ret;

	memset(u, 0, sizeof(*u));
	u->tenant = sqlite3_column_int64(st, 0);
	copy_text(st, 1, u->device_model, sizeof(u->device_model));
	u->records = sqlite3_column_int64(st, 2);
	u->duration_ms = sqlite3_column_int64(st, 3);
	u->pct_ms = sqlite3_column_int64(st, 4);
	u->mib_ms = sqlite3_column_int64(st, 5);
	u->used_ms = sqlite3_column_int64(st, 6);
}

int gp_store_usage_sum(struct gp_store *s, int64_t tenant, int64_t from_ms, int64_t to_ms,
		       struct gp_usage_sum **ret, int *ret_n)
{
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n)
		return -EINVAL;
	r = prepare(s,
		    "SELECT tenant, device_model, COUNT(*), SUM(end_ms - start_ms), "
		    "SUM(compute_pct * (end_ms - start_ms)), "
		    "SUM(mem_mib * (end_ms - start_ms)), SUM(used_ms) FROM usage "
		    "WHERE (?1 < 0 OR tenant = ?1) AND start_ms >= ?2 AND start_ms < ?3 "
		    "GROUP BY tenant, device_model ORDER BY tenant, device_model",
		    &st);
	if (r < 0)
		return r;
	bind_usage_range(st, tenant, from_ms, to_ms);
	r = get_all(s, st, sizeof(**ret), read_usage_sum, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

int gp_store_usage_of_task(struct gp_store *s, int64_t task, const char *device_uuid,
			   int64_t *ret_used_ms, int64_t *ret_end_ms)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !device_uuid || !ret_used_ms || !ret_end_ms)
		return -EINVAL;
	r = prepare(s,
		    "SELECT COALESCE(SUM(used_ms), 0), COALESCE(MAX(end_ms), 0) FROM usage "
		    "WHERE task = ?1 AND device_uuid = ?2",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, task);
	sqlite3_bind_text(st, 2, device_uuid, -1, SQLITE_STATIC);
	r = step_row(s, st, "usage_of_task");
	if (r < 0)
		return r;
	*ret_used_ms = sqlite3_column_int64(st, 0);
	*ret_end_ms = sqlite3_column_int64(st, 1);
	return 0;
}

/* ---- alerts ---- */

#define ALERT_COLUMNS "id, level, kind, object, tenant, message, created, cleared"

static void read_alert(sqlite3_stmt *st, void *ret)
{
	struct gp_alert *a = ret;

	memset(a, 0, sizeof(*a));
	a->id = sqlite3_column_int64(st, 0);
	a->level = (enum gp_alert_level)sqlite3_column_int(st, 1);
	copy_text(st, 2, a->kind, sizeof(a->kind));
	copy_text(st, 3, a->object, sizeof(a->object));
	a->tenant = sqlite3_column_int64(st, 4);
	copy_text(st, 5, a->message, sizeof(a->message));
	a->created = sqlite3_column_int64(st, 6);
	a->cleared = sqlite3_column_int64(st, 7);
}

static bool alert_is_valid(const struct gp_alert *a)
{
	return a->level >= GP_ALERT_INFO && a->level <= GP_ALERT_CRITICAL &&
	       fits(a->kind, sizeof(a->kind)) && !is_blank(a->kind) &&
	       fits(a->object, sizeof(a->object)) && fits(a->message, sizeof(a->message));
}

int gp_store_alert_raise(struct gp_store *s, struct gp_alert *a, bool *ret_new)
{
	auto_stmt *st = NULL;
	int64_t created = gp_unix_ms();
	int r;

	if (!s || !a || !ret_new)
		return -EINVAL;
	if (!alert_is_valid(a))
		return fail(s, -EINVAL, "alert_raise: invalid alert");
	/* The partial unique index keeps one active alert per kind and object. */
	r = prepare(s,
		    "INSERT OR IGNORE INTO alerts (level, kind, object, tenant, message, "
		    "created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int(st, 1, (int)a->level);
	sqlite3_bind_text(st, 2, a->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, a->object, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, a->tenant);
	sqlite3_bind_text(st, 5, a->message, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, created);
	r = step_done(s, st, "alert_raise");
	if (r < 0)
		return r;
	*ret_new = sqlite3_changes(s->db) > 0;
	if (*ret_new) {
		a->id = sqlite3_last_insert_rowid(s->db);
		a->created = created;
		a->cleared = 0;
	}
	return 0;
}

int gp_store_alert_clear(struct gp_store *s, const char *kind, const char *object)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !kind || !object)
		return -EINVAL;
	r = prepare(s,
		    "UPDATE alerts SET cleared = ?1 WHERE kind = ?2 AND object = ?3 AND "
		    "cleared = 0",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, gp_unix_ms());
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, object, -1, SQLITE_STATIC);
	return step_done(s, st, "alert_clear");
}

int gp_store_alert_list(struct gp_store *s, int64_t tenant, bool active_only, int limit,
			struct gp_alert **ret, int *ret_n)
{
	return gp_store_alert_page(s, tenant, active_only, 0, limit, ret, ret_n);
}

int gp_store_alert_page(struct gp_store *s, int64_t tenant, bool active_only, int64_t before,
			int limit, struct gp_alert **ret, int *ret_n)
{
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n || limit < 1 || before < 0)
		return -EINVAL;
	r = prepare(s,
		    "SELECT " ALERT_COLUMNS " FROM alerts WHERE (?1 < 0 OR tenant = ?1) "
		    "AND (?2 = 0 OR cleared = 0) AND (?4 = 0 OR id < ?4) ORDER BY id DESC "
		    "LIMIT ?3",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, tenant);
	sqlite3_bind_int(st, 2, active_only);
	sqlite3_bind_int(st, 3, limit);
	sqlite3_bind_int64(st, 4, before);
	r = get_all(s, st, sizeof(**ret), read_alert, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

int gp_store_alert_clear_id(struct gp_store *s, int64_t id, struct gp_alert *ret)
{
	auto_stmt *up = NULL, *st = NULL;
	int r;

	if (!s || !ret)
		return -EINVAL;
	r = prepare(s, "UPDATE alerts SET cleared = ?1 WHERE id = ?2 AND cleared = 0",
		    &up);
	if (r < 0)
		return r;
	sqlite3_bind_int64(up, 1, gp_unix_ms());
	sqlite3_bind_int64(up, 2, id);
	r = step_done(s, up, "alert_clear");
	if (r == 0)
		r = prepare(s, "SELECT " ALERT_COLUMNS " FROM alerts WHERE id = ?1", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	return get_one(s, st, read_alert, ret, "no such alert");
}

int gp_store_tenant_queue_length(struct gp_store *s, int64_t tenant)
{
	auto_stmt *st = NULL;
	int r;

	if (!s)
		return -EINVAL;
	r = prepare(s,
		    "SELECT COUNT(*) FROM tasks INDEXED BY tasks_state "
		    "WHERE state IN (?1, ?2) AND tenant = ?3",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int(st, 1, GP_TASK_PENDING);
	sqlite3_bind_int(st, 2, GP_TASK_PREEMPTED);
	sqlite3_bind_int64(st, 3, tenant);
	r = step_row(s, st, "tenant_queue_length");
	if (r < 0)
		return r;
	return sqlite3_column_int(st, 0);
}

/* ---- services ---- */

#define SERVICE_COLUMNS "id, tenant, name, spec, replicas, share_pct, created, removed"

static void read_service(sqlite3_stmt *st, void *ret)
{
	struct gp_service_row *v = ret;

	memset(v, 0, sizeof(*v));
	v->id = sqlite3_column_int64(st, 0);
	v->tenant = sqlite3_column_int64(st, 1);
	copy_text(st, 2, v->name, sizeof(v->name));
	copy_text(st, 3, v->spec, sizeof(v->spec));
	v->replicas = (unsigned)sqlite3_column_int64(st, 4);
	v->share_pct = (unsigned)sqlite3_column_int64(st, 5);
	v->created = sqlite3_column_int64(st, 6);
	v->removed = sqlite3_column_int64(st, 7);
}

int gp_store_service_add(struct gp_store *s, struct gp_service_row *v)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !v)
		return -EINVAL;
	if (!fits(v->name, sizeof(v->name)) || is_blank(v->name) ||
	    !fits(v->spec, sizeof(v->spec)) || v->share_pct > PCT_MAX)
		return fail(s, -EINVAL, "service_add: invalid service");
	r = prepare(s,
		    "INSERT INTO services (tenant, name, spec, replicas, share_pct, created) "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
		    &st);
	if (r < 0)
		return r;
	v->created = gp_unix_ms();
	v->removed = 0;
	sqlite3_bind_int64(st, 1, v->tenant);
	sqlite3_bind_text(st, 2, v->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, v->spec, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, v->replicas);
	sqlite3_bind_int64(st, 5, v->share_pct);
	sqlite3_bind_int64(st, 6, v->created);
	r = step_done(s, st, "service_add");
	if (r == -EEXIST)
		return fail(s, r, "service_add: a service named '%s' exists", v->name);
	if (r == 0)
		v->id = sqlite3_last_insert_rowid(s->db);
	return r;
}

int gp_store_service_list(struct gp_store *s, int64_t tenant, struct gp_service_row **ret,
			  int *ret_n)
{
	void *rows;
	int r;

	if (!s || !ret || !ret_n)
		return -EINVAL;
	r = get_all_by_int(s,
			   "SELECT " SERVICE_COLUMNS " FROM services WHERE removed = 0 AND "
			   "(?1 < 0 OR tenant = ?1) ORDER BY id",
			   tenant, sizeof(**ret), read_service, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

/* One statement of a service id and up to two integers; -ENOENT when it
 * changed no live service. */
static int service_write(struct gp_store *s, const char *sql, int64_t id, int64_t a,
			 int64_t b, const char *what)
{
	auto_stmt *st = NULL;
	int r;

	if (!s)
		return -EINVAL;
	r = prepare(s, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, a);
	if (sqlite3_bind_parameter_count(st) >= 3)
		sqlite3_bind_int64(st, 3, b);
	r = step_done(s, st, what);
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no service %lld", (long long)id);
	return r;
}

int gp_store_service_scale(struct gp_store *s, const struct gp_service_row *v)
{
	if (!v || v->share_pct > PCT_MAX)
		return -EINVAL;
	return service_write(s,
			     "UPDATE services SET replicas = ?2, share_pct = ?3 "
			     "WHERE id = ?1 AND removed = 0",
			     v->id, v->replicas, v->share_pct, "service_scale");
}

int gp_store_service_remove(struct gp_store *s, int64_t id)
{
	return service_write(s,
			     "UPDATE services SET removed = ?2 WHERE id = ?1 AND removed = 0",
			     id, gp_unix_ms(), 0, "service_remove");
}

/* ---- schedules ---- */

static void read_schedule(sqlite3_stmt *st, void *ret)
{
	struct gp_schedule_row *v = ret;

	memset(v, 0, sizeof(*v));
	v->id = sqlite3_column_int64(st, 0);
	copy_text(st, 1, v->name, sizeof(v->name));
	copy_text(st, 2, v->rule, sizeof(v->rule));
	v->created = sqlite3_column_int64(st, 3);
}

int gp_store_schedule_add(struct gp_store *s, struct gp_schedule_row *v)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !v)
		return -EINVAL;
	if (!fits(v->name, sizeof(v->name)) || is_blank(v->name) ||
	    !fits(v->rule, sizeof(v->rule)))
		return fail(s, -EINVAL, "schedule_add: invalid schedule");
	r = prepare(s, "INSERT INTO schedules (name, rule, created) VALUES (?1, ?2, ?3)", &st);
	if (r < 0)
		return r;
	v->created = gp_unix_ms();
	sqlite3_bind_text(st, 1, v->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, v->rule, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, v->created);
	r = step_done(s, st, "schedule_add");
	if (r == -EEXIST)
		return fail(s, r, "schedule_add: a schedule named '%s' exists", v->name);
	if (r == 0)
		v->id = sqlite3_last_insert_rowid(s->db);
	return r;
}

int gp_store_schedule_list(struct gp_store *s, struct gp_schedule_row **ret, int *ret_n)
{
	void *rows;
	int r;

	if (!s || !ret || !ret_n)
		return -EINVAL;
	r = get_all_of(s, "SELECT id, name, rule, created FROM schedules ORDER BY id",
		       sizeof(**ret), read_schedule, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

int gp_store_schedule_remove(struct gp_store *s, const char *name)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !name)
		return -EINVAL;
	r = prepare(s, "DELETE FROM schedules WHERE name = ?1", &st);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	r = step_done(s, st, "schedule_remove");
	if (r == 0 && sqlite3_changes(s->db) == 0)
		return fail(s, -ENOENT, "no schedule '%s'", name);
	return r;
}

int gp_store_audited(struct gp_store *s, gp_store_write_fn *write, const void *arg,
		     const char *who, const char *action, const char *object, const char *detail)
{
	int r = gp_store_begin(s);

	if (r == 0 && write)
		r = write(s, arg);
	if (r == 0)
		r = gp_store_audit(s, who, action, object, detail);
	if (r == 0)
		r = gp_store_commit(s);
	if (r < 0)
		gp_store_rollback(s);
	return r;
}

/* ---- the audit log, filtered ---- */

/* The filters of an audit query: ?3 who, ?4 action (or, ending in '.',
 * its prefix), ?5 object, ?6 and ?7 the time range (0: open). */
#define AUDIT_FILTERS                                                                     \
	"(?3 IS NULL OR who = ?3) AND (?4 IS NULL OR action = ?4 OR "                     \
	"(substr(?4, -1) = '.' AND substr(action, 1, length(?4)) = ?4)) AND "            \
	"(?5 IS NULL OR object = ?5) AND (?6 <= 0 OR ts >= ?6) AND (?7 <= 0 OR ts < ?7)"

static void bind_audit_filter(sqlite3_stmt *st, const struct gp_audit_filter *f)
{
	if (f->who)
		sqlite3_bind_text(st, 3, f->who, -1, SQLITE_STATIC);
	if (f->action)
		sqlite3_bind_text(st, 4, f->action, -1, SQLITE_STATIC);
	if (f->object)
		sqlite3_bind_text(st, 5, f->object, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, f->since_ms);
	sqlite3_bind_int64(st, 7, f->until_ms);
}

int gp_store_audit_query(struct gp_store *s, const struct gp_audit_filter *f, int64_t after,
			 int64_t before, int limit, struct gp_audit_entry **ret, int *ret_n)
{
	static const struct gp_audit_filter none;
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n || limit < 1 || limit > GP_STORE_PAGE_MAX)
		return -EINVAL;
	r = prepare(s,
		    after >= 0 ? "SELECT id, ts, who, action, object, detail FROM audit "
				 "WHERE id > ?1 AND (?2 <= 0 OR id < ?2) AND " AUDIT_FILTERS
				 " ORDER BY id LIMIT ?8"
			       : "SELECT * FROM (SELECT id, ts, who, action, object, detail "
				 "FROM audit WHERE (?2 <= 0 OR id < ?2) AND " AUDIT_FILTERS
				 " ORDER BY id DESC LIMIT ?8) ORDER BY id",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, after);
	sqlite3_bind_int64(st, 2, before);
	bind_audit_filter(st, f ? f : &none);
	sqlite3_bind_int(st, 8, limit);
	r = get_all(s, st, sizeof(**ret), read_audit, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

int gp_store_audit_any_before(struct gp_store *s, const struct gp_audit_filter *f,
			      int64_t before, bool *ret)
{
	static const struct gp_audit_filter none;
	auto_stmt *st = NULL;
	int r;

	if (!s || !ret)
		return -EINVAL;
	r = prepare(s,
		    "SELECT EXISTS (SELECT 1 FROM audit WHERE id < ?2 AND " AUDIT_FILTERS ")",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 2, before);
	bind_audit_filter(st, f ? f : &none);
	r = step_row(s, st, "audit_any_before");
	if (r < 0)
		return r;
	*ret = r && sqlite3_column_int64(st, 0) != 0;
	return 0;
}

/* ---- the meter's history ---- */

static int series_device_add(struct gp_store *s, int64_t ts, const struct gp_series_device *d)
{
	auto_stmt *st = NULL;
	int r;

	if (!fits(d->device, sizeof(d->device)) || !fits(d->model, sizeof(d->model)) ||
	    is_blank(d->device))
		return fail(s, -EINVAL, "series_add: invalid device");
	r = prepare(s,
		    "INSERT INTO device_series (ts_ms, device, model, mem_used_mib, "
		    "mem_alloc_mib, mem_total_mib, compute_alloc_pct, util_pct) "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, ts);
	sqlite3_bind_text(st, 2, d->device, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, d->model, -1, SQLITE_STATIC);
	if (d->sampled) {
		sqlite3_bind_int64(st, 4, (int64_t)d->mem_used_mib);
		sqlite3_bind_int64(st, 8, d->util_pct);
	}
	sqlite3_bind_int64(st, 5, (int64_t)d->mem_alloc_mib);
	sqlite3_bind_int64(st, 6, (int64_t)d->mem_total_mib);
	sqlite3_bind_int64(st, 7, d->compute_alloc_pct);
	return step_done(s, st, "series_add");
}

static int series_tenant_add(struct gp_store *s, int64_t ts, const struct gp_series_tenant *t)
{
	auto_stmt *st = NULL;
	int r = prepare(s,
			"INSERT INTO tenant_series (ts_ms, tenant, mem_used_mib, mem_alloc_mib, "
			"compute_alloc_pct) VALUES (?1, ?2, ?3, ?4, ?5)",
			&st);

	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, ts);
	sqlite3_bind_int64(st, 2, t->tenant);
	sqlite3_bind_int64(st, 3, (int64_t)t->mem_used_mib);
	sqlite3_bind_int64(st, 4, (int64_t)t->mem_alloc_mib);
	sqlite3_bind_int64(st, 5, t->compute_alloc_pct);
	return step_done(s, st, "series_add");
}

static int series_queue_add(struct gp_store *s, int64_t ts, unsigned length,
			    int64_t oldest_wait_ms)
{
	auto_stmt *st = NULL;
	int r = prepare(s,
			"INSERT INTO queue_series (ts_ms, length, oldest_wait_ms) "
			"VALUES (?1, ?2, ?3)",
			&st);

	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, ts);
	sqlite3_bind_int64(st, 2, length);
	sqlite3_bind_int64(st, 3, oldest_wait_ms);
	return step_done(s, st, "series_add");
}

int gp_store_series_add(struct gp_store *s, const struct gp_series_sample *x)
{
	bool own;
	int r;

	if (!s || !x || x->ts_ms <= 0 || (x->devices && !x->device) ||
	    (x->tenants && !x->tenant) || x->devices < 0 || x->tenants < 0)
		return -EINVAL;
	r = begin_own(s, &own);
	for (int i = 0; r == 0 && i < x->devices; i++)
		r = series_device_add(s, x->ts_ms, &x->device[i]);
	for (int i = 0; r == 0 && i < x->tenants; i++)
		r = series_tenant_add(s, x->ts_ms, &x->tenant[i]);
	if (r == 0)
		r = series_queue_add(s, x->ts_ms, x->queue_length, x->queue_oldest_wait_ms);
	return end_own(s, own, r);
}

/* One DELETE of the prune, with ?1 drop_before and ?2 thin_before. */
static int prune_step(struct gp_store *s, const char *sql, int64_t drop, int64_t thin)
{
	auto_stmt *st = NULL;
	int r = prepare(s, sql, &st);

	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, drop);
	sqlite3_bind_int64(st, 2, thin);
	return step_done(s, st, "series_prune");
}

int gp_store_series_prune(struct gp_store *s, int64_t drop_before_ms, int64_t thin_before_ms)
{
	/* Thinning keeps the first row of each minute (of each device, each
	 * tenant): an instant's figures, as every row is. */
	static const char *const sql[] = {
		"DELETE FROM device_series WHERE ts_ms < ?1 OR (ts_ms < ?2 AND rowid NOT IN "
		"(SELECT MIN(rowid) FROM device_series WHERE ts_ms < ?2 "
		"GROUP BY device, ts_ms / 60000))",
		"DELETE FROM tenant_series WHERE ts_ms < ?1 OR (ts_ms < ?2 AND rowid NOT IN "
		"(SELECT MIN(rowid) FROM tenant_series WHERE ts_ms < ?2 "
		"GROUP BY tenant, ts_ms / 60000))",
		"DELETE FROM queue_series WHERE ts_ms < ?1 OR (ts_ms < ?2 AND rowid NOT IN "
		"(SELECT MIN(rowid) FROM queue_series WHERE ts_ms < ?2 GROUP BY ts_ms / 60000))",
	};
	bool own;
	int r;

	if (!s || thin_before_ms < drop_before_ms)
		return -EINVAL;
	r = begin_own(s, &own);
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(sql); i++)
		r = prune_step(s, sql[i], drop_before_ms, thin_before_ms);
	return end_own(s, own, r);
}

static void read_series_point(sqlite3_stmt *st, void *ret)
{
	struct gp_series_point *p = ret;

	memset(p, 0, sizeof(*p));
	p->t_ms = sqlite3_column_int64(st, 0);
	p->tenant = sqlite3_column_int64(st, 1);
	copy_text(st, 2, p->device, sizeof(p->device));
	copy_text(st, 3, p->model, sizeof(p->model));
	p->samples = sqlite3_column_int(st, 4);
	p->used = sqlite3_column_type(st, 5) != SQLITE_NULL;
	p->mem_used_mib = sqlite3_column_double(st, 5);
	p->mem_used_max_mib = (uint64_t)sqlite3_column_int64(st, 6);
	p->mem_alloc_mib = sqlite3_column_double(st, 7);
	p->mem_alloc_max_mib = (uint64_t)sqlite3_column_int64(st, 8);
	p->mem_total_mib = (uint64_t)sqlite3_column_int64(st, 9);
	p->compute_alloc_pct = sqlite3_column_double(st, 10);
	p->util_pct = sqlite3_column_type(st, 11) == SQLITE_NULL ? -1
								 : sqlite3_column_double(st, 11);
}

/* The points of one series table: ?1 from, ?2 to, ?3 step, ?4 tenant. */
static int series_read(struct gp_store *s, const char *sql, int64_t tenant, int64_t from_ms,
		       int64_t to_ms, int64_t step_ms, struct gp_series_point **ret,
		       int *ret_n)
{
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n || step_ms < 1 || to_ms < from_ms)
		return -EINVAL;
	r = prepare(s, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, from_ms);
	sqlite3_bind_int64(st, 2, to_ms);
	sqlite3_bind_int64(st, 3, step_ms);
	sqlite3_bind_int64(st, 4, tenant);
	r = get_all(s, st, sizeof(**ret), read_series_point, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

/* A bucket's start: from + its number x step. */
#define SERIES_BUCKET "?1 + (ts_ms - ?1) / ?3 * ?3"

int gp_store_series_devices(struct gp_store *s, int64_t from_ms, int64_t to_ms,
			    int64_t step_ms, struct gp_series_point **ret, int *ret_n)
{
	return series_read(s,
			   "SELECT " SERIES_BUCKET " AS b, 0, device, MAX(model), COUNT(*), "
			   "AVG(mem_used_mib), MAX(mem_used_mib), AVG(mem_alloc_mib), "
			   "MAX(mem_alloc_mib), MAX(mem_total_mib), AVG(compute_alloc_pct), "
			   "AVG(util_pct) FROM device_series WHERE ts_ms >= ?1 AND ts_ms < ?2 "
			   "GROUP BY device, b ORDER BY device, b",
			   0, from_ms, to_ms, step_ms, ret, ret_n);
}

int gp_store_series_tenants(struct gp_store *s, int64_t tenant, int64_t from_ms, int64_t to_ms,
			    int64_t step_ms, struct gp_series_point **ret, int *ret_n)
{
	return series_read(s,
			   "SELECT " SERIES_BUCKET " AS b, tenant, '', '', COUNT(*), "
			   "AVG(mem_used_mib), MAX(mem_used_mib), AVG(mem_alloc_mib), "
			   "MAX(mem_alloc_mib), 0, AVG(compute_alloc_pct), NULL "
			   "FROM tenant_series WHERE ts_ms >= ?1 AND ts_ms < ?2 "
			   "AND (?4 < 0 OR tenant = ?4) GROUP BY tenant, b ORDER BY tenant, b",
			   tenant, from_ms, to_ms, step_ms, ret, ret_n);
}

/* The queue's points: mem_used is its length (average, most), mem_alloc
 * its oldest wait in ms (average, most). */
int gp_store_series_queue(struct gp_store *s, int64_t from_ms, int64_t to_ms, int64_t step_ms,
			  struct gp_series_point **ret, int *ret_n)
{
	return series_read(s,
			   "SELECT " SERIES_BUCKET " AS b, 0, '', '', COUNT(*), AVG(length), "
			   "MAX(length), AVG(oldest_wait_ms), MAX(oldest_wait_ms), 0, 0, NULL "
			   "FROM queue_series WHERE ts_ms >= ?1 AND ts_ms < ?2 "
			   "GROUP BY b ORDER BY b",
			   0, from_ms, to_ms, step_ms, ret, ret_n);
}

int gp_store_metered_since(struct gp_store *s, int64_t *ret_ms)
{
	int64_t v = 0;
	int r;

	if (!s || !ret_ms)
		return -EINVAL;
	r = query_int(s,
		      "SELECT MIN(t) FROM (SELECT MIN(ts_ms) AS t FROM queue_series "
		      "UNION ALL SELECT MIN(start_ms) FROM usage)",
		      &v);
	if (r == 0)
		*ret_ms = v;
	return r;
}

/* ---- a service's steps ---- */

int gp_store_service_step_add(struct gp_store *s, struct gp_service_step *x)
{
	auto_stmt *st = NULL;
	int r;

	if (!s || !x)
		return -EINVAL;
	if (!fits(x->who, sizeof(x->who)) || !fits(x->step, sizeof(x->step)) ||
	    is_blank(x->step) || x->share_pct > PCT_MAX)
		return fail(s, -EINVAL, "service_step_add: invalid step");
	r = prepare(s,
		    "INSERT INTO service_steps (service, ts_ms, who, step, replicas, share_pct, "
		    "reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		    &st);
	if (r < 0)
		return r;
	if (!x->ts_ms)
		x->ts_ms = gp_unix_ms();
	sqlite3_bind_int64(st, 1, x->service);
	sqlite3_bind_int64(st, 2, x->ts_ms);
	sqlite3_bind_text(st, 3, x->who, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, x->step, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, x->replicas);
	sqlite3_bind_int64(st, 6, x->share_pct);
	sqlite3_bind_text(st, 7, x->reason, utf8_cut(x->reason, GP_REASON_MAX - 1),
			  SQLITE_STATIC);
	r = step_done(s, st, "service_step_add");
	if (r == 0)
		x->id = sqlite3_last_insert_rowid(s->db);
	return r;
}

static void read_service_step(sqlite3_stmt *st, void *ret)
{
	struct gp_service_step *x = ret;

	memset(x, 0, sizeof(*x));
	x->id = sqlite3_column_int64(st, 0);
	x->service = sqlite3_column_int64(st, 1);
	x->ts_ms = sqlite3_column_int64(st, 2);
	copy_text(st, 3, x->who, sizeof(x->who));
	copy_text(st, 4, x->step, sizeof(x->step));
	x->replicas = (unsigned)sqlite3_column_int64(st, 5);
	x->share_pct = (unsigned)sqlite3_column_int64(st, 6);
	copy_text(st, 7, x->reason, sizeof(x->reason));
}

int gp_store_service_steps(struct gp_store *s, int64_t service, int limit,
			   struct gp_service_step **ret, int *ret_n)
{
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n || limit < 1)
		return -EINVAL;
	r = prepare(s,
		    "SELECT id, service, ts_ms, who, step, replicas, share_pct, reason "
		    "FROM service_steps WHERE service = ?1 ORDER BY id DESC LIMIT ?2",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, service);
	sqlite3_bind_int(st, 2, limit);
	r = get_all(s, st, sizeof(**ret), read_service_step, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}

/* ---- a task's usage records ---- */

int gp_store_usage_of_task_page(struct gp_store *s, int64_t task, int64_t after_id, int limit,
				struct gp_usage_record **ret, int *ret_n)
{
	auto_stmt *st = NULL;
	void *rows;
	int r;

	if (!s || !ret || !ret_n || limit < 1)
		return -EINVAL;
	r = prepare(s,
		    "SELECT " USAGE_COLUMNS " FROM usage WHERE task = ?1 AND id > ?2 "
		    "ORDER BY id LIMIT ?3",
		    &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, task);
	sqlite3_bind_int64(st, 2, after_id);
	sqlite3_bind_int(st, 3, limit);
	r = get_all(s, st, sizeof(**ret), read_usage, &rows, ret_n);
	if (r == 0)
		*ret = rows;
	return r;
}
