/* server-db.c — the database at the server's start, and --restore-db
 * (see server-db.h). The refusals all end the same way: the newest
 * backup in --backup-dir, when it was written, and the one command that
 * puts it back. */
#include "server/server-db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "server/api.h"
#include "server/backup.h"

/* ---- advice ------------------------------------------------------------------ */

void gp_server_db_advise(const struct gp_server_options *o)
{
	char newest[PATH_MAX], when[32] = "?";
	struct stat st;
	struct tm tm;
	int r = gp_backup_newest(o->backup_dir, newest, sizeof(newest));

	if (r < 0) {
		fprintf(stderr,
			"gpupool server: there is no backup in %s (--backup-dir%s). With one "
			"from elsewhere: gpupool server --db %s --restore-db FILE. To start "
			"afresh instead (a new admin, no tenants, no tasks): move %s away\n",
			o->backup_dir, r == -ENOENT ? "" : ": it cannot be read", o->db, o->db);
		return;
	}
	if (stat(newest, &st) == 0 && gmtime_r(&st.st_mtime, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(stderr,
		"gpupool server: the newest backup is %s (written %s). To restore it (what "
		"changed since is lost), with no server running on the database:\n"
		"    gpupool server --db %s --restore-db %s\n"
		"gpupool server: that keeps the damaged file beside it (docs/install.md, "
		"\"Backups and restoring\")\n",
		newest, when, o->db, newest);
}

/* ---- opening and checking ---------------------------------------------------- */

static int store_open(const struct gp_server_options *o, struct gp_store **ret)
{
	int r = gp_store_open(o->db, ret);

	if (r == 0)
		return GP_EXIT_OK;
	fprintf(stderr, "gpupool server: cannot open the database %s: %s\n", o->db,
		gp_store_error(NULL));
	if (r == -ENODATA || r == -EBADMSG)
		gp_server_db_advise(o);
	return GP_EXIT_FAIL;
}

/* PRAGMA quick_check (or integrity_check): a damaged database is not
 * served, since every answer would come from it and every write go
 * into it. */
static int store_check(const struct gp_server_options *o, struct gp_store *s)
{
	bool full = o->db_check == GP_CONFIG_DB_CHECK_FULL;
	int r;

	if (full)
		fprintf(stderr, "gpupool server: checking the whole database (PRAGMA "
				"integrity_check; --db-check full)\n");
	r = gp_store_check(s, full);
	if (r == 0)
		return GP_EXIT_OK;
	if (r != -EBADMSG) {
		fprintf(stderr, "gpupool server: cannot check the database %s: %s\n", o->db,
			gp_store_error(s));
		return GP_EXIT_FAIL;
	}
	fprintf(stderr,
		"gpupool server: the database %s is damaged (%s); refusing to start: "
		"serving it would answer from it and write into it\n",
		o->db, gp_store_error(s));
	gp_server_db_advise(o);
	return GP_EXIT_FAIL;
}

/* ---- the admin ------------------------------------------------------------------- */

static int token_write(int fd, const char *token)
{
	char line[GP_TOKEN_HEX + 2];
	size_t len = (size_t)snprintf(line, sizeof(line), "%s\n", token);

	if (write(fd, line, len) != (ssize_t)len || fsync(fd) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* The admin token file, opened to be written: replaced for a database
 * made now; for an existing one only made, never written over (a token
 * there may be the one that opens another database, or this one's). */
static int token_file_open(const char *path, bool database_new)
{
	int fd = open(path,
		      O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
			      (database_new ? O_TRUNC : O_EXCL),
		      0600);

	if (fd >= 0 && fchmod(fd, 0600) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Makes the admin tenant and writes its token, the one time it is seen.
 * The file is opened first, so that a token is never made that cannot
 * be kept. */
static int admin_make(struct gp_store *s, const char *path, bool database_new)
{
	struct gp_tenant admin = {.admin = true, .name = GP_API_ADMIN_NAME, .priority_max = 9};
	char token[GP_TOKEN_HEX + 1];
	int r, fd = token_file_open(path, database_new);

	if (fd < 0 && errno == EEXIST) {
		fprintf(stderr,
			"gpupool server: the database has no admin tenant, and %s holds a "
			"token already (another database's?); it is not written over: move "
			"it away, then start again\n",
			path);
		return GP_EXIT_FAIL;
	}
	if (fd < 0) {
		fprintf(stderr, "gpupool server: cannot write the admin token to %s: %s\n",
			path, strerror(errno));
		return GP_EXIT_FAIL;
	}
	r = gp_store_tenant_add(s, &admin, token);
	if (r == 0)
		r = token_write(fd, token);
	close(fd);
	if (r == 0)
		r = gp_store_audit(s, "server", "tenant.add", GP_API_ADMIN_NAME,
				   "first start");
	if (r < 0) {
		fprintf(stderr, "gpupool server: cannot make the admin tenant: %s\n",
			r == -EIO || r == -EBADMSG ? gp_store_error(s) : strerror(-r));
		return GP_EXIT_FAIL;
	}
	fprintf(stderr,
		"gpupool server: made the admin tenant; its token is in %s (mode 0600)\n",
		path);
	return GP_EXIT_OK;
}

static int admin_ensure(struct gp_store *s, const char *path)
{
	struct gp_tenant admin;
	int r = gp_store_tenant_by_name(s, GP_API_ADMIN_NAME, &admin);

	if (r == -ENOENT)
		return admin_make(s, path, gp_store_is_new(s));
	if (r < 0) {
		fprintf(stderr, "gpupool server: cannot read the admin tenant: %s\n",
			gp_store_error(s));
		return GP_EXIT_FAIL;
	}
	if (!admin.admin) {
		fprintf(stderr,
			"gpupool server: the tenant \"%s\" is not the admin; this "
			"database was not made by gpupool server\n",
			GP_API_ADMIN_NAME);
		return GP_EXIT_FAIL;
	}
	return GP_EXIT_OK;
}

int gp_server_db_open(const struct gp_server_options *o, struct gp_store **ret)
{
	int status = store_open(o, ret);

	if (status == GP_EXIT_OK)
		status = store_check(o, *ret);
	if (status == GP_EXIT_OK)
		status = admin_ensure(*ret, o->token_file);
	if (status != GP_EXIT_OK) {
		gp_store_close(*ret);
		*ret = NULL;
	}
	return status;
}

/* ---- restoring ----------------------------------------------------------------------- */

/* The token in the admin token file, its newline gone; "" when none. */
static void token_read(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f && fgets(buf, (int)size, f))
		buf[strcspn(buf, "\r\n")] = '\0';
	if (f)
		fclose(f);
}

/* A new admin token into path: written beside it, then renamed. */
static int token_replace(struct gp_store *s, int64_t admin, const char *path)
{
	char tmp[PATH_MAX + 8], token[GP_TOKEN_HEX + 1];
	int fd, r;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = gp_store_tenant_token_new(s, admin, token);
	if (r == 0)
		r = token_write(fd, token);
	close(fd);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

/* After a restore, the admin token file must open the restored database:
 * when its token is not the restored admin's (the token was made anew
 * after the backup), the admin gets a new one, written there. */
static int admin_token_match(const struct gp_server_options *o)
{
	char token[GP_TOKEN_HEX + 8];
	struct gp_tenant me, admin;
	struct gp_store *s = NULL;
	int r = gp_store_open(o->db, &s);

	token_read(o->token_file, token, sizeof(token));
	if (r == 0 && gp_store_tenant_by_token(s, token, &me) == 0 && me.admin) {
		gp_store_close(s);
		return GP_EXIT_OK;
	}
	if (r == 0 && (r = gp_store_tenant_by_name(s, GP_API_ADMIN_NAME, &admin)) == 0)
		r = token_replace(s, admin.id, o->token_file);
	if (r == 0)
		r = gp_store_audit(s, "server", "tenant.token", GP_API_ADMIN_NAME,
				   "a new token after --restore-db");
	if (r < 0)
		fprintf(stderr,
			"gpupool server: the database is restored, but %s does not open it "
			"and a new admin token could not be made: %s\n",
			o->token_file, s ? gp_store_error(s) : gp_store_error(NULL));
	else
		fprintf(stderr,
			"gpupool server: %s held a token the backup does not know (made "
			"after it); the admin has a new one, written there\n",
			o->token_file);
	gp_store_close(s);
	return r < 0 ? GP_EXIT_FAIL : GP_EXIT_OK;
}

int gp_server_db_restore(const struct gp_server_options *o)
{
	char aside[PATH_MAX], err[PATH_MAX + 512];
	int tenants = 0, tasks = 0;
	int r = gp_backup_restore(o->restore_db, o->db, aside, sizeof(aside), &tenants, &tasks,
				  err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "gpupool server: --restore-db: %s\n", err);
		return GP_EXIT_FAIL;
	}
	fprintf(stderr, "gpupool server: restored %s from %s: %d tenant(s), %d task(s)%s%s%s\n",
		o->db, o->restore_db, tenants, tasks,
		aside[0] ? "; the file it replaced is kept as " : "", aside,
		aside[0] ? " (remove it once the server runs well)" : "");
	return admin_token_match(o);
}
