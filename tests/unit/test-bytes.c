/* test-bytes.c — the growing byte buffer (src/base/bytes.c): pieces
 * appended in order and NUL-terminated, its cap refused whole, cleared for
 * the next answer, and libcurl's write callback failing past the cap. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/bytes.h"

static void pieces_in_order_as_a_string(void **state)
{
	struct gp_bytes b = {0};
	char big[10000];

	(void)state;
	memset(big, 'x', sizeof(big));
	assert_int_equal(gp_bytes_add(&b, "gpu", 3), 0);
	assert_int_equal(gp_bytes_add(&b, "pool", 4), 0);
	assert_string_equal(b.data, "gpupool");
	assert_int_equal(gp_bytes_add(&b, big, sizeof(big)), 0); /* past the first size */
	assert_int_equal(b.len, 7 + sizeof(big));
	assert_int_equal(b.data[b.len], '\0');
	gp_bytes_clear(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	gp_bytes_free(&b);
	assert_null(b.data);
}

static void the_cap_is_refused_whole(void **state)
{
	struct gp_bytes b = {.max = 8};

	(void)state;
	assert_int_equal(gp_bytes_add(&b, "12345", 5), 0);
	assert_int_equal(gp_bytes_add(&b, "6789", 4), -EFBIG);
	assert_string_equal(b.data, "12345");       /* nothing of it added */
	assert_int_equal(gp_bytes_add(&b, "678", 3), 0);
	assert_string_equal(b.data, "12345678");
	assert_int_equal(gp_bytes_curl_write("9", 1, 1, &b), 0); /* curl fails the transfer */
	assert_int_equal(gp_bytes_curl_write("", 1, 0, &b), 0);
	gp_bytes_free(&b);
	assert_int_equal(b.max, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pieces_in_order_as_a_string),
		cmocka_unit_test(the_cap_is_refused_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
