/* test-logtail.c — the end of a task's log (src/server/logtail.c): the
 * last N lines, with or without a final newline; the byte cap, cut at a
 * line start unless one line is longer than the cap; an empty file; a
 * missing file and bad arguments refused; reading on from an offset (for
 * `gpupool logs -f`), capped, and past the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/logtail.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_refuses),
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_from),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
