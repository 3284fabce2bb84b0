/* strmap.c — the string-keyed hash table of strmap.h. */
#include "base/strmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

static size_t home(const struct gp_strmap *m, const char *key)
{
	return (size_t)gp_hash_bytes(key, strlen(key)) & (m->cap - 1);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t find(const struct gp_strmap *m, const char *key)
{
	size_t i = home(m, key);

	while (m->slot[i].key && strcmp(m->slot[i].key, key) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int grow(struct gp_strmap *m)
{
	struct gp_strmap old = *m;
	size_t cap = old.cap ? old.cap * 2 : 16;

	m->slot = calloc(cap, sizeof(*m->slot));
	if (!m->slot) {
		*m = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i].key)
			m->slot[find(m, old.slot[i].key)] = old.slot[i];
	free(old.slot);
	return 0;
}

void gp_strmap_release(struct gp_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slot[i].key);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

void *gp_strmap_get(const struct gp_strmap *m, const char *key)
{
	const struct gp_strmap_slot *s = m->cap ? &m->slot[find(m, key)] : NULL;

	return s && s->key ? s->value : NULL;
}

int gp_strmap_put(struct gp_strmap *m, const char *key, void *value)
{
	size_t i;

	if ((m->count + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return -ENOMEM;
	i = find(m, key);
	if (!m->slot[i].key) {
		m->slot[i].key = strdup(key);
		if (!m->slot[i].key)
			return -ENOMEM;
		m->count++;
	}
	m->slot[i].value = value;
	return 0;
}

void *gp_strmap_remove(struct gp_strmap *m, const char *key)
{
	size_t i, j, mask = m->cap - 1;
	void *value;

	if (!m->cap || !m->slot[i = find(m, key)].key)
		return NULL;
	value = m->slot[i].value;
	free(m->slot[i].key);
	m->slot[i] = (struct gp_strmap_slot){ 0 };
	m->count--;
	/* Move back the entries after i that i's emptiness would hide. */
	for (j = (i + 1) & mask; m->slot[j].key; j = (j + 1) & mask) {
		size_t h = home(m, m->slot[j].key);

		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			m->slot[i] = m->slot[j];
			m->slot[j] = (struct gp_strmap_slot){ 0 };
			i = j;
		}
	}
	return value;
}
