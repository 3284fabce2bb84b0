/* trace.h — GPU-sharing cluster traces in the openb CSV layout.
 *
 * Nodes: `sn,cpu_milli,memory_mib,gpu,model`. Pods: either the 11-column
 * layout `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,...` or
 * the 5-column one `name,cpu_milli,memory_mib,num_gpu,gpu_milli`; columns
 * are found by their header names, so order and extra columns do not
 * matter. gpu_spec lists allowed models separated by `|` (empty: any).
 *
 * A pod becomes a gp_request: num_gpu 0 is CPU-only, gpu_milli 1000 asks
 * for num_gpu whole devices, less than 1000 a share of one device. Device
 * memory is not in the trace: devices get 0 MiB and requests ask for none.
 *
 * Ownership: gp_trace_load_* fill a gp_trace the caller releases with
 * gp_trace_release. Errors are returned as a negative errno with
 * "FILE:LINE: reason" in err. */
#ifndef GP_SIM_TRACE_H
#define GP_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "core/cluster.h"

struct gp_trace {
	char model[GP_MODELS_MAX][GP_NAME_MAX];     /* id -> name */
	int models;
	struct gp_node_spec *node;
	size_t nodes;
	struct gp_request *pod;
	size_t pods;
	uint64_t gpus;          /* devices in the cluster */
};

int gp_trace_load_nodes(struct gp_trace *t, const char *path, char *err,
			size_t err_len);
int gp_trace_load_pods(struct gp_trace *t, const char *path, char *err,
		       size_t err_len);
void gp_trace_release(struct gp_trace *t);

/* A cluster holding the trace's nodes, model ids as in the trace. */
int gp_trace_cluster(const struct gp_trace *t, uint64_t tie_seed,
		     struct gp_cluster **ret_cluster);

#endif
