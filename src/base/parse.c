/* parse.c — reading numbers that people type (parse.h). */
#include "base/parse.h"

#include <errno.h>
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
