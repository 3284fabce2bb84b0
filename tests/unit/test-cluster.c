/* test-cluster.c — the cluster and placement engine (src/core/cluster.c). */
#include "helpers.h"

#include "base/rng.h"

#include <errno.h>
#include <string.h>

struct fixture {
	struct gp_cluster *c;
	struct gp_policy *p;
	int a100, t4;
};

static int setup(void **state)
{
	static struct fixture f;

	assert_int_equal(gp_cluster_new(0, &f.c), 0);
	f.a100 = gp_cluster_model_id(f.c, "A100", true);
	f.t4 = gp_cluster_model_id(f.c, "T4", true);
	f.p = policy("binpack", NULL);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	f->c = gp_cluster_free(f->c);
	f->p = gp_policy_free(f->p);
	return 0;
}

static void names_are_interned(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(gp_cluster_model_id(f->c, "T4", false), f->t4);
	assert_int_equal(gp_cluster_model_id(f->c, "H100", false), -ENOENT);
	assert_string_equal(gp_cluster_model_name(f->c, f->a100), "A100");
	assert_null(gp_cluster_model_name(f->c, 40));
}

static void devices_keep_their_uuids(void **state)
{
	struct fixture *f = *state;
	struct gp_node_spec s = node_spec(8, 32, 2, f->a100);

	add_node(f->c, s);
	strcpy(s.device[1].uuid, "GPU-5a1c0de2-0000-4000-8000-000000000001");
	add_node(f->c, s);
	assert_string_equal(gp_cluster_device_uuid(f->c, 0, 1), "");
	assert_string_equal(gp_cluster_device_uuid(f->c, 1, 0), "");
	assert_string_equal(gp_cluster_device_uuid(f->c, 1, 1),
			    "GPU-5a1c0de2-0000-4000-8000-000000000001");
	assert_null(gp_cluster_device_uuid(f->c, 1, 2));
	assert_null(gp_cluster_device_uuid(f->c, 2, 0));
	/* Different UUIDs, same state: still one class. */
	assert_int_equal(gp_cluster_class_count(f->c), 1);
}

static void identical_nodes_share_a_class(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < 100; i++)
		add_node(f->c, node_spec(32, 128, 4, f->a100));
	assert_int_equal(gp_cluster_node_count(f->c), 100);
	assert_int_equal(gp_cluster_class_count(f->c), 1);
	place(f->c, f->p, share(2, 500), NULL);
	assert_int_equal(gp_cluster_class_count(f->c), 2);
}

static void release_undoes_commit(void **state)
{
	struct fixture *f = *state;
	struct gp_request r = share(4, 300);
	struct gp_placement where;
	struct gp_node_usage u;

	add_node(f->c, node_spec(32, 128, 4, f->a100));
	add_node(f->c, node_spec(32, 128, 4, f->a100));
	place(f->c, f->p, r, &where);
	assert_int_equal(gp_cluster_node_usage(f->c, where.node, &u), 0);
	assert_int_equal(u.cpu_free, 28000);
	assert_int_equal(u.compute_free[where.device[0]], 700);
	assert_int_equal(u.tasks[where.device[0]], 1);
	assert_int_equal(gp_cluster_release(f->c, &r, &where), 0);
	assert_int_equal(gp_cluster_node_usage(f->c, where.node, &u), 0);
	assert_int_equal(u.cpu_free, 32000);
	assert_int_equal(u.compute_free[where.device[0]], 1000);
	assert_int_equal(gp_cluster_class_count(f->c), 1);
	/* Releasing again finds nothing to give back. */
	assert_int_equal(gp_cluster_release(f->c, &r, &where), -EINVAL);
}

static void usage_names_physical_devices(void **state)
{
	struct fixture *f = *state;
	struct gp_node_usage u;
	uint32_t n = add_node(f->c, node_spec(32, 128, 4, f->a100));

	put(f->c, share(1, 250), n, 3);
	put(f->c, share(1, 600), n, 1);
	assert_int_equal(gp_cluster_node_usage(f->c, n, &u), 0);
	assert_int_equal(u.compute_free[0], 1000);
	assert_int_equal(u.compute_free[1], 400);
	assert_int_equal(u.compute_free[2], 1000);
	assert_int_equal(u.compute_free[3], 750);
	assert_int_equal(gp_cluster_node_usage(f->c, 9, &u), -ENOENT);
}

static void whole_devices_are_exclusive(void **state)
{
	struct fixture *f = *state;
	struct gp_decision d;
	struct gp_request tiny = share(1, 10);
	uint32_t n = add_node(f->c, node_spec(32, 128, 2, f->a100));

	put(f->c, share(1, 100), n, 0);
	put(f->c, whole(1, 1), n, 1);       /* device 1 was idle: taken whole */
	/* Device 0 is shared, device 1 held: a whole device fits nowhere, a
	 * tiny share only on device 0. */
	struct gp_request w = whole(1, 1);
	assert_int_equal(gp_place(f->c, f->p, &w, &d), 0);
	assert_false(d.placed);
	assert_int_equal(d.reason, GP_NOFIT_DEVICES);
	assert_int_equal(gp_place(f->c, f->p, &tiny, &d), 0);
	assert_true(d.placed);
	assert_int_equal(d.where.device[0], 0);
}

static void slice_cap_limits_tasks(void **state)
{
	struct fixture *f = *state;
	struct gp_node_spec s = node_spec(32, 128, 1, f->a100);
	struct gp_request r = share(1, 100);
	struct gp_decision d;

	s.device[0].max_tasks = 2;
	add_node(f->c, s);
	place(f->c, f->p, r, NULL);
	place(f->c, f->p, r, NULL);
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_false(d.placed);
}

static void memory_is_never_overcommitted(void **state)
{
	struct fixture *f = *state;
	struct gp_node_spec s = node_spec(32, 128, 1, f->a100);
	struct gp_request r = { .cpu_milli = 1000, .devices = 1,
				.dev_mem_mib = 6000, .dev_compute = 10 };
	struct gp_decision d;

	s.device[0].overcommit = 1500;
	add_node(f->c, s);                  /* 16384 MiB */
	place(f->c, f->p, r, NULL);
	place(f->c, f->p, r, NULL);
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_false(d.placed);             /* 18000 > 16384 */
}

static void compute_overcommit_is_honoured(void **state)
{
	struct fixture *f = *state;
	struct gp_node_spec s = node_spec(32, 128, 1, f->a100);
	struct gp_request r = share(1, 700);
	struct gp_decision d;
	uint32_t plain;

	s.device[0].overcommit = 1500;
	add_node(f->c, s);
	s.device[0].overcommit = 1000;
	plain = add_node(f->c, s);
	place(f->c, f->p, r, NULL);
	place(f->c, f->p, r, NULL);
	place(f->c, f->p, r, NULL);
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_false(d.placed);             /* 2 × 700 on 1.5, 1 × 700 on 1.0 */
	s.device[0].overcommit = 1600;
	assert_int_equal(gp_cluster_add_node(f->c, &s, NULL), -EINVAL);
	(void)plain;
}

static void models_and_labels_filter(void **state)
{
	struct fixture *f = *state;
	struct gp_node_spec s = node_spec(32, 128, 2, f->t4);
	int ib = gp_cluster_label_id(f->c, "ib=yes", true);
	struct gp_request r = share(1, 500);
	struct gp_decision d;

	s.labels = 1ull << ib;
	add_node(f->c, s);
	add_node(f->c, node_spec(32, 128, 2, f->a100));
	r.models = 1ull << f->a100;
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_int_equal(d.where.node, 1);
	r.models = 1ull << f->t4;
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_int_equal(d.where.node, 0);
	r.models = 0;
	r.labels_none = 1ull << ib;
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_int_equal(d.where.node, 1);
	r.labels_none = 0;
	r.labels_all = 1ull << ib;
	r.models = 1ull << f->a100;
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_false(d.placed);
}

static void reasons_name_the_constraint(void **state)
{
	struct fixture *f = *state;
	struct gp_request r = share(64, 500);
	struct gp_decision d;

	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_int_equal(d.reason, GP_NOFIT_EMPTY);
	add_node(f->c, node_spec(32, 128, 2, f->a100));
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_false(d.placed);
	assert_int_equal(d.reason, GP_NOFIT_CPU);
	assert_string_equal(gp_nofit_name(d.reason), "not enough free CPU");
	r = share(1, 500);
	r.mem_mib = 200 * 1024;
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_int_equal(d.reason, GP_NOFIT_MEMORY);
}

static void gang_prefers_tightest_nvlink_island(void **state)
{
	struct fixture *f = *state;
	struct gp_node_spec s = node_spec(64, 512, 6, f->a100);
	const uint8_t island[6] = { 2, 1, 2, 1, 2, 2 };
	struct gp_placement where;

	for (int i = 0; i < 6; i++)
		s.device[i].nvlink = island[i];
	add_node(f->c, s);
	place(f->c, f->p, whole(1, 2), &where);
	assert_int_equal(island[where.device[0]], 1);
	assert_int_equal(island[where.device[1]], 1);
	place(f->c, f->p, whole(1, 4), &where);
	for (int i = 0; i < 4; i++)
		assert_int_equal(island[where.device[i]], 2);
}

static void gang_is_one_model(void **state)
{
	struct fixture *f = *state;
	struct gp_node_spec s = node_spec(64, 512, 4, f->a100);
	struct gp_request two = whole(1, 2);
	struct gp_placement where;
	struct gp_decision d;

	s.device[1].model = (uint8_t)f->t4;     /* A100, T4, A100, T4 */
	s.device[3].model = (uint8_t)f->t4;
	add_node(f->c, s);
	two.models = (1ull << f->a100) | (1ull << f->t4);
	place(f->c, f->p, two, &where);
	assert_int_equal(s.device[where.device[0]].model, s.device[where.device[1]].model);
	gp_cluster_release(f->c, &two, &where);
	/* One card of each model left: two devices there would mix them. */
	put(f->c, whole(1, 1), 0, 0);
	put(f->c, whole(1, 1), 0, 1);
	assert_int_equal(gp_place(f->c, f->p, &two, &d), 0);
	assert_false(d.placed);
	/* ... unless it says they may mix (--mixed-models). */
	two.mixed_models = true;
	place(f->c, f->p, two, &where);
	assert_int_not_equal(s.device[where.device[0]].model, s.device[where.device[1]].model);
	gp_cluster_release(f->c, &two, &where);
	two.mixed_models = false;
	/* One device alone still goes. */
	two.devices = 1;
	place(f->c, f->p, two, NULL);
}

/* A share of memory as a percent is that percent of each device it is
 * tried on: 50 % is 8 GiB of a 16 GiB T4 and 40 GiB of an 80 GiB A100,
 * and a device whose free memory is short of its percent of it does not
 * take it. */
static void memory_percent_of_each_device(void **state)
{
	struct fixture *f = *state;
	struct gp_node_spec s = node_spec(64, 512, 2, f->t4);
	struct gp_request half = share(1, 100), most = share(1, 100);
	struct gp_node_usage u;
	uint32_t before;
	struct gp_decision d;

	s.device[1].model = (uint8_t)f->a100;
	s.device[1].mem_mib = 81920;
	add_node(f->c, s);
	half.dev_mem_pct = 50;
	half.dev_mem_mib = 40960; /* what it counts for unplaced: the A100's */
	put(f->c, half, 0, 0);
	put(f->c, half, 0, 1);
	assert_int_equal(gp_cluster_node_usage(f->c, 0, &u), 0);
	assert_int_equal(u.dev_mem_free[0], 8192);
	assert_int_equal(u.dev_mem_free[1], 40960);
	most.dev_mem_pct = 60;  /* 9.6 GiB of the T4, 48 GiB of the A100: neither */
	assert_int_equal(gp_place(f->c, f->p, &most, &d), 0);
	assert_false(d.placed);
	most.dev_mem_pct = 50;  /* each has half left */
	place(f->c, f->p, most, NULL);
	assert_int_equal(gp_cluster_node_usage(f->c, 0, &u), 0);
	before = u.dev_mem_free[1];
	assert_int_equal(gp_cluster_release(f->c, &half, &(struct gp_placement){
				    .devices = 1, .device = { 1 } }), 0);
	assert_int_equal(gp_cluster_node_usage(f->c, 0, &u), 0);
	assert_int_equal(u.dev_mem_free[1] - before, 40960); /* what it took there */
	most.dev_mem_pct = 101;
	assert_int_equal(gp_place(f->c, f->p, &most, &d), -EINVAL);
}

static void gang_keeps_to_one_numa_node(void **state)
{
	struct fixture *f = *state;
	struct gp_node_spec s = node_spec(64, 512, 8, f->a100);
	struct gp_placement where;

	for (int i = 0; i < 8; i++)
		s.device[i].numa = (uint8_t)(i % 2);    /* interleaved, no NVLink */
	add_node(f->c, s);
	put(f->c, whole(1, 1), 0, 0);               /* NUMA 0 keeps 3 idle */
	place(f->c, f->p, whole(1, 3), &where);
	for (int i = 0; i < 3; i++)
		assert_int_equal(where.device[i] % 2, 0);
	place(f->c, f->p, whole(1, 4), &where);
	for (int i = 0; i < 4; i++)
		assert_int_equal(where.device[i] % 2, 1);
}

static void bad_placements_are_refused(void **state)
{
	struct fixture *f = *state;
	struct gp_request r = share(1, 600), two = whole(1, 2);
	struct gp_placement where = { .node = 0, .devices = 1, .device = { 0 } };
	struct gp_decision d;

	add_node(f->c, node_spec(8, 32, 2, f->a100));
	where.node = 5;
	assert_int_equal(gp_cluster_commit(f->c, &r, &where), -EINVAL);
	where.node = 0;
	where.device[0] = 7;
	assert_int_equal(gp_cluster_commit(f->c, &r, &where), -EINVAL);
	where = (struct gp_placement){ .node = 0, .devices = 2, .device = { 1, 1 } };
	assert_int_equal(gp_cluster_commit(f->c, &two, &where), -EINVAL);
	put(f->c, r, 0, 0);
	where = (struct gp_placement){ .node = 0, .devices = 1, .device = { 0 } };
	assert_int_equal(gp_cluster_commit(f->c, &r, &where), -EBUSY);
	r.devices = GP_NODE_DEVICES_MAX + 1;
	assert_int_equal(gp_place(f->c, f->p, &r, &d), -EINVAL);
}

static void ties_go_to_the_first_node(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < 5; i++)
		add_node(f->c, node_spec(32, 128, 4, f->a100));
	/* Equal nodes: insertion order decides (tie seed 0). */
	assert_int_equal(place(f->c, f->p, whole(1, 1), NULL), 0);
	/* binpack then keeps filling the node it started. */
	assert_int_equal(place(f->c, f->p, whole(1, 1), NULL), 0);
}

static void random_tie_order_is_fixed_by_seed(void **state)
{
	struct gp_cluster *a, *b;
	struct gp_policy *p = policy("binpack", NULL);
	uint32_t first_a, first_b;
	(void)state;

	assert_int_equal(gp_cluster_new(99, &a), 0);
	assert_int_equal(gp_cluster_new(99, &b), 0);
	gp_cluster_model_id(a, "A100", true);
	gp_cluster_model_id(b, "A100", true);
	for (int i = 0; i < 50; i++) {
		add_node(a, node_spec(32, 128, 4, 0));
		add_node(b, node_spec(32, 128, 4, 0));
	}
	first_a = place(a, p, whole(1, 1), NULL);
	first_b = place(b, p, whole(1, 1), NULL);
	assert_int_equal(first_a, first_b);
	gp_cluster_free(a);
	gp_cluster_free(b);
	gp_policy_free(p);
}

/* More distinct requests than the score cache keeps ids for: the rest
 * are scored without the cache, and decided all the same. */
static void many_request_shapes_still_place(void **state)
{
	struct fixture *f = *state;
	struct gp_decision d;

	add_node(f->c, node_spec(64, 128, 2, f->a100));
	put(f->c, share(1, 500), 0, 0);
	for (uint32_t i = 0; i < 20000; i++) {
		struct gp_request r = share(0, 1 + i % 500);

		r.cpu_milli = i;
		assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
		assert_true(d.placed);
		assert_int_equal(d.where.device[0], 0);       /* binpack */
	}
}


/* A node of random size and devices, for the randomized tests. */
static struct gp_node_spec random_spec(struct gp_rng *rng, int models)
{
	struct gp_node_spec s = node_spec(8 + (uint32_t)gp_rng_below(rng, 120),
					  16 + (uint32_t)gp_rng_below(rng, 500),
					  1 + (int)gp_rng_below(rng, 8),
					  (int)gp_rng_below(rng, (uint64_t)models));

	for (int i = 0; i < s.devices; i++) {
		s.device[i].mem_mib = 8192 << gp_rng_below(rng, 3);
		s.device[i].max_tasks = (uint16_t)gp_rng_below(rng, 4);
	}
	return s;
}

static struct gp_request random_request(struct gp_rng *rng, int models)
{
	struct gp_request r = { .cpu_milli = (uint32_t)gp_rng_below(rng, 40000),
				.mem_mib = (uint32_t)gp_rng_below(rng, 100000) };

	switch (gp_rng_below(rng, 4)) {
	case 0:
		break;                          /* CPU only */
	case 1:
		r.devices = (uint8_t)(1 + gp_rng_below(rng, 4));
		r.whole = true;
		break;
	default:
		r.devices = (uint8_t)(1 + gp_rng_below(rng, 2));
		r.dev_compute = (uint32_t)(1 + gp_rng_below(rng, 1000));
		r.dev_mem_mib = (uint32_t)gp_rng_below(rng, 20000);
	}
	if (gp_rng_below(rng, 4) == 0)
		r.models = 1ull << gp_rng_below(rng, (uint64_t)models);
	return r;
}

/* The bounded search (one candidate per index bucket) places a request
 * exactly when the exhaustive one does, on a node that takes it, through
 * a random mix of placements and releases on a random cluster. */
static void bounded_search_places_whenever_anything_fits(void **state)
{
	struct fixture *f = *state;
	struct gp_placement held[400];
	struct gp_request what[400];
	struct gp_rng rng;
	int live = 0, placed = 0;

	gp_rng_init(&rng, 5);
	for (int i = 0; i < 12; i++)            /* few nodes: fits are scarce */
		add_node(f->c, random_spec(&rng, 2));
	for (int step = 0; step < 20000; step++) {
		struct gp_request r = random_request(&rng, 2);
		struct gp_decision bounded, exact;

		gp_cluster_set_exhaustive(f->c, true);
		assert_int_equal(gp_place(f->c, f->p, &r, &exact), 0);
		gp_cluster_set_exhaustive(f->c, false);
		assert_int_equal(gp_place(f->c, f->p, &r, &bounded), 0);
		assert_int_equal(bounded.placed, exact.placed);
		assert_true(bounded.candidates <= exact.candidates);
		if (bounded.placed && live < 400) {
			assert_int_equal(gp_cluster_commit(f->c, &r, &bounded.where), 0);
			what[live] = r;
			held[live++] = bounded.where;
			placed++;
		}
		if (live > 0 && (live == 400 || gp_rng_below(&rng, 3) == 0)) {
			int i = (int)gp_rng_below(&rng, (uint64_t)live);

			assert_int_equal(gp_cluster_release(f->c, &what[i], &held[i]), 0);
			what[i] = what[--live];
			held[i] = held[live];
		}
	}
	assert_true(placed > 2000);
}

/* Node by node (gp_place_on, the extender's question) agrees with the
 * exhaustive search: the node it chooses has the best score of those
 * that take the request, a node that takes it is placed on itself, and
 * nothing fits node by node exactly when nothing fits at all. */
static void one_node_at_a_time_agrees_with_the_search(void **state)
{
	struct fixture *f = *state;
	struct gp_rng rng;

	gp_rng_init(&rng, 11);
	for (int i = 0; i < 12; i++)
		add_node(f->c, random_spec(&rng, 2));
	gp_cluster_set_exhaustive(f->c, true);
	for (int step = 0; step < 5000; step++) {
		struct gp_request r = random_request(&rng, 2);
		struct gp_decision exact, one;
		int64_t best = INT64_MIN;
		bool any = false;

		assert_int_equal(gp_place(f->c, f->p, &r, &exact), 0);
		for (uint32_t n = 0; n < gp_cluster_node_count(f->c); n++) {
			assert_int_equal(gp_place_on(f->c, f->p, &r, n, &one), 0);
			assert_int_equal(one.placed, one.reason == GP_NOFIT_NONE);
			if (!one.placed)
				continue;
			assert_int_equal(one.where.node, n);
			any = true;
			best = one.score > best ? one.score : best;
		}
		assert_int_equal(any, exact.placed);
		if (exact.placed) {
			assert_int_equal(exact.score, best);
			if (step % 3 == 0)
				assert_int_equal(gp_cluster_commit(f->c, &r, &exact.where), 0);
		}
	}
	assert_int_equal(gp_place_on(f->c, f->p, &(struct gp_request){ 0 }, 99, &(struct gp_decision){ 0 }),
			 -EINVAL);
}

/* A thousand identical nodes are one bucket: a decision scores its first
 * two nodes in tie order. */
static void a_decision_scores_two_nodes_per_bucket(void **state)
{
	struct fixture *f = *state;
	struct gp_request r = share(1, 500);
	struct gp_decision d;

	for (int i = 0; i < 1000; i++)
		add_node(f->c, node_spec(32, 128, 4, f->a100));
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_int_equal(d.candidates, 2);
	assert_int_equal(d.where.node, 0);
	gp_cluster_set_exhaustive(f->c, true);
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);
	assert_int_equal(d.candidates, 1000);
	assert_int_equal(d.where.node, 0);
}

/* What the bound costs: three nodes in one bucket (no idle device, the
 * largest share in the same tenth, CPU and memory on the same level).
 * gpuclustering would take the fullest, the third (23 points against 21),
 * but it orders a bucket by tie order alone, so the bounded search sees
 * only the first two; the exhaustive one sees all three. binpack orders
 * each bucket fullest first: the third is its first candidate. */
static void a_bucket_offers_its_first_nodes(void **state)
{
	struct fixture *f = *state;
	struct gp_policy *clustering = policy("gpuclustering", NULL);
	struct gp_request r = share(1, 100);
	struct gp_decision d;

	for (uint32_t n = 0; n < 2; n++) {
		add_node(f->c, node_spec(32, 128, 2, f->a100));
		put(f->c, share(1, 510), n, 0);         /* 490 left: tenth 4 */
		put(f->c, share(1, 510), n, 1);
	}
	add_node(f->c, node_spec(32, 128, 2, f->a100));
	put(f->c, share(1, 600), 2, 0);                 /* 400 left: tenth 4 */
	put(f->c, share(1, 900), 2, 1);
	assert_int_equal(gp_place(f->c, clustering, &r, &d), 0);
	assert_int_equal(d.candidates, 2);
	assert_int_equal(d.where.node, 0);
	assert_int_equal(gp_place(f->c, f->p, &r, &d), 0);     /* binpack */
	assert_int_equal(d.candidates, 2);
	assert_int_equal(d.where.node, 2);
	gp_cluster_set_exhaustive(f->c, true);
	assert_int_equal(gp_place(f->c, clustering, &r, &d), 0);
	assert_int_equal(d.candidates, 3);
	assert_int_equal(d.where.node, 2);
	gp_policy_free(clustering);
}

/* The random policy finds the one node of many that fits (its draws miss,
 * then it counts), and spreads over the nodes that fit. */
static void random_policy_draws_among_nodes_that_fit(void **state)
{
	struct fixture *f = *state;
	struct gp_policy *p = policy("random", NULL);
	struct gp_request r = share(1, 900);
	unsigned hits[3] = { 0 };
	struct gp_decision d;

	for (int i = 0; i < 300; i++)
		put(f->c, share(1, 200), add_node(f->c, node_spec(32, 128, 1, f->a100)), 0);
	for (uint32_t n = 0; n < 3; n++) {      /* nodes 0, 100, 200 free again */
		struct gp_placement where = { .node = 100 * n, .devices = 1 };
		struct gp_request taken = share(1, 200);

		assert_int_equal(gp_cluster_release(f->c, &taken, &where), 0);
	}
	for (int i = 0; i < 3000; i++) {
		assert_int_equal(gp_place(f->c, p, &r, &d), 0);
		assert_true(d.placed);
		assert_int_equal(d.where.node % 100, 0);
		hits[d.where.node / 100]++;
	}
	for (int i = 0; i < 3; i++)
		assert_true(hits[i] > 800 && hits[i] < 1200);
	gp_policy_free(p);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(names_are_interned),
		TEST(devices_keep_their_uuids),
		TEST(identical_nodes_share_a_class),
		TEST(release_undoes_commit),
		TEST(usage_names_physical_devices),
		TEST(whole_devices_are_exclusive),
		TEST(slice_cap_limits_tasks),
		TEST(memory_is_never_overcommitted),
		TEST(compute_overcommit_is_honoured),
		TEST(models_and_labels_filter),
		TEST(reasons_name_the_constraint),
		TEST(gang_prefers_tightest_nvlink_island),
		TEST(gang_is_one_model),
		TEST(gang_keeps_to_one_numa_node),
		TEST(memory_percent_of_each_device),
		TEST(bad_placements_are_refused),
		TEST(ties_go_to_the_first_node),
		TEST(many_request_shapes_still_place),
		TEST(bounded_search_places_whenever_anything_fits),
		TEST(one_node_at_a_time_agrees_with_the_search),
		TEST(a_decision_scores_two_nodes_per_bucket),
		TEST(a_bucket_offers_its_first_nodes),
		TEST(random_policy_draws_among_nodes_that_fit),
		cmocka_unit_test(random_tie_order_is_fixed_by_seed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
