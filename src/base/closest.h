/* closest.h — the known word closest to a mistyped one, for "did you
 * mean …?" (the gpupool command's commands and subcommands).
 *
 * The distance is the optimal string alignment distance: the fewest
 * insertions, deletions, substitutions and swaps of two neighbouring
 * characters (each counting 1) that turn one word into the other, byte
 * by byte ("sumbit" is 1 from "submit", "tsak" 1 from "task").
 *
 * Pure functions: no allocation, thread-safe. */
#ifndef GP_BASE_CLOSEST_H
#define GP_BASE_CLOSEST_H

#include <stddef.h>

/* Words longer than this are as far from everything as can be. */
#define GP_CLOSEST_LEN_MAX 64

/* The distance from a to b; SIZE_MAX when either is longer than
 * GP_CLOSEST_LEN_MAX. */
size_t gp_closest_distance(const char *a, const char *b);

/* The word of names[0..n) that word is a slip of: the nearest one, when
 * it is at most a third of word's length away (at least 1, at most 2),
 * the first of those nearest winning a tie; else the only one that starts
 * with word, when word has 3 characters or more. NULL when there is
 * none, or word is one of names. NULL entries of names are skipped.
 * What it returns is one of names' own pointers. */
const char *gp_closest_find(const char *word, const char *const *names, size_t n);

#endif
