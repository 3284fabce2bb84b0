/* slice-figures.h — what a pod used of each of its devices, as the node
 * program serves it on /metrics and the server reads it back for
 * metering and bills: the contract between the two, written and read
 * here only.
 *
 * Per pod and device, Prometheus text (version 0.0.4):
 *   gpupool_slice_used_seconds_total{namespace,pod,uid,container,UUID,Hostname}
 *       the device time the pod's processes used there since its
 *       container was allocated (a counter);
 *   gpupool_slice_memory_used_bytes{...}  what they hold there now;
 *   gpupool_slice_violations_total{...}  the processes of the pod the
 *       node's verifier found breaking its slice there (a counter);
 *   gpupool_slice_memory_limit_bytes{...}, gpupool_slice_compute_percent{...}
 *       the slice (a whole device: all its memory, 100).
 * A pod that ended keeps its lines for GP_SLICE_KEEP_S more seconds, so
 * that the server reads its last figures. Per node:
 *   gpupool_node_violations_no_pod_total  the device processes of no pod
 *       its verifier found (a counter): someone using a card outside
 *       Kubernetes, or a pod's process that left its cgroup's sight.
 * Pure: no I/O. */
#ifndef GP_K8S_SLICE_FIGURES_H
#define GP_K8S_SLICE_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "k8s/objects.h"

#define GP_SLICE_KEEP_S 60

struct gp_slice_figure {
	char ns[GP_KUBE_NAME_MAX], pod[GP_KUBE_NAME_MAX], uid[GP_KUBE_UID_MAX];
	char container[GP_KUBE_NAME_MAX], uuid[GP_KUBE_UUID_MAX], node[GP_KUBE_NAME_MAX];
	uint64_t used_us;               /* device time, since allocated */
	uint64_t mem_used_bytes, mem_limit_bytes;
	unsigned compute_pct;
	uint64_t violations;
};

/* The HELP and TYPE lines, once before the figures. */
void gp_slice_figures_head(FILE *f);
/* One pod's lines on one device. */
void gp_slice_figure_write(FILE *f, const struct gp_slice_figure *s);

/* The figures in a /metrics text: the used time, memory used and
 * violations (with namespace and pod) of every (uid, UUID) that has a
 * used-seconds, memory-used or violations line (other lines are skipped; a malformed one is skipped,
 * not fatal; a label value holds no "}"). *ret is
 * malloc'd (the caller frees it), *ret_n how many. -ENOMEM. */
int gp_slice_figures_read(const char *text, struct gp_slice_figure **ret, size_t *ret_n);

/* The node's count of violations by processes of no pod: written (with
 * its HELP and TYPE), and read back from a /metrics text (false: no such
 * line). */
void gp_node_violations_write(FILE *f, uint64_t no_pod);
bool gp_node_violations_read(const char *text, uint64_t *ret);

#endif
