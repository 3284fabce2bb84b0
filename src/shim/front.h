/* front.h — the vendor-neutral core of libgpushare, as a runtime's front
 * end sees it.
 *
 * libgpushare is one core and one front end per runtime API. The core
 * (src/shim/: device.c, held.c, trail.c over region.c, arbiter.c and
 * config.c) knows devices only by UUID: their regions, memory admission,
 * the compute arbiter. A front end (src/vendor/NAME/shim-*.c: CUDA's in
 * src/vendor/nvidia/, ACL's in src/vendor/ascend/, …) exports the
 * runtime's entry points under their real names, answers the runtime's own
 * lookup call where it has one (cuGetProcAddress, hipGetProcAddress,
 * dlsym on the runtime's handle), and for each hooked call:
 *
 *   device   gp_shim_front_device(front, ordinal) gives the slice of the
 *            runtime's device `ordinal` (its region and arbiter, set up on
 *            first use; a device seen by two runtimes is one device);
 *   memory   gp_shim_admit before the real allocation; after it,
 *            gp_shim_settle (held on success, given back on failure);
 *            a free: gp_shim_take before the real free, gp_shim_freed
 *            after (given back, or put back when the runtime refused);
 *   launch   gp_shim_gate before a launch (waits for the device's turn),
 *            gp_shim_launched after a successful one (bounds the work
 *            queued, with the front end's events), gp_shim_waited after
 *            a synchronization returned (the turn need not keep an idle
 *            device);
 *   views    gp_shim_view clamps the runtime's memory figures to the
 *            slice (aclrtGetMemInfo, hipMemGetInfo, …).
 *
 * Errors are 0 or a negative errno, which the front end turns into its
 * runtime's own error (-ENOMEM into the runtime's out-of-memory error, so
 * frameworks raise their usual OOM): -ENOMEM past the task's memory limit,
 * -EPERM a managed device refuses the task (no entry, wrong secret: for
 * good), -EINVAL a bad GPUPOOL_* setting (said on stderr once: it must not
 * run unlimited), -ENODEV the front end could not identify the device,
 * -EIO the region or arbiter could not be opened.
 *
 * Threads: every function may be called from many threads at once. */
#ifndef GP_SHIM_FRONT_H
#define GP_SHIM_FRONT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/config.h"
#include "shim/region.h"

struct gp_arbiter;

/* One device for this process. Written by its set-up only, before it is
 * published; read only after (its region and arbiter guard their own
 * state). */
struct gp_shim_device {
	char uuid[GP_UUID_STR_MAX];
	const char *dir;                /* of its region: NULL, run_dir or the system's */
	struct gp_region *region;
	int slot;
	int index;                      /* in the core's table: 0..GP_SHIM_DEVICES_MAX-1 */
	bool limited;                   /* allocations are counted (a limit applies, or may) */
	struct gp_arbiter *arbiter;     /* NULL: launches are not gated */
};

/* A runtime's front end: what the core calls back, and the core's state
 * for it. Define one per front end, statically, with the callbacks set
 * and the rest zero (GP_SHIM_FRONT_INIT). */
struct gp_shim_front {
	const char *name;               /* "cuda", "acl", "hip", "cnrt", "ze": in messages */
	/* dlsym on a handle of the library whose file name starts with
	 * `library` ("libcuda.so") answers hook(symbol) when that is not
	 * NULL (a program that dlopens the runtime and looks its functions
	 * up gets ours). */
	const char *library;
	void *(*hook)(const char *symbol);
	/* The UUID of the runtime's device `ordinal` (as the agent's vendor
	 * backend reports it: its region's name) and its memory in bytes.
	 * 0 or a negative errno. Called once per ordinal, under no lock of
	 * the core's but the front end's own. NULL: a front end that only
	 * answers dlsym (NVML's views). */
	int (*identify)(int ordinal, char *uuid, size_t uuid_len, uint64_t *total_bytes);
	/* Events on the runtime's streams, for bounding queued work; all
	 * NULL: launches are gated but not bounded. `flavour` tells apart
	 * streams of one handle value (CUDA's per-thread default stream). */
	int (*event_create)(void **ret_event);                  /* 0: made */
	int (*event_record)(void *event, void *stream, bool flavour);
	int (*event_query)(void *event);                        /* 0 done, 1 not yet, <0 failed */
	/* Waits for all this process's work on the current device (at the
	 * end of a turn); NULL: nothing to wait for. */
	void (*drain)(void *unused);

	/* The core's, zero at first. */
	struct gp_shim_device *_Atomic device[GP_SHIM_DEVICES_MAX];
	int refused[GP_SHIM_DEVICES_MAX];
	pthread_mutex_t lock;
};

#define GP_SHIM_FRONT_INIT .lock = PTHREAD_MUTEX_INITIALIZER

/* Every front end, NULL terminated (front-registry.c, generated). */
extern struct gp_shim_front *const gp_shim_fronts[];

/* glibc's dlsym, not our hook (for a front end that looks its runtime's
 * functions up in the handle it opened). */
void *gp_shim_real_dlsym(void *handle, const char *symbol);

/* The configuration (GPUPOOL_* variables), loaded once: 0 or -EINVAL
 * (said on stderr). */
int gp_shim_configured(void);

/* GPUPOOL_LOG: prints on stderr when set; never otherwise. */
__attribute__((format(printf, 1, 2))) void gp_shim_say(const char *fmt, ...);

/* The slice of the runtime's device `ordinal` (0..GP_SHIM_DEVICES_MAX-1). */
int gp_shim_front_device(struct gp_shim_front *f, int ordinal, struct gp_shim_device **ret);

/* The device with this UUID, set up already by any front end, or joined
 * now (for memory accounting; `index` picks its per-device limit). */
int gp_shim_device_by_uuid(const char *uuid, int index, uint64_t total_bytes,
			   struct gp_shim_device **ret);

/* ---- memory ----------------------------------------------------------- */

/* Counts `bytes` against the task on d, atomically across its processes:
 * 0, -ENOMEM past the limit, -EPERM its entry is gone. */
int gp_shim_admit(struct gp_shim_device *d, uint64_t bytes);

/* After the runtime answered an admitted allocation: on success the
 * allocation `key` (its pointer or handle) holds the bytes until freed;
 * on failure they are given back. Returns ok. */
bool gp_shim_settle(bool ok, struct gp_shim_device *d, uint64_t key, uint64_t bytes);

/* A free of `key`: taken out before the runtime frees (NULL when we never
 * counted it), then gp_shim_freed with whether the runtime freed it: the
 * bytes go back, or the entry does. gp_shim_take_all takes every entry
 * of key (a graph's memory nodes, say), and gp_shim_freed settles them
 * all. */
struct gp_shim_held;
struct gp_shim_held *gp_shim_take(uint64_t key);
struct gp_shim_held *gp_shim_take_all(uint64_t key);
void gp_shim_freed(struct gp_shim_held *h, bool ok);

/* The runtime freed every allocation this process had on d (its device
 * or context was reset): the bytes all go back. */
void gp_shim_forget(struct gp_shim_device *d);

/* The runtime's figures for d, clamped to the slice: *total the smaller
 * of the device and the limit, *free what the task may still allocate.
 * free_bytes may be NULL. Nothing changes when d is not limited. */
void gp_shim_view(struct gp_shim_device *d, uint64_t *total, uint64_t *free_bytes);

/* ---- compute ---------------------------------------------------------- */

/* Waits for d's turn (returns at once when d has no arbiter). */
void gp_shim_gate(struct gp_shim_front *f, struct gp_shim_device *d);

/* After a successful launch on `stream`: the calling thread's work on d
 * is pending, and bounded (an event every few launches; the previous one
 * must be done before the next is recorded). */
void gp_shim_launched(struct gp_shim_front *f, struct gp_shim_device *d, void *stream,
		      bool flavour);

/* After a synchronization returned successfully: what it waited for. */
enum gp_shim_waited { GP_WAITED_DEVICE, GP_WAITED_STREAM, GP_WAITED_OTHER };
void gp_shim_waited(struct gp_shim_front *f, struct gp_shim_device *d, enum gp_shim_waited what,
		    void *stream, bool flavour);

#endif
