/* region.h — the shared state of one physical device: the limits of the
 * tasks on it and what their processes use.
 *
 * libgpushare (the interposer in every task process) enforces a task's
 * slice without any daemon. Per device, in one directory
 *
 *   $GPUPOOL_RUN_DIR (default /run/gpupool when writable, else
 *   /tmp/gpupool-UID),
 *
 * there is a task table — up to GP_REGION_TASKS tasks, by task id, with
 * their limits — and one file per task, device-UUID.tasks/task-K
 * (taskfile.h),
 * where the task's processes (up to GP_REGION_PROCS) count the device
 * memory each holds and take their turns (arbiter.h). A task's memory in
 * use is the sum over its live processes, so a process killed at any
 * point takes its memory with it: slots of dead processes (pid gone,
 * zombie, or reused; base/proc.h) count for nothing and are given back.
 *
 * Where the limits come from:
 * - A device is MANAGED when its directory holds device-UUID.limits
 *   (limits-table.h): the task table that the server's agent (root)
 *   writes and every task can only read. There a process joins its task
 *   only with the task's secret (GPUPOOL_TASK_SECRET, whose hash the
 *   table keeps), the limits are the table's (what join is given is
 *   ignored), and they are read from the table at every check, so a
 *   change applies at the task's next allocation or turn. The agent makes
 *   each task's file at its admission, owned by the task's user, mode
 *   0644: a task writes its own file and no other, so nothing a task
 *   writes reaches another task's memory, turns or limits (gp_region_prepare
 *   makes the directory 0755, the caller's: tasks make, rename or remove
 *   no file there).
 * - A device without .limits (a user's own LD_PRELOAD with
 *   GPUPOOL_MEM_LIMIT, no server) keeps its task table in
 *   device-UUID.region and takes a task's limits from the first process
 *   that joins it; `gpupool region set` changes them there. Every file a
 *   process makes there is 0600, its user's alone.
 *
 * Admission is atomic across processes: gp_region_mem_reserve checks the
 * task's limit and counts the bytes under the robust process-shared mutex
 * of the task's own file, so processes racing can never exceed the limit
 * together, a process dying inside the lock does not block the others,
 * and no other task can block or fail it.
 *
 * Nothing here prints, exits or aborts: functions return 0 or a negative
 * errno. Ownership: gp_region_open returns a handle the caller closes with
 * gp_region_close; pointers into it live as long as the handle. */
#ifndef GP_SHIM_REGION_H
#define GP_SHIM_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GP_REGION_TASKS 32
#define GP_REGION_PROCS 64      /* processes of one task on one device */
#define GP_TASK_ID_MAX 64
#define GP_UUID_STR_MAX 48
#define GP_REGION_SYSTEM_DIR "/run/gpupool"
#define GP_TASK_SECRET_MIN 32           /* hexadecimal digits */
#define GP_TASK_SECRET_MAX 128
#define GP_TASK_SECRET_LEN 32           /* what gp_task_secret_new makes */

enum gp_isolation {
	GP_ISOLATION_HARD = 0,          /* the share is a cap, even when idle */
	GP_ISOLATION_SHARED = 1,        /* the share is a guarantee; idle time may be borrowed */
};

/* What a task is allowed on one device. */
struct gp_task_limits {
	uint64_t mem_bytes;             /* hard limit; 0 = the whole device */
	unsigned compute;               /* percent of the device, 1..100 */
	unsigned priority;              /* 0..9, higher first */
	enum gp_isolation isolation;
};

/* A task as `gpupool region ls|show` reports it. */
struct gp_task_info {
	char id[GP_TASK_ID_MAX];
	struct gp_task_limits limits;
	uint64_t mem_used;              /* live processes only */
	unsigned processes;
	uint64_t generation;            /* bumped by every change of limits */
	uint64_t used_ns;               /* device time its processes held, as the arbiter
					 * charged it, while its file lives (cooperative:
					 * the file is the task's to write) */
	bool managed;                   /* the limits are the limits table's */
};

struct gp_region;
struct gp_taskfile;

/* Opens the state of the device with this UUID in dir (NULL:
 * $GPUPOOL_RUN_DIR or the default above). Managed, it maps the limits
 * table read-only (-EPROTO: of another version; -EPERM: writable by others
 * than its owner, so it proves nothing). Not managed, it maps the region
 * file, making it when needed: total_bytes is the device's memory,
 * recorded at creation; with total_bytes 0 it opens an existing one only:
 * -ENOENT when there is none, -EPROTO when it was made by another version,
 * -EIO when it was left half made (it cannot make a new one without the
 * device's size). */
int gp_region_open(const char *dir, const char *uuid, uint64_t total_bytes,
		   struct gp_region **ret_region);
void gp_region_close(struct gp_region *r);

/* The directory regions live in (dir, or the default); for the CLI. */
void gp_region_dir(const char *dir, char *buf, size_t len);

/* Is the device managed (has a limits table)? The first as opened, the
 * second by looking in dir now (NULL: as gp_region_dir). */
bool gp_region_is_managed(const struct gp_region *r);
bool gp_region_is_managed_in(const char *dir, const char *uuid);

/* Joins the calling process to task `id` and gives it a slot in the
 * task's file. A handle joins one task; joining again returns the same
 * slot, and joining another is -EEXIST. -ENOSPC when the task table or
 * the task's slots are full, -EINVAL for a bad id (or, unmanaged, bad
 * limits), -ESRCH when the process cannot tell its own start time (no
 * /proc), -ESTALE when the task's file is missing or not the task's.
 * Unmanaged: the task is made with `limits` when it is new, or when none
 * of its processes is alive; a running task keeps its limits; the secret
 * plays no part. Managed: `limits` is ignored (may be NULL); -ENOENT when
 * the table has no entry for the task, -EPERM when `secret` is missing or
 * not the one the task was admitted with (-EAGAIN: the entry could not be
 * read, see limits-table.h). gp_region_join is gp_region_join_as without a
 * secret. */
int gp_region_join_as(struct gp_region *r, const char *id, const char *secret,
		      const struct gp_task_limits *limits, int *ret_slot);
int gp_region_join(struct gp_region *r, const char *id,
		   const struct gp_task_limits *limits, int *ret_slot);

/* Counts `bytes` against the slot's task: -ENOMEM when that would pass
 * the task's limit (reclaiming dead processes' memory first); -EINVAL for
 * a slot that is not the calling process's (a child after fork must join
 * again; gp_region_mem_release ignores such a slot). Managed, the limit
 * is the table entry's mem_bytes (0: the whole device) read at each call,
 * and -EPERM when the entry is gone or was given to another task or
 * secret since the join (gp_region_task_forget). */
int gp_region_mem_reserve(struct gp_region *r, int slot, uint64_t bytes);
void gp_region_mem_release(struct gp_region *r, int slot, uint64_t bytes);

/* The joined slot's task: its limits now (they may change while it runs)
 * and the memory its processes hold. gp_region_limits fills zeros and
 * returns -ENOENT for a slot that is not the handle's, and, managed,
 * fills zeros and returns -EPERM as gp_region_mem_reserve would.
 * gp_region_task_used returns 0 for a slot that is not the handle's; it
 * takes the task's mutex (never held long) and makes no system call
 * otherwise.
 * gp_region_total is the table's figure when the device is managed. */
int gp_region_limits(struct gp_region *r, int slot, struct gp_task_limits *ret);
uint64_t gp_region_task_used(struct gp_region *r, int slot);
uint64_t gp_region_total(const struct gp_region *r);

/* The pids of the processes in the slot's task (up to max); returns how
 * many there are. */
int gp_region_task_pids(struct gp_region *r, int slot, pid_t *out, int max);

/* Frees the slots (and so the memory) of the joined task's processes
 * that died. */
void gp_region_reclaim(struct gp_region *r);

/* Charges device time to the joined slot's task (the arbiter, at the end
 * of each turn). */
void gp_region_charge(struct gp_region *r, int slot, uint64_t ns);

/* Live changes, by task id: -ENOENT for an unknown task, -EINVAL for an
 * out-of-range value. Takes effect at the tasks' next check. Managed, it
 * writes the limits table (and the region's copy for display): -EACCES
 * for a caller who cannot write the table, -ENOENT for a task that was
 * never admitted. */
int gp_region_set(struct gp_region *r, const char *id, const struct gp_task_limits *limits);

/* Fills up to max tasks and returns how many there are, in table order:
 * each with its limits and generation, and what its live processes hold
 * and used as its file says (managed: admitted tasks show 0 processes
 * until one joins; a task whose file is damaged shows none). */
int gp_region_tasks(struct gp_region *r, struct gp_task_info *out, int max);

/* Task `index` of the device as a reader that is not the task sees it:
 * its limits (the table's) and its file mapped read-only (NULL when it has
 * no good one; a reader believes nothing in it unchecked, taskfile.h).
 * -ENOENT: no task at that index. The mapping stays valid until the next
 * gp_region_peer of that index on this handle: its callers take turns
 * (the arbiter, under its turn lock). */
struct gp_region_peer {
	struct gp_task_limits limits;
	const struct gp_taskfile *tf;
};
int gp_region_peer(struct gp_region *r, int index, struct gp_region_peer *ret);

/* The joined task's own file, read and write (NULL before the join), and
 * its index: for the arbiter, which writes its turns there. */
struct gp_taskfile *gp_region_mine(struct gp_region *r, int *ret_index);

/* ---- for the server's agent (root), on a managed device ------------- */

/* Makes (or repairs) the directory and the limits table of the device,
 * for a machine whose tasks run as several users: dir (as gp_region_open
 * resolves it) mode 0755, the caller's (-EPERM when it is someone else's
 * or not a directory); device-UUID.limits 0644, the caller's. What is
 * there already is kept (tasks, limits, their files) when it is of this
 * version and safe, else replaced; the files of earlier versions that
 * every task could write (.region, .sched) are removed, and so are task
 * files of no task. Leaves the umask alone. */
int gp_region_prepare(const char *dir, const char *uuid, uint64_t total_bytes);

/* Removes the device's files (its limits table first, so that nobody
 * takes it for managed meanwhile): for a device that is gone for good,
 * such as a hardware partition destroyed. Open handles keep working on
 * what they mapped. */
int gp_region_remove(const char *dir, const char *uuid);

/* Who a task's processes run as: its file is theirs to write. uid
 * (uid_t)-1: not known (tasks of several users share gid: the file is
 * the caller's, mode 0660 with that group, writable by all of them). */
struct gp_task_owner {
	uid_t uid;
	gid_t gid;
};

/* Adds task id to the limits table, or replaces its entry (new secret,
 * new limits), and makes its file (owned by `owner`; NULL: not known)
 * unless a good one of the same admission is there, before its processes
 * start: -ENOSPC when the table is full, -EACCES when the caller cannot
 * write it, -EINVAL for a bad id, secret or limits, -EOPNOTSUPP when the
 * device is not managed. */
int gp_region_task_admit(struct gp_region *r, const char *id, const char *secret,
			 const struct gp_task_limits *limits, const struct gp_task_owner *owner);

/* Removes task id from the table at its end, and its file: its processes
 * that still run are refused from then on (-ENOENT, -EACCES,
 * -EOPNOTSUPP). */
int gp_region_task_forget(struct gp_region *r, const char *id);

/* What is wrong with task id's file (taskfile.h: gp_taskfile_check): 0
 * when nothing, -EBADMSG and why when it is damaged or gone, -ENOENT when
 * the table has no such task. For the agent, which names the task. */
int gp_region_task_check(struct gp_region *r, const char *id, char *why, size_t len);

/* Makes task id's file anew from the table (its processes' slots start
 * empty), replacing a damaged one; owner as gp_region_task_admit, NULL:
 * the present file's owner and mode are kept. */
int gp_region_task_file_make(struct gp_region *r, const char *id,
			     const struct gp_task_owner *owner);

/* Where task id's file is (-ENOENT: no such task), and the folder of
 * the device's task files (a container is given the folder read-only and
 * its own task's file to write: the Kubernetes node program). */
int gp_region_task_path(struct gp_region *r, const char *id, char *buf, size_t len);
int gp_region_tasks_dir(const char *dir, const char *uuid, char *buf, size_t len);

/* Does the live process (pid, started at `start`) hold a slot in task
 * id's file (did it join the task through the interposer)? For the
 * verifier. */
bool gp_region_task_has_process(struct gp_region *r, const char *id, pid_t pid,
				uint64_t start);

/* A new random secret of GP_TASK_SECRET_LEN hexadecimal digits (from
 * getrandom), for GPUPOOL_TASK_SECRET and gp_region_task_admit. */
int gp_task_secret_new(char ret[GP_TASK_SECRET_LEN + 1]);

/* Is this a secret's form: GP_TASK_SECRET_MIN..MAX hexadecimal digits,
 * an even number of them? */
bool gp_task_secret_is_valid(const char *secret);

#endif
