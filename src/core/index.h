/* index.h — the placement index: which nodes could take a request, found
 * without visiting the others; internal to src/core/.
 *
 * Nodes sit in buckets keyed by what a request needs: the node's labels and
 * device models, its idle devices, the largest share a busy device can still
 * take (in tenths of a device), and its free CPU and host memory on log
 * scales (so the number of buckets grows with the logarithm of node sizes,
 * never with the number of nodes). Within a bucket, members are ordered by
 * (order key, rank, node number) — the policy's preference, then the
 * cluster's tie order — in a treap whose subtrees remember their largest
 * free CPU, memory, share and device memory, so the first members in order
 * that can take a request are found in O(log members) without looking at
 * the ones that cannot. A node changes bucket or place in O(log members).
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
	uint8_t cpu;            /* free cores, log scale (cluster.c's steps) */
	uint8_t mem;            /* free GiB, log scale */
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

/* Buckets live in one array, so that a decision reads them in a stream;
 * a bucket keeps its slot while it has members, and an emptied slot is
 * reused by the next new bucket. */
struct gp_bucket {
	struct gp_bucket_key key;
	struct gp_index_need most;      /* its members' largest free amounts */
	uint32_t root;                  /* treap of members */
	uint32_t members;               /* 0: a free slot */
	uint32_t chain;                 /* next slot + 1 with the same hash slot */
	uint32_t group_pos;             /* place in its group */
	uint64_t hash;
};

/* The buckets with one (idle devices, largest share) pair, so that a
 * request for devices walks only the groups that could serve it. */
#define GP_INDEX_IDLE_LEVELS 17         /* 0 .. 16 idle devices */
#define GP_INDEX_SHARE_LEVELS 16        /* tenths 0 .. 15 (overcommit 1.5) */
struct gp_bucket_group {
	uint32_t *slot;
	uint32_t count, cap;
};

struct gp_index_member;

struct gp_index {
	struct gp_index_member *member;     /* by node number */
	uint32_t member_cap;
	struct gp_bucket *bucket;           /* slots 0 .. slots-1 */
	uint32_t slots, slot_cap, buckets;  /* buckets: slots in use */
	uint32_t free_slot;                 /* a free slot + 1, or 0 */
	uint32_t *table;                    /* hash -> first slot + 1 */
	uint32_t table_cap;
	struct gp_bucket_group group[GP_INDEX_IDLE_LEVELS][GP_INDEX_SHARE_LEVELS];
	uint16_t nonempty[GP_INDEX_IDLE_LEVELS];   /* groups with buckets, by share */
};

void gp_index_release(struct gp_index *x);

/* Makes room for nodes 0 .. nodes-1; -ENOMEM. */
int gp_index_reserve(struct gp_index *x, uint32_t nodes);

/* Puts node n (reserved) where `e` says, moving it when it was in. */
int gp_index_put(struct gp_index *x, uint32_t n, const struct gp_index_entry *e);

/* A walk over the buckets that could serve a request's devices: those with
 * at least min_idle idle devices and, when they have none, a largest share
 * of at least min_share tenths of a device. (0, 0) walks them all. */
struct gp_index_walk {
	unsigned min_idle, min_share;
	unsigned idle, share;           /* the group being walked */
	uint32_t i;                     /* the position in it */
};

void gp_index_walk_begin(struct gp_index_walk *w, unsigned min_idle,
			 unsigned min_share);

/* The next bucket of the walk, or NULL at its end. Valid until the next
 * gp_index_put. */
const struct gp_bucket *gp_index_walk_next(const struct gp_index *x,
					   struct gp_index_walk *w);

/* Asks `accept` about each member that has what `need` asks, in order,
 * until it takes one; returns that member, or GP_INDEX_NONE. Subtrees
 * whose best values fall short are skipped: finding the first member that
 * will do costs O(log members) when most members have what is needed. */
typedef bool gp_index_accept_fn(void *ctx, uint32_t node);
uint32_t gp_bucket_scan(const struct gp_index *x, const struct gp_bucket *b,
			const struct gp_index_need *need,
			gp_index_accept_fn *accept, void *ctx);

/* The member at position i (0-based) in order; i < b->members. */
uint32_t gp_bucket_at(const struct gp_index *x, const struct gp_bucket *b,
		      uint32_t i);

/* Bytes the index holds. */
size_t gp_index_bytes(const struct gp_index *x);

#endif
