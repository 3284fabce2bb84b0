/* shim-cuda.c — the CUDA driver API's front end of libgpushare
 * (src/shim/front.h): finding the real driver, its devices for the core,
 * and answering every way a program reaches a driver function.
 *
 * Programs reach the driver three ways (docs/shim.md, "Interception"):
 *   1. linked against libcuda: symbol interposition (LD_PRELOAD) gives them
 *      our exported hooks;
 *   2. dlopen("libcuda.so.1") + dlsym: dlsym on the driver's handle does not
 *      see a preloaded library, so we answer dlsym ourselves;
 *   3. cuGetProcAddress(_v2), which the CUDA runtime uses for everything:
 *      we return the hook of exactly the requested ABI version and
 *      per-thread variant (procs.gen.h, generated from the ABI map).
 * Unhooked functions pass straight through: the real driver's own pointer.
 * cuGetExportTable is never touched. The library prints nothing unless
 * GPUPOOL_LOG is set, and never exits or aborts its host. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/nvidia/shim-cuda.h"

/* The real driver: our handle and its cuGetProcAddress_v2, loaded under
 * lock and published by `loaded` (release), so that the calls of every
 * thread find it with one load and no lock. */
static struct {
	pthread_mutex_t lock;
	pthread_once_t fork_once;
	void *driver;
	PFN_cuGetProcAddress_v2 gpa;
	_Atomic bool loaded;
} cuda = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_ONCE_INIT };

/* Why the last identify of this thread failed, for its caller. */
static __thread CUresult identify_error;

/* ---- the generated table of hooks (shim-cuda-hooks.c) --------------------- */

/* Variants of hooked functions we do not implement (the 32-bit legacy
 * ABI) are refused rather than passed to the driver unaccounted. */
static CUresult CUDAAPI refused(void)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

static void *hook_fn(const struct proc_entry *e)
{
	return (void *)(e->fn ? e->fn : (void (*)(void))refused);
}

/* ---- the real driver ------------------------------------------------- */

/* Loads the driver the program will get, under cuda.lock. Our library is
 * not called libcuda, so this is the real one (or simdev's). */
static bool driver_load(void)
{
	void *h;

	if (cuda.gpa)
		return true;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	cuda.driver = h;
	cuda.gpa = (PFN_cuGetProcAddress_v2)gp_shim_real_dlsym(h, "cuGetProcAddress_v2");
	if (cuda.gpa)
		atomic_store_explicit(&cuda.loaded, true, memory_order_release);
	return cuda.gpa != NULL;
}

/* A forked child's only thread holds no lock (another thread of the
 * parent may have held this one). */
static void fork_child(void)
{
	pthread_mutex_init(&cuda.lock, NULL);
}

static void fork_register(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

static bool driver_loaded(void)
{
	bool ok;

	if (atomic_load_explicit(&cuda.loaded, memory_order_acquire))
		return true;
	pthread_once(&cuda.fork_once, fork_register);
	pthread_mutex_lock(&cuda.lock);
	ok = driver_load();
	pthread_mutex_unlock(&cuda.lock);
	return ok;
}

void *gp_shim_real(const char *name, int version, int per_thread)
{
	void *fn = NULL;

	if (driver_loaded())
		cuda.gpa(name, &fn, version,
			 per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0, NULL);
	return fn;
}

/* ---- the front end ---------------------------------------------------- */

/* A device's UUID as NVML and CUDA_VISIBLE_DEVICES write it: "GPU-…",
 * or "MIG-…" for a MIG instance (whose bytes cuDeviceGetUuid gives; the
 * prefix is not in them: an instance is visible to the task by that
 * name, so it is one of CUDA_VISIBLE_DEVICES). */
static void uuid_text(const CUuuid *u, char *buf, size_t len)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	char mig[GP_UUID_STR_MAX];

	snprintf(buf, len,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
	snprintf(mig, sizeof(mig), "MIG-%s", buf + 4);
	if (visible && strstr(visible, mig))
		memcpy(buf, "MIG", 3);
}

static int identify(int ordinal, char *uuid, size_t uuid_len, uint64_t *total_bytes)
{
	typedef CUresult (*uuid_fn)(CUuuid *, CUdevice);
	size_t total = 0;
	CUuuid u;
	CUresult r;

	r = GP_REAL(uuid_fn, "cuDeviceGetUuid", 11040, 0)(&u, ordinal);
	if (r == CUDA_SUCCESS)
		r = GP_REAL(PFN_cuDeviceTotalMem_v2, "cuDeviceTotalMem", 3020, 0)(&total, ordinal);
	if (r != CUDA_SUCCESS) {
		identify_error = r;
		return -ENODEV;
	}
	uuid_text(&u, uuid, uuid_len);
	*total_bytes = total;
	return 0;
}

/* dlsym on the driver's handle: our hook for a hooked symbol. */
static void *hook(const char *symbol)
{
	if (symbol[0] != 'c' || symbol[1] != 'u')
		return NULL;
	driver_loaded();        /* the same library: our handle for GPA */
	for (size_t i = 0; i < proc_table_size; i++)
		if (strcmp(proc_table[i].symbol, symbol) == 0)
			return hook_fn(&proc_table[i]);
	return NULL;
}

struct gp_shim_front gp_front_cuda = {
	.name = "cuda",
	.library = "libcuda.so",
	.hook = hook,
	.identify = identify,
	.event_create = gp_cuda_event_create,
	.event_record = gp_cuda_event_record,
	.event_query = gp_cuda_event_query,
	.drain = gp_cuda_drain,
	GP_SHIM_FRONT_INIT,
};

/* A core error as the driver would say it. */
static CUresult cu_error(int err)
{
	switch (err) {
	case 0: return CUDA_SUCCESS;
	case -EINVAL: return CUDA_ERROR_INVALID_VALUE;
	case -EPERM: return CUDA_ERROR_NOT_PERMITTED;
	case -ENOMEM: return CUDA_ERROR_OUT_OF_MEMORY;
	case -ENODEV: return identify_error ? identify_error : CUDA_ERROR_INVALID_DEVICE;
	default: return CUDA_ERROR_OPERATING_SYSTEM;
	}
}

CUresult gp_shim_ready(void)
{
	if (gp_shim_configured() < 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!driver_loaded()) {
		gp_shim_say("gpushare: cannot load libcuda.so.1\n");
		return CUDA_ERROR_NO_DEVICE;
	}
	return CUDA_SUCCESS;
}

CUresult gp_shim_device(int index, struct gp_shim_device **ret_dev)
{
	CUresult r = gp_shim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (index < 0 || index >= GP_SHIM_DEVICES_MAX)
		return CUDA_ERROR_INVALID_DEVICE;
	identify_error = CUDA_SUCCESS;
	return cu_error(gp_shim_front_device(&gp_front_cuda, index, ret_dev));
}

CUresult gp_shim_current(struct gp_shim_device **ret_dev, int *ret_index)
{
	CUdevice dev;
	CUresult r = gp_shim_ready();

	if (r == CUDA_SUCCESS)
		r = GP_REAL(CUresult(*)(CUdevice *), "cuCtxGetDevice", 12000, 0)(&dev);
	if (r == CUDA_SUCCESS)
		r = gp_shim_device(dev, ret_dev);
	if (r == CUDA_SUCCESS && ret_index)
		*ret_index = dev;
	return r;
}

/* ---- the doors: cuGetProcAddress (dlsym is the core's: dlsym.c) ------- */

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	const struct proc_entry *e;
	CUresult r;

	if (!driver_loaded())
		return CUDA_ERROR_NOT_INITIALIZED;
	/* The driver's answer decides found / not found / too old; we only
	 * swap in our hook for what it found. */
	r = cuda.gpa(symbol, pfn, cudaVersion, flags, status);
	if (r != CUDA_SUCCESS || !pfn || !*pfn || !symbol)
		return r;
	e = gp_proc_find(proc_table, proc_table_size, symbol, cudaVersion,
			 flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL);
	if (e)
		*pfn = hook_fn(e);
	return r;
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
