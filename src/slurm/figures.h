/* figures.h — a job step's GPU figures on one node as one entry of text,
 * and back.
 *
 * At a step's end the SPANK plugin (spank.c) writes what the step had and
 * used of each GPU of its node into the job's AdminComment, where sacct
 * shows it and Slurm's accounting database keeps it; `gpupool bill
 * --slurm` (sacct.c) reads it back from there. One format, written and
 * read here; an entry is one step on one node (comment.h keeps a job's
 * entries apart):
 *
 *   gpupool slurm-42.0 on node7 (node 2 of 4): GPU-…  (Tesla T4) 2.013 s
 *       at 50 %, allocated 1.007 GPU-s, used 0.934 GPU-s, memory 3840 MiB;
 *       GPU-… (…) …
 *
 * (one line; the node's devices separated by "; ", entries by a space;
 * the node's place counted from 1 in the text, from 0 in node_index).
 * Entries written before steps spanned nodes have no node
 * ("gpupool slurm-42.0: GPU-…") and are still read. Times are in
 * milliseconds, so that a bill adds up exactly what the line says. Pure
 * text: no Slurm, no I/O. */
#ifndef GP_SLURM_FIGURES_H
#define GP_SLURM_FIGURES_H

#include <stddef.h>
#include <stdint.h>

#define GP_SLURM_FIGURE_TEXT 96 /* as GP_DEVICE_TEXT_MAX */

/* What one step had and used of one GPU of one node. */
struct gp_slurm_figure {
	char step[GP_SLURM_FIGURE_TEXT];  /* its task id: "slurm-42.0" */
	char node[GP_SLURM_FIGURE_TEXT];  /* Slurm's name of the node; "": not said */
	unsigned node_index;		  /* the node's place in the step, from 0 */
	unsigned nodes;			  /* the step's nodes; 0 with no node */
	char uuid[GP_SLURM_FIGURE_TEXT];  /* "GPU-…" */
	char model[GP_SLURM_FIGURE_TEXT]; /* as NVML names it: "Tesla T4" */
	uint64_t wall_ms;		  /* how long the step ran there */
	unsigned compute;		  /* its share, percent */
	uint64_t used_ms;		  /* device time its processes used */
	uint64_t mem_mib;		  /* its memory limit */
};

/* A step's figures on n devices of one node (all of one entry: the
 * first's step and node name it) as one entry into buf; the entry's
 * length (as snprintf: >= len when cut). */
size_t gp_slurm_figures_format(const struct gp_slurm_figure *f, unsigned n, char *buf,
			       size_t len);

/* Every figure in text (an AdminComment: one or more entries, text of
 * others skipped) into out, at most max; how many there were, which may
 * be more than max. */
int gp_slurm_figures_parse(const char *text, struct gp_slurm_figure *out, int max);

#endif
