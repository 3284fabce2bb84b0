/* test-models.c — what a device model's name says (src/core/models.c):
 * the one rule by which a device answers to a task's or a pod's model
 * terms (`gpupool submit --model`, a template's models, the pod
 * annotation gpupool.io/gpu-model, `gpupool sim --history`). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/models.h"

struct answer {
	const char *name, *vendor, *terms;
	bool answers;
};

static void check(const struct answer *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool got = gp_model_answers(a[i].name, a[i].vendor, a[i].terms);

		if (got != a[i].answers)
			fail_msg("\"%s\" answers to \"%s\": %s, want %s", a[i].name, a[i].terms,
				 got ? "yes" : "no", a[i].answers ? "yes" : "no");
	}
}

/* A term is the model's name, or whole words of it: "A10" is not a part
 * of "A100", nor "L4" of "L40S", nor "H20" of "H200". */
static void terms_are_names_not_parts(void **state)
{
	static const struct answer a[] = {
		{ "NVIDIA A10", "nvidia", "A10", true },
		{ "NVIDIA A100-SXM4-80GB", "nvidia", "A10", false },
		{ "NVIDIA A100-SXM4-80GB", "nvidia", "A100", true },
		{ "NVIDIA A100-SXM4-40GB", "nvidia", "a100", true },
		{ "NVIDIA A100-SXM4-80GB", "nvidia", "NVIDIA A100-SXM4-80GB", true },
		{ "NVIDIA A100-SXM4-80GB", "nvidia", "nvidia a100-sxm4-80gb", true },
		{ "NVIDIA A100-SXM4-80GB", "nvidia", "A100-SXM4", true },
		{ "NVIDIA A100-SXM4-80GB", "nvidia", "A100-SXM", false },
		{ "NVIDIA A100-SXM4-80GB MIG 3g.40gb", "nvidia", "MIG 3g", true },
		{ "NVIDIA A100-SXM4-80GB MIG 3g.40gb", "nvidia", "MIG 4g", false },
		{ "NVIDIA L40S", "nvidia", "L4", false },
		{ "NVIDIA L4", "nvidia", "L4", true },
		{ "NVIDIA L40S", "nvidia", "L40S", true },
		{ "NVIDIA H200", "nvidia", "H20", false },
		{ "NVIDIA H100 80GB HBM3", "nvidia", "H100", true },
		{ "Tesla T4", "nvidia", "T4", true },
		{ "Tesla T4", "nvidia", "Tesla", true },
		{ "Tesla T4", "nvidia", "esla", false },
		{ "AMD Instinct MI300X", "amd", "MI300X", true },
		{ "AMD Instinct MI300X", "amd", "MI300", false },
		{ "Hygon DCU K100_AI", "hygon", "K100", true },
		{ "MLU370-X8", "cambricon", "MLU370", true },
		{ "T4", NULL, "T4", true },
		{ "A100-MIG", NULL, "A100", true },
	};

	(void)state;
	check(a, sizeof(a) / sizeof(a[0]));
}

/* Several terms (| or ,, with spaces around them), a vendor, and the
 * short names that are not words of a name: Ascend's "910B" in
 * "Ascend910B2", Intel's "MAX1550". */
static void lists_vendors_and_short_names(void **state)
{
	static const struct answer a[] = {
		{ "NVIDIA H100 80GB HBM3", "nvidia", "A100, H100", true },
		{ "Tesla T4", "nvidia", "A100|H100", false },
		{ "Tesla T4", "nvidia", "L4|T4", true },
		{ "Tesla T4", "nvidia", "nvidia", true },
		{ "Ascend910B2", "ascend", "ascend", true },
		{ "Ascend910B2", "ascend", "910B", true },
		{ "Ascend910B2", "ascend", "Ascend910B2", true },
		{ "Ascend910B2", "ascend", "910A", false },
		{ "Ascend310P3", "ascend", "310P", true },
		{ "Intel(R) Data Center GPU Max 1550", "intel", "MAX1550", true },
		{ "Intel(R) Data Center GPU Max 1550", "intel", "Max 1550", true },
		{ "Intel(R) Data Center GPU Max 1550", "intel", "Max 155", false },
		{ "Tesla T4", "nvidia", "", false },
		{ "Tesla T4", "nvidia", " , |", false },
	};

	(void)state;
	check(a, sizeof(a) / sizeof(a[0]));
}

/* The longest name a device answers to, among things named for models
 * (prices, model quotas, options): by the same rule. */
static void the_best_named_thing_is_the_longest_that_answers(void **state)
{
	struct named { int value; char model[16]; } all[] = {
		{ 1, "A10" }, { 2, "A100" }, { 3, "A100-SXM4" }, { 4, "" }, { 5, "nvidia" },
	};

	(void)state;
	assert_int_equal(gp_model_best("NVIDIA A100-SXM4-80GB", "nvidia", all, sizeof(all[0]),
				       offsetof(struct named, model), 5), 2);
	assert_int_equal(gp_model_best("NVIDIA A100 80GB PCIe", "nvidia", all, sizeof(all[0]),
				       offsetof(struct named, model), 5), 1);
	assert_int_equal(gp_model_best("NVIDIA A10", "nvidia", all, sizeof(all[0]),
				       offsetof(struct named, model), 5), 0);
	assert_int_equal(gp_model_best("Tesla T4", "nvidia", all, sizeof(all[0]),
				       offsetof(struct named, model), 5), 4);
	assert_int_equal(gp_model_best("Tesla T4", NULL, all, sizeof(all[0]),
				       offsetof(struct named, model), 4), -1);
	assert_int_equal(gp_model_best("Tesla T4", NULL, NULL, sizeof(all[0]), 0, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(terms_are_names_not_parts),
		cmocka_unit_test(lists_vendors_and_short_names),
		cmocka_unit_test(the_best_named_thing_is_the_longest_that_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
