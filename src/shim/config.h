/* config.h — libgpushare's configuration, from the environment.
 *
 *   GPUPOOL_MEM_LIMIT   device memory per device: "4G", "4096M", or a comma
 *                       list, one per visible device ("4G,8G"); unset: no
 *                       memory limit
 *   GPUPOOL_COMPUTE     percent of each device, 1..100 (default 100)
 *   GPUPOOL_PRIORITY    0..9, higher first (default 5)
 *   GPUPOOL_ISOLATION   hard | shared (default hard)
 *   GPUPOOL_SLICE_MS    length of a turn, 1..1000 ms (default 50)
 *   GPUPOOL_RUN_DIR     where the device regions live (region.h)
 *   GPUPOOL_TASK_ID     the task this process belongs to; processes with
 *                       one id share its limits (default "pid-PID")
 *   GPUPOOL_TASK_SECRET the task's secret, 32 to 128 hexadecimal digits:
 *                       on a managed device (region.h) it proves the task
 *                       id, and the limits come from the device's limits
 *                       table, the four limit variables above being
 *                       ignored there
 *
 * A bad value is an error with a one-line reason (never showing the
 * secret): the interposer then refuses the driver calls it guards rather
 * than run unlimited. */
#ifndef GP_SHIM_CONFIG_H
#define GP_SHIM_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/region.h"

#define GP_SHIM_DEVICES_MAX 16

struct gp_shim_config {
	bool mem_limited;
	int mem_limits;                          /* values given */
	uint64_t mem_limit[GP_SHIM_DEVICES_MAX]; /* bytes */
	unsigned compute;
	unsigned priority;
	enum gp_isolation isolation;
	unsigned slice_ms;
	char run_dir[PATH_MAX];                  /* "" = the default */
	char task_id[GP_TASK_ID_MAX];
	char task_secret[GP_TASK_SECRET_MAX + 1];       /* "" = none given */
};

/* Reads the environment; -EINVAL with the reason in err. */
int gp_shim_config_load(struct gp_shim_config *cfg, char *err, size_t err_len);

/* The limits of the task on device `dev` (0-based, visible order). */
void gp_shim_config_limits(const struct gp_shim_config *cfg, int dev,
			   struct gp_task_limits *ret);

#endif
