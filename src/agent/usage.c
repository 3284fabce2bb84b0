/* usage.c — sampling devices and process groups through each device's
 * vendor backend (usage.h, src/vendor/vendor.h).
 *
 * Per device and call: utilization and memory, the processes (memory per
 * process) and, where the vendor's library keeps them, the per-process
 * utilization samples since the last timestamp seen. A backend's list
 * answers how many there are; when that is more than the room given, the
 * array grows and the call is made again. */
#include "agent/usage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/devices.h"
#include "vendor/vendor.h"

#define TASK_CACHE 512
#define LIST_FIRST 64
#define LIST_TRIES 4
#define VENDORS_MAX 8

/* A process seen on a device, and its task. */
struct task_entry {
	pid_t pid;
	int64_t task; /* 0: none known */
	uint64_t seen; /* the sampling it was last seen in */
};

struct gp_usage {
	struct {
		const struct gp_vendor_ops *ops;
		void *h;
	} vendor[VENDORS_MAX];          /* each vendor's sampler, opened once */
	unsigned vendors;
	unsigned devices;
	struct {
		const struct gp_vendor_ops *ops;
		void *h;
		unsigned local;
	} dev[GP_AGENT_DEVICES_MAX];
	uint64_t last_seen_us[GP_AGENT_DEVICES_MAX]; /* newest sample timestamp */
	uint64_t last_call_us[GP_AGENT_DEVICES_MAX]; /* when it was last sampled */
	struct task_entry task[TASK_CACHE];
	gp_usage_resolver *resolve;
	void *resolve_ctx;
	uint64_t sampling;
	struct gp_vendor_proc *proc;
	unsigned proc_cap;
	struct gp_vendor_proc_sample *sample;
	unsigned sample_cap;
};

static uint64_t realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* ---- opening ------------------------------------------------------------ */

/* The sampler of vendor v, opened now if it is not yet. */
static void *vendor_sampler(struct gp_usage *u, const struct gp_vendor_ops *v,
			    const char *nvml_library, char *err, size_t err_len)
{
	void *h = NULL;
	char why[512];
	int r;

	for (unsigned i = 0; i < u->vendors; i++)
		if (u->vendor[i].ops == v)
			return u->vendor[i].h;
	if (u->vendors == VENDORS_MAX)
		return NULL;
	r = v->open(strcmp(v->name, "nvidia") == 0 ? nvml_library : NULL, &h, why, sizeof(why));
	if (r < 0) {
		snprintf(err, err_len, "%s: %s", v->name, why);
		return NULL;
	}
	u->vendor[u->vendors].ops = v;
	u->vendor[u->vendors++].h = h;
	return h;
}

int gp_usage_open(const char *nvml_library, const struct gp_agent_node *node,
		  struct gp_usage **ret, char *err, size_t err_len)
{
	uint64_t now = realtime_us();
	struct gp_usage *u;

	if (!ret || !node || node->devices > GP_AGENT_DEVICES_MAX)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->devices = node->devices;
	for (unsigned d = 0; d < node->devices; d++) {
		const struct gp_vendor_ops *v = node->device[d].vendor;

		u->dev[d].ops = v;
		u->dev[d].local = node->device[d].local;
		u->dev[d].h = vendor_sampler(u, v, nvml_library, err, err_len);
		if (!u->dev[d].h) {
			gp_usage_close(u);
			return -EIO;
		}
		u->last_seen_us[d] = now;
		u->last_call_us[d] = now;
	}
	*ret = u;
	return 0;
}

struct gp_usage *gp_usage_close(struct gp_usage *u)
{
	if (!u)
		return NULL;
	for (unsigned i = 0; i < u->vendors; i++)
		u->vendor[i].ops->close(u->vendor[i].h);
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

/* A backend's list into *array (growing it as the backend asks): its
 * count. */
#define LIST(u, array, cap, call)                                                    \
	({                                                                           \
		unsigned want_ = (cap) ? (cap) : LIST_FIRST;                         \
		int n_ = -EAGAIN;                                                    \
		for (int tries_ = 0; tries_ < LIST_TRIES; tries_++) {                \
			if (grow((void **)&(array), &(cap), want_, sizeof(*(array))) < 0) { \
				n_ = -ENOMEM;                                        \
				break;                                               \
			}                                                            \
			n_ = (call);                                                 \
			if (n_ < 0 || (unsigned)n_ <= (cap))                         \
				break;                                               \
			want_ = (unsigned)n_ + 16; /* it may grow between the calls */ \
			n_ = -EAGAIN;                                                \
		}                                                                    \
		n_;                                                                  \
	})

/* The processes of device d into u->proc; their count. */
static int procs_list(struct gp_usage *u, unsigned d)
{
	return LIST(u, u->proc, u->proc_cap,
		    u->dev[d].ops->processes(u->dev[d].h, u->dev[d].local, u->proc,
					     (int)u->proc_cap));
}

static void memory_add(struct gp_usage *u, unsigned d, struct gp_usage_group *groups,
		       size_t n)
{
	int count = procs_list(u, d);

	for (int i = 0; i < count; i++) {
		struct gp_usage_group *g = group_find(groups, n, task_of(u, u->proc[i].pid), d);

		if (!g)
			continue;
		g->mem_mib += u->proc[i].mem_bytes >> 20;
		g->processes++;
	}
}

/* ---- used time ---------------------------------------------------------- */

/* The samples of device d newer than the last seen, into u->sample:
 * their count (0 where the backend keeps none). */
static int samples_list(struct gp_usage *u, unsigned d)
{
	if (!u->dev[d].ops->samples)
		return 0;
	return LIST(u, u->sample, u->sample_cap,
		    u->dev[d].ops->samples(u->dev[d].h, u->dev[d].local, u->last_seen_us[d],
					   u->sample, (int)u->sample_cap));
}

static int by_timestamp(const void *a, const void *b)
{
	const struct gp_vendor_proc_sample *x = a, *y = b;

	return (x->timestamp_us > y->timestamp_us) - (x->timestamp_us < y->timestamp_us);
}

/* When the previous sample of the same process in this batch was taken;
 * `floor` for the first. */
static uint64_t previous_of(const struct gp_vendor_proc_sample *s, int i, uint64_t floor)
{
	for (int k = i; k-- > 0;)
		if (s[k].pid == s[i].pid)
			return s[k].timestamp_us;
	return floor;
}

/* Without per-process samples: the device's busy share now (util_pct)
 * over the span, shared among the groups on it (the tasks placed there,
 * whether or not their processes hold memory the library lists) by
 * their weights, each over no more of the span than it has been there
 * (a task that started mid-span is not charged the idle time before). */
static void used_shared(uint64_t span, unsigned util_pct, unsigned d,
			struct gp_usage_group *groups, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		if (groups[i].device == d)
			total += groups[i].weight ? groups[i].weight : 1;
	for (size_t i = 0; i < n && total; i++) {
		struct gp_usage_group *g = &groups[i];
		uint64_t own = g->span_max_us && g->span_max_us < span ? g->span_max_us : span;

		if (g->device == d)
			g->used_us += own * util_pct / 100 * (g->weight ? g->weight : 1) / total;
	}
}

static void used_add(struct gp_usage *u, unsigned d, uint64_t now, unsigned util_pct,
		     struct gp_usage_group *groups, size_t n)
{
	uint64_t span = now > u->last_call_us[d] ? now - u->last_call_us[d] : 0;
	uint64_t newest = u->last_seen_us[d];
	int count;

	if (!u->dev[d].ops->samples) {
		used_shared(span, util_pct, d, groups, n);
		return;
	}
	/* A sample older than the previous call was there to be read then
	 * (and moved last_seen): asking from the previous call on loses none,
	 * and the first sample of a process that started since covers only
	 * the time since, not the idle time before it. */
	if (u->last_seen_us[d] < u->last_call_us[d])
		newest = u->last_seen_us[d] = u->last_call_us[d];
	count = samples_list(u, d);
	if (count > 0)
		qsort(u->sample, (size_t)count, sizeof(*u->sample), by_timestamp);
	for (int i = 0; i < count; i++) {
		const struct gp_vendor_proc_sample *s = &u->sample[i];
		uint64_t prev = previous_of(u->sample, i, u->last_seen_us[d]);
		uint64_t dur = s->timestamp_us > prev ? s->timestamp_us - prev : 0;
		struct gp_usage_group *g = group_find(groups, n, task_of(u, s->pid), d);

		if (s->timestamp_us > newest)
			newest = s->timestamp_us;
		if (g)
			g->used_us += (dur < span ? dur : span) * s->util_pct / 100;
	}
	u->last_seen_us[d] = newest;
}

/* ---- the processes of a device, for the verifier --------------------------- */

/* Each listed process's newest utilization sample, if any. */
static void processes_util(struct gp_usage *u, unsigned d, struct gp_usage_process *out,
			   int n)
{
	int count = samples_list(u, d);

	for (int k = 0; k < count; k++) {
		const struct gp_vendor_proc_sample *s = &u->sample[k];

		if (s->timestamp_us > u->last_seen_us[d])
			u->last_seen_us[d] = s->timestamp_us;
		for (int i = 0; i < n; i++)
			if (out[i].pid == s->pid)
				out[i].util_pct = (int)s->util_pct;
	}
}

int gp_usage_processes(struct gp_usage *u, unsigned d, struct gp_usage_process *out,
		       int max)
{
	int count;

	if (!u || d >= u->devices || (max && !out))
		return -EINVAL;
	count = procs_list(u, d);
	if (count < 0)
		return count;
	for (int i = 0; i < count && i < max; i++) {
		const struct gp_vendor_proc *p = &u->proc[i];

		out[i] = (struct gp_usage_process){
			.pid = p->pid,
			.mem_bytes = p->mem_bytes,
			.mem_max_bytes = p->mem_max_bytes > p->mem_bytes ? p->mem_max_bytes
									 : p->mem_bytes,
			.util_pct = -1,
		};
	}
	processes_util(u, d, out, count < max ? count : max);
	return count;
}

/* ---- one sampling ------------------------------------------------------- */

static void device_read(struct gp_usage *u, unsigned d, struct gp_usage_device *ret)
{
	struct gp_vendor_sample s;

	*ret = (struct gp_usage_device){0};
	if (u->dev[d].ops->device(u->dev[d].h, u->dev[d].local, &s) < 0)
		return;
	ret->ok = true;
	ret->util_pct = s.util_pct > 100 ? 100 : s.util_pct;
	ret->mem_used_mib = s.mem_used_bytes >> 20;
	ret->mem_total_mib = s.mem_total_bytes >> 20;
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
		used_add(u, d, now, devices[d].util_pct, groups, n);
		u->last_call_us[d] = now;
	}
	return 0;
}
