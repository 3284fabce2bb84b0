/* devices.h — what accelerators this node has, of every vendor, and
 * whether gpupool can use each with the installed driver.
 *
 * Discovery asks every registered vendor backend (src/vendor/vendor.h):
 * NVIDIA's through NVML, Ascend's through DCMI, and so on, each library
 * loaded with dlopen (on a machine without accelerators, simdev's
 * libraries of the same names answer when LD_LIBRARY_PATH points at
 * build/simdev and GPUPOOL_SIM_DEVICES is set). Nothing links against a
 * vendor's library, so the agent runs, and says why it found nothing, on
 * a machine without a driver.
 *
 * Each device is checked against its vendor's compatibility table: a
 * device that fails is reported with the reason and is not scheduled. */
#ifndef GP_AGENT_DEVICES_H
#define GP_AGENT_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_AGENT_DEVICES_MAX 16
#define GP_DEVICE_TEXT_MAX 96

struct gp_vendor_ops;

struct gp_agent_device {
	unsigned index;                         /* on this node, across vendors */
	const struct gp_vendor_ops *vendor;
	unsigned local;                         /* as its vendor's library numbers it */
	char driver_version[GP_DEVICE_TEXT_MAX];        /* of its vendor's driver */
	char uuid[GP_DEVICE_TEXT_MAX];
	char name[GP_DEVICE_TEXT_MAX];          /* as its library says: "NVIDIA A100-SXM4-80GB" */
	char pci_bus_id[32];
	uint64_t mem_total_mib;
	bool compatible;
	char reason[160];                       /* why not, when !compatible */
	/* In partition mode (NVIDIA MIG): the core's set of its profiles
	 * (core/partition.h), and the units taken by partitions of no task
	 * (being destroyed, or made by hand); the agent sets both. 0: a card
	 * of software slices. */
	unsigned partition_set;
	uint8_t partition_held;
	/* Its NVLink (HCCS, xGMI) island on this node, from its backend:
	 * devices joined by such links share one; 0: none (PCIe only). */
	uint8_t nvlink;
};

struct gp_agent_node {
	char hostname[GP_DEVICE_TEXT_MAX];              /* set by the agent, not discovery */
	char driver_version[GP_DEVICE_TEXT_MAX];        /* NVIDIA's: "580.65.06" ("" without) */
	int cuda_version;                               /* 1000 x major + 10 x minor; 0 without */
	unsigned devices;
	struct gp_agent_device device[GP_AGENT_DEVICES_MAX];
};

/* Fills *ret with the devices of every registered vendor whose library
 * is here (vendor.h), in registration order. `nvml_library` names
 * NVIDIA's NVML (NULL: $GPUPOOL_NVML_LIBRARY or libnvidia-ml.so.1); each
 * other vendor's library is its default or its variable's. On failure
 * returns a negative errno and says why in err: -ENOENT when no vendor's
 * library could be loaded (err names each), -EIO when one failed. */
int gp_devices_discover(const char *nvml_library, struct gp_agent_node *ret, char *err,
			size_t err_len);

/* NVIDIA's compatibility check of one device (src/vendor/nvidia/manage.c):
 * true when the driver and CUDA versions can serve a device of that
 * name; otherwise false, with the reason (what is needed, what is
 * installed) in `reason`. */
bool gp_devices_compatible(const char *name, const char *driver_version, int cuda_version,
			   char *reason, size_t reason_len);

#endif
