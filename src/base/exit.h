/* exit.h — the exit statuses of every gpupool command, whichever folder
 * its code lives in (cli/, server/, k8s/): 0 success, 1 failure while
 * working, 2 bad usage (a wrong flag or value; the message says which and
 * what to do). */
#ifndef GP_BASE_EXIT_H
#define GP_BASE_EXIT_H

enum { GP_EXIT_OK = 0, GP_EXIT_FAIL = 1, GP_EXIT_USAGE = 2 };

#endif
