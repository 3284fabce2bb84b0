/* cgroup.c — a cgroup v2 per task (see cgroup.h).
 *
 * Everything goes through the cgroup filesystem's files: mkdir/rmdir for
 * a task's cgroup, "0" written to its cgroup.procs by the child itself,
 * "1" to cgroup.kill, "populated" read from cgroup.events. */
#include "agent/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LEFTOVER_WAIT_MS 2000 /* for a killed leftover to empty */

struct gp_cgroups {
	char path[PATH_MAX];	 /* the subtree, absolute */
	char relative[PATH_MAX]; /* as /proc/PID/cgroup names it */
};

/* ---- small file helpers -------------------------------------------------- */

/* Reads at most len-1 bytes of path into buf (NUL-terminated). */
static ssize_t read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int task_file(const struct gp_cgroups *c, int64_t task, const char *name, char *buf,
		     size_t len)
{
	int n = snprintf(buf, len, "%s/task-%" PRId64 "%s%s", c->path, task, name[0] ? "/" : "",
			 name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- finding the hierarchy ------------------------------------------------ */

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* The mount point of the cgroup2 filesystem (its root mounted). */
static int mount_find(char *buf, size_t len)
{
	FILE *in = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int r = -ENOENT;

	if (!in)
		return -errno;
	while (r < 0 && fgets(line, sizeof(line), in)) {
		char root[PATH_MAX], point[PATH_MAX], *dash = strstr(line, " - ");
		char fstype[64];

		if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    strcmp(root, "/") != 0)
			continue;
		unescape(point);
		if (strlen(point) < len) {
			snprintf(buf, len, "%s", point);
			r = 0;
		}
	}
	fclose(in);
	return r;
}

/* This process's cgroup in the v2 hierarchy ("0::/path"). */
static int own_cgroup(char *buf, size_t len)
{
	char text[8192], *line, *save = NULL;
	ssize_t n = read_text("/proc/self/cgroup", text, sizeof(text));

	if (n < 0)
		return (int)n;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "0::", 3) == 0 && strlen(line + 3) < len) {
			snprintf(buf, len, "%s", line + 3);
			return 0;
		}
	return -ENOENT;
}

/* Fills c->path and c->relative for `where` (NULL/"auto": the layout of
 * cgroup.h). */
static int paths_resolve(struct gp_cgroups *c, const char *where, const char *tag, char *err,
			 size_t err_len)
{
	char mount[PATH_MAX], own[PATH_MAX];
	int n;

	if (mount_find(mount, sizeof(mount)) < 0) {
		snprintf(err, err_len, "no cgroup v2 filesystem is mounted");
		return -ENOENT;
	}
	if (where && *where && strcmp(where, "auto") != 0) {
		size_t m = strlen(mount);

		if (where[0] != '/' || strncmp(where, mount, m) != 0 ||
		    (where[m] != '/' && where[m] != '\0')) {
			snprintf(err, err_len, "%s is not under the cgroup v2 mount %s", where,
				 mount);
			return -EINVAL;
		}
		snprintf(c->path, sizeof(c->path), "%s", where);
		snprintf(c->relative, sizeof(c->relative), "%s", where[m] ? where + m : "/");
		return 0;
	}
	if (own_cgroup(own, sizeof(own)) < 0) {
		snprintf(err, err_len, "this process is in no cgroup v2 (/proc/self/cgroup)");
		return -ENOENT;
	}
	n = snprintf(c->relative, sizeof(c->relative), "%s/gpupool-%s",
		     strcmp(own, "/") == 0 ? "" : own, tag);
	if (n < 0 || (size_t)n >= sizeof(c->relative) ||
	    (size_t)snprintf(c->path, sizeof(c->path), "%s%s", mount, c->relative) >=
		    sizeof(c->path)) {
		snprintf(err, err_len, "the cgroup path is too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

/* ---- one task's cgroup ------------------------------------------------------ */

int gp_cgroups_kill(struct gp_cgroups *c, int64_t task)
{
	char path[PATH_MAX];
	int r = task_file(c, task, "cgroup.kill", path, sizeof(path));

	return r < 0 ? r : write_text(path, "1");
}

int gp_cgroups_populated(struct gp_cgroups *c, int64_t task)
{
	char path[PATH_MAX], text[512], *p;
	int r = task_file(c, task, "cgroup.events", path, sizeof(path));
	ssize_t n = r < 0 ? r : read_text(path, text, sizeof(text));

	if (n == -ENOENT)
		return 0;
	if (n < 0)
		return (int)n;
	p = strstr(text, "populated ");
	return p && p[10] == '1' ? 1 : 0;
}

int gp_cgroups_remove(struct gp_cgroups *c, int64_t task)
{
	char path[PATH_MAX];
	int r = task_file(c, task, "", path, sizeof(path));

	if (r < 0)
		return r;
	return rmdir(path) < 0 && errno != ENOENT ? -errno : 0;
}

int gp_cgroups_clear(struct gp_cgroups *c, int64_t task)
{
	gp_cgroups_kill(c, task);
	for (int waited = 0; gp_cgroups_populated(c, task) > 0 && waited < LEFTOVER_WAIT_MS;
	     waited += 10)
		sleep_ms(10);
	return gp_cgroups_remove(c, task);
}

int gp_cgroups_make(struct gp_cgroups *c, int64_t task, int *ret_procs_fd)
{
	char dir[PATH_MAX], procs[PATH_MAX];
	int r = task_file(c, task, "", dir, sizeof(dir)), fd;

	if (r == 0)
		r = task_file(c, task, "cgroup.procs", procs, sizeof(procs));
	if (r < 0)
		return r;
	if (access(dir, F_OK) == 0 && (r = gp_cgroups_clear(c, task)) < 0)
		return r;
	if (mkdir(dir, 0755) < 0)
		return -errno;
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		rmdir(dir);
		return r;
	}
	*ret_procs_fd = fd;
	return 0;
}

int gp_cgroups_signal(struct gp_cgroups *c, int64_t task, int sig)
{
	char path[PATH_MAX], line[32];
	int r = task_file(c, task, "cgroup.procs", path, sizeof(path)), n = 0;
	FILE *in;

	if (r < 0)
		return r;
	in = fopen(path, "re");
	if (!in)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), in)) {
		long pid = strtol(line, NULL, 10);

		if (pid > 0 && kill((pid_t)pid, sig) == 0)
			n++;
	}
	fclose(in);
	return n;
}

int gp_cgroups_task_of(const struct gp_cgroups *c, pid_t pid, int64_t *ret_task)
{
	char path[64], text[4096], want[PATH_MAX + 16], *line, *save = NULL;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	n = read_text(path, text, sizeof(text));
	if (n < 0)
		return (int)n;
	snprintf(want, sizeof(want), "0::%s/task-", strcmp(c->relative, "/") ? c->relative : "");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t w = strlen(want);
		char *end;
		long long id;

		if (strncmp(line, want, w) != 0 || line[w] < '1' || line[w] > '9')
			continue;
		id = strtoll(line + w, &end, 10);
		if (*end != '\0' || id <= 0)
			return -ENOENT; /* a cgroup below a task's: not ours to name */
		*ret_task = id;
		return 0;
	}
	return -ENOENT;
}

/* ---- the subtree ------------------------------------------------------------ */

/* The id of a task cgroup's directory entry, or 0. */
static int64_t entry_task(const struct dirent *e)
{
	char *end;
	long long id;

	if (strncmp(e->d_name, "task-", 5) != 0)
		return 0;
	id = strtoll(e->d_name + 5, &end, 10);
	return *end || id <= 0 ? 0 : id;
}

int gp_cgroups_tasks(const struct gp_cgroups *c, int64_t *out, int max)
{
	DIR *d = opendir(c->path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		int64_t id = entry_task(e);

		if (!id)
			continue;
		if (n < max)
			out[n] = id;
		n++;
	}
	closedir(d);
	return n;
}

int gp_cgroups_open(const char *where, const char *tag, struct gp_cgroups **ret,
		    int *ret_left, char *err, size_t err_len)
{
	struct gp_cgroups *c = calloc(1, sizeof(*c));
	char kill_file[PATH_MAX + 16];
	int r, left;

	if (!c)
		return -ENOMEM;
	r = paths_resolve(c, where, tag, err, err_len);
	if (r == 0 && mkdir(c->path, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(err, err_len, "cannot make the cgroup %s: %s", c->path, strerror(-r));
	}
	snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", c->path);
	if (r == 0 && access(kill_file, W_OK) != 0) {
		r = errno == ENOENT ? -ENOTSUP : -errno;
		snprintf(err, err_len, "%s: %s", kill_file,
			 r == -ENOTSUP ? "missing (cgroup.kill needs Linux 5.14)" : strerror(-r));
	}
	if (r < 0) {
		free(c);
		return r;
	}
	left = gp_cgroups_tasks(c, NULL, 0);
	if (ret_left)
		*ret_left = left > 0 ? left : 0;
	*ret = c;
	return 0;
}

/* Removes the empty task cgroups (those of tasks that ended). */
static void empties_remove(struct gp_cgroups *c)
{
	DIR *d = opendir(c->path);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX];

		if (entry_task(e) &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", c->path, e->d_name) <
			    sizeof(path))
			rmdir(path); /* EBUSY while a process is in it */
	}
	closedir(d);
}

struct gp_cgroups *gp_cgroups_free(struct gp_cgroups *c)
{
	if (c) {
		empties_remove(c);
		rmdir(c->path); /* only when no task's cgroup is left in it */
	}
	free(c);
	return NULL;
}

const char *gp_cgroups_path(const struct gp_cgroups *c)
{
	return c->path;
}
