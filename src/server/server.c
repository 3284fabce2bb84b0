/* server.c — the `gpupool server` command (see server.h).
 *
 * Start-up runs in order, single-threaded: lock the database (one server
 * per database), claim the socket (one server per socket), open and
 * migrate the store, make the admin tenant if there is none and write its
 * token to a 0600 file, mark the tasks left RUNNING as LOST (without the
 * agent; with it, the loop adopts what still runs), read the queue, the
 * running tasks and the tenants into the pool (pool.h), and only then
 * serve. A second server
 * started by mistake so stops before it changes anything. SIGTERM and
 * SIGINT are blocked before any thread starts, so only the main thread
 * takes them, in sigwait; it then stops the listeners (waiting for the
 * request in progress) and closes the store. */
#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/http.h"
#include "base/parse.h"
#include "base/uidrange.h"
#include "base/user.h"
#include "cli/commands.h"
#include "core/policy.h"
#include "k8s/kube-server.h"
#include "server/api.h"
#include "server/backup.h"
#include "server/bill.h"
#include "server/config.h"
#include "server/logdir.h"
#include "server/loop.h"
#include "server/server-db.h"
#include "server/store.h"

#define GRACE_MS_DEFAULT 5000
#define LOST_REASON	"server restarted; the task was not re-adopted"
#define LOST_STOPPED_REASON                                                        \
	"server restarted; the task's processes were stopped, since a new server "  \
	"cannot watch them: submit it again"

/* ---- default paths ----------------------------------------------------- */

void gp_server_default_socket(char *buf, size_t size)
{
	const char *env = getenv("GPUPOOL_SOCKET");
	const char *runtime = getenv("XDG_RUNTIME_DIR");

	if (env && *env)
		snprintf(buf, size, "%s", env);
	else if (geteuid() == 0)
		snprintf(buf, size, "/run/gpupool/server.sock");
	else if (runtime && *runtime)
		snprintf(buf, size, "%s/gpupool/server.sock", runtime);
	else
		snprintf(buf, size, "/tmp/gpupool-%u/server.sock", (unsigned)geteuid());
}

void gp_server_default_db(char *buf, size_t size)
{
	const char *env = getenv("GPUPOOL_DB");
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (env && *env)
		snprintf(buf, size, "%s", env);
	else if (geteuid() == 0)
		snprintf(buf, size, "/var/lib/gpupool/gpupool.db");
	else if (state && *state)
		snprintf(buf, size, "%s/gpupool/gpupool.db", state);
	else
		snprintf(buf, size, "%s/.local/state/gpupool/gpupool.db",
			 home ? home : ".");
}

void gp_server_admin_token_path(const char *db, char *buf, size_t size)
{
	const char *slash = strrchr(db, '/');

	if (!slash)
		snprintf(buf, size, "admin.token");
	else
		snprintf(buf, size, "%.*s/admin.token", (int)(slash - db), db);
}

/* Makes the missing directories above path, mode 0700. */
static int make_parents(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (!c)
			return 0;
		*p = c;
	}
}

/* name next to the database file: DIR/name. */
static void beside_db(const char *db, const char *name, char *buf, size_t size)
{
	const char *slash = strrchr(db, '/');

	if (!slash)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "%.*s/%s", (int)(slash - db), db, name);
}

/* Where the interposer is looked for when --shim is not given, from
 * meson.build: the install's library folder, relative to the folder of
 * the gpupool program (so that an installed tree finds its own library
 * wherever it was staged or moved), or absolute. */
#ifndef GP_SHIM_INSTALLED
#define GP_SHIM_INSTALLED "../lib/libgpushare.so"
#endif

/* Where the console's files are looked for when --ui-dir is not given,
 * likewise (the build folder's ui is a link to the checkout's). */
#ifndef GP_UI_INSTALLED
#define GP_UI_INSTALLED "../share/gpupool/ui"
#endif

/* The two places of what the server finds beside it (libgpushare.so,
 * the console's folder), in the order they are tried: next to this
 * program (a build folder holds both), then the install's. "" where this
 * program's folder is unknown. */
static void places_of(const char *name, const char *installed, char (*ret)[PATH_MAX])
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash = NULL;
	int dir;

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
	}
	dir = slash ? (int)(slash - self) : 0;
	ret[0][0] = ret[1][0] = '\0';
	if (slash)
		snprintf(ret[0], PATH_MAX, "%.*s/%s", dir, self, name);
	if (installed[0] == '/')
		snprintf(ret[1], PATH_MAX, "%s", installed);
	else if (slash)
		snprintf(ret[1], PATH_MAX, "%.*s/%s", dir, self, installed);
}

static void shim_places(char (*ret)[PATH_MAX])
{
	places_of("libgpushare.so", GP_SHIM_INSTALLED, ret);
}

/* The first of the places that is there, without ".."; "" when neither
 * is. */
static void place_default(char (*places)[PATH_MAX], char *buf, size_t size)
{
	char real[PATH_MAX];

	buf[0] = '\0';
	for (int i = 0; i < 2 && !buf[0]; i++)
		if (places[i][0] && realpath(places[i], real) && access(real, R_OK) == 0)
			snprintf(buf, size, "%s", real);
}

/* libgpushare.so, the LD_PRELOAD of every task. */
static void shim_default(char *buf, size_t size)
{
	char places[2][PATH_MAX];

	shim_places(places);
	place_default(places, buf, size);
}

/* The console's folder (docs/console.md). */
static void ui_default(char *buf, size_t size)
{
	char places[2][PATH_MAX];

	places_of("ui", GP_UI_INSTALLED, places);
	place_default(places, buf, size);
}

/* Where no libgpushare.so was found, for the messages. */
static void shim_missing(char *buf, size_t size)
{
	char places[2][PATH_MAX];

	shim_places(places);
	snprintf(buf, size,
		 "no libgpushare.so at %s or %s; tasks run without slices (nothing "
		 "limits their device memory or compute): give --shim PATH",
		 places[0][0] ? places[0] : "(this program's folder is unknown)",
		 places[1][0] ? places[1] : GP_SHIM_INSTALLED);
}

/* ---- options ------------------------------------------------------------ */

static void server_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool server [--config FILE [--check-config]] [--db PATH] [--socket PATH]\n"
		"                      [--tcp PORT] [--metrics-listen ADDR:PORT]\n"
		"                      [--ui-dir DIR] [--ui-chart-js PATH]\n"
		"                      [--admin-token-file PATH] [--queue-max N]\n"
		"                      [--tenant-queue-max N] [--metrics-token-file PATH]\n"
		"                      [--header-timeout-ms N] [--body-timeout-ms N]\n"
		"                      [--max-connections N] [--max-client-connections N]\n"
		"                      [--allowed-hosts NAMES] [--db-check quick|full]\n"
		"                      [--backup-dir DIR] [--backup-interval SECONDS]\n"
		"                      [--backup-keep N] [--restore-db FILE]\n"
		"                      [--with-agent [--shim PATH] [--run-dir DIR]\n"
		"                       [--log-dir DIR] [--log-max SIZE] [--log-total-max SIZE]\n"
		"                       [--log-free-min SIZE] [--grace-ms N]\n"
		"                       [--sample-ms N]\n"
		"                       [--util-window SECONDS] [--grow-samples N]\n"
		"                       [--cgroup auto|PATH|off] [--task-uid-base N|auto]\n"
		"                       [--task-groups LIST] [--task-env NAMES]\n"
		"                       [--task-memory-max SIZE|PCT%%|max] [--task-pids-max N|max]\n"
		"                       [--task-tmp-max SIZE|off] [--task-proc private|shared]\n"
		"                       [--verify kill|alert|off] [--verify-ms N]\n"
		"                       [--verify-slack-mib N]]\n"
		"                      [--price MODEL=PRICE]... [--overcommit [MODEL=]RATIO]...\n"
		"                      [--policy NAME] [--workload-window SECONDS]\n"
		"                      [--workload-refresh SECONDS] [--preemption off|priority]\n"
		"                      [--kubernetes [--extender-port PORT] [--kubeconfig PATH |\n"
		"                       --kube-api URL [--kube-token-file PATH]]\n"
		"                       [--scheduler-name NAME] [--workload-trace FILE]\n"
		"                       [--tie-seed N] [--placement-key FILE]]\n"
		"\n"
		"Serves the gpupool API (docs/api.md) until SIGTERM or SIGINT. At the "
		"first\n"
		"start it makes the admin tenant and writes its token to a file (mode "
		"0600).\n"
		"\n"
		"  --config FILE    options from a YAML file (docs/api.md); flags given\n"
		"                   override it\n"
		"  --check-config   read the options and the file, say what they give,\n"
		"                   and exit (0, or 2 with what is wrong)\n"
		"  --db PATH        the SQLite database (default: $GPUPOOL_DB, else\n"
		"                   /var/lib/gpupool/gpupool.db for root, else\n"
		"                   ~/.local/state/gpupool/gpupool.db)\n"
		"  --socket PATH    the Unix socket, mode 0600 (default: "
		"$GPUPOOL_SOCKET, else\n"
		"                   /run/gpupool/server.sock for root, else\n"
		"                   $XDG_RUNTIME_DIR/gpupool/server.sock)\n"
		"  --tcp PORT       also serve on 127.0.0.1:PORT, the web console at\n"
		"                   http://127.0.0.1:PORT/ui/ too (docs/console.md)\n"
		"  --ui-dir DIR     the console's files (default: ui next to the gpupool\n"
		"                   program, else the install's)\n"
		"  --ui-chart-js PATH\n"
		"                   the charting library the console loads (default:\n"
		"                   Debian's libjs-chart.js, " GP_UI_CHART_JS ")\n"
		"  --metrics-listen ADDR:PORT\n"
		"                   also serve /metrics alone on ADDR (0.0.0.0 or\n"
		"                   127.0.0.1):PORT, for Prometheus (with --kubernetes,\n"
		"                   the extender's figures too)\n"
		"  --admin-token-file PATH\n"
		"                   where the admin token is written at the first start\n"
		"                   (default: admin.token next to the database)\n"
		"  --queue-max N    refuse submissions (503) while N tasks are queued\n"
		"                   (default %d)\n"
		"  --tenant-queue-max N\n"
		"                   refuse a tenant's submissions (503) while N of its\n"
		"                   tasks are queued (default %d, at most --queue-max)\n"
		"  --metrics-token-file PATH\n"
		"                   a file (mode 0600) whose one line is a token that\n"
		"                   reads every series of /metrics (for Prometheus);\n"
		"                   without a token /metrics has the pool's series only\n"
		"  --header-timeout-ms N\n"
		"                   close a connection whose request headers are not all\n"
		"                   in N ms after it opened, however slowly they come\n"
		"                   (default %d)\n"
		"  --body-timeout-ms N\n"
		"                   close a connection whose body is not in and answered\n"
		"                   N ms after its headers (default %d)\n"
		"  --max-connections N\n"
		"                   open connections on TCP, and on the socket; more are\n"
		"                   answered 503 (default %d)\n"
		"  --max-client-connections N\n"
		"                   open connections of one client (its address, and on\n"
		"                   loopback or the socket its uid); more are answered\n"
		"                   503 (default %d)\n"
		"  --allowed-hosts NAMES\n"
		"                   more names a request on TCP may give in its Host\n"
		"                   header, comma-separated, besides localhost, 127.0.0.1,\n"
		"                   [::1] and this machine's name; another is answered 421\n"
		"                   (a web page that reaches the port by a name of its own:\n"
		"                   DNS rebinding)\n"
		"  --db-check quick|full\n"
		"                   the database's check at start: PRAGMA quick_check, or\n"
		"                   integrity_check (slower; indexes too) (default quick);\n"
		"                   a damaged database is refused, naming the backup to\n"
		"                   restore\n"
		"  --backup-dir DIR where the database's backups go (default: backups/\n"
		"                   next to the database)\n"
		"  --backup-interval SECONDS\n"
		"                   a backup at start and then every SECONDS (default %d;\n"
		"                   0: none)\n"
		"  --backup-keep N  how many backups are kept, the newest (default %d)\n"
		"  --restore-db FILE\n"
		"                   put the backup FILE in the place of the database (the\n"
		"                   file it replaces is kept beside it), then exit\n"
		"  --with-agent     also be this machine's agent: discover its devices\n"
		"                   (NVML; simdev's when GPUPOOL_SIM_DEVICES is set), run\n"
		"                   the scheduling loop and start the tasks\n"
		"  --shim PATH      libgpushare.so preloaded into tasks (default: the one\n"
		"                   next to the gpupool program, else the install's,\n"
		"                   %s%s, when there)\n"
		"  --run-dir DIR    where the shim's regions live (default: its own)\n"
		"  --log-dir DIR    task logs, task-ID.log (default: logs/ next to the\n"
		"                   database); on a filesystem of their own, logs can\n"
		"                   never fill the database's\n"
		"  --log-max SIZE   the most kept of each task's log, 1M to 1T (default\n"
		"                   64M): past it the oldest part is dropped (task-ID.log\n"
		"                   rotates to task-ID.log.1 at half of it), with a\n"
		"                   warning alert\n"
		"  --log-total-max SIZE\n"
		"                   the most all logs together keep on disk (default 4G;\n"
		"                   0: no cap): past it the oldest logs of ended tasks are\n"
		"                   removed (`gpupool logs` says so)\n"
		"  --log-free-min SIZE\n"
		"                   the space kept free where the logs are (default 256M;\n"
		"                   0: none): below it no output is written, the oldest\n"
		"                   logs of ended tasks are removed, and new tasks wait in\n"
		"                   the queue, saying why, until there is room\n"
		"  --grace-ms N     from SIGTERM to SIGKILL when a task is preempted or\n"
		"                   cancelled (default %d)\n"
		"  --cgroup auto|PATH|off\n"
		"                   a cgroup (v2) per task, so that what it starts (setsid,\n"
		"                   daemons) stays its own and stops with it (default auto:\n"
		"                   under the server's own cgroup; off: process groups)\n"
		"  --task-uid-base N|auto\n"
		"                   as root, a tenant without a Unix user runs as uid and\n"
		"                   gid N + its id; N is the group of every task (default\n"
		"                   %d). A server is refused a range another running\n"
		"                   server holds (" GP_UIDRANGE_DIR "); auto takes the\n"
		"                   first free one, which may change between starts\n"
		"  --task-groups LIST\n"
		"                   more groups for every task, e.g. video,render (for\n"
		"                   device files that are not world-writable)\n"
		"  --task-env NAMES what tasks get of the server's environment: names, or\n"
		"                   NAME* for a prefix (default \"%s\")\n"
		"  --task-memory-max SIZE|PCT%%|max\n"
		"                   the host memory each task's processes may hold, its\n"
		"                   cgroup's memory.max (no swap past it; the kernel kills\n"
		"                   the task past it, which fails saying so): a size, a\n"
		"                   share of this machine's memory, or max for none\n"
		"                   (default %d%%)\n"
		"  --task-pids-max N|max\n"
		"                   the processes and threads each task may have at once,\n"
		"                   its cgroup's pids.max: a fork past it fails (default %d)\n"
		"  --task-tmp-max SIZE|off\n"
		"                   as root, each task gets its own /tmp, /dev/shm and, for a\n"
		"                   tenant without a home of its own, $HOME, in memory\n"
		"                   (tmpfs), each at most SIZE, gone when it ends (default\n"
		"                   1G; off: the machine's /tmp and /dev/shm, kept)\n"
		"  --task-proc private|shared\n"
		"                   as root, private: each task gets a /proc of its own\n"
		"                   that shows its user's processes only (hidepid), so no\n"
		"                   tenant reads another's command lines; shared: the\n"
		"                   machine's (default private)\n"
		"  --verify kill|alert|off\n"
		"                   what the verifier does with a device process over its\n"
		"                   slice, without the interposer, or of no task (default\n"
		"                   kill: alert, kill it, fail its task)\n"
		"  --verify-ms N    between two checks of the devices, on average: each\n"
		"                   wait is drawn from N/2 to 3N/2 (default %d)\n"
		"  --verify-slack-mib N\n"
		"                   memory a task may hold on a device beyond its slice, for\n"
		"                   the driver's own (CUDA contexts; default %d)\n"
		"  --overcommit [MODEL=]RATIO\n"
		"                   compute that may be handed out of a device (of that\n"
		"                   model), 1.0 to 1.5 (default 1.0; memory never)\n"
		"  --policy NAME    the placement policy of the scheduling loop, one of\n"
		"                   `gpupool policies` (default \"%s\")\n"
		"  --workload-window SECONDS\n"
		"                   fgd and default place against the shapes of the tasks\n"
		"                   submitted in the last SECONDS (default %d)\n"
		"  --workload-refresh SECONDS\n"
		"                   ... made again every SECONDS (default %d)\n"
		"  --preemption off|priority\n"
		"                   priority: a queued task that fits nowhere preempts\n"
		"                   running work of a lower priority (never a hard slice\n"
		"                   within its tenant's guarantee); off (the default):\n"
		"                   priority only orders the queue\n"
		"  --sample-ms N    usage sampling period, for metering, metrics and\n"
		"                   alerts (default %d)\n"
		"  --util-window SECONDS\n"
		"                   a device whose utilization averaged over this long\n"
		"                   is below 30 %% raises an info alert (default %d)\n"
		"  --grow-samples N a task whose memory rose in each of the last N\n"
		"                   samplings raises a warning (default %d)\n"
		"  --price MODEL=PRICE\n"
		"                   price of one hour of a whole device that answers\n"
		"                   to MODEL (as --model: A10 is not an A100), for bills;\n"
		"                   repeatable, e.g. --price A100=2.50 --price T4=0.35\n"
		"  --kubernetes     be the scheduler extender of a Kubernetes cluster\n"
		"                   (docs/kubernetes.md): kube-scheduler's filter,\n"
		"                   prioritize and bind on 127.0.0.1:PORT/extender/, the\n"
		"                   cluster's Nodes and Pods watched, namespaces' quotas\n"
		"                   from the tenants of the same name (not with\n"
		"                   --with-agent: pods are the tasks)\n"
		"  --extender-port PORT\n"
		"                   the extender's port on 127.0.0.1 (default 8787)\n"
		"  --kubeconfig PATH\n"
		"                   the API server and credentials (default: $KUBECONFIG,\n"
		"                   else the pod's service account)\n"
		"  --kube-api URL   the API server's address instead (with\n"
		"                   --kube-token-file PATH for a bearer token)\n"
		"  --scheduler-name NAME\n"
		"                   pods of this scheduler are gpupool's to bind\n"
		"                   (default: any that reaches the extender)\n"
		"  --workload-trace FILE\n"
		"                   default and fgd place against the shapes of this\n"
		"                   openb pod list, not of the pods placed so far\n"
		"  --tie-seed N     the order in which equal nodes are taken (default 1)\n"
		"  --placement-key FILE\n"
		"                   the key placements are sealed with, which the node\n"
		"                   programs check (default\n"
		"                   /etc/gpupool/placement-key/key, the Secret\n"
		"                   gpupool-placement-key)\n",
		GP_API_QUEUE_MAX, GP_API_TENANT_QUEUE_MAX, GP_HTTP_HEADER_TIMEOUT_MS,
		GP_HTTP_BODY_TIMEOUT_MS, GP_HTTP_CONNECTIONS_MAX,
		GP_HTTP_CLIENT_CONNECTIONS_MAX, GP_BACKUP_INTERVAL_S, GP_BACKUP_KEEP,
		GP_SHIM_INSTALLED,
		GP_SHIM_INSTALLED[0] == '/' ? "" : "\n                   from the program's folder",
		GRACE_MS_DEFAULT, GP_USER_AUTO_BASE,
		GP_AGENT_TASK_ENV, GP_CONFIG_TASK_MEMORY_PCT, GP_CONFIG_TASK_PIDS_MAX,
		GP_AGENT_VERIFY_MS, GP_AGENT_SLACK_MIB, GP_LOOP_POLICY,
		GP_LOOP_WORKLOAD_WINDOW_S, GP_LOOP_WORKLOAD_REFRESH_S, GP_LOOP_SAMPLE_MS,
		GP_LOOP_UTIL_WINDOW_S, GP_LOOP_GROW_SAMPLES);
}


/* --price MODEL=PRICE, one more (or a new price for a model given). */
static int parse_price(struct gp_server_options *o, const char *value)
{
	struct gp_price p;
	char err[256];

	if (gp_price_parse(value, &p, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpupool server: --price %s\n", err);
		return -EINVAL;
	}
	if (gp_config_price_set(o, &p) < 0) {
		fprintf(stderr, "gpupool server: --price: at most %d prices\n",
			GP_PRICES_MAX);
		return -EINVAL;
	}
	return 0;
}

/* A whole number option from lo to hi; says which when it is not. */
static int parse_range(const char *flag, const char *value, unsigned lo, unsigned hi,
		       unsigned *ret)
{
	if (gp_parse_uint(value, lo, hi, NULL, ret))
		return 0;
	fprintf(stderr,
		"gpupool server: --%s \"%s\" must be a whole number from %u to %u\n",
		flag, value, lo, hi);
	return -EINVAL;
}

/* --overcommit RATIO (every device) or MODEL=RATIO, 1.0 to 1.5. */
static int parse_overcommit(struct gp_server_options *o, const char *value)
{
	const char *eq = strchr(value, '=');
	char model[sizeof(o->loop.overcommit[0].model)];
	unsigned permille;
	int r;

	if (!gp_config_ratio_parse(eq ? eq + 1 : value, &permille) || eq == value ||
	    (eq && (size_t)(eq - value) >= sizeof(model))) {
		fprintf(stderr,
			"gpupool server: --overcommit \"%s\": give RATIO or MODEL=RATIO, the "
			"ratio from 1.0 to 1.5 (compute only; memory is never overcommitted)\n",
			value);
		return -EINVAL;
	}
	snprintf(model, sizeof(model), "%.*s", eq ? (int)(eq - value) : 0, value);
	r = gp_config_overcommit_set(o, model, permille);
	if (r < 0)
		fprintf(stderr, "gpupool server: --overcommit: at most %d\n",
			GP_LOOP_OVERCOMMITS_MAX);
	return r;
}

/* --policy NAME, --workload-window, --workload-refresh, --preemption. */
static int parse_scheduling(struct gp_server_options *o, int c, const char *value)
{
	char list[256];

	if (c == 1103) {
		if (gp_config_choice(gp_config_preemption_names, value, &o->loop.preemption))
			return 0;
		fprintf(stderr, "gpupool server: --preemption \"%s\" must be off or priority\n",
			value);
		return -EINVAL;
	}
	if (c == 1101)
		return parse_range("workload-window", value, GP_CONFIG_WORKLOAD_WINDOW_MIN,
				   GP_CONFIG_WORKLOAD_WINDOW_LIMIT, &o->loop.workload_window_s);
	if (c == 1102)
		return parse_range("workload-refresh", value, 1, GP_CONFIG_WORKLOAD_REFRESH_LIMIT,
				   &o->loop.workload_refresh_s);
	if (gp_config_policy_set(o, value, list, sizeof(list)) == 0)
		return 0;
	fprintf(stderr,
		"gpupool server: --policy \"%s\" is not a policy; give one of: %s (gpupool "
		"policies says what each does)\n",
		value, list);
	return -EINVAL;
}

static int parse_monitoring(struct gp_server_options *o, int c, const char *value)
{
	switch (c) {
	case 'O': return parse_overcommit(o, value);
	case 'P': return parse_price(o, value);
	case 'M':
		return parse_range("sample-ms", value, GP_CONFIG_SAMPLE_MS_MIN,
				   GP_CONFIG_SAMPLE_MS_LIMIT, &o->loop.sample_ms);
	case 'W':
		return parse_range("util-window", value, 1, GP_CONFIG_UTIL_WINDOW_LIMIT,
				   &o->loop.util_window_s);
	case 'G':
		return parse_range("grow-samples", value, 1, GP_METER_GROW_MAX,
				   &o->loop.grow_samples);
	}
	return -EINVAL;
}

/* --task-memory-max, --task-pids-max, --task-tmp-max, --task-proc. */
static int parse_task_limit(struct gp_server_options *o, int c, const char *value)
{
	if (c == 1007 && gp_config_task_memory_parse(value, &o->task_memory_max))
		return 0;
	if (c == 1008 && gp_config_task_pids_parse(value, &o->task_pids_max))
		return 0;
	if (c == 1009 && gp_config_task_tmp_parse(value, &o->task_tmp_max))
		return 0;
	if (c == 1010 && gp_config_choice(gp_config_proc_names, value, &o->task_proc))
		return 0;
	if (c == 1007)
		fprintf(stderr,
			"gpupool server: --task-memory-max \"%s\" must be max, a share of this "
			"machine's memory like 50%%, or a size from 16M to 1T like 8G\n",
			value);
	else if (c == 1008)
		fprintf(stderr,
			"gpupool server: --task-pids-max \"%s\" must be max or a whole number "
			"from %d to %d\n",
			value, GP_CONFIG_TASK_PIDS_MIN, GP_CONFIG_TASK_PIDS_LIMIT);
	else if (c == 1009)
		fprintf(stderr,
			"gpupool server: --task-tmp-max \"%s\" must be off or a size from 1M to "
			"1T like 1G\n",
			value);
	else
		fprintf(stderr, "gpupool server: --task-proc \"%s\" must be private or shared\n",
			value);
	return -EINVAL;
}

/* The options of tasks' isolation and the verifier (codes from 1000). */
static int parse_isolation(struct gp_server_options *o, int c, const char *value)
{
	switch (c) {
	case 1000: snprintf(o->cgroup, sizeof(o->cgroup), "%s", value); return 0;
	case 1001:
		if (gp_config_uid_base_parse(value, &o->task_uid_base))
			return 0;
		fprintf(stderr,
			"gpupool server: --task-uid-base \"%s\" must be auto or a whole number "
			"from %u to %u\n",
			value, GP_CONFIG_UID_BASE_MIN, GP_CONFIG_UID_BASE_LIMIT);
		return -EINVAL;
	case 1002: snprintf(o->task_groups, sizeof(o->task_groups), "%s", value); return 0;
	case 1003: snprintf(o->task_env, sizeof(o->task_env), "%s", value); return 0;
	case 1004:
		if (gp_config_choice(gp_config_verify_names, value, &o->verify))
			return 0;
		fprintf(stderr, "gpupool server: --verify \"%s\" must be kill, alert or off\n",
			value);
		return -EINVAL;
	case 1005:
		return parse_range("verify-ms", value, GP_CONFIG_VERIFY_MS_MIN,
				   GP_CONFIG_VERIFY_MS_LIMIT, &o->verify_ms);
	case 1006:
		return parse_range("verify-slack-mib", value, 0, GP_CONFIG_SLACK_MIB_LIMIT,
				   &o->verify_slack_mib);
	}
	return parse_task_limit(o, c, value);
}

/* The deadlines and bounds of the API (docs/api.md, "Limits under
 * abuse"). */
static int parse_limits(struct gp_server_options *o, int c, const char *value)
{
	switch (c) {
	case 'T':
		return parse_range("tenant-queue-max", value, 1,
				   GP_CONFIG_QUEUE_MAX_LIMIT, &o->tenant_queue_max);
	case 'H':
		return parse_range("header-timeout-ms", value, GP_CONFIG_TIMEOUT_MS_MIN,
				   GP_CONFIG_TIMEOUT_MS_LIMIT, &o->header_timeout_ms);
	case 'B':
		return parse_range("body-timeout-ms", value, GP_CONFIG_TIMEOUT_MS_MIN,
				   GP_CONFIG_TIMEOUT_MS_LIMIT, &o->body_timeout_ms);
	case 'N':
		return parse_range("max-connections", value, 1,
				   GP_CONFIG_CONNECTIONS_LIMIT, &o->max_connections);
	case 'n':
		return parse_range("max-client-connections", value, 1,
				   GP_CONFIG_CONNECTIONS_LIMIT,
				   &o->max_client_connections);
	case 'm':
		snprintf(o->metrics_token_file, sizeof(o->metrics_token_file), "%s",
			 value);
		return 0;
	}
	return -EINVAL;
}

/* --kubernetes and what goes with it (src/k8s/kube-server.h). */
static int parse_kube(struct gp_server_kube *k, int c, const char *value)
{
	char *end;

	switch (c) {
	case 1201:
		if (gp_parse_uint(value, 1, 65535, NULL, &k->port))
			return 0;
		fprintf(stderr, "gpupool server: --extender-port \"%s\" must be a port from 1 "
				"to 65535\n", value);
		return -EINVAL;
	case 1202: snprintf(k->kubeconfig, sizeof(k->kubeconfig), "%s", value); return 0;
	case 1203: snprintf(k->api_url, sizeof(k->api_url), "%s", value); return 0;
	case 1204: snprintf(k->token_file, sizeof(k->token_file), "%s", value); return 0;
	case 1205: snprintf(k->scheduler_name, sizeof(k->scheduler_name), "%s", value); return 0;
	case 1206: snprintf(k->workload_trace, sizeof(k->workload_trace), "%s", value); return 0;
	case 1208: snprintf(k->placement_key, sizeof(k->placement_key), "%s", value); return 0;
	case 1207:
		errno = 0;
		k->tie_seed = strtoull(value, &end, 10);
		if (errno == 0 && *value >= '0' && *value <= '9' && !*end)
			return 0;
		fprintf(stderr, "gpupool server: --tie-seed \"%s\" must be a whole number\n", value);
		return -EINVAL;
	}
	k->on = true;
	return 0;
}

/* --log-total-max, --log-free-min: 0 (none) or a size. */
static int parse_log_space(struct gp_server_options *o, int c, const char *value)
{
	if (gp_config_log_space_parse(value, c == 1510 ? &o->log_total_max : &o->log_free_min))
		return 0;
	fprintf(stderr,
		"gpupool server: --%s \"%s\" must be 0 (none) or a size from 1M to 1024T, like "
		"%s\n",
		c == 1510 ? "log-total-max" : "log-free-min", value, c == 1510 ? "4G" : "256M");
	return -EINVAL;
}

/* --metrics-listen 0.0.0.0:PORT or 127.0.0.1:PORT. */
static int parse_metrics_listen(struct gp_server_options *o, const char *value)
{
	if (gp_config_listen_parse(value, o))
		return 0;
	fprintf(stderr, "gpupool server: --metrics-listen \"%s\" must be 0.0.0.0:PORT or "
			"127.0.0.1:PORT\n", value);
	return -EINVAL;
}

/* The Host names, the database's check, its backups (codes from 1500). */
static int parse_database(struct gp_server_options *o, int c, const char *value)
{
	char why[256];

	switch (c) {
	case 1500:
		if (!gp_config_hosts_check(value, why, sizeof(why))) {
			fprintf(stderr, "gpupool server: --allowed-hosts: %s\n", why);
			return -EINVAL;
		}
		snprintf(o->allowed_hosts, sizeof(o->allowed_hosts), "%s", value);
		return 0;
	case 1501:
		if (gp_config_choice(gp_config_db_check_names, value, &o->db_check))
			return 0;
		fprintf(stderr, "gpupool server: --db-check \"%s\" must be quick or full\n",
			value);
		return -EINVAL;
	case 1502: snprintf(o->backup_dir, sizeof(o->backup_dir), "%s", value); return 0;
	case 1503:
		return parse_range("backup-interval", value, 0, GP_CONFIG_BACKUP_INTERVAL_LIMIT,
				   &o->backup_interval_s);
	case 1504:
		return parse_range("backup-keep", value, 1, GP_BACKUP_KEEP_LIMIT,
				   &o->backup_keep);
	case 1505: snprintf(o->restore_db, sizeof(o->restore_db), "%s", value); return 0;
	}
	return -EINVAL;
}

static int parse_value(struct gp_server_options *o, int c, const char *value)
{
	if (c >= 1500 && c <= 1505)
		return parse_database(o, c, value);
	if (c == 1300)
		return parse_metrics_listen(o, value);
	if (c == 1510 || c == 1511)
		return parse_log_space(o, c, value);
	if (c == 1400 || c == 1401) {
		char *to = c == 1400 ? o->ui_dir : o->ui_chart_js;

		snprintf(to, PATH_MAX, "%s", value);
		return 0;
	}
	if (c / 100 == 12)              /* 12xx: --kubernetes and its options */
		return parse_kube(&o->kube, c, value);
	if (c >= 1000 && c <= 1010)
		return parse_isolation(o, c, value);
	if (c >= 1100 && c <= 1103)
		return parse_scheduling(o, c, value);
	switch (c) {
	case 'P':
	case 'O':
	case 'M':
	case 'W':
	case 'G': return parse_monitoring(o, c, value);
	case 'T':
	case 'H':
	case 'B':
	case 'N':
	case 'n':
	case 'm': return parse_limits(o, c, value);
	case 'd': snprintf(o->db, sizeof(o->db), "%s", value); return 0;
	case 's': snprintf(o->socket, sizeof(o->socket), "%s", value); return 0;
	case 'a': snprintf(o->token_file, sizeof(o->token_file), "%s", value); return 0;
	case 't':
		if (gp_parse_uint(value, 1, 65535, NULL, &o->tcp_port))
			return 0;
		fprintf(stderr,
			"gpupool server: --tcp \"%s\" must be a port from 1 to 65535\n",
			value);
		return -EINVAL;
	case 'S': snprintf(o->shim, sizeof(o->shim), "%s", value); return 0;
	case 'r': snprintf(o->run_dir, sizeof(o->run_dir), "%s", value); return 0;
	case 'l': snprintf(o->log_dir, sizeof(o->log_dir), "%s", value); return 0;
	case 'L':
		if (gp_config_log_max_parse(value, &o->log_max))
			return 0;
		fprintf(stderr,
			"gpupool server: --log-max \"%s\" must be a size from 1M to 1T, like "
			"64M or 1G\n",
			value);
		return -EINVAL;
	case 'g':
		if (gp_parse_uint(value, 0, GP_CONFIG_GRACE_MS_LIMIT, NULL, &o->grace_ms))
			return 0;
		fprintf(stderr,
			"gpupool server: --grace-ms \"%s\" must be milliseconds from 0 to "
			"%d\n",
			value, GP_CONFIG_GRACE_MS_LIMIT);
		return -EINVAL;
	case 'q':
		if (gp_parse_uint(value, 1, GP_CONFIG_QUEUE_MAX_LIMIT, NULL, &o->queue_max))
			return 0;
		fprintf(stderr,
			"gpupool server: --queue-max \"%s\" must be a whole number from "
			"1 to %d\n",
			value, GP_CONFIG_QUEUE_MAX_LIMIT);
		return -EINVAL;
	}
	return -EINVAL;
}

/* The flags; getopt_long reads them twice (load_config, parse_options). */
static const struct option server_flags[] = {
	{"db", required_argument, NULL, 'd'},
	{"socket", required_argument, NULL, 's'},
	{"tcp", required_argument, NULL, 't'},
	{"admin-token-file", required_argument, NULL, 'a'},
	{"queue-max", required_argument, NULL, 'q'},
	{"tenant-queue-max", required_argument, NULL, 'T'},
	{"metrics-token-file", required_argument, NULL, 'm'},
	{"header-timeout-ms", required_argument, NULL, 'H'},
	{"body-timeout-ms", required_argument, NULL, 'B'},
	{"max-connections", required_argument, NULL, 'N'},
	{"max-client-connections", required_argument, NULL, 'n'},
	{"allowed-hosts", required_argument, NULL, 1500},
	{"db-check", required_argument, NULL, 1501},
	{"backup-dir", required_argument, NULL, 1502},
	{"backup-interval", required_argument, NULL, 1503},
	{"backup-keep", required_argument, NULL, 1504},
	{"restore-db", required_argument, NULL, 1505},
	{"with-agent", no_argument, NULL, 'A'},
	{"shim", required_argument, NULL, 'S'},
	{"run-dir", required_argument, NULL, 'r'},
	{"log-dir", required_argument, NULL, 'l'},
	{"log-max", required_argument, NULL, 'L'},
	{"log-total-max", required_argument, NULL, 1510},
	{"log-free-min", required_argument, NULL, 1511},
	{"grace-ms", required_argument, NULL, 'g'},
	{"cgroup", required_argument, NULL, 1000},
	{"task-uid-base", required_argument, NULL, 1001},
	{"task-groups", required_argument, NULL, 1002},
	{"task-env", required_argument, NULL, 1003},
	{"verify", required_argument, NULL, 1004},
	{"verify-ms", required_argument, NULL, 1005},
	{"verify-slack-mib", required_argument, NULL, 1006},
	{"task-memory-max", required_argument, NULL, 1007},
	{"task-pids-max", required_argument, NULL, 1008},
	{"task-tmp-max", required_argument, NULL, 1009},
	{"task-proc", required_argument, NULL, 1010},
	{"sample-ms", required_argument, NULL, 'M'},
	{"util-window", required_argument, NULL, 'W'},
	{"grow-samples", required_argument, NULL, 'G'},
	{"metrics-listen", required_argument, NULL, 1300},
	{"ui-dir", required_argument, NULL, 1400},
	{"ui-chart-js", required_argument, NULL, 1401},
	{"kubernetes", no_argument, NULL, 1200},
	{"extender-port", required_argument, NULL, 1201},
	{"kubeconfig", required_argument, NULL, 1202},
	{"kube-api", required_argument, NULL, 1203},
	{"kube-token-file", required_argument, NULL, 1204},
	{"scheduler-name", required_argument, NULL, 1205},
	{"workload-trace", required_argument, NULL, 1206},
	{"tie-seed", required_argument, NULL, 1207},
	{"placement-key", required_argument, NULL, 1208},
	{"policy", required_argument, NULL, 1100},
	{"workload-window", required_argument, NULL, 1101},
	{"workload-refresh", required_argument, NULL, 1102},
	{"preemption", required_argument, NULL, 1103},
	{"price", required_argument, NULL, 'P'},
	{"overcommit", required_argument, NULL, 'O'},
	{"config", required_argument, NULL, 'C'},
	{"check-config", no_argument, NULL, 'K'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

/* --config FILE, read before the other flags so that they override it
 * (not for --help). Returns 0 or -EINVAL (the message is out). */
static int load_config(int argc, char **argv, struct gp_server_options *o)
{
	const char *path = NULL;
	char err[PATH_MAX + 512];
	int c;

	opterr = 0;
	optind = 0; /* a full restart: argv is read twice */
	while ((c = getopt_long(argc, argv, ":h", server_flags, NULL)) != -1) {
		if (c == 'h')
			return 0;
		if (c == 'C')
			path = optarg;
	}
	if (!path || gp_config_load(path, o, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "gpupool server: %s\n", err);
	return -EINVAL;
}

/* Returns 1 for --help, 0, or -EINVAL (the message is out). */
static int parse_options(int argc, char **argv, struct gp_server_options *o)
{
	int c;

	if (load_config(argc, argv, o) < 0)
		return -EINVAL;
	opterr = 0;
	optind = 0; /* a full restart: argv is read twice */
	while ((c = getopt_long(argc, argv, ":h", server_flags, NULL)) != -1) {
		if (c == 'h') {
			server_usage(stdout);
			return 1;
		}
		if (c == 'A' || c == 'C' || c == 'K') {
			o->with_agent |= c == 'A';
			o->check_only |= c == 'K';
			continue;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr,
				"gpupool server: %s \"%s\" (gpupool server --help lists "
				"the options)\n",
				c == '?' ? "unknown option" : "missing value for",
				argv[optind - 1]);
			return -EINVAL;
		}
		if (parse_value(o, c, optarg) < 0)
			return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "gpupool server: takes no arguments, got \"%s\"\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void options_default(struct gp_server_options *o)
{
	if (!o->db[0])
		gp_server_default_db(o->db, sizeof(o->db));
	if (!o->socket[0])
		gp_server_default_socket(o->socket, sizeof(o->socket));
	if (!o->token_file[0])
		gp_server_admin_token_path(o->db, o->token_file, sizeof(o->token_file));
	if (!o->log_dir[0])
		beside_db(o->db, "logs", o->log_dir, sizeof(o->log_dir));
	if (!o->backup_dir[0])
		beside_db(o->db, "backups", o->backup_dir, sizeof(o->backup_dir));
	if (!o->shim[0])
		shim_default(o->shim, sizeof(o->shim));
	if (!o->ui_dir[0])
		ui_default(o->ui_dir, sizeof(o->ui_dir));
	if (!o->ui_chart_js[0])
		snprintf(o->ui_chart_js, sizeof(o->ui_chart_js), "%s", GP_UI_CHART_JS);
	if (!o->task_memory_max)
		o->task_memory_max = gp_config_machine_share(GP_CONFIG_TASK_MEMORY_PCT);
	if (!o->task_memory_max) /* this machine's memory is not known */
		o->task_memory_max = GP_CONFIG_NONE;
	if (!o->task_pids_max)
		o->task_pids_max = GP_CONFIG_TASK_PIDS_MAX;
	if (!o->task_tmp_max)
		o->task_tmp_max = GP_CONFIG_TASK_TMP_MAX;
}

/* One bound within another: unset, it is its default lowered to fit;
 * given above the other, it is refused, since it could never be
 * reached. */
static int bound_within(unsigned *v, unsigned dflt, const char *flag, unsigned outer,
			const char *outer_flag)
{
	if (*v > outer) {
		fprintf(stderr,
			"gpupool server: --%s %u is over --%s %u, so it could never be "
			"reached; give at most %u, or raise --%s\n",
			flag, *v, outer_flag, outer, outer, outer_flag);
		return -EINVAL;
	}
	if (!*v)
		*v = dflt < outer ? dflt : outer;
	return 0;
}

static int options_check(struct gp_server_options *o)
{
	if (o->kube.on && o->with_agent) {
		fprintf(stderr, "gpupool server: --kubernetes and --with-agent do not go together: on "
				"Kubernetes pods are the tasks and `gpupool node` is each node's agent\n");
		return GP_EXIT_USAGE;
	}
	if (!o->kube.on && (o->kube.port || o->kube.api_url[0] || o->kube.kubeconfig[0] ||
			    o->kube.workload_trace[0] || o->kube.scheduler_name[0] ||
			    o->kube.placement_key[0])) {
		fprintf(stderr, "gpupool server: the Kubernetes options need --kubernetes\n");
		return GP_EXIT_USAGE;
	}
	if (bound_within(&o->tenant_queue_max, GP_API_TENANT_QUEUE_MAX,
			 "tenant-queue-max", o->queue_max, "queue-max") < 0 ||
	    bound_within(&o->max_client_connections, GP_HTTP_CLIENT_CONNECTIONS_MAX,
			 "max-client-connections", o->max_connections,
			 "max-connections") < 0)
		return GP_EXIT_USAGE;
	return GP_EXIT_OK;
}

/* Why a scrape token (its n bytes at text, its newline gone) is no good;
 * NULL when it is one. */
static const char *token_flaw(const char *text, size_t n)
{
	if (memchr(text, '\n', n))
		return "it holds more than one line; keep the token alone on the first";
	if (n < GP_API_METRICS_TOKEN_MIN)
		return "the token is shorter than 16 characters; make a longer one "
		       "(openssl rand -hex 32)";
	if (n > GP_API_METRICS_TOKEN_MAX)
		return "the token is longer than 256 characters; make a shorter one";
	for (size_t i = 0; i < n; i++)
		if (text[i] < '!' || text[i] > '~')
			return "the token has a space or a byte that is not printable "
			       "ASCII; a bearer token is one word";
	return NULL;
}

/* --metrics-token-file: the scrape token, alone on the file's one line,
 * into buf (GP_API_METRICS_TOKEN_MAX + 1 bytes). The file must be the
 * server user's alone: a token that others can read is no secret. */
static int metrics_token_read(const char *path, char *buf)
{
	char text[GP_API_METRICS_TOKEN_MAX + 3], why[160] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	ssize_t n = -1;

	if (fd < 0 || fstat(fd, &st) < 0)
		snprintf(why, sizeof(why), "cannot read it: %s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(why, sizeof(why),
			 "not a regular file; give the file that holds the token");
	else if (st.st_mode & 077)
		snprintf(why, sizeof(why),
			 "its mode %03o lets others than its owner read it; chmod 600 it",
			 (unsigned)(st.st_mode & 0777));
	else if ((n = read(fd, text, sizeof(text) - 1)) < 0)
		snprintf(why, sizeof(why), "cannot read it: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	if (n >= 0) {
		if (n > 0 && text[n - 1] == '\n')
			n--;
		if (n > 0 && text[n - 1] == '\r')
			n--;
		if (token_flaw(text, (size_t)n))
			snprintf(why, sizeof(why), "%s", token_flaw(text, (size_t)n));
	}
	if (why[0]) {
		fprintf(stderr, "gpupool server: --metrics-token-file %s: %s\n", path,
			why);
		return GP_EXIT_USAGE;
	}
	memcpy(buf, text, (size_t)n);
	buf[n] = '\0';
	return GP_EXIT_OK;
}

/* ---- start-up ------------------------------------------------------------ */


/* One server per database: DB.lock stays locked while this one runs,
 * and the kernel lets go of it when the process ends, however it ends. */
static int db_lock(const struct gp_server_options *o, int *ret_fd)
{
	char path[PATH_MAX + 8];
	int r = make_parents(o->db), fd = -1;

	snprintf(path, sizeof(path), "%s.lock", o->db);
	if (r == 0 && (fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		r = -errno;
	if (r == 0 && flock(fd, LOCK_EX | LOCK_NB) < 0)
		r = -errno;
	if (r < 0) {
		fprintf(stderr, "gpupool server: %s%s: %s\n",
			r == -EWOULDBLOCK ? "another gpupool server uses "
					  : "cannot lock ",
			o->db, r == -EWOULDBLOCK ? "stop it first" : strerror(-r));
		if (fd >= 0)
			close(fd);
		return GP_EXIT_FAIL;
	}
	*ret_fd = fd;
	return GP_EXIT_OK;
}

/* --restore-db FILE: the backup in the database's place, under the
 * database's lock (no server may run on it meanwhile), then exit. */
static int db_restore(const struct gp_server_options *o)
{
	int fd = -1, status = db_lock(o, &fd);

	if (status == GP_EXIT_OK)
		status = gp_server_db_restore(o);
	if (fd >= 0)
		close(fd);
	return status;
}

/* Is the task's process group still there, its leader the task's? The
 * leader is the task's keeper, whose name says whose it is (agent.h), or
 * (a task of an older server) its shell, whose environment names the
 * task: a recycled pid is never taken for it. */
static bool task_still_runs(const struct gp_task *t)
{
	char path[64], want[64], env[65536];
	ssize_t n;
	int fd;

	if (t->pid <= 0 || getpgid((pid_t)t->pid) != (pid_t)t->pid)
		return false;
	if (gp_agent_keeper_alive((pid_t)t->pid, t->id))
		return true;
	snprintf(path, sizeof(path), "/proc/%lld/environ", (long long)t->pid);
	snprintf(want, sizeof(want), "GPUPOOL_TASK_ID=task-%lld", (long long)t->id);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, env, sizeof(env) - 1);
	close(fd);
	if (n <= 0)
		return false;
	env[n] = '\0';
	for (char *e = env; e < env + n; e += strlen(e) + 1)
		if (strcmp(e, want) == 0)
			return true;
	return false;
}

/* A task left running: lost. Its processes, if they still run, are
 * stopped — a new server cannot watch them (they are not its children),
 * and they would hold their slice with nobody accounting for it. */
static int task_mark_lost(struct gp_store *s, struct gp_task *t)
{
	const char *reason = LOST_REASON;
	char object[GP_AUDIT_OBJECT_MAX];
	int r;

	if (!t->pod_uid[0] && task_still_runs(t)) {
		kill(-(pid_t)t->pid, SIGKILL);
		reason = LOST_STOPPED_REASON;
	}
	t->state = GP_TASK_LOST;
	t->ended = gp_unix_ms();
	snprintf(t->reason, sizeof(t->reason), "%s", reason);
	r = gp_store_task_update(s, t);
	if (r < 0)
		return r;
	snprintf(object, sizeof(object), "%lld", (long long)t->id);
	return gp_store_audit(s, "server", "task.lost", object, reason);
}

/* Tasks that were running when the server stopped have nobody watching
 * them now: they are LOST (their processes stopped) until an agent can
 * re-adopt them. A cluster's pods run on without us: with --kubernetes
 * their tasks are taken up again (k8s/kube-tasks.h). */
static int tasks_mark_lost(struct gp_store *s, bool kubernetes)
{
	struct gp_task *running = NULL;
	int n = 0, r = gp_store_task_list(s, -1, GP_TASK_RUNNING, &running, &n), lost = 0;

	for (int i = 0; r == 0 && i < n; i++)
		if (!kubernetes || !running[i].pod_uid[0]) {
			r = task_mark_lost(s, &running[i]);
			lost++;
		}
	n = lost;
	free(running);
	if (r < 0) {
		fprintf(stderr,
			"gpupool server: cannot mark the running tasks lost: %s\n",
			gp_store_error(s));
		return GP_EXIT_FAIL;
	}
	if (n)
		fprintf(stderr,
			"gpupool server: %d task(s) were running when the server "
			"stopped; they are marked lost\n",
			n);
	return GP_EXIT_OK;
}

static const char *listen_error(int r)
{
	switch (r) {
	case -EADDRINUSE:
		return "another server is listening there (or the port is taken)";
	case -EEXIST: return "the path exists and is not a socket";
	default: return strerror(-r);
	}
}

/* Enough descriptors for the connection bounds: the soft RLIMIT_NOFILE
 * is raised to what they need, no further (the tasks the agent starts
 * inherit it), at most to the hard limit; said when even that is too
 * low. */
static void files_limit_raise(const struct gp_http_options *ho)
{
	rlim_t need = gp_http_files_needed(ho);
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
		return;
	rl.rlim_cur =
		rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ? rl.rlim_max : need;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < need)
		fprintf(stderr,
			"gpupool server: warning: --max-connections %u needs up to %llu "
			"open files, but their hard limit is %llu: connections past it "
			"are dropped unanswered; raise it (ulimit -Hn, LimitNOFILE=) or "
			"lower --max-connections\n",
			ho->max_connections, (unsigned long long)need,
			(unsigned long long)rl.rlim_max);
}

/* The names a request on TCP may give as its Host: localhost, the
 * address the server listens on and its IPv6 twin, this machine's name,
 * and --allowed-hosts. */
static void hosts_list(const struct gp_server_options *o, char *buf, size_t size)
{
	char name[256] = "";

	if (gethostname(name, sizeof(name) - 1) < 0)
		name[0] = '\0';
	snprintf(buf, size, "localhost,127.0.0.1,[::1]%s%s%s%s", name[0] ? "," : "", name,
		 o->allowed_hosts[0] ? "," : "", o->allowed_hosts);
}

static int http_listen(const struct gp_server_options *o, struct gp_http **ret)
{
	char hosts[PATH_MAX + 512];
	struct gp_http_options ho = {
		.hosts = hosts,
		.json_bodies = true,
		.socket_path = o->socket,
		.tcp_port = o->tcp_port,
		.body_max = GP_API_BODY_MAX,
		.header_timeout_ms = o->header_timeout_ms,
		.body_timeout_ms = o->body_timeout_ms,
		.max_connections = o->max_connections,
		.max_client_connections = o->max_client_connections,
	};
	int r = make_parents(o->socket);

	hosts_list(o, hosts, sizeof(hosts));
	files_limit_raise(&ho);
	if (r == 0)
		r = gp_http_listen(&ho, ret);
	if (r < 0) {
		fprintf(stderr, "gpupool server: cannot listen on %s", o->socket);
		if (o->tcp_port)
			fprintf(stderr, " and 127.0.0.1:%u", o->tcp_port);
		fprintf(stderr, ": %s\n", listen_error(r));
		return GP_EXIT_FAIL;
	}
	r = o->tcp_port ? gp_http_peer_uids(*ret) : 0;
	if (r < 0)
		fprintf(stderr,
			"gpupool server: warning: cannot tell TCP clients on 127.0.0.1 "
			"apart by uid (NETLINK_SOCK_DIAG: %s); --max-client-connections "
			"counts them all as one client\n",
			strerror(-r));
	return GP_EXIT_OK;
}

/* ---- running ------------------------------------------------------------- */

/* What a running server holds, in the order it takes them. */
struct server {
	int lock_fd;	      /* DB.lock, locked */
	struct gp_http *http; /* listening from the start, serving at the end */
	struct gp_store *store;
	struct gp_pool *pool; /* the queue, the running tasks, the tenants */
	struct gp_api *api;
	struct gp_agent *agent; /* with --with-agent */
	struct gp_loop *loop;
	struct gp_kube_server *kube; /* with --kubernetes */
	struct gp_http *metrics;      /* with --metrics-listen */
	char metrics_token[GP_API_METRICS_TOKEN_MAX + 1]; /* "": none */
	struct gp_backup *backup;     /* with --backup-interval other than 0 */
	const struct gp_server_options *o;
};

/* This machine's agent: its devices, found now, said on stderr. The
 * server becomes a child subreaper, so that what tasks leave behind is
 * its to reap and to stop. */
static int agent_open(const struct gp_server_options *o, struct gp_agent **ret)
{
	char owner[PATH_MAX + 32];
	struct gp_agent_options ao = { .shim_path = o->shim[0] ? o->shim : NULL,
				       .run_dir = o->run_dir[0] ? o->run_dir : NULL,
				       .log_dir = o->log_dir, .grace_ms = o->grace_ms,
				       .cgroup = o->cgroup[0] ? o->cgroup : NULL,
				       .uid_base = o->task_uid_base == GP_CONFIG_UID_BASE_AUTO
							   ? 0
							   : o->task_uid_base,
				       .uid_auto = o->task_uid_base == GP_CONFIG_UID_BASE_AUTO,
				       .owner = owner,
				       .task_groups = o->task_groups,
				       .task_env = o->task_env[0] ? o->task_env : NULL,
				       .verify = (enum gp_verify_policy)o->verify,
				       .verify_ms = o->verify_ms,
				       .verify_slack_mib = o->verify_slack_mib,
				       .log_max = o->log_max,
				       .log_free_min = o->log_free_min,
				       .memory_max = o->task_memory_max == GP_CONFIG_NONE
							     ? 0
							     : o->task_memory_max,
				       .pids_max = o->task_pids_max == GP_CONFIG_PIDS_NONE
							   ? 0
							   : o->task_pids_max,
				       .tmp_max = o->task_tmp_max == GP_CONFIG_NONE
							  ? 0
							  : o->task_tmp_max,
				       .shared_proc = o->task_proc == 1 };
	const struct gp_agent_node *n;
	char err[1024], how[2048], why[2 * PATH_MAX + 160];
	bool isolated;
	int r = make_parents(o->log_dir) < 0 ? -errno : mkdir(o->log_dir, 0700);

	snprintf(owner, sizeof(owner), "the server of %s", o->db);

	if (r < 0 && errno != EEXIST) {
		fprintf(stderr, "gpupool server: cannot make the log directory %s: %s\n",
			o->log_dir, strerror(errno));
		return GP_EXIT_FAIL;
	}
	if (gp_agent_new(&ao, ret, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpupool server: --with-agent: %s\n", err);
		return GP_EXIT_FAIL;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	isolated = gp_agent_isolated(*ret, how, sizeof(how));
	fprintf(stderr, "gpupool server: %s%s\n", isolated ? "" : "WARNING: ", how);
	n = gp_agent_node(*ret);
	fprintf(stderr, "gpupool server: agent: %u device(s), driver %s, CUDA %d.%d%s%s\n",
		n->devices, n->driver_version, n->cuda_version / 1000,
		n->cuda_version % 1000 / 10, ao.shim_path ? "; tasks preload " : "",
		ao.shim_path ? ao.shim_path : "");
	for (unsigned i = 0; i < n->devices; i++)
		fprintf(stderr, "gpupool server:   %u %s %s %" PRIu64 " MiB%s%s\n", i,
			n->device[i].uuid, n->device[i].name, n->device[i].mem_total_mib,
			n->device[i].compatible ? "" : ": not usable: ", n->device[i].reason);
	if (!ao.shim_path) {
		shim_missing(why, sizeof(why));
		fprintf(stderr, "gpupool server: WARNING: %s\n", why);
	}
	return GP_EXIT_OK;
}

/* The store (or the backups' reader) met the database damaged while
 * serving: said once, loudly, with the backup to restore. Writes are
 * refused from now on (store.h); /metrics says so (gpupool_database_damaged). */
static void on_damage(void *ctx, const char *message)
{
	struct server *s = ctx;

	fprintf(stderr, "gpupool server: CRITICAL: %s\n", message);
	gp_server_db_advise(s->o);
}

/* The backups: one now (the database was just checked), then one every
 * --backup-interval. */
static int backups_start(const struct gp_server_options *o, struct server *s)
{
	struct gp_backup_options bo = {.dir = o->backup_dir, .interval_s = o->backup_interval_s,
				       .keep = o->backup_keep, .on_damage = on_damage, .ctx = s};
	int r;

	if (!o->backup_interval_s)
		return GP_EXIT_OK;
	r = gp_backup_start(s->store, &bo, &s->backup);
	if (r == 0)
		return GP_EXIT_OK;
	fprintf(stderr, "gpupool server: cannot start the database's backups: %s\n",
		r == -ENOTSUP ? "the database is in memory" : strerror(-r));
	return GP_EXIT_FAIL;
}

/* The queue, the running tasks and the tenants, read once: from now on
 * whoever writes the store puts the change in the pool too (pool.h). */
static int pool_load(struct gp_store *store, struct gp_pool **ret)
{
	int r = gp_pool_load(store, ret);

	if (r == 0)
		return GP_EXIT_OK;
	fprintf(stderr, "gpupool server: cannot read the queue and the tenants: %s\n",
		r == -ENOMEM ? strerror(-r) : gp_store_error(store));
	return GP_EXIT_FAIL;
}

/* Blocked in every thread (the listeners' threads start later and
 * inherit the mask), so that only sigwait takes them. */
static void signals_block(sigset_t *stop)
{
	sigemptyset(stop);
	sigaddset(stop, SIGTERM);
	sigaddset(stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, stop, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* GET /metrics on the --metrics-listen listener: the API's, under the
 * lock the API's routes run under, and the extender's figures after it. */
static void metrics_alone(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct server *s = ctx;
	char *more, *all;

	gp_http_lock(s->http);
	gp_api_metrics(s->api, req, ret);
	gp_http_unlock(s->http);
	if (!s->kube || ret->status != 200 || !ret->text || !(more = gp_kube_server_metrics(s->kube)))
		return;
	all = realloc(ret->text, ret->text_len + strlen(more) + 1);
	if (all) {
		memcpy(all + ret->text_len, more, strlen(more) + 1);
		ret->text = all;
		ret->text_len += strlen(more);
	}
	free(more);
}

static const struct gp_http_route metrics_routes[] = {
	{"GET", "/metrics", metrics_alone},
};

/* --metrics-listen: listening before any thread starts; serving once the
 * API is made. */
static int metrics_listen(const struct gp_server_options *o, struct server *s)
{
	char socket[PATH_MAX + 16];
	struct gp_http_options ho = {.socket_path = socket, .tcp_port = o->metrics_port,
				     .tcp_any = o->metrics_any, .body_max = 4096};

	snprintf(socket, sizeof(socket), "%s.metrics", o->socket);
	if (gp_http_listen(&ho, &s->metrics) == 0)
		return GP_EXIT_OK;
	fprintf(stderr, "gpupool server: cannot listen on %s:%u for /metrics\n",
		o->metrics_any ? "0.0.0.0" : "127.0.0.1", o->metrics_port);
	return GP_EXIT_FAIL;
}

/* --kubernetes: the extender, before any thread starts (it listens). */
static int kube_start(const struct gp_server_options *o, struct server *s)
{
	char socket[PATH_MAX + 16], err[PATH_MAX + 256];
	const struct gp_server_kube *k = &o->kube;
	struct gp_kube_server_options ko = {
		.api_url = k->api_url[0] ? k->api_url : NULL,
		.token_file = k->token_file[0] ? k->token_file : NULL,
		.kubeconfig = k->kubeconfig[0] ? k->kubeconfig : NULL,
		.socket_path = socket, .port = k->port,
		.policy = o->loop.policy[0] ? o->loop.policy : NULL,
		.scheduler_name = k->scheduler_name[0] ? k->scheduler_name : NULL,
		.workload_trace = k->workload_trace[0] ? k->workload_trace : NULL,
		.tie_seed = k->tie_seed ? k->tie_seed : 1, .pool = s->pool,
		.placement_key = k->placement_key[0] ? k->placement_key : NULL,
		.store = s->store, .api_http = s->http,
		.sample_ms = o->loop.sample_ms ? o->loop.sample_ms : GP_LOOP_SAMPLE_MS,
	};

	snprintf(socket, sizeof(socket), "%s.extender", o->socket);
	if (gp_kube_server_start(&ko, &s->kube, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpupool server: --kubernetes: %s\n", err);
		return GP_EXIT_FAIL;
	}
	fprintf(stderr, "gpupool server: the scheduler extender on http://127.0.0.1:%u/extender/\n",
		k->port ? k->port : GP_KUBE_EXTENDER_PORT);
	return GP_EXIT_OK;
}

static int serve(const struct gp_server_options *o, struct server *s, sigset_t *stop)
{
	struct gp_api_options ao = {.queue_max = o->queue_max,
				    .tenant_queue_max = o->tenant_queue_max,
				    .metrics_token = s->metrics_token,
				    .prices = o->price,
				    .n_prices = o->prices,
				    .log_dir = o->log_dir,
				    .admin_token_file = o->token_file,
				    .ui_dir = o->ui_dir,
				    .ui_chart_js = o->ui_chart_js,
				    .http = s->http,
				    .backup = s->backup};
	struct gp_loop_options lo = o->loop;
	const struct gp_http_route *routes;
	size_t n;
	int sig = 0;

	ao.pool = s->pool;
	lo.queue_max = o->queue_max;
	lo.tenant_queue_max = o->tenant_queue_max;
	lo.log_dir = o->log_dir;
	lo.log_total_max = o->log_total_max;
	lo.log_free_min = o->log_free_min;
	if (s->agent && gp_loop_start(s->store, s->http, s->pool, s->agent, &lo, &s->loop) < 0) {
		fprintf(stderr, "gpupool server: cannot start the scheduling loop\n");
		return GP_EXIT_FAIL;
	}
	ao.loop = s->loop;
	if (o->kube.on && kube_start(o, s) != GP_EXIT_OK)
		return GP_EXIT_FAIL;
	if (s->kube) {
		ao.engine_nodes = gp_kube_server_nodes;
		ao.engine_cancel = gp_kube_server_cancel;
		ao.engine_share = gp_kube_server_share;
		ao.engine_services = gp_kube_server_services;
		ao.engine_ctx = s->kube;
		ao.engine = "kubernetes";
	}
	if (gp_api_new(s->store, &ao, &s->api) < 0)
		return GP_EXIT_FAIL;
	if (s->metrics && gp_http_serve(s->metrics, metrics_routes, 1, s) < 0) {
		fprintf(stderr, "gpupool server: cannot serve /metrics\n");
		return GP_EXIT_FAIL;
	}
	routes = gp_api_routes(&n);
	if (gp_http_serve(s->http, routes, n, s->api) < 0) {
		fprintf(stderr, "gpupool server: cannot start serving on %s\n",
			o->socket);
		return GP_EXIT_FAIL;
	}
	fprintf(stderr, "gpupool server: serving on %s", o->socket);
	if (o->tcp_port)
		fprintf(stderr, " and http://127.0.0.1:%u", o->tcp_port);
	fprintf(stderr, "; database %s (schema %d)\n", o->db,
		gp_store_schema_version(s->store));
	if (o->tcp_port)
		fprintf(stderr, "gpupool server: the console at http://127.0.0.1:%u/ui/%s\n",
			o->tcp_port,
			o->ui_dir[0] ? "" : " (its files are missing: give --ui-dir DIR)");
	sigwait(stop, &sig);
	fprintf(stderr, "gpupool server: stopping (%s)\n",
		sig == SIGINT ? "SIGINT" : "SIGTERM");
	return GP_EXIT_OK;
}

/* Lets go in the reverse order: no request runs once the store closes,
 * and none reads the loop's numbers once it stops. */
static void server_release(struct server *s)
{
	if (s->api && s->http) {
		gp_http_lock(s->http);
		gp_api_set_loop(s->api, NULL);
		gp_http_unlock(s->http);
	}
	s->metrics = gp_http_stop(s->metrics);
	s->loop = gp_loop_stop(s->loop);
	s->kube = gp_kube_server_stop(s->kube);
	gp_agent_free(s->agent);
	s->http = gp_http_stop(s->http);
	s->api = gp_api_free(s->api);
	s->pool = gp_pool_free(s->pool);
	s->backup = gp_backup_stop(s->backup);
	gp_store_close(s->store);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
}

/* "64M", "1G", or bytes. */
static void size_show(uint64_t bytes, char *buf, size_t size)
{
	if (bytes % (1ULL << 30) == 0)
		snprintf(buf, size, "%" PRIu64 "G", bytes >> 30);
	else if (bytes % (1ULL << 20) == 0)
		snprintf(buf, size, "%" PRIu64 "M", bytes >> 20);
	else
		snprintf(buf, size, "%" PRIu64 " bytes", bytes);
}

/* The device of path's directory, or of the nearest one above it that
 * exists (the log directory may not be made yet); 0 when none is found. */
static dev_t dir_device(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	while (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return stat(slash ? "/" : ".", &st) == 0 ? st.st_dev : 0;
		*slash = '\0';
	}
	return st.st_dev;
}

/* The log line of --check-config: where, how much, and whether the logs
 * share the database's filesystem. */
static void logs_show(const struct gp_server_options *o)
{
	char db_dir[PATH_MAX], max[32], total[48] = "no total cap",
					  floor[48] = "no free-space floor";
	dev_t logs = dir_device(o->log_dir), db;

	beside_db(o->db, ".", db_dir, sizeof(db_dir));
	db = dir_device(db_dir);
	size_show(o->log_max, max, sizeof(max));
	if (o->log_total_max) {
		size_show(o->log_total_max, total, sizeof(total));
		strcat(total, " in all");
	}
	if (o->log_free_min) {
		size_show(o->log_free_min, floor, sizeof(floor));
		strcat(floor, " kept free");
	}
	printf("  logs       %s, at most %s per task, %s, %s%s\n", o->log_dir, max, total, floor,
	       logs && logs == db ? " (on the database's filesystem: a --log-dir "
				    "elsewhere keeps logs from filling it)"
				  : "");
}

/* The task limits' lines of --check-config. */
static void task_limits_show(const struct gp_server_options *o)
{
	char mem[32], tmp[32];

	size_show(o->task_memory_max, mem, sizeof(mem));
	size_show(o->task_tmp_max, tmp, sizeof(tmp));
	printf("  per task   memory.max %s, pids.max ",
	       o->task_memory_max == GP_CONFIG_NONE ? "max (none)" : mem);
	if (o->task_pids_max == GP_CONFIG_PIDS_NONE)
		printf("max (none)");
	else
		printf("%u", o->task_pids_max);
	printf("; /tmp, /dev/shm, $HOME %s%s; /proc %s\n",
	       o->task_tmp_max == GP_CONFIG_NONE ? "the machine's (off)" : "of its own, each at most ",
	       o->task_tmp_max == GP_CONFIG_NONE ? "" : tmp, gp_config_proc_names[o->task_proc]);
}

/* The policy line of --check-config, with its target workload if any. */
static void policy_show(const struct gp_server_options *o)
{
	const char *name = o->loop.policy[0] ? o->loop.policy : GP_LOOP_POLICY;

	printf("  preemption %s\n", gp_config_preemption_names[o->loop.preemption]);
	printf("  policy     %s", name);
	if (gp_policy_takes_target(name))
		printf(", against the shapes of the tasks of the last %u s, made again every "
		       "%u s",
		       o->loop.workload_window_s ? o->loop.workload_window_s
						 : GP_LOOP_WORKLOAD_WINDOW_S,
		       o->loop.workload_refresh_s ? o->loop.workload_refresh_s
						  : GP_LOOP_WORKLOAD_REFRESH_S);
	printf("\n");
}

/* --check-config: the options and file were read without an error;
 * says what the server would use, and starts nothing. */
static int config_show(const struct gp_server_options *o)
{
	char why[2 * PATH_MAX + 160], uids[64];

	if (o->task_uid_base == GP_CONFIG_UID_BASE_AUTO)
		snprintf(uids, sizeof(uids), "auto (the first range no running server holds)");
	else
		snprintf(uids, sizeof(uids), "%u",
			 o->task_uid_base ? o->task_uid_base : GP_USER_AUTO_BASE);

	printf("configuration OK\n  database   %s\n  socket     %s%s", o->db, o->socket,
	       o->tcp_port ? "" : "\n");
	if (o->tcp_port)
		printf(" and 127.0.0.1:%u\n", o->tcp_port);
	printf("  queue max  %u, %u per tenant\n", o->queue_max, o->tenant_queue_max);
	printf("  deadlines  headers %u ms, body %u ms\n", o->header_timeout_ms,
	       o->body_timeout_ms);
	printf("  conn. max  %u, %u per client (on TCP, and on the socket)\n",
	       o->max_connections, o->max_client_connections);
	if (o->tcp_port) {
		char hosts[PATH_MAX + 512];

		hosts_list(o, hosts, sizeof(hosts));
		printf("  hosts      %s (the Host a request on TCP may give)\n", hosts);
	}
	printf("  db check   %s at start\n", o->db_check == GP_CONFIG_DB_CHECK_FULL
						 ? "PRAGMA integrity_check (full)"
						 : "PRAGMA quick_check");
	if (o->backup_interval_s)
		printf("  backups    in %s, at start and every %u s, the newest %u kept\n",
		       o->backup_dir, o->backup_interval_s, o->backup_keep);
	else
		printf("  backups    none (--backup-interval 0)\n");
	printf("  metrics    %s%s\n",
	       o->metrics_token_file[0] ? "every series with the scrape token in "
					: "no scrape token (--metrics-token-file)",
	       o->metrics_token_file);
	if (o->metrics_port)
		printf("             /metrics alone on %s:%u (--metrics-listen)\n",
		       o->metrics_any ? "0.0.0.0" : "127.0.0.1", o->metrics_port);
	if (o->tcp_port)
		printf("  console    http://127.0.0.1:%u/ui/, files %s\n", o->tcp_port,
		       o->ui_dir[0] ? o->ui_dir : "missing (--ui-dir)");
	printf("  agent      %s\n", o->with_agent ? "yes (--with-agent)" : "no");
	if (o->with_agent && !o->shim[0])
		shim_missing(why, sizeof(why));
	if (o->with_agent)
		printf("  shim       %s\n", o->shim[0] ? o->shim : why);
	logs_show(o);
	if (o->with_agent)
		printf("  cgroup     %s\n  task uids  %s + tenant id%s%s\n  verifier   %s, "
		       "every %u ms on average, slack %u MiB\n",
		       o->cgroup[0] ? o->cgroup : "auto", uids,
		       o->task_groups[0] ? "; groups " : "", o->task_groups,
		       gp_config_verify_names[o->verify],
		       o->verify_ms ? o->verify_ms : GP_AGENT_VERIFY_MS, o->verify_slack_mib);
	if (o->with_agent)
		task_limits_show(o);
	if (o->with_agent)
		policy_show(o);
	for (int i = 0; i < o->prices; i++)
		printf("  price      %s = %.2f per device-hour\n", o->price[i].model,
		       o->price[i].per_hour);
	for (int i = 0; i < o->loop.overcommits; i++)
		printf("  overcommit %s = %.2f\n",
		       o->loop.overcommit[i].model[0] ? o->loop.overcommit[i].model : "(all)",
		       o->loop.overcommit[i].permille / 1000.0);
	return GP_EXIT_OK;
}

int gp_cmd_server(int argc, char **argv)
{
	struct gp_server_options o = {.queue_max = GP_API_QUEUE_MAX,
				      .header_timeout_ms = GP_HTTP_HEADER_TIMEOUT_MS,
				      .body_timeout_ms = GP_HTTP_BODY_TIMEOUT_MS,
				      .max_connections = GP_HTTP_CONNECTIONS_MAX,
				      .grace_ms = GRACE_MS_DEFAULT,
				      .verify_slack_mib = GP_AGENT_SLACK_MIB,
				      .log_max = GP_LOGPUMP_MAX_DEFAULT,
				      .backup_interval_s = GP_BACKUP_INTERVAL_S,
				      .backup_keep = GP_BACKUP_KEEP,
				      .log_total_max = GP_LOGDIR_TOTAL_DEFAULT,
				      .log_free_min = GP_LOGDIR_FREE_DEFAULT};
	struct server s = {.lock_fd = -1, .o = &o};
	sigset_t stop;
	int status, r = parse_options(argc, argv, &o);

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	options_default(&o);
	if (options_check(&o) != GP_EXIT_OK ||
	    (o.metrics_token_file[0] &&
	     metrics_token_read(o.metrics_token_file, s.metrics_token) != GP_EXIT_OK))
		return GP_EXIT_USAGE;
	if (o.check_only)
		return config_show(&o);
	if (o.restore_db[0])
		return db_restore(&o);
	signals_block(&stop);
	status = db_lock(&o, &s.lock_fd);
	if (status == GP_EXIT_OK)
		status = http_listen(&o, &s.http);
	if (status == GP_EXIT_OK && o.metrics_port)
		status = metrics_listen(&o, &s);
	if (status == GP_EXIT_OK)
		status = gp_server_db_open(&o, &s.store);
	if (status == GP_EXIT_OK)
		gp_store_on_damage(s.store, on_damage, &s);
	/* With the agent, the loop adopts the tasks that still run. */
	if (status == GP_EXIT_OK && !o.with_agent)
		status = tasks_mark_lost(s.store, o.kube.on);
	if (status == GP_EXIT_OK && o.with_agent)
		status = agent_open(&o, &s.agent);
	if (status == GP_EXIT_OK)
		status = pool_load(s.store, &s.pool);
	if (status == GP_EXIT_OK)
		status = backups_start(&o, &s);
	if (status == GP_EXIT_OK)
		status = serve(&o, &s, &stop);
	server_release(&s);
	if (status == GP_EXIT_OK)
		fprintf(stderr, "gpupool server: stopped\n");
	return status;
}
