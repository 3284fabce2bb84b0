/* rocm-smi.c — simdev's librocm_smi64.so.7: ROCm SMI for the simulated
 * AMD and Hygon devices (the management side of both; gpupool's Hygon
 * backend opens the DTK's librocm_smi64.so.2 where it exists, and this
 * one on simdev).
 *
 * It numbers the devices as simdev's HIP runtime does (AMD, then Hygon:
 * hip-ids.h) and, like the real library, ignores the visibility
 * variables. Figures come from simdev's shared state: memory in use
 * (reclaiming dead processes first, so a killed process's memory is gone
 * at the next call), the busy share of the last second, the processes
 * holding memory or a queue on a device. The driver version is
 * $GPUPOOL_SIM_HIP_DRIVER (default 6.8.5), for the compatibility tests.
 * Processes: rsmi_process_info_t's vram_usage is the process's memory on
 * all devices; cu_occupancy is 0 (simdev keeps no such figure). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-hip.h"
#include "simdev/hip/hip-ids.h"
#include "simdev/simdev.h"

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define WINDOW_NS 1000000000ull
#define PROCS_MAX SIM_PROCS_MAX

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim *sim;                 /* kept once opened */
static int inits;                       /* rsmi_init calls not shut down */
static int devs[SIM_DEVICES_MAX];
static int dev_count;

rsmi_status_t rsmi_init(uint64_t flags)
{
	char err[SIM_ERR_MAX];
	rsmi_status_t r = RSMI_STATUS_SUCCESS;

	(void)flags;
	pthread_mutex_lock(&lock);
	if (!sim && sim_open(&sim, err, sizeof(err)) < 0) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: %s\n", err);
		r = RSMI_STATUS_INIT_ERROR;
	} else {
		dev_count = hipsim_devices(sim, devs, SIM_DEVICES_MAX);
		inits++;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

rsmi_status_t rsmi_shut_down(void)
{
	rsmi_status_t r = RSMI_STATUS_SUCCESS;

	pthread_mutex_lock(&lock);
	if (inits == 0)
		r = RSMI_STATUS_INIT_ERROR;
	else
		inits--;
	pthread_mutex_unlock(&lock);
	return r;
}

rsmi_status_t rsmi_status_string(rsmi_status_t status, const char **text)
{
	static const char *const texts[] = {
		[RSMI_STATUS_SUCCESS] = "RSMI_STATUS_SUCCESS: The function has been executed successfully.",
		[RSMI_STATUS_INVALID_ARGS] = "RSMI_STATUS_INVALID_ARGS: The provided arguments do not meet the preconditions required for input.",
		[RSMI_STATUS_NOT_SUPPORTED] = "RSMI_STATUS_NOT_SUPPORTED: This function is not supported in the current environment.",
		[RSMI_STATUS_INIT_ERROR] = "RSMI_STATUS_INIT_ERROR: An error occurred during initialization.",
		[RSMI_STATUS_NOT_FOUND] = "RSMI_STATUS_NOT_FOUND: An item was searched for but not found.",
		[RSMI_STATUS_INSUFFICIENT_SIZE] = "RSMI_STATUS_INSUFFICIENT_SIZE: Not enough resources were available for the operation.",
	};

	if (!text)
		return RSMI_STATUS_INVALID_ARGS;
	*text = (unsigned)status < sizeof(texts) / sizeof(texts[0]) && texts[status]
			? texts[status]
			: "An unknown error occurred";
	return RSMI_STATUS_SUCCESS;
}

/* The simdev index of device dv_ind, or -1 (not initialised, out of range). */
static int device(uint32_t dv_ind)
{
	int d = -1;

	pthread_mutex_lock(&lock);
	if (inits > 0 && dv_ind < (uint32_t)dev_count)
		d = devs[dv_ind];
	pthread_mutex_unlock(&lock);
	return d;
}

#define DEVICE_OR_FAIL(d, dv_ind)                                 \
	int d = device(dv_ind);                                   \
	if (d < 0)                                                \
		return inits > 0 ? RSMI_STATUS_INVALID_ARGS : RSMI_STATUS_INIT_ERROR

rsmi_status_t rsmi_version_str_get(rsmi_sw_component_t component, char *buf, uint32_t len)
{
	if (component != RSMI_SW_COMP_DRIVER || !buf || len == 0)
		return RSMI_STATUS_INVALID_ARGS;
	snprintf(buf, len, "%s", hipsim_driver_version());
	return strlen(hipsim_driver_version()) < len ? RSMI_STATUS_SUCCESS
						      : RSMI_STATUS_INSUFFICIENT_SIZE;
}

rsmi_status_t rsmi_num_monitor_devices(uint32_t *num)
{
	if (!num)
		return RSMI_STATUS_INVALID_ARGS;
	if (inits == 0)
		return RSMI_STATUS_INIT_ERROR;
	*num = (uint32_t)dev_count;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_name_get(uint32_t dv_ind, char *name, size_t len)
{
	DEVICE_OR_FAIL(d, dv_ind);
	if (!name || len == 0)
		return RSMI_STATUS_INVALID_ARGS;
	snprintf(name, len, "%s", sim_device_model(sim, d)->name);
	return strlen(sim_device_model(sim, d)->name) < len ? RSMI_STATUS_SUCCESS
							     : RSMI_STATUS_INSUFFICIENT_SIZE;
}

rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv_ind, uint64_t *id)
{
	DEVICE_OR_FAIL(d, dv_ind);
	if (!id)
		return RSMI_STATUS_INVALID_ARGS;
	*id = hipsim_unique_id(sim, d);
	return RSMI_STATUS_SUCCESS;
}

/* BDFID: domain in bits 63-32, bus 15-8, device 7-3, function 2-0. */
rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t *bdfid)
{
	DEVICE_OR_FAIL(d, dv_ind);
	if (!bdfid)
		return RSMI_STATUS_INVALID_ARGS;
	*bdfid = (uint64_t)sim_device_pci_bus(sim, d) << 8;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv_ind, rsmi_memory_type_t type,
					uint64_t *total)
{
	DEVICE_OR_FAIL(d, dv_ind);
	if (!total || (unsigned)type > RSMI_MEM_TYPE_GTT)
		return RSMI_STATUS_INVALID_ARGS;
	*total = type == RSMI_MEM_TYPE_GTT ? 0 : sim_mem_total(sim, d);
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_usage_get(uint32_t dv_ind, rsmi_memory_type_t type,
					uint64_t *used)
{
	DEVICE_OR_FAIL(d, dv_ind);
	if (!used || (unsigned)type > RSMI_MEM_TYPE_GTT)
		return RSMI_STATUS_INVALID_ARGS;
	*used = type == RSMI_MEM_TYPE_GTT ? 0 : sim_mem_used(sim, d);
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv_ind, uint32_t *busy)
{
	DEVICE_OR_FAIL(d, dv_ind);
	if (!busy)
		return RSMI_STATUS_INVALID_ARGS;
	if (sim_device_lost(sim, d))
		return RSMI_STATUS_NOT_FOUND;
	*busy = sim_device_utilization(sim, d, WINDOW_NS);
	return RSMI_STATUS_SUCCESS;
}

/* Every process on any device, with its memory on all of them; how many. */
static int processes(rsmi_process_info_t *out, int max)
{
	int n = 0;

	for (int i = 0; i < dev_count; i++) {
		struct sim_proc_info p[PROCS_MAX];
		int k = sim_device_procs(sim, devs[i], p, PROCS_MAX);

		for (int j = 0; j < k && j < PROCS_MAX; j++) {
			int at = 0;

			while (at < n && out[at].process_id != (uint32_t)p[j].pid)
				at++;
			if (at == n) {
				if (n == max)
					continue;
				out[n++] = (rsmi_process_info_t){ .process_id = (uint32_t)p[j].pid };
			}
			out[at].vram_usage += p[j].mem_bytes;
		}
	}
	return n;
}

rsmi_status_t rsmi_compute_process_info_get(rsmi_process_info_t *procs, uint32_t *num_items)
{
	rsmi_process_info_t all[PROCS_MAX];
	int n;

	if (!num_items)
		return RSMI_STATUS_INVALID_ARGS;
	if (inits == 0)
		return RSMI_STATUS_INIT_ERROR;
	n = processes(all, PROCS_MAX);
	if (!procs) {
		*num_items = (uint32_t)n;
		return RSMI_STATUS_SUCCESS;
	}
	if (*num_items < (uint32_t)n) {
		memcpy(procs, all, *num_items * sizeof(*procs));
		return RSMI_STATUS_INSUFFICIENT_SIZE;
	}
	memcpy(procs, all, (size_t)n * sizeof(*procs));
	*num_items = (uint32_t)n;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_compute_process_info_by_pid_get(uint32_t pid, rsmi_process_info_t *proc)
{
	rsmi_process_info_t all[PROCS_MAX];
	int n;

	if (!proc)
		return RSMI_STATUS_INVALID_ARGS;
	if (inits == 0)
		return RSMI_STATUS_INIT_ERROR;
	n = processes(all, PROCS_MAX);
	for (int i = 0; i < n; i++)
		if (all[i].process_id == pid) {
			*proc = all[i];
			return RSMI_STATUS_SUCCESS;
		}
	return RSMI_STATUS_NOT_FOUND;
}

rsmi_status_t rsmi_compute_process_gpus_get(uint32_t pid, uint32_t *dv_indices,
					    uint32_t *num_devices)
{
	uint32_t n = 0;

	if (!num_devices)
		return RSMI_STATUS_INVALID_ARGS;
	if (inits == 0)
		return RSMI_STATUS_INIT_ERROR;
	for (int i = 0; i < dev_count; i++) {
		struct sim_proc_info p[PROCS_MAX];
		int k = sim_device_procs(sim, devs[i], p, PROCS_MAX);
		bool on = false;

		for (int j = 0; j < k && j < PROCS_MAX; j++)
			on |= (uint32_t)p[j].pid == pid;
		if (!on)
			continue;
		if (dv_indices && n < *num_devices)
			dv_indices[n] = (uint32_t)i;
		n++;
	}
	if (dv_indices && n > *num_devices)
		return RSMI_STATUS_INSUFFICIENT_SIZE;
	*num_devices = n;
	return RSMI_STATUS_SUCCESS;
}
