/* logpump.c — the pump's thread: pipes into capped log files
 * (logpump.h).
 *
 * One epoll set holds every log's read end (level-triggered, so a pipe
 * left with bytes after its turn comes back at the next wait, and the
 * kernel hands ready pipes out in turn) and an eventfd by which callers
 * wake the thread. Each round the thread first finishes the logs asked
 * to close, then waits, then gives every ready pipe one turn of at most
 * GP_LOGPUMP_QUANTUM bytes.
 *
 * A log's file state (descriptors, sizes, where PATH starts) belongs to
 * the pump's thread alone once gp_logpump_add has handed the log over;
 * a log is freed only by that thread (when it closes it) or by
 * gp_logpump_free after the thread has stopped, so the log pointers in a
 * round's events stay valid through the round. */
#include "agent/logpump.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/logfile.h"

#define EVENTS_MAX    64
#define BUF_BYTES     (64U << 10) /* read/write and dropping without splice */
#define RETRY_MS      1000	  /* after a write error, drop this long */
#define CLOSE_WAIT_MS 5000	  /* gp_logpump_close gives the thread this long */
#define FLOOR	      (-ENOSPC - 4096) /* note_failed's err for the floor: no errno */

/* One task's log. The fields above `closing` are the pump thread's (the
 * caller's in gp_logpump_add, before the log is handed over); the rest
 * are under p->lock. */
struct log {
	int64_t task;
	char *path, *old_path; /* PATH, PATH.1 */
	int rfd;	       /* the pipe's read end */
	int cur_fd;	       /* PATH; -1 from a rename to the next PATH made */
	int offset_fd;	       /* PATH.offset */
	uint64_t cur_ino;      /* PATH's inode */
	uint64_t cur_size;     /* bytes in PATH */
	uint64_t start;	       /* where PATH starts in the log's text */
	uint64_t old_size;     /* bytes in PATH.1 (0: none) */
	bool offset_ok;	       /* PATH.offset names PATH: bytes may go in */
	bool eof;	       /* no writer left: out of the epoll set */
	bool no_splice;	       /* PATH's filesystem cannot splice */
	int64_t drop_until_ms; /* after a write error (monotonic) */

	bool closing;
	uint64_t capped, failed;
	int error;
	bool floor;
	int64_t first_ms;
	uint64_t told_capped, told_failed; /* as of the last take_drops */
};

struct gp_logpump {
	uint64_t max_bytes, half;
	unsigned pipe_bytes;
	char *floor_dir;     /* NULL: no floor */
	uint64_t free_min;
	int64_t floor_at_ms; /* the thread's: when it next looks (monotonic) */
	uint64_t floor_written; /* the thread's: bytes written since the last look */
	bool below;          /* the thread's: under the floor at the last look */
	int epfd, wake_fd, null_fd;
	char *buf; /* the thread's */
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock;
	pthread_cond_t closed; /* broadcast when a log leaves the table */
	struct log **log;
	int logs, logs_cap;
	struct gp_logpump_drop *done; /* closed logs' drops, not yet taken */
	int dones, dones_cap;
	bool stop;
};

static int64_t clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the table (under p->lock) ------------------------------------------- */

static int table_find(const struct gp_logpump *p, int64_t task)
{
	for (int i = 0; i < p->logs; i++)
		if (p->log[i]->task == task)
			return i;
	return -1;
}

static int table_add(struct gp_logpump *p, struct log *l)
{
	if (table_find(p, l->task) >= 0)
		return -EEXIST;
	if (p->logs == p->logs_cap) {
		int cap = p->logs_cap ? 2 * p->logs_cap : 16;
		struct log **bigger = realloc(p->log, (size_t)cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		p->log = bigger;
		p->logs_cap = cap;
	}
	p->log[p->logs++] = l;
	return 0;
}

static void table_remove(struct gp_logpump *p, const struct log *l)
{
	for (int i = 0; i < p->logs; i++) {
		if (p->log[i] == l) {
			p->log[i] = p->log[--p->logs];
			return;
		}
	}
}

static bool drop_changed(const struct log *l)
{
	return l->capped != l->told_capped || l->failed != l->told_failed;
}

static struct gp_logpump_drop drop_tell(struct log *l)
{
	l->told_capped = l->capped;
	l->told_failed = l->failed;
	return (struct gp_logpump_drop){.task = l->task,
					.capped = l->capped,
					.failed = l->failed,
					.error = l->error,
					.floor = l->floor,
					.first_ms = l->first_ms};
}

/* A closed log's last drops, kept for the next take_drops. */
static void done_keep(struct gp_logpump *p, struct log *l)
{
	if (!drop_changed(l))
		return;
	if (p->dones == p->dones_cap) {
		int cap = p->dones_cap ? 2 * p->dones_cap : 16;
		struct gp_logpump_drop *bigger =
			realloc(p->done, (size_t)cap * sizeof(*bigger));

		if (!bigger)
			return; /* the report is lost; the log is not */
		p->done = bigger;
		p->dones_cap = cap;
	}
	p->done[p->dones++] = drop_tell(l);
}

/* ---- drop counts (the pump's thread) ------------------------------------- */

static void first_drop(struct log *l)
{
	if (!l->first_ms)
		l->first_ms = clock_ms(CLOCK_REALTIME);
}

/* PATH.1 was replaced: what it held is gone. */
static void note_capped(struct gp_logpump *p, struct log *l)
{
	uint64_t capped = l->start - l->old_size;

	pthread_mutex_lock(&p->lock);
	if (capped > l->capped)
		first_drop(l);
	l->capped = capped;
	pthread_mutex_unlock(&p->lock);
}

/* n bytes of output were not written; err (negative) says why: a write
 * error, or the floor (FLOOR). */
static void note_failed(struct gp_logpump *p, struct log *l, uint64_t n, int err)
{
	if (err < 0)
		l->drop_until_ms = clock_ms(CLOCK_MONOTONIC) + RETRY_MS;
	if (!n && !err)
		return;
	pthread_mutex_lock(&p->lock);
	l->failed += n;
	if (err < 0) {
		l->floor = err == FLOOR;
		l->error = l->floor ? -ENOSPC : err;
	}
	if (n)
		first_drop(l);
	pthread_mutex_unlock(&p->lock);
}

/* ---- moving bytes (the pump's thread) ------------------------------------ */

static void log_eof(struct gp_logpump *p, struct log *l)
{
	if (!l->eof)
		epoll_ctl(p->epfd, EPOLL_CTL_DEL, l->rfd, NULL);
	l->eof = true;
}

/* Makes PATH anew after a rotation (its inode in cur_ino). */
static int cur_create(struct log *l)
{
	struct stat st;
	int fd = open(l->path,
		      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		      0600);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	l->cur_fd = fd;
	l->cur_ino = (uint64_t)st.st_ino;
	return 0;
}

/* PATH has room for at least one byte and PATH.offset names it: rotates
 * a full PATH, makes a new one, writes the offset file, as far as it
 * gets; a step that failed is tried again the next time. */
static int log_room(struct gp_logpump *p, struct log *l)
{
	int r;

	if (l->cur_fd >= 0 && l->cur_size >= p->half) {
		bool removed = rename(l->path, l->old_path) < 0;

		/* Someone removed PATH (to free space?): the log starts again,
		 * empty, where it had got to; PATH.1 goes too, since it would
		 * no longer come just before; all of it counts as dropped. */
		if (removed &&
		    (errno != ENOENT || (unlink(l->old_path) < 0 && errno != ENOENT)))
			return -errno;
		close(l->cur_fd);
		l->cur_fd = -1;
		l->start += l->cur_size;
		l->old_size = removed ? 0 : l->cur_size;
		l->cur_size = 0;
		l->offset_ok = false;
		note_capped(p, l);
	}
	if (l->cur_fd < 0 && (r = cur_create(l)) < 0)
		return r;
	if (!l->offset_ok) {
		r = gp_logfile_offset_write(l->offset_fd, l->start, l->cur_ino);
		if (r < 0)
			return r;
		l->offset_ok = true;
	}
	return 0;
}

/* Up to len bytes out of the pipe into nothing: how many (0: empty or
 * no writer), counted as failed with err. */
static size_t log_drop(struct gp_logpump *p, struct log *l, size_t len, int err)
{
	ssize_t n = splice(l->rfd, NULL, p->null_fd, NULL, len,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

	if (n < 0 && errno == EINVAL)
		n = read(l->rfd, p->buf, len < BUF_BYTES ? len : BUF_BYTES);
	if (n == 0)
		log_eof(p, l);
	if (n <= 0) {
		note_failed(p, l, 0, err);
		return 0;
	}
	note_failed(p, l, (uint64_t)n, err);
	return (size_t)n;
}

/* Without splice: one read, and its bytes written at PATH's end; what
 * cannot be written is counted as failed. Bytes read (0: no writer),
 * -EAGAIN when empty. */
static ssize_t copy_some(struct gp_logpump *p, struct log *l, size_t len)
{
	ssize_t n = read(l->rfd, p->buf, len < BUF_BYTES ? len : BUF_BYTES), put = 0;

	if (n < 0)
		return -errno;
	while (put < n) {
		ssize_t w = pwrite(l->cur_fd, p->buf + put, (size_t)(n - put),
				   (off_t)(l->cur_size + (uint64_t)put));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			note_failed(p, l, (uint64_t)(n - put), w < 0 ? -errno : -EIO);
			break;
		}
		put += w;
	}
	l->cur_size += (uint64_t)put;
	return n;
}

/* Up to len bytes from the pipe to PATH's end (len fits in PATH): bytes
 * taken from the pipe (0: no writer), -EAGAIN when empty, or the write
 * error (nothing taken). */
static ssize_t move_some(struct gp_logpump *p, struct log *l, size_t len)
{
	loff_t at = (loff_t)l->cur_size;
	ssize_t n;

	if (l->no_splice)
		return copy_some(p, l, len);
	n = splice(l->rfd, NULL, l->cur_fd, &at, len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n >= 0) {
		l->cur_size += (uint64_t)n;
		return n;
	}
	if (errno != EINVAL)
		return -errno;
	l->no_splice = true; /* this filesystem cannot: read and write from now on */
	return copy_some(p, l, len);
}

/* Is the free space where the logs are under the floor? Looked at after
 * GP_LOGPUMP_FLOOR_MS or GP_LOGPUMP_FLOOR_BYTES written. */
static bool below_floor(struct gp_logpump *p)
{
	int64_t now;
	uint64_t free_bytes;

	if (!p->floor_dir)
		return false;
	now = clock_ms(CLOCK_MONOTONIC);
	if (now >= p->floor_at_ms || p->floor_written >= GP_LOGPUMP_FLOOR_BYTES) {
		p->floor_at_ms = now + GP_LOGPUMP_FLOOR_MS;
		p->floor_written = 0;
		p->below = gp_logfile_dir_free(p->floor_dir, &free_bytes) == 0 &&
			   free_bytes < p->free_min;
	}
	return p->below;
}

/* One step of at most len bytes: moved, or dropped after an error or
 * under the floor. Bytes taken from the pipe; 0 when it is empty or has
 * no writer. */
static size_t log_step(struct gp_logpump *p, struct log *l, size_t len)
{
	ssize_t n;
	int r;

	if (clock_ms(CLOCK_MONOTONIC) < l->drop_until_ms)
		return log_drop(p, l, len, 0);
	if (below_floor(p))
		return log_drop(p, l, len, FLOOR);
	r = log_room(p, l);
	if (r < 0)
		return log_drop(p, l, len, r);
	if (len > p->half - l->cur_size)
		len = (size_t)(p->half - l->cur_size);
	n = move_some(p, l, len);
	if (n == 0)
		log_eof(p, l);
	if (n == -EAGAIN || n == 0)
		return 0;
	if (n < 0)
		return log_drop(p, l, len, (int)n);
	p->floor_written += (uint64_t)n;
	return (size_t)n;
}

/* One turn: at most budget bytes. Bytes taken; 0 when there were none. */
static size_t log_turn(struct gp_logpump *p, struct log *l, size_t budget)
{
	size_t done = 0;

	while (done < budget && !l->eof) {
		size_t n = log_step(p, l, budget - done);

		if (!n)
			break;
		done += n;
	}
	return done;
}

static void log_free(struct log *l)
{
	if (!l)
		return;
	if (l->rfd >= 0)
		close(l->rfd);
	if (l->cur_fd >= 0)
		close(l->cur_fd);
	if (l->offset_fd >= 0)
		close(l->offset_fd);
	free(l->path);
	free(l->old_path);
	free(l);
}

/* A log asked to close: its pipe drained (bounded), then it leaves the
 * table and is freed. */
static void log_finish(struct gp_logpump *p, struct log *l)
{
	int64_t until = clock_ms(CLOCK_MONOTONIC) + GP_LOGPUMP_DRAIN_MS;

	while (!l->eof && clock_ms(CLOCK_MONOTONIC) < until)
		if (!log_turn(p, l, GP_LOGPUMP_QUANTUM))
			break;
	log_eof(p, l);
	pthread_mutex_lock(&p->lock);
	done_keep(p, l);
	table_remove(p, l);
	pthread_cond_broadcast(&p->closed);
	pthread_mutex_unlock(&p->lock);
	log_free(l);
}

/* Finishes the logs asked to close; false once the pump is to stop. */
static bool closings(struct gp_logpump *p)
{
	for (;;) {
		struct log *l = NULL;

		pthread_mutex_lock(&p->lock);
		if (p->stop) {
			pthread_mutex_unlock(&p->lock);
			return false;
		}
		for (int i = 0; i < p->logs && !l; i++)
			if (p->log[i]->closing)
				l = p->log[i];
		pthread_mutex_unlock(&p->lock);
		if (!l)
			return true;
		log_finish(p, l);
	}
}

static void *pump_main(void *arg)
{
	struct gp_logpump *p = arg;
	struct epoll_event ev[EVENTS_MAX];

	while (closings(p)) {
		int n = epoll_wait(p->epfd, ev, EVENTS_MAX, -1);

		for (int i = 0; i < n; i++) {
			uint64_t count;

			if (ev[i].data.ptr)
				log_turn(p, ev[i].data.ptr, GP_LOGPUMP_QUANTUM);
			else if (read(p->wake_fd, &count, sizeof(count)) < 0) {
				/* already reset: nothing to do */
			}
		}
	}
	return NULL;
}

static void pump_wake(struct gp_logpump *p)
{
	uint64_t one = 1;

	if (write(p->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the thread is being woken anyway */
	}
}

/* ---- the pump ------------------------------------------------------------ */

/* The thread, with every signal blocked in it. */
static int thread_start(struct gp_logpump *p)
{
	sigset_t all, old;
	int r;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&p->thread, NULL, pump_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	p->thread_started = r == 0;
	return r;
}

static int sync_init(struct gp_logpump *p)
{
	int r;

	if ((r = pthread_mutex_init(&p->lock, NULL)) != 0)
		return -r;
	r = gp_monotonic_cond_init(&p->closed);
	if (r < 0)
		pthread_mutex_destroy(&p->lock);
	return r;
}

static int pump_open(struct gp_logpump *p)
{
	struct epoll_event wake = {.events = EPOLLIN, .data.ptr = NULL};

	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	p->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	p->buf = malloc(BUF_BYTES);
	if (p->epfd < 0 || p->wake_fd < 0 || p->null_fd < 0)
		return -errno;
	if (!p->buf)
		return -ENOMEM;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->wake_fd, &wake) < 0)
		return -errno;
	return 0;
}

int gp_logpump_new(const struct gp_logpump_options *o, struct gp_logpump **ret)
{
	uint64_t max = o && o->max_bytes ? o->max_bytes : GP_LOGPUMP_MAX_DEFAULT;
	struct gp_logpump *p;
	int r;

	if (!ret || max < GP_LOGPUMP_MAX_MIN)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->max_bytes = max;
	p->half = max / 2;
	p->pipe_bytes = o && o->pipe_bytes ? o->pipe_bytes : GP_LOGPUMP_PIPE_BYTES;
	p->epfd = p->wake_fd = p->null_fd = -1;
	p->free_min = o && o->floor_dir ? o->free_min : 0;
	if (p->free_min && !(p->floor_dir = strdup(o->floor_dir))) {
		free(p);
		return -ENOMEM;
	}
	r = sync_init(p);
	if (r < 0) {
		free(p->floor_dir);
		free(p);
		return r;
	}
	r = pump_open(p);
	if (r == 0)
		r = thread_start(p);
	if (r < 0) {
		gp_logpump_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

struct gp_logpump *gp_logpump_free(struct gp_logpump *p)
{
	if (!p)
		return NULL;
	if (p->thread_started) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_mutex_unlock(&p->lock);
		pump_wake(p);
		pthread_join(p->thread, NULL);
	}
	for (int i = 0; i < p->logs; i++)
		log_free(p->log[i]);
	free(p->log);
	free(p->done);
	free(p->buf);
	free(p->floor_dir);
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	if (p->null_fd >= 0)
		close(p->null_fd);
	pthread_cond_destroy(&p->closed);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return NULL;
}

uint64_t gp_logpump_max(const struct gp_logpump *p)
{
	return p->max_bytes;
}

/* ---- adding a log -------------------------------------------------------- */

/* Opens a file of the log for writing (made 0600 when missing); it must
 * be a regular file. */
static int file_open(const char *path, int flags, struct stat *ret_st)
{
	int fd = open(path, flags | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (fstat(fd, ret_st) == 0 && S_ISREG(ret_st->st_mode))
		return fd;
	close(fd);
	return -EINVAL;
}

/* Where PATH starts in the log's text, from the offset file (read before
 * it is rewritten) and the files as they are: PATH.offset names PATH, or
 * names PATH.1 (a rotation that did not get as far as rewriting it), or
 * there is none (a log from before the cap: PATH.1, if any, comes first). */
static uint64_t start_find(const char *offset_path, const struct stat *cur,
			   const struct stat *old, bool have_old)
{
	uint64_t old_size = have_old ? (uint64_t)old->st_size : 0, start, ino;

	if (gp_logfile_offset_read(offset_path, &start, &ino) < 0)
		return old_size;
	if (ino == (uint64_t)cur->st_ino)
		return start > old_size ? start : old_size;
	if (have_old && ino == (uint64_t)old->st_ino)
		return start + old_size;
	return old_size;
}

/* The files of l: PATH.offset and PATH opened, where PATH starts, the
 * offset file rewritten to name PATH. */
static int log_files(struct log *l, const char *offset_path)
{
	struct stat cur, old, offset;
	bool have_old = lstat(l->old_path, &old) == 0;
	int r;

	if (have_old && !S_ISREG(old.st_mode))
		return -EINVAL;
	l->cur_fd = file_open(l->path, O_WRONLY, &cur);
	if (l->cur_fd < 0)
		return l->cur_fd;
	l->cur_ino = (uint64_t)cur.st_ino;
	l->cur_size = (uint64_t)cur.st_size;
	l->old_size = have_old ? (uint64_t)old.st_size : 0;
	l->start = start_find(offset_path, &cur, &old, have_old);
	l->offset_fd = file_open(offset_path, O_RDWR, &offset);
	if (l->offset_fd < 0)
		return l->offset_fd;
	r = gp_logfile_offset_write(l->offset_fd, l->start, l->cur_ino);
	if (r < 0)
		return r;
	l->offset_ok = true;
	l->capped = l->told_capped = l->start - l->old_size;
	return 0;
}

static struct log *log_new(int64_t task, const char *path, int *ret_err)
{
	char old_path[PATH_MAX];
	struct log *l = calloc(1, sizeof(*l));

	*ret_err = -ENOMEM;
	if (!l)
		return NULL;
	l->task = task;
	l->rfd = l->cur_fd = l->offset_fd = -1;
	*ret_err =
		gp_logfile_name(path, GP_LOGFILE_OLD_SUFFIX, old_path, sizeof(old_path));
	if (*ret_err == 0) {
		l->path = strdup(path);
		l->old_path = strdup(old_path);
		*ret_err = l->path && l->old_path ? 0 : -ENOMEM;
	}
	if (*ret_err < 0) {
		log_free(l);
		return NULL;
	}
	return l;
}

/* The pipe: the read end kept (non-blocking), the write end in *ret_fd. */
static int log_pipe(const struct gp_logpump *p, struct log *l, int *ret_fd)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
		int r = -errno;

		close(fds[0]);
		close(fds[1]);
		return r;
	}
	/* Best effort: a user over its pipe quota gets the kernel's default. */
	if (fcntl(fds[0], F_SETPIPE_SZ, (int)p->pipe_bytes) < 0) {
		/* keep the size it has */
	}
	l->rfd = fds[0];
	*ret_fd = fds[1];
	return 0;
}

/* The log's FIFO at fifo: its read end the pump's. When `make`: a new
 * FIFO (a stale one replaced), and a write end for the task and a second
 * read end for its keeper; else an existing one, taken over. */
static int log_fifo(const struct gp_logpump *p, struct log *l, const char *fifo, bool make,
		    int *ret_write_fd, int *ret_keep_fd)
{
	struct stat st;
	int r = 0, wfd = -1, keep = -1;

	if (make && ((unlink(fifo) < 0 && errno != ENOENT) || mkfifo(fifo, 0600) < 0))
		return -errno;
	l->rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (l->rfd < 0)
		return -errno;
	if (fstat(l->rfd, &st) < 0)
		r = -errno;
	else if (!S_ISFIFO(st.st_mode))
		r = -EINVAL;
	if (r == 0 && make && ((wfd = open(fifo, O_WRONLY | O_CLOEXEC)) < 0 ||
			       (keep = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0))
		r = -errno;
	if (r < 0) {
		if (wfd >= 0)
			close(wfd);
		close(l->rfd);
		l->rfd = -1;
		return r;
	}
	if (fcntl(l->rfd, F_SETPIPE_SZ, (int)p->pipe_bytes) < 0) {
		/* keep the size it has */
	}
	if (make) {
		*ret_write_fd = wfd;
		*ret_keep_fd = keep;
	}
	return 0;
}

/* Into the table and the epoll set: from here on the log is the thread's. */
static int log_hand_over(struct gp_logpump *p, struct log *l)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
	int r;

	pthread_mutex_lock(&p->lock);
	r = table_add(p, l);
	if (r == 0 && epoll_ctl(p->epfd, EPOLL_CTL_ADD, l->rfd, &ev) < 0) {
		r = -errno;
		table_remove(p, l);
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

/* gp_logpump_add, _add_fifo and _attach: the log at path, through a pipe
 * (fifo NULL) or the FIFO at fifo (made when `make`). */
static int log_open(struct gp_logpump *p, int64_t task, const char *path, const char *fifo,
		    bool make, int *ret_write_fd, int *ret_keep_fd)
{
	char offset_path[PATH_MAX];
	struct log *l;
	int r, wfd = -1, keep = -1;

	if (!p || !path || !*path)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	r = table_find(p, task) >= 0 ? -EEXIST : 0;
	pthread_mutex_unlock(&p->lock);
	if (r == 0)
		r = gp_logfile_name(path, GP_LOGFILE_OFFSET_SUFFIX, offset_path,
				    sizeof(offset_path));
	if (r < 0)
		return r;
	l = log_new(task, path, &r);
	if (!l)
		return r;
	r = log_files(l, offset_path);
	if (r == 0)
		r = fifo ? log_fifo(p, l, fifo, make, &wfd, &keep) : log_pipe(p, l, &wfd);
	if (r == 0)
		r = log_hand_over(p, l);
	if (r < 0) {
		if (wfd >= 0)
			close(wfd);
		if (keep >= 0)
			close(keep);
		log_free(l);
		return r;
	}
	if (ret_write_fd)
		*ret_write_fd = wfd;
	if (ret_keep_fd)
		*ret_keep_fd = keep;
	return 0;
}

int gp_logpump_add(struct gp_logpump *p, int64_t task, const char *path,
		   int *ret_write_fd)
{
	if (!ret_write_fd)
		return -EINVAL;
	return log_open(p, task, path, NULL, true, ret_write_fd, NULL);
}

int gp_logpump_add_fifo(struct gp_logpump *p, int64_t task, const char *path,
			const char *fifo, int *ret_write_fd, int *ret_keep_fd)
{
	if (!fifo || !ret_write_fd || !ret_keep_fd)
		return -EINVAL;
	return log_open(p, task, path, fifo, true, ret_write_fd, ret_keep_fd);
}

int gp_logpump_attach(struct gp_logpump *p, int64_t task, const char *path, const char *fifo)
{
	if (!fifo)
		return -EINVAL;
	return log_open(p, task, path, fifo, false, NULL, NULL);
}

/* ---- closing and drops --------------------------------------------------- */

int gp_logpump_close(struct gp_logpump *p, int64_t task)
{
	struct timespec until;
	int i, r = 0;

	if (!p)
		return -EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += CLOSE_WAIT_MS / 1000;
	pthread_mutex_lock(&p->lock);
	i = table_find(p, task);
	if (i >= 0)
		p->log[i]->closing = true;
	pthread_mutex_unlock(&p->lock);
	if (i < 0)
		return -ENOENT;
	pump_wake(p);
	pthread_mutex_lock(&p->lock);
	while (r == 0 && table_find(p, task) >= 0)
		r = pthread_cond_timedwait(&p->closed, &p->lock, &until);
	if (r == ETIMEDOUT && table_find(p, task) < 0)
		r = 0;
	pthread_mutex_unlock(&p->lock);
	return -r;
}

int gp_logpump_take_drops(struct gp_logpump *p, struct gp_logpump_drop *out, int max)
{
	int n = 0, kept;

	if (!p || !out || max < 1)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	kept = p->dones < max ? p->dones : max;
	if (kept) {
		memcpy(out, p->done, (size_t)kept * sizeof(*out));
		memmove(p->done, p->done + kept, (size_t)(p->dones - kept) * sizeof(*out));
		p->dones -= kept;
	}
	n = kept;
	for (int i = 0; i < p->logs && n < max; i++)
		if (drop_changed(p->log[i]))
			out[n++] = drop_tell(p->log[i]);
	pthread_mutex_unlock(&p->lock);
	return n;
}
