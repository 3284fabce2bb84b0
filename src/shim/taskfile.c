/* taskfile.c — one task's file on one device (see taskfile.h).
 *
 * The file is a base/shfile.h file of one layout. The task's processes
 * map it read and write through gp_shfile_open (which waits for a maker
 * to finish, and, on a device that is not managed, makes or replaces
 * it); readers that are not the task map it read-only and load its words
 * only. The agent makes it under a temporary name and renames it into
 * place, so nobody ever finds it half made on a managed device. */
#include "shim/taskfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/pshared.h"

#define TASKFILE_MAGIC 0x3130736b74706721ULL /* "!gptks01" */
#define TASKFILE_VERSION 1                   /* bump with any change of the layout */

/* Who the file is for: the maker writes it, openers compare it. */
struct taskfile_id {
	const char *uuid, *id;
	uint64_t stamp;
};

static bool names_match(const struct gp_taskfile *tf, const struct taskfile_id *w)
{
	return strncmp(tf->uuid, w->uuid, sizeof(tf->uuid)) == 0 &&
	       strncmp(tf->id, w->id, sizeof(tf->id)) == 0 && tf->stamp == w->stamp;
}

static int taskfile_init(void *map, const void *arg)
{
	const struct taskfile_id *w = arg;
	struct gp_taskfile *tf = map;

	snprintf(tf->uuid, sizeof(tf->uuid), "%s", w->uuid);
	snprintf(tf->id, sizeof(tf->id), "%s", w->id);
	tf->stamp = w->stamp;
	return gp_pshared_mutex_init(&tf->lock);
}

static bool taskfile_matches(const void *map, const void *arg)
{
	return names_match(map, arg);
}

static struct gp_shfile_layout layout_for(const struct taskfile_id *w, mode_t mode)
{
	return (struct gp_shfile_layout){
		TASKFILE_MAGIC, TASKFILE_VERSION, GP_TASKFILE_SIZE, mode,
		taskfile_init,  taskfile_matches, w,
	};
}

int gp_taskfile_dir(const char *dir, const char *uuid, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/device-%s.tasks", dir, uuid);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int gp_taskfile_path(const char *dir, const char *uuid, int index, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/device-%s.tasks/task-%d", dir, uuid, index);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- making and mapping ------------------------------------------------ */

int gp_taskfile_make(const char *path, const char *uuid, const char *id, uint64_t stamp,
		     uid_t uid, gid_t gid, mode_t mode)
{
	struct taskfile_id w = { uuid, id, stamp };
	struct gp_shfile_layout l = layout_for(&w, mode);
	char tmp[PATH_MAX];
	const char *slash = strrchr(path, '/');
	void *map;
	int n, r, old;

	n = snprintf(tmp, sizeof(tmp), "%.*s/.task-tmp-%d", slash ? (int)(slash - path) : 1,
		     slash ? path : ".", (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp); /* a temporary file of a maker of the same pid that died */
	r = gp_shfile_make(tmp, &l, &map);
	if (r < 0)
		return r;
	gp_shfile_unmap(map, &l);
	/* Made with its mode (gp_shfile_make), then given away: a server
	 * without CAP_FOWNER could not change the mode of a file no longer
	 * its own. */
	old = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fchownat(AT_FDCWD, tmp, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 || rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
	} else if (old >= 0) {
		/* The file replaced is no task's any more: whoever still maps it
		 * finds its head gone and opens the new one. */
		pwrite(old, &(uint64_t){ 0 }, sizeof(uint64_t), 0);
	}
	if (old >= 0)
		close(old);
	return r;
}

int gp_taskfile_open(const char *path, const char *uuid, const char *id, uint64_t stamp,
		     bool create, struct gp_taskfile **ret)
{
	struct taskfile_id w = { uuid, id, stamp };
	struct gp_shfile_layout l = layout_for(&w, 0600);
	int r = gp_shfile_open(path, &l, create ? GP_SHFILE_CREATE : 0, (void **)ret);

	return r == -EPROTO || r == -EIO ? -ESTALE : r;
}

int gp_taskfile_open_ro(const char *path, const char *uuid, const char *id, uint64_t stamp,
			const struct gp_taskfile **ret)
{
	struct taskfile_id w = { uuid, id, stamp };
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), r = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < GP_TASKFILE_SIZE)
		r = -ESTALE;
	map = r ? MAP_FAILED : mmap(NULL, GP_TASKFILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (!r && map == MAP_FAILED)
		r = -errno;
	close(fd);
	if (r < 0)
		return r;
	if (!gp_taskfile_is_good(map, w.uuid, w.id, w.stamp)) {
		munmap(map, GP_TASKFILE_SIZE);
		return -ESTALE;
	}
	*ret = map;
	return 0;
}

void gp_taskfile_unmap(const struct gp_taskfile *tf)
{
	if (tf)
		munmap((void *)tf, GP_TASKFILE_SIZE);
}

bool gp_taskfile_is_good(const struct gp_taskfile *tf, const char *uuid, const char *id,
			 uint64_t stamp)
{
	struct taskfile_id w = { uuid, id, stamp };
	struct gp_shfile_layout l = layout_for(&w, 0);

	return tf && gp_shfile_is(tf, &l) && names_match(tf, &w);
}

int gp_taskfile_slots(const struct gp_taskfile *tf)
{
	uint32_t hi = atomic_load(&tf->slots_hi);

	return hi > GP_TASK_PROCS ? GP_TASK_PROCS : (int)hi;
}

/* ---- the task's own processes ------------------------------------------ */

static struct gp_shfile_slots slots_of(const struct gp_taskfile *tf)
{
	return (struct gp_shfile_slots){ (void *)tf->slot, sizeof(tf->slot[0]), GP_TASK_PROCS };
}

/* A free slot's fields, before its claim publishes it. */
static void slot_fill(void *slot, void *arg)
{
	struct gp_taskfile_slot *s = slot;

	(void)arg;
	atomic_store(&s->bytes, 0);
	atomic_store(&s->state, GP_TURN_NONE);
	atomic_store(&s->idle, 0);
	atomic_store(&s->interactive, 0);
	atomic_store(&s->used_ns, 0);
}

int gp_taskfile_join(struct gp_taskfile *tf)
{
	struct gp_shfile_slots t = slots_of(tf);
	pid_t pid = getpid();
	uint64_t start = gp_proc_start_time(pid);
	uint32_t hi;
	int i, err;

	if (start == 0)
		return -ESRCH;
	i = gp_shfile_slot_find(&t, pid, start);
	if (i >= 0)
		return i;
	err = gp_pshared_mutex_lock(&tf->lock); /* claims are serialised */
	if (err < 0)
		return err;
	i = gp_shfile_slot_claim(&t, pid, start, slot_fill, NULL);
	if (i == -EUSERS && gp_shfile_slot_reclaim(&t, 0) > 0)
		i = gp_shfile_slot_claim(&t, pid, start, slot_fill, NULL);
	hi = atomic_load(&tf->slots_hi);
	while (i >= 0 && hi < (uint32_t)i + 1 &&
	       !atomic_compare_exchange_weak(&tf->slots_hi, &hi, (uint32_t)i + 1))
		;
	pthread_mutex_unlock(&tf->lock);
	return i;
}

void gp_taskfile_reclaim(struct gp_taskfile *tf)
{
	struct gp_shfile_slots t = slots_of(tf);

	gp_shfile_slot_reclaim(&t, 0);
}

/* ---- what readers may believe ------------------------------------------ */

/* The pid of slot i's process while it is alive (pid and start time),
 * else 0. A system call per live slot: not for hot paths. */
static pid_t slot_live_pid(const struct gp_taskfile *tf, int i)
{
	const struct gp_shfile_slot *s;

	if (i < 0 || i >= GP_TASK_PROCS)
		return 0;
	s = &tf->slot[i].id;
	return gp_shfile_slot_is_alive(s) ? gp_shfile_slot_pid(s) : 0;
}

uint64_t gp_taskfile_mem_used(const struct gp_taskfile *tf, uint64_t total, unsigned *ret_procs)
{
	uint64_t used = 0;
	unsigned procs = 0;

	for (int i = 0, n = gp_taskfile_slots(tf); i < n; i++) {
		uint64_t bytes;

		if (!slot_live_pid(tf, i))
			continue;
		bytes = atomic_load(&tf->slot[i].bytes);
		used += bytes < total ? bytes : total;
		procs++;
	}
	if (ret_procs)
		*ret_procs = procs;
	return used;
}

bool gp_taskfile_has_process(const struct gp_taskfile *tf, pid_t pid, uint64_t start)
{
	struct gp_shfile_slots t = slots_of(tf);

	return start && gp_shfile_slot_find(&t, pid, start) >= 0;
}

/* What is wrong with slot i, or NULL. */
static const char *slot_wrong(const struct gp_taskfile *tf, int i, uint64_t total)
{
	const struct gp_taskfile_slot *s = &tf->slot[i];

	if (gp_shfile_slot_pid(&s->id) == 0)
		return NULL; /* free: nobody reads it */
	if (atomic_load(&s->bytes) > total)
		return "holds more than the device's memory";
	if (atomic_load(&s->state) > GP_TURN_HOLDING)
		return "has a turn state no process writes";
	return NULL;
}

int gp_taskfile_check(const struct gp_taskfile *tf, const char *uuid, const char *id,
		      uint64_t stamp, uint64_t total, char *why, size_t len)
{
	if (!gp_taskfile_is_good(tf, uuid, id, stamp)) {
		snprintf(why, len, "it is not a task file's any more (overwritten)");
		return -EBADMSG;
	}
	if (atomic_load(&tf->slots_hi) > GP_TASK_PROCS) {
		snprintf(why, len, "its count of slots is %u, over %d",
			 (unsigned)atomic_load(&tf->slots_hi), GP_TASK_PROCS);
		return -EBADMSG;
	}
	for (int i = 0; i < GP_TASK_PROCS; i++) {
		const char *wrong = slot_wrong(tf, i, total);

		if (wrong) {
			snprintf(why, len, "process slot %d %s", i, wrong);
			return -EBADMSG;
		}
	}
	return 0;
}
