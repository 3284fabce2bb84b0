/* peers.h — what the HTTP front (http.c) remembers of each
 * client, and the rules it applies to them: the connections a client
 * holds, the unknown tokens it sent and the wait they earn, whether it
 * presented a good token lately, and which client gives up a connection
 * when the listener is full.
 *
 * A client is a uid where the peer is on this machine (on TCP from any
 * 127.x.y.z or ::1, the uid that owns the peer's socket, whatever its
 * address, so that a task cannot become many clients by taking many
 * loopback addresses; on the Unix socket, the peer's credentials, a
 * client apart from the same uid on TCP, so that nothing done on TCP
 * makes the socket wait), else its address. A loopback peer whose owner
 * could not be found is the one client "loopback, uid unknown".
 *
 * Invariants: a client with a connection open has its entry; the table
 * has a fixed size, made once, and an entry without connections is
 * reused (the least recently seen first) when a new client needs room,
 * so that memory stays bounded whoever connects. Nothing here locks or
 * reads a clock: the caller holds its own lock around every call and
 * gives the time (CLOCK_MONOTONIC ms), so that tests drive it.
 *
 * Ownership: the table owns its entries; a struct gp_peer * stays valid
 * while its client has a connection counted in it (open or over), and
 * until the next gp_peers_get otherwise. */
#ifndef GP_BASE_PEERS_H
#define GP_BASE_PEERS_H

#include <stdbool.h>
#include <stdint.h>

#define GP_PEER_LISTENERS 2 /* each counted apart: 0 the Unix socket, 1 TCP */

/* Unknown tokens: this many from one client cost nothing; from the next
 * on, each makes its requests with a token wait, GP_PEER_WAIT_FIRST_MS
 * after the first, twice as long after each next, at most
 * GP_PEER_WAIT_MAX_MS. A client is forgiven GP_PEER_FORGET_MS after its
 * last unknown token. */
#define GP_PEER_FAILS_FREE    5
#define GP_PEER_WAIT_FIRST_MS 1000
#define GP_PEER_WAIT_MAX_MS   60000
#define GP_PEER_FORGET_MS     (15 * 60 * 1000)
/* A client that presented a good token is "known" for this long. */
#define GP_PEER_KNOWN_MS (10 * 60 * 1000)

enum gp_peer_kind {
	GP_PEER_UID,	/* on TCP from loopback: uid (-1: owner unknown) */
	GP_PEER_SOCKET, /* on the Unix socket: uid */
	GP_PEER_ADDR,	/* elsewhere: family and address */
};

struct gp_peer_key {
	enum gp_peer_kind kind;
	int family;		/* GP_PEER_ADDR: AF_INET or AF_INET6 */
	unsigned char addr[16]; /* GP_PEER_ADDR: 4 bytes for AF_INET, rest 0 */
	long long uid;		/* GP_PEER_UID, GP_PEER_SOCKET */
};

/* One client. The counts are the caller's to keep (per listener); the
 * rest is kept by the functions below. */
struct gp_peer {
	struct gp_peer_key key;
	unsigned open[GP_PEER_LISTENERS];    /* admitted connections */
	unsigned waiting[GP_PEER_LISTENERS]; /* of them, waiting for a request's headers */
	unsigned over[GP_PEER_LISTENERS];    /* over a bound, being answered 503 */
	unsigned fails;			     /* unknown tokens since it was last forgiven */
	int64_t fail_last_ms, wait_until_ms, known_until_ms, seen_ms;
	bool used;			     /* the entry holds a client */
};

struct gp_peers;

/* A table for at most `capacity` clients at once. -ENOMEM, -EINVAL for 0. */
int gp_peers_new(unsigned capacity, struct gp_peers **ret);
struct gp_peers *gp_peers_free(struct gp_peers *p);

/* The entry of key, made when new (its counts 0); NULL when every entry
 * holds a client with connections. Marks it seen at now. */
struct gp_peer *gp_peers_get(struct gp_peers *p, const struct gp_peer_key *key,
			     int64_t now);

bool gp_peer_key_same(const struct gp_peer_key *a, const struct gp_peer_key *b);

/* An unknown token came from peer at now: returns how many since it was
 * last forgiven, this one included, and sets the wait it earns. */
unsigned gp_peer_token_failed(struct gp_peer *peer, int64_t now);

/* A good token came from peer at now: it is known for GP_PEER_KNOWN_MS.
 * (Its unknown tokens are not forgiven: a client with a token of its
 * own would otherwise try others between two good ones.) */
void gp_peer_token_good(struct gp_peer *peer, int64_t now);

/* How long peer's requests with a token still wait, in ms; 0: none. */
int64_t gp_peer_wait_ms(const struct gp_peer *peer, int64_t now);

bool gp_peer_is_known(const struct gp_peer *peer, int64_t now);

/* The listener `l` is full and `me` opens one more connection: the
 * client that gives up one of its connections waiting for a request's
 * headers (the slow ones, and idle kept-alive ones), or NULL when none
 * should, and me is refused. A client that is not known gives up first,
 * and one holding the most such connections; one known never gives up
 * for one that is not; otherwise a client gives up only for one holding
 * fewer connections than it has waiting, so a client can never take the
 * place of another as greedy as itself. */
struct gp_peer *gp_peers_victim(struct gp_peers *p, unsigned l, const struct gp_peer *me,
				int64_t now);

#endif
