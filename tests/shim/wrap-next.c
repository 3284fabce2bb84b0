/* wrap-next.c — a wrapper library of the kind profilers and malloc shims
 * are: preloaded beside libgpushare, it wraps rand() and finds the real one
 * with dlsym(RTLD_NEXT, "rand"). With libgpushare's dlsym answering as if
 * it were the caller, it would get its own rand back (and recurse). */
#include <dlfcn.h>
#include <stdlib.h>

int wrap_next_is_self;          /* what the lookup gave: set on first use */
int wrap_next_is_libc;

int rand(void)
{
	static int (*next)(void);

	if (!next) {
		void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

		next = (int (*)(void))dlsym(RTLD_NEXT, "rand");
		wrap_next_is_self = next == rand;
		wrap_next_is_libc = libc && next == (int (*)(void))dlsym(libc, "rand");
		if (libc)
			dlclose(libc);
	}
	return wrap_next_is_self || !next ? -1 : next();
}
