/* publish.h — a step's figures on this node into its job's AdminComment,
 * beside those of every other node and step (comment.h), with no update
 * lost although Slurm 22.05 can only replace the comment whole (no
 * append, no compare-and-swap: docs/slurm.md). A node reads the comment,
 * merges its entries in and writes it back; what keeps two writers from
 * losing each other's entries:
 *
 *   - one writer on a node at a time: the job's file on the node
 *     (job_file, root's), locked from the read to the write. It also
 *     keeps every entry the node wrote for the job, and each write puts
 *     them all back.
 *   - a step's nodes in turn: the node at index k of a step writes once
 *     the entry of the node at k - 1 is in the comment (in Slurm 22.05
 *     every node of a step with GPUs has some, so every one writes). The
 *     nodes of a step that end together so write one after the other,
 *     each merging into what the one before wrote. A node stops waiting
 *     when the job no longer runs, or after GP_SLURM_TURN_WAIT_MS (the
 *     one before still running, or gone).
 *   - on a job of several nodes, the node reads the comment back
 *     GP_SLURM_SETTLE_MS after each write, and writes again while an
 *     entry of its own is missing: a writer that did not wait its turn
 *     (another step's node, one whose wait ran out) and read before this
 *     write but wrote after it. This holds while every writer's read and
 *     write are less than GP_SLURM_SETTLE_MS apart; a writer that took
 *     longer says so (slowest_ms), as it may have dropped an entry that
 *     was already checked.
 *
 * The plugin runs this in slurmstepd, as root, before the step's tasks
 * are reported ended (so before srun can end the job, after which the
 * comment cannot change), with Slurm behind the ops (spank.c: libslurm);
 * the unit tests with a job of their own. */
#ifndef GP_SLURM_PUBLISH_H
#define GP_SLURM_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "slurm/figures.h"

#define GP_SLURM_TURN_WAIT_MS	10000
#define GP_SLURM_SETTLE_MS	1000
#define GP_SLURM_PUBLISH_ROUNDS 5 /* writes after the first */

struct gp_slurm_publish {
	uint32_t job;
	unsigned job_nodes;		    /* the job's (1: the lock alone serializes) */
	const char *job_file;		    /* this node's entries of the job, its lock */
	const struct gp_slurm_figure *mine; /* this step's figures on this node */
	size_t n;			    /* (one entry: node and node_index set) */
};

/* How it went. */
struct gp_slurm_published {
	unsigned writes;     /* of the comment */
	bool turn_timed_out; /* the node before in the step never wrote */
	uint64_t slowest_ms; /* the longest from a read to its write */
};

/* The job as publishing sees it. */
struct gp_slurm_job_ops {
	/* The job's AdminComment (a new string, "" where it has none;
	 * free()) and whether the job still runs (its comment can still
	 * change). 0, -EIO (the reason in err) or -ENOMEM. */
	int (*read)(void *ctx, uint32_t job, char **ret_comment, bool *ret_running,
		    char *err, size_t err_len);
	/* Replaces the job's AdminComment; 0 or -EIO (the reason in err). */
	int (*write)(void *ctx, uint32_t job, const char *comment, char *err,
		     size_t err_len);
	uint64_t (*now_ms)(void *ctx); /* a monotonic clock */
	void (*sleep_ms)(void *ctx, uint64_t ms);
	void *ctx;
};

/* Adds mine (and the node's earlier entries of the job) to the job's
 * AdminComment. 0 once the comment holds them; -ESRCH where the job no
 * longer runs; -EAGAIN where they were still missing after the last
 * round; -EIO where Slurm refused (its reason in err); -ENOMEM, or the
 * job file's errno. ret is filled in either way. */
int gp_slurm_publish(const struct gp_slurm_publish *p, const struct gp_slurm_job_ops *ops,
		     struct gp_slurm_published *ret, char *err, size_t err_len);

#endif
