/* api.c — the handlers of the REST/JSON API (see api.h, docs/api.md).
 *
 * Every handler follows the same steps: find the caller by its token,
 * check the body against the endpoint's field table (so that a wrong
 * request is told which field and why), make one store call that
 * writes, append an audit row, answer. A store failure becomes an HTTP
 * status in one place (store_failed). Objects go out as JSON built by
 * the *_json functions; times are RFC 3339 UTC strings. */
#include "server/api.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/user.h"
#include "core/quota.h"
#include "core/resources.h"
#include "base/parse.h"
#include "server/api-impl.h"
#include "server/depend.h"
#include "server/fields.h"
#include "server/loop.h"
#include "server/meter.h"
#include "server/runtime.h"
#include "server/taskops.h"
#include "agent/taskenv.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define MEM_MIB_MAX	  (16ULL * 1024 * 1024) /* 16 TiB */
#define TENANT_PCT_MAX	  (100 * 1024)		/* a quota sums over devices */
#define DEVICES_MAX	  GP_NODE_DEVICES_MAX /* on one node: the core's bound */
#define PRIORITY_DEFAULT  5
#define AUDIT_LIMIT	  100
#define AUDIT_LIMIT_MAX	  100000
#define SHELL_PLAIN_CHARS GP_FIELD_NAME_CHARS "/:=@%+,"
#define TENANTS_PATH	  "/v1/tenants/"
#define TEMPLATES_PATH	  "/v1/templates/"
#define WHY_MAX		  400
#define TASK_PAGE	  500  /* GET /v1/tasks: the tasks of a page, by default */
#define TASK_PAGE_MAX	  2000 /* and at most */

static const char *const state_names[] = {
	[GP_TASK_PENDING] = "pending",	   [GP_TASK_RUNNING] = "running",
	[GP_TASK_SUCCEEDED] = "succeeded", [GP_TASK_FAILED] = "failed",
	[GP_TASK_CANCELLED] = "cancelled", [GP_TASK_PREEMPTED] = "preempted",
	[GP_TASK_LOST] = "lost",	   [GP_TASK_LOST + 1] = NULL,
};
static const char *const isolations[] = {"hard", "shared", NULL};
/* What happens to a task whose memory only grows: a warning, or a
 * restart before its limit (loop.c, growth_restarts). */
static const char *const memory_policies[] = {"alert", "restart", NULL};
/* Names a tenant may not take, in any case: those the server signs its
 * own audit rows with ("server": the loop, restarts; "admin": the admin
 * tenant), and those a reader would take for the system's. */
static const char *const reserved_names[] = {
	GP_API_ADMIN_NAME, "server", "agent",  "scheduler", "verifier",
	"gpupool",	   "root",   "system", NULL,
};
static const char *const kinds[] = {"batch", "training", "inference", "interactive",
				    NULL};

/* ---- errors ---------------------------------------------------------- */

/* The HTTP status for each errno a store call may give; others are 500. */
static const struct {
	int err;
	unsigned status;
} store_statuses[] = {
	{-ENOENT, 404},
	{-EEXIST, 409},
	{-EINVAL, 400},
};

static bool store_failed(struct gp_api *api, struct gp_http_reply *ret, int err,
			 const char *what)
{
	unsigned status = 500;

	for (size_t i = 0; i < ARRAY_SIZE(store_statuses); i++)
		if (store_statuses[i].err == err)
			status = store_statuses[i].status;
	gp_http_error(ret, status, "%s: %s", what, gp_store_error(api->store));
	return false;
}

/* ---- JSON out -------------------------------------------------------- */

/* An RFC 3339 UTC time, or null for 0 (not yet). */
static json_t *time_json(int64_t unix_s)
{
	char text[32];
	time_t t = (time_t)unix_s;
	struct tm tm;

	if (!unix_s || !gmtime_r(&t, &tm))
		return json_null();
	strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(text);
}

static json_t *tenant_json(const struct gp_tenant *t)
{
	return json_pack("{s:I, s:s, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:o}", "id",
			 (json_int_t)t->id, "name", t->name, "admin", t->admin, "unlimited",
			 gp_tenant_quota(t).unlimited,
			 "mem_guaranteed_mib", (json_int_t)t->mem_guaranteed_mib,
			 "mem_borrowable_mib", (json_int_t)t->mem_borrowable_mib,
			 "compute_guaranteed_pct", (json_int_t)t->compute_guaranteed_pct,
			 "compute_borrowable_pct", (json_int_t)t->compute_borrowable_pct,
			 "priority_max", (json_int_t)t->priority_max,
			 "created", time_json(t->created));
}

/* A tenant as GET /v1/tenants shows it: with its user ("" automatic). */
static json_t *tenant_user_json(const struct gp_tenant *t)
{
	json_t *o = tenant_json(t);

	json_object_set_new(o, "user", json_string(t->user));
	return o;
}

static json_t *template_json(const struct gp_template *t)
{
	return json_pack("{s:I, s:s, s:s, s:I, s:I, s:s, s:s, s:I}", "id", (json_int_t)t->id,
			 "name", t->name, "models", t->models, "mem_mib",
			 (json_int_t)t->mem_mib, "compute_pct",
			 (json_int_t)t->compute_pct, "isolation",
			 isolations[t->hard ? 0 : 1], "runtime", t->runtime, "time_limit_s",
			 (json_int_t)t->time_limit_s);
}

static const char *state_name(enum gp_task_state s)
{
	return (unsigned)s <= GP_TASK_LOST ? state_names[s] : "unknown";
}

/* The job options of a task (issue 27): its memory as a percent (0:
 * none), time limit and whether it ended it, the tasks it waits for, its
 * array (array_id null: of none), whether its devices may mix models. */
static json_t *job_json(const struct gp_task *t)
{
	return json_pack("{s:I, s:I, s:b, s:s, s:o, s:o, s:b}", "mem_pct", (json_int_t)t->mem_pct,
			 "time_limit_s", (json_int_t)t->time_limit_s, "timed_out", t->timed_out,
			 "after", t->after, "array_id",
			 t->array_id ? json_integer(t->array_id) : json_null(), "array_index",
			 t->array_id ? json_integer(t->array_index) : json_null(), "mixed_models",
			 t->mixed_models);
}

static json_t *task_json(const struct gp_task *t, const char *tenant)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:b, s:b, s:s, s:I}",
			      "id", (json_int_t)t->id, "tenant", tenant, "name", t->name,
			      "command", t->command, "mem_mib", (json_int_t)t->mem_mib,
			      "compute_pct", (json_int_t)t->compute_pct, "devices",
			      (json_int_t)t->devices, "whole", t->whole, "exclusive",
			      t->exclusive, "isolation", isolations[t->hard ? 0 : 1],
			      "priority", (json_int_t)t->priority);

	json_object_set_new(o, "workdir", json_string(t->workdir));
	json_object_set_new(o, "runtime", json_string(t->runtime));
	json_object_set_new(o, "template", json_string(t->template_name));
	json_object_set_new(o, "on_memory_growth",
			    json_string(memory_policies[t->restart_on_growth ? 1 : 0]));
	json_object_update_new(
		o, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:i, s:o, s:o, s:o}", "kind",
			     t->kind, "model", t->model, "state", state_name(t->state),
			     "reason", t->reason, "placement", t->placement, "pid",
			     (json_int_t)t->pid, "exit_code", t->exit_code, "created",
			     time_json(t->created / 1000), "started",
			     time_json(t->started / 1000), "ended",
			     time_json(t->ended / 1000)));
	json_object_update_new(o, json_pack("{s:I, s:I, s:I, s:I}", "created_ms",
					    (json_int_t)t->created, "started_ms",
					    (json_int_t)t->started, "ended_ms",
					    (json_int_t)t->ended, "service", (json_int_t)t->service));
	/* A Kubernetes pod (kind "pod"): its UID; null for the server's own. */
	json_object_set_new(o, "pod_uid", t->pod_uid[0] ? json_string(t->pod_uid) : json_null());
	json_object_update_new(o, job_json(t));
	return o;
}

static json_t *audit_json(const struct gp_audit_entry *e)
{
	return json_pack("{s:I, s:o, s:I, s:s, s:s, s:s, s:s}", "id", (json_int_t)e->id,
			 "time", time_json(e->ts / 1000), "ts_ms", (json_int_t)e->ts, "who",
			 e->who, "action",
			 e->action, "object", e->object, "detail", e->detail);
}

/* ---- the fields each endpoint takes ---------------------------------- */

/* What a tenant has that the admin may change: the same checks when it
 * is added (POST) and changed (PATCH). */
#define TENANT_SETTABLE_FIELDS                                                           \
	{"mem_guaranteed_mib", GP_FIELD_UINT, .hi = MEM_MIB_MAX},                        \
		{"mem_borrowable_mib", GP_FIELD_UINT, .hi = MEM_MIB_MAX},                \
		{"compute_guaranteed_pct", GP_FIELD_UINT, .hi = TENANT_PCT_MAX},         \
		{"compute_borrowable_pct", GP_FIELD_UINT, .hi = TENANT_PCT_MAX},         \
		{"priority_max", GP_FIELD_UINT, .hi = 9},                                \
	{                                                                                \
		"user", GP_FIELD_TEXT, .hi = GP_USER_SPEC_MAX - 1                        \
	}

static const struct gp_field tenant_fields[] = {
	{"name", GP_FIELD_NAME, .required = true},
	{"unlimited", GP_FIELD_BOOL},
	TENANT_SETTABLE_FIELDS,
	{NULL},
};

static const struct gp_field tenant_set_fields[] = {
	TENANT_SETTABLE_FIELDS,
	{NULL},
};

/* The four quota fields, in the order tenant_set reports them. */
/* What the admin grants a tenant, changed by PATCH one field at a time:
 * its quota and the highest priority its tasks may have. */
static const char *const quota_names[] = {"mem_guaranteed_mib", "mem_borrowable_mib",
					  "compute_guaranteed_pct",
					  "compute_borrowable_pct", "priority_max", NULL};

static const struct gp_field template_fields[] = {
	{"name", GP_FIELD_NAME, .required = true},
	{"models", GP_FIELD_TEXT, .hi = GP_STORE_NAME_MAX * 2 - 1},
	{"mem_mib", GP_FIELD_UINT, true, 1, MEM_MIB_MAX},
	{"compute_pct", GP_FIELD_UINT, true, 1, 100},
	{"isolation", GP_FIELD_CHOICE, .choices = isolations},
	{"runtime", GP_FIELD_TEXT, .hi = GP_STORE_RUNTIME_MAX - 1},
	{"time_limit_s", GP_FIELD_UINT, false, 0, GP_TIME_LIMIT_MAX_S},
	{NULL},
};

static const struct gp_field task_fields[] = {
	{"name", GP_FIELD_NAME},
	{"command", GP_FIELD_COMMAND, .required = true},
	{"template", GP_FIELD_NAME},
	{"mem_mib", GP_FIELD_UINT, false, 1, MEM_MIB_MAX},
	{"compute_pct", GP_FIELD_UINT, false, 1, 100},
	{"devices", GP_FIELD_UINT, false, 1, DEVICES_MAX},
	{"whole", GP_FIELD_BOOL},
	{"exclusive", GP_FIELD_BOOL},
	{"mixed_models", GP_FIELD_BOOL},
	{"isolation", GP_FIELD_CHOICE, .choices = isolations},
	{"priority", GP_FIELD_UINT, false, 0, 9},
	{"kind", GP_FIELD_CHOICE, .choices = kinds},
	{"model", GP_FIELD_TEXT, .hi = GP_STORE_NAME_MAX - 1},
	{"runtime", GP_FIELD_TEXT, .hi = GP_STORE_RUNTIME_MAX - 1},
	{"workdir", GP_FIELD_TEXT, .hi = GP_WORKDIR_MAX - 1},
	{"env", GP_FIELD_ENV},
	{"on_memory_growth", GP_FIELD_CHOICE, .choices = memory_policies},
	{"await_cards", GP_FIELD_BOOL},
	/* The job options (issue 27; docs/api.md). */
	{"mem_pct", GP_FIELD_UINT, false, 1, 100},
	{"time_limit_s", GP_FIELD_UINT, false, 0, GP_TIME_LIMIT_MAX_S},
	{"after", GP_FIELD_TEXT, .hi = GP_AFTER_TEXT - 1},
	{"array", GP_FIELD_TEXT, .hi = 15},
	{NULL},
};

static const struct gp_field task_set_fields[] = {
	{"compute_pct", GP_FIELD_UINT, false, 1, 100},
	{"priority", GP_FIELD_UINT, false, 0, 9},
	{"reason", GP_FIELD_TEXT, .hi = 200},
	{NULL},
};

static void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

/* ---- callers ---------------------------------------------------------- */

/* Fills *me with the tenant whose token came with the request. */
static bool caller(struct gp_api *api, const struct gp_http_request *req,
		   struct gp_http_reply *ret, struct gp_tenant *me)
{
	int r;

	if (!req->token) {
		gp_http_error(
			ret, 401,
			"no token: send the header \"Authorization: Bearer TOKEN\" (the "
			"gpupool command reads $GPUPOOL_TOKEN or --token-file)");
		return false;
	}
	r = gp_store_tenant_by_token(api->store, req->token, me);
	if (r == -ENOENT || r == -EINVAL) {
		ret->token = GP_HTTP_TOKEN_UNKNOWN;
		gp_http_error(ret, 401,
			      "unknown token: ask the admin for your tenant's token");
		return false;
	}
	if (r == 0)
		ret->token = GP_HTTP_TOKEN_GOOD;
	return r < 0 ? store_failed(api, ret, r, "token") : true;
}

static bool caller_admin(struct gp_api *api, const struct gp_http_request *req,
			 struct gp_http_reply *ret, struct gp_tenant *me,
			 const char *what)
{
	if (!caller(api, req, ret, me))
		return false;
	if (me->admin)
		return true;
	gp_http_error(ret, 403, "only the admin may %s", what);
	return false;
}

/* Appends an audit row for a write that succeeded. */
static bool audit(struct gp_api *api, struct gp_http_reply *ret, const char *who,
		  const char *action, const char *object, const char *detail)
{
	int r = gp_store_audit(api->store, who, action, object, detail);

	if (r == 0)
		return true;
	gp_http_error(ret, 500, "%s %s was done, but its audit row was not written: %s",
		      action, object, gp_store_error(api->store));
	return false;
}

/* ---- health ----------------------------------------------------------- */

static void health(void *ctx, const struct gp_http_request *req,
		   struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	int v = gp_store_schema_version(api->store);

	(void)req;
	if (v < 0)
		store_failed(api, ret, v, "health");
	else
		gp_http_json(ret, 200, json_pack("{s:b, s:i}", "ok", 1, "schema", v));
}

/* ---- tenants ---------------------------------------------------------- */

/* The body's "user", if given, into t->user: "" (automatic), or a spec
 * that names a user (and group) of this machine other than root. */
static bool user_from_body(json_t *body, struct gp_tenant *t, struct gp_http_reply *ret)
{
	const char *spec = gp_field_string(body, "user", NULL);
	struct gp_user u;
	char why[WHY_MAX];
	int r;

	if (!spec)
		return true;
	r = *spec ? gp_user_resolve(spec, &u, why, sizeof(why)) : 0;
	if (r == -EINVAL || r == -ENOENT || r == -ENAMETOOLONG) {
		gp_http_error(ret, 400, "field \"user\": %s", why);
		return false;
	}
	if (r < 0) {
		gp_http_error(ret, 500, "field \"user\": %s", why);
		return false;
	}
	copy(t->user, sizeof(t->user), spec);
	return true;
}

/* "automatic", or the spec quoted, for audit rows. */
static const char *user_text(const char *spec, char *buf, size_t size)
{
	if (!*spec)
		return "automatic";
	snprintf(buf, size, "\"%s\"", spec);
	return buf;
}

/* The text of an RFC 3339 UTC time, for messages. */
static const char *time_text(int64_t unix_s, char *buf, size_t size)
{
	json_auto_t *v = time_json(unix_s);

	snprintf(buf, size, "%s", json_is_string(v) ? json_string_value(v) : "-");
	return buf;
}

/* A new tenant's name is none the server signs its own rows with. */
static bool name_not_reserved(const char *name, struct gp_http_reply *ret)
{
	for (size_t i = 0; reserved_names[i]; i++)
		if (!strcasecmp(name, reserved_names[i])) {
			gp_http_error(
				ret, 400,
				"field \"name\": the name \"%s\" is reserved: the server "
				"signs its own audit rows with such names, and a tenant "
				"so named would pass for the server or the admin; pick "
				"another name",
				name);
			return false;
		}
	return true;
}

/* 409 for a name that is taken: by a tenant, or by one removed (whose
 * tasks, records and audit rows keep the name). */
static void name_taken(struct gp_api *api, struct gp_http_reply *ret, const char *name)
{
	struct gp_tenant old;
	char when[32];

	if (gp_store_tenant_by_name(api->store, name, &old) == 0 && old.removed)
		gp_http_error(
			ret, 409,
			"tenant \"%s\" was removed on %s; its tasks, usage records and "
			"audit rows keep the name, so it is not given again: pick another "
			"name",
			name, time_text(old.removed, when, sizeof(when)));
	else
		gp_http_error(ret, 409, "tenant \"%s\" exists; pick another name", name);
}

/* A tenant's quota is given, or "unlimited": true says it has none (no
 * limit, nothing guaranteed): never unlimited by accident. */
static bool quota_explicit(json_t *body, struct gp_http_reply *ret)
{
	bool quota = false, unlimited = gp_field_bool(body, "unlimited");

	for (int i = 0; i < 4; i++)
		quota |= gp_field_has(body, quota_names[i]);
	if (quota != unlimited)
		return true;
	if (quota)
		gp_http_error(ret, 400, "field \"unlimited\": true cannot go with a quota; give one "
					"or the other");
	else
		gp_http_error(ret, 400, "a tenant needs a quota: give \"mem_guaranteed_mib\" and "
					"\"compute_guaranteed_pct\" (what it is sure to get; with "
					"\"mem_borrowable_mib\" and \"compute_borrowable_pct\", what "
					"it may borrow), or \"unlimited\": true for no limit and "
					"nothing guaranteed (all it holds may be taken back)");
	return false;
}

static void tenant_add(void *ctx, const struct gp_http_request *req,
		       struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me, t = {0};
	char token[GP_TOKEN_HEX + 1], detail[GP_REASON_MAX], user[GP_USER_SPEC_MAX + 2];
	json_auto_t *body = NULL;
	json_t *out;
	int r;

	if (!caller_admin(api, req, ret, &me, "add tenants") ||
	    !gp_fields_parse(req, tenant_fields, ret, &body) ||
	    !name_not_reserved(gp_field_string(body, "name", ""), ret) ||
	    !quota_explicit(body, ret) || !user_from_body(body, &t, ret))
		return;
	copy(t.name, sizeof(t.name), gp_field_string(body, "name", ""));
	t.mem_guaranteed_mib = gp_field_uint(body, "mem_guaranteed_mib", 0);
	t.mem_borrowable_mib = gp_field_uint(body, "mem_borrowable_mib", 0);
	t.compute_guaranteed_pct =
		(unsigned)gp_field_uint(body, "compute_guaranteed_pct", 0);
	t.compute_borrowable_pct =
		(unsigned)gp_field_uint(body, "compute_borrowable_pct", 0);
	t.priority_max = (unsigned)gp_field_uint(body, "priority_max",
						 GP_TENANT_PRIORITY_MAX_DEFAULT);
	r = gp_store_tenant_add(api->store, &t, token);
	if (r == -EEXIST) {
		name_taken(api, ret, t.name);
		return;
	}
	if (r < 0) {
		store_failed(api, ret, r, "adding the tenant");
		return;
	}
	gp_pool_tenant_put(api->pool, &t);
	snprintf(detail, sizeof(detail),
		 "memory %llu+%llu MiB, compute %u+%u %%, priority up to %u, user %s",
		 (unsigned long long)t.mem_guaranteed_mib,
		 (unsigned long long)t.mem_borrowable_mib, t.compute_guaranteed_pct,
		 t.compute_borrowable_pct, t.priority_max, user_text(t.user, user, sizeof(user)));
	if (!audit(api, ret, me.name, "tenant.add", t.name, detail))
		return;
	out = tenant_user_json(&t);
	json_object_set_new(out, "model_quotas", json_array());
	json_object_set_new(out, "token", json_string(token));
	gp_http_json(ret, 201, out);
}

/* Gives each tenant of list what its running tasks hold ("in_use") and
 * its "model_quotas" (tenant < 0: all may have some; else only that
 * one's are read). */
static int quotas_add(struct gp_api *api, int64_t tenant, json_t *list)
{
	const struct gp_meter *m = api->loop ? gp_loop_meter(api->loop) : NULL;
	struct gp_model_quota *all = NULL;
	json_t *t;
	size_t i;
	int n = 0, r = gp_store_model_quota_list(api->store, tenant, &all, &n);

	json_array_foreach(list, i, t) {
		json_int_t id = json_integer_value(json_object_get(t, "id"));
		uint64_t mem = 0, pct = 0;

		if (m)
			gp_meter_tenant_use(m, id, &mem, &pct);
		json_object_set_new(t, "in_use", gp_api_use_json(m, mem, pct));
		json_object_set_new(t, "model_quotas",
				    gp_api_model_quotas_json(api, all, n, id));
	}
	free(all);
	return r;
}

static void tenant_list(void *ctx, const struct gp_http_request *req,
			struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me, *all = NULL;
	json_t *list = json_array();
	int n = 0, r = 0;

	if (!caller(api, req, ret, &me)) {
		json_decref(list);
		return;
	}
	if (me.admin)
		r = gp_store_tenant_list(api->store, &all, &n);
	else
		json_array_append_new(list, tenant_user_json(&me));
	for (int i = 0; i < n; i++)
		if (!all[i].removed)
			json_array_append_new(list, tenant_user_json(&all[i]));
	free(all);
	if (r == 0)
		r = quotas_add(api, me.admin ? -1 : me.id, list);
	if (r < 0) {
		json_decref(list);
		store_failed(api, ret, r, "listing tenants");
		return;
	}
	gp_http_json(ret, 200, json_pack("{s:o}", "tenants", list));
}

/* A tenant removed: 404, saying so. */
static bool tenant_removed(const struct gp_tenant *t, struct gp_http_reply *ret)
{
	char when[32];

	gp_http_error(ret, 404,
		      "tenant \"%s\" was removed on %s; its tasks and bills are kept "
		      "(gpupool task ls --tenant %s, gpupool bill --tenant %s)",
		      t->name, time_text(t->removed, when, sizeof(when)), t->name,
		      t->name);
	return false;
}

/* The tenant named in /v1/tenants/NAME[/...]; false with 404 in ret if
 * there is none, or it was removed. */
static bool tenant_target(struct gp_api *api, const struct gp_http_request *req,
			  struct gp_http_reply *ret, struct gp_tenant *t)
{
	const char *rest = req->path + strlen(TENANTS_PATH);
	char name[GP_STORE_NAME_MAX + 1];
	int r;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(rest, "/"), rest);
	r = gp_field_is_name(name) ? gp_store_tenant_by_name(api->store, name, t)
				   : -ENOENT;
	if (r == -ENOENT || r == -EINVAL) {
		gp_http_error(ret, 404,
			      "no tenant \"%.64s\" (gpupool tenant ls lists them)", name);
		return false;
	}
	if (r < 0)
		return store_failed(api, ret, r, "finding the tenant");
	return t->removed ? tenant_removed(t, ret) : true;
}

/* Appends to detail (of size bytes, *len used), cutting what does not fit. */
static void detail_add(char *detail, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void detail_add(char *detail, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(detail + *len, size - *len, fmt, ap);
	va_end(ap);
	*len = n < 0 || (size_t)n >= size - *len ? size : *len + (size_t)n;
}

/* Applies the body's quota fields to t, each given one said in detail
 * ("name old -> new"); true when any was given. */
static bool quota_changes(json_t *body, struct gp_tenant *t, char *detail, size_t size,
			  size_t *len)
{
	uint64_t v[] = {t->mem_guaranteed_mib, t->mem_borrowable_mib,
			t->compute_guaranteed_pct, t->compute_borrowable_pct, t->priority_max};
	bool any = false;

	for (int i = 0; quota_names[i]; i++) {
		uint64_t now = gp_field_uint(body, quota_names[i], v[i]);

		if (!gp_field_has(body, quota_names[i]))
			continue;
		detail_add(detail, size, len, "%s%s %llu -> %llu", *len ? "; " : "",
			   quota_names[i], (unsigned long long)v[i],
			   (unsigned long long)now);
		v[i] = now;
		any = true;
	}
	t->mem_guaranteed_mib = v[0];
	t->mem_borrowable_mib = v[1];
	t->compute_guaranteed_pct = (unsigned)v[2];
	t->compute_borrowable_pct = (unsigned)v[3];
	t->priority_max = (unsigned)v[4];
	return any;
}

/* The change to tenant t, its audit row and the quota and user writes: one
 * transaction. */
static int tenant_write(struct gp_api *api, const char *who, const struct gp_tenant *t,
			bool quota, bool user, const char *detail)
{
	int r = gp_store_begin(api->store);

	if (r == 0 && quota)
		r = gp_store_tenant_set_quota(api->store, t);
	if (r == 0 && user)
		r = gp_store_tenant_set_user(api->store, t);
	if (r == 0)
		r = gp_store_audit(api->store, who, "tenant.set", t->name, detail);
	if (r == 0)
		r = gp_store_commit(api->store);
	if (r < 0)
		gp_store_rollback(api->store);
	return r;
}

/* Answers with tenant t as GET /v1/tenants shows it. */
static void tenant_reply(struct gp_api *api, struct gp_http_reply *ret,
			 const struct gp_tenant *t)
{
	json_t *list = json_array();
	int r;

	json_array_append_new(list, tenant_user_json(t));
	r = quotas_add(api, t->id, list);
	if (r < 0)
		store_failed(api, ret, r, "listing the model quotas");
	else
		gp_http_json(ret, 200, json_incref(json_array_get(list, 0)));
	json_decref(list);
}

static void tenant_set(void *ctx, const struct gp_http_request *req,
		       struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me, t;
	char detail[GP_REASON_MAX] = "", from[GP_USER_SPEC_MAX + 2],
	     to[GP_USER_SPEC_MAX + 2];
	char old_user[GP_USER_SPEC_MAX];
	json_auto_t *body = NULL;
	bool quota, user;
	size_t len = 0;
	int r;

	if (!caller_admin(api, req, ret, &me, "change tenants") ||
	    !tenant_target(api, req, ret, &t) ||
	    !gp_fields_parse(req, tenant_set_fields, ret, &body))
		return;
	if (!json_object_size(body)) {
		gp_http_error(ret, 400,
			      "give what to change: \"user\", \"mem_guaranteed_mib\", "
			      "\"mem_borrowable_mib\", \"compute_guaranteed_pct\", "
			      "\"compute_borrowable_pct\" or \"priority_max\"");
		return;
	}
	copy(old_user, sizeof(old_user), t.user);
	if (!user_from_body(body, &t, ret))
		return;
	user = gp_field_has(body, "user");
	if (user)
		detail_add(detail, sizeof(detail), &len, "user %s -> %s",
			   user_text(old_user, from, sizeof(from)),
			   user_text(t.user, to, sizeof(to)));
	quota = quota_changes(body, &t, detail, sizeof(detail), &len);
	r = tenant_write(api, me.name, &t, quota, user, detail);
	if (r < 0) {
		store_failed(api, ret, r, "changing the tenant");
		return;
	}
	gp_pool_tenant_put(api->pool, &t);
	tenant_reply(api, ret, &t);
}

/* "2 tasks kept ...; model quotas removed: T4, A100", for tenant t's
 * removal's audit row. */
static int removal_detail(struct gp_api *api, const struct gp_tenant *t, int tasks,
			  char *detail, size_t size)
{
	struct gp_model_quota *q = NULL;
	size_t len = 0;
	int n = 0, r = gp_store_model_quota_list(api->store, t->id, &q, &n);

	detail[0] = '\0';
	detail_add(detail, size, &len,
		   "%d tasks kept, with their usage records and bills", tasks);
	for (int i = 0; i < n; i++)
		detail_add(detail, size, &len, "%s%s",
			   i ? ", " : "; model quotas removed: ", q[i].model);
	free(q);
	return r;
}

/* The tenant's removal, once none of its tasks is queued or running, and
 * its audit row: one transaction. 409 in ret when some are. */
static int tenant_remove_write(struct gp_api *api, const char *who,
			       const struct gp_tenant *t, struct gp_http_reply *ret)
{
	char detail[GP_REASON_MAX];
	int queued = 0, running = 0, tasks = 0, r = gp_store_begin(api->store);

	if (r == 0)
		r = gp_store_tenant_task_counts(api->store, t->id, &queued, &running,
						&tasks);
	if (r == 0 && (queued || running)) {
		gp_store_rollback(api->store);
		gp_http_error(
			ret, 409,
			"tenant \"%s\" has %d queued and %d running tasks; cancel them "
			"(gpupool task cancel ID..., as the admin or the tenant) or wait "
			"for them to end, then remove it",
			t->name, queued, running);
		return -EBUSY;
	}
	if (r == 0)
		r = removal_detail(api, t, tasks, detail, sizeof(detail));
	if (r == 0)
		r = gp_store_tenant_remove(api->store, t->id);
	if (r == 0)
		r = gp_store_audit(api->store, who, "tenant.remove", t->name, detail);
	if (r == 0)
		r = gp_store_commit(api->store);
	if (r < 0)
		gp_store_rollback(api->store);
	return r;
}

static void tenant_remove(void *ctx, const struct gp_http_request *req,
			  struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me, t;
	json_t *out;
	int r;

	if (!caller_admin(api, req, ret, &me, "remove tenants") ||
	    !tenant_target(api, req, ret, &t))
		return;
	if (t.admin) {
		gp_http_error(
			ret, 409,
			"the admin tenant cannot be removed: the pool needs it (to "
			"replace its token, POST /v1/tenants/%s/token: gpupool tenant "
			"token %s)",
			t.name, t.name);
		return;
	}
	r = tenant_remove_write(api, me.name, &t, ret);
	if (r == -EBUSY)
		return;
	if (r < 0) {
		store_failed(api, ret, r, "removing the tenant");
		return;
	}
	if (gp_store_tenant_by_name(api->store, t.name, &t) < 0)
		t.removed = time(NULL);
	gp_pool_tenant_put(api->pool, &t);
	gp_pool_model_quotas_put(api->pool, t.id, NULL, 0);
	out = tenant_user_json(&t);
	json_object_set_new(out, "removed", time_json(t.removed));
	gp_http_json(ret, 200, out);
}

/* Writes token to path (made 0600, or truncated), synced. */
static int token_file_write(const char *path, const char *token)
{
	char line[GP_TOKEN_HEX + 2];
	size_t len = (size_t)snprintf(line, sizeof(line), "%s\n", token);
	int r = 0,
	    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0600) < 0 || write(fd, line, len) != (ssize_t)len || fsync(fd) < 0)
		r = errno ? -errno : -EIO;
	close(fd);
	return r;
}

/* The admin's new token goes to its token file too, where the clients of
 * the server's own user find it: written beside it first (PATH.new), then
 * renamed over it once the store has committed. */
struct token_file {
	char path[PATH_MAX], next[PATH_MAX + 8];
	bool used;
};

/* A new token for t and its audit row, one transaction; for the admin
 * with a token file, the file first. 500 in ret when it fails. */
static bool token_rotate(struct gp_api *api, const struct gp_tenant *me,
			 const struct gp_tenant *t, struct token_file *file, char *token,
			 struct gp_http_reply *ret)
{
	int r = gp_store_begin(api->store);

	file->used = t->admin && api->admin_token_file[0];
	if (r == 0)
		r = gp_store_tenant_token_new(api->store, t->id, token);
	if (r == 0)
		r = gp_store_audit(api->store, me->name, "tenant.token", t->name,
				   "a new token; the one before no longer works");
	if (r == 0 && file->used) {
		snprintf(file->path, sizeof(file->path), "%s", api->admin_token_file);
		snprintf(file->next, sizeof(file->next), "%s.new", file->path);
		r = token_file_write(file->next, token);
		if (r < 0) {
			gp_store_rollback(api->store);
			unlink(file->next);
			gp_http_error(
				ret, 500,
				"cannot write the admin's new token to %s: %s; the token "
				"was not changed",
				file->next, strerror(-r));
			return false;
		}
	}
	if (r == 0)
		r = gp_store_commit(api->store);
	if (r < 0) {
		gp_store_rollback(api->store);
		if (file->used)
			unlink(file->next);
		return store_failed(api, ret, r, "changing the token");
	}
	return true;
}

static void tenant_token(void *ctx, const struct gp_http_request *req,
			 struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me, t;
	struct token_file file = {0};
	char token[GP_TOKEN_HEX + 1];
	json_t *out;
	int err = 0;

	if (!caller(api, req, ret, &me) || !tenant_target(api, req, ret, &t))
		return;
	if (!me.admin && me.id != t.id) {
		gp_http_error(ret, 403,
			      "a tenant may rotate only its own token (POST "
			      "/v1/tenants/%s/token); ask the admin for another's",
			      me.name);
		return;
	}
	if (!token_rotate(api, &me, &t, &file, token, ret))
		return;
	out = tenant_user_json(&t);
	json_object_set_new(out, "token", json_string(token));
	if (file.used && rename(file.next, file.path) < 0)
		err = errno;
	if (file.used && !err)
		json_object_set_new(out, "token_file", json_string(file.path));
	else if (file.used)
		json_object_set_new(
			out, "warning",
			json_sprintf(
				"the new token is in %s, but it could not replace %s "
				"(%s): move it there, or the clients that read that file "
				"are refused",
				file.next, file.path, strerror(err)));
	gp_http_json(ret, 200, out);
}

/* ---- templates -------------------------------------------------------- */

static void template_add(void *ctx, const struct gp_http_request *req,
			 struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_template t = {0};
	char detail[GP_REASON_MAX], why[WHY_MAX];
	json_auto_t *body = NULL;
	int r;

	if (!caller_admin(api, req, ret, &me, "add templates") ||
	    !gp_fields_parse(req, template_fields, ret, &body))
		return;
	copy(t.name, sizeof(t.name), gp_field_string(body, "name", ""));
	copy(t.models, sizeof(t.models), gp_field_string(body, "models", ""));
	t.mem_mib = gp_field_uint(body, "mem_mib", 0);
	t.compute_pct = (unsigned)gp_field_uint(body, "compute_pct", 0);
	t.hard = strcmp(gp_field_string(body, "isolation", "hard"), "hard") == 0;
	copy(t.runtime, sizeof(t.runtime), gp_field_string(body, "runtime", ""));
	t.time_limit_s = gp_field_uint(body, "time_limit_s", 0);
	if (t.runtime[0] && !gp_runtime_is_one(t.runtime, why, sizeof(why))) {
		gp_http_error(ret, 400, "field \"runtime\": %s", why);
		return;
	}
	r = gp_store_template_add(api->store, &t);
	if (r == -EEXIST) {
		gp_http_error(ret, 409, "template \"%s\" exists; pick another name",
			      t.name);
		return;
	}
	if (r < 0) {
		store_failed(api, ret, r, "adding the template");
		return;
	}
	snprintf(detail, sizeof(detail), "%llu MiB, %u %%, %s, models \"%s\", runtime \"%s\", "
		 "time limit %llu s", (unsigned long long)t.mem_mib, t.compute_pct,
		 t.hard ? "hard" : "shared", t.models, t.runtime,
		 (unsigned long long)t.time_limit_s);
	if (audit(api, ret, me.name, "template.add", t.name, detail))
		gp_http_json(ret, 201, template_json(&t));
}

static void template_list(void *ctx, const struct gp_http_request *req,
			  struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_template *all = NULL;
	json_t *list;
	int n = 0, r;

	if (!caller(api, req, ret, &me))
		return;
	r = gp_store_template_list(api->store, &all, &n);
	if (r < 0) {
		store_failed(api, ret, r, "listing templates");
		return;
	}
	list = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(list, template_json(&all[i]));
	free(all);
	gp_http_json(ret, 200, json_pack("{s:o}", "templates", list));
}

static void template_remove(void *ctx, const struct gp_http_request *req,
			    struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_template t;
	const char *name = req->path + strlen(TEMPLATES_PATH);
	char detail[GP_REASON_MAX];
	int r;

	if (!caller_admin(api, req, ret, &me, "remove templates"))
		return;
	r = gp_field_is_name(name) ? gp_store_template_by_name(api->store, name, &t)
				   : -ENOENT;
	if (r == -ENOENT) {
		gp_http_error(ret, 404,
			      "no template \"%.64s\" (gpupool template ls lists them)",
			      name);
		return;
	}
	if (r < 0) {
		store_failed(api, ret, r, "finding the template");
		return;
	}
	snprintf(detail, sizeof(detail),
		 "was %llu MiB, %u %%, %s, models \"%s\"; tasks keep the slice they took",
		 (unsigned long long)t.mem_mib, t.compute_pct, t.hard ? "hard" : "shared",
		 t.models);
	r = gp_store_begin(api->store);
	if (r == 0)
		r = gp_store_template_remove(api->store, t.id);
	if (r == 0)
		r = gp_store_audit(api->store, me.name, "template.remove", t.name,
				   detail);
	if (r == 0)
		r = gp_store_commit(api->store);
	if (r < 0) {
		gp_store_rollback(api->store);
		store_failed(api, ret, r, "removing the template");
		return;
	}
	gp_http_json(ret, 200, template_json(&t));
}

/* ---- tasks: names and loading ----------------------------------------- */

/* The tenants, to name the owner of each task. */
struct tenant_names {
	struct gp_tenant *all;
	int n;
};

static void names_release(struct tenant_names *names)
{
	free(names->all);
}

static const char *tenant_name(const struct tenant_names *names, int64_t id)
{
	for (int i = 0; i < names->n; i++)
		if (names->all[i].id == id)
			return names->all[i].name;
	return "";
}

static bool names_load(struct gp_api *api, struct gp_http_reply *ret,
		       struct tenant_names *names)
{
	int r = gp_store_tenant_list(api->store, &names->all, &names->n);

	return r < 0 ? store_failed(api, ret, r, "listing tenants") : true;
}

/* The task `id`, if the caller may see it: 404, or 403 for another's. */
static bool task_load(struct gp_api *api, const struct gp_tenant *me, int64_t id,
		      struct gp_http_reply *ret, struct gp_task *t)
{
	int r = gp_store_task_get(api->store, id, t);

	/* Being started: shown once its process group is known. */
	if (r == 0 && t->state == GP_TASK_RUNNING && !t->pid &&
	    gp_loop_start_wait(api->loop, id))
		r = gp_store_task_get(api->store, id, t);

	if (r == -ENOENT) {
		gp_http_error(ret, 404, "no task %lld", (long long)id);
		return false;
	}
	if (r < 0)
		return store_failed(api, ret, r, "reading the task");
	if (me->admin || t->tenant == me->id)
		return true;
	gp_http_error(ret, 403, "task %lld belongs to another tenant", (long long)id);
	return false;
}

/* Gives the task object o its declared variables, "env", from the store. */
static bool task_env_add(struct gp_api *api, int64_t id, json_t *o,
			 struct gp_http_reply *ret)
{
	char *text = NULL;
	json_t *env;
	int r = gp_store_task_env_get(api->store, id, &text);

	if (r < 0)
		return store_failed(api, ret, r, "reading the task's env");
	env = json_loads(text, 0, NULL);
	free(text);
	if (!json_is_object(env)) {
		json_decref(env);
		gp_http_error(ret, 500, "task %lld: its stored env is not a JSON object",
			      (long long)id);
		return false;
	}
	json_object_set_new(o, "env", env);
	return true;
}

/* One task, with its env; the caller's own name for its task, the admin
 * looks names up. */
static void task_reply(struct gp_api *api, const struct gp_tenant *me,
		       struct gp_http_reply *ret, unsigned status,
		       const struct gp_task *t)
{
	struct tenant_names names = {0};
	json_t *o;

	if (t->tenant == me->id) {
		o = task_json(t, me->name);
	} else if (names_load(api, ret, &names)) {
		o = task_json(t, tenant_name(&names, t->tenant));
		names_release(&names);
	} else {
		return;
	}
	if (task_env_add(api, t->id, o, ret))
		gp_http_json(ret, status, o);
	else
		json_decref(o);
}

static bool is_ended(enum gp_task_state s)
{
	return s == GP_TASK_SUCCEEDED || s == GP_TASK_FAILED || s == GP_TASK_CANCELLED ||
	       s == GP_TASK_LOST;
}

/* ---- tasks: submitting ------------------------------------------------ */

static bool put(char *buf, size_t size, size_t *len, const char *text)
{
	size_t n = strlen(text);

	if (*len + n >= size)
		return false;
	memcpy(buf + *len, text, n + 1);
	*len += n;
	return true;
}

/* Appends arg for /bin/sh: as it is when plain, else in single quotes. */
static bool put_quoted(char *buf, size_t size, size_t *len, const char *arg)
{
	char one[2] = "";

	if (*arg && strspn(arg, SHELL_PLAIN_CHARS) == strlen(arg))
		return put(buf, size, len, arg);
	if (!put(buf, size, len, "'"))
		return false;
	for (; *arg; arg++) {
		one[0] = *arg;
		if (!put(buf, size, len, *arg == '\'' ? "'\\''" : one))
			return false;
	}
	return put(buf, size, len, "'");
}

/* A command string as it is; an argument array quoted into one. */
static bool command_text(json_t *v, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	if (json_is_string(v))
		return put(buf, size, &len, json_string_value(v));
	for (size_t i = 0; i < json_array_size(v); i++) {
		if ((i && !put(buf, size, &len, " ")) ||
		    !put_quoted(buf, size, &len, json_string_value(json_array_get(v, i))))
			return false;
	}
	return true;
}

/* A task without a name is named after its program: "python" for
 * "/usr/bin/python train.py". */
static void default_name(const char *command, char *name, size_t size)
{
	size_t start = 0, end = strcspn(command, " \t'");

	for (size_t i = 0; i < end; i++)
		if (command[i] == '/')
			start = i + 1;
	snprintf(name, size, "%.*s", (int)(end - start), command + start);
	for (char *p = name; *p; p++)
		if (!strchr(GP_FIELD_NAME_CHARS, *p))
			*p = '-';
	if (!gp_field_is_name(name))
		snprintf(name, size, "task");
}

/* The declared variables of a submission: their text for the store
 * (NULL when none were declared) and the names, for the audit row. */
static int task_env_text(json_t *body, char **ret_text, char *names, size_t size)
{
	json_t *env = json_object_get(body, "env"), *v;
	const char *name;
	size_t len = 0;

	*ret_text = NULL;
	names[0] = '\0';
	if (!json_object_size(env))
		return 0;
	json_object_foreach(env, name, v)
		detail_add(names, size, &len, "%s%s", len ? ", " : "; env ", name);
	*ret_text = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);
	return *ret_text ? 0 : -ENOMEM;
}

/* The slice from the template named in the body, if any. */
static bool task_template(struct gp_api *api, json_t *body, struct gp_task *t,
			  struct gp_http_reply *ret)
{
	const char *name = gp_field_string(body, "template", NULL);
	struct gp_template tpl;
	int r;

	if (!name)
		return true;
	r = gp_store_template_by_name(api->store, name, &tpl);
	if (r == -ENOENT) {
		gp_http_error(ret, 400,
			      "field \"template\": no template \"%s\" (GET /v1/templates "
			      "lists them)",
			      name);
		return false;
	}
	if (r < 0)
		return store_failed(api, ret, r, "reading the template");
	t->mem_mib = tpl.mem_mib;
	t->compute_pct = tpl.compute_pct;
	t->hard = tpl.hard;
	t->time_limit_s = tpl.time_limit_s;
	copy(t->runtime, sizeof(t->runtime), tpl.runtime);
	copy(t->template_name, sizeof(t->template_name), tpl.name);
	if (strlen(tpl.models) < sizeof(t->model))
		copy(t->model, sizeof(t->model), tpl.models);
	return true;
}

/* "whole": true gives a task all of each device: a slice given with it
 * contradicts it, and is refused rather than dropped. */
static bool whole_alone(json_t *body, struct gp_http_reply *ret)
{
	static const char *const slice[] = {"mem_mib", "mem_pct", "compute_pct", "template",
					    NULL};

	for (size_t i = 0; gp_field_bool(body, "whole") && slice[i]; i++)
		if (gp_field_has(body, slice[i])) {
			gp_http_error(
				ret, 400,
				"field \"%s\" cannot go with \"whole\": true (a whole "
				"device gives the task all its memory and compute); leave "
				"one of them out",
				slice[i]);
			return false;
		}
	return true;
}

/* Memory is given one way: MiB, or a percent of the card. */
static bool mem_one_way(json_t *body, struct gp_http_reply *ret)
{
	if (!gp_field_has(body, "mem_mib") || !gp_field_has(body, "mem_pct"))
		return true;
	gp_http_error(ret, 400, "field \"mem_pct\" cannot go with \"mem_mib\": give the memory "
				"in MiB or as a percent of the card, not both");
	return false;
}

/* The slice: a template, then mem_mib (or mem_pct) and compute_pct over
 * it; a whole device needs neither. */
static bool task_slice(struct gp_api *api, json_t *body, struct gp_task *t,
		       struct gp_http_reply *ret)
{
	t->hard = true;
	if (!whole_alone(body, ret) || !task_template(api, body, t, ret))
		return false;
	t->whole = gp_field_bool(body, "whole");
	if (!mem_one_way(body, ret))
		return false;
	t->mem_mib = gp_field_uint(body, "mem_mib", t->mem_mib);
	t->mem_pct = (unsigned)gp_field_uint(body, "mem_pct", 0);
	if (t->mem_pct) /* a percent of its card's: its MiB once placed (loop.h) */
		t->mem_mib = 0;
	t->compute_pct = (unsigned)gp_field_uint(body, "compute_pct", t->compute_pct);
	if (t->whole) {
		t->mem_mib = 0; /* all of it */
		t->compute_pct = 100;
	}
	if (!t->mem_mib && !t->mem_pct && !t->whole) {
		gp_http_error(ret, 400,
			      "field \"mem_mib\" is required (or give \"mem_pct\", \"template\", "
			      "or \"whole\": true)");
		return false;
	}
	if (!t->compute_pct) {
		gp_http_error(ret, 400,
			      "field \"compute_pct\" is required (or give \"template\", "
			      "or \"whole\": true)");
		return false;
	}
	if (gp_field_has(body, "isolation"))
		t->hard = strcmp(gp_field_string(body, "isolation", "hard"), "hard") == 0;
	t->restart_on_growth =
		strcmp(gp_field_string(body, "on_memory_growth", "alert"), "restart") == 0;
	return true;
}

/* A priority the caller may give its tasks: up to its bound, which the
 * admin sets (403 naming it otherwise). */
static bool priority_allowed(const struct gp_tenant *me, unsigned priority,
			     struct gp_http_reply *ret)
{
	if (priority <= me->priority_max)
		return true;
	gp_http_error(ret, 403,
		      "field \"priority\": %u is above %u, the highest priority tenant \"%s\" "
		      "may give its tasks; ask the admin to raise it (gpupool tenant set %s "
		      "--priority-max N)",
		      priority, me->priority_max, me->name, me->name);
	return false;
}

/* The tasks it waits for ("after"), each checked (depend.h) and the list
 * stored as the parser writes it. */
static bool task_after(struct gp_api *api, json_t *body, const struct gp_tenant *me,
		       struct gp_task *t, struct gp_http_reply *ret)
{
	const char *text = gp_field_string(body, "after", NULL);
	struct gp_after dep[GP_AFTER_MAX];
	char why[WHY_MAX];
	int n, r;

	if (!text)
		return true;
	r = gp_depend_check(api->store, text, me->id, me->admin, why, sizeof(why));
	if (r == -EINVAL || r == -ENOENT || r == -EPERM) {
		gp_http_error(ret, 400, "field \"after\": %s", why);
		return false;
	}
	if (r < 0)
		return store_failed(api, ret, r, "reading the tasks it waits for");
	gp_parse_after(text, dep, &n);
	gp_after_text(dep, n, t->after, sizeof(t->after));
	return true;
}

bool gp_api_task_from_body(struct gp_api *api, json_t *body, const struct gp_tenant *me,
			   struct gp_task *t, struct gp_http_reply *ret)
{
	t->tenant = me->id;
	if (!command_text(json_object_get(body, "command"), t->command,
			  sizeof(t->command))) {
		gp_http_error(ret, 400,
			      "field \"command\" is over %d bytes once quoted for the "
			      "shell",
			      GP_COMMAND_MAX - 1);
		return false;
	}
	if (gp_field_has(body, "name"))
		copy(t->name, sizeof(t->name), gp_field_string(body, "name", ""));
	else
		default_name(t->command, t->name, sizeof(t->name));
	if (!task_slice(api, body, t, ret))
		return false;
	t->devices = (unsigned)gp_field_uint(body, "devices", 1);
	t->exclusive = gp_field_bool(body, "exclusive");
	t->mixed_models = gp_field_bool(body, "mixed_models");
	t->priority = (unsigned)gp_field_uint(body, "priority", PRIORITY_DEFAULT);
	if (gp_field_has(body, "priority") && !priority_allowed(me, t->priority, ret))
		return false;
	if (t->priority > me->priority_max) /* the default, over a lower bound */
		t->priority = me->priority_max;
	copy(t->kind, sizeof(t->kind), gp_field_string(body, "kind", "batch"));
	if (gp_field_has(body, "model")) /* over the template's models */
		copy(t->model, sizeof(t->model), gp_field_string(body, "model", ""));
	if (gp_field_has(body, "runtime")) /* over the template's */
		copy(t->runtime, sizeof(t->runtime), gp_field_string(body, "runtime", ""));
	t->time_limit_s = gp_field_uint(body, "time_limit_s", t->time_limit_s);
	if (!task_after(api, body, me, t, ret))
		return false;
	copy(t->workdir, sizeof(t->workdir), gp_field_string(body, "workdir", ""));
	if (t->workdir[0] && t->workdir[0] != '/') {
		gp_http_error(ret, 400,
			      "field \"workdir\" must be an absolute path (it is where the task "
			      "runs, on the agent's machine)");
		return false;
	}
	copy(t->reason, sizeof(t->reason), "waiting for the scheduler");
	return true;
}

/* The queue's bounds (gp_taskops_room_for) for n more tasks: 503 with
 * why when they are hit. */
static bool queue_has_room(struct gp_api *api, const struct gp_tenant *me, unsigned n,
			   struct gp_http_reply *ret)
{
	struct gp_taskops ops = gp_api_taskops(api);
	char why[WHY_MAX];

	if (gp_taskops_room_for(&ops, me->id, me->name, n, why, sizeof(why)) == 0)
		return true;
	gp_http_error(ret, 503, "%s", why);
	return false;
}

/* With the agent, a task this machine could never hold (more devices
 * than it has, more memory than its largest device, a runtime or model
 * none of its cards has) is refused now, with the most it could ask for
 * or the cards it has; without it, the fields' static bounds hold. */
bool gp_api_task_could_fit(struct gp_api *api, struct gp_task *t, bool await_cards,
			   struct gp_http_reply *ret)
{
	const char *field = "devices";
	char why[WHY_MAX];
	int r;

	if (!api->loop)
		return true;
	r = gp_loop_task_could_fit(api->loop, t, await_cards, &field, why, sizeof(why));
	if (r == -E2BIG)
		gp_http_error(ret, 400, "field \"%s\": %s", field, why);
	else if (r < 0)
		gp_http_error(ret, 500, "checking the task against the pool: %s", strerror(-r));
	return r == 0;
}

/* A task its tenant's whole quota (guaranteed + borrowable) could never
 * hold, however idle the pool, is refused now rather than queued for
 * good: 400 naming the field and the quota. (A whole device's memory is
 * the card's, known at placement: only its compute is counted here.) */
bool gp_api_task_quota_could_hold(const struct gp_tenant *me, const struct gp_task *t,
				  struct gp_http_reply *ret)
{
	struct gp_quota q = gp_tenant_quota(me);
	unsigned devices = t->devices ? t->devices : 1;
	struct gp_quota_use need = { t->whole ? 0 : t->mem_mib * devices,
				     (uint64_t)(t->whole ? 100 : t->compute_pct) * devices };
	struct gp_quota_use most = gp_quota_limit(&q);

	if (gp_quota_within(&q, need, true))
		return true;
	gp_http_error(ret, 400,
		      "field \"%s\": tenant \"%s\" has a quota of %llu MiB and %llu %% in all "
		      "(guaranteed + borrowable); this task needs %llu MiB and %llu %%, so it "
		      "could never start: ask for less, or ask the admin to raise the quota "
		      "(gpupool tenant set %s)",
		      need.mem_mib > most.mem_mib ? "mem_mib" : "compute_pct", me->name,
		      (unsigned long long)most.mem_mib, (unsigned long long)most.compute_pct,
		      (unsigned long long)need.mem_mib, (unsigned long long)need.compute_pct,
		      me->name);
	return false;
}

/* "await_cards": queuing a task for cards the pool has none of yet is
 * the admin's choice (403 otherwise): a tenant's would wait forever. */
static bool await_allowed(json_t *body, const struct gp_tenant *me, struct gp_http_reply *ret)
{
	if (!gp_field_bool(body, "await_cards") || me->admin)
		return true;
	gp_http_error(ret, 403, "field \"await_cards\": only the admin may queue a task for cards "
				"the pool does not have");
	return false;
}

/* The indexes of a task array ("array"), into *a; a submission without
 * one is one task (a->n 1, not an array). 400 for a bad one. */
struct array {
	unsigned first, last, n;
	bool is;
};

static bool task_array(json_t *body, struct array *a, struct gp_http_reply *ret)
{
	const char *text = gp_field_string(body, "array", NULL);

	*a = (struct array){ .n = 1 };
	if (!text)
		return true;
	if (gp_parse_array(text, &a->first, &a->last) < 0) {
		gp_http_error(ret, 400,
			      "field \"array\": \"%.16s\" must be N (N tasks, indexes 0 to N-1) "
			      "or A-B (indexes A to B), at most %d tasks, indexes up to %d",
			      text, GP_ARRAY_MAX, GP_ARRAY_INDEX_MAX);
		return false;
	}
	a->n = a->last - a->first + 1;
	a->is = true;
	return true;
}

/* Stores t (an array's members, a->n of them, into ids), with the
 * submission's variables; false with the error in ret. */
static bool task_store(struct gp_api *api, const struct gp_tenant *me, json_t *body,
		       struct gp_task *t, const struct array *a, int64_t *ids,
		       struct gp_http_reply *ret)
{
	struct gp_taskops ops = gp_api_taskops(api);
	char env_names[GP_REASON_MAX], *env = NULL;
	int r;

	if (task_env_text(body, &env, env_names, sizeof(env_names)) < 0) {
		gp_http_error(ret, 500, "storing the task: out of memory");
		return false;
	}
	r = a->is ? gp_taskops_submit_array(&ops, me->name, t, a->first, a->last, env, env_names,
					    ids)
		  : gp_taskops_submit(&ops, me->name, t, env, env_names);
	free(env);
	ids[0] = t->id;
	if (r == -ENOMEM && t->id) {
		gp_http_error(ret, 500, "task %lld is stored, but the scheduler's queue could not "
					"take it (out of memory); it is scheduled after a restart",
			      (long long)t->id);
		return false;
	}
	return r < 0 ? store_failed(api, ret, r, "storing the task") : true;
}

/* 201 with the task (an array's first), its env, and an array's ids. */
static void task_submitted(const struct gp_tenant *me, json_t *body, const struct gp_task *t,
			   const struct array *a, const int64_t *ids, struct gp_http_reply *ret)
{
	json_t *out = task_json(t, me->name), *env_in = json_object_get(body, "env");

	json_object_set_new(out, "env", env_in ? json_incref(env_in) : json_object());
	if (a->is) {
		json_t *list = json_array();

		for (unsigned i = 0; i < a->n; i++)
			json_array_append_new(list, json_integer(ids[i]));
		json_object_set_new(out, "array_tasks", list);
	}
	gp_http_json(ret, 201, out);
	snprintf(ret->location, sizeof(ret->location), "/v1/tasks/%lld", (long long)t->id);
}

static void task_submit(void *ctx, const struct gp_http_request *req,
			struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_task t = {0};
	struct array a;
	json_auto_t *body = NULL;
	int64_t *ids = NULL;

	if (!caller(api, req, ret, &me) ||
	    !gp_fields_parse(req, task_fields, ret, &body) || !task_array(body, &a, ret) ||
	    !gp_api_task_from_body(api, body, &me, &t, ret) || !await_allowed(body, &me, ret) ||
	    !gp_api_task_could_fit(api, &t, gp_field_bool(body, "await_cards"), ret) ||
	    !gp_api_task_quota_could_hold(&me, &t, ret) || !queue_has_room(api, &me, a.n, ret))
		return;
	ids = calloc(a.n, sizeof(*ids));
	if (!ids)
		gp_http_error(ret, 500, "storing the task: out of memory");
	else if (task_store(api, &me, body, &t, &a, ids, ret))
		task_submitted(&me, body, &t, &a, ids, ret);
	free(ids);
}

/* ---- tasks: reading --------------------------------------------------- */

/* What GET /v1/tasks asks for: whose tasks, in which states, which page. */
struct task_query {
	int64_t tenant;	 /* < 0: every tenant's */
	unsigned states; /* GP_TASK_STATE_BIT of each; 0: any */
	long long after;
	long long limit;
};

/* The state named by the n bytes at text; -1 for none. */
static int state_named(const char *text, size_t n)
{
	for (int i = 0; state_names[i]; i++)
		if (strlen(state_names[i]) == n && !strncmp(text, state_names[i], n))
			return i;
	return -1;
}

/* ?state=S[,S...]: the states to keep. */
static bool states_from_query(const struct gp_http_request *req, unsigned *ret_states,
			      struct gp_http_reply *ret)
{
	return gp_api_query_states(req, ret_states, ret);
}

bool gp_api_query_states(const struct gp_http_request *req, unsigned *ret_states,
			 struct gp_http_reply *ret)
{
	const char *p = gp_http_query(req, "state");
	char names[128];

	*ret_states = 0;
	while (p) {
		size_t n = strcspn(p, ",");
		int state = state_named(p, n);

		if (state < 0) {
			gp_field_list(state_names, names, sizeof(names));
			gp_http_error(
				ret, 400,
				"query \"state\": \"%.*s\" is not a state; give one or "
				"more of: %s (comma-separated)",
				(int)(n < 32 ? n : 32), p, names);
			return false;
		}
		*ret_states |= GP_TASK_STATE_BIT(state);
		p = p[n] ? p + n + 1 : NULL;
	}
	return true;
}

/* ?tenant=NAME: the admin's filter (a removed tenant's tasks too); a
 * tenant may name only itself. */
static bool tenant_from_query(const struct gp_http_request *req,
			      const struct gp_tenant *me,
			      const struct tenant_names *names, int64_t *ret_tenant,
			      struct gp_http_reply *ret)
{
	return gp_api_query_tenant(req, me, names->all, names->n, ret_tenant, ret);
}

static bool task_query_parse(const struct gp_http_request *req,
			     const struct gp_tenant *me, const struct tenant_names *names,
			     struct task_query *q, struct gp_http_reply *ret)
{
	return states_from_query(req, &q->states, ret) &&
	       tenant_from_query(req, me, names, &q->tenant, ret) &&
	       gp_api_query_number(req, "after", 0, INT64_MAX, 0, &q->after, ret) &&
	       gp_api_query_number(req, "limit", 1, TASK_PAGE_MAX, TASK_PAGE, &q->limit,
				   ret);
}

/* {"tasks": [...], "next_after": ID or null}: n tasks were read for a
 * page of q->limit, one more when there are more after it. */
static json_t *task_page_json(const struct task_query *q,
			      const struct tenant_names *names, const struct gp_task *all,
			      int n)
{
	json_t *list = json_array();
	bool more = n > q->limit;

	if (more)
		n = (int)q->limit;
	for (int i = 0; i < n; i++)
		json_array_append_new(
			list, task_json(&all[i], tenant_name(names, all[i].tenant)));
	return json_pack("{s:o, s:o}", "tasks", list, "next_after",
			 more ? json_integer((json_int_t)all[n - 1].id) : json_null());
}

/* Is one of the n tasks being started (gp_loop_start_wait)? Waits for
 * it if so: true when it waited. */
static bool page_start_wait(struct gp_api *api, const struct gp_task *all, int n)
{
	for (int i = 0; i < n; i++)
		if (all[i].state == GP_TASK_RUNNING && !all[i].pid &&
		    gp_loop_start_wait(api->loop, all[i].id))
			return true;
	return false;
}

/* The page q asks for, one task more (is there a next page?); read again
 * when a task of it was being started. */
static int task_page_read(struct gp_api *api, const struct task_query *q, struct gp_task **ret,
			  int *ret_n)
{
	int r = gp_store_task_page(api->store, q->tenant, q->states, q->after, (int)q->limit + 1,
				   ret, ret_n);

	while (r == 0 && page_start_wait(api, *ret, *ret_n)) {
		free(*ret);
		*ret = NULL;
		r = gp_store_task_page(api->store, q->tenant, q->states, q->after,
				       (int)q->limit + 1, ret, ret_n);
	}
	return r;
}

static void task_list(void *ctx, const struct gp_http_request *req,
		      struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct tenant_names names = {0};
	struct task_query q;
	struct gp_task *all = NULL;
	int n = 0, r;

	if (!caller(api, req, ret, &me) || !names_load(api, ret, &names))
		return;
	if (!task_query_parse(req, &me, &names, &q, ret)) {
		names_release(&names);
		return;
	}
	r = task_page_read(api, &q, &all, &n);
	if (r < 0)
		store_failed(api, ret, r, "listing tasks");
	else
		gp_http_json(ret, 200, task_page_json(&q, &names, all, n));
	free(all);
	names_release(&names);
}

static void task_show(void *ctx, const struct gp_http_request *req,
		      struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_task t;

	if (caller(api, req, ret, &me) && task_load(api, &me, req->id, ret, &t))
		task_reply(api, &me, ret, 200, &t);
}

/* ---- tasks: changing -------------------------------------------------- */

/* Cancelled already, or being cancelled: asking again changes nothing. */
static bool cancel_asked(const struct gp_api *api, const struct gp_task *t)
{
	return t->state == GP_TASK_CANCELLED ||
	       (t->state == GP_TASK_RUNNING && gp_loop_cancelling(api->loop, t->id));
}

static void task_cancel(void *ctx, const struct gp_http_request *req,
			struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_taskops ops = gp_api_taskops(api);
	struct gp_tenant me;
	struct gp_task t;
	int r;

	if (!caller(api, req, ret, &me) || !task_load(api, &me, req->id, ret, &t))
		return;
	if (cancel_asked(api, &t)) {
		task_reply(api, &me, ret, 200, &t);
		return;
	}
	if (is_ended(t.state)) {
		gp_http_error(ret, 409, "task %lld is %s; there is nothing to cancel",
			      (long long)t.id, state_name(t.state));
		return;
	}
	r = gp_taskops_cancel(&ops, me.name, &t);
	if (r == -ENOTSUP && t.pod_uid[0])
		gp_http_error(ret, 409,
			      "task %lld is Kubernetes pod %s, and this server does not drive "
			      "its cluster (no --kubernetes); delete the pod with kubectl",
			      (long long)t.id, t.name);
	else if (r == -EAGAIN)
		gp_http_error(ret, 503, "too many pods are being evicted at once; try again");
	else if (r == -ENOTSUP)
		gp_http_error(ret, 409,
			      "task %lld is running; stopping a running task needs the "
			      "agent, and this server runs without --with-agent",
			      (long long)t.id);
	else if (r == -ENOENT)
		gp_http_error(ret, 409,
			      "task %lld is running, but not on this server's agent; "
			      "there is nothing here to stop",
			      (long long)t.id);
	else if (r < 0)
		store_failed(api, ret, r, "cancelling the task");
	else
		task_reply(api, &me, ret, 200, &t);
}

/* ---- tasks: changing -------------------------------------------------- */

/* A running task's new share must pass the scheduler's rules now, as a
 * submission would (capacity, overcommit, quotas): 409 with why when it
 * does not. A queued task's is checked when it is scheduled. */
static bool share_change_fits(struct gp_api *api, const struct gp_task *t, unsigned compute,
			      int *ret_borrowed, struct gp_http_reply *ret)
{
	struct gp_taskops ops = gp_api_taskops(api);
	char why[WHY_MAX] = "";
	int r = gp_taskops_share_check(&ops, t, compute, ret_borrowed, why, sizeof(why));

	if (r == -EBUSY)
		gp_http_error(ret, 409, "task %lld cannot have %u %% of its device%s: %s",
			      (long long)t->id, compute, t->devices > 1 ? "s" : "", why);
	else if (r < 0)
		gp_http_error(ret, 500, "checking the change of task %lld: %s", (long long)t->id,
			      strerror(-r));
	return r == 0;
}

/* Running task t is a Kubernetes pod: its change is asked of the pod (its
 * annotations, as its owner would write them), and the extender admits it
 * by the namespace's quota and its devices' room, or says why not in an
 * Event on the pod; 202 and the task as it is until then. */
static void pod_change_ask(struct gp_api *api, const struct gp_tenant *me,
			   const struct gp_task *t, unsigned compute, unsigned priority,
			   struct gp_http_reply *ret)
{
	char object[GP_AUDIT_OBJECT_MAX], detail[GP_REASON_MAX];
	int r;

	if (!api->engine_share || t->state != GP_TASK_RUNNING) {
		gp_http_error(ret, 409,
			      "task %lld is Kubernetes pod %s, not running: annotate the pod "
			      "instead (kubectl annotate pod NAME gpupool.io/compute=N --overwrite)",
			      (long long)t->id, t->name);
		return;
	}
	snprintf(object, sizeof(object), "%lld", (long long)t->id); /* as taskops' task.set */
	snprintf(detail, sizeof(detail),
		 "asked of pod %s: compute_pct %u -> %u, priority %u -> %u; the extender "
		 "admits it by the namespace's quota (an Event on the pod says when not)",
		 t->name, t->compute_pct, compute, t->priority, priority);
	if ((r = gp_store_audit(api->store, me->name, "task.set", object, detail)) < 0) {
		store_failed(api, ret, r, "auditing the change");
		return;
	}
	r = api->engine_share(api->engine_ctx, t, compute, priority, me->name);
	if (r < 0)
		gp_http_error(ret, 503,
			      "the change of pod %s could not be asked now (%s); try again",
			      t->name, strerror(-r));
	else
		task_reply(api, me, ret, 202, t);
}

static void task_set(void *ctx, const struct gp_http_request *req,
		     struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_taskops ops = gp_api_taskops(api);
	struct gp_tenant me;
	struct gp_task t;
	json_auto_t *body = NULL;
	unsigned compute, priority;
	int borrowed = -1, r;

	if (!caller(api, req, ret, &me) ||
	    !gp_fields_parse(req, task_set_fields, ret, &body) ||
	    !task_load(api, &me, req->id, ret, &t))
		return;
	if (!gp_field_has(body, "compute_pct") && !gp_field_has(body, "priority")) {
		gp_http_error(ret, 400,
			      "give \"compute_pct\" or \"priority\" (or both) to change");
		return;
	}
	if (is_ended(t.state)) {
		gp_http_error(ret, 409, "task %lld is %s; there is nothing to change",
			      (long long)t.id, state_name(t.state));
		return;
	}
	compute = (unsigned)gp_field_uint(body, "compute_pct", t.compute_pct);
	priority = (unsigned)gp_field_uint(body, "priority", t.priority);
	if (priority != t.priority && !priority_allowed(&me, priority, ret))
		return;
	if (t.pod_uid[0]) {
		pod_change_ask(api, &me, &t, compute, priority, ret);
		return;
	}
	if (!share_change_fits(api, &t, compute, &borrowed, ret))
		return;
	r = gp_taskops_change(&ops, me.name, &t, compute, priority,
			      gp_field_string(body, "reason", ""), borrowed);
	if (r < 0)
		store_failed(api, ret, r, "changing the task");
	else
		task_reply(api, &me, ret, 200, &t);
}

/* ---- audit ------------------------------------------------------------ */

/* What GET /v1/audit asks for: the filters, and the page. */
struct audit_query {
	struct gp_audit_filter f;
	long long after, before, limit;
};

/* ?who=&action=&object=&since_ms=&until_ms=, ?after=ID or ?before=ID,
 * ?limit=N; false with 400 in ret. */
static bool audit_query_of(const struct gp_http_request *req, struct audit_query *q,
			   struct gp_http_reply *ret)
{
	long long since, until;

	q->f = (struct gp_audit_filter){.who = gp_http_query(req, "who"),
					.action = gp_http_query(req, "action"),
					.object = gp_http_query(req, "object")};
	if (!gp_api_query_number(req, "after", 0, INT64_MAX, -1, &q->after, ret) ||
	    !gp_api_query_number(req, "before", 1, INT64_MAX, 0, &q->before, ret) ||
	    !gp_api_query_number(req, "limit", 1, AUDIT_LIMIT_MAX, AUDIT_LIMIT, &q->limit, ret) ||
	    !gp_api_query_number(req, "since_ms", 0, INT64_MAX / 2, 0, &since, ret) ||
	    !gp_api_query_number(req, "until_ms", 0, INT64_MAX / 2, 0, &until, ret))
		return false;
	if (q->after >= 0 && q->before) {
		gp_http_error(ret, 400, "give query \"after\" or \"before\", not both");
		return false;
	}
	q->f.since_ms = since;
	q->f.until_ms = until;
	return true;
}

/* {"audit": [...], "next_after": ID or null, "next_before": ID or null}:
 * n entries were read for a page of `limit`, one more when there are
 * more past it (after an entry: newer ones; else older ones). */
static json_t *audit_page_json(struct gp_api *api, const struct audit_query *q,
			       struct gp_audit_entry *all, int n)
{
	json_t *list = json_array();
	bool more = n > q->limit, older = false;
	int first = 0;

	if (more && q->after >= 0)
		n = (int)q->limit;
	else if (more)
		first = n - (int)q->limit; /* the oldest read is the one too many */
	for (int i = first; i < n; i++)
		json_array_append_new(list, audit_json(&all[i]));
	if (q->after >= 0 && n > 0)
		gp_store_audit_any_before(api->store, &q->f, all[0].id, &older);
	return json_pack("{s:o, s:o, s:o}", "audit", list, "next_after",
			 n > first && ((more && q->after >= 0) || q->before)
				 ? json_integer((json_int_t)all[n - 1].id)
				 : json_null(),
			 "next_before",
			 n > first && ((more && q->after < 0) || older)
				 ? json_integer((json_int_t)all[first].id)
				 : json_null());
}

/* ?limit=N entries (AUDIT_LIMIT by default) the filters keep: the newest,
 * those before entry ?before=ID, or those after entry ?after=ID, a page
 * at a time, oldest first. */
static void audit_list(void *ctx, const struct gp_http_request *req,
		       struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_audit_entry *all = NULL;
	struct audit_query q;
	int n = 0, r;

	if (!caller_admin(api, req, ret, &me, "read the audit log") ||
	    !audit_query_of(req, &q, ret))
		return;
	/* One more than the page: whether more lie past it. */
	r = gp_store_audit_query(api->store, &q.f, q.after, q.before,
				 q.limit < GP_STORE_PAGE_MAX ? (int)q.limit + 1 : GP_STORE_PAGE_MAX,
				 &all, &n);
	if (r < 0)
		store_failed(api, ret, r, "reading the audit log");
	else
		gp_http_json(ret, 200, audit_page_json(api, &q, all, n));
	free(all);
}

/* ---- the API ---------------------------------------------------------- */

static const struct gp_http_route routes[] = {
	{"GET", "/v1/health", health},
	{"POST", "/v1/tenants", tenant_add},
	{"GET", "/v1/tenants", tenant_list},
	{"PATCH", "/v1/tenants/{name}", tenant_set},
	{"DELETE", "/v1/tenants/{name}", tenant_remove},
	{"POST", "/v1/tenants/{name}/token", tenant_token},
	{"PUT", "/v1/tenants/{name}/quotas/{name}", gp_api_model_quota_set},
	{"DELETE", "/v1/tenants/{name}/quotas/{name}", gp_api_model_quota_remove},
	{"POST", "/v1/templates", template_add},
	{"GET", "/v1/templates", template_list},
	{"DELETE", "/v1/templates/{name}", template_remove},
	{"POST", "/v1/tasks", task_submit},
	{"GET", "/v1/tasks", task_list},
	{"GET", "/v1/tasks/{id}", task_show},
	{"PATCH", "/v1/tasks/{id}", task_set},
	{"POST", "/v1/tasks/{id}/cancel", task_cancel},
	{"GET", "/v1/tasks/{id}/logs", gp_api_logs},
	{"GET", "/v1/queue", gp_api_queue},
	{"GET", "/v1/devices", gp_api_devices},
	{"GET", "/v1/nodes", gp_api_nodes},
	{"GET", "/v1/audit", audit_list},
	{"GET", "/v1/usage", gp_api_usage},
	{"GET", "/v1/bill", gp_api_bill},
	{"GET", "/v1/advice", gp_api_advice},
	{"POST", "/v1/advice/apply", gp_api_advice_apply},
	{"POST", "/v1/sim/history", gp_api_sim_history},
	{"GET", "/v1/alerts", gp_api_alerts},
	{"POST", "/v1/alerts/{id}/clear", gp_api_alert_clear},
	{"GET", "/v1/status", gp_api_status},
	{"GET", "/v1/series", gp_api_series},
	{"POST", "/v1/services", gp_api_service_create},
	{"GET", "/v1/services", gp_api_services},
	{"GET", "/v1/services/{name}", gp_api_services},
	{"PATCH", "/v1/services/{name}", gp_api_service_scale},
	{"DELETE", "/v1/services/{name}", gp_api_service_remove},
	{"POST", "/v1/schedules", gp_api_schedule_add},
	{"GET", "/v1/schedules", gp_api_schedules},
	{"DELETE", "/v1/schedules/{name}", gp_api_schedule_remove},
	{"GET", "/metrics", gp_api_metrics},
	{"GET", "/ui", gp_api_ui},
	{"GET", "/ui/", gp_api_ui},
	{"GET", "/ui/{name}", gp_api_ui},
	{"GET", "/ui/lib/{name}", gp_api_ui},
};

const struct gp_http_route *gp_api_routes(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(routes);
	return routes;
}

int gp_api_new(struct gp_store *store, const struct gp_api_options *o,
	       struct gp_api **ret)
{
	struct gp_api *api;

	if (!store || !o || !ret || !o->queue_max || !o->pool ||
	    (o->metrics_token && strlen(o->metrics_token) > GP_API_METRICS_TOKEN_MAX))
		return -EINVAL;
	api = calloc(1, sizeof(*api));
	if (!api)
		return -ENOMEM;
	api->store = store;
	api->started_ms = gp_unix_ms();
	api->pool = o->pool;
	api->http = o->http;
	api->backup = o->backup;
	api->queue_max = o->queue_max;
	api->tenant_queue_max = o->tenant_queue_max ? o->tenant_queue_max
						    : GP_API_TENANT_QUEUE_MAX;
	if (api->tenant_queue_max > api->queue_max)
		api->tenant_queue_max = api->queue_max;
	if (o->metrics_token)
		snprintf(api->metrics_token, sizeof(api->metrics_token), "%s",
			 o->metrics_token);
	api->loop = o->loop;
	api->engine_nodes = o->engine_nodes;
	api->engine_cancel = o->engine_cancel;
	api->engine_share = o->engine_share;
	api->engine_services = o->engine_services;
	api->engine_ctx = o->engine_ctx;
	api->engine = o->engine;
	if (o->admin_token_file)
		snprintf(api->admin_token_file, sizeof(api->admin_token_file), "%s",
			 o->admin_token_file);
	if (o->ui_dir)
		snprintf(api->ui_dir, sizeof(api->ui_dir), "%s", o->ui_dir);
	if (o->ui_chart_js)
		snprintf(api->ui_chart_js, sizeof(api->ui_chart_js), "%s", o->ui_chart_js);
	snprintf(api->log_dir, sizeof(api->log_dir), "%s", o->log_dir ? o->log_dir : "logs");
	for (int i = 0; i < o->n_prices && i < GP_PRICES_MAX; i++)
		api->price[api->prices++] = o->prices[i];
	*ret = api;
	return 0;
}

void gp_api_set_loop(struct gp_api *api, struct gp_loop *loop)
{
	api->loop = loop;
}

/* ---- shared with api-meter.c (api-impl.h) ------------------------------ */

bool gp_api_caller(struct gp_api *api, const struct gp_http_request *req,
		   struct gp_http_reply *ret, struct gp_tenant *me)
{
	return caller(api, req, ret, me);
}

bool gp_api_query_tenant(const struct gp_http_request *req, const struct gp_tenant *me,
			 const struct gp_tenant *all, int n, int64_t *ret_tenant,
			 struct gp_http_reply *ret)
{
	const char *name = gp_http_query(req, "tenant");

	*ret_tenant = me->admin ? -1 : me->id;
	if (!name)
		return true;
	for (int i = 0; i < n; i++)
		if (!strcmp(all[i].name, name) && (me->admin || all[i].id == me->id)) {
			*ret_tenant = all[i].id;
			return true;
		}
	if (me->admin)
		gp_http_error(ret, 400, "query \"tenant\": no tenant \"%.64s\"", name);
	else
		gp_http_error(
			ret, 403,
			"query \"tenant\": \"%.64s\" is not you; a tenant sees only "
			"its own tasks",
			name);
	return false;
}

bool gp_api_task_load(struct gp_api *api, const struct gp_tenant *me, int64_t id,
		      struct gp_http_reply *ret, struct gp_task *t)
{
	return task_load(api, me, id, ret, t);
}

bool gp_api_store_failed(struct gp_api *api, struct gp_http_reply *ret, int err,
			 const char *what)
{
	return store_failed(api, ret, err, what);
}

json_t *gp_api_task_json(const struct gp_task *t, const char *tenant)
{
	return task_json(t, tenant);
}

json_t *gp_api_time_json(int64_t unix_s)
{
	return time_json(unix_s);
}

const char *gp_api_state_name(enum gp_task_state s)
{
	return state_name(s);
}

struct gp_api *gp_api_free(struct gp_api *api)
{
	free(api);
	return NULL;
}
