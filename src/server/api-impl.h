/* api-impl.h — what the API's handler files share (api.c: tenants,
 * templates, tasks, audit; api-meter.c: usage, bills, alerts, metrics,
 * status; api-pool.c: the node, its devices, the queue; api-logs.c: task
 * logs; api-quota.c: tenants' quotas per device model; api-series.c: the
 * meter's history). Not for use
 * outside src/server/api*.c. */
#ifndef GP_SERVER_API_IMPL_H
#define GP_SERVER_API_IMPL_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/api.h"
#include "server/taskops.h"

struct gp_api {
	struct gp_store *store;
	struct gp_pool *pool;
	unsigned queue_max, tenant_queue_max;
	char metrics_token[GP_API_METRICS_TOKEN_MAX + 1]; /* "": none */
	struct gp_price price[GP_PRICES_MAX];
	int prices;
	struct gp_loop *loop; /* NULL without the agent */
	int (*engine_nodes)(void *ctx, struct gp_api_node **ret); /* api.h; NULL: none */
	int (*engine_cancel)(void *ctx, const struct gp_task *t, const char *who);
	int (*engine_share)(void *ctx, const struct gp_task *t, unsigned compute_pct,
			    unsigned priority, const char *who);
	struct gp_services *(*engine_services)(void *ctx);
	void *engine_ctx;
	const char *engine;
	char log_dir[PATH_MAX];
	char admin_token_file[PATH_MAX]; /* rewritten when the admin's token is; "": none
					  */
	char ui_dir[PATH_MAX], ui_chart_js[PATH_MAX]; /* "": none */
	struct gp_http *http;	  /* its counts, for /metrics; NULL: none */
	struct gp_backup *backup; /* the database's backups; NULL: none */
	int64_t started_ms;	  /* when the server made its API (unix ms) */
};

/* The API's store, pool and loop, for the writes it shares (taskops.h). */
static inline struct gp_taskops gp_api_taskops(const struct gp_api *api)
{
	return (struct gp_taskops){ api->store, api->pool, api->loop, api->queue_max,
				    api->tenant_queue_max, api->engine_cancel, api->engine_ctx };
}

/* Fills *me with the caller (by its token); false with 401 in ret. */
bool gp_api_caller(struct gp_api *api, const struct gp_http_request *req,
		   struct gp_http_reply *ret, struct gp_tenant *me);
/* Fills *t with task id if the caller may see it; false with 404 (no
 * such task) or 403 (another tenant's) in ret. */
bool gp_api_task_load(struct gp_api *api, const struct gp_tenant *me, int64_t id,
		      struct gp_http_reply *ret, struct gp_task *t);
/* The query parameter key as a whole number from lo to hi, `absent` when
 * not given; false with 400 in ret when it is something else. */
bool gp_api_query_number(const struct gp_http_request *req, const char *key, long long lo,
			 long long hi, long long absent, long long *ret_v,
			 struct gp_http_reply *ret);
/* ?state=S[,S...]: the task states named, as GP_TASK_STATE_BIT bits in
 * *ret_states (0: none named); false with 400 in ret for a name that is
 * no state. */
bool gp_api_query_states(const struct gp_http_request *req, unsigned *ret_states,
			 struct gp_http_reply *ret);
/* ?tenant=NAME, among the tenants all[0..n): its id in *ret_tenant (the
 * admin may name anyone, a removed tenant too; a tenant only itself);
 * without it, the caller's scope (-1 for the admin, else its own id).
 * False with 400 (no such tenant) or 403 (another's) in ret. */
bool gp_api_query_tenant(const struct gp_http_request *req, const struct gp_tenant *me,
			 const struct gp_tenant *all, int n, int64_t *ret_tenant,
			 struct gp_http_reply *ret);
/* Sets ret to the HTTP status of a store failure; returns false. */
bool gp_api_store_failed(struct gp_api *api, struct gp_http_reply *ret, int err,
			 const char *what);
/* A task as GET /v1/tasks shows it (its tenant's name given), a usage
 * record as GET /v1/usage does, and the advice of a month for tenant (<
 * 0: everyone's) at the default headroom and percentile as GET
 * /v1/advice's list (the store's error): what api-sim.c gives the
 * what-if module, as the CLI reads them. New JSON, the caller's. */
json_t *gp_api_task_json(const struct gp_task *t, const char *tenant);
json_t *gp_api_record_json(const struct gp_usage_record *u, const char *tenant);
int gp_api_advice_of_month(struct gp_api *api, int64_t tenant, const char *month,
			   json_t **ret);
/* api-sim.c: what-if on the pool's history. */
void gp_api_sim_history(void *ctx, const struct gp_http_request *req,
			struct gp_http_reply *ret);
/* An RFC 3339 UTC time of unix seconds, or null for 0. */
json_t *gp_api_time_json(int64_t unix_s);
/* A task state's name ("pending"...). */
const char *gp_api_state_name(enum gp_task_state s);

/* The handlers of api-meter.c. */
void gp_api_usage(void *ctx, const struct gp_http_request *req,
		  struct gp_http_reply *ret);
void gp_api_bill(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret);
void gp_api_advice(void *ctx, const struct gp_http_request *req,
		   struct gp_http_reply *ret);
void gp_api_advice_apply(void *ctx, const struct gp_http_request *req,
			 struct gp_http_reply *ret);
void gp_api_alerts(void *ctx, const struct gp_http_request *req,
		   struct gp_http_reply *ret);
void gp_api_alert_clear(void *ctx, const struct gp_http_request *req,
			struct gp_http_reply *ret);
void gp_api_status(void *ctx, const struct gp_http_request *req,
		   struct gp_http_reply *ret);
/* api-series.c: the meter's history over time. */
void gp_api_series(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret);
/* api-quota.c: the model quotas of a tenant (from all[0..n), the
 * tenant's only) as a new JSON array, each with what the tenant holds
 * under it, and the handlers. */
json_t *gp_api_model_quotas_json(struct gp_api *api, const struct gp_model_quota *all,
				 int n, int64_t tenant);
/* What a tenant's running tasks hold, {"mem_mib", "compute_pct"} summed
 * over devices, or null without the agent's meter (m NULL). */
struct gp_meter;
json_t *gp_api_use_json(const struct gp_meter *m, uint64_t mem_mib, uint64_t pct);
void gp_api_model_quota_set(void *ctx, const struct gp_http_request *req,
			    struct gp_http_reply *ret);
void gp_api_model_quota_remove(void *ctx, const struct gp_http_request *req,
			       struct gp_http_reply *ret);
/* A task from a submission's checked body (POST /v1/tasks's fields), for
 * me; false with 400 in ret. */
bool gp_api_task_from_body(struct gp_api *api, json_t *body, const struct gp_tenant *me,
			   struct gp_task *t, struct gp_http_reply *ret);
/* With the agent, false with 400 for a task this machine could never
 * hold (more devices than it has, more memory than its largest one, a
 * runtime or model none of its cards has: unless await_cards), its
 * runtime settled (server/runtime.h) when it can. */
bool gp_api_task_could_fit(struct gp_api *api, struct gp_task *t, bool await_cards,
			   struct gp_http_reply *ret);
/* False with 400 for a task its tenant's whole quota could never hold. */
bool gp_api_task_quota_could_hold(const struct gp_tenant *me, const struct gp_task *t,
				  struct gp_http_reply *ret);
/* api-service.c: services and schedules. */
void gp_api_service_create(void *ctx, const struct gp_http_request *req,
			   struct gp_http_reply *ret);
void gp_api_services(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret);
void gp_api_service_remove(void *ctx, const struct gp_http_request *req,
			   struct gp_http_reply *ret);
void gp_api_service_scale(void *ctx, const struct gp_http_request *req,
			  struct gp_http_reply *ret);
void gp_api_schedule_add(void *ctx, const struct gp_http_request *req,
			 struct gp_http_reply *ret);
void gp_api_schedules(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret);
void gp_api_schedule_remove(void *ctx, const struct gp_http_request *req,
			    struct gp_http_reply *ret);
/* api-ui.c: the web console's files. */
void gp_api_ui(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret);
/* api-pool.c and api-logs.c. */
void gp_api_devices(void *ctx, const struct gp_http_request *req,
		    struct gp_http_reply *ret);
void gp_api_nodes(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret);
void gp_api_queue(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret);
void gp_api_logs(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret);

#endif
