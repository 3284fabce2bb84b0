/* index.c — the placement index (index.h): buckets in one array, found by
 * key through a hash table and walked by (idle, share) group; each bucket's
 * members in a treap by order.
 *
 * A treap is a binary search tree by (order, rank, node number) that is a
 * heap by a fixed pseudo-random priority per node, which keeps it balanced
 * in expectation whatever the insertion order. Every member carries the
 * size and the largest free amounts of its subtree, kept on the way back
 * up from each insertion and removal. */
#include "core/index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

struct gp_index_member {
	uint32_t bucket;                /* slot + 1; 0 when the node is not in */
	uint64_t order, rank;
	uint32_t child[2];              /* left (earlier), right (later) */
	uint32_t size;                  /* members in this subtree */
	uint32_t priority;
	uint32_t cpu, mem, dev_mem;     /* the node's own */
	uint32_t max_cpu, max_mem, max_dev_mem;   /* its subtree's */
	uint16_t share, max_share;
};

/* ---- treaps ---------------------------------------------------------- */

static bool before(const struct gp_index *x, uint32_t a, uint32_t b)
{
	const struct gp_index_member *p = &x->member[a], *q = &x->member[b];

	if (p->order != q->order)
		return p->order < q->order;
	return p->rank != q->rank ? p->rank < q->rank : a < b;
}

#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Recomputes t's size and maxima from its own values and its children. */
static void update(struct gp_index *x, uint32_t t)
{
	struct gp_index_member *m = &x->member[t];

	m->size = 1;
	m->max_cpu = m->cpu;
	m->max_mem = m->mem;
	m->max_dev_mem = m->dev_mem;
	m->max_share = m->share;
	for (int side = 0; side < 2; side++) {
		uint32_t c = m->child[side];

		if (c == GP_INDEX_NONE)
			continue;
		const struct gp_index_member *k = &x->member[c];
		m->size += k->size;
		m->max_cpu = MAX(m->max_cpu, k->max_cpu);
		m->max_mem = MAX(m->max_mem, k->max_mem);
		m->max_dev_mem = MAX(m->max_dev_mem, k->max_dev_mem);
		m->max_share = MAX(m->max_share, k->max_share);
	}
}

/* Lifts t's child on `side` above t; returns the child, now the root. */
static uint32_t rotate(struct gp_index *x, uint32_t t, int side)
{
	uint32_t c = x->member[t].child[side];

	x->member[t].child[side] = x->member[c].child[!side];
	update(x, t);
	x->member[c].child[!side] = t;
	update(x, c);
	return c;
}

/* Inserts n into the treap rooted at t; returns the new root. */
static uint32_t insert(struct gp_index *x, uint32_t t, uint32_t n)
{
	struct gp_index_member *m;
	int side;

	if (t == GP_INDEX_NONE) {
		x->member[n].child[0] = x->member[n].child[1] = GP_INDEX_NONE;
		update(x, n);
		return n;
	}
	m = &x->member[t];
	side = !before(x, n, t);
	m->child[side] = insert(x, m->child[side], n);
	if (x->member[m->child[side]].priority > m->priority)
		return rotate(x, t, side);
	update(x, t);
	return t;
}

/* Joins two treaps, every member of a before every member of b. */
static uint32_t merge(struct gp_index *x, uint32_t a, uint32_t b)
{
	if (a == GP_INDEX_NONE)
		return b;
	if (b == GP_INDEX_NONE)
		return a;
	if (x->member[a].priority > x->member[b].priority) {
		x->member[a].child[1] = merge(x, x->member[a].child[1], b);
		update(x, a);
		return a;
	}
	x->member[b].child[0] = merge(x, a, x->member[b].child[0]);
	update(x, b);
	return b;
}

/* Removes n (a member) from the treap rooted at t; returns the new root. */
static uint32_t erase(struct gp_index *x, uint32_t t, uint32_t n)
{
	struct gp_index_member *m = &x->member[t];

	if (t == n)
		return merge(x, m->child[0], m->child[1]);
	int side = !before(x, n, t);
	m->child[side] = erase(x, m->child[side], n);
	update(x, t);
	return t;
}

/* ---- buckets --------------------------------------------------------- */

static int table_grow(struct gp_index *x)
{
	uint32_t cap = x->table_cap ? 2 * x->table_cap : 64;
	uint32_t *table = calloc(cap, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (uint32_t i = 0; i < x->slots; i++) {
		struct gp_bucket *b = &x->bucket[i];

		if (!b->members)
			continue;
		b->chain = table[b->hash & (cap - 1)];
		table[b->hash & (cap - 1)] = i + 1;
	}
	free(x->table);
	x->table = table;
	x->table_cap = cap;
	return 0;
}

/* The group of a bucket key: its (idle, share) levels. */
static unsigned idle_of(const struct gp_bucket_key *key)
{
	return key->idle < GP_INDEX_IDLE_LEVELS ? key->idle : GP_INDEX_IDLE_LEVELS - 1;
}

static unsigned share_of(const struct gp_bucket_key *key)
{
	return key->share < GP_INDEX_SHARE_LEVELS ? key->share : GP_INDEX_SHARE_LEVELS - 1;
}

static int group_add(struct gp_index *x, uint32_t i)
{
	const struct gp_bucket_key *key = &x->bucket[i].key;
	struct gp_bucket_group *g = &x->group[idle_of(key)][share_of(key)];

	if (g->count == g->cap) {
		uint32_t cap = g->cap ? 2 * g->cap : 8;
		uint32_t *grown = realloc(g->slot, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		g->slot = grown;
		g->cap = cap;
	}
	x->bucket[i].group_pos = g->count;
	g->slot[g->count++] = i;
	x->nonempty[idle_of(key)] |= (uint16_t)(1u << share_of(key));
	return 0;
}

static void group_remove(struct gp_index *x, uint32_t i)
{
	const struct gp_bucket_key *key = &x->bucket[i].key;
	struct gp_bucket_group *g = &x->group[idle_of(key)][share_of(key)];
	uint32_t pos = x->bucket[i].group_pos, last = g->slot[--g->count];

	g->slot[pos] = last;
	x->bucket[last].group_pos = pos;
	if (g->count == 0)
		x->nonempty[idle_of(key)] &= (uint16_t)~(1u << share_of(key));
}

/* A free slot (made empty), or UINT32_MAX when there is no memory. */
static uint32_t slot_take(struct gp_index *x)
{
	uint32_t i;

	if (x->free_slot) {
		i = x->free_slot - 1;
		x->free_slot = x->bucket[i].chain;
		return i;
	}
	if (x->slots == x->slot_cap) {
		uint32_t cap = x->slot_cap ? 2 * x->slot_cap : 32;
		struct gp_bucket *grown = realloc(x->bucket, cap * sizeof(*grown));

		if (!grown)
			return UINT32_MAX;
		x->bucket = grown;
		x->slot_cap = cap;
	}
	return x->slots++;
}

/* The slot of the bucket for key, made (empty, in the table) when there
 * is none; UINT32_MAX: no memory. */
static uint32_t bucket_get(struct gp_index *x, const struct gp_bucket_key *key)
{
	uint64_t hash = gp_hash_bytes(key, sizeof(*key));
	struct gp_bucket *b;
	uint32_t i;

	if (x->buckets >= x->table_cap && table_grow(x) < 0)
		return UINT32_MAX;
	for (i = x->table[hash & (x->table_cap - 1)]; i; i = x->bucket[i - 1].chain)
		if (x->bucket[i - 1].hash == hash &&
		    memcmp(&x->bucket[i - 1].key, key, sizeof(*key)) == 0)
			return i - 1;
	i = slot_take(x);
	if (i == UINT32_MAX)
		return i;
	b = &x->bucket[i];
	memset(b, 0, sizeof(*b));
	b->key = *key;
	b->hash = hash;
	b->root = GP_INDEX_NONE;
	if (group_add(x, i) < 0) {
		b->chain = x->free_slot;
		x->free_slot = i + 1;
		return UINT32_MAX;
	}
	b->chain = x->table[hash & (x->table_cap - 1)];
	x->table[hash & (x->table_cap - 1)] = i + 1;
	x->buckets++;
	return i;
}

/* Takes the emptied bucket at slot i out of the table; its slot is free. */
static void bucket_drop(struct gp_index *x, uint32_t i)
{
	struct gp_bucket *b = &x->bucket[i];
	uint32_t *link = &x->table[b->hash & (x->table_cap - 1)];

	while (*link != i + 1)
		link = &x->bucket[*link - 1].chain;
	*link = b->chain;
	group_remove(x, i);
	b->chain = x->free_slot;
	x->free_slot = i + 1;
	x->buckets--;
}

/* Copies the root's maxima into the bucket, where decisions read them. */
static void bucket_sum_up(struct gp_index *x, struct gp_bucket *b)
{
	const struct gp_index_member *r = &x->member[b->root];

	if (b->root == GP_INDEX_NONE)
		b->most = (struct gp_index_need){ 0 };
	else
		b->most = (struct gp_index_need){ r->max_cpu, r->max_mem,
						  r->max_dev_mem, r->max_share };
}

/* ---- the interface ---------------------------------------------------- */

void gp_index_release(struct gp_index *x)
{
	for (unsigned i = 0; i < GP_INDEX_IDLE_LEVELS; i++)
		for (unsigned j = 0; j < GP_INDEX_SHARE_LEVELS; j++)
			free(x->group[i][j].slot);
	free(x->bucket);
	free(x->table);
	free(x->member);
	memset(x, 0, sizeof(*x));
}

int gp_index_reserve(struct gp_index *x, uint32_t nodes)
{
	uint32_t cap = x->member_cap ? x->member_cap : 64;
	struct gp_index_member *grown;

	if (nodes <= x->member_cap)
		return 0;
	while (cap < nodes)
		cap *= 2;
	grown = realloc(x->member, (size_t)cap * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	memset(grown + x->member_cap, 0, (size_t)(cap - x->member_cap) * sizeof(*grown));
	for (uint32_t i = x->member_cap; i < cap; i++)
		grown[i].priority = (uint32_t)gp_hash_mix(i + 1);
	x->member = grown;
	x->member_cap = cap;
	return 0;
}

int gp_index_put(struct gp_index *x, uint32_t n, const struct gp_index_entry *e)
{
	struct gp_index_member *m = &x->member[n];
	uint32_t old = m->bucket, to = bucket_get(x, &e->key);
	struct gp_bucket *b;

	if (to == UINT32_MAX)
		return -ENOMEM;
	if (old) {
		b = &x->bucket[old - 1];
		b->root = erase(x, b->root, n);
		b->members--;
		bucket_sum_up(x, b);
	}
	m->bucket = to + 1;
	m->order = e->order;
	m->rank = e->rank;
	m->cpu = e->cpu_free;
	m->mem = e->mem_free;
	m->dev_mem = e->dev_mem;
	m->share = e->share;
	b = &x->bucket[to];
	b->root = insert(x, b->root, n);
	b->members++;
	bucket_sum_up(x, b);
	if (old && old != to + 1 && x->bucket[old - 1].members == 0)
		bucket_drop(x, old - 1);
	return 0;
}

void gp_index_walk_begin(struct gp_index_walk *w, unsigned min_idle,
			 unsigned min_share)
{
	*w = (struct gp_index_walk){ .min_idle = min_idle, .min_share = min_share,
				     .idle = min_idle };
}

/* Groups are walked by idle level from min_idle up, and within a level by
 * the bits of its non-empty share levels (from min_share up at level 0). */
const struct gp_bucket *gp_index_walk_next(const struct gp_index *x,
					   struct gp_index_walk *w)
{
	for (; w->idle < GP_INDEX_IDLE_LEVELS; w->idle++, w->share = 0, w->i = 0) {
		uint32_t mask = (uint32_t)x->nonempty[w->idle] >> w->share << w->share;

		if (w->idle == 0)
			mask &= w->min_share < GP_INDEX_SHARE_LEVELS ? ~0u << w->min_share : 0;
		for (; mask; mask &= mask - 1, w->i = 0) {
			const struct gp_bucket_group *g;

			w->share = (unsigned)__builtin_ctz(mask);
			g = &x->group[w->idle][w->share];
			if (w->i < g->count)
				return &x->bucket[g->slot[w->i++]];
		}
	}
	return NULL;
}

static bool has(const struct gp_index_need *need, uint32_t cpu, uint32_t mem,
		uint32_t dev_mem, uint16_t share)
{
	return cpu >= need->cpu && mem >= need->mem && dev_mem >= need->dev_mem &&
	       share >= need->share;
}

static uint32_t first_in(const struct gp_index *x, uint32_t t,
			 const struct gp_index_need *need,
			 gp_index_accept_fn *accept, void *ctx)
{
	const struct gp_index_member *m;
	uint32_t found;

	if (t == GP_INDEX_NONE)
		return GP_INDEX_NONE;
	m = &x->member[t];
	if (!has(need, m->max_cpu, m->max_mem, m->max_dev_mem, m->max_share))
		return GP_INDEX_NONE;
	found = first_in(x, m->child[0], need, accept, ctx);
	if (found != GP_INDEX_NONE)
		return found;
	if (has(need, m->cpu, m->mem, m->dev_mem, m->share) && accept(ctx, t))
		return t;
	return first_in(x, m->child[1], need, accept, ctx);
}

uint32_t gp_bucket_scan(const struct gp_index *x, const struct gp_bucket *b,
			const struct gp_index_need *need,
			gp_index_accept_fn *accept, void *ctx)
{
	return first_in(x, b->root, need, accept, ctx);
}

uint32_t gp_bucket_at(const struct gp_index *x, const struct gp_bucket *b,
		      uint32_t i)
{
	uint32_t t = b->root;

	while (t != GP_INDEX_NONE) {
		const struct gp_index_member *m = &x->member[t];
		uint32_t left = m->child[0] == GP_INDEX_NONE ? 0 : x->member[m->child[0]].size;

		if (i == left)
			return t;
		if (i < left) {
			t = m->child[0];
		} else {
			i -= left + 1;
			t = m->child[1];
		}
	}
	return GP_INDEX_NONE;
}

size_t gp_index_bytes(const struct gp_index *x)
{
	size_t bytes = (size_t)x->member_cap * sizeof(*x->member) +
		       (size_t)x->table_cap * sizeof(*x->table) +
		       (size_t)x->slot_cap * sizeof(*x->bucket);

	for (unsigned i = 0; i < GP_INDEX_IDLE_LEVELS; i++)
		for (unsigned j = 0; j < GP_INDEX_SHARE_LEVELS; j++)
			bytes += x->group[i][j].cap * sizeof(uint32_t);
	return bytes;
}
