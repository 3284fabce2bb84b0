/* logfile.h — the files that hold one task's log, as the agent's pump
 * writes them (agent/logpump.h) and the server reads them
 * (server/logtail.h): the one place that says what they are named and
 * what the offset file holds.
 *
 *   PATH          the newest part of the log (PATH is LOG_DIR/task-ID.log)
 *   PATH.1        the part just before it; what came before that is gone
 *   PATH.offset   one line, "START INODE\n" (two numbers of 20 digits):
 *                 the first byte of PATH is byte START of the log's whole
 *                 text — counting the bytes the cap dropped — as long as
 *                 PATH is the file whose inode number is INODE
 *
 * An offset into a log ("byte N of the log") is an offset into that whole
 * text: it only grows, across rotations and across runs of the task, so
 * a reader that follows a log keeps its place when the files rotate. The
 * bytes PATH.1 holds come just before PATH's. A log written before the
 * cap existed is PATH alone, no offset file: it starts at byte 0.
 *
 * A rotation renames PATH to PATH.1, makes a new PATH, and only then
 * rewrites the offset file (in place: it never needs a new block, so a
 * full disk cannot stop it); nothing is written to the new PATH before.
 * Between the rename and the rewrite the offset file names the inode of
 * PATH.1, which tells a reader that PATH.1 starts at START and PATH holds
 * nothing yet.
 *
 * A task's log is LOG_DIR/task-ID.log (gp_logfile_task_path), and its
 * three files are the files of LOG_DIR whose names gp_logfile_task_of
 * knows.
 *
 * Functions return 0 or a negative errno; nothing here keeps state. */
#ifndef GP_BASE_LOGFILE_H
#define GP_BASE_LOGFILE_H

#include <stddef.h>
#include <stdint.h>

#define GP_LOGFILE_OLD_SUFFIX	 ".1"
#define GP_LOGFILE_OFFSET_SUFFIX ".offset"
#define GP_LOGFILE_OFFSET_LEN	 42 /* "%020 %020\n" */

/* path with suffix appended, in buf; -ENAMETOOLONG when it does not fit. */
int gp_logfile_name(const char *path, const char *suffix, char *buf, size_t size);

/* LOG_DIR/task-ID.log, the PATH of task's log, in buf;
 * -ENAMETOOLONG when it does not fit. */
int gp_logfile_task_path(const char *log_dir, int64_t task, char *buf, size_t size);

/* The task whose log a file of the log directory named `name` belongs
 * to (task-ID.log, task-ID.log.1, task-ID.log.offset), or 0 for any
 * other name. */
int64_t gp_logfile_task_of(const char *name);

/* The bytes free to the unprivileged where dir is (statvfs's f_bavail):
 * what is left for the logs before their filesystem is full. */
int gp_logfile_dir_free(const char *dir, uint64_t *ret_bytes);

/* Reads the offset file at offset_path (O_NOFOLLOW): START and INODE.
 * -ENOENT when there is none, -EINVAL when it does not hold one line of
 * the form above. */
int gp_logfile_offset_read(const char *offset_path, uint64_t *ret_start,
			   uint64_t *ret_inode);

/* Writes START and INODE over the offset file open at fd (offset 0, one
 * pwrite of GP_LOGFILE_OFFSET_LEN bytes). */
int gp_logfile_offset_write(int fd, uint64_t start, uint64_t inode);

#endif
