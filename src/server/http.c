/* http.c — the server's HTTP front on libmicrohttpd (see http.h).
 *
 * Each listener is one MHD daemon with its own polling thread; a mutex
 * makes the handlers take turns, so the layers below see one caller at a
 * time. MHD calls on_request several times per request: first with no
 * body (we set up the state of the request), then with each piece of the
 * body (kept up to the cap), and last with nothing more, when we route
 * the request and queue the reply. on_completed frees the state. */
#include "server/http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
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
#include <sys/un.h>
#include <unistd.h>

#define CONNECTION_TIMEOUT_S 30
#define CONNECTIONS_MAX	     256
#define ALLOW_MAX	     64
#define SOCKET_PATH_MAX	     sizeof(((struct sockaddr_un *)0)->sun_path)

struct gp_http {
	struct gp_http_options o;
	char socket_path[SOCKET_PATH_MAX]; /* ours to remove; "" until made */
	int unix_fd, tcp_fd;		   /* listening, until a daemon owns them */
	struct MHD_Daemon *unix_daemon, *tcp_daemon;
	const struct gp_http_route *routes;
	size_t routes_n;
	void *ctx;
	pthread_mutex_t lock; /* held while a handler runs */
};

/* A request being read: the body so far. */
struct incoming {
	char *body; /* NUL-terminated when not NULL */
	size_t len, cap;
	bool too_large;
};

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

	if (reply->status < 500 || reply->status == 503) /* 503: a full queue */
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

static enum MHD_Result answer(struct gp_http *h, struct MHD_Connection *conn,
			      const char *url, const char *method, struct incoming *in)
{
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
	r = send_reply(conn, &reply, allow);
	json_decref(reply.body);
	free(reply.text);
	return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct gp_http *h = cls;
	struct incoming *in = *con_cls;

	(void)version;
	if (!in) {
		in = calloc(1, sizeof(*in));
		*con_cls = in;
		return in ? MHD_YES : MHD_NO;
	}
	if (*upload_data_size) {
		body_take(h, in, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	return answer(h, conn, url, method, in);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	struct incoming *in = *con_cls;

	(void)cls;
	(void)conn;
	(void)code;
	if (in)
		free(in->body);
	free(in);
	*con_cls = NULL;
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

/* A TCP socket listening on 127.0.0.1:port. */
static int listen_tcp(unsigned port, int *ret_fd)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
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

int gp_http_listen(const struct gp_http_options *o, struct gp_http **ret)
{
	struct gp_http *h;
	int r;

	if (!o || !o->socket_path || !ret || o->tcp_port > 65535)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->o = *o;
	h->unix_fd = h->tcp_fd = -1;
	pthread_mutex_init(&h->lock, NULL);
	r = listen_unix(o->socket_path, &h->unix_fd);
	if (r == 0)
		snprintf(h->socket_path, sizeof(h->socket_path), "%s", o->socket_path);
	if (r == 0 && o->tcp_port)
		r = listen_tcp(o->tcp_port, &h->tcp_fd);
	if (r < 0) {
		gp_http_stop(h);
		return r;
	}
	*ret = h;
	return 0;
}

/* One daemon with its own thread, on the listening socket *fd, which
 * it then owns (and closes when stopped): *fd becomes -1. When the
 * daemon does not start, it is unknown whether MHD closed the socket,
 * so it is left alone; the server ends next anyway. */
static struct MHD_Daemon *daemon_start(struct gp_http *h, int *fd)
{
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
		on_request, h, MHD_OPTION_LISTEN_SOCKET, *fd, MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, h, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)CONNECTIONS_MAX, MHD_OPTION_END);

	*fd = -1;
	return d;
}

int gp_http_serve(struct gp_http *h, const struct gp_http_route *routes, size_t n,
		  void *ctx)
{
	h->routes = routes;
	h->routes_n = n;
	h->ctx = ctx;
	h->unix_daemon = daemon_start(h, &h->unix_fd);
	if (!h->unix_daemon)
		return -EIO;
	if (h->tcp_fd >= 0 && !(h->tcp_daemon = daemon_start(h, &h->tcp_fd)))
		return -EIO;
	return 0;
}

struct gp_http *gp_http_stop(struct gp_http *h)
{
	if (!h)
		return NULL;
	if (h->tcp_daemon)
		MHD_stop_daemon(h->tcp_daemon);
	if (h->unix_daemon)
		MHD_stop_daemon(h->unix_daemon);
	if (h->tcp_fd >= 0)
		close(h->tcp_fd);
	if (h->unix_fd >= 0)
		close(h->unix_fd);
	if (h->socket_path[0])
		unlink(h->socket_path);
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
