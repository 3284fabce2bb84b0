/* kube-tasks.h — on a Kubernetes cluster, pods are the server's tasks:
 * every pod the extender placed and bound becomes a task of its
 * namespace's tenant (the admin's when the namespace is no tenant), named
 * "NAMESPACE/POD" (its first 63 characters), with its pod's UID, node and
 * devices, its slice and priority; it is RUNNING while the pod holds its
 * devices, and ends as the pod does (SUCCEEDED, FAILED, CANCELLED when it
 * was deleted or evicted, PREEMPTED when reclaim evicted it). So `gpupool
 * task ls`, the API and the console list pods, and their usage lands in
 * the same usage records as the tasks of one machine: `gpupool bill`,
 * `advise` and `sim --history` see a cluster.
 *
 * Metering: every sample period the server reads the /metrics of each
 * node program that runs a pod's devices (its address is the Node's
 * gpupool.io/metrics annotation), takes each pod's device-time counter per
 * device (slice-figures.h), and writes one record per pod and device for
 * the interval since the last: the slice held (from the sealed placement
 * the server made) and the device time used (the counter's growth; a
 * counter that went down was restarted, and counts from 0). A node that
 * does not answer leaves its pods' intervals with no time used, and the
 * time is counted when it answers again (the counters keep it).
 *
 * After a restart, the RUNNING tasks of pods are taken up again: those
 * whose pod still runs go on from the end of their last record, their
 * counters read against what their records add up to (the time used
 * while the server was away is counted, and none twice); the others end.
 *
 * Services over Deployments (server/service.h) run here: after each
 * look, the same controller as on one machine, fed each pod's used over
 * allocated compute in the interval just closed; what it asks of the
 * cluster (a pod's share, a Deployment's replicas) is sent by this
 * thread after the store's lock is let go, as evictions are.
 *
 * Threads: one of its own; it writes the store under the server's API
 * lock (gp_http_lock), as the loop does on one machine. */
#ifndef GP_K8S_KUBE_TASKS_H
#define GP_K8S_KUBE_TASKS_H

#include <stdbool.h>

#include "base/http.h"
#include "k8s/extender.h"
#include "server/control-plane.h"

struct gp_kube_tasks_options {
	struct gp_extender *extender;
	struct gp_store *store;
	struct gp_pool *pool;
	struct gp_http *http;           /* the server's API front: its lock is the store's */
	unsigned sample_ms;
	/* Whether the cluster has been listed (before, a pod not seen says
	 * nothing). */
	bool (*synced)(void *ctx);
	void *synced_ctx;
};

struct gp_kube_tasks;

/* Starts the thread. -ENOMEM, or a thread's error. */
int gp_kube_tasks_start(const struct gp_kube_tasks_options *o, struct gp_kube_tasks **ret);
/* Task t's pod (uid) is to be evicted, its task cancelled by `who`
 * (`gpupool task cancel`): the thread does it at once, through the
 * Eviction API (the pod's own grace period), with an event on the pod;
 * its task ends when its pod does. 0, or -EAGAIN when
 * GP_KUBE_TASKS_ASKS_MAX asks wait already (try again). Any thread. */
#define GP_KUBE_TASKS_ASKS_MAX 64
int gp_kube_tasks_cancel(struct gp_kube_tasks *t, const char *uid, const char *who);
/* Pod uid's share (and priority) asked by `who` (`gpupool task set`): the
 * thread writes them on the pod's annotations, as its owner would, and
 * the extender admits or refuses them (extender-live.c). 0, or -EAGAIN
 * as above. Any thread. */
int gp_kube_tasks_share(struct gp_kube_tasks *t, const char *uid, unsigned compute,
			unsigned priority, const char *who);

/* Its services (service.h: services over Deployments), for the API.
 * Under the store's lock. */
struct gp_services *gp_kube_tasks_services(struct gp_kube_tasks *t);

/* Stops it after a last look (its usage so far recorded). Accepts NULL;
 * returns NULL. */
struct gp_kube_tasks *gp_kube_tasks_stop(struct gp_kube_tasks *t);

#endif
