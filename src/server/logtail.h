/* logtail.h — the end of a task's log, for GET /v1/tasks/ID/logs and
 * `gpupool logs ID --tail N`; and what was written past an offset, for
 * `gpupool logs ID -f`.
 *
 * A log is two files (base/logfile.h): LOG_DIR/task-ID.log, the newest
 * part, and task-ID.log.1, the part before it, which the agent's pump
 * rotates under a cap (agent/logpump.h); they are read as one text. An
 * offset into a log is an offset into its whole text as it was written,
 * counting the oldest bytes the cap dropped: offsets only grow, and a
 * reader that follows a log keeps its place across rotations. A log
 * written before the cap (one file, no task-ID.log.offset) reads as it
 * did: its offsets are the file's.
 *
 * A log can be large and is still being written while it is read, so
 * only its end is read: at most max_bytes from the end of the log as it
 * is when opened; of those, the last `lines` lines (0: all of them).
 * When the cap cut a line in two, its first part is left out, so that
 * the text starts at a line (unless a single line is longer than the
 * cap); so is the first line kept of a log the pump's cap dropped bytes
 * of, which may have lost its start. A final line without its newline
 * counts as a line.
 *
 * The files are opened, and the offset file read, until they agree
 * (a rotation may be under way: a few tries, a millisecond apart); when
 * they never do, task-ID.log.1 is taken to come first, from byte 0.
 *
 * Functions return 0 or a negative errno (-ENOENT: no such log; -EINVAL:
 * not regular files); they do not print. Ownership: ret->text is
 * malloc'd and the caller's. */
#ifndef GP_SERVER_LOGTAIL_H
#define GP_SERVER_LOGTAIL_H

#include <stddef.h>
#include <stdint.h>

#define GP_LOGTAIL_DEFAULT_BYTES (1024 * 1024)	    /* 1 MiB */
#define GP_LOGTAIL_MAX_BYTES	 (16 * 1024 * 1024) /* the most one request gets */

struct gp_logtail {
	char *text;	  /* malloc'd, NUL-terminated (it may hold NULs before) */
	size_t len;	  /* bytes in text */
	uint64_t skipped; /* the offset of text: bytes of the log before it */
	uint64_t size;	  /* the log's end when it was read: bytes ever written */
	uint64_t dropped; /* bytes the cap dropped: the offset of the oldest byte
			     kept (0: none) */
};

/* Reads the end of the log at path (task-ID.log) into *ret (untouched on
 * failure). max_bytes must be from 1 to GP_LOGTAIL_MAX_BYTES (-EINVAL). */
int gp_logtail_read(const char *path, unsigned lines, size_t max_bytes,
		    struct gp_logtail *ret);

/* Reads on from offset `from` (for following a log): the bytes from
 * there to the end of the log as it is now, at most max_bytes of them,
 * as they are (no cut at lines); ret->skipped is where they start, so
 * that skipped + len is where to read on from next time. That is `from`,
 * unless the cap dropped the bytes there: then the oldest byte kept
 * (skipped > from: skipped - from bytes are gone). A `from` past the end
 * gives no bytes and skipped = the end. max_bytes as gp_logtail_read. */
int gp_logtail_read_from(const char *path, uint64_t from, size_t max_bytes,
			 struct gp_logtail *ret);

/* Where the text kept of buf[0..len) starts: after the first newline
 * when `cut` (buf starts inside a line) and buf has one before its end,
 * then at the start of the last `lines` lines (0: all). */
size_t gp_logtail_start(const char *buf, size_t len, unsigned lines, int cut);

#endif
