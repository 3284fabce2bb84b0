/* http.c — the HTTP front on libmicrohttpd (see http.h).
 *
 * Each listener is one MHD daemon with its own polling thread; a mutex
 * makes the handlers take turns, so the layers below see one caller at a
 * time. MHD calls on_request several times per request: first with no
 * body (we set up the state of the request), then with each piece of the
 * body (kept up to the cap), and last with nothing more, when we route
 * the request and queue the reply. on_completed frees the state.
 *
 * Connections: MHD tells on_connection of each one it opens and closes.
 * We keep each open one (its socket, its client, its deadline) in its
 * listener's list, count them against the bounds when it opens, and a
 * watchdog thread shuts down (shutdown(2)) the socket of one past its
 * deadline: MHD's next read of it sees the end, and MHD closes it.
 * MHD_OPTION_CONNECTION_TIMEOUT alone would not do, since every byte
 * resets it: a client sending a header line every few seconds would hold
 * its connection for ever. MHD calls on_connection(CLOSED) before it
 * closes the socket (libmicrohttpd 0.9.75, daemon.c:
 * MHD_cleanup_connections and new_connection_process_), and the list and
 * the watchdog's shutdown both run under conns_lock, so the watchdog
 * never shuts down a descriptor number that MHD has closed and the
 * process may have reused.
 *
 * Each connection counts in its client's entry of the peers table
 * (peers.h, also under conns_lock): its open, waiting and over-bound
 * connections per listener, which make the bound per client O(1) and
 * tell, when a listener is full, which waiting connection gives up its
 * place (room_make). Once a request's headers are in, what can be
 * refused without its body is refused at once and the connection
 * closed (refused_early: 503, 421, 429, 415); after a handler, what it
 * found of the token is noted against the client (token_note). */
#include "base/http.h"
#include "base/peers.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"

#define IDLE_TIMEOUT_S	30  /* MHD's own: no byte at all for this long */
#define WATCH_PERIOD_MS 100 /* how often the watchdog looks at the deadlines */
#define OVER_PER_CLIENT 8   /* a client's connections over a bound, at once */
#define FILES_SPARE	64  /* descriptors for the store, logs, MHD's own */
#define ALLOW_MAX	64
#define SOCKET_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)
#define DIAG_TIMEOUT_MS 100
#define PEERS_SPARE	256 /* clients remembered beyond those connected */
#define LISTENER_UNIX	0   /* a listener's index in a client's counts */
#define LISTENER_TCP	1

/* Who is at the other end of a connection: the client the bounds and
 * the waits count (peers.h), and the address it came from, for the
 * messages. */
struct client {
	struct gp_peer_key key;
	int family;		/* AF_INET, AF_INET6 or AF_UNIX */
	unsigned char addr[16]; /* the peer's address (4 bytes for AF_INET) */
};

/* Which bound a connection is over. */
enum bound { BOUND_NONE, BOUND_CLIENT, BOUND_ALL };

struct listener;

/* An open connection, from MHD's STARTED notice to its CLOSED one. The
 * fields l, fd and who are set before it is in a list and then only
 * read; the others are guarded by conns_lock. */
struct conn {
	struct conn *prev, *next;
	struct listener *l;
	int fd;
	struct client who;
	/* its client's entry (peers.h keeps it while the connection counts
	 * in it); NULL once it gave up its place (room_make) */
	struct gp_peer *peer;
	enum bound over;      /* over a bound: answered 503, short deadline */
	unsigned open_then;   /* what the bound counted when it opened */
	bool counted;	      /* in its listener's admitted and its client's open */
	bool waiting;	      /* counted, and waiting for a request's headers */
	int64_t waiting_ms;   /* since when (CLOCK_MONOTONIC) */
	int64_t deadline_ms;  /* CLOCK_MONOTONIC; past it, the watchdog cuts */
	bool cut;	      /* its socket is shut down */
};

/* A listening socket and its daemon. conns and admitted are guarded by
 * gp_http.conns_lock. */
struct listener {
	struct gp_http *h;
	unsigned index; /* in the clients' counts: LISTENER_UNIX or LISTENER_TCP */
	bool is_unix;
	int fd; /* listening, until the daemon owns it; -1 then */
	struct MHD_Daemon *daemon;
	struct conn *conns; /* the open connections */
	unsigned admitted;  /* those of them counted (not over a bound) */
};

struct gp_http {
	struct gp_http_options o;	   /* with the defaults filled in */
	char socket_path[SOCKET_PATH_MAX]; /* ours to remove; "" until made */
	char *hosts;			   /* o.hosts, copied; NULL: any Host */
	char *hosts_shown;		   /* the same, ", " between names */
	struct listener unix_l, tcp_l;
	const struct gp_http_route *routes;
	size_t routes_n;
	void *ctx;
	pthread_mutex_t lock; /* held while a handler runs */
	/* The connections of both listeners, the clients (peers), the
	 * counts, and the watchdog's stopping; never held while a handler
	 * runs or MHD is called. */
	pthread_mutex_t conns_lock;
	struct gp_peers *peers;
	struct gp_http_counts counts;
	pthread_cond_t wake; /* tells the watchdog to stop */
	pthread_t watchdog;
	bool watching, stopping;
	/* NETLINK_SOCK_DIAG, to find the uid of a loopback TCP peer; used
	 * by the TCP daemon's thread alone. -1: none (diag_error says why). */
	int diag_fd;
	int diag_error;
	uint32_t diag_seq;
};

/* A request being read: the body so far. */
struct incoming {
	char *body; /* NUL-terminated when not NULL */
	size_t len, cap;
	bool too_large;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- replies --------------------------------------------------------- */

void gp_http_json(struct gp_http_reply *ret, unsigned status, json_t *body)
{
	json_decref(ret->body);
	free(ret->text);
	ret->text = NULL;
	ret->status = status;
	ret->body = body;
}

void gp_http_bytes(struct gp_http_reply *ret, unsigned status, char *text, size_t len,
		   const char *content_type)
{
	json_decref(ret->body);
	ret->body = NULL;
	free(ret->text);
	ret->status = status;
	ret->text = text;
	ret->text_len = len;
	ret->content_type = content_type;
}

void gp_http_text(struct gp_http_reply *ret, unsigned status, char *text,
		  const char *content_type)
{
	gp_http_bytes(ret, status, text, text ? strlen(text) : 0, content_type);
}

/* The length of the UTF-8 character at s (n bytes left, RFC 3629, as
 * jansson checks it); 0 when there is none. */
static size_t utf8_char(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
		   : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	uint32_t c = s[0] & (0xffu >> (len + 1));

	if (len == 0 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

void gp_http_error(struct gp_http_reply *ret, unsigned status, const char *fmt, ...)
{
	char message[512];
	size_t n, len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	/* JSON strings are UTF-8, and json_pack fails on anything else (the
	 * reply would go without its message): a byte that is not part of a
	 * character (one cut by the length limit, a path as sent) becomes '?'. */
	n = strlen(message);
	for (size_t i = 0; i < n; i += len)
		if ((len = utf8_char((unsigned char *)message + i, n - i)) == 0) {
			message[i] = '?';
			len = 1;
		}
	gp_http_json(ret, status, json_pack("{s:s}", "error", message));
}

/* The reply's text, or its JSON and a newline, malloc'd (MHD frees it);
 * NULL: none. */
static char *reply_text(const struct gp_http_reply *reply, size_t *ret_len)
{
	char *text, *line;
	size_t len;

	*ret_len = 0;
	if (reply->text) {
		text = malloc(reply->text_len + 1);
		if (text) {
			memcpy(text, reply->text, reply->text_len);
			*ret_len = reply->text_len;
		}
		return text;
	}
	text = reply->body ? json_dumps(reply->body, JSON_COMPACT) : NULL;
	if (!text)
		return NULL;
	len = strlen(text);
	line = realloc(text, len + 2);
	if (!line) {
		free(text);
		return NULL;
	}
	line[len] = '\n';
	line[len + 1] = '\0';
	*ret_len = len + 1;
	return line;
}

static enum MHD_Result send_reply(struct MHD_Connection *conn,
				  const struct gp_http_reply *reply, const char *allow)
{
	size_t len;
	char *text = reply_text(reply, &len);
	struct MHD_Response *resp;
	enum MHD_Result r;

	resp = text ? MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE)
		    : MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				reply->text ? reply->content_type : "application/json");
	if (reply->location[0])
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, reply->location);
	for (int i = 0; i < GP_HTTP_HEADERS_MAX; i++)
		if (reply->header[i].name)
			MHD_add_response_header(resp, reply->header[i].name,
						reply->header[i].value);
	if (reply->status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (reply->status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	r = MHD_queue_response(conn, reply->status, resp);
	MHD_destroy_response(resp);
	return r;
}

/* Server-side failures are logged once, here. */
static void log_failure(const struct gp_http_request *req,
			const struct gp_http_reply *reply)
{
	json_t *error = reply->body ? json_object_get(reply->body, "error") : NULL;

	if (reply->status < 500 || reply->status == 503) /* 503: a full queue, a bound */
		return;
	fprintf(stderr, "gpupool server: %s %s: %u %s\n", req->method, req->path,
		reply->status, json_is_string(error) ? json_string_value(error) : "");
}

/* ---- routing --------------------------------------------------------- */

/* Whether path matches pattern; the number in "{id}" goes to *ret_id;
 * "{name}" matches one non-empty segment (the handler reads it from the
 * path). */
static bool path_matches(const char *pattern, const char *path, int64_t *ret_id)
{
	while (*pattern && *path) {
		if (!strncmp(pattern, "{name}", 6)) {
			size_t n = strcspn(path, "/");

			if (!n)
				return false;
			path += n;
			pattern += 6;
		} else if (!strncmp(pattern, "{id}", 4)) {
			char *end;
			long long v;

			if (!isdigit((unsigned char)*path))
				return false;
			errno = 0;
			v = strtoll(path, &end, 10);
			if (errno || v <= 0)
				return false;
			*ret_id = v;
			path = end;
			pattern += 4;
		} else if (*pattern++ != *path++) {
			return false;
		}
	}
	return !*pattern && !*path;
}

static void allow_add(char *allow, const char *method)
{
	size_t len = strlen(allow);

	snprintf(allow + len, ALLOW_MAX - len, "%s%s", len ? ", " : "", method);
}

/* Finds the route and runs its handler; else 404, or 405 with allow. */
static void route(struct gp_http *h, struct gp_http_request *req,
		  struct gp_http_reply *ret, char *allow)
{
	for (size_t i = 0; i < h->routes_n; i++) {
		const struct gp_http_route *r = &h->routes[i];
		int64_t id = 0;

		if (!path_matches(r->pattern, req->path, &id))
			continue;
		if (strcmp(r->method, req->method) != 0) {
			allow_add(allow, r->method);
			continue;
		}
		req->id = id;
		pthread_mutex_lock(&h->lock);
		r->handler(h->ctx, req, ret);
		pthread_mutex_unlock(&h->lock);
		if (!ret->status)
			gp_http_error(ret, MHD_HTTP_INTERNAL_SERVER_ERROR,
				      "the handler gave no reply");
		return;
	}
	if (allow[0])
		gp_http_error(ret, MHD_HTTP_METHOD_NOT_ALLOWED,
			      "%s is not allowed on %s; use %s", req->method, req->path,
			      allow);
	else
		gp_http_error(ret, MHD_HTTP_NOT_FOUND,
			      "no endpoint %s (docs/api.md lists them)", req->path);
}

/* ---- clients ---------------------------------------------------------- */

/* "uid 1000" (the Unix socket), "uid 1000 on loopback", "loopback, uid
 * unknown", "10.0.0.7". */
static void client_name(const struct client *c, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (c->key.kind == GP_PEER_SOCKET)
		snprintf(buf, size, "uid %lld", c->key.uid);
	else if (c->key.kind == GP_PEER_UID && c->key.uid >= 0)
		snprintf(buf, size, "uid %lld on loopback", c->key.uid);
	else if (c->key.kind == GP_PEER_UID)
		snprintf(buf, size, "loopback, uid unknown");
	else if (inet_ntop(c->family, c->addr, ip, sizeof(ip)))
		snprintf(buf, size, "%s", ip);
	else
		snprintf(buf, size, "?");
}

static bool is_loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) ==
		       127;
	return a->ss_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

/* The address and port of an AF_INET or AF_INET6 socket address, as
 * inet_diag_sockid has them (network order). */
static void diag_end(const struct sockaddr_storage *a, __be32 *ret_addr, __be16 *ret_port)
{
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)a;

		ret_addr[0] = in->sin_addr.s_addr;
		*ret_port = in->sin_port;
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)a;

		memcpy(ret_addr, &in6->sin6_addr, 16);
		*ret_port = in6->sin6_port;
	}
}

/* The uid that owns the TCP socket whose local end is `from` and whose
 * remote end is `to` (both on this machine): one exact NETLINK_SOCK_DIAG
 * request (inet_diag_req_v2, no dump). -errno when it is not found. */
static int diag_uid(struct gp_http *h, const struct sockaddr_storage *from,
		    const struct sockaddr_storage *to, long long *ret_uid)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = {.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST,
			.nlmsg_seq = ++h->diag_seq},
		.req = {.sdiag_family = (uint8_t)from->ss_family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_states = ~0u,
			.id.idiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}},
	};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	union {
		struct nlmsghdr nlh;
		char bytes[1024];
	} reply;
	const struct inet_diag_msg *d = NLMSG_DATA(&reply.nlh);
	ssize_t n;

	if (h->diag_fd < 0)
		return h->diag_error;
	diag_end(from, msg.req.id.idiag_src, &msg.req.id.idiag_sport);
	diag_end(to, msg.req.id.idiag_dst, &msg.req.id.idiag_dport);
	if (sendto(h->diag_fd, &msg, sizeof(msg), 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	/* Answers to earlier requests that timed out come first; skip them. */
	do
		n = recv(h->diag_fd, &reply, sizeof(reply), 0);
	while (n >= (ssize_t)sizeof(reply.nlh) && reply.nlh.nlmsg_seq != h->diag_seq);
	if (n < 0)
		return -errno;
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(*d)) ||
	    reply.nlh.nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(&reply.nlh);

		return reply.nlh.nlmsg_type == NLMSG_ERROR && e->error < 0 ? e->error
									   : -EIO;
	}
	if (reply.nlh.nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return -EIO;
	*ret_uid = d->idiag_uid;
	return 0;
}

/* Opens the socket diag_uid uses and asks it about the listening socket
 * fd itself (its own uid), so that a kernel without inet_diag is found
 * now, once, and not at every connection. */
static void diag_open(struct gp_http *h, int fd)
{
	struct sockaddr_storage local = {0}, none = {0};
	socklen_t len = sizeof(local);
	struct timeval tv = {.tv_usec = DIAG_TIMEOUT_MS * 1000};
	long long uid;

	h->diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (h->diag_fd < 0) {
		h->diag_error = -errno;
		return;
	}
	setsockopt(h->diag_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (getsockname(fd, (struct sockaddr *)&local, &len) < 0)
		h->diag_error = -errno;
	none.ss_family = local.ss_family;
	if (h->diag_error == 0)
		h->diag_error = diag_uid(h, &local, &none, &uid);
	if (h->diag_error < 0) {
		close(h->diag_fd);
		h->diag_fd = -1;
	}
}

/* Who is at the other end of fd: a Unix peer's uid (SO_PEERCRED); a TCP
 * peer on loopback, the uid that owns its socket, looked up by the
 * connection's exact addresses and ports (-1 when it cannot be: every
 * such peer is then one client), whatever loopback address it took;
 * another TCP peer, its address. */
static void client_of(struct gp_http *h, const struct listener *l, int fd,
		      struct client *ret)
{
	struct sockaddr_storage peer = {0}, local = {0};
	socklen_t len = sizeof(peer);

	memset(ret, 0, sizeof(*ret));
	ret->key.kind = GP_PEER_UID;
	ret->key.uid = -1;
	if (l->is_unix) {
		struct ucred cred;
		socklen_t clen = sizeof(cred);

		ret->family = AF_UNIX;
		ret->key.kind = GP_PEER_SOCKET;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
			ret->key.uid = cred.uid;
		return;
	}
	if (getpeername(fd, (struct sockaddr *)&peer, &len) < 0)
		return;
	ret->family = peer.ss_family;
	if (peer.ss_family == AF_INET)
		memcpy(ret->addr, &((struct sockaddr_in *)&peer)->sin_addr, 4);
	else if (peer.ss_family == AF_INET6)
		memcpy(ret->addr, &((struct sockaddr_in6 *)&peer)->sin6_addr, 16);
	else
		return;
	if (!is_loopback(&peer)) {
		ret->key.kind = GP_PEER_ADDR;
		ret->key.family = ret->family;
		memcpy(ret->key.addr, ret->addr, sizeof(ret->addr));
		return;
	}
	len = sizeof(local);
	if (getsockname(fd, (struct sockaddr *)&local, &len) < 0 ||
	    diag_uid(h, &peer, &local, &ret->key.uid) < 0)
		ret->key.uid = -1;
}

/* ---- connections ------------------------------------------------------ */

/* c stops waiting for a request's headers, or starts again (a kept-alive
 * connection between two requests). Called holding conns_lock. */
static void conn_waiting_set(struct conn *c, bool waiting, int64_t now)
{
	unsigned li = c->l->index;

	if (!c->counted || c->waiting == waiting)
		return;
	c->waiting = waiting;
	c->waiting_ms = now;
	if (waiting)
		c->peer->waiting[li]++;
	else
		c->peer->waiting[li]--;
}

/* Takes c out of the counts (it closes, or gives up its place). Called
 * holding conns_lock. */
static void conn_uncount(struct conn *c)
{
	struct listener *l = c->l;

	if (c->counted) {
		conn_waiting_set(c, false, 0);
		c->peer->open[l->index]--;
		l->admitted--;
		c->counted = false;
	} else if (c->over) {
		c->peer->over[l->index]--;
	}
}

/* The oldest connection of peer on l still waiting for its headers,
 * and not cut; NULL: none. */
static struct conn *oldest_waiting(struct listener *l, const struct gp_peer *peer)
{
	struct conn *oldest = NULL;

	for (struct conn *x = l->conns; x; x = x->next)
		if (x->peer == peer && x->waiting && !x->cut &&
		    (!oldest || x->waiting_ms < oldest->waiting_ms))
			oldest = x;
	return oldest;
}

/* l is full and c opens: a connection that is still waiting for its
 * request's headers gives up its place to c, when peers.h's rule finds
 * a client that should give one up (gp_peers_victim). Its socket is
 * shut down, as at a deadline. Called holding conns_lock. */
static bool room_make(struct listener *l, struct conn *c, int64_t now)
{
	struct gp_peer *victim = gp_peers_victim(l->h->peers, l->index, c->peer, now);
	struct conn *x = victim ? oldest_waiting(l, victim) : NULL;

	if (!x)
		return false;
	conn_uncount(x);
	shutdown(x->fd, SHUT_RDWR);
	x->cut = true;
	x->peer = NULL; /* its client's entry may go to another client now */
	l->h->counts.evicted++;
	return true;
}

/* Counts c against its listener's bounds; c is not in the list yet.
 * Called holding conns_lock.
 *  - The bound per client keeps one client (a runaway script, a tenant's
 *    tasks, from one loopback address or many) from taking every
 *    connection from the others, root's CLI among them.
 *  - The overall bound keeps the server's descriptors and memory bounded
 *    whoever connects, below MHD's own limit (which, once reached, drops
 *    new connections unanswered). When it is reached, a connection
 *    still waiting for its request's headers, of a client that holds
 *    more of those than c's client holds connections (or of one that
 *    has not presented a good token lately, where c's has), is closed
 *    to make room: slow connections cannot keep others out, while no
 *    client can push out one as greedy as itself.
 *  - A connection over a bound gets a short deadline and, past
 *    OVER_PER_CLIENT of its client's at once, is cut at once: those it
 *    opens faster than they expire cannot reach MHD's limit either. */
static void conn_admit(struct listener *l, struct conn *c, int64_t now)
{
	const struct gp_http_options *o = &l->h->o;
	struct gp_peer *p = c->peer;

	if (p->open[l->index] >= o->max_client_connections) {
		c->over = BOUND_CLIENT;
		c->open_then = p->open[l->index];
	} else if (l->admitted >= o->max_connections && !room_make(l, c, now)) {
		c->over = BOUND_ALL;
		c->open_then = l->admitted;
	}
	c->deadline_ms = now + (c->over ? GP_HTTP_OVER_BOUND_MS : o->header_timeout_ms);
	if (c->over) {
		l->h->counts.refused++;
		if (p->over[l->index] >= OVER_PER_CLIENT) {
			shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
		}
		p->over[l->index]++;
	} else {
		c->counted = true;
		l->admitted++;
		p->open[l->index]++;
		conn_waiting_set(c, true, now);
	}
	c->next = l->conns;
	if (l->conns)
		l->conns->prev = c;
	l->conns = c;
}

/* MHD opened a connection: track it. One that cannot be tracked is cut,
 * since nothing would bound it. */
static void conn_open(struct listener *l, struct MHD_Connection *mc,
		      void **socket_context)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct gp_http *h = l->h;
	struct conn *c;
	int64_t now = now_ms();

	if (!info)
		return;
	c = calloc(1, sizeof(*c));
	if (c) {
		c->l = l;
		c->fd = info->connect_fd;
		client_of(h, l, c->fd, &c->who);
		pthread_mutex_lock(&h->conns_lock);
		c->peer = gp_peers_get(h->peers, &c->who.key, now);
		if (c->peer)
			conn_admit(l, c, now);
		pthread_mutex_unlock(&h->conns_lock);
	}
	if (!c || !c->peer) {
		shutdown(info->connect_fd, SHUT_RDWR);
		free(c);
		return;
	}
	*socket_context = c;
}

/* MHD is about to close c's socket: forget it first. */
static void conn_close(struct conn *c)
{
	struct listener *l = c->l;

	pthread_mutex_lock(&l->h->conns_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		l->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	conn_uncount(c);
	pthread_mutex_unlock(&l->h->conns_lock);
	free(c);
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_open(cls, mc, socket_context);
	} else if (*socket_context) {
		conn_close(*socket_context);
		*socket_context = NULL;
	}
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* c's request headers are in (waiting false: they have the body
 * deadline from now), or its request ended and it waits for the next
 * one (waiting true: the header deadline). A connection over a bound
 * keeps its short deadline. */
static void conn_phase(struct conn *c, bool waiting)
{
	struct gp_http *h;
	int64_t now;

	if (!c || c->over)
		return;
	h = c->l->h;
	now = now_ms();
	pthread_mutex_lock(&h->conns_lock);
	c->deadline_ms = now + (waiting ? h->o.header_timeout_ms : h->o.body_timeout_ms);
	conn_waiting_set(c, waiting, now);
	pthread_mutex_unlock(&h->conns_lock);
}

/* Shuts down the sockets of l's connections past their deadline. Called
 * holding conns_lock, so that MHD cannot close one meanwhile. */
static void cut_late(struct listener *l, int64_t now)
{
	for (struct conn *c = l->conns; c; c = c->next)
		if (!c->cut && now >= c->deadline_ms) {
			shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
		}
}

static void *watch(void *arg)
{
	struct gp_http *h = arg;
	struct timespec at;

	pthread_mutex_lock(&h->conns_lock);
	while (!h->stopping) {
		cut_late(&h->unix_l, now_ms());
		cut_late(&h->tcp_l, now_ms());
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_nsec += WATCH_PERIOD_MS * 1000000L;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&h->wake, &h->conns_lock, &at);
	}
	pthread_mutex_unlock(&h->conns_lock);
	return NULL;
}

static int watch_start(struct gp_http *h)
{
	int r = pthread_create(&h->watchdog, NULL, watch, h);

	if (r != 0)
		return -r;
	h->watching = true;
	return 0;
}

static void watch_stop(struct gp_http *h)
{
	if (!h->watching)
		return;
	pthread_mutex_lock(&h->conns_lock);
	h->stopping = true;
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->conns_lock);
	pthread_join(h->watchdog, NULL);
	h->watching = false;
}

/* ---- requests -------------------------------------------------------- */

const char *gp_http_query(const struct gp_http_request *req, const char *key)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

static const char *bearer_token(struct MHD_Connection *conn)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);

	if (!v || strncasecmp(v, "Bearer ", 7) != 0)
		return NULL;
	for (v += 7; *v == ' '; v++)
		;
	return *v ? v : NULL;
}

/* Appends a piece of the body, or drops it all once over the cap. */
static void body_take(struct gp_http *h, struct incoming *in, const char *data, size_t n)
{
	if (in->too_large)
		return;
	if (n > h->o.body_max - in->len) {
		in->too_large = true;
		free(in->body);
		in->body = NULL;
		in->len = in->cap = 0;
		return;
	}
	if (in->len + n + 1 > in->cap) {
		size_t cap = in->cap ? in->cap : 4096;
		char *grown;

		while (cap < in->len + n + 1)
			cap *= 2;
		grown = realloc(in->body, cap);
		if (!grown) {
			in->too_large = true; /* cannot hold it; say so */
			return;
		}
		in->body = grown;
		in->cap = cap;
	}
	memcpy(in->body + in->len, data, n);
	in->len += n;
	in->body[in->len] = '\0';
}

/* What a handler found of the token: the client becomes known, or its
 * unknown token is counted (the wait it earns set) and logged, without
 * the token. */
static void token_note(struct conn *c, const struct gp_http_request *req,
		       enum gp_http_token token)
{
	char who[INET6_ADDRSTRLEN + 32] = "?", then[96] = "";
	unsigned fails = 0;
	int64_t now = now_ms(), wait = 0;

	if (token == GP_HTTP_TOKEN_UNCHECKED || !c)
		return;
	pthread_mutex_lock(&c->l->h->conns_lock);
	if (!c->peer) {
		token = GP_HTTP_TOKEN_UNCHECKED; /* it gave up its place: said nowhere */
	} else if (token == GP_HTTP_TOKEN_GOOD) {
		gp_peer_token_good(c->peer, now);
	} else {
		fails = gp_peer_token_failed(c->peer, now);
		wait = gp_peer_wait_ms(c->peer, now);
		c->l->h->counts.token_unknown++;
	}
	pthread_mutex_unlock(&c->l->h->conns_lock);
	if (token != GP_HTTP_TOKEN_UNKNOWN)
		return;
	client_name(&c->who, who, sizeof(who));
	if (wait)
		snprintf(then, sizeof(then), "; its requests with a token now wait %lld s",
			 (long long)(wait + 999) / 1000);
	fprintf(stderr,
		"gpupool server: unknown token from %s on %s: %s %s, a token of %zu "
		"characters; %u from this client in the last %d minutes%s\n",
		who, c->l->is_unix ? "the Unix socket" : "TCP", req->method, req->path,
		strlen(req->token ? req->token : ""), fails, GP_PEER_FORGET_MS / 60000, then);
}

static enum MHD_Result answer(struct listener *l, struct MHD_Connection *conn,
			      const char *url, const char *method, struct incoming *in)
{
	struct gp_http *h = l->h;
	struct gp_http_request req = {
		.method = method,
		.path = url,
		.body = in->body ? in->body : "",
		.body_len = in->len,
		.token = bearer_token(conn),
		.conn = conn,
	};
	struct gp_http_reply reply = {0};
	char allow[ALLOW_MAX] = "";
	enum MHD_Result r;

	if (in->too_large)
		gp_http_error(&reply, MHD_HTTP_CONTENT_TOO_LARGE,
			      "the request body is over %zu bytes; send less",
			      h->o.body_max);
	else
		route(h, &req, &reply, allow);
	log_failure(&req, &reply);
	token_note(conn_of(conn), &req, reply.token);
	r = send_reply(conn, &reply, allow);
	json_decref(reply.body);
	free(reply.text);
	return r;
}

/* ---- what is refused as soon as the headers are in ------------------------ */

/* A refusal sent as soon as the request's headers are in, before its
 * body is read: the connection is closed once it is sent. */
static enum MHD_Result answer_now(struct MHD_Connection *mc, struct gp_http_reply *reply)
{
	enum MHD_Result r;

	reply->header[1].name = MHD_HTTP_HEADER_CONNECTION;
	snprintf(reply->header[1].value, sizeof(reply->header[1].value), "close");
	r = send_reply(mc, reply, "");
	json_decref(reply->body);
	return r;
}

/* The 503 of a connection over a bound. */
static void refuse_over(const struct conn *c, struct gp_http_reply *reply)
{
	const struct gp_http_options *o = &c->l->h->o;
	char who[INET6_ADDRSTRLEN + 32];

	if (c->over == BOUND_ALL) {
		gp_http_error(reply, MHD_HTTP_SERVICE_UNAVAILABLE,
			      "too many connections: %u are open on the server's %s, its "
			      "bound (--max-connections %u); retry in a few seconds",
			      c->open_then, c->l->is_unix ? "Unix socket" : "TCP port",
			      o->max_connections);
	} else {
		client_name(&c->who, who, sizeof(who));
		gp_http_error(reply, MHD_HTTP_SERVICE_UNAVAILABLE,
			      "too many connections from this client (%s): %u are open, "
			      "its bound (--max-client-connections %u); close idle "
			      "connections, then retry",
			      who, c->open_then, o->max_client_connections);
	}
	reply->header[0].name = MHD_HTTP_HEADER_RETRY_AFTER;
	snprintf(reply->header[0].value, sizeof(reply->header[0].value), "1");
}

/* The name of a Host header's value, without its port, into buf
 * ("[::1]:8470" gives "[::1]", "gpu1.:8470" "gpu1"); false when it has
 * none or it does not fit. */
static bool host_name(const char *host, char *buf, size_t size)
{
	size_t len = strlen(host);
	size_t n = host[0] == '[' ? strcspn(host, "]") + 1 : strcspn(host, ":");

	if (n > len || n == 0 || n >= size)
		return false;
	memcpy(buf, host, n);
	if (n > 1 && buf[n - 1] == '.')
		n--;
	buf[n] = '\0';
	return true;
}

/* Whether the Host header (NULL: none) names this server. */
static bool host_allowed(const struct gp_http *h, const char *host)
{
	char name[256];
	size_t n;

	if (!h->hosts || !host)
		return true;
	if (!host_name(host, name, sizeof(name)))
		return false;
	n = strlen(name);
	for (const char *p = h->hosts; *p; p += strcspn(p, ","), p += *p == ',') {
		size_t len = strcspn(p, ",");

		if (len == n && !strncasecmp(p, name, n))
			return true;
	}
	return false;
}

/* Whether the request comes with a body: a Content-Length other than 0,
 * or a Transfer-Encoding (chunked). */
static bool has_body(struct MHD_Connection *mc)
{
	const char *length = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_CONTENT_LENGTH);

	if (MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
					MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return true;
	return length && strspn(length, "0 \t") != strlen(length);
}

/* "application/json", in any case, alone or with parameters. */
static bool is_json_type(const char *type)
{
	size_t n;

	if (!type)
		return false;
	type += strspn(type, " \t");
	n = strcspn(type, "; \t");
	return n == 16 && !strncasecmp(type, "application/json", 16);
}

/* The 429 of a client that waits after unknown tokens; false when it
 * does not wait. */
static bool refuse_waiting(struct conn *c, struct gp_http_reply *reply)
{
	char who[INET6_ADDRSTRLEN + 32];
	int64_t wait;
	unsigned fails;

	pthread_mutex_lock(&c->l->h->conns_lock);
	wait = c->peer ? gp_peer_wait_ms(c->peer, now_ms()) : 0;
	fails = c->peer ? c->peer->fails : 0;
	if (wait)
		c->l->h->counts.token_waiting++;
	pthread_mutex_unlock(&c->l->h->conns_lock);
	if (!wait)
		return false;
	client_name(&c->who, who, sizeof(who));
	gp_http_error(reply, MHD_HTTP_TOO_MANY_REQUESTS,
		      "%u unknown tokens from this client (%s) in the last %d minutes: its "
		      "requests with a token wait %lld s more; check the token (the "
		      "gpupool command reads $GPUPOOL_TOKEN or --token-file)",
		      fails, who, GP_PEER_FORGET_MS / 60000, (long long)(wait + 999) / 1000);
	reply->header[0].name = MHD_HTTP_HEADER_RETRY_AFTER;
	snprintf(reply->header[0].value, sizeof(reply->header[0].value), "%lld",
		 (long long)(wait + 999) / 1000);
	return true;
}

/* The 421 of a request on TCP whose Host is not one of the server's
 * names; false when it is one. */
static bool refuse_host(const struct conn *c, struct MHD_Connection *mc,
			struct gp_http_reply *reply)
{
	const struct gp_http *h = c->l->h;
	const char *host = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);

	if (c->l->is_unix || host_allowed(h, host))
		return false;
	gp_http_error(reply, MHD_HTTP_MISDIRECTED_REQUEST,
		      "the Host header \"%.100s\" is not a name of this server (%s): a page of "
		      "another site may not reach the API through a name of its own (DNS "
		      "rebinding); if the name is this server's, add it with --allowed-hosts",
		      host, h->hosts_shown);
	return true;
}

/* The 415 of a request whose body is not said to be JSON, where the
 * options want JSON; false otherwise. */
static bool refuse_type(const struct conn *c, struct MHD_Connection *mc,
			struct gp_http_reply *reply)
{
	const char *type = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_CONTENT_TYPE);

	if (!c->l->h->o.json_bodies || !has_body(mc) || is_json_type(type))
		return false;
	gp_http_error(reply, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
		      "the request body must be JSON, sent with \"Content-Type: "
		      "application/json\"; this one came with %s%.100s%s",
		      type ? "\"Content-Type: " : "no Content-Type", type ? type : "",
		      type ? "\"" : "");
	return true;
}

/* Whether the request whose headers are in is refused before its body
 * is read (its reply then in reply): over a bound (503), a Host that is
 * not this server's on TCP (421), a token from a client that waits
 * (429), a body not said to be JSON (415). */
static bool refused_early(struct conn *c, struct MHD_Connection *mc,
			  struct gp_http_reply *reply)
{
	if (c->over) {
		refuse_over(c, reply);
		return true;
	}
	return refuse_host(c, mc, reply) || (bearer_token(mc) && refuse_waiting(c, reply)) ||
	       refuse_type(c, mc, reply);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct listener *l = cls;
	struct incoming *in = *con_cls;

	(void)version;
	if (!in) {
		struct conn *c = conn_of(conn);
		struct gp_http_reply reply = {0};

		if (c && refused_early(c, conn, &reply))
			return answer_now(conn, &reply);
		/* The headers are in: the body and the reply have their own
		 * deadline. */
		conn_phase(c, false);
		in = calloc(1, sizeof(*in));
		*con_cls = in;
		return in ? MHD_YES : MHD_NO;
	}
	if (*upload_data_size) {
		body_take(l->h, in, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	return answer(l, conn, url, method, in);
}

/* A request ended: its state goes, and on a kept-alive connection the
 * next request's headers have the header deadline from now. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	struct incoming *in = *con_cls;

	(void)cls;
	(void)code;
	if (in)
		free(in->body);
	free(in);
	*con_cls = NULL;
	conn_phase(conn_of(conn), true);
}

/* ---- listeners ------------------------------------------------------- */

/* Whether a server accepts connections on the socket at addr. */
static bool socket_is_live(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live =
		fd >= 0 && connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;

	if (fd >= 0)
		close(fd);
	return live;
}

/* Removes a socket file that a dead server left behind. */
static int clear_stale(const struct sockaddr_un *addr)
{
	struct stat st;

	if (lstat(addr->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	if (socket_is_live(addr))
		return -EADDRINUSE;
	return unlink(addr->sun_path) < 0 ? -errno : 0;
}

/* Binds with a umask that makes the socket 0600 from its first moment
 * (we are the only thread yet), then says so again with chmod. */
static int bind_private(int fd, const struct sockaddr_un *addr)
{
	mode_t old = umask(0177);
	int r = bind(fd, (const struct sockaddr *)addr, sizeof(*addr));

	umask(old);
	if (r < 0)
		return -errno;
	if (chmod(addr->sun_path, 0600) < 0 || listen(fd, SOMAXCONN) < 0) {
		r = -errno;
		unlink(addr->sun_path);
		return r;
	}
	return 0;
}

static int listen_unix(const char *path, int *ret_fd)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd, r;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	r = clear_stale(&addr);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = bind_private(fd, &addr);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* A TCP socket listening on 127.0.0.1:port, or on every address. */
static int listen_tcp(unsigned port, bool any, int *ret_fd)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(any ? INADDR_ANY : INADDR_LOOPBACK),
	};
	int one = 1, r = 0, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(fd, SOMAXCONN) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* MHD's own limit on a listener's connections, a backstop above ours:
 * connections over our bounds are held (for a moment) to be answered
 * 503, and only past this one does MHD drop new ones unanswered. */
static unsigned mhd_limit(const struct gp_http_options *o)
{
	unsigned max = o->max_connections ? o->max_connections : GP_HTTP_CONNECTIONS_MAX;

	return max + max / 2 + 2 * OVER_PER_CLIENT;
}

unsigned gp_http_files_needed(const struct gp_http_options *o)
{
	return (o->tcp_port ? 2 : 1) * mhd_limit(o) + FILES_SPARE;
}

/* The options with their defaults filled in. */
static void options_fill(struct gp_http_options *o)
{
	if (!o->header_timeout_ms)
		o->header_timeout_ms = GP_HTTP_HEADER_TIMEOUT_MS;
	if (!o->body_timeout_ms)
		o->body_timeout_ms = GP_HTTP_BODY_TIMEOUT_MS;
	if (!o->max_connections)
		o->max_connections = GP_HTTP_CONNECTIONS_MAX;
	if (!o->max_client_connections)
		o->max_client_connections = GP_HTTP_CLIENT_CONNECTIONS_MAX;
	if (o->max_client_connections > o->max_connections)
		o->max_client_connections = o->max_connections;
}

static void listener_init(struct listener *l, struct gp_http *h, bool is_unix)
{
	l->h = h;
	l->is_unix = is_unix;
	l->index = is_unix ? LISTENER_UNIX : LISTENER_TCP;
	l->fd = -1;
}

/* The Host names, as given and as the 421 shows them. */
static int hosts_copy(struct gp_http *h, const char *hosts)
{
	size_t len = strlen(hosts), at = 0;

	h->hosts = strdup(hosts);
	h->hosts_shown = malloc(2 * len + 1);
	if (!h->hosts || !h->hosts_shown)
		return -ENOMEM;
	for (const char *p = hosts; *p; p++) {
		h->hosts_shown[at++] = *p;
		if (*p == ',')
			h->hosts_shown[at++] = ' ';
	}
	h->hosts_shown[at] = '\0';
	return 0;
}

static int http_new(const struct gp_http_options *o, struct gp_http **ret)
{
	struct gp_http *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->o = *o;
	options_fill(&h->o);
	h->o.hosts = NULL; /* h->hosts is the copy */
	if ((o->hosts && hosts_copy(h, o->hosts) < 0) ||
	    gp_peers_new(2 * mhd_limit(&h->o) + PEERS_SPARE, &h->peers) < 0) {
		free(h->hosts);
		free(h->hosts_shown);
		free(h);
		return -ENOMEM;
	}
	listener_init(&h->unix_l, h, true);
	listener_init(&h->tcp_l, h, false);
	h->diag_fd = -1;
	h->diag_error = -ENOTCONN;
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->conns_lock, NULL);
	gp_monotonic_cond_init(&h->wake);
	*ret = h;
	return 0;
}

int gp_http_listen(const struct gp_http_options *o, struct gp_http **ret)
{
	struct gp_http *h;
	int r;

	if (!o || !o->socket_path || !ret || o->tcp_port > 65535)
		return -EINVAL;
	r = http_new(o, &h);
	if (r < 0)
		return r;
	r = listen_unix(o->socket_path, &h->unix_l.fd);
	if (r == 0)
		snprintf(h->socket_path, sizeof(h->socket_path), "%s", o->socket_path);
	if (r == 0 && o->tcp_port) {
		r = listen_tcp(o->tcp_port, o->tcp_any, &h->tcp_l.fd);
		h->diag_error = 0;
		if (r == 0)
			diag_open(h, h->tcp_l.fd);
	}
	if (r < 0) {
		gp_http_stop(h);
		return r;
	}
	*ret = h;
	return 0;
}

int gp_http_peer_uids(const struct gp_http *h)
{
	return h->diag_error;
}

void gp_http_counts(struct gp_http *h, struct gp_http_counts *ret)
{
	pthread_mutex_lock(&h->conns_lock);
	*ret = h->counts;
	pthread_mutex_unlock(&h->conns_lock);
}

/* The daemon of listener l, with its own thread, on l's listening
 * socket, which it then owns (and closes when stopped): l->fd becomes
 * -1. When the daemon does not start, it is unknown whether MHD closed
 * the socket, so it is left alone; the server ends next anyway. */
static int daemon_start(struct gp_http *h, struct listener *l)
{
	l->daemon = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
			(h->o.concurrent ? MHD_USE_THREAD_PER_CONNECTION : 0), 0, NULL, NULL,
		on_request, l, MHD_OPTION_LISTEN_SOCKET, l->fd,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, l,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, l,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
		MHD_OPTION_CONNECTION_LIMIT, mhd_limit(&h->o), MHD_OPTION_END);
	l->fd = -1;
	return l->daemon ? 0 : -EIO;
}

int gp_http_serve(struct gp_http *h, const struct gp_http_route *routes, size_t n,
		  void *ctx)
{
	int r;

	h->routes = routes;
	h->routes_n = n;
	h->ctx = ctx;
	r = watch_start(h);
	if (r == 0)
		r = daemon_start(h, &h->unix_l);
	if (r == 0 && h->tcp_l.fd >= 0)
		r = daemon_start(h, &h->tcp_l);
	return r;
}

static void listener_stop(struct listener *l)
{
	if (l->daemon)
		MHD_stop_daemon(l->daemon); /* each connection's CLOSED frees it */
	if (l->fd >= 0)
		close(l->fd);
}

struct gp_http *gp_http_stop(struct gp_http *h)
{
	if (!h)
		return NULL;
	watch_stop(h);
	listener_stop(&h->tcp_l);
	listener_stop(&h->unix_l);
	if (h->socket_path[0])
		unlink(h->socket_path);
	if (h->diag_fd >= 0)
		close(h->diag_fd);
	gp_peers_free(h->peers);
	free(h->hosts);
	free(h->hosts_shown);
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->conns_lock);
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

void gp_http_lock(struct gp_http *h)
{
	pthread_mutex_lock(&h->lock);
}

void gp_http_unlock(struct gp_http *h)
{
	pthread_mutex_unlock(&h->lock);
}

void gp_http_wait(struct gp_http *h, pthread_cond_t *cond)
{
	pthread_cond_wait(cond, &h->lock);
}
