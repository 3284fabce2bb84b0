/* manage.c — Huawei Ascend's management side (vendor.h): DCMI (libdcmi.so),
 * loaded with dlopen, for discovery, health and sampling, and the driver
 * compatibility table.
 *
 * DCMI names a chip by (card, device in card); the runtime and the agent
 * by its logical id (`local` here), which dcmi_get_card_id_device_id_from_
 * logicid maps back. A device's id is "NPU-…" from its VDIE die id
 * (gp_ascend_uuid_format), the name of its region for the ACL front end as
 * well. Memory: the 910 series reports its device memory as HBM
 * (dcmi_get_device_hbm_info); chips without HBM (310P) through
 * dcmi_get_device_memory_info_v3. Utilization is the AICore rate. DCMI has
 * no per-process utilization, so `samples` is NULL (vendor.h says how the
 * agent shares the device's busy time then). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gp-ascend.h"
#include "vendor/vendor.h"

extern const struct gp_vendor_ops gp_vendor_ascend;

/* The oldest driver (Ascend HDK) gpupool runs each chip with, by the
 * prefix of DCMI's chip name; the first match counts. These floors are
 * gpupool's: the HDK line that shipped with CANN 7 (23.0) for the 910B,
 * whose ACL has the allocation and event calls the front end hooks, and
 * 22.0 for the 310P. A chip not in the table is accepted. */
static const struct compat_rule {
	const char *chip;
	const char *family;
	int major, minor;
} compat_table[] = {
	{ "910B", "Atlas A2 (Ascend 910B)", 23, 0 },
	{ "310P", "Atlas 300I/V (Ascend 310P)", 22, 0 },
};

/* "24.1.rc3", "23.0.3": major and minor; false when it has neither. */
static bool version_parse(const char *v, int *major, int *minor)
{
	return sscanf(v, "%d.%d", major, minor) == 2;
}

/* The verdict of the table for one chip: true, or false with the reason. */
static bool compatible(const char *chip, const char *driver, char *reason, size_t reason_len)
{
	int major, minor;

	for (size_t i = 0; i < sizeof(compat_table) / sizeof(compat_table[0]); i++) {
		const struct compat_rule *r = &compat_table[i];

		if (strncmp(chip, r->chip, strlen(r->chip)) != 0)
			continue;
		if (!version_parse(driver, &major, &minor) || major < r->major ||
		    (major == r->major && minor < r->minor)) {
			snprintf(reason, reason_len,
				 "%s needs Ascend driver %d.%d or newer; driver \"%.32s\" is installed: "
				 "upgrade the Ascend HDK driver",
				 r->family, r->major, r->minor, driver);
			return false;
		}
		break;
	}
	if (reason_len)
		reason[0] = '\0';
	return true;
}

/* ---- DCMI ---------------------------------------------------------------- */

struct dcmi {
	void *lib;
	int (*init)(void);
	int (*driver_version)(char *, unsigned);
	int (*card_list)(int *, int *, int);
	int (*num_in_card)(int, int *);
	int (*logic_id)(int *, int, int);
	int (*from_logic)(int *, int *, unsigned);
	int (*chip_info)(int, int, struct dcmi_chip_info_v2 *);
	int (*memory_info)(int, int, struct dcmi_get_memory_info_stru *);
	int (*hbm_info)(int, int, struct dcmi_hbm_info *);
	int (*utilization)(int, int, int, unsigned *);
	int (*health)(int, int, unsigned *);
	int (*resource_info)(int, int, struct dcmi_proc_mem_info *, int *);
	int (*die)(int, int, enum dcmi_die_type, struct dcmi_die_id *);
};

static const char *library_of(const char *library)
{
	const char *env = getenv("GPUPOOL_DCMI_LIBRARY");

	return library ? library : env && *env ? env : "libdcmi.so";
}

static int dcmi_load(struct dcmi *m, const char *library, char *err, size_t err_len)
{
	static const char *const names[] = {
		"dcmi_init",
		"dcmi_get_driver_version",
		"dcmi_get_card_list",
		"dcmi_get_device_num_in_card",
		"dcmi_get_device_logic_id",
		"dcmi_get_card_id_device_id_from_logicid",
		"dcmi_get_device_chip_info_v2",
		"dcmi_get_device_memory_info_v3",
		"dcmi_get_device_hbm_info",
		"dcmi_get_device_utilization_rate",
		"dcmi_get_device_health",
		"dcmi_get_device_resource_info",
		"dcmi_get_device_die_v2",
	};
	void **slot[] = {
		(void **)&m->init,	  (void **)&m->driver_version, (void **)&m->card_list,
		(void **)&m->num_in_card, (void **)&m->logic_id,       (void **)&m->from_logic,
		(void **)&m->chip_info,	  (void **)&m->memory_info,    (void **)&m->hbm_info,
		(void **)&m->utilization, (void **)&m->health,	       (void **)&m->resource_info,
		(void **)&m->die,
	};

	memset(m, 0, sizeof(*m));
	m->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	if (!m->lib) {
		snprintf(err, err_len,
			 "cannot load %s (%s): no Ascend driver here; for simulated devices set "
			 "GPUPOOL_SIM_DEVICES and LD_LIBRARY_PATH=build/simdev",
			 library, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slot[i] = dlsym(m->lib, names[i]);
		if (!*slot[i]) {
			snprintf(err, err_len, "%s lacks %s: the Ascend driver is too old for gpupool",
				 library, names[i]);
			return -ENOTSUP;
		}
	}
	return 0;
}

/* Device memory in bytes: HBM where the chip has it, else its DDR. */
static int memory_of(struct dcmi *m, int card, int dev, uint64_t *used, uint64_t *total)
{
	struct dcmi_hbm_info hbm;
	struct dcmi_get_memory_info_stru mem;
	int r = m->hbm_info(card, dev, &hbm);

	if (r == DCMI_OK && hbm.memory_size > 0) {
		*total = hbm.memory_size << 20;
		*used = hbm.memory_usage << 20;
		return 0;
	}
	if (m->memory_info(card, dev, &mem) != DCMI_OK)
		return -EIO;
	*total = mem.memory_size << 20;
	*used = mem.memory_size > mem.memory_available
			? (mem.memory_size - mem.memory_available) << 20
			: 0;
	return 0;
}

/* ---- discovery -------------------------------------------------------------- */

/* One chip into d; a DCMI error code. */
static int device_read(struct dcmi *m, int card, int dev, struct gp_agent_device *d)
{
	struct dcmi_chip_info_v2 chip;
	struct dcmi_die_id die;
	uint64_t used, total;
	int r, logic;

	if ((r = m->logic_id(&logic, card, dev)) != DCMI_OK ||
	    (r = m->chip_info(card, dev, &chip)) != DCMI_OK ||
	    (r = m->die(card, dev, VDIE, &die)) != DCMI_OK)
		return r;
	if (memory_of(m, card, dev, &used, &total) < 0)
		return DCMI_ERR_CODE_INNER_ERR;
	d->local = (unsigned)logic;
	chip.chip_name[sizeof(chip.chip_name) - 1] = '\0';
	snprintf(d->name, sizeof(d->name), "Ascend%s", (const char *)chip.chip_name);
	gp_ascend_uuid_format(&die, d->uuid, sizeof(d->uuid));
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "card %d chip %d", card, dev);
	d->mem_total_mib = total >> 20;
	return DCMI_OK;
}

/* The health verdict: true when DCMI reports the chip healthy. */
static bool healthy(struct dcmi *m, int card, int dev, char *reason, size_t reason_len)
{
	unsigned health = 0;
	int r = m->health(card, dev, &health);

	if (r == DCMI_OK && health == GP_DCMI_HEALTH_OK)
		return true;
	if (r != DCMI_OK)
		snprintf(reason, reason_len, "DCMI cannot read the chip's health (error %d): "
			 "check it with npu-smi info", r);
	else
		snprintf(reason, reason_len, "the chip reports health %u (%s): check it with "
			 "npu-smi info and its error codes", health,
			 health == 1 ? "minor" : health == 2 ? "major" : "critical");
	return false;
}

static int discover(const char *library, struct gp_agent_node *node, char *err, size_t err_len)
{
	struct dcmi m;
	char driver[GP_DEVICE_TEXT_MAX];
	int cards[GP_AGENT_DEVICES_MAX], ncards = 0, r, ret;

	library = library_of(library);
	ret = dcmi_load(&m, library, err, err_len);
	if (ret < 0)
		return ret == -ENOTSUP ? -EIO : ret;
	if ((r = m.init()) != DCMI_OK) {
		snprintf(err, err_len, "DCMI would not start (error %d)", r);
		return -EIO;
	}
	if ((r = m.driver_version(driver, sizeof(driver))) != DCMI_OK ||
	    (r = m.card_list(&ncards, cards, GP_AGENT_DEVICES_MAX)) != DCMI_OK)
		goto fail;
	for (int c = 0; c < ncards; c++) {
		int chips = 0;

		if ((r = m.num_in_card(cards[c], &chips)) != DCMI_OK)
			goto fail;
		for (int i = 0; i < chips && node->devices < GP_AGENT_DEVICES_MAX; i++) {
			struct gp_agent_device *d = &node->device[node->devices];

			*d = (struct gp_agent_device){ .index = node->devices,
						       .vendor = &gp_vendor_ascend };
			if ((r = device_read(&m, cards[c], i, d)) != DCMI_OK)
				goto fail;
			snprintf(d->driver_version, sizeof(d->driver_version), "%s", driver);
			d->compatible = compatible(d->name + strlen("Ascend"), driver, d->reason,
						   sizeof(d->reason)) &&
					healthy(&m, cards[c], i, d->reason, sizeof(d->reason));
			node->devices++;
		}
	}
	return 0;
fail:
	snprintf(err, err_len, "DCMI failed while listing devices (error %d)", r);
	return -EIO;
}

/* ---- sampling ------------------------------------------------------------------ */

static int sampler_open(const char *library, void **ret, char *err, size_t err_len)
{
	struct dcmi *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	r = dcmi_load(m, library_of(library), err, err_len);
	if (r == 0 && m->init() != DCMI_OK) {
		snprintf(err, err_len, "DCMI would not start for usage sampling");
		r = -EIO;
	}
	if (r < 0) {
		free(m);
		return r;
	}
	*ret = m;
	return 0;
}

/* DCMI stays loaded (a driver's library is not made to be unloaded). */
static void sampler_close(void *h)
{
	free(h);
}

static int chip_of(struct dcmi *m, unsigned local, int *card, int *dev)
{
	return m->from_logic(card, dev, local) == DCMI_OK ? 0 : -ENODEV;
}

static int device_sample(void *h, unsigned local, struct gp_vendor_sample *out)
{
	struct dcmi *m = h;
	unsigned util, health;
	uint64_t used, total;
	int card, dev;

	if (chip_of(m, local, &card, &dev) < 0)
		return -ENODEV;
	if (m->health(card, dev, &health) != DCMI_OK || health != GP_DCMI_HEALTH_OK ||
	    m->utilization(card, dev, GP_DCMI_UTIL_AICORE, &util) != DCMI_OK ||
	    memory_of(m, card, dev, &used, &total) < 0)
		return -EIO;
	out->util_pct = util > 100 ? 100 : util;
	out->mem_used_bytes = used;
	out->mem_total_bytes = total;
	return 0;
}

static int processes(void *h, unsigned local, struct gp_vendor_proc *out, int max)
{
	struct dcmi *m = h;
	struct dcmi_proc_mem_info info[GP_DCMI_PROC_MAX];
	int card, dev, n = 0;

	if (chip_of(m, local, &card, &dev) < 0)
		return -ENODEV;
	if (m->resource_info(card, dev, info, &n) != DCMI_OK)
		return -EIO;
	for (int i = 0; i < n && i < max; i++)
		out[i] = (struct gp_vendor_proc){ .pid = (pid_t)info[i].proc_id,
						  .mem_bytes = info[i].proc_mem_usage };
	return n;
}

const struct gp_vendor_ops gp_vendor_ascend = {
	.name = "ascend",
	.library = "libdcmi.so",
	.library_env = "GPUPOOL_DCMI_LIBRARY",
	.runtime = "Ascend ACL (libascendcl.so)",
	.runtime_name = "acl",
	.visible_env = { "ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES", NULL },
	.isolation = GP_VENDOR_SLICES,
	.discover = discover,
	.open = sampler_open,
	.close = sampler_close,
	.device = device_sample,
	.processes = processes,
	.samples = NULL,
};
