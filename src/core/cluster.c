/* cluster.c — nodes, their equivalence classes, and the placement engine.
 *
 * Every node belongs to exactly one class: the set of nodes whose canonical
 * state (state.h) is identical. Classes are immutable — when a node changes
 * it moves to the class of its new state, created on demand — so a score
 * computed for a class stays true until the class is freed with its last
 * member. Classes live in a hash table (lookup by state) and in one bucket
 * list each, chosen by (idle devices, largest free share in tenths of a
 * device); a request visits only buckets that might fit it.
 *
 * Within a class, members sit in a min-heap by tie rank, so the class's
 * first member in tie order is at hand in O(1). */
#include "core/cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/rng.h"
#include "core/policy-impl.h"
#include "core/state.h"

#define SHARE_BUCKETS 11
#define BUCKETS ((GP_NODE_DEVICES_MAX + 1) * SHARE_BUCKETS)
#define SCORE_CACHE_MAX 512u
#define REQUESTS_MAX (1u << 14)

struct score_slot {
	uint32_t request;       /* interned request id; 0 = empty */
	uint32_t mask;
	int64_t score;
};

/* The fields a decision reads for every class come first, so that with
 * the start of the state (free CPU and memory) they share a cache line. */
struct node_class {
	struct node_class *next;                /* bucket list */
	struct score_slot *cache;
	uint64_t cache_generation;
	uint32_t cache_cap, cache_used;
	uint32_t members;
	uint16_t bucket;
	uint32_t *heap;                         /* member node indices */
	struct gp_node_state state;
	struct node_class *prev;
	uint64_t hash;
	struct node_class *hash_next;
	uint32_t heap_cap;
};

struct node {
	struct node_class *cls;
	uint64_t rank;                          /* tie order */
	uint32_t heap_pos;
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
	struct node_class *bucket[BUCKETS];
	struct request_slot *request;
	size_t request_cap, requests;
	char model[GP_MODELS_MAX][GP_NAME_MAX];
	char label[GP_LABELS_MAX][GP_NAME_MAX];
	int models, labels;
	struct gp_rng tie_rng;
	bool random_ties;
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

/* ---- class member heaps (by tie rank) -------------------------------- */

static bool ranks_before(const struct gp_cluster *c, uint32_t a, uint32_t b)
{
	const struct node *x = &c->node[a], *y = &c->node[b];

	return x->rank != y->rank ? x->rank < y->rank : a < b;
}

static void heap_set(struct gp_cluster *c, struct node_class *k, uint32_t pos,
		     uint32_t node)
{
	k->heap[pos] = node;
	c->node[node].heap_pos = pos;
}

static void heap_sift(struct gp_cluster *c, struct node_class *k, uint32_t pos)
{
	uint32_t node = k->heap[pos];

	while (pos > 0 && ranks_before(c, node, k->heap[(pos - 1) / 2])) {
		heap_set(c, k, pos, k->heap[(pos - 1) / 2]);
		pos = (pos - 1) / 2;
	}
	for (;;) {
		uint32_t child = 2 * pos + 1;

		if (child >= k->members)
			break;
		if (child + 1 < k->members &&
		    ranks_before(c, k->heap[child + 1], k->heap[child]))
			child++;
		if (!ranks_before(c, k->heap[child], node))
			break;
		heap_set(c, k, pos, k->heap[child]);
		pos = child;
	}
	heap_set(c, k, pos, node);
}

static int heap_add(struct gp_cluster *c, struct node_class *k, uint32_t node)
{
	if (k->members == k->heap_cap) {
		uint32_t cap = k->heap_cap ? 2 * k->heap_cap : 4;
		uint32_t *heap = realloc(k->heap, cap * sizeof(*heap));

		if (!heap)
			return -ENOMEM;
		k->heap = heap;
		k->heap_cap = cap;
	}
	heap_set(c, k, k->members++, node);
	heap_sift(c, k, k->members - 1);
	return 0;
}

/* Removes the member at heap position pos. */
static void heap_remove(struct gp_cluster *c, struct node_class *k,
			uint32_t pos)
{
	k->members--;
	if (pos == k->members)
		return;
	heap_set(c, k, pos, k->heap[k->members]);
	heap_sift(c, k, pos);
}

/* ---- classes -------------------------------------------------------- */

static uint16_t bucket_of(const struct gp_node_state *s)
{
	uint32_t idle = 0, share = 0;

	for (int i = 0; i < s->devices; i++) {
		if (gp_dev_is_idle(&s->dev[i]))
			idle++;
		else if (gp_dev_usable(&s->dev[i]) > share)
			share = gp_dev_usable(&s->dev[i]);
	}
	share = share * 10 / GP_COMPUTE_WHOLE;
	return (uint16_t)(idle * SHARE_BUCKETS +
			  (share < SHARE_BUCKETS ? share : SHARE_BUCKETS - 1));
}

/* Could a node in bucket b have a device for one share of req? */
static bool bucket_may_fit(unsigned b, const struct gp_request *req)
{
	unsigned idle = b / SHARE_BUCKETS, share = b % SHARE_BUCKETS;

	if (req->devices == 0)
		return true;
	if (req->whole)
		return idle >= req->devices;
	return idle > 0 || share >= req->dev_compute * 10 / GP_COMPUTE_WHOLE;
}

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
	k = aligned_alloc(64, (sizeof(*k) + 63) / 64 * 64);
	if (!k)
		return NULL;
	memset(k, 0, sizeof(*k));
	k->state = *s;
	k->hash = hash;
	k->hash_next = c->table[hash & (c->table_cap - 1)];
	c->table[hash & (c->table_cap - 1)] = k;
	k->bucket = bucket_of(s);
	k->next = c->bucket[k->bucket];
	if (k->next)
		k->next->prev = k;
	c->bucket[k->bucket] = k;
	c->classes++;
	return k;
}

static void class_drop(struct gp_cluster *c, struct node_class *k)
{
	struct node_class **link = &c->table[k->hash & (c->table_cap - 1)];

	while (*link != k)
		link = &(*link)->hash_next;
	*link = k->hash_next;
	if (k->prev)
		k->prev->next = k->next;
	else
		c->bucket[k->bucket] = k->next;
	if (k->next)
		k->next->prev = k->prev;
	c->classes--;
	free(k->heap);
	free(k->cache);
	free(k);
}

/* Moves node n into the class of state s (s already canonical). */
static int node_move(struct gp_cluster *c, uint32_t n,
		     const struct gp_node_state *s)
{
	struct node_class *old = c->node[n].cls, *k = class_get(c, s);
	uint32_t old_pos = c->node[n].heap_pos;     /* heap_add changes it */

	if (!k || heap_add(c, k, n) < 0) {
		if (k && k->members == 0)
			class_drop(c, k);
		return -ENOMEM;
	}
	if (old) {
		heap_remove(c, old, old_pos);
		if (old->members == 0)
			class_drop(c, old);
	}
	c->node[n].cls = k;
	return 0;
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
			free(k->heap);
			free(k->cache);
			free(k);
		}
	for (uint32_t i = 0; i < c->nodes; i++)
		free(c->node[i].uuid);
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

int gp_cluster_add_node(struct gp_cluster *c, const struct gp_node_spec *spec,
			uint32_t *ret_index)
{
	struct gp_node_state s;
	char (*uuid)[GP_NAME_MAX] = NULL;
	struct node *n;
	int err;

	if (!spec_valid(c, spec))
		return -EINVAL;
	err = node_uuids(spec, &uuid);
	if (err < 0)
		return err;
	if (c->nodes == c->node_cap) {
		uint32_t cap = c->node_cap ? 2 * c->node_cap : 64;
		struct node *grown = realloc(c->node, cap * sizeof(*grown));

		if (!grown) {
			free(uuid);
			return -ENOMEM;
		}
		c->node = grown;
		c->node_cap = cap;
	}
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

int gp_cluster_device_model(const struct gp_cluster *c, uint32_t node, int device)
{
	const struct node *n;

	if (node >= c->nodes || device < 0)
		return -ENOENT;
	n = &c->node[node];
	for (int i = 0; i < n->cls->state.devices; i++)
		if (n->perm[i] == device)
			return n->cls->state.dev[i].model;
	return -ENOENT;
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
	    req->dev_compute > GP_OVERCOMMIT_MAX_PERMILLE)
		return false;
	if (req->devices && !req->whole)
		return req->dev_compute > 0 || req->dev_mem_mib > 0;
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

/* Which host constraint of req a state misses, or GP_NOFIT_NONE. */
static enum gp_nofit host_misfit(const struct gp_node_state *s,
				 const struct gp_request *req)
{
	if (s->cpu_free < req->cpu_milli)
		return GP_NOFIT_CPU;
	if (s->mem_free < req->mem_mib)
		return GP_NOFIT_MEMORY;
	if ((req->labels_all | req->labels_none) && !gp_state_labels_fit(s, req))
		return GP_NOFIT_LABELS;
	return GP_NOFIT_NONE;
}

/* Device positions that can take a share of req, or -1 when too few. */
static int64_t device_fit(const struct gp_node_state *s,
			  const struct gp_request *req)
{
	uint32_t fit = gp_state_fit_mask(s, req);

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

/* The score of req on class k, or GP_SCORE_NOFIT after counting its
 * members under the constraint they miss. */
static int64_t class_visit(struct node_class *k, struct gp_policy *p,
			   const struct gp_request *req, uint32_t id,
			   unsigned *reasons, uint32_t *ret_mask)
{
	enum gp_nofit why = host_misfit(&k->state, req);
	int64_t score = GP_SCORE_NOFIT;

	if (why == GP_NOFIT_NONE) {
		score = class_score(k, p, req, id, ret_mask);
		if (score == GP_SCORE_NOFIT)
			why = GP_NOFIT_DEVICES;
	}
	if (why != GP_NOFIT_NONE)
		reasons[why] += k->members;
	return score;
}

/* Host and devices: the fit mask of class k for req, or -1 after counting
 * its members under the reason. */
static int64_t class_fit(const struct node_class *k, const struct gp_request *req,
			 unsigned *reasons)
{
	enum gp_nofit why = host_misfit(&k->state, req);
	int64_t fit;

	if (why != GP_NOFIT_NONE) {
		reasons[why] += k->members;
		return -1;
	}
	fit = device_fit(&k->state, req);
	if (fit < 0)
		reasons[GP_NOFIT_DEVICES] += k->members;
	return fit;
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

/* Records the choice of node n (a member of k) with devices `mask`. */
static void decide(struct gp_cluster *c, struct node_class *k, uint32_t n,
		   uint32_t mask, int64_t score, struct gp_decision *d)
{
	d->placed = true;
	d->score = score;
	d->where.node = n;
	d->where.devices = 0;
	for (int i = 0; i < k->state.devices; i++)
		if (mask >> i & 1)
			d->where.device[d->where.devices++] = c->node[n].perm[i];
}

/* Random policy: every feasible node equally likely. */
static void place_uniform(struct gp_cluster *c, struct gp_policy *p,
			  const struct gp_request *req, unsigned *reasons,
			  struct gp_decision *d)
{
	unsigned ignored[GP_NOFIT_EMPTY + 1] = { 0 };
	uint64_t feasible = 0, pick;

	for (unsigned b = 0; b < BUCKETS; b++)
		for (struct node_class *k = c->bucket[b]; k; k = k->next) {
			d->classes_seen++;
			if (bucket_may_fit(b, req) && class_fit(k, req, reasons) >= 0)
				feasible += k->members;
		}
	if (feasible == 0)
		return;
	pick = gp_rng_below(&p->rng, feasible);
	for (unsigned b = 0; b < BUCKETS; b++)
		for (struct node_class *k = c->bucket[b]; k; k = k->next) {
			int64_t fit;
			uint32_t mask;

			if (!bucket_may_fit(b, req) ||
			    (fit = class_fit(k, req, ignored)) < 0)
				continue;
			if (pick >= k->members) {
				pick -= k->members;
				continue;
			}
			gp_policy_pick(p, &k->state, req, (uint32_t)fit, &mask);
			decide(c, k, k->heap[pick], mask, 0, d);
			return;
		}
}

int gp_place(struct gp_cluster *c, struct gp_policy *p,
	     const struct gp_request *req, struct gp_decision *ret_decision)
{
	unsigned reasons[GP_NOFIT_EMPTY + 1] = { 0 };
	struct gp_decision d = { 0 };
	struct node_class *best = NULL;
	uint32_t best_mask = 0, id;

	if (!request_valid(req))
		return -EINVAL;
	if (p->ops->uniform) {
		place_uniform(c, p, req, reasons, &d);
		goto done;
	}
	id = request_id(c, req);
	for (unsigned b = 0; b < BUCKETS; b++) {
		if (!bucket_may_fit(b, req))
			continue;
		for (struct node_class *k = c->bucket[b]; k; k = k->next) {
			uint32_t mask;
			int64_t score = class_visit(k, p, req, id, reasons, &mask);

			d.classes_seen++;
			if (score == GP_SCORE_NOFIT)
				continue;
			if (!best || score > d.score ||
			    (score == d.score &&
			     ranks_before(c, k->heap[0], best->heap[0]))) {
				best = k;
				best_mask = mask;
				d.score = score;
			}
		}
	}
	if (best)
		decide(c, best, best->heap[0], best_mask, d.score, &d);
done:
	if (!d.placed)
		d.reason = main_reason(c, reasons);
	*ret_decision = d;
	return 0;
}

/* ---- commit and release --------------------------------------------- */

/* Device positions of a placement on node n, or -EINVAL when it names a
 * device twice, one the node lacks, or the wrong number of devices. */
static int placement_mask(const struct gp_cluster *c, const struct gp_request *req,
			  const struct gp_placement *where, uint32_t *ret_mask)
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
	}
	*ret_mask = mask;
	return 0;
}

/* The state of the node a placement names, and the device positions it
 * uses; -EINVAL for a malformed request or placement. */
static int change_begin(const struct gp_cluster *c, const struct gp_request *req,
			const struct gp_placement *where, struct gp_node_state *ret_state,
			uint32_t *ret_mask)
{
	int err;

	if (!request_valid(req))
		return -EINVAL;
	err = placement_mask(c, req, where, ret_mask);
	if (err < 0)
		return err;
	*ret_state = c->node[where->node].cls->state;
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
	uint32_t mask;
	int err = change_begin(c, req, where, &s, &mask);

	if (err < 0)
		return err;
	if (!gp_state_host_fits(&s, req) || (gp_state_fit_mask(&s, req) & mask) != mask)
		return -EBUSY;
	gp_state_apply(&s, req, mask);
	return change_end(c, where->node, &s);
}

/* Undoes gp_dev_take; false when the device does not hold such a share. */
static bool dev_give_back(struct gp_dev_state *d, const struct gp_request *req)
{
	if (d->tasks == 0)
		return false;
	if (req->whole) {
		if (!(d->flags & GP_DEV_HELD))
			return false;
		d->flags &= (uint8_t)~GP_DEV_HELD;
		d->gang = 0;
		d->compute_free = d->compute_cap;
		d->mem_free = d->mem_total;
	} else {
		if (d->compute_free + req->dev_compute > d->compute_cap ||
		    d->mem_free + req->dev_mem_mib > d->mem_total)
			return false;
		d->compute_free += (uint16_t)req->dev_compute;
		d->mem_free += req->dev_mem_mib;
	}
	d->tasks--;
	return true;
}

int gp_cluster_release(struct gp_cluster *c, const struct gp_request *req,
		       const struct gp_placement *where)
{
	struct gp_node_state s;
	uint32_t mask;
	int err = change_begin(c, req, where, &s, &mask);

	if (err < 0)
		return err;
	if ((uint64_t)s.cpu_free + req->cpu_milli > s.cpu_total ||
	    (uint64_t)s.mem_free + req->mem_mib > s.mem_total)
		return -EINVAL;
	s.cpu_free += req->cpu_milli;
	s.mem_free += req->mem_mib;
	for (int i = 0; i < s.devices; i++)
		if ((mask >> i & 1) && !dev_give_back(&s.dev[i], req))
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
