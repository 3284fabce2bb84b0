/* node-verify.c — the verifier on a Kubernetes node (node-impl.h): the
 * agent's verifier (agent/verifier.h: a device process of no pod, one of
 * a sliced pod without the interposer, on a device not its pod's, or over
 * its slice) over this node's devices, at jittered moments --verify-ms
 * apart on average (drawn from half to one and a half of it, so that a
 * container cannot time what it does between two looks). Each process
 * listed by the device library is mapped to its pod by its cgroup
 * (kubelet names a pod's cgroup after its UID, and no process leaves its
 * cgroup) and to the task this program admitted for that pod; whether it
 * joined its task's file needs the task's secret, which only the pod's
 * own interposer has. By policy (--verify kill|alert|off) the process is
 * killed, through a pidfd after checking it is still the pod's; each
 * violation is told once (by pid and start time): a Warning event
 * GpupoolViolation on its pod (on the Node, for a process of no pod), a
 * line in the log, and gpupool_node_violations_total on /metrics (and
 * those of no pod apart, which the server reads for an alert:
 * slice-figures.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/proc.h"
#include "base/rng.h"
#include "k8s/node-impl.h"

#define PROCS_MAX 256           /* processes listed per device */
#define FOUND_MAX 64            /* violations per device and look */
#define TOLD_MAX 256            /* violations remembered, so told once */
#define EVENT_COMPONENT "gpupool-node"

/* The pods one look works on: the allocated ones, a task id each (the
 * verifier's: index + 1). */
struct look {
	int pods;
	struct gp_verify_task task[GP_AGENT_TASKS_MAX];
	struct gp_kube_pod pod[GP_AGENT_TASKS_MAX];
	char task_name[GP_AGENT_TASKS_MAX][GP_TASK_ID_MAX];
	struct gp_usage_process listed[PROCS_MAX];
	struct gp_verify_proc proc[PROCS_MAX];
	struct gp_violation found[FOUND_MAX];
};

struct told {
	pid_t pid;
	uint64_t start;
};

static void snapshot(struct node *n, struct look *l)
{
	l->pods = 0;
	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < n->pods.cap && l->pods < GP_AGENT_TASKS_MAX; i++) {
		const struct node_pod *k = n->pods.slot[i].value;
		struct gp_verify_task *t = &l->task[l->pods];

		if (!n->pods.slot[i].key || !k->allocated)
			continue;
		/* On a MIG instance the hardware holds the pod's size: no
		 * slice to check (its processes are still its own). */
		*t = (struct gp_verify_task){ .id = l->pods + 1,
					      .sliced = !k->p.placement.whole && !k->on_parts,
					      .mem_mib = k->p.placement.memory_mib,
					      .devices = k->devices };
		for (unsigned d = 0; d < k->devices; d++)
			t->device[d] = (unsigned)k->dev[d];
		l->pod[l->pods] = k->p;
		snprintf(l->task_name[l->pods], GP_TASK_ID_MAX, "%s", k->task);
		l->pods++;
	}
	pthread_mutex_unlock(&n->lock);
}

/* The verifier's task of a pod UID (index + 1), 0 for none. */
static int64_t task_of_uid(const struct look *l, const char *uid)
{
	for (int i = 0; i < l->pods; i++)
		if (strcmp(l->pod[i].uid, uid) == 0)
			return i + 1;
	return 0;
}

/* Device d's processes, each with its pod's task; those that died since
 * the library listed them are left out. How many. */
static int procs_of(struct node *n, struct look *l, unsigned d, int listed)
{
	int got = 0;

	for (int i = 0; i < listed; i++) {
		const struct gp_usage_process *p = &l->listed[i];
		uint64_t start = gp_proc_start_time(p->pid);
		char uid[GP_KUBE_UID_MAX];
		int64_t task;

		if (!start)
			continue;
		task = gp_node_pod_uid_of_pid(p->pid, uid) == 0 ? task_of_uid(l, uid) : 0;
		l->proc[got++] = (struct gp_verify_proc){
			.pid = p->pid, .mem_bytes = p->mem_bytes, .mem_max_bytes = p->mem_max_bytes,
			.util_pct = p->util_pct, .task = task,
			.registered = task && gp_region_task_has_process(n->dev[d].region,
									 l->task_name[task - 1],
									 p->pid, start),
		};
	}
	return got;
}

/* Is pid still in the cgroup of the pod uid ("": of none)? */
static bool still_of_pod(pid_t pid, const void *uid)
{
	char now[GP_KUBE_UID_MAX] = "";

	gp_node_pod_uid_of_pid(pid, now);
	return strcmp(now, uid) == 0;
}

/* Was this violation (its process) told before? Remembers it if not. */
static bool told_before(struct told *told, unsigned *next, pid_t pid)
{
	uint64_t start = gp_proc_start_time(pid);

	for (unsigned i = 0; i < TOLD_MAX; i++)
		if (told[i].pid == pid && told[i].start == start)
			return true;
	told[*next % TOLD_MAX] = (struct told){ pid, start };
	(*next)++;
	return false;
}

/* The verifier's text with its "task N" said as the pod it is. */
static void text_of(const struct gp_violation *v, const struct gp_kube_pod *p, char *ret,
		    size_t len)
{
	char task[32];
	const char *at;

	snprintf(task, sizeof(task), "task %lld", (long long)v->task);
	at = p ? strstr(v->text, task) : NULL;
	if (!at) {
		snprintf(ret, len, "%s", v->text);
		return;
	}
	snprintf(ret, len, "%.*spod %s/%s%s", (int)(at - v->text), v->text, p->ns, p->name,
		 at + strlen(task));
}

/* Counts a violation told: the node's, and its pod's on device d (for
 * the server's alert: slice-figures.h). Under the lock. */
static void violation_count(struct node *n, const struct gp_kube_pod *p, unsigned d)
{
	struct node_pod *k = p ? gp_strmap_get(&n->pods, p->uid) : NULL;

	n->violations++;
	n->violations_no_pod += !p;
	for (unsigned i = 0; k && i < k->devices; i++)
		if ((unsigned)k->dev[i] == d)
			k->violations[i]++;
}

static void violation_act(struct node *n, const struct look *l, const struct gp_violation *v,
			  unsigned d, bool tell)
{
	const struct gp_kube_pod *p = v->task ? &l->pod[v->task - 1] : NULL;
	char text[GP_VIOLATION_TEXT_MAX + 2 * GP_KUBE_NAME_MAX];

	text_of(v, p, text, sizeof(text));
	if (tell) {
		fprintf(stderr, "gpupool node: %s\n", text);
		pthread_mutex_lock(&n->lock);
		violation_count(n, p, d);
		pthread_mutex_unlock(&n->lock);
	}
	if (tell) {
		pthread_mutex_lock(&n->api_lock);
		if (p)
			gp_kube_event(n->api, "Pod", p->ns, p->name, p->uid, "Warning",
				      "GpupoolViolation", text, EVENT_COMPONENT);
		else
			gp_kube_event(n->api, "Node", NULL, n->o.node_name, n->o.node_name,
				      "Warning", "GpupoolViolation", text, EVENT_COMPONENT);
		pthread_mutex_unlock(&n->api_lock);
	}
	if (n->o.verify == GP_VERIFY_KILL)
		gp_proc_kill_if(v->pid, still_of_pod, p ? p->uid : "");
}

static void device_check(struct node *n, struct look *l, unsigned d, struct told *told,
			 unsigned *next)
{
	int listed, found;

	if (!n->dev[d].region)
		return;                 /* not usable: nothing of ours runs there */
	listed = gp_usage_processes(n->verify_usage, d, l->listed, PROCS_MAX);
	if (listed <= 0)
		return;
	listed = procs_of(n, l, d, listed < PROCS_MAX ? listed : PROCS_MAX);
	found = gp_verifier_check(n->verifier, d, n->dev[d].d.uuid, l->task, l->pods, l->proc,
				  listed, l->found, FOUND_MAX);
	for (int i = 0; i < found && i < FOUND_MAX; i++)
		violation_act(n, l, &l->found[i], d, !told_before(told, next, l->found[i].pid));
}

static void *verify_main(void *arg)
{
	struct node *n = arg;
	struct look *l = calloc(1, sizeof(*l));
	struct told *told = calloc(TOLD_MAX, sizeof(*told));
	uint64_t mean = (uint64_t)n->o.verify_ms * 1000000ULL;
	unsigned next = 0;
	struct gp_rng rng;

	gp_rng_init(&rng, ((uint64_t)getpid() << 32) ^ gp_monotonic_ns());
	pthread_setname_np(pthread_self(), "gp-verifier");
	pthread_mutex_lock(&n->verify_lock);
	while (l && told && !n->verify_stop) {
		struct timespec until;
		uint64_t at = gp_monotonic_ns() + gp_rng_around(&rng, mean);

		pthread_mutex_unlock(&n->verify_lock);
		snapshot(n, l);
		for (unsigned d = 0; d < n->devices; d++)
			device_check(n, l, d, told, &next);
		pthread_mutex_lock(&n->verify_lock);
		until = gp_timespec_of_ns(at);
		while (!n->verify_stop && pthread_cond_timedwait(&n->verify_wake, &n->verify_lock,
								 &until) == 0)
			;
	}
	pthread_mutex_unlock(&n->verify_lock);
	free(told);
	free(l);
	return NULL;
}

int gp_node_verify_start(struct node *n)
{
	struct gp_verifier_options vo = { .check_joined = true, .slack_mib = n->o.verify_slack_mib,
					  .self = getpid() };
	char err[512] = "";
	int r;

	if (n->o.verify == GP_VERIFY_OFF)
		return 0;
	pthread_mutex_init(&n->verify_lock, NULL);
	gp_monotonic_cond_init(&n->verify_wake);
	r = gp_verifier_new(&vo, &n->verifier);
	if (r == 0)
		r = gp_usage_open(n->o.nvml[0] ? n->o.nvml : NULL, &n->found, &n->verify_usage, err,
				  sizeof(err));
	if (r == 0)
		r = -pthread_create(&n->verify_thread, NULL, verify_main, n);
	if (r < 0) {
		fprintf(stderr, "gpupool node: cannot start the verifier: %s\n",
			*err ? err : strerror(-r));
		n->verify_usage = gp_usage_close(n->verify_usage);
		n->verifier = gp_verifier_free(n->verifier);
		return r;
	}
	n->verify_running = true;
	return 0;
}

void gp_node_verify_stop(struct node *n)
{
	if (!n->verify_running)
		return;
	pthread_mutex_lock(&n->verify_lock);
	n->verify_stop = true;
	pthread_cond_signal(&n->verify_wake);
	pthread_mutex_unlock(&n->verify_lock);
	pthread_join(n->verify_thread, NULL);
	n->verify_usage = gp_usage_close(n->verify_usage);
	n->verifier = gp_verifier_free(n->verifier);
	n->verify_running = false;
}
