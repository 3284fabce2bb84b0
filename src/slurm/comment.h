/* comment.h — a job's AdminComment as gpupool keeps it: an entry
 * (figures.h) for each step on each node, kept apart, so that the nodes
 * of a step that spans several each add their own and none replaces
 * another's.
 *
 *   gpupool slurm-42.0 on n1 (node 1 of 2): GPU-… … gpupool slurm-42.0 on
 *       n2 (node 2 of 2): GPU-… … gpupool slurm-42.1 on n1 (node 1 of 1): …
 *
 * An entry's key is its step and node (figures without a node, written
 * before steps spanned nodes, are keyed by their step alone); a figure's
 * key is its entry's and its GPU's. Slurm 22.05 can only replace an
 * AdminComment whole, so a node adds its entries by reading the
 * comment, merging and writing it back (publish.h says how no node's
 * entry is lost that way); this file is the text of it. Pure: no Slurm,
 * no I/O.
 *
 * Ownership: what the functions return in *ret the caller frees with
 * free(). */
#ifndef GP_SLURM_COMMENT_H
#define GP_SLURM_COMMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "slurm/figures.h"

/* The largest `scontrol show job` state word ("RUNNING", "COMPLETING"). */
#define GP_SLURM_STATE_MAX 32

/* Every figure in text, however many, into a new array (*ret, their
 * number in *ret_n; NULL and 0 where there are none). 0 or -ENOMEM. */
int gp_slurm_figures_read(const char *text, struct gp_slurm_figure **ret, size_t *ret_n);

/* Are a and b of one entry (the same step on the same node)? */
bool gp_slurm_figure_same_entry(const struct gp_slurm_figure *a,
				const struct gp_slurm_figure *b);

/* Keeps the first of figures that share a key (entry and GPU), in order;
 * how many are left. */
size_t gp_slurm_figures_unique(struct gp_slurm_figure *f, size_t n);

/* The figures as entries (consecutive figures of one entry together),
 * separated by sep (' ' in a comment, '\n' for people), into a new
 * string. 0 or -ENOMEM. */
int gp_slurm_comment_format(const struct gp_slurm_figure *f, size_t n, char sep,
			    char **ret);

/* text with mine in it: every entry of text but those mine replace (the
 * same step on the same node), in order, then mine's; repeats dropped.
 * Other text than entries is not kept. 0 or -ENOMEM. */
int gp_slurm_comment_merge(const char *text, const struct gp_slurm_figure *mine, size_t n,
			   char **ret);

/* Does text have a figure of each of mine's keys? (false also when
 * there was no memory to look.) */
bool gp_slurm_comment_holds(const char *text, const struct gp_slurm_figure *mine,
			    size_t n);

/* Does text have an entry of step on the node at node_index? */
bool gp_slurm_comment_has_node(const char *text, const char *step, unsigned node_index);

/* From `scontrol show job`'s text: the job's state word into state
 * (state_len at most GP_SLURM_STATE_MAX) and its AdminComment into a new
 * string (*ret_comment; "" where it has none). 0, -ENOENT where the text
 * has no job, or -ENOMEM. */
int gp_slurm_job_parse(const char *show, char *state, size_t state_len,
		       char **ret_comment);

#endif
