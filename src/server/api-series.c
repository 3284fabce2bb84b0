/* api-series.c — GET /v1/series: the meter's history over time (meter.h,
 * the store's device_series, tenant_series and queue_series), in buckets,
 * for the console's charts: each device's memory used, held and total,
 * compute held and utilization; each tenant's memory held and used and
 * compute held; the queue's length and oldest wait.
 *
 * What each caller sees is what the live endpoints show it: every device
 * and the queue, as GET /v1/devices and /v1/status do (figures of the
 * pool that name no task), and the tenants' series as GET /v1/tenants
 * does (the admin every tenant's, or ?tenant=NAME's; a tenant its own).
 * The buckets are the store's averages and most over each one; a bucket
 * without samples has no point (the server did not run, or sampled
 * nothing), so a chart shows no zeros where nothing was known. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "server/api-impl.h"
#include "server/loop.h"
#include "server/meter.h"

#define SERIES_WINDOW_MS (3600000LL)	    /* without ?since_ms: the last hour */
#define SERIES_POINTS	 120		    /* buckets without ?step_ms */
#define SERIES_POINTS_MAX 2000		    /* buckets a request may ask for */
#define SERIES_SPAN_MAX	 (400LL * 86400000) /* the longest window */

/* The window and its buckets: ?since_ms (default: an hour ago), ?until_ms
 * (default: now), ?step_ms (default: the window in SERIES_POINTS, at
 * least the meter's step); false with 400 in ret. */
static bool window_of(const struct gp_http_request *req, int64_t now, int64_t *ret_from,
		      int64_t *ret_to, int64_t *ret_step, struct gp_http_reply *ret)
{
	long long from, to, step;

	if (!gp_api_query_number(req, "since_ms", 0, INT64_MAX / 4, now - SERIES_WINDOW_MS,
				 &from, ret) ||
	    !gp_api_query_number(req, "until_ms", 0, INT64_MAX / 4, now, &to, ret) ||
	    !gp_api_query_number(req, "step_ms", GP_METER_SERIES_STEP_MS, SERIES_SPAN_MAX, 0,
				 &step, ret))
		return false;
	if (to <= from || to - from > SERIES_SPAN_MAX) {
		gp_http_error(ret, 400,
			      "query \"until_ms\" must be after \"since_ms\", at most 400 days "
			      "after it");
		return false;
	}
	if (!step)
		step = (to - from + SERIES_POINTS - 1) / SERIES_POINTS;
	if (step < GP_METER_SERIES_STEP_MS)
		step = GP_METER_SERIES_STEP_MS;
	if ((to - from) / step >= SERIES_POINTS_MAX) {
		gp_http_error(ret, 400,
			      "query \"step_ms\": %lld ms makes more than %d buckets of the "
			      "window; give a longer step",
			      step, SERIES_POINTS_MAX);
		return false;
	}
	*ret_from = from;
	*ret_to = to;
	*ret_step = step;
	return true;
}

static json_t *avg_or_null(bool known, double v)
{
	return known ? json_real(v) : json_null();
}

static json_t *device_point_json(const struct gp_series_point *p)
{
	return json_pack("{s:I, s:i, s:o, s:o, s:f, s:I, s:f, s:o}", "t", (json_int_t)p->t_ms,
			 "samples", p->samples, "memory_used_mib",
			 avg_or_null(p->used, p->mem_used_mib), "memory_used_max_mib",
			 p->used ? json_integer((json_int_t)p->mem_used_max_mib) : json_null(),
			 "allocated_memory_mib", p->mem_alloc_mib, "allocated_memory_max_mib",
			 (json_int_t)p->mem_alloc_max_mib, "allocated_compute_pct",
			 p->compute_alloc_pct, "utilization_pct",
			 avg_or_null(p->util_pct >= 0, p->util_pct));
}

static json_t *tenant_point_json(const struct gp_series_point *p)
{
	return json_pack("{s:I, s:i, s:f, s:I, s:f, s:I, s:f}", "t", (json_int_t)p->t_ms,
			 "samples", p->samples, "memory_used_mib", p->mem_used_mib,
			 "memory_used_max_mib", (json_int_t)p->mem_used_max_mib,
			 "allocated_memory_mib", p->mem_alloc_mib, "allocated_memory_max_mib",
			 (json_int_t)p->mem_alloc_max_mib, "allocated_compute_pct",
			 p->compute_alloc_pct);
}

static json_t *queue_point_json(const struct gp_series_point *p)
{
	return json_pack("{s:I, s:i, s:f, s:I, s:f, s:f}", "t", (json_int_t)p->t_ms,
			 "samples", p->samples, "length", p->mem_used_mib, "length_max",
			 (json_int_t)p->mem_used_max_mib, "oldest_wait_s",
			 p->mem_alloc_mib / 1000.0, "oldest_wait_max_s",
			 (double)p->mem_alloc_max_mib / 1000.0);
}

/* The node's index of the device uuid, or null (a device gone since). */
static json_t *index_of(const struct gp_api *api, const char *uuid)
{
	const struct gp_meter *m = api->loop ? gp_loop_meter(api->loop) : NULL;
	const struct gp_agent_node *node = m ? gp_meter_node(m) : NULL;

	for (unsigned i = 0; node && i < node->devices; i++)
		if (!strcmp(node->device[i].uuid, uuid))
			return json_integer(i);
	return json_null();
}

/* The devices' points (ordered by device, then time) as a list of
 * devices, each with its points. */
static json_t *devices_json(const struct gp_api *api, const struct gp_series_point *p, int n)
{
	json_t *list = json_array(), *points = NULL;

	for (int i = 0; i < n; i++) {
		if (!i || strcmp(p[i].device, p[i - 1].device)) {
			points = json_array();
			json_array_append_new(
				list, json_pack("{s:s, s:s, s:o, s:I, s:o}", "uuid", p[i].device,
						"model", p[i].model, "index",
						index_of(api, p[i].device), "memory_total_mib",
						(json_int_t)p[i].mem_total_mib, "points", points));
		}
		json_array_append_new(points, device_point_json(&p[i]));
	}
	return list;
}

static const char *name_of(const struct gp_tenant *all, int n, int64_t id)
{
	for (int i = 0; i < n; i++)
		if (all[i].id == id)
			return all[i].name;
	return "?";
}

static json_t *tenants_json(const struct gp_series_point *p, int n,
			    const struct gp_tenant *names, int n_names)
{
	json_t *list = json_array(), *points = NULL;

	for (int i = 0; i < n; i++) {
		if (!i || p[i].tenant != p[i - 1].tenant) {
			points = json_array();
			json_array_append_new(list, json_pack("{s:s, s:o}", "tenant",
							      name_of(names, n_names, p[i].tenant),
							      "points", points));
		}
		json_array_append_new(points, tenant_point_json(&p[i]));
	}
	return list;
}

static json_t *queue_json(const struct gp_series_point *p, int n)
{
	json_t *list = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(list, queue_point_json(&p[i]));
	return list;
}

/* What the three series hold for the window; the store's error. */
struct series {
	struct gp_series_point *dev, *ten, *queue;
	int n_dev, n_ten, n_queue;
	int64_t since;
};

static int series_read(struct gp_api *api, int64_t tenant, int64_t from, int64_t to,
		       int64_t step, struct series *x)
{
	int r = gp_store_series_devices(api->store, from, to, step, &x->dev, &x->n_dev);

	if (r == 0)
		r = gp_store_series_tenants(api->store, tenant, from, to, step, &x->ten,
					    &x->n_ten);
	if (r == 0)
		r = gp_store_series_queue(api->store, from, to, step, &x->queue, &x->n_queue);
	if (r == 0)
		r = gp_store_metered_since(api->store, &x->since);
	return r;
}

void gp_api_series(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me, *names = NULL;
	struct series x = {0};
	int64_t now = gp_unix_ms(), from, to, step, tenant;
	int n_names = 0, r;

	if (!gp_api_caller(api, req, ret, &me) || !window_of(req, now, &from, &to, &step, ret))
		return;
	r = gp_store_tenant_list(api->store, &names, &n_names);
	if (r < 0) {
		gp_api_store_failed(api, ret, r, "reading the tenants");
		return;
	}
	if (gp_api_query_tenant(req, &me, names, n_names, &tenant, ret)) {
		r = series_read(api, tenant, from, to, step, &x);
		if (r < 0)
			gp_api_store_failed(api, ret, r, "reading the meter's history");
		else
			gp_http_json(
				ret, 200,
				json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:o}", "since_ms",
					  (json_int_t)from, "until_ms", (json_int_t)to, "step_ms",
					  (json_int_t)step, "metered_since_ms",
					  x.since ? json_integer((json_int_t)x.since) : json_null(),
					  "devices", devices_json(api, x.dev, x.n_dev), "tenants",
					  tenants_json(x.ten, x.n_ten, names, n_names), "queue",
					  queue_json(x.queue, x.n_queue)));
	}
	free(x.dev);
	free(x.ten);
	free(x.queue);
	free(names);
}
