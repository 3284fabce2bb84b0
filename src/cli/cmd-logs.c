/* cmd-logs.c — `gpupool logs ID [--tail N] [--bytes SIZE]`: a task's
 * output as the agent wrote it (GET /v1/tasks/ID/logs, docs/api.md),
 * printed as it came. The server sends at most the last --bytes of the
 * log (1M by default); when that cut lines the user asked for, a note
 * on stderr says so and how to see more. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "shim/region.h"

#define TAIL_MAX       10000000
#define BYTES_MAX      (16ULL * 1024 * 1024)
#define SKIPPED_HEADER "X-Gpupool-Log-Skipped"
#define PATH_LEN       128

struct logs_options {
	unsigned tail;	      /* 0: all */
	unsigned long long bytes; /* 0: the server's default */
};

static void logs_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool logs ID [--tail N] [--bytes SIZE]\n"
		"\n"
		"Prints the output of task ID (its stdout and stderr, as the agent "
		"wrote\n"
		"them to task-ID.log in the server's --log-dir). A tenant reads its own\n"
		"tasks' logs; the admin every task's.\n"
		"\n"
		"  --tail N       only the last N lines, 1..%d\n"
		"  --bytes SIZE   read at most the last SIZE of the log: 64K, 4M (default\n"
		"                 1M, at most 16M)\n",
		TAIL_MAX);
}

static int logs_option(void *ctx, int c, const char *value)
{
	struct logs_options *o = ctx;
	uint64_t bytes;

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

/* Says on stderr when the byte cap left out what was asked for. */
static void logs_note(const struct logs_options *o, const struct gp_client_text *t)
{
	unsigned long long skipped = strtoull(t->header, NULL, 10);

	if (!skipped || (o->tail && lines_in(t->data, t->len) >= o->tail))
		return;
	fprintf(stderr,
		"gpupool logs: the first %llu bytes of the log are left out; --bytes "
		"SIZE reads more\n",
		skipped);
}

static void logs_path(long long id, const struct logs_options *o, char *path, size_t size)
{
	int n = snprintf(path, size, "/v1/tasks/%lld/logs", id);
	const char *sep = "?";

	if (o->tail) {
		n += snprintf(path + n, size - (size_t)n, "%stail=%u", sep, o->tail);
		sep = "&";
	}
	if (o->bytes)
		snprintf(path + n, size - (size_t)n, "%sbytes=%llu", sep, o->bytes);
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

int gp_cmd_logs(int argc, char **argv)
{
	static const struct option own[] = {
		{"tail", required_argument, NULL, 't'},
		{"bytes", required_argument, NULL, 'b'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "logs",
		.usage = logs_usage,
		.options = own,
		.option = logs_option,
	};
	struct logs_options o = {0};
	struct gp_client_flags f = {0};
	struct gp_client_text text;
	char path[PATH_LEN];
	long long id;
	int first, status, r = gp_client_parse(&cmd, &o, argc, argv, &f, &first);

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	status = logs_args(&f, argc, argv, first, &id);
	if (status != GP_EXIT_OK)
		return status;
	logs_path(id, &o, path, sizeof(path));
	status = gp_client_get_text(&f, cmd.name, path, SKIPPED_HEADER, &text);
	if (status != GP_EXIT_OK)
		return status;
	fwrite(text.data, 1, text.len, stdout);
	fflush(stdout);
	logs_note(&o, &text);
	free(text.data);
	return GP_EXIT_OK;
}
