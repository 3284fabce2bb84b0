/* api-pool.c — what the pool is made of and what waits for it
 * (docs/api.md): GET /v1/nodes (this machine, as its agent found it; with
 * --kubernetes, the cluster's nodes as the extender has them),
 * GET /v1/devices (each device: identity, memory, utilization at the
 * last sampling, the driver compatibility check, the tasks on it) and
 * GET /v1/queue (the queued tasks in the scheduler's order, with their
 * position and why they wait).
 *
 * The node and devices come from the agent through the loop's meter
 * (api->loop; NULL without --with-agent, when the lists are empty and a
 * note says why). Any tenant may read them; a device lists the ids of
 * the caller's own tasks on it (the admin: all) and counts everyone's.
 * The queue comes from the pool (pool.h), in the scheduler's order, a
 * page at a time: the caller's own tasks (the admin: all, or a tenant's),
 * each with its position in the whole queue. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "core/partition.h"
#include "server/api-impl.h"
#include "vendor/vendor.h"

#define QUEUE_PAGE     500  /* GET /v1/queue: the tasks of a page, by default */
#define QUEUE_PAGE_MAX 2000 /* and at most */
#define NO_AGENT_NOTE                                                                    \
	"this server runs no agent (it was started without --with-agent): it has no "    \
	"devices and starts no tasks"

static json_t *cuda_json(int version)
{
	char text[16];

	snprintf(text, sizeof(text), "%d.%d", version / 1000, version % 1000 / 10);
	return json_string(text);
}

/* {"agent": false, "note": ..., key: []}: the answer without an agent. */
static json_t *no_agent(const char *key)
{
	return json_pack("{s:b, s:s, s:[]}", "agent", 0, "note", NO_AGENT_NOTE, key);
}

/* The running tasks (everyone's), to find them on each device. */
struct running {
	struct gp_task *all;
	int n;
};

/* Is uuid one of the devices of placement ("GPU-a,GPU-b@4")? */
static bool placement_has(const char *placement, const char *uuid)
{
	size_t n = strlen(uuid);

	for (const char *p = strstr(placement, uuid); p && n; p = strstr(p + 1, uuid))
		if ((p == placement || p[-1] == ',') && (p[n] == '\0' || p[n] == ',' || p[n] == '@'))
			return true;
	return false;
}

/* ---- devices -------------------------------------------------------------- */

/* "ok", or why the device is not used or not watched. */
static const char *health(const struct gp_agent_device *dev,
			  const struct gp_meter_device *d, bool sampled)
{
	if (!dev->compatible)
		return "incompatible";
	if (!sampled)
		return "unsampled";
	return d->ok ? "ok" : "unresponsive";
}

/* The ids of the caller's tasks on the device, and how many there are. */
static void device_tasks(json_t *o, const struct gp_tenant *me, const struct running *run,
			 const char *uuid)
{
	json_t *ids = json_array();
	int total = 0;

	for (int i = 0; i < run->n; i++) {
		if (!placement_has(run->all[i].placement, uuid))
			continue;
		total++;
		if (me->admin || run->all[i].tenant == me->id)
			json_array_append_new(ids, json_integer((json_int_t)run->all[i].id));
	}
	json_object_set_new(o, "tasks", ids);
	json_object_set_new(o, "tasks_running", json_integer(total));
}

/* The last sampling's numbers; null before the first. */
static void device_live(json_t *o, const struct gp_meter_device *d, bool sampled)
{
	bool ok = sampled && d->ok;

	json_object_set_new(o, "memory_used_mib",
			    ok ? json_integer((json_int_t)d->mem_used_mib) : json_null());
	json_object_set_new(o, "utilization_pct",
			    ok ? json_integer((json_int_t)d->util_pct) : json_null());
	json_object_set_new(o, "allocated_compute_pct", json_integer(d->alloc_pct));
	json_object_set_new(o, "allocated_memory_mib",
			    json_integer((json_int_t)d->alloc_mem_mib));
}

static json_t *device_json(const struct gp_meter *m, unsigned i, const struct gp_tenant *me,
			   const struct running *run)
{
	const struct gp_agent_node *node = gp_meter_node(m);
	const struct gp_agent_device *dev = &node->device[i];
	const struct gp_meter_device *d = gp_meter_device(m, i);
	bool sampled = gp_meter_last_ms(m) != 0;
	bool nvidia = !dev->vendor || strcmp(dev->vendor->name, "nvidia") == 0;
	const struct gp_part_set *set = gp_part_set(dev->partition_set);
	json_t *o = json_pack("{s:i, s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:b, s:s?, s:s}",
			      "index", (int)i, "uuid", dev->uuid, "name", dev->name, "vendor",
			      dev->vendor ? dev->vendor->name : "nvidia",
			      "pci_bus_id", dev->pci_bus_id, "memory_total_mib",
			      (json_int_t)dev->mem_total_mib, "driver_version",
			      dev->driver_version[0] ? dev->driver_version : node->driver_version,
			      "cuda_version", nvidia ? cuda_json(node->cuda_version) : json_null(),
			      "compatible", dev->compatible,
			      "reason", dev->compatible ? NULL : dev->reason, "health",
			      health(dev, d, sampled));

	json_object_set_new(o, "partition_set", set ? json_string(set->model) : json_null());
	json_object_set_new(o, "nvlink_island", dev->nvlink ? json_integer(dev->nvlink) : json_null());
	device_live(o, d, sampled);
	device_tasks(o, me, run, dev->uuid);
	return o;
}

static bool running_load(struct gp_api *api, struct running *run,
			 struct gp_http_reply *ret)
{
	int r = gp_store_task_list(api->store, -1, GP_TASK_RUNNING, &run->all, &run->n);

	return r < 0 ? gp_api_store_failed(api, ret, r, "listing the running tasks") : true;
}

void gp_api_devices(void *ctx, const struct gp_http_request *req,
		    struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	const struct gp_meter *m = gp_loop_meter(api->loop);
	struct running run = {0};
	struct gp_tenant me;
	json_t *list;

	if (!gp_api_caller(api, req, ret, &me))
		return;
	if (!m) {
		gp_http_json(ret, 200, no_agent("devices"));
		return;
	}
	if (!running_load(api, &run, ret))
		return;
	list = json_array();
	for (unsigned i = 0; i < gp_meter_node(m)->devices; i++)
		json_array_append_new(list, device_json(m, i, &me, &run));
	free(run.all);
	gp_http_json(ret, 200,
		     json_pack("{s:b, s:s, s:o}", "agent", 1, "hostname",
			       gp_meter_node(m)->hostname, "devices", list));
}

/* ---- nodes ---------------------------------------------------------------- */

static json_t *node_json(const struct gp_api_node *n)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:i, s:i, s:I, s:i, s:o}", "hostname",
			      n->hostname, "driver_version", n->driver_version, "cuda_version",
			      cuda_json(n->cuda_version), "devices", (int)n->devices,
			      "devices_usable", (int)n->devices_usable, "memory_total_mib",
			      (json_int_t)n->memory_total_mib, "tasks_running", n->tasks_running,
			      "sampled", n->sampled_ms ? gp_api_time_json(n->sampled_ms / 1000)
						       : json_null());

	if (o && n->schedulable >= 0)
		json_object_set_new(o, "schedulable", json_boolean(n->schedulable));
	return o;
}

/* The machine of the server's agent. */
static void agent_node(const struct gp_meter *m, int tasks_running, struct gp_api_node *ret)
{
	const struct gp_agent_node *n = gp_meter_node(m);

	*ret = (struct gp_api_node){ .cuda_version = n->cuda_version, .devices = n->devices,
				     .tasks_running = tasks_running,
				     .sampled_ms = gp_meter_last_ms(m), .schedulable = -1 };
	snprintf(ret->hostname, sizeof(ret->hostname), "%s", n->hostname);
	snprintf(ret->driver_version, sizeof(ret->driver_version), "%s", n->driver_version);
	for (unsigned i = 0; i < n->devices; i++) {
		ret->memory_total_mib += n->device[i].mem_total_mib;
		ret->devices_usable += n->device[i].compatible;
	}
}

/* The nodes of the cluster an engine drives, as a JSON array. */
static json_t *engine_nodes_json(const struct gp_api *api)
{
	struct gp_api_node *nodes = NULL;
	int n = api->engine_nodes(api->engine_ctx, &nodes);
	json_t *list = json_array();

	for (int i = 0; list && i < n; i++)
		json_array_append_new(list, node_json(&nodes[i]));
	free(nodes);
	return list;
}

void gp_api_nodes(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	const struct gp_meter *m = gp_loop_meter(api->loop);
	struct gp_api_node node;
	struct gp_tenant me;
	int running;

	if (!gp_api_caller(api, req, ret, &me))
		return;
	if (!m && api->engine_nodes) {
		gp_http_json(ret, 200, json_pack("{s:b, s:s, s:o}", "agent", 0, "engine",
						 api->engine, "nodes", engine_nodes_json(api)));
		return;
	}
	if (!m) {
		gp_http_json(ret, 200, no_agent("nodes"));
		return;
	}
	running = gp_store_task_count(api->store, GP_TASK_RUNNING);
	if (running < 0) {
		gp_api_store_failed(api, ret, running, "counting the running tasks");
		return;
	}
	agent_node(m, running, &node);
	gp_http_json(ret, 200, json_pack("{s:b, s:[o]}", "agent", 1, "nodes", node_json(&node)));
}

/* ---- the queue ------------------------------------------------------------ */

static const char *tenant_name(const struct gp_tenant *all, int n, int64_t id)
{
	for (int i = 0; i < n; i++)
		if (all[i].id == id)
			return all[i].name;
	return "";
}

static json_t *queued_json(const struct gp_pool_task *t, int position, const char *tenant,
			   int64_t now)
{
	json_t *o = json_pack("{s:i, s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:I}", "position",
			      position, "id", (json_int_t)t->id, "name", t->name, "tenant",
			      tenant, "state", gp_api_state_name(t->state), "priority",
			      (json_int_t)t->priority, "mem_mib", (json_int_t)t->mem_mib,
			      "compute_pct", (json_int_t)t->compute_pct, "devices",
			      (json_int_t)t->devices);

	json_object_update_new(
		o, json_pack("{s:b, s:b, s:s, s:o, s:I, s:s}", "whole", t->whole,
			     "exclusive", t->exclusive, "model", t->model, "created",
			     gp_api_time_json(t->created / 1000), "waiting_s",
			     (json_int_t)((now - t->created) / 1000), "reason", t->reason));
	return o;
}

/* What GET /v1/queue asks for: whose tasks, in which states, which page
 * (positions after `after`). */
struct queue_query {
	int64_t tenant;
	unsigned states;
	long long after, limit;
};

static bool queue_query_parse(const struct gp_http_request *req, const struct gp_tenant *me,
			      const struct gp_tenant *names, int n_names, struct queue_query *q,
			      struct gp_http_reply *ret)
{
	unsigned queued = GP_TASK_STATE_BIT(GP_TASK_PENDING) |
			  GP_TASK_STATE_BIT(GP_TASK_PREEMPTED);

	if (!gp_api_query_states(req, &q->states, ret) ||
	    !gp_api_query_tenant(req, me, names, n_names, &q->tenant, ret) ||
	    !gp_api_query_number(req, "after", 0, INT32_MAX, 0, &q->after, ret) ||
	    !gp_api_query_number(req, "limit", 1, QUEUE_PAGE_MAX, QUEUE_PAGE, &q->limit, ret))
		return false;
	if (!(q->states & ~queued))
		return true;
	gp_http_error(ret, 400,
		      "query \"state\": the queue holds pending and preempted tasks only");
	return false;
}

/* {"length": N, "queue": [...], "next_after": POSITION or null}: n tasks
 * were read for a page of q->limit, one more when there are more. */
static json_t *queue_json(const struct queue_query *q, const struct gp_pool_task *page,
			  const int *position, int n, int length, const struct gp_tenant *names,
			  int n_names)
{
	json_t *list = json_array();
	bool more = n > q->limit;
	int64_t now = gp_unix_ms();

	if (more)
		n = (int)q->limit;
	for (int i = 0; i < n; i++)
		json_array_append_new(list, queued_json(&page[i], position[i],
							tenant_name(names, n_names, page[i].tenant),
							now));
	return json_pack("{s:i, s:o, s:o}", "length", length, "queue", list, "next_after",
			 more ? json_integer(position[n - 1]) : json_null());
}

void gp_api_queue(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me, *names = NULL;
	struct gp_pool_task *page = NULL;
	struct queue_query q;
	int *position = NULL, n = 0, length = 0, n_names = 0, r;

	if (!gp_api_caller(api, req, ret, &me))
		return;
	r = gp_store_tenant_list(api->store, &names, &n_names);
	if (r < 0) {
		gp_api_store_failed(api, ret, r, "listing tenants");
		return;
	}
	if (queue_query_parse(req, &me, names, n_names, &q, ret)) {
		page = calloc((size_t)q.limit + 1, sizeof(*page));
		position = calloc((size_t)q.limit + 1, sizeof(*position));
		if (page && position &&
		    gp_pool_queue_page(api->pool, q.tenant, q.states, (int)q.after,
				       (int)q.limit + 1, page, position, &n, &length) == 0)
			gp_http_json(ret, 200,
				     queue_json(&q, page, position, n, length, names, n_names));
		else
			gp_http_error(ret, 500, "reading the queue: out of memory");
	}
	free(page);
	free(position);
	free(names);
}
