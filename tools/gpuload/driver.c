/* driver.c — loads gpuload's CUDA driver table (see driver.h): by
 * cuGetProcAddress_v2 at version 13000 like the CUDA runtime, or by plain
 * dlsym of the exported symbols with --direct. The library is closed only
 * when the table cannot be filled (before any call into the driver). */
#include "driver.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

struct gl_driver gl_cu;

struct lookup {
	void *handle;
	PFN_cuGetProcAddress_v2 gpa;    /* NULL: plain dlsym */
	char *err;
	size_t err_len;
};

static const char *status_text(CUdriverProcAddressQueryResult status)
{
	switch (status) {
	case CU_GET_PROC_ADDRESS_SUCCESS: return "found";
	case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: return "symbol not found";
	case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: return "version not sufficient";
	}
	return "unknown status";
}

/* The unversioned `name` through cuGetProcAddress_v2; NULL (and a message
 * in err) when the driver fails or does not have it. */
static void *lookup_gpa(const struct lookup *l, const char *name)
{
	CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	void *fn = NULL;
	CUresult r = l->gpa(name, &fn, GL_CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);

	if (r != CUDA_SUCCESS)
		snprintf(l->err, l->err_len, "cuGetProcAddress_v2(\"%s\", %d) failed: error %d",
			 name, GL_CUDA_VERSION, (int)r);
	else if (status != CU_GET_PROC_ADDRESS_SUCCESS || !fn)
		snprintf(l->err, l->err_len, "cuGetProcAddress_v2(\"%s\", %d): %s", name,
			 GL_CUDA_VERSION,
			 status != CU_GET_PROC_ADDRESS_SUCCESS ? status_text(status)
							       : "found, but no function returned");
	else
		return fn;
	return NULL;
}

static void *lookup_dlsym(const struct lookup *l, const char *symbol)
{
	void *fn = dlsym(l->handle, symbol);

	if (!fn)
		snprintf(l->err, l->err_len, "dlsym(\"%s\") in libcuda.so.1: %s", symbol,
			 dlerror());
	return fn;
}

static int fill_table(const struct lookup *l)
{
	void *fn;

#define GL_DRIVER_LOOKUP(member, symbol, type, required)                        \
	fn = l->gpa ? lookup_gpa(l, #member) : lookup_dlsym(l, symbol);        \
	if (!fn && (required))                                                  \
		return -ENOENT;                                                 \
	gl_cu.member = (type)fn;
	GL_DRIVER_FUNCTIONS(GL_DRIVER_LOOKUP)
#undef GL_DRIVER_LOOKUP
	return 0;
}

static void driver_close(void)
{
	if (gl_cu.handle)
		dlclose(gl_cu.handle);
	memset(&gl_cu, 0, sizeof(gl_cu));
}

int gl_driver_load(bool direct, char *err, size_t err_len)
{
	struct lookup l = { .err = err, .err_len = err_len };
	int ret;

	if (gl_cu.handle)
		return 0;
	l.handle = dlopen("libcuda.so.1", RTLD_NOW);
	if (!l.handle) {
		snprintf(err, err_len,
			 "dlopen(\"libcuda.so.1\"): %s (no NVIDIA driver; for the simulated"
			 " devices run with LD_LIBRARY_PATH=build/simdev"
			 " GPUPOOL_SIM_DEVICES=t4-16g:1)",
			 dlerror());
		return -ENOENT;
	}
	if (!direct) {
		l.gpa = (PFN_cuGetProcAddress_v2)dlsym(l.handle, "cuGetProcAddress_v2");
		if (!l.gpa) {
			snprintf(err, err_len, "dlsym(\"cuGetProcAddress_v2\") in libcuda.so.1: %s",
				 dlerror());
			dlclose(l.handle);
			return -ENOENT;
		}
	}
	gl_cu.handle = l.handle;
	ret = fill_table(&l);
	if (ret < 0)
		driver_close();
	return ret;
}

const char *gl_driver_error_name(CUresult r, char *buf, size_t len)
{
	const char *s = NULL;

	if (gl_cu.cuGetErrorName && gl_cu.cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	snprintf(buf, len, "CUresult %d", (int)r);
	return buf;
}

const char *gl_driver_error_text(CUresult r)
{
	const char *s = NULL;

	if (gl_cu.cuGetErrorString && gl_cu.cuGetErrorString(r, &s) == CUDA_SUCCESS && s)
		return s;
	return "no description from the driver";
}
