/* resources.h — the vendor-neutral resource model of the scheduling core.
 *
 * A cluster is a set of nodes; a node has host CPU and memory, labels, a
 * zone and up to GP_NODE_DEVICES_MAX devices; a device has a model, memory,
 * compute and a topology position. A request asks for host resources plus
 * `devices` shares of devices on ONE node; a placement says which node and
 * which device takes each share.
 *
 * Units, chosen so that trace shares and memory sizes are exact integers:
 *   CPU          milli-cores                 (1000 = one core)
 *   host memory  MiB
 *   device mem   MiB (hard, never overcommitted)
 *   compute      thousandths of one device   (GP_COMPUTE_WHOLE = 1000 =
 *                100 %). A device's compute capacity is 1000 × its overcommit
 *                ratio (1.0 to 1.5). The API speaks percent; ×10 here.
 *
 * Models and labels are small integer ids interned by the caller (the
 * cluster keeps the name tables); sets of them are 64-bit masks. Everything
 * here is plain data in the caller's storage: no ownership to track. */
#ifndef GP_CORE_RESOURCES_H
#define GP_CORE_RESOURCES_H

#include <stdbool.h>
#include <stdint.h>

#define GP_NODE_DEVICES_MAX 16
#define GP_MODELS_MAX 64
#define GP_LABELS_MAX 64
#define GP_COMPUTE_WHOLE 1000
#define GP_OVERCOMMIT_MAX_PERMILLE 1500
#define GP_NAME_MAX 48

enum gp_vendor {
	GP_VENDOR_NVIDIA,
	GP_VENDOR_ASCEND,
	GP_VENDOR_HYGON,
	GP_VENDOR_CAMBRICON,
	GP_VENDOR_AMD,
	GP_VENDOR_INTEL,
	GP_VENDOR_OTHER,
};

/* What a device is, as registered. Free capacity is tracked by the cluster. */
struct gp_device_spec {
	char uuid[GP_NAME_MAX]; /* e.g. "GPU-5a1c…" or "MIG-…"; may be empty */
	uint8_t model;          /* model id */
	uint8_t vendor;         /* enum gp_vendor */
	uint8_t numa;           /* NUMA node of the host it hangs off */
	uint8_t nvlink;         /* NVLink (or HCCS, xGMI) island; 0 = none */
	uint32_t mem_mib;
	uint16_t overcommit;    /* compute overcommit in permille, 1000..1500 */
	uint16_t max_tasks;     /* slices one device may hold at once; 0 = no cap */
	bool healthy;
	uint8_t partitions;     /* its partition set (core/partition.h); 0: software slices */
	uint8_t part_held;      /* partitioned: units taken by no task's partition (one
				 * being destroyed, one made by hand) */
};

struct gp_node_spec {
	uint32_t cpu_milli;
	uint32_t mem_mib;
	uint64_t labels;        /* label-id mask, e.g. "zone=a", "ib=yes" */
	uint16_t zone;
	uint8_t devices;
	struct gp_device_spec device[GP_NODE_DEVICES_MAX];
};

/* A request for one task. `devices` shares, each of dev_mem_mib and
 * dev_compute on a distinct device of the same node (all or none). `whole`
 * asks for entire idle devices held exclusively: nobody else is placed on
 * them while the task runs (the "exclusive" isolation and the gang of k
 * whole cards of the design). With dev_mem_pct (1-100) a share's memory is
 * that percent of the device it lands on (gp_request_mem_on: 50 % is 8
 * GiB of a 16 GiB T4, 40 GiB of an 80 GiB A100), and dev_mem_mib is only
 * what the request counts for before it is placed (a quota's check: the
 * caller gives its amount on the largest device it accepts). */
struct gp_request {
	uint32_t cpu_milli;
	uint32_t mem_mib;
	uint8_t devices;
	bool whole;
	uint8_t dev_mem_pct;    /* 0: dev_mem_mib */
	bool mixed_models;      /* a gang's devices may be of several models */
	uint32_t dev_mem_mib;
	uint32_t dev_compute;   /* thousandths; ignored when whole */
	uint64_t models;        /* allowed model ids; 0 = any */
	uint64_t labels_all;    /* node must carry all of these labels */
	uint64_t labels_none;   /* ... and none of these */
};

/* Where a request went. device[i] is a device index on `node`. */
struct gp_placement {
	uint32_t node;
	uint8_t devices;
	uint8_t device[GP_NODE_DEVICES_MAX];
	/* On a partitioned device: the first unit of its partition + 1, as
	 * the decision chose it (0: none, or let the commit choose). */
	uint8_t part_start[GP_NODE_DEVICES_MAX];
};

/* Compute that one share of `req` takes on a device. */
static inline uint32_t gp_request_share(const struct gp_request *req)
{
	return req->whole ? GP_COMPUTE_WHOLE : req->dev_compute;
}

/* Memory that one share of `req` takes on a device of mem_total MiB. */
static inline uint32_t gp_request_mem_on(const struct gp_request *req, uint32_t mem_total)
{
	return req->dev_mem_pct ? (uint32_t)((uint64_t)mem_total * req->dev_mem_pct / 100)
				: req->dev_mem_mib;
}

/* GPU demand of a request in thousandths of a device (trace arithmetic). */
static inline uint64_t gp_request_gpu_milli(const struct gp_request *req)
{
	return (uint64_t)req->devices * gp_request_share(req);
}

#endif
