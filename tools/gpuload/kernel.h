/* kernel.h — the one GPU kernel gpuload launches, as PTX text.
 *
 * gpuload_spin(u64 ns) spins on %globaltimer until `ns` nanoseconds have
 * passed, so on a real GPU each launched block really holds an SM for that
 * long. The simulated driver (src/simdev) recognises the entry by name and
 * charges kernelParams[0] nanoseconds of device time for it. The PTX is
 * JIT-compiled by the driver (cuModuleLoadData); it targets sm_80 so that
 * it runs on Ampere and everything since. */
#ifndef GPULOAD_KERNEL_H
#define GPULOAD_KERNEL_H

#define GL_KERNEL_NAME "gpuload_spin"

/* NUL-terminated PTX module with the one entry GL_KERNEL_NAME; static. */
extern const char gl_kernel_ptx[];

#endif
