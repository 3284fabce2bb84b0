/* test-partition.c — hardware partitions as discrete shapes
 * (src/core/partition.c) and their placement by the engine
 * (src/core/state.c, cluster.c): the profile a share gets, where it may
 * start, least fragmentation, and commit and release at the start the
 * decision chose. */
#include "helpers.h"

#include "core/partition.h"

#include <string.h>

static unsigned a100_mig(void)
{
	unsigned id = gp_part_set_of_model("a100-mig");

	assert_true(id > 0);
	return id;
}

static int index_of(unsigned set, const char *name)
{
	const struct gp_part_set *s = gp_part_set(set);

	for (int i = 0; i < s->profiles; i++)
		if (strcmp(s->profile[i].name, name) == 0)
			return i;
	fail_msg("no profile %s", name);
	return -1;
}

static void a_share_gets_the_smallest_profile_that_holds_it(void **state)
{
	unsigned set = a100_mig();

	(void)state;
	assert_int_equal(gp_part_profile_for(set, 8000, 100), index_of(set, "1g.10gb"));
	assert_int_equal(gp_part_profile_for(set, 10241, 100), index_of(set, "1g.20gb"));
	assert_int_equal(gp_part_profile_for(set, 10240, 200), index_of(set, "2g.20gb"));
	assert_int_equal(gp_part_profile_for(set, 30000, 500), index_of(set, "4g.40gb"));
	assert_int_equal(gp_part_profile_for(set, 90000, 100), -1);
	assert_int_equal(gp_part_set_of_model("A100"), 0);
}

static void placement_rules_hold(void **state)
{
	unsigned set = a100_mig();
	const struct gp_part_set *s = gp_part_set(set);
	const struct gp_part_profile *g4 = &s->profile[index_of(set, "4g.40gb")];
	const struct gp_part_profile *g3 = &s->profile[index_of(set, "3g.40gb")];
	const struct gp_part_profile *g1 = &s->profile[index_of(set, "1g.10gb")];
	uint8_t used = gp_part_units(g4, 0);

	(void)state;
	assert_int_equal(gp_part_start(set, index_of(set, "3g.40gb"), used), 4);
	used |= gp_part_units(g3, 4);
	assert_int_equal(gp_part_start(set, index_of(set, "4g.40gb"), used), -1);
	assert_int_equal(gp_part_start(set, index_of(set, "1g.10gb"), used), -1);
	assert_false(gp_part_free_at(g1, 7, 0));        /* 1g.10gb never starts at 7 */
	assert_false(gp_part_free_at(g4, 4, 0));        /* 4g.40gb only at 0 */
}

/* On an empty card a 1g.10gb goes where it spoils the least: a 4g.40gb
 * (start 0 only) must still fit after it. */
static void the_start_chosen_fragments_least(void **state)
{
	unsigned set = a100_mig();
	int g1 = index_of(set, "1g.10gb");
	int start = gp_part_start(set, g1, 0);
	uint8_t used = gp_part_units(&gp_part_set(set)->profile[g1], (unsigned)start);

	(void)state;
	assert_true(start >= 4);
	assert_true(gp_part_start(set, index_of(set, "4g.40gb"), used) == 0);
}

static uint32_t mig_node(struct gp_cluster *c, int model)
{
	struct gp_node_spec s = node_spec(64, 512, 1, model);

	s.device[0].mem_mib = 81920;
	s.device[0].partitions = (uint8_t)a100_mig();
	return add_node(c, s);
}

static struct gp_request mig_share(uint32_t mem_mib, uint32_t milli)
{
	struct gp_request r = share(1, milli);

	r.dev_mem_mib = mem_mib;
	return r;
}

static void the_engine_places_profiles_and_releases_them_where_they_were(void **state)
{
	struct gp_cluster *c;
	struct gp_policy *p = policy("binpack", NULL);
	struct gp_placement g4, g3, g1;
	struct gp_decision d;
	struct gp_request r4 = mig_share(40960, 500), r3 = mig_share(40960, 400),
			  r1 = mig_share(10240, 100);

	(void)state;
	assert_int_equal(gp_cluster_new(0, &c), 0);
	mig_node(c, gp_cluster_model_id(c, "A100-MIG", true));
	place(c, p, r4, &g4);
	assert_int_equal(g4.part_start[0], 0 + 1);
	place(c, p, r3, &g3);
	assert_int_equal(g3.part_start[0], 4 + 1);
	/* The card has 2/7 of its compute and no memory slice left: no 1g. */
	assert_int_equal(gp_place(c, p, &r1, &d), 0);
	assert_false(d.placed);
	assert_int_equal(gp_cluster_release(c, &r3, &g3), 0);
	place(c, p, r1, &g1);
	assert_true(g1.part_start[0] >= 4 + 1);
	/* Released where it was: the 4g at 0 goes, a 4g fits again at 0. */
	assert_int_equal(gp_cluster_release(c, &r4, &g4), 0);
	place(c, p, r4, &g4);
	assert_int_equal(g4.part_start[0], 0 + 1);
	gp_policy_free(p);
	gp_cluster_free(c);
}

/* A card is known by its profiles' names: all of a set's, in any order,
 * with others beside them ("+me" variants); a card lacking one is none. */
static void a_cards_profiles_name_its_set(void **state)
{
	const char *a100[] = { "7g.80gb", "1g.10gb", "1g.10gb+me", "2g.20gb", "3g.40gb",
			       "4g.40gb", "1g.20gb" };
	const char *a100_40g[] = { "1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb",
				   "7g.40gb" };
	const char *h200[] = { "1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb" };

	(void)state;
	assert_int_equal(gp_part_set_of_profiles(a100, 7), a100_mig());
	assert_int_equal(gp_part_set_of_profiles(a100_40g, 6), gp_part_set_of_model("A100-40G-MIG"));
	assert_int_equal(gp_part_set_of_profiles(a100, 6), 0);         /* no 1g.20gb */
	assert_int_equal(gp_part_set_of_profiles(h200, 6), 0);
}

/* Slices held by partitions of no task are taken from the start: a
 * 1g.10gb made by hand at slice 6 leaves no room for a whole card nor a
 * 3g.40gb at 4, and the next 1g goes elsewhere. */
static void held_slices_are_taken(void **state)
{
	struct gp_cluster *c;
	struct gp_policy *p = policy("binpack", NULL);
	struct gp_node_spec s = node_spec(64, 512, 1, 0);
	struct gp_request whole = share(1, 1000), r1 = mig_share(10240, 100),
			  r3 = mig_share(40960, 400);
	struct gp_placement g;
	struct gp_decision d;

	(void)state;
	whole.whole = true;
	assert_int_equal(gp_cluster_new(0, &c), 0);
	s.device[0].model = (uint8_t)gp_cluster_model_id(c, "A100-MIG", true);
	s.device[0].mem_mib = 81920;
	s.device[0].partitions = (uint8_t)a100_mig();
	s.device[0].part_held = 1u << 6;
	add_node(c, s);
	assert_int_equal(gp_place(c, p, &whole, &d), 0);
	assert_false(d.placed);
	place(c, p, r3, &g);
	assert_int_equal(g.part_start[0], 0 + 1);
	place(c, p, r1, &g);
	assert_true(g.part_start[0] != 6 + 1);
	gp_policy_free(p);
	gp_cluster_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_share_gets_the_smallest_profile_that_holds_it),
		cmocka_unit_test(placement_rules_hold),
		cmocka_unit_test(the_start_chosen_fragments_least),
		cmocka_unit_test(the_engine_places_profiles_and_releases_them_where_they_were),
		cmocka_unit_test(a_cards_profiles_name_its_set),
		cmocka_unit_test(held_slices_are_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
