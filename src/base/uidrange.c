/* uidrange.c — the registry of the servers' automatic uid ranges
 * (uidrange.h). Under the directory's lock, a claim lists the ranges
 * held (a range file another process keeps locked), removing the files
 * nobody holds, refuses an overlap or picks a free range, then makes its
 * own file and locks it; the lock, kept until gp_uidrange_free or the
 * process's end, is the claim. */
#include "base/uidrange.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fail.h"
#include "base/user.h"

#define HELD_MAX  64
#define OWNER_MAX 256
#define PREFIX	  "range-"

struct gp_uidrange {
	int dir_fd;
	int fd; /* locked: the claim */
	uint32_t base;
};

/* A range a running server holds. */
struct held {
	uint32_t base;
	char who[OWNER_MAX + 32]; /* "pid N, OWNER" */
};

static bool overlaps(uint32_t a, uint32_t b)
{
	return (a > b ? a - b : b - a) < GP_USER_AUTO_COUNT;
}

static int flock_retry(int fd, int how)
{
	int r;

	do
		r = flock(fd, how);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

/* The registry's directory, made when missing; refused unless it is a
 * directory of this user's that nobody else may write. */
static int dir_open(const char *dir, char *err, size_t len)
{
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return gp_fail(err, len, -errno, "cannot make %s: %s", dir, strerror(errno));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return gp_fail(err, len, -errno, "cannot open %s: %s", dir, strerror(errno));
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return gp_fail(err, len, -EPERM,
			       "%s is not a directory of uid %u's that only it may write; "
			       "remove it, and it is made again",
			       dir, (unsigned)geteuid());
	}
	return fd;
}

/* The base of a range file's name, or 0 for another name. */
static uint32_t name_base(const char *name)
{
	const char *digits = name + strlen(PREFIX);
	unsigned long long v;
	char *end;

	if (strncmp(name, PREFIX, strlen(PREFIX)) != 0 || *digits < '1' || *digits > '9')
		return 0;
	v = strtoull(digits, &end, 10);
	return *end || v > UINT32_MAX ? 0 : (uint32_t)v;
}

/* Who holds the range of an open, locked range file: its first line. */
static void who_read(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!buf[0])
		snprintf(buf, len, "a server that has not said who it is");
}

/* Looks at one range file: held (1, h filled), nobody's (removed, 0), or
 * gone meanwhile (0). */
static int entry_look(int dir_fd, const char *name, struct held *h)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), r;

	if (fd < 0)
		return 0;
	r = flock(fd, LOCK_SH | LOCK_NB);
	if (r == 0) {
		unlinkat(dir_fd, name, 0); /* nobody's: its server is gone */
		close(fd);
		return 0;
	}
	who_read(fd, h->who, sizeof(h->who));
	close(fd);
	return 1;
}

/* The ranges held, up to HELD_MAX, into h; how many, or a negative errno. */
static int held_list(int dir_fd, struct held *h)
{
	int n = 0, fd = dup(dir_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((e = readdir(d)) && n < HELD_MAX) {
		uint32_t base = name_base(e->d_name);

		if (base && entry_look(dir_fd, e->d_name, &h[n]) == 1)
			h[n++].base = base;
	}
	closedir(d);
	return n;
}

/* The first aligned range that overlaps none held; 0 when none is free. */
static uint32_t free_base(const struct held *h, int n)
{
	for (uint64_t b = GP_USER_AUTO_BASE; b <= GP_USER_AUTO_BASE_MAX; b += GP_USER_AUTO_COUNT) {
		int i = 0;

		while (i < n && !overlaps((uint32_t)b, h[i].base))
			i++;
		if (i == n)
			return (uint32_t)b;
	}
	return 0;
}

/* Refuses base when a held range overlaps it, saying whose it is and what
 * is free. */
static int overlap_refuse(uint32_t base, const struct held *h, int n, char *err, size_t len)
{
	uint32_t spare = free_base(h, n);
	char free_text[64] = "no aligned range is free";

	for (int i = 0; i < n; i++) {
		if (!overlaps(base, h[i].base))
			continue;
		if (spare)
			snprintf(free_text, sizeof(free_text), "the range at %u is free", spare);
		return gp_fail(err, len, -EADDRINUSE,
			       "uids %u to %u overlap the range at %u, which a running server "
			       "holds (%s); %s",
			       base, base + (GP_USER_AUTO_COUNT - 1), h[i].base, h[i].who,
			       free_text);
	}
	return 0;
}

/* Makes and locks the file of range base, saying who holds it. */
static int claim_make(int dir_fd, uint32_t base, const char *owner, int *ret_fd)
{
	char name[32], line[OWNER_MAX + 32];
	int fd, r, n;

	snprintf(name, sizeof(name), PREFIX "%u", base);
	fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = flock_retry(fd, LOCK_EX | LOCK_NB);
	n = snprintf(line, sizeof(line), "pid %d, %.*s\n", (int)getpid(), OWNER_MAX, owner);
	for (char *p = line; *p && p < line + n - 1; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	if (r == 0 && (ftruncate(fd, 0) < 0 || pwrite(fd, line, (size_t)n, 0) != n))
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* Under the registry's lock: the ranges held, then base's claim. */
static int claim_locked(struct gp_uidrange *c, bool any, const char *owner, char *err,
			size_t len)
{
	struct held *h = calloc(HELD_MAX, sizeof(*h));
	int n = h ? held_list(c->dir_fd, h) : -ENOMEM, r = n < 0 ? n : 0;

	if (r < 0)
		gp_fail(err, len, r, "cannot read the uid ranges' registry: %s", strerror(-r));
	if (r == 0 && any && !(c->base = free_base(h, n)))
		r = gp_fail(err, len, -EADDRINUSE,
			    "every aligned range of automatic uids is held by a running server");
	if (r == 0)
		r = overlap_refuse(c->base, h, n, err, len);
	if (r == 0 && (r = claim_make(c->dir_fd, c->base, owner, &c->fd)) < 0)
		gp_fail(err, len, r, "cannot claim the range at %u: %s", c->base, strerror(-r));
	free(h);
	return r;
}

int gp_uidrange_claim(const char *dir, uint32_t base, bool any, const char *owner,
		      struct gp_uidrange **ret, char *err, size_t err_len)
{
	struct gp_uidrange *c = calloc(1, sizeof(*c));
	int lock = -1, r = c ? 0 : -ENOMEM;

	if (c) {
		*c = (struct gp_uidrange){ .dir_fd = -1, .fd = -1, .base = base };
		r = c->dir_fd = dir_open(dir, err, err_len);
	}
	if (r >= 0) {
		lock = openat(c->dir_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		r = lock < 0 ? gp_fail(err, err_len, -errno, "cannot open %s/lock: %s", dir,
				       strerror(errno))
			     : flock_retry(lock, LOCK_EX);
	}
	if (r >= 0)
		r = claim_locked(c, any, owner ? owner : "", err, err_len);
	if (lock >= 0)
		close(lock); /* lets the registry's lock go */
	if (r < 0) {
		gp_uidrange_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

uint32_t gp_uidrange_base(const struct gp_uidrange *c)
{
	return c->base;
}

struct gp_uidrange *gp_uidrange_free(struct gp_uidrange *c)
{
	char name[32];

	if (!c)
		return NULL;
	if (c->fd >= 0) {
		/* While it is locked the file is ours: nobody else removes it. */
		snprintf(name, sizeof(name), PREFIX "%u", c->base);
		unlinkat(c->dir_fd, name, 0);
		close(c->fd);
	}
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	free(c);
	return NULL;
}
