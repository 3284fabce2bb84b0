/* node-impl.h — `gpupool node --kubernetes`, the program of every
 * accelerator node of a cluster; internal to src/k8s/node*.c.
 *
 * node.c: the command, its options, the devices (NVML, checked against
 * the compatibility table) with their health sampled every --health-ms,
 * published on the Node object (names.h, gpupool.io/devices) and
 * advertised to the kubelet through the device plugin (plugin.h) as
 * `split` units each, and /metrics.
 * node-pods.c: this node's pods, from an informer (fieldSelector
 * spec.nodeName): Allocate finds the pod the extender placed, admits its
 * task in the limits table of each of its devices (a managed region:
 * region.h) with a fresh secret, and answers the container's environment
 * and mounts (its devices' files, the limits table read-only); a changed compute, priority or isolation annotation is
 * written into the regions at once (when the devices can take it); a pod
 * that ends or goes has its task forgotten and its slots given back.
 * A pod placed on a card in partition mode (MIG) gets a partition of its
 * own at its first Allocate (agent/partitions.h: the profile its share
 * needs, at the start the extender chose), sees it as its device, and
 * has it destroyed when it ends or goes; the ledger gives a pod that
 * outlives this program its partitions back, and destroys those of pods
 * gone meanwhile.
 * node-verify.c: the verifier over the devices' processes, mapped to pods
 * by their cgroups.
 *
 * Threads: the main one (health, publishing), the plugin's (Allocate),
 * the informer's (pods), the metrics listener's. They share struct node
 * under node->lock; the API handle is used under node->api_lock. */
#ifndef GP_K8S_NODE_IMPL_H
#define GP_K8S_NODE_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/agent.h"
#include "agent/devices.h"
#include "agent/partitions.h"
#include "agent/usage.h"
#include "agent/verifier.h"
#include "base/strmap.h"
#include "k8s/client.h"
#include "k8s/objects.h"
#include "k8s/plugin.h"
#include "k8s/seal.h"
#include "k8s/slice-figures.h"
#include "shim/region.h"

#define GP_NODE_SHIM_IN_CONTAINER "/usr/local/lib/gpupool/libgpushare.so"
#define GP_NODE_RUN_DIR_IN_CONTAINER "/run/gpupool"

struct node_options {
	char node_name[GP_KUBE_NAME_MAX];
	char plugin_dir[512], resource[128];
	char run_dir[512], shim_host_path[512];
	char nvml[512];                 /* "": libnvidia-ml.so.1 */
	char metrics_listen[64];        /* "ADDR:PORT"; "" or "off": none */
	char metrics_address[GP_KUBE_ADDRESS_MAX]; /* the server reads it there; "": nowhere */
	unsigned health_ms;
	gid_t task_group;
	struct split { char model[64]; unsigned n; } split[16];
	int splits;
	char placement_key[512];
	enum gp_verify_policy verify;   /* agent.h; default kill */
	unsigned verify_ms;
	uint64_t verify_slack_mib;
	struct gp_kube_options kube;
};

struct node_device {
	struct gp_agent_device d;       /* index, uuid, name, memory, compatible */
	int numa;
	unsigned split;
	bool healthy;
	struct gp_region *region;       /* managed; NULL when not compatible */
	unsigned util_pct;
	uint64_t mem_used_mib;
};

/* A pod of this node that asks for gpupool.io/gpu. */
struct node_pod {
	struct gp_kube_pod p;
	bool allocated;                 /* its task is admitted on its devices */
	/* Its GPU containers the kubelet has allocated so far (in order: one
	 * Allocate each); all of them join its one task, with its secret. */
	unsigned containers_allocated;
	char secret[GP_TASK_SECRET_LEN + 1];
	char task[GP_TASK_ID_MAX];
	struct gp_task_limits applied;  /* what its devices' tables hold */
	/* On cards in partition mode (MIG): a partition of its own on each
	 * of its devices, owned by its UID (node->parts), its limits whole
	 * in the partition's region; made at its first Allocate, destroyed
	 * when it ends or goes. */
	bool on_parts;
	unsigned devices;
	int dev[GP_NODE_DEVICES_MAX];   /* into node->dev */
	enum gp_seal_state seal;        /* of its placement as last read */
	char refused[256];              /* the last live change refused, said once */
	/* node-meter.c: its id for the sampler (0: never allocated), and
	 * per device the time its processes used since allocated, and the
	 * memory they held at the last sampling. */
	int64_t meter_id;
	uint64_t used_us[GP_NODE_DEVICES_MAX];
	uint64_t mem_used_mib[GP_NODE_DEVICES_MAX];
	uint64_t violations[GP_NODE_DEVICES_MAX];     /* node-verify.c's, told */
};

/* A pod's last figures on one device, kept after it went (node-meter.c). */
#define GP_NODE_GONE_MAX 128
struct node_gone {
	struct gp_slice_figure figure;
	uint64_t until_ns;              /* monotonic; 0: an empty slot */
};

struct node {
	struct node_options o;
	pthread_mutex_t lock, api_lock;
	struct gp_agent_node found;     /* driver, CUDA version */
	struct node_device dev[GP_AGENT_DEVICES_MAX];
	unsigned devices;
	struct gp_strmap pods;          /* uid -> struct node_pod */
	struct gp_kube_config *config;
	struct gp_kube *api;
	struct gp_plugin *plugin;
	struct gp_kube_informer *informer;
	struct gp_seal_key seal;        /* placements apply only when sealed with it */
	/* The cards in partition mode and the pods' partitions on them
	 * (agent/partitions.h; the ledger RUN_DIR/partitions), over `found`;
	 * their partition_held copied into dev[] by the main thread. */
	struct gp_parts parts;
	uint64_t allocations, live_changes, releases, violations;
	uint64_t violations_no_pod;     /* of them, by processes of no pod */
	int64_t meter_ids;              /* the last pod's meter id */
	struct node_gone gone[GP_NODE_GONE_MAX];        /* a ring */
	unsigned gone_next;
	/* The verifier's thread (node-verify.c), its own device sampler. */
	struct gp_verifier *verifier;
	struct gp_usage *verify_usage;
	pthread_t verify_thread;
	pthread_mutex_t verify_lock;
	pthread_cond_t verify_wake;
	bool verify_stop, verify_running;
};

/* node-pods.c */
extern const struct gp_kube_informer_ops gp_node_pod_ops;
extern const struct gp_plugin_ops gp_node_plugin_ops;
/* The device of node n with this UUID, or -1. */
int gp_node_device_of(const struct node *n, const char *uuid);
/* Frees every pod (at exit). */
void gp_node_pods_clear(struct node *n);

/* node-meter.c. The pod of process pid, from its cgroup: 0 and its UID,
 * or -ENOENT. */
int gp_node_pod_uid_of_pid(pid_t pid, char uid[GP_KUBE_UID_MAX]);
/* The sampler u maps device processes to pods (u may be NULL). */
void gp_node_meter_open(struct node *n, struct gp_usage *u);
/* One sampling of the devices (into ret) and of each allocated pod's use
 * of them; takes the lock itself. The sampler's error. */
int gp_node_meter_sample(struct node *n, struct gp_usage *u, struct gp_usage_device *ret);
/* Under the lock: pod k was allocated now (a new meter id, counts from
 * 0); k went (its last figures kept for GP_SLICE_KEEP_S); the slice
 * figures of /metrics. */
void gp_node_meter_start(struct node *n, struct node_pod *k);
void gp_node_meter_gone(struct node *n, const struct node_pod *k);
void gp_node_meter_write(struct node *n, FILE *f);

/* node-verify.c: the verifier's thread, by --verify (off: none). */
int gp_node_verify_start(struct node *n);
void gp_node_verify_stop(struct node *n);

#endif
