/* fgd.c — fragmentation-aware placement: FGD and gpupool's default policy.
 *
 * Fragmentation Gradient Descent (Weng et al., USENIX ATC '23), written
 * from the paper's description. A node's fragmentation F is the device
 * capacity that the expected tasks could NOT use: for each target shape s
 * (workload.h), weighted by its frequency,
 *   - all free capacity, if s needs no device, or the node lacks CPU for s,
 *     or fewer than s.devices devices could take s;
 *   - otherwise the free capacity on devices that could not take s.
 * FGD places a task where F grows least, scoring
 *   int(100 · sigmoid((F_before − F_after) / 1000)),
 * and for a one-device share tries every device that fits.
 *
 * The default policy measures fragmentation with the host in mind. FGD
 * counts a device as usable by s whenever the node has CPU for ONE copy of
 * s; but a node with 4 idle GPUs and CPU for one more task really offers s
 * one GPU, and the other three sit idle (the stranded GPUs FGD leaves on
 * CPU-exhausted nodes). The host-aware measure counts as usable only the
 * devices that the node's free CPU and host memory can feed — copies =
 * min(cpu_free / s.cpu, mem_free / s.mem) tasks of s.devices devices each,
 * on the devices with most room (a shape's memory is the mean of its
 * requests). The host-aware measure also weighs each shape by its
 * scarcity (workload.h): a shape that only a few of the pool's devices can
 * serve weighs on those devices in proportion to its demand on them, not to
 * its frequency among all tasks, so a task that could go anywhere is kept
 * off the devices that constrained tasks need (FGD's weights protect a
 * model by its tasks' frequency alone, which loses when many tasks name a
 * model the pool has few of). The default takes
 * F = 3/4 · FGD's F + 1/4 · host-aware F: FGD's optimism about the mix of
 * tasks still to come, corrected for what the host can really feed and
 * what each model is really needed for. Scores, device choice and ties are
 * FGD's. The one constant (3/4) was chosen on the openb traces and checked
 * on families of variants derived from them (docs/scheduling.md has the
 * numbers).
 *
 * F depends on a node only through its free CPU and memory (for FGD: its
 * CPU level, how many of the shapes' CPU sizes fit) and the multiset of
 * (model, idle, usable compute) of its devices, so values are memoised on
 * that key: the engine asks for the same few thousand states again and
 * again. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "core/policy-impl.h"

/* The memo key: a canonical summary of what F depends on. */
struct frag_key {
	uint16_t cpu_level;     /* FGD only */
	uint8_t devices;
	uint8_t pad;
	uint32_t cpu_free;      /* host-aware only */
	uint32_t mem_free;      /* host-aware only */
	uint32_t dev[GP_NODE_DEVICES_MAX];      /* sorted ascending */
};

struct memo_slot {
	struct frag_key key;
	double frag;
	bool used;
};

struct fgd {
	size_t shapes;
	struct gp_request *shape;       /* the target shapes as requests */
	double *weight;                 /* frequency (FGD's weight) */
	double *fed_weight;             /* frequency × scarcity (host-aware) */
	uint16_t *cpu_rank;             /* index of shape's CPU in cpu_level */
	uint32_t *cpu_level;            /* distinct shape CPU sizes, ascending */
	size_t levels;                  /* entries in cpu_level */
	struct memo_slot *memo;
	size_t memo_cap, memo_used;
	bool host_aware;                /* the default policy's F */
};

#define SCORE_LEVELS 100
#define FGD_SHARE_OF_F 0.75             /* in the default policy's F */

#define MEMO_MIN (1u << 12)
#define MEMO_MAX (1u << 18)             /* 24 MiB of slots */

/* Device summary bits: model << 24 | idle << 23 | usable compute. */
#define KEY_IDLE (1u << 23)
#define KEY_USABLE(k) ((k) & 0x7fffffu)
#define KEY_MODEL(k) ((k) >> 24)

static uint32_t dev_key(const struct gp_dev_state *d)
{
	return (uint32_t)d->model << 24 | (gp_dev_is_idle(d) ? KEY_IDLE : 0) |
	       gp_dev_usable(d);
}

static uint16_t cpu_level_of(const struct fgd *f, uint32_t cpu_free)
{
	size_t lo = 0, hi = f->levels;

	while (lo < hi) {               /* count of levels <= cpu_free */
		size_t mid = (lo + hi) / 2;

		if (f->cpu_level[mid] <= cpu_free)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (uint16_t)lo;
}

static void key_sort(struct frag_key *k)
{
	for (int i = 1; i < k->devices; i++) {
		uint32_t v = k->dev[i];
		int j = i;

		for (; j > 0 && k->dev[j - 1] > v; j--)
			k->dev[j] = k->dev[j - 1];
		k->dev[j] = v;
	}
}

static bool shape_fits_dev(const struct gp_request *s, uint32_t key)
{
	if (s->models && !(s->models >> KEY_MODEL(key) & 1))
		return false;
	if (s->whole)
		return key & KEY_IDLE;
	return KEY_USABLE(key) >= s->dev_compute;
}

/* How many devices the node's free CPU and memory let shape s use. */
static int host_limit(const struct gp_request *s, const struct frag_key *k)
{
	uint32_t copies = UINT32_MAX;

	if (s->cpu_milli)
		copies = k->cpu_free / s->cpu_milli;
	if (s->mem_mib && k->mem_free / s->mem_mib < copies)
		copies = k->mem_free / s->mem_mib;
	return copies >= GP_NODE_DEVICES_MAX ? GP_NODE_DEVICES_MAX
					      : (int)(copies * s->devices);
}

/* Fragmentation of one node for one shape, FGD's and host-aware. */
static void shape_frag(const struct fgd *f, const struct gp_request *s,
		       const struct frag_key *k, double left,
		       double *ret_plain, double *ret_aware)
{
	int limit = f->host_aware ? host_limit(s, k) : 0, fits = 0;
	double usable = 0, usable_fed = 0;

	/* Keys sort by (model, idle, room): within a model, last is roomiest. */
	for (int d = k->devices - 1; d >= 0; d--)
		if (shape_fits_dev(s, k->dev[d])) {
			usable += KEY_USABLE(k->dev[d]);
			if (++fits <= limit)
				usable_fed += KEY_USABLE(k->dev[d]);
		}
	*ret_plain = fits >= s->devices ? left - usable : left;
	*ret_aware = fits >= s->devices ? left - usable_fed : left;
}

static double frag_compute(const struct fgd *f, const struct frag_key *k)
{
	double left = 0, frag = 0;
	uint64_t models = 0;    /* of the node's devices */

	for (int i = 0; i < k->devices; i++) {
		left += KEY_USABLE(k->dev[i]);
		models |= 1ULL << KEY_MODEL(k->dev[i]);
	}
	for (size_t i = 0; i < f->shapes; i++) {
		const struct gp_request *s = &f->shape[i];
		double plain = left, aware = left;

		/* A shape of other models finds no device here: all is left. */
		if (s->devices > 0 && (!s->models || (s->models & models)) &&
		    (f->host_aware ? k->cpu_free >= s->cpu_milli
				   : k->cpu_level > f->cpu_rank[i]))
			shape_frag(f, s, k, left, &plain, &aware);
		if (f->host_aware)
			frag += FGD_SHARE_OF_F * f->weight[i] * plain +
				(1 - FGD_SHARE_OF_F) * f->fed_weight[i] * aware;
		else
			frag += f->weight[i] * plain;
	}
	return frag;
}

static size_t key_len(const struct frag_key *k)
{
	return offsetof(struct frag_key, dev) + k->devices * sizeof(uint32_t);
}

static int memo_grow(struct fgd *f)
{
	size_t cap = f->memo_cap ? f->memo_cap * 2 : MEMO_MIN;
	struct memo_slot *old = f->memo, *table;
	size_t old_cap = f->memo_cap;

	if (cap > MEMO_MAX) {           /* full: forget everything, start over */
		memset(f->memo, 0, f->memo_cap * sizeof(*f->memo));
		f->memo_used = 0;
		return 0;
	}
	table = calloc(cap, sizeof(*table));
	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].used)
			continue;
		size_t slot = gp_hash_bytes(&old[i].key, key_len(&old[i].key)) & (cap - 1);

		while (table[slot].used)
			slot = (slot + 1) & (cap - 1);
		table[slot] = old[i];
	}
	free(old);
	f->memo = table;
	f->memo_cap = cap;
	return 0;
}

/* F for a key, from the memo or computed (and remembered when possible). */
static double frag_of(struct fgd *f, const struct frag_key *k)
{
	size_t len = key_len(k), slot;

	if (f->memo_used * 10 >= f->memo_cap * 7 && memo_grow(f) < 0)
		return frag_compute(f, k);
	slot = gp_hash_bytes(k, len) & (f->memo_cap - 1);
	while (f->memo[slot].used) {
		if (memcmp(&f->memo[slot].key, k, len) == 0)
			return f->memo[slot].frag;
		slot = (slot + 1) & (f->memo_cap - 1);
	}
	f->memo[slot].used = true;
	f->memo[slot].key = *k;
	f->memo[slot].frag = frag_compute(f, k);
	f->memo_used++;
	return f->memo[slot].frag;
}

static void key_of_state(const struct fgd *f, const struct gp_node_state *s,
			 const struct gp_request *taken, struct frag_key *ret_key)
{
	uint32_t cpu = s->cpu_free - (taken ? taken->cpu_milli : 0);

	memset(ret_key, 0, sizeof(*ret_key));
	if (f->host_aware) {
		ret_key->cpu_free = cpu;
		ret_key->mem_free = s->mem_free - (taken ? taken->mem_mib : 0);
	} else {
		ret_key->cpu_level = cpu_level_of(f, cpu);
	}
	ret_key->devices = s->devices;
	for (int i = 0; i < s->devices; i++)
		ret_key->dev[i] = dev_key(&s->dev[i]);
}

/* F after `req` takes the devices in `mask` (positions in the state). */
static double frag_after(struct fgd *f, const struct gp_node_state *s,
			 const struct gp_request *req, uint32_t mask)
{
	struct frag_key k;

	key_of_state(f, s, req, &k);
	for (int i = 0; i < s->devices; i++)
		if (mask >> i & 1) {
			struct gp_dev_state d = s->dev[i];

			gp_dev_take(&d, req);
			k.dev[i] = dev_key(&d);
		}
	key_sort(&k);
	return frag_of(f, &k);
}

static double frag_before(struct fgd *f, const struct gp_node_state *s)
{
	struct frag_key k;

	key_of_state(f, s, NULL, &k);
	key_sort(&k);
	return frag_of(f, &k);
}

double gp_fgd_fragmentation(struct gp_policy *p, const struct gp_node_state *s)
{
	return frag_before(p->priv, s);
}

/* int(100 · sigmoid(−growth / 1000)): higher is better. The rounding is
 * part of the policy: growths within a few tens of milli-devices tie, and
 * ties go to the first node in the cluster's fixed order, which packs. */
static int64_t quantised(double growth)
{
	return (int64_t)(SCORE_LEVELS / (1.0 + exp(growth / 1000.0)));
}

/* A one-device share tries every device that fits and keeps the first
 * with the best quantised score; other requests take the policy's devices
 * (whole devices: the first idle ones). */
static int64_t score_fgd(struct gp_policy *p, const struct gp_node_state *s,
			 const struct gp_request *req, uint32_t fit,
			 uint32_t *ret_mask)
{
	struct fgd *f = p->priv;
	double before = frag_before(f, s);
	int64_t best = GP_SCORE_NOFIT;

	if (req->devices != 1 || req->whole) {
		gp_policy_pick(p, s, req, fit, ret_mask);
		return quantised(frag_after(f, s, req, *ret_mask) - before);
	}
	for (int i = 0, last = -1; i < s->devices; i++) {
		if (!(fit >> i & 1))
			continue;
		/* F sees a device only through its key: an equal neighbour in
		 * the sorted state scores the same, and the first one is kept. */
		if (last >= 0 && dev_key(&s->dev[i]) == dev_key(&s->dev[last]))
			continue;
		last = i;
		int64_t score = quantised(frag_after(f, s, req, 1u << i) - before);

		if (score > best) {
			best = score;
			*ret_mask = 1u << i;
		}
	}
	return best;
}

/* ---- set-up --------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Without a target workload: equal parts whole devices and half devices. */
static int fallback_target(struct gp_policy *p)
{
	struct gp_request r[2] = {
		{ .devices = 1, .whole = true },
		{ .devices = 1, .dev_compute = GP_COMPUTE_WHOLE / 2 },
	};
	int err = gp_workload_from_requests(r, 2, 1.0, &p->own_target);

	p->target = p->own_target;
	return err;
}

static void fgd_release(struct gp_policy *p)
{
	struct fgd *f = p->priv;

	if (!f)
		return;
	free(f->shape);
	free(f->weight);
	free(f->fed_weight);
	free(f->cpu_rank);
	free(f->cpu_level);
	free(f->memo);
	free(f);
	p->priv = NULL;
}

static void shapes_to_requests(struct fgd *f, const struct gp_workload *w)
{
	for (size_t i = 0; i < w->count; i++) {
		const struct gp_shape *sh = &w->shape[i];

		f->shape[i] = (struct gp_request){
			.cpu_milli = sh->cpu_milli,
			.devices = sh->devices,
			.whole = sh->share >= GP_COMPUTE_WHOLE,
			.dev_compute = sh->share,
			.models = sh->models,
			.mem_mib = sh->mem_mib,
		};
		f->weight[i] = sh->weight;
		f->fed_weight[i] = sh->weight * sh->scarcity;
		f->cpu_level[i] = sh->cpu_milli;
	}
}

static int fgd_init(struct gp_policy *p)
{
	const struct gp_workload *w;
	struct fgd *f;
	size_t n;

	if (!p->target && fallback_target(p) < 0)
		return -ENOMEM;
	w = p->target;
	n = w->count;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	p->priv = f;
	f->shapes = n;
	f->shape = calloc(n, sizeof(*f->shape));
	f->weight = calloc(n, sizeof(*f->weight));
	f->fed_weight = calloc(n, sizeof(*f->fed_weight));
	f->cpu_rank = calloc(n, sizeof(*f->cpu_rank));
	f->cpu_level = calloc(n, sizeof(*f->cpu_level));
	if (!f->shape || !f->weight || !f->fed_weight || !f->cpu_rank || !f->cpu_level ||
	    memo_grow(f) < 0) {
		fgd_release(p);
		return -ENOMEM;
	}
	shapes_to_requests(f, w);
	f->host_aware = p->ops == &gp_default_ops;
	qsort(f->cpu_level, n, sizeof(*f->cpu_level), cmp_u32);
	for (size_t i = 0; i < n; i++)
		if (f->levels == 0 || f->cpu_level[f->levels - 1] != f->cpu_level[i])
			f->cpu_level[f->levels++] = f->cpu_level[i];
	/* Shape i fits a node whose level exceeds cpu_rank[i]. */
	for (size_t i = 0; i < n; i++)
		f->cpu_rank[i] = (uint16_t)(cpu_level_of(f, f->shape[i].cpu_milli) - 1);
	return 0;
}

const struct gp_policy_ops gp_fgd_ops = {
	"fgd", "least growth of expected fragmentation (FGD, ATC '23)",
	.target = true, .pick = gp_pick_first, .score = score_fgd,
	.init = fgd_init, .release = fgd_release,
};

const struct gp_policy_ops gp_default_ops = {
	"default", "gpupool's fragmentation-aware policy (see docs/scheduling.md)",
	.target = true, .pick = gp_pick_first, .score = score_fgd,
	.init = fgd_init, .release = fgd_release,
};
