/* names.h — the names gpupool puts on Kubernetes objects, in one place:
 * the extended resource, and the annotations users set on pods, the node
 * program sets on Nodes and pods, and the extender sets at bind. They are
 * the contract between `gpupool node`, `gpupool server --kubernetes` and
 * users (docs/kubernetes.md explains each to users).
 *
 * The resource gpupool.io/gpu counts shares of devices: each device is
 * advertised as `split` units (per model, default 10). A container asks
 * for N units per device it wants: N/split of each device's compute
 * (3 of 10 = 30 %), and as many devices as gpupool.io/gpu-count says
 * (default 1; the request is then N × count units). N = split is a whole
 * device, held exclusively, without the interposer. */
#ifndef GP_K8S_NAMES_H
#define GP_K8S_NAMES_H

#define GP_KUBE_RESOURCE        "gpupool.io/gpu"
#define GP_KUBE_SPLIT_DEFAULT   10

/* ---- set by users on a pod (metadata.annotations) ----------------------- */
/* Device memory per device: "4Gi", "4096Mi", "4G"; default: the share's
 * part of the device's memory (3 of 10 units of a 16 GiB card: 4.8 GiB). */
#define GP_KUBE_ANN_MEMORY      "gpupool.io/gpu-memory"
/* Devices wanted, 1..16 (default 1). */
#define GP_KUBE_ANN_COUNT       "gpupool.io/gpu-count"
/* Allowed device models, comma-separated, each a model's name or whole
 * words of it ("A100,H100"; "A10" is not an A100: core/models.h,
 * gp_model_answers); default any. */
#define GP_KUBE_ANN_MODEL       "gpupool.io/gpu-model"
/* Priority 0..9 (default: from the PriorityClass value, else 5); may be
 * changed while the pod runs. */
#define GP_KUBE_ANN_PRIORITY    "gpupool.io/priority"
/* Compute percent per device, 1..100; may be changed while the pod runs
 * (default: from the units). */
#define GP_KUBE_ANN_COMPUTE     "gpupool.io/compute"
/* hard (default: the share is a cap) or shared (idle time may be borrowed). */
#define GP_KUBE_ANN_ISOLATION   "gpupool.io/isolation"
/* A gang across nodes: pods of one namespace with the same group name are
 * placed all together or not at all, once `pod-group-size` of them (2 to
 * GP_KUBE_GROUP_MAX) exist; until then each waits, saying how many do.
 * Both annotations or neither. */
#define GP_KUBE_ANN_GROUP       "gpupool.io/pod-group"
#define GP_KUBE_ANN_GROUP_SIZE  "gpupool.io/pod-group-size"
#define GP_KUBE_GROUP_MAX       256

/* ---- set by the extender at bind (before the Binding) ------------------
 * {"node": "n1", "devices": ["GPU-…", …], "memoryMiB": 4096,
 *  "compute": 30, "whole": false, "priority": 5, "isolation": "hard",
 *  "boundAt": 1764633600123456789, "sealedAt": 1764633600123456789}
 * with its seal beside it; memoryMiB is per device (for a whole device,
 * the device's own); written again, sealed anew, by a live change the
 * server admits. A device that is a card in MIG mode is "GPU-…@START":
 * the first memory slice of the MIG instance the node program makes for
 * the pod (the core's choice). */
#define GP_KUBE_ANN_PLACEMENT   "gpupool.io/placement"
/* The placement's seal (k8s/seal.h): "v1:" and an HMAC-SHA256 in hex over
 * the pod's UID and the placement's text; the node program applies only a
 * placement whose seal verifies. */
#define GP_KUBE_ANN_SEAL        "gpupool.io/placement-seal"

/* ---- set by the extender on pods that wait ------------------------------
 * The time (unix ms) it asked kube-scheduler to try the pod again: on the
 * pending pods of its scheduler at start-up, and on those it refused when
 * a placed pod ends or goes. A pod's update (anything but its status)
 * moves it out of kube-scheduler's unschedulable queue at once, where it
 * would otherwise wait up to podMaxInUnschedulablePodsDuration (5 min). */
#define GP_KUBE_ANN_RETRY       "gpupool.io/retry"

/* ---- set by the node program ------------------------------------------- */
/* On a pod, at Allocate: the task id its container runs as. */
#define GP_KUBE_ANN_TASK        "gpupool.io/task"
/* On the Node: what the node has,
 * {"version": 1, "driver": "580.65.06", "cuda": 12080,
 *  "devices": [{"uuid": "GPU-…", "model": "NVIDIA A100-SXM4-80GB",
 *               "memoryMiB": 81920, "numa": 0, "nvlink": 0, "split": 10,
 *               "healthy": true, "compatible": true, "reason": ""}, …]}
 * and, for a card in MIG mode, "partitionSet": "A100-MIG" (the core's set
 * its pods are placed by) and "partitionHeld": 0 (its memory slices taken
 * by instances of no pod, a bit each). */
#define GP_KUBE_ANN_DEVICES     "gpupool.io/devices"
/* On the Node: where the server reads the node program's /metrics (each
 * pod's device time for metering and bills), "HOST:PORT": the pod's IP
 * and the --metrics-listen port. */
#define GP_KUBE_ANN_METRICS     "gpupool.io/metrics"

#endif
