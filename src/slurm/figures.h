/* figures.h — a job step's GPU figures as one line of text, and back.
 *
 * At a step's end the SPANK plugin (spank.c) writes what the step had and
 * used of each GPU into the job's AdminComment, where sacct shows it and
 * Slurm's accounting database keeps it; `gpupool bill --slurm` (sacct.c)
 * reads it back from there. One format, written and read here:
 *
 *   gpupool slurm-42.0: GPU-…  (Tesla T4) 2.013 s at 50 %, allocated 1.007 GPU-s,
 *       used 0.934 GPU-s, memory 3840 MiB; GPU-… (…) …
 *
 * (one line; a step's devices separated by "; ", a job's steps by a
 * space). Times are in milliseconds, so that a bill adds up exactly what
 * the line says. Pure text: no Slurm, no I/O. */
#ifndef GP_SLURM_FIGURES_H
#define GP_SLURM_FIGURES_H

#include <stddef.h>
#include <stdint.h>

#define GP_SLURM_FIGURE_TEXT 96 /* as GP_DEVICE_TEXT_MAX */

/* What one step had and used of one GPU. */
struct gp_slurm_figure {
	char step[GP_SLURM_FIGURE_TEXT];  /* its task id: "slurm-42.0" */
	char uuid[GP_SLURM_FIGURE_TEXT];  /* "GPU-…" */
	char model[GP_SLURM_FIGURE_TEXT]; /* as NVML names it: "Tesla T4" */
	uint64_t wall_ms;		  /* how long the step ran */
	unsigned compute;		  /* its share, percent */
	uint64_t used_ms;		  /* device time its processes used */
	uint64_t mem_mib;		  /* its memory limit */
};

/* A step's figures on n devices (all of one step) as one line into buf;
 * the line's length (as snprintf: >= len when cut). */
size_t gp_slurm_figures_format(const struct gp_slurm_figure *f, unsigned n, char *buf,
			       size_t len);

/* Every figure in text (an AdminComment: one or more steps' lines, text
 * of others skipped) into out, at most max; how many there were, which
 * may be more than max. */
int gp_slurm_figures_parse(const char *text, struct gp_slurm_figure *out, int max);

#endif
