/* reply.c — JSON text in a growing buffer (see reply.h). */
#include "k8s/reply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool room(struct gp_reply *r, size_t n)
{
	char *grown;
	size_t cap;

	if (r->failed)
		return false;
	if (r->len + n + 1 <= r->cap)
		return true;
	cap = r->cap ? r->cap : 4096;
	while (cap < r->len + n + 1)
		cap *= 2;
	grown = realloc(r->text, cap);
	if (!grown) {
		r->failed = true;
		return false;
	}
	r->text = grown;
	r->cap = cap;
	return true;
}

void gp_reply_raw(struct gp_reply *r, const char *bytes, size_t n)
{
	if (!room(r, n))
		return;
	memcpy(r->text + r->len, bytes, n);
	r->len += n;
}

void gp_reply_put(struct gp_reply *r, const char *text)
{
	gp_reply_raw(r, text, strlen(text));
}

/* Bytes a JSON string must escape: control characters, '"', '\'. */
static bool escaped(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\';
}

void gp_reply_string(struct gp_reply *r, const char *text, size_t n)
{
	const unsigned char *c = (const unsigned char *)text, *end = c + n;

	if (room(r, n + 2)) {           /* the common case: nothing to escape */
		size_t i = 0;

		while (i < n && !escaped(c[i]))
			i++;
		if (i == n) {
			r->text[r->len] = '"';
			memcpy(r->text + r->len + 1, text, n);
			r->text[r->len + 1 + n] = '"';
			r->len += n + 2;
			return;
		}
	}
	gp_reply_raw(r, "\"", 1);
	while (c < end) {
		const unsigned char *plain = c;
		char esc[8];

		while (c < end && !escaped(*c))
			c++;
		gp_reply_raw(r, (const char *)plain, (size_t)(c - plain));
		if (c == end)
			break;
		if (*c == '"' || *c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", *c);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", *c);
		gp_reply_put(r, esc);
		c++;
	}
	gp_reply_raw(r, "\"", 1);
}

void gp_reply_int(struct gp_reply *r, long v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%ld", v);

	gp_reply_raw(r, num, (size_t)n);
}

char *gp_reply_take(struct gp_reply *r)
{
	char *text;

	if (!room(r, 0)) {
		gp_reply_release(r);
		return NULL;
	}
	r->text[r->len] = 0;
	text = r->text;
	*r = (struct gp_reply){ 0 };
	return text;
}

void gp_reply_release(struct gp_reply *r)
{
	free(r->text);
	*r = (struct gp_reply){ 0 };
}
