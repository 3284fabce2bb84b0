/* bytes.c — a growing byte buffer (bytes.h). */
#include "base/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_CAP 4096

int gp_bytes_add(struct gp_bytes *b, const void *data, size_t len)
{
	size_t need = b->len + len + 1, cap = b->cap ? b->cap : FIRST_CAP;
	char *grown;

	if (need < b->len || (b->max && need > b->max + 1))
		return -EFBIG;
	while (cap < need)
		cap *= 2;
	if (cap != b->cap) {
		if (!(grown = realloc(b->data, cap)))
			return -ENOMEM;
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

void gp_bytes_clear(struct gp_bytes *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void gp_bytes_free(struct gp_bytes *b)
{
	free(b->data);
	*b = (struct gp_bytes){.max = b->max};
}

size_t gp_bytes_curl_write(char *data, size_t size, size_t n, void *ctx)
{
	return gp_bytes_add(ctx, data, size * n) == 0 ? size * n : 0;
}
