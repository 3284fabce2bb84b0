/* test-logtail.c — the end of a task's log (src/server/logtail.c): the
 * last N lines, with or without a final newline; the byte cap, cut at a
 * line start unless one line is longer than the cap; an empty file; a
 * missing file and bad arguments refused; reading on from an offset (for
 * `gpupool logs -f`), capped, and past the end. A log the pump rotated
 * (task-ID.log.1, task-ID.log and its offset file, made here by hand as
 * base/logfile.h says): read as one text, lines and the cap across the
 * two files, offsets that count the dropped bytes; followed across
 * rotations without a byte repeated or lost, and told of the bytes that
 * were dropped before it could read them; a rotation caught half done;
 * an offset file that makes no sense. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/logfile.h"
#include "server/logtail.h"
#include "tree.h"

/* A temporary file holding text; its path in path (unlinked by the test). */
static void file_make(char *path, size_t size, const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, size, "/tmp/test-logtail-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The text gp_logtail_read gives for text, lines and max_bytes. */
static void tail_equal(const char *text, unsigned lines, size_t max_bytes,
		       const char *want, uint64_t want_skipped)
{
	struct gp_logtail t;
	char path[64];

	file_make(path, sizeof(path), text);
	assert_int_equal(gp_logtail_read(path, lines, max_bytes, &t), 0);
	unlink(path);
	assert_string_equal(t.text, want);
	assert_int_equal(t.len, strlen(want));
	assert_int_equal(t.skipped, want_skipped);
	assert_int_equal(t.size, strlen(text));
	free(t.text);
}

static void test_lines(void **state)
{
	(void)state;
	tail_equal("a\nb\nc\n", 0, 100, "a\nb\nc\n", 0);
	tail_equal("a\nb\nc\n", 2, 100, "b\nc\n", 2);
	tail_equal("a\nb\nc\n", 1, 100, "c\n", 4);
	tail_equal("a\nb\nc\n", 3, 100, "a\nb\nc\n", 0);
	tail_equal("a\nb\nc\n", 9, 100, "a\nb\nc\n", 0);
	/* A last line still being written counts as a line. */
	tail_equal("a\nb\nc", 1, 100, "c", 4);
	tail_equal("a\nb\nc", 2, 100, "b\nc", 2);
	/* Empty lines are lines. */
	tail_equal("a\n\n\n", 2, 100, "\n\n", 2);
	tail_equal("", 5, 100, "", 0);
}

static void test_cap(void **state)
{
	(void)state;
	/* "aaaa\nbbbb\ncc\n" has 13 bytes; the last 6 are "bb\ncc\n", whose
	 * first line is cut: "cc\n". */
	tail_equal("aaaa\nbbbb\ncc\n", 0, 6, "cc\n", 10);
	/* The cap falls on a line start: nothing more is cut. */
	tail_equal("aaaa\nbbbb\ncc\n", 0, 8, "bbbb\ncc\n", 5);
	/* One line longer than the cap: its end is all there is. */
	tail_equal("0123456789\n", 0, 4, "789\n", 7);
	/* Lines within the cap. */
	tail_equal("aaaa\nbbbb\ncc\ndd\n", 1, 9, "dd\n", 13);
}

static void test_refuses(void **state)
{
	struct gp_logtail t = {.text = (char *)"untouched"};

	(void)state;
	assert_int_equal(gp_logtail_read("/nonexistent/task-1.log", 0, 100, &t), -ENOENT);
	assert_int_equal(gp_logtail_read("/tmp", 0, 100, &t), -EINVAL);
	assert_int_equal(gp_logtail_read("/dev/null", 0, 0, &t), -EINVAL);
	assert_int_equal(gp_logtail_read("/dev/null", 0, GP_LOGTAIL_MAX_BYTES + 1, &t),
			 -EINVAL);
	assert_string_equal(t.text, "untouched");
}

/* Reading on from an offset: the bytes as they are, capped; past the
 * end, none, at the end. */
static void from_equal(const char *text, uint64_t from, size_t max_bytes, const char *want,
		       uint64_t want_skipped)
{
	struct gp_logtail t = {0};
	char path[64];

	file_make(path, sizeof(path), text);
	assert_int_equal(gp_logtail_read_from(path, from, max_bytes, &t), 0);
	unlink(path);
	assert_string_equal(t.text, want);
	assert_int_equal(t.len, strlen(want));
	assert_int_equal(t.skipped, want_skipped);
	assert_int_equal(t.size, strlen(text));
	free(t.text);
}

static void test_from(void **state)
{
	(void)state;
	from_equal("a\nbb\nc", 0, 100, "a\nbb\nc", 0);
	from_equal("a\nbb\nc", 3, 100, "b\nc", 3); /* no cut at lines */
	from_equal("a\nbb\nc", 2, 3, "bb\n", 2);
	from_equal("a\nbb\nc", 6, 100, "", 6);
	from_equal("a\nbb\nc", 99, 100, "", 6);
	assert_int_equal(gp_logtail_read_from("/nonexistent/task-1.log", 0, 100,
					      &(struct gp_logtail){0}),
			 -ENOENT);
	assert_int_equal(gp_logtail_read_from("/dev/null", 0, 0, &(struct gp_logtail){0}),
			 -EINVAL);
}

static void test_start(void **state)
{
	(void)state;
	assert_int_equal(gp_logtail_start("ab\ncd\n", 6, 0, 1), 3);
	assert_int_equal(gp_logtail_start("ab\ncd\n", 6, 0, 0), 0);
	assert_int_equal(gp_logtail_start("abcd\n", 5, 0, 1), 0);
	assert_int_equal(gp_logtail_start("ab\ncd\n", 6, 1, 0), 3);
	assert_int_equal(gp_logtail_start("", 0, 1, 1), 0);
}

/* ---- rotated logs ------------------------------------------------------- */

struct rotated {
	char dir[64], path[96], old[104], offset[104];
};

static int rotated_setup(void **state)
{
	struct rotated *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	snprintf(r->dir, sizeof(r->dir), "/tmp/test-logtail-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->path, sizeof(r->path), "%s/task-1.log", r->dir);
	snprintf(r->old, sizeof(r->old), "%s.1", r->path);
	snprintf(r->offset, sizeof(r->offset), "%s.offset", r->path);
	*state = r;
	return 0;
}

static int rotated_teardown(void **state)
{
	struct rotated *r = *state;

	remove_tree(r->dir);
	free(r);
	return 0;
}

static void append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static uint64_t inode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

/* The offset file: path starts at byte `start` if its inode is `ino`. */
static void offset_set(const struct rotated *r, uint64_t start, uint64_t ino)
{
	int fd = open(r->offset, O_WRONLY | O_CREAT, 0600);

	assert_true(fd >= 0);
	assert_int_equal(gp_logfile_offset_write(fd, start, ino), 0);
	close(fd);
}

/* A new log, as the pump starts it: empty, its offset file naming it. */
static void log_start(const struct rotated *r)
{
	append(r->path, "");
	offset_set(r, 0, inode_of(r->path));
}

/* A rotation as the pump makes one: PATH to PATH.1, a new PATH, then the
 * offset file; `start` is where the new PATH starts. */
static void rotate(const struct rotated *r, uint64_t start)
{
	assert_int_equal(rename(r->path, r->old), 0);
	append(r->path, "");
	offset_set(r, start, inode_of(r->path));
}

static void read_equal(const char *path, unsigned lines, size_t max_bytes, const char *want,
		       uint64_t want_skipped, uint64_t want_size, uint64_t want_dropped)
{
	struct gp_logtail t;

	assert_int_equal(gp_logtail_read(path, lines, max_bytes, &t), 0);
	assert_string_equal(t.text, want);
	assert_int_equal(t.len, strlen(want));
	assert_int_equal(t.skipped, want_skipped);
	assert_int_equal(t.size, want_size);
	assert_int_equal(t.dropped, want_dropped);
	free(t.text);
}

static void from_read_equal(const char *path, uint64_t from, size_t max_bytes,
			    const char *want, uint64_t want_skipped)
{
	struct gp_logtail t;

	assert_int_equal(gp_logtail_read_from(path, from, max_bytes, &t), 0);
	assert_string_equal(t.text, want);
	assert_int_equal(t.skipped, want_skipped);
	free(t.text);
}

/* 100 bytes dropped, then "aaa\nbbb\n" in PATH.1 (bytes 100 to 107) and
 * "ccc\nddd\n" in PATH (108 to 115). */
static void rotated_make(const struct rotated *r)
{
	append(r->old, "aaa\nbbb\n");
	append(r->path, "ccc\nddd\n");
	offset_set(r, 108, inode_of(r->path));
}

static void test_rotated_read(void **state)
{
	struct rotated *r = *state;

	rotated_make(r);
	/* The first line kept may have lost its start to the cap: left out. */
	read_equal(r->path, 0, 100, "bbb\nccc\nddd\n", 104, 116, 100);
	read_equal(r->path, 3, 100, "bbb\nccc\nddd\n", 104, 116, 100);
	read_equal(r->path, 2, 100, "ccc\nddd\n", 108, 116, 100);
	/* The byte cap across the two files: a cut inside PATH.1's "bbb"... */
	read_equal(r->path, 0, 10, "ccc\nddd\n", 108, 116, 100);
	/* ... or just after its newline, which is read from PATH.1. */
	read_equal(r->path, 0, 12, "bbb\nccc\nddd\n", 104, 116, 100);
	read_equal(r->path, 0, 3, "dd\n", 113, 116, 100);
	/* Reading on: bytes as they are, across the files. */
	from_read_equal(r->path, 0, 100, "aaa\nbbb\nccc\nddd\n", 100);
	from_read_equal(r->path, 99, 100, "aaa\nbbb\nccc\nddd\n", 100);
	from_read_equal(r->path, 106, 100, "b\nccc\nddd\n", 106);
	from_read_equal(r->path, 106, 3, "b\nc", 106);
	from_read_equal(r->path, 110, 100, "c\nddd\n", 110);
	from_read_equal(r->path, 116, 100, "", 116);
	from_read_equal(r->path, 500, 100, "", 116);
}

/* A follower keeps its place across rotations: what it reads from the
 * last end on, each time, adds up to the text written, once. */
static void test_rotated_follow(void **state)
{
	struct rotated *r = *state;
	struct gp_logtail t;
	uint64_t at = 0;
	char seen[256] = "";
	static const struct {
		const char *text;
		uint64_t rotate_at; /* 0: none, else rotate first, PATH to start there */
	} steps[] = {
		{"one\n", 0},	       {"two\n", 0},	       {"three\n", 8},
		{"four\nfive\n", 0}, {"six\n", 24},	       {"seven\n", 28},
		{"", 0},	       {"eight\nnine\n", 34},
	};

	log_start(r);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i].rotate_at)
			rotate(r, steps[i].rotate_at);
		append(r->path, steps[i].text);
		assert_int_equal(gp_logtail_read_from(r->path, at, 1 << 20, &t), 0);
		assert_int_equal(t.skipped, at);
		strncat(seen, t.text, sizeof(seen) - strlen(seen) - 1);
		at = t.skipped + t.len;
		free(t.text);
	}
	assert_string_equal(seen, "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n");
	assert_int_equal(at, strlen(seen));
	/* A follower that fell behind the cap is told where the log goes on:
	 * the bytes from 4 to 28 are gone. */
	assert_int_equal(gp_logtail_read_from(r->path, 4, 1 << 20, &t), 0);
	assert_int_equal(t.dropped, 28);
	assert_int_equal(t.skipped, 28);
	assert_string_equal(t.text, "seven\neight\nnine\n");
	free(t.text);
}

/* A rotation caught half done: PATH renamed to PATH.1 and maybe a new
 * PATH made, the offset file not yet rewritten (it names PATH.1's inode);
 * or caught between the opening of the two files. */
static void test_rotated_half_done(void **state)
{
	struct rotated *r = *state;

	rotated_make(r);
	assert_int_equal(rename(r->path, r->old), 0);
	read_equal(r->path, 0, 100, "ddd\n", 112, 116, 108); /* "ccc" may be cut */
	from_read_equal(r->path, 0, 100, "ccc\nddd\n", 108);
	append(r->path, "");
	read_equal(r->path, 2, 100, "ddd\n", 112, 116, 108);
	from_read_equal(r->path, 110, 100, "c\nddd\n", 110);
	/* A reader that opened PATH, then PATH.1 once PATH had been renamed
	 * there, has the same file twice (a hard link stands for that): once. */
	unlink(r->path);
	assert_int_equal(link(r->old, r->path), 0);
	from_read_equal(r->path, 0, 100, "ccc\nddd\n", 108);
}

/* An offset file that names neither file, or is not one of ours: PATH.1
 * is taken to come first, from byte 0. */
static void test_rotated_nonsense(void **state)
{
	struct rotated *r = *state;
	int fd;

	rotated_make(r);
	offset_set(r, 108, inode_of(r->path) + 1000);
	read_equal(r->path, 0, 100, "aaa\nbbb\nccc\nddd\n", 0, 16, 0);
	fd = open(r->offset, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "12 34\n", 6), 6);
	close(fd);
	read_equal(r->path, 0, 100, "aaa\nbbb\nccc\nddd\n", 0, 16, 0);
	unlink(r->offset);
	read_equal(r->path, 1, 100, "ddd\n", 12, 16, 0);
	unlink(r->path);
	read_equal(r->path, 1, 100, "bbb\n", 4, 8, 0); /* PATH.1 alone */
	unlink(r->old);
	assert_int_equal(gp_logtail_read(r->path, 0, 100, &(struct gp_logtail){0}), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_refuses),
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_from),
		cmocka_unit_test_setup_teardown(test_rotated_read, rotated_setup,
						rotated_teardown),
		cmocka_unit_test_setup_teardown(test_rotated_follow, rotated_setup,
						rotated_teardown),
		cmocka_unit_test_setup_teardown(test_rotated_half_done, rotated_setup,
						rotated_teardown),
		cmocka_unit_test_setup_teardown(test_rotated_nonsense, rotated_setup,
						rotated_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
