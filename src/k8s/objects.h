/* objects.h — Kubernetes Pods and Nodes as gpupool reads them: what a pod
 * asks of gpupool (its units of gpupool.io/gpu and the annotations of
 * names.h), where the extender placed it, and what devices a node
 * published. Pure functions over JSON (jansson), shared by the extender
 * (extender.c) and the node program (node.c), so both read an object the
 * same way.
 *
 * A pod's request: the sum of its containers' requests (CPU in
 * milli-cores, memory in MiB; a limit stands for a missing request, as
 * Kubernetes defaults it), at least the largest of its init containers',
 * and the units of gpupool.io/gpu of its containers (limits; requests
 * must equal them for an extended resource). Units per device = units ÷
 * gpupool.io/gpu-count, which must divide them.
 *
 * Ownership: everything is copied into the caller's structs; JSON given
 * in is borrowed; JSON returned is a new reference. Functions return 0 or
 * a negative errno: -EINVAL with the reason in err (one line, naming the
 * annotation or field and what to do). */
#ifndef GP_K8S_OBJECTS_H
#define GP_K8S_OBJECTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/resources.h"

#define GP_KUBE_NAME_MAX 254     /* DNS subdomain (253) + NUL */
#define GP_KUBE_UID_MAX 64
#define GP_KUBE_GPU_CONTAINERS_MAX 8    /* containers of one pod that ask for units */
#define GP_KUBE_ADDRESS_MAX 128  /* "HOST:PORT" */
#define GP_KUBE_MODEL_TEXT_MAX 256
#define GP_KUBE_UUID_MAX GP_NAME_MAX

enum gp_kube_isolation {
	GP_KUBE_HARD,
	GP_KUBE_SHARED,
};

/* Where the extender put a pod (the gpupool.io/placement annotation). */
struct gp_kube_placement {
	char node[GP_KUBE_NAME_MAX];
	unsigned devices;
	char device[GP_NODE_DEVICES_MAX][GP_KUBE_UUID_MAX];   /* UUIDs */
	/* On a card in partition mode (MIG): its partition's first unit
	 * + 1, as the core chose it (0: none; a whole card gets its largest
	 * profile). Written "UUID@START" in the annotation, as the server's
	 * placements are. */
	uint8_t part_start[GP_NODE_DEVICES_MAX];
	uint64_t memory_mib;            /* per device */
	unsigned compute;               /* percent per device */
	bool whole;
	unsigned priority;              /* 0..9, as the server granted it */
	enum gp_kube_isolation isolation;
	int64_t bound_at;               /* unix ns */
	int64_t sealed_at;              /* unix ns: made, or changed live (seal.h) */
};

struct gp_kube_pod {
	char ns[GP_KUBE_NAME_MAX], name[GP_KUBE_NAME_MAX], uid[GP_KUBE_UID_MAX];
	char node[GP_KUBE_NAME_MAX];    /* spec.nodeName; "" until bound */
	char scheduler[GP_KUBE_NAME_MAX];
	char container[GP_KUBE_NAME_MAX];       /* the first that asks for units */
	/* Its containers that ask for units, in their order (the kubelet
	 * allocates them so), and how many each: they share the pod's slice
	 * (units, all of them), as one task. */
	unsigned gpu_containers;
	unsigned container_units[GP_KUBE_GPU_CONTAINERS_MAX];
	/* Its containers are gone: Succeeded, Failed, or deleted with none
	 * of its containers running (a pod being deleted keeps its devices
	 * while its containers run their grace period). */
	bool finished;
	bool failed;                    /* phase Failed */
	bool deleting;                  /* deletionTimestamp set */
	uint32_t cpu_milli, mem_mib;    /* host requests */
	unsigned units;                 /* gpupool.io/gpu, all devices; 0: not ours */
	unsigned count;                 /* devices (gpu-count, default 1) */
	uint64_t memory_mib;            /* gpu-memory per device; 0: proportional */
	char models[GP_KUBE_MODEL_TEXT_MAX];    /* gpu-model; "": any */
	unsigned priority;              /* 0..9 */
	unsigned compute;               /* compute annotation, percent; 0: from units */
	enum gp_kube_isolation isolation;
	char group[GP_KUBE_NAME_MAX];   /* pod-group; "": placed alone */
	unsigned group_size;            /* pod-group-size; 0 without a group */
	bool placed;
	struct gp_kube_placement placement;
	char task[96];                  /* gpupool.io/task; "" until allocated */
	/* The Deployment it is a replica of (its controller, a ReplicaSet
	 * named DEPLOYMENT-HASH with HASH its pod-template-hash label); "":
	 * none. */
	char deployment[GP_KUBE_NAME_MAX];
};

/* Is a the HOST:PORT of an address the server may ask (a host name or
 * IP address, a port 1..65535)? */
bool gp_kube_address_valid(const char *a);

/* An object's annotation `key`, or NULL (the object's storage). */
const char *gp_kube_annotation(const json_t *obj, const char *key);

/* Reads a v1 Pod. A pod that does not ask for gpupool.io/gpu is read too
 * (units 0). Bad annotations are -EINVAL, with what is wrong in err. */
int gp_kube_pod_read(const json_t *pod, struct gp_kube_pod *ret, char *err, size_t err_len);

/* One device a node published (gpupool.io/devices). */
struct gp_kube_device {
	char uuid[GP_KUBE_UUID_MAX];
	char model[GP_KUBE_NAME_MAX];
	uint64_t memory_mib;
	int numa, nvlink;
	unsigned split;
	bool healthy, compatible;
	char reason[160];               /* why not compatible; "" when it is */
	/* In partition mode (MIG): the core's partition set its pods are
	 * placed by ("A100-MIG": core/partition.h), and the units taken by
	 * partitions of no pod (made by hand, or being destroyed), a bit
	 * each. "": a card of software slices. */
	char partition_set[32];
	uint8_t partition_held;
};

struct gp_kube_node {
	char name[GP_KUBE_NAME_MAX];
	bool schedulable;               /* not cordoned, Ready not False */
	uint32_t cpu_milli, mem_mib;    /* status.allocatable */
	char driver[64];                /* as the node program published it */
	int cuda_version;               /* 12040: 12.4 */
	char metrics[GP_KUBE_ADDRESS_MAX]; /* the node program's /metrics, "HOST:PORT"; "": none */
	unsigned devices;
	struct gp_kube_device device[GP_NODE_DEVICES_MAX];
};

/* Reads a v1 Node; a node without the devices annotation has 0 devices.
 * A malformed annotation is -EINVAL. */
int gp_kube_node_read(const json_t *node, struct gp_kube_node *ret, char *err, size_t err_len);

/* The devices annotation's value for these devices (and driver, cuda),
 * a JSON text the caller frees. */
char *gp_kube_devices_text(const struct gp_kube_device *d, unsigned n, const char *driver,
			   int cuda_version);

/* The placement annotation's value, a JSON text the caller frees. */
char *gp_kube_placement_text(const struct gp_kube_placement *p);

/* A Kubernetes quantity ("500m", "2", "4Gi", "1.5G", "1e3") in thousandths
 * of its unit (CPU: milli-cores; bytes: milli-bytes). -EINVAL when it is
 * not one, -ERANGE when it is too large. */
int gp_kube_quantity_milli(const char *text, int64_t *ret);

/* The UID of the pod whose cgroup a /proc/PID/cgroup text names: kubelet
 * names a pod's cgroup after its UID, ".../pod<UID>/..." with the cgroupfs
 * driver and ".../kubepods-<qos>-pod<UID, '-' as '_'>.slice/..." with
 * systemd's. The UID in ret (GP_KUBE_UID_MAX) with dashes; -ENOENT when the
 * text names no pod. */
int gp_kube_pod_uid_of_cgroup(const char *text, char *ret, size_t len);

/* Does device model `model` match the gpu-model list `models` (comma or
 * '|' separated names; "" matches everything)? Each term is a model's
 * name as gpupool matches it everywhere (core/models.h,
 * gp_model_answers): the whole name, whole words of it ("A100", not
 * "A10"), a vendor's short name, or the vendor. */
bool gp_kube_model_matches(const char *models, const char *model);

#endif
