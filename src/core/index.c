/* index.c — the placement index (index.h): buckets in a hash table, each
 * bucket's members in a treap by order.
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
	struct gp_bucket *bucket;       /* NULL when the node is not in */
	uint64_t order, rank;
	uint32_t left, right;
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
		uint32_t c = side ? m->right : m->left;

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

static uint32_t rotate_right(struct gp_index *x, uint32_t t)
{
	uint32_t l = x->member[t].left;

	x->member[t].left = x->member[l].right;
	update(x, t);
	x->member[l].right = t;
	update(x, l);
	return l;
}

static uint32_t rotate_left(struct gp_index *x, uint32_t t)
{
	uint32_t r = x->member[t].right;

	x->member[t].right = x->member[r].left;
	update(x, t);
	x->member[r].left = t;
	update(x, r);
	return r;
}

/* Inserts n into the treap rooted at t; returns the new root. */
static uint32_t insert(struct gp_index *x, uint32_t t, uint32_t n)
{
	struct gp_index_member *m;

	if (t == GP_INDEX_NONE) {
		x->member[n].left = x->member[n].right = GP_INDEX_NONE;
		update(x, n);
		return n;
	}
	m = &x->member[t];
	if (before(x, n, t)) {
		m->left = insert(x, m->left, n);
		if (x->member[m->left].priority > m->priority)
			return rotate_right(x, t);
	} else {
		m->right = insert(x, m->right, n);
		if (x->member[m->right].priority > m->priority)
			return rotate_left(x, t);
	}
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
		x->member[a].right = merge(x, x->member[a].right, b);
		update(x, a);
		return a;
	}
	x->member[b].left = merge(x, a, x->member[b].left);
	update(x, b);
	return b;
}

/* Removes n (a member) from the treap rooted at t; returns the new root. */
static uint32_t erase(struct gp_index *x, uint32_t t, uint32_t n)
{
	struct gp_index_member *m = &x->member[t];

	if (t == n)
		return merge(x, m->left, m->right);
	if (before(x, n, t))
		m->left = erase(x, m->left, n);
	else
		m->right = erase(x, m->right, n);
	update(x, t);
	return t;
}

/* ---- buckets --------------------------------------------------------- */

static int table_grow(struct gp_index *x)
{
	size_t cap = x->table_cap ? 2 * x->table_cap : 64;
	struct gp_bucket **table = calloc(cap, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (struct gp_bucket *b = x->first; b; b = b->next) {
		b->hash_next = table[b->hash & (cap - 1)];
		table[b->hash & (cap - 1)] = b;
	}
	free(x->table);
	x->table = table;
	x->table_cap = cap;
	return 0;
}

/* The bucket for key, made (empty) when there is none; NULL: no memory. */
static struct gp_bucket *bucket_get(struct gp_index *x,
				    const struct gp_bucket_key *key)
{
	uint64_t hash = gp_hash_bytes(key, sizeof(*key));
	struct gp_bucket *b;

	if (x->buckets >= x->table_cap && table_grow(x) < 0)
		return NULL;
	for (b = x->table[hash & (x->table_cap - 1)]; b; b = b->hash_next)
		if (b->hash == hash && memcmp(&b->key, key, sizeof(*key)) == 0)
			return b;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->key = *key;
	b->hash = hash;
	b->root = GP_INDEX_NONE;
	b->hash_next = x->table[hash & (x->table_cap - 1)];
	x->table[hash & (x->table_cap - 1)] = b;
	b->next = x->first;
	if (b->next)
		b->next->prev = b;
	x->first = b;
	x->buckets++;
	return b;
}

static void bucket_drop(struct gp_index *x, struct gp_bucket *b)
{
	struct gp_bucket **link = &x->table[b->hash & (x->table_cap - 1)];

	while (*link != b)
		link = &(*link)->hash_next;
	*link = b->hash_next;
	if (b->prev)
		b->prev->next = b->next;
	else
		x->first = b->next;
	if (b->next)
		b->next->prev = b->prev;
	x->buckets--;
	free(b);
}

/* ---- the interface ---------------------------------------------------- */

void gp_index_release(struct gp_index *x)
{
	for (struct gp_bucket *b = x->first, *next; b; b = next) {
		next = b->next;
		free(b);
	}
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
	struct gp_bucket *old = m->bucket, *b = bucket_get(x, &e->key);

	if (!b)
		return -ENOMEM;
	if (old) {
		old->root = erase(x, old->root, n);
		old->members--;
	}
	m->bucket = b;
	m->order = e->order;
	m->rank = e->rank;
	m->cpu = e->cpu_free;
	m->mem = e->mem_free;
	m->dev_mem = e->dev_mem;
	m->share = e->share;
	b->root = insert(x, b->root, n);
	b->members++;
	if (old && old != b && old->members == 0)
		bucket_drop(x, old);
	return 0;
}

void gp_bucket_most(const struct gp_index *x, const struct gp_bucket *b,
		    struct gp_index_need *ret_most)
{
	const struct gp_index_member *r = &x->member[b->root];

	*ret_most = (struct gp_index_need){ r->max_cpu, r->max_mem, r->max_dev_mem,
					    r->max_share };
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
	found = first_in(x, m->left, need, accept, ctx);
	if (found != GP_INDEX_NONE)
		return found;
	if (has(need, m->cpu, m->mem, m->dev_mem, m->share) && accept(ctx, t))
		return t;
	return first_in(x, m->right, need, accept, ctx);
}

uint32_t gp_bucket_first(const struct gp_index *x, const struct gp_bucket *b,
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
		uint32_t left = m->left == GP_INDEX_NONE ? 0 : x->member[m->left].size;

		if (i == left)
			return t;
		if (i < left) {
			t = m->left;
		} else {
			i -= left + 1;
			t = m->right;
		}
	}
	return GP_INDEX_NONE;
}

size_t gp_index_bytes(const struct gp_index *x)
{
	return (size_t)x->member_cap * sizeof(*x->member) +
	       x->table_cap * sizeof(*x->table) + x->buckets * sizeof(struct gp_bucket);
}
