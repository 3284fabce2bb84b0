/* closest.c — the known word closest to a mistyped one (closest.h): the
 * optimal string alignment distance by dynamic programming over three
 * rows (the one before the last is what a swap looks back to). */
#include "base/closest.h"

#include <stdint.h>
#include <string.h>

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

size_t gp_closest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t rows[3][GP_CLOSEST_LEN_MAX + 1];
	size_t *before = rows[0], *last = rows[1], *row = rows[2];

	if (la > GP_CLOSEST_LEN_MAX || lb > GP_CLOSEST_LEN_MAX)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		last[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *spare = before;

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];

			row[j] = min3(last[j] + 1, row[j - 1] + 1, last[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && before[j - 2] + 1 < row[j])
				row[j] = before[j - 2] + 1;
		}
		before = last;
		last = row;
		row = spare;
	}
	return last[lb];
}

/* The only name that starts with word; NULL when none or several do. */
static const char *only_prefix(const char *word, const char *const *names, size_t n)
{
	const char *found = NULL;
	size_t len = strlen(word);

	for (size_t i = 0; i < n; i++) {
		if (!names[i] || strncmp(names[i], word, len))
			continue;
		if (found)
			return NULL;
		found = names[i];
	}
	return found;
}

const char *gp_closest_find(const char *word, const char *const *names, size_t n)
{
	size_t len = strlen(word), most = len / 3, best = SIZE_MAX;
	const char *found = NULL;

	most = most < 1 ? 1 : most > 2 ? 2 : most;
	for (size_t i = 0; i < n; i++) {
		size_t d = names[i] ? gp_closest_distance(word, names[i]) : SIZE_MAX;

		if (d == 0)
			return NULL;
		if (d < best) {
			best = d;
			found = names[i];
		}
	}
	if (best <= most)
		return found;
	return len >= 3 ? only_prefix(word, names, n) : NULL;
}
