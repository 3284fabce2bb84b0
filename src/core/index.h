/* index.h — the placement index: which nodes could take a request, found
 * without visiting the others; internal to src/core/.
 *
 * Nodes sit in buckets keyed by what a request needs: the node's labels and
 * device models, its idle devices, the largest share a busy device can still
 * take (in tenths of a device), and its free CPU and host memory on a log2
 * scale (so the number of buckets grows with the logarithm of node sizes,
 * never with the number of nodes). Within a bucket, members are ordered by
 * (order key, rank, node number) — the policy's preference, then the
 * cluster's tie order — in a treap whose subtrees
 * remember their largest free CPU, memory, share and device memory, so the
 * first member in order that can take a request is found in O(log members)
 * without looking at the ones that cannot. A node changes bucket or place in
 * O(log members).
 *
 * The index knows nodes only by number and by the entry the cluster gives
 * for each (gp_index_put); it never reads node states. Ownership: the index
 * owns its buckets and member array; gp_index_release frees them. */
#ifndef GP_CORE_INDEX_H
#define GP_CORE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_INDEX_NONE UINT32_MAX

struct gp_bucket_key {
	uint64_t labels;
	uint64_t models;        /* models of the node's healthy devices */
	uint8_t idle;           /* idle healthy devices */
	uint8_t share;          /* largest usable share of a busy device, tenths */
	uint8_t cpu;            /* log2(1 + free cores) */
	uint8_t mem;            /* log2(1 + free GiB) */
	uint8_t pad[4];
};

/* What the index knows of one node. */
struct gp_index_entry {
	struct gp_bucket_key key;
	uint64_t order;         /* members sort by (order, rank, node number) */
	uint64_t rank;
	uint32_t cpu_free;      /* milli-cores */
	uint32_t mem_free;      /* MiB */
	uint32_t dev_mem;       /* most free memory of a device that can take a share */
	uint16_t share;         /* largest usable share of a busy device */
};

/* What a request needs, for pruning: a member is looked at only when it
 * has at least this much; `share` counts only when the bucket has no idle
 * device (an idle device takes any share). */
struct gp_index_need {
	uint32_t cpu, mem, dev_mem;
	uint16_t share;
};

struct gp_bucket {
	struct gp_bucket_key key;
	uint32_t root;          /* treap of members */
	uint32_t members;
	uint64_t hash;
	struct gp_bucket *hash_next;
	struct gp_bucket *next, *prev;  /* all buckets, none empty */
};

struct gp_index_member;

struct gp_index {
	struct gp_index_member *member;     /* by node number */
	uint32_t member_cap;
	struct gp_bucket **table;
	size_t table_cap, buckets;
	struct gp_bucket *first;            /* list of all buckets */
};

void gp_index_release(struct gp_index *x);

/* Makes room for nodes 0 .. nodes-1; -ENOMEM. */
int gp_index_reserve(struct gp_index *x, uint32_t nodes);

/* Puts node n (reserved) where `e` says, moving it when it was in. */
int gp_index_put(struct gp_index *x, uint32_t n, const struct gp_index_entry *e);

/* The largest free CPU, memory, device memory and share of a bucket's
 * members: a request needing more fits none of them. */
void gp_bucket_most(const struct gp_index *x, const struct gp_bucket *b,
		    struct gp_index_need *ret_most);

/* The first member in order that has what `need` asks and that `accept`
 * takes, or GP_INDEX_NONE. */
typedef bool gp_index_accept_fn(void *ctx, uint32_t node);
uint32_t gp_bucket_first(const struct gp_index *x, const struct gp_bucket *b,
			 const struct gp_index_need *need,
			 gp_index_accept_fn *accept, void *ctx);

/* The member at position i (0-based) in order; i < b->members. */
uint32_t gp_bucket_at(const struct gp_index *x, const struct gp_bucket *b,
		      uint32_t i);

/* Bytes the index holds. */
size_t gp_index_bytes(const struct gp_index *x);

#endif
