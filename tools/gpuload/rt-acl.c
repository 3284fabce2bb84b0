/* rt-acl.c — gpuload's Ascend runtime (runtime.h): ACL, loaded with dlopen
 * at its real name (libascendcl.so) and its functions looked up with dlsym
 * (ACL has no proc-address call; --direct is the same), as torch_npu's
 * FunctionLoader does.
 *
 * A session is aclrtSetDevice(--device) and one stream. A launch is one
 * aclrtLaunchKernel (CANN 8) on that stream with blockDim --blocks. Ascend
 * C kernels are binaries gpuload does not carry: the function handle is
 * aclrtBinaryGetFunction's for gpuload's kernel name, and the kernel's
 * arguments start with a uint64_t of nanoseconds, which the simulated
 * runtime (src/simdev/ascend/) charges as device time (on simdev the
 * arguments may be host memory). So this runtime drives simdev's NPUs
 * only. Events are ACL events (no elapsed time here: the host clock is
 * used). Memory is aclrtMalloc (huge pages first); the view is
 * aclrtGetMemInfo of HBM, or of DDR on chips without HBM (310P). Every
 * failed call is reported once through gl_report and remembered for
 * last_error. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "include/gp-ascend.h"
#include "runtime.h"

#define FUNCTIONS(X)                                                              \
	X(aclrtGetDeviceCount) X(aclrtSetDevice) X(aclrtResetDevice) X(aclrtMalloc) \
	X(aclrtFree) X(aclrtGetMemInfo) X(aclrtCreateStream) X(aclrtDestroyStream)  \
	X(aclrtSynchronizeStream) X(aclrtCreateEvent) X(aclrtDestroyEvent)          \
	X(aclrtRecordEvent) X(aclrtSynchronizeEvent) X(aclrtBinaryGetFunction)      \
	X(aclrtLaunchKernel)

static struct {
#define FIELD(fn) __typeof__(&fn) fn;
	FUNCTIONS(FIELD)
#undef FIELD
} acl;

struct acl_session {
	int device;
	aclrtStream stream;
	aclrtFuncHandle kernel;
	unsigned blocks;
	aclError last;          /* the last failure, or ACL_SUCCESS */
};

static const char *error_name(aclError r, char *buf, size_t len)
{
	switch (r) {
	case ACL_ERROR_RT_MEMORY_ALLOCATION: return "ACL_ERROR_RT_MEMORY_ALLOCATION";
	case ACL_ERROR_INVALID_PARAM: return "ACL_ERROR_INVALID_PARAM";
	case ACL_ERROR_RT_PARAM_INVALID: return "ACL_ERROR_RT_PARAM_INVALID";
	case ACL_ERROR_RT_INVALID_DEVICEID: return "ACL_ERROR_RT_INVALID_DEVICEID";
	case ACL_ERROR_RT_CONTEXT_NULL: return "ACL_ERROR_RT_CONTEXT_NULL";
	case ACL_ERROR_RT_NO_DEVICE: return "ACL_ERROR_RT_NO_DEVICE";
	case ACL_ERROR_RT_NO_PERMISSION: return "ACL_ERROR_RT_NO_PERMISSION";
	case ACL_ERROR_BAD_ALLOC: return "ACL_ERROR_BAD_ALLOC";
	default:
		snprintf(buf, len, "aclError %d", r);
		return buf;
	}
}

/* 0 for ACL_SUCCESS; otherwise remembers r, reports it, returns -EIO. */
static int check(struct acl_session *s, aclError r, const char *call)
{
	char buf[32];

	if (r == ACL_SUCCESS)
		return 0;
	if (s)
		s->last = r;
	return gl_report(call, error_name(r, buf, sizeof(buf)), NULL);
}

static int acl_load(bool direct, char *err, size_t err_len)
{
	static void *lib;
	void *fn;

	(void)direct;
	if (lib)
		return 0;
	lib = dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, err_len, "cannot load libascendcl.so (%s): no Ascend runtime here; "
			 "for simulated NPUs set GPUPOOL_SIM_DEVICES=ascend-910b-64g:N and "
			 "LD_LIBRARY_PATH=build/simdev", dlerror());
		return -ENOENT;
	}
#define LOOKUP(name)                                                                   \
	if (!(fn = dlsym(lib, #name))) {                                               \
		snprintf(err, err_len, "libascendcl.so lacks %s: CANN 8 is needed", #name); \
		dlclose(lib);                                                          \
		lib = NULL;                                                            \
		return -ENOENT;                                                        \
	}                                                                              \
	*(void **)&acl.name = fn;
	FUNCTIONS(LOOKUP)
#undef LOOKUP
	return 0;
}

static int acl_close(void *session)
{
	struct acl_session *s = session;
	int ret = 0;

	if (!s)
		return 0;
	if (s->stream && check(s, acl.aclrtDestroyStream(s->stream), "aclrtDestroyStream") < 0)
		ret = -EIO;
	if (check(s, acl.aclrtResetDevice(s->device), "aclrtResetDevice") < 0)
		ret = -EIO;
	free(s);
	return ret;
}

static int acl_open(const struct gl_runtime_params *p, void **ret_session)
{
	struct acl_session *s = calloc(1, sizeof(*s));
	uint32_t count = 0;

	if (!s) {
		fprintf(stderr, "gpuload: out of memory\n");
		return -ENOMEM;
	}
	s->device = p->device;
	s->blocks = p->blocks ? p->blocks : 1;
	if (check(s, acl.aclrtGetDeviceCount(&count), "aclrtGetDeviceCount") < 0) {
		free(s);
		return -EIO;
	}
	if (p->device < 0 || (uint32_t)p->device >= count) {
		fprintf(stderr, "gpuload: --device %d: the ACL runtime sees %u NPU(s) (0..%d)\n",
			p->device, count, (int)count - 1);
		free(s);
		return -ENODEV;
	}
	if (check(s, acl.aclrtSetDevice(p->device), "aclrtSetDevice") < 0) {
		free(s);
		return -EIO;
	}
	if (check(s, acl.aclrtCreateStream(&s->stream), "aclrtCreateStream") < 0 ||
	    check(s, acl.aclrtBinaryGetFunction(NULL, "gpuload_spin", &s->kernel),
		  "aclrtBinaryGetFunction") < 0) {
		acl_close(s);
		return -EIO;
	}
	*ret_session = s;
	return 0;
}

static int acl_launch(void *session, uint64_t ns)
{
	struct acl_session *s = session;
	uint64_t args[2] = { ns, 0 };

	return check(s, acl.aclrtLaunchKernel(s->kernel, s->blocks, args, sizeof(args), s->stream),
		     "aclrtLaunchKernel");
}

static int acl_sync(void *session)
{
	struct acl_session *s = session;

	return check(s, acl.aclrtSynchronizeStream(s->stream), "aclrtSynchronizeStream");
}

static int acl_alloc(void *session, size_t bytes, void **ret_ptr)
{
	struct acl_session *s = session;
	void *p;
	aclError r = acl.aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST);

	if (r == ACL_ERROR_RT_MEMORY_ALLOCATION) {
		s->last = r;
		return -ENOMEM;
	}
	if (check(s, r, "aclrtMalloc") < 0)
		return -EIO;
	*ret_ptr = p;
	return 0;
}

static int acl_free(void *session, void *ptr)
{
	return check(session, acl.aclrtFree(ptr), "aclrtFree");
}

/* HBM where the chip has it; the 310P's device memory is DDR. */
static int acl_mem_info(void *session, size_t *ret_free, size_t *ret_total)
{
	struct acl_session *s = session;
	size_t free_bytes = 0, total = 0;

	if (check(s, acl.aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total), "aclrtGetMemInfo") < 0)
		return -EIO;
	if (total == 0 &&
	    check(s, acl.aclrtGetMemInfo(ACL_DDR_MEM, &free_bytes, &total), "aclrtGetMemInfo") < 0)
		return -EIO;
	*ret_free = free_bytes;
	*ret_total = total;
	return 0;
}

static const char *acl_last_error(void *session, char *buf, size_t len)
{
	struct acl_session *s = session;

	return s && s->last != ACL_SUCCESS ? error_name(s->last, buf, len) : NULL;
}

static int acl_event_create(void *session, bool timing, void **ret_event)
{
	aclrtEvent e;

	(void)timing;
	if (check(session, acl.aclrtCreateEvent(&e), "aclrtCreateEvent") < 0)
		return -EIO;
	*ret_event = e;
	return 0;
}

static int acl_event_record(void *session, void *event)
{
	struct acl_session *s = session;

	return check(s, acl.aclrtRecordEvent(event, s->stream), "aclrtRecordEvent");
}

static int acl_event_sync(void *session, void *event)
{
	return check(session, acl.aclrtSynchronizeEvent(event), "aclrtSynchronizeEvent");
}

static int acl_event_destroy(void *session, void *event)
{
	if (!event)
		return 0;
	return check(session, acl.aclrtDestroyEvent(event), "aclrtDestroyEvent");
}

const struct gl_runtime gl_runtime_acl = {
	.name = "acl",
	.summary = "Huawei Ascend ACL (libascendcl.so, CANN 8): simulated NPUs only",
	.loader = "dlsym",
	.loader_direct = "dlsym",
	.load = acl_load,
	.open = acl_open,
	.close = acl_close,
	.launch = acl_launch,
	.sync = acl_sync,
	.alloc = acl_alloc,
	.free = acl_free,
	.mem_info = acl_mem_info,
	.last_error = acl_last_error,
	.event_create = acl_event_create,
	.event_record = acl_event_record,
	.event_sync = acl_event_sync,
	.event_elapsed = NULL,
	.event_destroy = acl_event_destroy,
};
