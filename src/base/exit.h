/* exit.h — the exit statuses of every gpupool command, whichever folder
 * its code lives in (cli/, server/, k8s/): 0 success, 1 failure while
 * working, 2 bad usage (a wrong flag or value; the message says which and
 * what to do).
 *
 * The commands that wait for a task to end (`gpupool submit --wait`,
 * `gpupool logs -f`) exit with the task's own status instead: its exit
 * code, 0-255, or 128 + N when signal N killed it (as the shell says it);
 * and, as timeout(1) does, 124 when it was cancelled (stopped from outside
 * before it ended on its own) and 125 when gpupool never saw its program
 * end: it could not be started, or was lost; 123, beside them, when its
 * time limit ended it (`submit --time`, Slurm's TIMEOUT) (cli/task-end.h). */
#ifndef GP_BASE_EXIT_H
#define GP_BASE_EXIT_H

enum { GP_EXIT_OK = 0, GP_EXIT_FAIL = 1, GP_EXIT_USAGE = 2 };

enum { GP_EXIT_TASK_TIMED_OUT = 123, GP_EXIT_TASK_CANCELLED = 124, GP_EXIT_TASK_NOT_RUN = 125 };

#endif
