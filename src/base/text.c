/* text.c — escaping what a terminal could take as a control (text.h).
 * The input is read one UTF-8 sequence at a time (well-formed as
 * Unicode's table 3-7 has it: no overlong forms, no surrogates, nothing
 * past U+10FFFF); each sequence is copied, or written as its escape. */
#include "base/text.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* One sequence of the input: its length in bytes and its code point, or
 * len 1 and cp -1 for a byte that starts no well-formed sequence. */
struct seq {
	size_t len;
	int32_t cp;
};

static bool is_cont(unsigned char c, unsigned char lo, unsigned char hi)
{
	return c >= lo && c <= hi;
}

/* The bounds of the second byte after a lead byte c (table 3-7), and how
 * many bytes the sequence has; 0 when c leads none. */
static size_t lead(unsigned char c, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef) {
		*lo = c == 0xe0 ? 0xa0 : 0x80;
		*hi = c == 0xed ? 0x9f : 0xbf;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		*lo = c == 0xf0 ? 0x90 : 0x80;
		*hi = c == 0xf4 ? 0x8f : 0xbf;
		return 4;
	}
	return 0;
}

static struct seq seq_next(const unsigned char *p, size_t left)
{
	unsigned char lo, hi;
	size_t n = lead(p[0], &lo, &hi);
	int32_t cp;

	if (p[0] < 0x80)
		return (struct seq){ 1, p[0] };
	if (n == 0 || n > left || !is_cont(p[1], lo, hi))
		return (struct seq){ 1, -1 };
	cp = p[0] & (0xff >> (n + 1));
	for (size_t i = 1; i < n; i++) {
		if (i > 1 && !is_cont(p[i], 0x80, 0xbf))
			return (struct seq){ 1, -1 };
		cp = cp << 6 | (p[i] & 0x3f);
	}
	return (struct seq){ n, cp };
}

/* Is code point cp one to escape (text.h)? */
static bool cp_escaped(int32_t cp)
{
	return cp < 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The escape of a sequence into esc (at least 8 bytes); its length. */
static size_t escape_of(struct seq s, unsigned char first, char *esc)
{
	switch (s.cp) {
	case '\n': return (size_t)snprintf(esc, 8, "\\n");
	case '\t': return (size_t)snprintf(esc, 8, "\\t");
	case '\r': return (size_t)snprintf(esc, 8, "\\r");
	}
	if (s.cp < 0 || s.cp < 0x80)
		return (size_t)snprintf(esc, 8, "\\x%02x", s.cp < 0 ? first : (unsigned)s.cp);
	return (size_t)snprintf(esc, 8, "\\u%04x", (unsigned)s.cp);
}

bool gp_text_is_plain(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);

	while (left) {
		struct seq q = seq_next(p, left);

		if (cp_escaped(q.cp))
			return false;
		p += q.len;
		left -= q.len;
	}
	return true;
}

size_t gp_text_escape_n(const char *s, size_t len, char *out, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t total = 0, used = 0;
	bool full = size == 0;

	while (len) {
		struct seq q = seq_next(p, len);
		char esc[8];
		const char *piece = (const char *)p;
		size_t n = q.len;

		if (cp_escaped(q.cp)) {
			n = escape_of(q, p[0], esc);
			piece = esc;
		}
		if (!full && used + n < size) {
			memcpy(out + used, piece, n);
			used += n;
		} else {
			full = true; /* nothing more, not even a shorter piece */
		}
		total += n;
		p += q.len;
		len -= q.len;
	}
	if (size)
		out[used] = '\0';
	return total;
}

size_t gp_text_escape(const char *s, char *out, size_t size)
{
	return gp_text_escape_n(s, strlen(s), out, size);
}
