/* region.c — the shared region of one device (see region.h).
 *
 * One file per device, mapped MAP_SHARED by every process that uses the
 * device and by the tools that read or change its limits. The file is a
 * header, a table of tasks and a table of process slots:
 *
 * - A task entry is made under the region's robust mutex (so two
 *   creators never make the same task twice) and published by setting
 *   its state last. It is freed again, also under that mutex, only when
 *   the table is full and no live process belongs to it any more; so a
 *   process in the task (which holds a slot) always finds it, and a tool
 *   changing a task by id holds the region mutex. Each task has its own robust mutex: memory
 *   admission and changes of limits take it, and readers of the limits
 *   take it so that they never see half of a change.
 * - A process slot belongs to one process, identified by (pid, start
 *   time; base/proc.h), and counts the bytes it holds. Its owner word
 *   packs the pid (low half; 0 = free) with a count of claims (high
 *   half), so that one compare-and-swap frees a dead process's slot and a
 *   stale compare-and-swap (the slot freed and claimed again meanwhile)
 *   fails. There is no intermediate "being changed" state: a process
 *   killed at any instruction leaves no slot stuck. Slots are claimed
 *   under the region mutex, and a slot's fields are written before its
 *   owner word publishes it; readers ignore free slots.
 *
 * Invariant: bytes are added to a slot only under its task's mutex after
 * the sum over the task's live slots was found to leave room, and are
 * taken away without a lock; so the sum, read under the mutex, never
 * passes the limit that admitted the bytes.
 *
 * The file starts with the magic (64 bits) and the version and size of
 * the layout (32 bits each); every version keeps these three where they
 * are, so that a file of another version is recognised and replaced.
 *
 * Files are made with mode 0600: only processes of the user who made a
 * device's region can share it. (A deployment whose tasks run as several
 * users runs them under one service user, or the server makes the files
 * and sets their mode; that is not this module's business.)
 *
 * Deviations from region.h's comments, to be folded into it:
 * - gp_region_open with total_bytes 0 opens an existing region only: it
 *   returns -ENOENT when the file does not exist, -EPROTO when it was
 *   made by another version and -EIO when it was left half made (it
 *   cannot make a new one without the device's size).
 * - gp_region_join returns -EEXIST when the process already has a slot
 *   for another task, -EINVAL for a bad id or limits, -ESRCH when the
 *   process cannot tell its own start time (no /proc).
 * - gp_region_mem_reserve returns -EINVAL for a slot that is not the
 *   calling process's (a child after fork must join again);
 *   gp_region_mem_release ignores such a slot.
 * - gp_region_limits fills zeros and gp_region_task_used returns 0 for a
 *   slot that is not in use.
 * - gp_region_task_used does not reclaim (it is on the interposer's hot
 *   path); gp_region_tasks does. */
#include "shim/region.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/pshared.h"

#define REGION_MAGIC 0x3130676572706721ULL      /* "!gpreg01" */
#define REGION_VERSION 1
#define READY_WAIT_NS 2000000000ULL
#define RUN_DIR "/run/gpupool"

enum { TASK_FREE = 0, TASK_ACTIVE = 1 };

struct task {
	_Atomic uint32_t state;         /* TASK_ACTIVE: set last; freed when unused */
	char id[GP_TASK_ID_MAX];
	pthread_mutex_t lock;           /* admission and changes of limits */
	_Atomic uint64_t mem_bytes;
	_Atomic uint32_t compute;
	_Atomic uint32_t priority;
	_Atomic uint32_t isolation;
	_Atomic uint64_t generation;
};

struct slot {
	_Atomic uint64_t owner;         /* claims << 32 | pid; pid 0 = free */
	_Atomic uint64_t start_time;
	_Atomic int32_t task;
	_Atomic uint64_t bytes;
};

struct shared {
	_Atomic uint64_t magic;         /* written last: the file is ready */
	uint32_t version;
	uint32_t size;                  /* sizeof(struct shared): tells ABIs apart */
	char uuid[GP_UUID_STR_MAX];
	uint64_t total_bytes;
	pthread_mutex_t tasks_lock;     /* task creation and slot claims */
	struct task task[GP_REGION_TASKS];
	struct slot slot[GP_REGION_PROCS];
};

struct gp_region {
	struct shared *sh;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- slots ----------------------------------------------------------- */

static pid_t owner_pid(uint64_t owner)
{
	return (pid_t)(uint32_t)owner;
}

static bool slot_is_live(const struct slot *s)
{
	return owner_pid(atomic_load(&s->owner)) > 0;
}

/* The live slot of (pid, start), or -1. */
static int slot_find(struct shared *sh, pid_t pid, uint64_t start)
{
	for (int i = 0; i < GP_REGION_PROCS; i++) {
		struct slot *s = &sh->slot[i];

		if (owner_pid(atomic_load(&s->owner)) == pid &&
		    atomic_load(&s->start_time) == start)
			return i;
	}
	return -1;
}

/* Claims a free slot for (pid, start) in task t; the caller holds the
 * region mutex, so no other claimer competes, and reclaimers leave free
 * slots alone. */
static int slot_claim(struct shared *sh, int t, pid_t pid, uint64_t start)
{
	for (int i = 0; i < GP_REGION_PROCS; i++) {
		struct slot *s = &sh->slot[i];
		uint64_t owner = atomic_load(&s->owner);

		if (owner_pid(owner) != 0)
			continue;
		atomic_store(&s->start_time, start);
		atomic_store(&s->task, t);
		atomic_store(&s->bytes, 0);
		if (atomic_compare_exchange_strong(&s->owner, &owner,
						   ((owner >> 32) + 1) << 32 | (uint32_t)pid))
			return i;
	}
	return -1;
}

/* The slot, when it is in use by the calling process. */
static struct slot *slot_mine(struct gp_region *r, int slot)
{
	struct slot *s;

	if (!r || slot < 0 || slot >= GP_REGION_PROCS)
		return NULL;
	s = &r->sh->slot[slot];
	return owner_pid(atomic_load(&s->owner)) == getpid() ? s : NULL;
}

/* The task of a slot in use, or NULL. */
static struct task *slot_task(struct gp_region *r, int slot)
{
	int t;

	if (!r || slot < 0 || slot >= GP_REGION_PROCS || !slot_is_live(&r->sh->slot[slot]))
		return NULL;
	t = atomic_load(&r->sh->slot[slot].task);
	return t >= 0 && t < GP_REGION_TASKS ? &r->sh->task[t] : NULL;
}

void gp_region_reclaim(struct gp_region *r)
{
	for (int i = 0; i < GP_REGION_PROCS; i++) {
		struct slot *s = &r->sh->slot[i];
		uint64_t owner = atomic_load(&s->owner);
		pid_t pid = owner_pid(owner);

		if (pid <= 0 || gp_proc_alive(pid, atomic_load(&s->start_time)))
			continue;
		/* Keeps the claim count; fails when the slot changed hands. */
		atomic_compare_exchange_strong(&s->owner, &owner, owner >> 32 << 32);
	}
}

/* ---- tasks ----------------------------------------------------------- */

static bool id_is_valid(const char *id)
{
	size_t len = id ? strnlen(id, GP_TASK_ID_MAX) : 0;

	if (len == 0 || len == GP_TASK_ID_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)id[i] < 0x20 || id[i] == 0x7f)
			return false;
	return true;
}

static bool limits_are_valid(const struct gp_task_limits *l, uint64_t total)
{
	return l && l->compute >= 1 && l->compute <= 100 && l->priority <= 9 &&
	       (l->isolation == GP_ISOLATION_HARD || l->isolation == GP_ISOLATION_SHARED) &&
	       l->mem_bytes <= total;
}

static int task_find(struct shared *sh, const char *id)
{
	for (int t = 0; t < GP_REGION_TASKS; t++)
		if (atomic_load(&sh->task[t].state) == TASK_ACTIVE &&
		    strncmp(sh->task[t].id, id, GP_TASK_ID_MAX) == 0)
			return t;
	return -1;
}

static void limits_store(struct task *t, const struct gp_task_limits *l)
{
	atomic_store(&t->mem_bytes, l->mem_bytes);
	atomic_store(&t->compute, l->compute);
	atomic_store(&t->priority, l->priority);
	atomic_store(&t->isolation, (uint32_t)l->isolation);
}

static void limits_load(struct task *t, struct gp_task_limits *ret)
{
	ret->mem_bytes = atomic_load(&t->mem_bytes);
	ret->compute = atomic_load(&t->compute);
	ret->priority = atomic_load(&t->priority);
	ret->isolation = (enum gp_isolation)atomic_load(&t->isolation);
}

static uint64_t task_sum(struct shared *sh, int t, unsigned *ret_procs);

/* Frees the tasks that no live process belongs to any more; the caller
 * holds the region mutex. Returns how many. */
static int tasks_retire(struct shared *sh)
{
	int freed = 0;

	for (int t = 0; t < GP_REGION_TASKS; t++) {
		unsigned procs;

		if (atomic_load(&sh->task[t].state) != TASK_ACTIVE)
			continue;
		task_sum(sh, t, &procs);
		if (procs == 0) {
			atomic_store(&sh->task[t].state, TASK_FREE);
			freed++;
		}
	}
	return freed;
}

/* Makes a task; the caller holds the region mutex. An entry left half
 * made by a creator that died is still free and is simply made again.
 * When the table is full, tasks whose processes are all gone make room. */
static int task_create(struct shared *sh, const char *id, const struct gp_task_limits *l)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		for (int t = 0; t < GP_REGION_TASKS; t++) {
			struct task *k = &sh->task[t];

			if (atomic_load(&k->state) != TASK_FREE)
				continue;
			memset(k->id, 0, sizeof(k->id));
			memcpy(k->id, id, strlen(id));
			limits_store(k, l);
			atomic_store(&k->generation, 1);
			atomic_store(&k->state, TASK_ACTIVE);
			return t;
		}
		if (tasks_retire(sh) == 0)
			break;
	}
	return -1;
}

/* Bytes held by the live slots of task t (and how many there are). The
 * caller holds the task's mutex. */
static uint64_t task_sum(struct shared *sh, int t, unsigned *ret_procs)
{
	uint64_t used = 0;
	unsigned procs = 0;

	for (int i = 0; i < GP_REGION_PROCS; i++) {
		struct slot *s = &sh->slot[i];

		if (!slot_is_live(s) || atomic_load(&s->task) != t)
			continue;
		used += atomic_load(&s->bytes);
		procs++;
	}
	if (ret_procs)
		*ret_procs = procs;
	return used;
}

/* ---- the file -------------------------------------------------------- */

enum dir_kind { DIR_GIVEN, DIR_RUN, DIR_TMP };

static bool can_write(const char *path)
{
	return faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) == 0;
}

static enum dir_kind dir_resolve(const char *dir, char *buf, size_t len)
{
	const char *env = getenv("GPUPOOL_RUN_DIR");

	if (dir && !*dir)
		dir = NULL;
	if (!dir && env && *env)
		dir = env;
	if (dir) {
		snprintf(buf, len, "%s", dir);
		return DIR_GIVEN;
	}
	if (can_write(RUN_DIR) || (errno == ENOENT && can_write("/run"))) {
		snprintf(buf, len, "%s", RUN_DIR);
		return DIR_RUN;
	}
	snprintf(buf, len, "/tmp/gpupool-%u", (unsigned)geteuid());
	return DIR_TMP;
}

void gp_region_dir(const char *dir, char *buf, size_t len)
{
	if (len)
		dir_resolve(dir, buf, len);
}

/* Makes the directory when it is missing; the shared /tmp fallback must
 * be ours, or someone else could read and change our limits. */
static int dir_prepare(const char *dir, enum dir_kind kind)
{
	struct stat st;

	if (mkdir(dir, kind == DIR_RUN ? 0755 : 0700) < 0 && errno != EEXIST)
		return -errno;
	if (kind != DIR_TMP)
		return 0;
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -EACCES;
	return 0;
}

static bool uuid_is_valid(const char *uuid)
{
	size_t len = uuid ? strnlen(uuid, GP_UUID_STR_MAX) : 0;

	if (len == 0 || len == GP_UUID_STR_MAX || uuid[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = uuid[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

static int shared_init(struct shared *sh, const char *uuid, uint64_t total)
{
	int r = gp_pshared_mutex_init(&sh->tasks_lock);

	for (int t = 0; t < GP_REGION_TASKS && r == 0; t++)
		r = gp_pshared_mutex_init(&sh->task[t].lock);
	if (r < 0)
		return r;
	for (int i = 0; i < GP_REGION_PROCS; i++)
		atomic_store(&sh->slot[i].task, -1);
	sh->version = REGION_VERSION;
	sh->size = sizeof(*sh);
	snprintf(sh->uuid, sizeof(sh->uuid), "%s", uuid);
	sh->total_bytes = total;
	atomic_store(&sh->magic, REGION_MAGIC);
	return 0;
}

/* Makes a new region file: -EEXIST when there is one. */
static int file_create(const char *path, const char *uuid, uint64_t total,
		       struct shared **ret)
{
	struct shared *sh;
	int fd, r;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(*sh)) < 0) {
		r = -errno;
		goto unlink;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED) {
		r = -errno;
		goto unlink;
	}
	r = shared_init(sh, uuid, total);
	if (r < 0)
		goto unmap;
	close(fd);
	*ret = sh;
	return 0;
unmap:
	munmap(sh, sizeof(*sh));
unlink:
	unlink(path);
	close(fd);
	return r;
}

/* The first words of a region file, whatever its version. */
struct head {
	uint64_t magic;
	uint32_t version;
	uint32_t size;
};

/* Waits (bounded) for the creator of fd to publish it. -EIO: still not
 * ready (left half made); -EPROTO: of another version or layout. */
static int file_wait_ready(int fd)
{
	uint64_t deadline = now_ns() + READY_WAIT_NS;
	struct head h;

	for (;;) {
		ssize_t n = pread(fd, &h, sizeof(h), 0);

		if (n < 0)
			return -errno;
		if (n == (ssize_t)sizeof(h) && h.magic != 0) {
			if (h.magic != REGION_MAGIC || h.version != REGION_VERSION ||
			    h.size != sizeof(struct shared))
				return -EPROTO;
			return 0;
		}
		if (now_ns() > deadline)
			return -EIO;
		usleep(1000);
	}
}

/* Opens an existing region file: -ENOENT when there is none. */
static int file_open(const char *path, const char *uuid, struct shared **ret,
		     struct stat *ret_st)
{
	struct shared *sh;
	int fd, r;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, ret_st) < 0) {
		r = -errno;
		goto out;
	}
	r = file_wait_ready(fd);
	if (r < 0)
		goto out;
	if (fstat(fd, ret_st) < 0 || (size_t)ret_st->st_size < sizeof(*sh)) {
		r = -EPROTO;
		goto out;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	if (atomic_load(&sh->magic) != REGION_MAGIC ||
	    strncmp(sh->uuid, uuid, sizeof(sh->uuid)) != 0) {
		munmap(sh, sizeof(*sh));
		r = -EPROTO;
		goto out;
	}
	*ret = sh;
out:
	close(fd);
	return r;
}

/* Removes a bad file, unless someone already put another in its place. */
static void file_replace(const char *path, const struct stat *bad)
{
	struct stat st;

	if (stat(path, &st) == 0 && st.st_dev == bad->st_dev && st.st_ino == bad->st_ino)
		unlink(path);
}

static int file_map(const char *path, const char *uuid, uint64_t total,
		    struct shared **ret)
{
	bool replaced = false;
	int r = -EAGAIN;

	for (int attempt = 0; attempt < 4; attempt++) {
		struct stat st;

		if (total > 0) {
			r = file_create(path, uuid, total, ret);
			if (r != -EEXIST)
				return r;
		}
		r = file_open(path, uuid, ret, &st);
		if (r == 0 || (r == -ENOENT && total == 0))
			return r;
		if (r == -ENOENT)
			continue;               /* removed meanwhile: make it */
		if ((r != -EIO && r != -EPROTO) || total == 0 || replaced)
			return r;
		file_replace(path, &st);
		replaced = true;
	}
	return r;
}

int gp_region_open(const char *dir, const char *uuid, uint64_t total_bytes,
		   struct gp_region **ret_region)
{
	char d[PATH_MAX], path[PATH_MAX];
	enum dir_kind kind = dir_resolve(dir, d, sizeof(d));
	struct gp_region *g;
	int n, r;

	if (!uuid_is_valid(uuid) || !ret_region)
		return -EINVAL;
	n = snprintf(path, sizeof(path), "%s/device-%s.region", d, uuid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (total_bytes > 0) {
		r = dir_prepare(d, kind);
		if (r < 0)
			return r;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	r = file_map(path, uuid, total_bytes, &g->sh);
	if (r < 0) {
		free(g);
		return r;
	}
	*ret_region = g;
	return 0;
}

void gp_region_close(struct gp_region *r)
{
	if (!r)
		return;
	munmap(r->sh, sizeof(*r->sh));
	free(r);
}

uint64_t gp_region_total(const struct gp_region *r)
{
	return r->sh->total_bytes;
}

/* ---- joining, admission ---------------------------------------------- */

/* Finds or makes the task and the caller's slot; holds the region mutex. */
static int join_locked(struct shared *sh, const char *id, const struct gp_task_limits *l,
		       pid_t pid, uint64_t start)
{
	int t = task_find(sh, id), s;
	unsigned procs;

	if (t < 0) {
		t = task_create(sh, id, l);
	} else {
		/* A task none of whose processes is alive starts afresh with the
		 * joiner's limits; a running one keeps its own. */
		task_sum(sh, t, &procs);
		if (procs == 0) {
			limits_store(&sh->task[t], l);
			atomic_fetch_add(&sh->task[t].generation, 1);
		}
	}
	if (t < 0)
		return -ENOSPC;
	s = slot_find(sh, pid, start);
	if (s >= 0)
		return atomic_load(&sh->slot[s].task) == t ? s : -EEXIST;
	return slot_claim(sh, t, pid, start);
}

int gp_region_join(struct gp_region *r, const char *id,
		   const struct gp_task_limits *limits, int *ret_slot)
{
	pid_t pid = getpid();
	uint64_t start = gp_proc_start_time(pid);
	int s, err;

	if (!r || !ret_slot || !id_is_valid(id) ||
	    !limits_are_valid(limits, r->sh->total_bytes))
		return -EINVAL;
	if (start == 0)
		return -ESRCH;
	gp_region_reclaim(r);           /* so that "no live process" is true */
	for (int attempt = 0; attempt < 2; attempt++) {
		err = gp_pshared_mutex_lock(&r->sh->tasks_lock);
		if (err < 0)
			return err;
		s = join_locked(r->sh, id, limits, pid, start);
		pthread_mutex_unlock(&r->sh->tasks_lock);
		if (s == -EEXIST)
			return s;
		if (s >= 0) {
			*ret_slot = s;
			return 0;
		}
		gp_region_reclaim(r);   /* the dead may hold the slots or tasks we need */
	}
	return -ENOSPC;
}

static uint64_t task_limit(const struct gp_region *r, struct task *t)
{
	uint64_t mem = atomic_load(&t->mem_bytes);

	return mem ? mem : r->sh->total_bytes;
}

int gp_region_mem_reserve(struct gp_region *r, int slot, uint64_t bytes)
{
	struct slot *s = slot_mine(r, slot);
	struct task *t;
	int tix;

	if (!s)
		return -EINVAL;
	tix = atomic_load(&s->task);
	if (tix < 0 || tix >= GP_REGION_TASKS)
		return -EINVAL;
	t = &r->sh->task[tix];
	for (int attempt = 0; attempt < 2; attempt++) {
		uint64_t limit, used;
		bool fits;
		int err = gp_pshared_mutex_lock(&t->lock);

		if (err < 0)
			return err;
		limit = task_limit(r, t);
		used = task_sum(r->sh, tix, NULL);
		fits = bytes <= limit && used <= limit - bytes;
		if (fits)
			atomic_fetch_add(&s->bytes, bytes);
		pthread_mutex_unlock(&t->lock);
		if (fits)
			return 0;
		gp_region_reclaim(r);   /* the dead may hold what we need */
	}
	return -ENOMEM;
}

void gp_region_mem_release(struct gp_region *r, int slot, uint64_t bytes)
{
	struct slot *s = slot_mine(r, slot);
	uint64_t held;

	if (!s)
		return;
	held = atomic_load(&s->bytes);
	while (!atomic_compare_exchange_weak(&s->bytes, &held,
					     held > bytes ? held - bytes : 0))
		;
}

/* ---- reading and changing limits ------------------------------------- */

void gp_region_limits(struct gp_region *r, int slot, struct gp_task_limits *ret)
{
	struct task *t = slot_task(r, slot);
	int locked;

	*ret = (struct gp_task_limits){ 0 };
	if (!t)
		return;
	locked = gp_pshared_mutex_lock(&t->lock) == 0;
	limits_load(t, ret);
	if (locked)
		pthread_mutex_unlock(&t->lock);
}

uint64_t gp_region_task_used(struct gp_region *r, int slot)
{
	struct task *t = slot_task(r, slot);
	uint64_t used;
	int locked;

	if (!t)
		return 0;
	locked = gp_pshared_mutex_lock(&t->lock) == 0;
	used = task_sum(r->sh, (int)(t - r->sh->task), NULL);
	if (locked)
		pthread_mutex_unlock(&t->lock);
	return used;
}

int gp_region_set(struct gp_region *r, const char *id, const struct gp_task_limits *limits)
{
	struct task *t;
	int tix, err;

	if (!r || !id_is_valid(id) || !limits_are_valid(limits, r->sh->total_bytes))
		return -EINVAL;
	/* The region mutex keeps the task from being freed under us. */
	err = gp_pshared_mutex_lock(&r->sh->tasks_lock);
	if (err < 0)
		return err;
	tix = task_find(r->sh, id);
	if (tix < 0) {
		pthread_mutex_unlock(&r->sh->tasks_lock);
		return -ENOENT;
	}
	t = &r->sh->task[tix];
	err = gp_pshared_mutex_lock(&t->lock);
	if (err == 0) {
		limits_store(t, limits);
		atomic_fetch_add(&t->generation, 1);
		pthread_mutex_unlock(&t->lock);
	}
	pthread_mutex_unlock(&r->sh->tasks_lock);
	return err;
}

int gp_region_tasks(struct gp_region *r, struct gp_task_info *out, int max)
{
	int n = 0;

	gp_region_reclaim(r);
	for (int tix = 0; tix < GP_REGION_TASKS; tix++) {
		struct task *t = &r->sh->task[tix];
		struct gp_task_info *info;
		int locked;

		if (atomic_load(&t->state) != TASK_ACTIVE)
			continue;
		if (n >= max) {
			n++;
			continue;
		}
		info = &out[n++];
		memset(info, 0, sizeof(*info));
		memcpy(info->id, t->id, sizeof(info->id));
		info->id[sizeof(info->id) - 1] = '\0';
		locked = gp_pshared_mutex_lock(&t->lock) == 0;
		limits_load(t, &info->limits);
		info->mem_used = task_sum(r->sh, tix, &info->processes);
		info->generation = atomic_load(&t->generation);
		if (locked)
			pthread_mutex_unlock(&t->lock);
	}
	return n;
}

/* ---- sizes ----------------------------------------------------------- */

int gp_parse_size(const char *text, uint64_t *ret_bytes)
{
	static const struct { const char *suffix; unsigned shift; } units[] = {
		{ "", 0 },
		{ "K", 10 }, { "k", 10 }, { "KiB", 10 },
		{ "M", 20 }, { "m", 20 }, { "MiB", 20 },
		{ "G", 30 }, { "g", 30 }, { "GiB", 30 },
		{ "T", 40 }, { "t", 40 }, { "TiB", 40 },
	};
	uint64_t n = 0;
	const char *p = text;

	if (!text || !ret_bytes)
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned digit = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - digit) / 10)
			return -EINVAL;
		n = n * 10 + digit;
	}
	if (p == text)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].suffix) != 0)
			continue;
		if (n > UINT64_MAX >> units[i].shift)
			return -EINVAL;
		*ret_bytes = n << units[i].shift;
		return 0;
	}
	return -EINVAL;
}

int gp_region_task_pids(struct gp_region *r, int slot, pid_t *out, int max)
{
	int task, n = 0;

	if (!r || slot < 0 || slot >= GP_REGION_PROCS)
		return -EINVAL;
	task = atomic_load(&r->sh->slot[slot].task);
	for (int i = 0; i < GP_REGION_PROCS; i++) {
		const struct slot *s = &r->sh->slot[i];
		pid_t pid = owner_pid(atomic_load(&s->owner));

		if (pid <= 0 || atomic_load(&s->task) != task)
			continue;
		if (n < max)
			out[n] = pid;
		n++;
	}
	return n;
}

int gp_region_task_of(struct gp_region *r, int slot, char *id, size_t len)
{
	int task;

	if (!r || slot < 0 || slot >= GP_REGION_PROCS)
		return -EINVAL;
	task = atomic_load(&r->sh->slot[slot].task);
	if (task < 0 || task >= GP_REGION_TASKS)
		return -ENOENT;
	if (id)
		snprintf(id, len, "%s", r->sh->task[task].id);
	return task;
}
