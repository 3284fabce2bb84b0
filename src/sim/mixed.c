/* mixed.c — the generated heterogeneous trace (mixed.h). */
#include "sim/mixed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/rng.h"
#include "core/models.h"
#include "core/partition.h"

/* The node kinds: model, share of the nodes (percent), and the family a
 * pod names to run on it. Eight cards, 128 cores and 1 TiB each. */
static const struct kind {
	const char *model;
	unsigned percent;
	const char *family;
} kinds[] = {
	{ "A100", 30, "A100|A100-MIG" }, { "A100-MIG", 10, "A100|A100-MIG" },
	{ "T4", 15, "T4" },               { "910B", 15, "910B|910B-VNPU" },
	{ "910B-VNPU", 5, "910B|910B-VNPU" }, { "MI300X", 10, "MI300X|K100" },
	{ "K100", 5, "MI300X|K100" },     { "MLU370", 5, "MLU370" },
	{ "MAX1550", 5, "MAX1550" },
};

#define KINDS (sizeof(kinds) / sizeof(kinds[0]))
#define CARDS 8

static const uint32_t share_milli[] = { 100, 125, 250, 300, 400, 500, 700 };
static const uint8_t gang[] = { 2, 4, 8 };

static int model_of(struct gp_trace *t, const char *name)
{
	for (int i = 0; i < t->models; i++)
		if (strcmp(t->model[i], name) == 0)
			return i;
	snprintf(t->model[t->models], GP_NAME_MAX, "%s", name);
	return t->models++;
}

/* The mask of a family's models ("A|B"). */
static uint64_t family_mask(struct gp_trace *t, const char *family)
{
	char buf[64];
	uint64_t mask = 0;
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", family);
	for (char *m = strtok_r(buf, "|", &save); m; m = strtok_r(NULL, "|", &save))
		mask |= 1ULL << model_of(t, m);
	return mask;
}

static const struct kind *kind_by_percent(struct gp_rng *rng)
{
	unsigned roll = (unsigned)gp_rng_below(rng, 100), sum = 0;

	for (size_t k = 0; k < KINDS; k++) {
		sum += kinds[k].percent;
		if (roll < sum)
			return &kinds[k];
	}
	return &kinds[0];
}

static void node_make(struct gp_trace *t, const struct kind *k, struct gp_node_spec *s)
{
	int model = model_of(t, k->model);

	*s = (struct gp_node_spec){ .cpu_milli = 128000, .mem_mib = 1048576, .devices = CARDS };
	for (int d = 0; d < CARDS; d++)
		s->device[d] = (struct gp_device_spec){
			.model = (uint8_t)model, .healthy = true, .overcommit = GP_COMPUTE_WHOLE,
			.vendor = (uint8_t)gp_model_vendor(k->model),
			.partitions = (uint8_t)gp_part_set_of_model(k->model),
		};
}

static void pod_make(struct gp_trace *t, struct gp_rng *rng, struct gp_request *r)
{
	unsigned roll = (unsigned)gp_rng_below(rng, 100);
	const struct kind *k = kind_by_percent(rng);

	*r = (struct gp_request){ .devices = 1 };
	if (roll < 55) {
		r->dev_compute = share_milli[gp_rng_below(rng, sizeof(share_milli) /
							      sizeof(share_milli[0]))];
		r->cpu_milli = (gp_rng_below(rng, 2) ? 8 : 4) * 1000u;
		r->mem_mib = r->cpu_milli / 1000 * 4096;
	} else {
		r->whole = true;
		if (roll >= 90)
			r->devices = gang[gp_rng_below(rng, sizeof(gang))];
		r->cpu_milli = r->devices * (gp_rng_below(rng, 2) ? 16 : 8) * 1000u;
		r->mem_mib = r->cpu_milli / 1000 * 4096;
	}
	if (gp_rng_below(rng, 100) >= 5)
		r->models = family_mask(t, k->family);
}

int gp_mixed_generate(const struct gp_mixed_options *o, struct gp_trace *t, char *err,
		      size_t err_len)
{
	struct gp_rng rng;

	memset(t, 0, sizeof(*t));
	if (o->nodes == 0 || o->pods == 0) {
		snprintf(err, err_len, "a mixed trace needs at least one node and one pod");
		return -EINVAL;
	}
	t->node = calloc(o->nodes, sizeof(*t->node));
	t->pod = calloc(o->pods, sizeof(*t->pod));
	if (!t->node || !t->pod) {
		gp_trace_release(t);
		snprintf(err, err_len, "out of memory for %zu nodes and %zu pods", o->nodes, o->pods);
		return -ENOMEM;
	}
	gp_rng_init(&rng, o->seed);
	for (size_t k = 0; k < KINDS; k++)         /* model ids in a fixed order */
		model_of(t, kinds[k].model);
	for (; t->nodes < o->nodes; t->nodes++) {
		node_make(t, kind_by_percent(&rng), &t->node[t->nodes]);
		t->gpus += CARDS;
	}
	for (; t->pods < o->pods; t->pods++)
		pod_make(t, &rng, &t->pod[t->pods]);
	return 0;
}

/* ---- writing ----------------------------------------------------------------- */

static void spec_text(const struct gp_trace *t, uint64_t models, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < t->models && used < len; i++)
		if (models >> i & 1)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
						 t->model[i]);
}

static FILE *open_in(const char *dir, const char *name, char *err, size_t err_len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
	return f;
}

static int close_checked(FILE *f, const char *dir, const char *name, char *err, size_t err_len)
{
	if (ferror(f) | fclose(f)) {
		snprintf(err, err_len, "cannot write %s/%s (disk full?)", dir, name);
		return -EIO;
	}
	return 0;
}

int gp_mixed_write(const struct gp_trace *t, const char *dir, char *err, size_t err_len)
{
	char spec[512];
	FILE *f;
	int r;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, err_len, "cannot make %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!(f = open_in(dir, "nodes.csv", err, err_len)))
		return -EIO;
	fprintf(f, "sn,cpu_milli,memory_mib,gpu,model\n");
	for (size_t i = 0; i < t->nodes; i++)
		fprintf(f, "mixed-node-%05zu,%u,%u,%u,%s\n", i, t->node[i].cpu_milli,
			t->node[i].mem_mib, t->node[i].devices, t->model[t->node[i].device[0].model]);
	if ((r = close_checked(f, dir, "nodes.csv", err, err_len)) < 0)
		return r;
	if (!(f = open_in(dir, "pods.csv", err, err_len)))
		return -EIO;
	fprintf(f, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
		   "creation_time,deletion_time,scheduled_time\n");
	for (size_t i = 0; i < t->pods; i++) {
		const struct gp_request *p = &t->pod[i];

		spec_text(t, p->models, spec, sizeof(spec));
		fprintf(f, "mixed-pod-%06zu,%u,%u,%u,%u,%s,LS,Running,%zu,%zu,%zu\n", i,
			p->cpu_milli, p->mem_mib, p->devices,
			p->whole ? GP_COMPUTE_WHOLE : p->dev_compute, spec, i, i + 1000000, i);
	}
	return close_checked(f, dir, "pods.csv", err, err_len);
}
