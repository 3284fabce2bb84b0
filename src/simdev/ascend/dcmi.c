/* dcmi.c — simdev's libdcmi.so: Huawei's DCMI management library for
 * simulated Ascend NPUs.
 *
 * The agent's Ascend backend (src/vendor/ascend/manage.c) and libgpushare's
 * ACL front end ask DCMI what NPUs there are, what they are, how busy and
 * how full they are, which processes hold their memory, and their die ids.
 * This library answers from the shared simdev state (simdev.h), so it sees
 * what every process using simdev's libascendcl.so does.
 *
 * Topology: each Ascend device of GPUPOOL_SIM_DEVICES is one card with one
 * chip (device 0 in the card); card ids and logical ids follow the order of
 * GPUPOOL_SIM_DEVICES among the Ascend devices. The VDIE die id carries
 * the device's simdev UUID (gp_ascend_uuid_format turns it into "NPU-…").
 * The 910B keeps its memory in HBM (dcmi_get_device_hbm_info; the
 * memory_info_v3 call reports the control CPU's DDR, 16 GiB, as on the real
 * chip); the 310P has no HBM (hbm_info: DCMI_ERR_CODE_NOT_SUPPORT) and
 * reports its device memory through memory_info_v3. A lost device
 * (`simctl lose`) reports health 3 (critical).
 *
 * GPUPOOL_SIM_ASCEND_DRIVER sets the driver version reported (default
 * SIM_ASCEND_DRIVER), so that a test can show the compatibility table's
 * refusal. vNPUs (dcmi_create_vdevice) are not simulated: the calls answer
 * DCMI_ERR_CODE_NOT_SUPPORT. Only the dcmi_* names are exported
 * (libdcmi.map); nothing prints unless GPUPOOL_LOG is set. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-ascend.h"
#include "simdev/simdev.h"

/* A plausible Ascend HDK driver of 2024; simulated, no such driver runs. */
#define SIM_ASCEND_DRIVER "24.1.rc3"
#define CONTROL_DDR_MB 16384ULL

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result = DCMI_ERR_CODE_INNER_ERR;
static struct sim *sim;
static int ascend[SIM_DEVICES_MAX];     /* card id -> simdev index */
static int cards;

static void init_once_fn(void)
{
	char err[SIM_ERR_MAX];

	if (sim_open(&sim, err, sizeof(err)) != 0) {
		if (getenv("GPUPOOL_LOG"))
			fprintf(stderr, "simdev: %s\n", err);
		return;
	}
	cards = sim_vendor_devices(sim, "ascend", ascend, SIM_DEVICES_MAX);
	init_result = DCMI_OK;
}

int dcmi_init(void)
{
	pthread_once(&init_once, init_once_fn);
	return init_result;
}

/* The simdev index of (card, device), or -1. */
static int device_of(int card_id, int device_id)
{
	if (init_result != DCMI_OK || card_id < 0 || card_id >= cards || device_id != 0)
		return -1;
	return ascend[card_id];
}

#define REQUIRE_DEVICE(dev, card_id, device_id)                 \
	int dev = device_of(card_id, device_id);                \
	if (dev < 0)                                            \
		return DCMI_ERR_CODE_INVALID_DEVICE_ID

int dcmi_get_driver_version(char *driver_ver, unsigned int len)
{
	const char *v = getenv("GPUPOOL_SIM_ASCEND_DRIVER");

	if (!driver_ver || len == 0)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	if (init_result != DCMI_OK)
		return DCMI_ERR_CODE_INNER_ERR;
	if ((size_t)snprintf(driver_ver, len, "%s", v && *v ? v : SIM_ASCEND_DRIVER) >= len)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	return DCMI_OK;
}

int dcmi_get_card_list(int *card_num, int *card_list, int list_len)
{
	if (!card_num || !card_list || list_len < 0)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	if (init_result != DCMI_OK)
		return DCMI_ERR_CODE_INNER_ERR;
	if (list_len < cards)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	for (int i = 0; i < cards; i++)
		card_list[i] = i;
	*card_num = cards;
	return DCMI_OK;
}

int dcmi_get_device_num_in_card(int card_id, int *device_num)
{
	REQUIRE_DEVICE(dev, card_id, 0);
	(void)dev;
	if (!device_num)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	*device_num = 1;
	return DCMI_OK;
}

int dcmi_get_device_logic_id(int *device_logic_id, int card_id, int device_id)
{
	REQUIRE_DEVICE(dev, card_id, device_id);
	(void)dev;
	if (!device_logic_id)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	*device_logic_id = card_id;
	return DCMI_OK;
}

int dcmi_get_card_id_device_id_from_logicid(int *card_id, int *device_id,
					    unsigned int device_logic_id)
{
	if (!card_id || !device_id)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	if (init_result != DCMI_OK || device_logic_id >= (unsigned)cards)
		return DCMI_ERR_CODE_INVALID_DEVICE_ID;
	*card_id = (int)device_logic_id;
	*device_id = 0;
	return DCMI_OK;
}

int dcmi_get_device_chip_info_v2(int card_id, int device_id, struct dcmi_chip_info_v2 *chip_info)
{
	const struct sim_model *m;
	const char *name;

	REQUIRE_DEVICE(dev, card_id, device_id);
	if (!chip_info)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	m = sim_device_model(sim, dev);
	name = strncmp(m->name, "Ascend", 6) == 0 ? m->name + 6 : m->name;
	memset(chip_info, 0, sizeof(*chip_info));
	snprintf((char *)chip_info->chip_type, sizeof(chip_info->chip_type), "Ascend");
	snprintf((char *)chip_info->chip_name, sizeof(chip_info->chip_name), "%s", name);
	snprintf((char *)chip_info->chip_ver, sizeof(chip_info->chip_ver), "V1");
	snprintf((char *)chip_info->npu_name, sizeof(chip_info->npu_name), "%s", m->name);
	chip_info->aicore_cnt = (unsigned)m->sms;
	return DCMI_OK;
}

static bool has_hbm(int dev)
{
	return strstr(sim_device_model(sim, dev)->name, "910") != NULL;
}

int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *hbm_info)
{
	REQUIRE_DEVICE(dev, card_id, device_id);
	if (!hbm_info)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	if (!has_hbm(dev))
		return DCMI_ERR_CODE_NOT_SUPPORT;
	memset(hbm_info, 0, sizeof(*hbm_info));
	hbm_info->memory_size = sim_mem_total(sim, dev) >> 20;
	hbm_info->memory_usage = (sim_mem_used(sim, dev) + (1u << 20) - 1) >> 20;
	hbm_info->freq = 1600;
	hbm_info->temp = 40;
	return DCMI_OK;
}

int dcmi_get_device_memory_info_v3(int card_id, int device_id,
				   struct dcmi_get_memory_info_stru *memory_info)
{
	unsigned long long total, used;

	REQUIRE_DEVICE(dev, card_id, device_id);
	if (!memory_info)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	memset(memory_info, 0, sizeof(*memory_info));
	if (has_hbm(dev)) {
		total = CONTROL_DDR_MB;
		used = 0;
	} else {
		total = sim_mem_total(sim, dev) >> 20;
		used = (sim_mem_used(sim, dev) + (1u << 20) - 1) >> 20;
	}
	memory_info->memory_size = total;
	memory_info->memory_available = used < total ? total - used : 0;
	memory_info->freq = 3200;
	memory_info->utiliza = total ? (unsigned)(used * 100 / total) : 0;
	return DCMI_OK;
}

int dcmi_get_device_utilization_rate(int card_id, int device_id, int input_type,
				     unsigned int *utilization_rate)
{
	REQUIRE_DEVICE(dev, card_id, device_id);
	if (!utilization_rate)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	switch (input_type) {
	case GP_DCMI_UTIL_AICORE:
	case 13:                        /* overall */
		*utilization_rate = sim_device_utilization(sim, dev, 0);
		return DCMI_OK;
	case GP_DCMI_UTIL_HBM: {
		uint64_t total = sim_mem_total(sim, dev);

		*utilization_rate = total ? (unsigned)(sim_mem_used(sim, dev) * 100 / total) : 0;
		return DCMI_OK;
	}
	default:
		return DCMI_ERR_CODE_NOT_SUPPORT;
	}
}

int dcmi_get_device_health(int card_id, int device_id, unsigned int *health)
{
	REQUIRE_DEVICE(dev, card_id, device_id);
	if (!health)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	*health = sim_device_lost(sim, dev) ? 3u : GP_DCMI_HEALTH_OK;
	return DCMI_OK;
}

int dcmi_get_device_resource_info(int card_id, int device_id, struct dcmi_proc_mem_info *proc_info,
				  int *proc_num)
{
	struct sim_proc_info procs[SIM_PROCS_MAX];
	int n, k = 0;

	REQUIRE_DEVICE(dev, card_id, device_id);
	if (!proc_info || !proc_num)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	n = sim_device_procs(sim, dev, procs, SIM_PROCS_MAX);
	for (int i = 0; i < n && i < SIM_PROCS_MAX && k < GP_DCMI_PROC_MAX; i++) {
		if (procs[i].mem_bytes == 0)
			continue;       /* DCMI lists processes by the memory they hold */
		proc_info[k].proc_id = (int)procs[i].pid;
		proc_info[k].proc_mem_usage = (unsigned long)procs[i].mem_bytes;
		k++;
	}
	*proc_num = k;
	return DCMI_OK;
}

int dcmi_get_device_die_v2(int card_id, int device_id, enum dcmi_die_type input_type,
			   struct dcmi_die_id *die_id)
{
	unsigned char b[16];

	REQUIRE_DEVICE(dev, card_id, device_id);
	if (!die_id)
		return DCMI_ERR_CODE_INVALID_PARAMETER;
	if (input_type != VDIE && input_type != NDIE)
		return DCMI_ERR_CODE_NOT_SUPPORT;
	sim_device_uuid_bytes(sim, dev, b);
	memset(die_id, 0, sizeof(*die_id));
	for (int w = 0; w < 4; w++)
		die_id->soc_die[w] = (unsigned)b[4 * w] << 24 | (unsigned)b[4 * w + 1] << 16 |
				     (unsigned)b[4 * w + 2] << 8 | b[4 * w + 3];
	if (input_type == NDIE)
		for (int w = 0; w < 4; w++)
			die_id->soc_die[w] ^= 0x5a5a5a5au;
	return DCMI_OK;
}

int dcmi_create_vdevice(int card_id, int device_id, struct dcmi_create_vdev_res_stru *vdev,
			struct dcmi_create_vdev_out *out)
{
	REQUIRE_DEVICE(dev, card_id, device_id);
	(void)dev;
	(void)vdev;
	(void)out;
	return DCMI_ERR_CODE_NOT_SUPPORT;
}

int dcmi_set_destroy_vdevice(int card_id, int device_id, unsigned int vdevid)
{
	REQUIRE_DEVICE(dev, card_id, device_id);
	(void)dev;
	(void)vdevid;
	return DCMI_ERR_CODE_NOT_SUPPORT;
}
