/* runtime.h — the seam between gpuload's modes and a vendor's runtime.
 *
 * gpuload's modes (modes.c) are written over the operations of one
 * `struct gl_runtime`, so the same burn/latency/alloc/serve/train work runs
 * on CUDA, HIP, ACL, CNRT, Level Zero... Each runtime lives in its own
 * tools/gpuload/rt-NAME.c and defines `const struct gl_runtime
 * gl_runtime_NAME`; runtime.c lists them all in gl_runtimes[] (one
 * registration line each) and `--runtime NAME` picks one (default "cuda").
 *
 * A runtime is loaded with dlopen at its real soname (never linked), so
 * that gpuload goes through whatever a sharing layer puts in front of it.
 * Once loaded it stays loaded for the life of the process.
 *
 * Invariants every runtime keeps:
 * - Functions return 0 or a negative errno. A failed runtime call is
 *   reported ONCE, on stderr, where it happens, with gl_report: "gpuload:
 *   CALL: ERROR_NAME (error text)"; callers only pass the error up (-EIO).
 *   The exceptions are said below (alloc's out of memory, event_elapsed).
 * - One session is used by one thread at a time (gpuload has one).
 * - Output parameters `ret_*` are untouched on failure.
 *
 * Ownership: the session pointer belongs to the runtime from open until
 * close; device pointers from alloc until free; events from event_create
 * until event_destroy. Strings in the table are static. */
#ifndef GPULOAD_RUNTIME_H
#define GPULOAD_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a session is opened with (from the command line). */
struct gl_runtime_params {
	int device;                     /* --device N: the runtime's own ordinal */
	unsigned blocks, threads;       /* --blocks/--threads: the launch shape,
					 * where the runtime has one */
};

struct gl_runtime {
	const char *name;               /* "cuda": what --runtime takes */
	const char *summary;            /* one line for --help */
	/* What gl_emit reports as "loader": how the entry points were found,
	 * by default and with --direct ("cuGetProcAddress_v2", "dlsym"). */
	const char *loader, *loader_direct;

	/* Loads the runtime library and its entry points; once per process,
	 * later calls return 0. `direct`: dlsym every exported symbol rather
	 * than the runtime's own proc-address call (where it has none, both
	 * are dlsym). On failure returns a negative errno, leaves nothing
	 * loaded and writes ONE line into err (which call failed and why,
	 * and what to do) instead of printing it. */
	int (*load)(bool direct, char *err, size_t err_len);

	/* Opens a session on device p->device: initialises the runtime and
	 * makes whatever it needs to launch gpuload's kernel (context, module,
	 * one stream or queue), kept behind *ret_session. On failure it has
	 * reported the error and undone what it did. */
	int (*open)(const struct gl_runtime_params *p, void **ret_session);
	/* Undoes open (waits for nothing: call sync first). Reports failures
	 * and keeps going; -EIO if any. Accepts NULL. */
	int (*close)(void *session);

	/* Enqueues one kernel that holds the device for `ns` nanoseconds on
	 * the session's stream; returns without waiting for it (where the
	 * runtime is asynchronous). */
	int (*launch)(void *session, uint64_t ns);
	/* Waits until everything enqueued on the session's stream is done. */
	int (*sync)(void *session);

	/* Allocates `bytes` of device memory. -ENOMEM, NOT reported, when the
	 * runtime says it is out of memory (its own out-of-memory error; a
	 * result for gpuload's alloc mode, not a failure); -EIO, reported,
	 * for any other error. */
	int (*alloc)(void *session, size_t bytes, void **ret_ptr);
	/* Frees what alloc returned. */
	int (*free)(void *session, void *ptr);
	/* The runtime's view of the device's memory (under a sharing layer:
	 * the slice). */
	int (*mem_info)(void *session, size_t *ret_free, size_t *ret_total);
	/* The runtime's name of the error that made the session's last failed
	 * call fail ("CUDA_ERROR_OUT_OF_MEMORY"), or a text naming the code
	 * written into buf; NULL when no call has failed. Static or buf. */
	const char *(*last_error)(void *session, char *buf, size_t len);

	/* Events, OPTIONAL: NULL event_create means the runtime has none, and
	 * the modes fall back to sync and the host clock. An event marks a
	 * point in the stream: record enqueues it, event_sync waits until the
	 * stream has passed it. `timing`: the event will be given to
	 * event_elapsed (otherwise the runtime may make it cheaper). */
	int (*event_create)(void *session, bool timing, void **ret_event);
	int (*event_record)(void *session, void *event);
	int (*event_sync)(void *session, void *event);
	/* Device time between two recorded, completed timing events, in ms.
	 * OPTIONAL even with events (NULL), and a failure is NOT reported:
	 * the caller falls back to the host clock. */
	int (*event_elapsed)(void *session, void *start, void *end, double *ret_ms);
	/* Reports failures; accepts NULL. */
	int (*event_destroy)(void *session, void *event);
};

/* What --runtime is when not given; always in gl_runtimes. */
#define GL_RUNTIME_DEFAULT "cuda"

/* Every runtime gpuload knows, NULL-terminated, in --help's order. */
extern const struct gl_runtime *const gl_runtimes[];

/* The runtime called `name`, or NULL. */
const struct gl_runtime *gl_runtime_find(const char *name);

/* Prints "gpuload: CALL: ERROR_NAME (ERROR_TEXT)" on stderr, the one report
 * of a failed runtime call (ERROR_TEXT may be NULL: left out), and returns
 * -EIO for the caller to pass up. */
int gl_report(const char *call, const char *error_name, const char *error_text);

#endif
