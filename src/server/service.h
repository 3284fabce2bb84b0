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
 *     after replicas that fail within REPLICA_QUICK_MS of their start it
 *     waits 2, 4, ... up to 64 samplings before the next (a crash loop
 *     neither floods the queue nor hides: the audit row says so, the
 *     service's `crash_loop` says "crash-looping: last exit ...", and
 *     from 3 in a row a critical service.crash-loop alert, cleared once
 *     a replica runs past REPLICA_QUICK_MS or ends otherwise);
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
 * The engine (struct gp_service_engine) is where the replicas run and
 * what it measures of them: on this machine the agent's tasks and the
 * server's meter (gp_service_engine_of_meter); on a Kubernetes cluster
 * (a spec naming a `deployment`) the pods of that Deployment in the
 * namespace named as the tenant, metered from the nodes' figures
 * (k8s/kube-tasks.h). There the Deployment keeps its replicas: a step
 * out or in sets its `replicas` through the scale subresource (the
 * service owns that number, as a HorizontalPodAutoscaler would), and a
 * share is changed on each pod, as its owner would by annotation, so
 * the extender admits it by the same quota rules; a pod that starts at
 * another share is brought to the service's. The same autoscaler, the
 * same audit rows.
 *
 * Ownership: gp_services_new returns a controller the caller frees with
 * gp_services_free; it keeps the store, pool and the engine's context by
 * reference. */
#ifndef GP_SERVER_SERVICE_H
#define GP_SERVER_SERVICE_H

#include <jansson.h>
#include <stdint.h>

#include "core/autoscale.h"
#include "server/alerts.h"
#include "server/meter.h"
#include "server/taskops.h"

#define GP_SERVICE_REPLICAS_MAX 64
#define GP_SERVICES_PER_TENANT	32 /* live services a tenant may have: each costs every sampling */
#define GP_SERVICE_DEPLOYMENT_MAX 128

/* What a service runs: the replicas' task (as POST /v1/tasks would make
 * it), and how it scales. */
struct gp_service_spec {
	struct gp_task task; /* name, command, workdir, template, slice, priority */
	struct gp_scale_policy policy;
	bool autoscale; /* false: replicas stay as set */
	/* "": replicas are tasks of this server's agent; else the name of a
	 * Kubernetes Deployment in the tenant's namespace */
	char deployment[GP_SERVICE_DEPLOYMENT_MAX];
};

/* What the controller needs of the engine that runs the replicas. */
struct gp_service_engine {
	/* Task's used over allocated compute in the last sampling; false
	 * when it was not sampled. */
	bool (*effective)(void *ctx, int64_t task, double *ret);
	/* How far task's share could grow on its devices, in percent of a
	 * card (the least free on any of them). */
	unsigned (*grow_room)(void *ctx, int64_t task);
	/* What tenant's running tasks hold, summed over their devices. */
	void (*tenant_use)(void *ctx, int64_t tenant, uint64_t *ret_mem_mib, uint64_t *ret_pct);
	/* A Deployment's replicas and a pod's share are asked of the cluster
	 * (NULL on one machine, where replicas are the server's tasks): 0,
	 * or a negative errno when it could not be asked. */
	int (*scale)(void *ctx, int64_t tenant, const char *deployment, unsigned replicas);
	int (*share)(void *ctx, const struct gp_task *replica, unsigned share_pct);
	void *ctx;
};

/* The engine of one machine: the agent's tasks, as meter m measures them. */
struct gp_service_engine gp_service_engine_of_meter(const struct gp_meter *m);

struct gp_services;

/* Loads the live services from ops->store, those of engine's kind (a
 * Deployment's when engine->scale is set, else the others); crash loops
 * are raised on `alerts` (the caller's; NULL: none). -ENOMEM or the
 * store's error. */
int gp_services_new(const struct gp_taskops *ops, const struct gp_service_engine *engine,
		    struct gp_alerts *alerts, struct gp_services **ret);
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

/* Sets the tenant's service `name` to `replicas` by hand (who, with why:
 * its reason), within its policy's min_replicas to max_replicas: a step
 * "set", stored and audited (service.scale) as the autoscaler's are;
 * the replicas follow at once (missing ones submitted, the newest past
 * the count cancelled). The autoscaler goes on from there, its cooldown
 * counted from this step as from its own. -ENOENT: no such live
 * service; -ERANGE: outside the bounds. */
int gp_services_set(struct gp_services *sv, const char *who, int64_t tenant,
		    const char *name, unsigned replicas, const char *why);

/* The live service of tenant whose replicas are Deployment `deployment`'s
 * pods: its id, or 0. */
int64_t gp_services_of_deployment(const struct gp_services *sv, int64_t tenant,
				  const char *deployment);

/* One sampling's work (above), at now_ms. */
void gp_services_tick(struct gp_services *sv, int64_t now_ms);

/* The live services of tenant (< 0: all) as a JSON array, each with its
 * spec, replicas (id, state, share, memory, effective utilization,
 * placement, reason), the utilization last fed to the autoscaler, its
 * last decision and, while its replicas crash, `crash_loop` (else null);
 * with a name, also its newest GP_SERVICE_STEPS_SHOWN steps (the
 * store's), newest first. */
#define GP_SERVICE_STEPS_SHOWN 50
json_t *gp_services_json(struct gp_services *sv, int64_t tenant, const char *name);

#endif
