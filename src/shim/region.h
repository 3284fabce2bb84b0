/* region.h — the shared region of one physical device: the limits of the
 * tasks on it and what their processes use.
 *
 * libgpushare (the interposer in every task process) enforces a task's
 * slice without any daemon: the limits live in a file per device that
 * every process using the device maps,
 *
 *   $GPUPOOL_RUN_DIR (default /run/gpupool when writable, else
 *   /tmp/gpupool-UID) / device-UUID.region
 *
 * and the server or `gpupool region set` change them there while tasks
 * run. A region holds up to GP_REGION_TASKS tasks (by task id) and
 * GP_REGION_PROCS process slots; each slot belongs to one task and counts
 * the device memory its process holds. A task's memory in use is the sum
 * over its live slots, so a process killed at any point takes its memory
 * with it: gp_region_reclaim (called on admission failure, by readers, and
 * at least every second by the arbiter) frees the slots of dead processes
 * (pid gone, zombie, or reused; base/proc.h).
 *
 * Admission is atomic across processes: gp_region_mem_reserve checks the
 * task's limit and counts the bytes under the task's robust process-shared
 * mutex, so processes racing can never exceed the limit together, and a
 * process dying inside the lock does not block the others.
 *
 * Nothing here prints, exits or aborts: functions return 0 or a negative
 * errno. Ownership: gp_region_open returns a mapping the caller closes with
 * gp_region_close; pointers into it live as long as the mapping. */
#ifndef GP_SHIM_REGION_H
#define GP_SHIM_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GP_REGION_TASKS 32
#define GP_REGION_PROCS 128
#define GP_TASK_ID_MAX 64
#define GP_UUID_STR_MAX 48

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
};

struct gp_region;

/* Opens (creating when needed) the region of the device with this UUID in
 * dir (NULL: $GPUPOOL_RUN_DIR or the default above). total_bytes is the
 * device's memory, recorded at creation. */
int gp_region_open(const char *dir, const char *uuid, uint64_t total_bytes,
		   struct gp_region **ret_region);
void gp_region_close(struct gp_region *r);

/* The directory regions live in (dir, or the default); for the CLI. */
void gp_region_dir(const char *dir, char *buf, size_t len);

/* Joins the calling process to task `id` (creating the task with `limits`
 * when it is new, or when none of its processes is alive; a running task
 * keeps its limits) and gives it a slot.
 * A process joins one task per region; joining again returns the same
 * slot. -ENOSPC when the task or slot table is full. */
int gp_region_join(struct gp_region *r, const char *id,
		   const struct gp_task_limits *limits, int *ret_slot);

/* Counts `bytes` against the slot's task: -ENOMEM when that would pass
 * the task's limit (reclaiming dead processes' memory first). */
int gp_region_mem_reserve(struct gp_region *r, int slot, uint64_t bytes);
void gp_region_mem_release(struct gp_region *r, int slot, uint64_t bytes);

/* The slot's task: its limits now (they may change while it runs) and the
 * memory its live processes hold. */
void gp_region_limits(struct gp_region *r, int slot, struct gp_task_limits *ret);
uint64_t gp_region_task_used(struct gp_region *r, int slot);
uint64_t gp_region_total(const struct gp_region *r);

/* The index (0..GP_REGION_TASKS-1) of the slot's task, and its id in
 * id[len] (id may be NULL); -ENOENT when the slot has none. */
int gp_region_task_of(struct gp_region *r, int slot, char *id, size_t len);

/* The pids of the processes in the slot's task (up to max); returns how
 * many there are. */
int gp_region_task_pids(struct gp_region *r, int slot, pid_t *out, int max);

/* Frees the slots (and so the memory) of processes that died. */
void gp_region_reclaim(struct gp_region *r);

/* Live changes, by task id: -ENOENT for an unknown task, -EINVAL for an
 * out-of-range value. Takes effect at the tasks' next check. */
int gp_region_set(struct gp_region *r, const char *id, const struct gp_task_limits *limits);

/* Fills up to max tasks (active ones, in table order); returns how many
 * there are. */
int gp_region_tasks(struct gp_region *r, struct gp_task_info *out, int max);

/* Parses "4G", "4096M", "512K", "1073741824" (bytes) into bytes; -EINVAL
 * for anything else (negative, empty, bad suffix, overflow). */
int gp_parse_size(const char *text, uint64_t *ret_bytes);

#endif
