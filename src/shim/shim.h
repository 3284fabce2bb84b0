/* shim.h — what the parts of libgpushare share; internal to src/shim/.
 *
 * gpushare.c finds the real driver and answers for the hooked functions
 * (cuGetProcAddress, dlsym on the driver's handle, and plain symbol
 * interposition); memory.c enforces memory slices. State is per process,
 * set up lazily by the first hooked call, so a process that never touches
 * the driver pays nothing.
 *
 * Threads: every hook may run in many threads at once. The configuration
 * is loaded once (pthread_once in gp_shim_ready). Device i is set up once
 * under its own mutex, however many threads race into it, and published
 * by an atomic flag: after that, gp_shim_device is one atomic load and the
 * struct gp_shim_device is read only (its region and arbiter guard their
 * own state: region.h, arbiter.h). The devices seen through NVML only, and
 * the driver's handle, are under gpushare.c's lock; memory.c's table of
 * allocations is under its own. */
#ifndef GP_SHIM_SHIM_H
#define GP_SHIM_SHIM_H

#include "base/proc-table.h"
#include "include/gp-cuda.h"
#include "shim/arbiter.h"
#include "shim/config.h"
#include "shim/region.h"

/* The generated table of hooks (hooks-table.c): our function for each
 * (name, cudaVersion, per-thread) of the driver API that we hook. */
extern const struct proc_entry proc_table[];
extern const size_t proc_table_size;

/* A hooked entry point's real counterpart: the driver's function for
 * (name, cudaVersion, per-thread), looked up once. */
void *gp_shim_real(const char *name, int version, int per_thread);

#define GP_REAL(type, name, version, per_thread)                               \
	({                                                                     \
		static void *_Atomic cached;                                   \
		void *fn_ = cached;                                            \
		if (!fn_)                                                      \
			cached = fn_ = gp_shim_real(name, version, per_thread); \
		(type) fn_;                                                    \
	})

/* The state of one device for this process: its region and our slot.
 * Written by its set-up only, before it is published; read only after. */
struct gp_shim_device {
	char uuid[GP_UUID_STR_MAX];
	const char *dir;                /* of its region: NULL, run_dir or the system's */
	struct gp_region *region;
	int slot;
	bool limited;           /* allocations are counted (a limit applies, or may) */
	struct gp_arbiter *arbiter;     /* NULL: launches are not gated */
};

/* Set-up on first use (configuration, the real driver); CUDA_SUCCESS or
 * the error every guarded call returns (a bad configuration refuses). */
CUresult gp_shim_ready(void);

/* The device of the calling thread's current context, set up. */
CUresult gp_shim_current(struct gp_shim_device **ret_dev, int *ret_index);
CUresult gp_shim_device(int index, struct gp_shim_device **ret_dev);

/* The device with this UUID (NVML's view; `index` is its NVML index, for
 * the per-device limit): set up already through CUDA, or joined now for
 * memory accounting only. */
CUresult gp_shim_device_by_uuid(const char *uuid, int index, uint64_t total,
				struct gp_shim_device **ret_dev);

/* glibc's dlsym, not our hook. */
void *gp_shim_real_dlsym(void *handle, const char *symbol);

/* views.c: our handle of NVML, and our hook for an NVML symbol or NULL. */
void *gp_shim_nvml_handle(void);
void *gp_shim_nvml_hook(const char *symbol);

#endif
