/* partitions.c — the hardware partitions of a node's cards, made and
 * destroyed for their owners (partitions.h): the agent's tasks and the
 * node program's pods.
 *
 * In this order: the cards (their profiles, a card cut by hand used as
 * cut), the ledger, the partitions made by hand followed, an owner's
 * partitions made and destroyed. */
#include "agent/partitions.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "core/partition.h"
#include "shim/region.h"

#define ENDED_OWNER "0" /* in the ledger: ended, not destroyed yet */

static uint64_t now_ms(void)
{
	return gp_monotonic_ns() / 1000000u;
}

/* ---- the cards ---------------------------------------------------------------- */

/* The vendor handle of device d's vendor, opened once for all its cards. */
static void *vendor_handle(struct gp_parts *p, unsigned d, const char *nvml, char *err,
			   size_t err_len)
{
	const struct gp_vendor_ops *v = p->node->device[d].vendor;
	const char *library = strcmp(v->name, "nvidia") == 0 ? nvml : NULL;

	for (unsigned i = 0; i < p->vendors; i++)
		if (p->vendor[i].ops == v)
			return p->vendor[i].h;
	if (p->vendors == GP_PARTS_VENDORS_MAX ||
	    v->open(library, &p->vendor[p->vendors].h, err, err_len) < 0)
		return NULL;
	p->vendor[p->vendors].ops = v;
	return p->vendor[p->vendors++].h;
}

/* Asks card d for its profiles; sets its partition set. */
static int card_read(struct gp_parts *p, unsigned d, const char *nvml, char *err,
		     size_t err_len)
{
	struct gp_agent_device *dev = &p->node->device[d];
	struct gp_parts_card *c = &p->card[d];
	const char *names[GP_PARTS_PROFILES_MAX];
	unsigned units = 0;
	int n;

	c->h = vendor_handle(p, d, nvml, err, err_len);
	if (!c->h)
		return -EIO;
	n = dev->vendor->profiles(c->h, dev->local, c->profile, GP_PARTS_PROFILES_MAX, &units);
	if (n <= 0) {
		c->h = NULL; /* not in partition mode */
		return 0;
	}
	c->profiles = n < GP_PARTS_PROFILES_MAX ? n : GP_PARTS_PROFILES_MAX;
	for (int i = 0; i < c->profiles; i++)
		names[i] = c->profile[i].name;
	dev->partition_set = gp_part_set_of_profiles(names, c->profiles);
	return 0;
}

/* A card in partition mode whose profiles are no set of the core's (one
 * gpupool cannot cut) is not used, and says why. */
static void card_refuse_unknown(struct gp_parts *p, unsigned d)
{
	struct gp_agent_device *dev = &p->node->device[d];

	if (dev->partition_set || !dev->compatible)
		return;
	dev->compatible = false;
	snprintf(dev->reason, sizeof(dev->reason),
		 "in partition mode, profiles (%.20s, …) of no set gpupool knows: cut it by "
		 "hand (its partitions are then devices) or turn partition mode off",
		 p->card[d].profile[0].name);
}

/* Card d's profile of this name, or NULL. */
static const struct gp_partition_profile *profile_named(const struct gp_parts_card *c,
							const char *name)
{
	for (int i = 0; i < c->profiles; i++)
		if (strcmp(c->profile[i].name, name) == 0)
			return &c->profile[i];
	return NULL;
}

static const struct gp_partition_profile *profile_id(const struct gp_parts_card *c,
						     unsigned id)
{
	for (int i = 0; i < c->profiles; i++)
		if (c->profile[i].id == id)
			return &c->profile[i];
	return NULL;
}

static uint8_t units_of(const struct gp_partition_profile *prof, unsigned start)
{
	return prof ? (uint8_t)(((1u << prof->units) - 1) << start) : 0;
}

/* ---- the ledger ------------------------------------------------------------------ */

/* Writes what was made (a new file, renamed over the old); sets each
 * card's held units: the partitions of no owner. */
static void ledger_write(struct gp_parts *p)
{
	char temp[PATH_MAX + 8];
	FILE *out;

	for (unsigned d = 0; d < p->node->devices; d++)
		p->node->device[d].partition_held = 0;
	for (int i = 0; i < p->n; i++)
		if (p->part[i].state != GP_PART_OWNED)
			p->node->device[p->part[i].device].partition_held |= p->part[i].units;
	snprintf(temp, sizeof(temp), "%s.new", p->ledger);
	out = fopen(temp, "we");
	if (!out)
		return; /* kept in memory; the next change tries again */
	for (int i = 0; i < p->n; i++)
		if (p->part[i].state != GP_PART_BY_HAND)
			fprintf(out, "%s %s %s %u\n", p->node->device[p->part[i].device].uuid,
				p->part[i].uuid,
				p->part[i].state == GP_PART_OWNED ? p->part[i].owner : ENDED_OWNER,
				p->part[i].units);
	if (fclose(out) == 0)
		rename(temp, p->ledger);
}

/* The ledger's line for partition `uuid` of card d, if any: its owner in
 * ret (GP_PARTS_OWNER_MAX; ENDED_OWNER: ended), and true. */
static bool ledger_owner(const struct gp_parts *p, unsigned d, const char *uuid, char *ret)
{
	char card[GP_DEVICE_TEXT_MAX], part[GP_DEVICE_TEXT_MAX], owner[GP_PARTS_OWNER_MAX];
	unsigned units;
	bool found = false;
	FILE *in = fopen(p->ledger, "re");

	while (in && !found && fscanf(in, "%95s %95s %63s %u", card, part, owner, &units) == 4)
		if (strcmp(card, p->node->device[d].uuid) == 0 && strcmp(part, uuid) == 0) {
			snprintf(ret, GP_PARTS_OWNER_MAX, "%s", owner);
			found = true;
		}
	if (in)
		fclose(in);
	return found;
}

static struct gp_part *part_add(struct gp_parts *p)
{
	if (p->n == GP_PARTS_MAX)
		return NULL;
	p->part[p->n] = (struct gp_part){ 0 };
	return &p->part[p->n++];
}

/* ---- partitions made by hand -------------------------------------------------------- */

/* Is partition `uuid` in the list? */
static bool listed(const struct gp_partition *list, int n, const char *uuid)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i].uuid, uuid) == 0)
			return true;
	return false;
}

static bool known(const struct gp_parts *p, unsigned d, const char *uuid)
{
	for (int k = 0; k < p->n; k++)
		if (p->part[k].device == d && strcmp(p->part[k].uuid, uuid) == 0)
			return true;
	return false;
}

/* Partition x of card d, found listed: made by hand, or (`ledger`, at
 * start) made by a previous program for an owner (its region opened
 * again) or ended. */
static void part_found(struct gp_parts *p, unsigned d, const struct gp_partition *listed_as,
		       struct gp_part *x, bool ledger)
{
	const struct gp_partition_profile *prof = profile_id(&p->card[d], listed_as->profile_id);
	char owner[GP_PARTS_OWNER_MAX];

	x->state = GP_PART_BY_HAND;
	if (ledger && ledger_owner(p, d, listed_as->uuid, owner)) {
		x->state = strcmp(owner, ENDED_OWNER) == 0 ? GP_PART_ENDED : GP_PART_OWNED;
		snprintf(x->owner, sizeof(x->owner), "%s", x->state == GP_PART_OWNED ? owner : "");
	}
	x->device = d;
	x->units = units_of(prof, listed_as->start);
	x->mem_mib = prof ? prof->mem_mib : 0;
	snprintf(x->uuid, sizeof(x->uuid), "%.*s", (int)sizeof(x->uuid) - 1, listed_as->uuid);
	if (x->state == GP_PART_OWNED && prof &&
	    gp_region_open(p->run_dir, x->uuid, prof->mem_mib << 20, &x->region) < 0)
		x->region = NULL;
}

/* Follows the partitions made or destroyed by hand on card d since the
 * last look (what was made for owners is followed as it changes): did
 * any change? */
static bool card_refresh(struct gp_parts *p, unsigned d, bool ledger)
{
	const struct gp_agent_device *dev = &p->node->device[d];
	struct gp_partition list[GP_PART_UNITS_MAX];
	int n = dev->vendor->partitions(p->card[d].h, dev->local, list, GP_PART_UNITS_MAX);
	bool changed = false;

	if (n < 0)
		return false;
	n = n < GP_PART_UNITS_MAX ? n : GP_PART_UNITS_MAX;
	for (int i = 0; i < p->n;)
		if (p->part[i].device == d && p->part[i].state == GP_PART_BY_HAND &&
		    !listed(list, n, p->part[i].uuid)) {
			p->part[i] = p->part[--p->n];
			changed = true;
		} else {
			i++;
		}
	for (int i = 0; i < n; i++) {
		struct gp_part *x;

		if (known(p, d, list[i].uuid) || !(x = part_add(p)))
			continue;
		part_found(p, d, &list[i], x, ledger);
		changed = true;
	}
	return changed;
}

/* Partition x of card d as a device of its own, in *ret. */
static void part_device(const struct gp_parts *p, unsigned d, const struct gp_partition *x,
			struct gp_agent_device *ret)
{
	const struct gp_agent_device *card = &p->node->device[d];
	const struct gp_partition_profile *prof = profile_id(&p->card[d], x->profile_id);

	*ret = *card;
	ret->local = GP_VENDOR_PART_LOCAL(card->local, x->id);
	ret->partition_set = 0;
	ret->partition_held = 0;
	ret->mem_total_mib = prof ? prof->mem_mib : 0;
	snprintf(ret->uuid, sizeof(ret->uuid), "%.*s", (int)sizeof(ret->uuid) - 1, x->uuid);
	snprintf(ret->name, sizeof(ret->name), "%.*s MIG %s", 48, card->name,
		 prof ? prof->name : "?");
}

/* Static use: a card whose partitions were all made by hand is used as it
 * was cut, each partition a device of its own (of software slices, the
 * interposer's, within the partition's fixed size) in the card's place.
 * Is card d one? Then it is replaced. */
static bool card_static(struct gp_parts *p, unsigned d)
{
	struct gp_agent_node *node = p->node;
	const struct gp_agent_device *dev = &node->device[d];
	struct gp_partition list[GP_PART_UNITS_MAX];
	struct gp_agent_device part[GP_PART_UNITS_MAX];
	char owner[GP_PARTS_OWNER_MAX];
	int n = dev->vendor->partitions(p->card[d].h, dev->local, list, GP_PART_UNITS_MAX);

	if (n <= 0 || n > GP_PART_UNITS_MAX || node->devices + (unsigned)n - 1 > GP_AGENT_DEVICES_MAX)
		return false;
	for (int i = 0; i < n; i++)
		if (ledger_owner(p, d, list[i].uuid, owner))
			return false; /* made by gpupool: the card is cut by gpupool */
	for (int i = 0; i < n; i++)
		part_device(p, d, &list[i], &part[i]);
	p->card[d].h = NULL;
	for (int i = 0; i < n; i++) {
		unsigned at = i == 0 ? d : node->devices++;

		node->device[at] = part[i];
		node->device[at].index = at;
	}
	return true;
}

int gp_parts_init(struct gp_parts *p, struct gp_agent_node *node, const char *nvml,
		  const char *run_dir, const char *ledger, char *err, size_t err_len)
{
	*p = (struct gp_parts){ .node = node };
	if ((size_t)snprintf(p->run_dir, sizeof(p->run_dir), "%s", run_dir) >= sizeof(p->run_dir) ||
	    (size_t)snprintf(p->ledger, sizeof(p->ledger), "%s", ledger) >= sizeof(p->ledger)) {
		snprintf(err, err_len, "the partitions' ledger %s: name too long", ledger);
		return -ENAMETOOLONG;
	}
	for (unsigned d = 0, cards = node->devices; d < cards; d++) {
		int r;

		if (!node->device[d].vendor->profiles)
			continue;
		r = card_read(p, d, nvml, err, err_len);
		if (r < 0) {
			gp_parts_release(p);
			return r;
		}
		if (p->card[d].h && !card_static(p, d)) {
			card_refuse_unknown(p, d);
			card_refresh(p, d, true);
		}
	}
	ledger_write(p);
	return 0;
}

void gp_parts_release(struct gp_parts *p)
{
	for (int i = 0; i < p->n; i++)
		if (p->part[i].region)
			gp_region_close(p->part[i].region);
	for (unsigned i = 0; i < p->vendors; i++)
		p->vendor[i].ops->close(p->vendor[i].h);
	p->n = 0;
	p->vendors = 0;
	memset(p->card, 0, sizeof(p->card));
}

/* ---- an owner's partitions ------------------------------------------------------------ */

bool gp_parts_card(const struct gp_parts *p, unsigned d)
{
	return p->node && d < p->node->devices && p->card[d].h && p->node->device[d].partition_set;
}

const struct gp_part *gp_parts_of(const struct gp_parts *p, const char *owner, unsigned d)
{
	for (int i = 0; i < p->n; i++)
		if (p->part[i].state == GP_PART_OWNED && p->part[i].device == d &&
		    strcmp(p->part[i].owner, owner) == 0)
			return &p->part[i];
	return NULL;
}

/* The vendor's profile and the start for the ask's i-th device. */
static int placement_of(const struct gp_parts *p, const struct gp_parts_ask *a, unsigned i,
			const struct gp_partition_profile **ret, unsigned *ret_start, char *err,
			size_t err_len)
{
	unsigned d = a->device[i];
	const struct gp_agent_device *dev = &p->node->device[d];
	const struct gp_part_set *set = gp_part_set(dev->partition_set);
	int k = a->whole ? set->profiles - 1
			 : gp_part_profile_for(dev->partition_set, (uint32_t)a->mem_mib,
					       (uint16_t)(a->compute_pct * 10));

	if (k < 0) {
		snprintf(err, err_len, "no partition of %s holds %" PRIu64 " MiB and %u %% of it",
			 dev->uuid, a->mem_mib, a->compute_pct);
		return -EINVAL;
	}
	*ret = profile_named(&p->card[d], set->profile[k].name);
	if (!*ret) {
		snprintf(err, err_len, "%s has no profile %s now", dev->uuid, set->profile[k].name);
		return -ENODEV;
	}
	*ret_start = a->whole || !a->part_start[i] ? 0 : a->part_start[i] - 1u;
	return 0;
}

/* Makes the partition of the ask's i-th device, with its region. */
static int part_make(struct gp_parts *p, const struct gp_parts_ask *a, unsigned i, char *err,
		     size_t err_len)
{
	unsigned d = a->device[i], start;
	const struct gp_agent_device *dev = &p->node->device[d];
	const struct gp_partition_profile *prof;
	struct gp_partition made;
	struct gp_part *x;
	int r = placement_of(p, a, i, &prof, &start, err, err_len);

	if (r < 0)
		return r;
	x = part_add(p);
	if (!x) {
		snprintf(err, err_len, "%d partitions are kept already", GP_PARTS_MAX);
		return -ENOSPC;
	}
	r = dev->vendor->partition_create(p->card[d].h, dev->local, prof->id, start, &made, err,
					  err_len);
	if (r < 0) {
		p->n--;
		return r;
	}
	*x = (struct gp_part){ .state = GP_PART_OWNED, .device = d, .units = units_of(prof, start),
			       .mem_mib = prof->mem_mib };
	snprintf(x->owner, sizeof(x->owner), "%s", a->owner);
	snprintf(x->uuid, sizeof(x->uuid), "%.*s", (int)sizeof(x->uuid) - 1, made.uuid);
	ledger_write(p); /* before anything can fail: a later program destroys it */
	r = gp_region_prepare(p->run_dir, x->uuid, prof->mem_mib << 20);
	if (r == 0)
		r = gp_region_open(p->run_dir, x->uuid, prof->mem_mib << 20, &x->region);
	if (r < 0)
		snprintf(err, err_len, "cannot prepare the region of partition %s in %s: %s",
			 x->uuid, p->run_dir, strerror(-r));
	return r;
}

static bool parts_sweep(struct gp_parts *p, bool force);

int gp_parts_make(struct gp_parts *p, const struct gp_parts_ask *a, char *err, size_t err_len)
{
	unsigned on = 0;
	int r = 0;

	for (unsigned i = 0; i < a->devices; i++)
		on += gp_parts_card(p, a->device[i]);
	if (on == 0)
		return 0;
	if (on < a->devices) {
		snprintf(err, err_len, "its devices mix cards in partition mode with others; "
			 "ask for one model");
		return -EINVAL;
	}
	if (!a->owner[0] || strcmp(a->owner, ENDED_OWNER) == 0 || strpbrk(a->owner, " \t\n") ||
	    strlen(a->owner) >= GP_PARTS_OWNER_MAX) {
		snprintf(err, err_len, "\"%.80s\" cannot own a partition", a->owner);
		return -EINVAL;
	}
	parts_sweep(p, true);   /* an ended one may still hold the units asked for */
	for (unsigned i = 0; i < a->devices && r == 0; i++)
		r = part_make(p, a, i, err, err_len);
	if (r < 0)
		gp_parts_end(p, a->owner);
	return r < 0 ? r : 1;
}

/* Destroys partition x; false while its driver holds it. */
static bool part_destroy(struct gp_parts *p, struct gp_part *x)
{
	const struct gp_agent_device *dev = &p->node->device[x->device];
	char why[256];
	int r = dev->vendor->partition_destroy(p->card[x->device].h, dev->local, x->uuid, why,
					       sizeof(why));

	if (r == -EBUSY) {
		x->retry_ms = now_ms() + GP_PARTS_RETRY_MS;
		return false;
	}
	if (r < 0 && r != -ENOENT)
		fprintf(stderr, "gpupool: partition %s not destroyed: %s\n", x->uuid, why);
	return true;
}

/* Takes out the ended partitions that are destroyed now (or whose retry
 * is due and succeeds): did any go? */
static bool parts_sweep(struct gp_parts *p, bool force)
{
	uint64_t now = now_ms();
	bool changed = false;

	for (int i = 0; i < p->n;) {
		struct gp_part *x = &p->part[i];

		if (x->state != GP_PART_ENDED || (!force && now < x->retry_ms) ||
		    !part_destroy(p, x)) {
			i++;
			continue;
		}
		*x = p->part[--p->n];
		changed = true;
	}
	if (changed)
		ledger_write(p);
	return changed;
}

void gp_parts_end(struct gp_parts *p, const char *owner)
{
	bool any = false;

	for (int i = 0; i < p->n; i++) {
		struct gp_part *x = &p->part[i];

		if (x->state != GP_PART_OWNED || strcmp(x->owner, owner) != 0)
			continue;
		if (x->region)
			gp_region_close(x->region);
		x->region = NULL;
		gp_region_remove(p->run_dir, x->uuid);
		x->state = GP_PART_ENDED;
		x->owner[0] = '\0';
		any = true;
	}
	if (!any)
		return;
	ledger_write(p);
	parts_sweep(p, true);
}

bool gp_parts_retry(struct gp_parts *p)
{
	uint64_t now = now_ms();
	bool changed = parts_sweep(p, false), refreshed = false;

	if (now < p->refresh_ms)
		return changed;
	p->refresh_ms = now + GP_PARTS_REFRESH_MS;
	for (unsigned d = 0; p->node && d < p->node->devices; d++)
		if (p->card[d].h)
			refreshed |= card_refresh(p, d, false);
	if (refreshed)
		ledger_write(p);
	return changed || refreshed;
}

void gp_parts_keep_only(struct gp_parts *p, bool (*alive)(void *ctx, const char *owner),
			void *ctx)
{
	char gone[GP_PARTS_MAX][GP_PARTS_OWNER_MAX];
	int n = 0;

	for (int i = 0; i < p->n; i++)
		if (p->part[i].state == GP_PART_OWNED && !alive(ctx, p->part[i].owner))
			snprintf(gone[n++], GP_PARTS_OWNER_MAX, "%s", p->part[i].owner);
	for (int i = 0; i < n; i++)
		gp_parts_end(p, gone[i]);
	parts_sweep(p, true);
}
