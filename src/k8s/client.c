/* client.c — requests to the Kubernetes API server (client.h): one libcurl
 * easy handle per gp_kube, driven through a multi handle of its own so
 * that a request waits in curl_multi_poll, which an informer's stop can
 * wake (gp_kube_wake), and so that connections are kept alive from one
 * request to the next. Each request sets every option afresh: the URL,
 * the bearer token (read again each time: the kubelet rotates service
 * account tokens), TLS from the configuration (kubeconfig.c), timeouts.
 *
 * Answers are JSON; a status >= 400 is read as a v1 Status whose message
 * becomes the handle's last error, and becomes an errno in one place
 * (status_errno); libcurl's failures likewise (curl_errno). */
#include "k8s/client-impl.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/bytes.h"

#define CONNECT_TIMEOUT_MS 5000L
#define REQUEST_TIMEOUT_MS 30000L
#define WATCH_SLACK_S 30L       /* past timeoutSeconds, a watch is cut anyway */
#define POLL_MS 100             /* how often a request looks at its stop flag */
#define BODY_MAX (512u << 20)   /* an answer larger than this is refused */
#define LIST_PAGE "500"
#define VERSION_MAX 128
#define USER_AGENT "gpupool/0.1"

/* A growing buffer of bytes, kept NUL-terminated. */
struct gp_kube {
	const struct gp_kube_config *config;  /* borrowed */
	CURL *curl;
	CURLM *multi;
	struct gp_bytes body;                 /* the answer being read (up to BODY_MAX) */
	gp_kube_sink_fn sink;                 /* a stream's receiver, or NULL */
	void *sink_ctx;
	const atomic_bool *stop;              /* borrowed, or NULL */
	char curl_error[CURL_ERROR_SIZE];
	char error[GP_KUBE_ERROR_MAX];
};

/* One request: method, path (from the server's root), an optional body. */
struct request {
	const char *method;
	const char *path;
	const char *content_type;
	const char *body;
	long timeout_ms;                      /* 0: a stream, bounded by idle_s */
	long idle_s;
};

/* ---- buffers and errors ------------------------------------------------------- */

static __attribute__((format(printf, 3, 4))) int fail(struct gp_kube *k, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->error, sizeof(k->error), fmt, ap);
	va_end(ap);
	return r;
}

/* An HTTP status as an errno (client.h lists the mapping). */
static int status_errno(long status, const char *method)
{
	switch (status) {
	case 401:
	case 403: return -EACCES;
	case 404: return -ENOENT;
	case 409: return strcmp(method, "POST") ? -EBUSY : -EEXIST;
	case 410: return -ESTALE;
	default: return -EIO;
	}
}

static const struct {
	CURLcode code;
	int err;
} curl_errors[] = {
	{ CURLE_COULDNT_CONNECT, -ECONNREFUSED },
	{ CURLE_COULDNT_RESOLVE_HOST, -EHOSTUNREACH },
	{ CURLE_COULDNT_RESOLVE_PROXY, -EHOSTUNREACH },
	{ CURLE_OPERATION_TIMEDOUT, -ETIMEDOUT },
	{ CURLE_ABORTED_BY_CALLBACK, -ECANCELED },
	{ CURLE_WRITE_ERROR, -EBADMSG },
	{ CURLE_OUT_OF_MEMORY, -ENOMEM },
	{ CURLE_URL_MALFORMAT, -EINVAL },
	{ CURLE_UNSUPPORTED_PROTOCOL, -EINVAL },
	{ CURLE_PARTIAL_FILE, -ECONNRESET },
	{ CURLE_RECV_ERROR, -ECONNRESET },
	{ CURLE_SEND_ERROR, -ECONNRESET },
	{ CURLE_GOT_NOTHING, -ECONNRESET },
	{ CURLE_SSL_CONNECT_ERROR, -EPROTO },
	{ CURLE_PEER_FAILED_VERIFICATION, -EPROTO },
	{ CURLE_SSL_CACERT_BADFILE, -EPROTO },
	{ CURLE_SSL_CERTPROBLEM, -EPROTO },
	{ CURLE_SSL_CIPHER, -EPROTO },
};

/* A libcurl failure as an errno; an unreachable network or host (the
 * socket's own errno) is -EHOSTUNREACH rather than refused. */
static int curl_errno(struct gp_kube *k, CURLcode code)
{
	long os = 0;

	if (code == CURLE_COULDNT_CONNECT &&
	    curl_easy_getinfo(k->curl, CURLINFO_OS_ERRNO, &os) == CURLE_OK &&
	    (os == EHOSTUNREACH || os == ENETUNREACH))
		return -EHOSTUNREACH;
	for (size_t i = 0; i < sizeof(curl_errors) / sizeof(curl_errors[0]); i++)
		if (curl_errors[i].code == code)
			return curl_errors[i].err;
	return -EIO;
}

/* The Status's message of an error answer, else what the answer was. */
static int api_error(struct gp_kube *k, const struct request *r, long status)
{
	json_t *s = json_loadb(k->body.data ? k->body.data : "", k->body.len, 0, NULL);
	const char *message = json_string_value(json_object_get(s, "message"));

	if (message && *message)
		fail(k, 0, "%s", message);
	else
		fail(k, 0, "HTTP %ld from %s %s%s%.200s", status, r->method, r->path,
		     k->body.len ? ": " : " (no body)", k->body.len ? k->body.data : "");
	json_decref(s);
	return status_errno(status, r->method);
}

/* ---- the handle ------------------------------------------------------------------ */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

static void curl_init(void)
{
	curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int gp_kube_new(const struct gp_kube_config *c, struct gp_kube **ret)
{
	struct gp_kube *k;

	pthread_once(&curl_once, curl_init);
	if (curl_init_result != CURLE_OK)
		return -ENOMEM;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->config = c;
	k->body.max = BODY_MAX;
	k->curl = curl_easy_init();
	k->multi = curl_multi_init();
	if (!k->curl || !k->multi) {
		gp_kube_free(k);
		return -ENOMEM;
	}
	*ret = k;
	return 0;
}

struct gp_kube *gp_kube_free(struct gp_kube *k)
{
	if (!k)
		return NULL;
	if (k->curl)
		curl_easy_cleanup(k->curl);
	if (k->multi)
		curl_multi_cleanup(k->multi);
	gp_bytes_free(&k->body);
	free(k);
	return NULL;
}

const char *gp_kube_error(const struct gp_kube *k)
{
	return k->error;
}

void gp_kube_stop_on(struct gp_kube *k, const atomic_bool *stop)
{
	k->stop = stop;
}

void gp_kube_wake(struct gp_kube *k)
{
	curl_multi_wakeup(k->multi);
}

static bool stopped(const struct gp_kube *k)
{
	return k->stop && atomic_load(k->stop);
}

/* ---- libcurl's callbacks ----------------------------------------------------- */

static long response_code(struct gp_kube *k)
{
	long code = 0;

	curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
	struct gp_kube *k = ctx;
	size_t len = size * n;

	if (k->sink && response_code(k) == 200)
		return k->sink(k->sink_ctx, data, len) ? len : 0;
	return gp_bytes_add(&k->body, data, len) == 0 ? len : 0;
}

/* The end of a stream's headers: it is open when the status is 200. */
static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct gp_kube *k = ctx;
	size_t len = size * n;

	if (k->sink && len <= 2 && (data[0] == '\r' || data[0] == '\n') && response_code(k) == 200 &&
	    !k->sink(k->sink_ctx, NULL, 0))
		return 0;
	return len;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return stopped(ctx) ? 1 : 0;
}

/* ---- one request ------------------------------------------------------------------ */

/* One header line "fmt % value" appended to *list; false when out of
 * memory. The line is wiped (it may hold the token). */
static bool add_header(struct curl_slist **list, const char *fmt, const char *value)
{
	struct curl_slist *next;
	char *line;

	if (asprintf(&line, fmt, value) < 0)
		return false;
	next = curl_slist_append(*list, line);
	explicit_bzero(line, strlen(line));
	free(line);
	if (next)
		*list = next;
	return next != NULL;
}

/* Accept, Content-Type and the token, in *ret; -errno with k's error. */
static int make_headers(struct gp_kube *k, const struct request *r, struct curl_slist **ret)
{
	struct curl_slist *h = NULL;
	char *token = NULL;
	bool ok;
	int e = gp_kube_config_token(k->config, &token, k->error, sizeof(k->error));

	if (e < 0)
		return e;
	ok = add_header(&h, "Accept: %s", "application/json") && add_header(&h, "%s", "Expect:") &&
	     (!r->content_type || add_header(&h, "Content-Type: %s", r->content_type)) &&
	     (!token || add_header(&h, "Authorization: Bearer %s", token));
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	if (!ok) {
		curl_slist_free_all(h);
		return fail(k, -ENOMEM, "out of memory");
	}
	*ret = h;
	return 0;
}

static void set_tls(struct gp_kube *k)
{
	const struct gp_kube_config *c = k->config;
	CURL *e = k->curl;
	struct curl_blob blob;

	if (c->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (c->ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
	if (c->ca.data) {
		blob = (struct curl_blob){ c->ca.data, c->ca.len, CURL_BLOB_NOCOPY };
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (c->cert_file)
		curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
	if (c->cert.data) {
		blob = (struct curl_blob){ c->cert.data, c->cert.len, CURL_BLOB_NOCOPY };
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (c->key_file)
		curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
	if (c->key.data) {
		blob = (struct curl_blob){ c->key.data, c->key.len, CURL_BLOB_NOCOPY };
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	}
}

static void set_method(struct gp_kube *k, const struct request *r)
{
	CURL *e = k->curl;

	if (!strcmp(r->method, "GET")) {
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
		return;
	}
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	if (r->body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(r->body));
	}
}

static void set_timeouts(struct gp_kube *k, const struct request *r)
{
	CURL *e = k->curl;

	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, r->timeout_ms);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 10L);
	if (r->idle_s > 0) {
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, r->idle_s);
	}
}

static int set_options(struct gp_kube *k, const struct request *r, struct curl_slist *headers)
{
	CURL *e = k->curl;
	char *url;

	if (r->path[0] != '/')
		return fail(k, -EINVAL, "path \"%s\" does not start with '/'", r->path);
	if (asprintf(&url, "%s%s", k->config->server, r->path) < 0)
		return fail(k, -ENOMEM, "out of memory");
	curl_easy_reset(e);
	curl_easy_setopt(e, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, USER_AGENT);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, k->curl_error);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, k);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, k);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, k);
	set_method(k, r);
	set_timeouts(k, r);
	set_tls(k);
	return 0;
}

/* The transfer, in k's multi handle, until done or stopped. */
static CURLcode transfer(struct gp_kube *k)
{
	CURLcode result = CURLE_OK;
	int running = 1, left;
	CURLMsg *m;

	if (curl_multi_add_handle(k->multi, k->curl) != CURLM_OK)
		return CURLE_OUT_OF_MEMORY;
	while (running) {
		if (stopped(k)) {
			result = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		if (curl_multi_perform(k->multi, &running) != CURLM_OK ||
		    (running && curl_multi_poll(k->multi, NULL, 0, POLL_MS, NULL) != CURLM_OK)) {
			result = CURLE_OUT_OF_MEMORY;
			break;
		}
	}
	while ((m = curl_multi_info_read(k->multi, &left)))
		if (m->msg == CURLMSG_DONE && result == CURLE_OK)
			result = m->data.result;
	curl_multi_remove_handle(k->multi, k->curl);
	return result;
}

/* The request; 0 for a 2xx, whose body is in k->body. */
static int perform(struct gp_kube *k, const struct request *r, long *ret_status)
{
	struct curl_slist *headers = NULL;
	CURLcode code;
	long status;
	int e;

	k->error[0] = k->curl_error[0] = '\0';
	gp_bytes_clear(&k->body);
	if ((e = make_headers(k, r, &headers)) < 0 || (e = set_options(k, r, headers)) < 0) {
		curl_slist_free_all(headers);
		return e;
	}
	code = transfer(k);
	curl_slist_free_all(headers);
	status = response_code(k);
	if (ret_status)
		*ret_status = status;
	if (code != CURLE_OK)
		return fail(k, curl_errno(k, code), "%s %s%s: %s", r->method, k->config->server,
			    r->path, k->curl_error[0] ? k->curl_error : curl_easy_strerror(code));
	if (status < 200 || status > 299)
		return api_error(k, r, status);
	return 0;
}

/* The request, and its answer as JSON in *ret (when ret is not NULL). */
static int request_json(struct gp_kube *k, const struct request *r, json_t **ret,
			long *ret_status)
{
	json_error_t jerr;
	json_t *v;
	int e = perform(k, r, ret_status);

	if (e < 0 || !ret)
		return e;
	v = json_loadb(k->body.data ? k->body.data : "", k->body.len, 0, &jerr);
	if (!v)
		return fail(k, -EBADMSG, "%s %s: the answer is not JSON: %s", r->method, r->path,
			    jerr.text);
	*ret = v;
	return 0;
}

/* ---- the API ------------------------------------------------------------------------ */

int gp_kube_get(struct gp_kube *k, const char *path, json_t **ret_obj, long *ret_status)
{
	struct request r = { .method = "GET", .path = path, .timeout_ms = REQUEST_TIMEOUT_MS };

	return request_json(k, &r, ret_obj, ret_status);
}

/* A request with a JSON body. */
static int send_json(struct gp_kube *k, const char *method, const char *path,
		     const char *content_type, json_t *body, json_t **ret_obj, long *ret_status)
{
	struct request r = { .method = method, .path = path, .content_type = content_type,
			     .timeout_ms = REQUEST_TIMEOUT_MS };
	char *text = json_dumps(body, JSON_COMPACT);
	int e;

	if (!text)
		return fail(k, -EINVAL, "%s %s: the body cannot be written as JSON", method, path);
	r.body = text;
	e = request_json(k, &r, ret_obj, ret_status);
	free(text);
	return e;
}

int gp_kube_merge_patch(struct gp_kube *k, const char *path, json_t *patch, json_t **ret_obj,
			long *ret_status)
{
	return send_json(k, "PATCH", path, "application/merge-patch+json", patch, ret_obj,
			 ret_status);
}

int gp_kube_post(struct gp_kube *k, const char *path, json_t *body, json_t **ret_obj,
		 long *ret_status)
{
	return send_json(k, "POST", path, "application/json", body, ret_obj, ret_status);
}

/* path + "limit=500" (+ "&continue=TOKEN"), in *ret (the caller frees it). */
static int page_path(struct gp_kube *k, const char *path, const char *token, char **ret)
{
	char *escaped = token ? curl_easy_escape(k->curl, token, 0) : NULL;
	int n;

	if (token && !escaped)
		return -ENOMEM;
	n = asprintf(ret, "%s%climit=" LIST_PAGE "%s%s", path, strchr(path, '?') ? '&' : '?',
		     escaped ? "&continue=" : "", escaped ? escaped : "");
	curl_free(escaped);
	return n < 0 ? -ENOMEM : 0;
}

/* One page: its items appended to all, its version and continue token. */
static int list_page(struct gp_kube *k, const char *path, json_t *all, char *version,
		     char **token, long *ret_status)
{
	struct request r = { .method = "GET", .timeout_ms = REQUEST_TIMEOUT_MS };
	json_t *page = NULL, *items, *meta;
	const char *rv, *next;
	char *p;
	int e = page_path(k, path, *token, &p);

	if (e < 0)
		return fail(k, e, "out of memory");
	r.path = p;
	e = request_json(k, &r, &page, ret_status);
	free(p);
	if (e < 0)
		return e;
	items = json_object_get(page, "items");
	meta = json_object_get(page, "metadata");
	rv = json_string_value(json_object_get(meta, "resourceVersion"));
	next = json_string_value(json_object_get(meta, "continue"));
	if (!json_is_array(items) || !rv || strlen(rv) >= VERSION_MAX)
		e = fail(k, -EBADMSG, "GET %s: not a list (no items or resourceVersion)", path);
	else if (json_array_extend(all, items) < 0)
		e = fail(k, -ENOMEM, "out of memory");
	free(*token);
	*token = next && *next ? strdup(next) : NULL;
	if (e == 0 && next && *next && !*token)
		e = fail(k, -ENOMEM, "out of memory");
	if (e == 0)
		snprintf(version, VERSION_MAX, "%s", rv);
	json_decref(page);
	return e;
}

int gp_kube_list(struct gp_kube *k, const char *path, json_t **ret_items, char *ret_version,
		 size_t version_len, long *ret_status)
{
	json_t *all = json_array();
	char version[VERSION_MAX] = "", *token = NULL;
	int e = all ? 0 : -ENOMEM;

	do
		e = e < 0 ? e : list_page(k, path, all, version, &token, ret_status);
	while (e == 0 && token);
	free(token);
	if (e == 0 && strlen(version) >= version_len)
		e = fail(k, -ERANGE, "GET %s: resourceVersion \"%s\" longer than the buffer", path,
			 version);
	if (e < 0) {
		json_decref(all);
		return e;
	}
	snprintf(ret_version, version_len, "%s", version);
	*ret_items = all;
	return 0;
}

/* "/api/v1/namespaces/NS/RESOURCE[/NAME/SUB]" with NS and NAME escaped. */
static int object_path(struct gp_kube *k, char **ret, const char *ns, const char *resource,
		       const char *name, const char *sub)
{
	char *ens = curl_easy_escape(k->curl, ns, 0);
	char *ename = name ? curl_easy_escape(k->curl, name, 0) : NULL;
	int n = -1;

	if (ens && (!name || ename))
		n = asprintf(ret, "/api/v1/namespaces/%s/%s%s%s%s%s", ens, resource, name ? "/" : "",
			     name ? ename : "", sub ? "/" : "", sub ? sub : "");
	curl_free(ens);
	curl_free(ename);
	return n < 0 ? fail(k, -ENOMEM, "out of memory") : 0;
}

int gp_kube_bind(struct gp_kube *k, const char *ns, const char *name, const char *uid,
		 const char *node, json_t *annotations)
{
	json_t *binding = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s}}",
				    "apiVersion", "v1", "kind", "Binding",
				    "metadata", "name", name, "namespace", ns,
				    "target", "apiVersion", "v1", "kind", "Node", "name", node);
	char *path;
	int e;

	if (!binding)
		return fail(k, -EINVAL, "bind %s/%s to %s: bad arguments", ns, name, node);
	if (uid && *uid)
		json_object_set_new(json_object_get(binding, "metadata"), "uid", json_string(uid));
	if (annotations)
		json_object_set(json_object_get(binding, "metadata"), "annotations", annotations);
	e = object_path(k, &path, ns, "pods", name, "binding");
	if (e == 0) {
		e = gp_kube_post(k, path, binding, NULL, NULL);
		free(path);
	}
	json_decref(binding);
	return e;
}

/* RFC 3339 in UTC, whole seconds, as the API writes times. */
static void format_time(const struct timespec *t, char *out, size_t len)
{
	struct tm tm;

	gmtime_r(&t->tv_sec, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Events of a cluster-scoped object go to "default". */
static const char *event_ns(const struct gp_kube_event_of *ev)
{
	return ev->ns && *ev->ns ? ev->ns : "default";
}

/* The Event `event_name` about ev's object, count 1, first seen now. */
static json_t *make_event(const struct gp_kube_event_of *ev, const char *event_name)
{
	struct timespec now;
	char when[32];
	json_t *e, *involved;

	clock_gettime(CLOCK_REALTIME, &now);
	format_time(&now, when, sizeof(when));
	involved = json_pack("{s:s, s:s, s:s}", "apiVersion", "v1", "kind", ev->kind, "name",
			     ev->name);
	if (involved && ev->ns && *ev->ns)
		json_object_set_new(involved, "namespace", json_string(ev->ns));
	if (involved && ev->uid && *ev->uid)
		json_object_set_new(involved, "uid", json_string(ev->uid));
	e = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:{s:s}, s:s, s:s, s:i, s:s}",
		      "apiVersion", "v1", "kind", "Event",
		      "metadata", "name", event_name, "namespace", event_ns(ev),
		      "involvedObject", involved, "type", ev->type, "reason", ev->reason,
		      "message", ev->message, "source", "component", ev->component,
		      "firstTimestamp", when, "lastTimestamp", when, "count", 1,
		      "reportingComponent", ev->component);
	return e;
}

static int event_post(struct gp_kube *k, const struct gp_kube_event_of *ev,
		      const char *event_name)
{
	json_t *event = make_event(ev, event_name);
	char *path;
	int e;

	if (!event)
		return fail(k, -EINVAL, "event about %s %s: bad arguments", ev->kind, ev->name);
	e = object_path(k, &path, event_ns(ev), "events", NULL, NULL);
	if (e == 0) {
		e = gp_kube_post(k, path, event, NULL, NULL);
		free(path);
	}
	json_decref(event);
	return e;
}

int gp_kube_event(struct gp_kube *k, const char *kind, const char *ns, const char *name,
		  const char *uid, const char *type, const char *reason, const char *message,
		  const char *component)
{
	const struct gp_kube_event_of ev = { kind, ns, name, uid, type, reason, message, component };
	struct timespec now;
	char event_name[300];

	/* Named after its object and the time in hex (as kubectl's recorder
	 * names them, so that names do not collide). */
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(event_name, sizeof(event_name), "%.200s.%llx", name,
		 (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
	return event_post(k, &ev, event_name);
}

/* FNV-1a over a string and its NUL. */
static uint64_t fnv1a(uint64_t h, const char *text)
{
	const unsigned char *p = (const unsigned char *)(text ? text : "");

	do {
		h ^= *p;
		h *= 0x100000001b3ULL;
	} while (*p++);
	return h;
}

/* The existing Event `event_name` once more: count + 1, lastTimestamp now,
 * on the resourceVersion read (-EBUSY when another writer came between). */
static int event_recount(struct gp_kube *k, const struct gp_kube_event_of *ev,
			 const char *event_name)
{
	json_t *old = NULL, *patch;
	struct timespec now;
	char *path, when[32];
	int e = object_path(k, &path, event_ns(ev), "events", event_name, NULL);

	if (e < 0)
		return e;
	if ((e = gp_kube_get(k, path, &old, NULL)) < 0) {
		free(path);
		return e;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	format_time(&now, when, sizeof(when));
	patch = json_pack("{s:{s:O}, s:I, s:s}", "metadata", "resourceVersion",
			  json_object_get(json_object_get(old, "metadata"), "resourceVersion"),
			  "count", json_integer_value(json_object_get(old, "count")) + 1,
			  "lastTimestamp", when);
	e = patch ? gp_kube_merge_patch(k, path, patch, NULL, NULL)
		  : fail(k, -EBADMSG, "event %s: not an Event", event_name);
	json_decref(patch);
	json_decref(old);
	free(path);
	return e;
}

int gp_kube_event_count(struct gp_kube *k, const struct gp_kube_event_of *ev)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char event_name[300];
	int e;

	h = fnv1a(fnv1a(fnv1a(fnv1a(h, ev->uid), ev->type), ev->reason), ev->message);
	snprintf(event_name, sizeof(event_name), "%.200s.%016llx", ev->name, (unsigned long long)h);
	/* It exists: counted again; another writer came between (-EBUSY):
	 * again; it expired between (-ENOENT): made anew. */
	e = event_post(k, ev, event_name);
	for (int tries = 0; tries < 4 && (e == -EEXIST || e == -EBUSY || (tries && e == -ENOENT));
	     tries++)
		e = e == -ENOENT ? event_post(k, ev, event_name) : event_recount(k, ev, event_name);
	return e;
}

int gp_kube_stream(struct gp_kube *k, const char *path, long timeout_s, long idle_s,
		   gp_kube_sink_fn sink, void *ctx, long *ret_status)
{
	struct request r = { .method = "GET", .path = path,
			     .timeout_ms = (timeout_s + WATCH_SLACK_S) * 1000, .idle_s = idle_s };
	int e;

	k->sink = sink;
	k->sink_ctx = ctx;
	e = perform(k, &r, ret_status);
	k->sink = NULL;
	k->sink_ctx = NULL;
	return e;
}
