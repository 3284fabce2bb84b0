/* bytes.h — a growing byte buffer, kept NUL-terminated so that text read
 * into it (an HTTP answer, a file) can be used as a string, with an
 * optional cap. The one buffer for what arrives in pieces: libcurl's
 * answers in the CLI, the Kubernetes client and the server's reads of the
 * nodes' /metrics.
 *
 * Ownership: zero it to start (`struct gp_bytes b = {.max = ...}`); the
 * owner frees `data` with gp_bytes_free (or takes it: a malloc'd string). */
#ifndef GP_BASE_BYTES_H
#define GP_BASE_BYTES_H

#include <stddef.h>

struct gp_bytes {
	char *data;     /* NULL until something was added; then NUL-terminated */
	size_t len, cap;
	size_t max;     /* the most it may hold; 0: no cap */
};

/* Appends len bytes. 0; -EFBIG past max (nothing added); -ENOMEM. */
int gp_bytes_add(struct gp_bytes *b, const void *data, size_t len);
/* Empty again, its memory kept for the next answer. */
void gp_bytes_clear(struct gp_bytes *b);
void gp_bytes_free(struct gp_bytes *b);

/* A libcurl write callback (CURLOPT_WRITEFUNCTION) into the struct
 * gp_bytes at ctx (CURLOPT_WRITEDATA): size * n, or 0 when it cannot take
 * them (libcurl then fails the transfer). */
size_t gp_bytes_curl_write(char *data, size_t size, size_t n, void *ctx);

#endif
