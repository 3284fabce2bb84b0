/* test-closest.c — the word closest to a mistyped one (src/base/closest.c):
 * distances with insertions, deletions, substitutions and swaps; the
 * gpupool command's own slips ("sumbit", "tsak", "templat"); a tie going
 * to the first name; a unique prefix; and no suggestion when nothing is
 * near. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/closest.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_distance(void **state)
{
	static const struct {
		const char *a, *b;
		size_t d;
	} cases[] = {
		{"", "", 0},
		{"submit", "submit", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"sumbit", "submit", 1},
		{"submt", "submit", 1},
		{"submitt", "submit", 1},
		{"sabmit", "submit", 1},
		{"ca", "abc", 3},
		{"kitten", "sitting", 3},
		{"tsak", "task", 1},
		{"logs", "sgol", 3},
	};
	char long_word[GP_CLOSEST_LEN_MAX + 2];

	(void)state;
	for (size_t i = 0; i < N(cases); i++) {
		assert_int_equal(gp_closest_distance(cases[i].a, cases[i].b), cases[i].d);
		assert_int_equal(gp_closest_distance(cases[i].b, cases[i].a), cases[i].d);
	}
	memset(long_word, 'a', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = '\0';
	assert_int_equal(gp_closest_distance(long_word, "a"), SIZE_MAX);
}

static void test_find(void **state)
{
	static const char *const names[] = {"sim",	"submit", "run",    "task",
					    "logs",	"queue",  "server", "service",
					    "template", "tenant", NULL,	    "top"};
	static const struct {
		const char *word, *want;
	} cases[] = {
		{"sumbit", "submit"},	 {"tsak", "task"},  {"lgos", "logs"},
		{"templat", "template"}, {"queu", "queue"}, {"servce", "service"},
		{"temp", "template"},	 {"serv", NULL}, /* two start with it */
		{"frobnicate", NULL},	 {"xy", NULL},	    {"tpo", "top"},
		{"sin", "sim"},		 {"submit", NULL}, /* known: no slip */
		{"tenatn", "tenant"},	 {"zzzzzzz", NULL},
	};

	(void)state;
	for (size_t i = 0; i < N(cases); i++) {
		const char *got = gp_closest_find(cases[i].word, names, N(names));

		if (cases[i].want)
			assert_string_equal(got, cases[i].want);
		else
			assert_null(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_find),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
