/* parse.c — reading numbers that people type, writing sizes (parse.h). */
#include "base/parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
