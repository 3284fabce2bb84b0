/* device.c — the core's devices: the configuration, and each device's
 * region and arbiter for this process (front.h).
 *
 * Devices are known by UUID. A front end asks for its runtime's ordinal;
 * the first time, it identifies the device (UUID, memory), and the core
 * finds the device in its table or sets it up: opens its region in the
 * right directory, joins this process's task with its secret, opens its
 * arbiter. A device two front ends reach (CUDA and NVML's views) is one
 * entry. A managed device that refuses the task refuses it for good: the
 * answer is kept per front end and ordinal.
 *
 * Locks: a front end's lock is held while it identifies a new ordinal
 * (which calls its runtime); the core's lock only while the table
 * changes (no runtime call under it). Entries are published by an atomic
 * store of the pointer (release) and read without a lock after. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim/arbiter.h"
#include "shim/front.h"

static struct {
	pthread_once_t once;
	int status;
	struct gp_shim_config cfg;
	pthread_mutex_t lock;
	struct gp_shim_device dev[GP_SHIM_DEVICES_MAX];         /* with arbiters */
	int count;
	struct gp_shim_device seen[GP_SHIM_DEVICES_MAX];        /* joined for accounting only */
	int seen_count;
} core = { PTHREAD_ONCE_INIT, -EINVAL, .lock = PTHREAD_MUTEX_INITIALIZER };

void gp_shim_say(const char *fmt, ...)
{
	va_list ap;

	if (!getenv("GPUPOOL_LOG"))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* A forked child is a process of its own: it joins the regions again to
 * get slots of its own, so that its memory dies with it. Its only thread
 * holds no lock (another thread of the parent may have held one). */
static void forget_devices(void)
{
	core.count = 0;
	core.seen_count = 0;
	pthread_mutex_init(&core.lock, NULL);
	for (size_t i = 0; gp_shim_fronts[i]; i++) {
		struct gp_shim_front *f = gp_shim_fronts[i];

		for (int d = 0; d < GP_SHIM_DEVICES_MAX; d++)
			atomic_store(&f->device[d], NULL);
		memset(f->refused, 0, sizeof(f->refused));
		pthread_mutex_init(&f->lock, NULL);
	}
}

static void configure(void)
{
	char err[512];

	pthread_atfork(NULL, NULL, forget_devices);
	if (gp_shim_config_load(&core.cfg, err, sizeof(err)) < 0) {
		/* A bad value must not run unlimited: say why, refuse. */
		fprintf(stderr, "gpushare: %s\n", err);
		core.status = -EINVAL;
		return;
	}
	core.status = 0;
}

int gp_shim_configured(void)
{
	pthread_once(&core.once, configure);
	return core.status;
}

/* Where device uuid's region is: the system directory when a limits
 * table there manages the device (so that a task cannot leave its limits
 * by naming another directory in GPUPOOL_RUN_DIR), else GPUPOOL_RUN_DIR
 * or the default. */
static const char *region_dir(const char *uuid)
{
	if (gp_region_is_managed_in(GP_REGION_SYSTEM_DIR, uuid))
		return GP_REGION_SYSTEM_DIR;
	return core.cfg.run_dir[0] ? core.cfg.run_dir : NULL;
}

/* Says (GPUPOOL_LOG) why a managed device refused this task. */
static void say_refused(const struct gp_shim_device *d, int err)
{
	const char *id = core.cfg.task_id;
	char dir[PATH_MAX];

	gp_region_dir(d->dir, dir, sizeof(dir));
	if (err == -ENOENT)
		gp_shim_say("gpushare: task %s has no limits for %s in %s/device-%s.limits;"
			    " its driver calls are refused\n", id, d->uuid, dir, d->uuid);
	else if (err == -EPERM)
		gp_shim_say("gpushare: GPUPOOL_TASK_SECRET is %s for task %s on %s;"
			    " its driver calls are refused\n",
			    core.cfg.task_secret[0] ? "not the task's" : "missing", id, d->uuid);
	else
		gp_shim_say("gpushare: the limits of task %s on %s cannot be read (%s);"
			    " its driver calls are refused\n", id, d->uuid, strerror(-err));
}

/* Opens the region of device uuid and joins this process's task to it
 * (`ordinal` picks the per-device limit). A managed device takes the
 * limits from its table, and refuses a task it has no entry for, or whose
 * secret is wrong: -EPERM. */
static int device_join(const char *uuid, int ordinal, uint64_t total, struct gp_shim_device *d)
{
	const char *secret = core.cfg.task_secret[0] ? core.cfg.task_secret : NULL;
	struct gp_task_limits limits;
	bool managed;
	int err;

	*d = (struct gp_shim_device){ 0 };
	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	d->dir = region_dir(uuid);
	gp_shim_config_limits(&core.cfg, ordinal, &limits);
	err = gp_region_open(d->dir, uuid, total, &d->region);
	if (err < 0) {
		gp_shim_say("gpushare: cannot open the region of %s (GPUPOOL_RUN_DIR): %s\n", uuid,
			    strerror(-err));
		return -EIO;
	}
	managed = gp_region_is_managed(d->region);
	err = gp_region_join_as(d->region, core.cfg.task_id, secret, &limits, &d->slot);
	if (err == 0) {
		/* Managed, every allocation counts: a limit may be set later. */
		d->limited = managed || core.cfg.mem_limited;
		return 0;
	}
	if (managed)
		say_refused(d, err);
	else
		gp_shim_say("gpushare: cannot join task %s on %s: %s\n", core.cfg.task_id, uuid,
			    strerror(-err));
	gp_region_close(d->region);
	d->region = NULL;
	return managed ? -EPERM : -EIO;
}

/* Joins device uuid and opens its arbiter, into d. */
static int device_setup(const char *uuid, int ordinal, uint64_t total, struct gp_shim_device *d)
{
	int err = device_join(uuid, ordinal, total, d);

	if (err < 0)
		return err;
	err = gp_arbiter_open(d->region, d->slot, core.cfg.slice_ms, &d->arbiter);
	if (err < 0) {
		gp_shim_say("gpushare: cannot open the arbiter of %s (GPUPOOL_RUN_DIR): %s\n", uuid,
			    strerror(-err));
		gp_region_close(d->region);
		d->region = NULL;
		return -EIO;
	}
	return 0;
}

/* The table's entry for uuid, set up now if it has none. */
static int device_for(const char *uuid, int ordinal, uint64_t total, struct gp_shim_device **ret)
{
	int err = 0;

	pthread_mutex_lock(&core.lock);
	*ret = NULL;
	for (int i = 0; i < core.count && !*ret; i++)
		if (strcmp(core.dev[i].uuid, uuid) == 0)
			*ret = &core.dev[i];
	if (!*ret && core.count == GP_SHIM_DEVICES_MAX)
		err = -ENOSPC;
	if (!*ret && !err) {
		err = device_setup(uuid, ordinal, total, &core.dev[core.count]);
		if (err == 0) {
			core.dev[core.count].index = core.count;
			*ret = &core.dev[core.count++];
		}
	}
	pthread_mutex_unlock(&core.lock);
	return err;
}

int gp_shim_front_device(struct gp_shim_front *f, int ordinal, struct gp_shim_device **ret)
{
	char uuid[GP_UUID_STR_MAX];
	struct gp_shim_device *d;
	uint64_t total = 0;
	int err = gp_shim_configured();

	if (err < 0)
		return err;
	if (ordinal < 0 || ordinal >= GP_SHIM_DEVICES_MAX || !f->identify)
		return -ENODEV;
	d = atomic_load_explicit(&f->device[ordinal], memory_order_acquire);
	if (d) {
		*ret = d;
		return 0;
	}
	pthread_mutex_lock(&f->lock);
	d = atomic_load(&f->device[ordinal]);
	err = d ? 0 : f->refused[ordinal];      /* decided: asking again changes nothing */
	if (!d && !err) {
		err = f->identify(ordinal, uuid, sizeof(uuid), &total);
		if (err == 0)
			err = device_for(uuid, ordinal, total, &d);
		if (err == 0)
			atomic_store_explicit(&f->device[ordinal], d, memory_order_release);
		else if (err == -EPERM)
			f->refused[ordinal] = err;
	}
	pthread_mutex_unlock(&f->lock);
	if (err == 0)
		*ret = d;
	return err;
}

int gp_shim_device_by_uuid(const char *uuid, int index, uint64_t total_bytes,
			   struct gp_shim_device **ret)
{
	struct gp_shim_device *found = NULL;
	int err = gp_shim_configured();

	if (err < 0)
		return err;
	pthread_mutex_lock(&core.lock);
	for (int i = 0; i < core.count && !found; i++)
		if (strcmp(core.dev[i].uuid, uuid) == 0)
			found = &core.dev[i];
	for (int i = 0; i < core.seen_count && !found; i++)
		if (strcmp(core.seen[i].uuid, uuid) == 0)
			found = &core.seen[i];
	if (!found && core.seen_count < GP_SHIM_DEVICES_MAX) {
		err = device_join(uuid, index, total_bytes, &core.seen[core.seen_count]);
		if (err == 0) {
			core.seen[core.seen_count].index = -1;
			found = &core.seen[core.seen_count++];
		}
	} else if (!found) {
		err = -ENOSPC;
	}
	pthread_mutex_unlock(&core.lock);
	if (found)
		*ret = found;
	return found ? 0 : err;
}
