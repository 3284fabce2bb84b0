/* api-service.c — the API's services (service.h) and time-of-day
 * schedules (schedule.h): POST/GET/PATCH/DELETE /v1/services[/NAME] (a
 * tenant its own; the admin anyone's, with ?tenant=) and POST/GET/DELETE
 * /v1/schedules[/NAME] (the admin). Both need the agent (the loop keeps
 * them), or for services an engine that keeps its own (--kubernetes:
 * services over Deployments): without, 409. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "server/api-impl.h"
#include "server/fields.h"
#include "server/loop.h"
#include "server/schedule.h"
#include "server/service.h"

#define SERVICES_PATH  "/v1/services/"
#define SCHEDULES_PATH "/v1/schedules/"
#define WINDOW_MAX_S   (7 * 86400)

static const char *const isolations[] = {"hard", "shared", NULL};

static const struct gp_field service_fields[] = {
	{"name", GP_FIELD_NAME, .required = true},
	{"command", GP_FIELD_COMMAND},
	{"deployment", GP_FIELD_TEXT, .hi = GP_SERVICE_DEPLOYMENT_MAX - 1},
	{"template", GP_FIELD_NAME},
	{"mem_mib", GP_FIELD_UINT, false, 1, 16ULL * 1024 * 1024},
	{"compute_pct", GP_FIELD_UINT, false, 1, 100},
	{"isolation", GP_FIELD_CHOICE, .choices = isolations},
	{"priority", GP_FIELD_UINT, false, 0, 9},
	{"model", GP_FIELD_TEXT, .hi = GP_STORE_NAME_MAX - 1},
	{"runtime", GP_FIELD_TEXT, .hi = GP_STORE_RUNTIME_MAX - 1},
	{"workdir", GP_FIELD_TEXT, .hi = GP_WORKDIR_MAX - 1},
	{"replicas", GP_FIELD_UINT, false, 1, GP_SERVICE_REPLICAS_MAX},
	{"min_replicas", GP_FIELD_UINT, false, 1, GP_SERVICE_REPLICAS_MAX},
	{"max_replicas", GP_FIELD_UINT, false, 1, GP_SERVICE_REPLICAS_MAX},
	{"autoscale", GP_FIELD_BOOL},
	{"out_pct", GP_FIELD_UINT, false, 1, 200},
	{"in_pct", GP_FIELD_UINT, false, 0, 100},
	{"margin_pct", GP_FIELD_UINT, false, 0, 100},
	{"out_window_s", GP_FIELD_UINT, false, 1, WINDOW_MAX_S},
	{"in_window_s", GP_FIELD_UINT, false, 1, WINDOW_MAX_S},
	{"cooldown_s", GP_FIELD_UINT, false, 0, WINDOW_MAX_S},
	{"step_pct", GP_FIELD_UINT, false, 1, 100},
	{"share_max_pct", GP_FIELD_UINT, false, 1, 100},
	{NULL},
};

/* The controller; false with 409 without the agent or an engine's. */
static bool services_of(struct gp_api *api, struct gp_services **ret_sv,
			struct gp_http_reply *ret)
{
	*ret_sv = api->loop ? gp_loop_services(api->loop)
		: api->engine_services ? api->engine_services(api->engine_ctx)
				       : NULL;
	if (*ret_sv)
		return true;
	gp_http_error(
		ret, 409,
		"services need the agent (their replicas are tasks it runs, scaled by "
		"what it measures); start the server with --with-agent");
	return false;
}

static unsigned uint_or(json_t *body, const char *key, unsigned absent)
{
	return (unsigned)gp_field_uint(body, key, absent);
}

/* The autoscaling policy: the seeds' defaults (core/autoscale.h) under the
 * body's; a replica's share may grow to twice the template's (at most a
 * whole device) unless share_max_pct says otherwise. */
static struct gp_scale_policy policy_of(json_t *body, unsigned share_pct)
{
	struct gp_scale_policy p = gp_scale_policy_default(share_pct);
	unsigned ceiling = share_pct * 2 > 100 ? 100 : share_pct * 2;

	p.min_replicas = uint_or(body, "min_replicas", p.min_replicas);
	p.max_replicas = uint_or(body, "max_replicas", p.max_replicas);
	p.out_pct = uint_or(body, "out_pct", p.out_pct);
	p.in_pct = uint_or(body, "in_pct", p.in_pct);
	p.margin_pct = uint_or(body, "margin_pct", p.margin_pct);
	p.out_window_s = uint_or(body, "out_window_s", p.out_window_s);
	p.in_window_s = uint_or(body, "in_window_s", p.in_window_s);
	p.cooldown_s = uint_or(body, "cooldown_s", p.cooldown_s);
	p.step_pct = uint_or(body, "step_pct", p.step_pct);
	p.share_max_pct = uint_or(body, "share_max_pct", ceiling);
	return p;
}

/* A Kubernetes object's name (a DNS-1123 subdomain)? */
static bool is_kube_name(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < GP_SERVICE_DEPLOYMENT_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-.") == n &&
	       isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);
}

/* What the replicas are: a command run as tasks of the agent, or on
 * Kubernetes a Deployment's pods; false with 400 in ret. */
static bool replicas_of(struct gp_api *api, json_t *body, struct gp_service_spec *s,
			struct gp_http_reply *ret)
{
	bool kubernetes = !api->loop && api->engine_services;

	snprintf(s->deployment, sizeof(s->deployment), "%s",
		 gp_field_string(body, "deployment", ""));
	if (gp_field_has(body, "command") == gp_field_has(body, "deployment")) {
		gp_http_error(ret, 400,
			      "give \"command\" (replicas run as tasks of the server's agent) or "
			      "\"deployment\" (a Kubernetes Deployment's pods), one of the two");
		return false;
	}
	if (s->deployment[0] && !kubernetes) {
		gp_http_error(ret, 400,
			      "field \"deployment\": this server drives no Kubernetes cluster; a "
			      "service over a Deployment needs `gpupool server --kubernetes`");
		return false;
	}
	if (!s->deployment[0] && kubernetes) {
		gp_http_error(ret, 400,
			      "field \"command\": on Kubernetes a service scales a Deployment of "
			      "your namespace; give \"deployment\" instead");
		return false;
	}
	if (s->deployment[0] && !is_kube_name(s->deployment)) {
		gp_http_error(ret, 400,
			      "field \"deployment\": \"%s\" is no Kubernetes object name "
			      "(lower-case letters, digits, '-' and '.')",
			      s->deployment);
		return false;
	}
	return true;
}

/* The spec and the replicas to start with; false with 400 in ret. */
static bool spec_of(struct gp_api *api, json_t *body, const struct gp_tenant *me,
		    struct gp_service_spec *s, unsigned *ret_replicas,
		    struct gp_http_reply *ret)
{
	char why[GP_REASON_MAX];

	*s = (struct gp_service_spec){0};
	if (!replicas_of(api, body, s, ret) ||
	    !gp_api_task_from_body(api, body, me, &s->task, ret) ||
	    !gp_api_task_could_fit(api, &s->task, false, ret) ||
	    !gp_api_task_quota_could_hold(me, &s->task, ret))
		return false;
	snprintf(s->task.kind, sizeof(s->task.kind), "inference");
	if (s->deployment[0] && !gp_field_has(body, "name"))
		snprintf(s->task.name, sizeof(s->task.name), "%.*s",
			 (int)sizeof(s->task.name) - 1, s->deployment);
	s->policy = policy_of(body, s->task.compute_pct);
	s->autoscale =
		gp_field_has(body, "autoscale") ? gp_field_bool(body, "autoscale") : true;
	*ret_replicas = uint_or(body, "replicas", s->policy.min_replicas);
	if (gp_scale_policy_check(&s->policy, why, sizeof(why)) < 0) {
		gp_http_error(ret, 400, "%s", why);
		return false;
	}
	if (*ret_replicas < s->policy.min_replicas ||
	    *ret_replicas > s->policy.max_replicas) {
		gp_http_error(ret, 400,
			      "field \"replicas\": %u is outside min_replicas %u to "
			      "max_replicas %u",
			      *ret_replicas, s->policy.min_replicas,
			      s->policy.max_replicas);
		return false;
	}
	return true;
}

void gp_api_service_create(void *ctx, const struct gp_http_request *req,
			   struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_services *sv;
	struct gp_service_spec spec;
	struct gp_service_row row = {0};
	struct gp_tenant me;
	json_auto_t *body = NULL;
	unsigned replicas;
	int r;

	if (!gp_api_caller(api, req, ret, &me) || !services_of(api, &sv, ret) ||
	    !gp_fields_parse(req, service_fields, ret, &body) ||
	    !spec_of(api, body, &me, &spec, &replicas, ret))
		return;
	r = gp_services_create(sv, me.name, me.id, gp_field_string(body, "name", ""),
			       replicas, &spec, &row);
	if (r == -EEXIST)
		gp_http_error(
			ret, 409,
			"you have a service named \"%s\"; remove it first or choose "
			"another name",
			gp_field_string(body, "name", ""));
	else if (r == -EBUSY)
		gp_http_error(ret, 409,
			      "Deployment \"%s\" is scaled by another of your services already; "
			      "remove that one first",
			      spec.deployment);
	else if (r == -EDQUOT)
		gp_http_error(ret, 409,
			      "you have %d services, the most a tenant may have; remove one "
			      "first",
			      GP_SERVICES_PER_TENANT);
	else if (r == -E2BIG)
		gp_http_error(ret, 400,
			      "the service's spec is over %d bytes; shorten the command",
			      GP_SERVICE_SPEC_MAX);
	else if (r < 0)
		gp_api_store_failed(api, ret, r, "storing the service");
	else {
		json_t *list = gp_services_json(sv, me.id, row.name);

		gp_http_json(ret, 201, json_incref(json_array_get(list, 0)));
		json_decref(list);
		snprintf(ret->location, sizeof(ret->location), SERVICES_PATH "%s",
			 row.name);
	}
}

/* The NAME of /v1/.../NAME, or NULL for the collection; false with 404
 * for a name no service could have. */
static bool path_name(const struct gp_http_request *req, const char *prefix, char *buf,
		      size_t size, bool *ret_named, struct gp_http_reply *ret)
{
	*ret_named = strncmp(req->path, prefix, strlen(prefix)) == 0;
	if (!*ret_named)
		return true;
	snprintf(buf, size, "%s", req->path + strlen(prefix));
	if (gp_field_is_name(buf))
		return true;
	gp_http_error(ret, 404, "no such name \"%.64s\"", buf);
	return false;
}

/* Whose services the caller names: ?tenant= (the admin), else its own. */
static bool services_tenant(struct gp_api *api, const struct gp_http_request *req,
			    const struct gp_tenant *me, int64_t *ret_tenant,
			    struct gp_http_reply *ret)
{
	struct gp_tenant *all = NULL;
	int n = 0, r = gp_store_tenant_list(api->store, &all, &n);
	bool ok;

	if (r < 0)
		return gp_api_store_failed(api, ret, r, "reading the tenants");
	ok = gp_api_query_tenant(req, me, all, n, ret_tenant, ret);
	free(all);
	return ok;
}

void gp_api_services(void *ctx, const struct gp_http_request *req,
		     struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	char name[GP_STORE_NAME_MAX + 1];
	struct gp_services *sv;
	struct gp_tenant me;
	int64_t tenant;
	bool named;
	json_t *list;

	if (!gp_api_caller(api, req, ret, &me) || !services_of(api, &sv, ret) ||
	    !path_name(req, SERVICES_PATH, name, sizeof(name), &named, ret) ||
	    !services_tenant(api, req, &me, &tenant, ret))
		return;
	list = gp_services_json(sv, tenant, named ? name : NULL);
	if (!named) {
		gp_http_json(ret, 200, json_pack("{s:o}", "services", list));
	} else if (json_array_size(list) == 1) {
		gp_http_json(ret, 200, json_incref(json_array_get(list, 0)));
		json_decref(list);
	} else {
		json_decref(list);
		gp_http_error(ret, 404,
			      "no service \"%s\"%s (gpupool service ls lists them)", name,
			      tenant < 0 ? " (the admin names its tenant with ?tenant=)"
					 : "");
	}
}

void gp_api_service_remove(void *ctx, const struct gp_http_request *req,
			   struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	char name[GP_STORE_NAME_MAX + 1];
	struct gp_services *sv;
	struct gp_tenant me;
	int64_t tenant;
	bool named;
	int r;

	if (!gp_api_caller(api, req, ret, &me) || !services_of(api, &sv, ret) ||
	    !path_name(req, SERVICES_PATH, name, sizeof(name), &named, ret) ||
	    !services_tenant(api, req, &me, &tenant, ret))
		return;
	r = gp_services_remove(sv, me.name, tenant < 0 ? me.id : tenant, name);
	if (r == -ENOENT)
		gp_http_error(ret, 404,
			      "no service \"%s\" (gpupool service ls lists them)", name);
	else if (r < 0)
		gp_api_store_failed(api, ret, r, "removing the service");
	else
		gp_http_json(ret, 200,
			     json_pack("{s:s, s:b}", "name", name, "removed", 1));
}

static const struct gp_field scale_fields[] = {
	{"replicas", GP_FIELD_UINT, true, 1, GP_SERVICE_REPLICAS_MAX},
	{"reason", GP_FIELD_TEXT, .hi = 200},
	{NULL},
};

/* PATCH /v1/services/NAME {"replicas": N, "reason": "..."}: a step by
 * hand (gp_services_set), then the service as GET shows it. */
void gp_api_service_scale(void *ctx, const struct gp_http_request *req,
			  struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	char name[GP_STORE_NAME_MAX + 1];
	struct gp_services *sv;
	struct gp_tenant me;
	json_auto_t *body = NULL;
	int64_t tenant;
	bool named;
	json_t *list;
	int r;

	if (!gp_api_caller(api, req, ret, &me) || !services_of(api, &sv, ret) ||
	    !path_name(req, SERVICES_PATH, name, sizeof(name), &named, ret) ||
	    !services_tenant(api, req, &me, &tenant, ret) ||
	    !gp_fields_parse(req, scale_fields, ret, &body))
		return;
	tenant = tenant < 0 ? me.id : tenant;
	r = gp_services_set(sv, me.name, tenant, name,
			    (unsigned)gp_field_uint(body, "replicas", 0),
			    gp_field_string(body, "reason", ""));
	if (r == -ENOENT) {
		gp_http_error(ret, 404, "no service \"%s\" (gpupool service ls lists them)",
			      name);
		return;
	}
	if (r == -ERANGE) {
		json_t *policy;

		list = gp_services_json(sv, tenant, name);
		policy = json_object_get(json_object_get(json_array_get(list, 0), "spec"), "policy");
		gp_http_error(ret, 400,
			      "field \"replicas\": %llu is outside the service's bounds, "
			      "min_replicas %lld to max_replicas %lld",
			      (unsigned long long)gp_field_uint(body, "replicas", 0),
			      (long long)json_integer_value(json_object_get(policy, "min_replicas")),
			      (long long)json_integer_value(json_object_get(policy, "max_replicas")));
		json_decref(list);
		return;
	}
	if (r < 0) {
		gp_api_store_failed(api, ret, r, "scaling the service");
		return;
	}
	list = gp_services_json(sv, tenant, name);
	gp_http_json(ret, 200, json_incref(json_array_get(list, 0)));
	json_decref(list);
}

/* ---- schedules --------------------------------------------------------------- */

static const struct gp_field schedule_fields[] = {
	{"name", GP_FIELD_NAME, .required = true},
	{"at", GP_FIELD_TEXT, .required = true, .hi = 8},
	{"tenant", GP_FIELD_NAME},
	{"task", GP_FIELD_UINT, false, 1, INT64_MAX},
	{"field", GP_FIELD_TEXT, .required = true, .hi = 31},
	{"value", GP_FIELD_UINT, .required = true, .hi = 100 * 1024},
	{NULL},
};

static bool schedules_of(struct gp_api *api, const struct gp_http_request *req,
			 struct gp_tenant *me, struct gp_schedules **ret_sc,
			 struct gp_http_reply *ret)
{
	if (!gp_api_caller(api, req, ret, me))
		return false;
	if (!me->admin) {
		gp_http_error(ret, 403, "only the admin may read or change schedules");
		return false;
	}
	*ret_sc = gp_loop_schedules(api->loop);
	if (*ret_sc)
		return true;
	gp_http_error(ret, 409,
		      "schedules need the agent; start the server with --with-agent");
	return false;
}

void gp_api_schedule_add(void *ctx, const struct gp_http_request *req,
			 struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_schedules *sc;
	struct gp_tenant me;
	char why[GP_REASON_MAX], name[GP_STORE_NAME_MAX], *text = NULL;
	json_auto_t *body = NULL;
	int r;

	if (!schedules_of(api, req, &me, &sc, ret) ||
	    !gp_fields_parse(req, schedule_fields, ret, &body))
		return;
	snprintf(name, sizeof(name), "%s", gp_field_string(body, "name", ""));
	json_object_del(body, "name");
	r = gp_schedule_rule_check(body, &text, why, sizeof(why));
	if (r == -EINVAL) {
		gp_http_error(ret, 400, "%s", why);
		return;
	}
	if (r == 0)
		r = gp_schedules_add(sc, me.name, name, text);
	free(text);
	if (r == -EEXIST)
		gp_http_error(ret, 409, "a schedule named \"%s\" exists; remove it first",
			      name);
	else if (r < 0)
		gp_api_store_failed(api, ret, r, "storing the schedule");
	else
		gp_http_json(
			ret, 201,
			json_pack("{s:o}", "schedules", gp_schedules_json(sc, gp_unix_ms())));
}

void gp_api_schedules(void *ctx, const struct gp_http_request *req,
		      struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_schedules *sc;
	struct gp_tenant me;

	if (schedules_of(api, req, &me, &sc, ret))
		gp_http_json(
			ret, 200,
			json_pack("{s:o}", "schedules", gp_schedules_json(sc, gp_unix_ms())));
}

void gp_api_schedule_remove(void *ctx, const struct gp_http_request *req,
			    struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	char name[GP_STORE_NAME_MAX + 1];
	struct gp_schedules *sc;
	struct gp_tenant me;
	bool named;
	int r;

	if (!schedules_of(api, req, &me, &sc, ret) ||
	    !path_name(req, SCHEDULES_PATH, name, sizeof(name), &named, ret))
		return;
	r = gp_schedules_remove(sc, me.name, name);
	if (r == -ENOENT)
		gp_http_error(ret, 404,
			      "no schedule \"%s\" (gpupool schedule ls lists them)",
			      name);
	else if (r < 0)
		gp_api_store_failed(api, ret, r, "removing the schedule");
	else
		gp_http_json(ret, 200,
			     json_pack("{s:s, s:b}", "name", name, "removed", 1));
}
