/* api-meter.c — the API's metering and monitoring endpoints
 * (docs/api.md): the usage records of a month and the bill made from
 * them, the alerts, the live status (`gpupool top`) and the Prometheus
 * metrics.
 *
 * A tenant sees its own records, bill, alerts and tasks; the admin sees
 * every tenant's, or one tenant's with ?tenant=NAME. The month is
 * ?month=YYYY-MM in UTC, the current one when absent. /metrics needs no
 * token for the pool's series, which name no tenant and no task; a
 * tenant's token adds its own tenant and task series, and the admin's or
 * the scrape token (--metrics-token-file, for Prometheus) every series.
 * It names tenants, tasks and devices, never commands or tokens. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/month.h"
#include "server/api-impl.h"
#include "server/advise.h"
#include "server/backup.h"
#include "server/bill.h"
#include "server/metrics.h"

#define USAGE_PAGE	 100000
#define USAGE_PAGE_MAX	 1000000
#define ALERTS_DEFAULT	 100
#define ALERTS_MAX	 10000
#define STATUS_QUEUE_MAX 50
#define MIB_PER_GIB	 1024

/* ---- the query ---------------------------------------------------------- */

/* What a metering request asks about. */
struct period {
	char month[GP_MONTH_TEXT]; /* "": since since_ms instead (usage only) */
	int64_t since_ms;
	int64_t from_ms, to_ms;
	int64_t tenant;		 /* -1: all (the admin only) */
	struct gp_tenant *names; /* every tenant, to name them */
	int n_names;
};

static void period_release(struct period *p)
{
	free(p->names);
}

static bool month_from_query(const struct gp_http_request *req, struct period *p,
			     struct gp_http_reply *ret)
{
	const char *month = gp_http_query(req, "month");

	if (!month) {
		gp_month_format(gp_unix_ms(), p->month);
		gp_month_parse(p->month, &p->from_ms, &p->to_ms);
		return true;
	}
	if (gp_month_parse(month, &p->from_ms, &p->to_ms) == 0) {
		snprintf(p->month, sizeof(p->month), "%s", month);
		return true;
	}
	gp_http_error(ret, 400,
		      "query \"month\" must be YYYY-MM (a month in UTC), e.g. 2026-11");
	return false;
}

/* ?tenant=NAME: the admin's filter; a tenant may name only itself. */
static bool tenant_from_query(const struct gp_http_request *req,
			      const struct gp_tenant *me, struct period *p,
			      struct gp_http_reply *ret)
{
	const char *name = gp_http_query(req, "tenant");

	p->tenant = me->admin ? -1 : me->id;
	if (!name)
		return true;
	for (int i = 0; i < p->n_names; i++)
		if (!strcmp(p->names[i].name, name) &&
		    (me->admin || p->names[i].id == me->id)) {
			p->tenant = p->names[i].id;
			return true;
		}
	gp_http_error(ret, me->admin ? 400 : 403,
		      me->admin
			      ? "query \"tenant\": no tenant \"%s\""
			      : "query \"tenant\": \"%s\" is not you; a tenant sees only "
				"its own usage",
		      name);
	return false;
}

static bool period_load(struct gp_api *api, const struct gp_http_request *req,
			struct period *p, struct gp_http_reply *ret)
{
	struct gp_tenant me;
	int r;

	if (!gp_api_caller(api, req, ret, &me) || !month_from_query(req, p, ret))
		return false;
	r = gp_store_tenant_list(api->store, &p->names, &p->n_names);
	if (r < 0)
		return gp_api_store_failed(api, ret, r, "listing tenants");
	return tenant_from_query(req, &me, p, ret);
}

static const char *name_of(const struct period *p, int64_t tenant)
{
	for (int i = 0; i < p->n_names; i++)
		if (p->names[i].id == tenant)
			return p->names[i].name;
	return "?";
}

/* ---- usage records ------------------------------------------------------ */

/* RFC 3339 UTC with milliseconds. */
static json_t *time_ms_json(int64_t ms)
{
	char text[40];
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	size_t n;

	if (!gmtime_r(&t, &tm))
		return json_null();
	n = strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(text + n, sizeof(text) - n, ".%03dZ", (int)(ms % 1000));
	return json_string(text);
}

static json_t *record_json(const struct gp_usage_record *u, const char *tenant)
{
	return json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "id", (json_int_t)u->id, "task", (json_int_t)u->task, "tenant",
			 tenant, "device", u->device_uuid, "model", u->device_model,
			 "start", time_ms_json(u->start_ms), "end",
			 time_ms_json(u->end_ms), "start_ms", (json_int_t)u->start_ms,
			 "end_ms", (json_int_t)u->end_ms, "mem_mib",
			 (json_int_t)u->mem_mib, "compute_pct",
			 (json_int_t)u->compute_pct, "used_ms", (json_int_t)u->used_ms,
			 "mem_peak_mib", (json_int_t)u->mem_peak_mib);
}

json_t *gp_api_record_json(const struct gp_usage_record *u, const char *tenant)
{
	return record_json(u, tenant);
}

bool gp_api_query_number(const struct gp_http_request *req, const char *key, long long lo,
			 long long hi, long long absent, long long *ret_v,
			 struct gp_http_reply *ret)
{
	const char *text = gp_http_query(req, key);
	char *end = NULL;
	long long v;

	*ret_v = absent;
	if (!text)
		return true;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (*text >= '0' && *text <= '9' && !*end && !errno && v >= lo && v <= hi) {
		*ret_v = v;
		return true;
	}
	gp_http_error(ret, 400, "query \"%s\" must be a whole number from %lld to %lld",
		      key, lo, hi);
	return false;
}

/* ?after=ID (0: from the start) and ?limit=N, one page of records. */
static bool page_from_query(const struct gp_http_request *req, int64_t *ret_after,
			    int *ret_limit, struct gp_http_reply *ret)
{
	long long after, limit;

	if (!gp_api_query_number(req, "after", 0, INT64_MAX, 0, &after, ret) ||
	    !gp_api_query_number(req, "limit", 1, USAGE_PAGE_MAX, USAGE_PAGE, &limit,
				 ret))
		return false;
	*ret_after = after;
	*ret_limit = (int)limit;
	return true;
}

static void usage_reply(const struct period *p, int64_t task,
			const struct gp_usage_record *all, int n, int limit,
			struct gp_http_reply *ret)
{
	json_t *list = json_array(), *reply;

	for (int i = 0; i < n; i++)
		json_array_append_new(list,
				      record_json(&all[i], name_of(p, all[i].tenant)));
	reply = json_pack("{s:o, s:o}", "month",
			  p->month[0] ? json_string(p->month) : json_null(), "usage", list);
	if (task)
		json_object_set_new(reply, "task", json_integer((json_int_t)task));
	else if (!p->month[0])
		json_object_set_new(reply, "since_ms", json_integer((json_int_t)p->since_ms));
	/* A full page: there may be more, after its last record. */
	json_object_set_new(reply, "next_after",
			    n == limit ? json_integer((json_int_t)all[n - 1].id)
				       : json_null());
	gp_http_json(ret, 200, reply);
}

/* ?since_ms=N instead of a month: the records that start at N or later,
 * whatever their month (the console's last hour, day or week). */
static bool since_from_query(const struct gp_http_request *req, struct period *p,
			     struct gp_http_reply *ret)
{
	long long since;

	if (!gp_api_query_number(req, "since_ms", 0, INT64_MAX / 2, -1, &since, ret))
		return false;
	if (since < 0)
		return true;
	if (gp_http_query(req, "month")) {
		gp_http_error(ret, 400, "give query \"month\" or \"since_ms\", not both");
		return false;
	}
	p->month[0] = '\0';
	p->since_ms = since;
	p->from_ms = since;
	p->to_ms = INT64_MAX;
	return true;
}

/* ?task=ID: one task's records, whatever their time (a task's charts);
 * the caller's task, or any for the admin (403 and 404 as for GET
 * /v1/tasks/ID). *ret_task 0 when not asked. */
static bool task_from_query(struct gp_api *api, const struct gp_http_request *req,
			    int64_t *ret_task, struct gp_http_reply *ret)
{
	struct gp_tenant me;
	struct gp_task t;
	long long id;

	*ret_task = 0;
	if (!gp_api_query_number(req, "task", 1, INT64_MAX, 0, &id, ret))
		return false;
	if (!id)
		return true;
	if (gp_http_query(req, "month") || gp_http_query(req, "since_ms") ||
	    gp_http_query(req, "tenant")) {
		gp_http_error(ret, 400,
			      "give query \"task\" alone: a task's records are all of its own, "
			      "whatever their month");
		return false;
	}
	if (!gp_api_caller(api, req, ret, &me) || !gp_api_task_load(api, &me, id, ret, &t))
		return false;
	*ret_task = id;
	return true;
}

void gp_api_usage(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct period p = {0};
	struct gp_usage_record *all = NULL;
	int64_t after, task;
	int n = 0, limit, r;

	if (!period_load(api, req, &p, ret) || !since_from_query(req, &p, ret) ||
	    !page_from_query(req, &after, &limit, ret) ||
	    !task_from_query(api, req, &task, ret)) {
		period_release(&p);
		return;
	}
	if (task)
		p.month[0] = '\0';
	r = task ? gp_store_usage_of_task_page(api->store, task, after, limit, &all, &n)
		 : gp_store_usage_list(api->store, p.tenant, p.from_ms, p.to_ms, after, limit,
				       &all, &n);
	if (r < 0)
		gp_api_store_failed(api, ret, r, "reading the usage records");
	else
		usage_reply(&p, task, all, n, limit, ret);
	free(all);
	period_release(&p);
}

/* ---- the bill ----------------------------------------------------------- */

/* The bill as JSON, or with ?format=csv as the CSV `gpupool bill -o csv`
 * prints, a file to save (takes bill). */
static void bill_reply(const struct gp_http_request *req, const char *month, json_t *bill,
		       struct gp_http_reply *ret)
{
	const char *format = gp_http_query(req, "format");
	char *csv;

	if (!format || strcmp(format, "json") == 0) {
		gp_http_json(ret, 200, bill);
		return;
	}
	csv = strcmp(format, "csv") == 0 ? gp_bill_csv(bill) : NULL;
	json_decref(bill);
	if (strcmp(format, "csv") != 0) {
		gp_http_error(ret, 400, "format \"%s\": give json or csv", format);
		return;
	}
	if (!csv) {
		gp_http_error(ret, 500, "out of memory writing the bill's CSV");
		return;
	}
	gp_http_text(ret, 200, csv, "text/csv; charset=utf-8");
	ret->header[0].name = "Content-Disposition";
	snprintf(ret->header[0].value, sizeof(ret->header[0].value),
		 "attachment; filename=\"gpupool-bill-%.7s.csv\"", month);
}

void gp_api_bill(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct period p = {0};
	struct gp_usage_sum *sums = NULL;
	int n = 0, r;

	if (!period_load(api, req, &p, ret)) {
		period_release(&p);
		return;
	}
	r = gp_store_usage_sum(api->store, p.tenant, p.from_ms, p.to_ms, &sums, &n);
	if (r < 0)
		gp_api_store_failed(api, ret, r, "adding up the usage records");
	else
		bill_reply(req, p.month,
			   gp_bill_json(p.month, sums, n, p.names, p.n_names, api->price,
					api->prices),
			   ret);
	free(sums);
	period_release(&p);
}

/* ---- right-sizing ------------------------------------------------------- */

static json_t *advice_json(const struct gp_advice *a, const struct period *p)
{
	json_t *o = json_pack("{s:s, s:s, s:i, s:I, s:f, s:I, s:I}", "kind",
			      a->is_template ? "template" : "task", "name", a->name, "runs",
			      a->runs, "records", (json_int_t)a->records, "hours", a->hours,
			      "mem_held_mib", (json_int_t)a->mem_held_mib, "mem_peak_mib",
			      (json_int_t)a->mem_peak_mib);

	json_object_set_new(o, "tenant",
			    a->is_template ? json_null() : json_string(name_of(p, a->tenant)));
	json_object_set_new(o, "mem_proposed_mib",
			    a->mem_proposed_mib ? json_integer((json_int_t)a->mem_proposed_mib)
						: json_null());
	json_object_update_new(
		o, json_pack("{s:i, s:f, s:f, s:f, s:i, s:f, s:f}", "compute_held_pct",
			     (int)a->compute_held_pct, "compute_median_pct",
			     a->compute_median_pct, "compute_percentile_pct",
			     a->compute_percentile_pct, "compute_max_pct", a->compute_max_pct,
			     "compute_proposed_pct", (int)a->compute_proposed_pct,
			     "freed_gpu_hours", a->freed_gpu_hours, "freed_mem_gib_hours",
			     a->freed_mem_gib_hours));
	return o;
}

/* ?headroom=PCT&percentile=P, within the module's bounds. */
static bool advise_options(const struct gp_http_request *req, struct gp_advise_options *o,
			   struct gp_http_reply *ret)
{
	long long headroom, pct;

	if (!gp_api_query_number(req, "headroom", 0, 100, GP_ADVISE_HEADROOM_PCT, &headroom,
				 ret) ||
	    !gp_api_query_number(req, "percentile", 50, 100, GP_ADVISE_PERCENTILE, &pct, ret))
		return false;
	*o = (struct gp_advise_options){.headroom_pct = (unsigned)headroom,
					.percentile = (unsigned)pct};
	return true;
}

static void advice_reply(const struct period *p, const struct gp_advise_options *o,
			 const struct gp_advice *all, int n, struct gp_http_reply *ret)
{
	json_t *list = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(list, advice_json(&all[i], p));
	gp_http_json(ret, 200,
		     json_pack("{s:s, s:i, s:i, s:o}", "month", p->month, "headroom_pct",
			       (int)o->headroom_pct, "percentile", (int)o->percentile,
			       "advice", list));
}

/* The advice over the period's records, read a page at a time. */
static int advice_of(struct gp_api *api, const struct period *p,
		     const struct gp_advise_options *o, const struct gp_task *tasks,
		     int n_tasks, struct gp_advice **ret, int *ret_n)
{
	struct gp_advise *adv = NULL;
	int64_t after = 0;
	int r = gp_advise_begin(tasks, n_tasks, o, &adv);

	while (r == 0) {
		struct gp_usage_record *page = NULL;
		int n = 0;

		r = gp_store_usage_list(api->store, p->tenant, p->from_ms, p->to_ms, after,
					GP_STORE_PAGE_MAX, &page, &n);
		if (r == 0)
			r = gp_advise_add(adv, page, n);
		after = n ? page[n - 1].id : after;
		free(page);
		if (n < GP_STORE_PAGE_MAX)
			break;
	}
	if (adv && r == 0)
		return gp_advise_end(adv, ret, ret_n);
	if (adv) {
		struct gp_advice *dropped = NULL;
		int n = 0;

		if (gp_advise_end(adv, &dropped, &n) == 0)
			free(dropped);
	}
	return r;
}

void gp_api_advice(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct period p = {0};
	struct gp_advise_options o;
	struct gp_task *tasks = NULL;
	struct gp_advice *advice = NULL;
	int n_tasks = 0, n = 0, r;

	if (!period_load(api, req, &p, ret) || !advise_options(req, &o, ret)) {
		period_release(&p);
		return;
	}
	r = gp_store_task_list(api->store, p.tenant, -1, &tasks, &n_tasks);
	if (r == 0)
		r = advice_of(api, &p, &o, tasks, n_tasks, &advice, &n);
	if (r < 0)
		gp_api_store_failed(api, ret, r, "reading the usage records and tasks");
	else
		advice_reply(&p, &o, advice, n, ret);
	free(advice);
	free(tasks);
	period_release(&p);
}

int gp_api_advice_of_month(struct gp_api *api, int64_t tenant, const char *month,
			   json_t **ret)
{
	struct period p = {.tenant = tenant};
	struct gp_advise_options o = {.headroom_pct = GP_ADVISE_HEADROOM_PCT,
				      .percentile = GP_ADVISE_PERCENTILE};
	struct gp_task *tasks = NULL;
	struct gp_advice *advice = NULL;
	int n_tasks = 0, n = 0, r = gp_month_parse(month, &p.from_ms, &p.to_ms);

	snprintf(p.month, sizeof(p.month), "%s", month);
	if (r == 0)
		r = gp_store_tenant_list(api->store, &p.names, &p.n_names);
	if (r == 0)
		r = gp_store_task_list(api->store, tenant, -1, &tasks, &n_tasks);
	if (r == 0)
		r = advice_of(api, &p, &o, tasks, n_tasks, &advice, &n);
	if (r == 0) {
		*ret = json_array();
		for (int i = 0; i < n; i++)
			json_array_append_new(*ret, advice_json(&advice[i], &p));
	}
	free(advice);
	free(tasks);
	period_release(&p);
	return r;
}

/* ---- applying the advice ------------------------------------------------- */

/* What applying one template's proposal did. */
struct applied {
	const char *result; /* "added", "exists", "unchanged" */
	char version[GP_STORE_NAME_MAX];
	uint64_t mem_mib;
	unsigned compute_pct;
};

static int write_template(struct gp_store *s, const void *t)
{
	return gp_store_template_add(s, (struct gp_template *)t);
}

/* Template old's new version for proposal a, added (with its audit row
 * template.add by who) unless it is old's slice or a version has it;
 * the store's error. */
static int version_add(struct gp_api *api, const char *who, const char *month,
		       const struct gp_advice *a, const struct gp_template *old,
		       const struct gp_template *all, int n, struct applied *ret)
{
	struct gp_template t = *old;
	char detail[GP_REASON_MAX];
	int r;

	t.mem_mib = a->mem_proposed_mib ? a->mem_proposed_mib : old->mem_mib;
	t.compute_pct = a->compute_proposed_pct;
	*ret = (struct applied){.result = "unchanged", .mem_mib = t.mem_mib,
				.compute_pct = t.compute_pct};
	if (t.mem_mib == old->mem_mib && t.compute_pct == old->compute_pct)
		return 0;
	r = gp_advise_version_name(all, n, old->name, t.mem_mib, t.compute_pct, t.name,
				   sizeof(t.name));
	snprintf(ret->version, sizeof(ret->version), "%s", t.name);
	if (r == -EEXIST) {
		ret->result = "exists";
		return 0;
	}
	if (r < 0)
		return r;
	snprintf(detail, sizeof(detail),
		 "%llu MiB, %u %%, %s, models \"%.40s\"; the advice of %.7s for %.63s "
		 "(%llu MiB, %u %%)",
		 (unsigned long long)t.mem_mib, t.compute_pct, t.hard ? "hard" : "shared",
		 t.models, month, old->name, (unsigned long long)old->mem_mib,
		 old->compute_pct);
	r = gp_store_audited(api->store, write_template, &t, who, "template.add", t.name,
			     detail);
	if (r == 0)
		ret->result = "added";
	return r;
}

static json_t *applied_json(const struct gp_template *old, const struct applied *x)
{
	return json_pack("{s:s, s:s, s:o, s:I, s:i, s:I, s:i}", "result", x->result,
			 "template", old->name, "version",
			 x->version[0] ? json_string(x->version) : json_null(), "mem_mib",
			 (json_int_t)x->mem_mib, "compute_pct", (int)x->compute_pct,
			 "was_mem_mib", (json_int_t)old->mem_mib, "was_compute_pct",
			 (int)old->compute_pct);
}

/* Each template's proposal of the advice all[0..n) as a new version of
 * it, into list; the store's error. A template removed since is passed
 * over. */
static int versions_add(struct gp_api *api, const char *who, const char *month,
			const struct gp_advice *all, int n, json_t *list)
{
	struct gp_template *t = NULL;
	int n_t = 0, r = gp_store_template_list(api->store, &t, &n_t);

	for (int i = 0; r == 0 && i < n; i++) {
		const struct gp_template *old = NULL;
		struct applied x;

		for (int k = 0; all[i].is_template && k < n_t && !old; k++)
			old = strcmp(t[k].name, all[i].name) ? NULL : &t[k];
		if (!old)
			continue;
		r = version_add(api, who, month, &all[i], old, t, n_t, &x);
		if (r == 0)
			json_array_append_new(list, applied_json(old, &x));
		if (r == 0 && !strcmp(x.result, "added")) { /* the next sees it */
			free(t);
			t = NULL;
			r = gp_store_template_list(api->store, &t, &n_t);
		}
	}
	free(t);
	return r;
}

void gp_api_advice_apply(void *ctx, const struct gp_http_request *req,
			 struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct period p = {0};
	struct gp_advise_options o;
	struct gp_task *tasks = NULL;
	struct gp_advice *advice = NULL;
	struct gp_tenant me;
	json_t *list = json_array();
	int n_tasks = 0, n = 0, r;

	if (!gp_api_caller(api, req, ret, &me) || !period_load(api, req, &p, ret) ||
	    !advise_options(req, &o, ret)) {
		period_release(&p);
		json_decref(list);
		return;
	}
	if (!me.admin) {
		gp_http_error(ret, 403,
			      "only the admin may apply the advice: it adds templates (a tenant "
			      "reads it with GET /v1/advice)");
		period_release(&p);
		json_decref(list);
		return;
	}
	r = gp_store_task_list(api->store, p.tenant, -1, &tasks, &n_tasks);
	if (r == 0)
		r = advice_of(api, &p, &o, tasks, n_tasks, &advice, &n);
	if (r == 0)
		r = versions_add(api, me.name, p.month, advice, n, list);
	if (r < 0) {
		json_decref(list);
		gp_api_store_failed(api, ret, r, "applying the advice");
	} else {
		gp_http_json(ret, 200,
			     json_pack("{s:s, s:i, s:i, s:o}", "month", p.month, "headroom_pct",
				       (int)o.headroom_pct, "percentile", (int)o.percentile,
				       "applied", list));
	}
	free(advice);
	free(tasks);
	period_release(&p);
}

/* ---- alerts ------------------------------------------------------------- */

static const char *const levels[] = {"info", "warning", "critical"};

static json_t *alert_json(const struct gp_alert *a, const char *tenant)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:s?, s:s, s:o, s:o}", "id",
			 (json_int_t)a->id, "level", levels[a->level], "kind", a->kind,
			 "object", a->object, "tenant", tenant, "message", a->message,
			 "created", time_ms_json(a->created), "cleared",
			 a->cleared ? time_ms_json(a->cleared) : json_null());
}

static const char *tenant_of(const struct gp_tenant *all, int n, int64_t id)
{
	for (int i = 0; i < n; i++)
		if (all[i].id == id)
			return all[i].name;
	return NULL;
}

/* What GET /v1/alerts asks for: active ones or all, which page. */
struct alerts_query {
	bool active;
	long long after, limit;
};

/* ?state=active|all, ?limit=N and ?after=ID (the alerts after alert ID in
 * the list's order: older ones). */
static bool alerts_query(const struct gp_http_request *req, struct alerts_query *q,
			 struct gp_http_reply *ret)
{
	const char *state = gp_http_query(req, "state");

	if (state && strcmp(state, "active") && strcmp(state, "all")) {
		gp_http_error(ret, 400, "query \"state\" must be active or all");
		return false;
	}
	q->active = !state || !strcmp(state, "active");
	return gp_api_query_number(req, "limit", 1, ALERTS_MAX, ALERTS_DEFAULT, &q->limit, ret) &&
	       gp_api_query_number(req, "after", 0, INT64_MAX, 0, &q->after, ret);
}

/* {"alerts": [...], "next_after": ID or null}: n alerts were read for a
 * page of `limit`, one more when there are more after it. */
static void alerts_reply(struct gp_api *api, struct gp_alert *all, int n, long long limit,
			 struct gp_http_reply *ret)
{
	struct gp_tenant *names = NULL;
	int n_names = 0, r = gp_store_tenant_list(api->store, &names, &n_names);
	bool more = n > limit;
	json_t *list;

	if (r < 0) {
		gp_api_store_failed(api, ret, r, "listing tenants");
		return;
	}
	if (more)
		n = (int)limit;
	list = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(
			list,
			alert_json(&all[i], tenant_of(names, n_names, all[i].tenant)));
	free(names);
	gp_http_json(ret, 200,
		     json_pack("{s:o, s:o}", "alerts", list, "next_after",
			       more ? json_integer((json_int_t)all[n - 1].id) : json_null()));
}

void gp_api_alerts(void *ctx, const struct gp_http_request *req,
		   struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_alert *all = NULL;
	struct alerts_query q;
	int n = 0, r;

	if (!gp_api_caller(api, req, ret, &me) || !alerts_query(req, &q, ret))
		return;
	r = gp_store_alert_page(api->store, me.admin ? -1 : me.id, q.active, q.after,
				(int)q.limit + 1, &all, &n);
	if (r < 0)
		gp_api_store_failed(api, ret, r, "listing alerts");
	else
		alerts_reply(api, all, n, q.limit, ret);
	free(all);
}

void gp_api_alert_clear(void *ctx, const struct gp_http_request *req,
			struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_alert a;
	char object[GP_AUDIT_OBJECT_MAX];
	int r;

	if (!gp_api_caller(api, req, ret, &me))
		return;
	if (!me.admin) {
		gp_http_error(ret, 403, "only the admin may clear alerts");
		return;
	}
	r = gp_store_alert_clear_id(api->store, req->id, &a);
	if (r == -ENOENT) {
		gp_http_error(ret, 404, "no alert %lld", (long long)req->id);
		return;
	}
	if (r < 0) {
		gp_api_store_failed(api, ret, r, "clearing the alert");
		return;
	}
	snprintf(object, sizeof(object), "alert %lld", (long long)a.id);
	gp_store_audit(api->store, me.name, "alert.clear", object, a.message);
	alerts_reply(api, &a, 1, 1, ret);
}

/* ---- metrics ------------------------------------------------------------ */

/* Whether token is the scrape token, in a time that does not tell how
 * much of it matched. */
static bool is_scrape_token(const struct gp_api *api, const char *token)
{
	const char *want = api->metrics_token;
	size_t n = strlen(want), len = strlen(token);
	unsigned char diff = len != n;

	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(want[i] ^ (i < len ? token[i] : 0));
	return diff == 0;
}

/* What the caller of /metrics may see: without a token the pool's
 * series; with a tenant's its own as well; with the admin's or the
 * scrape token all. false with 401 for a token nobody has. */
static bool metrics_scope(struct gp_api *api, const struct gp_http_request *req,
			  struct gp_metrics_source *src, struct gp_http_reply *ret)
{
	struct gp_tenant me;
	int r;

	if (!req->token)
		return true; /* GP_METRICS_POOL */
	if (is_scrape_token(api, req->token)) {
		ret->token = GP_HTTP_TOKEN_GOOD;
		src->scope = GP_METRICS_ALL;
		return true;
	}
	r = gp_store_tenant_by_token(api->store, req->token, &me);
	if (r == 0)
		ret->token = GP_HTTP_TOKEN_GOOD;
	if (r == -ENOENT || r == -EINVAL) {
		ret->token = GP_HTTP_TOKEN_UNKNOWN;
		gp_http_error(
			ret, 401,
			"unknown token: send a tenant's token, the admin's or the "
			"scrape token (--metrics-token-file), or none for the pool's "
			"series only");
		return false;
	}
	if (r < 0)
		return gp_api_store_failed(api, ret, r, "token");
	src->scope = me.admin ? GP_METRICS_ALL : GP_METRICS_TENANT;
	src->tenant = me.id;
	return true;
}

/* The server's guards: the HTTP front's counts, the database's state. */
static void guard_read(struct gp_api *api, struct gp_metrics_guard *ret)
{
	struct gp_http_counts c = {0};
	struct gp_backup_state b = {0};

	if (api->http)
		gp_http_counts(api->http, &c);
	if (api->backup)
		gp_backup_state(api->backup, &b);
	*ret = (struct gp_metrics_guard){
		.conn_refused = c.refused, .conn_evicted = c.evicted,
		.token_unknown = c.token_unknown, .token_waiting = c.token_waiting,
		.db_damaged = gp_store_is_damaged(api->store) || b.damaged,
		.backups = api->backup != NULL, .backup_last_ms = b.last_ms,
		.backup_failed = b.failed,
	};
}

void gp_api_metrics(void *ctx, const struct gp_http_request *req,
		    struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_loop_stats *stats = malloc(sizeof(*stats));
	struct gp_metrics_guard guard;
	struct gp_metrics_source src = {.store = api->store,
					.meter = gp_loop_meter(api->loop),
					.guard = &guard,
					.now_ms = gp_unix_ms()};
	char *text = NULL;
	int r;

	if (stats && gp_loop_stats(api->loop, stats))
		src.stats = stats;
	guard_read(api, &guard);
	if (!metrics_scope(api, req, &src, ret)) {
		free(stats);
		return;
	}
	r = gp_metrics_render(&src, &text);
	free(stats);
	if (r < 0)
		gp_api_store_failed(api, ret, r, "making the metrics");
	else
		gp_http_text(ret, 200, text, "text/plain; version=0.0.4; charset=utf-8");
}

/* ---- status ------------------------------------------------------------- */

static json_t *device_json(const struct gp_meter *m, unsigned i)
{
	const struct gp_agent_device *dev = &gp_meter_node(m)->device[i];
	const struct gp_meter_device *d = gp_meter_device(m, i);

	return json_pack("{s:i, s:s, s:s, s:b, s:i, s:f, s:I, s:I, s:i, s:I}", "index",
			 (int)i, "uuid", dev->uuid, "model", dev->name, "ok", d->ok,
			 "utilization_pct", (int)d->util_pct, "utilization_window_pct",
			 d->util_avg_pct, "memory_used_mib", (json_int_t)d->mem_used_mib,
			 "memory_total_mib", (json_int_t)d->mem_total_mib,
			 "allocated_compute_pct", (int)d->alloc_pct,
			 "allocated_memory_mib", (json_int_t)d->alloc_mem_mib);
}

static json_t *running_json(const struct gp_task *t, const char *tenant,
			    const struct gp_meter *m, int64_t now)
{
	const struct gp_meter_task *mt = gp_meter_task_of(m, t->id);
	json_t *o = json_pack(
		"{s:I, s:s, s:s, s:I, s:I, s:I, s:s, s:I}", "id", (json_int_t)t->id,
		"name", t->name, "tenant", tenant, "compute_pct",
		(json_int_t)(t->whole || t->exclusive ? 100 : t->compute_pct), "mem_mib",
		(json_int_t)t->mem_mib, "devices", (json_int_t)t->devices, "placement",
		t->placement, "running_s", (json_int_t)((now - t->started) / 1000));

	json_object_set_new(o, "effective_utilization",
			    mt && mt->sampled ? json_real(mt->effective) : json_null());
	json_object_set_new(o, "memory_used_mib",
			    mt && mt->sampled ? json_integer((json_int_t)mt->mem_used_mib)
					      : json_null());
	return o;
}

/* The caller's running tasks (the admin: all). */
static int running_json_all(struct gp_api *api, const struct gp_tenant *me,
			    const struct gp_tenant *names, int n_names, json_t *list, int64_t now)
{
	const struct gp_meter *m = gp_loop_meter(api->loop);
	struct gp_task *all = NULL;
	int n = 0, r = gp_store_task_list(api->store, me->admin ? -1 : me->id, GP_TASK_RUNNING,
					  &all, &n);

	for (int i = 0; r == 0 && i < n; i++) {
		const char *tenant = tenant_of(names, n_names, all[i].tenant);

		json_array_append_new(list, running_json(&all[i], tenant ? tenant : "", m, now));
	}
	free(all);
	return r;
}

/* The head of the queue, the caller's tasks in it (the admin: all), at
 * most STATUS_QUEUE_MAX, from the pool. */
static void waiting_json_head(struct gp_api *api, const struct gp_tenant *me,
			      const struct gp_tenant *names, int n_names, json_t *list,
			      int64_t now)
{
	struct gp_pool_task *head = calloc(STATUS_QUEUE_MAX, sizeof(*head));
	int position[STATUS_QUEUE_MAX], n = 0, length;

	if (head)
		gp_pool_queue_page(api->pool, me->admin ? -1 : me->id, 0, 0, STATUS_QUEUE_MAX,
				   head, position, &n, &length);
	for (int i = 0; i < n; i++) {
		const char *tenant = tenant_of(names, n_names, head[i].tenant);

		json_array_append_new(
			list, json_pack("{s:I, s:s, s:s, s:s, s:I, s:I, s:s}", "id",
					(json_int_t)head[i].id, "name", head[i].name, "tenant",
					tenant ? tenant : "", "state",
					gp_api_state_name(head[i].state), "priority",
					(json_int_t)head[i].priority, "waiting_s",
					(json_int_t)((now - head[i].created) / 1000), "reason",
					head[i].reason));
	}
	free(head);
}

static int status_tasks(struct gp_api *api, const struct gp_tenant *me, json_t *status,
			int64_t now)
{
	json_t *running = json_array(), *waiting = json_array();
	struct gp_tenant *names = NULL;
	int n_names = 0, r = gp_store_tenant_list(api->store, &names, &n_names);

	if (r == 0)
		r = running_json_all(api, me, names, n_names, running, now);
	if (r == 0)
		waiting_json_head(api, me, names, n_names, waiting, now);
	free(names);
	json_object_set_new(status, "tasks", running);
	json_object_set_new(status, "waiting", waiting);
	return r;
}

static void status_queue(struct gp_api *api, json_t *status, int64_t now)
{
	int64_t oldest;
	int n;

	gp_pool_queue_stats(api->pool, &n, &oldest);
	json_object_set_new(status, "queue",
			    json_pack("{s:i, s:f}", "length", n, "oldest_wait_s",
				      n ? (double)(now - oldest) / 1000.0 : 0.0));
}

/* How old the server and its history are: when it started, and since
 * when the pool is metered (its first sample or usage record; null
 * before any), so that a chart need not draw time nobody measured. */
static void status_since(struct gp_api *api, json_t *status)
{
	int64_t since = 0;

	json_object_set_new(status, "started", time_ms_json(api->started_ms));
	json_object_set_new(status, "started_ms", json_integer((json_int_t)api->started_ms));
	json_object_set_new(status, "metered_since_ms",
			    gp_store_metered_since(api->store, &since) == 0 && since
				    ? json_integer((json_int_t)since)
				    : json_null());
}

void gp_api_status(void *ctx, const struct gp_http_request *req,
		   struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	const struct gp_meter *m = gp_loop_meter(api->loop);
	json_t *status, *devices = json_array();
	int64_t now = gp_unix_ms();
	struct gp_tenant me;
	int r;

	if (!gp_api_caller(api, req, ret, &me)) {
		json_decref(devices);
		return;
	}
	for (unsigned i = 0; m && i < gp_meter_node(m)->devices; i++)
		json_array_append_new(devices, device_json(m, i));
	status = json_pack("{s:o, s:o, s:o, s:i}", "time", time_ms_json(now), "sampled",
			   m && gp_meter_last_ms(m) ? time_ms_json(gp_meter_last_ms(m))
						    : json_null(),
			   "devices", devices, "sample_ms",
			   m ? (int)gp_meter_period_ms(m) : 0);
	status_queue(api, status, now);
	status_since(api, status);
	r = status_tasks(api, &me, status, now);
	if (r < 0) {
		json_decref(status);
		gp_api_store_failed(api, ret, r, "reading the tasks");
		return;
	}
	gp_http_json(ret, 200, status);
}
