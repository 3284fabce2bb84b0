/* share.c — the site's settings, a user's options and a step's limits
 * (share.h). */
#include "slurm/share.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"

/* An unsigned number from lo to hi, the whole text. */
static bool number_in(const char *text, unsigned lo, unsigned hi, unsigned *ret)
{
	char *end = NULL;
	unsigned long v;

	if (!text || text[0] < '0' || text[0] > '9')
		return false;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*ret = (unsigned)v;
	return true;
}

static bool isolation_of(const char *text, enum gp_isolation *ret)
{
	if (strcmp(text, "hard") == 0)
		*ret = GP_ISOLATION_HARD;
	else if (strcmp(text, "shared") == 0)
		*ret = GP_ISOLATION_SHARED;
	else
		return false;
	return true;
}

/* qos=NAME:P,NAME:P */
static int qos_parse(const char *text, struct gp_slurm_site *s, char *err, size_t err_len)
{
	char copy[512], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", text);
	for (char *item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		unsigned p;

		if (!colon || colon == item ||
		    colon - item >= (long)sizeof(s->qos[0].name) ||
		    !number_in(colon + 1, 0, 9, &p) || s->n_qos == GP_SLURM_QOS_MAX) {
			snprintf(err, err_len,
				 "qos=%s: give QOS:PRIORITY pairs, priority 0-9, at most "
				 "%d "
				 "(qos=high:8,normal:5)",
				 text, GP_SLURM_QOS_MAX);
			return -EINVAL;
		}
		*colon = '\0';
		snprintf(s->qos[s->n_qos].name, sizeof(s->qos[0].name), "%s", item);
		s->qos[s->n_qos++].priority = p;
	}
	return 0;
}

static int bad_arg(const char *arg, const char *what, char *err, size_t err_len)
{
	snprintf(err, err_len, "plugstack.conf argument %s: %s", arg, what);
	return -EINVAL;
}

static int site_arg(const char *arg, struct gp_slurm_site *s, char *err, size_t err_len)
{
	const char *eq = strchr(arg, '=');
	const char *v = eq ? eq + 1 : "";
	size_t key = eq ? (size_t)(eq - arg) : strlen(arg);

#define KEY(k) (key == sizeof(k) - 1 && strncmp(arg, k, key) == 0)
	if (KEY("preload"))
		snprintf(s->preload, sizeof(s->preload), "%s", v);
	else if (KEY("run_dir"))
		snprintf(s->run_dir, sizeof(s->run_dir), "%s", v);
	else if (KEY("nvml"))
		snprintf(s->nvml, sizeof(s->nvml), "%s", v);
	else if (KEY("group"))
		snprintf(s->group, sizeof(s->group), "%s", v);
	else if (KEY("shards")) {
		if (!number_in(v, 1, 1024, &s->shards))
			return bad_arg(
				arg,
				"the shards of one GPU, 1-1024, as gres.conf counts them",
				err, err_len);
	} else if (KEY("mem_min") || KEY("mem_max")) {
		uint64_t *at = KEY("mem_min") ? &s->mem_min : &s->mem_max;

		if (gp_parse_size(v, at) < 0)
			return bad_arg(arg, "a size (16G, 512M)", err, err_len);
	} else if (KEY("compute_min") || KEY("compute_max")) {
		if (!number_in(v, 1, 100,
			       KEY("compute_min") ? &s->compute_min : &s->compute_max))
			return bad_arg(arg, "a percentage, 1-100", err, err_len);
	} else if (KEY("isolation")) {
		if (!isolation_of(v, &s->isolation))
			return bad_arg(arg, "hard or shared", err, err_len);
	} else if (KEY("priority")) {
		if (!number_in(v, 0, 9, &s->priority))
			return bad_arg(arg, "a priority, 0-9", err, err_len);
	} else if (KEY("qos")) {
		return qos_parse(v, s, err, err_len);
	} else {
		return bad_arg(
			arg,
			"unknown (preload, run_dir, nvml, group, shards, mem_min, "
			"mem_max, compute_min, compute_max, isolation, priority, qos)",
			err, err_len);
	}
#undef KEY
	return 0;
}

int gp_slurm_site_parse(int argc, char *const argv[], struct gp_slurm_site *ret,
			char *err, size_t err_len)
{
	*ret = (struct gp_slurm_site){.shards = 16,
				      .isolation = GP_ISOLATION_HARD,
				      .priority = 5,
				      .compute_max = 100};
	for (int i = 0; i < argc; i++) {
		int r = site_arg(argv[i], ret, err, err_len);

		if (r < 0)
			return r;
	}
	if (!ret->preload[0])
		return bad_arg("preload=", "missing: give the path of libgpushare.so",
			       err, err_len);
	if ((ret->mem_max && ret->mem_min > ret->mem_max) ||
	    (ret->compute_min > ret->compute_max))
		return bad_arg("*_min", "above its *_max", err, err_len);
	return 0;
}

/* Each option's name and what to give, by enum gp_slurm_option. */
static const struct {
	const char *name, *want;
} option_text[] = {
	{"--gpu-mem", "not a size of device memory; give e.g. 2G or 512M"},
	{"--gpu-compute", "not a percentage of the device; give 1-100"},
	{"--gpu-priority", "not a priority; give 0 (lowest) to 9"},
	{"--gpu-isolation", "give hard (a cap) or shared (a guarantee)"},
	{"--gpu-report", "takes no value"},
};

/* Reads one option's value into *u: false when it is not one. */
static bool option_read(enum gp_slurm_option which, const char *value,
			struct gp_slurm_user *u)
{
	enum gp_isolation iso;
	unsigned n;

	switch (which) {
	case GP_SLURM_OPT_MEM:
		return value && gp_parse_size(value, &u->mem) == 0 && u->mem > 0;
	case GP_SLURM_OPT_COMPUTE: return number_in(value, 1, 100, &u->compute);
	case GP_SLURM_OPT_PRIORITY:
		if (!number_in(value, 0, 9, &n))
			return false;
		u->priority = (int)n;
		return true;
	case GP_SLURM_OPT_REPORT: u->report = true; return true;
	case GP_SLURM_OPT_ISOLATION:
		if (!value || !isolation_of(value, &iso))
			return false;
		u->isolation = (int)iso;
		return true;
	}
	return false;
}

int gp_slurm_option(enum gp_slurm_option which, const char *value,
		    struct gp_slurm_user *u, char *err, size_t err_len)
{
	if (option_read(which, value, u))
		return 0;
	if ((unsigned)which < sizeof(option_text) / sizeof(option_text[0]))
		snprintf(err, err_len, "%s=%s: %s", option_text[which].name,
			 value ? value : "", option_text[which].want);
	else
		snprintf(err, err_len, "option %d is not gpupool's", (int)which);
	return -EINVAL;
}

static unsigned priority_of(const struct gp_slurm_site *s, const struct gp_slurm_user *u,
			    const char *qos)
{
	if (u->priority >= 0)
		return (unsigned)u->priority;
	for (int i = 0; qos && i < s->n_qos; i++)
		if (strcmp(s->qos[i].name, qos) == 0)
			return s->qos[i].priority;
	return s->priority;
}

int gp_slurm_limits(const struct gp_slurm_site *site, const struct gp_slurm_user *u,
		    const struct gp_slurm_step *step, struct gp_task_limits *ret,
		    char *err, size_t err_len)
{
	unsigned of = site->shards * (step->devices ? step->devices : 1);
	unsigned shards = step->shards > of ? of : step->shards;
	uint64_t mem = step->shards ? step->device_mem / of * shards : step->device_mem;
	unsigned compute = step->shards ? (shards * 100 + of - 1) / of : 100;
	bool bounded = true;

	if (u->mem)
		mem = u->mem;
	if (u->compute)
		compute = u->compute;
	if (mem > step->device_mem) {
		snprintf(err, err_len,
			 "--gpu-mem: %llu MiB is more than the device has (%llu MiB)",
			 (unsigned long long)(mem >> 20),
			 (unsigned long long)(step->device_mem >> 20));
		return -EINVAL;
	}
	if (!step->shards && !u->mem && !u->compute)
		bounded = false; /* whole GPUs, as Slurm gave them */
	if (bounded && ((site->mem_min && mem < site->mem_min) ||
			(site->mem_max && mem > site->mem_max) ||
			compute < site->compute_min || compute > site->compute_max)) {
		snprintf(err, err_len,
			 "%llu MiB and %u %% of each GPU are outside this site's bounds "
			 "(memory %llu MiB to %llu MiB, compute %u %% to %u %%): ask "
			 "within them",
			 (unsigned long long)(mem >> 20), compute,
			 (unsigned long long)(site->mem_min >> 20),
			 (unsigned long long)((site->mem_max ? site->mem_max
							     : step->device_mem) >>
					      20),
			 site->compute_min, site->compute_max);
		return -EINVAL;
	}
	*ret = (struct gp_task_limits){
		.mem_bytes = step->shards || u->mem ? mem : 0,
		.compute = compute,
		.priority = priority_of(site, u, step->qos),
		.isolation = u->isolation >= 0 ? (enum gp_isolation)u->isolation
					       : site->isolation,
	};
	return 0;
}
