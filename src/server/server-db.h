/* server-db.h — the database at `gpupool server`'s start, and putting a
 * backup back (docs/install.md, "Backups and restoring").
 *
 * At start the database is opened only if it is whole: a missing file
 * makes a new database and an admin (its token written to its file); an
 * empty file, one that is not a database, and one whose check (PRAGMA
 * quick_check, or integrity_check with --db-check full) finds damage are
 * refused, with the newest backup named and the command that restores
 * it; an existing database never gets a new admin.token over the one
 * there. `--restore-db FILE` puts a backup in the database's place
 * (backup.h), keeping the file it replaces, and makes sure the admin
 * token file opens the restored database.
 *
 * Everything here says what went wrong on stderr and returns an exit
 * status of cli/commands.h. */
#ifndef GP_SERVER_SERVER_DB_H
#define GP_SERVER_SERVER_DB_H

#include "server/config.h"
#include "server/store.h"

/* Opens, checks and, for a new database, fills o->db: the admin tenant
 * made when there is none. The caller holds the database's lock and owns
 * *ret (gp_store_close). */
int gp_server_db_open(const struct gp_server_options *o, struct gp_store **ret);

/* --restore-db: o->restore_db in the place of o->db, the caller holding
 * the database's lock (no server runs on it). */
int gp_server_db_restore(const struct gp_server_options *o);

/* Says on stderr which backup to restore and how, after a message that
 * the database is damaged (at start, or found while serving). */
void gp_server_db_advise(const struct gp_server_options *o);

#endif
