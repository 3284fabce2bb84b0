/* client-impl.h — what the API client's files share (kubeconfig.c makes
 * the configuration, client.c makes the requests, informer.c runs watches
 * on client.c's streaming request); not for use outside src/k8s/client*.
 *
 * A configuration is read once and never changed afterwards, so that any
 * number of handles and informer threads may read it at once. */
#ifndef GP_K8S_CLIENT_IMPL_H
#define GP_K8S_CLIENT_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "k8s/client.h"

/* Bytes decoded from a kubeconfig's *-data field (PEM text). */
struct gp_kube_blob {
	unsigned char *data;
	size_t len;
};

/* Where the server is and how to prove who we are; every field owned by
 * the configuration, NULL (or an empty blob) when not given. For each of
 * the CA, the client certificate and its key, a file or data, not both. */
struct gp_kube_config {
	char *server;                  /* "https://host:port", no trailing '/' */
	char *token;                   /* a bearer token given as text */
	char *token_file;              /* a bearer token read before each request */
	char *ca_file;
	struct gp_kube_blob ca;
	char *cert_file;
	struct gp_kube_blob cert;
	char *key_file;
	struct gp_kube_blob key;
	bool insecure;                 /* insecure-skip-tls-verify */
};

/* The bearer token for the next request in *ret (the caller frees it;
 * NULL when the configuration has none); a token file that cannot be
 * read is -errno with the reason in err. */
int gp_kube_config_token(const struct gp_kube_config *c, char **ret, char *err, size_t err_len);

/* Receives a watch's bytes as they come, once the answer is a 200: data
 * NULL (len 0) once when the stream opens, then the body in pieces of any
 * size. Returning false ends the stream (gp_kube_stream returns -EBADMSG). */
typedef bool (*gp_kube_sink_fn)(void *ctx, const char *data, size_t len);

/* GET path as a stream that may last timeout_s seconds (a watch): the body
 * goes to sink when the status is 200, else it is read as a Status for
 * gp_kube_error. 0 when the server ended the stream; -ECONNRESET when the
 * connection broke in the middle, -ETIMEDOUT when nothing came for the
 * idle limit (idle_s), -ECANCELED when stopped, else as the other requests.
 * The status (0 when none came) in *ret_status. */
int gp_kube_stream(struct gp_kube *k, const char *path, long timeout_s, long idle_s,
		   gp_kube_sink_fn sink, void *ctx, long *ret_status);

/* Makes every request of k end with -ECANCELED within a poll interval
 * (100 ms) of *stop becoming true; stop is borrowed and must outlive k's
 * requests. gp_kube_wake (the one call that may come from another
 * thread) ends the wait at once. */
void gp_kube_stop_on(struct gp_kube *k, const atomic_bool *stop);
void gp_kube_wake(struct gp_kube *k);

#endif
