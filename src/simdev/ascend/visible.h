/* visible.h — which simulated Ascend NPUs a process sees, shared by
 * simdev's libruntime.so (runtime.c) and libascendcl.so (acl.c), each of
 * which links its own copy (they are not exported): the Ascend devices of
 * GPUPOOL_SIM_DEVICES in DCMI's logical order, of which
 * ASCEND_RT_VISIBLE_DEVICES (logical ids, comma separated) shows some,
 * renumbered 0..n-1 as the user's device ids. */
#ifndef GP_SIMDEV_ASCEND_VISIBLE_H
#define GP_SIMDEV_ASCEND_VISIBLE_H

#include "simdev/simdev.h"

/* Fills ret_simdev[i] (simdev index) and ret_logical[i] (DCMI's logical
 * id) for user device i, up to SIM_DEVICES_MAX; returns how many. The list
 * ends at the first entry that names no device, or repeats one (as
 * CUDA_VISIBLE_DEVICES). */
int sim_ascend_visible(struct sim *s, int *ret_simdev, int *ret_logical);

/* A library's start-up: opens simdev's state into *ret_sim and fills the
 * visible devices as sim_ascend_visible does; returns how many (0 when
 * simdev cannot be opened or shows no Ascend device: GPUPOOL_LOG says
 * why). */
int sim_ascend_start(struct sim **ret_sim, int *ret_simdev, int *ret_logical);

#endif
