/* next-probe.c — asks what dlsym(RTLD_NEXT, …) gives, from a preloaded
 * wrapper library (wrap-next.c) and from the program itself, and prints it
 * as JSON for tests/shim/test-dlsym-next.sh. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	int *self = dlsym(RTLD_DEFAULT, "wrap_next_is_self");
	int *libc = dlsym(RTLD_DEFAULT, "wrap_next_is_libc");
	int r = rand();
	void *wrapper = dlsym(RTLD_DEFAULT, "rand");
	void *after_main = dlsym(RTLD_NEXT, "rand");

	if (!self || !libc) {
		fprintf(stderr, "next-probe: the wrapper library is not loaded\n");
		return 1;
	}
	/* From the program, the next rand is the first preloaded one. */
	printf("{\"rand\": %d, \"wrapper_next_is_self\": %s, \"wrapper_next_is_libc\": %s, "
	       "\"main_next_is_wrapper\": %s}\n", r, *self ? "true" : "false",
	       *libc ? "true" : "false", after_main == wrapper ? "true" : "false");
	return 0;
}
