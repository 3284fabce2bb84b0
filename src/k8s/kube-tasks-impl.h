/* kube-tasks-impl.h — what kube-tasks.c (pods as tasks, metered) and
 * kube-services.c (what is asked of the cluster for them: evictions,
 * shares, a Deployment's replicas; the services' engine) share. Not for
 * other files. */
#ifndef GP_K8S_KUBE_TASKS_IMPL_H
#define GP_K8S_KUBE_TASKS_IMPL_H

#include <pthread.h>

#include "base/strmap.h"
#include "k8s/kube-tasks.h"
#include "k8s/objects.h"
#include "server/control-plane.h"

/* A pod followed as a task, and its open interval. */
struct followed {
	struct gp_task row;
	char metrics[GP_KUBE_ADDRESS_MAX];      /* its node program's */
	unsigned devices;
	char uuid[GP_NODE_DEVICES_MAX][GP_KUBE_UUID_MAX];
	char model[GP_NODE_DEVICES_MAX][GP_STORE_DEVICE_MAX];
	uint64_t mem_mib[GP_NODE_DEVICES_MAX];  /* held on each */
	int64_t since_ms;
	bool counted[GP_NODE_DEVICES_MAX];      /* counter[] known */
	bool taken_up;                          /* from before a restart, not resumed yet */
	uint64_t counter[GP_NODE_DEVICES_MAX];
	uint64_t used_us[GP_NODE_DEVICES_MAX], mem_peak_mib[GP_NODE_DEVICES_MAX];
	bool read;                              /* its figures were read this look */
	/* Used over allocated compute in the last interval closed (its
	 * figures read); for the services' autoscaler. */
	bool sampled;
	double effective;
	/* The node verifier's count of its violations per device, as last
	 * read (known: read once; a task taken up learns it without telling). */
	uint64_t violations[GP_NODE_DEVICES_MAX];
	bool violations_known[GP_NODE_DEVICES_MAX];
	bool violations_quiet;
	/* This look: */
	const struct gp_extender_pod *pod;      /* as the extender has it; NULL: gone */
	const struct gp_extender_ended *ended;  /* how it ended, when known */
};

/* What the API or the services asked of the cluster, sent by the thread
 * outside the store's lock (kube-services.c). */
enum ask_kind {
	ASK_EVICT,      /* a pod's task cancelled: the pod evicted */
	ASK_SHARE,      /* a pod's share (and priority) on its annotations */
	ASK_SCALE,      /* a Deployment's replicas */
};
struct ask {
	enum ask_kind kind;
	char uid[GP_KUBE_UID_MAX];              /* EVICT, SHARE: the pod's */
	char ns[GP_KUBE_NAME_MAX], name[GP_KUBE_NAME_MAX]; /* SCALE: the Deployment */
	unsigned compute, priority, replicas;
	bool priority_too;                      /* SHARE: the priority as well */
	char who[GP_STORE_NAME_MAX];
};

struct gp_kube_tasks {
	struct gp_kube_tasks_options o;
	struct gp_strmap followed;      /* pod UID -> struct followed */
	struct gp_strmap nodes_seen;    /* a node's address -> its no-pod violations
					 * (uint64_t, malloc'd) as last read */
	struct gp_meter_records unsaved;
	struct gp_alerts *alerts;
	struct gp_services *services;   /* Deployments scaled (service.h) */
	int64_t admin;                  /* the admin tenant's id; 0: not looked up */
	bool taken_up;                  /* the running tasks of pods read once */
	pthread_t thread;
	pthread_mutex_t lock;           /* stopping, the asks, and its wake */
	pthread_cond_t wake;
	bool stopping;
	struct ask ask[GP_KUBE_TASKS_ASKS_MAX];
	int asks;
};

/* kube-services.c: the services' controller over t's pods (under the
 * store's lock, before the thread starts); sends what was asked since
 * the last look (the thread, without the store's lock). */
int gp_kube_services_new(struct gp_kube_tasks *t);
void gp_kube_asks_send(struct gp_kube_tasks *t);

#endif
