/* api.h — the server's REST/JSON API (docs/api.md): the route table and
 * the handlers behind it, which authenticate each caller by its bearer
 * token, check the request, act on the store and write the audit log.
 *
 * A tenant sees and changes only its own tasks; the admin tenant (the
 * one the server made at its first start) sees everything and alone adds
 * and changes tenants (their quotas and Unix users), adds templates and
 * reads the audit log. A write is answered only after the store call
 * that made it returned, so an acknowledged write is on disk.
 *
 * Metering, bills, alerts, metrics and the live status are in
 * api-meter.c; the node, its devices and the queue in api-pool.c; task
 * logs in api-logs.c; what the files share is in api-impl.h.
 *
 * Every write to the store that changes what the pool keeps (tasks,
 * tenants, their quotas) is put in the pool once it has committed, under
 * the same lock (pool.h); the queue's bounds, GET /v1/queue and the
 * waiting tasks of GET /v1/status read the pool.
 *
 * Ownership: the api uses the store and the pool it is given and does
 * not free them; the caller keeps them alive until gp_api_free, and the
 * loop until it calls gp_api_set_loop(api, NULL). */
#ifndef GP_SERVER_API_H
#define GP_SERVER_API_H

#include <stddef.h>

#include "base/http.h"
#include "server/bill.h"
#include "server/loop.h"
#include "server/store.h"

#define GP_API_BODY_MAX		 (1024 * 1024) /* larger request bodies get 413 */
#define GP_API_QUEUE_MAX	 10000	       /* the default bound on pending tasks */
#define GP_API_TENANT_QUEUE_MAX	 1000	       /* the default bound on a tenant's */
#define GP_API_METRICS_TOKEN_MIN 16	       /* a scrape token's length, in bytes */
#define GP_API_METRICS_TOKEN_MAX 256
#define GP_API_ADMIN_NAME	 "admin" /* the admin tenant's name */

struct gp_api;
struct gp_services;

/* A node as GET /v1/nodes lists it (api-pool.c writes every one): the
 * agent's machine, or a node of a cluster an engine drives. */
struct gp_api_node {
	char hostname[256], driver_version[96];
	int cuda_version;               /* 1000 x major + 10 x minor; 0: none */
	unsigned devices, devices_usable;
	uint64_t memory_total_mib;
	int tasks_running;
	int64_t sampled_ms;             /* the last sampling, unix ms; 0: none */
	int schedulable;                /* 0 or 1; -1: not said (the agent's machine) */
};

struct gp_api_options {
	unsigned queue_max; /* submissions get 503 at this many pending tasks */
	/* a tenant's get 503 at this many of its own; 0: the default (at
	 * most queue_max) */
	unsigned tenant_queue_max;
	/* reads every series of /metrics, as the admin's does (copied); NULL
	 * or "": none */
	const char *metrics_token;
	const struct gp_price *prices; /* for bills; copied */
	int n_prices;
	struct gp_pool *pool; /* the queue and the tenants in memory (pool.h); required */
	struct gp_loop *loop; /* live numbers, cancels of running tasks; NULL: none */
	const char *log_dir;  /* where task-ID.log files are (copied); NULL: "logs" */
	/* the admin's token file (copied): a new admin token is written there
	 * (POST /v1/tenants/admin/token); NULL: none */
	const char *admin_token_file;
	/* the web console's files and its charting library (copied; api-ui.c);
	 * NULL or "": none (GET /ui/ says so) */
	const char *ui_dir, *ui_chart_js;
	/* what /metrics tells of the server's guards: the API's HTTP front
	 * (its counts) and the database's backups; NULL: none */
	struct gp_http *http;
	struct gp_backup *backup;
	/* The nodes of a cluster the server drives instead of an agent
	 * (--kubernetes: k8s/kube-server.h), for GET /v1/nodes: fills *ret
	 * (malloc'd; the caller frees it) and returns how many, or -ENOMEM.
	 * NULL: none. */
	int (*engine_nodes)(void *ctx, struct gp_api_node **ret);
	/* Stops a running task of the engine's (a pod: evicted, with its
	 * grace period), asked by tenant `who`: 0, or a negative errno.
	 * NULL: none. */
	int (*engine_cancel)(void *ctx, const struct gp_task *t, const char *who);
	/* Asks the engine to give a running task of its own a share and a
	 * priority (a pod: on its annotations, admitted or refused by the
	 * extender as its owner's change would be), for `who`: 0, or a
	 * negative errno. NULL: none. */
	int (*engine_share)(void *ctx, const struct gp_task *t, unsigned compute_pct,
			    unsigned priority, const char *who);
	/* The engine's services (service.h: Deployments scaled); NULL: none. */
	struct gp_services *(*engine_services)(void *ctx);
	void *engine_ctx;
	const char *engine;             /* its name ("kubernetes") */
};

int gp_api_new(struct gp_store *store, const struct gp_api_options *o,
	       struct gp_api **ret);
struct gp_api *gp_api_free(struct gp_api *api); /* accepts NULL; returns NULL */

/* Changes where the live numbers come from (NULL: nowhere, before the
 * loop stops). Call it holding the http lock. */
void gp_api_set_loop(struct gp_api *api, struct gp_loop *loop);

/* GET /metrics (Prometheus text), also for a listener of its own
 * (`--metrics-listen`): ctx is the api, and the caller holds the lock the
 * api's routes run under. */
void gp_api_metrics(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret);

/* The routes, to serve with gp_http_serve and the api as its context. */
const struct gp_http_route *gp_api_routes(size_t *ret_n);

#endif
