/* shfile.h — files that many processes map to share state: one versioned
 * layout per file, made once and found by every later opener, and the
 * table of process slots such a file keeps.
 *
 * simdev's device state (simdev/simdev.c), the interposer's unmanaged
 * region (shim/region.c) and each task's own file (shim/taskfile.c) are
 * opened with gp_shfile_open; the limits table (shim/limits-table.c) and
 * a task file the agent makes are made with gp_shfile_make under a
 * temporary name and renamed into place. Their
 * mutexes are base/pshared.h's robust process-shared ones.
 *
 * Invariants, kept by every user:
 * 1. A file starts with struct gp_shfile_head: the magic (64 bits), then
 *    the version and the size of its layout (32 bits each). Every version
 *    of every layout keeps these three where they are, so an opener tells
 *    a file of another layout apart; a change of layout bumps the version.
 * 2. The magic is stored last (release), once the file is complete: its
 *    size set, its mutexes initialised, its fields written. An opener that
 *    sees the magic sees a complete file; one that does not see it within
 *    GP_SHFILE_READY_WAIT_NS takes the file for half made (its maker died).
 * 3. A file is made under its final name with O_EXCL, so one maker wins, or
 *    made complete under another name and renamed into place. A bad file
 *    (half made, of another layout or for another device) is removed only
 *    while it is still the very file found bad (same device and inode),
 *    so two openers never remove each other's new file.
 * 4. Mutexes in a shared file are robust and process-shared
 *    (gp_pshared_mutex_init; lockers use gp_pshared_mutex_lock, which takes
 *    a mutex over from a holder that died). A holder may die at any
 *    instruction, so what a mutex guards is changed by single atomic
 *    stores and is consistent between any two of them.
 * 5. A slot of a slot table belongs to one process, named by (pid, start
 *    time; base/proc.h). Its owner word packs a count of claims (high 32
 *    bits) with the pid (low 32 bits; 0: free) and is the only thing that
 *    says whether the slot is in use. A claim writes the free slot's fields
 *    first and publishes it with one compare-and-swap (claims, 0) ->
 *    (claims + 1, pid); giving a slot back (a dead owner's) is one
 *    compare-and-swap (claims, pid) -> (claims, 0), which fails when the
 *    slot changed hands meanwhile, so a stale decision never frees a live
 *    process's slot. Nothing lies in between: a process killed at any
 *    instruction leaves every slot free or owned by a dead pid, which the
 *    next reclaim frees. Readers ignore free slots.
 *
 * Functions return 0 (or an index) or a negative errno and print nothing.
 * Ownership: gp_shfile_open and gp_shfile_make return a mapping of
 * layout->size bytes that the caller unmaps with gp_shfile_unmap;
 * pointers into it live as long as the mapping. */
#ifndef GP_BASE_SHFILE_H
#define GP_BASE_SHFILE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GP_SHFILE_READY_WAIT_NS 2000000000ULL   /* a maker's time to finish */

/* The first words of every shared file, whatever its layout. */
struct gp_shfile_head {
	_Atomic uint64_t magic;         /* stored last: the file is complete */
	uint32_t version;
	uint32_t size;                  /* sizeof the layout: tells ABIs apart */
};

/* What a file must be, and how a new one is made. */
struct gp_shfile_layout {
	uint64_t magic;
	uint32_t version;
	uint32_t size;                  /* of the whole mapping, head included */
	mode_t mode;                    /* of a file this makes, exactly (no umask) */
	/* Fills a new file (all zeros, the head not yet written): 0 or a
	 * negative errno. NULL: zeros will do. */
	int (*init)(void *map, const void *arg);
	/* Is a complete file of this layout the one wanted (its device, its
	 * device set)? NULL: any is. */
	bool (*matches)(const void *map, const void *arg);
	const void *arg;                /* for init and matches */
};

enum {
	GP_SHFILE_CREATE = 1,           /* make a missing file, replace a bad one */
};

/* Maps the file at path. Without GP_SHFILE_CREATE only an existing file:
 * -ENOENT when there is none, -EIO when it is still half made after
 * GP_SHFILE_READY_WAIT_NS, -EPROTO when it is of another layout or does
 * not match. With it, a missing file is made (layout->mode) and a bad one
 * (half made, another layout, no match) is replaced once. */
int gp_shfile_open(const char *path, const struct gp_shfile_layout *layout, int flags,
		   void **ret_map);

/* Makes a new file at path (O_EXCL: -EEXIST when there is one; a link is
 * never followed), complete with its head; on failure nothing is left. */
int gp_shfile_make(const char *path, const struct gp_shfile_layout *layout, void **ret_map);

/* Is the mapping's head the layout's (magic, version, size)? */
bool gp_shfile_is(const void *map, const struct gp_shfile_layout *layout);

void gp_shfile_unmap(void *map, const struct gp_shfile_layout *layout);

/* ---- the pid slot table ---------------------------------------------- */

/* The first words of every slot. */
struct gp_shfile_slot {
	_Atomic uint64_t owner;         /* claims << 32 | pid; pid 0: free */
	_Atomic uint64_t start_time;    /* the owner's: tells a reused pid apart */
};

/* A table in a mapping: `count` slots, `stride` bytes apart, each one
 * starting with a struct gp_shfile_slot. */
struct gp_shfile_slots {
	void *first;
	size_t stride;
	int count;
};

static inline struct gp_shfile_slot *gp_shfile_slot_at(const struct gp_shfile_slots *t, int i)
{
	return (struct gp_shfile_slot *)((char *)t->first + (size_t)i * t->stride);
}

/* The pid of the slot's owner, 0 when it is free. */
pid_t gp_shfile_slot_pid(const struct gp_shfile_slot *s);

/* Is the slot's owner alive (its pid, with its start time)? */
bool gp_shfile_slot_is_alive(const struct gp_shfile_slot *s);

/* The slot of (pid, start), or -1. */
int gp_shfile_slot_find(const struct gp_shfile_slots *t, pid_t pid, uint64_t start);

/* Claims a free slot for (pid, start): fill(slot, arg) (may be NULL)
 * writes its fields, then one compare-and-swap publishes it. The caller
 * holds the mutex that serialises claims on this table (reclaimers leave
 * free slots alone, so the publishing cannot fail). Returns the slot's
 * index, or -EUSERS when none is free. */
int gp_shfile_slot_claim(const struct gp_shfile_slots *t, pid_t pid, uint64_t start,
			 void (*fill)(void *slot, void *arg), void *arg);

/* Claims slot i, which the caller has the right to by other means (a
 * slot of one file kept beside the same slot of another): a dead owner's
 * slot is given back first. -EBUSY when a live process other
 * than (pid, start) owns it. */
int gp_shfile_slot_claim_at(const struct gp_shfile_slots *t, int i, pid_t pid, uint64_t start,
			    void (*fill)(void *slot, void *arg), void *arg);

/* Gives back the slots of processes that died (gone, zombie, or a pid
 * reused since); slots of pid `alive` (0: none) are taken for alive
 * without asking. Returns how many it gave back. */
int gp_shfile_slot_reclaim(const struct gp_shfile_slots *t, pid_t alive);

#endif
