/* peers.c — the HTTP front's clients (see peers.h): a fixed array
 * searched in order. It holds a few hundred clients at most (every
 * connection's, bounded by the listeners' limits, and those remembered
 * for their unknown tokens), so a search costs microseconds, less than
 * the accept it goes with. */
#include "base/peers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct gp_peers {
	unsigned capacity;
	struct gp_peer entry[];
};

int gp_peers_new(unsigned capacity, struct gp_peers **ret)
{
	struct gp_peers *p;

	if (!capacity || !ret)
		return -EINVAL;
	p = calloc(1, sizeof(*p) + capacity * sizeof(p->entry[0]));
	if (!p)
		return -ENOMEM;
	p->capacity = capacity;
	*ret = p;
	return 0;
}

struct gp_peers *gp_peers_free(struct gp_peers *p)
{
	free(p);
	return NULL;
}

bool gp_peer_key_same(const struct gp_peer_key *a, const struct gp_peer_key *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind != GP_PEER_ADDR)
		return a->uid == b->uid;
	return a->family == b->family && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static bool has_connections(const struct gp_peer *e)
{
	for (unsigned l = 0; l < GP_PEER_LISTENERS; l++)
		if (e->open[l] || e->over[l])
			return true;
	return false;
}

/* The entry a new client takes: a free one, else the least recently
 * seen of those without connections; NULL when all have some. */
static struct gp_peer *entry_free(struct gp_peers *p)
{
	struct gp_peer *oldest = NULL;

	for (unsigned i = 0; i < p->capacity; i++) {
		struct gp_peer *e = &p->entry[i];

		if (!e->used)
			return e;
		if (!has_connections(e) && (!oldest || e->seen_ms < oldest->seen_ms))
			oldest = e;
	}
	return oldest;
}

struct gp_peer *gp_peers_get(struct gp_peers *p, const struct gp_peer_key *key,
			     int64_t now)
{
	struct gp_peer *e = NULL;

	for (unsigned i = 0; i < p->capacity && !e; i++)
		if (p->entry[i].used && gp_peer_key_same(&p->entry[i].key, key))
			e = &p->entry[i];
	if (!e) {
		e = entry_free(p);
		if (!e)
			return NULL;
		memset(e, 0, sizeof(*e));
		e->key = *key;
		e->used = true;
	}
	e->seen_ms = now;
	return e;
}

unsigned gp_peer_token_failed(struct gp_peer *peer, int64_t now)
{
	unsigned beyond;
	int64_t wait = GP_PEER_WAIT_FIRST_MS;

	if (peer->fails && now - peer->fail_last_ms >= GP_PEER_FORGET_MS)
		peer->fails = 0;
	peer->fails++;
	peer->fail_last_ms = now;
	if (peer->fails <= GP_PEER_FAILS_FREE)
		return peer->fails;
	beyond = peer->fails - GP_PEER_FAILS_FREE - 1;
	while (beyond-- && wait < GP_PEER_WAIT_MAX_MS)
		wait *= 2;
	peer->wait_until_ms = now + (wait < GP_PEER_WAIT_MAX_MS ? wait : GP_PEER_WAIT_MAX_MS);
	return peer->fails;
}

void gp_peer_token_good(struct gp_peer *peer, int64_t now)
{
	peer->known_until_ms = now + GP_PEER_KNOWN_MS;
}

int64_t gp_peer_wait_ms(const struct gp_peer *peer, int64_t now)
{
	return peer->wait_until_ms > now ? peer->wait_until_ms - now : 0;
}

bool gp_peer_is_known(const struct gp_peer *peer, int64_t now)
{
	return peer->known_until_ms > now;
}

/* Whether v should give up a waiting connection on listener l for me. */
static bool gives_up(const struct gp_peer *v, unsigned l, const struct gp_peer *me,
		     int64_t now)
{
	bool v_known = gp_peer_is_known(v, now), me_known = gp_peer_is_known(me, now);

	if (v == me || !v->waiting[l] || (v_known && !me_known))
		return false;
	return (me_known && !v_known) || v->waiting[l] > me->open[l];
}

/* Whether a gives up before b: not known first, then the most waiting. */
static bool before(const struct gp_peer *a, const struct gp_peer *b, unsigned l, int64_t now)
{
	bool a_known = gp_peer_is_known(a, now), b_known = gp_peer_is_known(b, now);

	if (a_known != b_known)
		return !a_known;
	return a->waiting[l] > b->waiting[l];
}

struct gp_peer *gp_peers_victim(struct gp_peers *p, unsigned l, const struct gp_peer *me,
				int64_t now)
{
	struct gp_peer *best = NULL;

	if (l >= GP_PEER_LISTENERS)
		return NULL;
	for (unsigned i = 0; i < p->capacity; i++) {
		struct gp_peer *e = &p->entry[i];

		if (e->used && gives_up(e, l, me, now) && (!best || before(e, best, l, now)))
			best = e;
	}
	return best;
}
