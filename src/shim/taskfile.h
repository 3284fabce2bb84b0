/* taskfile.h — what one task's processes write about one device, in a file
 * of the task's own.
 *
 * Every process that uses a device writes two things others must see: the
 * memory it holds (for its task's admission) and its turns (for the
 * arbiter). Both live in the task's file, device-UUID.tasks/task-K beside
 * the device's limits (K: the task's index in the device's task table), and
 * in no file shared with other tasks: a task's processes write only their
 * own task's file, and every other reader checks what it reads there.
 * The files are in a folder of the device's, device-UUID.tasks/task-K
 * (so that a container can be given the folder, read-only, and its own
 * task's file).
 * On a managed device the agent (root) makes the file at the task's
 * admission, owned by the task's user, mode 0644: others map it
 * read-only, so no task can write a neighbour's accounting or turns, nor
 * damage anything but its own file. (Tasks of one Unix user can write
 * each other's files: that is one tenant's own business.) A device that
 * is not managed has its files made by the first process of each task,
 * all of one user, mode 0600.
 *
 * What a file holds: its head (base/shfile.h), the device's UUID, the task
 * id and a stamp naming the task's admission (a file left by an earlier
 * task at the same index is found stale); the task's robust mutex for
 * memory admission, which only its own processes take; the task's account
 * of device time (arbiter.c); and GP_TASK_PROCS process slots, each a
 * base/shfile.h pid slot with the bytes its process holds and its turn.
 *
 * Readers who are not the task — other tasks' arbiters, the agent, the
 * CLI — take no lock in it and believe nothing unchecked: gp_taskfile_is_good
 * says whether a mapping is the task's at all, counts are clamped, and a
 * slot's figures are used only through the getters below, which bound
 * them. gp_taskfile_check lists what is wrong with a file for the agent,
 * which rebuilds it and names the task that wrote it.
 *
 * Functions return 0 or a negative errno and print nothing. Ownership:
 * the open and make functions return a mapping of GP_TASKFILE_SIZE bytes
 * that the caller unmaps with gp_taskfile_unmap. */
#ifndef GP_SHIM_TASKFILE_H
#define GP_SHIM_TASKFILE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/shfile.h"
#include "shim/region.h"

#define GP_TASK_PROCS GP_REGION_PROCS

enum gp_turn_state {
	GP_TURN_NONE = 0,    /* neither waiting nor holding */
	GP_TURN_WAITING = 1, /* wants the device */
	GP_TURN_TAKING = 2,  /* about to hold it, checking nobody else does */
	GP_TURN_HOLDING = 3, /* holds it until until_ns */
};

/* One process of the task. Its own process writes it; the task's other
 * processes may give it back when its process died. */
struct gp_taskfile_slot {
	struct gp_shfile_slot id;  /* owner (claims, pid), start time */
	_Atomic uint64_t bytes;    /* device memory the process holds */
	_Atomic uint32_t state;    /* enum gp_turn_state */
	_Atomic uint32_t turns;    /* bumped at every take and hand-over: a futex */
	_Atomic uint32_t idle;     /* holding, and all its work is done */
	_Atomic uint32_t interactive; /* its recent work came in short stretches */
	_Atomic uint64_t since_ns; /* waiting since (CLOCK_MONOTONIC) */
	_Atomic uint64_t until_ns; /* holding until */
	_Atomic uint64_t used_ns;  /* device time it held */
	uint64_t unused[8];
};

_Static_assert(sizeof(struct gp_taskfile_slot) == 128, "a slot is two cache lines");

struct gp_taskfile {
	struct gp_shfile_head head; /* magic (written last), version, size */
	char uuid[GP_UUID_STR_MAX];
	char id[GP_TASK_ID_MAX];
	uint64_t stamp;             /* the admission it was made for */
	pthread_mutex_t lock;       /* robust: admission among the task's processes */
	_Atomic uint32_t slots_hi;  /* 1 + the highest slot ever claimed */
	uint32_t unused;
	/* The task's account of device time (arbiter.c): all its processes
	 * draw on one budget and one virtual time. */
	_Atomic uint64_t vtime;      /* device time per share, in ns */
	_Atomic int64_t budget_ns;   /* hard: device time it may still take */
	_Atomic uint64_t refilled_ns; /* when the budget was last topped up */
	_Atomic uint64_t used_ns;    /* device time its processes held */
	struct gp_taskfile_slot slot[GP_TASK_PROCS];
};

#define GP_TASKFILE_SIZE ((uint32_t)sizeof(struct gp_taskfile))

/* The folder of a device's task files, dir/device-UUID.tasks, and a
 * file's path in it, .../task-INDEX. */
int gp_taskfile_dir(const char *dir, const char *uuid, char *buf, size_t len);
int gp_taskfile_path(const char *dir, const char *uuid, int index, char *buf, size_t len);

/* Makes the file of task `id` (admission `stamp`) at path, complete under
 * a temporary name and renamed over whatever was there (whose head it
 * then spoils, so that every reader that still maps it opens the new
 * one): owned by uid ((uid_t)-1: the caller) and gid ((gid_t)-1: kept),
 * with mode `mode`.
 * For the agent at a task's admission, and for rebuilding a damaged file
 * (the dir must be the caller's alone: dir/.task-tmp-PID is made there). */
int gp_taskfile_make(const char *path, const char *uuid, const char *id, uint64_t stamp,
		     uid_t uid, gid_t gid, mode_t mode);

/* Maps the file at path read and write (the task's own processes): -ENOENT
 * when there is none, -ESTALE when it is not task id's of admission stamp
 * (or damaged beyond use). With `create` (a device that is not managed) a
 * missing or stale file is made (mode 0600) or replaced. */
int gp_taskfile_open(const char *path, const char *uuid, const char *id, uint64_t stamp,
		     bool create, struct gp_taskfile **ret);

/* Maps it read-only, for a reader that is not the task: -ENOENT; -ESTALE
 * as above. The mapping stays valid when the file is replaced (it then
 * shows the old one: readers compare gp_taskfile_is_good again). */
int gp_taskfile_open_ro(const char *path, const char *uuid, const char *id, uint64_t stamp,
			const struct gp_taskfile **ret);

void gp_taskfile_unmap(const struct gp_taskfile *tf);

/* Is the mapping still the file of task id's admission `stamp` on uuid
 * (its head, UUID, id and stamp)? Anything the task may have written
 * since it was mapped is checked again: a task can damage its own file. */
bool gp_taskfile_is_good(const struct gp_taskfile *tf, const char *uuid, const char *id,
			 uint64_t stamp);

/* How many slots a reader looks at: slots_hi, at most GP_TASK_PROCS. */
int gp_taskfile_slots(const struct gp_taskfile *tf);

/* ---- the task's own processes ----------------------------------------- */

/* Claims a slot for the calling process, or finds the one it has: its
 * index; -EUSERS when all are taken by live processes. */
int gp_taskfile_join(struct gp_taskfile *tf);

/* Gives back the slots of processes that died. */
void gp_taskfile_reclaim(struct gp_taskfile *tf);

/* ---- what readers may believe ----------------------------------------- */

/* The memory the task's live processes hold, each slot's figure bounded
 * by `total` (the device's memory), and how many there are. */
uint64_t gp_taskfile_mem_used(const struct gp_taskfile *tf, uint64_t total,
			      unsigned *ret_procs);

/* Does the process (pid, started at `start`, as /proc said) hold a slot? The
 * verifier's test of "runs with the interposer": only a process that
 * joined its task through the interposer (or that wrote its own task's
 * file by hand: a task's file is its own) is in it. */
bool gp_taskfile_has_process(const struct gp_taskfile *tf, pid_t pid, uint64_t start);

/* What is wrong with a file the task writes, for the agent: 0 when
 * nothing, else -EBADMSG and why (one line) in why[len]. `total` bounds
 * the memory figures. A file whose head is gone (zeroed, randomised) is
 * wrong, and so is a slot out of every state a process writes. */
int gp_taskfile_check(const struct gp_taskfile *tf, const char *uuid, const char *id,
		      uint64_t stamp, uint64_t total, char *why, size_t len);

#endif
