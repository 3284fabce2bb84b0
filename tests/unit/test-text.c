/* test-text.c — tenants' text made safe for a terminal (src/base/text.c):
 * the controls a terminal acts on are escaped (ESC, the C0 and C1
 * controls, DEL, bidirectional overrides, bytes of no well-formed UTF-8),
 * everything else is copied; a short buffer is cut between escapes,
 * never inside one, and the length needed is still given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/text.h"

/* s escaped, compared with want; and plain exactly when nothing changed. */
static void escapes_to(const char *s, const char *want)
{
	char out[256];
	size_t n = gp_text_escape(s, out, sizeof(out));

	assert_string_equal(out, want);
	assert_int_equal(n, strlen(want));
	assert_int_equal(gp_text_is_plain(s), strcmp(s, want) == 0);
}

static void test_controls(void **state)
{
	(void)state;
	/* A terminal's escape sequences: clear the screen, set the title. */
	escapes_to("x\x1b[2J\x1b]0;owned\x07y", "x\\x1b[2J\\x1b]0;owned\\x07y");
	escapes_to("a\nb\tc\rd", "a\\nb\\tc\\rd");
	escapes_to("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
	/* C1 controls as UTF-8 (U+009B is CSI to some terminals). */
	escapes_to("\xc2\x9b" "31m", "\\u009b31m");
	escapes_to("\xc2\x80\xc2\x9f", "\\u0080\\u009f");
	/* Bidirectional overrides and isolates reorder what is read. */
	escapes_to("rm \xe2\x80\xae" "txt.sh", "rm \\u202etxt.sh");
	escapes_to("\xe2\x81\xa6" "x" "\xe2\x81\xa9", "\\u2066x\\u2069");
}

static void test_plain_kept(void **state)
{
	(void)state;
	escapes_to("", "");
	escapes_to("python train.py --lr 3e-4 'a b' \"c\" $HOME \\n", "python train.py --lr 3e-4 'a b' \"c\" $HOME \\n");
	/* Letters of other scripts, and symbols next to the escaped ones. */
	escapes_to("\xe8\xae\xad\xe7\xbb\x83 caf\xc3\xa9 \xc2\xa0 \xe2\x80\xa9 \xf0\x9f\x9a\x80",
		   "\xe8\xae\xad\xe7\xbb\x83 caf\xc3\xa9 \xc2\xa0 \xe2\x80\xa9 \xf0\x9f\x9a\x80");
}

static void test_malformed_utf8(void **state)
{
	(void)state;
	/* A lone 8-bit CSI, a lone continuation byte, a truncated sequence. */
	escapes_to("\x9b" "2J", "\\x9b2J");
	escapes_to("a\x80z", "a\\x80z");
	escapes_to("\xe2\x80", "\\xe2\\x80");
	/* Overlong forms and surrogates are not well-formed. */
	escapes_to("\xc0\x9b", "\\xc0\\x9b");
	escapes_to("\xe0\x80\x9b", "\\xe0\\x80\\x9b");
	escapes_to("\xed\xa0\x80", "\\xed\\xa0\\x80");
	escapes_to("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
}

static void test_bytes_with_nul(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(gp_text_escape_n("a\0b\x1b", 4, out, sizeof(out)), 10);
	assert_string_equal(out, "a\\x00b\\x1b");
}

static void test_short_buffer(void **state)
{
	char out[8];

	(void)state;
	/* "ab\x1b" needs 6; 5 bytes hold "ab" and not half of "\x1b". */
	assert_int_equal(gp_text_escape("ab\x1b", out, 5), 6);
	assert_string_equal(out, "ab");
	assert_int_equal(gp_text_escape("ab\x1b" "c", out, 7), 7);
	assert_string_equal(out, "ab\\x1b");
	/* Nothing after a cut, even what would fit. */
	assert_int_equal(gp_text_escape("a\x1b" "b", out, 4), 6);
	assert_string_equal(out, "a");
	assert_int_equal(gp_text_escape("abc", NULL, 0), 3);
	assert_int_equal(gp_text_escape("abc", out, 1), 3);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_plain_kept),
		cmocka_unit_test(test_malformed_utf8),
		cmocka_unit_test(test_bytes_with_nul),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
