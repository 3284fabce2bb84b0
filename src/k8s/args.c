/* args.c — ExtenderArgs read fast (see args.h): a scanner over a copy of
 * the body that decodes the node names in place and hands the Pod and a
 * Nodes list to jansson. */
#include "k8s/args.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct scan {
	char *p, *end;
};

static void skip_space(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static bool take(struct scan *s, char c)
{
	skip_space(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return true;
	}
	return false;
}

static int hex4(const char *p, unsigned *ret)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (unsigned)((c | 0x20) - 'a' + 10);
		else
			return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* Writes code point cp as UTF-8 at *w. */
static void utf8_put(char **w, unsigned cp)
{
	unsigned char *o = (unsigned char *)*w;

	if (cp < 0x80) {
		*o++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*o++ = (unsigned char)(0xc0 | cp >> 6);
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (unsigned char)(0xe0 | cp >> 12);
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (unsigned char)(0xf0 | cp >> 18);
		*o++ = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	}
	*w = (char *)o;
}

/* A \uXXXX escape at *r (past the backslash and u), a surrogate pair
 * taking two; the code point in *ret. */
static int unicode_escape(struct scan *s, char **r, unsigned *ret)
{
	unsigned hi, lo;

	if (s->end - *r < 4 || hex4(*r, &hi) < 0)
		return -EINVAL;
	*r += 4;
	if (hi < 0xd800 || hi > 0xdfff) {
		*ret = hi;
		return 0;
	}
	if (hi > 0xdbff || s->end - *r < 6 || (*r)[0] != '\\' || (*r)[1] != 'u' ||
	    hex4(*r + 2, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
		return -EINVAL;
	*r += 6;
	*ret = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

/* The string at s->p (its opening quote), decoded in place and ended with
 * a NUL (the decoded text is never longer than the written one); its
 * length in *ret_len. */
static int string_in_place(struct scan *s, char **ret, size_t *ret_len)
{
	static const char plain[] = "\"\\/bfnrt", decoded[] = "\"\\/\b\f\n\r\t";
	char *r, *w;

	if (!take(s, '"'))
		return -EINVAL;
	*ret = w = r = s->p;
	while (r < s->end && *r != '"') {
		const char *e;
		unsigned cp;

		if ((unsigned char)*r < 0x20)
			return -EINVAL;
		if (*r != '\\') {
			*w++ = *r++;
			continue;
		}
		if (++r >= s->end)
			return -EINVAL;
		if (*r == 'u') {
			r++;
			if (unicode_escape(s, &r, &cp) < 0 || cp == 0)
				return -EINVAL;
			utf8_put(&w, cp);
		} else if ((e = strchr(plain, *r)) && *r) {
			*w++ = decoded[e - plain];
			r++;
		} else {
			return -EINVAL;
		}
	}
	if (r >= s->end)
		return -EINVAL;
	*w = 0;
	*ret_len = (size_t)(w - *ret);
	s->p = r + 1;
	return 0;
}

/* Past one value of any kind, without decoding it. */
static int skip_value(struct scan *s)
{
	int depth = 0;

	skip_space(s);
	do {
		if (s->p >= s->end)
			return -EINVAL;
		if (*s->p == '"') {
			for (s->p++; s->p < s->end && *s->p != '"'; s->p++)
				if (*s->p == '\\')
					s->p++;
			if (s->p >= s->end)
				return -EINVAL;
		} else if (*s->p == '{' || *s->p == '[') {
			depth++;
		} else if (*s->p == '}' || *s->p == ']') {
			depth--;
		} else if (depth == 0) {
			while (s->p < s->end && !strchr(",}] \t\r\n", *s->p))
				s->p++;
			return 0;
		}
		s->p++;
	} while (depth > 0);
	return depth == 0 ? 0 : -EINVAL;
}

/* Room for one more name. */
static int names_grow(struct gp_extender_args *a, size_t *cap)
{
	size_t want = *cap ? *cap * 2 : 256;
	const char **names;
	size_t *lens;

	if (a->names < *cap)
		return 0;
	names = realloc(a->name, want * sizeof(*names));
	if (names)
		a->name = names;
	lens = names ? realloc(a->name_len, want * sizeof(*lens)) : NULL;
	if (!lens)
		return -ENOMEM;
	a->name_len = lens;
	*cap = want;
	return 0;
}

static void name_add(struct gp_extender_args *a, const char *name, size_t len)
{
	a->name[a->names] = name;
	a->name_len[a->names++] = len;
}

/* "NodeNames": [ "a", "b", ... ] */
static int names_scan(struct scan *s, struct gp_extender_args *a)
{
	size_t cap = 0, len;
	char *name;
	int r;

	if (!take(s, '['))
		return -EINVAL;
	if (take(s, ']'))
		return 0;
	do {
		skip_space(s);
		if ((r = string_in_place(s, &name, &len)) < 0 || (r = names_grow(a, &cap)) < 0)
			return r;
		name_add(a, name, len);
	} while (take(s, ','));
	return take(s, ']') ? 0 : -EINVAL;
}

/* "Nodes": {"items": [...]}: the names are the items' metadata.name. */
static int nodes_take(struct gp_extender_args *a, json_t *list)
{
	json_t *items = json_object_get(list, "items"), *node;
	size_t i, cap = 0;
	int r;

	if (!json_is_array(items))
		return -EINVAL;
	a->nodes = json_incref(items);
	json_array_foreach(items, i, node) {
		const char *name = json_string_value(
			json_object_get(json_object_get(node, "metadata"), "name"));

		if (!name)
			return -EINVAL;
		if ((r = names_grow(a, &cap)) < 0)
			return r;
		name_add(a, name, strlen(name));
	}
	return 0;
}

/* One "key": value of the top object. */
static int member_scan(struct scan *s, struct gp_extender_args *a, bool *ret_names)
{
	char *key, *start;
	size_t key_len;
	json_t *v;
	int r;

	skip_space(s);
	if ((r = string_in_place(s, &key, &key_len)) < 0 || !take(s, ':'))
		return -EINVAL;
	if (strcmp(key, "NodeNames") == 0) {
		skip_space(s);
		if (s->p + 4 <= s->end && !memcmp(s->p, "null", 4)) {
			s->p += 4;
			return 0;
		}
		*ret_names = true;
		return names_scan(s, a);
	}
	skip_space(s);
	start = s->p;
	if ((r = skip_value(s)) < 0)
		return r;
	if (strcmp(key, "Pod") != 0 && strcmp(key, "Nodes") != 0)
		return 0;
	v = json_loadb(start, (size_t)(s->p - start), JSON_DECODE_ANY, NULL);
	if (!v)
		return -EINVAL;
	if (strcmp(key, "Pod") == 0) {
		json_decref(a->pod);
		a->pod = v;
		return 0;
	}
	r = json_is_null(v) ? 0 : nodes_take(a, v);
	json_decref(v);
	return r;
}

int gp_extender_args_parse(const char *body, size_t len, struct gp_extender_args *ret, char *err,
			   size_t err_len)
{
	struct gp_extender_args a = { .text = malloc(len + 1) };
	struct scan s = { a.text, a.text + len };
	bool names = false;
	int r = 0;

	if (!a.text)
		return -ENOMEM;
	memcpy(a.text, body, len);
	a.text[len] = 0;
	if (!take(&s, '{'))
		r = -EINVAL;
	if (r == 0 && !take(&s, '}')) {
		do
			r = member_scan(&s, &a, &names);
		while (r == 0 && take(&s, ','));
		if (r == 0 && !take(&s, '}'))
			r = -EINVAL;
	}
	if (r == 0 && (!json_is_object(a.pod) || (!names && !a.nodes)))
		r = -EINVAL;
	if (r < 0) {
		snprintf(err, err_len, "%s", r == -ENOMEM ? "out of memory" :
			 "not ExtenderArgs: want {\"Pod\": {...}, \"NodeNames\": [...]} or "
			 "{\"Pod\": {...}, \"Nodes\": {\"items\": [...]}}");
		gp_extender_args_release(&a);
		return r;
	}
	*ret = a;
	return 0;
}

void gp_extender_args_release(struct gp_extender_args *a)
{
	json_decref(a->pod);
	json_decref(a->nodes);
	free(a->name);
	free(a->name_len);
	free(a->text);
	memset(a, 0, sizeof(*a));
}
