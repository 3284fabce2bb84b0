/* test-slurm-comment.c — a job's AdminComment of entries kept apart, a
 * step and a node each (src/slurm/comment.c): merged, checked, and what
 * is in it read back however long; and the figures of a step's node
 * published into it (src/slurm/publish.c) against a job of the test's
 * own, on a clock of the test's own: nodes in turn, a stale writer's
 * loss written back, the node's earlier entries put back, a job that
 * ended, a writer slower than the other nodes wait. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "slurm/comment.h"
#include "slurm/publish.h"

/* One GPU's figures of step on the node at index of nodes. */
static struct gp_slurm_figure fig(const char *step, const char *node, unsigned index,
				  unsigned nodes, const char *uuid, uint64_t wall_ms,
				  uint64_t used_ms)
{
	struct gp_slurm_figure f = {.node_index = index,
				    .nodes = nodes,
				    .wall_ms = wall_ms,
				    .compute = 25,
				    .used_ms = used_ms,
				    .mem_mib = 3840};

	snprintf(f.step, sizeof(f.step), "%s", step);
	snprintf(f.node, sizeof(f.node), "%s", node);
	snprintf(f.uuid, sizeof(f.uuid), "%s", uuid);
	snprintf(f.model, sizeof(f.model), "Tesla T4");
	return f;
}

/* The entry of n figures (one entry) as text. */
static char *entry(const struct gp_slurm_figure *f, size_t n)
{
	char *text = NULL;

	assert_int_equal(gp_slurm_comment_format(f, n, ' ', &text), 0);
	return text;
}

static size_t count(const char *text)
{
	struct gp_slurm_figure *f = NULL;
	size_t n = 0;

	assert_int_equal(gp_slurm_figures_read(text, &f, &n), 0);
	free(f);
	return n;
}

/* ---- comment.c ------------------------------------------------------------- */

static void an_entry_names_its_node_and_reads_back(void **state)
{
	struct gp_slurm_figure two[2] = {
		fig("slurm-42.0", "n2", 1, 2, "GPU-a", 2013, 934),
		fig("slurm-42.0", "n2", 1, 2, "GPU-b", 2013, 1),
	};
	struct gp_slurm_figure *got = NULL;
	char *text = entry(two, 2);
	size_t n = 0;

	(void)state;
	assert_string_equal(
		text, "gpupool slurm-42.0 on n2 (node 2 of 2): GPU-a (Tesla T4) "
		      "2.013 s at 25 %, allocated 0.503 GPU-s, used 0.934 GPU-s, "
		      "memory 3840 MiB; GPU-b (Tesla T4) 2.013 s at 25 %, allocated "
		      "0.503 GPU-s, used 0.001 GPU-s, memory 3840 MiB");
	assert_int_equal(gp_slurm_figures_read(text, &got, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(got[1].node, "n2");
	assert_int_equal(got[1].node_index, 1);
	assert_int_equal(got[1].nodes, 2);
	assert_string_equal(got[1].uuid, "GPU-b");
	assert_true(gp_slurm_figure_same_entry(&got[0], &got[1]));
	free(got);
	free(text);
	/* Entries written before steps spanned nodes are still read;
	 * a node's place outside its step's nodes is not ours. */
	assert_int_equal(
		count("gpupool slurm-7.0: GPU-a (Tesla T4) 1.000 s at 25 %, "
		      "allocated 0.250 GPU-s, used 0.100 GPU-s, memory 3840 MiB"),
		1);
	assert_int_equal(
		count("gpupool slurm-7.0 on n1 (node 3 of 2): GPU-a (Tesla T4) 1.000 "
		      "s at 25 %, allocated 0.250 GPU-s, used 0.100 GPU-s, memory "
		      "3840 MiB"),
		0);
	assert_int_equal(
		count("gpupool slurm-7.0 on n1 (node 0 of 2): GPU-a (Tesla T4) 1.000 "
		      "s at 25 %, allocated 0.250 GPU-s, used 0.100 GPU-s, memory "
		      "3840 MiB"),
		0);
	assert_int_equal(count(""), 0);
}

static void a_merge_keeps_every_other_entry_and_replaces_its_own(void **state)
{
	struct gp_slurm_figure n1 = fig("slurm-9.0", "n1", 0, 2, "GPU-a", 1000, 100);
	struct gp_slurm_figure n2 = fig("slurm-9.0", "n2", 1, 2, "GPU-a", 1000, 200);
	struct gp_slurm_figure n1b = fig("slurm-9.1", "n1", 0, 1, "GPU-a", 500, 50);
	struct gp_slurm_figure again = fig("slurm-9.0", "n1", 0, 2, "GPU-a", 1000, 999);
	char *one = NULL, *two = NULL, *three = NULL, *four = NULL, *five = NULL;
	char *e1 = entry(&n1, 1), *e2 = entry(&n2, 1), *e1b = entry(&n1b, 1);

	(void)state;
	/* Nodes of one GPU and one UUID (simulated alike): the node tells
	 * them apart. */
	assert_int_equal(gp_slurm_comment_merge("", &n1, 1, &one), 0);
	assert_string_equal(one, e1);
	assert_int_equal(gp_slurm_comment_merge(one, &n2, 1, &two), 0);
	assert_int_equal(count(two), 2);
	assert_true(strstr(two, e1) == two);
	assert_non_null(strstr(two, e2));
	assert_int_equal(gp_slurm_comment_merge(two, &n1b, 1, &three), 0);
	assert_int_equal(count(three), 3);
	assert_true(gp_slurm_comment_holds(three, &n1, 1));
	assert_true(gp_slurm_comment_holds(three, &n2, 1));
	assert_true(gp_slurm_comment_holds(three, &n1b, 1));
	assert_non_null(strstr(three, e1b));
	/* Its own entry again replaces it; nothing twice. */
	assert_int_equal(gp_slurm_comment_merge(three, &again, 1, &four), 0);
	assert_int_equal(count(four), 3);
	assert_non_null(strstr(four, "used 0.999 GPU-s"));
	assert_null(strstr(four, "used 0.100 GPU-s"));
	/* Text of others, and repeats, go. */
	assert_int_equal(gp_slurm_comment_merge("ops: checked", &n1, 1, &five), 0);
	assert_string_equal(five, e1);
	free(five);
	assert_int_equal(gp_slurm_comment_merge(three, NULL, 0, &five), 0);
	assert_string_equal(five, three);
	free(five);
	{
		char doubled[2048];

		snprintf(doubled, sizeof(doubled), "%s %s %s", e1, e2, e1);
		assert_int_equal(gp_slurm_comment_merge(doubled, NULL, 0, &five), 0);
		assert_string_equal(five, two);
	}
	free(one);
	free(two);
	free(three);
	free(four);
	free(five);
	free(e1);
	free(e2);
	free(e1b);
}

static void whose_entries_a_comment_has(void **state)
{
	struct gp_slurm_figure n1 = fig("slurm-9.0", "n1", 0, 3, "GPU-a", 1000, 100);
	struct gp_slurm_figure n3 = fig("slurm-9.0", "n3", 2, 3, "GPU-a", 1000, 100);
	struct gp_slurm_figure n3b = fig("slurm-9.0", "n3", 2, 3, "GPU-b", 1000, 100);
	char *text = entry(&n1, 1);

	(void)state;
	assert_true(gp_slurm_comment_has_node(text, "slurm-9.0", 0));
	assert_false(gp_slurm_comment_has_node(text, "slurm-9.0", 1));
	assert_false(gp_slurm_comment_has_node(text, "slurm-9.1", 0));
	assert_false(gp_slurm_comment_holds(text, &n3, 1));
	assert_true(gp_slurm_comment_holds(text, NULL, 0));
	free(text);
	/* A node of two GPUs holds only with both. */
	text = entry(&n3, 1);
	assert_false(
		gp_slurm_comment_holds(text, (struct gp_slurm_figure[]){n3, n3b}, 2));
	free(text);
	/* Entries without a node are nobody's place. */
	assert_false(gp_slurm_comment_has_node("gpupool slurm-9.0: GPU-a (Tesla T4) "
					       "1.000 s at 25 %, allocated 0.250 GPU-s, "
					       "used 0.100 GPU-s, memory 3840 MiB",
					       "slurm-9.0", 0));
}

static void many_entries_read_back_however_many(void **state)
{
	enum { NODES = 300 }; /* more than any buffer of the old code held */
	struct gp_slurm_figure *f = calloc(NODES, sizeof(*f)), *got = NULL;
	char *text = NULL, name[16];
	size_t n = 0;

	(void)state;
	assert_non_null(f);
	for (unsigned i = 0; i < NODES; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		f[i] = fig("slurm-5.0", name, i, NODES, "GPU-a", 1000, i);
	}
	assert_int_equal(gp_slurm_comment_format(f, NODES, ' ', &text), 0);
	assert_int_equal(gp_slurm_figures_read(text, &got, &n), 0);
	assert_int_equal(n, NODES);
	assert_int_equal(got[NODES - 1].used_ms, NODES - 1);
	assert_string_equal(got[NODES - 1].node, "n299");
	/* A figure twice counts once. */
	got[7] = got[3];
	assert_int_equal(gp_slurm_figures_unique(got, n), NODES - 1);
	free(got);
	free(text);
	free(f);
}

/* ---- publish.c, against a job of the test's own ---------------------------- */

/* The job: its comment, whether it runs, a clock, and what the other
 * writers do (other: at the test's own moments). */
struct job {
	char *comment;
	bool running;
	uint64_t now_ms;
	unsigned reads, writes, sleeps;
	uint64_t write_takes_ms; /* the clock moves that much at each write */
	void (*other)(struct job *j, const char *when);
	int other_state;
	char *stale;			      /* what a writer read before our write */
	const struct gp_slurm_figure *others; /* the other writer's entry */
};

static void job_set(struct job *j, const char *text)
{
	free(j->comment);
	j->comment = strdup(text);
	assert_non_null(j->comment);
}

static int job_read(void *ctx, uint32_t id, char **ret_comment, bool *ret_running,
		    char *err, size_t err_len)
{
	struct job *j = ctx;

	(void)id;
	(void)err;
	(void)err_len;
	j->reads++;
	*ret_comment = strdup(j->comment);
	*ret_running = j->running;
	return *ret_comment ? 0 : -ENOMEM;
}

static int job_write(void *ctx, uint32_t id, const char *comment, char *err,
		     size_t err_len)
{
	struct job *j = ctx;

	(void)id;
	(void)err;
	(void)err_len;
	if (!j->running) {
		snprintf(err, err_len, "Job/step already completing or completed");
		return -EIO;
	}
	j->writes++;
	j->now_ms += j->write_takes_ms;
	job_set(j, comment);
	if (j->other)
		j->other(j, "write");
	return 0;
}

static uint64_t job_now(void *ctx)
{
	return ((struct job *)ctx)->now_ms;
}

static void job_sleep(void *ctx, uint64_t ms)
{
	struct job *j = ctx;

	j->sleeps++;
	j->now_ms += ms;
	if (j->other)
		j->other(j, "sleep");
}

static const struct gp_slurm_job_ops ops = {
	.read = job_read, .write = job_write, .now_ms = job_now, .sleep_ms = job_sleep};

/* A job file of the test's own (the node's), named into path. */
static void node_file(char *path, size_t len)
{
	char dir[] = "/tmp/gpupool-test-publish.XXXXXX";

	assert_non_null(mkdtemp(dir));
	snprintf(path, len, "%s/slurm-job-9.txt", dir);
}

static void node_file_free(const char *path)
{
	char dir[256];

	unlink(path);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	rmdir(dir);
}

static int publish(struct job *j, const char *file, const struct gp_slurm_figure *mine,
		   unsigned job_nodes, struct gp_slurm_published *done)
{
	struct gp_slurm_publish p = {
		.job = 9, .job_nodes = job_nodes, .job_file = file, .mine = mine, .n = 1};
	struct gp_slurm_job_ops on_j = ops;
	char err[256] = "";

	on_j.ctx = j;
	return gp_slurm_publish(&p, &on_j, done, err, sizeof(err));
}

static void a_job_of_one_node_is_written_once(void **state)
{
	struct gp_slurm_figure me = fig("slurm-9.0", "n1", 0, 1, "GPU-a", 1000, 100);
	struct job j = {.running = true};
	struct gp_slurm_published done;
	char file[256];

	(void)state;
	node_file(file, sizeof(file));
	job_set(&j, "");
	assert_int_equal(publish(&j, file, &me, 1, &done), 0);
	assert_int_equal(j.writes, 1);
	assert_int_equal(j.sleeps, 0); /* the node's lock alone keeps writers apart */
	assert_true(gp_slurm_comment_holds(j.comment, &me, 1));
	free(j.comment);
	node_file_free(file);
}

/* The node before (n1) ends its part at the third look of the one
 * after (n2) at the comment. */
static void first_node_ends_later(struct job *j, const char *when)
{
	char *merged = NULL;

	if (strcmp(when, "sleep") != 0 || ++j->other_state != 3)
		return;
	assert_int_equal(gp_slurm_comment_merge(j->comment, j->others, 1, &merged), 0);
	job_set(j, merged);
	free(merged);
}

static void the_nodes_of_a_step_write_in_turn(void **state)
{
	struct gp_slurm_figure n1 = fig("slurm-9.0", "n1", 0, 2, "GPU-a", 1000, 100);
	struct gp_slurm_figure n2 = fig("slurm-9.0", "n2", 1, 2, "GPU-a", 1000, 200);
	struct job j = {.running = true, .other = first_node_ends_later, .others = &n1};
	struct gp_slurm_published done;
	char file[256];

	(void)state;
	node_file(file, sizeof(file));
	job_set(&j, "");
	assert_int_equal(publish(&j, file, &n2, 2, &done), 0);
	/* n2 wrote once, after n1, with n1's entry kept. */
	assert_int_equal(j.writes, 1);
	assert_false(done.turn_timed_out);
	assert_true(gp_slurm_comment_holds(j.comment, &n1, 1));
	assert_true(gp_slurm_comment_holds(j.comment, &n2, 1));
	assert_int_equal(count(j.comment), 2);
	free(j.comment);
	node_file_free(file);
}

/* Another step's node read before our first write and writes after it:
 * its stale copy drops ours. */
static void stale_writer(struct job *j, const char *when)
{
	char *merged = NULL;

	if (strcmp(when, "write") != 0 || j->other_state++ != 0)
		return;
	assert_int_equal(gp_slurm_comment_merge(j->stale, j->others, 1, &merged), 0);
	job_set(j, merged);
	free(merged);
}

static void an_entry_a_stale_writer_dropped_is_written_again(void **state)
{
	struct gp_slurm_figure me = fig("slurm-9.0", "n1", 0, 1, "GPU-a", 1000, 100);
	struct gp_slurm_figure other = fig("slurm-9.1", "n2", 0, 1, "GPU-a", 500, 50);
	struct job j = {
		.running = true, .other = stale_writer, .others = &other, .stale = ""};
	struct gp_slurm_published done;
	char file[256];

	(void)state;
	node_file(file, sizeof(file));
	job_set(&j, "");
	assert_int_equal(publish(&j, file, &me, 2, &done), 0);
	/* Written, lost, seen lost after the settling time, written again. */
	assert_int_equal(j.writes, 2);
	assert_int_equal(done.writes, 2);
	assert_true(gp_slurm_comment_holds(j.comment, &me, 1));
	assert_true(gp_slurm_comment_holds(j.comment, &other, 1));
	assert_true(done.slowest_ms < GP_SLURM_SETTLE_MS);
	free(j.comment);
	node_file_free(file);
}

static void the_nodes_earlier_entries_are_put_back(void **state)
{
	struct gp_slurm_figure s0 = fig("slurm-9.0", "n1", 0, 1, "GPU-a", 1000, 100);
	struct gp_slurm_figure s1 = fig("slurm-9.1", "n1", 0, 1, "GPU-a", 700, 70);
	struct job j = {.running = true};
	struct gp_slurm_published done;
	char file[256];

	(void)state;
	node_file(file, sizeof(file));
	job_set(&j, "");
	assert_int_equal(publish(&j, file, &s0, 2, &done), 0);
	/* Lost since, by a writer slower than the settling time. */
	job_set(&j, "");
	assert_int_equal(publish(&j, file, &s1, 2, &done), 0);
	assert_true(gp_slurm_comment_holds(j.comment, &s0, 1));
	assert_true(gp_slurm_comment_holds(j.comment, &s1, 1));
	free(j.comment);
	node_file_free(file);
}

static void a_node_before_that_never_writes_is_waited_for_a_while(void **state)
{
	struct gp_slurm_figure n2 = fig("slurm-9.0", "n2", 1, 2, "GPU-a", 1000, 200);
	struct job j = {.running = true};
	struct gp_slurm_published done;
	char file[256];

	(void)state;
	node_file(file, sizeof(file));
	job_set(&j, "");
	assert_int_equal(publish(&j, file, &n2, 2, &done), 0);
	assert_true(done.turn_timed_out);
	assert_true(j.now_ms >= GP_SLURM_TURN_WAIT_MS);
	assert_true(j.now_ms < GP_SLURM_TURN_WAIT_MS + 3 * GP_SLURM_SETTLE_MS);
	assert_true(gp_slurm_comment_holds(j.comment, &n2, 1));
	free(j.comment);
	node_file_free(file);
}

static void an_ended_job_is_not_waited_for_nor_written(void **state)
{
	struct gp_slurm_figure n2 = fig("slurm-9.0", "n2", 1, 2, "GPU-a", 1000, 200);
	struct job j = {.running = false};
	struct gp_slurm_published done;
	char file[256];

	(void)state;
	node_file(file, sizeof(file));
	job_set(&j, "");
	assert_int_equal(publish(&j, file, &n2, 2, &done), -ESRCH);
	assert_int_equal(j.writes, 0);
	assert_false(done.turn_timed_out);
	assert_int_equal(j.now_ms, 0);
	free(j.comment);
	node_file_free(file);
}

/* Every write of ours is undone at once. */
static void vandal(struct job *j, const char *when)
{
	if (strcmp(when, "write") == 0)
		job_set(j, "");
}

static void a_slow_writer_says_so_and_losses_stop_in_time(void **state)
{
	struct gp_slurm_figure me = fig("slurm-9.0", "n1", 0, 1, "GPU-a", 1000, 100);
	struct job j = {.running = true,
			.write_takes_ms = GP_SLURM_SETTLE_MS + 1,
			.other = vandal};
	struct gp_slurm_published done;
	char file[256];

	(void)state;
	node_file(file, sizeof(file));
	job_set(&j, "");
	assert_int_equal(publish(&j, file, &me, 2, &done), -EAGAIN);
	assert_int_equal(j.writes, GP_SLURM_PUBLISH_ROUNDS + 1);
	assert_true(done.slowest_ms > GP_SLURM_SETTLE_MS);
	free(j.comment);
	node_file_free(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(an_entry_names_its_node_and_reads_back),
		cmocka_unit_test(a_merge_keeps_every_other_entry_and_replaces_its_own),
		cmocka_unit_test(whose_entries_a_comment_has),
		cmocka_unit_test(many_entries_read_back_however_many),
		cmocka_unit_test(a_job_of_one_node_is_written_once),
		cmocka_unit_test(the_nodes_of_a_step_write_in_turn),
		cmocka_unit_test(an_entry_a_stale_writer_dropped_is_written_again),
		cmocka_unit_test(the_nodes_earlier_entries_are_put_back),
		cmocka_unit_test(a_node_before_that_never_writes_is_waited_for_a_while),
		cmocka_unit_test(an_ended_job_is_not_waited_for_nor_written),
		cmocka_unit_test(a_slow_writer_says_so_and_losses_stop_in_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
