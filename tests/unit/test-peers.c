/* test-peers.c — the HTTP front's clients (src/server/peers.c): who is
 * the same client (a uid on loopback whatever its address, the same uid
 * on the Unix socket apart, a remote address); the table's bound (an
 * entry without connections reused, the least recently seen first; none
 * when all have connections); unknown tokens (5 free, then a wait that
 * doubles from 1 s up to 60 s, forgiven 15 minutes after the last, not
 * by a good token); which client gives up a waiting connection when a
 * listener is full (not known first, the one holding most; never one
 * known for one that is not; never for a client as greedy as itself). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "base/peers.h"

#define TCP 1

static struct gp_peer_key uid_key(long long uid)
{
	return (struct gp_peer_key){.kind = GP_PEER_UID, .uid = uid};
}

static struct gp_peer_key addr_key(unsigned char last)
{
	struct gp_peer_key k = {.kind = GP_PEER_ADDR, .family = AF_INET};

	k.addr[0] = 10;
	k.addr[3] = last;
	return k;
}

static void test_same(void **state)
{
	struct gp_peer_key a = uid_key(1000), b = uid_key(1000), c = uid_key(1001);
	struct gp_peer_key sock = {.kind = GP_PEER_SOCKET, .uid = 1000};
	struct gp_peer_key r1 = addr_key(7), r2 = addr_key(7), r3 = addr_key(8);

	(void)state;
	assert_true(gp_peer_key_same(&a, &b));
	assert_false(gp_peer_key_same(&a, &c));
	assert_false(gp_peer_key_same(&a, &sock));
	assert_true(gp_peer_key_same(&r1, &r2));
	assert_false(gp_peer_key_same(&r1, &r3));
	assert_false(gp_peer_key_same(&r1, &a));
}

static void test_table_bound(void **state)
{
	struct gp_peers *p = NULL;
	struct gp_peer_key k1 = uid_key(1), k2 = uid_key(2), k3 = uid_key(3);
	struct gp_peer *e1, *e2, *e3;

	(void)state;
	assert_int_equal(gp_peers_new(0, &p), -EINVAL);
	assert_int_equal(gp_peers_new(2, &p), 0);
	e1 = gp_peers_get(p, &k1, 100);
	e2 = gp_peers_get(p, &k2, 200);
	assert_non_null(e1);
	assert_non_null(e2);
	assert_ptr_equal(gp_peers_get(p, &k1, 300), e1);
	e1->open[TCP] = 1;
	e2->over[TCP] = 1;
	assert_null(gp_peers_get(p, &k3, 400)); /* both have connections */
	e2->over[TCP] = 0;
	gp_peer_token_failed(e2, 400);
	e3 = gp_peers_get(p, &k3, 500); /* e2's entry, its memory dropped */
	assert_ptr_equal(e3, e2);
	assert_true(gp_peer_key_same(&e3->key, &k3));
	assert_int_equal(e3->fails, 0);
	assert_int_equal(e3->open[TCP], 0);
	p = gp_peers_free(p);
	assert_null(p);
}

static void test_token_waits(void **state)
{
	static const int64_t waits[] = {1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000};
	struct gp_peer e = {0};
	int64_t now = 1000000;

	(void)state;
	for (unsigned i = 1; i <= GP_PEER_FAILS_FREE; i++) {
		assert_int_equal(gp_peer_token_failed(&e, now), i);
		assert_int_equal(gp_peer_wait_ms(&e, now), 0);
	}
	for (unsigned i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		assert_int_equal(gp_peer_token_failed(&e, now), GP_PEER_FAILS_FREE + 1 + i);
		assert_int_equal(gp_peer_wait_ms(&e, now), waits[i]);
		assert_int_equal(gp_peer_wait_ms(&e, now + waits[i]), 0);
		now += waits[i];
	}
	/* A good token forgives nothing; 15 minutes without a failure do. */
	gp_peer_token_good(&e, now);
	assert_true(gp_peer_is_known(&e, now));
	assert_int_equal(gp_peer_token_failed(&e, now), GP_PEER_FAILS_FREE + 9);
	assert_int_equal(gp_peer_wait_ms(&e, now), GP_PEER_WAIT_MAX_MS);
	now += GP_PEER_FORGET_MS;
	assert_int_equal(gp_peer_token_failed(&e, now), 1);
	assert_int_equal(gp_peer_wait_ms(&e, now), 0);
	assert_false(gp_peer_is_known(&e, now + GP_PEER_KNOWN_MS));
}

/* Three clients on TCP: a holds `a` waiting connections, b `b`; me opens. */
struct scene {
	struct gp_peers *p;
	struct gp_peer *a, *b, *me;
};

static void scene_make(struct scene *s, unsigned a, unsigned b, unsigned mine)
{
	struct gp_peer_key ka = uid_key(10), kb = uid_key(11), km = uid_key(12);

	assert_int_equal(gp_peers_new(8, &s->p), 0);
	s->a = gp_peers_get(s->p, &ka, 0);
	s->b = gp_peers_get(s->p, &kb, 0);
	s->me = gp_peers_get(s->p, &km, 0);
	s->a->open[TCP] = s->a->waiting[TCP] = a;
	s->b->open[TCP] = s->b->waiting[TCP] = b;
	s->me->open[TCP] = s->me->waiting[TCP] = mine;
}

static void test_victim(void **state)
{
	struct scene s;

	(void)state;
	/* The one holding most gives up, for a client holding fewer. */
	scene_make(&s, 64, 30, 0);
	assert_ptr_equal(gp_peers_victim(s.p, TCP, s.me, 1), s.a);
	assert_null(gp_peers_victim(s.p, 0, s.me, 1)); /* nothing waits on the socket */
	/* Never for a client as greedy: me holds as many as a has waiting. */
	s.me->open[TCP] = 64;
	assert_null(gp_peers_victim(s.p, TCP, s.me, 1));
	/* ... nor itself: a's next connection finds b (30 < 64) not greedier. */
	assert_null(gp_peers_victim(s.p, TCP, s.a, 1));
	s.a->waiting[TCP] = 10; /* a's requests are in: its connections work */
	s.me->open[TCP] = 20;
	assert_ptr_equal(gp_peers_victim(s.p, TCP, s.me, 1), s.b);
	gp_peers_free(s.p);

	/* A client known lately (a good token) keeps its waiting
	 * connections from one that is not, and takes one from it. */
	scene_make(&s, 64, 0, 64);
	gp_peer_token_good(s.a, 0);
	assert_null(gp_peers_victim(s.p, TCP, s.me, 1));
	gp_peer_token_good(s.me, 0);
	s.a->known_until_ms = 0;
	assert_ptr_equal(gp_peers_victim(s.p, TCP, s.me, 1), s.a);
	/* ... and the not known give up before the known. */
	s.b->open[TCP] = s.b->waiting[TCP] = 100;
	gp_peer_token_good(s.b, 0);
	s.me->open[TCP] = 0;
	assert_ptr_equal(gp_peers_victim(s.p, TCP, s.me, 1), s.a);
	gp_peers_free(s.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_table_bound),
		cmocka_unit_test(test_token_waits),
		cmocka_unit_test(test_victim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
