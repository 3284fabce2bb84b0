/* server.h — `gpupool server`: the control plane's process. It opens the
 * store, makes the admin tenant at the first start, marks the tasks that
 * were running when it last stopped as lost (with the agent, the loop
 * adopts those that still run instead: loop.h), serves the API (api.h) on a
 * Unix socket until SIGTERM or SIGINT, and stops cleanly.
 *
 * The default paths live here so that the server and the gpupool client
 * commands agree on them; each fills a caller-owned buffer. */
#ifndef GP_SERVER_SERVER_H
#define GP_SERVER_SERVER_H

#include <stddef.h>

/* Runs the server; argc/argv start at "server". Returns the exit status
 * of cli/commands.h: 0 after a clean stop, 1 when it could not start, 2
 * for bad usage. */
int gp_cmd_server(int argc, char **argv);

/* $GPUPOOL_SOCKET; else /run/gpupool/server.sock for root; else
 * $XDG_RUNTIME_DIR/gpupool/server.sock; else /tmp/gpupool-UID/server.sock. */
void gp_server_default_socket(char *buf, size_t size);

/* $GPUPOOL_DB; else /var/lib/gpupool/gpupool.db for root; else
 * $XDG_STATE_HOME (or ~/.local/state)/gpupool/gpupool.db. */
void gp_server_default_db(char *buf, size_t size);

/* Where the admin token goes at the first start: admin.token in the
 * database's directory. */
void gp_server_admin_token_path(const char *db, char *buf, size_t size);

#endif
