/* state.c — changing a node state and putting it into canonical form. */
#include "core/state.h"

/* The profile of set s a share of req gets on a partitioned card. */
static const struct gp_part_profile *profile_of(const struct gp_dev_state *d,
						const struct gp_request *req)
{
	const struct gp_part_set *s = gp_part_set(d->part_set);
	int i = gp_part_profile_for(d->part_set, gp_request_mem_on(req, d->mem_total),
				    (uint16_t)req->dev_compute);

	return s && i >= 0 ? &s->profile[i] : NULL;
}

int gp_dev_take_at(struct gp_dev_state *d, const struct gp_request *req, int start)
{
	const struct gp_part_profile *p;

	d->tasks++;
	if (req->whole) {
		d->flags |= GP_DEV_HELD;
		d->gang = req->devices;
		d->compute_free = 0;
		d->mem_free = 0;
		return -1;
	}
	if (!d->part_set || !(p = profile_of(d, req))) {
		d->compute_free -= (uint16_t)req->dev_compute;
		d->mem_free -= gp_request_mem_on(req, d->mem_total);
		return -1;
	}
	if (start < 0 || !gp_part_free_at(p, (unsigned)start, d->part_used))
		start = gp_part_start(d->part_set, (int)(p - gp_part_set(d->part_set)->profile),
				      d->part_used);
	if (start < 0)
		start = 0;      /* cannot happen after gp_dev_fits; keeps the counts whole */
	d->part_used |= gp_part_units(p, (unsigned)start);
	d->compute_free -= p->compute < d->compute_free ? p->compute : d->compute_free;
	d->mem_free -= p->mem_mib < d->mem_free ? p->mem_mib : d->mem_free;
	return start;
}

void gp_dev_take(struct gp_dev_state *d, const struct gp_request *req)
{
	gp_dev_take_at(d, req, -1);
}

/* The start of a partition of profile p on d: `start` when one is
 * there, else the last one there; -1 when none is. */
static int taken_start(const struct gp_dev_state *d, const struct gp_part_profile *p, int start)
{
	for (int s = start >= 0 ? start : GP_PART_UNITS_MAX - 1; s >= 0; s--) {
		uint8_t units = gp_part_units(p, (unsigned)s);

		if ((p->starts >> s & 1) && s + p->units <= GP_PART_UNITS_MAX &&
		    (d->part_used & units) == units)
			return s;
		if (start >= 0)
			break;
	}
	return -1;
}

bool gp_dev_give_back(struct gp_dev_state *d, const struct gp_request *req, int start)
{
	const struct gp_part_profile *p;

	if (d->tasks == 0)
		return false;
	if (req->whole) {
		if (!(d->flags & GP_DEV_HELD))
			return false;
		d->flags &= (uint8_t)~GP_DEV_HELD;
		d->gang = 0;
		d->compute_free = d->compute_cap;
		d->mem_free = d->mem_total;
	} else if (d->part_set && (p = profile_of(d, req))) {
		start = taken_start(d, p, start);
		if (start < 0)
			return false;
		d->part_used &= (uint8_t)~gp_part_units(p, (unsigned)start);
		d->compute_free = (uint16_t)(d->compute_free + p->compute > d->compute_cap
						     ? d->compute_cap : d->compute_free + p->compute);
		d->mem_free = d->mem_free + p->mem_mib > d->mem_total ? d->mem_total
								       : d->mem_free + p->mem_mib;
	} else {
		uint32_t mem = gp_request_mem_on(req, d->mem_total);

		if (d->compute_free + req->dev_compute > d->compute_cap ||
		    d->mem_free + mem > d->mem_total)
			return false;
		d->compute_free += (uint16_t)req->dev_compute;
		d->mem_free += mem;
	}
	d->tasks--;
	return true;
}

uint32_t gp_state_usable_after(const struct gp_node_state *s,
			       const struct gp_request *req, uint32_t mask)
{
	uint32_t sum = 0;

	for (int i = 0; i < s->devices; i++) {
		struct gp_dev_state d = s->dev[i];

		if (mask >> i & 1)
			gp_dev_take(&d, req);
		sum += gp_dev_usable(&d);
	}
	return sum;
}

void gp_state_apply(struct gp_node_state *s, const struct gp_request *req,
		    uint32_t mask)
{
	gp_state_apply_at(s, req, mask, NULL);
}

void gp_state_apply_at(struct gp_node_state *s, const struct gp_request *req, uint32_t mask,
		       int8_t starts[GP_NODE_DEVICES_MAX])
{
	s->cpu_free -= req->cpu_milli;
	s->mem_free -= req->mem_mib;
	for (int i = 0; i < s->devices; i++)
		if (mask >> i & 1) {
			int start = gp_dev_take_at(&s->dev[i], req, starts ? starts[i] : -1);

			if (starts)
				starts[i] = (int8_t)start;
		}
}

#define CMP(field)                                      \
	do {                                            \
		if (a->field != b->field)               \
			return a->field < b->field ? -1 : 1; \
	} while (0)

/* Canonical device order: what matters most for fit comes first. */
static int dev_cmp(const struct gp_dev_state *a, const struct gp_dev_state *b)
{
	CMP(model);
	CMP(compute_free);
	CMP(mem_free);
	CMP(tasks);
	CMP(flags);
	CMP(gang);
	CMP(compute_cap);
	CMP(mem_total);
	CMP(max_tasks);
	CMP(part_set);
	CMP(part_used);
	CMP(numa);
	CMP(nvlink);
	return 0;
}

void gp_state_sort(struct gp_node_state *s, uint8_t *perm)
{
	/* Insertion sort: at most 16 devices, usually nearly sorted. Equal
	 * devices are ordered by physical index, so "the first fitting device"
	 * means the same thing it would on the node itself. */
	for (int i = 1; i < s->devices; i++) {
		struct gp_dev_state d = s->dev[i];
		uint8_t p = perm ? perm[i] : 0;
		int j = i;

		for (; j > 0; j--) {
			int c = dev_cmp(&s->dev[j - 1], &d);

			if (c < 0 || (c == 0 && (!perm || perm[j - 1] < p)))
				break;
			s->dev[j] = s->dev[j - 1];
			if (perm)
				perm[j] = perm[j - 1];
		}
		s->dev[j] = d;
		if (perm)
			perm[j] = p;
	}
}

uint32_t gp_state_tightest_group(const struct gp_node_state *s, uint32_t fit, int devices,
				 uint8_t (*group_of)(const struct gp_dev_state *))
{
	uint32_t best = 0;
	int best_count = GP_NODE_DEVICES_MAX + 1;

	for (int i = 0; i < s->devices; i++) {
		uint8_t group = group_of(&s->dev[i]);
		uint32_t members = 0;
		int count;

		if (!group || !(fit >> i & 1))
			continue;
		for (int j = 0; j < s->devices; j++)
			if (group_of(&s->dev[j]) == group && (fit >> j & 1))
				members |= 1u << j;
		count = __builtin_popcount(members);
		if (count >= devices && count < best_count) {
			best = members;
			best_count = count;
		}
	}
	return best;
}
