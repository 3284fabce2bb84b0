/* backup.c — the database's backups and their restoring (see backup.h).
 *
 * The thread sleeps on a condition variable with a CLOCK_MONOTONIC
 * deadline, so that gp_backup_stop wakes it at once; the state it shares
 * with the server's threads (the counts, the newest path) is guarded by
 * `lock`, held only to copy them. Files are made with O_EXCL in a
 * directory of mode 0700, written, synced, then renamed, and the
 * directory synced: after a crash a backup's name is there whole or not
 * at all, and a leftover temporary file (".gpupool-...tmp") is removed by
 * the next backup. */
#include "server/backup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"

#define PREFIX	 "gpupool-"
#define SUFFIX	 ".db"
#define TMP_MARK ".tmp"
#define NAMES_MAX (GP_BACKUP_KEEP_LIMIT + 64) /* backups looked at in a directory */
#define NAME_MAX_LEN 64

struct gp_backup {
	struct gp_store *reader; /* used by the thread alone */
	char dir[PATH_MAX];
	unsigned interval_s, keep;
	pthread_t thread;
	bool started; /* the thread runs */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	struct gp_backup_state state;
};

/* ---- names --------------------------------------------------------------- */

/* "gpupool-20250301T120000.123Z.db" for unix ms `ms`. */
static void backup_name(int64_t ms, char *buf, size_t size)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char stamp[32];

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, size, PREFIX "%s.%03dZ" SUFFIX, stamp, (int)(ms % 1000));
}

/* Whether name is a backup's (not a temporary file, not another file). */
static bool is_backup_name(const char *name)
{
	size_t len = strlen(name), p = strlen(PREFIX), s = strlen(SUFFIX);

	return len > p + s && len < NAME_MAX_LEN && !strncmp(name, PREFIX, p) &&
	       !strcmp(name + len - s, SUFFIX);
}

static int name_compare(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The backups' names in dir, sorted oldest first, into names (at most
 * NAMES_MAX); their number, or -errno. Leftover temporary files are
 * removed on the way. */
static int names_read(const char *dir, char (*names)[NAME_MAX_LEN])
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.' && len > strlen(TMP_MARK) &&
		    !strcmp(e->d_name + len - strlen(TMP_MARK), TMP_MARK) &&
		    !strncmp(e->d_name + 1, PREFIX, strlen(PREFIX)))
			unlinkat(dirfd(d), e->d_name, 0);
		else if (is_backup_name(e->d_name) && n < NAMES_MAX) /* len < NAME_MAX_LEN */
			memcpy(names[n++], e->d_name, len + 1);
	}
	closedir(d);
	qsort(names, (size_t)n, NAME_MAX_LEN, name_compare);
	return n;
}

int gp_backup_newest(const char *dir, char *ret_path, size_t size)
{
	char (*names)[NAME_MAX_LEN] = malloc(NAMES_MAX * NAME_MAX_LEN);
	int n;

	if (!names)
		return -ENOMEM;
	n = names_read(dir, names);
	if (n > 0)
		snprintf(ret_path, size, "%s/%s", dir, names[n - 1]);
	free(names);
	return n < 0 ? n : n == 0 ? -ENOENT : 0;
}

/* Removes the oldest backups in dir beyond the newest keep. */
static void rotate(const char *dir, unsigned keep)
{
	char (*names)[NAME_MAX_LEN] = malloc(NAMES_MAX * NAME_MAX_LEN);
	char path[PATH_MAX + NAME_MAX_LEN];
	int n = names ? names_read(dir, names) : -ENOMEM;

	for (int i = 0; i + (int)keep < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	free(names);
}

/* ---- files ----------------------------------------------------------------- */

static int fd_sync_close(int fd)
{
	int r = fsync(fd) < 0 ? -errno : 0;

	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

static int path_sync(const char *path, int flags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);

	return fd < 0 ? -errno : fd_sync_close(fd);
}

/* Syncs the directory that holds path. */
static int parent_sync(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		return path_sync(".", O_DIRECTORY);
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	return path_sync(dir, O_DIRECTORY);
}

/* Makes dir, mode 0700, when it is missing. */
static int dir_make(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) == 0 || (errno == EEXIST && stat(dir, &st) == 0 &&
				      S_ISDIR(st.st_mode)))
		return 0;
	return errno == EEXIST ? -ENOTDIR : -errno;
}

/* An empty file of mode 0600 at path, made here (O_EXCL). */
static int file_make(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Whether the database file at path is whole: PRAGMA quick_check. */
static int file_verify(const char *path, char *err, size_t err_len)
{
	struct gp_store *s = NULL;
	int r = gp_store_open_readonly(path, &s);

	if (r == 0)
		r = gp_store_check(s, false);
	if (r < 0)
		snprintf(err, err_len, "%s", gp_store_error(s));
	gp_store_close(s);
	return r;
}

/* ---- taking one -------------------------------------------------------------- */

/* The copy into tmp, checked and synced, renamed to path. */
static int take_into(struct gp_store *reader, const char *tmp, const char *path, char *err,
		     size_t err_len)
{
	int r = file_make(tmp);

	if (r < 0) {
		snprintf(err, err_len, "cannot make %s: %s", tmp, strerror(-r));
		return r;
	}
	r = gp_store_backup_into(reader, tmp);
	if (r < 0) {
		snprintf(err, err_len, "%s", gp_store_error(reader));
		return r;
	}
	r = file_verify(tmp, err, err_len);
	if (r == 0 && ((r = path_sync(tmp, 0)) < 0 || (rename(tmp, path) < 0 && (r = -errno)) ||
		       (r = parent_sync(path)) < 0))
		snprintf(err, err_len, "cannot put %s in place: %s", path, strerror(-r));
	return r;
}

int gp_backup_take(struct gp_store *reader, const char *dir, unsigned keep, char *ret_path,
		   size_t path_size, char *err, size_t err_len)
{
	char name[NAME_MAX_LEN], tmp[PATH_MAX + NAME_MAX_LEN + 8],
		path[PATH_MAX + NAME_MAX_LEN];
	int r = dir_make(dir);

	if (r < 0) {
		snprintf(err, err_len, "cannot make the directory %s: %s", dir, strerror(-r));
		return r;
	}
	backup_name(gp_unix_ms(), name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s" TMP_MARK, dir, name);
	r = take_into(reader, tmp, path, err, err_len);
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	rotate(dir, keep ? keep : GP_BACKUP_KEEP);
	snprintf(ret_path, path_size, "%s", path);
	return 0;
}

/* ---- the thread ------------------------------------------------------------------ */

/* One backup, its outcome in the state, a failure said. */
static void backup_once(struct gp_backup *b)
{
	char path[PATH_MAX], err[1024];
	int r = gp_backup_take(b->reader, b->dir, b->keep, path, sizeof(path), err, sizeof(err));

	pthread_mutex_lock(&b->lock);
	if (r == 0) {
		b->state.taken++;
		b->state.last_ms = gp_unix_ms();
		snprintf(b->state.last, sizeof(b->state.last), "%s", path);
	} else {
		b->state.failed++;
		b->state.damaged |= r == -EBADMSG;
	}
	pthread_mutex_unlock(&b->lock);
	if (r < 0)
		fprintf(stderr,
			"gpupool server: the database's backup into %s failed: %s; the "
			"backups there before it are kept (see the server's log, free disk "
			"space, or --backup-dir)\n",
			b->dir, err);
}

/* Waits until `at` (CLOCK_MONOTONIC) or a stop; false when stopping. */
static bool wait_until(struct gp_backup *b, const struct timespec *at)
{
	bool go;

	pthread_mutex_lock(&b->lock);
	while (!b->stopping && pthread_cond_timedwait(&b->wake, &b->lock, at) != ETIMEDOUT)
		;
	go = !b->stopping;
	pthread_mutex_unlock(&b->lock);
	return go;
}

static void *backup_thread(void *arg)
{
	struct gp_backup *b = arg;
	struct timespec at;

	clock_gettime(CLOCK_MONOTONIC, &at);
	do {
		backup_once(b);
		at.tv_sec += b->interval_s;
	} while (b->interval_s && wait_until(b, &at));
	return NULL;
}

int gp_backup_start(const struct gp_store *store, const struct gp_backup_options *o,
		    struct gp_backup **ret)
{
	struct gp_backup *b = calloc(1, sizeof(*b));
	int r;

	if (!b)
		return -ENOMEM;
	snprintf(b->dir, sizeof(b->dir), "%s", o->dir);
	b->interval_s = o->interval_s;
	b->keep = o->keep ? o->keep : GP_BACKUP_KEEP;
	r = gp_store_open_reader(store, &b->reader);
	if (r < 0) {
		free(b);
		return r;
	}
	if (o->on_damage)
		gp_store_on_damage(b->reader, o->on_damage, o->ctx);
	pthread_mutex_init(&b->lock, NULL);
	gp_monotonic_cond_init(&b->wake);
	r = -pthread_create(&b->thread, NULL, backup_thread, b);
	if (r < 0) {
		gp_backup_stop(b);
		return r;
	}
	b->started = true;
	*ret = b;
	return 0;
}

struct gp_backup *gp_backup_stop(struct gp_backup *b)
{
	if (!b)
		return NULL;
	if (b->started) {
		pthread_mutex_lock(&b->lock);
		b->stopping = true;
		pthread_cond_signal(&b->wake);
		pthread_mutex_unlock(&b->lock);
		pthread_join(b->thread, NULL);
	}
	gp_store_close(b->reader);
	pthread_cond_destroy(&b->wake);
	pthread_mutex_destroy(&b->lock);
	free(b);
	return NULL;
}

void gp_backup_state(struct gp_backup *b, struct gp_backup_state *ret)
{
	pthread_mutex_lock(&b->lock);
	*ret = b->state;
	pthread_mutex_unlock(&b->lock);
}

/* ---- restoring ---------------------------------------------------------------------- */

/* Copies the bytes of fd `in` to fd `out`. */
static int fd_copy(int in, int out)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) != 0)
		if (n < 0 || write(out, buf, (size_t)n) != n)
			return errno ? -errno : -EIO;
	return 0;
}

/* Copies from to a new file `to` (mode 0600), synced; none is left at
 * `to` when it fails. */
static int file_copy(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out, r;

	if (in < 0)
		return -errno;
	unlink(to);
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	r = fd_copy(in, out);
	close(in);
	if (r == 0)
		r = fd_sync_close(out);
	else
		close(out);
	if (r < 0)
		unlink(to);
	return r;
}

/* The backup's counts, and whether it is whole. */
static int backup_verify(const char *backup, int *ret_tenants, int *ret_tasks, char *err,
			 size_t err_len)
{
	struct gp_store *s = NULL;
	struct gp_tenant *tenants = NULL;
	int n = 0, r = gp_store_open_readonly(backup, &s);

	if (r == 0 && (r = gp_store_check(s, false)) == 0 &&
	    (r = gp_store_tenant_list(s, &tenants, &n)) == 0 &&
	    (r = gp_store_task_count(s, -1)) >= 0) {
		*ret_tasks = r;
		*ret_tenants = 0;
		for (int i = 0; i < n; i++)
			*ret_tenants += !tenants[i].removed;
		r = 0;
	}
	/* The advice before SQLite's words, which may be long enough to fill
	 * err (a check lists every damaged cell). */
	if (r < 0)
		snprintf(err, err_len, "the backup %s cannot be used%s: %s", backup,
			 r == -EBADMSG ? " (try an older one)" : "", gp_store_error(s));
	free(tenants);
	gp_store_close(s);
	return r;
}

/* Renames from to to when from exists; -errno otherwise but ENOENT. */
static int rename_if(const char *from, const char *to)
{
	return rename(from, to) == 0 || errno == ENOENT ? 0 : -errno;
}

/* Moves db and its WAL aside as DB.damaged-STAMP; its shared-memory
 * file, which only a running server uses, goes. */
static int db_aside(const char *db, char *ret_aside, size_t size)
{
	char stamp[32], aside[PATH_MAX + 48], from[PATH_MAX + 8], to[PATH_MAX + 56];
	time_t now = (time_t)(gp_unix_ms() / 1000);
	struct tm tm;
	int r;

	ret_aside[0] = '\0';
	if (access(db, F_OK) < 0)
		return errno == ENOENT ? 0 : -errno;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(aside, sizeof(aside), "%s.damaged-%s", db, stamp);
	snprintf(from, sizeof(from), "%s-wal", db);
	snprintf(to, sizeof(to), "%s-wal", aside);
	if ((r = rename_if(db, aside)) < 0 || (r = rename_if(from, to)) < 0)
		return r;
	snprintf(from, sizeof(from), "%s-shm", db);
	unlink(from);
	snprintf(ret_aside, size, "%s", aside);
	return 0;
}

int gp_backup_restore(const char *backup, const char *db, char *ret_aside, size_t aside_size,
		      int *ret_tenants, int *ret_tasks, char *err, size_t err_len)
{
	char copy[PATH_MAX + 16];
	int r = backup_verify(backup, ret_tenants, ret_tasks, err, err_len);

	if (r < 0)
		return r;
	snprintf(copy, sizeof(copy), "%s.restore", db);
	r = file_copy(backup, copy);
	if (r < 0) {
		snprintf(err, err_len, "cannot copy %s to %s: %s", backup, copy, strerror(-r));
		return r;
	}
	r = db_aside(db, ret_aside, aside_size);
	if (r < 0) {
		snprintf(err, err_len, "cannot move %s aside: %s", db, strerror(-r));
		unlink(copy);
		return r;
	}
	if (rename(copy, db) < 0 || (r = parent_sync(db)) < 0) {
		r = r ? r : -errno;
		snprintf(err, err_len, "cannot rename %s to %s: %s (the database is at %s)",
			 copy, db, strerror(-r), ret_aside[0] ? ret_aside : "nowhere yet");
		return r;
	}
	return 0;
}
