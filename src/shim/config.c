/* config.c — parsing libgpushare's environment (see config.h). */
#include "shim/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/proc.h"

/* An unsigned number in [lo, hi] from variable `name`, or def when unset. */
static int env_uint(const char *name, unsigned lo, unsigned hi, unsigned def,
		    unsigned *ret, char *err, size_t err_len)
{
	const char *text = getenv(name);
	unsigned long v;
	char *end;

	*ret = def;
	if (!text)
		return 0;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (*text < '0' || *text > '9' || *end || errno || v < lo || v > hi) {
		snprintf(err, err_len, "%s=\"%s\": expected a whole number from %u to %u",
			 name, text, lo, hi);
		return -EINVAL;
	}
	*ret = (unsigned)v;
	return 0;
}

static int parse_mem_limits(struct gp_shim_config *cfg, char *err, size_t err_len)
{
	const char *text = getenv("GPUPOOL_MEM_LIMIT");
	char buf[512], *save = NULL;

	if (!text)
		return 0;
	/* Every item counts: "4G,,8G" is a mistake, not two limits. */
	if (strlen(text) >= sizeof(buf) || !*text || strstr(text, ",,") || *text == ',' ||
	    text[strlen(text) - 1] == ',')
		goto bad;
	strcpy(buf, text);
	for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (cfg->mem_limits == GP_SHIM_DEVICES_MAX ||
		    gp_parse_size(item, &cfg->mem_limit[cfg->mem_limits]) < 0 ||
		    cfg->mem_limit[cfg->mem_limits] == 0)
			goto bad;
		cfg->mem_limits++;
	}
	if (cfg->mem_limits == 0)
		goto bad;
	cfg->mem_limited = true;
	return 0;
bad:
	snprintf(err, err_len,
		 "GPUPOOL_MEM_LIMIT=\"%s\": expected a size such as 4G or 4096M, or a comma list"
		 " of them (one per device)", text);
	return -EINVAL;
}

static int parse_isolation(struct gp_shim_config *cfg, char *err, size_t err_len)
{
	const char *text = getenv("GPUPOOL_ISOLATION");

	cfg->isolation = GP_ISOLATION_HARD;
	if (!text || strcmp(text, "hard") == 0)
		return 0;
	if (strcmp(text, "shared") == 0) {
		cfg->isolation = GP_ISOLATION_SHARED;
		return 0;
	}
	snprintf(err, err_len, "GPUPOOL_ISOLATION=\"%s\": expected hard or shared", text);
	return -EINVAL;
}

static int parse_names(struct gp_shim_config *cfg, char *err, size_t err_len)
{
	const char *dir = getenv("GPUPOOL_RUN_DIR"), *id = getenv("GPUPOOL_TASK_ID");

	if (dir && (strlen(dir) >= sizeof(cfg->run_dir) || !*dir)) {
		snprintf(err, err_len, "GPUPOOL_RUN_DIR is empty or too long");
		return -EINVAL;
	}
	snprintf(cfg->run_dir, sizeof(cfg->run_dir), "%s", dir ? dir : "");
	if (!id) {
		/* Its own task; the start time keeps a reused pid from finding
		 * the limits of a task that died before it. */
		snprintf(cfg->task_id, sizeof(cfg->task_id), "pid-%d-%llu", (int)getpid(),
			 (unsigned long long)gp_proc_start_time(getpid()));
		return 0;
	}
	if (!*id || strlen(id) >= sizeof(cfg->task_id) || strpbrk(id, " \t\n/")) {
		snprintf(err, err_len,
			 "GPUPOOL_TASK_ID=\"%s\": expected 1 to %d characters without spaces or '/'",
			 id, GP_TASK_ID_MAX - 1);
		return -EINVAL;
	}
	snprintf(cfg->task_id, sizeof(cfg->task_id), "%s", id);
	return 0;
}

/* The secret is never echoed: the message names the variable only. */
static int parse_secret(struct gp_shim_config *cfg, char *err, size_t err_len)
{
	const char *secret = getenv("GPUPOOL_TASK_SECRET");

	if (!secret)
		return 0;
	if (!gp_task_secret_is_valid(secret)) {
		snprintf(err, err_len,
			 "GPUPOOL_TASK_SECRET: expected an even number (%d to %d) of hexadecimal digits",
			 GP_TASK_SECRET_MIN, GP_TASK_SECRET_MAX);
		return -EINVAL;
	}
	snprintf(cfg->task_secret, sizeof(cfg->task_secret), "%s", secret);
	return 0;
}

int gp_shim_config_load(struct gp_shim_config *cfg, char *err, size_t err_len)
{
	memset(cfg, 0, sizeof(*cfg));
	if (parse_mem_limits(cfg, err, err_len) < 0 ||
	    env_uint("GPUPOOL_COMPUTE", 1, 100, 100, &cfg->compute, err, err_len) < 0 ||
	    env_uint("GPUPOOL_PRIORITY", 0, 9, 5, &cfg->priority, err, err_len) < 0 ||
	    env_uint("GPUPOOL_SLICE_MS", 1, 1000, 50, &cfg->slice_ms, err, err_len) < 0 ||
	    parse_isolation(cfg, err, err_len) < 0 || parse_names(cfg, err, err_len) < 0 ||
	    parse_secret(cfg, err, err_len) < 0)
		return -EINVAL;
	return 0;
}

void gp_shim_config_limits(const struct gp_shim_config *cfg, int dev,
			   struct gp_task_limits *ret)
{
	*ret = (struct gp_task_limits){ .compute = cfg->compute, .priority = cfg->priority,
					.isolation = cfg->isolation };
	if (cfg->mem_limited)
		ret->mem_bytes = cfg->mem_limit[cfg->mem_limits == 1 ? 0 :
						dev < cfg->mem_limits ? dev : cfg->mem_limits - 1];
}
