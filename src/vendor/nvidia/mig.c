/* mig.c — NVIDIA's hardware partitions (vendor.h): MIG GPU instances
 * through NVML, for the agent.
 *
 * A card in MIG mode offers profiles (`profiles`: NVML's GPU instance
 * profiles with their possible placements, in memory slices: the card's
 * units), has partitions (`partitions`: its MIG devices, each a GPU
 * instance with its one compute instance, by the UUID CUDA_VISIBLE_DEVICES
 * takes), and makes and destroys them (`partition_create`: a GPU instance
 * of one profile at one start and a compute instance of all of it;
 * `partition_destroy`: both, refused with -EBUSY while processes use it).
 * A card not in MIG mode has no profiles (0), so the agent treats it as a
 * card of software slices.
 *
 * NVML is the library manage.c loads (GPUPOOL_NVML_LIBRARY, else
 * libnvidia-ml.so.1), opened here with dlopen once more (dlopen counts
 * references: it is the same library) for the MIG calls; each operation
 * holds an init of its own. The sampler's handle is not read. Errors
 * come back as a negative errno with one line for the user in err. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/nvidia/mig.h"

#include <stdbool.h>

#include "include/gp-nvml-mig.h"
#include "include/gp-nvml.h"

/* The NVML functions of MIG, and the device calls they need. */
static struct {
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*profile_info)(nvmlDevice_t, unsigned, nvmlGpuInstanceProfileInfo_v2_t *);
	nvmlReturn_t (*placements)(nvmlDevice_t, unsigned, nvmlGpuInstancePlacement_t *,
				   unsigned *);
	nvmlReturn_t (*gi_create)(nvmlDevice_t, unsigned, const nvmlGpuInstancePlacement_t *,
				  nvmlGpuInstance_t *);
	nvmlReturn_t (*gi_destroy)(nvmlGpuInstance_t);
	nvmlReturn_t (*gi_by_id)(nvmlDevice_t, unsigned, nvmlGpuInstance_t *);
	nvmlReturn_t (*gi_info)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t *);
	nvmlReturn_t (*ci_profile_info)(nvmlGpuInstance_t, unsigned, unsigned,
					nvmlComputeInstanceProfileInfo_t *);
	nvmlReturn_t (*ci_create)(nvmlGpuInstance_t, unsigned, nvmlComputeInstance_t *);
	nvmlReturn_t (*ci_destroy)(nvmlComputeInstance_t);
	nvmlReturn_t (*ci_list)(nvmlGpuInstance_t, unsigned, nvmlComputeInstance_t *, unsigned *);
	nvmlReturn_t (*max_mig)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*mig_by_index)(nvmlDevice_t, unsigned, nvmlDevice_t *);
	nvmlReturn_t (*mig_parent)(nvmlDevice_t, nvmlDevice_t *);
	nvmlReturn_t (*gi_id)(nvmlDevice_t, unsigned *);
	int loaded;             /* 0 when every function was found, else -errno */
	char why[200];          /* why not */
} nv;

static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

static void nv_load(void)
{
	static const char *const names[] = {
		"nvmlInit_v2",
		"nvmlShutdown",
		"nvmlErrorString",
		"nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetHandleByUUID",
		"nvmlDeviceGetUUID",
		"nvmlDeviceGetMigMode",
		"nvmlDeviceGetGpuInstanceProfileInfoV",
		"nvmlDeviceGetGpuInstancePossiblePlacements_v2",
		"nvmlDeviceCreateGpuInstanceWithPlacement",
		"nvmlGpuInstanceDestroy",
		"nvmlDeviceGetGpuInstanceById",
		"nvmlGpuInstanceGetInfo",
		"nvmlGpuInstanceGetComputeInstanceProfileInfo",
		"nvmlGpuInstanceCreateComputeInstance",
		"nvmlComputeInstanceDestroy",
		"nvmlGpuInstanceGetComputeInstances",
		"nvmlDeviceGetMaxMigDeviceCount",
		"nvmlDeviceGetMigDeviceHandleByIndex",
		"nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
		"nvmlDeviceGetGpuInstanceId",
	};
	void **slot[] = {
		(void **)&nv.init,	   (void **)&nv.shutdown,     (void **)&nv.error_string,
		(void **)&nv.by_index,	   (void **)&nv.by_uuid,      (void **)&nv.uuid,
		(void **)&nv.mig_mode,	   (void **)&nv.profile_info, (void **)&nv.placements,
		(void **)&nv.gi_create,	   (void **)&nv.gi_destroy,   (void **)&nv.gi_by_id,
		(void **)&nv.gi_info,	   (void **)&nv.ci_profile_info, (void **)&nv.ci_create,
		(void **)&nv.ci_destroy,   (void **)&nv.ci_list,      (void **)&nv.max_mig,
		(void **)&nv.mig_by_index, (void **)&nv.mig_parent,   (void **)&nv.gi_id,
	};
	const char *env = getenv("GPUPOOL_NVML_LIBRARY");
	const char *library = env && *env ? env : "libnvidia-ml.so.1";
	void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);

	_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(slot) / sizeof(slot[0]),
		       "one slot per name");
	if (!lib) {
		snprintf(nv.why, sizeof(nv.why), "cannot load %s: %s", library, dlerror());
		nv.loaded = -ENOENT;
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slot[i] = dlsym(lib, names[i]);
		if (!*slot[i]) {
			snprintf(nv.why, sizeof(nv.why),
				 "%s lacks %s: the driver is too old for MIG", library, names[i]);
			nv.loaded = -ENOTSUP;
			return;
		}
	}
}

/* NVML loaded and initialized (undo with nv_end), and card `local`. */
static int nv_begin(unsigned local, nvmlDevice_t *ret_card, char *err, size_t err_len)
{
	nvmlReturn_t r;

	pthread_once(&nv_once, nv_load);
	if (nv.loaded < 0) {
		snprintf(err, err_len, "%s", nv.why);
		return nv.loaded;
	}
	if ((r = nv.init()) != NVML_SUCCESS) {
		snprintf(err, err_len, "NVML would not start: %s", nv.error_string(r));
		return -EIO;
	}
	if ((r = nv.by_index(local, ret_card)) != NVML_SUCCESS) {
		snprintf(err, err_len, "NVIDIA device %u: %s", local, nv.error_string(r));
		nv.shutdown();
		return -ENODEV;
	}
	return 0;
}

static void nv_end(void)
{
	nv.shutdown();
}

static bool mig_on(nvmlDevice_t card)
{
	unsigned now = 0, pending = 0;

	return nv.mig_mode(card, &now, &pending) == NVML_SUCCESS && now == NVML_DEVICE_MIG_ENABLE;
}

/* ---- profiles ------------------------------------------------------------- */

static int by_size(const void *a, const void *b)
{
	const struct gp_partition_profile *x = a, *y = b;

	if (x->mem_mib != y->mem_mib)
		return x->mem_mib < y->mem_mib ? -1 : 1;
	return (x->compute_permille > y->compute_permille) - (x->compute_permille < y->compute_permille);
}

/* Every profile of the card with its starts; the compute share of each is
 * its slices of the largest profile's. Smallest first. */
static int profiles_read(nvmlDevice_t card, struct gp_partition_profile *all, int room,
			 unsigned *ret_units)
{
	unsigned slices_max = 0, units = 0;
	unsigned gpcs[NVML_GPU_INSTANCE_PROFILE_COUNT];
	int n = 0;

	for (unsigned i = 0; i < NVML_GPU_INSTANCE_PROFILE_COUNT && n < room; i++) {
		nvmlGpuInstanceProfileInfo_v2_t info = { .version = nvmlGpuInstanceProfileInfo_v2 };
		nvmlGpuInstancePlacement_t pl[32];
		unsigned count = 32;
		struct gp_partition_profile *p = &all[n];
		const char *name;

		if (nv.profile_info(card, i, &info) != NVML_SUCCESS ||
		    nv.placements(card, info.id, pl, &count) != NVML_SUCCESS || count == 0)
			continue;
		name = strncmp(info.name, "MIG ", 4) == 0 ? info.name + 4 : info.name;
		*p = (struct gp_partition_profile){ .id = info.id, .mem_mib = info.memorySizeMB,
						    .units = pl[0].size };
		snprintf(p->name, sizeof(p->name), "%.*s", (int)sizeof(p->name) - 1, name);
		for (unsigned k = 0; k < count && k < 32; k++) {
			if (pl[k].start < 32)
				p->starts |= 1u << pl[k].start;
			if (pl[k].start + pl[k].size > units)
				units = pl[k].start + pl[k].size;
		}
		gpcs[n++] = info.sliceCount;
		if (info.sliceCount > slices_max)
			slices_max = info.sliceCount;
	}
	for (int i = 0; i < n && slices_max; i++)
		all[i].compute_permille = gpcs[i] * 1000 / slices_max;
	qsort(all, (size_t)n, sizeof(all[0]), by_size);
	*ret_units = units;
	return n;
}

int gp_nvidia_profiles(void *h, unsigned local, struct gp_partition_profile *out, int max,
		       unsigned *ret_units)
{
	struct gp_partition_profile all[NVML_GPU_INSTANCE_PROFILE_COUNT];
	nvmlDevice_t card;
	unsigned units = 0;
	char err[256];
	int n = 0;

	(void)h;
	if (nv_begin(local, &card, err, sizeof(err)) < 0)
		return -EIO;
	if (mig_on(card))
		n = profiles_read(card, all, (int)NVML_GPU_INSTANCE_PROFILE_COUNT, &units);
	nv_end();
	for (int i = 0; i < n && i < max; i++)
		out[i] = all[i];
	if (ret_units)
		*ret_units = n ? units : 0;
	return n;
}

/* ---- partitions ------------------------------------------------------------- */

/* What MIG device `mig` is: its UUID, GPU instance and its profile and start. */
static nvmlReturn_t mig_read(nvmlDevice_t card, nvmlDevice_t mig, struct gp_partition *ret,
			     nvmlGpuInstance_t *ret_gi)
{
	nvmlGpuInstanceInfo_t info;
	nvmlGpuInstance_t gi;
	nvmlReturn_t r;
	unsigned id;

	if ((r = nv.gi_id(mig, &id)) != NVML_SUCCESS || (r = nv.gi_by_id(card, id, &gi)) ||
	    (r = nv.gi_info(gi, &info)) != NVML_SUCCESS ||
	    (r = nv.uuid(mig, ret->uuid, sizeof(ret->uuid))) != NVML_SUCCESS)
		return r;
	ret->profile_id = info.profileId;
	ret->start = info.placement.start;
	ret->id = id;
	if (ret_gi)
		*ret_gi = gi;
	return NVML_SUCCESS;
}

int gp_nvidia_partitions(void *h, unsigned local, struct gp_partition *out, int max)
{
	nvmlDevice_t card, mig;
	unsigned most = 0;
	char err[256];
	int n = 0;

	(void)h;
	if (nv_begin(local, &card, err, sizeof(err)) < 0)
		return -EIO;
	if (mig_on(card) && nv.max_mig(card, &most) == NVML_SUCCESS) {
		for (unsigned i = 0; i < most; i++) {
			struct gp_partition p;

			if (nv.mig_by_index(card, i, &mig) != NVML_SUCCESS)
				break;  /* NOT_FOUND: no more */
			if (mig_read(card, mig, &p, NULL) != NVML_SUCCESS) {
				n = -EIO;
				break;
			}
			if (n < max)
				out[n] = p;
			n++;
		}
	}
	nv_end();
	return n;
}

/* The MIG device of GPU instance `gi_id` on the card, or NULL. */
static nvmlDevice_t mig_of_gi(nvmlDevice_t card, unsigned gi_id)
{
	unsigned most = 0, id;
	nvmlDevice_t mig;

	if (nv.max_mig(card, &most) != NVML_SUCCESS)
		return NULL;
	for (unsigned i = 0; i < most; i++) {
		if (nv.mig_by_index(card, i, &mig) != NVML_SUCCESS)
			return NULL;
		if (nv.gi_id(mig, &id) == NVML_SUCCESS && id == gi_id)
			return mig;
	}
	return NULL;
}

/* Makes the compute instance of all of gi: the compute profile whose
 * slices are the GPU instance's. */
static nvmlReturn_t ci_whole(nvmlGpuInstance_t gi, unsigned gi_slices)
{
	nvmlComputeInstance_t ci;

	for (unsigned i = 0; i < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; i++) {
		nvmlComputeInstanceProfileInfo_t info;

		if (nv.ci_profile_info(gi, i, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED,
				       &info) == NVML_SUCCESS &&
		    info.sliceCount == gi_slices)
			return nv.ci_create(gi, info.id, &ci);
	}
	return NVML_ERROR_NOT_SUPPORTED;
}

/* The profile of id `id` on the card (its slices in ret_gpcs), or -ENOENT. */
static int profile_find(nvmlDevice_t card, unsigned id, struct gp_partition_profile *ret,
			unsigned *ret_gpcs)
{
	for (unsigned i = 0; i < NVML_GPU_INSTANCE_PROFILE_COUNT; i++) {
		nvmlGpuInstanceProfileInfo_v2_t info = { .version = nvmlGpuInstanceProfileInfo_v2 };

		if (nv.profile_info(card, i, &info) != NVML_SUCCESS || info.id != id)
			continue;
		*ret_gpcs = info.sliceCount;
		snprintf(ret->name, sizeof(ret->name), "%.*s", (int)sizeof(ret->name) - 1,
			 strncmp(info.name, "MIG ", 4) == 0 ? info.name + 4 : info.name);
		ret->id = id;
		return 0;
	}
	return -ENOENT;
}

/* The starts of a profile, written "0, 4". */
static void starts_text(nvmlDevice_t card, unsigned id, char *buf, size_t len)
{
	nvmlGpuInstancePlacement_t pl[32];
	unsigned count = 32;
	size_t used = 0;

	buf[0] = '\0';
	if (nv.placements(card, id, pl, &count) != NVML_SUCCESS)
		return;
	for (unsigned k = 0; k < count && k < 32 && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u", k ? ", " : "",
					 pl[k].start);
}

static int create_on(nvmlDevice_t card, unsigned local, unsigned profile_id, unsigned start,
		     struct gp_partition *ret, char *err, size_t err_len)
{
	struct gp_partition_profile p;
	nvmlGpuInstancePlacement_t pl[32];
	nvmlGpuInstanceInfo_t info;
	nvmlGpuInstance_t gi;
	nvmlDevice_t mig;
	unsigned count = 32, gpcs = 0, size = 0;
	char starts[128];
	nvmlReturn_t r;

	if (!mig_on(card)) {
		snprintf(err, err_len,
			 "NVIDIA device %u is not in MIG mode: enable it (nvidia-smi -i %u -mig 1) "
			 "or use software slices",
			 local, local);
		return -ENOTSUP;
	}
	if (profile_find(card, profile_id, &p, &gpcs) < 0) {
		snprintf(err, err_len, "NVIDIA device %u has no MIG profile id %u (nvidia-smi mig -lgip "
			 "lists them)", local, profile_id);
		return -EINVAL;
	}
	starts_text(card, profile_id, starts, sizeof(starts));
	if (nv.placements(card, profile_id, pl, &count) == NVML_SUCCESS)
		for (unsigned k = 0; k < count && k < 32; k++)
			if (pl[k].start == start)
				size = pl[k].size;
	if (size == 0) {
		snprintf(err, err_len, "MIG %s cannot start at memory slice %u of NVIDIA device %u; "
			 "its starts are %s", p.name, start, local, starts);
		return -EINVAL;
	}
	r = nv.gi_create(card, profile_id, &(nvmlGpuInstancePlacement_t){ start, size }, &gi);
	if (r == NVML_ERROR_INSUFFICIENT_RESOURCES) {
		snprintf(err, err_len, "MIG %s at memory slice %u does not fit on NVIDIA device %u: "
			 "its slices are taken (or the card has no compute slices left); destroy "
			 "a partition or choose another start (%s)", p.name, start, local, starts);
		return -ENOSPC;
	}
	if (r != NVML_SUCCESS) {
		snprintf(err, err_len, "cannot make MIG %s on NVIDIA device %u: %s", p.name, local,
			 nv.error_string(r));
		return -EIO;
	}
	if ((r = ci_whole(gi, gpcs)) != NVML_SUCCESS || (r = nv.gi_info(gi, &info)) ||
	    !(mig = mig_of_gi(card, info.id)) || (r = mig_read(card, mig, ret, NULL))) {
		snprintf(err, err_len, "cannot make the compute instance of MIG %s on NVIDIA "
			 "device %u: %s", p.name, local, nv.error_string(r ? r : NVML_ERROR_UNKNOWN));
		nv.gi_destroy(gi);
		return -EIO;
	}
	return 0;
}

int gp_nvidia_partition_create(void *h, unsigned local, unsigned profile_id, unsigned start,
			       struct gp_partition *ret, char *err, size_t err_len)
{
	struct gp_partition made;
	nvmlDevice_t card;
	int r;

	(void)h;
	r = nv_begin(local, &card, err, err_len);
	if (r < 0)
		return r == -ENODEV ? r : -EIO;
	r = create_on(card, local, profile_id, start, &made, err, err_len);
	nv_end();
	if (r == 0)
		*ret = made;
	return r;
}

static int destroy_on(nvmlDevice_t card, unsigned local, const char *uuid, char *err,
		      size_t err_len)
{
	nvmlComputeInstance_t ci[8];
	struct gp_partition p;
	nvmlDevice_t mig, parent;
	nvmlGpuInstance_t gi;
	nvmlReturn_t r;

	if (nv.by_uuid(uuid, &mig) != NVML_SUCCESS || nv.mig_parent(mig, &parent) != NVML_SUCCESS ||
	    parent != card || mig_read(card, mig, &p, &gi) != NVML_SUCCESS) {
		snprintf(err, err_len, "NVIDIA device %u has no MIG partition %s "
			 "(nvidia-smi -L lists them)", local, uuid);
		return -ENOENT;
	}
	for (unsigned i = 0; i < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; i++) {
		unsigned count = 8;

		if (nv.ci_list(gi, i, ci, &count) != NVML_SUCCESS)
			continue;
		for (unsigned k = 0; k < count && k < 8; k++) {
			r = nv.ci_destroy(ci[k]);
			if (r == NVML_ERROR_IN_USE) {
				snprintf(err, err_len, "MIG partition %s is in use: processes hold "
					 "memory or contexts on it; stop them first", uuid);
				return -EBUSY;
			}
			if (r != NVML_SUCCESS) {
				snprintf(err, err_len, "cannot destroy the compute instance of %s: %s",
					 uuid, nv.error_string(r));
				return -EIO;
			}
		}
	}
	r = nv.gi_destroy(gi);
	if (r != NVML_SUCCESS) {
		snprintf(err, err_len, "cannot destroy MIG partition %s: %s", uuid,
			 nv.error_string(r));
		return r == NVML_ERROR_IN_USE ? -EBUSY : -EIO;
	}
	return 0;
}

int gp_nvidia_partition_destroy(void *h, unsigned local, const char *uuid, char *err,
				size_t err_len)
{
	nvmlDevice_t card;
	int r;

	(void)h;
	r = nv_begin(local, &card, err, err_len);
	if (r < 0)
		return r == -ENODEV ? r : -EIO;
	r = destroy_on(card, local, uuid, err, err_len);
	nv_end();
	return r;
}
