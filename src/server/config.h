/* config.h — `gpupool server`'s options, and its configuration file
 * (`gpupool server --config FILE`).
 *
 * The file is YAML, read with libyaml's parser: one mapping whose keys
 * are the long options with '_' for '-' (db, socket, tcp,
 * admin_token_file, queue_max, tenant_queue_max, header_timeout_ms,
 * body_timeout_ms, max_connections, max_client_connections, allowed_hosts,
 * db_check, backup_dir, backup_interval, backup_keep,
 * metrics_token_file, with_agent, shim, run_dir, log_dir, log_max,
 * log_total_max, log_free_min, grace_ms, cgroup, task_uid_base, task_groups,
 * task_env, task_memory_max, task_pids_max, task_tmp_max, task_proc, verify, verify_ms,
 * verify_slack_mib, sample_ms, util_window, grow_samples, policy,
 * preemption, workload_window, workload_refresh), plus `prices` (a mapping MODEL:
 * PRICE) and `overcommit` (a mapping MODEL: RATIO, "*" or `all` for every
 * device). The server loads it into its options before
 * it reads its flags, so that a flag overrides the file; a price or an
 * overcommit for a model already given replaces it.
 *
 * Every value is checked against the same limits as its flag (below).
 * The first problem fails the whole file with one line
 * "FILE:LINE:COLUMN: key \"x\": what is wrong and what to do".
 *
 * Ownership: the options are the caller's; nothing here allocates what
 * outlives a call. */
#ifndef GP_SERVER_CONFIG_H
#define GP_SERVER_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/user.h"
#include "agent/logpump.h"
#include "server/bill.h"
#include "server/loop.h"

/* The limits of the options, for the flags and the file alike. */
#define GP_CONFIG_QUEUE_MAX_LIMIT    10000000
#define GP_CONFIG_TIMEOUT_MS_MIN     100 /* header and body deadlines */
#define GP_CONFIG_TIMEOUT_MS_LIMIT   3600000
#define GP_CONFIG_CONNECTIONS_LIMIT  65536
#define GP_CONFIG_GRACE_MS_LIMIT     3600000
#define GP_CONFIG_SAMPLE_MS_MIN	     100
#define GP_CONFIG_SAMPLE_MS_LIMIT    3600000
#define GP_CONFIG_UTIL_WINDOW_LIMIT  (31 * 86400)
#define GP_CONFIG_UID_BASE_MIN       GP_USER_AUTO_BASE_MIN /* base/user.h */
#define GP_CONFIG_UID_BASE_LIMIT     GP_USER_AUTO_BASE_MAX
#define GP_CONFIG_UID_BASE_AUTO      1 /* task_uid_base "auto" (never a base) */
/* Each task's cgroup limits and its private $HOME, /tmp and /dev/shm
 * (docs/security.md): defaults, bounds, and "max"/"off" for none. */
#define GP_CONFIG_TASK_MEMORY_PCT    50 /* of this machine's memory */
#define GP_CONFIG_TASK_MEMORY_MIN    (16ULL << 20)
#define GP_CONFIG_TASK_PIDS_MAX      2048
#define GP_CONFIG_TASK_PIDS_MIN      16
#define GP_CONFIG_TASK_PIDS_LIMIT    4194304 /* the kernel's pid_max */
#define GP_CONFIG_TASK_TMP_MAX	     (1ULL << 30)
#define GP_CONFIG_TASK_TMP_MIN	     (1ULL << 20)
#define GP_CONFIG_SIZE_LIMIT	     (1ULL << 40)
#define GP_CONFIG_NONE		     UINT64_MAX /* task_memory_max max, task_tmp_max off */
#define GP_CONFIG_PIDS_NONE	     0xffffffffu /* task_pids_max max */
#define GP_CONFIG_VERIFY_MS_MIN      100
#define GP_CONFIG_VERIFY_MS_LIMIT    60000
#define GP_CONFIG_SLACK_MIB_LIMIT    65536
#define GP_CONFIG_RATIO_MIN_PERMILLE 1000 /* overcommit 1.0 to 1.5 */
#define GP_CONFIG_RATIO_MAX_PERMILLE 1500
#define GP_CONFIG_LOG_MAX_MIN	     GP_LOGPUMP_MAX_MIN /* a task log's cap: 1M to 1T */
#define GP_CONFIG_LOG_MAX_LIMIT	     (1ULL << 40)
#define GP_CONFIG_LOG_SPACE_LIMIT    (1ULL << 50) /* the logs' cap and floor: 0, or 1M to 1024T */
#define GP_CONFIG_WORKLOAD_WINDOW_MIN	 60 /* a policy's target: 1 min to 31 days */
#define GP_CONFIG_WORKLOAD_WINDOW_LIMIT	 (31 * 86400)
#define GP_CONFIG_WORKLOAD_REFRESH_LIMIT 86400
#define GP_CONFIG_BACKUP_INTERVAL_LIMIT	 (31 * 86400)

/* The console's charting library: Debian's libjs-chart.js. */
#define GP_UI_CHART_JS "/usr/share/javascript/chart.js/chart.min.js"

struct gp_server_options {
	char db[PATH_MAX];
	char socket[PATH_MAX];
	char token_file[PATH_MAX];
	unsigned tcp_port; /* 0: none */
	/* --metrics-listen: /metrics alone on ADDR:PORT, ADDR 0.0.0.0 or
	 * 127.0.0.1, for Prometheus; port 0: none */
	unsigned metrics_port;
	bool metrics_any;
	unsigned queue_max;
	unsigned tenant_queue_max; /* 0: not given (the default, within queue_max) */
	unsigned header_timeout_ms, body_timeout_ms;
	unsigned max_connections;
	unsigned max_client_connections;   /* 0: not given (as tenant_queue_max) */
	/* more names a request on TCP may give as its Host, comma-separated,
	 * besides localhost, 127.0.0.1, [::1] and the machine's name */
	char allowed_hosts[PATH_MAX];
	/* the database: its check at start, its backups */
	unsigned db_check;		   /* index in gp_config_db_check_names */
	char backup_dir[PATH_MAX];	   /* "": backups/ next to the database */
	unsigned backup_interval_s;	   /* 0: none on a schedule */
	unsigned backup_keep;
	char restore_db[PATH_MAX];	   /* --restore-db: this backup in, then exit */
	char metrics_token_file[PATH_MAX]; /* the scrape token's file; "" none */
	char ui_dir[PATH_MAX];		   /* the web console's files; "" none */
	char ui_chart_js[PATH_MAX];	   /* its charting library */
	bool with_agent;	/* run this machine's agent and the scheduling loop */
	char shim[PATH_MAX];	/* libgpushare.so for the tasks; "" none */
	char run_dir[PATH_MAX]; /* the shim's regions; "" its default */
	char log_dir[PATH_MAX]; /* task logs */
	uint64_t log_max;       /* the cap of each task's log, bytes (both files) */
	uint64_t log_total_max; /* the cap of all logs together, bytes; 0: none */
	uint64_t log_free_min;  /* the free space kept where the logs are; 0: none */
	unsigned grace_ms;
	/* tasks: who they run as, what they hold on to, who watches them */
	char cgroup[PATH_MAX];          /* "" or "auto", a cgroup2 path, or "off" */
	unsigned task_uid_base;         /* 0: the agent's default; GP_CONFIG_UID_BASE_AUTO */
	char task_groups[PATH_MAX];     /* more groups for every task: "video,render" */
	char task_env[PATH_MAX];        /* names passed from the server's environment; "": default */
	uint64_t task_memory_max;       /* bytes; 0: default; GP_CONFIG_NONE: max */
	unsigned task_pids_max;         /* 0: default; GP_CONFIG_PIDS_NONE: max */
	uint64_t task_tmp_max;          /* bytes; 0: default; GP_CONFIG_NONE: off */
	unsigned task_proc;             /* 0: private, 1: shared (gp_config_proc_names) */
	unsigned verify;                /* enum gp_verify_policy */
	unsigned verify_ms;             /* 0: the agent's default */
	unsigned verify_slack_mib;
	struct gp_loop_options loop; /* sampling, alert windows, overcommit */
	struct gp_price price[GP_PRICES_MAX];
	int prices;
	bool check_only; /* --check-config: validate, say, exit */
	/* --kubernetes: the scheduler extender of a cluster (src/k8s/kube-server.h) */
	struct gp_server_kube {
		bool on;
		unsigned port;                  /* the extender's, on 127.0.0.1; 0: 8787 */
		char api_url[512], token_file[PATH_MAX], kubeconfig[PATH_MAX];
		char scheduler_name[64];        /* "": any */
		char workload_trace[PATH_MAX];  /* "": the pods seen */
		char placement_key[PATH_MAX];   /* "": the Secret's mount (k8s/seal.h) */
		uint64_t tie_seed;
	} kube;
};

/* Reads the file at path into o: each key it has replaces that option,
 * prices and overcommits are set as by the two functions below; what it
 * lacks is left as it is. -EINVAL (or -errno when it cannot be read)
 * with the one-line reason in err; o may then be half filled. */
int gp_config_load(const char *path, struct gp_server_options *o, char *err,
		   size_t err_len);

/* A price: replaces the one for the same model (case-insensitive), else
 * is added. -ENOSPC when GP_PRICES_MAX are set. */
int gp_config_price_set(struct gp_server_options *o, const struct gp_price *p);

/* An overcommit of the devices whose name contains model ("" every
 * device): replaces the one for the same model, else is added. -ENOSPC
 * when GP_LOOP_OVERCOMMITS_MAX are set, -EINVAL for a model too long. */
int gp_config_overcommit_set(struct gp_server_options *o, const char *model,
			     unsigned permille);

/* The scheduling policy: `name`, one of the core's (gpupool policies).
 * -ENOENT for another name, with the names, comma-separated, in list. */
int gp_config_policy_set(struct gp_server_options *o, const char *name, char *list,
			 size_t len);

/* value's index in names (NULL-terminated, as those below) into *ret:
 * true; false when it is none of them. */
bool gp_config_choice(const char *const *names, const char *value, unsigned *ret);

/* task_proc: a task's own /proc (hidepid), or the machine's. */
extern const char *const gp_config_proc_names[];

/* preemption: off, or priority (gp_loop_options.preemption). */
extern const char *const gp_config_preemption_names[];

/* The verifier's policies, in enum gp_verify_policy's order. */
extern const char *const gp_config_verify_names[];

/* --db-check: PRAGMA quick_check or integrity_check at start. */
enum gp_config_db_check { GP_CONFIG_DB_CHECK_QUICK, GP_CONFIG_DB_CHECK_FULL };
extern const char *const gp_config_db_check_names[];

/* --allowed-hosts / allowed_hosts: a comma-separated list of host names
 * ("gpu1.example.com,gpu1") or bracketed IPv6 addresses ("[fd00::7]"),
 * without ports; false with what is wrong in why when it is not one. */
bool gp_config_hosts_check(const char *list, char *why, size_t why_len);

/* A ratio "1.25" from 1.0 to 1.5 as permille; false when it is not one. */
bool gp_config_ratio_parse(const char *text, unsigned *ret_permille);

/* task_uid_base / --task-uid-base: "auto" (GP_CONFIG_UID_BASE_AUTO: the
 * first range no running server holds, base/uidrange.h) or a base from
 * GP_CONFIG_UID_BASE_MIN to GP_CONFIG_UID_BASE_LIMIT; false when neither. */
bool gp_config_uid_base_parse(const char *text, unsigned *ret);

/* task_memory_max: "max" (GP_CONFIG_NONE), "N%" of this machine's memory
 * (1 to 100), or a size from GP_CONFIG_TASK_MEMORY_MIN to
 * GP_CONFIG_SIZE_LIMIT, in bytes; false when none of these. */
bool gp_config_task_memory_parse(const char *text, uint64_t *ret_bytes);

/* task_pids_max: "max" (GP_CONFIG_PIDS_NONE) or a whole number from
 * GP_CONFIG_TASK_PIDS_MIN to GP_CONFIG_TASK_PIDS_LIMIT. */
bool gp_config_task_pids_parse(const char *text, unsigned *ret);

/* task_tmp_max: "off" (GP_CONFIG_NONE) or a size from
 * GP_CONFIG_TASK_TMP_MIN to GP_CONFIG_SIZE_LIMIT, in bytes. */
bool gp_config_task_tmp_parse(const char *text, uint64_t *ret_bytes);

/* This machine's memory in bytes (0 when it cannot be known). */
uint64_t gp_config_machine_memory(void);

/* pct % of it, in whole MiB (0 when it cannot be known). */
uint64_t gp_config_machine_share(unsigned pct);

/* A log cap, "64M", "1G", "1073741824" (bytes), from GP_CONFIG_LOG_MAX_MIN
 * to GP_CONFIG_LOG_MAX_LIMIT, in bytes; false when it is not one. */
bool gp_config_log_max_parse(const char *text, uint64_t *ret_bytes);

/* The logs' total cap or free-space floor: "0" (none), or a size from
 * GP_CONFIG_LOG_MAX_MIN to GP_CONFIG_LOG_SPACE_LIMIT, in bytes; false
 * when it is neither. */
bool gp_config_log_space_parse(const char *text, uint64_t *ret_bytes);

/* --metrics-listen / metrics_listen: "0.0.0.0:PORT" or "127.0.0.1:PORT"
 * into o's metrics_port and metrics_any; false when it is neither. */
bool gp_config_listen_parse(const char *text, struct gp_server_options *o);

#endif
