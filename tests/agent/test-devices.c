/* test-devices.c — the agent's view of the node (src/agent/devices.c):
 * the compatibility table on its own, then discovery through simdev's
 * NVML in this process (the test runs with GPUPOOL_SIM_DEVICES set to two
 * A100-80G and two T4 and LD_LIBRARY_PATH at build/simdev), with the
 * NVLink island NVML's peer-to-peer status makes of the A100s, and a clear
 * error when no NVML library can be loaded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "agent/devices.h"

static void test_compatibility_table(void **state)
{
	char why[160];

	(void)state;
	assert_true(gp_devices_compatible("NVIDIA A100-SXM4-80GB", "535.104.05", 12020, why,
					  sizeof(why)));
	assert_string_equal(why, "");
	/* Hopper on a driver older than its first branch. */
	assert_false(gp_devices_compatible("NVIDIA H100 80GB HBM3", "470.82.01", 11040, why,
					   sizeof(why)));
	assert_non_null(strstr(why, "R520"));
	assert_non_null(strstr(why, "470.82.01"));
	/* "A10" is a word of its own: an A100 on R450 is fine, an A10 too,
	 * neither on R418. */
	assert_true(gp_devices_compatible("NVIDIA A10", "450.80.02", 11030, why, sizeof(why)));
	assert_false(gp_devices_compatible("NVIDIA A10", "418.67", 11030, why, sizeof(why)));
	/* Any device: the CUDA driver API must have cuGetProcAddress. */
	assert_false(gp_devices_compatible("Tesla T4", "460.32.03", 11020, why, sizeof(why)));
	assert_non_null(strstr(why, "11.3"));
	/* A model the table does not know: only the CUDA floor applies. */
	assert_true(gp_devices_compatible("NVIDIA Future GPU", "600.1", 13000, why, sizeof(why)));
}

static void test_discover_simdev(void **state)
{
	struct gp_agent_node node;
	char err[256] = "";

	(void)state;
	assert_int_equal(gp_devices_discover(NULL, &node, err, sizeof(err)), 0);
	assert_int_equal(node.devices, 4);
	assert_true(node.cuda_version >= 11030);
	assert_true(strlen(node.driver_version) > 0);
	for (unsigned i = 0; i < node.devices; i++) {
		const struct gp_agent_device *d = &node.device[i];

		assert_int_equal(d->index, i);
		assert_memory_equal(d->uuid, "GPU-", 4);
		assert_true(d->compatible);
		for (unsigned j = 0; j < i; j++)
			assert_string_not_equal(d->uuid, node.device[j].uuid);
	}
	assert_non_null(strstr(node.device[0].name, "A100"));
	assert_int_equal(node.device[0].mem_total_mib, 80 * 1024);
	assert_non_null(strstr(node.device[3].name, "T4"));
	assert_int_equal(node.device[3].mem_total_mib, 15360);
	/* The two A100s (SXM: NVLink) are one island; the T4s (PCIe) none. */
	assert_int_not_equal(node.device[0].nvlink, 0);
	assert_int_equal(node.device[1].nvlink, node.device[0].nvlink);
	assert_int_equal(node.device[2].nvlink, 0);
	assert_int_equal(node.device[3].nvlink, 0);
}

static void test_no_library(void **state)
{
	struct gp_agent_node node;
	char err[256] = "";

	(void)state;
	assert_int_equal(gp_devices_discover("libgp-no-such-nvml.so", &node, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "GPUPOOL_SIM_DEVICES"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compatibility_table),
		cmocka_unit_test(test_discover_simdev),
		cmocka_unit_test(test_no_library),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
