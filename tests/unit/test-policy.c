/* test-policy.c — each placement policy on small hand-computed cases
 * (src/core/policy.c, src/core/fgd.c). Node 0 is always the one that would
 * win a tie, so a test that expects another node shows the policy's own
 * preference. */
#include "helpers.h"

#include <errno.h>
#include <string.h>

#include "core/policy-impl.h"

static struct gp_cluster *cluster(void)
{
	struct gp_cluster *c;

	assert_int_equal(gp_cluster_new(0, &c), 0);
	assert_int_equal(gp_cluster_model_id(c, "A100", true), 0);
	return c;
}

/* Where the policy would put r, without committing. */
static struct gp_decision decide(struct gp_cluster *c, struct gp_policy *p,
				 struct gp_request r)
{
	struct gp_decision d;

	assert_int_equal(gp_place(c, p, &r, &d), 0);
	assert_true(d.placed);
	return d;
}

static void unknown_names_are_refused(void **state)
{
	struct gp_policy_config cfg = { .devices = "diagonal" };
	struct gp_policy *p = NULL;
	(void)state;

	assert_int_equal(gp_policy_new("magic", NULL, &p), -ENOENT);
	assert_int_equal(gp_policy_new("binpack", &cfg, &p), -ENOENT);
	assert_null(p);
	assert_true(gp_device_choice_exists("spread"));
	assert_false(gp_device_choice_exists("diagonal"));
	for (size_t i = 0; gp_policy_name_at(i); i++) {
		p = policy(gp_policy_name_at(i), NULL);
		assert_string_equal(gp_policy_name(p), gp_policy_name_at(i));
		p = gp_policy_free(p);
	}
}

/* The server feeds a target workload to the policies that take one. */
static void only_fragmentation_policies_take_a_target(void **state)
{
	(void)state;
	for (size_t i = 0; gp_policy_name_at(i); i++) {
		const char *name = gp_policy_name_at(i);
		bool fgd_family = !strcmp(name, "fgd") || !strcmp(name, "default");

		assert_int_equal(gp_policy_takes_target(name), fgd_family);
	}
	assert_false(gp_policy_takes_target("magic"));
}

static void random_picks_feasible_nodes_evenly(void **state)
{
	struct gp_cluster *c = cluster();
	struct gp_policy *p = policy("random", NULL);
	unsigned count[4] = { 0 };
	(void)state;

	add_node(c, node_spec(2, 64, 4, 0));       /* too little CPU */
	for (int i = 0; i < 3; i++)
		add_node(c, node_spec(32, 64, 4, 0));
	for (int i = 0; i < 3000; i++)
		count[decide(c, p, share(4, 500)).where.node]++;
	assert_int_equal(count[0], 0);
	for (int i = 1; i < 4; i++)
		assert_in_range(count[i], 850, 1150);
	gp_policy_free(p);
	gp_cluster_free(c);
}

/* d = cpu_free/128 · cpu/128 + gpu_left/8000 · gpu/8000, smaller wins:
 * node 0 (64 cores, 4 GPUs): d = .5 · .0625 + .5 · .125 → score 95;
 * node 1 (16 cores, 1 GPU):  d = .125 · .0625 + .125 · .125 → score 98. */
static void dotprod_prefers_smallest_dot_product(void **state)
{
	struct gp_cluster *c = cluster();
	struct gp_policy *p = policy("dotprod", NULL);
	struct gp_decision d;
	(void)state;

	add_node(c, node_spec(64, 256, 4, 0));
	add_node(c, node_spec(16, 256, 1, 0));
	d = decide(c, p, whole(8, 1));
	assert_int_equal(d.where.node, 1);
	assert_int_equal(d.score, 98);
	gp_policy_free(p);
	gp_cluster_free(c);
}

/* Node 0 runs a share (left 7700: base 0, same kind +75 for a share),
 * node 1 runs a whole GPU (left 1000: base 21, +75 for a whole GPU),
 * node 2 is empty (left 4000: base 12, +25). */
static void gpuclustering_keeps_kinds_together(void **state)
{
	struct gp_cluster *c = cluster();
	struct gp_policy *p = policy("gpuclustering", NULL);
	struct gp_decision d;
	(void)state;

	add_node(c, node_spec(32, 256, 8, 0));
	add_node(c, node_spec(32, 256, 2, 0));
	add_node(c, node_spec(32, 256, 4, 0));
	put(c, share(1, 300), 0, 0);
	put(c, whole(1, 1), 1, 0);
	d = decide(c, p, share(1, 200));
	assert_int_equal(d.where.node, 0);
	assert_int_equal(d.score, 75);
	d = decide(c, p, whole(1, 1));
	assert_int_equal(d.where.node, 1);
	assert_int_equal(d.score, 96);
	gp_policy_free(p);
	gp_cluster_free(c);
}

/* Node 0 all idle (score max(33 − 4, 4) = 29), node 1 has an idle device
 * beside a held one (50 − 1 = 49), node 2 a half-used device
 * (100 − 50 / 10 = 95). */
static void gpupacking_prefers_partly_used_devices(void **state)
{
	struct gp_cluster *c = cluster();
	struct gp_policy *p = policy("gpupacking", NULL);
	struct gp_decision d;
	(void)state;

	add_node(c, node_spec(32, 256, 4, 0));
	add_node(c, node_spec(32, 256, 2, 0));
	add_node(c, node_spec(32, 256, 2, 0));
	put(c, whole(1, 1), 1, 0);
	put(c, share(1, 500), 2, 1);
	d = decide(c, p, share(1, 300));
	assert_int_equal(d.where.node, 2);
	assert_int_equal(d.where.device[0], 1);
	assert_int_equal(d.score, 95);
	gp_policy_free(p);
	gp_cluster_free(c);
}

/* 1 − (.5 · cpu_left/128000 + .5 · gpu_left/8000):
 * node 0: 1 − (.5 · 56/128 + .5 · 3/8) → 59; node 1: 1 − (.5 · 24/128 +
 * .5 · 1/8) → 84. Inside the node, the device with least room. */
static void bestfit_leaves_least(void **state)
{
	struct gp_cluster *c = cluster();
	struct gp_policy *p = policy("bestfit", NULL);
	struct gp_decision d;
	(void)state;

	add_node(c, node_spec(64, 256, 4, 0));
	add_node(c, node_spec(32, 256, 2, 0));
	d = decide(c, p, whole(8, 1));
	assert_int_equal(d.where.node, 1);
	assert_int_equal(d.score, 84);
	put(c, share(1, 600), 0, 2);
	put(c, share(1, 300), 0, 3);
	d = decide(c, p, share(40, 200));           /* node 1 lacks CPU */
	assert_int_equal(d.where.node, 0);
	assert_int_equal(d.where.device[0], 2);       /* 400 left beats 700 */
	gp_policy_free(p);
	gp_cluster_free(c);
}

static void binpack_and_spread_are_opposites(void **state)
{
	struct gp_cluster *c = cluster();
	struct gp_policy *bin = policy("binpack", NULL);
	struct gp_policy *spread = policy("spread", NULL);
	struct gp_policy_config cfg = { .devices = "spread" };
	struct gp_policy *bin_spread_devices;
	(void)state;

	assert_int_equal(gp_policy_new("binpack", &cfg, &bin_spread_devices), 0);
	add_node(c, node_spec(32, 256, 4, 0));
	add_node(c, node_spec(32, 256, 4, 0));
	put(c, share(1, 500), 1, 0);
	put(c, share(1, 200), 1, 1);
	assert_int_equal(decide(c, bin, share(1, 100)).where.node, 1);
	assert_int_equal(decide(c, bin, share(1, 100)).where.device[0], 0);
	assert_int_equal(decide(c, spread, share(1, 100)).where.node, 0);
	/* Node-level binpack with the device-level choice overridden. */
	struct gp_decision d = decide(c, bin_spread_devices, share(1, 100));
	assert_int_equal(d.where.node, 1);
	assert_true(d.where.device[0] >= 2);          /* an idle device */
	gp_policy_free(bin_spread_devices);
	gp_policy_free(spread);
	gp_policy_free(bin);
	gp_cluster_free(c);
}

/* A target workload of half whole GPUs and half 500-milli shares. */
static struct gp_workload *whole_and_half(uint32_t cores)
{
	struct gp_request r[2] = { whole(cores, 1), share(cores, 500) };
	struct gp_workload *w;

	assert_int_equal(gp_workload_from_requests(r, 2, 1.0, &w), 0);
	return w;
}

/* A two-device state with the given free compute (0 = held whole). */
static struct gp_node_state two_devices(uint32_t cores, uint16_t a, uint16_t b)
{
	struct gp_node_state s;
	uint16_t free_[2] = { a, b };

	memset(&s, 0, sizeof(s));
	s.cpu_total = s.cpu_free = cores * 1000;
	s.mem_total = s.mem_free = 1 << 20;
	s.devices = 2;
	for (int i = 0; i < 2; i++) {
		struct gp_dev_state *d = &s.dev[i];

		d->compute_cap = 1000;
		d->compute_free = free_[i];
		d->flags = GP_DEV_HEALTHY | (free_[i] == 0 ? GP_DEV_HELD : 0);
		d->tasks = free_[i] < 1000;
	}
	return s;
}

/* F = Σ weight · free capacity the shape cannot use. */
static void fgd_fragmentation_by_hand(void **state)
{
	struct gp_workload *w = whole_and_half(4);
	struct gp_policy *p = policy("fgd", w);
	struct gp_node_state idle = two_devices(32, 1000, 1000);
	struct gp_node_state mixed = two_devices(32, 1000, 300);
	struct gp_node_state crumbs = two_devices(32, 200, 0);
	struct gp_node_state no_cpu = two_devices(2, 1000, 1000);
	(void)state;

	assert_float_equal(gp_fgd_fragmentation(p, &idle), 0, 1e-9);
	/* whole: the 300 device is lost (300); half: likewise (300). */
	assert_float_equal(gp_fgd_fragmentation(p, &mixed), 300, 1e-9);
	/* Nothing fits: all 200 lost for both shapes. */
	assert_float_equal(gp_fgd_fragmentation(p, &crumbs), 200, 1e-9);
	/* No CPU for either shape: all 2000 lost. */
	assert_float_equal(gp_fgd_fragmentation(p, &no_cpu), 2000, 1e-9);
	gp_policy_free(p);
	gp_workload_free(w);
}

/* A 300 share on node 1's 300 device: F 300 → 0, score int(100 σ(.3)) = 57;
 * on an idle device of node 0: F 0 → 350, score int(100 σ(−.35)) = 41. */
static void fgd_fills_the_gap(void **state)
{
	struct gp_workload *w = whole_and_half(4);
	struct gp_policy *p = policy("fgd", w);
	struct gp_cluster *c = cluster();
	struct gp_decision d;
	(void)state;

	add_node(c, node_spec(32, 256, 2, 0));
	add_node(c, node_spec(32, 256, 2, 0));
	put(c, share(1, 700), 1, 1);
	d = decide(c, p, share(1, 300));
	assert_int_equal(d.where.node, 1);
	assert_int_equal(d.where.device[0], 1);
	assert_int_equal(d.score, 57);
	gp_cluster_free(c);
	gp_policy_free(p);
	gp_workload_free(w);
}

/* The default policy counts only the devices a node's CPU can feed: with 8
 * cores per task, 16 cores feed two devices. */
static void default_counts_fed_devices(void **state)
{
	struct gp_request shapes[1] = { whole(8, 1) };
	struct gp_workload *w;
	struct gp_policy *fgd, *def;
	struct gp_node_state twelve_cores = two_devices(12, 1000, 1000);
	(void)state;

	assert_int_equal(gp_workload_from_requests(shapes, 1, 1.0, &w), 0);
	fgd = policy("fgd", w);
	def = policy("default", w);
	/* 12 cores feed one 8-core task: FGD sees no loss; the default sees
	 * one of two devices stranded, 3/4 · 0 + 1/4 · 1000. */
	assert_float_equal(gp_fgd_fragmentation(fgd, &twelve_cores), 0, 1e-9);
	assert_float_equal(gp_fgd_fragmentation(def, &twelve_cores), 250, 1e-9);
	gp_policy_free(def);
	gp_policy_free(fgd);
	gp_workload_free(w);
}

/* An 8-core CPU-only task: FGD sees no difference between node 0 (16
 * cores) and node 1 (24 cores) and takes the first; the default sees that
 * on node 0 it would strand a device (F 0 → 250, score int(100 σ(−.25)) =
 * 43) and goes to node 1 (F stays 0, score 50). */
static void default_keeps_cpu_for_devices(void **state)
{
	struct gp_request shapes[1] = { whole(8, 1) };
	struct gp_workload *w;
	struct gp_policy *fgd, *def;
	struct gp_cluster *c = cluster();
	struct gp_decision d;
	(void)state;

	assert_int_equal(gp_workload_from_requests(shapes, 1, 1.0, &w), 0);
	fgd = policy("fgd", w);
	def = policy("default", w);
	add_node(c, node_spec(16, 256, 2, 0));
	add_node(c, node_spec(24, 256, 2, 0));
	assert_int_equal(decide(c, fgd, cpu_only(8)).where.node, 0);
	d = decide(c, def, cpu_only(8));
	assert_int_equal(d.where.node, 1);
	assert_int_equal(d.score, 50);
	gp_cluster_free(c);
	gp_policy_free(def);
	gp_policy_free(fgd);
	gp_workload_free(w);
}

/* A scarce model kept for the tasks that can only use it. Node 0 has 10
 * A100 (8 held), node 1 three idle T4; the workload is whole devices: 50 %
 * any model, 30 % two-device gangs, 20 % T4 only. A one-device task on
 * node 0 breaks its gang room (+300 milli of F) but spends no T4 (−200);
 * on node 1 it changes nothing. FGD, and the default without the pool's
 * supply, see +100 on node 0 (score 47) against 0 on node 1 (50) and take
 * a T4. With the supply the T4-only shape weighs 13/3 in the host-aware
 * part: F changes by 3/4 · 100 + 1/4 · (300 − 200 · 13/3) = −66.7 on node
 * 0, score 51, and the task goes there. */
static void default_keeps_scarce_models(void **state)
{
	struct gp_node_spec pool[2] = { node_spec(32, 256, 10, 0),
					node_spec(32, 256, 3, 1) };
	struct gp_request shapes[10];
	struct gp_workload *w;
	struct gp_policy *fgd, *plain, *def;
	struct gp_cluster *c = cluster();
	struct gp_decision d;
	(void)state;

	assert_int_equal(gp_cluster_model_id(c, "T4", true), 1);
	for (int i = 0; i < 10; i++)
		shapes[i] = i < 3 ? whole(4, 2) : whole(4, 1);
	shapes[8].models = shapes[9].models = 1u << 1;
	add_node(c, pool[0]);
	add_node(c, pool[1]);
	for (int i = 0; i < 8; i++)
		put(c, whole(1, 1), 0, i);
	assert_int_equal(gp_workload_from_requests(shapes, 10, 1.0, &w), 0);
	plain = policy("default", w);
	gp_workload_set_supply(w, pool, 2);
	fgd = policy("fgd", w);
	def = policy("default", w);

	d = decide(c, fgd, whole(4, 1));
	assert_int_equal(d.where.node, 1);
	assert_int_equal(d.score, 50);
	d = decide(c, plain, whole(4, 1));
	assert_int_equal(d.where.node, 1);
	assert_int_equal(d.score, 50);
	d = decide(c, def, whole(4, 1));
	assert_int_equal(d.where.node, 0);
	assert_int_equal(d.score, 51);
	gp_cluster_free(c);
	gp_policy_free(def);
	gp_policy_free(plain);
	gp_policy_free(fgd);
	gp_workload_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unknown_names_are_refused),
		cmocka_unit_test(only_fragmentation_policies_take_a_target),
		cmocka_unit_test(random_picks_feasible_nodes_evenly),
		cmocka_unit_test(dotprod_prefers_smallest_dot_product),
		cmocka_unit_test(gpuclustering_keeps_kinds_together),
		cmocka_unit_test(gpupacking_prefers_partly_used_devices),
		cmocka_unit_test(bestfit_leaves_least),
		cmocka_unit_test(binpack_and_spread_are_opposites),
		cmocka_unit_test(fgd_fragmentation_by_hand),
		cmocka_unit_test(fgd_fills_the_gap),
		cmocka_unit_test(default_counts_fed_devices),
		cmocka_unit_test(default_keeps_cpu_for_devices),
		cmocka_unit_test(default_keeps_scarce_models),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
