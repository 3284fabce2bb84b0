/* reply.h — JSON text written straight into a growing buffer, for the
 * extender's replies: they name every node offered (1,000s), once per pod,
 * and a buffer of bytes does that at a fraction of the cost of jansson
 * objects or a stdio stream.
 *
 * Ownership: a zero-filled gp_reply is empty; gp_reply_take hands the
 * text (NUL-terminated, malloc'd) to the caller and empties the buffer;
 * gp_reply_release frees what was not taken. Out of memory makes every
 * later call a no-op and gp_reply_take return NULL. */
#ifndef GP_K8S_REPLY_H
#define GP_K8S_REPLY_H

#include <stdbool.h>
#include <stddef.h>

struct gp_reply {
	char *text;
	size_t len, cap;
	bool failed;
};

/* n bytes as they are. */
void gp_reply_raw(struct gp_reply *r, const char *bytes, size_t n);
/* A NUL-terminated text as it is (JSON punctuation, keys). */
void gp_reply_put(struct gp_reply *r, const char *text);
/* n bytes of text as a JSON string: quoted, '"', '\' and control
 * characters escaped. */
void gp_reply_string(struct gp_reply *r, const char *text, size_t n);
/* An integer. */
void gp_reply_int(struct gp_reply *r, long v);

char *gp_reply_take(struct gp_reply *r);
void gp_reply_release(struct gp_reply *r);

#endif
