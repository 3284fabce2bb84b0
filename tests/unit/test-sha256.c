/* test-sha256.c — SHA-256 (src/base/sha256.c) against the FIPS 180-4
 * examples and digests from coreutils' sha256sum around the padding's
 * edges (55, 56, 63, 64, 65 and 119 bytes), one-shot and fed in pieces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/sha256.h"

static void hex(const unsigned char d[GP_SHA256_BYTES], char out[2 * GP_SHA256_BYTES + 1])
{
	for (int i = 0; i < GP_SHA256_BYTES; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* The digest of data fed `piece` bytes at a time (0: all at once). */
static void digest_of(const void *data, size_t len, size_t piece, char out[65])
{
	const unsigned char *p = data;
	unsigned char d[GP_SHA256_BYTES];
	struct gp_sha256 s;

	gp_sha256_init(&s);
	if (piece == 0)
		piece = len ? len : 1;
	for (size_t at = 0; at < len; at += piece)
		gp_sha256_update(&s, p + at, len - at < piece ? len - at : piece);
	gp_sha256_final(&s, d);
	hex(d, out);
}

static void known_digests(void **state)
{
	static const struct { const char *text; const char *digest; } texts[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	static const struct { size_t len; const char *digest; } runs[] = {
		{ 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
		{ 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
		{ 65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0" },
		{ 119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb" },
	};
	static const size_t pieces[] = { 0, 1, 3, 64, 65 };
	static char as[1000000];
	char got[65];
	(void)state;

	memset(as, 'a', sizeof(as));
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++) {
			digest_of(texts[i].text, strlen(texts[i].text), pieces[p], got);
			assert_string_equal(got, texts[i].digest);
		}
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++) {
			digest_of(as, runs[i].len, pieces[p], got);
			assert_string_equal(got, runs[i].digest);
		}
	/* A million times 'a' (FIPS 180-4's long example). */
	digest_of(as, sizeof(as), 0, got);
	assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	digest_of(as, sizeof(as), 4093, got);
	assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_digests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
