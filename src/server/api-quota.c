/* api-quota.c — tenants' quotas per device model (docs/api.md):
 * PUT and DELETE /v1/tenants/NAME/quotas/MODEL (admin), and the
 * `model_quotas` list that GET /v1/tenants shows for each tenant, each
 * with what the tenant's running tasks hold under it (`in_use`).
 *
 * A model quota limits only the shares of a tenant's tasks on devices
 * whose NVML name contains MODEL (case-insensitive, the longest match
 * wins); the scheduling pass applies it (sched.h). Each change and its
 * audit row are one transaction; then the tenant's model quotas go into
 * the pool (pool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api-impl.h"
#include "server/fields.h"
#include "server/loop.h"
#include "server/meter.h"

#define MEM_MIB_MAX    (16ULL * 1024 * 1024) /* as for the overall quota */
#define TENANT_PCT_MAX (100 * 1024)
#define PATH_PREFIX    "/v1/tenants/"
#define PATH_MIDDLE    "/quotas/"

static const struct gp_field model_quota_fields[] = {
	{"mem_guaranteed_mib", GP_FIELD_UINT, true, 0, MEM_MIB_MAX},
	{"mem_borrowable_mib", GP_FIELD_UINT, false, 0, MEM_MIB_MAX},
	{"compute_guaranteed_pct", GP_FIELD_UINT, true, 0, TENANT_PCT_MAX},
	{"compute_borrowable_pct", GP_FIELD_UINT, false, 0, TENANT_PCT_MAX},
	{NULL},
};

static json_t *model_quota_json(const struct gp_model_quota *q)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:I}", "model", q->model, "mem_guaranteed_mib",
			 (json_int_t)q->mem_guaranteed_mib, "mem_borrowable_mib",
			 (json_int_t)q->mem_borrowable_mib, "compute_guaranteed_pct",
			 (json_int_t)q->compute_guaranteed_pct, "compute_borrowable_pct",
			 (json_int_t)q->compute_borrowable_pct);
}

json_t *gp_api_use_json(const struct gp_meter *m, uint64_t mem_mib, uint64_t pct)
{
	if (!m)
		return json_null();
	return json_pack("{s:I, s:I}", "mem_mib", (json_int_t)mem_mib, "compute_pct",
			 (json_int_t)pct);
}

json_t *gp_api_model_quotas_json(struct gp_api *api, const struct gp_model_quota *all,
				 int n, int64_t tenant)
{
	const struct gp_meter *m = api->loop ? gp_loop_meter(api->loop) : NULL;
	json_t *list = json_array();

	for (int i = 0; i < n; i++) {
		uint64_t mem = 0, pct = 0;
		json_t *q;

		if (all[i].tenant != tenant)
			continue;
		q = model_quota_json(&all[i]);
		if (m)
			gp_meter_model_use(m, all, n, i, &mem, &pct);
		json_object_set_new(q, "in_use", gp_api_use_json(m, mem, pct));
		json_array_append_new(list, q);
	}
	return list;
}

/* The tenant and the model named in /v1/tenants/NAME/quotas/MODEL; false
 * with 404 (no such tenant) or 400 (a model that is not a name) in ret. */
static bool quota_target(struct gp_api *api, const struct gp_http_request *req,
			 struct gp_http_reply *ret, struct gp_tenant *t, char *model)
{
	const char *name = req->path + strlen(PATH_PREFIX);
	const char *middle = strstr(name, PATH_MIDDLE);
	char tenant[GP_STORE_NAME_MAX];
	int r;

	if (!middle || (size_t)(middle - name) >= sizeof(tenant)) {
		gp_http_error(ret, 404, "no tenant \"%.*s\"", (int)(middle ? middle - name : 0),
			      name);
		return false;
	}
	snprintf(tenant, sizeof(tenant), "%.*s", (int)(middle - name), name);
	snprintf(model, GP_STORE_NAME_MAX, "%s", middle + strlen(PATH_MIDDLE));
	if (!gp_field_is_name(middle + strlen(PATH_MIDDLE))) {
		gp_http_error(ret, 400,
			      "model \"%s\": a part of the devices' NVML name, 1 to %d letters, "
			      "digits, '.', '_' or '-' (e.g. A100, T4)",
			      middle + strlen(PATH_MIDDLE), GP_STORE_NAME_MAX - 1);
		return false;
	}
	r = gp_store_tenant_by_name(api->store, tenant, t);
	if (r == 0 && t->removed)
		r = -ENOENT; /* its model quotas went with it */
	if (r == -ENOENT || r == -EINVAL) {
		gp_http_error(ret, 404, "no tenant \"%s\" (gpupool tenant ls lists them)", tenant);
		return false;
	}
	return r < 0 ? gp_api_store_failed(api, ret, r, "finding the tenant") : true;
}

/* Answers with tenant t's model quotas, as they are now. */
static void quotas_reply(struct gp_api *api, struct gp_http_reply *ret,
			 const struct gp_tenant *t)
{
	struct gp_model_quota *all = NULL;
	int n = 0, r = gp_store_model_quota_list(api->store, t->id, &all, &n);

	if (r < 0) {
		gp_api_store_failed(api, ret, r, "listing the model quotas");
		return;
	}
	gp_http_json(ret, 200,
		     json_pack("{s:s, s:o}", "tenant", t->name, "model_quotas",
			       gp_api_model_quotas_json(api, all, n, t->id)));
	free(all);
}

/* A model quota of t set (q) or removed (q NULL, `model`), and its audit
 * row: one transaction; then the tenant's model quotas as they are now go
 * into the pool. The store's error, -ENOENT when there was none to
 * remove. */
static int quota_write(struct gp_api *api, const char *who, const struct gp_tenant *t,
		       const struct gp_model_quota *q, const char *model, const char *detail)
{
	struct gp_model_quota *all = NULL;
	int n = 0, r = gp_store_begin(api->store);

	if (r == 0)
		r = q ? gp_store_model_quota_set(api->store, q)
		      : gp_store_model_quota_remove(api->store, t->id, model);
	if (r == 0)
		r = gp_store_audit(api->store, who, q ? "tenant.quota.set" : "tenant.quota.remove",
				   t->name, detail);
	if (r == 0)
		r = gp_store_model_quota_list(api->store, t->id, &all, &n);
	if (r == 0)
		r = gp_store_commit(api->store);
	if (r < 0) {
		gp_store_rollback(api->store);
		free(all);
		return r;
	}
	gp_pool_model_quotas_put(api->pool, t->id, all, n);
	free(all);
	return 0;
}

void gp_api_model_quota_set(void *ctx, const struct gp_http_request *req,
			    struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me, t;
	struct gp_model_quota q = {0};
	char detail[GP_REASON_MAX];
	json_auto_t *body = NULL;
	int r;

	if (!gp_api_caller(api, req, ret, &me))
		return;
	if (!me.admin) {
		gp_http_error(ret, 403, "only the admin may set quotas");
		return;
	}
	if (!quota_target(api, req, ret, &t, q.model) ||
	    !gp_fields_parse(req, model_quota_fields, ret, &body))
		return;
	q.tenant = t.id;
	q.mem_guaranteed_mib = gp_field_uint(body, "mem_guaranteed_mib", 0);
	q.mem_borrowable_mib = gp_field_uint(body, "mem_borrowable_mib", 0);
	q.compute_guaranteed_pct = (unsigned)gp_field_uint(body, "compute_guaranteed_pct", 0);
	q.compute_borrowable_pct = (unsigned)gp_field_uint(body, "compute_borrowable_pct", 0);
	snprintf(detail, sizeof(detail), "model %s: memory %llu+%llu MiB, compute %u+%u %%",
		 q.model, (unsigned long long)q.mem_guaranteed_mib,
		 (unsigned long long)q.mem_borrowable_mib, q.compute_guaranteed_pct,
		 q.compute_borrowable_pct);
	r = quota_write(api, me.name, &t, &q, q.model, detail);
	if (r < 0)
		gp_api_store_failed(api, ret, r, "setting the quota");
	else
		quotas_reply(api, ret, &t);
}

void gp_api_model_quota_remove(void *ctx, const struct gp_http_request *req,
			       struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me, t;
	char model[GP_STORE_NAME_MAX], detail[GP_REASON_MAX];
	int r;

	if (!gp_api_caller(api, req, ret, &me))
		return;
	if (!me.admin) {
		gp_http_error(ret, 403, "only the admin may remove quotas");
		return;
	}
	if (!quota_target(api, req, ret, &t, model))
		return;
	snprintf(detail, sizeof(detail), "model %s", model);
	r = quota_write(api, me.name, &t, NULL, model, detail);
	if (r == -ENOENT) {
		gp_http_error(ret, 404, "tenant \"%s\" has no quota for model \"%s\"", t.name,
			      model);
		return;
	}
	if (r < 0)
		gp_api_store_failed(api, ret, r, "removing the quota");
	else
		quotas_reply(api, ret, &t);
}
