/* rt-cnrt.c — gpuload's Cambricon runtime (runtime.h): CNRT 6, loaded
 * with dlopen at its real name (libcnrt.so) and its functions looked up
 * with dlsym (CNRT has no proc-address call of its own; --direct is the
 * same).
 *
 * A session is cnrtSetDevice(--device) and one queue. A launch is one
 * cnrtInvokeKernel on that queue, of dimension --blocks x 1 x 1 as a
 * Block task. CNRT kernels are compiled BANG C that gpuload does not
 * carry: the kernel is gpuload's own marker symbol, and its first
 * argument a uint64_t of nanoseconds, which the simulated runtime
 * (src/simdev/cambricon/) charges as device time. So this runtime drives
 * simdev's MLUs only; on a real MLU the launch would be refused. Events
 * are CNRT notifiers (no elapsed time: the host clock is used). Every
 * failed call is reported once through gl_report with CNRT's error text,
 * and remembered for last_error. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "include/gp-cambricon.h"
#include "runtime.h"

#define FUNCTIONS(X)                                                            \
	X(cnrtGetDeviceCount) X(cnrtSetDevice) X(cnrtMalloc) X(cnrtFree)        \
	X(cnrtMemGetInfo) X(cnrtQueueCreate) X(cnrtQueueDestroy)                \
	X(cnrtQueueSync) X(cnrtNotifierCreate) X(cnrtNotifierDestroy)           \
	X(cnrtPlaceNotifier) X(cnrtQueryNotifier) X(cnrtInvokeKernel)           \
	X(cnrtGetErrorStr)

static struct {
#define FIELD(fn) gp_##fn##_t fn;
	FUNCTIONS(FIELD)
#undef FIELD
} cn;

/* The kernel handed to cnrtInvokeKernel: any address in gpuload. */
static const char spin_kernel[] = "gpuload_spin";

struct cnrt_session {
	cnrtQueue_t queue;
	unsigned blocks;
	cnrtRet_t last;         /* the last failure, or cnrtSuccess */
};

static const char *error_name(cnrtRet_t r, char *buf, size_t len)
{
	switch (r) {
	case cnrtErrorNoMem: return "cnrtErrorNoMem";
	case cnrtErrorNoDevice: return "cnrtErrorNoDevice";
	case cnrtErrorDeviceInvalid: return "cnrtErrorDeviceInvalid";
	case cnrtErrorArgsInvalid: return "cnrtErrorArgsInvalid";
	case cnrtErrorInit: return "cnrtErrorInit";
	case cnrtErrorOpsNotPermitted: return "cnrtErrorOpsNotPermitted";
	default:
		snprintf(buf, len, "cnrtRet_t %d", (int)r);
		return buf;
	}
}

/* 0 for cnrtSuccess; otherwise remembers r, reports it, returns -EIO. */
static int check(struct cnrt_session *s, cnrtRet_t r, const char *call)
{
	char buf[32];

	if (r == cnrtSuccess)
		return 0;
	if (s)
		s->last = r;
	return gl_report(call, error_name(r, buf, sizeof(buf)), cn.cnrtGetErrorStr(r));
}

static int cnrt_load(bool direct, char *err, size_t err_len)
{
	static void *lib;
	void *fn;

	(void)direct;
	if (lib)
		return 0;
	lib = dlopen("libcnrt.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, err_len, "cannot load libcnrt.so (%s): no Cambricon runtime here; for "
			 "simulated MLUs set GPUPOOL_SIM_DEVICES=mlu370-48g:N and "
			 "LD_LIBRARY_PATH=build/simdev", dlerror());
		return -ENOENT;
	}
#define LOOKUP(name)                                                                 \
	if (!(fn = dlsym(lib, #name))) {                                             \
		snprintf(err, err_len, "libcnrt.so lacks %s: CNRT 6 is needed", #name); \
		dlclose(lib);                                                        \
		lib = NULL;                                                          \
		return -ENOENT;                                                      \
	}                                                                            \
	cn.name = (gp_##name##_t)fn;
	FUNCTIONS(LOOKUP)
#undef LOOKUP
	return 0;
}

static int cnrt_close(void *session)
{
	struct cnrt_session *s = session;
	int ret = 0;

	if (!s)
		return 0;
	if (s->queue)
		ret = check(s, cn.cnrtQueueDestroy(s->queue), "cnrtQueueDestroy");
	free(s);
	return ret;
}

static int cnrt_open(const struct gl_runtime_params *p, void **ret_session)
{
	struct cnrt_session *s = calloc(1, sizeof(*s));
	unsigned count = 0;

	if (!s) {
		gl_report("calloc", "out of memory", NULL);
		return -ENOMEM;
	}
	s->blocks = p->blocks ? p->blocks : 1;
	if (check(s, cn.cnrtGetDeviceCount(&count), "cnrtGetDeviceCount") ||
	    check(s, cn.cnrtSetDevice(p->device), "cnrtSetDevice") ||
	    check(s, cn.cnrtQueueCreate(&s->queue), "cnrtQueueCreate")) {
		cnrt_close(s);
		return -EIO;
	}
	*ret_session = s;
	return 0;
}

static int cnrt_launch(void *session, uint64_t ns)
{
	struct cnrt_session *s = session;
	void *args[] = { &ns };
	cnrtDim3_t dim = { s->blocks, 1, 1 };

	return check(s, cn.cnrtInvokeKernel(spin_kernel, dim, cnrtFuncTypeBlock, args, 0, s->queue),
		     "cnrtInvokeKernel");
}

static int cnrt_sync(void *session)
{
	struct cnrt_session *s = session;

	return check(s, cn.cnrtQueueSync(s->queue), "cnrtQueueSync");
}

static int cnrt_alloc(void *session, size_t bytes, void **ret_ptr)
{
	struct cnrt_session *s = session;
	void *p = NULL;
	cnrtRet_t r = cn.cnrtMalloc(&p, bytes);

	if (r == cnrtErrorNoMem) {
		s->last = r;
		return -ENOMEM;
	}
	if (check(s, r, "cnrtMalloc"))
		return -EIO;
	*ret_ptr = p;
	return 0;
}

static int cnrt_free(void *session, void *ptr)
{
	return check(session, cn.cnrtFree(ptr), "cnrtFree");
}

static int cnrt_mem_info(void *session, size_t *ret_free, size_t *ret_total)
{
	size_t f = 0, t = 0;

	if (check(session, cn.cnrtMemGetInfo(&f, &t), "cnrtMemGetInfo"))
		return -EIO;
	*ret_free = f;
	*ret_total = t;
	return 0;
}

static const char *cnrt_last_error(void *session, char *buf, size_t len)
{
	struct cnrt_session *s = session;

	return s->last == cnrtSuccess ? NULL : error_name(s->last, buf, len);
}

static int cnrt_event_create(void *session, bool timing, void **ret_event)
{
	cnrtNotifier_t n = NULL;

	(void)timing;
	if (check(session, cn.cnrtNotifierCreate(&n), "cnrtNotifierCreate"))
		return -EIO;
	*ret_event = n;
	return 0;
}

static int cnrt_event_record(void *session, void *event)
{
	struct cnrt_session *s = session;

	return check(s, cn.cnrtPlaceNotifier(event, s->queue), "cnrtPlaceNotifier");
}

/* CNRT 6 has cnrtWaitNotifier too; polling the query keeps the table of
 * functions to what simdev answers. */
static int cnrt_event_sync(void *session, void *event)
{
	cnrtRet_t r;

	while ((r = cn.cnrtQueryNotifier(event)) == cnrtErrorNotReady) {
		struct timespec ts = { 0, 20000 };

		nanosleep(&ts, NULL);
	}
	return check(session, r, "cnrtQueryNotifier");
}

static int cnrt_event_destroy(void *session, void *event)
{
	return event ? check(session, cn.cnrtNotifierDestroy(event), "cnrtNotifierDestroy") : 0;
}

const struct gl_runtime gl_runtime_cnrt = {
	.name = "cnrt",
	.summary = "Cambricon CNRT 6 (libcnrt.so); simulated MLUs only (kernel: its first "
		   "argument, ns)",
	.loader = "dlsym",
	.loader_direct = "dlsym",
	.load = cnrt_load,
	.open = cnrt_open,
	.close = cnrt_close,
	.launch = cnrt_launch,
	.sync = cnrt_sync,
	.alloc = cnrt_alloc,
	.free = cnrt_free,
	.mem_info = cnrt_mem_info,
	.last_error = cnrt_last_error,
	.event_create = cnrt_event_create,
	.event_record = cnrt_event_record,
	.event_sync = cnrt_event_sync,
	.event_elapsed = NULL,
	.event_destroy = cnrt_event_destroy,
};
