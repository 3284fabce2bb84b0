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
