/* mig.h — NVIDIA MIG on the simulated cards: GPU instances that are
 * simulated devices of their own.
 *
 * A card whose model has partitions "mig" (a100-80g-mig) is in MIG mode
 * from the start: CUDA shows it only through its instances, NVML offers
 * its profiles. A GPU instance (GI) is one profile at one start on the
 * card's 8 memory slices; its compute instance (CI: one, the whole GI,
 * is all simdev makes) turns it into a MIG device with a UUID "MIG-…",
 * which CUDA_VISIBLE_DEVICES takes. The instance is a simdev device at
 * an index of its own (SIM_DEVICES_MAX + slot, simdev.h): its own memory
 * (the profile's fixed size, admitted like a card's), its own turn (so
 * instances never wait for each other) and its own quanta ring, and a
 * kernel of N ns on a g-slice instance takes N x 7 / g ns of wall time,
 * so that a 3g instance gives 3/7 of the card's throughput.
 *
 * The instances live in the shared state (simdev.c keeps the area, mig.c
 * its meaning), so every process sees those made by any other; making
 * and destroying take the MIG lock, readers read the state word of a
 * slot (atomic; the fields behind it are written before it is).
 *
 * The profile table is A100-SXM4-80GB's (mig.c says where its numbers
 * come from). A card's MIG mode is its model's: simdev does not switch
 * it (nvmlDeviceSetMigMode answers NOT_SUPPORTED). Functions return 0 or
 * a negative errno:
 * -ENOTSUP (the card is not in MIG mode, or has no such profile),
 * -EINVAL (a start the profile cannot take), -ENOSPC (no room: slices
 * taken, or no slot), -EBUSY (in use), -ENOENT (no such instance). */
#ifndef GP_SIMDEV_MIG_H
#define GP_SIMDEV_MIG_H

#include <stdbool.h>
#include <stdint.h>

#include "simdev/simdev.h"

#define SIM_MIG_SLICES 8        /* memory slices of a card */
#define SIM_MIG_GPCS 7          /* compute slices of a card */

/* One GPU instance profile of a card. */
struct sim_mig_profile {
	unsigned index;         /* NVML's NVML_GPU_INSTANCE_PROFILE_* (what ProfileInfo takes) */
	unsigned id;            /* NVML's profile id (what Create and Placements take) */
	const char *name;       /* "3g.40gb" */
	unsigned gpcs;          /* compute slices, of SIM_MIG_GPCS */
	unsigned slices;        /* memory slices, of SIM_MIG_SLICES */
	uint32_t starts;        /* bit i: may start at memory slice i */
	uint64_t mem_mib;
	unsigned sms;           /* multiprocessors */
	unsigned copy_engines;
	unsigned max_count;     /* instances of it a card holds at most */
};

/* A GPU instance, in the shared state. */
enum sim_mig_state {
	SIM_MIG_FREE = 0,       /* the slot is unused */
	SIM_MIG_GI = 1,         /* a GPU instance without a compute instance */
	SIM_MIG_CI = 2,         /* with its compute instance: a MIG device */
};

struct sim_mig_gi {
	_Atomic uint32_t state;         /* enum sim_mig_state, written last */
	uint32_t card;                  /* simdev index of its card */
	uint32_t profile;               /* index into sim_mig_profiles() */
	uint32_t start;                 /* first memory slice */
	uint32_t id;                    /* GPU instance id on its card, 1… */
	uint32_t pad;
	uint64_t serial;                /* its creation's number, never reused */
};

/* simdev.c embeds this in the shared state; mig.c alone reads it. */
struct sim_mig_shared {
	uint64_t made;                  /* instances made so far */
	struct sim_mig_gi gi[SIM_MIG_MAX];
};

/* The profiles, terminated by an entry with name NULL. */
const struct sim_mig_profile *sim_mig_profiles(void);
/* The profile of NVML profile index `index`, or NULL. */
const struct sim_mig_profile *sim_mig_profile_by_index(unsigned index);
/* The profile of NVML profile id `id`, or NULL. */
const struct sim_mig_profile *sim_mig_profile_by_id(unsigned id);

/* Is card `dev` in MIG mode? (Its model's partitions are "mig".) */
bool sim_mig_enabled(const struct sim *s, int dev);

/* Makes a GPU instance of profile id `profile_id` on card `dev`: at
 * `start`, or (start < 0) at the lowest free start. Fills *ret_slot with
 * its slot (its simdev index is SIM_DEVICES_MAX + slot). */
int sim_mig_gi_create(struct sim *s, int dev, unsigned profile_id, int start, int *ret_slot);
/* Destroys a GPU instance: -EBUSY while it has its compute instance. */
int sim_mig_gi_destroy(struct sim *s, int slot);
/* Makes its (whole) compute instance; -ENOSPC when it has one. */
int sim_mig_ci_create(struct sim *s, int slot);
/* Destroys the compute instance: -EBUSY while a live process has memory
 * or a context on the instance. */
int sim_mig_ci_destroy(struct sim *s, int slot);

/* A copy of slot's record, read under no lock; false when free. */
bool sim_mig_gi_get(struct sim *s, int slot, struct sim_mig_gi *ret);
/* The instance of simdev index `dev` (a MIG device, state SIM_MIG_CI):
 * its profile, or NULL when dev is no such instance. */
const struct sim_mig_profile *sim_mig_device_profile(struct sim *s, int dev);
/* The simdev index of the MIG device whose UUID is `uuid` (or a prefix of
 * exactly one, `len` bytes), or -1. */
int sim_mig_device_by_uuid(struct sim *s, const char *uuid, size_t len);
/* Memory slices taken on card `dev` (bit i: slice i). */
uint32_t sim_mig_used_slices(struct sim *s, int dev);
/* How many more instances of profile id `profile_id` card `dev` could
 * take, made one after another at their lowest free starts. */
unsigned sim_mig_remaining(struct sim *s, int dev, unsigned profile_id);

#endif
