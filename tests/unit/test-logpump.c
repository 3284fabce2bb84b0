/* test-logpump.c — task output through the log pump (src/agent/logpump.c),
 * with real pipes, forked writers and files in a temporary directory:
 * a writer of 1 GiB, as fast as it can, ends with at most the cap on
 * disk, the newest bytes there in order, the drop count exact and the
 * server's reader (logtail.h) agreeing; a writer flat out beside one
 * that writes a line now and then, whose lines still arrive at once;
 * close drains what was written before it, and is bounded when a
 * writer never stops; a write error (a file-size limit) drops output
 * without blocking the writer, and is reported; a writer whose pump is
 * freed gets SIGPIPE or EPIPE; a log is continued, across rotations; a
 * log removed while it is written starts again; under a free-space
 * floor output is dropped, and reported so; bad arguments are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/logpump.h"
#include "base/logfile.h"
#include "server/logtail.h"
#include "tree.h"

#define MIB	   (1ULL << 20)
#define GIB	   (1ULL << 30)
#define CHUNK_U64S 8192 /* a writer's write: 64 KiB */

struct dir {
	char path[64];
};

static int dir_setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	snprintf(d->path, sizeof(d->path), "/tmp/test-logpump-XXXXXX");
	assert_non_null(mkdtemp(d->path));
	*state = d;
	return 0;
}

static int dir_teardown(void **state)
{
	struct dir *d = *state;

	remove_tree(d->path);
	free(d);
	return 0;
}

static void log_path(const struct dir *d, int64_t task, char *buf, size_t size)
{
	snprintf(buf, size, "%s/task-%lld.log", d->path, (long long)task);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};

	nanosleep(&ts, NULL);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* ---- writers: forked children that hold only the pipe's write end -------- */

/* In a child: fd becomes stdout, every other descriptor is closed (as
 * exec would close the pump's, which are close-on-exec). */
static void child_keep_only(int fd)
{
	if (dup2(fd, STDOUT_FILENO) < 0)
		_exit(120);
	close_range(3, ~0U, 0);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes `bytes` (a multiple of 8) of counters, u64 k at byte 8k, as
 * fast as it can; bytes 0: forever. Exits 0, or 1 when a write failed
 * (with SIGPIPE ignored: 0 for EPIPE, which is what the caller wants). */
static pid_t writer_start(int wfd, uint64_t bytes, bool ignore_sigpipe)
{
	pid_t pid = fork();
	static uint64_t buf[CHUNK_U64S];

	assert_true(pid >= 0);
	if (pid > 0) {
		close(wfd);
		return pid;
	}
	child_keep_only(wfd);
	if (ignore_sigpipe)
		signal(SIGPIPE, SIG_IGN);
	for (uint64_t k = 0; !bytes || k * 8 < bytes; k += CHUNK_U64S) {
		for (unsigned i = 0; i < CHUNK_U64S; i++)
			buf[i] = k + i;
		if (write_all(STDOUT_FILENO, buf, sizeof(buf)) < 0)
			_exit(errno == EPIPE && ignore_sigpipe ? 0 : 1);
	}
	_exit(0);
}

/* Waits up to ms for pid to end; its wait status, or -1 (then killed). */
static int wait_for(pid_t pid, long ms)
{
	int64_t until = now_ms() + ms;
	int status;

	while (now_ms() < until) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		nap_ms(2);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* The whole file at path, malloc'd; its length in *ret_len. */
static char *file_read(const char *path, size_t *ret_len)
{
	size_t len = file_size(path);
	char *buf = malloc(len + 1);
	FILE *f = fopen(path, "r");

	assert_non_null(buf);
	*ret_len = 0;
	if (f) {
		*ret_len = fread(buf, 1, len, f);
		fclose(f);
	}
	return buf;
}

/* buf[0..len) is the counters' stream from byte `at` (a multiple of 8). */
static void assert_counters(const char *buf, size_t len, uint64_t at)
{
	for (size_t j = 0; j + 8 <= len; j += 8) {
		uint64_t v;

		memcpy(&v, buf + j, 8);
		if (v != (at + j) / 8)
			fail_msg("byte %llu of the log holds counter %llu, not %llu",
				 (unsigned long long)(at + j), (unsigned long long)v,
				 (unsigned long long)((at + j) / 8));
	}
}

/* The drops the pump reports for task, polled until `until_ms`
 * (monotonic) or until pred holds; false when it never did. */
static bool drops_wait(struct gp_logpump *p, int64_t task, long ms,
		       bool (*pred)(const struct gp_logpump_drop *, const void *),
		       const void *arg, struct gp_logpump_drop *ret)
{
	int64_t until = now_ms() + ms;

	do {
		struct gp_logpump_drop d[8];
		int n = gp_logpump_take_drops(p, d, 8);

		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			if (d[i].task != task)
				continue;
			*ret = d[i];
			if (pred(ret, arg))
				return true;
		}
		nap_ms(5);
	} while (now_ms() < until);
	return false;
}

/* ---- 1 GiB, flat out ----------------------------------------------------- */

static bool any_drop(const struct gp_logpump_drop *d, const void *arg)
{
	(void)arg;
	return d->capped > 0;
}

static void test_gigabyte(void **state)
{
	const struct gp_logpump_options o = {.max_bytes = MIB};
	struct gp_logpump_drop drop = {0};
	struct gp_logpump *p;
	struct gp_logtail t;
	char path[128], old[160];
	uint64_t cur_size, old_size, start, ino, dropped;
	size_t cur_len, old_len;
	char *cur, *prev;
	int wfd, status;
	int64_t t0 = now_ms();

	log_path(*state, 1, path, sizeof(path));
	snprintf(old, sizeof(old), "%s.1", path);
	assert_int_equal(gp_logpump_new(&o, &p), 0);
	assert_int_equal(gp_logpump_max(p), MIB);
	assert_int_equal(gp_logpump_add(p, 1, path, &wfd), 0);
	status = wait_for(writer_start(wfd, GIB, false), 60000);
	assert_int_equal(status, 0);
	assert_int_equal(gp_logpump_close(p, 1), 0);
	print_message("1 GiB through the pump in %lld ms\n", (long long)(now_ms() - t0));

	/* At most the cap on disk, the newest half of it at least. */
	cur_size = file_size(path);
	old_size = file_size(old);
	assert_true(cur_size + old_size <= MIB);
	assert_true(cur_size + old_size >= MIB / 2);
	assert_int_equal(old_size, MIB / 2);
	dropped = GIB - cur_size - old_size;

	/* In order: PATH.1, then PATH, are the end of the stream. */
	prev = file_read(old, &old_len);
	cur = file_read(path, &cur_len);
	assert_int_equal(old_len, old_size);
	assert_counters(prev, old_len, dropped);
	assert_counters(cur, cur_len, dropped + old_len);
	free(prev);
	free(cur);

	/* The offset file, and the count the pump reports: exact. */
	snprintf(old, sizeof(old), "%s.offset", path);
	assert_int_equal(gp_logfile_offset_read(old, &start, &ino), 0);
	assert_int_equal(start, dropped + old_size);
	assert_true(drops_wait(p, 1, 10, any_drop, NULL, &drop));
	assert_int_equal(drop.capped, dropped);
	assert_int_equal(drop.failed, 0);
	assert_int_equal(drop.error, 0);
	assert_true(drop.first_ms > 0);
	assert_int_equal(gp_logpump_take_drops(p, &drop, 1), 0); /* told once */

	/* The server's reader sees one text: its end is byte 1 GiB. */
	assert_int_equal(gp_logtail_read_from(path, 0, MIB, &t), 0);
	assert_int_equal(t.skipped, dropped);
	assert_int_equal(t.dropped, dropped);
	assert_int_equal(t.len, cur_size + old_size);
	assert_int_equal(t.size, GIB);
	assert_counters(t.text, t.len, t.skipped);
	free(t.text);
	gp_logpump_free(p);
}

/* ---- fairness ------------------------------------------------------------ */

#define PINGS	     20
#define PING_LATE_MS 250

static void test_fair(void **state)
{
	struct gp_logpump *p;
	char flood[128], quiet[128];
	int flood_fd, quiet_fd;
	int64_t worst = 0;
	uint64_t want = 0;
	pid_t writer;

	log_path(*state, 1, flood, sizeof(flood));
	log_path(*state, 2, quiet, sizeof(quiet));
	assert_int_equal(
		gp_logpump_new(&(struct gp_logpump_options){.max_bytes = MIB}, &p), 0);
	assert_int_equal(gp_logpump_add(p, 1, flood, &flood_fd), 0);
	assert_int_equal(gp_logpump_add(p, 2, quiet, &quiet_fd), 0);
	writer = writer_start(flood_fd, 0, false);
	nap_ms(50); /* the flood under way */
	for (int i = 0; i < PINGS; i++) {
		char line[32];
		int64_t sent = now_ms(), late;

		snprintf(line, sizeof(line), "ping %02d\n", i);
		assert_int_equal(write_all(quiet_fd, line, strlen(line)), 0);
		want += strlen(line);
		while (file_size(quiet) < want && now_ms() - sent < 5000)
			nap_ms(1);
		late = now_ms() - sent;
		worst = late > worst ? late : worst;
		nap_ms(10);
	}
	print_message("the quiet task's lines arrived within %lld ms of being written, "
		      "beside a flood (%llu bytes of it on disk)\n",
		      (long long)worst, (unsigned long long)file_size(flood));
	assert_true(worst < PING_LATE_MS);
	kill(writer, SIGKILL);
	waitpid(writer, NULL, 0);
	close(quiet_fd);
	assert_int_equal(gp_logpump_close(p, 1), 0);
	assert_int_equal(gp_logpump_close(p, 2), 0);
	assert_int_equal(file_size(quiet), want);
	gp_logpump_free(p);
}

/* ---- close --------------------------------------------------------------- */

/* Bytes written into the pipe just before close are in the log when close
 * returns: the pump has moved at most a turn or two of them by then. */
static void test_close_drains(void **state)
{
	static char buf[900 << 10];
	struct gp_logpump *p;
	char path[128];

	memset(buf, 'x', sizeof(buf));
	assert_int_equal(gp_logpump_new(NULL, &p), 0);
	for (int64_t task = 1; task <= 5; task++) {
		int wfd;

		log_path(*state, task, path, sizeof(path));
		assert_int_equal(gp_logpump_add(p, task, path, &wfd), 0);
		assert_int_equal(write_all(wfd, buf, sizeof(buf)), 0);
		/* The writer still holds its end: close stops at an empty pipe. */
		assert_int_equal(gp_logpump_close(p, task), 0);
		close(wfd);
		assert_int_equal(file_size(path), sizeof(buf));
		assert_int_equal(gp_logpump_close(p, task), -ENOENT);
	}
	gp_logpump_free(p);
}

/* A process that escaped its task and writes on cannot hold close up:
 * close returns after its bounded drain, and the writer gets SIGPIPE. */
static void test_close_bounded(void **state)
{
	struct gp_logpump *p;
	char path[128];
	int64_t t0;
	pid_t writer;
	int wfd, status;

	log_path(*state, 1, path, sizeof(path));
	assert_int_equal(gp_logpump_new(NULL, &p), 0);
	assert_int_equal(gp_logpump_add(p, 1, path, &wfd), 0);
	writer = writer_start(wfd, 0, false);
	nap_ms(20);
	t0 = now_ms();
	assert_int_equal(gp_logpump_close(p, 1), 0);
	assert_true(now_ms() - t0 < 1000);
	status = wait_for(writer, 5000);
	assert_true(status != -1);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGPIPE);
	gp_logpump_free(p);
}

/* ---- write errors -------------------------------------------------------- */

#define FSIZE_LIMIT (64U << 10)
#define ERROR_BYTES (4 * MIB)

static bool failed_all(const struct gp_logpump_drop *d, const void *arg)
{
	return d->failed == *(const uint64_t *)arg;
}

/* In a child of its own (a file-size limit is the process's): returns
 * its exit code, 0 when all went as it should. */
static int error_child(const char *path)
{
	struct rlimit fsize = {FSIZE_LIMIT, FSIZE_LIMIT};
	const uint64_t lost = ERROR_BYTES - FSIZE_LIMIT;
	struct gp_logpump_drop drop = {0};
	struct gp_logpump *p;
	pid_t writer;
	int wfd, status;
	size_t len;
	char *text;

	if (setrlimit(RLIMIT_FSIZE, &fsize) < 0 || gp_logpump_new(NULL, &p) < 0 ||
	    gp_logpump_add(p, 7, path, &wfd) < 0)
		return 10;
	/* 4 MiB, four times the pipe: a pump that stopped at the error would
	 * leave the writer blocked. */
	writer = writer_start(wfd, ERROR_BYTES, false);
	status = wait_for(writer, 10000);
	if (status != 0)
		return 11;
	if (!drops_wait(p, 7, 5000, failed_all, &lost, &drop))
		return 12;
	if (drop.error != -EFBIG || drop.capped != 0 || drop.first_ms <= 0)
		return 13;
	if (gp_logpump_close(p, 7) < 0)
		return 14;
	text = file_read(path, &len);
	if (len != FSIZE_LIMIT)
		return 15;
	for (size_t j = 0; j < len; j += 8) {
		uint64_t v;

		memcpy(&v, text + j, 8);
		if (v != j / 8)
			return 16;
	}
	free(text);
	gp_logpump_free(p);
	return 0;
}

static void test_write_error(void **state)
{
	char path[128];
	int status;
	pid_t pid;

	log_path(*state, 7, path, sizeof(path));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(error_child(path));
	status = wait_for(pid, 30000);
	assert_true(status != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- the reader goes away ------------------------------------------------ */

static void test_freed_pipe(void **state)
{
	struct gp_logpump *p;
	char path[128];
	pid_t killed, told;
	int a, b, status;

	log_path(*state, 1, path, sizeof(path));
	assert_int_equal(gp_logpump_new(NULL, &p), 0);
	assert_int_equal(gp_logpump_add(p, 1, path, &a), 0);
	log_path(*state, 2, path, sizeof(path));
	assert_int_equal(gp_logpump_add(p, 2, path, &b), 0);
	killed = writer_start(a, 0, false);
	told = writer_start(b, 0, true);
	nap_ms(20);
	gp_logpump_free(p);
	status = wait_for(killed, 5000);
	assert_true(status != -1);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGPIPE);
	status = wait_for(told, 5000);
	assert_true(status != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0); /* write failed with EPIPE */
}

/* ---- the free-space floor ------------------------------------------------- */

/* Under a floor no filesystem meets, output is dropped (never written,
 * never blocking its writer) and reported as dropped for the floor;
 * over a floor of one byte, it is written. */
static void test_floor(void **state)
{
	struct dir *d = *state;
	struct gp_logpump_drop drop[4];
	struct gp_logpump *p;
	char path[128];
	int wfd, status;

	log_path(d, 5, path, sizeof(path));
	assert_int_equal(gp_logpump_new(&(struct gp_logpump_options){ .floor_dir = d->path,
								     .free_min = UINT64_MAX },
					&p),
			 0);
	assert_int_equal(gp_logpump_add(p, 5, path, &wfd), 0);
	status = wait_for(writer_start(wfd, 4 * MIB, false), 10000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(gp_logpump_close(p, 5), 0);
	assert_int_equal(file_size(path), 0);
	assert_int_equal(gp_logpump_take_drops(p, drop, 4), 1);
	assert_int_equal(drop[0].failed, 4 * MIB);
	assert_int_equal(drop[0].error, -ENOSPC);
	assert_true(drop[0].floor);
	gp_logpump_free(p);

	log_path(d, 6, path, sizeof(path));
	assert_int_equal(gp_logpump_new(&(struct gp_logpump_options){ .floor_dir = d->path,
								     .free_min = 1 },
					&p),
			 0);
	assert_int_equal(gp_logpump_add(p, 6, path, &wfd), 0);
	status = wait_for(writer_start(wfd, MIB, false), 10000);
	assert_true(WIFEXITED(status));
	assert_int_equal(gp_logpump_close(p, 6), 0);
	assert_int_equal(file_size(path), MIB);
	assert_int_equal(gp_logpump_take_drops(p, drop, 4), 0);
	gp_logpump_free(p);
}

/* ---- continuing a log ---------------------------------------------------- */

/* Writes len bytes of counters from byte `from` of the stream into a new
 * run of task's log, and closes it. */
static void run_once(struct gp_logpump *p, const char *path, uint64_t from, uint64_t len)
{
	static uint64_t buf[(700 << 10) / 8];
	int wfd;

	assert_true(len <= sizeof(buf));
	for (uint64_t i = 0; i < len / 8; i++)
		buf[i] = from / 8 + i;
	assert_int_equal(gp_logpump_add(p, 3, path, &wfd), 0);
	assert_int_equal(write_all(wfd, buf, len), 0);
	close(wfd);
	assert_int_equal(gp_logpump_close(p, 3), 0);
}

static void test_continue(void **state)
{
	struct gp_logpump_drop drop[4];
	struct gp_logpump *p;
	struct gp_logtail t;
	struct stat st;
	char path[128], side[160];
	uint64_t start, ino;
	int fd;

	log_path(*state, 3, path, sizeof(path));
	snprintf(side, sizeof(side), "%s.offset", path);
	assert_int_equal(
		gp_logpump_new(&(struct gp_logpump_options){.max_bytes = MIB}, &p), 0);
	/* A log from before the cap: one file, no offset file. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
	assert_true(fd >= 0);
	close(fd);
	/* Three runs of the task (preempted, run again): 1.4 MiB in all, the
	 * first rotation in the second run, the second in the third. */
	run_once(p, path, 0, 400 << 10);
	assert_int_equal(gp_logpump_take_drops(p, drop, 4), 0);
	run_once(p, path, 400 << 10, 400 << 10);
	/* Rotated, nothing dropped yet. */
	assert_int_equal(gp_logpump_take_drops(p, drop, 4), 0);
	run_once(p, path, 800 << 10, 600 << 10);
	assert_int_equal(gp_logpump_take_drops(p, drop, 4), 1);
	assert_int_equal(drop[0].task, 3);
	assert_int_equal(drop[0].capped, 512 << 10);

	assert_int_equal(gp_logfile_offset_read(side, &start, &ino), 0);
	assert_int_equal(start, 1024 << 10);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(ino, st.st_ino);
	assert_int_equal(st.st_mode & 0777, 0600); /* made by the pump */
	assert_int_equal(file_size(path), (1400 - 1024) << 10);
	assert_int_equal(gp_logtail_read_from(path, 0, MIB, &t), 0);
	assert_int_equal(t.skipped, 512 << 10);
	assert_int_equal(t.size, 1400 << 10);
	assert_int_equal(t.len, (1400 - 512) << 10);
	assert_counters(t.text, t.len, t.skipped);
	free(t.text);
	gp_logpump_free(p);
}

/* Someone removes the log while its task writes (to free space): the
 * pump starts it again at the next rotation, where it had got to. */
static void test_removed(void **state)
{
	static uint64_t buf[(700 << 10) / 8];
	struct gp_logpump *p;
	struct gp_logtail t;
	char path[128], old[160];
	int wfd;

	log_path(*state, 4, path, sizeof(path));
	snprintf(old, sizeof(old), "%s.1", path);
	for (uint64_t i = 0; i < sizeof(buf) / 8; i++)
		buf[i] = i;
	assert_int_equal(
		gp_logpump_new(&(struct gp_logpump_options){.max_bytes = MIB}, &p), 0);
	assert_int_equal(gp_logpump_add(p, 4, path, &wfd), 0);
	assert_int_equal(write_all(wfd, buf, 300 << 10), 0);
	while (file_size(path) < (300 << 10))
		nap_ms(1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(write_all(wfd, (char *)buf + (300 << 10), 400 << 10), 0);
	close(wfd);
	assert_int_equal(gp_logpump_close(p, 4), 0);
	assert_int_equal(file_size(path), (700 - 512) << 10);
	assert_int_equal(access(old, F_OK), -1);
	assert_int_equal(gp_logtail_read_from(path, 0, MIB, &t), 0);
	assert_int_equal(t.skipped, 512 << 10);
	assert_int_equal(t.size, 700 << 10);
	assert_counters(t.text, t.len, t.skipped);
	free(t.text);
	gp_logpump_free(p);
}

/* ---- refusals ------------------------------------------------------------ */

/* A log through a FIFO outlives its pump: while a keeper holds a read
 * end, the writer's output waits for the next pump (a restarted server),
 * which takes the log over and finds all of it, in order. */
static void test_fifo_attach(void **state)
{
	struct gp_logpump *p;
	char path[128], fifo[160], *text;
	int wfd = -1, keep = -1;
	size_t len;

	log_path(*state, 7, path, sizeof(path));
	snprintf(fifo, sizeof(fifo), "%s.fifo", path);
	assert_int_equal(gp_logpump_new(NULL, &p), 0);
	assert_int_equal(gp_logpump_add_fifo(p, 7, path, fifo, &wfd, &keep), 0);
	assert_int_equal(write_all(wfd, "one\n", 4), 0);
	nap_ms(100);
	gp_logpump_free(p); /* the server goes away */
	/* No reader but the keeper's: the write waits in the FIFO, no EPIPE. */
	assert_int_equal(write_all(wfd, "two\n", 4), 0);
	assert_int_equal(gp_logpump_new(NULL, &p), 0);
	assert_int_equal(gp_logpump_attach(p, 7, path, fifo), 0);
	assert_int_equal(write_all(wfd, "three\n", 6), 0);
	close(wfd);
	close(keep);
	nap_ms(100);
	assert_int_equal(gp_logpump_close(p, 7), 0);
	text = file_read(path, &len);
	assert_non_null(text);
	assert_int_equal(len, 14);
	assert_memory_equal(text, "one\ntwo\nthree\n", 14);
	free(text);
	/* What is not a FIFO is not taken for one. */
	snprintf(fifo, sizeof(fifo), "%s", path); /* task 7's log: a regular file */
	log_path(*state, 8, path, sizeof(path));
	assert_int_equal(gp_logpump_attach(p, 8, path, fifo), -EINVAL);
	assert_int_equal(gp_logpump_attach(p, 8, path, "/nonexistent/fifo"), -ENOENT);
	gp_logpump_free(p);
}

static void test_refuses(void **state)
{
	struct gp_logpump *p = (struct gp_logpump *)(uintptr_t)1;
	struct gp_logpump_drop drop;
	char path[128], link[160];
	int wfd = -7;

	assert_int_equal(
		gp_logpump_new(&(struct gp_logpump_options){.max_bytes = MIB - 1}, &p),
		-EINVAL);
	assert_true(p == (struct gp_logpump *)(uintptr_t)1);
	assert_int_equal(gp_logpump_new(NULL, &p), 0);
	assert_int_equal(gp_logpump_max(p), GP_LOGPUMP_MAX_DEFAULT);
	log_path(*state, 1, path, sizeof(path));
	assert_int_equal(gp_logpump_add(p, 1, path, &wfd), 0);
	assert_int_equal(gp_logpump_add(p, 1, path, &wfd), -EEXIST);
	close(wfd);
	wfd = -7;
	snprintf(link, sizeof(link), "%s/task-2.log", ((struct dir *)*state)->path);
	assert_int_equal(symlink("/etc/passwd", link), 0);
	assert_int_equal(gp_logpump_add(p, 2, link, &wfd), -ELOOP);
	assert_int_equal(gp_logpump_add(p, 3, ((struct dir *)*state)->path, &wfd),
			 -EISDIR);
	assert_int_equal(gp_logpump_add(p, 4, "/nonexistent/task-4.log", &wfd), -ENOENT);
	assert_int_equal(wfd, -7);
	assert_int_equal(gp_logpump_close(p, 9), -ENOENT);
	assert_int_equal(gp_logpump_take_drops(p, &drop, 0), -EINVAL);
	assert_int_equal(gp_logpump_close(p, 1), 0);
	assert_null(gp_logpump_free(p));
	assert_null(gp_logpump_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gigabyte, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_fair, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_close_drains, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(test_close_bounded, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(test_write_error, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(test_freed_pipe, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_floor, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_continue, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_removed, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_fifo_attach, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_refuses, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
