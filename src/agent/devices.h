/* devices.h — what accelerators this node has, and whether gpupool can
 * use each with the installed driver.
 *
 * Discovery goes through NVML, loaded with dlopen (libnvidia-ml.so.1; on
 * a machine without GPUs, simdev's library of the same name answers when
 * LD_LIBRARY_PATH points at build/simdev and GPUPOOL_SIM_DEVICES is set).
 * Nothing links against NVML, so the agent runs, and says why it found
 * nothing, on a machine without a driver.
 *
 * Each device is checked against the compatibility table (devices.c):
 * the oldest driver branch that supports its architecture, and the CUDA
 * driver API libgpushare needs (cuGetProcAddress, CUDA 11.3). A device
 * that fails is reported with the reason and is not scheduled. */
#ifndef GP_AGENT_DEVICES_H
#define GP_AGENT_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_AGENT_DEVICES_MAX 16
#define GP_DEVICE_TEXT_MAX 96

struct gp_agent_device {
	unsigned index;
	char uuid[GP_DEVICE_TEXT_MAX];
	char name[GP_DEVICE_TEXT_MAX];          /* as NVML says: "NVIDIA A100-SXM4-80GB" */
	char pci_bus_id[32];
	uint64_t mem_total_mib;
	bool compatible;
	char reason[160];                       /* why not, when !compatible */
};

struct gp_agent_node {
	char hostname[GP_DEVICE_TEXT_MAX];              /* set by the agent, not discovery */
	char driver_version[GP_DEVICE_TEXT_MAX];        /* "580.65.06" */
	int cuda_version;                               /* 1000 x major + 10 x minor */
	unsigned devices;
	struct gp_agent_device device[GP_AGENT_DEVICES_MAX];
};

/* Fills *ret from NVML at `library` (NULL: libnvidia-ml.so.1). On
 * failure returns a negative errno and says why in err (-ENOENT: no
 * library; -EIO: NVML failed). */
int gp_devices_discover(const char *library, struct gp_agent_node *ret, char *err, size_t err_len);

/* The compatibility check of one device: true when the driver and CUDA
 * versions can serve a device of that name; otherwise false, with the
 * reason (what is needed, what is installed) in `reason`. */
bool gp_devices_compatible(const char *name, const char *driver_version, int cuda_version,
			   char *reason, size_t reason_len);

#endif
