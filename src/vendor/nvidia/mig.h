/* mig.h — NVIDIA's partition ops (vendor.h), MIG GPU instances through
 * NVML (mig.c), for gp_vendor_nvidia (manage.c). Each takes the sampler's
 * handle as vendor.h says (it is not read: mig.c loads NVML's MIG calls
 * itself) and the card's NVML index; their contracts are vendor.h's
 * `profiles`, `partitions`, `partition_create`, `partition_destroy`.
 * Nothing returned is owned by the caller beyond the copies it asked
 * for. */
#ifndef GP_VENDOR_NVIDIA_MIG_H
#define GP_VENDOR_NVIDIA_MIG_H

#include "vendor/vendor.h"

int gp_nvidia_profiles(void *h, unsigned local, struct gp_partition_profile *out, int max,
		       unsigned *ret_units);
int gp_nvidia_partitions(void *h, unsigned local, struct gp_partition *out, int max);
int gp_nvidia_partition_create(void *h, unsigned local, unsigned profile_id, unsigned start,
			       struct gp_partition *ret, char *err, size_t err_len);
int gp_nvidia_partition_destroy(void *h, unsigned local, const char *uuid, char *err,
				size_t err_len);

#endif
