/* cgroup.c — a cgroup v2 per task, and its limits (see cgroup.h).
 *
 * Everything goes through the cgroup filesystems' files: mkdir/rmdir for
 * a task's cgroup, "0" written to its cgroup.procs by the child itself,
 * "1" to cgroup.kill, "populated" read from cgroup.events; "+memory" to
 * a cgroup.subtree_control, a limit to memory.max or pids.max (v1:
 * memory.limit_in_bytes), "oom_kill" read from memory.events (v1:
 * memory.oom_control). */
#include "agent/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LEFTOVER_WAIT_MS 2000 /* for a killed leftover to empty */
#define SUPERVISOR	 "supervisor" /* systemd's DelegateSubgroup= name */

/* The controllers of the limits. */
enum ctl { CTL_MEMORY, CTL_PIDS, CTLS };
static const char *const ctl_name[CTLS] = { "memory", "pids" };

struct gp_cgroups {
	char path[PATH_MAX];	 /* the subtree, absolute */
	char relative[PATH_MAX]; /* as /proc/PID/cgroup names it */
	uint64_t limit[CTLS];	 /* 0: none */
	bool v2[CTLS];		 /* applied in the v2 subtree */
	char v1[CTLS][PATH_MAX]; /* else the v1 subtree where it is; "" none */
	char limits_text[512];
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

/* Is word one of list's words (separated by commas, spaces or lines)? */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || strchr(", \n", p[-1])) && (p[n] == '\0' || strchr(", \n", p[n])))
			return true;
	return false;
}

/* The mount point of a filesystem of type fstype whose root is mounted,
 * and, with `option`, that has it among its super options (a cgroup v1
 * hierarchy's controller), from /proc/self/mountinfo. */
static int mountinfo_find(const char *fstype, const char *option, char *buf, size_t len)
{
	FILE *in = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int r = -ENOENT;

	if (!in)
		return -errno;
	while (r < 0 && fgets(line, sizeof(line), in)) {
		char root[PATH_MAX], point[PATH_MAX], type[64], opts[512] = "";
		char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s %*s %511s", type, opts) < 1 ||
		    strcmp(type, fstype) != 0 || (option && !has_word(opts, option)))
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

/* The mount point of the cgroup2 filesystem (its root mounted). */
static int mount_find(char *buf, size_t len)
{
	return mountinfo_find("cgroup2", NULL, buf, len);
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

/* A cgroup named "supervisor" stands for its parent (cgroup.h). */
static void supervisor_up(char *own)
{
	char *slash = strrchr(own, '/');

	if (slash && strcmp(slash + 1, SUPERVISOR) == 0)
		*(slash == own ? slash + 1 : slash) = '\0';
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
	supervisor_up(own);
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

/* ---- limits ------------------------------------------------------------------ */

static int file_in(const char *dir, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Is controller name among the v2 cgroup dir's? */
static bool v2_has(const char *dir, const char *name)
{
	char path[PATH_MAX], text[512];

	return file_in(dir, "cgroup.controllers", path, sizeof(path)) == 0 &&
	       read_text(path, text, sizeof(text)) >= 0 && has_word(text, name);
}

static int subtree_enable(const char *dir, const char *name)
{
	char path[PATH_MAX], plus[32];
	int r = file_in(dir, "cgroup.subtree_control", path, sizeof(path));

	snprintf(plus, sizeof(plus), "+%s", name);
	return r < 0 ? r : write_text(path, plus);
}

/* Hands controller name down to the subtree's tasks: from its parent
 * first when the subtree does not have it (which fails while the parent
 * holds a process: the server's own cgroup). */
static bool v2_enable(const struct gp_cgroups *c, const char *name)
{
	char parent[PATH_MAX], *slash;

	if (!v2_has(c->path, name)) {
		snprintf(parent, sizeof(parent), "%s", c->path);
		slash = strrchr(parent, '/');
		if (!slash || slash == parent)
			return false;
		*slash = '\0';
		if (!v2_has(parent, name) || subtree_enable(parent, name) < 0)
			return false;
	}
	return subtree_enable(c->path, name) == 0;
}

/* The mount point of the cgroup v1 hierarchy that has controller name. */
static int v1_mount(const char *name, char *buf, size_t len)
{
	return mountinfo_find("cgroup", name, buf, len);
}

/* This process's cgroup in the v1 hierarchy of controller name
 * ("N:memory:/path" in /proc/self/cgroup). */
static int v1_own(const char *name, char *buf, size_t len)
{
	char text[8192], *line, *save = NULL;
	ssize_t n = read_text("/proc/self/cgroup", text, sizeof(text));

	if (n < 0)
		return (int)n;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *list = strchr(line, ':'), *path = list ? strchr(list + 1, ':') : NULL;

		if (!path)
			continue;
		*path = '\0';
		if (has_word(list + 1, name) && strlen(path + 1) < len) {
			snprintf(buf, len, "%s", path + 1);
			return 0;
		}
	}
	return -ENOENT;
}

/* The v1 subtree of controller k, beside the v2 one under the server's
 * own cgroup there (made); false when no v1 hierarchy has k. */
static bool v1_subtree(struct gp_cgroups *c, enum ctl k)
{
	char mount[PATH_MAX], own[PATH_MAX], *dir = c->v1[k];
	const char *name = strrchr(c->path, '/') + 1;

	if (v1_mount(ctl_name[k], mount, sizeof(mount)) < 0 ||
	    v1_own(ctl_name[k], own, sizeof(own)) < 0)
		return false;
	supervisor_up(own);
	if ((size_t)snprintf(dir, PATH_MAX, "%s%s/%s", mount, strcmp(own, "/") ? own : "",
			     name) >= PATH_MAX ||
	    (mkdir(dir, 0755) < 0 && errno != EEXIST)) {
		dir[0] = '\0';
		return false;
	}
	return true;
}

/* "512 MiB" or "200": a limit as the line shows it. */
static void limit_show(enum ctl k, uint64_t v, char *buf, size_t len)
{
	if (k == CTL_MEMORY)
		snprintf(buf, len, "memory.max %llu MiB", (unsigned long long)(v >> 20));
	else
		snprintf(buf, len, "pids.max %llu", (unsigned long long)v);
}

static void limits_describe(struct gp_cgroups *c)
{
	size_t used = 0, len = sizeof(c->limits_text);
	char *t = c->limits_text;

	t[0] = '\0';
	for (int k = 0; k < CTLS && used < len; k++) {
		char what[64];

		limit_show((enum ctl)k, c->limit[k], what, sizeof(what));
		if (!c->limit[k])
			used += (size_t)snprintf(t + used, len - used, "%s%s not limited",
						 used ? "; " : "", ctl_name[k]);
		else if (c->v2[k] || c->v1[k][0])
			used += (size_t)snprintf(t + used, len - used, "%s%s per task (cgroup %s)",
						 used ? "; " : "", what, c->v2[k] ? "v2" : "v1");
		else
			used += (size_t)snprintf(t + used, len - used,
						 "%sno %s: neither cgroup v2 under %s nor a v1 "
						 "hierarchy hands the %s controller down",
						 used ? "; " : "", what, c->path, ctl_name[k]);
	}
}

void gp_cgroups_limit(struct gp_cgroups *c, const struct gp_cgroup_limits *limits)
{
	c->limit[CTL_MEMORY] = limits->memory_max;
	c->limit[CTL_PIDS] = limits->pids_max;
	for (int k = 0; k < CTLS; k++) {
		c->v2[k] = c->limit[k] && v2_enable(c, ctl_name[k]);
		c->v1[k][0] = '\0';
		if (c->limit[k] && !c->v2[k])
			v1_subtree(c, (enum ctl)k);
	}
	limits_describe(c);
}

const char *gp_cgroups_limits_text(const struct gp_cgroups *c)
{
	return c->limits_text;
}

static int value_write(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX];
	int r = file_in(dir, file, path, sizeof(path));

	return r < 0 ? r : write_text(path, value);
}

/* Controller k's limit, in a task's cgroup dir of version 2 or 1. */
static int limit_write(const struct gp_cgroups *c, enum ctl k, const char *dir, bool v2)
{
	char v[32];
	int r;

	snprintf(v, sizeof(v), "%llu", (unsigned long long)c->limit[k]);
	if (k == CTL_PIDS)
		return value_write(dir, "pids.max", v);
	r = value_write(dir, v2 ? "memory.max" : "memory.limit_in_bytes", v);
	/* No swap past it (where swap is accounted), and, on v2, the whole
	 * task killed with the process the kernel kills for memory. */
	if (r == 0 && v2) {
		value_write(dir, "memory.swap.max", "0");
		value_write(dir, "memory.oom.group", "1");
	} else if (r == 0) {
		value_write(dir, "memory.memsw.limit_in_bytes", v);
	}
	return r;
}

/* A task's v1 cgroup of controller k, "" when k is not limited in v1. */
static int v1_task_dir(const struct gp_cgroups *c, enum ctl k, int64_t task, char *buf,
		       size_t len)
{
	int n = snprintf(buf, len, "%s/task-%" PRId64, c->v1[k], task);

	if (!c->v1[k][0])
		buf[0] = '\0';
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Makes task's v1 cgroup of controller k with its limit; its procs file
 * opened into *ret_fd. */
static int v1_make(const struct gp_cgroups *c, enum ctl k, int64_t task, int *ret_fd)
{
	char dir[PATH_MAX], procs[PATH_MAX];
	int r = v1_task_dir(c, k, task, dir, sizeof(dir));

	if (r == 0)
		r = file_in(dir, "cgroup.procs", procs, sizeof(procs));
	if (r < 0)
		return r;
	rmdir(dir); /* a leftover, emptied with the task's v2 cgroup */
	if (mkdir(dir, 0755) < 0)
		return -errno;
	r = limit_write(c, k, dir, false);
	if (r == 0 && (*ret_fd = open(procs, O_WRONLY | O_CLOEXEC)) < 0)
		r = -errno;
	if (r < 0)
		rmdir(dir);
	return r;
}

static void v1_remove(const struct gp_cgroups *c, int64_t task)
{
	char dir[PATH_MAX];

	for (int k = 0; k < CTLS; k++)
		if (v1_task_dir(c, (enum ctl)k, task, dir, sizeof(dir)) == 0 && dir[0])
			rmdir(dir);
}

/* The "oom_kill N" of a memory.events or memory.oom_control file. */
static int oom_kill_read(const char *path)
{
	char text[1024], *p;
	ssize_t n = read_text(path, text, sizeof(text));

	if (n < 0)
		return n == -ENOENT ? 0 : (int)n;
	p = strstr(text, "oom_kill ");
	return p ? atoi(p + 9) : 0;
}

int gp_cgroups_oom_kills(const struct gp_cgroups *c, int64_t task)
{
	char path[PATH_MAX], dir[PATH_MAX];
	int r;

	if (c->v2[CTL_MEMORY]) {
		r = task_file(c, task, "memory.events", path, sizeof(path));
		return r < 0 ? r : oom_kill_read(path);
	}
	r = v1_task_dir(c, CTL_MEMORY, task, dir, sizeof(dir));
	if (r < 0 || !dir[0])
		return r;
	r = file_in(dir, "memory.oom_control", path, sizeof(path));
	return r < 0 ? r : oom_kill_read(path);
}

void gp_cgroup_join_close(struct gp_cgroup_join *j)
{
	for (int i = 0; i < j->n; i++)
		if (j->fd[i] >= 0)
			close(j->fd[i]);
	j->n = 0;
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
	if (rmdir(path) < 0 && errno != ENOENT)
		return -errno;
	v1_remove(c, task);
	return 0;
}

int gp_cgroups_clear(struct gp_cgroups *c, int64_t task)
{
	gp_cgroups_kill(c, task);
	for (int waited = 0; gp_cgroups_populated(c, task) > 0 && waited < LEFTOVER_WAIT_MS;
	     waited += 10)
		sleep_ms(10);
	return gp_cgroups_remove(c, task);
}

/* The limits of task's new v2 cgroup dir, and its v1 cgroups, their
 * procs files into j. */
static int limits_make(struct gp_cgroups *c, int64_t task, const char *dir,
		       struct gp_cgroup_join *j)
{
	int r = 0;

	for (int k = 0; k < CTLS && r == 0; k++) {
		if (c->v2[k])
			r = limit_write(c, (enum ctl)k, dir, true);
		else if (c->v1[k][0] && (r = v1_make(c, (enum ctl)k, task, &j->fd[j->n])) == 0)
			j->n++;
	}
	return r;
}

int gp_cgroups_make(struct gp_cgroups *c, int64_t task, struct gp_cgroup_join *ret)
{
	struct gp_cgroup_join j = { .n = 0 };
	char dir[PATH_MAX], procs[PATH_MAX];
	int r = task_file(c, task, "", dir, sizeof(dir));

	if (r == 0)
		r = task_file(c, task, "cgroup.procs", procs, sizeof(procs));
	if (r < 0)
		return r;
	if (access(dir, F_OK) == 0 && (r = gp_cgroups_clear(c, task)) < 0)
		return r;
	if (mkdir(dir, 0755) < 0)
		return -errno;
	j.fd[j.n] = open(procs, O_WRONLY | O_CLOEXEC);
	r = j.fd[j.n] < 0 ? -errno : 0;
	if (r == 0) {
		j.n++;
		r = limits_make(c, task, dir, &j);
	}
	if (r < 0) {
		gp_cgroup_join_close(&j);
		rmdir(dir);
		v1_remove(c, task);
		return r;
	}
	*ret = j;
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

/* Removes the empty task cgroups of a subtree (those of tasks that
 * ended). */
static void empties_remove(const char *subtree)
{
	DIR *d = opendir(subtree);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX];

		if (entry_task(e) &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", subtree, e->d_name) <
			    sizeof(path))
			rmdir(path); /* EBUSY while a process is in it */
	}
	closedir(d);
}

struct gp_cgroups *gp_cgroups_free(struct gp_cgroups *c)
{
	if (c) {
		empties_remove(c->path);
		rmdir(c->path); /* only when no task's cgroup is left in it */
		for (int k = 0; k < CTLS; k++) {
			if (!c->v1[k][0])
				continue;
			empties_remove(c->v1[k]);
			rmdir(c->v1[k]);
		}
	}
	free(c);
	return NULL;
}

const char *gp_cgroups_path(const struct gp_cgroups *c)
{
	return c->path;
}
