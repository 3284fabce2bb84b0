/* spank.c — gpupool's SPANK plugin for Slurm (gpupool.so, loaded by
 * plugstack.conf): every task of a job step that Slurm gave GPUs or
 * shards runs under libgpushare, held to its share of each GPU.
 *
 * Where each hook runs (spank.h's own map):
 *   - slurm_spank_init, everywhere: registers the --gpu-* options (from
 *     here, so that sbatch and salloc know them too: they ignore a static
 *     option table) and reads the site's arguments (share.h).
 *   - the options' callback, in srun/sbatch/salloc and again in
 *     slurmstepd: a bad value fails the submission with one line.
 *   - slurm_spank_init_post_opt, in slurmstepd as root, once a step: the
 *     step's GPUs (SLURM_STEP_GPUS; the batch step's SLURM_JOB_GPUS) and
 *     shards (SLURM_SHARDS_ON_NODE), found by NVML index; its limits
 *     (share.h) written into each device's managed region (shim/region.h)
 *     under the task id slurm-JOBID.STEPID and a fresh secret, where the
 *     step's processes can read but not change them.
 *   - slurm_spank_task_init, in each task as its user, before exec: the
 *     environment libgpushare reads (LD_PRELOAD once, even where the batch
 *     step's already has it; the task id and secret; the run directory).
 *   - slurm_spank_task_exit, in slurmstepd as root, after the step's last
 *     task on the node: its figures on each of the node's GPUs
 *     (figures.h: wall time, share, used GPU-seconds as the regions
 *     charged them, memory) to the slurmd log and, as the node's own
 *     entry beside the other nodes' (comment.h), into the job's
 *     AdminComment (publish.h: where sacct shows it and `gpupool bill
 *     --slurm` reads it), while the job still runs. A step on several
 *     nodes runs all of this on each of them.
 *   - slurm_spank_exit, in slurmstepd as root: the step's limits go and
 *     what its processes held is given back; in srun, with --gpu-report,
 *     the step's figures from the AdminComment on stderr, a line a node.
 *   - slurm_spank_job_epilog, in slurmd as root: the job's figures file
 *     goes.
 * A step without GPUs is left untouched. */
#include <stdint.h> /* before spank.h, which uses uint32_t without it */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "agent/devices.h"
#include "base/clock.h"
#include "shim/region.h"
#include "slurm/comment.h"
#include "slurm/figures.h"
#include "slurm/publish.h"
#include "slurm/share.h"
#include "vendor/vendor.h"

SPANK_PLUGIN(gpupool, 1);

static struct gp_slurm_site site;
static struct gp_slurm_user user = {.priority = -1, .isolation = -1};

/* The step this slurmstepd runs (its part on this node), once
 * init_post_opt found its GPUs. */
static struct {
	bool on;
	uint32_t job;
	unsigned job_nodes;		 /* the job's nodes (0: not known) */
	unsigned node_index;		 /* this node's place in the step, from 0 */
	unsigned nodes;			 /* the step's nodes */
	char node[GP_SLURM_FIGURE_TEXT]; /* this node's name in Slurm */
	char id[GP_TASK_ID_MAX];
	char secret[GP_TASK_SECRET_LEN + 1];
	struct gp_task_limits limits;
	uint64_t start_ns; /* CLOCK_MONOTONIC */
	unsigned exited;   /* tasks ended */
	bool reported;	   /* its figures */
	unsigned devices;
	char uuid[GP_AGENT_DEVICES_MAX][GP_DEVICE_TEXT_MAX];
	char model[GP_AGENT_DEVICES_MAX][GP_DEVICE_TEXT_MAX];
	struct gp_region *region[GP_AGENT_DEVICES_MAX];
} step;

/* ---- options --------------------------------------------------------------- */

static int option_cb(int val, const char *optarg, int remote)
{
	char err[256];

	(void)remote;
	if (gp_slurm_option((enum gp_slurm_option)val, optarg, &user, err, sizeof(err)) <
	    0) {
		slurm_error("gpupool: %s", err);
		return -1;
	}
	return 0;
}

static struct spank_option options[] = {
	{"gpu-mem", "SIZE",
	 "gpupool: device memory of each GPU (8G, 512M); default: the "
	 "shards' part of it",
	 1, GP_SLURM_OPT_MEM, option_cb},
	{"gpu-compute", "PCT",
	 "gpupool: percent of each GPU's compute time; default: the "
	 "shards' part",
	 1, GP_SLURM_OPT_COMPUTE, option_cb},
	{"gpu-priority", "0-9",
	 "gpupool: priority on a shared GPU (9 first); default: from "
	 "the QOS",
	 1, GP_SLURM_OPT_PRIORITY, option_cb},
	{"gpu-isolation", "hard|shared",
	 "gpupool: hard caps the share, shared lends idle "
	 "time",
	 1, GP_SLURM_OPT_ISOLATION, option_cb},
	{"gpu-report", NULL, "gpupool: srun prints the step's GPU figures at its end", 0,
	 GP_SLURM_OPT_REPORT, option_cb},
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	char err[512];

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS) {
			slurm_error("gpupool: cannot register --%s", options[i].name);
			return -1;
		}
	if (gp_slurm_site_parse(ac, av, &site, err, sizeof(err)) < 0) {
		slurm_error("gpupool: %s", err);
		return -1;
	}
	return 0;
}

/* ---- the step's GPUs ------------------------------------------------------- */

/* The job's environment variable `name` as a number (0: absent). */
static unsigned env_number(spank_t sp, const char *name)
{
	char buf[32];

	return spank_getenv(sp, name, buf, sizeof(buf)) == ESPANK_SUCCESS
		       ? (unsigned)strtoul(buf, NULL, 10)
		       : 0;
}

/* Is this the batch step (whose GPUs are the job's)? */
static bool is_batch(spank_t sp)
{
	uint32_t id = 0;

	return spank_get_item(sp, S_JOB_STEPID, &id) == ESPANK_SUCCESS &&
	       id == SLURM_BATCH_SCRIPT;
}

/* "slurm-12.0", "slurm-12.batch" */
static void step_name(spank_t sp, char *buf, size_t len)
{
	uint32_t job = 0, id = 0;

	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &id);
	if (id == SLURM_BATCH_SCRIPT)
		snprintf(buf, len, "slurm-%" PRIu32 ".batch", job);
	else if (id == SLURM_EXTERN_CONT)
		snprintf(buf, len, "slurm-%" PRIu32 ".extern", job);
	else if (id == SLURM_INTERACTIVE_STEP)
		snprintf(buf, len, "slurm-%" PRIu32 ".interactive", job);
	else
		snprintf(buf, len, "slurm-%" PRIu32 ".%" PRIu32, job, id);
}

/* Where this part of the step is: its job, this node (its name in
 * Slurm, which slurmstepd puts in its own environment, else the host's)
 * and its place among the step's nodes, and the job's nodes. */
static void step_place(spank_t sp)
{
	const char *name = getenv("SLURMD_NODENAME");
	uint32_t index = 0, nodes = 1;

	spank_get_item(sp, S_JOB_ID, &step.job);
	spank_get_item(sp, S_JOB_NODEID, &index);
	spank_get_item(sp, S_JOB_NNODES, &nodes);
	step.node_index = index;
	step.nodes = nodes > index ? nodes : index + 1;
	step.job_nodes = env_number(sp, "SLURM_JOB_NUM_NODES");
	if (name && *name)
		snprintf(step.node, sizeof(step.node), "%s", name);
	else if (gethostname(step.node, sizeof(step.node)) < 0 || !step.node[0])
		snprintf(step.node, sizeof(step.node), "node%u", index);
	step.node[strcspn(step.node, " (:")] = '\0'; /* as figures.h reads it */
}

/* The node's NVIDIA device of NVML index `index`, or NULL. */
static const struct gp_agent_device *device_at(const struct gp_agent_node *node,
					       unsigned index)
{
	for (unsigned i = 0; i < node->devices; i++)
		if (strcmp(node->device[i].vendor->name, "nvidia") == 0 &&
		    node->device[i].local == index)
			return &node->device[i];
	return NULL;
}

/* The step's devices (indices in `list`, "0,2") into out; their count,
 * or -1 having said why. */
static int step_devices(const char *list, const struct gp_agent_node *node,
			const struct gp_agent_device **out)
{
	char copy[256], *save = NULL;
	int n = 0;

	snprintf(copy, sizeof(copy), "%s", list);
	for (char *item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		const struct gp_agent_device *d =
			device_at(node, (unsigned)strtoul(item, NULL, 10));

		if (!d || n == GP_AGENT_DEVICES_MAX) {
			slurm_error("gpupool: Slurm gave GPU %s, which NVML does not "
				    "list here: "
				    "gres.conf's File= lines must follow NVML's order",
				    item);
			return -1;
		}
		if (!d->compatible) {
			slurm_error("gpupool: GPU %s (%s) cannot be shared here: %s",
				    item, d->uuid, d->reason);
			return -1;
		}
		out[n++] = d;
	}
	return n;
}

/* Who the step's processes run as: the files they write on the GPUs are
 * theirs (the job's user), readable by the others' (the site's group,
 * else the job's). */
static struct gp_task_owner owner_of(spank_t sp)
{
	struct gp_task_owner owner = { (uid_t)-1, 0 };
	struct group *g;

	spank_get_item(sp, S_JOB_UID, &owner.uid);
	if (site.group[0] && (g = getgrnam(site.group)))
		owner.gid = g->gr_gid;
	else
		spank_get_item(sp, S_JOB_GID, &owner.gid);
	return owner;
}

/* Holds the node's lock on preparing regions: steps starting at once on
 * one GPU would make its files at once. The lock goes with the fd. */
static int prepare_lock(void)
{
	char path[PATH_MAX];
	int fd;

	gp_region_dir(site.run_dir[0] ? site.run_dir : NULL, path, sizeof(path));
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(path + strlen(path), sizeof(path) - strlen(path),
		 "/.slurm-prepare.lock");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 && flock(fd, LOCK_EX) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Writes the step's limits into the regions of its devices, under the
 * node's lock. */
static int step_admit_locked(spank_t sp, const struct gp_agent_device *const *dev, int n,
			     const struct gp_task_limits *limits)
{
	struct gp_task_owner owner = owner_of(sp);
	const char *dir = site.run_dir[0] ? site.run_dir : NULL;

	if (gp_task_secret_new(step.secret) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		uint64_t total = dev[i]->mem_total_mib << 20;
		int r = gp_region_prepare(dir, dev[i]->uuid, total);

		if (r == 0)
			r = gp_region_open(dir, dev[i]->uuid, total, &step.region[i]);
		if (r == 0) {
			snprintf(step.uuid[i], sizeof(step.uuid[i]), "%s", dev[i]->uuid);
			snprintf(step.model[i], sizeof(step.model[i]), "%s",
				 dev[i]->name);
			step.devices = (unsigned)i + 1;
		}
		if (r == 0)
			r = gp_region_task_admit(step.region[i], step.id, step.secret,
						 limits, &owner);
		if (r < 0) {
			slurm_error("gpupool: cannot write the limits of %s on %s: %s",
				    step.id, dev[i]->uuid, strerror(-r));
			return -1;
		}
	}
	return 0;
}

/* Takes the step's limits out of its devices' regions and gives back
 * what its processes held. */
static void step_forget(void)
{
	for (unsigned i = 0; i < step.devices; i++) {
		gp_region_task_forget(step.region[i], step.id);
		gp_region_reclaim(step.region[i]);
		gp_region_close(step.region[i]);
	}
	step.devices = 0;
}

static int step_admit(spank_t sp, const struct gp_agent_device *const *dev, int n,
		      const struct gp_task_limits *limits)
{
	int lock = prepare_lock(), r = step_admit_locked(sp, dev, n, limits);

	if (lock >= 0)
		close(lock);
	return r;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	const struct gp_agent_device *dev[GP_AGENT_DEVICES_MAX];
	struct gp_agent_node node;
	struct gp_task_limits limits;
	struct gp_slurm_step s = {0};
	char gpus[256], qos[64], err[512];
	int n;

	(void)ac;
	(void)av;
	if (!spank_remote(sp))
		return 0;
	if (spank_getenv(sp, is_batch(sp) ? "SLURM_JOB_GPUS" : "SLURM_STEP_GPUS", gpus,
			 sizeof(gpus)) != ESPANK_SUCCESS)
		return 0; /* no GPU: nothing to do */
	if (gp_devices_discover(site.nvml[0] ? site.nvml : NULL, &node, err,
				sizeof(err)) < 0) {
		slurm_error("gpupool: no GPUs to share: %s", err);
		return -1;
	}
	n = step_devices(gpus, &node, dev);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	s.devices = (unsigned)n;
	s.shards = env_number(sp, "SLURM_SHARDS_ON_NODE");
	s.qos = spank_getenv(sp, "SLURM_JOB_QOS", qos, sizeof(qos)) == ESPANK_SUCCESS
			? qos
			: NULL;
	s.device_mem = UINT64_MAX;
	for (int i = 0; i < n; i++)
		if (dev[i]->mem_total_mib << 20 < s.device_mem)
			s.device_mem = dev[i]->mem_total_mib << 20;
	if (gp_slurm_limits(&site, &user, &s, &limits, err, sizeof(err)) < 0) {
		slurm_error("gpupool: %s", err);
		return -1;
	}
	step_name(sp, step.id, sizeof(step.id));
	step_place(sp);
	step.limits = limits;
	step.start_ns = gp_monotonic_ns();
	if (step_admit(sp, dev, n, &limits) < 0) {
		step_forget();
		return -1;
	}
	step.on = true;
	return 0;
}

/* ---- each task ------------------------------------------------------------- */

/* LD_PRELOAD with libgpushare first, once: the batch step's tasks pass
 * theirs on to the steps they start. */
static void preload_set(spank_t sp)
{
	char now[4096] = "", want[4096 + PATH_MAX + 1];
	bool has = false;

	if (spank_getenv(sp, "LD_PRELOAD", now, sizeof(now)) == ESPANK_SUCCESS) {
		char copy[sizeof(now)], *save = NULL;

		snprintf(copy, sizeof(copy), "%s", now);
		for (char *p = strtok_r(copy, ": ", &save); p;
		     p = strtok_r(NULL, ": ", &save))
			has |= strcmp(p, site.preload) == 0;
	}
	if (has)
		return;
	snprintf(want, sizeof(want), "%s%s%s", site.preload, now[0] ? ":" : "", now);
	spank_setenv(sp, "LD_PRELOAD", want, 1);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!step.on)
		return 0;
	preload_set(sp);
	spank_setenv(sp, "GPUPOOL_TASK_ID", step.id, 1);
	spank_setenv(sp, "GPUPOOL_TASK_SECRET", step.secret, 1);
	if (site.run_dir[0])
		spank_setenv(sp, "GPUPOOL_RUN_DIR", site.run_dir, 1);
	return 0;
}

/* ---- the step's end: its figures ------------------------------------------- */

/* The device time the step's processes held on its i-th device (the
 * arbiter's, charged in the region), in ns. */
static uint64_t step_used_ns(unsigned i)
{
	struct gp_task_info info[GP_REGION_TASKS];
	int n = gp_region_tasks(step.region[i], info, GP_REGION_TASKS);

	for (int k = 0; k < n && k < GP_REGION_TASKS; k++)
		if (strcmp(info[k].id, step.id) == 0)
			return info[k].used_ns;
	return 0;
}

/* The step's figures on this node, a device each: its time, share, used
 * device time and memory limit (figures.h), into f. */
static void step_figures(struct gp_slurm_figure *f)
{
	uint64_t wall_ms = (gp_monotonic_ns() - step.start_ns) / 1000000;

	for (unsigned i = 0; i < step.devices; i++) {
		f[i] = (struct gp_slurm_figure){
			.node_index = step.node_index,
			.nodes = step.nodes,
			.wall_ms = wall_ms,
			.compute = step.limits.compute,
			.used_ms = step_used_ns(i) / 1000000,
			.mem_mib = step.limits.mem_bytes >> 20,
		};
		snprintf(f[i].step, sizeof(f[i].step), "%s", step.id);
		snprintf(f[i].node, sizeof(f[i].node), "%s", step.node);
		snprintf(f[i].uuid, sizeof(f[i].uuid), "%s", step.uuid[i]);
		snprintf(f[i].model, sizeof(f[i].model), "%s", step.model[i]);
	}
}

/* ---- the job in Slurm (publish.h's ops, on libslurm) ----------------------- */

static int job_read(void *ctx, uint32_t job, char **ret_comment, bool *ret_running,
		    char *err, size_t err_len)
{
	job_info_msg_t *info = NULL;
	uint32_t state;
	char *comment;

	(void)ctx;
	if (slurm_load_job(&info, job, SHOW_ALL) != SLURM_SUCCESS || !info ||
	    info->record_count < 1) {
		snprintf(err, err_len, "cannot read job %" PRIu32 ": %s", job,
			 slurm_strerror(slurm_get_errno()));
		slurm_free_job_info_msg(info);
		return -EIO;
	}
	state = info->job_array[0].job_state;
	comment = strdup(
		info->job_array[0].admin_comment ? info->job_array[0].admin_comment : "");
	slurm_free_job_info_msg(info);
	if (!comment)
		return -ENOMEM;
	*ret_comment = comment;
	*ret_running =
		!(state & JOB_COMPLETING) && ((state & JOB_STATE_BASE) == JOB_RUNNING ||
					      (state & JOB_STATE_BASE) == JOB_SUSPENDED);
	return 0;
}

static int job_write(void *ctx, uint32_t job, const char *comment, char *err,
		     size_t err_len)
{
	job_desc_msg_t desc;

	(void)ctx;
	slurm_init_job_desc_msg(&desc);
	desc.job_id = job;
	desc.admin_comment = (char *)comment;
	if (slurm_update_job(&desc) == SLURM_SUCCESS)
		return 0;
	snprintf(err, err_len, "cannot set job %" PRIu32 "'s AdminComment: %s", job,
		 slurm_strerror(slurm_get_errno()));
	return -EIO;
}

static uint64_t clock_ms(void *ctx)
{
	(void)ctx;
	return gp_monotonic_ns() / 1000000;
}

static void pause_ms(void *ctx, uint64_t ms)
{
	struct timespec ts = gp_timespec_of_ns(ms * 1000000);

	(void)ctx;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const struct gp_slurm_job_ops slurm_job = {
	.read = job_read, .write = job_write, .now_ms = clock_ms, .sleep_ms = pause_ms};

/* ---- the step's end: into the job's AdminComment ---------------------------- */

/* This node's entries of the job, and the lock of its writes to the
 * job's AdminComment (publish.h), kept by root in the run directory. */
static void job_file(char *buf, size_t len)
{
	gp_region_dir(site.run_dir[0] ? site.run_dir : NULL, buf, len);
	snprintf(buf + strlen(buf), len - strlen(buf), "/slurm-job-%" PRIu32 ".txt",
		 step.job);
}

/* Adds the step's figures on this node to the job's AdminComment, beside
 * the other nodes' and steps' (as root: what sacct shows users where
 * accounting keeps it), and says what went wrong. */
static void job_comment(const struct gp_slurm_figure *f, unsigned n)
{
	struct gp_slurm_publish p = {
		.job = step.job, .job_nodes = step.job_nodes, .mine = f, .n = n};
	struct gp_slurm_published done;
	char path[PATH_MAX], err[512] = "";
	int r;

	job_file(path, sizeof(path));
	p.job_file = path;
	r = gp_slurm_publish(&p, &slurm_job, &done, err, sizeof(err));
	if (r < 0)
		slurm_error("gpupool: the figures of %s on %s are not in job %" PRIu32
			    "'s AdminComment: %s",
			    step.id, step.node, step.job,
			    r == -ESRCH ? "the job has ended" : err);
	if (done.turn_timed_out)
		slurm_info(
			"gpupool: %s: the figures of node %u of %u were not in job "
			"%" PRIu32
			"'s AdminComment after %d ms; node %u (%s) wrote its own without "
			"waiting longer",
			step.id, step.node_index, step.nodes, step.job,
			GP_SLURM_TURN_WAIT_MS, step.node_index + 1, step.node);
	if (done.slowest_ms >= GP_SLURM_SETTLE_MS)
		slurm_error(
			"gpupool: job %" PRIu32 "'s AdminComment was read and written "
			"%" PRIu64 " ms apart on %s, more than the %d ms other nodes "
			"wait before they check theirs: one may have lost its figures",
			step.job, done.slowest_ms, step.node, GP_SLURM_SETTLE_MS);
}

/* ---- the step's end -------------------------------------------------------- */

/* The step's figures on this node, once: to the slurmd log and the job's
 * AdminComment. */
static void step_report(void)
{
	struct gp_slurm_figure f[GP_AGENT_DEVICES_MAX];
	char line[GP_AGENT_DEVICES_MAX * 512];

	if (step.reported)
		return;
	step.reported = true;
	step_figures(f);
	gp_slurm_figures_format(f, step.devices, line, sizeof(line));
	slurm_info("%s", line);
	job_comment(f, step.devices);
}

/* slurmstepd, as root, as each task ends: after the node's last, the
 * step's figures (before the step's end lets the job end, after which
 * its AdminComment cannot change). */
int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	uint32_t tasks = 0;

	(void)ac;
	(void)av;
	if (!step.on)
		return 0;
	spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &tasks);
	if (++step.exited >= tasks)
		step_report();
	return 0;
}

/* Keeps the figures of step, in order; how many are left. */
static size_t figures_of(struct gp_slurm_figure *f, size_t n, const char *step_id)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].step, step_id) == 0)
			f[kept++] = f[i];
	return kept;
}

/* srun, --gpu-report: the step's figures, as the job's AdminComment has
 * them (each node wrote its own before its tasks were reported ended),
 * on stderr, a line a node. */
static void report_print(void)
{
	/* srun's own environment names its job and step (spank_get_item
	 * has neither in srun's exit). */
	const char *job = getenv("SLURM_JOB_ID"), *id = getenv("SLURM_STEP_ID");
	struct gp_slurm_figure *all = NULL;
	char want[GP_SLURM_FIGURE_TEXT], err[256], *comment = NULL, *text = NULL;
	size_t n = 0;
	bool running;

	if (!job || !id || strspn(job, "0123456789") != strlen(job))
		return;
	snprintf(want, sizeof(want), "slurm-%.20s.%.20s", job, id);
	if (job_read(NULL, (uint32_t)strtoul(job, NULL, 10), &comment, &running, err,
		     sizeof(err)) < 0) {
		slurm_error("gpupool: --gpu-report: %s", err);
		return;
	}
	if (gp_slurm_figures_read(comment, &all, &n) == 0) {
		n = figures_of(all, gp_slurm_figures_unique(all, n), want);
		if (n && gp_slurm_comment_format(all, n, '\n', &text) == 0)
			fprintf(stderr, "%s\n", text);
	}
	free(text);
	free(all);
	free(comment);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp) && spank_context() == S_CTX_LOCAL && user.report)
		report_print();
	if (!spank_remote(sp) || !step.on)
		return 0;
	step_report();
	step_forget();
	step.on = false;
	return 0;
}

/* slurmd, as root, at the job's end: its figures file goes. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	char path[PATH_MAX];

	(void)ac;
	(void)av;
	if (spank_get_item(sp, S_JOB_ID, &step.job) != ESPANK_SUCCESS)
		return 0;
	job_file(path, sizeof(path));
	unlink(path);
	return 0;
}
