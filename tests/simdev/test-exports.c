/* test-exports.c — simdev's libraries export the whole name set of the real
 * ones, so that programs that look functions up by name (dlsym, or
 * cuGetProcAddress_v2) find every one, and what simdev does not simulate
 * answers NOT_SUPPORTED instead of crashing.
 *
 * usage: test-exports CUDA-ABI-MAP CUDA-STUBS NVML-NAMES NVML-STUBS
 * (meson runs it with LD_LIBRARY_PATH=build/simdev and a private
 * GPUPOOL_SIM_DIR). The map and the NVML names are the committed facts
 * (src/include/); the two lists of stubs are what the build generated. The
 * map is read here with a parser of its own, not the generator's. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "include/gp-cuda.h"
#include "include/gp-nvml.h"

#define ROWS_MAX     2048
#define NAMES_MAX    1024
#define NAME_MAX_LEN 96

/* One (name, cudaVersion, per-thread) variant of the map and its symbol. */
struct row {
	char name[NAME_MAX_LEN];
	int version;
	int per_thread;
	char symbol[NAME_MAX_LEN];
};

static const char *map_path, *cuda_stubs_path, *nvml_names_path, *nvml_stubs_path;
static struct row rows[ROWS_MAX];
static int nrows;
static void *cuda, *nvml;
static PFN_cuGetProcAddress_v2 gpa;

/* A function called with more arguments than fit in registers, all of
 * them nonsense: a stub must read none of them. */
typedef int (*PFN_any)(void *, void *, void *, void *, void *, void *, void *, void *,
		       void *, void *);

static int call_with_junk(void *fn)
{
	void *junk = (void *)(uintptr_t)0x10; /* an address no page is mapped at */

	return ((PFN_any)fn)(junk, junk, junk, junk, junk, junk, junk, junk, junk, junk);
}

static void row_add(const char *name, int version, int per_thread, const char *symbol)
{
	assert_in_range(nrows, 0, ROWS_MAX - 1);
	assert_in_range(strlen(name), 1, NAME_MAX_LEN - 1);
	assert_in_range(strlen(symbol), 1, NAME_MAX_LEN - 1);
	rows[nrows] = (struct row){.version = version, .per_thread = per_thread};
	strcpy(rows[nrows].name, name);
	strcpy(rows[nrows].symbol, symbol);
	nrows++;
}

/* "V->SYM, V->SYM" (spaces allowed): the default-stream variants. */
static void parse_plain(const char *name, char *list)
{
	for (char *save = NULL, *pair = strtok_r(list, ",", &save); pair;
	     pair = strtok_r(NULL, ",", &save)) {
		char symbol[NAME_MAX_LEN];
		int version;

		assert_int_equal(sscanf(pair, " %d->%95s", &version, symbol), 2);
		row_add(name, version, 0, symbol);
	}
}

/* "V,V -> SYM,SYM": the per-thread variants. */
static void parse_per_thread(const char *name, char *spec)
{
	char *arrow = strstr(spec, "->"), *vsave = NULL, *ssave = NULL, *v, *sym;

	assert_non_null(arrow);
	*arrow = '\0';
	v = strtok_r(spec, ", ", &vsave);
	sym = strtok_r(arrow + 2, ", ]", &ssave);
	for (; v && sym;
	     v = strtok_r(NULL, ", ", &vsave), sym = strtok_r(NULL, ", ]", &ssave))
		row_add(name, atoi(v), 1, sym);
	assert_null(v);
	assert_null(sym);
}

static void map_read(void)
{
	FILE *f = fopen(map_path, "r");
	char line[1024];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *ptds;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		assert_non_null(colon);
		*colon = '\0';
		ptds = strstr(colon + 1, "[PTDS");
		if (ptds) {
			*ptds = '\0';
			parse_per_thread(line, ptds + strlen("[PTDS"));
		}
		parse_plain(line, colon + 1);
	}
	fclose(f);
}

/* The names of a list file, one a line ('#' comments), into names. */
static int names_read(const char *path, char names[][NAME_MAX_LEN])
{
	FILE *f = fopen(path, "r");
	char line[256];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		assert_in_range(n, 0, NAMES_MAX - 1);
		assert_in_range(strlen(line), 1, NAME_MAX_LEN - 1);
		strcpy(names[n++], line);
	}
	fclose(f);
	return n;
}

static int setup(void **state)
{
	(void)state;
	map_read();
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cuda || !nvml)
		return -1;
	gpa = (PFN_cuGetProcAddress_v2)dlsym(cuda, "cuGetProcAddress_v2");
	return gpa ? 0 : -1;
}

static void the_map_is_the_whole_driver(void **state)
{
	(void)state;
	/* CUDA 13.0 has 479 driver functions (672 symbols on Linux); a map of
	 * only the functions with several variants has 134. */
	assert_in_range(nrows, 600, ROWS_MAX);
}

static void every_symbol_of_the_map_is_exported(void **state)
{
	int missing = 0;
	(void)state;

	for (int i = 0; i < nrows; i++)
		if (!dlsym(cuda, rows[i].symbol)) {
			print_error("not exported: %s\n", rows[i].symbol);
			missing++;
		}
	assert_int_equal(missing, 0);
}

/* At each row's version (and per-thread flag), cuGetProcAddress_v2 hands
 * out the very function exported under that row's symbol. */
static void get_proc_address_answers_every_row_with_its_symbol(void **state)
{
	int wrong = 0;
	(void)state;

	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		CUdriverProcAddressQueryResult status = 99;
		void *fn = NULL;
		CUresult res = gpa(
			r->name, &fn, r->version,
			r->per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0,
			&status);

		if (res != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !fn ||
		    fn != dlsym(cuda, r->symbol)) {
			print_error("%s@%d%s: result %d, status %d, %p, not %s\n",
				    r->name, r->version,
				    r->per_thread ? " per-thread" : "", res, status, fn,
				    r->symbol);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

static void driver_stubs_answer_not_supported(void **state)
{
	static char stubs[NAMES_MAX][NAME_MAX_LEN];
	int n = names_read(cuda_stubs_path, stubs), wrong = 0;
	(void)state;

	assert_in_range(n, 100, NAMES_MAX);
	for (int i = 0; i < n; i++) {
		void *fn = dlsym(cuda, stubs[i]);

		if (!fn || call_with_junk(fn) != CUDA_ERROR_NOT_SUPPORTED) {
			print_error("stub %s: %p\n", stubs[i], fn);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

/* What a peer interposer's host program did: looked cuMemPoolGetAttribute
 * up by name and called it on the device's default pool. */
static void mem_pool_get_attribute_answers(void **state)
{
	typedef CUresult (*PFN_init)(unsigned int);
	typedef CUresult (*PFN_default_pool)(CUmemoryPool *, CUdevice);
	typedef CUresult (*PFN_pool_attr)(CUmemoryPool, int, void *);
	enum { USED_MEM_CURRENT = 7 }; /* CU_MEMPOOL_ATTR_USED_MEM_CURRENT */
	PFN_pool_attr by_name = (PFN_pool_attr)dlsym(cuda, "cuMemPoolGetAttribute");
	PFN_init init = (PFN_init)dlsym(cuda, "cuInit");
	PFN_default_pool default_pool =
		(PFN_default_pool)dlsym(cuda, "cuDeviceGetDefaultMemPool");
	CUdriverProcAddressQueryResult status = 99;
	cuuint64_t value = 12345;
	CUmemoryPool pool = NULL;
	void *fn = NULL;
	(void)state;

	assert_non_null(by_name);
	assert_int_equal(init(0), CUDA_SUCCESS);
	assert_int_equal(default_pool(&pool, 0), CUDA_SUCCESS);
	assert_int_equal(by_name(pool, USED_MEM_CURRENT, &value),
			 CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(value, 12345);
	assert_int_equal(gpa("cuMemPoolGetAttribute", &fn, 13000, 0, &status),
			 CUDA_SUCCESS);
	assert_int_equal(status, CU_GET_PROC_ADDRESS_SUCCESS);
	assert_ptr_equal(fn, by_name);
	/* Introduced with CUDA 11.2: older versions are told so. */
	assert_int_equal(gpa("cuMemPoolGetAttribute", &fn, 11000, 0, &status),
			 CUDA_ERROR_NOT_FOUND);
	assert_int_equal(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

static void every_nvml_name_is_exported(void **state)
{
	static char names[NAMES_MAX][NAME_MAX_LEN];
	int n = names_read(nvml_names_path, names), missing = 0;
	(void)state;

	assert_in_range(n, 300, NAMES_MAX);
	for (int i = 0; i < n; i++)
		if (!dlsym(nvml, names[i])) {
			print_error("not exported: %s\n", names[i]);
			missing++;
		}
	assert_int_equal(missing, 0);
}

static void nvml_stubs_answer_not_supported(void **state)
{
	static char stubs[NAMES_MAX][NAME_MAX_LEN];
	int n = names_read(nvml_stubs_path, stubs), wrong = 0;
	(void)state;

	assert_in_range(n, 300, NAMES_MAX);
	for (int i = 0; i < n; i++) {
		void *fn = dlsym(nvml, stubs[i]);

		assert_string_not_equal(stubs[i], "nvmlErrorString");
		if (!fn || call_with_junk(fn) != NVML_ERROR_NOT_SUPPORTED) {
			print_error("stub %s: %p\n", stubs[i], fn);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_map_is_the_whole_driver),
		cmocka_unit_test(every_symbol_of_the_map_is_exported),
		cmocka_unit_test(get_proc_address_answers_every_row_with_its_symbol),
		cmocka_unit_test(driver_stubs_answer_not_supported),
		cmocka_unit_test(mem_pool_get_attribute_answers),
		cmocka_unit_test(every_nvml_name_is_exported),
		cmocka_unit_test(nvml_stubs_answer_not_supported),
	};

	if (argc != 5) {
		fprintf(stderr,
			"usage: %s CUDA-ABI-MAP CUDA-STUBS NVML-NAMES NVML-STUBS\n",
			argv[0]);
		return 2;
	}
	map_path = argv[1];
	cuda_stubs_path = argv[2];
	nvml_names_path = argv[3];
	nvml_stubs_path = argv[4];
	return cmocka_run_group_tests(tests, setup, NULL);
}
