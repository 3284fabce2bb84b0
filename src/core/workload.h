/* workload.h — the target workload: which task shapes arrive, how often.
 *
 * Fragmentation-aware policies (fgd, default) judge a node by how much of
 * its free device capacity the shapes that actually arrive could use. A
 * shape is (CPU, devices, share per device, whole, allowed models); host
 * memory is left out, as in the published FGD. Built from a list of past
 * requests: the most frequent shapes that together make up `coverage` of
 * the requests, each weighted by its frequency among the kept shapes (the
 * weights sum to 1, as in the published FGD).
 *
 * A workload may also know the pool it is placed on (gp_workload_set_supply):
 * then each shape carries its scarcity, how much of the pool's device
 * capacity could ever serve it — a task that may only run on a model the
 * pool has few of presses harder on those few devices than its frequency
 * says. The default policy weighs its host-aware fragmentation by it
 * (fgd.c).
 *
 * Ownership: gp_workload_from_requests returns a workload the caller frees
 * with gp_workload_free; it copies what it needs from the requests. */
#ifndef GP_CORE_WORKLOAD_H
#define GP_CORE_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/resources.h"

struct gp_shape {
	uint32_t cpu_milli;
	uint8_t devices;        /* 0 = a CPU-only task */
	uint16_t share;         /* compute per device, thousandths */
	uint64_t models;        /* allowed models; 0 = any */
	uint32_t mem_mib;       /* mean host memory of the shape's requests */
	double weight;          /* share of the kept shapes' requests */
	double scarcity;        /* pool devices ÷ devices that could serve the
				 * shape; 1 until gp_workload_set_supply */
};

struct gp_workload {
	size_t count;
	struct gp_shape *shape;     /* most frequent first */
};

/* coverage in (0, 1]: 0.95 keeps the shapes making up 95 % of requests. */
int gp_workload_from_requests(const struct gp_request *req, size_t n,
			      double coverage, struct gp_workload **ret_workload);
struct gp_workload *gp_workload_free(struct gp_workload *w);

/* Sets each shape's scarcity from the pool's nodes: healthy devices in the
 * pool ÷ healthy devices of the shape's allowed models on the nodes that
 * could hold it (enough such devices, CPU and host memory for one task of
 * the shape). 1 for CPU-only shapes and for shapes no node could hold.
 * Call it before a policy borrows the workload (policies read it when they
 * are made); calling it again replaces the values. */
void gp_workload_set_supply(struct gp_workload *w,
			    const struct gp_node_spec *nodes, size_t n);

#endif
