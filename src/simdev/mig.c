/* mig.c — MIG GPU instances on simulated cards (mig.h): the profile
 * table, the placement rules, making and destroying instances in the
 * shared state.
 *
 * The rules are the hardware's, as NVML reports them: a profile takes
 * `slices` consecutive memory slices from one of its allowed starts, no
 * two instances share a slice, the instances of a card have at most 7
 * compute slices between them, and a profile has at most `max_count`
 * instances on a card. Making and destroying take the MIG lock (robust:
 * a process killed while holding it hands it on); a slot's state word is
 * written last, so readers that do not lock see a whole record or none. */
#include "simdev/mig.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#define MiB (1024ULL * 1024)

/* A100-SXM4-80GB. Names, compute and memory slices and starts: NVIDIA's MIG
 * user guide ("A100 MIG profiles"); profile ids: the same guide and
 * nvidia-smi mig -lgip listings (the same ids on H100-80GB); indices:
 * nvml.h (NVML_GPU_INSTANCE_PROFILE_*; 1g.20gb as 1_SLICE_REV2 is our
 * reading). SMs (14 a compute slice) and memory (9.5 GiB for 1g.10gb,
 * 19.5 for 1g/2g.20gb, 39.5 for 3g/4g.40gb) as CUDA reports them on
 * A100-80GB instances in third-party listings; 7g.80gb's 79.25 GiB is
 * simulated, not checked. max: instances of the profile a card holds. */
static const struct sim_mig_profile profiles[] = {
	/* index id name  gpcs slices starts mem_mib sms ce max */
	{ 0, 19, "1g.10gb", 1, 1, 0x7f, 9728, 14, 1, 7 },
	{ 9, 15, "1g.20gb", 1, 2, 0x55, 19968, 14, 1, 4 },
	{ 1, 14, "2g.20gb", 2, 2, 0x15, 19968, 28, 2, 3 },
	{ 2, 9, "3g.40gb", 3, 4, 0x11, 40448, 42, 3, 2 },
	{ 3, 5, "4g.40gb", 4, 4, 0x01, 40448, 56, 4, 1 },
	{ 4, 0, "7g.80gb", 7, 8, 0x01, 81152, 98, 7, 1 },
	{ 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0 },
};

const struct sim_mig_profile *sim_mig_profiles(void)
{
	return profiles;
}

const struct sim_mig_profile *sim_mig_profile_by_index(unsigned index)
{
	for (const struct sim_mig_profile *p = profiles; p->name; p++)
		if (p->index == index)
			return p;
	return NULL;
}

const struct sim_mig_profile *sim_mig_profile_by_id(unsigned id)
{
	for (const struct sim_mig_profile *p = profiles; p->name; p++)
		if (p->id == id)
			return p;
	return NULL;
}

bool sim_mig_enabled(const struct sim *s, int dev)
{
	const char *kind = sim_device_model(s, dev)->partitions;

	return dev >= 0 && dev < SIM_DEVICES_MAX && kind && strcmp(kind, "mig") == 0;
}

static uint32_t span(const struct sim_mig_profile *p, unsigned start)
{
	return ((1u << p->slices) - 1) << start;
}

bool sim_mig_gi_get(struct sim *s, int slot, struct sim_mig_gi *ret)
{
	struct sim_mig_gi *g;
	uint32_t state;

	if (slot < 0 || slot >= SIM_MIG_MAX)
		return false;
	g = &sim_mig_area(s)->gi[slot];
	state = atomic_load(&g->state);
	if (state == SIM_MIG_FREE)
		return false;
	ret->card = g->card;
	ret->profile = g->profile;
	ret->start = g->start;
	ret->id = g->id;
	ret->pad = 0;
	ret->serial = g->serial;
	atomic_store(&ret->state, state);
	return true;
}

/* What the instances of card `dev` take: slices, compute slices, how many
 * of profile `profile` (an index into profiles[]) and the ids in use. */
struct card_use {
	uint32_t slices;
	unsigned gpcs, of_profile;
	uint64_t ids;                   /* bit i: GPU instance id i */
};

static struct card_use card_use(struct sim *s, int dev, int profile)
{
	struct card_use u = { 0, 0, 0, 0 };
	struct sim_mig_gi g;

	for (int i = 0; i < SIM_MIG_MAX; i++) {
		if (!sim_mig_gi_get(s, i, &g) || (int)g.card != dev)
			continue;
		u.slices |= span(&profiles[g.profile], g.start);
		u.gpcs += profiles[g.profile].gpcs;
		u.of_profile += (int)g.profile == profile;
		u.ids |= 1ULL << (g.id & 63);
	}
	return u;
}

uint32_t sim_mig_used_slices(struct sim *s, int dev)
{
	return card_use(s, dev, -1).slices;
}

/* The start a profile gets on a card whose slices `used` are taken (the
 * lowest free one), or -1. */
static int start_free(const struct sim_mig_profile *p, uint32_t used)
{
	for (unsigned st = 0; st < SIM_MIG_SLICES; st++)
		if ((p->starts >> st & 1) && !(span(p, st) & used))
			return (int)st;
	return -1;
}

unsigned sim_mig_remaining(struct sim *s, int dev, unsigned profile_id)
{
	const struct sim_mig_profile *p = sim_mig_profile_by_id(profile_id);
	struct card_use u;
	unsigned n = 0;
	int st;

	if (!p || !sim_mig_enabled(s, dev))
		return 0;
	u = card_use(s, dev, (int)(p - profiles));
	while (u.gpcs + p->gpcs <= SIM_MIG_GPCS && u.of_profile < p->max_count &&
	       (st = start_free(p, u.slices)) >= 0) {
		u.slices |= span(p, (unsigned)st);
		u.gpcs += p->gpcs;
		u.of_profile++;
		n++;
	}
	return n;
}

/* Under the MIG lock. */
static int gi_create_locked(struct sim *s, int dev, const struct sim_mig_profile *p, int start,
			    int *ret_slot)
{
	struct sim_mig_shared *m = sim_mig_area(s);
	int profile = (int)(p - profiles), slot = -1;
	struct card_use u = card_use(s, dev, profile);
	struct sim_mig_gi *g;
	unsigned id = 1;

	if (start >= 0 && (start >= SIM_MIG_SLICES || !(p->starts >> start & 1)))
		return -EINVAL;
	if (start < 0)
		start = start_free(p, u.slices);
	if (start < 0 || (span(p, (unsigned)start) & u.slices) ||
	    u.gpcs + p->gpcs > SIM_MIG_GPCS || u.of_profile >= p->max_count)
		return -ENOSPC;
	for (int i = 0; i < SIM_MIG_MAX && slot < 0; i++)
		if (atomic_load(&m->gi[i].state) == SIM_MIG_FREE)
			slot = i;
	if (slot < 0)
		return -ENOSPC;
	while (u.ids >> id & 1)
		id++;
	g = &m->gi[slot];
	g->card = (uint32_t)dev;
	g->profile = (uint32_t)profile;
	g->start = (uint32_t)start;
	g->id = id;
	g->serial = ++m->made;
	sim_part_init(s, SIM_DEVICES_MAX + slot, dev, p->mem_mib * MiB, p->gpcs, g->serial);
	atomic_store(&g->state, SIM_MIG_GI);
	*ret_slot = slot;
	return 0;
}

int sim_mig_gi_create(struct sim *s, int dev, unsigned profile_id, int start, int *ret_slot)
{
	const struct sim_mig_profile *p = sim_mig_profile_by_id(profile_id);
	int r;

	if (!sim_mig_enabled(s, dev) || !p)
		return -ENOTSUP;
	r = sim_mig_lock(s);
	if (r < 0)
		return r;
	r = gi_create_locked(s, dev, p, start, ret_slot);
	sim_mig_unlock(s);
	return r;
}

/* Moves slot from state `from` to `to` under the lock; busy_error when
 * it is in another state, -EBUSY when a MIG device leaving its compute
 * instance is in use. */
static int gi_move(struct sim *s, int slot, uint32_t from, uint32_t to, int busy_error)
{
	struct sim_mig_gi *g;
	int r;

	if (slot < 0 || slot >= SIM_MIG_MAX)
		return -ENOENT;
	g = &sim_mig_area(s)->gi[slot];
	r = sim_mig_lock(s);
	if (r < 0)
		return r;
	if (atomic_load(&g->state) == SIM_MIG_FREE)
		r = -ENOENT;
	else if (atomic_load(&g->state) != from)
		r = busy_error;
	else if (from == SIM_MIG_CI && sim_device_busy(s, SIM_DEVICES_MAX + slot))
		r = -EBUSY;
	else
		atomic_store(&g->state, to);
	sim_mig_unlock(s);
	return r;
}

int sim_mig_gi_destroy(struct sim *s, int slot)
{
	return gi_move(s, slot, SIM_MIG_GI, SIM_MIG_FREE, -EBUSY);
}

int sim_mig_ci_create(struct sim *s, int slot)
{
	return gi_move(s, slot, SIM_MIG_GI, SIM_MIG_CI, -ENOSPC);
}

int sim_mig_ci_destroy(struct sim *s, int slot)
{
	return gi_move(s, slot, SIM_MIG_CI, SIM_MIG_GI, -ENOENT);
}

const struct sim_mig_profile *sim_mig_device_profile(struct sim *s, int dev)
{
	struct sim_mig_gi g;

	if (dev < SIM_DEVICES_MAX || dev >= SIM_INDEX_MAX ||
	    !sim_mig_gi_get(s, dev - SIM_DEVICES_MAX, &g) || g.state != SIM_MIG_CI)
		return NULL;
	return &profiles[g.profile];
}

int sim_mig_device_by_uuid(struct sim *s, const char *uuid, size_t len)
{
	int found = -1;

	for (int i = 0; i < SIM_MIG_MAX; i++) {
		int dev = SIM_DEVICES_MAX + i;

		if (!sim_mig_device_profile(s, dev) || strncmp(sim_device_uuid(s, dev), uuid, len) != 0)
			continue;
		if (found >= 0)
			return -1;      /* ambiguous prefix */
		found = dev;
	}
	return found;
}
