/* control-plane.h — the server's control plane as an engine sees it: the
 * one header of src/server/ that an engine includes (src/k8s/, the
 * Kubernetes cluster; tests/arrows.sh checks it). An engine runs tasks
 * where the server's own agent does not — a cluster's pods — and leaves
 * everything above to the control plane, the same code on every engine:
 *
 *   - tenants and their quotas: the pool's copy (pool.h: gp_pool_tenant_get,
 *     gp_pool_view_init and _release for all of them at once,
 *     gp_pool_tenants_gen to know when they changed), judged by the
 *     core's rules (core/quota.h);
 *   - its tasks: rows in the store, as the API and the loop write them
 *     (store.h: gp_store_task_add, _update, _list, gp_store_tenant_by_name,
 *     _list), kept in the pool (gp_pool_task_put), so that the API, the
 *     CLI and the console list them;
 *   - their usage: the same records as a task of one machine (meter.h:
 *     gp_meter_interval_close, gp_meter_records_save; store.h:
 *     gp_store_usage_of_task after a restart), so that bills, advice and
 *     `sim --history` cover them;
 *   - alerts and audit rows (alerts.h: gp_alerts_violation; store.h:
 *     gp_store_audit);
 *   - services: the one controller and autoscaler over its tasks, given
 *     the engine's figures and its ways to scale (service.h: struct
 *     gp_service_engine);
 *   - what the API asks of it: its nodes for GET /v1/nodes, and a task
 *     cancelled, changed live, its services (api.h: struct gp_api_node and
 *     the engine_* hooks of struct gp_api_options).
 *
 * All of it under the store's lock, which is the API front's
 * (gp_http_lock, base/http.h): an engine's thread takes it as the loop
 * does on one machine, and does its slow work (the cluster's API) after
 * letting it go. */
#ifndef GP_SERVER_CONTROL_PLANE_H
#define GP_SERVER_CONTROL_PLANE_H

#include "server/alerts.h"
#include "server/api.h"
#include "server/meter.h"
#include "server/pool.h"
#include "server/service.h"
#include "server/store.h"

#endif
