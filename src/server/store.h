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
 * and quotas), templates, tasks, and the audit log. Rows come back in
 * caller-owned structs; lists come back as arrays the caller frees with
 * free(). Functions return 0 or a negative errno (-ENOENT: no such row,
 * -EEXIST: name taken, -EIO: SQLite failed; gp_store_error says why).
 * A store is used from one thread at a time.
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

#define GP_STORE_NAME_MAX	    64
#define GP_COMMAND_MAX	    1024
#define GP_REASON_MAX	    256
#define GP_TOKEN_HEX	    64 /* a token's SHA-256, in hex */
#define GP_AUDIT_ACTION_MAX 32
#define GP_AUDIT_OBJECT_MAX 64

/* The schema version this code writes: the number of migrations in
 * store.c. Adding a migration means adding it there and raising this. */
#define GP_STORE_SCHEMA_VERSION 1

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
	int64_t created;					 /* unix seconds */
};

struct gp_template {
	int64_t id;
	char name[GP_STORE_NAME_MAX];
	char models[GP_STORE_NAME_MAX * 2]; /* comma list of device models; empty: any */
	uint64_t mem_mib;
	unsigned compute_pct;
	bool hard; /* isolation: hard cap, or shared */
};

struct gp_task {
	int64_t id;
	int64_t tenant;
	char name[GP_STORE_NAME_MAX];
	char command[GP_COMMAND_MAX];
	uint64_t mem_mib;     /* per device */
	unsigned compute_pct; /* per device */
	unsigned devices;     /* how many devices */
	bool whole;	      /* whole devices, as a gang */
	bool exclusive;
	bool hard;
	unsigned priority;	 /* 0-9 */
	char kind[16];		 /* "inference", "training", "batch", ... */
	char model[GP_STORE_NAME_MAX]; /* device model constraint; empty: any */
	enum gp_task_state state;
	char reason[GP_REASON_MAX];    /* why pending, why failed */
	char placement[GP_REASON_MAX]; /* "node0:GPU-uuid,..." when running */
	int64_t pid;		       /* the task's process group, when running */
	int exit_code;
	int64_t created, started, ended; /* unix ms; 0: not yet */
};

struct gp_audit_entry {
	int64_t id;
	int64_t ts; /* unix ms */
	char who[GP_STORE_NAME_MAX];
	char action[GP_AUDIT_ACTION_MAX];
	char object[GP_AUDIT_OBJECT_MAX];
	char detail[GP_REASON_MAX];
};

/* open creates the file (mode 0600) if needed and migrates it to
 * GP_STORE_SCHEMA_VERSION; a file whose schema is newer gives -EPROTO and
 * is not written. ":memory:" opens a private in-memory store (tests).
 * The caller owns *ret and frees it with gp_store_close (NULL is fine). */
int gp_store_open(const char *path, struct gp_store **ret);
void gp_store_close(struct gp_store *s);
/* The message of s's last failure, or with s NULL the message of this
 * thread's last failed gp_store_open. Valid until the next call. */
const char *gp_store_error(const struct gp_store *s); /* last failure */
int gp_store_schema_version(struct gp_store *s);      /* >= 0, or -errno */

/* Tenants. tenant_add makes a random token, returns it once in
 * token_out (GP_TOKEN_HEX + 1 bytes) and stores only its hash.
 * tenant_add sets t->id and t->created; set_quota writes the four quota
 * fields of the tenant t->id (-ENOENT: none). */
int gp_store_tenant_add(struct gp_store *s, struct gp_tenant *t, char *token_out);
int gp_store_tenant_by_token(struct gp_store *s, const char *token,
			     struct gp_tenant *ret);
int gp_store_tenant_by_name(struct gp_store *s, const char *name, struct gp_tenant *ret);
int gp_store_tenant_list(struct gp_store *s, struct gp_tenant **ret, int *ret_n);
int gp_store_tenant_set_quota(struct gp_store *s, const struct gp_tenant *t);

int gp_store_template_add(struct gp_store *s, struct gp_template *t); /* sets t->id */
int gp_store_template_by_name(struct gp_store *s, const char *name,
			      struct gp_template *ret);
int gp_store_template_list(struct gp_store *s, struct gp_template **ret, int *ret_n);

/* Tasks. task_add sets t->id, t->created and state PENDING. */
int gp_store_task_add(struct gp_store *s, struct gp_task *t);
int gp_store_task_get(struct gp_store *s, int64_t id, struct gp_task *ret);
/* tenant < 0: all tenants; state < 0: all states. Ordered by id. */
int gp_store_task_list(struct gp_store *s, int64_t tenant, int state,
		       struct gp_task **ret, int *ret_n);
int gp_store_task_count(struct gp_store *s, int state); /* >= 0, or -errno */
/* Writes state, reason, placement, pid, exit_code, started, ended, and
 * the live-changeable compute_pct and priority.
 * task_update changes the task t->id (-ENOENT: none); task_add gives
 * -ENOENT if t->tenant is no tenant. */
int gp_store_task_update(struct gp_store *s, const struct gp_task *t);

/* The audit log: who (a tenant name, or "admin"/"server") did what to
 * which object, and why. */
int gp_store_audit(struct gp_store *s, const char *who, const char *action,
		   const char *object, const char *detail);
/* who and action must be non-empty; object and detail may be NULL (stored
 * as ""). who, action and object must fit their field in gp_audit_entry;
 * a longer detail is cut to GP_REASON_MAX - 1 bytes.
 * audit_list returns the whole log, oldest first (ordered by id). */
int gp_store_audit_list(struct gp_store *s, struct gp_audit_entry **ret, int *ret_n);

#endif
