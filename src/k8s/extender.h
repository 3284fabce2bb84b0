/* extender.h — the kube-scheduler extender of `gpupool server
 * --kubernetes`: the cluster as the core sees it, kept from the Nodes and
 * Pods the API server lists and watches, and the extender verbs filter,
 * prioritize and bind (kube-scheduler's extender/v1 JSON, whose keys are
 * the Go field names: Pod, Nodes, NodeNames, FailedNodes, Host, Score,
 * PodName, PodNamespace, PodUID, Node, Error).
 *
 * The state: every schedulable Node with published devices is a node of a
 * gp_cluster (in name order, so that a cluster rebuilt from the same
 * Nodes is the same); every live pod with a placement annotation holds
 * its placement there. A Node that changes rebuilds the cluster at the
 * next verb; a pod that changes commits or releases its placement.
 *
 * Decisions are the core's, with the configured policy (default: gpupool's
 * own, against a target workload made of the pods seen, or of a trace):
 *  - filter answers one node for a pod that asks for devices: the node
 *    gp_place would choose (the bounded search `gpupool sim` measures)
 *    when kube-scheduler offered it, else the offered node where the pod
 *    fits (gp_place_on) within its namespace's quota that the policy
 *    scores best. Left one feasible node, kube-scheduler takes it without
 *    scoring nodes or calling prioritize. The pod's placement there is
 *    held for its bind (kube-scheduler binds while it schedules the next
 *    pod), and given back after 30 s without one, or when the pod is
 *    filtered again. A pod that fits nowhere gets every node in
 *    FailedNodes with the reason `kubectl describe pod` shows; a pod
 *    without units, every node where its CPU and memory fit;
 *  - prioritize, for configurations that still name it: 10 to the node
 *    filter held the pod on, the others 0; without a hold, 10 to the node
 *    gp_place would choose when it is offered, else every offered node
 *    scored, the best 10 and the others 0..9 (the node of 10 held);
 *  - bind commits the placement on the node kube-scheduler chose (the held
 *    one, or a new decision there) and creates the Binding, which carries
 *    the sealed placement annotations (the API server sets them on the pod
 *    as it binds it: one call); on failure it gives the placement back.
 * A pod that asks for compute and memory as units: the units per device
 * over the device's split (per model) make its compute; memory is the
 * gpu-memory annotation, or the same part of the device's memory. Where
 * the models it may use differ in split or memory, each such group is
 * its own request, and the best decision wins.
 *
 * Quotas per namespace: a namespace that is a tenant of the server (same
 * name) has that tenant's quotas, guaranteed + borrowable, overall and per
 * device model, counted over its placed pods (memory MiB and compute
 * percent summed over devices); a namespace that is not a tenant is not
 * limited. The extender reads them through a callback.
 *
 * Locking: the extender has one mutex; every function here takes it.
 * Bind leaves it while it talks to the API server.
 *
 * Ownership: the extender copies what it keeps; JSON given in is
 * borrowed, JSON returned is a new reference. */
#ifndef GP_K8S_EXTENDER_H
#define GP_K8S_EXTENDER_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "k8s/client.h"
#include "k8s/seal.h"
#include "k8s/objects.h"
#include "server/control-plane.h"
#include "core/sched.h"

struct gp_extender;

#define GP_EXTENDER_API_MAX 8

/* A namespace's quota: 0 and *ret filled when it has one, -ENOENT when it
 * is not limited. The model quotas in ret->model_quota stay valid until
 * the next call (the callee's storage). ret->model_quota[i].models is
 * ignored: the extender matches model quotas to devices by name (the
 * model's name contains the quota's). */
typedef int gp_extender_quota_fn(void *ctx, const char *ns, struct gp_sched_tenant *ret);

struct gp_extender_options {
	const char *policy;             /* a core policy name; NULL: "default" */
	const char *scheduler_name;     /* pods of this scheduler are ours; NULL: any */
	/* Target workload from an openb-format pod list instead of the pods
	 * seen (for replaying a trace); NULL: the pods seen. */
	const char *workload_trace;
	uint64_t tie_seed;              /* the cluster's tie order; 0: insertion order */
	gp_extender_quota_fn *quota;    /* NULL: no quotas */
	void *quota_ctx;
	/* Bind talks to the API server through these handles, each used by
	 * one bind at a time, so that `apis` binds run at once (kube-scheduler
	 * binds in parallel); NULL: bind commits in memory only (tests).
	 * Borrowed. */
	struct gp_kube *const *api;
	int apis;                       /* 1..GP_EXTENDER_API_MAX */
	/* Called around the verbs' calls to the API server (bind's, and the
	 * events filter sends; start true before, false after), without the
	 * extender's lock: a server that serves one request at a time lets
	 * others in meanwhile. NULL: none. */
	void (*io)(void *ctx, bool start);
	void *io_ctx;
	/* The placement key (seal.h): binds seal their placements, and a
	 * pod's placement counts only when its seal verifies. NULL: no seals
	 * (tests of the decisions alone). Borrowed. */
	const struct gp_seal_key *seal;
};

/* -ENOENT (unknown policy), -EINVAL (a workload trace that cannot be
 * read: the reason in err), -ENOMEM. */
int gp_extender_new(const struct gp_extender_options *o, struct gp_extender **ret, char *err,
		    size_t err_len);
struct gp_extender *gp_extender_free(struct gp_extender *e);

/* The informers' callbacks (client.h): ctx is the extender. */
extern const struct gp_kube_informer_ops gp_extender_node_ops;
extern const struct gp_kube_informer_ops gp_extender_pod_ops;

/* The verbs: body is the request's; *ret the response body, JSON text
 * (malloc'd: the caller frees it), written directly rather than through
 * jansson, as a reply names every node offered. A body that is not
 * ExtenderArgs is -EINVAL with the reason in *ret ({"Error": ...}). */
int gp_extender_filter(struct gp_extender *e, const char *body, size_t len, char **ret);
int gp_extender_prioritize(struct gp_extender *e, const char *body, size_t len, char **ret);
int gp_extender_bind(struct gp_extender *e, const char *body, size_t len, char **ret);

/* Asks kube-scheduler to try again, at once, the pods that wait on us:
 * an annotation (GP_KUBE_ANN_RETRY, names.h) patched on each, since a
 * pod's update moves it out of kube-scheduler's unschedulable queue,
 * where a pod the extender refused, or one that failed while it was not
 * there, waits up to 5 minutes. Which pods: with `all` (at start-up, once
 * the informers have listed), every pending pod of our scheduler that
 * asks for devices, is not bound, nor being deleted; else, once a placed
 * pod has ended or gone since, those the filter refused. Each pod at most
 * once in GP_EXTENDER_RETRY_GAP_S, at most GP_EXTENDER_RETRY_MAX a call
 * (the others at the next calls); the call ends early once *stop is true
 * (stop may be NULL). Returns how many were annotated; 0 without API
 * handles. */
#define GP_EXTENDER_RETRY_GAP_S 5
#define GP_EXTENDER_RETRY_MAX 64
int gp_extender_retry(struct gp_extender *e, bool all, const atomic_bool *stop);

/* The placement pod `uid` holds now, bound or held for its bind (for
 * tests and logs): 0, or -ENOENT when it holds none. */
int gp_extender_placement_of(struct gp_extender *e, const char *uid,
			     struct gp_kube_placement *ret);

/* The nodes with published devices, in name order, for GET /v1/nodes:
 * *ret (malloc'd; the caller frees it), how many, or -ENOMEM. */
int gp_extender_nodes(struct gp_extender *e, struct gp_api_node **ret);

/* Where each node with devices serves its figures (its program's
 * gpupool.io/metrics), for the server's reads (kube-tasks.h): *ret
 * (malloc'd; the caller frees it), how many in *ret_n. -ENOMEM. */
struct gp_extender_node_address {
	char node[GP_KUBE_NAME_MAX];
	char metrics[GP_KUBE_ADDRESS_MAX];
};
int gp_extender_node_addresses(struct gp_extender *e, struct gp_extender_node_address **ret,
			       size_t *ret_n);

/* A pod as a task of the server (kube-tasks.h): bound, with devices, its
 * placement sealed; each device's model and own memory, and where its
 * node's program serves /metrics. */
struct gp_extender_pod {
	struct gp_kube_pod p;
	char metrics[GP_KUBE_ADDRESS_MAX];
	char model[GP_NODE_DEVICES_MAX][GP_KUBE_NAME_MAX];
	uint64_t device_mib[GP_NODE_DEVICES_MAX];
};

/* Such a pod that ended: failed (phase Failed), deleted (its object
 * deleted or being deleted: by a user, an owner, an eviction), else
 * succeeded; reclaimed_for: evicted by reclaim for that pod
 * ("NAMESPACE/NAME"); when the extender saw it (unix ms). */
#define GP_EXTENDER_ENDED_MAX 1024
#define GP_EXTENDER_FOR_MAX 128
struct gp_extender_ended {
	char uid[GP_KUBE_UID_MAX];
	bool failed, deleted;
	char reclaimed_for[GP_EXTENDER_FOR_MAX];
	int64_t at_ms;
};

/* The pods placed and bound now, in *ret (malloc'd; the caller frees it;
 * how many in *ret_n), and those that ended since the last call, in
 * *ret_ended (likewise; up to GP_EXTENDER_ENDED_MAX, the oldest lost
 * beyond). -ENOMEM. */
int gp_extender_pods(struct gp_extender *e, struct gp_extender_pod **ret, size_t *ret_n,
		     struct gp_extender_ended **ret_ended, size_t *ret_n_ended);

/* Evicts pod ns/name (uid) through the Eviction API, with its own grace
 * period, and a Warning event of `reason` saying `text` on it (without
 * the extender's lock). 0, -ENOTCONN (no API handles: tests), or the API
 * server's error. */
int gp_extender_evict_pod(struct gp_extender *e, const char *ns, const char *name,
			  const char *uid, const char *reason, const char *text);

/* Sends a JSON merge patch of an object (path: "/api/v1/namespaces/NS/
 * pods/NAME", ...) with the extender's API handles (without its lock).
 * 0, -ENOTCONN (no API handles: tests), or the API server's error (its
 * message in err). */
int gp_extender_patch(struct gp_extender *e, const char *path, json_t *patch, char *err,
		      size_t err_len);

/* Numbers for /metrics and tests. */
struct gp_extender_stats {
	uint32_t nodes, devices;        /* known nodes with devices, and theirs */
	uint32_t pods_placed;           /* held: bound, or reserved for a bind */
	uint32_t pods_reserved;         /* held by filter for a bind to come */
	uint64_t filters, binds, bind_failures, rebuilds;
	uint64_t live_changes;          /* admitted and sealed anew */
	uint64_t gangs_placed;          /* pod groups placed, all members at once */
};
void gp_extender_stats(struct gp_extender *e, struct gp_extender_stats *ret);

#endif
