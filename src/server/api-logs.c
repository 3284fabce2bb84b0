/* api-logs.c — GET /v1/tasks/ID/logs (docs/api.md): the end of a task's
 * output, LOG_DIR/task-ID.log (and task-ID.log.1 before it, read as one
 * text: logtail.h), where the agent's log pump writes it, as text/plain.
 *
 * The caller must be allowed to see the task (its owner or the admin: 403
 * otherwise), as for GET /v1/tasks/ID. ?tail=N keeps the last N lines;
 * at most ?bytes=N (default 1 MiB) from the end are read, and the header
 * X-Gpupool-Log-Skipped says how many bytes of the log came before the
 * text sent (the ones its cap dropped included), X-Gpupool-Log-End where
 * it ended. ?from=BYTE reads on from that offset instead (at most ?bytes,
 * as they are): a client following the log asks again from the last End;
 * Skipped is then where the text starts, past `from` when the cap dropped
 * the bytes there (so ?from=0 tells where the log kept starts). A task
 * that has not run has no log (404, saying so); an ended task whose log
 * the server removed (the logs' total cap or the free-space floor:
 * logdir.h) has none any more (410, saying when and why). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/logfile.h"
#include "server/api-impl.h"
#include "server/logtail.h"

#define TAIL_MAX       10000000
#define FROM_MAX       (1LL << 62)
#define SKIPPED_HEADER "X-Gpupool-Log-Skipped"
#define END_HEADER     "X-Gpupool-Log-End"

/* 404 for a task without a log file, saying why there is none; 410
 * when the server removed it. */
static void no_log(struct gp_api *api, const struct gp_task *t, struct gp_http_reply *ret)
{
	struct gp_log_removal rm;
	char when[40];

	if (gp_store_log_removal_get(api->store, t->id, &rm) == 0) {
		gp_unix_ms_text(rm.removed, when, sizeof(when));
		gp_http_error(ret, 410,
			      "task %lld's log was removed at %s (%llu bytes) %s",
			      (long long)t->id, when, (unsigned long long)rm.bytes, rm.why);
	} else if (!t->started) {
		gp_http_error(ret, 404, "task %lld has no log yet: it has not run (%s)",
			      (long long)t->id, gp_api_state_name(t->state));
	} else {
		gp_http_error(ret, 404,
			      "task %lld has no log: task-%lld.log is not in the server's "
			      "--log-dir (removed?)",
			      (long long)t->id, (long long)t->id);
	}
}

static void log_reply(struct gp_logtail *lt, struct gp_http_reply *ret)
{
	ret->header[0].name = SKIPPED_HEADER;
	snprintf(ret->header[0].value, sizeof(ret->header[0].value), "%llu",
		 (unsigned long long)lt->skipped);
	ret->header[1].name = END_HEADER;
	snprintf(ret->header[1].value, sizeof(ret->header[1].value), "%llu",
		 (unsigned long long)(lt->skipped + lt->len));
	gp_http_bytes(ret, 200, lt->text, lt->len, "text/plain");
}

/* The query: ?tail, ?bytes, ?from (-1: absent); false with ret set when
 * one is bad or ?tail and ?from are both given. */
static bool log_query(const struct gp_http_request *req, long long *ret_tail,
		      long long *ret_bytes, long long *ret_from, struct gp_http_reply *ret)
{
	if (!gp_api_query_number(req, "tail", 1, TAIL_MAX, 0, ret_tail, ret) ||
	    !gp_api_query_number(req, "bytes", 1, GP_LOGTAIL_MAX_BYTES,
				 GP_LOGTAIL_DEFAULT_BYTES, ret_bytes, ret) ||
	    !gp_api_query_number(req, "from", 0, FROM_MAX, -1, ret_from, ret))
		return false;
	if (*ret_tail && *ret_from >= 0) {
		gp_http_error(ret, 400,
			      "tail and from do not go together: from reads on from a byte "
			      "offset (the X-Gpupool-Log-End of the last answer)");
		return false;
	}
	return true;
}

void gp_api_logs(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_tenant me;
	struct gp_task t;
	struct gp_logtail lt;
	char path[PATH_MAX + 64];
	long long tail, bytes, from;
	int r;

	if (!gp_api_caller(api, req, ret, &me) ||
	    !gp_api_task_load(api, &me, req->id, ret, &t) ||
	    !log_query(req, &tail, &bytes, &from, ret))
		return;
	r = gp_logfile_task_path(api->log_dir, t.id, path, sizeof(path));
	if (r == 0 && from >= 0)
		r = gp_logtail_read_from(path, (uint64_t)from, (size_t)bytes, &lt);
	else if (r == 0)
		r = gp_logtail_read(path, (unsigned)tail, (size_t)bytes, &lt);
	if (r == -ENOENT)
		no_log(api, &t, ret);
	else if (r < 0)
		gp_http_error(ret, 500, "reading the log of task %lld: %s", (long long)t.id,
			      strerror(-r));
	else
		log_reply(&lt, ret);
}
