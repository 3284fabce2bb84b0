/* client.h — a client of the Kubernetes API server: libcurl for HTTP(S),
 * jansson for JSON, libyaml for kubeconfig files; no other dependency.
 *
 * Where the API server is and who we are (gp_kube_config_load), first
 * match wins:
 *   1. an explicit URL (tests, `--kube-api http://127.0.0.1:PORT`), with
 *      an optional bearer token file;
 *   2. a kubeconfig file (`--kubeconfig PATH`, else $KUBECONFIG): its
 *      current context's cluster (server, certificate-authority or
 *      certificate-authority-data, insecure-skip-tls-verify) and user
 *      (token, tokenFile, client-certificate(-data) + client-key(-data));
 *      of a $KUBECONFIG list (a:b) the first file that exists is read,
 *      without merging; exec and auth-provider users are refused;
 *   3. in-cluster: $KUBERNETES_SERVICE_HOST and _PORT, the service
 *      account's token and ca.crt under
 *      /var/run/secrets/kubernetes.io/serviceaccount/ (tests: the folder
 *      in $GPUPOOL_KUBE_SERVICEACCOUNT_DIR; the token is read again
 *      before each request: the kubelet rotates it, and so is a token
 *      file given with 1. or as a kubeconfig's tokenFile).
 *
 * Requests are synchronous; one gp_kube handle is used by one thread at a
 * time (make one per thread: they are cheap, and share nothing). Watches
 * run in a thread of their own (gp_kube_informer_*), each with its own
 * handle.
 *
 * Errors: functions return 0 or a negative errno. An API error (a status
 * >= 400) has its HTTP status in *ret_status where asked and the Status
 * object's message in the handle's last error (gp_kube_error); its errno:
 *   401, 403 → -EACCES          404 → -ENOENT         410 → -ESTALE
 *   409 → -EEXIST for a POST (create, bind: AlreadyExists, already bound)
 *         and -EBUSY otherwise (a patch's Conflict: a stale resourceVersion)
 *   any other → -EIO
 * When no answer came: -ECONNREFUSED, -EHOSTUNREACH (the server could not
 * be reached), -ETIMEDOUT (connect 5 s; requests 30 s; a watch that stays
 * silent past its idle limit), -ECONNRESET (the connection broke),
 * -EPROTO (TLS: the server's certificate is not trusted, or ours refused),
 * -EBADMSG (the answer is not JSON, or not the list or event asked for),
 * -ECANCELED (an informer's request, stopped). A path that does not start
 * with '/' is -EINVAL. *ret_status is 0 when no answer came.
 *
 * Ownership: handles are the caller's (gp_kube_new / gp_kube_free);
 * JSON returned is a new reference the caller decrefs; JSON given in is
 * borrowed. */
#ifndef GP_K8S_CLIENT_H
#define GP_K8S_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_KUBE_ERROR_MAX 512

struct gp_kube_config;
struct gp_kube;

/* How to find the server: any field NULL means "not given". */
struct gp_kube_options {
	const char *api_url;            /* 1. above */
	const char *token_file;         /* with api_url: a bearer token file */
	const char *kubeconfig;         /* 2. above (else $KUBECONFIG) */
};

/* Loads the configuration; -ENOENT when none of the three is there,
 * -EINVAL for a malformed kubeconfig: the reason in err. */
int gp_kube_config_load(const struct gp_kube_options *o, struct gp_kube_config **ret,
			char *err, size_t err_len);
struct gp_kube_config *gp_kube_config_free(struct gp_kube_config *c);
/* The server's base URL ("https://10.0.0.1:443"); owned by the config. */
const char *gp_kube_config_server(const struct gp_kube_config *c);

/* A handle borrows its config, which must outlive it. */
int gp_kube_new(const struct gp_kube_config *c, struct gp_kube **ret);
struct gp_kube *gp_kube_free(struct gp_kube *k);
/* The message of the last failed request ("" when none). */
const char *gp_kube_error(const struct gp_kube *k);

/* GET path ("/api/v1/nodes/n1"); the object in *ret_obj. */
int gp_kube_get(struct gp_kube *k, const char *path, json_t **ret_obj, long *ret_status);

/* A complete list (following "continue" tokens, limit 500 a page): the
 * items array in *ret_items and the list's resourceVersion in
 * ret_version (a buffer of version_len bytes; -ERANGE when too short). */
int gp_kube_list(struct gp_kube *k, const char *path, json_t **ret_items, char *ret_version,
		 size_t version_len, long *ret_status);

/* PATCH path with a JSON merge patch (application/merge-patch+json,
 * RFC 7386); the object after the patch in *ret_obj (may be NULL). */
int gp_kube_merge_patch(struct gp_kube *k, const char *path, json_t *patch, json_t **ret_obj,
			long *ret_status);

/* POST path with body (create); the created object in *ret_obj (may be
 * NULL). A conflict (409, AlreadyExists) is -EEXIST. */
int gp_kube_post(struct gp_kube *k, const char *path, json_t *body, json_t **ret_obj,
		 long *ret_status);

/* Binds a pod to a node: POST .../namespaces/NS/pods/NAME/binding with a
 * v1 Binding (target Node, the pod's uid as a precondition). Annotations
 * (a JSON object of strings, borrowed; NULL: none) go in the Binding's
 * metadata, which the API server writes onto the pod in the same update
 * as spec.nodeName. -EEXIST when the pod is bound already (409), -ENOENT
 * when it is gone (404). */
int gp_kube_bind(struct gp_kube *k, const char *ns, const char *name, const char *uid,
		 const char *node, json_t *annotations);

/* Records a core/v1 Event about an object (involvedObject from its kind,
 * namespace, name, uid), type "Normal" or "Warning", with a reason
 * ("FailedScheduling") and a message; `component` is the source. */
int gp_kube_event(struct gp_kube *k, const char *kind, const char *ns, const char *name,
		  const char *uid, const char *type, const char *reason, const char *message,
		  const char *component);

/* An event about an object, for gp_kube_event_count; every field borrowed. */
struct gp_kube_event_of {
	const char *kind, *ns, *name, *uid;     /* the object; ns NULL: cluster-scoped */
	const char *type;                       /* "Normal" or "Warning" */
	const char *reason, *message, *component;
};

/* Records one more occurrence of an event, as kubelet and kube-scheduler
 * count repeated events: one Event object per object, type, reason and
 * message, named after the object and a hash of them, made with count 1
 * the first time; when it exists already (409 AlreadyExists, whoever made
 * it: another handle, an earlier run) its count is raised by one and its
 * lastTimestamp set (a merge patch on its resourceVersion, tried again on
 * a conflict). */
int gp_kube_event_count(struct gp_kube *k, const struct gp_kube_event_of *ev);

/* ---- informers: list, then watch, for ever ------------------------------
 *
 * An informer keeps a thread that lists `path` ("/api/v1/pods",
 * "/api/v1/nodes", with an optional "?fieldSelector=..." or
 * "?labelSelector=..." query), then watches from the list's
 * resourceVersion with allowWatchBookmarks=true and timeoutSeconds, and
 * calls back for every change. Bookmarks move its resourceVersion on; a
 * watch that ends is started again from the last resourceVersion; a
 * "410 Gone" (as an HTTP status or an ERROR event with code 410) starts a
 * new list, whose result replaces everything (on_sync). A server that
 * cannot be reached is tried again with exponential backoff (100 ms
 * doubling to 10 s, with jitter). Each watch asks for timeoutSeconds=300
 * and is cut when nothing (not even a bookmark) came for 120 s; tests may
 * set both with $GPUPOOL_KUBE_WATCH_SECONDS and
 * $GPUPOOL_KUBE_WATCH_IDLE_SECONDS (read at gp_kube_informer_start).
 *
 * Callbacks run on the informer's thread, one at a time, in the server's
 * order; they borrow the object (incref to keep it). */
enum gp_kube_event_type {
	GP_KUBE_ADDED,
	GP_KUBE_MODIFIED,
	GP_KUBE_DELETED,
};

struct gp_kube_informer_ops {
	/* After every (re)list: the complete list's items, which replace
	 * whatever the callee held before. */
	void (*on_sync)(void *ctx, json_t *items);
	void (*on_event)(void *ctx, enum gp_kube_event_type type, json_t *object);
	/* Optional: the informer lost the server, or got it back (for
	 * readiness and logs); `message` says what happened. */
	void (*on_state)(void *ctx, bool connected, const char *message);
};

struct gp_kube_informer;

/* Starts the thread; it makes its own handle from c (borrowed: must
 * outlive the informer). */
int gp_kube_informer_start(const struct gp_kube_config *c, const char *path,
			   const struct gp_kube_informer_ops *ops, void *ctx,
			   struct gp_kube_informer **ret);
/* Stops the thread (interrupting a watch in progress within 200 ms) and
 * frees it. Accepts NULL; returns NULL. */
struct gp_kube_informer *gp_kube_informer_stop(struct gp_kube_informer *i);
/* True once the first list has been delivered (on_sync called). */
bool gp_kube_informer_synced(const struct gp_kube_informer *i);

#endif
