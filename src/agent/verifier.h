/* verifier.h — checking what runs on a device against the tasks'
 * slices, with figures no task can forge.
 *
 * The interposer enforces a slice inside the task's own process, so it
 * binds honest programs only: a program can clear LD_PRELOAD, load a
 * renamed copy of the driver or bypass the interposer altogether. The
 * agent therefore checks, several times a second at jittered moments, the
 * device library's own list of each device's processes and the memory
 * each holds — now, and the most it held since it started where the
 * library keeps that (NVML's accounting), so memory taken and given back
 * between two looks is seen — and maps each process to its task (by the
 * task's cgroup, which no process can leave, or its process group). A
 * device process is a violation when
 *   - it belongs to no task (a stranger);
 *   - it belongs to a sliced task but uses the device (holds memory past
 *     the slack, or runs work) without having joined its task's file on
 *     that device, which the interposer does before its first allocation
 *     or launch: mapping the interposer's library proves nothing, joining
 *     needs the task's secret (the caller says, `registered`);
 *   - it runs on a device that is not one of its task's;
 *   - its task holds more memory on the device than its slice, plus a
 *     slack for what the driver itself counts (CUDA contexts and modules
 *     take 300-500 MiB per process on recent GPUs, and the slice does not
 *     count them), or one of its processes held more than that at some
 *     moment since its start.
 * A violation's text names the process, its task, the device and the
 * figures: the memory, and the process's utilization of the device where
 * the library reports it. This module only decides; the agent acts
 * (alerts, kills, fails the task; agent.h).
 *
 * Used from one thread. Functions return 0 or a negative errno;
 * gp_verifier_new's result is freed with gp_verifier_free. */
#ifndef GP_AGENT_VERIFIER_H
#define GP_AGENT_VERIFIER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/devices.h"

#define GP_VIOLATION_TEXT_MAX 320

enum gp_violation_kind {
	GP_VIOLATION_STRANGER, /* a process of no task */
	GP_VIOLATION_UNSLICED, /* a sliced task's process without the interposer */
	GP_VIOLATION_DEVICE,   /* on a device that is not its task's */
	GP_VIOLATION_OVER,     /* the task holds, or held, more than its slice */
	GP_VIOLATION_DAMAGE,   /* the task's file on a device is damaged (agent.c) */
};

/* A running task, as the verifier needs it. */
struct gp_verify_task {
	int64_t id;
	bool sliced;      /* a slice (not whole devices): the interposer must be loaded */
	uint64_t mem_mib; /* the slice on each of its devices, when sliced */
	unsigned devices;
	unsigned device[GP_AGENT_DEVICES_MAX]; /* indices of the node's devices */
};

/* A process on the device, as the device library lists it, with the
 * task the caller found for it (0: none). */
struct gp_verify_proc {
	pid_t pid;
	uint64_t mem_bytes;
	uint64_t mem_max_bytes; /* the most it held since its start (>= mem_bytes) */
	int util_pct;		/* of the device, where the library says; -1: unknown */
	int64_t task;
	bool registered;	/* joined its task's file on this device */
};

struct gp_violation {
	enum gp_violation_kind kind;
	int64_t task; /* 0: a process of no task */
	pid_t pid;    /* the process to stop (for OVER, the task's largest there) */
	unsigned device;
	uint64_t mem_mib;			/* what it (or its task) holds there */
	char text[GP_VIOLATION_TEXT_MAX];	/* one line: who, where, the figures */
};

struct gp_verifier_options {
	bool check_joined;  /* tasks run with the interposer: their processes join */
	uint64_t slack_mib; /* allowed over a task's slice on a device */
	pid_t self;	    /* the agent's process: never a stranger */
};

struct gp_verifier;

int gp_verifier_new(const struct gp_verifier_options *o, struct gp_verifier **ret);
struct gp_verifier *gp_verifier_free(struct gp_verifier *v); /* accepts NULL; returns NULL */

/* Checks one device (index `device`, `uuid` for the texts): procs[] its
 * processes, tasks[] the running tasks. Writes up to max violations to
 * out and returns how many were found (possibly more than max). */
int gp_verifier_check(struct gp_verifier *v, unsigned device, const char *uuid,
		      const struct gp_verify_task *tasks, int n_tasks,
		      const struct gp_verify_proc *procs, int n_procs,
		      struct gp_violation *out, int max);

#endif
