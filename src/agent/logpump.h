/* logpump.h — a task's output, carried from a pipe into its log files,
 * with a cap on their size.
 *
 * A task does not write its log itself: its stdout and stderr are the
 * write end of a pipe, and the pump's thread moves what comes out of the
 * pipes into the files (splice(2), or read/write where a filesystem
 * cannot splice). So the cap is exact whatever a task does, and a task
 * never holds, or can reopen, a log file.
 *
 * The files (base/logfile.h): PATH (LOG_DIR/task-ID.log) holds the newest
 * part, PATH.1 the part before it. When PATH would pass half the cap, it
 * is renamed to PATH.1 — the older PATH.1 and its bytes are dropped — and
 * a new PATH starts; so the two hold at most max_bytes together, and the
 * newest max_bytes / 2 bytes or more are always there. PATH.offset says
 * where PATH starts in the log's whole text, so that a reader sees one
 * text whose offsets only grow (server/logtail.h). Files are made mode
 * 0600. A log that already exists (a preempted task that runs again) is
 * continued. A log already larger than half the cap when its task starts
 * (written before the cap, or under a larger one) is rotated whole at the
 * first byte and dropped at the next rotation.
 *
 * Invariants:
 *   - The pump never blocks on a task: it reads the pipes without
 *     blocking and moves at most GP_LOGPUMP_QUANTUM bytes of one pipe per
 *     turn before it serves the next ready one, so a task that writes as
 *     fast as it can gets its share and the others' lines still arrive.
 *     A task that outwrites the disk waits on its full pipe.
 *   - Output that cannot be written (a full disk: ENOSPC, EDQUOT; EFBIG;
 *     EIO; any other error of the file) is dropped, never left to block
 *     the task: counted, the error kept, and for a second after each
 *     error the pump drops without trying again.
 *   - With a free-space floor (free_min), output is dropped in the same
 *     way (-ENOSPC, `floor` set) while the free space where the logs are
 *     (floor_dir) is under it, looked at every GP_LOGPUMP_FLOOR_MS and
 *     after every GP_LOGPUMP_FLOOR_BYTES written (so the logs pass the
 *     floor by that much at most): the space under the floor is left to
 *     others on that filesystem (the database, when the logs are beside
 *     it).
 *   - The pipe's ends are close-on-exec, and the pump keeps only the read
 *     end: when the pump is freed (or its process ends), a writer gets
 *     EPIPE (or SIGPIPE) instead of hanging on a full pipe.
 *   - No callback runs on the pump's thread: the caller polls for what
 *     was dropped (gp_logpump_take_drops).
 *
 * Threads: the pump's own thread does all the I/O on the pipes and the
 * files (all signals blocked there, so a file-size limit gives EFBIG, not
 * SIGXFSZ). The other calls may come from any thread. p->lock guards the
 * table of logs, each log's closing flag and drop counters, and the drops
 * of closed logs not yet taken; the pump's thread takes it only to read
 * or change those, never across I/O, so gp_logpump_add and
 * gp_logpump_take_drops never wait for a disk. gp_logpump_close waits for
 * the pump to finish the log.
 *
 * Ownership: the pump owns the read ends and the files; the write end
 * gp_logpump_add returns is the caller's to close. Functions return 0 or
 * a negative errno; nothing prints. */
#ifndef GP_AGENT_LOGPUMP_H
#define GP_AGENT_LOGPUMP_H

#include <stdbool.h>
#include <stdint.h>

#define GP_LOGPUMP_MAX_DEFAULT (64ULL << 20) /* a log's two files together */
#define GP_LOGPUMP_MAX_MIN     (1ULL << 20)
#define GP_LOGPUMP_PIPE_BYTES  (1U << 20)   /* asked of F_SETPIPE_SZ */
#define GP_LOGPUMP_QUANTUM     (256U << 10) /* one pipe's bytes per turn, at most */
#define GP_LOGPUMP_DRAIN_MS    50 /* gp_logpump_close drains this long, at most */
#define GP_LOGPUMP_FLOOR_MS    100 /* between two looks at the free space, */
#define GP_LOGPUMP_FLOOR_BYTES (1U << 20) /* ... or after this much is written */

struct gp_logpump;

struct gp_logpump_options {
	uint64_t max_bytes;  /* per log; 0: GP_LOGPUMP_MAX_DEFAULT; at least
				GP_LOGPUMP_MAX_MIN */
	unsigned pipe_bytes; /* each pipe's buffer, best effort (the kernel may give
				less); 0: GP_LOGPUMP_PIPE_BYTES */
	const char *floor_dir; /* where the free space is looked at (copied); NULL:
				  no floor */
	uint64_t free_min;     /* bytes left free there; 0: no floor */
};

/* What a log lost, as gp_logpump_take_drops tells it. */
struct gp_logpump_drop {
	int64_t task;
	uint64_t capped;  /* bytes the cap dropped, over the log's whole life: where
			     its oldest byte still kept stands in its text */
	uint64_t failed;  /* bytes of output never written (write errors), since
			     gp_logpump_add */
	int error;	  /* the last write error, a negative errno; 0: none */
	bool floor;	  /* the last bytes dropped were for the free-space floor */
	int64_t first_ms; /* when this pump first dropped bytes of it (unix ms) */
};

/* Starts the pump's thread. o may be NULL (the defaults); -EINVAL for a
 * max_bytes under GP_LOGPUMP_MAX_MIN. The caller owns *ret. */
int gp_logpump_new(const struct gp_logpump_options *o, struct gp_logpump **ret);

/* Stops the thread and closes every log and pipe (what is still in a
 * pipe is lost; writers then get EPIPE). Accepts NULL; returns NULL. */
struct gp_logpump *gp_logpump_free(struct gp_logpump *p);

/* The cap of each log, in bytes. */
uint64_t gp_logpump_max(const struct gp_logpump *p);

/* Opens (or continues) task's log at path and makes its pipe; the write
 * end in *ret_write_fd (close-on-exec, blocking), for the task's stdout
 * and stderr: dup it onto them in the child, and close it in the parent
 * once the child is started, so that only the task holds it. -EEXIST
 * when the task has a log here already; -EINVAL when path (or PATH.1,
 * PATH.offset) is not a regular file (a symbolic link is not followed);
 * -ENAMETOOLONG; -errno of open, pipe2 or epoll. Nothing is left open on
 * failure. */
int gp_logpump_add(struct gp_logpump *p, int64_t task, const char *path,
		   int *ret_write_fd);

/* Like gp_logpump_add, but the pipe is a FIFO at fifo (made here, mode
 * 0600, a stale one replaced; it should be in a directory only the
 * server reaches), so that a pump of a later server can take the log
 * over (gp_logpump_attach) while the task runs on. *ret_keep_fd gets a
 * second read end (close-on-exec), for the task's keeper to hold
 * (launcher.h): the task's writes then never meet a FIFO without a
 * reader, whatever happens to the server; the caller closes its copy
 * once the task is started. */
int gp_logpump_add_fifo(struct gp_logpump *p, int64_t task, const char *path,
			const char *fifo, int *ret_write_fd, int *ret_keep_fd);

/* Takes over the log of a task another pump served, through its FIFO
 * (a task adopted after a server restart). -ENOENT: no FIFO there;
 * -EINVAL: fifo is not one. */
int gp_logpump_attach(struct gp_logpump *p, int64_t task, const char *path, const char *fifo);

/* The task has ended (or never started): moves what is left in its pipe
 * into the log — until the pipe is empty or has no writer, at most
 * GP_LOGPUMP_DRAIN_MS, so that a process that escaped the task and still
 * writes cannot hold this up — then closes the pipe and the files.
 * Returns once that is done: the log is complete. What was dropped since
 * the last gp_logpump_take_drops is kept for the next one. -ENOENT: no
 * such log; -ETIMEDOUT when the pump did not finish within a few seconds
 * (its thread stuck in a write to a failing disk): it finishes later on
 * its own. */
int gp_logpump_close(struct gp_logpump *p, int64_t task);

/* The logs whose drops changed since the last call (capped or failed
 * grew; closed logs' last changes too), at most max of them into out;
 * the others wait for the next call. Returns how many, or -EINVAL. */
int gp_logpump_take_drops(struct gp_logpump *p, struct gp_logpump_drop *out, int max);

#endif
