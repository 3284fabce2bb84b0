/* strmap.h — a hash table from strings to pointers, for the tables of
 * objects a program keeps by name (the extender's nodes by name, pods by
 * uid). Open addressing with linear probing; deletion moves the entries
 * that follow back (no tombstones), so the table never fills with dead
 * slots. Not thread-safe: the caller locks.
 *
 * Ownership: the map copies the keys; the values are the caller's (the
 * map never frees them). Functions return 0 or a negative errno. */
#ifndef GP_BASE_STRMAP_H
#define GP_BASE_STRMAP_H

#include <stddef.h>

struct gp_strmap {
	struct gp_strmap_slot *slot;
	size_t cap, count;              /* cap is 0 or a power of two */
};

struct gp_strmap_slot {
	char *key;                      /* NULL: empty */
	void *value;
};

/* A zero-filled gp_strmap is an empty map. */
void gp_strmap_release(struct gp_strmap *m);

/* The value of key, or NULL. */
void *gp_strmap_get(const struct gp_strmap *m, const char *key);

/* Sets key to value (replacing any value it had); -ENOMEM. */
int gp_strmap_put(struct gp_strmap *m, const char *key, void *value);

/* Removes key; returns its value, or NULL when it was not there. */
void *gp_strmap_remove(struct gp_strmap *m, const char *key);

/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->slot[i].key) ... */

#endif
