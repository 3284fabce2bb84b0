/* test-pool.c — the queue, the running tasks and the tenants in memory
 * (src/server/pool.c): after a burst of mixed changes, each written to a
 * store and then put into the pool as the server does, the pool equals
 * one loaded afresh from that store; the comparison sees a change the
 * store did not get; the queue's order and pages; which changes ask for
 * a pass over the whole queue and which for one task's; the loop's flags
 * of a running task; a task that waits for others held out of the passes
 * until released, and one held again after a restart; a time limit's
 * end asked once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "server/pool.h"
#include "core/sched.h"

#define TENANTS 4
#define BURST	3000

struct fixture {
	struct gp_store *s;
	struct gp_pool *p;
	int64_t tenant[TENANTS + 1];
	int tenants;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(gp_store_open(":memory:", &f->s), 0);
	assert_int_equal(gp_pool_load(f->s, &f->p), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	gp_pool_free(f->p);
	gp_store_close(f->s);
	free(f);
	return 0;
}

/* The pool equals one loaded from the store now. */
static void assert_follows(struct fixture *f)
{
	struct gp_pool *fresh = NULL;
	char why[256] = "";
	int r;

	assert_int_equal(gp_pool_load(f->s, &fresh), 0);
	r = gp_pool_compare(f->p, fresh, why, sizeof(why));
	if (r)
		fail_msg("the pool differs from the store: %s", why);
	gp_pool_free(fresh);
}

static int64_t tenant_add(struct fixture *f, const char *name, unsigned mem_gib)
{
	struct gp_tenant t = { .mem_guaranteed_mib = mem_gib * 1024ULL,
			       .compute_guaranteed_pct = 100 };
	char token[GP_TOKEN_HEX + 1];

	snprintf(t.name, sizeof(t.name), "%s", name);
	assert_int_equal(gp_store_tenant_add(f->s, &t, token), 0);
	assert_int_equal(gp_pool_tenant_put(f->p, &t), 0);
	f->tenant[f->tenants++] = t.id;
	return t.id;
}

static int64_t submit(struct fixture *f, int64_t tenant, unsigned priority, unsigned mem_mib)
{
	struct gp_task t = { .tenant = tenant, .priority = priority, .mem_mib = mem_mib,
			     .compute_pct = 10, .devices = 1, .hard = true };

	snprintf(t.name, sizeof(t.name), "t");
	snprintf(t.command, sizeof(t.command), "true");
	snprintf(t.kind, sizeof(t.kind), "batch");
	snprintf(t.reason, sizeof(t.reason), "waiting for the scheduler");
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	assert_int_equal(gp_pool_task_put(f->p, &t), 0);
	return t.id;
}

/* Writes task id's row with change() applied, then puts it. */
static void task_write(struct fixture *f, int64_t id, void (*change)(struct gp_task *, uint64_t),
		       uint64_t arg)
{
	struct gp_task t;

	assert_int_equal(gp_store_task_get(f->s, id, &t), 0);
	change(&t, arg);
	assert_int_equal(gp_store_task_update(f->s, &t), 0);
	assert_int_equal(gp_pool_task_put(f->p, &t), 0);
}

static void to_running(struct gp_task *t, uint64_t n)
{
	t->state = GP_TASK_RUNNING;
	t->pid = (int64_t)(1000 + n);
	t->started = t->created + 1;
	snprintf(t->placement, sizeof(t->placement), "GPU-%u", (unsigned)(n % 4));
	snprintf(t->reason, sizeof(t->reason), "within the tenant's guarantee");
}

static void to_ended(struct gp_task *t, uint64_t n)
{
	t->state = n % 2 ? GP_TASK_SUCCEEDED : GP_TASK_FAILED;
	t->pid = 0;
	t->ended = t->started + 1;
}

static void to_requeued(struct gp_task *t, uint64_t n)
{
	(void)n;
	t->state = GP_TASK_PREEMPTED;
	t->pid = 0;
	t->placement[0] = '\0';
	snprintf(t->reason, sizeof(t->reason), "preempted; queued again");
}

static void to_cancelled(struct gp_task *t, uint64_t n)
{
	(void)n;
	t->state = GP_TASK_CANCELLED;
	snprintf(t->reason, sizeof(t->reason), "cancelled by admin");
}

static void to_priority(struct gp_task *t, uint64_t n)
{
	t->priority = (unsigned)(n % 10);
	t->compute_pct = 1 + (unsigned)(n % 100);
}

static void to_reason(struct gp_task *t, uint64_t n)
{
	snprintf(t->reason, sizeof(t->reason), "no device fits now (%u)", (unsigned)n);
}

/* A task of the pool's in `state`, picked at random; 0 when none. */
static int64_t pick(struct fixture *f, struct gp_rng *rng, bool running)
{
	struct gp_task *all = NULL;
	int n = 0;
	int64_t id = 0;

	if (running)
		assert_int_equal(gp_store_task_list(f->s, -1, GP_TASK_RUNNING, &all, &n), 0);
	else
		assert_int_equal(gp_store_task_list(f->s, -1, GP_TASK_PENDING, &all, &n), 0);
	if (n)
		id = all[gp_rng_below(rng, (uint64_t)n)].id;
	free(all);
	return id;
}

/* Tenant id's overall quota changed. */
static void tenant_quota_change(struct fixture *f, int64_t id, uint64_t mem_mib)
{
	struct gp_tenant *all = NULL;
	int n = 0;

	assert_int_equal(gp_store_tenant_list(f->s, &all, &n), 0);
	for (int i = 0; i < n; i++)
		if (all[i].id == id) {
			all[i].mem_borrowable_mib = mem_mib;
			assert_int_equal(gp_store_tenant_set_quota(f->s, &all[i]), 0);
			assert_int_equal(gp_pool_tenant_put(f->p, &all[i]), 0);
		}
	free(all);
}

/* A tenant's quota changed: overall, or on a model (set or removed). */
static void quota_change(struct fixture *f, struct gp_rng *rng)
{
	struct gp_model_quota q = { .tenant = f->tenant[gp_rng_below(rng, (uint64_t)f->tenants)],
				    .mem_guaranteed_mib = gp_rng_below(rng, 1 << 16),
				    .compute_guaranteed_pct = 100 };
	struct gp_model_quota *all = NULL;
	int n = 0, r;

	if (gp_rng_below(rng, 3) == 0) {
		tenant_quota_change(f, q.tenant, q.mem_guaranteed_mib);
		return;
	}
	snprintf(q.model, sizeof(q.model), "%s", gp_rng_below(rng, 2) ? "T4" : "A100");
	r = gp_rng_below(rng, 3) ? gp_store_model_quota_set(f->s, &q)
				 : gp_store_model_quota_remove(f->s, q.tenant, q.model);
	assert_true(r == 0 || r == -ENOENT);
	assert_int_equal(gp_store_model_quota_list(f->s, q.tenant, &all, &n), 0);
	assert_int_equal(gp_pool_model_quotas_put(f->p, q.tenant, all, n), 0);
	free(all);
}

/* One change, picked at random, written to the store and then put. */
static void change_one(struct fixture *f, struct gp_rng *rng, uint64_t i)
{
	int64_t tenant = f->tenant[gp_rng_below(rng, (uint64_t)f->tenants)], id;

	switch (gp_rng_below(rng, 10)) {
	case 0: case 1: case 2:
		submit(f, tenant, (unsigned)gp_rng_below(rng, 10), 1 + gp_rng_below(rng, 4096));
		break;
	case 3:
		if ((id = pick(f, rng, false)))
			task_write(f, id, to_running, i);
		break;
	case 4:
		if ((id = pick(f, rng, true)))
			task_write(f, id, gp_rng_below(rng, 2) ? to_ended : to_requeued, i);
		break;
	case 5:
		if ((id = pick(f, rng, false)))
			task_write(f, id, to_cancelled, i);
		break;
	case 6:
		if ((id = pick(f, rng, false)))
			task_write(f, id, to_priority, i);
		break;
	case 7: case 8:
		if ((id = pick(f, rng, gp_rng_below(rng, 2))))
			task_write(f, id, to_reason, i);
		break;
	default:
		quota_change(f, rng);
	}
}

static void test_follows_the_store(void **state)
{
	struct fixture *f = *state;
	struct gp_rng rng;

	gp_rng_init(&rng, 10);
	for (int i = 0; i < TENANTS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "team%d", i);
		tenant_add(f, name, 8);
	}
	for (uint64_t i = 0; i < BURST; i++) {
		change_one(f, &rng, i);
		if (i % 500 == 499)
			assert_follows(f);
	}
	assert_follows(f);
}

/* A change the store did not get is a difference: the check can fail. */
static void test_compare_sees_a_difference(void **state)
{
	struct fixture *f = *state;
	int64_t id = submit(f, tenant_add(f, "team", 8), 5, 100);
	struct gp_pool *fresh = NULL;
	struct gp_task t;
	char why[256];

	assert_follows(f);
	assert_int_equal(gp_store_task_get(f->s, id, &t), 0);
	t.priority = 9; /* put, never written */
	assert_int_equal(gp_pool_task_put(f->p, &t), 0);
	assert_int_equal(gp_pool_load(f->s, &fresh), 0);
	assert_int_equal(gp_pool_compare(f->p, fresh, why, sizeof(why)), -EDOM);
	assert_non_null(strstr(why, "priority"));
	gp_pool_free(fresh);
}

static void test_queue_order_and_pages(void **state)
{
	struct fixture *f = *state;
	int64_t a = tenant_add(f, "a", 8), b = tenant_add(f, "b", 8);
	struct gp_pool_task page[8];
	int position[8], n = 0, length = 0, queued, running;
	int64_t low = submit(f, a, 1, 10), high = submit(f, b, 9, 10), mid = submit(f, a, 5, 10);
	int64_t mid2 = submit(f, b, 5, 10);

	assert_int_equal(gp_pool_queue_page(f->p, -1, 0, 0, 8, page, position, &n, &length), 0);
	assert_int_equal(n, 4);
	assert_int_equal(length, 4);
	assert_int_equal(page[0].id, high);
	assert_int_equal(page[1].id, mid);
	assert_int_equal(page[2].id, mid2);
	assert_int_equal(page[3].id, low);
	/* Tenant a's, after position 1: positions in the whole queue. */
	assert_int_equal(gp_pool_queue_page(f->p, a, 0, 1, 1, page, position, &n, &length), 0);
	assert_int_equal(n, 1);
	assert_int_equal(page[0].id, mid);
	assert_int_equal(position[0], 2);
	/* A priority change moves a task. */
	task_write(f, low, to_priority, 9);
	assert_int_equal(gp_pool_queue_page(f->p, -1, 0, 0, 1, page, position, &n, &length), 0);
	assert_int_equal(page[0].id, low);
	gp_pool_counts(f->p, a, &queued, &running);
	assert_int_equal(queued, 2);
	task_write(f, mid, to_running, 1);
	gp_pool_counts(f->p, a, &queued, &running);
	assert_int_equal(queued, 1);
	assert_int_equal(running, 1);
	gp_pool_counts(f->p, -1, &queued, &running);
	assert_int_equal(queued, 3);
	assert_follows(f);
}

/* Which changes a pass must look at: all of the queue, one task, none. */
static void test_what_needs_a_pass(void **state)
{
	struct fixture *f = *state;
	int64_t a = tenant_add(f, "a", 8), id, other;
	uint64_t gen, full, gen2, full2;
	struct gp_pool_view v;
	struct gp_tenant t;

	id = submit(f, a, 5, 10);
	other = submit(f, a, 5, 10);
	gen = gp_pool_gen(f->p, &full);
	task_write(f, id, to_reason, 1);                /* a reason: nothing */
	assert_int_equal(gp_pool_gen(f->p, &full2), gen);
	task_write(f, id, to_priority, 7);              /* one task */
	gen2 = gp_pool_gen(f->p, &full2);
	assert_true(gen2 > gen);
	assert_int_equal(full2, full);
	assert_int_equal(gp_pool_view_init(f->p, GP_POOL_CHANGED, gen, &v), 0);
	assert_int_equal(v.n_queued, 1);                /* that one only */
	assert_int_equal(v.queued[0].id, id);
	gp_pool_view_release(&v);
	task_write(f, other, to_cancelled, 0);          /* a queued cancel: nothing */
	assert_int_equal(gp_pool_gen(f->p, &full2), gen2);
	task_write(f, id, to_running, 0);               /* a start: everything */
	gen = gp_pool_gen(f->p, &full);
	assert_int_equal(full, gen);
	assert_int_equal(gp_store_tenant_by_name(f->s, "a", &t), 0);
	t.mem_borrowable_mib = 1024;                    /* a quota: everything */
	assert_int_equal(gp_store_tenant_set_quota(f->s, &t), 0);
	assert_int_equal(gp_pool_tenant_put(f->p, &t), 0);
	assert_true(gp_pool_gen(f->p, &full2) > gen);
	assert_true(full2 > full);
	assert_follows(f);
}

/* A view of what changed lists each task that changed since the last
 * view once, while it is queued, whatever its place in the queue. */
static void test_view_of_changes(void **state)
{
	struct fixture *f = *state;
	int64_t a = tenant_add(f, "a", 8), old = submit(f, a, 5, 10), x, y, z;
	struct gp_pool_view v;
	uint64_t since;

	assert_int_equal(gp_pool_view_init(f->p, GP_POOL_ALL, 0, &v), 0);
	assert_int_equal(v.n_queued, 1);
	since = v.gen;
	gp_pool_view_release(&v);
	x = submit(f, a, 1, 10);
	y = submit(f, a, 9, 10);
	z = submit(f, a, 5, 10);
	task_write(f, x, to_priority, 7);       /* twice: once in the view */
	task_write(f, z, to_running, 0);        /* started: not queued */
	assert_int_equal(gp_pool_view_init(f->p, GP_POOL_CHANGED, since, &v), 0);
	assert_int_equal(v.n_queued, 2);        /* in the order of their last change */
	assert_int_equal(v.queued[0].id, y);
	assert_int_equal(v.queued[1].id, x);
	assert_int_equal(v.n_running, 1);
	since = v.gen;
	gp_pool_view_release(&v);
	assert_int_equal(gp_pool_view_init(f->p, GP_POOL_CHANGED, since, &v), 0);
	assert_int_equal(v.n_queued, 0);        /* nothing since */
	gp_pool_view_release(&v);
	(void)old;
}

static void test_loop_flags(void **state)
{
	struct fixture *f = *state;
	int64_t id = submit(f, tenant_add(f, "a", 8), 5, 10);
	struct gp_pool_task t;
	int64_t ids[4];

	assert_int_equal(gp_pool_task_cancel(f->p, id, "a"), -ENOENT);  /* queued */
	task_write(f, id, to_running, 0);
	assert_int_equal(gp_pool_task_borrowed(f->p, id, true), 0);
	assert_int_equal(gp_pool_task_cancel(f->p, id, "a"), 0);
	assert_int_equal(gp_pool_task_cancel(f->p, id, "b"), 1);
	assert_true(gp_pool_cancelling(f->p, id));
	assert_int_equal(gp_pool_cancels_take(f->p, ids, 4), 1);
	assert_int_equal(ids[0], id);
	assert_int_equal(gp_pool_cancels_take(f->p, ids, 4), 0);        /* sent once */
	task_write(f, id, to_reason, 3);                                /* still running */
	assert_int_equal(gp_pool_task_get(f->p, id, &t), 0);
	assert_string_equal(t.cancel_by, "a");
	assert_true(t.borrowed);
	task_write(f, id, to_requeued, 0);                              /* flags go */
	assert_int_equal(gp_pool_task_get(f->p, id, &t), 0);
	assert_false(t.borrowed);
	assert_string_equal(t.cancel_by, "");
	task_write(f, id, to_running, 0);
	task_write(f, id, to_ended, 1);
	assert_int_equal(gp_pool_task_get(f->p, id, &t), -ENOENT);
	assert_follows(f);
}

static void test_held_and_released(void **state)
{
	struct fixture *f = *state;
	int64_t a = tenant_add(f, "a", 8), first = submit(f, a, 5, 10), waits;
	struct gp_task t = { .tenant = a, .priority = 9, .mem_mib = 10, .compute_pct = 10,
			     .devices = 1 };
	struct gp_pool *fresh = NULL;
	struct gp_pool_task held[4];
	struct gp_pool_view v;
	uint64_t ends;

	snprintf(t.name, sizeof(t.name), "after");
	snprintf(t.after, sizeof(t.after), "%lld:ok", (long long)first);
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	assert_int_equal(gp_pool_task_put(f->p, &t), 0);
	waits = t.id;
	assert_int_equal(gp_pool_held(f->p, held, 4), 1);
	assert_int_equal(held[0].id, waits);
	assert_string_equal(held[0].after, t.after);
	assert_int_equal(gp_pool_view_init(f->p, GP_POOL_ALL, 0, &v), 0);
	assert_int_equal(v.n_queued, 1); /* the held one is in no pass */
	assert_int_equal(v.queued[0].id, first);
	gp_pool_view_release(&v);
	assert_int_equal(gp_pool_load(f->s, &fresh), 0); /* a restart holds it again */
	assert_int_equal(gp_pool_held(fresh, held, 4), 1);
	gp_pool_free(fresh);
	ends = gp_pool_ends(f->p);
	task_write(f, first, to_cancelled, 0);
	assert_int_equal(gp_pool_ends(f->p), ends + 1); /* what a held one waits for */
	assert_int_equal(gp_pool_task_release(f->p, waits), 0);
	assert_int_equal(gp_pool_held(f->p, held, 4), 0);
	assert_int_equal(gp_pool_view_init(f->p, GP_POOL_ALL, 0, &v), 0);
	assert_int_equal(v.n_queued, 1);
	assert_int_equal(v.queued[0].id, waits);
	gp_pool_view_release(&v);
	assert_follows(f);
}

static void test_times_up(void **state)
{
	struct fixture *f = *state;
	struct gp_task t = { .tenant = tenant_add(f, "a", 8), .mem_mib = 10, .compute_pct = 10,
			     .devices = 1, .time_limit_s = 2 };
	struct gp_pool_task up[4], got;
	int64_t ids[4];

	snprintf(t.name, sizeof(t.name), "limited");
	assert_int_equal(gp_store_task_add(f->s, &t), 0);
	assert_int_equal(gp_pool_task_put(f->p, &t), 0);
	assert_int_equal(gp_pool_times_up(f->p, t.created + 10000, up, 4), 0); /* queued */
	task_write(f, t.id, to_running, 0);
	assert_int_equal(gp_pool_task_get(f->p, t.id, &got), 0);
	assert_int_equal(gp_pool_times_up(f->p, got.started + 1999, up, 4), 0);
	assert_int_equal(gp_pool_times_up(f->p, got.started + 2000, up, 4), 1);
	assert_int_equal(up[0].id, t.id);
	assert_int_equal(gp_pool_times_up(f->p, got.started + 9000, up, 4), 0); /* once */
	assert_int_equal(gp_pool_task_get(f->p, t.id, &got), 0);
	assert_true(got.time_up);
	assert_string_equal(got.cancel_by, "server");
	assert_int_equal(gp_pool_cancels_take(f->p, ids, 4), 1);
	task_write(f, t.id, to_requeued, 0); /* flags go */
	assert_int_equal(gp_pool_task_get(f->p, t.id, &got), 0);
	assert_false(got.time_up);
	assert_follows(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_follows_the_store, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compare_sees_a_difference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_order_and_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_what_needs_a_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_of_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_and_released, setup, teardown),
		cmocka_unit_test_setup_teardown(test_times_up, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
