/* agent.c — this node's devices and running tasks: start, stop, reap,
 * live changes, sampling (agent.h). Who a task runs as is identity.c's
 * business; the verifier's thread is watch.c's. */
#include "agent/agent.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent-impl.h"
#include "base/hash.h"
#include "base/logfile.h"
#include "base/uidrange.h"
#include "base/user.h"

#define CGROUP_EMPTY_WAIT_MS 2000 /* for a killed task's cgroup to empty */
#define MARK_CLAIMED "unstarted"  /* the target of a start mark a later agent claimed */

uint64_t gp_agent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void gp_agent_task_file(const struct gp_agent *a, int64_t task, const char *what, char *buf,
			size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/tasks/task-%" PRId64 ".%s", a->run_dir, task, what) >=
	    len)
		buf[0] = '\0';
}

/* A task's status and FIFO there. */
static void task_pipes_remove(const struct gp_agent *a, int64_t task)
{
	char path[PATH_MAX];

	gp_agent_task_file(a, task, "status", path, sizeof(path));
	unlink(path);
	gp_agent_task_file(a, task, "fifo", path, sizeof(path));
	unlink(path);
}

/* A task's files there, its start mark too, when it is over. */
static void task_files_remove(const struct gp_agent *a, int64_t task)
{
	char path[PATH_MAX];

	task_pipes_remove(a, task);
	gp_agent_task_file(a, task, "start", path, sizeof(path));
	unlink(path);
}

/* The code a task's keeper left: 0..255, or -1 when there is none. */
static int task_status(const struct gp_agent *a, int64_t task)
{
	char path[PATH_MAX], text[16] = "";
	int code = -1;
	FILE *in;

	gp_agent_task_file(a, task, "status", path, sizeof(path));
	in = fopen(path, "re");
	if (in) {
		if (!fgets(text, sizeof(text), in) || sscanf(text, "%d", &code) != 1)
			code = -1;
		fclose(in);
	}
	return code;
}

struct running *gp_agent_running(struct gp_agent *a, int64_t id)
{
	for (int i = 0; i < a->tasks; i++)
		if (a->task[i].spec.id == id)
			return &a->task[i];
	return NULL;
}

int gp_agent_task_of(void *agent, pid_t pid, int64_t *ret_task)
{
	struct gp_agent *a = agent;
	pid_t pgid;
	int r = -ENOENT;

	if (a->cgroups)
		return gp_cgroups_task_of(a->cgroups, pid, ret_task);
	pgid = getpgid(pid);
	pthread_mutex_lock(&a->lock);
	for (int i = 0; pgid > 0 && i < a->tasks; i++)
		if (a->task[i].pgid == pgid) {
			*ret_task = a->task[i].spec.id;
			r = 0;
		}
	pthread_mutex_unlock(&a->lock);
	return r;
}

/* ---- set-up --------------------------------------------------------------- */

/* The cgroups, where the machine has them; else why not. */
static void cgroups_open(struct gp_agent *a)
{
	char tag[32];
	int left = 0;

	if (a->o.cgroup && strcmp(a->o.cgroup, "off") == 0) {
		snprintf(a->cgroup_why, sizeof(a->cgroup_why), "cgroups are off (--cgroup off)");
		return;
	}
	snprintf(tag, sizeof(tag), "%08x", (unsigned)gp_hash_bytes(a->run_dir, strlen(a->run_dir)));
	if (gp_cgroups_open(a->o.cgroup, tag, &a->cgroups, &left, a->cgroup_why,
			    sizeof(a->cgroup_why)) < 0) {
		a->cgroups = NULL;
		return;
	}
	gp_cgroups_limit(a->cgroups, &(struct gp_cgroup_limits){ .memory_max = a->o.memory_max,
								  .pids_max = a->o.pids_max });
	if (left)
		snprintf(a->cgroup_why, sizeof(a->cgroup_why),
			 "found %d task(s) a previous server left, to adopt or stop", left);
}

/* Is path in /tmp or /dev/shm, which each task has of its own? */
static bool in_task_tmp(const char *path)
{
	return path && (!strncmp(path, "/tmp/", 5) || !strncmp(path, "/dev/shm/", 9));
}

/* As root: whether tasks get their own /tmp, /dev/shm, $HOME and /proc
 * (launcher.h), as asked and as this machine allows (else why not); the
 * run directory and the interposer must then lie outside /tmp, or tasks
 * could not reach them: where they do not, tasks keep the machine's /tmp,
 * and why is said. */
static void mounts_open(struct gp_agent *a)
{
	bool tmp = false, proc = false;

	if (!a->privileged || (!a->o.tmp_max && a->o.shared_proc))
		return;
	if (gp_launch_mounts_probe(&tmp, &proc, a->mounts_why, sizeof(a->mounts_why)) < 0)
		snprintf(a->mounts_why, sizeof(a->mounts_why), "cannot fork to try: %s",
			 strerror(errno));
	a->tmp_bytes = tmp ? a->o.tmp_max : 0;
	a->private_proc = proc && !a->o.shared_proc;
	if (a->tmp_bytes && (in_task_tmp(a->run_dir) || in_task_tmp(a->o.shim_path))) {
		/* Tasks would not find it in a /tmp of their own: they keep the
		 * machine's, and the start-up line says why. */
		snprintf(a->mounts_why, sizeof(a->mounts_why),
			 "%.100s is under /tmp, which a task's own /tmp hides; put it "
			 "elsewhere for tasks to have theirs",
			 in_task_tmp(a->run_dir) ? a->run_dir : a->o.shim_path);
		a->tmp_bytes = 0;
	}
}

/* The agent's own directory: the tasks' keepers' status files and the
 * FIFOs of their output, out of every task's reach. */
static int tasks_dir_make(struct gp_agent *a, char *err, size_t err_len)
{
	char dir[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/tasks", a->run_dir) >= sizeof(dir)) {
		snprintf(err, err_len, "the run directory's path is too long");
		return -ENAMETOOLONG;
	}
	/* The run directory itself, as the regions want it (they vet it) */
	if (mkdir(a->run_dir, 0755) < 0 && errno != EEXIST) {
		int e = errno;

		snprintf(err, err_len, "cannot make %s: %s", a->run_dir, strerror(e));
		return -e;
	}
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || lstat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || chmod(dir, 0700) < 0) {
		snprintf(err, err_len, "cannot make %s, mode 0700, of this user's: %s", dir,
			 errno ? strerror(errno) : "it is not a directory of this user's");
		return errno ? -errno : -EPERM;
	}
	return 0;
}

/* The devices' regions, made so that every task (in the task group) can
 * use them, and their limits tables, which only the agent can write. */
static int regions_prepare(struct gp_agent *a, char *err, size_t err_len)
{
	for (unsigned i = 0; i < a->node.devices; i++) {
		const struct gp_agent_device *d = &a->node.device[i];
		int r = gp_region_prepare(a->run_dir, d->uuid, d->mem_total_mib << 20);

		if (r == 0)
			r = gp_region_open(a->run_dir, d->uuid, d->mem_total_mib << 20,
					   &a->region[i]);
		if (r < 0) {
			snprintf(err, err_len, "cannot prepare the region of %s in %s: %s", d->uuid,
				 a->run_dir, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* As root: the range of automatic uids, claimed for as long as the agent
 * runs, so that no other server on this machine gives the same uids
 * (base/uidrange.h). */
static int uids_claim(struct gp_agent *a, char *err, size_t err_len)
{
	char why[768];
	int r = gp_uidrange_claim(GP_UIDRANGE_DIR, a->o.uid_base, a->o.uid_auto, a->o.owner,
				  &a->uids, why, sizeof(why));

	if (r == -EADDRINUSE)
		snprintf(err, err_len,
			 "the tasks' automatic uids: %s. Two servers that give tenants of the "
			 "same id the same uid let each read and kill the other's tasks: give "
			 "this one another --task-uid-base (or auto)",
			 why);
	else if (r < 0)
		snprintf(err, err_len, "the tasks' automatic uids: %s", why);
	else
		a->o.uid_base = gp_uidrange_base(a->uids);
	return r;
}

static int options_check(struct gp_agent *a, char *err, size_t err_len)
{
	int r;

	if (!a->o.uid_base)
		a->o.uid_base = GP_USER_AUTO_BASE;
	if (!a->o.verify_ms)
		a->o.verify_ms = GP_AGENT_VERIFY_MS;
	if (a->o.verify_slack_mib == UINT64_MAX)
		a->o.verify_slack_mib = GP_AGENT_SLACK_MIB;
	if (a->o.uid_base < GP_USER_AUTO_BASE_MIN || a->o.uid_base > GP_USER_AUTO_BASE_MAX) {
		snprintf(err, err_len, "the task uid base %u is not from %u to %u", a->o.uid_base,
			 GP_USER_AUTO_BASE_MIN, GP_USER_AUTO_BASE_MAX);
		return -EINVAL;
	}
	a->privileged = geteuid() == 0;
	if (a->privileged && (r = uids_claim(a, err, err_len)) < 0)
		return r;
	a->task_gid = a->privileged ? (gid_t)a->o.uid_base : getegid();
	gp_region_dir(a->o.run_dir, a->run_dir, sizeof(a->run_dir));
	return a->privileged ? gp_agent_groups_parse(a, err, err_len) : 0;
}

int gp_agent_new(const struct gp_agent_options *o, struct gp_agent **ret, char *err,
		 size_t err_len)
{
	struct gp_agent *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->o = *o;
	a->began = time(NULL);
	pthread_mutex_init(&a->lock, NULL);
	r = options_check(a, err, err_len);
	if (r == 0)
		r = gp_devices_discover(o->nvml_library, &a->node, err, err_len);
	if (r == 0 && gethostname(a->node.hostname, sizeof(a->node.hostname) - 1) < 0)
		snprintf(a->node.hostname, sizeof(a->node.hostname), "localhost");
	if (r == 0)
		mounts_open(a);
	if (r == 0)
		r = tasks_dir_make(a, err, err_len);
	if (r == 0)         /* before the rest: a card cut by hand becomes its partitions */
		r = gp_agent_parts_open(a, err, err_len);
	if (r == 0)
		r = gp_usage_open(o->nvml_library, &a->node, &a->usage, err, err_len);
	if (r == 0) {
		gp_usage_set_resolver(a->usage, gp_agent_task_of, a);
		r = regions_prepare(a, err, err_len);
	}
	if (r == 0 && (r = gp_logpump_new(&(struct gp_logpump_options){
						  .max_bytes = o->log_max,
						  .floor_dir = o->log_dir,
						  .free_min = o->log_free_min },
					  &a->logs)) < 0)
		snprintf(err, err_len, "cannot start the log pump: %s", strerror(-r));
	if (r == 0) {
		cgroups_open(a);
		r = gp_agent_watch_start(a, err, err_len);
	}
	if (r < 0) {
		gp_agent_free(a);
		return r;
	}
	*ret = a;
	return 0;
}

void gp_agent_free(struct gp_agent *a)
{
	if (!a)
		return;
	gp_agent_watch_stop(a);
	gp_parts_release(&a->parts);
	for (int i = 0; i < GP_AGENT_DEVICES_MAX; i++)
		if (a->region[i])
			gp_region_close(a->region[i]);
	gp_usage_close(a->usage);
	gp_logpump_free(a->logs);
	gp_cgroups_free(a->cgroups);
	gp_uidrange_free(a->uids);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int gp_agent_log_drops(struct gp_agent *a, struct gp_logpump_drop *out, int max)
{
	return gp_logpump_take_drops(a->logs, out, max);
}

uint64_t gp_agent_log_max(const struct gp_agent *a)
{
	return gp_logpump_max(a->logs);
}

const struct gp_agent_node *gp_agent_node(const struct gp_agent *a)
{
	return &a->node;
}

/* What tasks have of their own of /tmp, /dev/shm, $HOME and /proc. */
static const char *mounts_text(const struct gp_agent *a, char *buf, size_t len)
{
	size_t n = 0;

	if (a->tmp_bytes)
		n += (size_t)snprintf(buf, len,
				      "/tmp, /dev/shm and $HOME (when gpupool makes it) of their "
				      "own, tmpfs of at most %llu MiB each, gone at their end",
				      a->tmp_bytes >> 20);
	else
		n += (size_t)snprintf(buf, len, "the machine's /tmp and /dev/shm");
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, ", %s",
				      a->private_proc ? "a /proc of their user's processes only"
						      : "the machine's /proc");
	if (n < len && a->mounts_why[0])
		snprintf(buf + n, len - n, " (%s)", a->mounts_why);
	return buf;
}

bool gp_agent_isolated(const struct gp_agent *a, char *text, size_t len)
{
	char cg[PATH_MAX + 640], mounts[640];

	if (a->cgroups)
		snprintf(cg, sizeof(cg), "each in a cgroup under %s (%s)%s%s",
			 gp_cgroups_path(a->cgroups), gp_cgroups_limits_text(a->cgroups),
			 a->cgroup_why[0] ? "; " : "", a->cgroup_why);
	else
		snprintf(cg, sizeof(cg),
			 "as process groups (no cgroup: %s; a process that leaves its group "
			 "is not stopped with its task, though the verifier sees it)",
			 a->cgroup_why);
	if (a->privileged)
		snprintf(text, len,
			 "tasks run as their tenants' users (uid %u + tenant id when a tenant "
			 "has none), %s; %s; verifier %s",
			 a->o.uid_base, cg, mounts_text(a, mounts, sizeof(mounts)),
			 a->verifier ? "on" : "off");
	else
		snprintf(text, len,
			 "running as uid %u, not root: every task runs as this user, so tenants "
			 "are NOT isolated from each other (docs/security.md); tasks run %s; "
			 "verifier %s",
			 (unsigned)geteuid(), cg, a->verifier ? "on" : "off");
	return a->privileged;
}

/* ---- starting --------------------------------------------------------------- */

static struct gp_task_limits limits_of(const struct gp_agent_task *t, unsigned compute,
				       unsigned priority)
{
	return (struct gp_task_limits){
		.mem_bytes = t->whole ? 0 : t->mem_mib << 20,
		.compute = t->whole ? 100 : compute,
		.priority = priority,
		.isolation = t->hard ? GP_ISOLATION_HARD : GP_ISOLATION_SHARED,
	};
}

void gp_agent_task_name(int64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "task-%" PRId64, id);
}

/* ---- the tasks' partitions (partitions.h), each owned by its task's id ------------ */

static void part_owner(int64_t task, char owner[GP_PARTS_OWNER_MAX])
{
	snprintf(owner, GP_PARTS_OWNER_MAX, "%" PRId64, task);
}

int gp_agent_parts_open(struct gp_agent *a, char *err, size_t err_len)
{
	char ledger[PATH_MAX];

	if ((size_t)snprintf(ledger, sizeof(ledger), "%s/tasks/partitions", a->run_dir) >=
	    sizeof(ledger)) {
		snprintf(err, err_len, "run directory %s: name too long", a->run_dir);
		return -ENAMETOOLONG;
	}
	return gp_parts_init(&a->parts, &a->node, a->o.nvml_library, a->run_dir, ledger, err,
			     err_len);
}

int gp_agent_parts_make(struct gp_agent *a, const struct gp_agent_task *t, char *err,
			size_t err_len)
{
	char owner[GP_PARTS_OWNER_MAX];
	struct gp_parts_ask ask = { .owner = owner, .devices = t->devices, .whole = t->whole,
				    .mem_mib = t->mem_mib, .compute_pct = t->compute_pct };

	part_owner(t->id, owner);
	for (unsigned i = 0; i < t->devices && i < GP_AGENT_DEVICES_MAX; i++) {
		ask.device[i] = t->device[i];
		ask.part_start[i] = t->part_start[i];
	}
	return gp_parts_make(&a->parts, &ask, err, err_len);
}

const struct gp_part *gp_agent_part_of(const struct gp_agent *a, int64_t task, unsigned d)
{
	char owner[GP_PARTS_OWNER_MAX];

	part_owner(task, owner);
	return gp_parts_of(&a->parts, owner, d);
}

void gp_agent_parts_end(struct gp_agent *a, int64_t task)
{
	char owner[GP_PARTS_OWNER_MAX];

	part_owner(task, owner);
	gp_parts_end(&a->parts, owner);
}

static bool task_alive(void *ctx, const char *owner)
{
	int64_t task = strtoll(owner, NULL, 10);

	return task > 0 && gp_agent_running(ctx, task);
}

void gp_agent_parts_adopted(struct gp_agent *a)
{
	gp_parts_keep_only(&a->parts, task_alive, a);
}

/* Where task `task`'s limits on device d are: its partition's region on a
 * card in partition mode (NULL when a previous agent's could not be
 * opened), else the device's. */
static struct gp_region *task_region(const struct gp_agent *a, int64_t task, unsigned d)
{
	const struct gp_part *x = gp_agent_part_of(a, task, d);

	return x ? x->region : a->region[d];
}

/* Who task t's processes run as, for the files they write. */
static struct gp_task_owner owner_of(const struct gp_agent *a, const struct gp_task_identity *id)
{
	if (id->switch_user)
		return (struct gp_task_owner){ id->user.uid, a->task_gid };
	return (struct gp_task_owner){ geteuid(), (gid_t)-1 };
}

/* Writes the task's limits into its devices' task tables, where its
 * processes find them by id and secret, and makes its files there. */
static int regions_admit(struct gp_agent *a, const struct gp_agent_task *t,
			 const struct gp_task_identity *who, char *err, size_t err_len)
{
	struct gp_task_limits limits = limits_of(t, t->compute_pct, t->priority);
	struct gp_task_owner owner = owner_of(a, who);
	char id[GP_TASK_ID_MAX];

	gp_agent_task_name(t->id, id, sizeof(id));
	for (unsigned i = 0; i < t->devices; i++) {
		int r = gp_region_task_admit(task_region(a, t->id, t->device[i]), id, who->secret,
					     &limits, &owner);

		if (r < 0) {
			snprintf(err, err_len, "cannot write its limits on %s: %s",
				 a->node.device[t->device[i]].uuid,
				 r == -ENOSPC ? "the device's task table is full" : strerror(-r));
			return r;
		}
	}
	return 0;
}

/* A task ended: its limits go, and the memory its processes held in its
 * devices' regions is given back now (the regions free a dead process's
 * slot when someone looks; with nobody using the device, nobody else
 * would). */
static void regions_forget(struct gp_agent *a, const struct gp_agent_task *t)
{
	char id[GP_TASK_ID_MAX];

	gp_agent_task_name(t->id, id, sizeof(id));
	for (unsigned i = 0; i < t->devices; i++) {
		struct gp_region *r = task_region(a, t->id, t->device[i]);

		if (r) {
			gp_region_task_forget(r, id);
			gp_region_reclaim(r);
		}
	}
}

static void log_path(const struct gp_agent *a, int64_t task, char *buf, size_t len)
{
	if (gp_logfile_task_path(a->o.log_dir ? a->o.log_dir : ".", task, buf, len) < 0)
		buf[0] = '\0';
}

/* A failure to start as gp_agent_start reports it: -EAGAIN is kept for
 * a log that could not be opened (agent.h). */
static int not_again(int e)
{
	return e == -EAGAIN ? -EIO : e;
}

/* What a task's keeper is called (/proc/PID/comm, 15 bytes): "gp-t-" and
 * the task's id in hexadecimal, so that a restarted server knows it. */
static void keeper_name(int64_t task, char *buf, size_t len)
{
	snprintf(buf, len, "gp-t-%" PRIx64, (uint64_t)task);
}

/* Launches the task with its identity, led by its keeper, its output into
 * its log's FIFO, in its cgroup when there is one. */
static int task_launch(struct gp_agent *a, const struct gp_agent_task *t,
		       const struct gp_task_identity *id, pid_t *ret_pgid, char *err,
		       size_t err_len)
{
	char log[PATH_MAX], fifo[PATH_MAX], status[PATH_MAX], mark[PATH_MAX], name[16];
	struct gp_cgroup_join join = { .n = 0 };
	struct gp_launch spec = { .command = t->command,
				  .env = (const char *const *)id->env,
				  .workdir = t->workdir && t->workdir[0] ? t->workdir : NULL,
				  .user = id->switch_user ? &id->user : NULL,
				  .preload = a->o.shim_path,
				  .keeper_status = status,
				  .keeper_name = name,
				  .start_mark = mark,
				  .tmp_bytes = id->switch_user ? a->tmp_bytes : 0,
				  .tmp_home = id->home_ours ? id->home : NULL,
				  .private_proc = id->switch_user && a->private_proc };
	int r;

	log_path(a, t->id, log, sizeof(log));
	gp_agent_task_file(a, t->id, "fifo", fifo, sizeof(fifo));
	gp_agent_task_file(a, t->id, "status", status, sizeof(status));
	gp_agent_task_file(a, t->id, "start", mark, sizeof(mark));
	keeper_name(t->id, name, sizeof(name));
	unlink(status);
	unlink(mark); /* an earlier run's, or claimed by an earlier agent */
	r = gp_logpump_add_fifo(a->logs, t->id, log, fifo, &spec.log_fd, &spec.keep_fd);
	if (r < 0) {
		/* Nothing has run: the task may start once the log can be opened. */
		snprintf(err, err_len, "cannot open its log %s: %s", log, strerror(-r));
		return -EAGAIN;
	}
	if (a->cgroups && (r = gp_cgroups_make(a->cgroups, t->id, &join)) < 0)
		snprintf(err, err_len, "cannot make its cgroup in %s: %s",
			 gp_cgroups_path(a->cgroups), strerror(-r));
	spec.cgroup_fds = join.fd;
	spec.cgroup_fds_n = join.n;
	if (r == 0)
		r = gp_launch_start(&spec, ret_pgid, err, err_len);
	r = not_again(r);
	close(spec.log_fd);
	close(spec.keep_fd);
	gp_cgroup_join_close(&join);
	if (r < 0) {
		gp_logpump_close(a->logs, t->id);
		task_files_remove(a, t->id);
		if (a->cgroups)
			gp_cgroups_remove(a->cgroups, t->id);
	}
	return r;
}

/* The task as the agent runs it: on partitions, each is its whole
 * device (the hardware holds its size: no slice limits). */
static struct gp_agent_task run_spec(const struct gp_agent *a, const struct gp_agent_task *t)
{
	struct gp_agent_task run = *t;

	run.whole = t->whole || (t->devices && gp_agent_part_of(a, t->id, t->device[0]));
	return run;
}

int gp_agent_start(struct gp_agent *a, const struct gp_agent_task *t, pid_t *ret_pgid,
		   char *err, size_t err_len)
{
	struct gp_task_identity id;
	struct gp_agent_task run;
	struct running *r;
	int e;

	if (a->tasks == GP_AGENT_TASKS_MAX) {
		snprintf(err, err_len, "this agent runs %d tasks already", GP_AGENT_TASKS_MAX);
		return -ENOSPC;
	}
	for (unsigned i = 0; i < t->devices; i++)
		if (t->device[i] >= a->node.devices) {
			snprintf(err, err_len, "no device %u here", t->device[i]);
			return -EINVAL;
		}
	e = not_again(gp_agent_parts_make(a, t, err, err_len));
	if (e < 0)
		return e;
	run = run_spec(a, t);
	e = not_again(gp_task_identity_make(a, &run, &id, err, err_len));
	if (e == 0)
		e = not_again(regions_admit(a, &run, &id, err, err_len));
	if (e == 0)
		e = task_launch(a, &run, &id, ret_pgid, err, err_len);
	gp_task_identity_release(&id);
	if (e < 0) {
		regions_forget(a, &run);
		gp_agent_parts_end(a, t->id);
		return e;
	}
	pthread_mutex_lock(&a->lock);
	r = &a->task[a->tasks++];
	*r = (struct running){ .spec = run, .pgid = *ret_pgid, .applied_compute = t->compute_pct,
			       .applied_priority = t->priority };
	r->spec.command = r->spec.workdir = r->spec.env = r->spec.user = NULL; /* borrowed */
	pthread_mutex_unlock(&a->lock);
	return 0;
}

/* ---- adopting a previous agent's tasks --------------------------------------------- */

bool gp_agent_keeper_alive(pid_t pgid, int64_t task)
{
	char path[64], comm[32] = "", want[16];
	FILE *in;

	if (pgid <= 0 || getpgid(pgid) != pgid)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pgid);
	in = fopen(path, "re");
	if (!in)
		return false;
	if (!fgets(comm, sizeof(comm), in))
		comm[0] = '\0';
	fclose(in);
	comm[strcspn(comm, "\n")] = '\0';
	keeper_name(task, want, sizeof(want));
	return strcmp(comm, want) == 0;
}

/* The keeper of task `task`, alive, found by its name among the
 * processes of this agent's user (in the task's cgroup, where there are
 * cgroups; a task cannot make a process of root's): for a task whose
 * start mark does not say (a gpupool from before start marks left it,
 * or the mark was removed). 0: none. */
static pid_t keeper_find(struct gp_agent *a, int64_t task)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	while (d && !found && (e = readdir(d))) {
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
		char path[64];
		struct stat st;
		int64_t of = 0;

		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		if (pid <= 0 || getpgid(pid) != pid || stat(path, &st) < 0 ||
		    st.st_uid != geteuid() || !gp_agent_keeper_alive(pid, task) ||
		    (a->cgroups && (gp_cgroups_task_of(a->cgroups, pid, &of) < 0 || of != task)))
			continue;
		found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

/* Does a task of the previous agent still run? */
static bool adoptable(struct gp_agent *a, const struct gp_agent_task *t, pid_t pgid)
{
	if (a->cgroups)
		return gp_cgroups_populated(a->cgroups, t->id) > 0;
	return gp_agent_keeper_alive(pgid, t->id);
}

/* What a task's start mark says (launcher.h). */
enum mark {
	MARK_NONE,      /* its program never ran (once its agent is gone) */
	MARK_RAN,       /* it may have: its keeper made the mark */
	MARK_UNSTARTED, /* an agent claimed it: the program never ran */
};

/* Reads task's start mark: its keeper's pid in *ret_pid when it made it
 * (0 when the mark does not say). A mark that cannot be read may have
 * been the keeper's. */
static enum mark mark_read(const struct gp_agent *a, int64_t task, pid_t *ret_pid)
{
	char path[PATH_MAX], text[32];
	ssize_t n;

	*ret_pid = 0;
	gp_agent_task_file(a, task, "start", path, sizeof(path));
	n = readlink(path, text, sizeof(text) - 1);
	if (n < 0)
		return errno == ENOENT ? MARK_NONE : MARK_RAN;
	text[n] = '\0';
	if (strcmp(text, MARK_CLAIMED) == 0)
		return MARK_UNSTARTED;
	*ret_pid = (pid_t)strtol(text, NULL, 10);
	return MARK_RAN;
}

/* Claims task's start mark unless its keeper made it: from then on no
 * keeper of it can run its program (launcher.h). MARK_UNSTARTED when the
 * program never ran; else MARK_RAN (the keeper's pid in *ret_pid), also
 * when the mark can be neither made nor read. */
static enum mark mark_claim(const struct gp_agent *a, int64_t task, pid_t *ret_pid)
{
	char path[PATH_MAX];
	enum mark m;

	*ret_pid = 0;
	gp_agent_task_file(a, task, "start", path, sizeof(path));
	if (path[0] && symlink(MARK_CLAIMED, path) == 0)
		return MARK_UNSTARTED;
	if (!path[0] || errno != EEXIST)
		return MARK_RAN;
	m = mark_read(a, task, ret_pid);
	return m == MARK_NONE ? MARK_RAN : m; /* removed meanwhile: not ours to say */
}

/* May the program of task `task`, whose process group the store lacks,
 * have run? Its start mark says, claimed first (from then on no keeper
 * of it can run it); but a keeper of it alive, or processes in its
 * cgroup, say it may have whatever the mark (a gpupool from before start
 * marks). Its keeper's pid in *ret_pid when known. */
static bool started(struct gp_agent *a, int64_t task, pid_t *ret_pid)
{
	enum mark m = mark_claim(a, task, ret_pid);
	pid_t alive = *ret_pid ? 0 : keeper_find(a, task);

	if (alive)
		*ret_pid = alive;
	return m != MARK_UNSTARTED || alive ||
	       (a->cgroups && gp_cgroups_populated(a->cgroups, task) > 0);
}

/* A task whose program never ran: what its launch had made goes (a
 * keeper-to-be in its cgroup, its status and FIFO, its log when that is
 * empty); its claimed mark stays until its next start. */
static void unstarted_clear(struct gp_agent *a, int64_t task)
{
	char log[PATH_MAX], part[PATH_MAX];
	struct stat st;

	if (a->cgroups)
		gp_cgroups_clear(a->cgroups, task);
	task_pipes_remove(a, task);
	log_path(a, task, log, sizeof(log));
	if (lstat(log, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > 0 ||
	    gp_logfile_name(log, GP_LOGFILE_OLD_SUFFIX, part, sizeof(part)) < 0 ||
	    lstat(part, &st) == 0)
		return; /* an earlier run's output: kept */
	if (gp_logfile_name(log, GP_LOGFILE_OFFSET_SUFFIX, part, sizeof(part)) == 0)
		unlink(part);
	unlink(log);
}

int gp_agent_adopt(struct gp_agent *a, const struct gp_agent_task *t, pid_t pgid,
		   struct gp_agent_adoption *ret)
{
	char log[PATH_MAX], fifo[PATH_MAX];
	struct running *r;
	pid_t keeper = 0;

	*ret = (struct gp_agent_adoption){ .found = GP_AGENT_FOUND_ENDED, .code = -1 };
	if (a->tasks == GP_AGENT_TASKS_MAX)
		return -ENOSPC;
	for (unsigned i = 0; i < t->devices; i++)
		if (t->device[i] >= a->node.devices)
			return -EINVAL;
	/* Its process group stored: it was started. */
	if (pgid <= 0 && !started(a, t->id, &keeper)) {
		unstarted_clear(a, t->id);
		ret->found = GP_AGENT_FOUND_UNSTARTED;
		return 0;
	}
	if (pgid <= 0)
		pgid = keeper;
	log_path(a, t->id, log, sizeof(log));
	gp_agent_task_file(a, t->id, "fifo", fifo, sizeof(fifo));
	/* Its output is taken over, or it is stopped: a task whose log
	 * nobody reads would block on it for good. */
	if (!adoptable(a, t, pgid) || gp_logpump_attach(a->logs, t->id, log, fifo) < 0) {
		if (a->cgroups)
			gp_cgroups_clear(a->cgroups, t->id);
		ret->code = task_status(a, t->id);
		task_files_remove(a, t->id);
		return 0;
	}
	pthread_mutex_lock(&a->lock);
	r = &a->task[a->tasks++];
	*r = (struct running){ .spec = run_spec(a, t), .pgid = pgid, .adopted = true,
			       .applied_compute = t->compute_pct,
			       .applied_priority = t->priority };
	r->spec.command = r->spec.workdir = r->spec.env = r->spec.user = NULL;
	pthread_mutex_unlock(&a->lock);
	ret->found = GP_AGENT_FOUND_RUNNING;
	ret->pgid = pgid;
	return 0;
}

/* Is a task of that name running here? Lock held. */
static bool runs(const struct gp_agent *a, const char *name)
{
	char id[GP_TASK_ID_MAX];

	for (int i = 0; i < a->tasks; i++) {
		gp_agent_task_name(a->task[i].spec.id, id, sizeof(id));
		if (strcmp(id, name) == 0)
			return true;
	}
	return false;
}

/* The task of a start mark's file name (task-ID.start), or 0. */
static int64_t mark_task(const char *name)
{
	long long id;
	char *end;

	if (strncmp(name, "task-", 5) != 0)
		return 0;
	id = strtoll(name + 5, &end, 10);
	return id > 0 && strcmp(end, ".start") == 0 ? (int64_t)id : 0;
}

/* The start marks of tasks not running here that were made before this
 * agent began: claims of earlier agents whose tasks never started again
 * (cancelled meanwhile), whose keepers-to-be died with their agents long
 * ago. Lock held. */
static void marks_sweep(struct gp_agent *a)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/tasks", a->run_dir) >= sizeof(dir))
		return;
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		int64_t id = mark_task(e->d_name);
		struct stat st;

		if (!id || gp_agent_running(a, id))
			continue;
		gp_agent_task_file(a, id, "start", path, sizeof(path));
		if (lstat(path, &st) == 0 && st.st_mtime < a->began)
			unlink(path);
	}
	if (d)
		closedir(d);
}

void gp_agent_adopted(struct gp_agent *a)
{
	int64_t left[GP_AGENT_TASKS_MAX];
	int n = a->cgroups ? gp_cgroups_tasks(a->cgroups, left, GP_AGENT_TASKS_MAX) : 0;

	pthread_mutex_lock(&a->lock);
	marks_sweep(a);
	for (int i = 0; i < n && i < GP_AGENT_TASKS_MAX; i++)
		if (!gp_agent_running(a, left[i])) {
			gp_cgroups_clear(a->cgroups, left[i]);
			task_files_remove(a, left[i]);
		}
	for (unsigned d = 0; d < a->node.devices; d++) {
		struct gp_task_info info[GP_REGION_TASKS];
		int k = gp_region_tasks(a->region[d], info, GP_REGION_TASKS);

		for (int i = 0; i < k && i < GP_REGION_TASKS; i++)
			if (info[i].managed && !runs(a, info[i].id))
				gp_region_task_forget(a->region[d], info[i].id);
	}
	pthread_mutex_unlock(&a->lock);
	gp_agent_parts_adopted(a);
}

/* ---- stopping and reaping ------------------------------------------------------ */

/* Signals all of a task: its cgroup, else its process group. */
static void task_signal(struct gp_agent *a, struct running *r, int sig)
{
	if (!a->cgroups) {
		kill(-r->pgid, sig);
	} else if (sig == SIGKILL) {
		gp_cgroups_kill(a->cgroups, r->spec.id);
	} else {
		gp_cgroups_signal(a->cgroups, r->spec.id, sig);
	}
}

int gp_agent_stop(struct gp_agent *a, int64_t task)
{
	struct running *r;
	int e = -ENOENT;

	pthread_mutex_lock(&a->lock);
	r = gp_agent_running(a, task);
	if (r && !r->stopping) {
		r->stopping = true;
		r->kill_at_ms = gp_agent_now_ms() + a->o.grace_ms;
		task_signal(a, r, SIGTERM);
	}
	if (r)
		e = 0;
	pthread_mutex_unlock(&a->lock);
	return e;
}

/* In a cgroup: the task ends once its shell has exited (and, unless it
 * is being stopped, what it left was killed) and its cgroup is empty. 1
 * with the shell's code, 0 while it runs. */
static int cgroup_reap(struct gp_agent *a, struct running *r, uint64_t now, int *ret_code)
{
	int populated;

	if (r->adopted) { /* not our child: its cgroup says when it is over */
		if (gp_cgroups_populated(a->cgroups, r->spec.id) > 0)
			return 0;
		r->oom_kills = gp_cgroups_oom_kills(a->cgroups, r->spec.id);
		gp_cgroups_remove(a->cgroups, r->spec.id);
		*ret_code = task_status(a, r->spec.id);
		return 1;
	}
	if (!r->exit.leader_gone) {
		if (gp_launch_reap_leader(r->pgid, &r->exit.code) <= 0)
			return 0;
		r->exit.leader_gone = true;
		r->leader_gone_ms = now;
		if (!r->stopping)
			gp_cgroups_kill(a->cgroups, r->spec.id); /* it ends with its shell */
	}
	/* Killed processes leave at once, but for one stuck in the kernel
	 * (uninterruptible sleep), which no signal moves: the task is then
	 * reported ended anyway, its cgroup left for the next start. A task
	 * being stopped waits for its grace period first. */
	populated = gp_cgroups_populated(a->cgroups, r->spec.id);
	if (populated > 0 &&
	    now < (r->stopping && r->kill_at_ms > r->leader_gone_ms ? r->kill_at_ms
								     : r->leader_gone_ms) +
			  CGROUP_EMPTY_WAIT_MS)
		return 0;
	r->oom_kills = gp_cgroups_oom_kills(a->cgroups, r->spec.id);
	gp_cgroups_remove(a->cgroups, r->spec.id); /* a leftover, if busy: the next start's */
	*ret_code = r->exit.code;
	return 1;
}

/* Has the task ended? A task ends with its shell, and what it leaves is
 * killed; but a task being stopped ends when all of it has, so that a
 * program under a shell gets its grace period too. 1 with its code (the
 * shell's), 0 while it runs. */
static int running_reap(struct gp_agent *a, struct running *r, uint64_t now, int *ret_code)
{
	int done;

	if (a->cgroups)
		return cgroup_reap(a, r, now, ret_code);
	if (r->adopted) { /* not our child: over when its keeper is */
		if (gp_agent_keeper_alive(r->pgid, r->spec.id))
			return 0;
		*ret_code = task_status(a, r->spec.id);
		return 1;
	}
	if (!r->stopping)
		return gp_launch_reap(r->pgid, false, ret_code);
	done = gp_launch_reap_group(r->pgid, &r->exit);
	*ret_code = r->exit.code;
	return done;
}

/* Is pid the shell of a task not reaped yet? Lock held. */
static bool is_leader(const struct gp_agent *a, pid_t pid)
{
	for (int i = 0; i < a->tasks; i++)
		if (a->task[i].pgid == pid && !a->task[i].exit.leader_gone)
			return true;
	return false;
}

/* Reaps the orphans tasks left (the server is their subreaper), so that
 * none stays a zombie; a task's shell is left to its task's reaping. */
static void orphans_reap(struct gp_agent *a)
{
	for (;;) {
		siginfo_t info = { 0 };

		if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0)
			return;
		if (is_leader(a, info.si_pid))
			return; /* its task's turn, at the next poll */
		waitpid(info.si_pid, NULL, WNOHANG);
	}
}

/* What one poll found ended, reported once the lock is let go. */
struct ended {
	int64_t id;
	int code;
	bool stopped;
	char violation[GP_AGENT_WHY_MAX];
	char failure[GP_AGENT_WHY_MAX];
};

/* Why a task that failed did, when the agent knows more than its code:
 * the kernel killed it for memory at its limit. "" otherwise. */
static void failure_text(const struct gp_agent *a, const struct running *r, int code,
			 char *buf, size_t len)
{
	buf[0] = '\0';
	if (code != 0 && r->oom_kills > 0)
		snprintf(buf, len,
			 "killed for memory: its processes reached their memory.max of %llu MiB "
			 "(the server's --task-memory-max; %d killed by the kernel); exit code %d",
			 (unsigned long long)(a->o.memory_max >> 20), r->oom_kills, code);
}

/* Kills what is due (grace over, or stopped by a violation) and takes
 * out the tasks that ended, into out. Lock held. */
static int table_poll(struct gp_agent *a, struct ended *out)
{
	uint64_t now = gp_agent_now_ms();
	int n = 0;

	for (int i = 0; i < a->tasks;) {
		struct running *r = &a->task[i];
		int code = 0;

		if ((r->stopping && now >= r->kill_at_ms) || r->violation_stops)
			task_signal(a, r, SIGKILL);
		if (running_reap(a, r, now, &code) == 0) {
			i++;
			continue;
		}
		out[n] = (struct ended){ .id = r->spec.id, .code = code, .stopped = r->stopping };
		snprintf(out[n].violation, sizeof(out[n].violation), "%s",
			 r->violation_stops ? r->violation : "");
		failure_text(a, r, code, out[n].failure, sizeof(out[n].failure));
		n++;
		regions_forget(a, &r->spec);
		gp_agent_parts_end(a, r->spec.id);
		task_files_remove(a, r->spec.id);
		a->task[i] = a->task[--a->tasks];
	}
	orphans_reap(a);
	return n;
}

/* The violations found since the last poll, reported once each. */
struct told {
	int64_t task;
	char text[GP_AGENT_WHY_MAX];
};

static int violations_take(struct gp_agent *a, struct told *out, int max)
{
	int n = 0;

	for (int i = 0; i < a->tasks && n < max; i++) {
		struct running *r = &a->task[i];

		if (!r->violation[0] || r->violation_told)
			continue;
		r->violation_told = true;
		out[n].task = r->spec.id;
		snprintf(out[n++].text, sizeof(out[0].text), "%s", r->violation);
	}
	for (int i = 0; i < GP_AGENT_STRANGERS && n < max; i++) {
		struct stranger *s = &a->stranger[i];

		if (!s->pid || s->told)
			continue;
		s->told = true;
		out[n].task = 0;
		snprintf(out[n++].text, sizeof(out[0].text), "%s", s->text);
	}
	return n;
}

void gp_agent_poll(struct gp_agent *a, const struct gp_agent_events *ev)
{
	struct ended *ended = calloc(GP_AGENT_TASKS_MAX, sizeof(*ended));
	struct told *told = calloc(GP_AGENT_TASKS_MAX + GP_AGENT_STRANGERS, sizeof(*told));
	int n_ended, n_told;

	if (!ended || !told) {
		free(ended);
		free(told);
		return; /* the next poll */
	}
	pthread_mutex_lock(&a->lock);
	n_told = violations_take(a, told, GP_AGENT_TASKS_MAX + GP_AGENT_STRANGERS);
	n_ended = table_poll(a, ended);
	pthread_mutex_unlock(&a->lock);
	gp_parts_retry(&a->parts);
	for (int i = 0; ev->violation && i < n_told; i++)
		ev->violation(ev->ctx, told[i].task, told[i].text);
	for (int i = 0; i < n_ended; i++) {
		gp_logpump_close(a->logs, ended[i].id); /* the log is whole */
		ev->ended(ev->ctx, ended[i].id, ended[i].code, ended[i].stopped,
			  ended[i].violation[0] ? ended[i].violation : NULL,
			  ended[i].failure[0] ? ended[i].failure : NULL);
	}
	free(ended);
	free(told);
}

/* ---- live changes and sampling --------------------------------------------------- */

int gp_agent_set(struct gp_agent *a, int64_t task, unsigned compute_pct, unsigned priority)
{
	struct gp_task_limits limits;
	struct gp_agent_task spec;
	char id[GP_TASK_ID_MAX];
	struct running *r;
	bool applied = false;

	pthread_mutex_lock(&a->lock);
	r = gp_agent_running(a, task);
	if (r) {
		spec = r->spec;
		applied = r->applied_compute == compute_pct && r->applied_priority == priority;
	}
	pthread_mutex_unlock(&a->lock);
	if (!r)
		return -ENOENT;
	if (spec.whole || applied)
		return 0;
	limits = limits_of(&spec, compute_pct, priority);
	gp_agent_task_name(task, id, sizeof(id));
	for (unsigned i = 0; i < spec.devices; i++) {
		int err = gp_region_set(task_region(a, task, spec.device[i]), id, &limits);

		if (err < 0)
			return err;
	}
	pthread_mutex_lock(&a->lock);
	if ((r = gp_agent_running(a, task))) {
		r->applied_compute = compute_pct;
		r->applied_priority = priority;
	}
	pthread_mutex_unlock(&a->lock);
	return 0;
}

int gp_agent_sample(struct gp_agent *a, struct gp_usage_device *devices,
		    struct gp_usage_group *groups, size_t n)
{
	return gp_usage_sample(a->usage, devices, groups, n);
}
