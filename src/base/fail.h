/* fail.h — returning an error with its reason: the one line every
 * function that explains itself ends with ("return gp_fail(err, len,
 * -EINVAL, "field \"%s\": ...", name);").
 *
 * The reason goes into err (cut to err_len, always terminated when
 * err_len > 0; err may be NULL when err_len is 0); r is returned as it
 * is, so the caller's errno and text stay together. */
#ifndef GP_BASE_FAIL_H
#define GP_BASE_FAIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline __attribute__((format(printf, 4, 5))) int
gp_fail(char *err, size_t err_len, int r, const char *fmt, ...)
{
	va_list ap;

	if (err && err_len) {
		va_start(ap, fmt);
		vsnprintf(err, err_len, fmt, ap);
		va_end(ap);
	}
	return r;
}

#endif
