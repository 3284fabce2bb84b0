/* test-index.c — the placement index (src/core/index.c) against a plain
 * list: random moves of nodes between buckets, then every bucket's members,
 * order, best values and first-fit answers compared with brute force. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/rng.h"
#include "core/index.h"

#define NODES 600
#define KEYS 7                  /* few keys, so buckets fill and empty */

static struct gp_index_entry entry[NODES];
static bool in[NODES];

static void random_entry(struct gp_rng *rng, struct gp_index_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->key.idle = (uint8_t)gp_rng_below(rng, KEYS);
	e->key.share = (uint8_t)gp_rng_below(rng, 3);
	e->order = gp_rng_below(rng, 8);
	e->rank = gp_rng_below(rng, 8);         /* ties: by node number */
	e->cpu_free = (uint32_t)gp_rng_below(rng, 1000);
	e->mem_free = (uint32_t)gp_rng_below(rng, 1000);
	e->dev_mem = (uint32_t)gp_rng_below(rng, 1000);
	e->share = (uint16_t)gp_rng_below(rng, 1000);
}

static bool has(const struct gp_index_entry *e, const struct gp_index_need *need)
{
	return e->cpu_free >= need->cpu && e->mem_free >= need->mem &&
	       e->dev_mem >= need->dev_mem && e->share >= need->share;
}

static bool before(uint32_t a, uint32_t b)
{
	if (entry[a].order != entry[b].order)
		return entry[a].order < entry[b].order;
	return entry[a].rank != entry[b].rank ? entry[a].rank < entry[b].rank : a < b;
}

/* Accepts odd nodes only: the search must look past the even ones. */
static bool odd(void *ctx, uint32_t n)
{
	(void)ctx;
	return n % 2 == 1;
}

static bool count_all(void *ctx, uint32_t n)
{
	(void)n;
	++*(uint32_t *)ctx;
	return false;
}

/* The members of the bucket with key k, sorted, by brute force. */
static uint32_t members_of(const struct gp_bucket_key *k, uint32_t *out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < NODES; i++) {
		if (!in[i] || memcmp(&entry[i].key, k, sizeof(*k)) != 0)
			continue;
		uint32_t j = n++;
		for (; j > 0 && before(i, out[j - 1]); j--)
			out[j] = out[j - 1];
		out[j] = i;
	}
	return n;
}

static void check_bucket(const struct gp_index *x, const struct gp_bucket *b,
			 struct gp_rng *rng)
{
	static uint32_t sorted[NODES];
	uint32_t n = members_of(&b->key, sorted);
	struct gp_index_need most = { 0 }, got, need;
	uint32_t want = GP_INDEX_NONE;

	assert_int_equal(b->members, n);
	assert_true(n > 0);                     /* empty buckets are dropped */
	for (uint32_t i = 0; i < n; i++) {
		const struct gp_index_entry *e = &entry[sorted[i]];

		assert_int_equal(gp_bucket_at(x, b, i), sorted[i]);
		if (e->cpu_free > most.cpu) most.cpu = e->cpu_free;
		if (e->mem_free > most.mem) most.mem = e->mem_free;
		if (e->dev_mem > most.dev_mem) most.dev_mem = e->dev_mem;
		if (e->share > most.share) most.share = e->share;
	}
	got = b->most;
	assert_memory_equal(&got, &most, sizeof(got));
	need = (struct gp_index_need){ (uint32_t)gp_rng_below(rng, 1000),
				       (uint32_t)gp_rng_below(rng, 1000),
				       (uint32_t)gp_rng_below(rng, 1000),
				       (uint16_t)gp_rng_below(rng, 1000) };
	if (gp_rng_below(rng, 2))
		need.mem = need.dev_mem = need.share = 0;   /* often some fit */
	for (uint32_t i = 0; i < n && want == GP_INDEX_NONE; i++)
		if (has(&entry[sorted[i]], &need) && odd(NULL, sorted[i]))
			want = sorted[i];
	assert_int_equal(gp_bucket_scan(x, b, &need, odd, NULL), want);
	/* A scan asks about every member that has what is needed, once. */
	uint32_t asked = 0, having = 0;
	for (uint32_t i = 0; i < n; i++)
		having += has(&entry[sorted[i]], &need);
	assert_int_equal(gp_bucket_scan(x, b, &need, count_all, &asked), GP_INDEX_NONE);
	assert_int_equal(asked, having);
}

/* A walk returns each bucket it should once, and no other. */
static void check_walk(const struct gp_index *x, unsigned min_idle, unsigned min_share)
{
	unsigned want = 0, got = 0;
	struct gp_index_walk w;
	const struct gp_bucket *b;

	for (uint8_t idle = 0; idle < KEYS; idle++)
		for (uint8_t share = 0; share < 3; share++) {
			struct gp_bucket_key k = { .idle = idle, .share = share };
			static uint32_t sorted[NODES];

			if (idle >= min_idle && (idle > 0 || share >= min_share) &&
			    members_of(&k, sorted) > 0)
				want++;
		}
	gp_index_walk_begin(&w, min_idle, min_share);
	while ((b = gp_index_walk_next(x, &w))) {
		assert_true(b->key.idle >= min_idle);
		assert_true(b->key.idle > 0 || b->key.share >= min_share);
		got++;
	}
	assert_int_equal(got, want);
}

static void index_matches_brute_force(void **state)
{
	struct gp_index x = { 0 };
	struct gp_rng rng;
	(void)state;

	gp_rng_init(&rng, 11);
	memset(in, 0, sizeof(in));
	assert_int_equal(gp_index_reserve(&x, NODES), 0);
	for (int round = 0; round < 40; round++) {
		for (int op = 0; op < 500; op++) {
			uint32_t n = (uint32_t)gp_rng_below(&rng, NODES);

			random_entry(&rng, &entry[n]);
			assert_int_equal(gp_index_put(&x, n, &entry[n]), 0);
			in[n] = true;
		}
		size_t buckets = 0;
		struct gp_index_walk w;
		const struct gp_bucket *b;

		gp_index_walk_begin(&w, 0, 0);
		while ((b = gp_index_walk_next(&x, &w))) {
			check_bucket(&x, b, &rng);
			buckets++;
		}
		assert_int_equal(buckets, x.buckets);
		check_walk(&x, (unsigned)gp_rng_below(&rng, KEYS), (unsigned)gp_rng_below(&rng, 3));
	}
	gp_index_release(&x);
}

static const struct gp_bucket *first_bucket(const struct gp_index *x)
{
	struct gp_index_walk w;

	gp_index_walk_begin(&w, 0, 0);
	return gp_index_walk_next(x, &w);
}

/* A bucket whose last member leaves is gone; an unchanged key stays put. */
static void buckets_come_and_go(void **state)
{
	struct gp_index x = { 0 };
	struct gp_index_entry e = { .order = 1, .cpu_free = 10 };
	(void)state;

	assert_int_equal(gp_index_reserve(&x, 4), 0);
	assert_int_equal(gp_index_put(&x, 0, &e), 0);
	assert_int_equal(gp_index_put(&x, 1, &e), 0);
	assert_int_equal(x.buckets, 1);
	e.key.idle = 1;
	assert_int_equal(gp_index_put(&x, 0, &e), 0);
	assert_int_equal(x.buckets, 2);
	assert_int_equal(gp_index_put(&x, 1, &e), 0);
	assert_int_equal(x.buckets, 1);
	assert_int_equal(first_bucket(&x)->members, 2);
	e.cpu_free = 99;                        /* same key: a move in place */
	assert_int_equal(gp_index_put(&x, 1, &e), 0);
	assert_int_equal(x.buckets, 1);
	assert_int_equal(first_bucket(&x)->most.cpu, 99);
	assert_true(gp_index_bytes(&x) > 0);
	gp_index_release(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(index_matches_brute_force),
		cmocka_unit_test(buckets_come_and_go),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
