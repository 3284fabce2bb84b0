/* cluster.c — nodes, their states, and the placement engine.
 *
 * Every node's free capacity is a canonical state (state.h), shared by all
 * nodes whose states are identical (a class). Classes are immutable — when a
 * node changes it moves to the class of its new state, made on demand — so
 * a score computed for a class stays true until the class is freed with its
 * last member; scores are cached per class and request.
 *
 * Finding where a request goes never visits every node: the index (index.h)
 * sorts nodes into buckets by what requests need, each bucket's members in
 * the policy's order (policy-impl.h: binpack's fullest first, spread's
 * emptiest; most policies have none) and then in tie order. A decision
 * asks each bucket whose best values could take the request for its first
 * two members that can, scores those candidates with the policy, and
 * keeps the best, ties going to the first in tie order. The number of
 * buckets depends on node sizes (log scale), labels and models, not on how
 * many nodes there are, so a decision costs O(buckets · log nodes). The
 * price is that a policy sees two nodes per bucket, not every node:
 * docs/scheduling.md measures what that costs each policy in allocation. */
#include "core/cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/rng.h"
#include "core/index.h"
#include "core/policy-impl.h"
#include "core/state.h"

#define CPU_STEPS 4              /* index levels per doubling of free cores */
#define MEM_STEPS 1              /* ... of free GiB */
#define SCORE_CACHE_MAX 512u
#define REQUESTS_MAX (1u << 14)

struct score_slot {
	uint32_t request;       /* interned request id; 0 = empty */
	uint32_t mask;
	int64_t score;
};

/* A class is allocated with room for its state's devices only. */
struct node_class {
	struct score_slot *cache;
	uint64_t cache_generation;
	uint32_t cache_cap, cache_used;
	uint32_t members;
	uint64_t hash;
	struct node_class *hash_next;
	struct gp_node_state state;             /* last: devices as needed */
};

struct node {
	struct node_class *cls;
	uint64_t rank;                          /* tie order */
	uint8_t perm[GP_NODE_DEVICES_MAX];      /* position -> device index */
	char (*uuid)[GP_NAME_MAX];              /* per device; NULL if none */
};

struct request_slot {
	struct gp_request req;
	uint32_t id;
};

struct gp_cluster {
	struct node *node;
	uint32_t nodes, node_cap;
	struct node_class **table;
	size_t table_cap, classes;
	struct gp_index index;
	struct request_slot *request;
	size_t request_cap, requests;
	char model[GP_MODELS_MAX][GP_NAME_MAX];
	char label[GP_LABELS_MAX][GP_NAME_MAX];
	int models, labels;
	struct gp_rng tie_rng;
	bool random_ties;
	bool exhaustive;                        /* score every node that fits */
	gp_node_order_fn *order;                /* the index's, within buckets */
	bool order_stale;                       /* a reorder ran out of memory */
};

/* ---- names ---------------------------------------------------------- */

static int intern_name(char (*names)[GP_NAME_MAX], int *count, int max,
		       const char *name, bool create)
{
	for (int i = 0; i < *count; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	if (!create)
		return -ENOENT;
	if (*count >= max)
		return -ENOSPC;
	if (strlen(name) >= GP_NAME_MAX)
		return -ENAMETOOLONG;
	strcpy(names[*count], name);
	return (*count)++;
}

int gp_cluster_model_id(struct gp_cluster *c, const char *name, bool create)
{
	return intern_name(c->model, &c->models, GP_MODELS_MAX, name, create);
}

int gp_cluster_label_id(struct gp_cluster *c, const char *name, bool create)
{
	return intern_name(c->label, &c->labels, GP_LABELS_MAX, name, create);
}

const char *gp_cluster_model_name(const struct gp_cluster *c, int id)
{
	return id >= 0 && id < c->models ? c->model[id] : NULL;
}

/* Tie order: the node with the smaller rank, then the smaller number. */
static bool ranks_before(const struct gp_cluster *c, uint32_t a, uint32_t b)
{
	const struct node *x = &c->node[a], *y = &c->node[b];

	return x->rank != y->rank ? x->rank < y->rank : a < b;
}

/* ---- classes -------------------------------------------------------- */

static int table_grow(struct gp_cluster *c)
{
	size_t cap = c->table_cap ? 2 * c->table_cap : 1024;
	struct node_class **table = calloc(cap, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < c->table_cap; i++)
		for (struct node_class *k = c->table[i], *next; k; k = next) {
			next = k->hash_next;
			k->hash_next = table[k->hash & (cap - 1)];
			table[k->hash & (cap - 1)] = k;
		}
	free(c->table);
	c->table = table;
	c->table_cap = cap;
	return 0;
}

static struct node_class *class_find(struct gp_cluster *c,
				     const struct gp_node_state *s, uint64_t hash)
{
	size_t len = gp_state_key_len(s);

	for (struct node_class *k = c->table[hash & (c->table_cap - 1)]; k;
	     k = k->hash_next)
		if (k->hash == hash && memcmp(&k->state, s, len) == 0)
			return k;
	return NULL;
}

/* A class holds its state's devices only (8 of 16 on a node of 8). */
static size_t class_size(const struct gp_node_state *s)
{
	return offsetof(struct node_class, state) + gp_state_key_len(s);
}

/* A whole state from a class's (the unused device slots zero). */
static void state_of(const struct node_class *k, struct gp_node_state *ret)
{
	memset(ret, 0, sizeof(*ret));
	memcpy(ret, &k->state, gp_state_key_len(&k->state));
}

static struct node_class *class_get(struct gp_cluster *c,
				    const struct gp_node_state *s)
{
	uint64_t hash = gp_hash_bytes(s, gp_state_key_len(s));
	struct node_class *k;

	if (c->table_cap == 0 && table_grow(c) < 0)
		return NULL;
	k = class_find(c, s, hash);
	if (k)
		return k;
	if (c->classes >= c->table_cap && table_grow(c) < 0)
		return NULL;
	k = calloc(1, class_size(s));
	if (!k)
		return NULL;
	memcpy(&k->state, s, gp_state_key_len(s));
	k->hash = hash;
	k->hash_next = c->table[hash & (c->table_cap - 1)];
	c->table[hash & (c->table_cap - 1)] = k;
	c->classes++;
	return k;
}

static void class_drop(struct gp_cluster *c, struct node_class *k)
{
	struct node_class **link = &c->table[k->hash & (c->table_cap - 1)];

	while (*link != k)
		link = &(*link)->hash_next;
	*link = k->hash_next;
	c->classes--;
	free(k->cache);
	free(k);
}

/* The index's scales for free CPU and memory: floor(log2(1 + v)) in
 * `steps` steps per doubling (1, 2 or 4; within a doubling the steps are
 * linear). */
static uint8_t log_level(uint32_t v, unsigned steps)
{
	unsigned bits = steps == 4 ? 2 : steps == 2 ? 1 : 0;
	uint64_t x = (uint64_t)v + 1;
	unsigned l = 63 - (unsigned)__builtin_clzll(x);
	unsigned frac = (unsigned)((x << bits >> l) & (steps - 1));

	return (uint8_t)(l * steps + frac);
}

/* Can a device take one more share of some request (healthy, not held,
 * below its slice cap)? */
static bool dev_open(const struct gp_dev_state *d)
{
	return (d->flags & GP_DEV_HEALTHY) && !(d->flags & GP_DEV_HELD) &&
	       !(d->max_tasks && d->tasks >= d->max_tasks);
}

/* What the index knows of node n in state s. */
static void index_entry(const struct gp_cluster *c, uint32_t n,
			const struct gp_node_state *s, struct gp_index_entry *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->key.labels = s->labels;
	for (int i = 0; i < s->devices; i++) {
		const struct gp_dev_state *d = &s->dev[i];

		if (d->flags & GP_DEV_HEALTHY)
			ret->key.models |= 1ull << d->model;
		if (gp_dev_is_idle(d))
			ret->key.idle++;
		else if (gp_dev_usable(d) > ret->share)
			ret->share = (uint16_t)gp_dev_usable(d);
		if (dev_open(d) && d->mem_free > ret->dev_mem)
			ret->dev_mem = d->mem_free;
	}
	ret->key.share = (uint8_t)(ret->share * 10 / GP_COMPUTE_WHOLE);
	ret->key.cpu = log_level(s->cpu_free / 1000, CPU_STEPS);
	ret->key.mem = log_level(s->mem_free / 1024, MEM_STEPS);
	ret->order = c->order ? c->order(s) : 0;
	ret->rank = c->node[n].rank;
	ret->cpu_free = s->cpu_free;
	ret->mem_free = s->mem_free;
}

/* Moves node n into the class of state s (s already canonical) and to its
 * place in the index. */
static int node_move(struct gp_cluster *c, uint32_t n,
		     const struct gp_node_state *s)
{
	struct node_class *old = c->node[n].cls, *k = class_get(c, s);
	struct gp_index_entry e;

	index_entry(c, n, s, &e);
	if (!k || gp_index_put(&c->index, n, &e) < 0) {
		if (k && k->members == 0)
			class_drop(c, k);
		return -ENOMEM;
	}
	k->members++;
	if (old && --old->members == 0)
		class_drop(c, old);
	c->node[n].cls = k;
	return 0;
}

size_t gp_cluster_bytes(const struct gp_cluster *c)
{
	size_t bytes = sizeof(*c) + c->node_cap * sizeof(*c->node) +
		       c->table_cap * sizeof(*c->table) +
		       c->request_cap * sizeof(*c->request) + gp_index_bytes(&c->index);

	for (uint32_t i = 0; i < c->nodes; i++)
		if (c->node[i].uuid)
			bytes += (size_t)c->node[i].cls->state.devices * GP_NAME_MAX;
	for (size_t i = 0; i < c->table_cap; i++)
		for (const struct node_class *k = c->table[i]; k; k = k->hash_next)
			bytes += class_size(&k->state) + k->cache_cap * sizeof(*k->cache);
	return bytes;
}

void gp_cluster_set_exhaustive(struct gp_cluster *c, bool exhaustive)
{
	c->exhaustive = exhaustive;
}

uint32_t gp_cluster_bucket_count(const struct gp_cluster *c)
{
	return (uint32_t)c->index.buckets;
}

uint32_t gp_cluster_class_count(const struct gp_cluster *c)
{
	return (uint32_t)c->classes;
}

/* ---- life cycle and nodes ------------------------------------------- */

int gp_cluster_new(uint64_t tie_seed, struct gp_cluster **ret_cluster)
{
	struct gp_cluster *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->random_ties = tie_seed != 0;
	gp_rng_init(&c->tie_rng, tie_seed);
	*ret_cluster = c;
	return 0;
}

struct gp_cluster *gp_cluster_free(struct gp_cluster *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->table_cap; i++)
		for (struct node_class *k = c->table[i], *next; k; k = next) {
			next = k->hash_next;
			free(k->cache);
			free(k);
		}
	for (uint32_t i = 0; i < c->nodes; i++)
		free(c->node[i].uuid);
	gp_index_release(&c->index);
	free(c->table);
	free(c->request);
	free(c->node);
	free(c);
	return NULL;
}

static bool spec_valid(const struct gp_cluster *c, const struct gp_node_spec *spec)
{
	if (spec->devices > GP_NODE_DEVICES_MAX)
		return false;
	for (int i = 0; i < spec->devices; i++) {
		const struct gp_device_spec *d = &spec->device[i];

		if (d->model >= c->models || d->overcommit > GP_OVERCOMMIT_MAX_PERMILLE ||
		    (d->overcommit && d->overcommit < GP_COMPUTE_WHOLE))
			return false;
	}
	return true;
}

static void state_from_spec(const struct gp_node_spec *spec,
			    struct gp_node_state *s)
{
	memset(s, 0, sizeof(*s));
	s->cpu_total = s->cpu_free = spec->cpu_milli;
	s->mem_total = s->mem_free = spec->mem_mib;
	s->labels = spec->labels;
	s->zone = spec->zone;
	s->devices = spec->devices;
	for (int i = 0; i < spec->devices; i++) {
		const struct gp_device_spec *d = &spec->device[i];
		struct gp_dev_state *x = &s->dev[i];

		x->mem_total = x->mem_free = d->mem_mib;
		x->compute_cap = d->overcommit ? d->overcommit : GP_COMPUTE_WHOLE;
		x->compute_free = x->compute_cap;
		x->max_tasks = d->max_tasks;
		x->model = d->model;
		x->numa = d->numa;
		x->nvlink = d->nvlink;
		x->flags = d->healthy ? GP_DEV_HEALTHY : 0;
		x->part_set = gp_part_set(d->partitions) ? d->partitions : 0;
		x->part_used = x->part_set ? d->part_held : 0;
	}
}

/* Copies the devices' UUIDs when any is set; *ret stays NULL otherwise. */
static int node_uuids(const struct gp_node_spec *spec, char (**ret)[GP_NAME_MAX])
{
	bool any = false;

	for (int i = 0; i < spec->devices; i++)
		any |= spec->device[i].uuid[0] != '\0';
	if (!any)
		return 0;
	*ret = calloc(spec->devices, GP_NAME_MAX);
	if (!*ret)
		return -ENOMEM;
	for (int i = 0; i < spec->devices; i++)
		snprintf((*ret)[i], GP_NAME_MAX, "%s", spec->device[i].uuid);
	return 0;
}

/* Room for one more node, in the node array and the index. */
static int nodes_reserve(struct gp_cluster *c)
{
	if (c->nodes == c->node_cap) {
		uint32_t cap = c->node_cap ? 2 * c->node_cap : 64;
		struct node *grown = realloc(c->node, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		c->node = grown;
		c->node_cap = cap;
	}
	return gp_index_reserve(&c->index, c->nodes + 1);
}

int gp_cluster_add_node(struct gp_cluster *c, const struct gp_node_spec *spec,
			uint32_t *ret_index)
{
	struct gp_node_state s;
	char (*uuid)[GP_NAME_MAX] = NULL;
	struct node *n;
	int err;

	if (!spec_valid(c, spec))
		return -EINVAL;
	err = nodes_reserve(c);
	if (err == 0)
		err = node_uuids(spec, &uuid);
	if (err < 0)
		return err;
	n = &c->node[c->nodes];
	memset(n, 0, sizeof(*n));
	n->uuid = uuid;
	n->rank = c->random_ties ? gp_rng_next(&c->tie_rng) : c->nodes;
	for (int i = 0; i < GP_NODE_DEVICES_MAX; i++)
		n->perm[i] = (uint8_t)i;
	state_from_spec(spec, &s);
	gp_state_sort(&s, n->perm);
	err = node_move(c, c->nodes, &s);
	if (err < 0) {
		free(uuid);
		return err;
	}
	if (ret_index)
		*ret_index = c->nodes;
	c->nodes++;
	return 0;
}

uint32_t gp_cluster_node_count(const struct gp_cluster *c)
{
	return c->nodes;
}

const char *gp_cluster_device_uuid(const struct gp_cluster *c, uint32_t node,
				   int device)
{
	if (node >= c->nodes || device < 0 ||
	    device >= c->node[node].cls->state.devices)
		return NULL;
	return c->node[node].uuid ? c->node[node].uuid[device] : "";
}

/* Device `device` (a physical index) of node `node` in its state; NULL
 * when there is none. */
static const struct gp_dev_state *device_state(const struct gp_cluster *c, uint32_t node,
					       int device)
{
	const struct node *n;

	if (node >= c->nodes || device < 0)
		return NULL;
	n = &c->node[node];
	for (int i = 0; i < n->cls->state.devices; i++)
		if (n->perm[i] == device)
			return &n->cls->state.dev[i];
	return NULL;
}

int64_t gp_cluster_device_mem(const struct gp_cluster *c, uint32_t node, int device)
{
	const struct gp_dev_state *d = device_state(c, node, device);

	return d ? (int64_t)d->mem_total : -ENOENT;
}

int gp_cluster_device_model(const struct gp_cluster *c, uint32_t node, int device)
{
	const struct gp_dev_state *d = device_state(c, node, device);

	return d ? d->model : -ENOENT;
}

int gp_cluster_node_usage(const struct gp_cluster *c, uint32_t index,
			  struct gp_node_usage *ret_usage)
{
	const struct node *n;
	const struct gp_node_state *s;

	if (index >= c->nodes)
		return -ENOENT;
	n = &c->node[index];
	s = &n->cls->state;
	memset(ret_usage, 0, sizeof(*ret_usage));
	ret_usage->cpu_free = s->cpu_free;
	ret_usage->mem_free = s->mem_free;
	ret_usage->devices = s->devices;
	for (int i = 0; i < s->devices; i++) {
		ret_usage->compute_free[n->perm[i]] = gp_dev_usable(&s->dev[i]);
		ret_usage->dev_mem_free[n->perm[i]] = s->dev[i].mem_free;
		ret_usage->tasks[n->perm[i]] = s->dev[i].tasks;
	}
	return 0;
}

/* ---- requests and the score cache ----------------------------------- */

/* Well formed: at most 16 devices, no more compute than a device can have,
 * and a share asks for some compute or some memory. */
static bool request_valid(const struct gp_request *req)
{
	if (req->devices > GP_NODE_DEVICES_MAX ||
	    req->dev_compute > GP_OVERCOMMIT_MAX_PERMILLE || req->dev_mem_pct > 100)
		return false;
	if (req->devices && !req->whole)
		return req->dev_compute > 0 || req->dev_mem_mib > 0 || req->dev_mem_pct > 0;
	return true;
}
static int request_table_grow(struct gp_cluster *c)
{
	size_t cap = c->request_cap ? 2 * c->request_cap : 256;
	struct request_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < c->request_cap; i++) {
		if (!c->request[i].id)
			continue;
		size_t slot = gp_hash_bytes(&c->request[i].req, sizeof(t->req)) & (cap - 1);

		while (t[slot].id)
			slot = (slot + 1) & (cap - 1);
		t[slot] = c->request[i];
	}
	free(c->request);
	c->request = t;
	c->request_cap = cap;
	return 0;
}

/* A stable small id per distinct request, so scores can be cached; 0 when
 * the request is new and the table is full (it is then scored uncached). */
static uint32_t request_id(struct gp_cluster *c, const struct gp_request *req)
{
	struct gp_request key;
	size_t slot;

	memset(&key, 0, sizeof(key));           /* padding must hash alike */
	key.cpu_milli = req->cpu_milli;
	key.mem_mib = req->mem_mib;
	key.devices = req->devices;
	key.whole = req->whole;
	key.dev_mem_mib = req->dev_mem_mib;
	key.dev_mem_pct = req->dev_mem_pct;
	key.mixed_models = req->mixed_models;
	key.dev_compute = req->dev_compute;
	key.models = req->models;
	key.labels_all = req->labels_all;
	key.labels_none = req->labels_none;
	if (c->request_cap == 0 && request_table_grow(c) < 0)
		return 0;
	slot = gp_hash_bytes(&key, sizeof(key)) & (c->request_cap - 1);
	while (c->request[slot].id) {
		if (memcmp(&c->request[slot].req, &key, sizeof(key)) == 0)
			return c->request[slot].id;
		slot = (slot + 1) & (c->request_cap - 1);
	}
	if (c->requests * 2 >= c->request_cap) {
		if (c->request_cap >= REQUESTS_MAX || request_table_grow(c) < 0)
			return 0;
		return request_id(c, req);      /* find the new empty slot */
	}
	c->request[slot].req = key;
	c->request[slot].id = (uint32_t)++c->requests;
	return c->request[slot].id;
}

static struct score_slot *cache_slot(struct node_class *k, uint32_t id)
{
	uint32_t slot = (uint32_t)gp_hash_mix(id) & (k->cache_cap - 1);

	while (k->cache[slot].request && k->cache[slot].request != id)
		slot = (slot + 1) & (k->cache_cap - 1);
	return &k->cache[slot];
}

static void cache_grow(struct node_class *k)
{
	uint32_t cap = k->cache_cap ? 2 * k->cache_cap : 8;
	struct score_slot *old = k->cache, *fresh = calloc(cap, sizeof(*fresh));
	uint32_t old_cap = k->cache_cap;

	if (!fresh)
		return;                 /* keep the old table; it still works */
	k->cache = fresh;
	k->cache_cap = cap;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].request)
			*cache_slot(k, old[i].request) = old[i];
	free(old);
}

/* Remembers a score, or does nothing when there is no room. */
static void cache_put(struct node_class *k, uint32_t id, int64_t score,
		      uint32_t mask)
{
	struct score_slot *slot;

	if (k->cache_used * 4 >= k->cache_cap * 3) {
		if (k->cache_cap >= SCORE_CACHE_MAX) {
			memset(k->cache, 0, k->cache_cap * sizeof(*k->cache));
			k->cache_used = 0;
		} else {
			cache_grow(k);
		}
		if (k->cache_used * 4 >= k->cache_cap * 3)
			return;
	}
	slot = cache_slot(k, id);
	*slot = (struct score_slot){ id, mask, score };
	k->cache_used++;
}

/* A device's model as a group (model ids start at 0; group 0 is none). */
static uint8_t model_group(const struct gp_dev_state *d)
{
	return (uint8_t)(d->model + 1);
}

/* A gang's devices are of one model (a job's workers run in lock step:
 * the slowest card sets the pace, and their memory must agree), unless
 * it says they may mix: of the models with enough fitting devices, the
 * one with the fewest, leaving the larger groups whole; 0 when none has
 * enough. */
static uint32_t one_model_fit(const struct gp_node_state *s, const struct gp_request *req,
			      uint32_t fit)
{
	if (req->devices < 2 || req->mixed_models)
		return fit;
	return gp_state_tightest_group(s, fit, req->devices, model_group);
}

/* Device positions that can take a share of req (a gang's of one model),
 * or -1 when too few. */
static int64_t device_fit(const struct gp_node_state *s,
			  const struct gp_request *req)
{
	uint32_t fit = one_model_fit(s, req, gp_state_fit_mask(s, req));

	return __builtin_popcount(fit) >= req->devices ? (int64_t)fit : -1;
}

/* The score of req on class k, GP_SCORE_NOFIT when its devices cannot take
 * req; from the class's cache when it was asked before (a class never
 * changes, so neither does the answer). The host must already fit. */
static int64_t class_score(struct node_class *k, struct gp_policy *p,
			   const struct gp_request *req, uint32_t id,
			   uint32_t *ret_mask)
{
	int64_t fit, score = GP_SCORE_NOFIT;

	if (k->cache_generation != p->generation) {
		if (k->cache)
			memset(k->cache, 0, k->cache_cap * sizeof(*k->cache));
		k->cache_used = 0;
		k->cache_generation = p->generation;
	}
	if (id && k->cache_cap) {
		struct score_slot *slot = cache_slot(k, id);

		if (slot->request == id) {
			*ret_mask = slot->mask;
			return slot->score;
		}
	}
	*ret_mask = 0;
	fit = device_fit(&k->state, req);
	if (fit >= 0)
		score = p->ops->score(p, &k->state, req, (uint32_t)fit, ret_mask);
	if (id)
		cache_put(k, id, score, *ret_mask);
	return score;
}

/* ---- placement ------------------------------------------------------ */

#define UNIFORM_TRIES 32
#define CANDIDATES_PER_BUCKET 2  /* with 1 the default policy fell below
				  * FGD on share80; docs/scheduling.md */

/* One decision in progress. */
struct search {
	struct gp_cluster *c;
	const struct gp_request *req;
	struct gp_index_need need;      /* what req needs of a member */
	unsigned reasons[GP_NOFIT_EMPTY + 1];   /* members, by what they miss */
	uint64_t count;                 /* uniform: members that fit */
	struct gp_policy *policy;       /* scoring: the policy, the request's id, */
	uint32_t id, scored, taken;     /* candidates scored, of this bucket */
	uint32_t best, best_mask;       /* and the best so far */
	int64_t best_score;
};

static void search_begin(struct search *q, struct gp_cluster *c,
			 const struct gp_request *req)
{
	bool share = req->devices > 0 && !req->whole;

	memset(q, 0, sizeof(*q));
	q->c = c;
	q->req = req;
	q->need.cpu = req->cpu_milli;
	q->need.mem = req->mem_mib;
	/* A percent is known in MiB on each device only: no bucket is left
	 * out for its memory. */
	q->need.dev_mem = share && !req->dev_mem_pct ? req->dev_mem_mib : 0;
	q->need.share = share ? (uint16_t)req->dev_compute : 0;
}

/* Could some member of bucket b have the devices req asks for? */
static bool bucket_devices_may_fit(const struct gp_bucket *b,
				   const struct gp_request *req,
				   const struct gp_index_need *most,
				   const struct gp_index_need *need)
{
	if (req->devices == 0)
		return true;
	if (req->models && !(b->key.models & req->models))
		return false;
	if (req->whole)
		return b->key.idle >= req->devices;
	return most->dev_mem >= need->dev_mem &&
	       (b->key.idle > 0 || most->share >= need->share);
}

/* Could bucket b hold the request, judging by its key and its members'
 * best values? If not, its members count under the constraint they miss
 * (when `count`: only once nothing fit). *ret_need is what to ask of its
 * members. */
static bool bucket_may_fit(struct search *q, const struct gp_bucket *b,
			   bool count, struct gp_index_need *ret_need)
{
	const struct gp_request *req = q->req;
	const struct gp_index_need *most = &b->most;
	enum gp_nofit why = GP_NOFIT_NONE;

	*ret_need = q->need;
	if (b->key.idle > 0)
		ret_need->share = 0;            /* an idle device takes any share */
	if (most->cpu < req->cpu_milli)
		why = GP_NOFIT_CPU;
	else if (most->mem < req->mem_mib)
		why = GP_NOFIT_MEMORY;
	else if (!gp_labels_fit(b->key.labels, req))
		why = GP_NOFIT_LABELS;
	else if (!bucket_devices_may_fit(b, req, most, ret_need))
		why = GP_NOFIT_DEVICES;
	if (why != GP_NOFIT_NONE && count)
		q->reasons[why] += b->members;
	return why == GP_NOFIT_NONE;
}

/* Starts a walk over the buckets whose idle devices and largest share
 * could serve the request's devices. */
static void walk_begin(const struct search *q, struct gp_index_walk *w)
{
	const struct gp_request *req = q->req;

	if (req->devices == 0)
		gp_index_walk_begin(w, 0, 0);
	else if (req->whole)
		gp_index_walk_begin(w, req->devices, 0);
	else
		gp_index_walk_begin(w, 0, req->dev_compute * 10 / GP_COMPUTE_WHOLE);
}

/* Can node n take the request (host and devices)? */
static bool node_fits(void *ctx, uint32_t n)
{
	struct search *q = ctx;
	const struct gp_node_state *s = &q->c->node[n].cls->state;

	return gp_state_host_fits(s, q->req) && device_fit(s, q->req) >= 0;
}

/* After a search that found nothing: counts every bucket's members under
 * the constraint they miss (devices, when the bucket's best values would
 * do but no member does). */
static void count_reasons(struct search *q)
{
	struct gp_index_need need;
	struct gp_index_walk w;
	const struct gp_bucket *b;

	gp_index_walk_begin(&w, 0, 0);
	while ((b = gp_index_walk_next(&q->c->index, &w)))
		if (bucket_may_fit(q, b, true, &need))
			q->reasons[GP_NOFIT_DEVICES] += b->members;
}

static enum gp_nofit main_reason(const struct gp_cluster *c,
				 const unsigned *reasons)
{
	enum gp_nofit best = c->nodes ? GP_NOFIT_DEVICES : GP_NOFIT_EMPTY;

	for (int r = GP_NOFIT_CPU; r <= GP_NOFIT_DEVICES; r++)
		if (reasons[r] > reasons[best == GP_NOFIT_EMPTY ? 0 : best])
			best = (enum gp_nofit)r;
	return best;
}

/* Records the choice of node n with devices `mask` (positions). */
static void decide(struct gp_cluster *c, const struct gp_request *req, uint32_t n,
		   uint32_t mask, int64_t score, struct gp_decision *d)
{
	const struct gp_node_state *s = &c->node[n].cls->state;

	d->placed = true;
	d->score = score;
	d->where.node = n;
	d->where.devices = 0;
	for (int i = 0; i < s->devices; i++)
		if (mask >> i & 1) {
			struct gp_dev_state dev = s->dev[i];
			int start = gp_dev_take_at(&dev, req, -1);

			d->where.part_start[d->where.devices] = (uint8_t)(start + 1);
			d->where.device[d->where.devices++] = c->node[n].perm[i];
		}
}

/* Scores candidate n; keeps it when it beats the best so far (a higher
 * score, or the same score and first in tie order). */
static void consider(struct search *q, uint32_t n)
{
	struct gp_cluster *c = q->c;
	uint32_t mask;
	int64_t score = class_score(c->node[n].cls, q->policy, q->req, q->id, &mask);

	q->scored++;
	if (score == GP_SCORE_NOFIT)
		return;
	if (q->best == GP_INDEX_NONE || score > q->best_score ||
	    (score == q->best_score && ranks_before(c, n, q->best))) {
		q->best = n;
		q->best_mask = mask;
		q->best_score = score;
	}
}

/* Scores the members of a bucket that fit, in the index's order, until
 * the bucket has offered its candidates (all of them when exhaustive). */
static bool consider_if_fits(void *ctx, uint32_t n)
{
	struct search *q = ctx;

	if (!node_fits(ctx, n))
		return false;
	consider(q, n);
	return !q->c->exhaustive && ++q->taken == CANDIDATES_PER_BUCKET;
}

/* Scoring policies: the first CANDIDATES_PER_BUCKET nodes that fit of
 * each bucket (every node that fits when the search is exhaustive); the
 * best score wins, ties go to the first in tie order. */
static void place_best(struct search *q, struct gp_policy *p,
		       struct gp_decision *d)
{
	struct gp_cluster *c = q->c;
	struct gp_index_need need;
	struct gp_index_walk w;
	const struct gp_bucket *b;

	q->policy = p;
	q->id = request_id(c, q->req);
	q->best = GP_INDEX_NONE;
	walk_begin(q, &w);
	while ((b = gp_index_walk_next(&c->index, &w))) {
		q->taken = 0;
		if (bucket_may_fit(q, b, false, &need))
			gp_bucket_scan(&c->index, b, &need, consider_if_fits, q);
	}
	d->candidates = q->scored;
	if (q->best != GP_INDEX_NONE)
		decide(c, q->req, q->best, q->best_mask, q->best_score, d);
}

static bool count_fit(void *ctx, uint32_t n)
{
	struct search *q = ctx;

	q->count += node_fits(ctx, n);
	return false;                   /* visit them all */
}

static bool nth_fit(void *ctx, uint32_t n)
{
	struct search *q = ctx;

	return node_fits(ctx, n) && q->count-- == 0;
}

/* The member at position i of the buckets that may fit, taken in walk
 * order. */
static uint32_t member_at(struct search *q, uint64_t i)
{
	struct gp_index_need need;
	struct gp_index_walk w;
	const struct gp_bucket *b;

	walk_begin(q, &w);
	while ((b = gp_index_walk_next(&q->c->index, &w))) {
		if (!bucket_may_fit(q, b, false, &need))
			continue;
		if (i < b->members)
			return gp_bucket_at(&q->c->index, b, (uint32_t)i);
		i -= b->members;
	}
	return GP_INDEX_NONE;
}

/* Counts the members that fit, then takes one of them at random. */
static uint32_t uniform_by_count(struct search *q, struct gp_policy *p)
{
	struct gp_index_need need;
	struct gp_index_walk w;
	const struct gp_bucket *b;
	uint32_t n = GP_INDEX_NONE;

	q->count = 0;
	walk_begin(q, &w);
	while ((b = gp_index_walk_next(&q->c->index, &w)))
		if (bucket_may_fit(q, b, false, &need))
			gp_bucket_scan(&q->c->index, b, &need, count_fit, q);
	if (q->count == 0)
		return GP_INDEX_NONE;
	q->count = gp_rng_below(&p->rng, q->count);
	walk_begin(q, &w);
	while (n == GP_INDEX_NONE && (b = gp_index_walk_next(&q->c->index, &w)))
		if (bucket_may_fit(q, b, false, &need))
			n = gp_bucket_scan(&q->c->index, b, &need, nth_fit, q);
	return n;
}

/* The random policy: every node that can take the request equally
 * likely. Draws from the members of the buckets that may fit until one
 * fits (the first that fits is uniform over those that fit); after
 * UNIFORM_TRIES misses, counts them all and draws among those. */
static void place_uniform(struct search *q, struct gp_policy *p,
			  struct gp_decision *d)
{
	struct gp_index_need need;
	struct gp_index_walk w;
	const struct gp_bucket *b;
	uint64_t members = 0;
	uint32_t n = GP_INDEX_NONE, mask;

	walk_begin(q, &w);
	while ((b = gp_index_walk_next(&q->c->index, &w)))
		if (bucket_may_fit(q, b, false, &need))
			members += b->members;
	for (int t = 0; members && t < UNIFORM_TRIES && n == GP_INDEX_NONE; t++) {
		n = member_at(q, gp_rng_below(&p->rng, members));
		d->candidates++;
		if (n != GP_INDEX_NONE && !node_fits(q, n))
			n = GP_INDEX_NONE;
	}
	if (n == GP_INDEX_NONE && members)
		n = uniform_by_count(q, p);
	if (n == GP_INDEX_NONE)
		return;
	const struct gp_node_state *s = &q->c->node[n].cls->state;
	gp_policy_pick(p, s, q->req, (uint32_t)device_fit(s, q->req), &mask);
	decide(q->c, q->req, n, mask, 0, d);
}

/* Orders every bucket's members by the policy's key: once, when a cluster
 * first meets a policy with another order than the last one's (again at
 * the next decision when it ran out of memory half-way). */
static int reorder(struct gp_cluster *c, gp_node_order_fn *order)
{
	struct gp_index_entry e;
	int err = 0;

	c->order = order;
	for (uint32_t n = 0; n < c->nodes && err == 0; n++) {
		index_entry(c, n, &c->node[n].cls->state, &e);
		err = gp_index_put(&c->index, n, &e);
	}
	c->order_stale = err < 0;
	return err;
}

int gp_place(struct gp_cluster *c, struct gp_policy *p,
	     const struct gp_request *req, struct gp_decision *ret_decision)
{
	struct gp_decision d = { 0 };
	struct search q;
	int err;

	if (!request_valid(req))
		return -EINVAL;
	if ((p->ops->order != c->order || c->order_stale) &&
	    (err = reorder(c, p->ops->order)) < 0)
		return err;
	search_begin(&q, c, req);
	if (p->ops->uniform)
		place_uniform(&q, p, &d);
	else
		place_best(&q, p, &d);
	if (!d.placed) {
		count_reasons(&q);
		d.reason = main_reason(c, q.reasons);
	}
	*ret_decision = d;
	return 0;
}

/* What node state s misses of req, GP_NOFIT_NONE when it fits. */
static enum gp_nofit node_misses(const struct gp_node_state *s, const struct gp_request *req)
{
	if (s->cpu_free < req->cpu_milli)
		return GP_NOFIT_CPU;
	if (s->mem_free < req->mem_mib)
		return GP_NOFIT_MEMORY;
	if (!gp_state_labels_fit(s, req))
		return GP_NOFIT_LABELS;
	return device_fit(s, req) < 0 ? GP_NOFIT_DEVICES : GP_NOFIT_NONE;
}

int gp_fits_on(const struct gp_cluster *c, const struct gp_request *req, uint32_t n,
	       enum gp_nofit *ret_reason)
{
	if (!request_valid(req) || n >= c->nodes)
		return -EINVAL;
	*ret_reason = node_misses(&c->node[n].cls->state, req);
	return 0;
}

int gp_place_on(struct gp_cluster *c, struct gp_policy *p, const struct gp_request *req,
		uint32_t n, struct gp_decision *ret_decision)
{
	struct gp_decision d = { .candidates = 1 };
	const struct gp_node_state *s;
	uint32_t mask = 0;
	int64_t score = 0;

	if (!request_valid(req) || n >= c->nodes)
		return -EINVAL;
	s = &c->node[n].cls->state;
	d.reason = node_misses(s, req);
	if (d.reason == GP_NOFIT_NONE && p->ops->uniform)
		gp_policy_pick(p, s, req, (uint32_t)device_fit(s, req), &mask);
	else if (d.reason == GP_NOFIT_NONE)
		score = class_score(c->node[n].cls, p, req, request_id(c, req), &mask);
	if (score == GP_SCORE_NOFIT)
		d.reason = GP_NOFIT_DEVICES;
	else if (d.reason == GP_NOFIT_NONE)
		decide(c, req, n, mask, score, &d);
	*ret_decision = d;
	return 0;
}

/* ---- commit and release --------------------------------------------- */

/* Device positions of a placement on node n, or -EINVAL when it names a
 * device twice, one the node lacks, or the wrong number of devices. */
static int placement_mask(const struct gp_cluster *c, const struct gp_request *req,
			  const struct gp_placement *where, uint32_t *ret_mask,
			  int8_t starts[GP_NODE_DEVICES_MAX])
{
	const struct node *n;
	uint32_t mask = 0;

	if (where->node >= c->nodes || where->devices != req->devices)
		return -EINVAL;
	n = &c->node[where->node];
	for (int i = 0; i < where->devices; i++) {
		int pos = -1;

		for (int j = 0; j < n->cls->state.devices; j++)
			if (n->perm[j] == where->device[i])
				pos = j;
		if (pos < 0 || (mask >> pos & 1))
			return -EINVAL;
		mask |= 1u << pos;
		starts[pos] = (int8_t)((int)where->part_start[i] - 1);
	}
	*ret_mask = mask;
	return 0;
}

/* The state of the node a placement names, and the device positions it
 * uses; -EINVAL for a malformed request or placement. */
static int change_begin(const struct gp_cluster *c, const struct gp_request *req,
			const struct gp_placement *where, struct gp_node_state *ret_state,
			uint32_t *ret_mask, int8_t starts[GP_NODE_DEVICES_MAX])
{
	int err;

	if (!request_valid(req))
		return -EINVAL;
	memset(starts, -1, GP_NODE_DEVICES_MAX);
	err = placement_mask(c, req, where, ret_mask, starts);
	if (err < 0)
		return err;
	state_of(c->node[where->node].cls, ret_state);
	return 0;
}

/* Gives node n the changed state s (positions as in its current state). */
static int change_end(struct gp_cluster *c, uint32_t n, struct gp_node_state *s)
{
	uint8_t perm[GP_NODE_DEVICES_MAX];
	int err;

	memcpy(perm, c->node[n].perm, sizeof(perm));
	gp_state_sort(s, perm);
	err = node_move(c, n, s);
	if (err == 0)
		memcpy(c->node[n].perm, perm, sizeof(perm));
	return err;
}

int gp_cluster_commit(struct gp_cluster *c, const struct gp_request *req,
		      const struct gp_placement *where)
{
	struct gp_node_state s;
	int8_t starts[GP_NODE_DEVICES_MAX];
	uint32_t mask;
	int err = change_begin(c, req, where, &s, &mask, starts);

	if (err < 0)
		return err;
	if (!gp_state_host_fits(&s, req) || (gp_state_fit_mask(&s, req) & mask) != mask)
		return -EBUSY;
	gp_state_apply_at(&s, req, mask, starts);
	return change_end(c, where->node, &s);
}

int gp_cluster_release(struct gp_cluster *c, const struct gp_request *req,
		       const struct gp_placement *where)
{
	struct gp_node_state s;
	int8_t starts[GP_NODE_DEVICES_MAX];
	uint32_t mask;
	int err = change_begin(c, req, where, &s, &mask, starts);

	if (err < 0)
		return err;
	if ((uint64_t)s.cpu_free + req->cpu_milli > s.cpu_total ||
	    (uint64_t)s.mem_free + req->mem_mib > s.mem_total)
		return -EINVAL;
	s.cpu_free += req->cpu_milli;
	s.mem_free += req->mem_mib;
	for (int i = 0; i < s.devices; i++)
		if ((mask >> i & 1) && !gp_dev_give_back(&s.dev[i], req, starts[i]))
			return -EINVAL;
	return change_end(c, where->node, &s);
}

const char *gp_nofit_name(enum gp_nofit reason)
{
	static const char *const names[] = {
		[GP_NOFIT_NONE] = "fits",
		[GP_NOFIT_CPU] = "not enough free CPU",
		[GP_NOFIT_MEMORY] = "not enough free host memory",
		[GP_NOFIT_LABELS] = "no node with the required labels",
		[GP_NOFIT_DEVICES] = "no node with enough free devices of an allowed model",
		[GP_NOFIT_EMPTY] = "the cluster has no nodes",
	};

	return reason <= GP_NOFIT_EMPTY ? names[reason] : "unknown";
}
