/* publish.c — a step's figures on this node into its job's AdminComment,
 * in turn and checked (publish.h). */
#include "slurm/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slurm/comment.h"

#define POLL_FIRST_MS 10
#define POLL_MAX_MS   500

/* ---- this node's entries --------------------------------------------------- */

/* The job's file on this node, locked (flock: the lock goes with the
 * descriptor); the descriptor or a negative errno. */
static int node_lock(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* The whole of fd's file as a string (*ret, free()). */
static int file_text(int fd, char **ret)
{
	struct stat st;
	char *text;
	ssize_t got;

	if (fstat(fd, &st) < 0)
		return -errno;
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return -ENOMEM;
	got = pread(fd, text, (size_t)st.st_size, 0);
	if (got < 0) {
		free(text);
		return -errno;
	}
	text[got] = '\0';
	*ret = text;
	return 0;
}

/* Adds mine to the node's file of the job (a line, unless there), then
 * reads every entry the node wrote for the job into *ret (n in *ret_n). */
static int node_entries(int fd, const struct gp_slurm_figure *mine, size_t n,
			struct gp_slurm_figure **ret, size_t *ret_n)
{
	char *text = NULL, *line = NULL;
	int r = file_text(fd, &text);

	if (r == 0 && !gp_slurm_comment_holds(text, mine, n)) {
		r = gp_slurm_comment_format(mine, n, ' ', &line);
		if (r == 0 && dprintf(fd, "%s\n", line) < 0)
			r = -EIO;
		free(line);
		free(text);
		text = NULL;
		if (r == 0)
			r = file_text(fd, &text);
	}
	if (r == 0)
		r = gp_slurm_figures_read(text, ret, ret_n);
	if (r == 0)
		*ret_n = gp_slurm_figures_unique(*ret, *ret_n);
	free(text);
	return r;
}

/* ---- in turn, then checked ------------------------------------------------- */

/* Waits until the entry of the node before this one in the step is in
 * the comment, the job stops running, or GP_SLURM_TURN_WAIT_MS pass. */
static void turn_wait(const struct gp_slurm_publish *p,
		      const struct gp_slurm_job_ops *ops, struct gp_slurm_published *ret)
{
	const struct gp_slurm_figure *me = &p->mine[0];
	uint64_t deadline = ops->now_ms(ops->ctx) + GP_SLURM_TURN_WAIT_MS;
	uint64_t delay = POLL_FIRST_MS;
	char err[256];

	if (me->node_index == 0)
		return;
	while (ops->now_ms(ops->ctx) < deadline) {
		char *comment = NULL;
		bool running = false, turn;

		if (ops->read(ops->ctx, p->job, &comment, &running, err, sizeof(err)) < 0)
			return;
		turn = !running ||
		       gp_slurm_comment_has_node(comment, me->step, me->node_index - 1);
		free(comment);
		if (turn)
			return;
		ops->sleep_ms(ops->ctx, delay);
		delay = delay * 2 < POLL_MAX_MS ? delay * 2 : POLL_MAX_MS;
	}
	ret->turn_timed_out = true;
}

/* Writes the comment with all (this node's entries) merged in; notes
 * how long from its read (at start) this write took. */
static int merged_write(const struct gp_slurm_publish *p,
			const struct gp_slurm_job_ops *ops, const char *comment,
			const struct gp_slurm_figure *all, size_t n, uint64_t start,
			struct gp_slurm_published *ret, char *err, size_t err_len)
{
	char *merged = NULL;
	int r = gp_slurm_comment_merge(comment, all, n, &merged);
	uint64_t took;

	if (r == 0)
		r = ops->write(ops->ctx, p->job, merged, err, err_len);
	free(merged);
	if (r < 0)
		return r;
	took = ops->now_ms(ops->ctx) - start;
	ret->writes++;
	if (took > ret->slowest_ms)
		ret->slowest_ms = took;
	return 0;
}

/* Reads the comment and, where it lacks one of all (this node's
 * entries), writes it with them merged in, if may_write; *ret_wrote says
 * whether it did. 0, -ESRCH where the job no longer runs, -EAGAIN where
 * they are missing and it may not write, or an error. */
static int round_once(const struct gp_slurm_publish *p,
		      const struct gp_slurm_job_ops *ops,
		      const struct gp_slurm_figure *all, size_t n, bool may_write,
		      bool *ret_wrote, struct gp_slurm_published *ret, char *err,
		      size_t err_len)
{
	uint64_t start = ops->now_ms(ops->ctx);
	char *comment = NULL;
	bool running = false;
	int r = ops->read(ops->ctx, p->job, &comment, &running, err, err_len);

	*ret_wrote = false;
	if (r == 0 && !running)
		r = -ESRCH;
	if (r == 0 && !gp_slurm_comment_holds(comment, all, n)) {
		if (may_write)
			r = merged_write(p, ops, comment, all, n, start, ret, err,
					 err_len);
		else
			r = -EAGAIN;
		*ret_wrote = r == 0;
	}
	if (r == -EAGAIN)
		snprintf(err, err_len,
			 "job %u's AdminComment still lacked them after %d writes",
			 p->job, GP_SLURM_PUBLISH_ROUNDS + 1);
	free(comment);
	return r;
}

/* Writes until a read GP_SLURM_SETTLE_MS after the last write finds all
 * in the comment (right after the write on a job of one node, where the
 * lock alone keeps writers apart). */
static int rounds(const struct gp_slurm_publish *p, const struct gp_slurm_job_ops *ops,
		  const struct gp_slurm_figure *all, size_t n,
		  struct gp_slurm_published *ret, char *err, size_t err_len)
{
	for (int round = 0;; round++) {
		bool wrote = false;
		int r;

		if (round > 0)
			ops->sleep_ms(ops->ctx, GP_SLURM_SETTLE_MS);
		r = round_once(p, ops, all, n, round <= GP_SLURM_PUBLISH_ROUNDS, &wrote,
			       ret, err, err_len);
		if (r < 0 || !wrote || p->job_nodes == 1)
			return r;
	}
}

int gp_slurm_publish(const struct gp_slurm_publish *p, const struct gp_slurm_job_ops *ops,
		     struct gp_slurm_published *ret, char *err, size_t err_len)
{
	struct gp_slurm_figure *all = NULL;
	size_t n = 0;
	int fd, r;

	*ret = (struct gp_slurm_published){0};
	if (p->n == 0)
		return 0;
	turn_wait(p, ops, ret);
	fd = node_lock(p->job_file);
	if (fd < 0) {
		snprintf(err, err_len, "cannot lock %s: %s", p->job_file, strerror(-fd));
		return fd;
	}
	r = node_entries(fd, p->mine, p->n, &all, &n);
	if (r < 0)
		snprintf(err, err_len, "cannot keep the figures in %s: %s", p->job_file,
			 strerror(-r));
	else
		r = rounds(p, ops, all, n, ret, err, err_len);
	free(all);
	close(fd);
	return r;
}
