/* state.c — changing a node state and putting it into canonical form. */
#include "core/state.h"

void gp_dev_take(struct gp_dev_state *d, const struct gp_request *req)
{
	d->tasks++;
	if (req->whole) {
		d->flags |= GP_DEV_HELD;
		d->gang = req->devices;
		d->compute_free = 0;
		d->mem_free = 0;
		return;
	}
	d->compute_free -= (uint16_t)req->dev_compute;
	d->mem_free -= req->dev_mem_mib;
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
	s->cpu_free -= req->cpu_milli;
	s->mem_free -= req->mem_mib;
	for (int i = 0; i < s->devices; i++)
		if (mask >> i & 1)
			gp_dev_take(&s->dev[i], req);
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
