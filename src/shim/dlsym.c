/* dlsym.c — answering dlsym for the runtimes' handles (front.h).
 *
 * A program that dlopens a runtime ("libcuda.so.1", "libascendcl.so", …)
 * and looks its functions up with dlsym on that handle does not see a
 * preloaded library's symbols; so libgpushare exports dlsym itself: on a
 * handle of a front end's library it answers the front end's hook, and
 * otherwise it is the C library's dlsym. dlsym(RTLD_NEXT, …) asked by
 * another library is answered as if that library had asked the C
 * library (next_after). */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "shim/front.h"

typedef void *(*dlsym_fn)(void *, const char *);

/* The C library's dlsym, not ours. */
static dlsym_fn real_dlsym(void)
{
	static dlsym_fn _Atomic fn;
	dlsym_fn f = fn;

	if (!f) {
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!f)
			f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		fn = f;
	}
	return f;
}

void *gp_shim_real_dlsym(void *handle, const char *symbol)
{
	dlsym_fn next = real_dlsym();

	return next ? next(handle, symbol) : NULL;
}

#ifndef GP_SHIM_NO_DLSYM
/* Left out only of tests/shim/test-threads.c's linked build (the
 * ThreadSanitizer pass): a dlsym of our own would run before the
 * sanitizer's runtime is set up, and that runtime finds the functions it
 * wraps with dlsym. */

/* The file name of the library `handle` is a handle of, or NULL. Asks
 * the dynamic linker, so that a process looking up symbols in other
 * libraries never loads a runtime. */
static const char *handle_name(void *handle)
{
	struct link_map *map = NULL;
	const char *base;

	if (handle == RTLD_DEFAULT || handle == RTLD_NEXT ||
	    dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name)
		return NULL;
	base = strrchr(map->l_name, '/');
	return base ? base + 1 : map->l_name;
}

/* dlsym(RTLD_NEXT, …) asked by another library (a profiler, a malloc
 * wrapper): the C library would search after the object that called it,
 * which is us, and could hand that library its own function back. So we
 * search after the caller ourselves: the objects loaded after it, in
 * order, each asked for a symbol it defines itself. Without a caller we
 * can name, the C library's answer. */
static void *next_after(const void *caller, const char *symbol, dlsym_fn next)
{
	struct link_map *from = NULL;
	Dl_info info;

	if (!dladdr1(caller, &info, (void **)&from, RTLD_DL_LINKMAP) || !from)
		return next(RTLD_NEXT, symbol);
	for (struct link_map *m = from->l_next; m; m = m->l_next) {
		void *h = dlopen(m->l_name, RTLD_LAZY | RTLD_NOLOAD), *found;
		struct link_map *owner = NULL;

		if (!h)
			continue;               /* the vDSO: not a file */
		found = next(h, symbol);
		if (found && !(dladdr1(found, &info, (void **)&owner, RTLD_DL_LINKMAP) &&
			       owner == m))
			found = NULL;           /* one of its dependencies' */
		dlclose(h);
		if (found)
			return found;
	}
	return NULL;
}

void *dlsym(void *handle, const char *symbol)
{
	dlsym_fn next = real_dlsym();
	const char *name;

	if (!next)
		return NULL;
	if (handle == RTLD_NEXT)
		return next_after(__builtin_return_address(0), symbol, next);
	name = handle_name(handle);
	for (size_t i = 0; name && gp_shim_fronts[i]; i++) {
		struct gp_shim_front *f = gp_shim_fronts[i];
		void *hook;

		if (f->library && f->hook && strncmp(name, f->library, strlen(f->library)) == 0 &&
		    (hook = f->hook(symbol)))
			return hook;
	}
	return next(handle, symbol);
}
#endif
