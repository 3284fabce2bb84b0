/* partitions.c — the hardware partitions of this node's cards (NVIDIA MIG
 * instances: vendor.h's partition ops), as the agent makes and keeps them
 * (agent-impl.h's gp_parts_*).
 *
 * At start the agent asks each card's vendor for its profiles: a card that
 * offers some is in partition mode and is scheduled as the core's
 * partition set of those profiles (core/partition.h); a card whose
 * profiles match no set is not cut by gpupool, and says why. A task placed on such
 * a card gets a partition of its own when it starts: the profile its
 * share needs (a whole card: the largest), at the start the core chose.
 * The task sees it as its device (its UUID in the vendor's visibility
 * variable), with a managed region of its own where its limits are whole:
 * the hardware holds its size. When the task ends the partition is
 * destroyed — again at each poll while the driver still holds it, its
 * units counted as taken meanwhile (partition_held), so that the
 * scheduler does not place a task there.
 *
 * A card whose partitions were all made by hand before the agent started
 * is used as it was cut (static use): each partition is a device of its
 * own in the card's place, shared by software slices like any other.
 *
 * What the agent made is in a ledger, RUN_DIR/tasks/partitions (a line a
 * partition: card UUID, partition UUID, task, units), rewritten whole at
 * each change: a later agent gives an adopted task its partitions back
 * and destroys those of tasks that are gone. Partitions the agent did not
 * make (made by hand, at any time: the agent looks every REFRESH_MS) are
 * left alone; their units count as taken.
 *
 * Threads: the loop's only (start, poll, adoption); the verifier's never
 * looks here. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent-impl.h"
#include "core/partition.h"
#include "vendor/vendor.h"

#define RETRY_MS   500
#define REFRESH_MS 2000 /* between two looks for partitions made by hand */

/* ---- the cards ---------------------------------------------------------------- */

/* The vendor handle of device d's vendor, opened once for all its cards. */
static void *vendor_handle(struct gp_agent *a, unsigned d, char *err, size_t err_len)
{
	struct gp_agent_parts *p = &a->parts;
	const struct gp_vendor_ops *v = a->node.device[d].vendor;
	const char *library = strcmp(v->name, "nvidia") == 0 ? a->o.nvml_library : NULL;

	for (unsigned i = 0; i < p->vendors; i++)
		if (p->vendor[i].ops == v)
			return p->vendor[i].h;
	if (p->vendors == GP_AGENT_VENDORS_MAX ||
	    v->open(library, &p->vendor[p->vendors].h, err, err_len) < 0)
		return NULL;
	p->vendor[p->vendors].ops = v;
	return p->vendor[p->vendors++].h;
}

/* Asks card d for its profiles; sets its partition set, or says why it
 * cannot be used. */
static int card_read(struct gp_agent *a, unsigned d, char *err, size_t err_len)
{
	struct gp_agent_device *dev = &a->node.device[d];
	struct gp_agent_card *c = &a->parts.card[d];
	const char *names[GP_PART_PROFILES_MAX * 2];
	unsigned units = 0;
	int n;

	c->h = vendor_handle(a, d, err, err_len);
	if (!c->h)
		return -EIO;
	n = dev->vendor->profiles(c->h, dev->local, c->profile, GP_AGENT_PROFILES_MAX,
				  &units);
	if (n <= 0) {
		c->h = NULL; /* not in partition mode */
		return 0;
	}
	c->profiles = n < GP_AGENT_PROFILES_MAX ? n : GP_AGENT_PROFILES_MAX;
	for (int i = 0; i < c->profiles; i++)
		names[i] = c->profile[i].name;
	dev->partition_set = gp_part_set_of_profiles(names, c->profiles);
	return 0;
}

/* A card in partition mode whose profiles are no set of the core's (one
 * gpupool cannot cut) is not used, and says why. */
static void card_refuse_unknown(struct gp_agent *a, unsigned d)
{
	struct gp_agent_device *dev = &a->node.device[d];
	const struct gp_agent_card *c = &a->parts.card[d];

	if (dev->partition_set || !dev->compatible)
		return;
	dev->compatible = false;
	snprintf(dev->reason, sizeof(dev->reason),
		 "in partition mode, profiles (%.20s, …) of no set gpupool knows: cut it "
		 "by "
		 "hand (its partitions are then devices) or turn partition mode off",
		 c->profile[0].name);
}

/* Card d's profile of this name, or NULL. */
static const struct gp_partition_profile *profile_named(const struct gp_agent_card *c,
							const char *name)
{
	for (int i = 0; i < c->profiles; i++)
		if (strcmp(c->profile[i].name, name) == 0)
			return &c->profile[i];
	return NULL;
}

static const struct gp_partition_profile *profile_id(const struct gp_agent_card *c,
						     unsigned id)
{
	for (int i = 0; i < c->profiles; i++)
		if (c->profile[i].id == id)
			return &c->profile[i];
	return NULL;
}

static uint8_t units_of(const struct gp_partition_profile *p, unsigned start)
{
	return p ? (uint8_t)(((1u << p->units) - 1) << start) : 0;
}

/* ---- the ledger ------------------------------------------------------------------ */

static void ledger_path(const struct gp_agent *a, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/tasks/partitions", a->run_dir) >= len)
		buf[0] = '\0';
}

/* Writes what the agent made (a new file, renamed over the old); sets
 * each card's held units. */
static void ledger_write(struct gp_agent *a)
{
	struct gp_agent_parts *p = &a->parts;
	char path[PATH_MAX], temp[PATH_MAX + 8];
	FILE *out;

	for (unsigned d = 0; d < a->node.devices; d++)
		a->node.device[d].partition_held = 0;
	for (int i = 0; i < p->n; i++)
		if (p->part[i].task <= 0)
			a->node.device[p->part[i].device].partition_held |=
				p->part[i].units;
	ledger_path(a, path, sizeof(path));
	snprintf(temp, sizeof(temp), "%s.new", path);
	out = fopen(temp, "we");
	if (!out)
		return; /* kept in memory; the next change tries again */
	for (int i = 0; i < p->n; i++)
		if (p->part[i].task >= 0)
			fprintf(out, "%s %s %" PRId64 " %u\n",
				a->node.device[p->part[i].device].uuid, p->part[i].uuid,
				p->part[i].task, p->part[i].units);
	if (fclose(out) == 0)
		rename(temp, path);
}

/* The ledger's line for partition `uuid` of card d, if any: its task
 * (0: ended, not destroyed yet), else -1. */
static int64_t ledger_task(const struct gp_agent *a, unsigned d, const char *uuid)
{
	char path[PATH_MAX], card[GP_DEVICE_TEXT_MAX], part[GP_DEVICE_TEXT_MAX];
	int64_t task, found = -1;
	unsigned units;
	FILE *in;

	ledger_path(a, path, sizeof(path));
	in = fopen(path, "re");
	while (in && found < 0 &&
	       fscanf(in, "%95s %95s %" SCNd64 " %u", card, part, &task, &units) == 4)
		if (strcmp(card, a->node.device[d].uuid) == 0 && strcmp(part, uuid) == 0)
			found = task;
	if (in)
		fclose(in);
	return found;
}

static struct gp_agent_part *part_add(struct gp_agent *a)
{
	struct gp_agent_parts *p = &a->parts;

	if (p->n == GP_AGENT_PARTS_MAX)
		return NULL;
	p->part[p->n] = (struct gp_agent_part){0};
	return &p->part[p->n++];
}

/* Is partition `uuid` of card d in the list? */
static bool listed(const struct gp_partition *list, int n, const char *uuid)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i].uuid, uuid) == 0)
			return true;
	return false;
}

/* Follows the partitions made or destroyed by hand on card d since the
 * last look (what the agent made is its own to follow): did any change?
 * `ledger`: at start, when a partition may be one the ledger says a
 * previous agent made (then its region is opened again). */
static bool card_refresh(struct gp_agent *a, unsigned d, bool ledger)
{
	struct gp_agent_parts *p = &a->parts;
	const struct gp_agent_device *dev = &a->node.device[d];
	struct gp_partition list[GP_PART_UNITS_MAX];
	int n = dev->vendor->partitions(p->card[d].h, dev->local, list,
					GP_PART_UNITS_MAX);
	bool changed = false;

	if (n < 0)
		return false;
	n = n < GP_PART_UNITS_MAX ? n : GP_PART_UNITS_MAX;
	for (int i = 0; i < p->n;)
		if (p->part[i].device == d && p->part[i].task < 0 &&
		    !listed(list, n, p->part[i].uuid)) {
			p->part[i] = p->part[--p->n];
			changed = true;
		} else {
			i++;
		}
	for (int i = 0; i < n; i++) {
		const struct gp_partition_profile *prof =
			profile_id(&p->card[d], list[i].profile_id);
		bool known = false;
		struct gp_agent_part *x;

		for (int k = 0; k < p->n && !known; k++)
			known = p->part[k].device == d &&
				strcmp(p->part[k].uuid, list[i].uuid) == 0;
		if (known || !(x = part_add(a)))
			continue;
		x->task = ledger ? ledger_task(a, d, list[i].uuid) : -1;
		x->device = d;
		x->units = units_of(prof, list[i].start);
		snprintf(x->uuid, sizeof(x->uuid), "%.*s", (int)sizeof(x->uuid) - 1,
			 list[i].uuid);
		if (x->task > 0 && prof &&
		    gp_region_open(a->run_dir, x->uuid, prof->mem_mib << 20, &x->region) <
			    0)
			x->region = NULL;
		changed = true;
	}
	return changed;
}

/* Partition x of card d as a device of its own, in *ret. */
static void part_device(const struct gp_agent *a, unsigned d,
			const struct gp_partition *x, struct gp_agent_device *ret)
{
	const struct gp_agent_device *card = &a->node.device[d];
	const struct gp_partition_profile *prof =
		profile_id(&a->parts.card[d], x->profile_id);

	*ret = *card;
	ret->local = GP_VENDOR_PART_LOCAL(card->local, x->id);
	ret->partition_set = 0;
	ret->partition_held = 0;
	ret->mem_total_mib = prof ? prof->mem_mib : 0;
	snprintf(ret->uuid, sizeof(ret->uuid), "%.*s", (int)sizeof(ret->uuid) - 1,
		 x->uuid);
	snprintf(ret->name, sizeof(ret->name), "%.*s MIG %s", 48, card->name,
		 prof ? prof->name : "?");
}

/* Static use: a card whose partitions were all made by hand is used as it
 * was cut, each partition a device of its own (of software slices, the
 * interposer's, within the partition's fixed size) in the card's place.
 * Is card d one? Then it is replaced. */
static bool card_static(struct gp_agent *a, unsigned d)
{
	const struct gp_agent_device *dev = &a->node.device[d];
	struct gp_partition list[GP_PART_UNITS_MAX];
	struct gp_agent_device part[GP_PART_UNITS_MAX];
	int n = dev->vendor->partitions(a->parts.card[d].h, dev->local, list,
					GP_PART_UNITS_MAX);

	if (n <= 0 || n > GP_PART_UNITS_MAX ||
	    a->node.devices + (unsigned)n - 1 > GP_AGENT_DEVICES_MAX)
		return false;
	for (int i = 0; i < n; i++)
		if (ledger_task(a, d, list[i].uuid) >= 0)
			return false; /* the agent's: the card is cut by gpupool */
	for (int i = 0; i < n; i++)
		part_device(a, d, &list[i], &part[i]);
	a->parts.card[d].h = NULL;
	for (int i = 0; i < n; i++) {
		unsigned at = i == 0 ? d : a->node.devices++;

		a->node.device[at] = part[i];
		a->node.device[at].index = at;
	}
	return true;
}

int gp_parts_open(struct gp_agent *a, char *err, size_t err_len)
{
	for (unsigned d = 0, cards = a->node.devices; d < cards; d++) {
		const struct gp_agent_device *dev = &a->node.device[d];
		int r;

		if (!dev->vendor->profiles)
			continue;
		r = card_read(a, d, err, err_len);
		if (r < 0)
			return r;
		if (a->parts.card[d].h && !card_static(a, d)) {
			card_refuse_unknown(a, d);
			card_refresh(a, d, true);
		}
	}
	ledger_write(a);
	return 0;
}

void gp_parts_close(struct gp_agent *a)
{
	struct gp_agent_parts *p = &a->parts;

	for (int i = 0; i < p->n; i++)
		if (p->part[i].region)
			gp_region_close(p->part[i].region);
	for (unsigned i = 0; i < p->vendors; i++)
		p->vendor[i].ops->close(p->vendor[i].h);
	*p = (struct gp_agent_parts){0};
}

/* ---- a task's partitions ------------------------------------------------------------
 */

bool gp_parts_card(const struct gp_agent *a, unsigned d)
{
	return d < a->node.devices && a->parts.card[d].h &&
	       a->node.device[d].partition_set;
}

const struct gp_agent_part *gp_parts_of(const struct gp_agent *a, int64_t task,
					unsigned d)
{
	for (int i = 0; i < a->parts.n; i++)
		if (a->parts.part[i].task == task && a->parts.part[i].device == d)
			return &a->parts.part[i];
	return NULL;
}

/* The vendor's profile and the start for task t on its i-th device. */
static int placement_of(const struct gp_agent *a, const struct gp_agent_task *t,
			unsigned i, const struct gp_partition_profile **ret,
			unsigned *ret_start, char *err, size_t err_len)
{
	unsigned d = t->device[i];
	const struct gp_part_set *set = gp_part_set(a->node.device[d].partition_set);
	int k = t->whole ? set->profiles - 1
			 : gp_part_profile_for(a->node.device[d].partition_set,
					       (uint32_t)t->mem_mib,
					       (uint16_t)(t->compute_pct * 10));

	if (k < 0) {
		snprintf(err, err_len,
			 "no partition of %s holds %" PRIu64 " MiB and %u %% of it",
			 a->node.device[d].uuid, t->mem_mib, t->compute_pct);
		return -EINVAL;
	}
	*ret = profile_named(&a->parts.card[d], set->profile[k].name);
	if (!*ret) {
		snprintf(err, err_len, "%s has no profile %s now", a->node.device[d].uuid,
			 set->profile[k].name);
		return -ENODEV;
	}
	*ret_start = t->whole || !t->part_start[i] ? 0 : t->part_start[i] - 1u;
	return 0;
}

/* Makes the partition of task t on its i-th device, with its region. */
static int part_make(struct gp_agent *a, const struct gp_agent_task *t, unsigned i,
		     char *err, size_t err_len)
{
	unsigned d = t->device[i], start;
	const struct gp_agent_device *dev = &a->node.device[d];
	const struct gp_partition_profile *prof;
	struct gp_partition made;
	struct gp_agent_part *x;
	int r = placement_of(a, t, i, &prof, &start, err, err_len);

	if (r < 0)
		return r;
	x = part_add(a);
	if (!x) {
		snprintf(err, err_len, "this agent keeps %d partitions already",
			 GP_AGENT_PARTS_MAX);
		return -ENOSPC;
	}
	r = dev->vendor->partition_create(a->parts.card[d].h, dev->local, prof->id, start,
					  &made, err, err_len);
	if (r < 0) {
		a->parts.n--;
		return r;
	}
	*x = (struct gp_agent_part){
		.task = t->id, .device = d, .units = units_of(prof, start)};
	snprintf(x->uuid, sizeof(x->uuid), "%.*s", (int)sizeof(x->uuid) - 1, made.uuid);
	ledger_write(a); /* before anything can fail: a later agent destroys it */
	r = gp_region_prepare(a->run_dir, x->uuid, prof->mem_mib << 20);
	if (r == 0)
		r = gp_region_open(a->run_dir, x->uuid, prof->mem_mib << 20, &x->region);
	if (r < 0)
		snprintf(err, err_len,
			 "cannot prepare the region of partition %s in %s: %s", x->uuid,
			 a->run_dir, strerror(-r));
	return r;
}

int gp_parts_make(struct gp_agent *a, const struct gp_agent_task *t, char *err,
		  size_t err_len)
{
	unsigned on = 0;
	int r = 0;

	for (unsigned i = 0; i < t->devices; i++)
		on += gp_parts_card(a, t->device[i]);
	if (on == 0)
		return 0;
	if (on < t->devices) {
		snprintf(err, err_len,
			 "its devices mix cards in partition mode with others; "
			 "ask for one model (--model)");
		return -EINVAL;
	}
	for (unsigned i = 0; i < t->devices && r == 0; i++)
		r = part_make(a, t, i, err, err_len);
	if (r < 0)
		gp_parts_end(a, t->id);
	return r < 0 ? r : 1;
}

/* Destroys partition x; false while its driver holds it. */
static bool part_destroy(struct gp_agent *a, struct gp_agent_part *x)
{
	const struct gp_agent_device *dev = &a->node.device[x->device];
	char why[256];
	int r = dev->vendor->partition_destroy(a->parts.card[x->device].h, dev->local,
					       x->uuid, why, sizeof(why));

	if (r == -EBUSY) {
		x->retry_ms = gp_agent_now_ms() + RETRY_MS;
		return false;
	}
	if (r < 0 && r != -ENOENT)
		fprintf(stderr, "gpupool: partition %s not destroyed: %s\n", x->uuid,
			why);
	return true;
}

/* Takes out the entries of ended tasks that are destroyed now (or whose
 * retry is due and succeeds). */
static void parts_sweep(struct gp_agent *a, bool force)
{
	struct gp_agent_parts *p = &a->parts;
	uint64_t now = gp_agent_now_ms();
	bool changed = false;

	for (int i = 0; i < p->n;) {
		struct gp_agent_part *x = &p->part[i];

		if (x->task != 0 || (!force && now < x->retry_ms) ||
		    !part_destroy(a, x)) {
			i++;
			continue;
		}
		*x = p->part[--p->n];
		changed = true;
	}
	if (changed)
		ledger_write(a);
}

void gp_parts_end(struct gp_agent *a, int64_t task)
{
	struct gp_agent_parts *p = &a->parts;
	bool any = false;

	for (int i = 0; i < p->n; i++) {
		struct gp_agent_part *x = &p->part[i];

		if (x->task != task)
			continue;
		if (x->region)
			gp_region_close(x->region);
		x->region = NULL;
		gp_region_remove(a->run_dir, x->uuid);
		x->task = 0;
		any = true;
	}
	if (!any)
		return;
	ledger_write(a);
	parts_sweep(a, true);
}

void gp_parts_retry(struct gp_agent *a)
{
	uint64_t now = gp_agent_now_ms();
	bool changed = false;

	parts_sweep(a, false);
	if (now < a->parts.refresh_ms)
		return;
	a->parts.refresh_ms = now + REFRESH_MS;
	for (unsigned d = 0; d < a->node.devices; d++)
		if (a->parts.card[d].h)
			changed |= card_refresh(a, d, false);
	if (changed)
		ledger_write(a);
}

void gp_parts_adopted(struct gp_agent *a)
{
	int64_t gone[GP_AGENT_PARTS_MAX];
	int n = 0;

	for (int i = 0; i < a->parts.n; i++) {
		int64_t task = a->parts.part[i].task;

		if (task > 0 && !gp_agent_running(a, task))
			gone[n++] = task;
	}
	for (int i = 0; i < n; i++)
		gp_parts_end(a, gone[i]);
	parts_sweep(a, true);
}
