/* hip-ids.c — the device list and names shared by simdev's HIP runtime
 * and rocm-smi (hip-ids.h). */
#include "simdev/hip/hip-ids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The amdgpu kernel driver of ROCm 6.2 (what rocm-smi reads from
 * /sys/module/amdgpu/version). */
#define DRIVER_DEFAULT "6.8.5"

int hipsim_devices(const struct sim *s, int *out, int max)
{
	int n = sim_vendor_devices(s, "amd", out, max);

	return n + sim_vendor_devices(s, "hygon", out + n, max - n);
}

uint64_t hipsim_unique_id(const struct sim *s, int dev)
{
	unsigned char b[16];
	uint64_t id = 0;

	sim_device_uuid_bytes(s, dev, b);
	for (int i = 0; i < 8; i++)
		id = id << 8 | b[i];
	return id;
}

void hipsim_uuid_text(const struct sim *s, int dev, char *buf, size_t len)
{
	const char *prefix = strcmp(sim_device_model(s, dev)->vendor, "hygon") == 0 ? "DCU-"
										    : "GPU-";

	snprintf(buf, len, "%s%016llx", prefix, (unsigned long long)hipsim_unique_id(s, dev));
}

const char *hipsim_driver_version(void)
{
	const char *v = getenv("GPUPOOL_SIM_HIP_DRIVER");

	return v && *v ? v : DRIVER_DEFAULT;
}
