/* workload.c — counting request shapes into a target workload, and how
 * scarce the devices are that each shape could use. */
#include "core/workload.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

/* One distinct shape with its count, in an open-addressing table. */
struct tally {
	struct gp_shape shape;
	size_t count;
	double mem_sum;
	bool used;
};

static struct gp_shape shape_of(const struct gp_request *r)
{
	struct gp_shape s;

	memset(&s, 0, sizeof(s));
	s.cpu_milli = r->cpu_milli;
	s.devices = r->devices;
	s.share = r->devices ? (uint16_t)gp_request_share(r) : 0;
	s.models = r->devices ? r->models : 0;
	return s;
}

static bool shape_equal(const struct gp_shape *a, const struct gp_shape *b)
{
	return a->cpu_milli == b->cpu_milli && a->devices == b->devices &&
	       a->share == b->share && a->models == b->models;
}

static uint64_t shape_hash(const struct gp_shape *s)
{
	uint64_t key[3] = { s->cpu_milli, (uint64_t)s->devices << 16 | s->share,
			    s->models };

	return gp_hash_bytes(key, sizeof(key));
}

/* Most frequent first; equal counts in a fixed order so runs agree. */
static int by_count_desc(const void *pa, const void *pb)
{
	const struct tally *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->shape.devices != b->shape.devices)
		return a->shape.devices < b->shape.devices ? -1 : 1;
	if (a->shape.share != b->shape.share)
		return a->shape.share < b->shape.share ? -1 : 1;
	if (a->shape.cpu_milli != b->shape.cpu_milli)
		return a->shape.cpu_milli < b->shape.cpu_milli ? -1 : 1;
	if (a->shape.models != b->shape.models)
		return a->shape.models < b->shape.models ? -1 : 1;
	return 0;
}

/* Counts shapes into table[cap] (cap a power of two > n); returns how many
 * distinct shapes were found, compacted to the front of the table. */
static size_t count_shapes(const struct gp_request *req, size_t n,
			   struct tally *table, size_t cap)
{
	size_t distinct = 0;

	for (size_t i = 0; i < n; i++) {
		struct gp_shape s = shape_of(&req[i]);
		size_t slot = shape_hash(&s) & (cap - 1);

		while (table[slot].used && !shape_equal(&table[slot].shape, &s))
			slot = (slot + 1) & (cap - 1);
		if (!table[slot].used) {
			table[slot].used = true;
			table[slot].shape = s;
			distinct++;
		}
		table[slot].count++;
		table[slot].mem_sum += req[i].mem_mib;
	}
	size_t out = 0;
	for (size_t i = 0; i < cap; i++)
		if (table[i].used)
			table[out++] = table[i];
	return distinct;
}

int gp_workload_from_requests(const struct gp_request *req, size_t n,
			      double coverage, struct gp_workload **ret_workload)
{
	struct gp_workload *w = NULL;
	struct tally *table = NULL;
	size_t cap = 16, distinct, keep = 0, covered = 0;

	if (n == 0 || !(coverage > 0.0 && coverage <= 1.0))
		return -EINVAL;
	while (cap <= 2 * n)
		cap *= 2;
	table = calloc(cap, sizeof(*table));
	if (!table)
		goto fail_table;
	distinct = count_shapes(req, n, table, cap);
	qsort(table, distinct, sizeof(*table), by_count_desc);
	while (keep < distinct && (double)covered < coverage * (double)n)
		covered += table[keep++].count;

	w = calloc(1, sizeof(*w));
	if (!w)
		goto fail_workload;
	w->shape = calloc(keep, sizeof(*w->shape));
	if (!w->shape)
		goto fail_shapes;
	w->count = keep;
	for (size_t i = 0; i < keep; i++) {
		w->shape[i] = table[i].shape;
		w->shape[i].mem_mib = (uint32_t)(table[i].mem_sum / (double)table[i].count);
		w->shape[i].weight = (double)table[i].count / (double)covered;
		w->shape[i].scarcity = 1;
	}
	free(table);
	*ret_workload = w;
	return 0;

fail_shapes:
	free(w);
fail_workload:
	free(table);
fail_table:
	return -ENOMEM;
}

struct gp_workload *gp_workload_free(struct gp_workload *w)
{
	if (w) {
		free(w->shape);
		free(w);
	}
	return NULL;
}

/* Healthy devices of node n that could serve shape s: those of its allowed
 * models, when there are enough of them for one task and the host has the
 * CPU and memory for it; else 0. */
static uint32_t devices_serving(const struct gp_shape *s,
				const struct gp_node_spec *n)
{
	uint32_t usable = 0;

	if (n->cpu_milli < s->cpu_milli || n->mem_mib < s->mem_mib)
		return 0;
	for (int d = 0; d < n->devices; d++)
		if (n->device[d].healthy &&
		    (!s->models || s->models >> n->device[d].model & 1))
			usable++;
	return usable >= s->devices ? usable : 0;
}

void gp_workload_set_supply(struct gp_workload *w,
			    const struct gp_node_spec *nodes, size_t n)
{
	uint64_t all = 0;

	for (size_t j = 0; j < n; j++)
		for (int d = 0; d < nodes[j].devices; d++)
			all += nodes[j].device[d].healthy;
	for (size_t i = 0; i < w->count; i++) {
		struct gp_shape *s = &w->shape[i];
		uint64_t serving = 0;

		for (size_t j = 0; s->devices && j < n; j++)
			serving += devices_serving(s, &nodes[j]);
		s->scarcity = serving ? (double)all / (double)serving : 1;
	}
}
