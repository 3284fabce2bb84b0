/* logtail.c — reading the end of a task's log (logtail.h): one read of
 * at most max_bytes from the end, then a cut at line starts; or one read
 * from an offset on. */
#include "server/logtail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* After the first newline, when the buffer starts inside a line. */
static size_t first_line_start(const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len);

	return nl && (size_t)(nl - buf) + 1 < len ? (size_t)(nl - buf) + 1 : 0;
}

/* The start of the last `lines` lines of buf[from..len). */
static size_t last_lines_start(const char *buf, size_t from, size_t len, unsigned lines)
{
	size_t pos = len;
	unsigned seen = 0;

	if (pos > from && buf[pos - 1] == '\n')
		pos--; /* the last line's own newline */
	while (pos > from) {
		if (buf[pos - 1] == '\n' && ++seen == lines)
			return pos;
		pos--;
	}
	return from;
}

size_t gp_logtail_start(const char *buf, size_t len, unsigned lines, int cut)
{
	size_t from = cut ? first_line_start(buf, len) : 0;

	return lines ? last_lines_start(buf, from, len, lines) : from;
}

/* Reads len bytes at offset; fewer when the file is shorter now. */
static int read_at(int fd, char *buf, size_t len, off_t offset, size_t *ret_got)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, offset + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	*ret_got = got;
	return 0;
}

/* The open file's size; -EINVAL when it is not a regular file. */
static int file_size(int fd, uint64_t *ret)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*ret = (uint64_t)st.st_size;
	return 0;
}

/* t->len bytes at t->skipped into t->text (malloc'd, NUL-ended); fewer
 * when the file is shorter now. */
static int read_text(int fd, size_t want, struct gp_logtail *t)
{
	int r;

	t->text = malloc(want + 1);
	if (!t->text)
		return -ENOMEM;
	r = read_at(fd, t->text, want, (off_t)t->skipped, &t->len);
	if (r < 0) {
		free(t->text);
		return r;
	}
	t->text[t->len] = '\0';
	return 0;
}

/* The last max_bytes of the open file: text, its length, where it
 * starts; *ret_before is the byte before it ('\n' at the file's start). */
static int read_end(int fd, size_t max_bytes, struct gp_logtail *t, char *ret_before)
{
	size_t want, got = 0;
	int r = file_size(fd, &t->size);

	if (r < 0)
		return r;
	want = t->size > max_bytes ? max_bytes : (size_t)t->size;
	t->skipped = t->size - want;
	*ret_before = '\n';
	if (t->skipped && (r = read_at(fd, ret_before, 1, (off_t)t->skipped - 1, &got)) < 0)
		return r;
	return read_text(fd, want, t);
}

int gp_logtail_read(const char *path, unsigned lines, size_t max_bytes,
		    struct gp_logtail *ret)
{
	struct gp_logtail t = {0};
	char before;
	size_t start;
	int fd, r;

	if (!path || !ret || !max_bytes || max_bytes > GP_LOGTAIL_MAX_BYTES)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	r = read_end(fd, max_bytes, &t, &before);
	close(fd);
	if (r < 0)
		return r;
	start = gp_logtail_start(t.text, t.len, lines, before != '\n');
	memmove(t.text, t.text + start, t.len - start + 1);
	t.len -= start;
	t.skipped += start;
	*ret = t;
	return 0;
}

int gp_logtail_read_from(const char *path, uint64_t from, size_t max_bytes,
			 struct gp_logtail *ret)
{
	struct gp_logtail t = {0};
	int fd, r;

	if (!path || !ret || !max_bytes || max_bytes > GP_LOGTAIL_MAX_BYTES ||
	    from > INT64_MAX)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	r = file_size(fd, &t.size);
	if (r == 0) {
		t.skipped = from < t.size ? from : t.size;
		r = read_text(fd, t.size - t.skipped > max_bytes ? max_bytes
								 : (size_t)(t.size - t.skipped),
			      &t);
	}
	close(fd);
	if (r == 0)
		*ret = t;
	return r;
}
