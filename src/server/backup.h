/* backup.h — the database's backups (docs/install.md, "Backups and
 * restoring"): copies of the store taken by a thread of their own, one
 * at once and then every interval, and the restoring of one.
 *
 * A backup is a whole SQLite database as of one moment, made with VACUUM
 * INTO from a reader of its own (in WAL mode a reader does not hold up
 * the server's writes, and VACUUM INTO reads every table, so a damaged
 * database fails rather than being copied), into a temporary file of
 * mode 0600, then checked (PRAGMA quick_check), synced and renamed to
 * gpupool-YYYYMMDDTHHMMSS.mmmZ.db (UTC) in a directory of mode 0700: a
 * name that is there is whole, and the newest is the last by name. After
 * each new backup the oldest beyond `keep` are removed; a failed one
 * removes nothing.
 *
 * The thread logs each backup that fails on stderr (with what to do),
 * and says nothing of those that succeed but through gp_backup_state.
 *
 * Ownership: gp_backup_start's caller owns the result and ends it with
 * gp_backup_stop; the paths it is given are copied. */
#ifndef GP_SERVER_BACKUP_H
#define GP_SERVER_BACKUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/store.h"

#define GP_BACKUP_INTERVAL_S 3600 /* the defaults of the server's options */
#define GP_BACKUP_KEEP	     8
#define GP_BACKUP_KEEP_LIMIT 1000

struct gp_backup;

struct gp_backup_options {
	const char *dir;     /* made (0700) when missing */
	unsigned interval_s; /* between two backups; 0: the first only */
	unsigned keep;	     /* how many are kept, the newest; 0: GP_BACKUP_KEEP */
	/* Called from the backup thread, once, when its reader meets the
	 * database damaged (gp_store_on_damage); NULL: nothing. */
	gp_store_damage_fn *on_damage;
	void *ctx;
};

/* What the thread has done so far. */
struct gp_backup_state {
	int64_t last_ms;  /* when the newest good backup was taken (unix ms); 0: none yet */
	uint64_t taken;	  /* backups written */
	uint64_t failed;  /* backups that failed */
	bool damaged;	  /* one failed on the database found damaged */
	char last[PATH_MAX]; /* the newest good one's path; "" none */
};

/* Opens a reader of store's file and starts the thread: a backup at
 * once, then one every interval. -ENOTSUP for an in-memory store, another
 * -errno when the reader cannot be opened or the thread started. */
int gp_backup_start(const struct gp_store *store, const struct gp_backup_options *o,
		    struct gp_backup **ret);

/* Stops the thread (a backup being written is finished first) and
 * closes the reader. Accepts NULL; returns NULL. */
struct gp_backup *gp_backup_stop(struct gp_backup *b);

void gp_backup_state(struct gp_backup *b, struct gp_backup_state *ret);

/* One backup of reader's database into dir now, the oldest beyond keep
 * removed after it: its path in ret_path. -errno with the reason in err
 * (the temporary file removed). */
int gp_backup_take(struct gp_store *reader, const char *dir, unsigned keep, char *ret_path,
		   size_t path_size, char *err, size_t err_len);

/* The newest backup in dir (by its name), its path in ret_path;
 * -ENOENT when there is none, another -errno when dir cannot be read. */
int gp_backup_newest(const char *dir, char *ret_path, size_t size);

/* Puts the backup at `backup` in the place of the database at db, with
 * no server using it (the caller holds the database's lock): the backup
 * is checked first (PRAGMA quick_check; a damaged one is refused), then
 * copied beside db (mode 0600, synced); db itself, if there is one, is
 * kept as DB.damaged-YYYYMMDDTHHMMSSZ with its WAL (whose path goes to
 * ret_aside, "" when there was none), and the copy renamed to db. The
 * backup's tenants and tasks counts go to ret_tenants and ret_tasks.
 * -errno with the reason in err: db is then as it was, but when the last
 * step (the rename) failed, which err says, with where db is kept. */
int gp_backup_restore(const char *backup, const char *db, char *ret_aside, size_t aside_size,
		      int *ret_tenants, int *ret_tasks, char *err, size_t err_len);

#endif
