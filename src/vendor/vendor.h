/* vendor.h — a vendor backend: what the node side needs from one family
 * of accelerators.
 *
 * Every vendor is one folder, src/vendor/NAME/: its management side here
 * (manage.c: one struct gp_vendor_ops), its interposer front end
 * (shim-*.c, over src/shim/front.h) where its isolation is software
 * slices, and its meson.build. It is registered by its name in the
 * `vendors` list of src/vendor/meson.build (the one registration line;
 * registry.c is generated from it). docs/vendors.md has the recipe.
 *
 * The management library is loaded with dlopen, never linked, so the agent
 * runs (and says why it found nothing) where a vendor's driver is absent.
 * Each backend numbers its devices as its own library and runtime do
 * (`local`); the agent numbers the node's devices across vendors.
 *
 * Ownership: a sampler handle from open() is the caller's until close().
 * Functions return 0 (or a count) or a negative errno; err, where given,
 * gets one line fit for the user. */
#ifndef GP_VENDOR_VENDOR_H
#define GP_VENDOR_VENDOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/devices.h"

/* One device, now. */
struct gp_vendor_sample {
	unsigned util_pct;              /* 0-100, over the library's last period */
	uint64_t mem_used_bytes, mem_total_bytes;
};

/* A process holding memory or a context on a device. */
struct gp_vendor_proc {
	pid_t pid;
	uint64_t mem_bytes;
	uint64_t mem_max_bytes; /* the most it held, where the library keeps it
				 * (NVML's accounting); 0: not known */
};

/* A per-process utilization sample (NVML's kind): util_pct of the device
 * over the period ending at timestamp_us (CLOCK_REALTIME µs). */
struct gp_vendor_proc_sample {
	pid_t pid;
	uint64_t timestamp_us;
	unsigned util_pct;
};

/* A hardware partition's profile on one card: a fixed shape (NVIDIA MIG
 * "3g.40gb", Ascend vNPU "vir10_3c_32g"). A card is `units` placement
 * units wide (MIG: memory slices); a profile takes `units` of them,
 * starting at one of the units in `starts` (bit i: unit i). */
struct gp_partition_profile {
	char name[32];
	unsigned id;                    /* the library's profile id */
	uint64_t mem_mib;
	unsigned compute_permille;      /* of the card */
	unsigned units;
	uint32_t starts;
};

/* A partition that exists on a card. */
struct gp_partition {
	char uuid[GP_DEVICE_TEXT_MAX];  /* as the runtime's visibility takes it: "MIG-…" */
	unsigned profile_id;
	unsigned start;                 /* its first unit */
	unsigned id;                    /* the library's id of it on its card (MIG: the GPU
					 * instance's), below 256 */
};

/* A partition used as a device of its own (static use: one made by hand):
 * the `local` that device(), processes() and samples() take for it. */
#define GP_VENDOR_PART_LOCAL(card, id) (0x10000u | ((unsigned)(id) & 0xffu) << 8 | \
					((unsigned)(card) & 0xffu))
#define GP_VENDOR_LOCAL_IS_PART(local) (((local) & 0x10000u) != 0)

enum gp_vendor_isolation {
	GP_VENDOR_SLICES = 1,           /* software: libgpushare's front end for the runtime */
	GP_VENDOR_PARTITIONS = 2,       /* hardware: MIG instances, vNPUs, … */
};

struct gp_vendor_ops {
	const char *name;               /* "nvidia": the label in metrics, bills and the API */
	const char *library;            /* the management library's default soname */
	const char *library_env;        /* the variable naming another ("GPUPOOL_NVML_LIBRARY") */
	const char *runtime;            /* what the interposer wraps, for messages and docs */
	/* The runtime a program is built for, as a task names it to run on
	 * this vendor's cards (`submit --runtime`): "cuda", "acl", "hip",
	 * "cnrt", "ze"; vendors may share one (AMD's and Hygon's run HIP). */
	const char *runtime_name;
	/* The variables a task's runtime reads to see its devices, NULL
	 * terminated: each is set to the task's devices of this vendor, by
	 * UUID when visible_by_uuid (CUDA takes "GPU-…"), else by their
	 * local indices. */
	const char *visible_env[4];
	bool visible_by_uuid;
	unsigned isolation;             /* enum gp_vendor_isolation, or'ed */

	/* Appends this vendor's devices to node->device[node->devices…]
	 * (and counts them in node->devices): vendor, local, uuid, name,
	 * pci_bus_id, mem_total_mib, driver_version, and the verdict of the
	 * vendor's compatibility table (compatible, or reason: what is
	 * needed, what is installed, what to do). `library` NULL: the
	 * default or library_env's. -ENOENT: no devices of this vendor here
	 * (the library is absent, or lists none: err says which); -EIO: it
	 * failed (err says how). (NVIDIA's answers 0 for an NVML that lists
	 * no device, as the agent always has.) */
	int (*discover)(const char *library, struct gp_agent_node *node, char *err,
			size_t err_len);

	/* Sampling: a handle kept open for the sampler's life, used from
	 * one thread. */
	int (*open)(const char *library, void **ret, char *err, size_t err_len);
	void (*close)(void *h);
	int (*device)(void *h, unsigned local, struct gp_vendor_sample *out);
	/* The device's processes: how many there are (may exceed max; out
	 * holds the first max), or a negative errno. */
	int (*processes)(void *h, unsigned local, struct gp_vendor_proc *out, int max);
	/* Per-process utilization samples newer than since_us, as processes
	 * counts; NULL where the library keeps none (then a task's used time
	 * is the device's busy time shared among the tasks on it, in
	 * proportion to their compute shares: docs/vendors.md). */
	int (*samples)(void *h, unsigned local, uint64_t since_us,
		       struct gp_vendor_proc_sample *out, int max);

	/* Hardware partitions, on a sampler's handle; NULL where the vendor
	 * has none. `profiles` answers how many profiles the card offers
	 * now (0: it is not in partition mode) and its width in units;
	 * `partitions` how many exist (both as `processes` counts). A
	 * partition is made of one profile at one start unit (the core
	 * chooses both: src/core/partition.h) and destroyed by its UUID;
	 * -EBUSY when it is in use. */
	int (*profiles)(void *h, unsigned local, struct gp_partition_profile *out, int max,
			unsigned *ret_units);
	int (*partitions)(void *h, unsigned local, struct gp_partition *out, int max);
	int (*partition_create)(void *h, unsigned local, unsigned profile_id, unsigned start,
				struct gp_partition *ret, char *err, size_t err_len);
	int (*partition_destroy)(void *h, unsigned local, const char *uuid, char *err,
				 size_t err_len);
};

/* Every registered vendor, NULL terminated (registry.c, generated). */
extern const struct gp_vendor_ops *const gp_vendors[];

/* The vendor of this name, or NULL. */
const struct gp_vendor_ops *gp_vendor_find(const char *name);

/* The vendors whose cards run `runtime`, as a model term list ("amd|hygon"),
 * in buf; how many (0: no vendor runs it). */
int gp_vendor_runtime_vendors(const char *runtime, char *buf, size_t len);
/* Every runtime a task may name, "cuda, acl, hip, …", in buf. */
void gp_vendor_runtime_names(char *buf, size_t len);

#endif
