/* agent.c — this node's devices and running tasks (agent.h). */
#include "agent/agent.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/launcher.h"
#include "shim/region.h"

#define ENV_MAX 10
#define ENV_TEXT 1024

/* A task this agent started and has not reaped yet. */
struct running {
	struct gp_agent_task spec;      /* spec.command is not kept */
	pid_t pgid;
	bool stopping;
	uint64_t kill_at_ms;            /* when stopping: SIGKILL then */
	struct gp_launch_exit exit;     /* when stopping: what of the group has ended */
	unsigned applied_compute, applied_priority;     /* in the regions */
};

struct gp_agent {
	struct gp_agent_options o;
	struct gp_agent_node node;
	struct gp_region *region[GP_AGENT_DEVICES_MAX]; /* opened when first needed */
	struct gp_usage *usage;
	struct running task[GP_AGENT_TASKS_MAX];
	int tasks;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int gp_agent_new(const struct gp_agent_options *o, struct gp_agent **ret, char *err,
		 size_t err_len)
{
	struct gp_agent *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->o = *o;
	r = gp_devices_discover(o->nvml_library, &a->node, err, err_len);
	if (r == 0 && gethostname(a->node.hostname, sizeof(a->node.hostname) - 1) < 0)
		snprintf(a->node.hostname, sizeof(a->node.hostname), "localhost");
	if (r == 0)
		r = gp_usage_open(o->nvml_library, a->node.devices, &a->usage, err, err_len);
	if (r < 0) {
		free(a);
		return r;
	}
	*ret = a;
	return 0;
}

void gp_agent_free(struct gp_agent *a)
{
	if (!a)
		return;
	for (int i = 0; i < GP_AGENT_DEVICES_MAX; i++)
		if (a->region[i])
			gp_region_close(a->region[i]);
	gp_usage_close(a->usage);
	free(a);
}

const struct gp_agent_node *gp_agent_node(const struct gp_agent *a)
{
	return &a->node;
}

static struct running *running_find(struct gp_agent *a, int64_t id)
{
	for (int i = 0; i < a->tasks; i++)
		if (a->task[i].spec.id == id)
			return &a->task[i];
	return NULL;
}

/* The environment entries of a task, written into text (ENV_TEXT bytes
 * each) and pointed to by env (NULL-terminated). */
static void env_build(const struct gp_agent *a, const struct gp_agent_task *t,
		      char text[][ENV_TEXT], const char **env)
{
	int n = 0;
	size_t used = 0;

	used = (size_t)snprintf(text[n], ENV_TEXT, "CUDA_VISIBLE_DEVICES=");
	for (unsigned i = 0; i < t->devices && used < ENV_TEXT; i++)
		used += (size_t)snprintf(text[n] + used, ENV_TEXT - used, "%s%s", i ? "," : "",
					 a->node.device[t->device[i]].uuid);
	n++;
	snprintf(text[n++], ENV_TEXT, "GPUPOOL_TASK_ID=task-%" PRId64, t->id);
	if (a->o.run_dir)
		snprintf(text[n++], ENV_TEXT, "GPUPOOL_RUN_DIR=%s", a->o.run_dir);
	if (a->o.shim_path) {
		snprintf(text[n++], ENV_TEXT, "LD_PRELOAD=%s", a->o.shim_path);
		snprintf(text[n++], ENV_TEXT, "GPUPOOL_PRIORITY=%u", t->priority);
		if (!t->whole) {
			snprintf(text[n++], ENV_TEXT, "GPUPOOL_MEM_LIMIT=%" PRIu64 "M", t->mem_mib);
			snprintf(text[n++], ENV_TEXT, "GPUPOOL_COMPUTE=%u", t->compute_pct);
			snprintf(text[n++], ENV_TEXT, "GPUPOOL_ISOLATION=%s",
				 t->hard ? "hard" : "shared");
		}
	}
	for (int i = 0; i < n; i++)
		env[i] = text[i];
	env[n] = NULL;
}

int gp_agent_start(struct gp_agent *a, const struct gp_agent_task *t, pid_t *ret_pgid)
{
	char text[ENV_MAX][ENV_TEXT], log[ENV_TEXT];
	const char *env[ENV_MAX + 1];
	struct gp_launch spec = { .command = t->command, .log_path = log, .env = env,
				  .workdir = t->workdir && t->workdir[0] ? t->workdir : NULL };
	struct running *r;
	int err;

	if (a->tasks == GP_AGENT_TASKS_MAX)
		return -ENOSPC;
	for (unsigned i = 0; i < t->devices; i++)
		if (t->device[i] >= a->node.devices)
			return -EINVAL;
	snprintf(log, sizeof(log), "%s/task-%" PRId64 ".log", a->o.log_dir ? a->o.log_dir : ".",
		 t->id);
	env_build(a, t, text, env);
	err = gp_launch_start(&spec, ret_pgid);
	if (err < 0)
		return err;
	r = &a->task[a->tasks++];
	*r = (struct running){ .spec = *t, .pgid = *ret_pgid, .applied_compute = t->compute_pct,
			       .applied_priority = t->priority };
	r->spec.command = NULL;        /* borrowed: not kept */
	r->spec.workdir = NULL;
	return 0;
}

int gp_agent_stop(struct gp_agent *a, int64_t task)
{
	struct running *r = running_find(a, task);

	if (!r)
		return -ENOENT;
	if (!r->stopping) {
		r->stopping = true;
		r->kill_at_ms = now_ms() + a->o.grace_ms;
		kill(-r->pgid, SIGTERM);
	}
	return 0;
}

/* Has the task ended? A task ends with its shell, and what it leaves is
 * killed; but a task being stopped ends when its whole group has, so
 * that a program under a shell gets its grace period too. 1 with its
 * code (the shell's), 0 while it runs. */
static int running_reap(struct running *r, int *ret_code)
{
	int done;

	if (!r->stopping)
		return gp_launch_reap(r->pgid, false, ret_code);
	done = gp_launch_reap_group(r->pgid, &r->exit);
	*ret_code = r->exit.code;
	return done;
}

static struct gp_region *region_of(struct gp_agent *a, unsigned dev)
{
	const struct gp_agent_device *d = &a->node.device[dev];

	if (!a->region[dev] &&
	    gp_region_open(a->o.run_dir, d->uuid, d->mem_total_mib << 20, &a->region[dev]) < 0)
		return NULL;
	return a->region[dev];
}

/* A task ended: the memory its processes held in its devices' regions is
 * given back now (the regions free a dead process's slot when someone
 * looks; with nobody using the device, nobody else would). */
static void regions_reclaim(struct gp_agent *a, const struct running *r)
{
	for (unsigned i = 0; i < r->spec.devices; i++) {
		struct gp_region *region = region_of(a, r->spec.device[i]);

		if (region)
			gp_region_reclaim(region);
	}
}

void gp_agent_poll(struct gp_agent *a,
		   void (*ended)(void *ctx, int64_t task, int code, bool stopped), void *ctx)
{
	uint64_t now = now_ms();

	for (int i = 0; i < a->tasks;) {
		struct running *r = &a->task[i];
		int code = 0;

		if (r->stopping && now >= r->kill_at_ms)
			kill(-r->pgid, SIGKILL);
		if (running_reap(r, &code) == 0) {
			i++;
			continue;
		}
		regions_reclaim(a, r);
		ended(ctx, r->spec.id, code, r->stopping);
		a->task[i] = a->task[--a->tasks];
	}
}

int gp_agent_set(struct gp_agent *a, int64_t task, unsigned compute_pct, unsigned priority)
{
	struct running *r = running_find(a, task);
	struct gp_task_limits limits;
	char id[GP_TASK_ID_MAX];

	if (!r)
		return -ENOENT;
	if (r->applied_compute == compute_pct && r->applied_priority == priority)
		return 0;
	limits = (struct gp_task_limits){
		.mem_bytes = r->spec.whole ? 0 : r->spec.mem_mib << 20,
		.compute = r->spec.whole ? 100 : compute_pct,
		.priority = priority,
		.isolation = r->spec.hard ? GP_ISOLATION_HARD : GP_ISOLATION_SHARED,
	};
	snprintf(id, sizeof(id), "task-%" PRId64, task);
	for (unsigned i = 0; i < r->spec.devices; i++) {
		struct gp_region *region = region_of(a, r->spec.device[i]);
		int err = region ? gp_region_set(region, id, &limits) : -EIO;

		if (err == -ENOENT)
			return -EAGAIN;         /* its processes have not joined yet */
		if (err < 0)
			return err;
	}
	r->applied_compute = compute_pct;
	r->applied_priority = priority;
	return 0;
}

int gp_agent_sample(struct gp_agent *a, struct gp_usage_device *devices,
		    struct gp_usage_group *groups, size_t n)
{
	return gp_usage_sample(a->usage, devices, groups, n);
}
