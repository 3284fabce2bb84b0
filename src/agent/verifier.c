/* verifier.c — a device's processes against the tasks' slices
 * (verifier.h). */
#include "agent/verifier.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp_verifier {
	struct gp_verifier_options o;
};

int gp_verifier_new(const struct gp_verifier_options *o, struct gp_verifier **ret)
{
	struct gp_verifier *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->o = *o;
	*ret = v;
	return 0;
}

struct gp_verifier *gp_verifier_free(struct gp_verifier *v)
{
	free(v);
	return NULL;
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

/* Does p use the device: hold (or have held) memory past what the driver
 * takes for a context, or run work? A process that joined its task does
 * so before its first allocation or launch. */
static bool uses(const struct gp_verifier *v, const struct gp_verify_proc *p)
{
	return mib(p->mem_max_bytes) > v->o.slack_mib || mib(p->mem_bytes) > v->o.slack_mib ||
	       p->util_pct > 0;
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

/* Task t on the device: over its slice now (its processes together), or
 * at some moment since one of them started (that process alone). */
static void over_check(const struct gp_verifier *v, const struct gp_verify_task *t,
		       const char *uuid, const struct gp_verify_proc *procs, int n_procs,
		       struct gp_violation *out, int max, int *n)
{
	const struct gp_verify_proc *largest = NULL, *peak = NULL;
	uint64_t held = 0, allowed = t->mem_mib + v->o.slack_mib;
	unsigned count = 0;

	for (int i = 0; i < n_procs; i++) {
		const struct gp_verify_proc *p = &procs[i];

		if (p->task != t->id)
			continue;
		held += p->mem_bytes;
		count++;
		if (!largest || p->mem_bytes > largest->mem_bytes)
			largest = p;
		if (!peak || p->mem_max_bytes > peak->mem_max_bytes)
			peak = p;
	}
	if (largest && mib(held) > allowed)
		found(out, max, n, GP_VIOLATION_OVER, t->id, largest->pid,
		      &(struct gp_verify_proc){ .mem_bytes = held },
		      "task %" PRId64 " holds %" PRIu64 " MiB on %s in %u process(es), over its "
		      "slice of %" PRIu64 " MiB (%" PRIu64 " MiB allowed for the driver's own use)",
		      t->id, mib(held), uuid, count, t->mem_mib, v->o.slack_mib);
	else if (peak && mib(peak->mem_max_bytes) > allowed)
		found(out, max, n, GP_VIOLATION_OVER, t->id, peak->pid,
		      &(struct gp_verify_proc){ .mem_bytes = peak->mem_max_bytes },
		      "process %d of task %" PRId64 " held %" PRIu64 " MiB on %s at some moment "
		      "since it started (it holds %" PRIu64 " MiB now), over its task's slice of %"
		      PRIu64 " MiB (%" PRIu64 " MiB allowed for the driver's own use)",
		      (int)peak->pid, t->id, mib(peak->mem_max_bytes), uuid,
		      mib(peak->mem_bytes), t->mem_mib, v->o.slack_mib);
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
		} else if (t->sliced && v->o.check_joined && !p->registered && uses(v, p)) {
			found(out, max, &n, GP_VIOLATION_UNSLICED, t->id, p->pid, p,
			      "process %d of task %" PRId64 " runs on %s without the interposer: "
			      "it never joined its task there (it holds %" PRIu64 " MiB; the "
			      "task's slice is %" PRIu64 " MiB%s)",
			      (int)p->pid, t->id, uuid, mib(p->mem_bytes), t->mem_mib, util);
		}
	}
	for (int k = 0; k < n_tasks; k++)
		if (tasks[k].sliced && task_has_device(&tasks[k], device))
			over_check(v, &tasks[k], uuid, procs, n_procs, out, max, &n);
	for (int i = 0; i < n && i < max; i++)
		out[i].device = device;
	return n;
}
