/* ze-probe.c — a small Level Zero program for the Intel tests: what a task
 * sees of its devices and memory, every allocation path up to out of
 * memory, every launch path, and a process that holds memory until
 * killed. Built twice: linked against libze_loader.so.1 (symbol
 * interposition reaches libgpushare's hooks), and with -DPROBE_DLOPEN,
 * loading the loader with dlopen and every function with dlsym on its
 * handle (libgpushare answers those with its hooks).
 *
 *   ze-probe devices                        one JSON line: each device's UUID, name,
 *                                           totalSize, maxMemAllocSize, Sysman size/free
 *   ze-probe alloc KIND MIB CHUNK FREE [S]  KIND device|shared|host, FREE free|ext:
 *                                           CHUNK-MiB allocations up to MIB or the first
 *                                           failure, held S seconds, freed with FREE,
 *                                           then as many again ("again_mib"); with
 *                                           PROBE_GO=FILE, starts once FILE exists
 *   ze-probe hold KIND MIB                  allocates, prints "ready", waits for a signal
 *   ze-probe launch PATH N US               N kernels of US µs through PATH: immediate,
 *                                           cooperative, indirect, multiple (immediate
 *                                           lists), queue (a regular list executed N
 *                                           times); prints the wall time
 *   ze-probe burn SECONDS US                1 ms kernels back to back on an immediate
 *                                           list, 4 in flight (an event each)
 *
 * A kernel's argument 0 is its device time in ns (simdev's libze_loader).
 * Exit status: 0 done (an allocation failure is a result), 1 a call
 * failed (said on stderr), 2 bad usage. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/gp-levelzero.h"

#ifdef PROBE_DLOPEN
#include <dlfcn.h>
#endif

#define CHUNKS_MAX 65536
#define MIB (1024.0 * 1024.0)

/* The functions used, by name: linked, or from dlsym. */
#define ZE_FUNCTIONS(X)                                                         \
	X(zeInit) X(zeDriverGet) X(zeDeviceGet) X(zeDeviceGetProperties)        \
	X(zeDeviceGetMemoryProperties) X(zeContextCreate) X(zeMemAllocDevice)   \
	X(zeMemAllocShared) X(zeMemAllocHost) X(zeMemFree) X(zeMemFreeExt)      \
	X(zeCommandQueueCreate) X(zeCommandQueueExecuteCommandLists)            \
	X(zeCommandQueueSynchronize) X(zeCommandListCreate)                     \
	X(zeCommandListCreateImmediate) X(zeCommandListClose)                   \
	X(zeCommandListHostSynchronize) X(zeCommandListAppendLaunchKernel)      \
	X(zeCommandListAppendLaunchCooperativeKernel)                           \
	X(zeCommandListAppendLaunchKernelIndirect)                              \
	X(zeCommandListAppendLaunchMultipleKernelsIndirect)                     \
	X(zeEventPoolCreate) X(zeEventCreate) X(zeEventHostSynchronize)         \
	X(zeEventHostReset) X(zeModuleCreate) X(zeKernelCreate)                 \
	X(zeKernelSetArgumentValue) X(zesInit) X(zesDeviceEnumMemoryModules)    \
	X(zesMemoryGetState)

static struct {
#define FIELD(name) __typeof__(&name) name;
	ZE_FUNCTIONS(FIELD)
#undef FIELD
} ze;

static void load(void)
{
#ifdef PROBE_DLOPEN
	void *h = dlopen(GP_ZE_LOADER, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "ze-probe: dlopen %s: %s\n", GP_ZE_LOADER, dlerror());
		exit(1);
	}
#define LOOKUP(name)                                                            \
	if (!(ze.name = (__typeof__(&name))dlsym(h, #name))) {                  \
		fprintf(stderr, "ze-probe: dlsym %s: not found\n", #name);     \
		exit(1);                                                        \
	}
	ZE_FUNCTIONS(LOOKUP)
#undef LOOKUP
#else
#define LINKED(name) ze.name = name;
	ZE_FUNCTIONS(LINKED)
#undef LINKED
#endif
}

static const char *result_name(ze_result_t r)
{
	switch (r) {
	case ZE_RESULT_SUCCESS: return "ZE_RESULT_SUCCESS";
	case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY";
	case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY";
	case ZE_RESULT_ERROR_UNINITIALIZED: return "ZE_RESULT_ERROR_UNINITIALIZED";
	case ZE_RESULT_ERROR_INVALID_ARGUMENT: return "ZE_RESULT_ERROR_INVALID_ARGUMENT";
	case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: return "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE";
	case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS: return "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS";
	default: return "other";
	}
}

static void check(ze_result_t r, const char *call)
{
	if (r == ZE_RESULT_SUCCESS)
		return;
	fprintf(stderr, "ze-probe: %s: %s (0x%x)\n", call, result_name(r), (unsigned)r);
	exit(1);
}

static ze_driver_handle_t driver;
static ze_device_handle_t device;
static ze_context_handle_t context;

/* zeInit, the first driver, device and a context. */
static void open_device(void)
{
	uint32_t n = 1;
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };

	load();
	check(ze.zeInit(0), "zeInit");
	check(ze.zeDriverGet(&n, &driver), "zeDriverGet");
	n = 1;
	check(ze.zeDeviceGet(driver, &n, &device), "zeDeviceGet");
	if (n == 0) {
		fprintf(stderr, "ze-probe: zeDeviceGet: no device\n");
		exit(1);
	}
	check(ze.zeContextCreate(driver, &cd, &context), "zeContextCreate");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- devices ------------------------------------------------------------ */

static int cmd_devices(void)
{
	ze_device_handle_t dev[16];
	uint32_t n = 16;

	load();
	check(ze.zeInit(0), "zeInit");
	check(ze.zesInit(0), "zesInit");
	n = 1;
	check(ze.zeDriverGet(&n, &driver), "zeDriverGet");
	n = 16;
	check(ze.zeDeviceGet(driver, &n, dev), "zeDeviceGet");
	printf("{\"count\":%u,\"devices\":[", n);
	for (uint32_t i = 0; i < n; i++) {
		ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
		ze_device_memory_properties_t m = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES };
		zes_mem_state_t st = { .stype = ZES_STRUCTURE_TYPE_MEM_STATE };
		zes_mem_handle_t mem;
		uint32_t one = 1;
		const uint8_t *u = p.uuid.id;

		check(ze.zeDeviceGetProperties(dev[i], &p), "zeDeviceGetProperties");
		check(ze.zeDeviceGetMemoryProperties(dev[i], &one, &m), "zeDeviceGetMemoryProperties");
		one = 1;
		check(ze.zesDeviceEnumMemoryModules(dev[i], &one, &mem), "zesDeviceEnumMemoryModules");
		check(ze.zesMemoryGetState(mem, &st), "zesMemoryGetState");
		printf("%s{\"uuid\":\"XPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		       "%02x%02x%02x%02x%02x%02x\",\"name\":\"%s\",\"total_mib\":%.0f,"
		       "\"max_alloc_mib\":%.0f,\"sysman_size_mib\":%.0f,\"sysman_free_mib\":%.0f}",
		       i ? "," : "", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		       u[10], u[11], u[12], u[13], u[14], u[15], p.name, (double)m.totalSize / MIB,
		       (double)p.maxMemAllocSize / MIB, (double)st.size / MIB,
		       (double)st.free / MIB);
	}
	printf("]}\n");
	return 0;
}

/* ---- memory --------------------------------------------------------------- */

static ze_result_t alloc_one(const char *kind, size_t bytes, void **ptr)
{
	ze_device_mem_alloc_desc_t dd = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	ze_host_mem_alloc_desc_t hd = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };

	if (!strcmp(kind, "device"))
		return ze.zeMemAllocDevice(context, &dd, bytes, 0, device, ptr);
	if (!strcmp(kind, "shared"))
		return ze.zeMemAllocShared(context, &dd, &hd, bytes, 0, device, ptr);
	return ze.zeMemAllocHost(context, &hd, bytes, 0, ptr);
}

static void free_one(const char *how, void *ptr)
{
	ze_memory_free_ext_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC,
					 .freePolicy = ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE };

	if (!strcmp(how, "ext"))
		check(ze.zeMemFreeExt(context, &fd, ptr), "zeMemFreeExt");
	else
		check(ze.zeMemFree(context, ptr), "zeMemFree");
}

/* Chunks up to `mib` or the first failure: how many, and the failure. */
static unsigned fill(const char *kind, unsigned mib, unsigned chunk, void **ptr, ze_result_t *fail)
{
	unsigned n = 0;

	*fail = ZE_RESULT_SUCCESS;
	while ((n + 1) * chunk <= mib && n < CHUNKS_MAX) {
		*fail = alloc_one(kind, (size_t)chunk << 20, &ptr[n]);
		if (*fail != ZE_RESULT_SUCCESS)
			break;
		n++;
	}
	return n;
}

static int cmd_alloc(const char *kind, unsigned mib, unsigned chunk, const char *how, double hold)
{
	static void *ptr[CHUNKS_MAX];
	ze_result_t fail, again_fail;
	unsigned n, again;

	if (chunk == 0 || (strcmp(kind, "device") && strcmp(kind, "shared") && strcmp(kind, "host")) ||
	    (strcmp(how, "free") && strcmp(how, "ext"))) {
		fprintf(stderr, "ze-probe alloc: KIND device|shared|host, CHUNK > 0, FREE free|ext\n");
		return 2;
	}
	open_device();
	while (getenv("PROBE_GO") && access(getenv("PROBE_GO"), F_OK) != 0)
		usleep(1000);
	n = fill(kind, mib, chunk, ptr, &fail);
	if (hold > 0)
		usleep((useconds_t)(hold * 1e6));
	for (unsigned i = 0; i < n; i++)
		free_one(how, ptr[i]);
	again = fill(kind, n * chunk, chunk, ptr, &again_fail);
	for (unsigned i = 0; i < again; i++)
		free_one(how, ptr[i]);
	printf("{\"kind\":\"%s\",\"free\":\"%s\",\"allocated_mib\":%u,\"error\":\"%s\","
	       "\"again_mib\":%u,\"again_error\":\"%s\"}\n",
	       kind, how, n * chunk, result_name(fail), again * chunk, result_name(again_fail));
	return 0;
}

__attribute__((noreturn)) static void cmd_hold(const char *kind, unsigned mib)
{
	void *ptr;

	open_device();
	check(alloc_one(kind, (size_t)mib << 20, &ptr), "allocation");
	printf("ready %u\n", mib);
	fflush(stdout);
	for (;;)
		pause();
}

/* ---- launches --------------------------------------------------------------- */

static ze_kernel_handle_t kernel_new(uint64_t ns)
{
	static const uint8_t spirv[4] = { 0x03, 0x02, 0x23, 0x07 };
	ze_module_desc_t md = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
				.format = ZE_MODULE_FORMAT_IL_SPIRV, .inputSize = sizeof(spirv),
				.pInputModule = spirv };
	ze_kernel_desc_t kd = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
				.pKernelName = "gpuload_spin" };
	ze_module_handle_t module;
	ze_kernel_handle_t k;

	check(ze.zeModuleCreate(context, device, &md, &module, NULL), "zeModuleCreate");
	check(ze.zeKernelCreate(module, &kd, &k), "zeKernelCreate");
	check(ze.zeKernelSetArgumentValue(k, 0, sizeof(ns), &ns), "zeKernelSetArgumentValue");
	return k;
}

static ze_command_list_handle_t immediate_new(void)
{
	ze_command_queue_desc_t qd = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				       .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS };
	ze_command_list_handle_t l;

	check(ze.zeCommandListCreateImmediate(context, device, &qd, &l),
	      "zeCommandListCreateImmediate");
	return l;
}

static int cmd_launch(const char *path, unsigned count, unsigned us)
{
	ze_group_count_t groups = { 1, 1, 1 };
	ze_kernel_handle_t k;
	double start;

	open_device();
	k = kernel_new((uint64_t)us * 1000);
	if (!strcmp(path, "queue")) {
		ze_command_queue_desc_t qd = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
					       .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS };
		ze_command_list_desc_t ld = { .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC };
		ze_command_queue_handle_t q;
		ze_command_list_handle_t l;

		check(ze.zeCommandQueueCreate(context, device, &qd, &q), "zeCommandQueueCreate");
		check(ze.zeCommandListCreate(context, device, &ld, &l), "zeCommandListCreate");
		check(ze.zeCommandListAppendLaunchKernel(l, k, &groups, NULL, 0, NULL),
		      "zeCommandListAppendLaunchKernel");
		check(ze.zeCommandListClose(l), "zeCommandListClose");
		start = now_s();
		for (unsigned i = 0; i < count; i++)
			check(ze.zeCommandQueueExecuteCommandLists(q, 1, &l, NULL),
			      "zeCommandQueueExecuteCommandLists");
		check(ze.zeCommandQueueSynchronize(q, UINT64_MAX), "zeCommandQueueSynchronize");
	} else {
		ze_command_list_handle_t l = immediate_new();
		uint32_t one = 1;

		start = now_s();
		for (unsigned i = 0; i < count; i++) {
			ze_result_t r;

			if (!strcmp(path, "immediate"))
				r = ze.zeCommandListAppendLaunchKernel(l, k, &groups, NULL, 0, NULL);
			else if (!strcmp(path, "cooperative"))
				r = ze.zeCommandListAppendLaunchCooperativeKernel(l, k, &groups, NULL,
										  0, NULL);
			else if (!strcmp(path, "indirect"))
				r = ze.zeCommandListAppendLaunchKernelIndirect(l, k, &groups, NULL, 0,
									       NULL);
			else if (!strcmp(path, "multiple"))
				r = ze.zeCommandListAppendLaunchMultipleKernelsIndirect(
					l, 1, &k, &one, &groups, NULL, 0, NULL);
			else {
				fprintf(stderr, "ze-probe launch: PATH immediate|cooperative|"
					"indirect|multiple|queue\n");
				return 2;
			}
			check(r, path);
		}
		check(ze.zeCommandListHostSynchronize(l, UINT64_MAX), "zeCommandListHostSynchronize");
	}
	printf("{\"path\":\"%s\",\"kernels\":%u,\"ms\":%.1f}\n", path, count,
	       (now_s() - start) * 1e3);
	return 0;
}

/* Kernels of `us` back to back for `seconds`, 4 in flight. */
static int cmd_burn(double seconds, unsigned us)
{
	ze_event_pool_desc_t pd = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				    .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 4 };
	ze_group_count_t groups = { 1, 1, 1 };
	ze_event_handle_t ev[4];
	ze_event_pool_handle_t pool;
	ze_command_list_handle_t l;
	ze_kernel_handle_t k;
	double start, end;
	unsigned kernels = 0;

	open_device();
	k = kernel_new((uint64_t)us * 1000);
	l = immediate_new();
	check(ze.zeEventPoolCreate(context, &pd, 1, &device, &pool), "zeEventPoolCreate");
	for (uint32_t i = 0; i < 4; i++) {
		ze_event_desc_t ed = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = i,
				       .signal = ZE_EVENT_SCOPE_FLAG_HOST };

		check(ze.zeEventCreate(pool, &ed, &ev[i]), "zeEventCreate");
	}
	start = now_s();
	end = start + seconds;
	while (now_s() < end) {
		ze_event_handle_t e = ev[kernels % 4];

		if (kernels >= 4) {
			check(ze.zeEventHostSynchronize(e, UINT64_MAX), "zeEventHostSynchronize");
			check(ze.zeEventHostReset(e), "zeEventHostReset");
		}
		check(ze.zeCommandListAppendLaunchKernel(l, k, &groups, e, 0, NULL),
		      "zeCommandListAppendLaunchKernel");
		kernels++;
	}
	check(ze.zeCommandListHostSynchronize(l, UINT64_MAX), "zeCommandListHostSynchronize");
	printf("{\"kernels\":%u,\"seconds\":%.2f}\n", kernels, now_s() - start);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "devices") && argc == 2)
		return cmd_devices();
	if (!strcmp(cmd, "alloc") && (argc == 6 || argc == 7))
		return cmd_alloc(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]), argv[5],
				 argc == 7 ? atof(argv[6]) : 0);
	if (!strcmp(cmd, "hold") && argc == 4)
		cmd_hold(argv[2], (unsigned)atoi(argv[3]));
	if (!strcmp(cmd, "launch") && argc == 5)
		return cmd_launch(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	if (!strcmp(cmd, "burn") && argc == 4)
		return cmd_burn(atof(argv[2]), (unsigned)atoi(argv[3]));
	fprintf(stderr, "usage: ze-probe devices | alloc KIND MIB CHUNK FREE [HOLD_S] | hold KIND MIB"
		" | launch PATH N US | burn SECONDS US\n");
	return 2;
}
