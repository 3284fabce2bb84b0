/* kube-server.h — what `gpupool server --kubernetes` runs besides the
 * server of one machine: the scheduler extender (extender.h) served over
 * HTTP on 127.0.0.1 to the kube-scheduler beside it, its view of the
 * cluster kept by two informers (Nodes, Pods) of the API server, and the
 * namespaces' quotas read from the server's tenants (a namespace is the
 * tenant of the same name).
 *
 * Pods placed are the server's tasks, metered from the node programs'
 * figures (kube-tasks.h).
 *
 * A thread asks kube-scheduler to try again the pods that wait on the
 * extender (gp_extender_retry): every pending one once the informers
 * have listed, then the refused ones whenever a placed pod ends or goes.
 *
 * Routes (kube-scheduler's KubeSchedulerConfiguration: urlPrefix
 * http://127.0.0.1:PORT/extender, filterVerb filter, bindVerb bind; and
 * prioritizeVerb prioritize for configurations that still name it): POST
 * /extender/filter, /extender/prioritize,
 * /extender/bind; GET /extender/healthz answers 200 once both informers
 * have listed (503 before, for the readiness probe).
 *
 * Ownership: the caller keeps the pool alive until gp_kube_server_stop. */
#ifndef GP_K8S_KUBE_SERVER_H
#define GP_K8S_KUBE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "server/control-plane.h"

#define GP_KUBE_EXTENDER_PORT 8787

struct gp_kube_server_options {
	const char *api_url, *token_file, *kubeconfig;  /* client.h */
	const char *socket_path;        /* the extender's Unix socket too (made here) */
	unsigned port;                  /* 127.0.0.1:port */
	const char *policy;             /* NULL: default */
	const char *scheduler_name;     /* NULL: any */
	const char *workload_trace;     /* NULL: the pods seen */
	uint64_t tie_seed;
	struct gp_pool *pool;           /* the tenants; NULL: no quotas */
	const char *placement_key;      /* seal.h; NULL: GP_SEAL_KEY_PATH_DEFAULT */
	/* Pods as the server's tasks, metered (kube-tasks.h): the server's
	 * store, the API front whose lock is the store's, and the sample
	 * period. NULL store: none (tests of the extender alone). */
	struct gp_store *store;
	struct gp_http *api_http;
	unsigned sample_ms;
};

struct gp_kube_server;

/* Listens, then starts the informers and serves. Call it while the
 * process has one thread (gp_http_listen). Returns 0, or a negative errno
 * with the reason in err. */
int gp_kube_server_start(const struct gp_kube_server_options *o, struct gp_kube_server **ret,
			 char *err, size_t err_len);

/* The extender's figures as Prometheus text (malloc'd, the caller frees
 * it): nodes and devices known, pods placed and held for a bind, calls and
 * bind failures. NULL when out of memory. */
char *gp_kube_server_metrics(struct gp_kube_server *s);

/* The cluster's nodes with gpupool devices, for GET /v1/nodes
 * (api.h's engine_nodes; ctx is the kube server). */
int gp_kube_server_nodes(void *ctx, struct gp_api_node **ret);

/* A running pod's task cancelled (api.h's engine_cancel; ctx is the kube
 * server): its pod evicted (kube-tasks.h). */
int gp_kube_server_cancel(void *ctx, const struct gp_task *t, const char *who);

/* A running pod's task given a share and priority (api.h's engine_share):
 * asked on the pod (kube-tasks.h). */
int gp_kube_server_share(void *ctx, const struct gp_task *t, unsigned compute_pct,
			 unsigned priority, const char *who);

/* Services over Deployments (api.h's engine_services). */
struct gp_services *gp_kube_server_services(void *ctx);

/* Stops serving and the informers. Accepts NULL; returns NULL. */
struct gp_kube_server *gp_kube_server_stop(struct gp_kube_server *s);

#endif
