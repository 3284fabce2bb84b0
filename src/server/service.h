/* service.h — services: a tenant's long-running task kept at a number of
 * replicas that scales with its load (issue 16; docs/operations.md).
 *
 * A service is a task's spec (as POST /v1/tasks takes it, its template
 * resolved once, at creation) with replicas, their bounds and an
 * autoscaling policy (core/autoscale.h). Each replica is a task whose
 * `service` is the service's id, submitted, changed and cancelled through
 * the same writes as a tenant's own (taskops.h), so it is queued,
 * placed, metered, billed and audited as any task.
 *
 * The controller runs in the loop's thread, holding the store's lock,
 * after each sampling (the utilization it reads is the meter's):
 *   - it keeps `replicas` live replicas: one that ended (failed, exited,
 *     cancelled by hand, lost) is replaced, one per service per sampling;
 *     after replicas that fail within REPLICA_QUICK_S of their start it
 *     waits 2, 4, ... up to 64 samplings before the next (a crash loop
 *     neither floods the queue nor hides: the audit row says so);
 *   - it feeds the autoscaler the replicas' mean effective utilization
 *     (device time used over the share held, over the last sampling's
 *     interval), each running replica's room to grow on its device, and
 *     the replicas the tenant's quota holds, and takes its step: GROW and
 *     SHRINK change every replica's share live (checked by the
 *     scheduler's rules as a tenant's change is; a replica whose device
 *     cannot take it keeps its share), OUT raises the replicas wanted (the
 *     next sampling submits it), IN cancels the newest replica (a queued
 *     one first). Each step is an audit row `service.scale` with the
 *     autoscaler's reason and figures; the replicas and share wanted are
 *     written to the store with it.
 * The autoscaler's streaks are memory only: a server that restarts
 * starts them over (the replicas and share stay as written).
 *
 * Ownership: gp_services_new returns a controller the caller frees with
 * gp_services_free; it keeps the store, pool and meter by reference. */
#ifndef GP_SERVER_SERVICE_H
#define GP_SERVER_SERVICE_H

#include <jansson.h>
#include <stdint.h>

#include "core/autoscale.h"
#include "server/meter.h"
#include "server/taskops.h"

#define GP_SERVICE_REPLICAS_MAX 64
#define GP_SERVICES_PER_TENANT	32 /* live services a tenant may have: each costs every sampling */

/* What a service runs: the replicas' task (as POST /v1/tasks would make
 * it), and how it scales. */
struct gp_service_spec {
	struct gp_task task; /* name, command, workdir, template, slice, priority */
	struct gp_scale_policy policy;
	bool autoscale; /* false: replicas stay as set */
};

struct gp_services;

/* Loads the live services from ops->store. -ENOMEM or the store's error. */
int gp_services_new(const struct gp_taskops *ops, const struct gp_meter *meter,
		    struct gp_services **ret);
struct gp_services *gp_services_free(struct gp_services *sv); /* NULL is fine */

/* The spec as the store keeps it (JSON text), and back. */
json_t *gp_service_spec_json(const struct gp_service_spec *spec);
int gp_service_spec_parse(const char *text, struct gp_service_spec *ret);

/* Stores a new service of tenant `tenant` (row: name; replicas and
 * share_pct are set from the spec) with the audit row service.create by
 * who, and starts keeping it. -EEXIST: the tenant has one of that name;
 * -EDQUOT: it has GP_SERVICES_PER_TENANT. */
int gp_services_create(struct gp_services *sv, const char *who, int64_t tenant,
		       const char *name, unsigned replicas,
		       const struct gp_service_spec *spec, struct gp_service_row *ret);
/* Removes the tenant's service `name` (audit service.remove by who) and
 * cancels its replicas. -ENOENT: no such live service. */
int gp_services_remove(struct gp_services *sv, const char *who, int64_t tenant,
		       const char *name);

/* One sampling's work (above), at now_ms. */
void gp_services_tick(struct gp_services *sv, int64_t now_ms);

/* The live services of tenant (< 0: all) as a JSON array, each with its
 * spec, replicas (id, state, share, effective utilization), the
 * utilization last fed to the autoscaler and its last decision. */
json_t *gp_services_json(struct gp_services *sv, int64_t tenant, const char *name);

#endif
