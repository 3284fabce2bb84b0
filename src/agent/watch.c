/* watch.c — the verifier's thread (agent.h, verifier.h).
 *
 * At jittered moments, verify_ms apart on average (each wait drawn from
 * half to one and a half of it, so that a task cannot time what it does
 * between two looks), it takes a snapshot of the running tasks (under the
 * agent's lock), lists each device's processes through its own NVML
 * sampler, finds each process's task and whether it joined its task's file
 * there, lets the verifier decide, and acts on what it found: the
 * violation is kept for gp_agent_poll to report and, when the policy
 * kills, the process is killed at once (through a pidfd, after checking it
 * is still the one found, so that a recycled pid is never hit) and its
 * task is stopped, by cgroup.kill at once or by the loop's next poll. It
 * also checks each sliced task's file on each of its devices: one the
 * task damaged is made anew from the limits table, and the task named in
 * a violation. The loop's thread never waits on it: it takes the lock
 * only to copy or mark. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent-impl.h"
#include "base/proc.h"
#include "base/pshared.h"
#include "base/rng.h"

#define PROCS_MAX      256  /* processes listed per device */
#define VIOLATIONS_MAX 64   /* per device and check */
#define KNOWN_MAX      1024 /* processes remembered, by pid */

/* A device process as the checks before found it: its task (0: none),
 * and whether it has joined its task's file on the device (once joined,
 * a process stays so). By pid and start time, so a reused pid is another
 * process. */
struct known {
	pid_t pid;
	uint64_t start;
	unsigned device;
	int64_t task;
	bool joined;
};

/* What one check works on, allocated once for the thread's life. */
struct watch_scratch {
	struct gp_verify_task task[GP_AGENT_TASKS_MAX];
	struct gp_usage_process listed[PROCS_MAX];
	struct gp_verify_proc proc[PROCS_MAX];
	struct gp_violation found[VIOLATIONS_MAX];
	struct known known[KNOWN_MAX];
};

static int snapshot(struct gp_agent *a, struct gp_verify_task *out)
{
	int n;

	pthread_mutex_lock(&a->lock);
	for (n = 0; n < a->tasks; n++) {
		const struct gp_agent_task *t = &a->task[n].spec;

		out[n] = (struct gp_verify_task){ .id = t->id, .sliced = !t->whole,
						  .mem_mib = t->mem_mib, .devices = t->devices };
		memcpy(out[n].device, t->device, sizeof(out[n].device));
	}
	pthread_mutex_unlock(&a->lock);
	return n;
}

struct kill_check {
	struct gp_agent *a;
	int64_t task;
};

static bool still_of_task(pid_t pid, const void *ctx)
{
	const struct kill_check *c = ctx;
	int64_t now = 0;

	return gp_agent_task_of(c->a, pid, &now) == 0 ? now == c->task : c->task == 0;
}

/* Kills pid if it still belongs to `task` (0: to none). */
static void process_kill(struct gp_agent *a, pid_t pid, int64_t task)
{
	gp_proc_kill_if(pid, still_of_task, &(struct kill_check){ a, task });
}

/* A task's violation: kept (the first one) for the loop, and by policy
 * the process killed and the task stopped. */
static void task_violated(struct gp_agent *a, const struct gp_violation *v)
{
	bool kill_it = a->o.verify == GP_VERIFY_KILL;
	struct running *r;

	pthread_mutex_lock(&a->lock);
	r = gp_agent_running(a, v->task);
	if (r && !r->violation[0]) {
		snprintf(r->violation, sizeof(r->violation), "%s", v->text);
		r->violation_stops = kill_it;
	}
	pthread_mutex_unlock(&a->lock);
	if (!r || !kill_it)
		return;
	process_kill(a, v->pid, v->task);
	if (a->cgroups)
		gp_cgroups_kill(a->cgroups, v->task);
}

/* Where a new stranger goes: an empty entry, else one already told. */
static struct stranger *stranger_slot(struct gp_agent *a)
{
	for (int i = 0; i < GP_AGENT_STRANGERS; i++)
		if (!a->stranger[i].pid)
			return &a->stranger[i];
	for (int i = 0; i < GP_AGENT_STRANGERS; i++)
		if (a->stranger[i].told)
			return &a->stranger[i];
	return &a->stranger[0];
}

/* A process of no task: reported once (by pid and start time), killed
 * by policy. */
static void stranger_found(struct gp_agent *a, const struct gp_violation *v)
{
	uint64_t start = gp_proc_start_time(v->pid);
	bool known = false;

	pthread_mutex_lock(&a->lock);
	for (int i = 0; i < GP_AGENT_STRANGERS && !known; i++)
		known = a->stranger[i].pid == v->pid && a->stranger[i].start == start;
	if (!known) {
		struct stranger *slot = stranger_slot(a);

		*slot = (struct stranger){ .pid = v->pid, .start = start };
		snprintf(slot->text, sizeof(slot->text), "%s", v->text);
	}
	pthread_mutex_unlock(&a->lock);
	if (a->o.verify == GP_VERIFY_KILL)
		process_kill(a, v->pid, 0);
}

/* What is known of device d's process pid (alive, started at `start`):
 * its task looked up once found, whether it joined looked up until it
 * has. */
static const struct known *known_of(struct gp_agent *a, struct watch_scratch *w, unsigned d,
				    pid_t pid, uint64_t start)
{
	struct known *k = &w->known[((unsigned)pid * 31 + d) % KNOWN_MAX];
	char id[GP_TASK_ID_MAX];

	if (k->pid != pid || k->start != start || k->device != d || !k->task) {
		/* (A process of no task is looked up again: its task may be
		 * one being started.) */
		*k = (struct known){ .pid = pid, .start = start, .device = d };
		if (gp_agent_task_of(a, pid, &k->task) < 0)
			k->task = 0;
	}
	if (k->task && !k->joined) {
		gp_agent_task_name(k->task, id, sizeof(id));
		k->joined = gp_region_task_has_process(a->region[d], id, pid, start);
	}
	return k;
}

/* Device d's processes, as the verifier takes them; those that died
 * since the library listed them are left out. How many. */
static int procs_of(struct gp_agent *a, struct watch_scratch *w, unsigned d, int listed)
{
	int n = 0;

	for (int i = 0; i < listed; i++) {
		const struct gp_usage_process *l = &w->listed[i];
		uint64_t start = gp_proc_start_time(l->pid);
		const struct known *k;

		if (!start)
			continue;
		k = known_of(a, w, d, l->pid, start);
		w->proc[n++] = (struct gp_verify_proc){ .pid = l->pid,
							.mem_bytes = l->mem_bytes,
							.mem_max_bytes = l->mem_max_bytes,
							.util_pct = l->util_pct,
							.task = k->task,
							.registered = k->joined };
	}
	return n;
}

static void device_check(struct gp_agent *a, struct watch_scratch *w, unsigned d, int tasks)
{
	int listed = gp_usage_processes(a->watch_usage, d, w->listed, PROCS_MAX), found;

	if (listed <= 0)
		return;
	listed = procs_of(a, w, d, listed < PROCS_MAX ? listed : PROCS_MAX);
	found = gp_verifier_check(a->verifier, d, a->node.device[d].uuid, w->task, tasks, w->proc,
				  listed, w->found, VIOLATIONS_MAX);
	for (int i = 0; i < found && i < VIOLATIONS_MAX; i++) {
		if (w->found[i].task)
			task_violated(a, &w->found[i]);
		else
			stranger_found(a, &w->found[i]);
	}
}

/* Task t's files on its devices: one it damaged is made anew from the
 * table, and the task is named in a violation. */
static void files_check(struct gp_agent *a, const struct gp_verify_task *t)
{
	char id[GP_TASK_ID_MAX], why[GP_VIOLATION_TEXT_MAX / 2];
	struct gp_violation v = { .kind = GP_VIOLATION_DAMAGE, .task = t->id };

	gp_agent_task_name(t->id, id, sizeof(id));
	for (unsigned i = 0; t->sliced && i < t->devices; i++) {
		unsigned d = t->device[i];
		int r = gp_region_task_check(a->region[d], id, why, sizeof(why));

		if (r != -EBADMSG)
			continue;
		r = gp_region_task_file_make(a->region[d], id, NULL);
		/* (Cut short, it still names the task and the device.) */
		if (snprintf(v.text, sizeof(v.text),
			     "task %lld damaged its file on %s, which only its processes write: %s; "
			     "%s", (long long)t->id, a->node.device[d].uuid, why,
			     r == 0 ? "it was made anew from the limits table"
				    : "it could not be made anew") >= (int)sizeof(v.text))
			v.text[sizeof(v.text) - 1] = '\0';
		v.device = d;
		task_violated(a, &v);
	}
}

static void *watch_main(void *arg)
{
	struct gp_agent *a = arg;
	struct watch_scratch *w = calloc(1, sizeof(*w));
	struct gp_rng rng;

	gp_rng_init(&rng, ((uint64_t)getpid() << 32) ^ gp_proc_start_time(getpid()) ^
				  (uint64_t)(uintptr_t)w);
	pthread_setname_np(pthread_self(), "gp-verifier");
	while (w && !atomic_load(&a->watch_stop)) {
		uint32_t gen = atomic_load(&a->watch_gen);
		int tasks = snapshot(a, w->task);

		for (unsigned d = 0; d < a->node.devices; d++)
			device_check(a, w, d, tasks);
		for (int k = 0; k < tasks; k++)
			files_check(a, &w->task[k]);
		gp_futex_wait(&a->watch_gen, gen,
			      gp_rng_around(&rng, (uint64_t)a->o.verify_ms * 1000000ULL));
	}
	free(w);
	return NULL;
}

int gp_agent_watch_start(struct gp_agent *a, char *err, size_t err_len)
{
	struct gp_verifier_options vo = { .check_joined = a->o.shim_path != NULL,
					  .slack_mib = a->o.verify_slack_mib,
					  .self = getpid() };
	int r;

	if (a->o.verify == GP_VERIFY_OFF)
		return 0;
	r = gp_verifier_new(&vo, &a->verifier);
	if (r < 0) {
		snprintf(err, err_len, "verifier: %s", strerror(-r));
		return r;
	}
	r = gp_usage_open(a->o.nvml_library, &a->node, &a->watch_usage, err, err_len);
	if (r == 0)
		r = -pthread_create(&a->watch, NULL, watch_main, a);
	if (r < 0) {
		a->watch_usage = gp_usage_close(a->watch_usage);
		a->verifier = gp_verifier_free(a->verifier);
		if (!*err)
			snprintf(err, err_len, "verifier: cannot start its thread: %s", strerror(-r));
	}
	return r;
}

void gp_agent_watch_stop(struct gp_agent *a)
{
	if (!a->verifier)
		return;
	atomic_store(&a->watch_stop, true);
	atomic_fetch_add(&a->watch_gen, 1);
	gp_futex_wake_all(&a->watch_gen);
	pthread_join(a->watch, NULL);
	a->watch_usage = gp_usage_close(a->watch_usage);
	a->verifier = gp_verifier_free(a->verifier);
}
