/* gpushare.c — libgpushare's front door: finding the real driver, setting
 * up on first use, and answering every way a program reaches a driver
 * function.
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
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim/shim.h"

typedef void *(*dlsym_fn)(void *, const char *);

/* The process's state (shim.h says who guards what): cfg and status are
 * written once by setup (pthread_once); driver and gpa, and the devices
 * seen through NVML only, under `lock`; device i is set up under
 * dev_lock[i], once, and published by dev_ready[i] (release), so that the
 * calls of every thread find it ready with one load and no lock. */
static struct {
	pthread_once_t once;
	CUresult status;
	struct gp_shim_config cfg;
	void *driver;                   /* our handle of the real libcuda */
	PFN_cuGetProcAddress_v2 gpa;    /* the real one */
	pthread_mutex_t lock;
	struct gp_shim_device dev[GP_SHIM_DEVICES_MAX];
	_Atomic bool dev_ready[GP_SHIM_DEVICES_MAX];
	pthread_mutex_t dev_lock[GP_SHIM_DEVICES_MAX];
	CUresult dev_refused[GP_SHIM_DEVICES_MAX];     /* by a managed device: for good */
	struct gp_shim_device seen[GP_SHIM_DEVICES_MAX];     /* through NVML only */
	int seen_count;
} shim = {
	PTHREAD_ONCE_INIT, CUDA_ERROR_NOT_INITIALIZED, .lock = PTHREAD_MUTEX_INITIALIZER,
	.dev_lock = { [0 ... GP_SHIM_DEVICES_MAX - 1] = PTHREAD_MUTEX_INITIALIZER },
};

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	va_list ap;

	if (!getenv("GPUPOOL_LOG"))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* The C library's dlsym, not ours. */
static dlsym_fn real_dlsym(void)
{
	static dlsym_fn _Atomic fn;
	dlsym_fn f = fn;

	if (!f) {
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!f)
			f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		fn = f;
	}
	return f;
}

void *gp_shim_real_dlsym(void *handle, const char *symbol)
{
	dlsym_fn next = real_dlsym();

	return next ? next(handle, symbol) : NULL;
}

/* ---- the generated table of hooks (hooks-table.c) --------------------- */

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

/* Loads the driver the program will get. Our library is not called
 * libcuda, so this is the real one (or simdev's). */
static bool driver_load(void)
{
	void *h;

	if (shim.gpa)
		return true;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	shim.driver = h;
	shim.gpa = (PFN_cuGetProcAddress_v2)real_dlsym()(h, "cuGetProcAddress_v2");
	return shim.gpa != NULL;
}

void *gp_shim_real(const char *name, int version, int per_thread)
{
	void *fn = NULL;

	pthread_mutex_lock(&shim.lock);
	if (driver_load())
		shim.gpa(name, &fn, version,
			 per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0, NULL);
	pthread_mutex_unlock(&shim.lock);
	return fn;
}

/* ---- set-up ---------------------------------------------------------- */

/* A forked child is a process of its own: it joins the regions again to
 * get slots of its own, so that its memory dies with it. Its only thread
 * holds no lock (another thread of the parent may have held one). */
static void forget_devices(void)
{
	for (int i = 0; i < GP_SHIM_DEVICES_MAX; i++)
		atomic_store(&shim.dev_ready[i], false);
	memset(shim.dev_refused, 0, sizeof(shim.dev_refused));
	shim.seen_count = 0;
	pthread_mutex_init(&shim.lock, NULL);
	for (int i = 0; i < GP_SHIM_DEVICES_MAX; i++)
		pthread_mutex_init(&shim.dev_lock[i], NULL);
}

static void setup(void)
{
	char err[512];

	pthread_atfork(NULL, NULL, forget_devices);
	if (gp_shim_config_load(&shim.cfg, err, sizeof(err)) < 0) {
		/* A bad value must not run unlimited: say why, refuse. */
		fprintf(stderr, "gpushare: %s\n", err);
		shim.status = CUDA_ERROR_INVALID_VALUE;
		return;
	}
	pthread_mutex_lock(&shim.lock);
	shim.status = driver_load() ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
	pthread_mutex_unlock(&shim.lock);
	if (shim.status != CUDA_SUCCESS)
		say("gpushare: cannot load libcuda.so.1\n");
}

CUresult gp_shim_ready(void)
{
	pthread_once(&shim.once, setup);
	return shim.status;
}

static void uuid_text(const CUuuid *u, char *buf, size_t len)
{
	const unsigned char *b = (const unsigned char *)u->bytes;

	snprintf(buf, len,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
}

/* Where device uuid's region is: the system directory when a limits
 * table there manages the device (so that a task cannot leave its limits
 * by naming another directory in GPUPOOL_RUN_DIR), else GPUPOOL_RUN_DIR
 * or the default. */
static const char *region_dir(const char *uuid)
{
	if (gp_region_is_managed_in(GP_REGION_SYSTEM_DIR, uuid))
		return GP_REGION_SYSTEM_DIR;
	return shim.cfg.run_dir[0] ? shim.cfg.run_dir : NULL;
}

/* Says (GPUPOOL_LOG) why a managed device refused this task. */
static void say_refused(const struct gp_shim_device *d, int err)
{
	const char *id = shim.cfg.task_id;
	char dir[PATH_MAX];

	gp_region_dir(d->dir, dir, sizeof(dir));
	if (err == -ENOENT)
		say("gpushare: task %s has no limits for %s in %s/device-%s.limits;"
		    " its driver calls are refused\n", id, d->uuid, dir, d->uuid);
	else if (err == -EPERM)
		say("gpushare: GPUPOOL_TASK_SECRET is %s for task %s on %s;"
		    " its driver calls are refused\n",
		    shim.cfg.task_secret[0] ? "not the task's" : "missing", id, d->uuid);
	else
		say("gpushare: the limits of task %s on %s cannot be read (%s);"
		    " its driver calls are refused\n", id, d->uuid, strerror(-err));
}

/* Opens the region of device uuid and joins this process's task to it.
 * A managed device takes the limits from its table, and refuses a task
 * it has no entry for, or whose secret is wrong: CUDA_ERROR_NOT_PERMITTED. */
static CUresult device_join(const char *uuid, int index, uint64_t total,
			    struct gp_shim_device *d)
{
	const char *secret = shim.cfg.task_secret[0] ? shim.cfg.task_secret : NULL;
	struct gp_task_limits limits;
	bool managed;
	int err;

	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	d->dir = region_dir(uuid);
	gp_shim_config_limits(&shim.cfg, index, &limits);
	err = gp_region_open(d->dir, uuid, total, &d->region);
	if (err < 0) {
		say("gpushare: cannot open the region of %s (GPUPOOL_RUN_DIR): %s\n", uuid,
		    strerror(-err));
		return CUDA_ERROR_OPERATING_SYSTEM;
	}
	managed = gp_region_is_managed(d->region);
	err = gp_region_join_as(d->region, shim.cfg.task_id, secret, &limits, &d->slot);
	if (err == 0) {
		/* Managed, every allocation counts: a limit may be set later. */
		d->limited = managed || shim.cfg.mem_limited;
		return CUDA_SUCCESS;
	}
	if (managed)
		say_refused(d, err);
	else
		say("gpushare: cannot join task %s on %s: %s\n", shim.cfg.task_id, uuid,
		    strerror(-err));
	gp_region_close(d->region);
	d->region = NULL;
	return managed ? CUDA_ERROR_NOT_PERMITTED : CUDA_ERROR_OPERATING_SYSTEM;
}

/* Sets device `index` up for this process: its region and arbiter. */
static CUresult device_setup(int index, struct gp_shim_device *d)
{
	typedef CUresult (*uuid_fn)(CUuuid *, CUdevice);
	char uuid[GP_UUID_STR_MAX];
	size_t total = 0;
	CUuuid u;
	CUresult r;
	int err;

	r = GP_REAL(uuid_fn, "cuDeviceGetUuid", 11040, 0)(&u, index);
	if (r == CUDA_SUCCESS)
		r = GP_REAL(PFN_cuDeviceTotalMem_v2, "cuDeviceTotalMem", 3020, 0)(&total, index);
	if (r != CUDA_SUCCESS)
		return r;
	uuid_text(&u, uuid, sizeof(uuid));
	r = device_join(uuid, index, total, d);
	if (r != CUDA_SUCCESS)
		return r;
	err = gp_arbiter_open(d->dir, uuid, d->region, d->slot, shim.cfg.slice_ms, &d->arbiter);
	if (err < 0) {
		say("gpushare: cannot open the arbiter of %s (GPUPOOL_RUN_DIR): %s\n", uuid,
		    strerror(-err));
		gp_region_close(d->region);
		d->region = NULL;
		return CUDA_ERROR_OPERATING_SYSTEM;
	}
	return CUDA_SUCCESS;
}

/* Sets device `index` up unless another thread did meanwhile: the first
 * caller does, the others wait for it on the device's lock (which no
 * other lock is taken before: the set-up calls the driver, and so takes
 * shim.lock). */
static CUresult device_setup_once(int index)
{
	CUresult r = CUDA_SUCCESS;

	pthread_mutex_lock(&shim.dev_lock[index]);
	if (!atomic_load(&shim.dev_ready[index])) {
		r = shim.dev_refused[index];    /* decided: asking again changes nothing */
		if (r == CUDA_SUCCESS)
			r = device_setup(index, &shim.dev[index]);
		if (r == CUDA_SUCCESS)
			atomic_store_explicit(&shim.dev_ready[index], true, memory_order_release);
		else if (r == CUDA_ERROR_NOT_PERMITTED)
			shim.dev_refused[index] = r;
	}
	pthread_mutex_unlock(&shim.dev_lock[index]);
	return r;
}

CUresult gp_shim_device(int index, struct gp_shim_device **ret_dev)
{
	CUresult r = gp_shim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (index < 0 || index >= GP_SHIM_DEVICES_MAX)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!atomic_load_explicit(&shim.dev_ready[index], memory_order_acquire))
		r = device_setup_once(index);
	if (r == CUDA_SUCCESS)
		*ret_dev = &shim.dev[index];
	return r;
}

CUresult gp_shim_device_by_uuid(const char *uuid, int index, uint64_t total,
				struct gp_shim_device **ret_dev)
{
	struct gp_shim_device *found = NULL;
	CUresult r = gp_shim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&shim.lock);
	for (int i = 0; i < GP_SHIM_DEVICES_MAX && !found; i++)
		if (atomic_load(&shim.dev_ready[i]) && strcmp(shim.dev[i].uuid, uuid) == 0)
			found = &shim.dev[i];
	for (int i = 0; i < shim.seen_count && !found; i++)
		if (strcmp(shim.seen[i].uuid, uuid) == 0)
			found = &shim.seen[i];
	if (!found && shim.seen_count < GP_SHIM_DEVICES_MAX &&
	    device_join(uuid, index, total, &shim.seen[shim.seen_count]) == CUDA_SUCCESS)
		found = &shim.seen[shim.seen_count++];
	pthread_mutex_unlock(&shim.lock);
	if (!found)
		return CUDA_ERROR_OPERATING_SYSTEM;
	*ret_dev = found;
	return CUDA_SUCCESS;
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

/* ---- the three doors ------------------------------------------------- */

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	const struct proc_entry *e;
	CUresult r;

	pthread_mutex_lock(&shim.lock);
	r = driver_load() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_unlock(&shim.lock);
	if (r != CUDA_SUCCESS)
		return r;
	/* The driver's answer decides found / not found / too old; we only
	 * swap in our hook for what it found. */
	r = shim.gpa(symbol, pfn, cudaVersion, flags, status);
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

#ifndef GP_SHIM_NO_DLSYM
/* The third door, left out only of tests/shim/test-threads.c's linked build
 * (the ThreadSanitizer pass): a dlsym of our own would run before the
 * sanitizer's runtime is set up, and that runtime finds the functions it
 * wraps with dlsym. */

/* Is `handle` a handle of the library whose file name starts with
 * `name` (e.g. "libcuda.so")? Asks the dynamic linker, so that a process
 * looking up symbols in other libraries never loads the driver. */
static bool handle_is(void *handle, const char *name)
{
	struct link_map *map = NULL;
	const char *base;

	if (handle == RTLD_DEFAULT || handle == RTLD_NEXT ||
	    dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name)
		return false;
	base = strrchr(map->l_name, '/');
	base = base ? base + 1 : map->l_name;
	return strncmp(base, name, strlen(name)) == 0;
}

/* dlsym(RTLD_NEXT, …) asked by another library (a profiler, a malloc
 * wrapper): the C library would search after the object that called it,
 * which is us, and could hand that library its own function back. So we
 * search after the caller ourselves: the objects loaded after it, in
 * order, each asked for a symbol it defines itself. Without a caller we
 * can name, the C library's answer. */
static void *next_after(const void *caller, const char *symbol, dlsym_fn next)
{
	struct link_map *from = NULL;
	Dl_info info;

	if (!dladdr1(caller, &info, (void **)&from, RTLD_DL_LINKMAP) || !from)
		return next(RTLD_NEXT, symbol);
	for (struct link_map *m = from->l_next; m; m = m->l_next) {
		void *h = dlopen(m->l_name, RTLD_LAZY | RTLD_NOLOAD), *found;
		struct link_map *owner = NULL;

		if (!h)
			continue;               /* the vDSO: not a file */
		found = next(h, symbol);
		if (found && !(dladdr1(found, &info, (void **)&owner, RTLD_DL_LINKMAP) &&
			       owner == m))
			found = NULL;           /* one of its dependencies' */
		dlclose(h);
		if (found)
			return found;
	}
	return NULL;
}

/* dlsym on the driver's (or NVML's) handle: our hook for a hooked symbol;
 * RTLD_NEXT: the next after the caller (next_after). */
void *dlsym(void *handle, const char *symbol)
{
	dlsym_fn next = real_dlsym();

	if (!next)
		return NULL;
	if (handle == RTLD_NEXT)
		return next_after(__builtin_return_address(0), symbol, next);

	if (strncmp(symbol, "nvml", 4) == 0 && handle_is(handle, "libnvidia-ml.so")) {
		void *hook = gp_shim_nvml_hook(symbol);

		if (hook)
			return hook;
	}
	if (symbol[0] == 'c' && symbol[1] == 'u' && handle_is(handle, "libcuda.so")) {
		pthread_mutex_lock(&shim.lock);
		driver_load();          /* the same library: our handle for GPA */
		pthread_mutex_unlock(&shim.lock);
		for (size_t i = 0; i < proc_table_size; i++)
			if (strcmp(proc_table[i].symbol, symbol) == 0)
				return hook_fn(&proc_table[i]);
	}
	return next(handle, symbol);
}
#endif
