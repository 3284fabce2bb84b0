/* task-end.h — a task's end as the exit status of the commands that wait
 * for it (`gpupool submit --wait`, `gpupool logs -f`), written once here
 * so that both say the same (base/exit.h has the numbers):
 *
 *   succeeded, failed   its exit code, 0-255 (128 + N: killed by signal N)
 *   failed, timed out   GP_EXIT_TASK_TIMED_OUT (123): its time limit ended it
 *   cancelled           GP_EXIT_TASK_CANCELLED (124), whatever its code
 *   failed, no code     GP_EXIT_TASK_NOT_RUN (125): it could not start
 *   lost                GP_EXIT_TASK_NOT_RUN (125): nobody saw it end
 *
 * A task that could not start is failed with exit code 0 (it never had a
 * process to exit): a process that ran and failed always has a non-zero
 * code. Preempted is not an end: the task is queued again. Ownership: the
 * task JSON is the caller's. */
#ifndef GP_CLI_TASK_END_H
#define GP_CLI_TASK_END_H

#include <jansson.h>
#include <stdbool.h>

#include "cli/client.h"

/* Has the task ended (succeeded, failed, cancelled or lost)? */
bool gp_task_end_is(json_t *task);

/* The exit status for an ended task, by the table above. */
int gp_task_end_status(json_t *task);

/* Says on stderr, in one line, how task ended ("task 7 failed: exited
 * with code 3"), for the exit status given. */
void gp_task_end_say(const char *cmd, json_t *task, int status);

/* GET /v1/tasks/ID into *ret_task. A server that cannot be reached is
 * asked again every half second for up to 10 s (a server restarting);
 * after that, or when it refuses, the message is out, then a line that
 * says the wait stopped and the task may still run: exit status 1. */
int gp_task_end_get(const struct gp_client_flags *f, const char *cmd, long long id,
		    json_t **ret_task);

/* Asks every half second until task id has ended; exit status as above,
 * *ret_task (NULL: not wanted) the task as it ended. */
int gp_task_end_wait(const struct gp_client_flags *f, const char *cmd, long long id,
		     json_t **ret_task);

#endif
