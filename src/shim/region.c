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
 *   time; base/proc.h), and counts the bytes it holds. It is a slot of
 *   base/shfile.h's pid slot table: its owner word packs a count of
 *   claims with the pid, so that one compare-and-swap claims it or frees
 *   a dead process's, and a process killed at any instruction leaves no
 *   slot stuck. Slots are claimed under the region mutex.
 *
 * Invariant: bytes are added to a slot only under its task's mutex after
 * the sum over the task's live slots was found to leave room, and are
 * taken away without a lock; so the sum, read under the mutex, never
 * passes the limit that admitted the bytes.
 *
 * The file is a base/shfile.h file: its head (magic, version, size) never
 * moves, so that a file of another version is recognised and replaced.
 *
 * Files a process makes itself are mode 0600: only processes of the user
 * who made a device's region can share it. For tasks of several users,
 * gp_region_prepare (the agent, root) makes the files with a group that
 * every task process has, and the limits table beside them (limits-table.h);
 * opening an existing file needs only read and write permission on it,
 * by group as well, never write permission on the directory.
 *
 * Managed devices: the process-private handle (struct gp_region) keeps
 * what the join found in the table: the entry's index, the task's key and
 * the secret's hash. Every read of the limits for enforcement goes to that
 * entry and checks key and hash again, so an entry forgotten or given to
 * another task is noticed at once. Nothing in the region's own file is
 * trusted for limits, since every task can write it: its task entries
 * keep a copy of the limits for display, and its total is replaced by the
 * table's. Reads of the table are loads from the mapping only (no system
 * call on the allocation or launch path). */
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
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/pshared.h"
#include "base/shfile.h"
#include "shim/arbiter.h"
#include "shim/limits-table.h"

#define REGION_MAGIC 0x3130676572706721ULL      /* "!gpreg01" */
#define REGION_VERSION 2        /* 2: a task's used_ns */
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
	_Atomic uint64_t used_ns;       /* device time its processes held (the arbiter's) */
};

struct slot {
	struct gp_shfile_slot id;       /* owner (claims, pid) and start time */
	_Atomic int32_t task;
	_Atomic uint64_t bytes;
};

_Static_assert(offsetof(struct slot, id) == 0, "a slot starts with its owner");

struct shared {
	struct gp_shfile_head head;     /* magic (written last), version, size */
	char uuid[GP_UUID_STR_MAX];
	uint64_t total_bytes;
	pthread_mutex_t tasks_lock;     /* task creation and slot claims */
	struct task task[GP_REGION_TASKS];
	struct slot slot[GP_REGION_PROCS];
};

struct gp_region {
	struct shared *sh;
	struct gp_limits *limits;       /* NULL: the device is not managed */
	char uuid[GP_UUID_STR_MAX];     /* as opened: never the file's copy */
	/* Managed: what this process's join found (slot -1: none yet). Set
	 * by the join, before the handle serves other threads. */
	int slot;
	int entry;
	uint64_t key, secret;
};

/* ---- slots ----------------------------------------------------------- */

static struct gp_shfile_slots slots_of(struct shared *sh)
{
	return (struct gp_shfile_slots){ sh->slot, sizeof(sh->slot[0]), GP_REGION_PROCS };
}

static bool slot_is_live(const struct slot *s)
{
	return gp_shfile_slot_pid(&s->id) > 0;
}

/* The live slot of (pid, start), or -1. */
static int slot_find(struct shared *sh, pid_t pid, uint64_t start)
{
	struct gp_shfile_slots t = slots_of(sh);

	return gp_shfile_slot_find(&t, pid, start);
}

/* A free slot's fields, before its claim publishes it for task *arg. */
static void slot_fill(void *slot, void *arg)
{
	struct slot *s = slot;

	atomic_store(&s->task, *(const int *)arg);
	atomic_store(&s->bytes, 0);
}

/* Claims a free slot for (pid, start) in task t, or -1; the caller holds
 * the region mutex, which serialises claims. */
static int slot_claim(struct shared *sh, int t, pid_t pid, uint64_t start)
{
	struct gp_shfile_slots table = slots_of(sh);
	int i = gp_shfile_slot_claim(&table, pid, start, slot_fill, &t);

	return i >= 0 ? i : -1;
}

/* The slot, when it is in use by the calling process. */
static struct slot *slot_mine(struct gp_region *r, int slot)
{
	struct slot *s;

	if (!r || slot < 0 || slot >= GP_REGION_PROCS)
		return NULL;
	s = &r->sh->slot[slot];
	return gp_shfile_slot_pid(&s->id) == getpid() ? s : NULL;
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
	struct gp_shfile_slots t = slots_of(r->sh);

	gp_shfile_slot_reclaim(&t, 0);
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
			atomic_store(&k->used_ns, 0);
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

/* What a new region file is made with. */
struct region_new {
	const char *uuid;
	uint64_t total;
};

static int shared_init(void *map, const void *arg)
{
	const struct region_new *n = arg;
	struct shared *sh = map;
	int r = gp_pshared_mutex_init(&sh->tasks_lock);

	for (int t = 0; t < GP_REGION_TASKS && r == 0; t++)
		r = gp_pshared_mutex_init(&sh->task[t].lock);
	if (r < 0)
		return r;
	for (int i = 0; i < GP_REGION_PROCS; i++)
		atomic_store(&sh->slot[i].task, -1);
	snprintf(sh->uuid, sizeof(sh->uuid), "%s", n->uuid);
	sh->total_bytes = n->total;
	return 0;
}

/* Is this region file the device's? */
static bool shared_matches(const void *map, const void *arg)
{
	const struct shared *sh = map;

	return strncmp(sh->uuid, ((const struct region_new *)arg)->uuid, sizeof(sh->uuid)) == 0;
}

/* Maps the region file at path: with total 0 an existing one only, else
 * made when missing, and replaced when half made or of another version
 * (base/shfile.h). */
static int file_map(const char *path, const char *uuid, uint64_t total,
		    struct shared **ret)
{
	struct region_new n = { uuid, total };
	struct gp_shfile_layout layout = {
		REGION_MAGIC, REGION_VERSION, sizeof(struct shared), 0600,
		shared_init, shared_matches, &n,
	};

	return gp_shfile_open(path, &layout, total > 0 ? GP_SHFILE_CREATE : 0, (void **)ret);
}

static int region_path(const char *dir, const char *uuid, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/device-%s.region", dir, uuid);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int gp_region_open(const char *dir, const char *uuid, uint64_t total_bytes,
		   struct gp_region **ret_region)
{
	char d[PATH_MAX], path[PATH_MAX];
	enum dir_kind kind = dir_resolve(dir, d, sizeof(d));
	struct gp_region *g;
	int r;

	if (!uuid_is_valid(uuid) || !ret_region)
		return -EINVAL;
	r = region_path(d, uuid, path, sizeof(path));
	if (r < 0)
		return r;
	if (total_bytes > 0) {
		r = dir_prepare(d, kind);
		if (r < 0)
			return r;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
	g->slot = -1;
	r = file_map(path, uuid, total_bytes, &g->sh);
	if (r < 0)
		goto free_handle;
	r = gp_limits_open(d, uuid, &g->limits);
	if (r == -ENOENT)
		g->limits = NULL;       /* not managed */
	else if (r < 0)
		goto unmap;
	*ret_region = g;
	return 0;
unmap:
	munmap(g->sh, sizeof(*g->sh));
free_handle:
	free(g);
	return r;
}

void gp_region_close(struct gp_region *r)
{
	if (!r)
		return;
	gp_limits_close(r->limits);
	munmap(r->sh, sizeof(*r->sh));
	free(r);
}

uint64_t gp_region_total(const struct gp_region *r)
{
	return r->limits ? gp_limits_total(r->limits) : r->sh->total_bytes;
}

bool gp_region_is_managed(const struct gp_region *r)
{
	return r && r->limits;
}

bool gp_region_is_managed_in(const char *dir, const char *uuid)
{
	char d[PATH_MAX], path[PATH_MAX];
	int n;

	if (!uuid_is_valid(uuid))
		return false;
	dir_resolve(dir, d, sizeof(d));
	n = snprintf(path, sizeof(path), "%s/device-%s.limits", d, uuid);
	return n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0;
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

/* Managed: the table's entry for id, when secret is the task's. */
static int join_check(struct gp_region *r, const char *id, const char *secret,
		      int *ret_entry, struct gp_limits_entry *ret)
{
	uint64_t hash;
	int err = gp_limits_find(r->limits, id, ret_entry, ret);

	if (err < 0)
		return err;
	if (!secret || gp_limits_secret_hash(r->uuid, id, secret, &hash) < 0 ||
	    hash != ret->secret)
		return -EPERM;
	return 0;
}

int gp_region_join_as(struct gp_region *r, const char *id, const char *secret,
		      const struct gp_task_limits *limits, int *ret_slot)
{
	pid_t pid = getpid();
	uint64_t start = gp_proc_start_time(pid);
	struct gp_limits_entry e;
	int s, err, entry = -1;

	if (!r || !ret_slot || !id_is_valid(id))
		return -EINVAL;
	if (r->limits) {
		err = join_check(r, id, secret, &entry, &e);
		if (err < 0)
			return err;
		limits = &e.limits;     /* the region's copy, for display */
	} else if (!limits_are_valid(limits, r->sh->total_bytes)) {
		return -EINVAL;
	}
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
			if (r->limits) {
				r->entry = entry;
				r->key = e.key;
				r->secret = e.secret;
			}
			r->slot = s;
			*ret_slot = s;
			return 0;
		}
		gp_region_reclaim(r);   /* the dead may hold the slots or tasks we need */
	}
	return -ENOSPC;
}

int gp_region_join(struct gp_region *r, const char *id,
		   const struct gp_task_limits *limits, int *ret_slot)
{
	return gp_region_join_as(r, id, NULL, limits, ret_slot);
}

/* Managed: the limits of this process's task now, from the entry its
 * join found, which must still be the task's and the secret's. */
static int entry_limits(const struct gp_region *r, struct gp_task_limits *ret)
{
	struct gp_limits_entry e;
	int err = gp_limits_get(r->limits, r->entry, &e);

	if (err == -ENOENT || (err == 0 && (e.key != r->key || e.secret != r->secret)))
		return -EPERM;
	if (err < 0)
		return err;
	*ret = e.limits;
	return 0;
}

/* The memory limit of the slot's task t (index tix) now. */
static int task_limit(const struct gp_region *r, int slot, struct task *t, uint64_t *ret)
{
	struct gp_task_limits l;
	uint64_t mem;
	int err;

	if (!r->limits) {
		mem = atomic_load(&t->mem_bytes);
		*ret = mem ? mem : r->sh->total_bytes;
		return 0;
	}
	if (slot != r->slot)
		return -EINVAL;         /* joined through another handle */
	err = entry_limits(r, &l);
	if (err < 0)
		return err;
	*ret = l.mem_bytes ? l.mem_bytes : gp_limits_total(r->limits);
	return 0;
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
		int err = task_limit(r, slot, t, &limit);

		if (err < 0)
			return err;
		err = gp_pshared_mutex_lock(&t->lock);
		if (err < 0)
			return err;
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

/* Managed: the limits of the task of a slot in use (task t). */
static int managed_limits(struct gp_region *r, int slot, const struct task *t,
			  struct gp_task_limits *ret)
{
	struct gp_limits_entry e;
	char id[GP_TASK_ID_MAX];
	int err;

	if (slot == r->slot)
		return entry_limits(r, ret);
	/* Another process's slot: its task's limits by id, to look at. */
	memcpy(id, t->id, sizeof(id));
	id[sizeof(id) - 1] = '\0';
	err = gp_limits_find(r->limits, id, NULL, &e);
	if (err == 0)
		*ret = e.limits;
	return err;
}

int gp_region_limits(struct gp_region *r, int slot, struct gp_task_limits *ret)
{
	struct task *t = slot_task(r, slot);
	struct gp_task_limits l = { 0 };
	int locked, err;

	*ret = l;
	if (!t)
		return -ENOENT;
	if (r->limits) {
		err = managed_limits(r, slot, t, &l);
		if (err == 0)
			*ret = l;
		return err;
	}
	locked = gp_pshared_mutex_lock(&t->lock) == 0;
	limits_load(t, ret);
	if (locked)
		pthread_mutex_unlock(&t->lock);
	return 0;
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

/* Changes the region's own entry of task id: the limits where the device
 * is not managed, the copy for display where it is. */
static int region_task_set(struct gp_region *r, const char *id, const struct gp_task_limits *limits)
{
	struct task *t;
	int tix, err;

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

void gp_region_charge(struct gp_region *r, int slot, uint64_t ns)
{
	int tix;

	if (!r || slot < 0 || slot >= GP_REGION_PROCS)
		return;
	tix = atomic_load(&r->sh->slot[slot].task);
	if (tix >= 0 && tix < GP_REGION_TASKS)
		atomic_fetch_add(&r->sh->task[tix].used_ns, ns);
}

int gp_region_set(struct gp_region *r, const char *id, const struct gp_task_limits *limits)
{
	int err;

	if (!r || !id_is_valid(id) || !limits_are_valid(limits, gp_region_total(r)))
		return -EINVAL;
	if (!r->limits)
		return region_task_set(r, id, limits);
	err = gp_limits_put(r->limits, id, NULL, limits);
	if (err == 0)
		region_task_set(r, id, limits); /* no process yet: nothing to show */
	return err;
}

/* What the live processes of region task id hold, into info. */
static void info_usage(struct gp_region *r, const char *id, struct gp_task_info *info)
{
	int tix = task_find(r->sh, id), locked;

	if (tix < 0)
		return;
	locked = gp_pshared_mutex_lock(&r->sh->task[tix].lock) == 0;
	info->mem_used = task_sum(r->sh, tix, &info->processes);
	info->used_ns = atomic_load(&r->sh->task[tix].used_ns);
	if (locked)
		pthread_mutex_unlock(&r->sh->task[tix].lock);
}

/* Fills info from the region's task tix; false when it has no live
 * process and `live_only`. */
static bool info_of_region(struct gp_region *r, int tix, bool live_only,
			   struct gp_task_info *info)
{
	struct task *t = &r->sh->task[tix];
	int locked;

	memset(info, 0, sizeof(*info));
	memcpy(info->id, t->id, sizeof(info->id));
	info->id[sizeof(info->id) - 1] = '\0';
	locked = gp_pshared_mutex_lock(&t->lock) == 0;
	limits_load(t, &info->limits);
	info->mem_used = task_sum(r->sh, tix, &info->processes);
	info->generation = atomic_load(&t->generation);
	info->used_ns = atomic_load(&t->used_ns);
	if (locked)
		pthread_mutex_unlock(&t->lock);
	return !live_only || info->processes > 0;
}

/* Managed: the table's tasks, then the region's live tasks it lacks. */
static int tasks_managed(struct gp_region *r, struct gp_task_info *out, int max)
{
	struct gp_task_info spare;
	int n = 0;

	for (int i = 0; i < GP_REGION_TASKS; i++) {
		struct gp_limits_entry e;
		struct gp_task_info *info = n < max ? &out[n] : &spare;

		if (gp_limits_get(r->limits, i, &e) < 0)
			continue;
		n++;
		memset(info, 0, sizeof(*info));
		memcpy(info->id, e.id, sizeof(info->id));
		info->limits = e.limits;
		info->generation = e.generation;
		info->managed = true;
		info_usage(r, e.id, info);
	}
	for (int tix = 0; tix < GP_REGION_TASKS; tix++) {
		struct gp_limits_entry e;

		if (atomic_load(&r->sh->task[tix].state) != TASK_ACTIVE ||
		    !info_of_region(r, tix, true, &spare) ||
		    gp_limits_find(r->limits, spare.id, NULL, &e) == 0)
			continue;
		if (n < max)
			out[n] = spare;
		n++;
	}
	return n;
}

int gp_region_tasks(struct gp_region *r, struct gp_task_info *out, int max)
{
	int n = 0;

	gp_region_reclaim(r);
	if (r->limits)
		return tasks_managed(r, out, max);
	for (int tix = 0; tix < GP_REGION_TASKS; tix++) {
		if (atomic_load(&r->sh->task[tix].state) != TASK_ACTIVE)
			continue;
		if (n < max)
			info_of_region(r, tix, false, &out[n]);
		n++;
	}
	return n;
}

/* ---- managed devices: the agent's side ------------------------------- */

/* The directory of a managed device: made when missing, the caller's,
 * mode 0755, so that tasks open the files in it but make, remove or
 * rename none. */
static int dir_own(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -EPERM;
	if ((st.st_mode & 07777) != 0755 && chmod(dir, 0755) < 0)
		return -errno;
	return 0;
}

int gp_region_prepare(const char *dir, const char *uuid, uint64_t total_bytes, gid_t group)
{
	char d[PATH_MAX], path[PATH_MAX];
	struct shared *sh;
	int r;

	if (!uuid_is_valid(uuid) || total_bytes == 0)
		return -EINVAL;
	dir_resolve(dir, d, sizeof(d));
	r = region_path(d, uuid, path, sizeof(path));
	if (r == 0)
		r = dir_own(d);
	if (r == 0)
		r = gp_pshared_file_vet(path);
	if (r == 0)
		r = file_map(path, uuid, total_bytes, &sh);
	if (r < 0)
		return r;
	munmap(sh, sizeof(*sh));
	r = gp_pshared_file_share(path, 0660, group);
	if (r == 0)
		r = gp_arbiter_prepare(d, uuid, group);
	if (r == 0)             /* last: from here on the device is managed */
		r = gp_limits_prepare(d, uuid, total_bytes);
	return r;
}

int gp_region_remove(const char *dir, const char *uuid)
{
	static const char *const kinds[] = { "limits", "sched", "region" };
	char d[PATH_MAX], path[PATH_MAX];
	int r = 0;

	if (!uuid_is_valid(uuid))
		return -EINVAL;
	dir_resolve(dir, d, sizeof(d));
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		int n = snprintf(path, sizeof(path), "%s/device-%s.%s", d, uuid, kinds[i]);

		if (n < 0 || (size_t)n >= sizeof(path))
			return -ENAMETOOLONG;
		if (unlink(path) < 0 && errno != ENOENT && r == 0)
			r = -errno;
	}
	return r;
}

int gp_region_task_admit(struct gp_region *r, const char *id, const char *secret,
			 const struct gp_task_limits *limits)
{
	uint64_t hash;
	int err;

	if (!r || !id_is_valid(id) || !limits_are_valid(limits, gp_region_total(r)) ||
	    gp_limits_secret_hash(r->uuid, id, secret, &hash) < 0)
		return -EINVAL;
	if (!r->limits)
		return -EOPNOTSUPP;
	err = gp_limits_put(r->limits, id, &hash, limits);
	if (err == 0)
		region_task_set(r, id, limits); /* admitted again while it runs */
	return err;
}

int gp_region_task_forget(struct gp_region *r, const char *id)
{
	if (!r || !id_is_valid(id))
		return -EINVAL;
	if (!r->limits)
		return -EOPNOTSUPP;
	return gp_limits_forget(r->limits, id);
}

int gp_task_secret_new(char ret[GP_TASK_SECRET_LEN + 1])
{
	unsigned char bytes[GP_TASK_SECRET_LEN / 2];
	size_t got = 0;

	while (got < sizeof(bytes)) {
		ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(ret + 2 * i, 3, "%02x", bytes[i]);
	explicit_bzero(bytes, sizeof(bytes));
	return 0;
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
		pid_t pid = gp_shfile_slot_pid(&s->id);

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
