/* test-sched.c — the server's scheduling pass (src/server/sched.c) on
 * hand-made clusters: queue order, quotas, borrowing, and taking borrowed
 * capacity back by preemption (and not preempting for nothing). */
#include "helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "server/sched.h"

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
							 .mem_guaranteed_mib = 1 << 20,
							 .compute_guaranteed_pct = 10000 };
	return f;
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
	f->tenant[0].mem_guaranteed_mib = 8 * 1024;
	f->tenant[0].compute_guaranteed_pct = 100;
	first = submit(f, 1, 5, 6, 30);
	second = submit(f, 1, 5, 6, 30);
	pass(f);
	assert_int_equal(verdict(f, first), GP_SCHED_START);
	assert_false(outcome_of(f, first)->borrowed);
	assert_int_equal(verdict(f, second), GP_SCHED_WAIT);
	assert_non_null(strstr(outcome_of(f, second)->reason, "over quota"));
	fixture_free(f);
}

/* Tenant 1 borrows idle capacity; tenant 2 takes its guarantee back. */
static void test_borrow_then_reclaim(void **state)
{
	struct fixture *f = fixture_new(1);
	struct gp_sched_task *own, *lent1, *lent2, *owner;

	(void)state;
	f->tenant[0] = (struct gp_sched_tenant){ .id = 1, .mem_guaranteed_mib = 4096,
						 .mem_borrowable_mib = 12288,
						 .compute_guaranteed_pct = 30,
						 .compute_borrowable_pct = 70 };
	f->tenant[1] = (struct gp_sched_tenant){ .id = 2, .mem_guaranteed_mib = 12288,
						 .compute_guaranteed_pct = 70 };
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
	f->tenant[0] = (struct gp_sched_tenant){ .id = 1, .mem_guaranteed_mib = 1024,
						 .mem_borrowable_mib = 8192,
						 .compute_guaranteed_pct = 10,
						 .compute_borrowable_pct = 50 };
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
	f->tenant[0] = (struct gp_sched_tenant){ .id = 1, .mem_guaranteed_mib = 1024,
						 .mem_borrowable_mib = 16384,
						 .compute_guaranteed_pct = 10,
						 .compute_borrowable_pct = 90 };
	f->tenant[1] = (struct gp_sched_tenant){ .id = 2, .mem_guaranteed_mib = 16384,
						 .compute_guaranteed_pct = 100 };
	borrower = submit(f, 1, 5, 8, 60);      /* older, same priority */
	owner = submit(f, 2, 5, 8, 60);
	pass(f);
	assert_int_equal(verdict(f, owner), GP_SCHED_START);
	assert_int_equal(verdict(f, borrower), GP_SCHED_WAIT);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priority_then_age),
		cmocka_unit_test(test_over_quota_waits),
		cmocka_unit_test(test_borrow_then_reclaim),
		cmocka_unit_test(test_no_pointless_preemption),
		cmocka_unit_test(test_guaranteed_before_borrowed),
		cmocka_unit_test(test_unknown_tenant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
