/* logtail.h — the end of a task's log file (LOG_DIR/task-ID.log), for
 * GET /v1/tasks/ID/logs and `gpupool logs ID --tail N`; and what was
 * appended past an offset, for `gpupool logs ID -f`.
 *
 * A log can be large and is still being written while it is read, so
 * only its end is read: at most max_bytes from the end of the file as it
 * is when opened; of those, the last `lines` lines (0: all of them).
 * When the cap cut a line in two, its first part is left out, so that
 * the text starts at a line (unless a single line is longer than the
 * cap). A final line without its newline counts as a line.
 *
 * Functions return 0 or a negative errno (-ENOENT: no such file); they
 * do not print. Ownership: ret->text is malloc'd and the caller's. */
#ifndef GP_SERVER_LOGTAIL_H
#define GP_SERVER_LOGTAIL_H

#include <stddef.h>
#include <stdint.h>

#define GP_LOGTAIL_DEFAULT_BYTES (1024 * 1024)	    /* 1 MiB */
#define GP_LOGTAIL_MAX_BYTES	 (16 * 1024 * 1024) /* the most one request gets */

struct gp_logtail {
	char *text;	  /* malloc'd, NUL-terminated (it may hold NULs before) */
	size_t len;	  /* bytes in text */
	uint64_t skipped; /* bytes of the file before text */
	uint64_t size;	  /* the file's size when it was read */
};

/* Reads the end of the file at path into *ret (untouched on failure).
 * max_bytes must be from 1 to GP_LOGTAIL_MAX_BYTES (-EINVAL). */
int gp_logtail_read(const char *path, unsigned lines, size_t max_bytes,
		    struct gp_logtail *ret);

/* Reads on from byte `from` (for following a log): the bytes from there
 * to the end of the file as it is now, at most max_bytes of them, as they
 * are (no cut at lines); ret->skipped is `from`, so that skipped + len is
 * where to read on from next time. A `from` past the end gives no bytes
 * and skipped = the file's size. max_bytes as gp_logtail_read. */
int gp_logtail_read_from(const char *path, uint64_t from, size_t max_bytes,
			 struct gp_logtail *ret);

/* Where the text kept of buf[0..len) starts: after the first newline
 * when `cut` (buf starts inside a line) and buf has one before its end,
 * then at the start of the last `lines` lines (0: all). */
size_t gp_logtail_start(const char *buf, size_t len, unsigned lines, int cut);

#endif
