/* usage.c — sampling devices and process groups through NVML (usage.h).
 *
 * Per device and call: utilization rates, memory info, the compute
 * processes (memory per process) and the per-process utilization samples
 * since the last timestamp seen. Lists follow NVML's protocol: a call
 * with too small an array answers INSUFFICIENT_SIZE and the count needed;
 * the arrays grow and the call is made again. */
#include "agent/usage.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/devices.h"
#include "include/gp-nvml.h"

#define TASK_CACHE 512
#define LIST_FIRST 64
#define LIST_TRIES 4

/* A process seen on a device, and its task. */
struct task_entry {
	pid_t pid;
	int64_t task; /* 0: none known */
	uint64_t seen; /* the sampling it was last seen in */
};

struct gp_usage {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*procs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
	nvmlReturn_t (*samples)(nvmlDevice_t, nvmlProcessUtilizationSample_t *,
				unsigned *, unsigned long long);
	unsigned devices;
	nvmlDevice_t handle[GP_AGENT_DEVICES_MAX];
	uint64_t last_seen_us[GP_AGENT_DEVICES_MAX]; /* newest sample timestamp */
	uint64_t last_call_us[GP_AGENT_DEVICES_MAX]; /* when it was last sampled */
	struct task_entry task[TASK_CACHE];
	gp_usage_resolver *resolve;
	void *resolve_ctx;
	uint64_t sampling;
	nvmlProcessInfo_t *proc;
	unsigned proc_cap;
	nvmlProcessUtilizationSample_t *sample;
	unsigned sample_cap;
};

static uint64_t realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* ---- opening ------------------------------------------------------------ */

static int symbols_load(struct gp_usage *u, const char *library, char *err,
			size_t err_len)
{
	static const char *const names[] = {
		"nvmlInit_v2",
		"nvmlShutdown",
		"nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetUtilizationRates",
		"nvmlDeviceGetMemoryInfo",
		"nvmlDeviceGetComputeRunningProcesses_v3",
		"nvmlDeviceGetProcessUtilization",
	};
	void **slot[] = {
		(void **)&u->init,    (void **)&u->shutdown, (void **)&u->by_index,
		(void **)&u->util,    (void **)&u->memory,   (void **)&u->procs,
		(void **)&u->samples,
	};

	u->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	if (!u->lib) {
		snprintf(err, err_len, "cannot load %s for usage sampling (%s)", library,
			 dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slot[i] = dlsym(u->lib, names[i]);
		if (!*slot[i]) {
			snprintf(err, err_len,
				 "%s lacks %s: the driver is too old for usage sampling",
				 library, names[i]);
			return -ENOTSUP;
		}
	}
	return 0;
}

static int handles_get(struct gp_usage *u, char *err, size_t err_len)
{
	uint64_t now = realtime_us();

	if (u->init() != NVML_SUCCESS) {
		snprintf(err, err_len, "NVML would not start for usage sampling");
		return -EIO;
	}
	for (unsigned i = 0; i < u->devices; i++) {
		if (u->by_index(i, &u->handle[i]) != NVML_SUCCESS) {
			snprintf(err, err_len, "NVML has no device %u for usage sampling",
				 i);
			u->shutdown();
			return -EIO;
		}
		u->last_seen_us[i] = now;
		u->last_call_us[i] = now;
	}
	return 0;
}

int gp_usage_open(const char *library, unsigned devices, struct gp_usage **ret, char *err,
		  size_t err_len)
{
	struct gp_usage *u;
	int r;

	if (!ret || devices > GP_AGENT_DEVICES_MAX)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->devices = devices;
	r = symbols_load(u, library ? library : "libnvidia-ml.so.1", err, err_len);
	if (r == 0)
		r = handles_get(u, err, err_len);
	if (r < 0) {
		if (u->lib)
			dlclose(u->lib);
		free(u);
		return r;
	}
	*ret = u;
	return 0;
}

/* NVML stays loaded (a driver's library is not made to be unloaded);
 * the init is undone. */
struct gp_usage *gp_usage_close(struct gp_usage *u)
{
	if (!u)
		return NULL;
	u->shutdown();
	free(u->proc);
	free(u->sample);
	free(u);
	return NULL;
}

/* ---- processes and their tasks ----------------------------------------- */

void gp_usage_set_resolver(struct gp_usage *u, gp_usage_resolver *fn, void *ctx)
{
	u->resolve = fn;
	u->resolve_ctx = ctx;
}

static struct task_entry *task_slot(struct gp_usage *u, pid_t pid)
{
	struct task_entry *oldest = &u->task[0];

	for (int i = 0; i < TASK_CACHE; i++) {
		if (u->task[i].pid == pid)
			return &u->task[i];
		if (u->task[i].seen < oldest->seen)
			oldest = &u->task[i];
	}
	*oldest = (struct task_entry){.pid = pid};
	return oldest;
}

/* The task of pid: asked now when it lives, else remembered. */
static int64_t task_of(struct gp_usage *u, pid_t pid)
{
	struct task_entry *e = task_slot(u, pid);
	int64_t task;

	if (u->resolve && u->resolve(u->resolve_ctx, pid, &task) == 0)
		e->task = task;
	e->seen = u->sampling;
	return e->task;
}

static struct gp_usage_group *group_find(struct gp_usage_group *groups, size_t n,
					 int64_t task, unsigned device)
{
	for (size_t i = 0; task > 0 && i < n; i++)
		if (groups[i].task == task && groups[i].device == device)
			return &groups[i];
	return NULL;
}

/* Grows *array to hold want entries of size `size`. */
static int grow(void **array, unsigned *cap, unsigned want, size_t size)
{
	void *bigger;

	if (want <= *cap)
		return 0;
	bigger = realloc(*array, (size_t)want * size);
	if (!bigger)
		return -ENOMEM;
	*array = bigger;
	*cap = want;
	return 0;
}

/* The compute processes of device d into u->proc; their count. */
static int procs_list(struct gp_usage *u, unsigned d, unsigned *ret_n)
{
	unsigned want = u->proc_cap ? u->proc_cap : LIST_FIRST;

	for (int tries = 0; tries < LIST_TRIES; tries++) {
		unsigned n;
		nvmlReturn_t r;

		if (grow((void **)&u->proc, &u->proc_cap, want, sizeof(*u->proc)) < 0)
			return -ENOMEM;
		n = u->proc_cap;
		r = u->procs(u->handle[d], &n, u->proc);
		if (r == NVML_SUCCESS) {
			*ret_n = n;
			return 0;
		}
		if (r != NVML_ERROR_INSUFFICIENT_SIZE)
			return -EIO;
		want = n + 16; /* the list may grow between the calls */
	}
	return -EAGAIN;
}

static void memory_add(struct gp_usage *u, unsigned d, struct gp_usage_group *groups,
		       size_t n)
{
	unsigned count = 0;

	if (procs_list(u, d, &count) < 0)
		return;
	for (unsigned i = 0; i < count; i++) {
		struct gp_usage_group *g =
			group_find(groups, n, task_of(u, (pid_t)u->proc[i].pid), d);

		if (!g)
			continue;
		g->mem_mib += u->proc[i].usedGpuMemory >> 20;
		g->processes++;
	}
}

/* ---- used time ---------------------------------------------------------- */

/* The samples of device d newer than the last seen, into u->sample. */
static int samples_list(struct gp_usage *u, unsigned d, unsigned *ret_n)
{
	unsigned want = u->sample_cap ? u->sample_cap : LIST_FIRST;

	for (int tries = 0; tries < LIST_TRIES; tries++) {
		unsigned n;
		nvmlReturn_t r;

		if (grow((void **)&u->sample, &u->sample_cap, want, sizeof(*u->sample)) <
		    0)
			return -ENOMEM;
		n = u->sample_cap;
		r = u->samples(u->handle[d], u->sample, &n, u->last_seen_us[d]);
		if (r == NVML_SUCCESS || r == NVML_ERROR_NOT_FOUND) {
			*ret_n = r == NVML_SUCCESS ? n : 0; /* NOT_FOUND: none newer */
			return 0;
		}
		if (r != NVML_ERROR_INSUFFICIENT_SIZE)
			return -EIO;
		want = n + 16;
	}
	return -EAGAIN;
}

static int by_timestamp(const void *a, const void *b)
{
	const nvmlProcessUtilizationSample_t *x = a, *y = b;

	return (x->timeStamp > y->timeStamp) - (x->timeStamp < y->timeStamp);
}

/* When the previous sample of the same process in this batch was taken;
 * `floor` for the first. */
static uint64_t previous_of(const nvmlProcessUtilizationSample_t *s, unsigned i,
			    uint64_t floor)
{
	for (unsigned k = i; k-- > 0;)
		if (s[k].pid == s[i].pid)
			return s[k].timeStamp;
	return floor;
}

static void used_add(struct gp_usage *u, unsigned d, uint64_t now,
		     struct gp_usage_group *groups, size_t n)
{
	uint64_t span = now > u->last_call_us[d] ? now - u->last_call_us[d] : 0;
	uint64_t newest = u->last_seen_us[d];
	unsigned count = 0;

	if (samples_list(u, d, &count) < 0)
		return;
	qsort(u->sample, count, sizeof(*u->sample), by_timestamp);
	for (unsigned i = 0; i < count; i++) {
		const nvmlProcessUtilizationSample_t *s = &u->sample[i];
		uint64_t prev = previous_of(u->sample, i, u->last_seen_us[d]);
		uint64_t dur = s->timeStamp > prev ? s->timeStamp - prev : 0;
		struct gp_usage_group *g =
			group_find(groups, n, task_of(u, (pid_t)s->pid), d);

		if (s->timeStamp > newest)
			newest = s->timeStamp;
		if (g)
			g->used_us += (dur < span ? dur : span) *
				      (s->smUtil > 100 ? 100 : s->smUtil) / 100;
	}
	u->last_seen_us[d] = newest;
}

/* ---- the processes of a device, for the verifier --------------------------- */

/* Each listed process's newest utilization sample, if any. */
static void processes_util(struct gp_usage *u, unsigned d, struct gp_usage_process *out,
			   int n)
{
	unsigned count = 0;

	if (samples_list(u, d, &count) < 0)
		return;
	for (unsigned k = 0; k < count; k++) {
		const nvmlProcessUtilizationSample_t *s = &u->sample[k];

		if (s->timeStamp > u->last_seen_us[d])
			u->last_seen_us[d] = s->timeStamp;
		for (int i = 0; i < n; i++)
			if (out[i].pid == (pid_t)s->pid)
				out[i].util_pct = s->smUtil > 100 ? 100 : (int)s->smUtil;
	}
}

int gp_usage_processes(struct gp_usage *u, unsigned d, struct gp_usage_process *out,
		       int max)
{
	unsigned count = 0;
	int r;

	if (!u || d >= u->devices || (max && !out))
		return -EINVAL;
	r = procs_list(u, d, &count);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < count && (int)i < max; i++)
		out[i] = (struct gp_usage_process){ .pid = (pid_t)u->proc[i].pid,
						    .mem_bytes = u->proc[i].usedGpuMemory,
						    .util_pct = -1 };
	processes_util(u, d, out, (int)count < max ? (int)count : max);
	return (int)count;
}

/* ---- one sampling ------------------------------------------------------- */

static void device_read(struct gp_usage *u, unsigned d, struct gp_usage_device *ret)
{
	nvmlUtilization_t util;
	nvmlMemory_t mem;

	*ret = (struct gp_usage_device){0};
	if (u->util(u->handle[d], &util) != NVML_SUCCESS ||
	    u->memory(u->handle[d], &mem) != NVML_SUCCESS)
		return;
	ret->ok = true;
	ret->util_pct = util.gpu > 100 ? 100 : util.gpu;
	ret->mem_used_mib = mem.used >> 20;
	ret->mem_total_mib = mem.total >> 20;
}

int gp_usage_sample(struct gp_usage *u, struct gp_usage_device *devices,
		    struct gp_usage_group *groups, size_t n)
{
	if (!u || !devices || (n && !groups))
		return -EINVAL;
	u->sampling++;
	for (size_t i = 0; i < n; i++) {
		groups[i].used_us = 0;
		groups[i].mem_mib = 0;
		groups[i].processes = 0;
	}
	for (unsigned d = 0; d < u->devices; d++) {
		uint64_t now = realtime_us();

		device_read(u, d, &devices[d]);
		if (!devices[d].ok)
			continue;
		memory_add(u, d, groups, n);
		used_add(u, d, now, groups, n);
		u->last_call_us[d] = now;
	}
	return 0;
}
