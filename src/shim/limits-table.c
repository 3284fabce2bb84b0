/* limits-table.c — the limits table of one device (see limits-table.h).
 *
 * The file is a base/shfile.h file, made complete under a temporary name
 * (gp_shfile_make) and renamed into place, and opened read-only by tasks
 * (so not through gp_shfile_open): its head (magic, version and size, in
 * the same places as in every shared file), the device's UUID and
 * memory, the writers' mutex, and
 * GP_REGION_TASKS entries. Every field that readers load is an atomic
 * of at most 64 bits, so that a read-only mapping serves (loads only; no
 * read-modify-write ever touches it from a reader).
 *
 * The seqlock of an entry, and its memory ordering (C11):
 *   writer (holding the mutex):  seq = s + 1 (relaxed); release fence;
 *                                the fields (relaxed stores);
 *                                seq = s + 2 (release store)
 *   reader:                      s1 = seq (acquire load), retry while odd;
 *                                the fields (relaxed loads); acquire fence;
 *                                s2 = seq (relaxed load); good when s1 == s2
 * If the reader loaded any field stored after the writer's fence, its
 * fence synchronises with the writer's, so its s2 sees s + 1 or later and
 * the read is retried; if s1 is the s + 2 of the final release store,
 * every field of that update is visible. A writer that died inside (the
 * sequence stays odd) is found by the next writer, which holds the mutex
 * and so knows nobody else is writing: it frees that entry (a half update
 * is not a task's limits; the agent admits the task again). Readers that
 * meet an odd sequence spin briefly, then yield, and give up after 50 ms
 * (-EAGAIN): callers then refuse, never run unlimited. Nothing here makes
 * a system call on the readers' side unless a writer is in the middle of
 * an update of that very entry. */
#include "shim/limits-table.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/clock.h"
#include "base/pshared.h"
#include "base/sha256.h"
#include "base/shfile.h"

#define LIMITS_MAGIC 0x3130746d6c706721ULL      /* "!gplmt01" */
#define LIMITS_VERSION 1
#define READ_SPINS 1024
#define READ_WAIT_NS 50000000ULL
#define ID_WORDS (GP_TASK_ID_MAX / 8)

_Static_assert(GP_TASK_ID_MAX % 8 == 0, "task ids are copied in 64-bit words");

struct entry {
	_Atomic uint32_t seq;           /* odd: being written */
	uint32_t unused;
	_Atomic uint64_t key;           /* gp_limits_key(id); 0: free */
	_Atomic uint64_t secret;        /* hash of the task's secret */
	_Atomic uint64_t mem_bytes;
	_Atomic uint32_t compute;
	_Atomic uint32_t priority;
	_Atomic uint32_t isolation;
	uint32_t unused2;
	_Atomic uint64_t generation;
	_Atomic uint64_t id[ID_WORDS];  /* NUL-padded */
};

struct table {
	struct gp_shfile_head head;     /* magic set before the file gets its name */
	char uuid[GP_UUID_STR_MAX];
	_Atomic uint64_t total_bytes;
	pthread_mutex_t lock;           /* writers only */
	struct entry entry[GP_REGION_TASKS];
};

struct gp_limits {
	const struct table *t;          /* PROT_READ */
	struct table *rw;               /* writers: mapped at the first write */
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
};

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

static int table_path(const char *dir, const char *uuid, const char *suffix, char *buf,
		      size_t len)
{
	int n = snprintf(buf, len, "%s/device-%s.limits%s", dir, uuid, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- keys and secrets ------------------------------------------------ */

uint64_t gp_limits_key(const char *id)
{
	return gp_hash_bytes(id, strlen(id)) | 1;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool gp_task_secret_is_valid(const char *secret)
{
	size_t len = secret ? strnlen(secret, GP_TASK_SECRET_MAX + 1) : 0;

	if (len < GP_TASK_SECRET_MIN || len > GP_TASK_SECRET_MAX || len % 2)
		return false;
	for (size_t i = 0; i < len; i++)
		if (hex_digit(secret[i]) < 0)
			return false;
	return true;
}

int gp_limits_secret_hash(const char *uuid, const char *id, const char *secret,
			  uint64_t *ret_hash)
{
	static const char domain[] = "gpupool task secret 1";
	unsigned char bytes[GP_TASK_SECRET_MAX / 2], digest[GP_SHA256_BYTES];
	size_t len;
	struct gp_sha256 s;
	uint64_t h = 0;

	if (!uuid || !id || !gp_task_secret_is_valid(secret))
		return -EINVAL;
	len = strlen(secret) / 2;
	for (size_t i = 0; i < len; i++)
		bytes[i] = (unsigned char)(hex_digit(secret[2 * i]) << 4 | hex_digit(secret[2 * i + 1]));
	/* The NULs keep (uuid, id, secret) apart: no two triples hash alike
	 * by moving characters from one to the next. */
	gp_sha256_init(&s);
	gp_sha256_update(&s, domain, sizeof(domain));
	gp_sha256_update(&s, uuid, strlen(uuid) + 1);
	gp_sha256_update(&s, id, strlen(id) + 1);
	gp_sha256_update(&s, bytes, len);
	gp_sha256_final(&s, digest);
	for (int i = 0; i < 8; i++)
		h = h << 8 | digest[i];
	*ret_hash = h ? h : 1;
	explicit_bzero(bytes, sizeof(bytes));
	return 0;
}

/* ---- reading --------------------------------------------------------- */

static void snapshot(const struct entry *e, struct gp_limits_entry *ret)
{
	uint64_t words[ID_WORDS];

	ret->key = atomic_load_explicit(&e->key, memory_order_relaxed);
	ret->secret = atomic_load_explicit(&e->secret, memory_order_relaxed);
	ret->limits.mem_bytes = atomic_load_explicit(&e->mem_bytes, memory_order_relaxed);
	ret->limits.compute = atomic_load_explicit(&e->compute, memory_order_relaxed);
	ret->limits.priority = atomic_load_explicit(&e->priority, memory_order_relaxed);
	ret->limits.isolation =
		(enum gp_isolation)atomic_load_explicit(&e->isolation, memory_order_relaxed);
	ret->generation = atomic_load_explicit(&e->generation, memory_order_relaxed);
	for (int i = 0; i < ID_WORDS; i++)
		words[i] = atomic_load_explicit(&e->id[i], memory_order_relaxed);
	memcpy(ret->id, words, sizeof(ret->id));
	ret->id[sizeof(ret->id) - 1] = '\0';
}

/* One consistent read of e (see the top of the file). */
static int entry_read(const struct entry *e, struct gp_limits_entry *ret)
{
	uint64_t deadline = 0;

	for (unsigned i = 0;; i++) {
		uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);

		if (!(s1 & 1)) {
			snapshot(e, ret);
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&e->seq, memory_order_relaxed) == s1)
				return 0;
		}
		if (i < READ_SPINS) {
			cpu_relax();
			continue;
		}
		if (deadline == 0)
			deadline = gp_monotonic_ns() + READ_WAIT_NS;
		else if (gp_monotonic_ns() > deadline)
			return -EAGAIN;
		sched_yield();
	}
}

int gp_limits_get(const struct gp_limits *l, int index, struct gp_limits_entry *ret)
{
	struct gp_limits_entry e;
	int r;

	if (!l || index < 0 || index >= GP_REGION_TASKS)
		return -EINVAL;
	r = entry_read(&l->t->entry[index], &e);
	if (r < 0)
		return r;
	if (e.key == 0)
		return -ENOENT;
	*ret = e;
	return 0;
}

int gp_limits_find(const struct gp_limits *l, const char *id, int *ret_index,
		   struct gp_limits_entry *ret)
{
	uint64_t key = gp_limits_key(id);

	for (int i = 0; i < GP_REGION_TASKS; i++) {
		struct gp_limits_entry e;

		if (atomic_load_explicit(&l->t->entry[i].key, memory_order_relaxed) != key ||
		    gp_limits_get(l, i, &e) < 0 || e.key != key || strcmp(e.id, id) != 0)
			continue;
		if (ret_index)
			*ret_index = i;
		*ret = e;
		return 0;
	}
	return -ENOENT;
}

uint64_t gp_limits_total(const struct gp_limits *l)
{
	return atomic_load(&l->t->total_bytes);
}

/* ---- opening --------------------------------------------------------- */

/* What a new table is made with. */
struct table_new {
	const char *uuid;
	uint64_t total;
};

static int table_init(void *map, const void *arg)
{
	const struct table_new *n = arg;
	struct table *t = map;

	snprintf(t->uuid, sizeof(t->uuid), "%s", n->uuid);
	atomic_store(&t->total_bytes, n->total);
	return gp_pshared_mutex_init(&t->lock);
}

/* The table's layout; mode 0644: the maker writes, tasks read. */
static struct gp_shfile_layout table_layout(const struct table_new *n)
{
	return (struct gp_shfile_layout){
		LIMITS_MAGIC, LIMITS_VERSION, sizeof(struct table), 0644, table_init, NULL, n,
	};
}

/* Is the table in this mapping of our version and of device uuid? */
static bool table_is_ours(const struct table *t, const char *uuid)
{
	struct gp_shfile_layout layout = table_layout(NULL);

	return gp_shfile_is(t, &layout) && strncmp(t->uuid, uuid, sizeof(t->uuid)) == 0;
}

/* Maps fd (open on a table of at least its size) with `prot`. */
static int table_map(int fd, int prot, void **ret)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(struct table))
		return -EPROTO;
	p = mmap(NULL, sizeof(struct table), prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*ret = p;
	return 0;
}

int gp_limits_open(const char *dir, const char *uuid, struct gp_limits **ret)
{
	struct gp_limits *l;
	struct stat st;
	void *p = NULL;
	int fd, r;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	r = table_path(dir, uuid, "", l->path, sizeof(l->path));
	if (r < 0)
		goto free_handle;
	fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto free_handle;
	}
	/* A table that others than its owner may write keeps nothing. */
	r = fstat(fd, &st) < 0 ? -errno : st.st_mode & 022 ? -EPERM : table_map(fd, PROT_READ, &p);
	close(fd);
	if (r < 0)
		goto free_handle;
	if (!table_is_ours(p, uuid)) {
		r = -EPROTO;
		goto unmap;
	}
	l->t = p;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	*ret = l;
	return 0;
unmap:
	munmap(p, sizeof(struct table));
free_handle:
	free(l);
	return r;
}

void gp_limits_close(struct gp_limits *l)
{
	if (!l)
		return;
	if (l->rw)
		munmap(l->rw, sizeof(*l->rw));
	munmap((void *)l->t, sizeof(*l->t));
	free(l);
}

/* ---- writing --------------------------------------------------------- */

/* The writable mapping of the same file, made at the first write. */
static int writable(struct gp_limits *l, struct table **ret)
{
	struct stat st;
	void *p;
	int fd, r;

	if (l->rw) {
		*ret = l->rw;
		return 0;
	}
	fd = open(l->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == EPERM || errno == EROFS || errno == ELOOP ? -EACCES : -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (st.st_dev != l->dev || st.st_ino != l->ino) {
		close(fd);
		return -ESTALE;
	}
	r = table_map(fd, PROT_READ | PROT_WRITE, &p);
	close(fd);
	if (r < 0)
		return r;
	l->rw = p;
	*ret = p;
	return 0;
}

static void write_begin(struct entry *e)
{
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);

	atomic_store_explicit(&e->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void write_end(struct entry *e)
{
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);

	atomic_store_explicit(&e->seq, s + 1, memory_order_release);
}

static void store_id(struct entry *e, const char *id)
{
	uint64_t words[ID_WORDS] = { 0 };

	memcpy(words, id, strnlen(id, GP_TASK_ID_MAX - 1));
	for (int i = 0; i < ID_WORDS; i++)
		atomic_store_explicit(&e->id[i], words[i], memory_order_relaxed);
}

static void store_limits(struct entry *e, const struct gp_task_limits *l)
{
	atomic_store_explicit(&e->mem_bytes, l->mem_bytes, memory_order_relaxed);
	atomic_store_explicit(&e->compute, l->compute, memory_order_relaxed);
	atomic_store_explicit(&e->priority, l->priority, memory_order_relaxed);
	atomic_store_explicit(&e->isolation, (uint32_t)l->isolation, memory_order_relaxed);
}

/* Empties an entry; the caller is inside its update. */
static void store_free(struct entry *e)
{
	static const struct gp_task_limits none = { 0 };

	atomic_store_explicit(&e->key, 0, memory_order_relaxed);
	atomic_store_explicit(&e->secret, 0, memory_order_relaxed);
	store_limits(e, &none);
	atomic_store_explicit(&e->generation, 0, memory_order_relaxed);
	store_id(e, "");
}

/* Takes the writers' mutex and frees what a writer that died inside left
 * half written (see the top of the file). */
static int writer_lock(struct table *t)
{
	int r = gp_pshared_mutex_lock(&t->lock);

	if (r < 0)
		return r;
	for (int i = 0; i < GP_REGION_TASKS; i++) {
		struct entry *e = &t->entry[i];

		if (!(atomic_load_explicit(&e->seq, memory_order_relaxed) & 1))
			continue;
		store_free(e);
		write_end(e);
	}
	return 0;
}

/* The entry of id, or the first free one (*ret_new), or -1. */
static int entry_of(struct table *t, const char *id, bool *ret_new)
{
	uint64_t key = gp_limits_key(id);
	int free_at = -1;

	for (int i = 0; i < GP_REGION_TASKS; i++) {
		struct gp_limits_entry e;

		snapshot(&t->entry[i], &e);     /* under the mutex: stable */
		if (e.key == key && strcmp(e.id, id) == 0) {
			*ret_new = false;
			return i;
		}
		if (e.key == 0 && free_at < 0)
			free_at = i;
	}
	*ret_new = true;
	return free_at;
}

int gp_limits_put(struct gp_limits *l, const char *id, const uint64_t *secret,
		  const struct gp_task_limits *limits)
{
	struct table *t;
	struct entry *e;
	bool is_new;
	int i, r = writable(l, &t);

	if (r < 0)
		return r;
	r = writer_lock(t);
	if (r < 0)
		return r;
	i = entry_of(t, id, &is_new);
	if (i < 0 || (is_new && !secret)) {
		pthread_mutex_unlock(&t->lock);
		return i < 0 && secret ? -ENOSPC : -ENOENT;
	}
	e = &t->entry[i];
	write_begin(e);
	if (is_new) {
		store_id(e, id);
		atomic_store_explicit(&e->key, gp_limits_key(id), memory_order_relaxed);
		atomic_store_explicit(&e->generation, 0, memory_order_relaxed);
	}
	if (secret)
		atomic_store_explicit(&e->secret, *secret, memory_order_relaxed);
	store_limits(e, limits);
	atomic_store_explicit(&e->generation,
			      atomic_load_explicit(&e->generation, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	write_end(e);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

int gp_limits_forget(struct gp_limits *l, const char *id)
{
	struct table *t;
	bool is_new;
	int i, r = writable(l, &t);

	if (r < 0)
		return r;
	r = writer_lock(t);
	if (r < 0)
		return r;
	i = entry_of(t, id, &is_new);
	if (i >= 0 && !is_new) {
		write_begin(&t->entry[i]);
		store_free(&t->entry[i]);
		write_end(&t->entry[i]);
	}
	pthread_mutex_unlock(&t->lock);
	return i >= 0 && !is_new ? 0 : -ENOENT;
}

/* ---- making the file ------------------------------------------------- */

/* Is the table at path one to keep: ours, of this version and device, a
 * plain file with one link that nobody else can write? Its size is
 * updated when the device's memory changed. */
static bool table_keep(const char *path, const char *uuid, uint64_t total)
{
	struct stat st;
	bool keep = false;
	void *p;
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
	    st.st_uid == geteuid() && !(st.st_mode & 022) &&
	    table_map(fd, PROT_READ | PROT_WRITE, &p) == 0) {
		struct table *t = p;

		keep = table_is_ours(t, uuid);
		if (keep && atomic_load(&t->total_bytes) != total)
			atomic_store(&t->total_bytes, total);
		munmap(p, sizeof(*t));
	}
	if (keep)
		keep = fchmod(fd, 0644) == 0;
	close(fd);
	return keep;
}

/* Writes a new, empty table at tmp (made with O_EXCL, mode exactly 0644). */
static int table_make(const char *tmp, const char *uuid, uint64_t total)
{
	struct table_new n = { uuid, total };
	struct gp_shfile_layout layout = table_layout(&n);
	void *p;
	int r = gp_shfile_make(tmp, &layout, &p);

	if (r == 0)
		gp_shfile_unmap(p, &layout);
	return r;
}

int gp_limits_prepare(const char *dir, const char *uuid, uint64_t total_bytes)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int r = table_path(dir, uuid, "", path, sizeof(path));

	if (r == 0)
		r = table_path(dir, uuid, ".new", tmp, sizeof(tmp));
	if (r < 0)
		return r;
	if (table_keep(path, uuid, total_bytes))
		return 0;
	unlink(tmp);                    /* left by a preparer that died */
	r = table_make(tmp, uuid, total_bytes);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}
