/* parse.c — reading numbers that people type, writing sizes (parse.h). */
#include "base/parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool gp_parse_uint(const char *text, unsigned lo, unsigned hi, const char *suffix,
		   unsigned *ret)
{
	unsigned long v;
	char *end;

	if (!text || !(*text >= '0' && *text <= '9'))
		return false;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || v < lo || v > hi || (*end && !(suffix && !strcmp(end, suffix))))
		return false;
	*ret = (unsigned)v;
	return true;
}

/* The power of 1024 that a unit names ("G", "gb", "GiB": 3); -1 when it
 * names none. "" is 0. */
static int unit_power(const char *unit)
{
	static const char letters[] = "kmgt";
	const char *at;

	if (!*unit)
		return 0;
	at = strchr(letters, unit[0] | 0x20);
	if (!at || !*at || (unit[1] && strcasecmp(unit + 1, "b") && strcasecmp(unit + 1, "ib")))
		return -1;
	return 1 + (int)(at - letters);
}

int gp_parse_size_in(const char *text, uint64_t unit, uint64_t *ret_bytes)
{
	uint64_t n = 0, scale = unit;
	const char *p = text;
	int power;

	if (!text || !ret_bytes || !unit)
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned digit = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - digit) / 10)
			return -EINVAL;
		n = n * 10 + digit;
	}
	power = unit_power(p);
	if (p == text || power < 0)
		return -EINVAL;
	if (power > 0)
		scale = 1ULL << (10 * power);
	if (n && n > UINT64_MAX / scale)
		return -EINVAL;
	*ret_bytes = n * scale;
	return 0;
}

int gp_parse_size(const char *text, uint64_t *ret_bytes)
{
	return gp_parse_size_in(text, 1, ret_bytes);
}

void gp_size_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (10ULL << 30))
		snprintf(buf, len, "%" PRIu64 " GiB", bytes >> 30);
	else if (bytes >= (1ULL << 30))
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1 << 30));
	else if (bytes >= (1ULL << 20))
		snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
	else if (bytes >= (1ULL << 10))
		snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
}

/* ---- job options ---------------------------------------------------------- */

/* A part of a time: decimal digits up to the next of `stops` (or the
 * end), at most `max`; its end in *ret_end. False when there are none or
 * it is larger. */
static bool time_part(const char *p, const char *stops, uint64_t max, uint64_t *ret,
		      const char **ret_end)
{
	uint64_t v = 0;
	const char *q = p;

	for (; *q >= '0' && *q <= '9'; q++) {
		v = v * 10 + (uint64_t)(*q - '0');
		if (v > max)
			return false;
	}
	if (q == p || (*q && !strchr(stops, *q)))
		return false;
	*ret = v;
	*ret_end = q;
	return true;
}

/* The parts of "A[:B[:C]]" into v[0..*ret_n), the first up to first_max,
 * the others under 60. */
static bool time_parts(const char *p, uint64_t first_max, uint64_t v[3], int *ret_n)
{
	int n = 0;

	for (;;) {
		if (n == 3 || !time_part(p, ":", n ? 59 : first_max, &v[n], &p))
			return false;
		n++;
		if (!*p)
			break;
		p++; /* the ':' */
	}
	*ret_n = n;
	return true;
}

static bool time_is_none(const char *text)
{
	return !strcmp(text, "0") || !strcasecmp(text, "unlimited") ||
	       !strcasecmp(text, "infinite");
}

int gp_parse_time_limit(const char *text, uint64_t *ret_seconds)
{
	uint64_t days = 0, v[3], s;
	const char *rest = text;
	int n;

	if (!text || !ret_seconds)
		return -EINVAL;
	if (time_is_none(text)) {
		*ret_seconds = 0;
		return 0;
	}
	if (strchr(text, '-') &&
	    (!time_part(text, "-", GP_TIME_LIMIT_MAX_S, &days, &rest) || !*++rest))
		return -EINVAL;
	if (!time_parts(rest, rest == text ? GP_TIME_LIMIT_MAX_S : 23, v, &n))
		return -EINVAL;
	if (rest != text) /* DAYS-HOURS[:MINUTES[:SECONDS]] */
		s = days * 86400 + v[0] * 3600 + (n > 1 ? v[1] * 60 : 0) + (n > 2 ? v[2] : 0);
	else if (n == 3) /* HOURS:MINUTES:SECONDS */
		s = v[0] * 3600 + v[1] * 60 + v[2];
	else /* MINUTES[:SECONDS] */
		s = v[0] * 60 + (n > 1 ? v[1] : 0);
	if (days > GP_TIME_LIMIT_MAX_S / 86400 || s > GP_TIME_LIMIT_MAX_S)
		return -EINVAL;
	*ret_seconds = s;
	return 0;
}

void gp_time_limit_text(uint64_t seconds, char *buf, size_t len)
{
	uint64_t d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60,
		 s = seconds % 60;

	if (!seconds)
		snprintf(buf, len, "unlimited");
	else if (d)
		snprintf(buf, len, "%" PRIu64 "-%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, d, h, m,
			 s);
	else
		snprintf(buf, len, "%" PRIu64 ":%02" PRIu64 ":%02" PRIu64, h, m, s);
}

/* One "ID[:ok|:any]" of a list, up to its ',' or the end; its end in
 * *ret_end. */
static bool after_one(const char *p, struct gp_after *ret, const char **ret_end)
{
	uint64_t id;
	size_t kind;

	if (!time_part(p, ":,", 1ULL << 53, &id, &p) || id == 0)
		return false;
	ret->id = (int64_t)id;
	ret->any = false;
	if (*p == ':') {
		kind = strcspn(++p, ",");
		if (kind == 3 && !strncmp(p, "any", 3))
			ret->any = true;
		else if (kind != 2 || strncmp(p, "ok", 2))
			return false;
		p += kind;
	}
	*ret_end = p;
	return true;
}

int gp_parse_after(const char *text, struct gp_after *ret, int *ret_n)
{
	struct gp_after all[GP_AFTER_MAX];
	const char *p = text;
	int n = 0;

	if (!text || !ret || !ret_n)
		return -EINVAL;
	for (;;) {
		if (n == GP_AFTER_MAX || !after_one(p, &all[n], &p))
			return -EINVAL;
		for (int i = 0; i < n; i++)
			if (all[i].id == all[n].id)
				return -EINVAL;
		n++;
		if (!*p)
			break;
		p++; /* the ',' */
	}
	memcpy(ret, all, (size_t)n * sizeof(*all));
	*ret_n = n;
	return 0;
}

void gp_after_text(const struct gp_after *after, int n, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%" PRId64 ":%s",
					 i ? "," : "", after[i].id, after[i].any ? "any" : "ok");
}

int gp_parse_array(const char *text, unsigned *ret_first, unsigned *ret_last)
{
	uint64_t a, b;
	const char *p;

	if (!text || !ret_first || !ret_last ||
	    !time_part(text, "-", GP_ARRAY_INDEX_MAX, &a, &p))
		return -EINVAL;
	if (!*p) { /* N tasks, 0 to N - 1 */
		if (a < 1 || a > GP_ARRAY_MAX)
			return -EINVAL;
		b = a - 1;
		a = 0;
	} else if (!time_part(p + 1, "", GP_ARRAY_INDEX_MAX, &b, &p) || b < a ||
		   b - a >= GP_ARRAY_MAX) {
		return -EINVAL;
	}
	*ret_first = (unsigned)a;
	*ret_last = (unsigned)b;
	return 0;
}
