/* verifier.c — a device's processes against the tasks' slices
 * (verifier.h). */
#include "agent/verifier.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/proc.h"

#define SEEN_CACHE 1024 /* processes whose maps were read, by pid */

/* Whether a process (pid, start time) had the interposer loaded. */
struct seen {
	pid_t pid;
	uint64_t start;
	bool loaded;
};

struct gp_verifier {
	struct gp_verifier_options o;
	bool check_shim;
	unsigned shim_major, shim_minor;
	ino_t shim_ino;
	struct seen seen[SEEN_CACHE];
};

int gp_verifier_new(const struct gp_verifier_options *o, struct gp_verifier **ret)
{
	struct gp_verifier *v = calloc(1, sizeof(*v));
	struct stat st;

	if (!v)
		return -ENOMEM;
	v->o = *o;
	if (o->shim_path) {
		if (stat(o->shim_path, &st) < 0) {
			free(v);
			return -errno;
		}
		v->check_shim = true;
		v->shim_major = major(st.st_dev);
		v->shim_minor = minor(st.st_dev);
		v->shim_ino = st.st_ino;
	}
	*ret = v;
	return 0;
}

struct gp_verifier *gp_verifier_free(struct gp_verifier *v)
{
	free(v);
	return NULL;
}

/* ---- the interposer in a process ---------------------------------------- */

/* Does one line of /proc/PID/maps map the interposer's file? Lines are
 * "start-end perms offset major:minor inode path". */
static bool maps_line_is_shim(const struct gp_verifier *v, const char *line)
{
	unsigned maj, min;
	unsigned long long ino;

	return sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) == 3 &&
	       ino == (unsigned long long)v->shim_ino && maj == v->shim_major &&
	       min == v->shim_minor;
}

static bool maps_have_shim(const struct gp_verifier *v, pid_t pid)
{
	char path[64], line[4096];
	bool found = false;
	FILE *in;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	in = fopen(path, "re");
	if (!in)
		return false;
	while (!found && fgets(line, sizeof(line), in))
		found = maps_line_is_shim(v, line);
	fclose(in);
	return found;
}

bool gp_verifier_has_shim(struct gp_verifier *v, pid_t pid)
{
	struct seen *s = &v->seen[(unsigned)pid % SEEN_CACHE];
	uint64_t start = gp_proc_start_time(pid);

	if (!v->check_shim)
		return true;
	if (start == 0)
		return false;
	/* A preloaded library is never unloaded: once seen, it stays. A
	 * process not seen with it is looked at again next time (it may be
	 * between its exec and the dynamic linker's mapping). */
	if (s->pid == pid && s->start == start && s->loaded)
		return true;
	*s = (struct seen){ .pid = pid, .start = start, .loaded = maps_have_shim(v, pid) };
	return s->loaded;
}

/* ---- one device ------------------------------------------------------------ */

static const struct gp_verify_task *task_find(const struct gp_verify_task *tasks, int n,
					      int64_t id)
{
	for (int i = 0; i < n; i++)
		if (tasks[i].id == id)
			return &tasks[i];
	return NULL;
}

static bool task_has_device(const struct gp_verify_task *t, unsigned device)
{
	for (unsigned i = 0; i < t->devices; i++)
		if (t->device[i] == device)
			return true;
	return false;
}

static uint64_t mib(uint64_t bytes)
{
	return bytes >> 20;
}

/* "; 87 % of the device" when the process's utilization is known. */
static void util_text(const struct gp_verify_proc *p, char *buf, size_t len)
{
	if (p->util_pct >= 0)
		snprintf(buf, len, "; it uses %d %% of the device", p->util_pct);
	else
		buf[0] = '\0';
}

/* Appends a violation when there is room; counts it anyway. */
static __attribute__((format(printf, 8, 9))) void
found(struct gp_violation *out, int max, int *n, enum gp_violation_kind kind, int64_t task,
      pid_t pid, const struct gp_verify_proc *p, const char *fmt, ...)
{
	va_list ap;

	if (*n < max) {
		struct gp_violation *x = &out[*n];

		*x = (struct gp_violation){ .kind = kind, .task = task, .pid = pid,
					    .mem_mib = mib(p->mem_bytes) };
		va_start(ap, fmt);
		vsnprintf(x->text, sizeof(x->text), fmt, ap);
		va_end(ap);
	}
	(*n)++;
}

int gp_verifier_check(struct gp_verifier *v, unsigned device, const char *uuid,
		      const struct gp_verify_task *tasks, int n_tasks,
		      const struct gp_verify_proc *procs, int n_procs,
		      struct gp_violation *out, int max)
{
	int n = 0;

	for (int i = 0; i < n_procs; i++) {
		const struct gp_verify_proc *p = &procs[i];
		const struct gp_verify_task *t = p->task ? task_find(tasks, n_tasks, p->task) : NULL;

		if (p->pid == v->o.self)
			continue;
		if (!t && p->task)
			continue; /* its task ended a moment ago: being stopped */
		char util[48];

		util_text(p, util, sizeof(util));
		if (!t) {
			found(out, max, &n, GP_VIOLATION_STRANGER, 0, p->pid, p,
			      "process %d holds %" PRIu64 " MiB on %s but belongs to no task%s",
			      (int)p->pid, mib(p->mem_bytes), uuid, util);
		} else if (!task_has_device(t, device)) {
			found(out, max, &n, GP_VIOLATION_DEVICE, t->id, p->pid, p,
			      "process %d of task %" PRId64 " uses %s (%" PRIu64
			      " MiB%s), which is not one of its devices",
			      (int)p->pid, t->id, uuid, mib(p->mem_bytes), util);
		} else if (t->sliced && !gp_verifier_has_shim(v, p->pid)) {
			found(out, max, &n, GP_VIOLATION_UNSLICED, t->id, p->pid, p,
			      "process %d of task %" PRId64 " runs on %s without the interposer "
			      "(it holds %" PRIu64 " MiB; the task's slice is %" PRIu64 " MiB%s)",
			      (int)p->pid, t->id, uuid, mib(p->mem_bytes), t->mem_mib, util);
		}
	}
	for (int k = 0; k < n_tasks; k++) {
		const struct gp_verify_task *t = &tasks[k];
		const struct gp_verify_proc *largest = NULL;
		uint64_t held = 0;
		unsigned count = 0;

		if (!t->sliced || !task_has_device(t, device))
			continue;
		for (int i = 0; i < n_procs; i++)
			if (procs[i].task == t->id) {
				held += procs[i].mem_bytes;
				count++;
				if (!largest || procs[i].mem_bytes > largest->mem_bytes)
					largest = &procs[i];
			}
		if (!largest || mib(held) <= t->mem_mib + v->o.slack_mib)
			continue;
		found(out, max, &n, GP_VIOLATION_OVER, t->id, largest->pid,
		      &(struct gp_verify_proc){ .mem_bytes = held },
		      "task %" PRId64 " holds %" PRIu64 " MiB on %s in %u process(es), over its "
		      "slice of %" PRIu64 " MiB (%" PRIu64 " MiB allowed for the driver's own use)",
		      t->id, mib(held), uuid, count, t->mem_mib, v->o.slack_mib);
	}
	for (int i = 0; i < n && i < max; i++)
		out[i].device = device;
	return n;
}
