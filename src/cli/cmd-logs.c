/* cmd-logs.c — `gpupool logs ID [--tail N] [--bytes SIZE] [-f]`: a
 * task's output as the agent's pump stored it (GET /v1/tasks/ID/logs,
 * docs/api.md), printed as it came. The server sends at most the last
 * --bytes of the log (1M by default); when that cut lines the user asked
 * for, a note on stderr says so and how to see more. The server keeps at
 * most its --log-max of a log (the oldest part is dropped): when that is
 * why lines are missing, the note says so instead (one more request,
 * ?from=0, finds where the log kept starts).
 *
 * -f follows the log: every FOLLOW_MS the task's state is read, then what
 * was written since the last answer's end (?from=END, offsets that count
 * the dropped bytes, so rotations do not matter); when the cap dropped
 * bytes before they could be read, a note says how many. Once the state
 * says the task ended, the read after it got the whole log, and the
 * command exits with the task's status, as `submit --wait` does
 * (cli/task-end.h: its exit code, 124 cancelled, 125 not run). A task
 * that has not run yet is waited for.
 *
 * The bytes are the task's own, terminal escapes included: a log is
 * printed raw by design (a program's colours, its progress bars), unlike
 * the tables, which escape what tenants wrote. --escape prints each line
 * through the same escaping (base/text.h), its line breaks kept, for a
 * log whose writer one does not trust. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/parse.h"
#include "base/text.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/task-end.h"

#define TAIL_MAX       10000000
#define BYTES_MAX      (16ULL * 1024 * 1024)
#define BYTES_DEFAULT  (1024ULL * 1024)
#define SKIPPED_HEADER "X-Gpupool-Log-Skipped"
#define END_HEADER     "X-Gpupool-Log-End"
#define PATH_LEN       128
#define FOLLOW_MS      500

struct logs_options {
	unsigned tail;		  /* 0: all */
	unsigned long long bytes; /* 0: the server's default */
	bool follow;		  /* -f */
	bool escape;		  /* --escape */
};

static void logs_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool logs ID [--tail N] [--bytes SIZE] [-f] [--escape]\n"
		"\n"
		"Prints the output of task ID (its stdout and stderr, as the agent "
		"wrote\n"
		"them to task-ID.log in the server's --log-dir). A tenant reads its own\n"
		"tasks' logs; the admin every task's. The server keeps at most its\n"
		"--log-max of each log (64M by default): past that, the oldest part is\n"
		"dropped, and a note on stderr says how much. Past its --log-total-max of\n"
		"all logs (4G), or under its --log-free-min, it removes the oldest logs\n"
		"of ended tasks: logs then says when and why.\n"
		"\n"
		"  --tail N       only the last N lines, 1..%d\n"
		"  --bytes SIZE   read at most the last SIZE of the log: 64K, 4MB, or bytes (default\n"
		"                 1M, at most 16M)\n"
		"  -f, --follow   then print what the task appends, until it ends or\n"
		"                 Ctrl-C; a task that has not run yet is waited for. The\n"
		"                 exit status is then the task's, as submit --wait's:\n"
		"                 its exit code (128+N: killed by signal N), 124 when it\n"
		"                 was cancelled, 125 when it could not start (or was\n"
		"                 lost)\n"
		"  --escape       show control characters (terminal escapes) as \\x1b and\n"
		"                 the like, line breaks kept; without it the output is\n"
		"                 the task's bytes as they are\n",
		TAIL_MAX);
}

static int logs_option(void *ctx, int c, const char *value)
{
	struct logs_options *o = ctx;
	uint64_t bytes;

	if (c == 'f' || c == 'e') {
		*(c == 'f' ? &o->follow : &o->escape) = true;
		return 0;
	}
	if (c == 't')
		return gp_client_uint("logs", "tail", value, 1, TAIL_MAX, &o->tail);
	if (c != 'b')
		return -EINVAL;
	if (gp_parse_size(value, &bytes) == 0 && bytes >= 1 && bytes <= BYTES_MAX) {
		o->bytes = bytes;
		return 0;
	}
	fprintf(stderr, "gpupool logs: --bytes \"%s\" must be a size from 1 to 16M, like "
			"64K or 4M\n",
		value);
	return -EINVAL;
}

static unsigned lines_in(const char *text, size_t len)
{
	unsigned n = 0;

	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n + (len && text[len - 1] != '\n');
}

/* Writes len bytes of the log to stdout: as they are, or with --escape
 * each line escaped (base/text.h) and its line break kept. */
static void log_write(const struct logs_options *o, const char *data, size_t len)
{
	char *line;

	if (!o->escape) {
		fwrite(data, 1, len, stdout);
		return;
	}
	line = malloc(4 * len + 1);
	if (!line) {
		fprintf(stderr, "gpupool logs: out of memory\n");
		return;
	}
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;

		gp_text_escape_n(data, n, line, 4 * n + 1);
		fputs(line, stdout);
		if (nl)
			putchar('\n');
		data += n + (nl != NULL);
		len -= n + (nl != NULL);
	}
	free(line);
}

/* Where the log kept starts: the bytes its cap dropped (0 when that
 * cannot be found out). */
static unsigned long long logs_dropped(const struct gp_client_flags *f, long long id)
{
	struct gp_client_text first;
	unsigned long long dropped = 0;
	char path[PATH_LEN];

	snprintf(path, sizeof(path), "/v1/tasks/%lld/logs?from=0&bytes=1", id);
	if (gp_client_get_text(f, "logs", path, SKIPPED_HEADER, &first) != GP_EXIT_OK)
		return 0;
	dropped = strtoull(first.header, NULL, 10);
	free(first.data);
	return dropped;
}

/* Says on stderr when the byte cap, or the server's cap on the log, left
 * out what was asked for. */
static void logs_note(const struct gp_client_flags *f, long long id,
		      const struct logs_options *o, const struct gp_client_text *t)
{
	unsigned long long skipped = strtoull(t->header, NULL, 10), dropped;

	if (!skipped || (o->tail && lines_in(t->data, t->len) >= o->tail))
		return;
	dropped = logs_dropped(f, id);
	if (dropped > skipped)
		dropped = skipped;
	if (dropped)
		fprintf(stderr,
			"gpupool logs: the oldest %llu bytes of the log were dropped at its "
			"cap (the server's --log-max)\n",
			dropped);
	if (skipped > dropped)
		fprintf(stderr,
			"gpupool logs: %s%llu bytes of the log are left out; --bytes "
			"SIZE reads more\n",
			dropped ? "of the rest, the first " : "the first ", skipped - dropped);
}

static void logs_path(long long id, const struct logs_options *o, char *path, size_t size)
{
	char number[24];

	snprintf(path, size, "/v1/tasks/%lld/logs", id);
	if (o->tail) {
		snprintf(number, sizeof(number), "%u", o->tail);
		gp_client_query_add(path, size, "tail", number);
	}
	if (o->bytes) {
		snprintf(number, sizeof(number), "%llu", o->bytes);
		gp_client_query_add(path, size, "bytes", number);
	}
}

/* One task id and no -o json: a log is text. An exit status. */
static int logs_args(const struct gp_client_flags *f, int argc, char **argv, int first,
		     long long *ret_id)
{
	if (f->json) {
		fprintf(stderr, "gpupool logs: -o json: a log is text; leave -o out\n");
		return GP_EXIT_USAGE;
	}
	if (argc - first != 1) {
		fprintf(stderr, "gpupool logs: needs one task id (gpupool logs --help)\n");
		return GP_EXIT_USAGE;
	}
	return gp_client_id("logs", argv[first], ret_id);
}

/* Prints the end of the log (--tail, --bytes), and where it ended in
 * *ret_end. An exit status. */
static int logs_first(const struct gp_client_flags *f, long long id,
		      const struct logs_options *o, unsigned long long *ret_end)
{
	struct gp_client_text text;
	char path[PATH_LEN];
	int status;

	logs_path(id, o, path, sizeof(path));
	status = gp_client_get_text(f, "logs", path, SKIPPED_HEADER, &text);
	if (status != GP_EXIT_OK)
		return status;
	log_write(o, text.data, text.len);
	fflush(stdout);
	logs_note(f, id, o, &text);
	*ret_end = strtoull(text.header, NULL, 10) + text.len;
	free(text.data);
	return GP_EXIT_OK;
}

/* Prints what the log holds from *offset on (at most --bytes) and moves
 * *offset past it, saying on stderr when the cap dropped bytes there
 * before they could be read; *ret_more when the answer was capped. An
 * exit status. */
static int logs_next(const struct gp_client_flags *f, long long id,
		     const struct logs_options *o, unsigned long long *offset,
		     bool *ret_more)
{
	unsigned long long cap = o->bytes ? o->bytes : BYTES_DEFAULT, end;
	struct gp_client_text text;
	char path[PATH_LEN];
	int status;

	snprintf(path, sizeof(path), "/v1/tasks/%lld/logs?from=%llu&bytes=%llu", id,
		 *offset, cap);
	status = gp_client_get_text(f, "logs", path, END_HEADER, &text);
	if (status != GP_EXIT_OK)
		return status;
	end = text.header[0] ? strtoull(text.header, NULL, 10) : *offset + text.len;
	if (end - text.len > *offset) {
		fflush(stdout);
		fprintf(stderr,
			"gpupool logs: %llu bytes of the log were dropped at its cap (the "
			"server's --log-max) before they could be shown\n",
			end - text.len - *offset);
	}
	log_write(o, text.data, text.len);
	fflush(stdout);
	*offset = end;
	*ret_more = text.len && text.len >= cap;
	free(text.data);
	return GP_EXIT_OK;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};

	nanosleep(&ts, NULL);
}

/* -f: the end of the log once there is one, then what is appended,
 * until the task ended; then the task's exit status (cli/task-end.h). */
static int logs_follow(const struct gp_client_flags *f, long long id,
		       const struct logs_options *o)
{
	unsigned long long offset = 0;
	bool started, ended, more, shown = false;
	json_t *task = NULL;
	int status;

	for (;;) {
		status = gp_task_end_get(f, "logs", id, &task);
		if (status != GP_EXIT_OK)
			return status;
		started = json_is_string(json_object_get(task, "started"));
		ended = gp_task_end_is(task);
		if (!shown && (started || ended)) {
			status = logs_first(f, id, o, &offset);
			shown = true;
		} else if (shown) {
			do
				status = logs_next(f, id, o, &offset, &more);
			while (status == GP_EXIT_OK && more);
		}
		if (status == GP_EXIT_OK && ended)
			status = gp_task_end_status(task);
		json_decref(task);
		task = NULL;
		if (status != GP_EXIT_OK || ended)
			return status;
		nap_ms(FOLLOW_MS);
	}
}

int gp_cmd_logs(int argc, char **argv)
{
	static const struct option own[] = {
		{"tail", required_argument, NULL, 't'},
		{"bytes", required_argument, NULL, 'b'},
		{"follow", no_argument, NULL, 'f'},
		{"escape", no_argument, NULL, 'e'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "logs",
		.usage = logs_usage,
		.options = own,
		.short_options = "f",
		.option = logs_option,
	};
	struct logs_options o = {0};
	struct gp_client_flags f = {0};
	unsigned long long end;
	long long id;
	int first, status, r = gp_client_parse(&cmd, &o, argc, argv, &f, &first);

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	status = logs_args(&f, argc, argv, first, &id);
	if (status != GP_EXIT_OK)
		return status;
	return o.follow ? logs_follow(&f, id, &o) : logs_first(&f, id, &o, &end);
}
