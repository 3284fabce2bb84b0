/* extender-impl.h — what the extender's two files share; internal to
 * src/k8s/extender*.c. extender.c keeps the state (the cluster rebuilt
 * from the Nodes, every pod's placement held in it, the informers'
 * callbacks, the holds filter makes for the binds to come) and the
 * decisions (what a pod asks of the core, quotas, one node or the whole
 * cluster); extender-verbs.c answers kube-scheduler (filter, prioritize,
 * bind) and writes its replies. Everything runs under e->lock but the
 * calls to the API server (a pool of handles under api_lock). */
#ifndef GP_K8S_EXTENDER_IMPL_H
#define GP_K8S_EXTENDER_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/strmap.h"
#include "core/cluster.h"
#include "core/policy.h"
#include "core/workload.h"
#include "k8s/extender.h"
#include "k8s/objects.h"
#include "sim/trace.h"

#define NO_NODE UINT32_MAX
#define REASON_MAX 256
#define WORKLOAD_COVERAGE 0.95
#define EVENT_COMPONENT "gpupool-extender"
/* Without a workload trace, the target is made again from the pods
 * placed every this many binds. */
#define RETARGET_BINDS 512
/* A placement chosen by filter is held for the bind that follows
 * (kube-scheduler binds while it schedules the next pod); one that no bind
 * claims in this long is given back. */
#define RESERVE_TTL_NS (30ULL * 1000000000ULL)

struct knode {
	struct gp_kube_node n;
	uint32_t index;                 /* in the cluster; NO_NODE: not there */
};

struct kpod {
	struct gp_kube_pod p;
	bool held;                      /* its placement is committed */
	struct gp_request req;          /* what it holds, when held */
	struct gp_placement where;
	uint64_t reserved_ns;           /* held by filter, not bound yet; 0: not */
	/* The last live change asked (extender-live.c), admitted or said
	 * refused: not asked again until the annotations ask another. */
	bool live_sent;
	struct gp_kube_placement live_asked;
	bool refused;                   /* the last filter found no node for it */
	char reclaimed_for[GP_EXTENDER_FOR_MAX]; /* evicted by reclaim for this pod; "": not */
	uint64_t retried_ns;            /* when it was last asked to be tried again */
	bool woken;                     /* held by its group's plan: to be tried again */
};

/* What the devices of one model offer a share (the first device seen). */
struct model_info {
	unsigned split;
	uint64_t memory_mib;
	unsigned partition_set;         /* of a card of the model in MIG mode; 0: none seen */
};

/* One request a pod makes: of the models that give a share the same
 * compute and memory (every model of a split, for a whole device). */
struct ask {
	struct gp_request req;
	unsigned compute_pct;
	uint64_t memory_mib;            /* per device; 0 for a whole one: the device's own */
	unsigned partition_set;         /* a model's cards in MIG mode (core/partition.h): the
					 * reasons name the profile; 0: none */
};

struct gp_extender {
	pthread_mutex_t lock;
	pthread_mutex_t api_lock;       /* the API handles: each used by one call at a time */
	pthread_cond_t api_free;
	char policy_name[64], scheduler[GP_KUBE_NAME_MAX];
	uint64_t tie_seed;
	gp_extender_quota_fn *quota;
	void *quota_ctx;
	struct gp_kube *const *api;     /* GP_EXTENDER_API_MAX at most */
	int apis;
	unsigned api_busy;              /* a bit per handle in use */
	struct gp_trace trace;          /* the workload trace's pods; none: 0 pods */
	struct gp_strmap nodes;         /* name -> struct knode */
	struct gp_strmap pods;          /* uid -> struct kpod */
	bool dirty;                     /* the nodes changed: rebuild */
	struct gp_cluster *cluster;
	struct gp_policy *policy;
	struct gp_workload *target;
	struct knode **node_at;         /* cluster index -> node */
	struct gp_node_spec *specs;     /* and its spec */
	uint32_t n_nodes;
	unsigned binds_since_target;
	struct model_info model[GP_MODELS_MAX];
	int models;
	unsigned reserved;              /* pods held by filter, not bound yet */
	/* Pods to ask kube-scheduler to try again (gp_extender_retry): a
	 * placed pod has ended or gone since; every pending one (start-up). */
	bool freed, retry_all;
	uint64_t reserve_scan_ns;       /* when they were last looked at */
	void (*io)(void *ctx, bool start);
	void *io_ctx;
	const struct gp_seal_key *seal; /* NULL: placements unsealed */
	struct gp_extender_stats stats;
	/* Bound pods that ended, for gp_extender_pods: a ring. */
	struct gp_extender_ended ended[GP_EXTENDER_ENDED_MAX];
	uint64_t ended_next, ended_read;
};

/* A namespace's use: overall, and per model quota of its tenant. */
struct use {
	bool limited;
	struct gp_sched_tenant t;
	struct gp_quota_use all;                /* against t.quota */
	struct gp_quota_use model[GP_MODELS_MAX]; /* against t.model_quota[i].quota */
};

struct choice {
	bool placed;
	struct gp_decision d;
	int ask;                        /* which of the asks */
};

#define NOT_PUBLISHED_TEXT \
	"no gpupool devices published on this node (is gpupool node running there?)"

/* fits_on's answers besides a miss (nofit * GP_MODELS_MAX + ask). */
#define FITS (-1)
#define NOT_PUBLISHED (-2)

/* A live change to send, made under the lock, sent without it. */
struct gp_extender_live {
	char ns[GP_KUBE_NAME_MAX], name[GP_KUBE_NAME_MAX], uid[GP_KUBE_UID_MAX];
	bool admitted;                  /* the placement to write; else why in an Event */
	struct gp_kube_placement placement;
	char why[REASON_MAX];
};

/* ---- extender-live.c ---------------------------------------------------- */

/* Does pod k ask for a live change? true with what to send in *ret (the
 * new placement held already, or why not). Under the lock. */
bool gp_extender_live_change(struct gp_extender *e, struct kpod *k, struct gp_extender_live *ret);
/* Writes the sealed placement, or the refusal's Event. Without the lock. */
void gp_extender_live_send(struct gp_extender *e, const struct gp_extender_live *l);

/* ---- extender-reclaim.c ------------------------------------------------- */

/* A pod reclaim evicts. */
struct gp_extender_victim {
	char ns[GP_KUBE_NAME_MAX], name[GP_KUBE_NAME_MAX], uid[GP_KUBE_UID_MAX];
};
#define GP_EXTENDER_VICTIMS_MAX 16

/* Pod `waiting` (ask a) fits on no node: the borrowed pods of other
 * namespaces to evict so that it does, in ret (up to max); how many (0:
 * it fits once the pods being evicted end), or -EAGAIN (reclaim cannot
 * make it fit), -ENOMEM. The cluster is made again at the next verb.
 * Under the lock. */
int gp_extender_reclaim(struct gp_extender *e, struct kpod *waiting, const struct ask *a,
			struct gp_extender_victim *ret, int max);
/* Evicts them (n > 0; the Eviction API), with an event on each and on the pod
 * that waits (ns/name/uid). Without the lock. */
void gp_extender_evict(struct gp_extender *e, const struct gp_extender_victim *v, int n,
		       const char *ns, const char *name, const char *uid);

/* ---- extender-gang.c ---------------------------------------------------- */

enum gp_gang {
	GANG_NONE,                      /* placed alone */
	GANG_HELD,                      /* its group placed: answer the node held for it */
	GANG_INCOMPLETE,                /* its group is not all there (why) */
	GANG_NO_ROOM,                   /* not all of its group fit now (why) */
};
/* What pod k's group decides for its filter; may place every member of
 * the group that waits (extender-gang.c says how). Under the lock. */
enum gp_gang gp_extender_gang(struct gp_extender *e, struct kpod *k, char *why, size_t len);
/* Gives back the holds of k's group that wait for their binds. */
void gp_extender_gang_let_go(struct gp_extender *e, struct kpod *k);

/* ---- extender-verbs.c --------------------------------------------------- */

/* Holds pod k's placement on node for its bind (false, with why, when it
 * cannot go there: the namespace's quota, say). */
bool gp_extender_reserve(struct gp_extender *e, struct kpod *k, const char *node, char *why,
			 size_t len);

/* An API handle for one call at a time (NULL: the extender has none),
 * given back with gp_extender_api_give. */
struct gp_kube *gp_extender_api_take(struct gp_extender *e, int *ret_slot);
void gp_extender_api_give(struct gp_extender *e, int slot);
/* The priority a pod asks for, held to its tenant's highest. */
unsigned gp_extender_priority_granted(const struct use *u, unsigned asked);

/* ---- extender.c ---------------------------------------------------------- */

/* The cluster made again when the Nodes changed (or never made). */
int gp_extender_ensure_built(struct gp_extender *e);
/* The target workload and its policy made again. */
int gp_extender_retarget(struct gp_extender *e);
/* Commits a pod's placement (false: it no longer fits there), gives it back. */
bool gp_extender_pod_hold(struct gp_extender *e, struct kpod *k);
void gp_extender_pod_let_go(struct gp_extender *e, struct kpod *k);
/* Holds filter makes: no longer one (bound or gone); given back; the
 * old ones given back, looked for once a second. */
void gp_extender_unreserve(struct gp_extender *e, struct kpod *k);
void gp_extender_reservation_cancel(struct gp_extender *e, struct kpod *k);
void gp_extender_reservations_expire(struct gp_extender *e);
/* Reads a pod: a placement without a valid seal (when the extender has a
 * key) is read as none, and the pod as not placed. */
int gp_extender_pod_read(const struct gp_extender *e, const json_t *obj, struct gp_kube_pod *ret,
			 char *err, size_t len);
/* The annotations that say placement pl of the pod of UID uid: the
 * placement, and its seal when the extender has a key. NULL: no memory. */
json_t *gp_extender_placement_annotations(const struct gp_extender *e, const char *uid,
					   const struct gp_kube_placement *pl);
/* A pod's requests, one per group of models (0 of them, with why). */
int gp_extender_pod_asks(const struct gp_extender *e, const struct gp_kube_pod *p, struct ask *ret,
			 char *why, size_t why_len);
/* Whether node k has a device of a model the asks may use; why not, if not. */
bool gp_extender_node_has_models(const struct gp_extender *e, const struct gp_kube_pod *p,
				 const struct ask *asks, int n, const struct knode *k, char *why,
				 size_t len);
/* A whole-device placement's memory per device: the placed devices' own. */
uint64_t gp_extender_whole_memory(const struct gp_extender *e, const struct gp_placement *w);
/* A namespace's use against its quotas; whether an ask at w keeps it within. */
void gp_extender_use_of(struct gp_extender *e, const char *ns, struct use *ret);
bool gp_extender_quota_allows(const struct gp_extender *e, const struct use *u,
			      const struct ask *a, const struct gp_placement *w, const char *ns,
			      char *why, size_t len);
/* Why an ask misses a node, for `kubectl describe pod`. */
void gp_extender_nofit_text(enum gp_nofit r, const struct ask *a, char *why, size_t len);
/* One node: fit only (FITS, NOT_PUBLISHED or a miss), or the best ask
 * scored; the whole cluster: the bounded search's best ask. */
int gp_extender_fits_on(struct gp_extender *e, const struct ask *asks, int n,
			const struct knode *k);
void gp_extender_decide_on(struct gp_extender *e, const struct ask *asks, int n,
			   const struct knode *k, struct choice *ret, char *why, size_t len);
void gp_extender_decide_any(struct gp_extender *e, const struct ask *asks, int n,
			    struct choice *ret);

#endif
