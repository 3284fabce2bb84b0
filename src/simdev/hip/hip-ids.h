/* hip-ids.h — what simdev's HIP runtime and rocm-smi agree on: which
 * devices they see, in which order, and how each is named.
 *
 * Both see the AMD devices of $GPUPOOL_SIM_DEVICES, then the Hygon ones
 * (Hygon's DTK is HIP; a machine has one kind or the other, and simdev
 * lists them in one numbering so that a set with both still has one
 * truth). A device's 64-bit unique id is the first 8 bytes of its simdev
 * UUID; its UUID text is gpupool's convention of include/gp-hip.h ("GPU-"
 * or "DCU-" and 16 hex digits), the name of its region. */
#ifndef GP_SIMDEV_HIP_IDS_H
#define GP_SIMDEV_HIP_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "simdev/simdev.h"

/* Fills out[] with the simdev indices of the HIP devices (AMD then
 * Hygon) and returns how many. */
int hipsim_devices(const struct sim *s, int *out, int max);

/* The device's unique id (rsmi_dev_unique_id_get). */
uint64_t hipsim_unique_id(const struct sim *s, int dev);

/* Its UUID text, "GPU-0123456789abcdef" (Hygon: "DCU-…"), into buf. */
void hipsim_uuid_text(const struct sim *s, int dev, char *buf, size_t len);

/* The amdgpu driver version rocm-smi reports: $GPUPOOL_SIM_HIP_DRIVER,
 * else the simulated default. Static or the environment's. */
const char *hipsim_driver_version(void);

#endif
