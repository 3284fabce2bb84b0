/* logdir.c — room for new logs, and the logs' total cap (logdir.h).
 *
 * A trim reads the directory once: every file of a task's log (its
 * three names, base/logfile.h) adds its blocks on disk to the task's
 * entry, and the entry keeps the newest of their times. The entries of
 * ended tasks, oldest first, are then removed while the logs are over the
 * cap or the free space under the floor (each removal counted as giving
 * back its blocks). */
#include "server/logdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/logfile.h"
#include "base/parse.h"

struct gp_logdir {
	char *dir;
	uint64_t total_max, free_min;
	int64_t look_at;                /* the next look at the free space (mono ms) */
	bool below;                     /* under the floor at the last look */
	uint64_t free_bytes;            /* as then */
	int64_t retry_at;               /* after a log failed to open: no start till then */
	unsigned failures;              /* logs that failed to open, in a row */
	bool probed;                    /* the probe passed at the last look */
	char failed[GP_REASON_MAX];     /* how the last one failed */
};

/* One task's log, as a trim found it. */
struct entry {
	int64_t task;
	uint64_t bytes;  /* its files' blocks */
	int64_t newest;  /* its newest file's time (ns) */
};

int gp_logdir_new(const struct gp_logdir_options *o, struct gp_logdir **ret)
{
	struct gp_logdir *d;

	if (!o || !o->dir || !ret)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->dir = strdup(o->dir))) {
		free(d);
		return -ENOMEM;
	}
	d->total_max = o->total_max;
	d->free_min = o->free_min;
	*ret = d;
	return 0;
}

struct gp_logdir *gp_logdir_free(struct gp_logdir *d)
{
	if (d) {
		free(d->dir);
		free(d);
	}
	return NULL;
}

/* ---- room --------------------------------------------------------------- */

/* Can a file of one page be written in the directory? */
static bool probe(const struct gp_logdir *d)
{
	static const char page[4096];
	char path[PATH_MAX];
	bool ok;
	int fd;

	if (snprintf(path, sizeof(path), "%s/" GP_LOGDIR_PROBE, d->dir) >= (int)sizeof(path))
		return true; /* the start will say what is wrong */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	ok = fd >= 0 && write(fd, page, sizeof(page)) == (ssize_t)sizeof(page);
	if (fd >= 0)
		close(fd);
	unlink(path);
	return ok;
}

/* Looks at the free space and, after failures, tries the probe: at most
 * every GP_LOGDIR_LOOK_MS. */
static void look(struct gp_logdir *d, int64_t now)
{
	if (now < d->look_at)
		return;
	d->look_at = now + GP_LOGDIR_LOOK_MS;
	d->below = d->free_min && gp_logfile_dir_free(d->dir, &d->free_bytes) == 0 &&
		   d->free_bytes < d->free_min;
	d->probed = !d->failures || probe(d);
}

bool gp_logdir_room(struct gp_logdir *d, int64_t now, char *why, size_t len)
{
	char free_text[32], floor_text[32];

	if (now >= d->retry_at)
		look(d, now);
	if (now < d->retry_at || !d->probed) {
		snprintf(why, len, "waiting for room for its log: %s; it starts once the log can "
			 "be opened (free space where the server's --log-dir is)", d->failed);
		return false;
	}
	if (!d->below)
		return true;
	gp_size_text(d->free_bytes, free_text, sizeof(free_text));
	gp_size_text(d->free_min, floor_text, sizeof(floor_text));
	snprintf(why, len, "waiting for room for its log: %s free where the logs are (%s), under "
		 "the server's --log-free-min of %s; it starts once there is more (free space "
		 "there)", free_text, d->dir, floor_text);
	return false;
}

void gp_logdir_open_failed(struct gp_logdir *d, int64_t now, const char *why)
{
	int64_t hold = GP_LOGDIR_RETRY_MS;

	for (unsigned i = 0; i < d->failures && hold < GP_LOGDIR_RETRY_MAX_MS; i++)
		hold *= 2;
	d->failures++;
	d->retry_at = now + (hold < GP_LOGDIR_RETRY_MAX_MS ? hold : GP_LOGDIR_RETRY_MAX_MS);
	d->probed = false;
	d->look_at = 0; /* look again at once when the hold is over */
	snprintf(d->failed, sizeof(d->failed), "%.200s", why);
}

void gp_logdir_opened(struct gp_logdir *d)
{
	d->failures = 0;
	d->probed = true;
}

/* ---- the cap ------------------------------------------------------------ */

static int entry_cmp_task(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return (x->task > y->task) - (x->task < y->task);
}

/* Oldest first; then by id. */
static int entry_cmp_age(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->newest != y->newest)
		return (x->newest > y->newest) - (x->newest < y->newest);
	return entry_cmp_task(a, b);
}

/* Adds a file to the list (one entry per file; merged after). */
static int entry_add(struct entry **all, int *n, int *cap, const struct entry *e)
{
	if (*n == *cap) {
		int bigger = *cap ? 2 * *cap : 64;
		struct entry *more = realloc(*all, (size_t)bigger * sizeof(*more));

		if (!more)
			return -ENOMEM;
		*all = more;
		*cap = bigger;
	}
	(*all)[(*n)++] = *e;
	return 0;
}

/* One entry per task: its files' blocks added up, its newest time. */
static int entries_merge(struct entry *all, int n)
{
	int m = 0;

	qsort(all, (size_t)n, sizeof(*all), entry_cmp_task);
	for (int i = 0; i < n; i++) {
		if (m && all[m - 1].task == all[i].task) {
			all[m - 1].bytes += all[i].bytes;
			if (all[i].newest > all[m - 1].newest)
				all[m - 1].newest = all[i].newest;
		} else {
			all[m++] = all[i];
		}
	}
	return m;
}

/* The logs in the directory, one entry per task, and their total. */
static int entries_read(const struct gp_logdir *d, struct entry **ret, int *ret_n,
			uint64_t *ret_total)
{
	struct entry *all = NULL;
	int n = 0, cap = 0, r = 0;
	struct dirent *de;
	DIR *dir = opendir(d->dir);

	if (!dir)
		return -errno;
	*ret_total = 0;
	while (r == 0 && (de = readdir(dir))) {
		struct entry e = { .task = gp_logfile_task_of(de->d_name) };
		struct stat st;

		if (!e.task || fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		e.bytes = (uint64_t)st.st_blocks * 512;
		e.newest = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		*ret_total += e.bytes;
		r = entry_add(&all, &n, &cap, &e);
	}
	closedir(dir);
	if (r < 0) {
		free(all);
		return r;
	}
	*ret = all;
	*ret_n = entries_merge(all, n);
	return 0;
}

/* Removes task's log: its three files. */
static void log_remove(const struct gp_logdir *d, int64_t task)
{
	static const char *const suffixes[] = { GP_LOGFILE_OLD_SUFFIX, "",
						GP_LOGFILE_OFFSET_SUFFIX };
	char path[PATH_MAX], file[PATH_MAX + 16];

	if (gp_logfile_task_path(d->dir, task, path, sizeof(path)) < 0)
		return;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (gp_logfile_name(path, suffixes[i], file, sizeof(file)) == 0)
			unlink(file);
}

/* Why logs are removed now: over the cap, or under the floor (free). */
static bool over(const struct gp_logdir *d, uint64_t total, uint64_t free_bytes, bool know_free)
{
	return (d->total_max && total > d->total_max) ||
	       (d->free_min && know_free && free_bytes < d->free_min);
}

static void removal_why(const struct gp_logdir *d, uint64_t total, char *buf, size_t len)
{
	char limit[32];

	if (d->total_max && total > d->total_max) {
		gp_size_text(d->total_max, limit, sizeof(limit));
		snprintf(buf, len, "to keep the logs under the server's --log-total-max of %s: "
			 "the oldest logs of ended tasks go first", limit);
	} else {
		gp_size_text(d->free_min, limit, sizeof(limit));
		snprintf(buf, len, "to keep %s free where the logs are (the server's "
			 "--log-free-min): the oldest logs of ended tasks go first", limit);
	}
}

int gp_logdir_trim(struct gp_logdir *d, gp_logdir_live_fn *live, void *ctx,
		   struct gp_log_removal **ret, int *ret_n)
{
	struct entry *all = NULL;
	struct gp_log_removal *out = NULL;
	uint64_t total = 0, free_bytes = 0;
	bool know_free = d->free_min && gp_logfile_dir_free(d->dir, &free_bytes) == 0;
	int n = 0, m = 0, r;

	*ret = NULL;
	*ret_n = 0;
	if (!d->total_max && !over(d, 0, free_bytes, know_free))
		return 0; /* no cap, and room above the floor: no need to look */
	r = entries_read(d, &all, &n, &total);
	if (r < 0 || !over(d, total, free_bytes, know_free)) {
		free(all);
		return r;
	}
	qsort(all, (size_t)n, sizeof(*all), entry_cmp_age);
	out = calloc((size_t)n, sizeof(*out));
	for (int i = 0; out && i < n && over(d, total, free_bytes, know_free); i++) {
		if (live(ctx, all[i].task))
			continue;
		out[m] = (struct gp_log_removal){ .task = all[i].task, .removed = gp_unix_ms(),
						  .bytes = all[i].bytes };
		removal_why(d, total, out[m].why, sizeof(out[m].why));
		log_remove(d, all[i].task);
		total -= all[i].bytes;
		free_bytes += all[i].bytes;
		m++;
	}
	free(all);
	if (!out)
		return -ENOMEM;
	if (!m)
		free(out);
	else
		*ret = out;
	*ret_n = m;
	return 0;
}
