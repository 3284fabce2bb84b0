/* logtail.c — reading a task's log (logtail.h): a view of its files as
 * one text, taken once per call; then one read of at most max_bytes
 * from the end, and a cut at line starts; or one read from an offset on.
 *
 * The view is consistent when the offset file says the same before the
 * files are opened and after: no rotation finished in between, so at
 * most one was under way, and the inode the offset file names tells
 * which of the two files it starts (base/logfile.h). */
#include "server/logtail.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/logfile.h"

#define VIEW_TRIES 5

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

/* ---- the view ---------------------------------------------------------- */

/* One file of the log, open: its bytes are the log's [start, start + len). */
struct part {
	int fd;
	uint64_t start, len, ino;
};

/* The log as one text: part[0] (task-ID.log.1) then part[1]
 * (task-ID.log); a part with fd -1 is not there. */
struct view {
	struct part part[2];
};

static void part_close(struct part *p)
{
	if (p->fd >= 0)
		close(p->fd);
	*p = (struct part){.fd = -1};
}

static void view_close(struct view *v)
{
	part_close(&v->part[0]);
	part_close(&v->part[1]);
}

/* Opens a file of the log (-ENOENT: not there; -EINVAL: not a regular file). */
static int part_open(const char *path, struct part *p)
{
	struct stat st;

	*p = (struct part){.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
	if (p->fd < 0)
		return -errno;
	if (fstat(p->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		p->len = (uint64_t)st.st_size;
		p->ino = (uint64_t)st.st_ino;
		return 0;
	}
	part_close(p);
	return -EINVAL;
}

/* Where the parts start, the offset file saying that `cur` starts at
 * `start` if cur's inode is `ino`: false when neither file is the one
 * it names (then nothing is changed). */
static bool view_place(struct view *v, uint64_t start, uint64_t ino)
{
	struct part *old = &v->part[0], *cur = &v->part[1];

	if (cur->fd >= 0 && cur->ino == ino) {
		/* PATH.1 comes before, unless a rotation moved PATH there since. */
		if (old->fd >= 0 && (old->ino == ino || old->len > start))
			part_close(old);
		cur->start = start;
		old->start = start - old->len;
		return true;
	}
	if (old->fd >= 0 && old->ino == ino) {
		part_close(cur); /* made by a rotation under way: empty yet */
		old->start = start;
		return true;
	}
	return false;
}

/* Without an offset file to go by: PATH.1, if any, from byte 0, then PATH. */
static void view_place_plain(struct view *v)
{
	v->part[0].start = 0;
	v->part[1].start = v->part[0].len;
}

/* One try: -EAGAIN when the offset file changed meanwhile or does not
 * name either file yet (unless `last`). */
static int view_try(const char *const name[3], bool last, struct view *v)
{
	uint64_t start = 0, ino = 0, start2 = 0, ino2 = 0;
	int o1 = gp_logfile_offset_read(name[2], &start, &ino), o2, r0, r1;

	r0 = part_open(name[0], &v->part[0]);
	r1 = part_open(name[1], &v->part[1]);
	o2 = gp_logfile_offset_read(name[2], &start2, &ino2);
	if ((r0 < 0 && r0 != -ENOENT) || (r1 < 0 && r1 != -ENOENT) || (r0 < 0 && r1 < 0)) {
		view_close(v);
		return r1 < 0 && r1 != -ENOENT ? r1 : r0;
	}
	if (!last && (o1 != o2 || start != start2 || ino != ino2 || o1 == -EINVAL)) {
		view_close(v);
		return -EAGAIN;
	}
	if (o1 == 0 && view_place(v, start, ino))
		return 0;
	if (o1 == 0 && !last) {
		view_close(v);
		return -EAGAIN;
	}
	view_place_plain(v);
	return 0;
}

static int view_open(const char *path, struct view *v)
{
	const struct timespec ms = {0, 1000000L};
	char old[PATH_MAX], offset[PATH_MAX];
	const char *name[3] = {old, path, offset};
	int r = gp_logfile_name(path, GP_LOGFILE_OLD_SUFFIX, old, sizeof(old));

	if (r == 0)
		r = gp_logfile_name(path, GP_LOGFILE_OFFSET_SUFFIX, offset, sizeof(offset));
	for (int i = 0; r == 0 && i < VIEW_TRIES; i++) {
		r = view_try(name, i == VIEW_TRIES - 1, v);
		if (r != -EAGAIN)
			break;
		r = 0;
		nanosleep(&ms, NULL);
	}
	return r;
}

/* The offset of the log's first byte kept, and of its end. */
static uint64_t view_start(const struct view *v)
{
	return v->part[0].fd >= 0 ? v->part[0].start : v->part[1].start;
}

static uint64_t view_end(const struct view *v)
{
	const struct part *p = v->part[1].fd >= 0 ? &v->part[1] : &v->part[0];

	return p->start + p->len;
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

/* The log's bytes [at, at + len) into buf, across the parts; fewer when
 * a file is shorter now than the view says. */
static int view_read(const struct view *v, uint64_t at, char *buf, size_t len,
		     size_t *ret_got)
{
	size_t got = 0;

	for (int i = 0; i < 2 && got < len; i++) {
		const struct part *p = &v->part[i];
		uint64_t pos = at + got;
		size_t want, n = 0;
		int r;

		if (p->fd < 0 || pos >= p->start + p->len || pos < p->start)
			continue;
		want = len - got < p->start + p->len - pos ? len - got
							   : (size_t)(p->start + p->len - pos);
		r = read_at(p->fd, buf + got, want, (off_t)(pos - p->start), &n);
		if (r < 0)
			return r;
		got += n;
		if (n < want)
			break;
	}
	*ret_got = got;
	return 0;
}

/* want bytes at t->skipped into t->text (malloc'd, NUL-ended); fewer
 * when the files are shorter now. */
static int read_text(const struct view *v, size_t want, struct gp_logtail *t)
{
	int r;

	t->text = malloc(want + 1);
	if (!t->text)
		return -ENOMEM;
	r = view_read(v, t->skipped, t->text, want, &t->len);
	if (r < 0) {
		free(t->text);
		return r;
	}
	t->text[t->len] = '\0';
	return 0;
}

/* ---- reading ------------------------------------------------------------- */

/* The last max_bytes of the log: text, its length, where it starts;
 * *ret_cut when it starts inside a line (or may: the cap dropped what
 * came before). */
static int read_end(const struct view *v, size_t max_bytes, struct gp_logtail *t,
		    bool *ret_cut)
{
	uint64_t kept = t->size - t->dropped;
	size_t want = kept > max_bytes ? max_bytes : (size_t)kept, got = 0;
	char before = '\n';
	int r;

	t->skipped = t->size - want;
	if (t->skipped > t->dropped &&
	    (r = view_read(v, t->skipped - 1, &before, 1, &got)) < 0)
		return r;
	*ret_cut = t->skipped ? before != '\n' || t->skipped == t->dropped : false;
	return read_text(v, want, t);
}

int gp_logtail_read(const char *path, unsigned lines, size_t max_bytes,
		    struct gp_logtail *ret)
{
	struct gp_logtail t = {0};
	struct view v;
	size_t start;
	bool cut = false;
	int r;

	if (!path || !ret || !max_bytes || max_bytes > GP_LOGTAIL_MAX_BYTES)
		return -EINVAL;
	r = view_open(path, &v);
	if (r < 0)
		return r;
	t.dropped = view_start(&v);
	t.size = view_end(&v);
	r = read_end(&v, max_bytes, &t, &cut);
	view_close(&v);
	if (r < 0)
		return r;
	start = gp_logtail_start(t.text, t.len, lines, cut);
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
	struct view v;
	int r;

	if (!path || !ret || !max_bytes || max_bytes > GP_LOGTAIL_MAX_BYTES ||
	    from > INT64_MAX)
		return -EINVAL;
	r = view_open(path, &v);
	if (r < 0)
		return r;
	t.dropped = view_start(&v);
	t.size = view_end(&v);
	t.skipped = from < t.dropped ? t.dropped : from < t.size ? from : t.size;
	r = read_text(&v,
		      t.size - t.skipped > max_bytes ? max_bytes : (size_t)(t.size - t.skipped),
		      &t);
	view_close(&v);
	if (r == 0)
		*ret = t;
	return r;
}
