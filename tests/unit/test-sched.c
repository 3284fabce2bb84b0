/* test-sched.c — the server's scheduling pass (src/core/sched.c) on
 * hand-made clusters: queue order, quotas (overall and per device model),
 * borrowing, taking borrowed capacity back by preemption (and not
 * preempting for nothing), and preemptive mode's priorities. */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/policy.h"
#include "core/sched.h"

#define MAX_TASKS 16

struct fixture {
	struct gp_cluster *c;
	struct gp_policy *policy;
	struct gp_sched_tenant tenant[2];       /* ids 1 and 2 */
	struct gp_sched_task task[MAX_TASKS];
	int n;
	struct gp_sched_outcome out[MAX_TASKS];
	int n_out;
};

/* One node with `devices` 16 GiB devices; both tenants may use it all. */
static struct fixture *fixture_new(int devices)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(gp_cluster_new(0, &f->c), 0);
	add_node(f->c, node_spec(64, 256, devices, gp_cluster_model_id(f->c, "T4", true)));
	assert_int_equal(gp_policy_new("binpack", &(struct gp_policy_config){ 0 }, &f->policy), 0);
	for (int i = 0; i < 2; i++)
		f->tenant[i] = (struct gp_sched_tenant){ .id = i + 1,
							 .quota.mem_guaranteed_mib = 1 << 20,
							 .quota.compute_guaranteed_pct = 10000 };
	return f;
}

/* One node with `per_model` T4s (devices 0..) then as many A100s, all
 * of 16 GiB: model ids in *ret_t4 and *ret_a100. */
static struct fixture *fixture_two_models(int per_model, int *ret_t4, int *ret_a100)
{
	struct fixture *f = fixture_new(0);
	int t4 = gp_cluster_model_id(f->c, "T4", true);
	int a100 = gp_cluster_model_id(f->c, "A100", true);
	struct gp_node_spec spec = node_spec(64, 256, 2 * per_model, t4);

	for (int i = per_model; i < 2 * per_model; i++)
		spec.device[i].model = (uint8_t)a100;
	gp_cluster_free(f->c);
	assert_int_equal(gp_cluster_new(0, &f->c), 0);
	assert_int_equal(gp_cluster_model_id(f->c, "T4", true), t4);
	assert_int_equal(gp_cluster_model_id(f->c, "A100", true), a100);
	add_node(f->c, spec);
	*ret_t4 = t4;
	*ret_a100 = a100;
	return f;
}

/* A model quota named name over the model id `model` (percent and GiB). */
static struct gp_sched_model_quota model_quota(const char *name, int model, unsigned mem_gib,
					       unsigned mem_borrow_gib, unsigned pct,
					       unsigned pct_borrow)
{
	struct gp_sched_model_quota q = { .models = 1ULL << model,
					  .quota.mem_guaranteed_mib = mem_gib * 1024,
					  .quota.mem_borrowable_mib = mem_borrow_gib * 1024,
					  .quota.compute_guaranteed_pct = pct,
					  .quota.compute_borrowable_pct = pct_borrow };

	snprintf(q.name, sizeof(q.name), "%s", name);
	return q;
}

static void fixture_free(struct fixture *f)
{
	gp_policy_free(f->policy);
	gp_cluster_free(f->c);
	free(f);
}

/* A pending task of `tenant` for one share: mem GiB, compute percent. */
static struct gp_sched_task *submit(struct fixture *f, int64_t tenant, unsigned priority,
				    unsigned mem_gib, unsigned compute_pct)
{
	struct gp_sched_task *t = &f->task[f->n];

	*t = (struct gp_sched_task){ .id = 100 + f->n, .tenant = tenant, .priority = priority,
				     .created = f->n,
				     .req = { .devices = 1, .dev_mem_mib = mem_gib * 1024,
					      .dev_compute = compute_pct * 10 } };
	f->n++;
	return t;
}

static void pass(struct fixture *f)
{
	assert_int_equal(gp_sched_pass(f->c, f->policy, f->tenant, 2, f->task, f->n, f->out,
				       &f->n_out),
			 0);
}

static const struct gp_sched_outcome *outcome_of(struct fixture *f, const struct gp_sched_task *t)
{
	for (int i = 0; i < f->n_out; i++)
		if (f->out[i].task == t->id)
			return &f->out[i];
	return NULL;
}

static enum gp_sched_verdict verdict(struct fixture *f, const struct gp_sched_task *t)
{
	const struct gp_sched_outcome *o = outcome_of(f, t);

	assert_non_null(o);
	return o->verdict;
}

static void test_priority_then_age(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *low = submit(f, 1, 3, 4, 60);
	struct gp_sched_task *high = submit(f, 1, 8, 4, 60);
	struct gp_sched_task *older = submit(f, 2, 1, 4, 30);
	struct gp_sched_task *newer = submit(f, 2, 1, 4, 30);

	(void)state;
	pass(f);
	assert_int_equal(verdict(f, high), GP_SCHED_START);     /* first in line */
	assert_int_equal(verdict(f, low), GP_SCHED_WAIT);       /* 60 % no longer fits */
	assert_non_null(strstr(outcome_of(f, low)->reason, "no device fits"));
	assert_int_equal(verdict(f, older), GP_SCHED_START);    /* 30 % still does */
	assert_int_equal(verdict(f, newer), GP_SCHED_WAIT);
	fixture_free(f);
}

static void test_over_quota_waits(void **state)
{
	struct fixture *f = fixture_new(2);
	struct gp_sched_task *first, *second;

	(void)state;
	f->tenant[0].quota.mem_guaranteed_mib = 8 * 1024;
	f->tenant[0].quota.compute_guaranteed_pct = 100;
	first = submit(f, 1, 5, 6, 30);
	second = submit(f, 1, 5, 6, 30);
	pass(f);
	assert_int_equal(verdict(f, first), GP_SCHED_START);
	assert_false(outcome_of(f, first)->borrowed);
	assert_int_equal(verdict(f, second), GP_SCHED_WAIT);
	assert_non_null(strstr(outcome_of(f, second)->reason, "over quota"));
	assert_non_null(strstr(outcome_of(f, second)->reason, "when the tenant's tasks end"));
	fixture_free(f);
}

/* A task its tenant's whole quota cannot hold (the quota lowered after
 * it was submitted) says that no end of the tenant's tasks starts it. */
static void test_over_whole_quota_says_so(void **state)
{
	struct fixture *f = fixture_new(2);
	struct gp_sched_task *big;

	(void)state;
	f->tenant[0].quota.mem_guaranteed_mib = 4 * 1024;
	f->tenant[0].quota.compute_guaranteed_pct = 100;
	big = submit(f, 1, 5, 6, 30);
	pass(f);
	assert_int_equal(verdict(f, big), GP_SCHED_WAIT);
	assert_non_null(strstr(outcome_of(f, big)->reason,
			       "cannot start while the quota is as it is"));
	fixture_free(f);
}

/* Memory as a percent counts against the quota as it came to on the card
 * the task got: 50 % on a 16 GiB T4 is 8 GiB, though unplaced it counted
 * as on the 80 GiB A100 it also accepts; so 40 GiB more still fit in a
 * quota of 48. */
static void test_memory_percent_counts_as_placed(void **state)
{
	struct fixture *f = fixture_new(0);
	int t4 = gp_cluster_model_id(f->c, "T4", true);
	int a100 = gp_cluster_model_id(f->c, "A100", true);
	struct gp_node_spec spec = node_spec(64, 256, 2, t4);
	struct gp_sched_task *half, *fixed;

	(void)state;
	spec.device[1].model = (uint8_t)a100;
	spec.device[1].mem_mib = 80 * 1024;
	add_node(f->c, spec);
	f->tenant[0].quota.mem_guaranteed_mib = 48 * 1024;
	f->tenant[0].quota.compute_guaranteed_pct = 200;
	half = submit(f, 1, 5, 40, 10);
	half->req.dev_mem_pct = 50;
	half->req.models = 1ULL << t4;
	pass(f);
	assert_int_equal(verdict(f, half), GP_SCHED_START);
	fixed = submit(f, 1, 5, 40, 10);
	fixed->req.models = 1ULL << a100;
	pass(f);
	assert_int_equal(verdict(f, fixed), GP_SCHED_START);
	fixture_free(f);
}

/* Tenant 1 borrows idle capacity; tenant 2 takes its guarantee back. */
static void test_borrow_then_reclaim(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *own, *lent1, *lent2, *owner;

	(void)state;
	f->tenant[0] = (struct gp_sched_tenant){ .id = 1, .quota.mem_guaranteed_mib = 4096,
						 .quota.mem_borrowable_mib = 12288,
						 .quota.compute_guaranteed_pct = 30,
						 .quota.compute_borrowable_pct = 70 };
	f->tenant[1] = (struct gp_sched_tenant){ .id = 2, .quota.mem_guaranteed_mib = 12288,
						 .quota.compute_guaranteed_pct = 70 };
	own = submit(f, 1, 5, 4, 30);
	lent1 = submit(f, 1, 2, 4, 30);
	lent2 = submit(f, 1, 5, 4, 30);
	pass(f);
	assert_int_equal(verdict(f, own), GP_SCHED_START);
	assert_false(outcome_of(f, own)->borrowed);
	assert_int_equal(verdict(f, lent1), GP_SCHED_START);
	assert_true(outcome_of(f, lent1)->borrowed);
	assert_int_equal(verdict(f, lent2), GP_SCHED_START);
	assert_true(outcome_of(f, lent2)->borrowed);

	/* The device now holds 90 %; tenant 2 wants 40 %, within its 70 %
	 * guarantee: one borrowed task goes — the lower priority one. */
	owner = submit(f, 2, 5, 4, 40);
	pass(f);
	assert_int_equal(verdict(f, owner), GP_SCHED_START);
	assert_int_equal(verdict(f, lent1), GP_SCHED_PREEMPT);
	assert_non_null(strstr(outcome_of(f, lent1)->reason, "borrowed"));
	assert_null(outcome_of(f, lent2));      /* still running, untouched */
	assert_null(outcome_of(f, own));
	assert_int_equal(f->n_out, 2);
	fixture_free(f);
}

/* Nobody is preempted when even all borrowed capacity would not do. */
static void test_no_pointless_preemption(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *lent, *owner;

	(void)state;
	f->tenant[0] = (struct gp_sched_tenant){ .id = 1, .quota.mem_guaranteed_mib = 1024,
						 .quota.mem_borrowable_mib = 8192,
						 .quota.compute_guaranteed_pct = 10,
						 .quota.compute_borrowable_pct = 50 };
	lent = submit(f, 1, 5, 4, 50);
	pass(f);
	assert_true(outcome_of(f, lent)->borrowed);
	/* 20 GiB is more than the 16 GiB device has at all. */
	owner = submit(f, 2, 5, 20, 10);
	pass(f);
	assert_int_equal(verdict(f, owner), GP_SCHED_WAIT);
	assert_null(outcome_of(f, lent));
	assert_true(lent->running);
	fixture_free(f);
}

/* A borrower ahead in the queue does not take what a task within its
 * guarantee needs: it would only be preempted again. */
static void test_guaranteed_before_borrowed(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *borrower, *owner;

	(void)state;
	f->tenant[0] = (struct gp_sched_tenant){ .id = 1, .quota.mem_guaranteed_mib = 1024,
						 .quota.mem_borrowable_mib = 16384,
						 .quota.compute_guaranteed_pct = 10,
						 .quota.compute_borrowable_pct = 90 };
	f->tenant[1] = (struct gp_sched_tenant){ .id = 2, .quota.mem_guaranteed_mib = 16384,
						 .quota.compute_guaranteed_pct = 100 };
	borrower = submit(f, 1, 5, 8, 60);      /* older, same priority */
	owner = submit(f, 2, 5, 8, 60);
	pass(f);
	assert_int_equal(verdict(f, owner), GP_SCHED_START);
	assert_int_equal(verdict(f, borrower), GP_SCHED_WAIT);
	fixture_free(f);
}

/* The model of the device a started task went to. */
static int started_model(struct fixture *f, const struct gp_sched_task *t)
{
	const struct gp_sched_outcome *o = outcome_of(f, t);

	assert_non_null(o);
	assert_int_equal(o->verdict, GP_SCHED_START);
	return gp_cluster_device_model(f->c, o->where.node, o->where.device[0]);
}

/* A T4 quota of 50 % blocks a second 30 % task on the T4 the binpack
 * policy would pick: it goes to an A100 instead; a task that asks for a
 * T4 waits, and its reason names the T4 quota. */
static void test_model_quota_other_model(void **state)
{
	int t4, a100;
	struct fixture *f = fixture_two_models(1, &t4, &a100);
	struct gp_sched_model_quota q = model_quota("T4", t4, 16, 0, 50, 0);
	struct gp_sched_task *first, *second, *t4_only;

	(void)state;
	f->tenant[0].model_quota = &q;
	f->tenant[0].model_quotas = 1;
	first = submit(f, 1, 5, 2, 30);
	pass(f);
	assert_int_equal(started_model(f, first), t4);

	second = submit(f, 1, 5, 2, 30);
	t4_only = submit(f, 1, 5, 2, 30);
	t4_only->req.models = 1ULL << t4;
	pass(f);
	assert_int_equal(started_model(f, second), a100);
	assert_false(outcome_of(f, second)->borrowed);
	assert_int_equal(verdict(f, t4_only), GP_SCHED_WAIT);
	assert_non_null(strstr(outcome_of(f, t4_only)->reason,
			       "over the T4 quota: the tenant uses 2048 MiB and 30 % of its "
			       "16384 MiB and 50 % there; this task needs 2048 MiB and 30 %"));

	/* Tenant 2 has no model quota: its T4 task runs beside them. */
	t4_only = submit(f, 2, 5, 2, 30);
	t4_only->req.models = 1ULL << t4;
	pass(f);
	assert_int_equal(started_model(f, t4_only), t4);
	fixture_free(f);
}

/* Past the T4 guarantee, a task borrows even within the overall one;
 * past the T4 quota's borrowable part, a T4 task waits; an A100 task is
 * not limited by the T4 quota. */
static void test_model_quota_borrowed(void **state)
{
	int t4, a100;
	struct fixture *f = fixture_two_models(2, &t4, &a100);
	struct gp_sched_model_quota q = model_quota("T4", t4, 8, 8, 40, 40);
	struct gp_sched_task *t[4], *a;

	(void)state;
	f->tenant[0].model_quota = &q;
	f->tenant[0].model_quotas = 1;
	for (int i = 0; i < 4; i++) {
		t[i] = submit(f, 1, 5, 1, 30);
		t[i]->req.models = 1ULL << t4;
	}
	a = submit(f, 1, 5, 1, 30);
	a->req.models = 1ULL << a100;
	pass(f);
	assert_int_equal(started_model(f, t[0]), t4);
	assert_false(outcome_of(f, t[0])->borrowed);
	assert_int_equal(started_model(f, t[1]), t4);  /* 60 % > 40 %: borrowed */
	assert_true(outcome_of(f, t[1])->borrowed);
	assert_int_equal(verdict(f, t[2]), GP_SCHED_WAIT); /* 90 % > 80 % */
	assert_non_null(strstr(outcome_of(f, t[2])->reason, "over the T4 quota"));
	assert_int_equal(verdict(f, t[3]), GP_SCHED_WAIT);
	assert_int_equal(started_model(f, a), a100);
	assert_false(outcome_of(f, a)->borrowed);
	fixture_free(f);
}

/* Tenant 1 borrows on a T4 and on an A100; tenant 2's T4 task within
 * its T4 guarantee preempts the T4 borrower only (the A100 one would be
 * first in line, but its release would not help). A T4 task past the T4
 * guarantee preempts nobody. */
static void test_model_quota_reclaim(void **state)
{
	int t4, a100;
	struct fixture *f = fixture_two_models(1, &t4, &a100);
	struct gp_sched_model_quota q = model_quota("T4", t4, 16, 0, 50, 0);
	struct gp_sched_task *on_t4, *on_a100, *owner;

	(void)state;
	f->tenant[0] = (struct gp_sched_tenant){ .id = 1, .quota.mem_guaranteed_mib = 1024,
						 .quota.mem_borrowable_mib = 32768,
						 .quota.compute_guaranteed_pct = 10,
						 .quota.compute_borrowable_pct = 200 };
	f->tenant[1].model_quota = &q;
	f->tenant[1].model_quotas = 1;
	on_t4 = submit(f, 1, 5, 4, 80);
	on_t4->req.models = 1ULL << t4;
	on_a100 = submit(f, 1, 1, 4, 80);
	on_a100->req.models = 1ULL << a100;
	pass(f);
	assert_true(outcome_of(f, on_t4)->borrowed);
	assert_true(outcome_of(f, on_a100)->borrowed);

	owner = submit(f, 2, 5, 4, 40);
	owner->req.models = 1ULL << t4;
	pass(f);
	assert_int_equal(started_model(f, owner), t4);
	assert_int_equal(verdict(f, on_t4), GP_SCHED_PREEMPT);
	assert_null(outcome_of(f, on_a100));
	assert_true(on_a100->running);

	fixture_free(f);
}

/* A T4 task past its tenant's T4 guarantee (within the borrowable part)
 * preempts nobody: it waits for idle capacity. */
static void test_model_quota_no_reclaim_past_guarantee(void **state)
{
	int t4, a100;
	struct fixture *f = fixture_two_models(1, &t4, &a100);
	struct gp_sched_model_quota q = model_quota("T4", t4, 16, 0, 20, 80);
	struct gp_sched_task *lent, *owner;

	(void)state;
	f->tenant[0] = (struct gp_sched_tenant){ .id = 1, .quota.mem_guaranteed_mib = 1024,
						 .quota.mem_borrowable_mib = 32768,
						 .quota.compute_guaranteed_pct = 10,
						 .quota.compute_borrowable_pct = 200 };
	f->tenant[1].model_quota = &q;
	f->tenant[1].model_quotas = 1;
	lent = submit(f, 1, 5, 4, 80);
	lent->req.models = 1ULL << t4;
	pass(f);
	assert_true(outcome_of(f, lent)->borrowed);

	owner = submit(f, 2, 5, 4, 40);
	owner->req.models = 1ULL << t4;
	pass(f);
	assert_int_equal(verdict(f, owner), GP_SCHED_WAIT);
	assert_non_null(strstr(outcome_of(f, owner)->reason, "no device fits now"));
	assert_null(outcome_of(f, lent));
	assert_true(lent->running);
	assert_int_equal(f->n_out, 1);
	fixture_free(f);
}

/* Model quotas of one tenant must govern disjoint models. */
static void test_model_quotas_overlap(void **state)
{
	int t4, a100;
	struct fixture *f = fixture_two_models(1, &t4, &a100);
	struct gp_sched_model_quota q[2] = { model_quota("T4", t4, 1, 0, 10, 0),
					     model_quota("Tesla T4", t4, 1, 0, 10, 0) };

	(void)state;
	f->tenant[0].model_quota = q;
	f->tenant[0].model_quotas = 2;
	submit(f, 1, 5, 1, 10);
	assert_int_equal(gp_sched_pass(f->c, f->policy, f->tenant, 2, f->task, f->n, f->out,
				       &f->n_out),
			 -EINVAL);
	fixture_free(f);
}

static void test_unknown_tenant(void **state)
{
	struct fixture *f = fixture_new(1);

	(void)state;
	submit(f, 7, 5, 1, 10);
	assert_int_equal(gp_sched_pass(f->c, f->policy, f->tenant, 2, f->task, f->n, f->out,
				       &f->n_out),
			 -EINVAL);
	fixture_free(f);
}

/* A request the core cannot place at all (more devices than a node may
 * have: the API takes 64, a node holds 16) waits with a reason of its
 * own; the pass never reads the decision gp_place did not make. */
static void test_unplaceable_request_waits(void **state)
{
	struct fixture *f = fixture_new(2);
	struct gp_sched_task *big = submit(f, 1, 9, 1, 10);
	struct gp_sched_task *small = submit(f, 1, 5, 1, 10);

	(void)state;
	big->req.devices = GP_NODE_DEVICES_MAX + 1;
	pass(f);
	assert_int_equal(verdict(f, big), GP_SCHED_WAIT);
	assert_non_null(strstr(outcome_of(f, big)->reason, "asks for 17 devices, and a node has "
							    "at most 16"));
	assert_int_equal(verdict(f, small), GP_SCHED_START);    /* the rest goes on */
	fixture_free(f);
}

/* ---- live changes (gp_sched_change) ------------------------------------- */

/* Tries running task t at compute_pct per share. */
static struct gp_sched_change change(struct fixture *f, struct gp_sched_task *t,
				     unsigned compute_pct)
{
	struct gp_request req = t->req;
	struct gp_sched_change c;

	req.dev_compute = compute_pct * 10;
	assert_int_equal(gp_sched_change(f->c, f->tenant, 2, f->task, f->n, t->id, &req, &c), 0);
	return c;
}

/* Compute free on device 0, percent. */
static unsigned free_pct(struct fixture *f)
{
	struct gp_node_usage u;

	assert_int_equal(gp_cluster_node_usage(f->c, 0, &u), 0);
	return u.compute_free[0] / 10u;
}

/* The reproduction: a tenant with one card's quota runs five 20 %
 * tasks; none of them may go to 100 %, and the device keeps 100 %. */
static void test_change_over_quota(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_change c;

	(void)state;
	f->tenant[0].quota.mem_guaranteed_mib = 16384;
	f->tenant[0].quota.compute_guaranteed_pct = 100;
	for (int i = 0; i < 5; i++)
		submit(f, 1, 5, 1, 20);
	pass(f);
	for (int i = 0; i < 5; i++) {
		assert_true(f->task[i].running);
		c = change(f, &f->task[i], 100);
		assert_false(c.fits);
		assert_non_null(strstr(c.reason, "over quota"));
		assert_non_null(strstr(c.reason, "other tasks hold 80 % of its 100 %"));
		assert_non_null(strstr(c.reason, "ask for at most 20 %"));
		assert_int_equal(f->task[i].req.dev_compute, 200);
	}
	assert_int_equal(free_pct(f), 0);
	fixture_free(f);
}

/* Without a quota in the way, the device's compute is the limit. */
static void test_change_no_room(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *a = submit(f, 1, 5, 1, 40), *b = submit(f, 1, 5, 1, 40);
	struct gp_sched_change c;

	(void)state;
	pass(f);
	c = change(f, a, 60);
	assert_true(c.fits);
	assert_false(c.borrowed);
	assert_int_equal(a->req.dev_compute, 600);
	assert_int_equal(free_pct(f), 0);
	c = change(f, b, 50);
	assert_false(c.fits);
	assert_non_null(strstr(c.reason, "no room: its device has 0 % of compute free beside its "
					 "own 40 %"));
	assert_non_null(strstr(c.reason, "ask for at most 40 %"));
	assert_int_equal(b->req.dev_compute, 400);
	c = change(f, a, 10);                   /* down: always */
	assert_true(c.fits);
	assert_int_equal(free_pct(f), 50);
	c = change(f, b, 90);
	assert_true(c.fits);
	assert_int_equal(free_pct(f), 0);
	fixture_free(f);
}

/* Past the guarantee, within the borrowable part: borrowed, like a start. */
static void test_change_borrows(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *t;
	struct gp_sched_change c;

	(void)state;
	f->tenant[0] = (struct gp_sched_tenant){ .id = 1, .quota.mem_guaranteed_mib = 16384,
						 .quota.compute_guaranteed_pct = 30,
						 .quota.compute_borrowable_pct = 40 };
	t = submit(f, 1, 5, 1, 30);
	pass(f);
	assert_false(t->borrowed);
	c = change(f, t, 60);
	assert_true(c.fits);
	assert_true(c.borrowed);
	assert_true(t->borrowed);
	c = change(f, t, 80);
	assert_false(c.fits);
	assert_non_null(strstr(c.reason, "ask for at most 70 %"));
	c = change(f, t, 20);
	assert_true(c.fits);
	assert_false(c.borrowed);
	fixture_free(f);
}

/* A model quota counts the shares on the devices it governs. */
static void test_change_model_quota(void **state)
{
	int t4, a100;
	struct fixture *f = fixture_two_models(1, &t4, &a100);
	struct gp_sched_model_quota q = model_quota("T4", t4, 16, 0, 50, 0);
	struct gp_sched_task *t;
	struct gp_sched_change c;

	(void)state;
	f->tenant[0].model_quota = &q;
	f->tenant[0].model_quotas = 1;
	t = submit(f, 1, 5, 1, 30);
	t->req.models = 1ULL << t4;
	pass(f);
	assert_int_equal(started_model(f, t), t4);
	c = change(f, t, 60);
	assert_false(c.fits);
	assert_non_null(strstr(c.reason, "over the T4 quota"));
	assert_non_null(strstr(c.reason, "ask for at most 50 %"));
	assert_true(change(f, t, 50).fits);
	fixture_free(f);
}

/* A borrowed 50 % task of tenant 1 running on the device (committed by
 * the caller, as a misfit's part that fits is), and a 100 % task of
 * tenant 2 within its guarantee: the pass preempts the first, unless it
 * is a misfit. */
static void misfit_reclaim(bool misfit)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *t = submit(f, 1, 5, 1, 50), *owner;

	t->running = t->borrowed = true;
	t->misfit = misfit;
	t->where = (struct gp_placement){ .devices = 1 };
	assert_int_equal(gp_cluster_commit(f->c, &t->req, &t->where), 0);
	owner = submit(f, 2, 5, 4, 100);
	pass(f);
	if (misfit) {
		assert_int_equal(verdict(f, owner), GP_SCHED_WAIT);
		assert_null(outcome_of(f, t));
	} else {
		assert_int_equal(verdict(f, owner), GP_SCHED_START);
		assert_int_equal(verdict(f, t), GP_SCHED_PREEMPT);
	}
	fixture_free(f);
}

/* A running task that its devices cannot hold (a misfit) may go down,
 * never up; and the pass never preempts it (it would release what the
 * cluster does not hold). */
static void test_change_misfit(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *t = submit(f, 1, 5, 1, 50);
	struct gp_sched_change c;

	(void)state;
	t->running = t->misfit = true;          /* nothing of it committed */
	t->where = (struct gp_placement){ .devices = 1 };
	c = change(f, t, 60);
	assert_false(c.fits);
	assert_non_null(strstr(c.reason, "may go down, not up"));
	assert_true(change(f, t, 40).fits);
	assert_int_equal(free_pct(f), 100);     /* the cluster is the caller's */
	fixture_free(f);
	misfit_reclaim(false);
	misfit_reclaim(true);
}

/* Tasks that ask the same wait for the same reason, but only while
 * nothing starts in between: a start changes the tenant's use, and the
 * reasons of the tasks after it say so. */
static void test_same_requests_after_a_start(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *big1, *borrower, *big2;

	(void)state;
	f->tenant[0].quota.mem_guaranteed_mib = 8 * 1024;
	f->tenant[0].quota.mem_borrowable_mib = 4 * 1024;
	f->tenant[0].quota.compute_guaranteed_pct = 100;
	big1 = submit(f, 1, 5, 14, 10);
	borrower = submit(f, 1, 5, 10, 10);
	big2 = submit(f, 1, 5, 14, 10);
	pass(f);
	assert_int_equal(verdict(f, borrower), GP_SCHED_START);
	assert_int_equal(verdict(f, big1), GP_SCHED_WAIT);
	assert_int_equal(verdict(f, big2), GP_SCHED_WAIT);
	assert_non_null(strstr(outcome_of(f, big1)->reason, "uses 0 MiB"));
	assert_non_null(strstr(outcome_of(f, big2)->reason, "uses 10240 MiB"));
	fixture_free(f);
}

/* This thread's CPU time: what the pass costs, not what a busy host
 * adds to the wall clock while other programs run. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define MANY 20000

/* A pass over a long queue that cannot run (every device held whole)
 * costs little: its tasks are not compared with every other task (the
 * victims of a reclaim are looked for among the running ones only), and
 * tasks that ask the same are decided once. 20,000 queued tasks of two
 * tenants and a few shapes: every one waits, with its reason, in well
 * under 0.2 s of CPU time (measured in the thread's CPU time, which a
 * busy host does not stretch) (it took 0.2 s for 10,000
 * when each reclaim looked at every task). */
static void test_pass_long_queue(void **state)
{
	struct fixture *f = fixture_new(4);
	struct gp_sched_task *t = calloc(MANY + 4, sizeof(*t));
	struct gp_sched_outcome *out = calloc(MANY + 4, sizeof(*out));
	int n_out = 0, over = 0, nofit = 0, want_over = 0;
	double start, ms;

	(void)state;
	assert_non_null(t);
	assert_non_null(out);
	f->tenant[1].quota.mem_guaranteed_mib = 2048; /* tenant 2: 1 GiB tasks fit twice */
	for (int i = 0; i < 4; i++) {
		t[i] = (struct gp_sched_task){ .id = i + 1, .tenant = 1, .priority = 5,
					       .created = i, .running = true,
					       .req = { .devices = 1, .whole = true,
							.dev_mem_mib = 16384 } };
		t[i].where = (struct gp_placement){ .devices = 1, .device = { (uint8_t)i } };
		assert_int_equal(gp_cluster_commit(f->c, &t[i].req, &t[i].where), 0);
	}
	for (int i = 4; i < MANY + 4; i++)
		t[i] = (struct gp_sched_task){ .id = i + 1, .tenant = 1 + i % 2, .priority = i % 3,
					       .created = i,
					       .req = { .devices = 1,
							.dev_mem_mib = 1024 * (1 + i % 3),
							.dev_compute = 100 } };
	for (int i = 4; i < MANY + 4; i++)
		want_over += t[i].tenant == 2 && t[i].req.dev_mem_mib > 2048;
	start = cpu_ms();
	assert_int_equal(gp_sched_pass(f->c, f->policy, f->tenant, 2, t, MANY + 4, out, &n_out), 0);
	ms = cpu_ms() - start;
	assert_int_equal(n_out, MANY);
	for (int i = 0; i < n_out; i++) {
		assert_int_equal(out[i].verdict, GP_SCHED_WAIT);
		over += strstr(out[i].reason, "over quota") != NULL;
		nofit += strstr(out[i].reason, "no device fits now") != NULL;
	}
	assert_int_equal(over, want_over);      /* tenant 2's 3 GiB tasks */
	assert_int_equal(nofit, MANY - over);
	printf("# a pass over %d queued tasks: %.1f ms of CPU time\n", MANY, ms);
	assert_true(ms < 200);
	free(t);
	free(out);
	fixture_free(f);
}

/* Preemptive mode: tenant 2's priority-7 task takes the device from
 * tenant 1's priority-2 one, both within their guarantees; off, it
 * waits. */
static void priority_preemption(bool on)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *low, *high;

	f->tenant[1].priority_preemption = on;
	low = submit(f, 1, 2, 4, 80);
	pass(f);
	assert_int_equal(verdict(f, low), GP_SCHED_START);
	high = submit(f, 2, 7, 4, 50);
	pass(f);
	if (!on) {
		assert_int_equal(verdict(f, high), GP_SCHED_WAIT);
		assert_null(outcome_of(f, low));
		fixture_free(f);
		return;
	}
	assert_int_equal(verdict(f, high), GP_SCHED_START);
	assert_int_equal(verdict(f, low), GP_SCHED_PREEMPT);
	assert_non_null(strstr(outcome_of(f, low)->reason, "priority 7"));
	fixture_free(f);
}

static void test_priority_preemption(void **state)
{
	(void)state;
	priority_preemption(false);
	priority_preemption(true);
}

/* Nobody preempts for priority a hard slice within its tenant's
 * guarantee, nor work of the same or a higher priority. */
static void test_priority_spares_hard_and_higher(void **state)
{
	struct fixture *f = fixture_new(2);
	struct gp_sched_task *hard, *equal, *high;

	(void)state;
	f->tenant[1].priority_preemption = true;
	hard = submit(f, 1, 0, 4, 80);
	hard->hard = true;
	equal = submit(f, 1, 7, 4, 80);
	pass(f);
	assert_int_equal(verdict(f, hard), GP_SCHED_START);
	assert_int_equal(verdict(f, equal), GP_SCHED_START);
	high = submit(f, 2, 7, 4, 50);
	pass(f);
	assert_int_equal(verdict(f, high), GP_SCHED_WAIT);
	assert_int_equal(f->n_out, 1);
	fixture_free(f);
}

/* A task past its guarantee borrows: it may take borrowed work of a
 * lower priority, never work within another tenant's guarantee (which
 * would take its guarantee back from it at once). */
static void test_priority_borrower_takes_only_borrowed(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *owned, *borrower;

	(void)state;
	f->tenant[1] = (struct gp_sched_tenant){ .id = 2, .quota.mem_borrowable_mib = 16384,
						 .quota.compute_borrowable_pct = 100,
						 .priority_preemption = true };
	owned = submit(f, 1, 0, 4, 80);
	pass(f);
	assert_false(outcome_of(f, owned)->borrowed);
	borrower = submit(f, 2, 9, 4, 50);
	pass(f);
	assert_int_equal(verdict(f, borrower), GP_SCHED_WAIT);
	assert_null(outcome_of(f, owned));
	fixture_free(f);
}

/* Victims go lowest priority first, but only those that free enough
 * stay preempted: the priority-0 task released first is on the device
 * that cannot hold the newcomer anyway (a priority-9 one holds it). */
static void test_priority_fewest_victims(void **state)
{
	struct fixture *f = fixture_new(2);
	struct gp_sched_task *x, *h, *y, *p;

	(void)state;
	f->tenant[1].priority_preemption = true;
	x = submit(f, 1, 0, 4, 20);
	h = submit(f, 1, 9, 10, 20);
	y = submit(f, 1, 1, 14, 20);
	pass(f);
	assert_int_equal(x->where.device[0], h->where.device[0]);
	assert_int_not_equal(x->where.device[0], y->where.device[0]);
	p = submit(f, 2, 5, 10, 10);
	pass(f);
	assert_int_equal(verdict(f, p), GP_SCHED_START);
	assert_int_equal(verdict(f, y), GP_SCHED_PREEMPT);
	assert_null(outcome_of(f, x));
	assert_true(x->running);
	assert_int_equal(f->n_out, 2);
	fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priority_then_age),
		cmocka_unit_test(test_over_quota_waits),
		cmocka_unit_test(test_over_whole_quota_says_so),
		cmocka_unit_test(test_memory_percent_counts_as_placed),
		cmocka_unit_test(test_borrow_then_reclaim),
		cmocka_unit_test(test_no_pointless_preemption),
		cmocka_unit_test(test_priority_preemption),
		cmocka_unit_test(test_priority_spares_hard_and_higher),
		cmocka_unit_test(test_priority_borrower_takes_only_borrowed),
		cmocka_unit_test(test_priority_fewest_victims),
		cmocka_unit_test(test_guaranteed_before_borrowed),
		cmocka_unit_test(test_model_quota_other_model),
		cmocka_unit_test(test_model_quota_borrowed),
		cmocka_unit_test(test_model_quota_reclaim),
		cmocka_unit_test(test_model_quota_no_reclaim_past_guarantee),
		cmocka_unit_test(test_model_quotas_overlap),
		cmocka_unit_test(test_unknown_tenant),
		cmocka_unit_test(test_unplaceable_request_waits),
		cmocka_unit_test(test_change_over_quota),
		cmocka_unit_test(test_change_no_room),
		cmocka_unit_test(test_change_borrows),
		cmocka_unit_test(test_change_model_quota),
		cmocka_unit_test(test_change_misfit),
		cmocka_unit_test(test_same_requests_after_a_start),
		cmocka_unit_test(test_pass_long_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
