/* share.h — what the SPANK plugin (spank.c) decides, without Slurm: the
 * site's settings from plugstack.conf, a user's --gpu-* options, and the
 * limits a job step gets on each of its GPUs.
 *
 * A step's share of a device is the shards it holds on the node over the
 * shards of the devices it was given (`shards=` per GPU, as gres.conf
 * counts them), or the whole device for whole GPUs (--gres=gpu:N); the
 * user's --gpu-mem and --gpu-compute replace it, within the site's floors
 * and ceilings; the priority is the user's, else the job's QOS mapped by
 * the site (`qos=high:8,normal:5`), else the site's default. Pure
 * computation: no Slurm, no I/O. Functions return 0 or -EINVAL with one
 * line for the user in err. */
#ifndef GP_SLURM_SHARE_H
#define GP_SLURM_SHARE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/region.h"

#define GP_SLURM_QOS_MAX 16

/* The site's settings: the plugin's arguments in plugstack.conf. */
struct gp_slurm_site {
	char preload[PATH_MAX]; /* preload=: libgpushare.so (required) */
	char run_dir[PATH_MAX]; /* run_dir=: the devices' regions */
	char nvml[PATH_MAX];	/* nvml=: NVML's library ("": the default) */
	char group[64];	 /* group=: the group every GPU user is in ("": the job's) */
	unsigned shards; /* shards=: of one GPU (default 16) */
	uint64_t mem_min, mem_max; /* mem_min=, mem_max=: bytes a device (0: none) */
	unsigned compute_min, compute_max; /* compute_min=, compute_max=: percent */
	enum gp_isolation isolation;	   /* isolation=hard|shared (default hard) */
	unsigned priority;		   /* priority=: the default, 0-9 (default 5) */
	struct {
		char name[32];
		unsigned priority;
	} qos[GP_SLURM_QOS_MAX]; /* qos=NAME:P,NAME:P */
	int n_qos;
};

/* A user's options (srun, sbatch, salloc). */
enum gp_slurm_option {
	GP_SLURM_OPT_MEM,	/* --gpu-mem=SIZE */
	GP_SLURM_OPT_COMPUTE,	/* --gpu-compute=PCT */
	GP_SLURM_OPT_PRIORITY,	/* --gpu-priority=0-9 */
	GP_SLURM_OPT_ISOLATION, /* --gpu-isolation=hard|shared */
	GP_SLURM_OPT_REPORT,	/* --gpu-report (no value) */
};

struct gp_slurm_user {
	uint64_t mem;	  /* 0: from the shards */
	unsigned compute; /* 0: from the shards */
	int priority;	  /* -1: the QOS's or the site's */
	int isolation;	  /* -1: the site's */
	bool report;	  /* srun prints the step's figures at its end */
};

#define GP_SLURM_USER_NONE ((struct gp_slurm_user){.priority = -1, .isolation = -1})

int gp_slurm_site_parse(int argc, char *const argv[], struct gp_slurm_site *ret,
			char *err, size_t err_len);

/* One option's value into *u. */
int gp_slurm_option(enum gp_slurm_option which, const char *value,
		    struct gp_slurm_user *u, char *err, size_t err_len);

/* What a step holds on this node. */
struct gp_slurm_step {
	unsigned devices;    /* GPUs it was given here */
	unsigned shards;     /* shards it holds here; 0: whole GPUs */
	const char *qos;     /* the job's QOS, or NULL */
	uint64_t device_mem; /* bytes, of the smallest of its devices */
};

/* The limits of a step on each of its devices. */
int gp_slurm_limits(const struct gp_slurm_site *site, const struct gp_slurm_user *u,
		    const struct gp_slurm_step *step, struct gp_task_limits *ret,
		    char *err, size_t err_len);

#endif
