/* runtime.c — the list of gpuload's runtimes (see runtime.h) and the one
 * way a failed runtime call is reported. Each runtime is its own
 * rt-NAME.c defining gl_runtime_NAME; adding one takes its line in
 * GL_RUNTIME_LIST below and its file in tools/gpuload/meson.build. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

/* REGISTRATION: one line per runtime, `X(NAME) \`, in --help's order.
 * Add yours above the end marker. */
#define GL_RUNTIME_LIST(X)      \
	X(cuda)                 \
	X(cnrt)                 \
	X(hip)                  \
	X(ze)                   \
	X(acl)                  \
	/* end of the list */

#define GL_RUNTIME_DECLARE(name) extern const struct gl_runtime gl_runtime_##name;
GL_RUNTIME_LIST(GL_RUNTIME_DECLARE)
#undef GL_RUNTIME_DECLARE

#define GL_RUNTIME_ENTRY(name) &gl_runtime_##name,
const struct gl_runtime *const gl_runtimes[] = { GL_RUNTIME_LIST(GL_RUNTIME_ENTRY) NULL };
#undef GL_RUNTIME_ENTRY

const struct gl_runtime *gl_runtime_find(const char *name)
{
	for (size_t i = 0; gl_runtimes[i]; i++)
		if (!strcmp(gl_runtimes[i]->name, name))
			return gl_runtimes[i];
	return NULL;
}

int gl_report(const char *call, const char *error_name, const char *error_text)
{
	if (error_text)
		fprintf(stderr, "gpuload: %s: %s (%s)\n", call, error_name, error_text);
	else
		fprintf(stderr, "gpuload: %s: %s\n", call, error_name);
	return -EIO;
}
