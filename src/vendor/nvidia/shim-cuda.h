/* shim-cuda.h — what the parts of libgpushare's CUDA front end share (the
 * driver API: shim-cuda.c, shim-cuda-memory.c, shim-cuda-launch.c; NVML's
 * views: shim-nvml.c), over the vendor-neutral core (src/shim/front.h).
 *
 * shim-cuda.c finds the real driver and answers for the hooked functions
 * (cuGetProcAddress, and plain symbol interposition; dlsym on the driver's
 * handle through the core's dlsym.c); shim-cuda-memory.c enforces memory
 * slices, shim-cuda-launch.c the compute share, shim-nvml.c what NVML
 * shows inside a task.
 * State is per process, set up lazily by the first hooked call, so a
 * process that never touches the driver pays nothing. Every hook may run
 * in many threads at once: the core says who guards what (front.h). */
#ifndef GP_VENDOR_NVIDIA_SHIM_CUDA_H
#define GP_VENDOR_NVIDIA_SHIM_CUDA_H

#include "base/proc-table.h"
#include "include/gp-cuda.h"
#include "shim/front.h"

/* The generated table of hooks (shim-cuda-hooks.c): our function for each
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

/* The CUDA front end (shim-cuda.c), and the events it bounds launches
 * with (shim-cuda-launch.c). */
extern struct gp_shim_front gp_front_cuda;
void gp_cuda_drain(void *unused);
int gp_cuda_event_create(void **ret_event);
int gp_cuda_event_record(void *event, void *stream, bool per_thread);
int gp_cuda_event_query(void *event);

/* Set-up on first use (configuration, the real driver); CUDA_SUCCESS or
 * the error every guarded call returns (a bad configuration refuses). */
CUresult gp_shim_ready(void);

/* The device of the calling thread's current context, set up. */
CUresult gp_shim_current(struct gp_shim_device **ret_dev, int *ret_index);
CUresult gp_shim_device(int index, struct gp_shim_device **ret_dev);

/* shim-nvml.c: our handle of NVML, and NVML's front end (dlsym only). */
void *gp_shim_nvml_handle(void);
extern struct gp_shim_front gp_front_nvml;

#endif
