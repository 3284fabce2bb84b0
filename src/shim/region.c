/* region.c — the shared state of one device (see region.h).
 *
 * A device's state is its task table and one file per task:
 *
 * - The task table says which tasks the device has, at which index, with
 *   which limits. Managed, it is the limits table (limits-table.h): the
 *   agent's, read-only to tasks. Not managed, it is device-UUID.region, a
 *   base/shfile.h file of one user's processes: a task entry is made under
 *   the file's robust mutex and published by setting its state last, and
 *   freed again, under that mutex, only when the table is full and no
 *   live process belongs to it any more (so a process in the task always
 *   finds it). Each entry has its own robust mutex for changes of limits,
 *   and a random stamp made with it, which names the task's file.
 * - Task index K's file, device-UUID.tasks/task-K (taskfile.h), holds what the
 *   task's processes write: the memory each holds and its turns. Only the
 *   task's processes write it (on a managed device it is the task user's,
 *   mode 0644); everybody else maps it read-only and checks what it reads.
 *
 * Admission is the task's own business: gp_region_mem_reserve takes the
 * task file's mutex, sums the bytes of the task's claimed slots and adds
 * the new ones when they fit the limit, so the task's processes racing
 * never pass it together. Invariant: bytes are added to a slot only under
 * that mutex after the sum was found to leave room, and are taken away
 * without a lock; so the sum, read under the mutex, never passes the
 * limit that admitted the bytes. No other task's file is ever locked, and
 * no other task can write this one: a neighbour can neither block nor
 * fail an allocation.
 *
 * Managed devices: the process-private handle keeps what the join found
 * in the table — the entry's index, the task's key and the secret's hash
 * (which is also the stamp of the task's file). Every read of the limits
 * for enforcement goes to that entry and checks key and hash again, so an
 * entry forgotten or given to another task is noticed at once. Reads of
 * the table are loads from the mapping only (no system call on the
 * allocation or launch path).
 *
 * The other tasks' files are mapped read-only as they are met (peers):
 * the arbiter and the readers of usage find them by the table's index and
 * check them against the table's entry at every use. */
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
#include <unistd.h>

#include "base/proc.h"
#include "base/clock.h"
#include "base/pshared.h"
#include "base/shfile.h"
#include "shim/limits-table.h"
#include "shim/taskfile.h"

#define REGION_MAGIC 0x3130676572706721ULL      /* "!gpreg01" */
#define REGION_VERSION 3        /* 3: processes moved to the tasks' own files */
#define RUN_DIR "/run/gpupool"
#define PEER_RETRY_NS 100000000ULL /* a task without a good file: looked for again */

enum { TASK_FREE = 0, TASK_ACTIVE = 1 };

/* A task of a device that is not managed. */
struct task {
	_Atomic uint32_t state;         /* TASK_ACTIVE: set last; freed when unused */
	char id[GP_TASK_ID_MAX];
	pthread_mutex_t lock;           /* changes of limits */
	_Atomic uint64_t mem_bytes;
	_Atomic uint32_t compute;
	_Atomic uint32_t priority;
	_Atomic uint32_t isolation;
	_Atomic uint64_t generation;
	_Atomic uint64_t stamp;         /* random, made with the entry: names its file */
};

struct shared {
	struct gp_shfile_head head;     /* magic (written last), version, size */
	char uuid[GP_UUID_STR_MAX];
	uint64_t total_bytes;
	pthread_mutex_t tasks_lock;     /* task creation */
	struct task task[GP_REGION_TASKS];
};

/* Another task's file, mapped read-only, and which admission it is. */
struct peer {
	const struct gp_taskfile *tf;
	uint64_t stamp;
	uint64_t retry_ns;              /* none found: not looked for before then */
};

struct gp_region {
	struct shared *sh;              /* not managed: the task table, else NULL */
	struct gp_limits *limits;       /* managed: the limits table, else NULL */
	char dir[PATH_MAX];
	char uuid[GP_UUID_STR_MAX];     /* as opened: never a file's copy */
	/* This process's task, once joined (task -1: none). Set by the join,
	 * before the handle serves other threads. */
	int task, slot;
	pid_t joiner;                   /* the process that joined (a child joins anew) */
	uint64_t key, stamp;            /* managed: the entry's key and secret hash */
	struct gp_taskfile *mine;
	pthread_mutex_t peers_lock;
	struct peer peer[GP_REGION_TASKS];
};

/* Who is at one index of the task table, as one read found it. */
struct who {
	char id[GP_TASK_ID_MAX];
	uint64_t stamp, generation;
	struct gp_task_limits limits;
};

/* ---- checks ------------------------------------------------------------ */

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

/* ---- the task table ----------------------------------------------------- */

static void limits_store(struct task *t, const struct gp_task_limits *l)
{
	atomic_store(&t->mem_bytes, l->mem_bytes);
	atomic_store(&t->compute, l->compute);
	atomic_store(&t->priority, l->priority);
	atomic_store(&t->isolation, (uint32_t)l->isolation);
}

/* Not managed: the limits of entry t, under its mutex (a change is never
 * seen half made). */
static void limits_load(struct task *t, struct gp_task_limits *ret)
{
	int locked = gp_pshared_mutex_lock(&t->lock) == 0;

	ret->mem_bytes = atomic_load(&t->mem_bytes);
	ret->compute = atomic_load(&t->compute);
	ret->priority = atomic_load(&t->priority);
	ret->isolation = (enum gp_isolation)atomic_load(&t->isolation);
	if (locked)
		pthread_mutex_unlock(&t->lock);
}

/* Task `index` of the table: -ENOENT when there is none. */
static int who_at(struct gp_region *r, int index, struct who *ret)
{
	struct gp_limits_entry e;
	struct task *t;
	int err;

	if (r->limits) {
		err = gp_limits_get(r->limits, index, &e);
		if (err < 0)
			return err;
		memcpy(ret->id, e.id, sizeof(ret->id));
		ret->stamp = e.secret;
		ret->generation = e.generation;
		ret->limits = e.limits;
		return 0;
	}
	t = &r->sh->task[index];
	if (atomic_load(&t->state) != TASK_ACTIVE)
		return -ENOENT;
	memcpy(ret->id, t->id, sizeof(ret->id));
	ret->id[sizeof(ret->id) - 1] = '\0';
	ret->stamp = atomic_load(&t->stamp);
	ret->generation = atomic_load(&t->generation);
	limits_load(t, &ret->limits);
	return 0;
}

/* The index of task id, or -ENOENT. */
static int index_of(struct gp_region *r, const char *id, struct who *ret)
{
	for (int i = 0; i < GP_REGION_TASKS; i++)
		if (who_at(r, i, ret) == 0 && strcmp(ret->id, id) == 0)
			return i;
	return -ENOENT;
}

static int task_path(const struct gp_region *r, int index, char *buf, size_t len)
{
	return gp_taskfile_path(r->dir, r->uuid, index, buf, len);
}

/* ---- the other tasks' files ---------------------------------------------- */

static void peer_drop(struct peer *p)
{
	gp_taskfile_unmap(p->tf);
	*p = (struct peer){ 0 };
}

/* The read-only mapping of task `index`'s file, for task w, or NULL;
 * peers_lock held. */
static const struct gp_taskfile *peer_of(struct gp_region *r, int index, const struct who *w)
{
	struct peer *p = &r->peer[index];
	char path[PATH_MAX];
	uint64_t now;

	if (index == r->task && r->mine)
		return r->mine;
	if (p->tf && p->stamp == w->stamp && gp_taskfile_is_good(p->tf, r->uuid, w->id, w->stamp))
		return p->tf;
	now = gp_monotonic_ns();
	if (!p->tf && p->stamp == w->stamp && now < p->retry_ns)
		return NULL;
	peer_drop(p);
	p->stamp = w->stamp;
	p->retry_ns = now + PEER_RETRY_NS;
	if (task_path(r, index, path, sizeof(path)) == 0)
		gp_taskfile_open_ro(path, r->uuid, w->id, w->stamp, &p->tf);
	return p->tf;
}

int gp_region_peer(struct gp_region *r, int index, struct gp_region_peer *ret)
{
	struct who w;
	int err;

	if (!r || index < 0 || index >= GP_REGION_TASKS)
		return -EINVAL;
	err = who_at(r, index, &w);
	if (err < 0)
		return err;
	pthread_mutex_lock(&r->peers_lock);
	ret->tf = peer_of(r, index, &w);
	pthread_mutex_unlock(&r->peers_lock);
	ret->limits = w.limits;
	return 0;
}

struct gp_taskfile *gp_region_mine(struct gp_region *r, int *ret_index)
{
	if (ret_index)
		*ret_index = r ? r->task : -1;
	return r ? r->mine : NULL;
}

/* ---- the directory ------------------------------------------------------- */

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

/* ---- the task table's file (not managed) ---------------------------------- */

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
static int file_map(const char *path, const char *uuid, uint64_t total, struct shared **ret)
{
	struct region_new n = { uuid, total };
	struct gp_shfile_layout layout = {
		REGION_MAGIC, REGION_VERSION, sizeof(struct shared), 0600,
		shared_init, shared_matches, &n,
	};

	return gp_shfile_open(path, &layout, total > 0 ? GP_SHFILE_CREATE : 0, (void **)ret);
}

static int device_path(const char *dir, const char *uuid, const char *kind, char *buf,
		       size_t len)
{
	int n = snprintf(buf, len, "%s/device-%s.%s", dir, uuid, kind);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- opening --------------------------------------------------------------- */

static struct gp_region *handle_new(const char *dir, const char *uuid)
{
	struct gp_region *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	snprintf(g->dir, sizeof(g->dir), "%s", dir);
	snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
	g->task = -1;
	g->slot = -1;
	pthread_mutex_init(&g->peers_lock, NULL);
	return g;
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
	g = handle_new(d, uuid);
	if (!g)
		return -ENOMEM;
	r = gp_limits_open(d, uuid, &g->limits);
	if (r == -ENOENT) { /* not managed: the table is the region file */
		g->limits = NULL;
		r = device_path(d, uuid, "region", path, sizeof(path));
		if (r == 0 && total_bytes > 0)
			r = dir_prepare(d, kind);
		if (r == 0)
			r = file_map(path, uuid, total_bytes, &g->sh);
	}
	if (r < 0) {
		gp_region_close(g);
		return r;
	}
	*ret_region = g;
	return 0;
}

void gp_region_close(struct gp_region *r)
{
	if (!r)
		return;
	for (int i = 0; i < GP_REGION_TASKS; i++)
		peer_drop(&r->peer[i]);
	gp_taskfile_unmap(r->mine);
	gp_limits_close(r->limits);
	if (r->sh)
		munmap(r->sh, sizeof(*r->sh));
	pthread_mutex_destroy(&r->peers_lock);
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

	if (!uuid_is_valid(uuid))
		return false;
	dir_resolve(dir, d, sizeof(d));
	return device_path(d, uuid, "limits", path, sizeof(path)) == 0 &&
	       access(path, F_OK) == 0;
}

/* ---- joining (not managed) ------------------------------------------------- */

static uint64_t stamp_new(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s))
		s = gp_monotonic_ns() ^ ((uint64_t)getpid() << 32);
	return s ? s : 1;
}

/* Does any live process of entry tix's task hold a slot in its file? */
static bool task_has_live(struct gp_region *r, int tix)
{
	struct who w;
	const struct gp_taskfile *tf;
	unsigned procs = 0;

	if (who_at(r, tix, &w) < 0)
		return false;
	pthread_mutex_lock(&r->peers_lock);
	tf = peer_of(r, tix, &w);
	if (tf)
		gp_taskfile_mem_used(tf, UINT64_MAX, &procs);
	pthread_mutex_unlock(&r->peers_lock);
	return procs > 0;
}

/* Makes a task; the caller holds the region mutex. An entry left half
 * made by a creator that died is still free and is simply made again.
 * When the table is full, tasks whose processes are all gone make room. */
static int task_create(struct gp_region *r, const char *id, const struct gp_task_limits *l)
{
	struct shared *sh = r->sh;

	for (int attempt = 0; attempt < 2; attempt++) {
		for (int t = 0; t < GP_REGION_TASKS; t++) {
			struct task *k = &sh->task[t];

			if (atomic_load(&k->state) != TASK_FREE)
				continue;
			memset(k->id, 0, sizeof(k->id));
			memcpy(k->id, id, strlen(id));
			limits_store(k, l);
			atomic_store(&k->generation, 1);
			atomic_store(&k->stamp, stamp_new());
			atomic_store(&k->state, TASK_ACTIVE);
			return t;
		}
		for (int t = 0; t < GP_REGION_TASKS; t++) /* retire the unused */
			if (atomic_load(&sh->task[t].state) == TASK_ACTIVE && !task_has_live(r, t))
				atomic_store(&sh->task[t].state, TASK_FREE);
	}
	return -ENOSPC;
}

/* Finds or makes task id in the region file; the index. A task none of
 * whose processes is alive starts afresh with the joiner's limits; a
 * running one keeps its own. */
static int unmanaged_task(struct gp_region *r, const char *id, const struct gp_task_limits *l)
{
	struct who w;
	int t, err = gp_pshared_mutex_lock(&r->sh->tasks_lock);

	if (err < 0)
		return err;
	t = index_of(r, id, &w);
	if (t < 0) {
		t = task_create(r, id, l);
	} else if (!task_has_live(r, t)) {
		struct task *k = &r->sh->task[t];
		int locked = gp_pshared_mutex_lock(&k->lock) == 0;

		limits_store(k, l);
		atomic_fetch_add(&k->generation, 1);
		if (locked)
			pthread_mutex_unlock(&k->lock);
	}
	pthread_mutex_unlock(&r->sh->tasks_lock);
	return t;
}

/* Not managed: the folder of the task files, made by the first joiner
 * (mode 0755 as a directory of the user's own; the files in it are 0600). */
static int tasks_dir_make(const struct gp_region *r)
{
	char d[PATH_MAX];
	int err = gp_taskfile_dir(r->dir, r->uuid, d, sizeof(d));

	if (err == 0 && mkdir(d, 0755) < 0 && errno != EEXIST)
		err = -errno;
	return err;
}

/* ---- joining (managed) ------------------------------------------------------ */

/* The table's entry for id, when secret is the task's. */
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
	struct gp_limits_entry e = { 0 };
	char path[PATH_MAX];
	struct who w;
	int t, s, err;

	if (!r || !ret_slot || !id_is_valid(id))
		return -EINVAL;
	if (r->task >= 0 && r->joiner != getpid()) {
		/* A child of the process that joined: it joins on its own (the
		 * mapping is the parent's too, and stays until exec or exit). */
		r->task = r->slot = -1;
		r->mine = NULL;
	}
	if (r->task >= 0) /* joined already: the same task again, or none */
		return who_at(r, r->task, &w) == 0 && strcmp(w.id, id) == 0 ? (*ret_slot = r->slot, 0)
									 : -EEXIST;
	if (r->limits) {
		err = join_check(r, id, secret, &t, &e);
		if (err < 0)
			return err;
		r->key = e.key;
		r->stamp = e.secret;
	} else {
		if (!limits_are_valid(limits, r->sh->total_bytes))
			return -EINVAL;
		t = unmanaged_task(r, id, limits);
		if (t < 0)
			return t;
		r->stamp = atomic_load(&r->sh->task[t].stamp);
	}
	err = r->limits ? 0 : tasks_dir_make(r);
	if (err == 0)
		err = task_path(r, t, path, sizeof(path));
	if (err == 0)
		err = gp_taskfile_open(path, r->uuid, id, r->stamp, !r->limits, &r->mine);
	if (err < 0)
		return err == -ENOENT ? -ESTALE : err;
	gp_taskfile_reclaim(r->mine); /* what the dead held counts no more */
	s = gp_taskfile_join(r->mine);
	if (s < 0) {
		gp_taskfile_unmap(r->mine);
		r->mine = NULL;
		return s == -EUSERS ? -ENOSPC : s;
	}
	pthread_mutex_lock(&r->peers_lock);
	peer_drop(&r->peer[t]); /* read from now on through our own mapping */
	pthread_mutex_unlock(&r->peers_lock);
	r->task = t;
	r->slot = s;
	r->joiner = getpid();
	*ret_slot = s;
	return 0;
}

int gp_region_join(struct gp_region *r, const char *id,
		   const struct gp_task_limits *limits, int *ret_slot)
{
	return gp_region_join_as(r, id, NULL, limits, ret_slot);
}

/* ---- admission ----------------------------------------------------------------- */

/* The slot, when it is in use by the calling process. */
static struct gp_taskfile_slot *slot_mine(struct gp_region *r, int slot)
{
	struct gp_taskfile_slot *s;

	if (!r || !r->mine || slot != r->slot || slot < 0 || slot >= GP_TASK_PROCS)
		return NULL;
	s = &r->mine->slot[slot];
	return gp_shfile_slot_pid(&s->id) == getpid() ? s : NULL;
}

/* The limits of this process's task now. Managed: from the entry its
 * join found, which must still be the task's and the secret's. */
static int own_limits(struct gp_region *r, struct gp_task_limits *ret)
{
	struct gp_limits_entry e;
	int err;

	if (!r->limits) {
		limits_load(&r->sh->task[r->task], ret);
		return 0;
	}
	err = gp_limits_get(r->limits, r->task, &e);
	if (err == -ENOENT || (err == 0 && (e.key != r->key || e.secret != r->stamp)))
		return -EPERM;
	if (err < 0)
		return err;
	*ret = e.limits;
	return 0;
}

/* Bytes held by the task's claimed slots; for its own processes (no
 * system call: the allocation path). */
static uint64_t mine_claimed(const struct gp_taskfile *tf)
{
	uint64_t used = 0;

	for (int i = 0, n = gp_taskfile_slots(tf); i < n; i++)
		if (gp_shfile_slot_pid(&tf->slot[i].id) > 0)
			used += atomic_load(&tf->slot[i].bytes);
	return used;
}

int gp_region_mem_reserve(struct gp_region *r, int slot, uint64_t bytes)
{
	struct gp_taskfile_slot *s = slot_mine(r, slot);

	if (!s)
		return -EINVAL;
	for (int attempt = 0; attempt < 2; attempt++) {
		struct gp_task_limits l;
		uint64_t limit, used;
		bool fits;
		int err = own_limits(r, &l);

		if (err < 0)
			return err;
		limit = l.mem_bytes ? l.mem_bytes : gp_region_total(r);
		err = gp_pshared_mutex_lock(&r->mine->lock);
		if (err < 0)
			return err;
		used = mine_claimed(r->mine);
		fits = bytes <= limit && used <= limit - bytes;
		if (fits)
			atomic_fetch_add(&s->bytes, bytes);
		pthread_mutex_unlock(&r->mine->lock);
		if (fits)
			return 0;
		gp_taskfile_reclaim(r->mine); /* the dead may hold what we need */
	}
	return -ENOMEM;
}

void gp_region_mem_release(struct gp_region *r, int slot, uint64_t bytes)
{
	struct gp_taskfile_slot *s = slot_mine(r, slot);
	uint64_t held;

	if (!s)
		return;
	held = atomic_load(&s->bytes);
	while (!atomic_compare_exchange_weak(&s->bytes, &held, held > bytes ? held - bytes : 0))
		;
}

int gp_region_limits(struct gp_region *r, int slot, struct gp_task_limits *ret)
{
	struct gp_task_limits l = { 0 };
	int err;

	*ret = l;
	if (!r || !r->mine || slot != r->slot)
		return -ENOENT;
	err = own_limits(r, &l);
	if (err == 0)
		*ret = l;
	return err;
}

uint64_t gp_region_task_used(struct gp_region *r, int slot)
{
	uint64_t used;
	int locked;

	if (!r || !r->mine || slot != r->slot)
		return 0;
	/* Under the task's mutex, as admission sums: a sum read without it
	 * could take one process's bytes before it gave them back and
	 * another's after it took them, and pass the limit. */
	locked = gp_pshared_mutex_lock(&r->mine->lock) == 0;
	used = mine_claimed(r->mine);
	if (locked)
		pthread_mutex_unlock(&r->mine->lock);
	return used;
}

int gp_region_task_pids(struct gp_region *r, int slot, pid_t *out, int max)
{
	int n = 0;

	if (!r || !r->mine || slot != r->slot)
		return -EINVAL;
	for (int i = 0, hi = gp_taskfile_slots(r->mine); i < hi; i++) {
		pid_t pid = gp_shfile_slot_pid(&r->mine->slot[i].id);

		if (pid <= 0)
			continue;
		if (n < max)
			out[n] = pid;
		n++;
	}
	return n;
}

void gp_region_reclaim(struct gp_region *r)
{
	if (r && r->mine)
		gp_taskfile_reclaim(r->mine);
}

void gp_region_charge(struct gp_region *r, int slot, uint64_t ns)
{
	if (r && r->mine && slot == r->slot)
		atomic_fetch_add(&r->mine->used_ns, ns);
}

/* ---- reading and changing limits --------------------------------------------- */

/* Not managed: changes the region's entry of task id. */
static int region_task_set(struct gp_region *r, const char *id, const struct gp_task_limits *limits)
{
	struct who w;
	struct task *t;
	int tix, err;

	/* The region mutex keeps the task from being freed under us. */
	err = gp_pshared_mutex_lock(&r->sh->tasks_lock);
	if (err < 0)
		return err;
	tix = index_of(r, id, &w);
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

int gp_region_set(struct gp_region *r, const char *id, const struct gp_task_limits *limits)
{
	if (!r || !id_is_valid(id) || !limits_are_valid(limits, gp_region_total(r)))
		return -EINVAL;
	if (!r->limits)
		return region_task_set(r, id, limits);
	return gp_limits_put(r->limits, id, NULL, limits);
}

/* Task index i as `region ls` shows it: its limits, and what its live
 * processes hold and used, from its file (when it has a good one). */
static void info_of(struct gp_region *r, int i, const struct who *w, struct gp_task_info *info)
{
	const struct gp_taskfile *tf;

	memset(info, 0, sizeof(*info));
	memcpy(info->id, w->id, sizeof(info->id));
	info->limits = w->limits;
	info->generation = w->generation;
	info->managed = r->limits != NULL;
	pthread_mutex_lock(&r->peers_lock);
	tf = peer_of(r, i, w);
	if (tf) {
		info->mem_used = gp_taskfile_mem_used(tf, gp_region_total(r), &info->processes);
		info->used_ns = atomic_load(&tf->used_ns);
	}
	pthread_mutex_unlock(&r->peers_lock);
}

int gp_region_tasks(struct gp_region *r, struct gp_task_info *out, int max)
{
	int n = 0;

	for (int i = 0; i < GP_REGION_TASKS; i++) {
		struct gp_task_info spare;
		struct who w;

		if (who_at(r, i, &w) < 0)
			continue;
		info_of(r, i, &w, n < max ? &out[n] : &spare);
		n++;
	}
	return n;
}

/* ---- managed devices: the agent's side --------------------------------------- */

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

/* Removes the region file and the arbiter file of earlier versions, which
 * every task could write: a managed device has neither now. */
static int legacy_remove(const char *dir, const char *uuid)
{
	static const char *const kinds[] = { "region", "sched" };
	char path[PATH_MAX];
	int r = 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (device_path(dir, uuid, kinds[i], path, sizeof(path)) == 0 &&
		    unlink(path) < 0 && errno != ENOENT && r == 0)
			r = -errno;
	return r;
}

/* Removes every task file of the device (`all`, and their folder), or
 * those whose index has no task in the table (a task forgotten by an
 * agent that died before removing its file; the tasks the table has keep
 * theirs). */
static void task_files_remove(const char *dir, const char *uuid, bool all)
{
	struct gp_region *r = NULL;
	char path[PATH_MAX];
	struct who w;

	if (!all && gp_region_open(dir, uuid, 0, &r) < 0)
		return;
	for (int k = 0; k < GP_REGION_TASKS; k++)
		if ((all || (r->limits && who_at(r, k, &w) == -ENOENT)) &&
		    gp_taskfile_path(dir, uuid, k, path, sizeof(path)) == 0)
			unlink(path);
	gp_region_close(r);
	if (all && gp_taskfile_dir(dir, uuid, path, sizeof(path)) == 0)
		rmdir(path);
}

int gp_region_prepare(const char *dir, const char *uuid, uint64_t total_bytes)
{
	char d[PATH_MAX], tasks[PATH_MAX];
	int r;

	if (!uuid_is_valid(uuid) || total_bytes == 0)
		return -EINVAL;
	dir_resolve(dir, d, sizeof(d));
	r = dir_own(d);
	if (r == 0)
		r = legacy_remove(d, uuid);
	if (r == 0)
		r = gp_taskfile_dir(d, uuid, tasks, sizeof(tasks));
	if (r == 0)
		r = dir_own(tasks);
	if (r == 0)
		r = gp_limits_prepare(d, uuid, total_bytes);
	if (r == 0)
		task_files_remove(d, uuid, false);
	return r;
}

int gp_region_remove(const char *dir, const char *uuid)
{
	char d[PATH_MAX], path[PATH_MAX];
	int r;

	if (!uuid_is_valid(uuid))
		return -EINVAL;
	dir_resolve(dir, d, sizeof(d));
	/* The limits table first, so that nobody takes it for managed meanwhile. */
	r = device_path(d, uuid, "limits", path, sizeof(path));
	if (r == 0 && unlink(path) < 0 && errno != ENOENT)
		r = -errno;
	if (r == 0)
		r = legacy_remove(d, uuid);
	task_files_remove(d, uuid, true);
	return r;
}

/* Who owns the file at path now, and its mode: a file made anew keeps
 * them (a damaged file still has them). */
static bool owner_now(const char *path, struct gp_task_owner *ret, mode_t *ret_mode)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	*ret = (struct gp_task_owner){ st.st_uid, st.st_gid };
	*ret_mode = st.st_mode & 0777;
	return true;
}

/* Makes task index k's file for task w anew (owner as
 * gp_region_task_file_make). */
static int file_make(struct gp_region *r, int k, const struct who *w,
		     const struct gp_task_owner *owner)
{
	struct gp_task_owner kept = { (uid_t)-1, (gid_t)-1 };
	char path[PATH_MAX];
	mode_t mode;
	int err = task_path(r, k, path, sizeof(path));

	if (err < 0)
		return err;
	/* The task's user alone writes it; with no user known (tasks of
	 * several, one group), the group does, as every task of it could. */
	if (owner)
		mode = owner->uid == (uid_t)-1 ? 0660 : 0644;
	else if (owner_now(path, &kept, &mode))
		owner = &kept;
	else
		owner = &kept, mode = 0660;
	return gp_taskfile_make(path, r->uuid, w->id, w->stamp, owner->uid, owner->gid, mode);
}

/* Makes task index k's file for task w unless a good one is there (a
 * task admitted again while it runs keeps its processes' slots). */
static int file_ensure(struct gp_region *r, int k, const struct who *w,
		       const struct gp_task_owner *owner)
{
	static const struct gp_task_owner unknown = { (uid_t)-1, (gid_t)-1 };
	const struct gp_taskfile *tf = NULL;
	char path[PATH_MAX];
	int err = task_path(r, k, path, sizeof(path));

	if (err < 0)
		return err;
	if (gp_taskfile_open_ro(path, r->uuid, w->id, w->stamp, &tf) == 0) {
		gp_taskfile_unmap(tf);
		return 0;
	}
	/* Never the owner of what is there: an earlier task's file. */
	return file_make(r, k, w, owner ? owner : &unknown);
}

int gp_region_task_admit(struct gp_region *r, const char *id, const char *secret,
			 const struct gp_task_limits *limits, const struct gp_task_owner *owner)
{
	uint64_t hash;
	struct who w;
	int err, k;

	if (!r || !id_is_valid(id) || !limits_are_valid(limits, gp_region_total(r)) ||
	    gp_limits_secret_hash(r->uuid, id, secret, &hash) < 0)
		return -EINVAL;
	if (!r->limits)
		return -EOPNOTSUPP;
	err = gp_limits_put(r->limits, id, &hash, limits);
	if (err < 0)
		return err;
	k = index_of(r, id, &w);
	err = k < 0 ? k : file_ensure(r, k, &w, owner);
	if (err < 0)
		gp_limits_forget(r->limits, id); /* no file: no task */
	return err;
}

int gp_region_task_file_make(struct gp_region *r, const char *id,
			     const struct gp_task_owner *owner)
{
	struct who w;
	int k;

	if (!r || !r->limits || !id_is_valid(id))
		return -EINVAL;
	k = index_of(r, id, &w);
	return k < 0 ? k : file_make(r, k, &w, owner);
}

int gp_region_task_forget(struct gp_region *r, const char *id)
{
	char path[PATH_MAX];
	struct who w;
	int k, err;

	if (!r || !id_is_valid(id))
		return -EINVAL;
	if (!r->limits)
		return -EOPNOTSUPP;
	k = index_of(r, id, &w);
	err = gp_limits_forget(r->limits, id);
	if (err == 0 && k >= 0 && task_path(r, k, path, sizeof(path)) == 0)
		unlink(path);
	return err;
}

/* Task id's file, mapped read-only through the peers (NULL: none good);
 * the caller holds peers_lock. */
static const struct gp_taskfile *file_of(struct gp_region *r, const char *id, struct who *w,
					 int *ret_index)
{
	int k = index_of(r, id, w);

	if (ret_index)
		*ret_index = k;
	return k < 0 ? NULL : peer_of(r, k, w);
}

/* Why task w's file (index k) is not good, from a mapping of its own. */
static int file_wrong(struct gp_region *r, int k, const struct who *w, char *why, size_t len)
{
	const struct gp_taskfile *tf = NULL;
	char path[PATH_MAX];
	int err = task_path(r, k, path, sizeof(path));

	if (err == 0)
		err = gp_taskfile_open_ro(path, r->uuid, w->id, w->stamp, &tf);
	if (err == -ENOENT || err == -ESTALE) {
		snprintf(why, len, "%s", err == -ENOENT ? "it is gone"
						       : "it is not a task file's any more (overwritten)");
		return -EBADMSG;
	}
	if (err < 0)
		return err;
	err = gp_taskfile_check(tf, r->uuid, w->id, w->stamp, gp_region_total(r), why, len);
	gp_taskfile_unmap(tf);
	return err;
}

int gp_region_task_check(struct gp_region *r, const char *id, char *why, size_t len)
{
	const struct gp_taskfile *tf;
	struct who w;
	int k, err;

	if (!r || !id_is_valid(id))
		return -EINVAL;
	/* Through the peers' mapping: no system call while the file is good. */
	pthread_mutex_lock(&r->peers_lock);
	tf = file_of(r, id, &w, &k);
	err = tf ? gp_taskfile_check(tf, r->uuid, w.id, w.stamp, gp_region_total(r), why, len)
		 : k;
	pthread_mutex_unlock(&r->peers_lock);
	if (!tf && k >= 0)
		err = file_wrong(r, k, &w, why, len);
	return err;
}

int gp_region_task_path(struct gp_region *r, const char *id, char *buf, size_t len)
{
	struct who w;
	int k;

	if (!r || !id_is_valid(id))
		return -EINVAL;
	k = index_of(r, id, &w);
	return k < 0 ? k : task_path(r, k, buf, len);
}

int gp_region_tasks_dir(const char *dir, const char *uuid, char *buf, size_t len)
{
	char d[PATH_MAX];

	if (!uuid_is_valid(uuid))
		return -EINVAL;
	dir_resolve(dir, d, sizeof(d));
	return gp_taskfile_dir(d, uuid, buf, len);
}

bool gp_region_task_has_process(struct gp_region *r, const char *id, pid_t pid,
				uint64_t start)
{
	const struct gp_taskfile *tf;
	struct who w;
	bool has;

	if (!r || !id_is_valid(id))
		return false;
	pthread_mutex_lock(&r->peers_lock);
	tf = file_of(r, id, &w, NULL);
	has = tf && gp_taskfile_has_process(tf, pid, start);
	pthread_mutex_unlock(&r->peers_lock);
	return has;
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
