/* partitions.h — the hardware partitions of a node's cards (NVIDIA MIG
 * instances: vendor.h's partition ops), made and destroyed for their
 * owners: the agent's tasks (`gpupool server`), the node program's pods
 * (`gpupool node --kubernetes`). One implementation for both.
 *
 * At start each card is asked for its profiles: a card that offers some
 * is in partition mode and is scheduled as the core's partition set of
 * those profiles (core/partition.h: its device's partition_set); a card
 * whose profiles match no set is not cut by gpupool, and says why (not
 * compatible, with the reason). An owner placed on such a card gets a
 * partition of its own: the profile its share needs (a whole card: the
 * largest), at the start the core chose. Its owner sees it as its device
 * (its UUID in the vendor's visibility variable), with a managed region
 * of its own (its limits are whole there: the hardware holds its size).
 * When the owner ends the partition is destroyed — again at each
 * gp_parts_retry while the driver still holds it, its units counted as
 * taken meanwhile (the device's partition_held), so that no scheduler
 * places anyone there.
 *
 * A card whose partitions were all made by hand before the start is used
 * as it was cut (static use): each partition a device of its own in the
 * card's place, shared by software slices like any other.
 *
 * What was made is in a ledger file (a line a partition: card UUID,
 * partition UUID, owner, units; owner "0": ended, not destroyed yet),
 * rewritten whole at each change: a later program gives a surviving
 * owner its partitions back (their regions opened again) and destroys
 * those of owners that are gone (gp_parts_keep_only). Partitions made by
 * hand, at any time (looked for every GP_PARTS_REFRESH_MS), are left
 * alone; their units count as taken.
 *
 * Owners are strings of up to GP_PARTS_OWNER_MAX - 1 characters without
 * white space, never "0" (the agent's task ids in decimal, pods' UIDs).
 *
 * Threads: none of its own; the caller serializes every call. Ownership:
 * struct gp_parts is the caller's storage (gp_parts_init /
 * gp_parts_release); the node it is given is borrowed and changed (static
 * use replaces a card by its partitions; partition_held is kept); a
 * struct gp_part returned lives until the next call that changes the
 * partitions. Functions return 0 or a negative errno, with why in err. */
#ifndef GP_AGENT_PARTITIONS_H
#define GP_AGENT_PARTITIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/devices.h"
#include "vendor/vendor.h"

#define GP_PARTS_PROFILES_MAX 16
#define GP_PARTS_MAX (GP_AGENT_DEVICES_MAX * 8)
#define GP_PARTS_VENDORS_MAX 8
#define GP_PARTS_OWNER_MAX 64
#define GP_PARTS_RETRY_MS 500
#define GP_PARTS_REFRESH_MS 2000

struct gp_region;

/* A card in partition mode: its vendor's handle (NULL: not in that mode)
 * and profiles. */
struct gp_parts_card {
	void *h;
	struct gp_partition_profile profile[GP_PARTS_PROFILES_MAX];
	int profiles;
};

enum gp_part_state {
	GP_PART_OWNED,                  /* its owner's */
	GP_PART_ENDED,                  /* its owner ended: being destroyed */
	GP_PART_BY_HAND,                /* made by hand: left alone */
};

/* A partition on one of the cards. */
struct gp_part {
	enum gp_part_state state;
	char owner[GP_PARTS_OWNER_MAX]; /* when OWNED */
	unsigned device;                /* its card, as the node numbers it */
	char uuid[GP_DEVICE_TEXT_MAX];
	uint8_t units;                  /* of its card, a bit each */
	uint64_t mem_mib;               /* its profile's memory; 0: not known */
	struct gp_region *region;       /* its owner's limits, while OWNED */
	uint64_t retry_ms;              /* ENDED: when to try destroying it again */
};

struct gp_parts {
	struct gp_agent_node *node;     /* borrowed */
	char run_dir[PATH_MAX];         /* the partitions' regions */
	char ledger[PATH_MAX];
	struct {
		const struct gp_vendor_ops *ops;
		void *h;
	} vendor[GP_PARTS_VENDORS_MAX]; /* each opened once */
	unsigned vendors;
	struct gp_parts_card card[GP_AGENT_DEVICES_MAX];
	struct gp_part part[GP_PARTS_MAX];
	int n;
	uint64_t refresh_ms;            /* when to look for partitions made by hand */
};

/* What an owner placed on cards asks for: its devices (the node's
 * indices) with the starts the core chose (start + 1; 0: none, as a
 * whole card), and its share of each. */
struct gp_parts_ask {
	const char *owner;
	unsigned devices;
	unsigned device[GP_AGENT_DEVICES_MAX];
	uint8_t part_start[GP_AGENT_DEVICES_MAX];
	bool whole;                     /* a whole card: the largest profile */
	uint64_t mem_mib;               /* per device */
	unsigned compute_pct;
};

/* Reads each card of `node` (nvml: NVIDIA's library, NULL for the
 * default), its partitions (made by hand, or by a previous program as
 * the ledger file says: their regions in run_dir opened again), and
 * replaces a card cut by hand by its partitions. */
int gp_parts_init(struct gp_parts *p, struct gp_agent_node *node, const char *nvml,
		  const char *run_dir, const char *ledger, char *err, size_t err_len);
void gp_parts_release(struct gp_parts *p);

/* Is device d a card that gpupool cuts (in partition mode, of a set)? */
bool gp_parts_card(const struct gp_parts *p, unsigned d);

/* Makes the owner's partitions, one per device, each with its region
 * (its limits to be admitted by the caller): 1; 0 when its devices are
 * not cards in partition mode; on failure none is left, and err says
 * why (-EINVAL: devices that mix such cards with others, or a share no
 * profile holds). */
int gp_parts_make(struct gp_parts *p, const struct gp_parts_ask *a, char *err, size_t err_len);

/* The owner's partition on device d, or NULL. */
const struct gp_part *gp_parts_of(const struct gp_parts *p, const char *owner, unsigned d);

/* The owner ended: its partitions' regions go and they are destroyed,
 * now or at a later gp_parts_retry while their driver holds them. */
void gp_parts_end(struct gp_parts *p, const char *owner);

/* Ends the partitions of every owner that `alive` does not say is alive
 * (after a restart, once the owners are known). */
void gp_parts_keep_only(struct gp_parts *p, bool (*alive)(void *ctx, const char *owner),
			void *ctx);

/* Destroys what is due again, and looks for partitions made or destroyed
 * by hand (every GP_PARTS_REFRESH_MS). True when the partitions changed. */
bool gp_parts_retry(struct gp_parts *p);

#endif
