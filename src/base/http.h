/* http.h — the HTTP front every program serves with (the server's API,
 * the scheduler extender, the node program's /metrics): libmicrohttpd
 * listening on a Unix socket (mode 0600) and optionally on TCP
 * 127.0.0.1:PORT, a request
 * body read into memory up to a cap, and a small route table that maps a
 * method and a path pattern to a handler.
 *
 * Invariants: handlers run one at a time, whichever listener a request
 * came in on, so a handler may use state that is not thread-safe (the
 * store); one that waits in gp_http_wait lets the others run meanwhile.
 * The layer answers by itself 404 (no route), 405 (route without that
 * method, with an Allow header), 413 (body over the cap), 503 (a
 * connection over a bound, below), and where the options ask for it 421
 * (a Host that is not one of the server's names, on TCP), 415 (a body
 * that is not said to be JSON) and 429 (a client waiting after unknown
 * tokens); every body it sends is JSON, errors as {"error": "..."}, but
 * for the text a handler gives with gp_http_text (Prometheus metrics).
 * Replies with a status of 500 or more (but 503, a full queue or too
 * many connections) are logged on stderr, once, here, and so is each
 * unknown token (who sent it and on what request, never the token).
 *
 * Under abuse (docs/api.md, "Limits under abuse"): each connection has
 * absolute deadlines that bytes trickling in do not move, one for its
 * request's headers and one for its body and reply, besides MHD's idle
 * timeout; and each listener bounds its open connections, all of them
 * and those of one client (peers.h says who a client is, and which
 * connection gives up its place when a listener is full). The Unix
 * socket and TCP are separate listeners with separate counts, so
 * nothing on TCP can use up the Unix socket's connections. A client
 * whose tokens a handler found unknown (GP_HTTP_TOKEN_UNKNOWN) more than
 * a few times waits before its next request with a token is looked at
 * (peers.h); other clients do not, and no thread waits for it.
 *
 * Ownership: the caller keeps the routes and the context alive until
 * gp_http_stop returns; a handler's reply body belongs to the reply. */
#ifndef GP_BASE_HTTP_H
#define GP_BASE_HTTP_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_http;

/* A request as a handler sees it; valid during the handler call only. */
struct gp_http_request {
	const char *method; /* "GET", "POST", ... */
	const char *path;   /* without the query string */
	const char *body;   /* NUL-terminated; "" when none */
	size_t body_len;
	const char *token; /* from "Authorization: Bearer TOKEN"; NULL: none */
	int64_t id;	   /* the number in the pattern's {id}; 0: none */
	void *conn;	   /* for gp_http_query */
};

#define GP_HTTP_HEADERS_MAX 2 /* extra headers of a reply */

/* A header a handler adds to its reply. */
struct gp_http_header {
	const char *name; /* a static string; NULL: none */
	char value[64];
};

/* What a handler found of the request's token, for the layer: a good
 * one makes its client known (peers.h), an unknown one is logged and
 * counted against its client. */
enum gp_http_token {
	GP_HTTP_TOKEN_UNCHECKED, /* none, or not looked at */
	GP_HTTP_TOKEN_GOOD,
	GP_HTTP_TOKEN_UNKNOWN,
};

/* What a handler answers: a status and an optional JSON body, or text. */
struct gp_http_reply {
	unsigned status;
	json_t *body;		  /* owned by the reply; NULL: no body */
	char location[128];	  /* a Location header when not empty */
	char *text;		  /* malloc'd, owned by the reply; sent instead of body */
	size_t text_len;	  /* its length in bytes (it may hold NULs) */
	const char *content_type; /* of text; a static string */
	struct gp_http_header header[GP_HTTP_HEADERS_MAX]; /* more: those with a name */
	enum gp_http_token token; /* set by a handler that looked at the token */
};

typedef void gp_http_handler(void *ctx, const struct gp_http_request *req,
			     struct gp_http_reply *ret);

/* A pattern is a path whose segments must match exactly, except "{id}",
 * which matches a positive decimal number (given in request->id), and
 * "{name}", which matches any one non-empty segment (read from path). */
struct gp_http_route {
	const char *method;
	const char *pattern;
	gp_http_handler *handler;
};

/* The defaults of the deadlines and bounds below. */
#define GP_HTTP_HEADER_TIMEOUT_MS      10000
#define GP_HTTP_BODY_TIMEOUT_MS	       30000
#define GP_HTTP_CONNECTIONS_MAX	       512
#define GP_HTTP_CLIENT_CONNECTIONS_MAX 64
/* A connection over a bound has this long to send its request (and be
 * answered 503) before it is closed, so that it holds no slot for long. */
#define GP_HTTP_OVER_BOUND_MS 1000

struct gp_http_options {
	const char *socket_path; /* made here, mode 0600; removed at stop */
	unsigned tcp_port;	 /* 0: no TCP listener */
	/* TCP on every address, not loopback alone: for a program whose only
	 * routes are public (`gpupool node`'s /metrics, for Prometheus) */
	bool tcp_any;
	/* A thread per connection, not one per listener: a handler that
	 * leaves the lock while it waits (gp_http_unlock ... gp_http_lock,
	 * for a call to another server) lets the requests of other
	 * connections run meanwhile. Handlers still run one at a time. */
	bool concurrent;
	size_t body_max;	 /* larger bodies get 413 */
	/* Deadlines, in ms, that trickling bytes do not move: from accept
	 * (or from the end of the previous request on a kept-alive
	 * connection) to the end of the request's headers, and from there
	 * to the reply sent. A connection past one is closed. 0: the
	 * defaults above. */
	unsigned header_timeout_ms, body_timeout_ms;
	/* Bounds on the open connections of each listener: all of them, and
	 * those of one client, a client being a uid on this machine (the
	 * Unix socket's peer, or the owner of a loopback TCP peer's socket,
	 * whatever its 127.x.y.z address) and the address of any other
	 * (peers.h). A connection over one is answered 503. 0: the defaults
	 * above; a client's bound above the overall one is lowered to it. */
	unsigned max_connections, max_client_connections;
	/* The names a request on TCP may give in its Host header, comma-
	 * separated, compared without case and without the port ("localhost,
	 * 127.0.0.1,[::1],gpu1"); another is answered 421, so that a web page
	 * reaching the port under a name of its own (DNS rebinding) gets
	 * nothing. A request without a Host is let through (no browser sends
	 * one so). Copied. NULL: any Host. */
	const char *hosts;
	/* A request with a body must say Content-Type: application/json
	 * (parameters such as charset allowed), else it is answered 415. */
	bool json_bodies;
};

/* What the layer counted since it started, for /metrics. */
struct gp_http_counts {
	uint64_t refused;	 /* connections over a bound, answered 503 */
	uint64_t evicted;	 /* waiting connections closed to make room */
	uint64_t token_unknown;	 /* requests whose token a handler did not know */
	uint64_t token_waiting;	 /* requests with a token answered 429 */
};

/* How many file descriptors the listeners of o may hold at most (their
 * connections up to libmicrohttpd's own limit, kept above ours, and a
 * margin for the rest of the server), to check RLIMIT_NOFILE against. */
unsigned gp_http_files_needed(const struct gp_http_options *o);

/* Makes the listening sockets, serving nothing yet, so that a server
 * can claim its socket before it touches anything else. A socket file
 * left by a dead server is replaced; -EADDRINUSE when a server answers
 * on it (or the TCP port is taken), -EEXIST when the path is not a
 * socket, another negative errno when a socket could not be made. Call
 * it while the process has one thread: it sets the umask for a moment. */
int gp_http_listen(const struct gp_http_options *o, struct gp_http **ret);

/* 0 when TCP clients on loopback are told apart by the uid that owns
 * their socket (NETLINK_SOCK_DIAG answers); else the negative errno of
 * why not, and such a client is its address alone. -ENOTCONN without a
 * TCP listener. */
int gp_http_peer_uids(const struct gp_http *h);

/* The counts so far, both listeners together. */
void gp_http_counts(struct gp_http *h, struct gp_http_counts *ret);

/* Starts serving routes in background threads, ctx passed to every
 * handler. -EIO when libmicrohttpd would not start (it said why on
 * stderr), another negative errno when the thread that enforces the
 * deadlines would not. */
int gp_http_serve(struct gp_http *h, const struct gp_http_route *routes, size_t n,
		  void *ctx);

/* Stops listening, waits for the handler running now, removes the
 * socket file. Accepts NULL; returns NULL. */
struct gp_http *gp_http_stop(struct gp_http *h);

/* The lock every handler runs under: another thread holds it to use
 * what the handlers use (the store) without racing them. */
void gp_http_lock(struct gp_http *h);
void gp_http_unlock(struct gp_http *h);
/* Waits on cond, giving up the lock meanwhile (the caller holds it, and
 * holds it again on return), as pthread_cond_wait. */
void gp_http_wait(struct gp_http *h, pthread_cond_t *cond);

/* The value of the query parameter `key` ("?state=pending"); NULL when
 * absent. Valid during the handler call. */
const char *gp_http_query(const struct gp_http_request *req, const char *key);

/* Sets ret to status and {"error": MESSAGE}; MESSAGE is cut at 511 bytes,
 * and its bytes that are not UTF-8 become '?'. */
__attribute__((format(printf, 3, 4))) void
gp_http_error(struct gp_http_reply *ret, unsigned status, const char *fmt, ...);

/* Sets ret to status and body (the reply takes the reference). */
void gp_http_json(struct gp_http_reply *ret, unsigned status, json_t *body);

/* Sets ret to status and text, a malloc'd string the reply takes, sent
 * with the Content-Type content_type (a static string). */
void gp_http_text(struct gp_http_reply *ret, unsigned status, char *text,
		  const char *content_type);

/* The same for len bytes at text (malloc'd, taken; NULs are sent as
 * they are). */
void gp_http_bytes(struct gp_http_reply *ret, unsigned status, char *text, size_t len,
		   const char *content_type);

#endif
