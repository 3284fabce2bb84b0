/* api-logs.c — GET /v1/tasks/ID/logs (docs/api.md): the end of a task's
 * output, LOG_DIR/task-ID.log, where the agent's launcher writes it, as
 * text/plain.
 *
 * The caller must be allowed to see the task (its owner or the admin: 403
 * otherwise), as for GET /v1/tasks/ID. ?tail=N keeps the last N lines;
 * at most ?bytes=N (default 1 MiB) from the end are read, and the header
 * X-Gpupool-Log-Skipped says how many bytes of the file came before the
 * text sent. A task that has not run has no log (404, saying so). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "server/api-impl.h"
#include "server/logtail.h"

#define TAIL_MAX       10000000
#define SKIPPED_HEADER "X-Gpupool-Log-Skipped"

/* 404 for a task without a log file, saying why there is none. */
static void no_log(const struct gp_task *t, struct gp_http_reply *ret)
{
	if (!t->started)
		gp_http_error(ret, 404, "task %lld has no log yet: it has not run (%s)",
			      (long long)t->id, gp_api_state_name(t->state));
	else
		gp_http_error(ret, 404,
			      "task %lld has no log: task-%lld.log is not in the server's "
			      "--log-dir (removed?)",
			      (long long)t->id, (long long)t->id);
}

static void log_reply(struct gp_logtail *lt, struct gp_http_reply *ret)
{
	ret->header = SKIPPED_HEADER;
	snprintf(ret->header_value, sizeof(ret->header_value), "%llu",
		 (unsigned long long)lt->skipped);
	gp_http_bytes(ret, 200, lt->text, lt->len, "text/plain");
}

void gp_api_logs(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_task t;
	struct gp_logtail lt;
	char path[PATH_MAX + 64];
	long long tail, bytes;
	int r;

	if (!gp_api_caller(api, req, ret, &me) ||
	    !gp_api_task_load(api, &me, req->id, ret, &t) ||
	    !gp_api_query_number(req, "tail", 1, TAIL_MAX, 0, &tail, ret) ||
	    !gp_api_query_number(req, "bytes", 1, GP_LOGTAIL_MAX_BYTES,
				 GP_LOGTAIL_DEFAULT_BYTES, &bytes, ret))
		return;
	snprintf(path, sizeof(path), "%s/task-%lld.log", api->log_dir, (long long)t.id);
	r = gp_logtail_read(path, (unsigned)tail, (size_t)bytes, &lt);
	if (r == -ENOENT)
		no_log(&t, ret);
	else if (r < 0)
		gp_http_error(ret, 500, "reading the log of task %lld: %s", (long long)t.id,
			      strerror(-r));
	else
		log_reply(&lt, ret);
}
