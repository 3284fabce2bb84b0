/* store.h — the server's durable state in SQLite.
 *
 * One database file (WAL journal, synchronous=FULL): a function that
 * writes returns only after the write is on disk, so the server answers
 * a request after the store call returned and `kill -9` loses nothing it
 * acknowledged. The schema is versioned (PRAGMA user_version) and brought
 * up to date by numbered migrations when the file is opened; a file from
 * a newer gpupool is refused, never rewritten.
 *
 * Objects: tenants (with a bearer token, kept only as its SHA-256 hash,
 * quotas, overall and per device model, and the Unix user their tasks
 * run as; a removed tenant stays, marked, so that its tasks, usage
 * records and audit rows keep its name), templates, tasks (and the environment variables
 * their submitter declared), the audit log, usage records (metering) and alerts. Rows
 * come back in caller-owned structs; lists come back as arrays the caller frees with
 * free(). Functions return 0 or a negative errno (-ENOENT: no such row, -EEXIST: name
 * taken, -EBADMSG: the file is damaged, -EIO: SQLite failed otherwise; gp_store_error
 * says why). A store is used from one thread at a time.
 *
 * A damaged file (SQLite's SQLITE_CORRUPT or SQLITE_NOTADB, or a check that
 * finds problems) is never written to again through this store: from the
 * first sign, every statement that writes fails with -EBADMSG, saying to
 * restore a backup, so that nothing is acknowledged into a file whose
 * restoring would lose it; reads go on where they still can.
 *
 * Arguments: NULL pointers, empty tenant or template names, strings that
 * do not fit (or are not terminated in) their field, priority > 9,
 * compute_pct > 100 and unknown states give -EINVAL. Tenant and template
 * names are unique (-EEXIST); task names may repeat (a task is its id).
 * Output parameters are left untouched on failure. A list of no rows is
 * returned as *ret = NULL, *ret_n = 0. */
#ifndef GP_SERVER_STORE_H
#define GP_SERVER_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/parse.h"
#include "base/user.h"
#include "core/quota.h"

#define GP_STORE_NAME_MAX	    64
#define GP_STORE_RUNTIME_MAX	    16
#define GP_STORE_POD_UID_MAX	    64
#define GP_COMMAND_MAX	    1024
#define GP_WORKDIR_MAX	    1024
#define GP_REASON_MAX	    256
#define GP_TOKEN_HEX	    64 /* a token's SHA-256, in hex */
#define GP_AUDIT_ACTION_MAX 32
#define GP_AUDIT_OBJECT_MAX 64

/* The schema version this code writes: the number of migrations in
 * store.c. Adding a migration means adding it there and raising this. */
#define GP_STORE_SCHEMA_VERSION 15

#define GP_STORE_DEVICE_MAX 96 /* a device's UUID or model name */
#define GP_ALERT_KIND_MAX   32

struct gp_store;

enum gp_task_state {
	GP_TASK_PENDING, /* queued; `reason` says why it waits */
	GP_TASK_RUNNING,
	GP_TASK_SUCCEEDED,
	GP_TASK_FAILED, /* exited non-zero or by a signal */
	GP_TASK_CANCELLED,
	GP_TASK_PREEMPTED, /* stopped to make room; queued again */
	GP_TASK_LOST,	   /* running when the server died, not re-adopted */
};

struct gp_tenant {
	int64_t id;
	char name[GP_STORE_NAME_MAX];
	bool admin;
	uint64_t mem_guaranteed_mib, mem_borrowable_mib;
	unsigned compute_guaranteed_pct, compute_borrowable_pct; /* sum over devices */
	/* The highest priority (0-9) its tasks may have: a priority orders
	 * turns among work that shares a card, so it is the admin's to grant,
	 * not the tenant's to take (GP_TENANT_PRIORITY_MAX_DEFAULT; the
	 * admin's own: 9). */
	unsigned priority_max;
	int64_t created;					 /* unix seconds */
	/* The Unix user its tasks run as: a spec of base/user.h, "" automatic.
	 * The store keeps the text; the API checks it (gp_user_resolve). */
	char user[GP_USER_SPEC_MAX];
	/* When it was removed (unix seconds); 0: it was not. A removed
	 * tenant has no token and no model quotas; its name is not given
	 * again. */
	int64_t removed;
};

#define GP_TENANT_PRIORITY_MAX_DEFAULT 5


/* A tenant's quota on the devices of one model, on top of its overall
 * quota: `model` is a case-insensitive part of the devices' NVML names
 * ("A100", "T4"); one per tenant and model (compared without case). */
struct gp_model_quota {
	int64_t tenant;
	char model[GP_STORE_NAME_MAX];
	uint64_t mem_guaranteed_mib, mem_borrowable_mib;
	unsigned compute_guaranteed_pct, compute_borrowable_pct; /* sum over devices */
};

/* A tenant's overall quota, and a model quota, as the core's rules take
 * them (core/quota.h: what a quota allows is decided there only). */
static inline struct gp_quota gp_tenant_quota(const struct gp_tenant *t)
{
	return gp_quota_overall(t->mem_guaranteed_mib, t->mem_borrowable_mib,
				t->compute_guaranteed_pct, t->compute_borrowable_pct);
}

static inline struct gp_quota gp_model_quota_quota(const struct gp_model_quota *q)
{
	return (struct gp_quota){ q->mem_guaranteed_mib, q->mem_borrowable_mib,
				  q->compute_guaranteed_pct, q->compute_borrowable_pct };
}

struct gp_template {
	int64_t id;
	char name[GP_STORE_NAME_MAX];
	char models[GP_STORE_NAME_MAX * 2]; /* comma list of device models; empty: any */
	uint64_t mem_mib;
	unsigned compute_pct;
	bool hard; /* isolation: hard cap, or shared */
	char runtime[GP_STORE_RUNTIME_MAX]; /* what its tasks are built for; "": not said */
	uint64_t time_limit_s;		    /* its tasks' time limit; 0: none */
};

struct gp_task {
	int64_t id;
	int64_t tenant;
	char name[GP_STORE_NAME_MAX];
	char command[GP_COMMAND_MAX];
	char workdir[GP_WORKDIR_MAX];   /* absolute; "": the agent's own */
	char template_name[GP_STORE_NAME_MAX]; /* submitted with; "": none */
	bool restart_on_growth; /* memory only growing: restart it before its limit */
	int64_t service;	/* the service it is a replica of; 0: none */
	/* Memory per device: with mem_pct, what it is on the card it got
	 * once placed (before: on the largest card it accepts, what its
	 * quota is checked against at submit). */
	uint64_t mem_mib;
	unsigned mem_pct;     /* 1-100: memory as a share of its card's; 0: mem_mib */
	unsigned compute_pct; /* per device */
	unsigned devices;     /* how many devices */
	bool whole;	      /* whole devices, as a gang */
	bool exclusive;
	bool hard;
	bool mixed_models;    /* its devices may be of several models (else one) */
	unsigned priority;	 /* 0-9 */
	char kind[16];		 /* "inference", "training", "batch", ... */
	char model[GP_STORE_NAME_MAX]; /* device model constraint; empty: any */
	/* The runtime its program is built for ("cuda", "acl", …: server/
	 * runtime.h), settled at submit; "": a task from before they were. */
	char runtime[GP_STORE_RUNTIME_MAX];
	/* How long it may run, counted from its start (`submit --time`); 0:
	 * no limit. timed_out: its limit ended it (it is FAILED). */
	uint64_t time_limit_s;
	bool timed_out;
	/* The tasks it waits for (`submit --after`), as base/parse.h writes
	 * them ("3:ok,5:any"); "": none. */
	char after[GP_AFTER_TEXT];
	/* Of a task array (`submit --array`): the id of its first task, and
	 * its own index; array_id 0: not of one. */
	int64_t array_id;
	unsigned array_index;
	enum gp_task_state state;
	char reason[GP_REASON_MAX];    /* why pending, why failed */
	char placement[GP_REASON_MAX]; /* "node0:GPU-uuid,..." when running */
	int64_t pid;		       /* the task's process group, when running */
	int exit_code;
	int64_t created, started, ended; /* unix ms; 0: not yet */
	char pod_uid[GP_STORE_POD_UID_MAX]; /* a Kubernetes pod's UID; "": the server's own task */
};

struct gp_audit_entry {
	int64_t id;
	int64_t ts; /* unix ms */
	char who[GP_STORE_NAME_MAX];
	char action[GP_AUDIT_ACTION_MAX];
	char object[GP_AUDIT_OBJECT_MAX];
	char detail[GP_REASON_MAX];
};

/* One usage record: what a task held of one device, and used of it, over
 * the interval [start_ms, end_ms) (unix ms). Intervals of one task and
 * device tile its run without overlapping. */
struct gp_usage_record {
	int64_t id;
	int64_t task, tenant;
	char device_uuid[GP_STORE_DEVICE_MAX];
	char device_model[GP_STORE_DEVICE_MAX]; /* as NVML names it: "Tesla T4" */
	int64_t start_ms, end_ms;
	uint64_t mem_mib;     /* allocated (a whole device: all of it) */
	unsigned compute_pct; /* allocated share; 100 for a whole device */
	uint64_t used_ms;     /* device time its processes used, <= end - start */
	uint64_t mem_peak_mib; /* the most its processes held there, as sampled */
};

/* The records of one tenant on one device model, added up (exact
 * integers: hours and money are the caller's arithmetic). */
struct gp_usage_sum {
	int64_t tenant;
	char device_model[GP_STORE_DEVICE_MAX];
	int64_t records;
	int64_t duration_ms; /* sum of end - start */
	int64_t pct_ms;	     /* sum of compute_pct x (end - start) */
	int64_t mib_ms;	     /* sum of mem_mib x (end - start) */
	int64_t used_ms;
};

enum gp_alert_level { GP_ALERT_INFO, GP_ALERT_WARNING, GP_ALERT_CRITICAL };

/* An alert: at most one is active (cleared == 0) per kind and object. */
struct gp_alert {
	int64_t id;
	enum gp_alert_level level;
	char kind[GP_ALERT_KIND_MAX];	  /* "task.failed", "device.busy", ... */
	char object[GP_AUDIT_OBJECT_MAX]; /* "task 12", "device GPU-...", "tenant x" */
	int64_t tenant;			  /* whose it is; 0: the pool's */
	char message[GP_REASON_MAX];
	int64_t created, cleared; /* unix ms; cleared 0: active */
};

/* open makes the file only when it is missing: a new database made whole
 * under PATH.new (mode 0600) and renamed, so that no empty or half-made
 * file is ever left at path. A file that exists is opened as it is and
 * migrated to GP_STORE_SCHEMA_VERSION, never made anew: -ENODATA when it
 * is empty (0 bytes), -EBADMSG when it is not an SQLite database (or
 * SQLite finds it damaged), -EPROTO when its schema is newer (it is not
 * written), another -errno when it cannot be read; gp_store_error(NULL)
 * says which, naming the file. ":memory:" opens a private in-memory
 * store (tests). The caller owns *ret and frees it with gp_store_close
 * (NULL is fine). */
int gp_store_open(const char *path, struct gp_store **ret);
void gp_store_close(struct gp_store *s);
/* Whether s's file was made by the gp_store_open that opened it. */
bool gp_store_is_new(const struct gp_store *s);

/* PRAGMA quick_check of the whole file (full: integrity_check, which
 * also compares every index with its table): 0 when it finds nothing,
 * -EBADMSG when it finds problems (the first ones in gp_store_error; s
 * is then damaged, below), another -errno when it could not run. Its time
 * grows with the file's size. */
int gp_store_check(struct gp_store *s, bool full);
/* Whether s has met its file damaged: a check that found problems, or
 * SQLITE_CORRUPT or SQLITE_NOTADB from any call. From then on, statements
 * that write fail with -EBADMSG (store.h's top says why). */
bool gp_store_is_damaged(const struct gp_store *s);
/* Called once, the first time s meets its file damaged, with the message
 * gp_store_error(s) then gives; from the thread that uses s. */
typedef void gp_store_damage_fn(void *ctx, const char *message);
void gp_store_on_damage(struct gp_store *s, gp_store_damage_fn *fn, void *ctx);
/* A copy of s's database as of one moment into path (VACUUM INTO: a
 * whole, compacted database; SQLite reads every table, so a damaged one
 * fails with -EBADMSG rather than being copied). path must not exist or
 * must be an empty file; the caller makes it, syncs it and puts it in
 * place. Works on a reader (below), which does not hold up s's writes. */
int gp_store_backup_into(struct gp_store *s, const char *path);
/* A second connection to s's file that only reads (the WAL lets it read
 * while s writes), for a thread that must not wait for s's users: the
 * caller owns it and closes it with gp_store_close. -ENOTSUP for an
 * in-memory store; the file's errors as for open. */
int gp_store_open_reader(const struct gp_store *s, struct gp_store **ret);
/* The same for the file at path (a backup, to check it): nothing is made
 * or migrated; -ENOENT when it is missing, the file's errors as for open.
 * Never for a file this process has open in a store already (store.c,
 * open_readonly, says why). */
int gp_store_open_readonly(const char *path, struct gp_store **ret);
/* The message of s's last failure, or with s NULL the message of this
 * thread's last failed gp_store_open. Valid until the next call. */
const char *gp_store_error(const struct gp_store *s); /* last failure */
int gp_store_schema_version(struct gp_store *s);      /* >= 0, or -errno */

/* Tenants. tenant_add makes a random token, returns it once in
 * token_out (GP_TOKEN_HEX + 1 bytes) and stores only its hash.
 * tenant_add sets t->id and t->created; set_quota writes the four quota
 * fields and priority_max of the tenant t->id (-EINVAL: priority_max over 9), set_user its user (-ENOENT: none; -EINVAL:
 * a user that does not fit its field). by_name and list give removed
 * tenants too (t->removed set): their tasks and records name them. */
int gp_store_tenant_add(struct gp_store *s, struct gp_tenant *t, char *token_out);
int gp_store_tenant_by_token(struct gp_store *s, const char *token,
			     struct gp_tenant *ret);
int gp_store_tenant_by_name(struct gp_store *s, const char *name, struct gp_tenant *ret);
int gp_store_tenant_list(struct gp_store *s, struct gp_tenant **ret, int *ret_n);
int gp_store_tenant_set_quota(struct gp_store *s, const struct gp_tenant *t);
int gp_store_tenant_set_user(struct gp_store *s, const struct gp_tenant *t);
/* Makes a new random token for tenant id, returns it once in token_out
 * (GP_TOKEN_HEX + 1 bytes) and stores its hash in place of the old one,
 * which no longer names anybody. -ENOENT: no such tenant, or a removed
 * one. */
int gp_store_tenant_token_new(struct gp_store *s, int64_t id, char *token_out);
/* How many tasks of the tenant are queued (pending or preempted), running,
 * and in all. */
int gp_store_tenant_task_counts(struct gp_store *s, int64_t tenant, int *ret_queued,
				int *ret_running, int *ret_all);
/* Removes tenant id: marks it removed (now), so that its token names
 * nobody, and drops its model quotas; its row, tasks, usage records and
 * alerts stay. It does not look at its tasks: the caller checks, in the
 * same transaction, that none is queued or running. -ENOENT: no such
 * tenant, or removed already. */
int gp_store_tenant_remove(struct gp_store *s, int64_t id);

/* Model quotas. model_quota_set adds q, or replaces the quota of
 * q->tenant for q->model (-ENOENT: no such tenant; -EINVAL: an empty
 * model). model_quota_remove: -ENOENT when there is none.
 * model_quota_list: tenant < 0: every tenant's; ordered by tenant id,
 * then model. */
int gp_store_model_quota_set(struct gp_store *s, const struct gp_model_quota *q);
int gp_store_model_quota_remove(struct gp_store *s, int64_t tenant, const char *model);
int gp_store_model_quota_list(struct gp_store *s, int64_t tenant,
			      struct gp_model_quota **ret, int *ret_n);
/* Which of the model quotas all[0..n) of `tenant` governs a device named
 * `device_name` (NVML's name): the one whose model the name answers to
 * (core/models.h, gp_model_best: "A10" is not an A100), the longest when
 * several do; its index, or -1 for none. The one matching rule of the
 * scheduler, the alerts and the metrics. */
int gp_store_model_quota_find(const struct gp_model_quota *all, int n, int64_t tenant,
			      const char *device_name);

int gp_store_template_add(struct gp_store *s, struct gp_template *t); /* sets t->id */
int gp_store_template_by_name(struct gp_store *s, const char *name,
			      struct gp_template *ret);
int gp_store_template_list(struct gp_store *s, struct gp_template **ret, int *ret_n);
/* Removes the template id (tasks keep the slice they took from it).
 * -ENOENT: none. */
int gp_store_template_remove(struct gp_store *s, int64_t id);

/* Tasks. task_add sets t->id, t->created and state PENDING. */
int gp_store_task_add(struct gp_store *s, struct gp_task *t);
int gp_store_task_get(struct gp_store *s, int64_t id, struct gp_task *ret);
/* tenant < 0: all tenants; state < 0: all states. Ordered by id. */
int gp_store_task_list(struct gp_store *s, int64_t tenant, int state,
		       struct gp_task **ret, int *ret_n);
int gp_store_task_count(struct gp_store *s, int state); /* >= 0, or -errno */
/* A page of tasks, for lists that may be long: those of `tenant` (< 0:
 * all tenants') whose state is in `states` (a set of bits
 * GP_TASK_STATE_BIT(state); 0: any state) and whose id is above `after`,
 * ordered by id, at most `limit` (1 to GP_STORE_PAGE_MAX). */
#define GP_TASK_STATE_BIT(state) (1u << (state))
#define GP_STORE_PAGE_MAX	 100000
int gp_store_task_page(struct gp_store *s, int64_t tenant, unsigned states, int64_t after,
		       int limit, struct gp_task **ret, int *ret_n);
/* What a task asks for, for the scheduler's target workload (the shapes
 * that arrive). whole: whole devices, or exclusive ones. */
struct gp_task_shape {
	uint64_t mem_mib;     /* per device */
	unsigned compute_pct; /* per device */
	unsigned devices;
	bool whole;
	char model[GP_STORE_NAME_MAX];
};
/* The shapes of the tasks submitted at or after since_ms (unix ms), the
 * newest first, at most limit (>= 1) of them; in a malloc'd array the
 * caller frees. */
int gp_store_task_shapes(struct gp_store *s, int64_t since_ms, int limit,
			 struct gp_task_shape **ret, int *ret_n);
/* Pending plus preempted tasks, counted once and then kept up to date by
 * task_add (and counted again after a task_update or a rollback): what
 * the queue bound checks at every submission, without a scan. */
int gp_store_queue_length(struct gp_store *s);
/* The queue: how many tasks are pending or preempted, and when the
 * oldest of them was submitted (unix ms; 0 when none). */
int gp_store_queue_stats(struct gp_store *s, int *ret_n, int64_t *ret_oldest);
/* Writes state, reason, placement, pid, exit_code, started, ended,
 * timed_out, mem_mib of a task whose memory is a percent (resolved on
 * the card it got; another's is fixed at submission),
 * and the live-changeable compute_pct and priority.
 * task_update changes the task t->id (-ENOENT: none); task_add gives
 * -ENOENT if t->tenant is no tenant. */
int gp_store_task_update(struct gp_store *s, const struct gp_task *t);
/* Makes task id of the array whose first task is array_id (the first
 * itself once its id is known). -ENOENT: no task id. */
int gp_store_task_array_set(struct gp_store *s, int64_t id, int64_t array_id);
/* Writes task id's reason alone (why it waits), as the loop does for
 * many at once (in one transaction of the caller's). -ENOENT: no task. */
int gp_store_task_reason(struct gp_store *s, int64_t id, const char *reason);

/* A task's declared environment variables, as the text of a JSON object
 * (agent/taskenv.h says what it may hold; the API checks it), kept
 * beside the task and not in struct gp_task, which the scheduling loop
 * loads by the thousand. env_set replaces the task's (-ENOENT: no task
 * id; -EINVAL: json is not the text of a JSON object); it joins the
 * caller's transaction, so a submission writes the task and its
 * variables at once. env_get gives a malloc'd copy in *ret_json, "{}"
 * when the task has none; the caller frees it. */
int gp_store_task_env_set(struct gp_store *s, int64_t id, const char *json);
int gp_store_task_env_get(struct gp_store *s, int64_t id, char **ret_json);

/* The log of an ended task that the server removed (all its files: to
 * keep the logs under their total cap, or the free space where they are
 * above its floor; server/logdir.h): when (unix ms), its size, and why.
 * log_removed writes it (replacing an earlier one of the task; -ENOENT:
 * no such task; -EINVAL: a why that does not fit); log_removal_get reads
 * it, -ENOENT when the task's log was not removed. */
struct gp_log_removal {
	int64_t task;
	int64_t removed;
	uint64_t bytes;
	char why[GP_REASON_MAX];
};
int gp_store_log_removed(struct gp_store *s, const struct gp_log_removal *rm);
int gp_store_log_removal_get(struct gp_store *s, int64_t task, struct gp_log_removal *ret);

/* The audit log: who (a tenant name, or "admin"/"server") did what to
 * which object, and why. */
int gp_store_audit(struct gp_store *s, const char *who, const char *action,
		   const char *object, const char *detail);
/* who and action must be non-empty; object and detail may be NULL (stored
 * as ""). who, action and object must fit their field in gp_audit_entry;
 * a longer detail is cut to GP_REASON_MAX - 1 bytes.
 * audit_list returns the whole log, oldest first (ordered by id);
 * audit_page a page of it, oldest first: the entries with an id above
 * `after`, at most `limit` (1 to GP_STORE_PAGE_MAX), or with after < 0
 * the newest `limit`. */
int gp_store_audit_list(struct gp_store *s, struct gp_audit_entry **ret, int *ret_n);
int gp_store_audit_page(struct gp_store *s, int64_t after, int limit,
			struct gp_audit_entry **ret, int *ret_n);
/* What an audit query keeps (NULL or 0: no bound): the rows of `who`,
 * of `action` (one ending in '.', "task.", is a prefix: every task.*
 * action), about `object`, written at since_ms or later and before
 * until_ms (unix ms). */
struct gp_audit_filter {
	const char *who, *action, *object;
	int64_t since_ms, until_ms;
};
/* A page of the entries f keeps (NULL: all), oldest first, at most limit
 * (1 to GP_STORE_PAGE_MAX): with after >= 0 the first ones with an id
 * above it; with after < 0 the newest; either way only those below
 * `before` when it is above 0. audit_any_before: whether f keeps an
 * entry with an id below `before`. */
int gp_store_audit_query(struct gp_store *s, const struct gp_audit_filter *f, int64_t after,
			 int64_t before, int limit, struct gp_audit_entry **ret, int *ret_n);
int gp_store_audit_any_before(struct gp_store *s, const struct gp_audit_filter *f,
			      int64_t before, bool *ret);

/* Transactions. Writes are durable one by one; a caller that makes many
 * at once (a sampling's usage records and alerts) wraps them in
 * begin/commit, so that they cost one commit (one fsync) and land all or
 * none. commit rolls back when it fails; rollback accepts a store with no
 * open transaction. Store calls inside join the caller's transaction. */
/* write(s, arg) (NULL: none) and the audit row, in one transaction:
 * both or neither. */
typedef int gp_store_write_fn(struct gp_store *s, const void *arg);
int gp_store_audited(struct gp_store *s, gp_store_write_fn *write, const void *arg,
		     const char *who, const char *action, const char *object, const char *detail);
int gp_store_begin(struct gp_store *s);
int gp_store_commit(struct gp_store *s);
void gp_store_rollback(struct gp_store *s);
/* A transaction whose commit does not wait for the disk (WAL with
 * synchronous=NORMAL): for what can be worked out again if a crash loses
 * it (the reasons of waiting tasks), so that writing it holds nobody up
 * for an fsync. It is never half there, and the next commit that waits
 * (every other one) makes it durable too. Ends as any other. */
int gp_store_begin_unsynced(struct gp_store *s);

/* Usage. usage_add writes n records all or none, in one transaction (or
 * in the caller's), and sets their ids; a record needs an existing task
 * and tenant (-ENOENT), non-empty device strings that fit, start <= end
 * and used_ms <= end - start (-EINVAL).
 * usage_list: the records whose start is in [from_ms, to_ms) and whose id
 * is above after_id, ordered by id, at most limit (>= 1); tenant < 0:
 * every tenant's. usage_sum: the records whose start is in the range,
 * added up per tenant and device model, ordered by tenant id and model. */
int gp_store_usage_add(struct gp_store *s, struct gp_usage_record *recs, int n);
int gp_store_usage_list(struct gp_store *s, int64_t tenant, int64_t from_ms,
			int64_t to_ms, int64_t after_id, int limit,
			struct gp_usage_record **ret, int *ret_n);
int gp_store_usage_sum(struct gp_store *s, int64_t tenant, int64_t from_ms, int64_t to_ms,
		       struct gp_usage_sum **ret, int *ret_n);
/* A page of task's records, ordered by id: those above after_id, at most
 * limit (>= 1). */
int gp_store_usage_of_task_page(struct gp_store *s, int64_t task, int64_t after_id, int limit,
				struct gp_usage_record **ret, int *ret_n);

/* The meter's history (meter.h), for charts over time: one sample per
 * sampling (at most one a second) of each device, of each tenant with
 * running tasks, and of the queue. series_add writes one sample all or
 * none (in the caller's transaction, or its own); -EINVAL for a device
 * without a UUID, ts_ms <= 0, -ENOENT for a tenant that is none.
 * series_prune drops the rows older than drop_before_ms and thins those
 * older than thin_before_ms to the first of each minute (of each device
 * and tenant). */
struct gp_series_device {
	char device[GP_STORE_DEVICE_MAX]; /* its UUID */
	char model[GP_STORE_DEVICE_MAX];
	bool sampled;			     /* false: NVML did not answer */
	uint64_t mem_used_mib;		     /* NVML's, when sampled */
	uint64_t mem_alloc_mib, mem_total_mib; /* the running slices', the device's */
	unsigned compute_alloc_pct, util_pct;  /* util_pct: NVML's, when sampled */
};
struct gp_series_tenant {
	int64_t tenant;
	uint64_t mem_used_mib;	/* its running tasks' processes', as sampled */
	uint64_t mem_alloc_mib; /* what their slices hold, over their devices */
	unsigned compute_alloc_pct;
};
struct gp_series_sample {
	int64_t ts_ms;
	const struct gp_series_device *device;
	int devices;
	const struct gp_series_tenant *tenant;
	int tenants;
	unsigned queue_length;	      /* pending + preempted tasks */
	int64_t queue_oldest_wait_ms; /* 0 when none waits */
};
int gp_store_series_add(struct gp_store *s, const struct gp_series_sample *x);
int gp_store_series_prune(struct gp_store *s, int64_t drop_before_ms, int64_t thin_before_ms);

/* The history in buckets of step_ms from from_ms (to before to_ms): per
 * device (ordered by UUID, then time), per tenant (tenant < 0: every
 * tenant's; by tenant id, then time), or of the queue; a bucket without
 * samples has no point. A point's figures are the bucket's averages and
 * most; the queue's are its length (in mem_used*) and its oldest wait in
 * ms (in mem_alloc*). metered_since: when the pool's history starts, the
 * first sample or usage record (unix ms; 0: none yet). */
struct gp_series_point {
	int64_t t_ms; /* the bucket's start */
	int64_t tenant;
	char device[GP_STORE_DEVICE_MAX], model[GP_STORE_DEVICE_MAX];
	int samples;
	bool used; /* mem_used_mib known (a device NVML answered for) */
	double mem_used_mib, mem_alloc_mib, compute_alloc_pct;
	double util_pct; /* < 0: NVML did not answer */
	uint64_t mem_used_max_mib, mem_alloc_max_mib, mem_total_mib;
};
int gp_store_series_devices(struct gp_store *s, int64_t from_ms, int64_t to_ms,
			    int64_t step_ms, struct gp_series_point **ret, int *ret_n);
int gp_store_series_tenants(struct gp_store *s, int64_t tenant, int64_t from_ms, int64_t to_ms,
			    int64_t step_ms, struct gp_series_point **ret, int *ret_n);
int gp_store_series_queue(struct gp_store *s, int64_t from_ms, int64_t to_ms, int64_t step_ms,
			  struct gp_series_point **ret, int *ret_n);
int gp_store_metered_since(struct gp_store *s, int64_t *ret_ms);

/* What task's records on one device add up to: the time used (ms), and
 * where the last ends (unix ms; 0 and 0 when it has none). */
int gp_store_usage_of_task(struct gp_store *s, int64_t task, const char *device_uuid,
			   int64_t *ret_used_ms, int64_t *ret_end_ms);

/* Alerts, deduplicated: alert_raise writes a->created (now) and a->id
 * and sets *ret_new when no alert of a->kind on a->object is active;
 * otherwise it writes nothing, *ret_new false. alert_clear marks the
 * active alert of that kind and object cleared now (none: 0, nothing
 * written). alert_list: the alerts, newest first, at most `limit`;
 * tenant < 0: everyone's, else that tenant's; active_only: not cleared. */
int gp_store_alert_raise(struct gp_store *s, struct gp_alert *a, bool *ret_new);
int gp_store_alert_clear(struct gp_store *s, const char *kind, const char *object);
int gp_store_alert_list(struct gp_store *s, int64_t tenant, bool active_only, int limit,
			struct gp_alert **ret, int *ret_n);
/* The same, of the alerts with an id below `before` (0: all): the page
 * after the one whose last alert is `before`. */
int gp_store_alert_page(struct gp_store *s, int64_t tenant, bool active_only, int64_t before,
			int limit, struct gp_alert **ret, int *ret_n);
/* An operator clears alert id (now). -ENOENT: no such alert; clearing a
 * cleared one changes nothing. The alert, as it is now, in *ret. */
int gp_store_alert_clear_id(struct gp_store *s, int64_t id, struct gp_alert *ret);

/* A tenant's part of the queue: its pending plus preempted tasks, for
 * the bound per tenant at each submission. One query over the queued
 * tasks (the state index), not over all of the tenant's tasks ever.
 * >= 0, or -errno. */
int gp_store_tenant_queue_length(struct gp_store *s, int64_t tenant);

/* Services (service.h): a tenant's replicated task. The store keeps the
 * spec the API accepted as JSON text (service.c reads it) and what the
 * autoscaler changes: the replicas wanted and each one's share. A removed
 * service stays, marked, for its replicas' rows; its name is free again.
 * service_add sets id and created; -EEXIST: the tenant has a live one of
 * that name. service_list: the live ones (tenant < 0: everyone's). */
#define GP_SERVICE_SPEC_MAX 4096

struct gp_service_row {
	int64_t id, tenant;
	char name[GP_STORE_NAME_MAX];
	char spec[GP_SERVICE_SPEC_MAX];
	unsigned replicas, share_pct;
	int64_t created, removed; /* unix ms; removed 0: live */
};

int gp_store_service_add(struct gp_store *s, struct gp_service_row *v);
int gp_store_service_list(struct gp_store *s, int64_t tenant, struct gp_service_row **ret,
			  int *ret_n);
/* Writes v's replicas and share_pct. -ENOENT: no live service v->id. */
int gp_store_service_scale(struct gp_store *s, const struct gp_service_row *v);
int gp_store_service_remove(struct gp_store *s, int64_t id);

/* A service's scaling step (service.h): the autoscaler's (who is
 * "service:NAME") or a person's, what it set, and why. step_add sets id,
 * and ts_ms when it is 0; -ENOENT: no service x->service. service_steps:
 * the newest `limit` (>= 1) of a service, newest first. */
struct gp_service_step {
	int64_t id, service, ts_ms;
	char who[GP_STORE_NAME_MAX];
	char step[16]; /* "out", "in", "grow", "shrink", "set" */
	unsigned replicas, share_pct; /* after the step */
	char reason[GP_REASON_MAX];
};

int gp_store_service_step_add(struct gp_store *s, struct gp_service_step *x);
int gp_store_service_steps(struct gp_store *s, int64_t service, int limit,
			   struct gp_service_step **ret, int *ret_n);

/* Schedules (schedule.h): a named time-of-day rule, kept as the JSON text
 * the API accepted. schedule_add sets id and created; -EEXIST: the name is
 * taken. */
struct gp_schedule_row {
	int64_t id;
	char name[GP_STORE_NAME_MAX];
	char rule[GP_REASON_MAX * 2];
	int64_t created;
};

int gp_store_schedule_add(struct gp_store *s, struct gp_schedule_row *v);
int gp_store_schedule_list(struct gp_store *s, struct gp_schedule_row **ret, int *ret_n);
int gp_store_schedule_remove(struct gp_store *s, const char *name); /* -ENOENT: none */

#endif
