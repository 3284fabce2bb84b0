/* shfile.c — shared, versioned, mapped files and their pid slot tables
 * (see shfile.h for the invariants every user keeps). */
#include "base/shfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/proc.h"

#ifdef GP_SHFILE_TEST_HOOKS
/* Tests stop a process here, in the middle of changing a slot, and kill
 * it: GPUPOOL_SHFILE_TEST_STOP names the point ("claim", "reclaim"). Only
 * in tests' builds of this file (tests/simdev/sim-slots.c), never in the
 * libraries. */
static void test_stop(const char *point)
{
	const char *want = getenv("GPUPOOL_SHFILE_TEST_STOP");

	if (want && strcmp(want, point) == 0)
		raise(SIGSTOP);
}
#else
#define test_stop(point) ((void)0)
#endif

/* ---- the file -------------------------------------------------------- */

bool gp_shfile_is(const void *map, const struct gp_shfile_layout *l)
{
	const struct gp_shfile_head *h = map;

	return atomic_load_explicit(&h->magic, memory_order_acquire) == l->magic &&
	       h->version == l->version && h->size == l->size;
}

void gp_shfile_unmap(void *map, const struct gp_shfile_layout *l)
{
	if (map)
		munmap(map, l->size);
}

int gp_shfile_make(const char *path, const struct gp_shfile_layout *l, void **ret_map)
{
	struct gp_shfile_head *h;
	void *map;
	int fd, r;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* fchmod, not the umask: the mode is exactly the layout's. */
	if (fchmod(fd, l->mode) < 0 || ftruncate(fd, l->size) < 0) {
		r = -errno;
		goto unlink;
	}
	map = mmap(NULL, l->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto unlink;
	}
	r = l->init ? l->init(map, l->arg) : 0;
	if (r < 0)
		goto unmap;
	h = map;
	h->version = l->version;
	h->size = l->size;
	atomic_store_explicit(&h->magic, l->magic, memory_order_release);
	close(fd);
	*ret_map = map;
	return 0;
unmap:
	munmap(map, l->size);
unlink:
	unlink(path);
	close(fd);
	return r;
}

/* Waits (bounded) for the maker of fd to finish it. -EIO: still half
 * made; -EPROTO: of another layout. */
static int head_wait(int fd, const struct gp_shfile_layout *l)
{
	uint64_t deadline = gp_monotonic_ns() + GP_SHFILE_READY_WAIT_NS;
	struct {
		uint64_t magic;
		uint32_t version, size;
	} h;

	for (;;) {
		ssize_t n = pread(fd, &h, sizeof(h), 0);

		if (n < 0)
			return -errno;
		if (n == (ssize_t)sizeof(h) && h.magic != 0)
			return h.magic == l->magic && h.version == l->version && h.size == l->size
				       ? 0
				       : -EPROTO;
		if (gp_monotonic_ns() > deadline)
			return -EIO;
		usleep(1000);
	}
}

/* Maps fd, a complete file of the layout, when it is the one wanted. */
static int map_checked(int fd, const struct gp_shfile_layout *l, void **ret_map)
{
	struct stat st;
	void *map;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < l->size)
		return -EPROTO;
	map = mmap(NULL, l->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	if (!gp_shfile_is(map, l) || (l->matches && !l->matches(map, l->arg))) {
		munmap(map, l->size);
		return -EPROTO;
	}
	*ret_map = map;
	return 0;
}

/* Opens an existing file; *ret_st says which file it was. */
static int open_existing(const char *path, const struct gp_shfile_layout *l, void **ret_map,
			 struct stat *ret_st)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = fstat(fd, ret_st) < 0 ? -errno : head_wait(fd, l);
	if (r == 0)
		r = map_checked(fd, l, ret_map);
	close(fd);
	return r;
}

/* Removes a bad file, unless someone already put another in its place. */
static void replace(const char *path, const struct stat *bad)
{
	struct stat st;

	if (stat(path, &st) == 0 && st.st_dev == bad->st_dev && st.st_ino == bad->st_ino)
		unlink(path);
}

int gp_shfile_open(const char *path, const struct gp_shfile_layout *l, int flags,
		   void **ret_map)
{
	bool create = flags & GP_SHFILE_CREATE, replaced = false;
	int r = -EAGAIN;

	for (int attempt = 0; attempt < 4; attempt++) {
		struct stat st;

		if (create) {
			r = gp_shfile_make(path, l, ret_map);
			if (r != -EEXIST)
				return r;
		}
		r = open_existing(path, l, ret_map, &st);
		if (r == 0 || (r == -ENOENT && !create))
			return r;
		if (r == -ENOENT)
			continue;               /* removed meanwhile: make it */
		if ((r != -EIO && r != -EPROTO) || !create || replaced)
			return r;
		replace(path, &st);
		replaced = true;
	}
	return r;
}

/* ---- the pid slot table ---------------------------------------------- */

static pid_t owner_pid(uint64_t owner)
{
	return (pid_t)(uint32_t)owner;
}

pid_t gp_shfile_slot_pid(const struct gp_shfile_slot *s)
{
	return owner_pid(atomic_load(&s->owner));
}

bool gp_shfile_slot_is_alive(const struct gp_shfile_slot *s)
{
	pid_t pid = gp_shfile_slot_pid(s);

	return pid > 0 && gp_proc_alive(pid, atomic_load(&s->start_time));
}

int gp_shfile_slot_find(const struct gp_shfile_slots *t, pid_t pid, uint64_t start)
{
	for (int i = 0; i < t->count; i++) {
		struct gp_shfile_slot *s = gp_shfile_slot_at(t, i);

		if (gp_shfile_slot_pid(s) == pid && atomic_load(&s->start_time) == start)
			return i;
	}
	return -1;
}

/* Writes the fields of a slot whose owner word is `owner` (free) and
 * publishes it for (pid, start); false when it changed hands meanwhile. */
static bool publish(struct gp_shfile_slot *s, uint64_t owner, pid_t pid, uint64_t start,
		    void (*fill)(void *slot, void *arg), void *arg)
{
	if (fill)
		fill(s, arg);
	atomic_store(&s->start_time, start);
	test_stop("claim");
	return atomic_compare_exchange_strong(&s->owner, &owner,
					      ((owner >> 32) + 1) << 32 | (uint32_t)pid);
}

int gp_shfile_slot_claim(const struct gp_shfile_slots *t, pid_t pid, uint64_t start,
			 void (*fill)(void *slot, void *arg), void *arg)
{
	for (int i = 0; i < t->count; i++) {
		struct gp_shfile_slot *s = gp_shfile_slot_at(t, i);
		uint64_t owner = atomic_load(&s->owner);

		if (owner_pid(owner) == 0 && publish(s, owner, pid, start, fill, arg))
			return i;
	}
	return -EUSERS;
}

int gp_shfile_slot_claim_at(const struct gp_shfile_slots *t, int i, pid_t pid, uint64_t start,
			    void (*fill)(void *slot, void *arg), void *arg)
{
	struct gp_shfile_slot *s = gp_shfile_slot_at(t, i);
	uint64_t owner = atomic_load(&s->owner);

	if (owner_pid(owner) == pid && atomic_load(&s->start_time) == start) {
		if (fill)
			fill(s, arg);           /* ours already: start afresh */
		return i;
	}
	if (owner_pid(owner) != 0) {
		if (gp_proc_alive(owner_pid(owner), atomic_load(&s->start_time)))
			return -EBUSY;
		atomic_compare_exchange_strong(&s->owner, &owner, owner >> 32 << 32);
		owner = atomic_load(&s->owner);
		if (owner_pid(owner) != 0)
			return -EBUSY;
	}
	return publish(s, owner, pid, start, fill, arg) ? i : -EBUSY;
}

int gp_shfile_slot_reclaim(const struct gp_shfile_slots *t, pid_t alive)
{
	int freed = 0;

	for (int i = 0; i < t->count; i++) {
		struct gp_shfile_slot *s = gp_shfile_slot_at(t, i);
		uint64_t owner = atomic_load(&s->owner);
		pid_t pid = owner_pid(owner);

		if (pid == 0 || pid == alive || gp_proc_alive(pid, atomic_load(&s->start_time)))
			continue;
		test_stop("reclaim");
		/* Keeps the claim count; fails when the slot changed hands. */
		freed += atomic_compare_exchange_strong(&s->owner, &owner, owner >> 32 << 32);
	}
	return freed;
}
