/* task-end.c — how a task ended, as the exit status of the commands that
 * wait for it (task-end.h): asking the server until the task ends, and
 * the one table from its state and code to the status. */
#include "cli/task-end.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"

#define POLL_MS	 500
#define GONE_MS	 10000 /* how long a server may be out of reach (restarting) */
#define PATH_LEN 64

bool gp_task_end_is(json_t *task)
{
	static const char *const ended[] = {"succeeded", "failed", "cancelled", "lost"};
	const char *state = gp_client_str(task, "state");

	for (size_t i = 0; i < sizeof(ended) / sizeof(ended[0]); i++)
		if (!strcmp(state, ended[i]))
			return true;
	return false;
}

int gp_task_end_status(json_t *task)
{
	const char *state = gp_client_str(task, "state");
	json_int_t code = gp_client_int(task, "exit_code");

	if (!strcmp(state, "cancelled"))
		return GP_EXIT_TASK_CANCELLED;
	if (!strcmp(state, "failed") && json_is_true(json_object_get(task, "timed_out")))
		return GP_EXIT_TASK_TIMED_OUT;
	if (!strcmp(state, "lost") || (!strcmp(state, "failed") && code == 0) ||
	    code < 0 || code > 255)
		return GP_EXIT_TASK_NOT_RUN;
	return (int)code;
}

void gp_task_end_say(const char *cmd, json_t *task, int status)
{
	const char *reason = gp_client_text(task, "reason");

	fprintf(stderr, "gpupool %s: task %lld %s%s%s", cmd,
		(long long)gp_client_int(task, "id"), gp_client_text(task, "state"),
		*reason ? ": " : "", reason);
	if (status == GP_EXIT_TASK_CANCELLED || status == GP_EXIT_TASK_NOT_RUN ||
	    status == GP_EXIT_TASK_TIMED_OUT)
		fprintf(stderr, " (exit status %d)", status);
	fputc('\n', stderr);
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};

	nanosleep(&ts, NULL);
}

int gp_task_end_get(const struct gp_client_flags *f, const char *cmd, long long id,
		    json_t **ret_task)
{
	char path[PATH_LEN];
	long http = 0;
	int status;

	snprintf(path, sizeof(path), "/v1/tasks/%lld", id);
	for (int waited = 0; waited < GONE_MS; waited += POLL_MS) {
		status = gp_client_call(f, cmd, "GET", path, NULL, true, &http, ret_task);
		if (status == GP_EXIT_OK || http != 0)
			break;
		nap_ms(POLL_MS);
	}
	if (status != GP_EXIT_OK) /* again, to say why */
		status = gp_client_call(f, cmd, "GET", path, NULL, false, NULL, ret_task);
	if (status != GP_EXIT_OK)
		fprintf(stderr,
			"gpupool %s: stopped waiting for task %lld; it may still run "
			"(gpupool task show %lld)\n",
			cmd, id, id);
	return status;
}

int gp_task_end_wait(const struct gp_client_flags *f, const char *cmd, long long id,
		     json_t **ret_task)
{
	json_t *task = NULL;
	int status;

	for (;;) {
		status = gp_task_end_get(f, cmd, id, &task);
		if (status != GP_EXIT_OK)
			return status;
		if (gp_task_end_is(task))
			break;
		json_decref(task);
		task = NULL;
		nap_ms(POLL_MS);
	}
	status = gp_task_end_status(task);
	if (ret_task)
		*ret_task = task;
	else
		json_decref(task);
	return status;
}
