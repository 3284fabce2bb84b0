/* simdev.c — the shared state of the simulated devices (see simdev.h).
 *
 * One file, mapped by every process that uses the simulated driver or its
 * NVML: the device set, per-device memory admission and execution turn,
 * a ring of the quanta of device time handed out, and one slot per
 * process. The mutexes (slot claims, and per device memory admission and
 * the turn) are robust, so a process killed while holding one hands it on
 * to the next locker instead of blocking it forever.
 *
 * The file is a base/shfile.h file (made once, its head never moving, a
 * file of another layout replaced), and its process slots are that
 * module's pid slot table: a slot belongs to one process, identified by
 * (pid, start time; base/proc.h), and changes hands by one compare-and-
 * swap of its owner word (a count of claims and the pid). Claims take the
 * slots mutex, so no other claimer competes, and write the free slot's
 * fields (memory, contexts, waits at zero) before publishing it; giving
 * back a dead process's slot needs no mutex. A process killed at any
 * instruction leaves a slot either free or owned by a dead pid (given
 * back by the next reclaim), and the slots mutex, if it held it, passes
 * on. Readers ignore free slots. */
#include "simdev/simdev.h"
#include "simdev/mig.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/proc.h"
#include "base/pshared.h"
#include "base/shfile.h"

#define SIM_MAGIC 0x676f70736d696431ULL
#define SIM_VERSION 8                   /* 8: each device's busy time in all */
#define RING 8192                       /* quanta kept per device */
#define SAMPLES_SPAN_NS 5000000000ULL   /* how far back per-process samples reach */
#define SPEC_MAX 256
#define GiB (1024ULL * 1024 * 1024)
#define MiB (1024ULL * 1024)

/* key, name, memory, compute units (SMs, AICores, CUs, MLU cores, Xe
 * cores), compute capability (NVIDIA), clock, vendor, partition profiles
 * (NULL: none; "mig": NVML's MIG profiles of the model, nvml.c), NVLink
 * island size (the SXM boards: 8 through NVSwitch; 0: PCIe cards; only
 * NVML reports it). */
static const struct sim_model catalogue[] = {
	{ "a100-80g", "NVIDIA A100-SXM4-80GB", 80 * GiB, 108, 8, 0, 1410000, "nvidia", NULL, 8 },
	{ "a100-80g-mig", "NVIDIA A100-SXM4-80GB", 80 * GiB, 108, 8, 0, 1410000, "nvidia", "mig", 8 },
	{ "a100-40g", "NVIDIA A100-SXM4-40GB", 40 * GiB, 108, 8, 0, 1410000, "nvidia", NULL, 8 },
	{ "h100-80g", "NVIDIA H100 80GB HBM3", 80 * GiB, 132, 9, 0, 1980000, "nvidia", NULL, 8 },
	{ "h200-141g", "NVIDIA H200", 143771 * MiB, 132, 9, 0, 1980000, "nvidia", NULL, 8 },
	{ "l40s-48g", "NVIDIA L40S", 46068 * MiB, 142, 8, 9, 2520000, "nvidia", NULL, 0 },
	{ "a10-24g", "NVIDIA A10", 23028 * MiB, 72, 8, 6, 1695000, "nvidia", NULL, 0 },
	{ "v100-32g", "Tesla V100-SXM2-32GB", 32 * GiB, 80, 7, 0, 1530000, "nvidia", NULL, 8 },
	{ "t4-16g", "Tesla T4", 15360 * MiB, 40, 7, 5, 1590000, "nvidia", NULL, 0 },
	{ "ascend-910b-64g", "Ascend910B2", 64 * GiB, 24, 0, 0, 1800000, "ascend", "vnpu", 0 },
	{ "ascend-310p-24g", "Ascend310P3", 24 * GiB, 8, 0, 0, 1080000, "ascend", "vnpu", 0 },
	{ "mi300x-192g", "AMD Instinct MI300X", 192 * GiB, 304, 9, 4, 2100000, "amd", NULL, 0 },
	{ "dcu-k100-64g", "Hygon DCU K100_AI", 64 * GiB, 120, 9, 2, 1500000, "hygon", NULL, 0 },
	{ "mlu370-48g", "MLU370-X8", 48 * GiB, 16, 0, 0, 1300000, "cambricon", NULL, 0 },
	{ "max1550-128g", "Intel(R) Data Center GPU Max 1550", 128 * GiB, 128, 0, 0, 1600000, "intel", NULL, 0 },
	{ NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, 0 },
};

struct quantum {
	_Atomic uint64_t end_ns;        /* written last */
	uint32_t pid;
	uint32_t ns;
};

struct device {
	int model;
	int card;                       /* its own index; a MIG instance's card */
	uint64_t mem_bytes;             /* its memory: the model's, or the instance's */
	uint32_t gpcs;                  /* 0: a card; an instance's compute slices of 7 */
	char uuid[48];
	unsigned char uuid_bytes[16];
	pthread_mutex_t mem_lock;       /* memory admission */
	pthread_mutex_t turn;           /* held while the device executes */
	_Atomic uint32_t turn_gen;      /* bumped by each new holder */
	_Atomic uint64_t last_end_ns;   /* when the last quantum ended */
	_Atomic uint64_t ring_head;
	_Atomic uint32_t lost;          /* fallen off the bus (simctl lose) */
	_Atomic uint64_t busy_ns;       /* device time given out since it was made */
	struct quantum ring[RING];
};

struct proc_slot {
	struct gp_shfile_slot id;       /* owner (claims, pid; 0: free), start time */
	_Atomic uint64_t mem[SIM_INDEX_MAX];
	_Atomic uint64_t mem_max[SIM_INDEX_MAX]; /* the most it held: NVML's accounting */
	_Atomic uint32_t contexts[SIM_INDEX_MAX];
	_Atomic uint32_t waiting[SIM_INDEX_MAX];
};

_Static_assert(offsetof(struct proc_slot, id) == 0, "a slot starts with its owner");

struct shared {
	struct gp_shfile_head head;     /* magic (set last), version, size */
	uint32_t devices;
	char spec[SPEC_MAX];
	pthread_mutex_t slots_lock;     /* slot claims */
	pthread_mutex_t mig_lock;       /* changes of `mig` */
	struct sim_mig_shared mig;
	struct device dev[SIM_INDEX_MAX];       /* the cards, then MIG instances */
	struct proc_slot proc[SIM_PROCS_MAX];
};

struct sim {
	struct shared *sh;
	int slot;                       /* this process's slot */
	pid_t pid;                      /* the process that owns `slot` */
	uint64_t quantum_ns;
	pthread_mutex_t slot_lock;      /* re-registration after fork */
};

const struct sim_model *sim_catalogue(void)
{
	return catalogue;
}

uint64_t sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* ---- processes ------------------------------------------------------ */

static struct gp_shfile_slots slots_of(const struct sim *s)
{
	return (struct gp_shfile_slots){ s->sh->proc, sizeof(s->sh->proc[0]), SIM_PROCS_MAX };
}

/* The pid of the process a slot belongs to, 0 when it is free. */
static pid_t slot_pid(const struct proc_slot *p)
{
	return gp_shfile_slot_pid(&p->id);
}

/* A free slot's fields, before its claim publishes it. */
static void slot_clear(void *slot, void *arg)
{
	struct proc_slot *p = slot;

	(void)arg;
	for (int d = 0; d < SIM_INDEX_MAX; d++) {
		atomic_store(&p->mem[d], 0);
		atomic_store(&p->mem_max[d], 0);
		atomic_store(&p->contexts[d], 0);
		atomic_store(&p->waiting[d], 0);
	}
}

void sim_reclaim(struct sim *s)
{
	struct gp_shfile_slots t = slots_of(s);

	gp_shfile_slot_reclaim(&t, s->pid);
}

int sim_proc_count(struct sim *s)
{
	int n = 0;

	sim_reclaim(s);
	for (int i = 0; i < SIM_PROCS_MAX; i++)
		n += slot_pid(&s->sh->proc[i]) != 0;
	return n;
}

/* Claims a free slot under the slots mutex, which serialises claims. */
static int slot_claim(struct sim *s)
{
	struct gp_shfile_slots t = slots_of(s);
	pid_t pid = getpid();
	uint64_t start = gp_proc_start_time(pid);
	int slot, r = gp_pshared_mutex_lock(&s->sh->slots_lock);

	if (r < 0)
		return r;
	slot = gp_shfile_slot_claim(&t, pid, start, slot_clear, NULL);
	if (slot < 0) {
		sim_reclaim(s);
		slot = gp_shfile_slot_claim(&t, pid, start, slot_clear, NULL);
	}
	pthread_mutex_unlock(&s->sh->slots_lock);
	if (slot < 0)
		return slot;
	s->slot = slot;
	s->pid = pid;
	return 0;
}

/* This process's slot; a child after fork gets one of its own. */
static struct proc_slot *me(struct sim *s)
{
	if (s->pid != getpid()) {
		pthread_mutex_lock(&s->slot_lock);
		if (s->pid != getpid() && slot_claim(s) < 0)
			s->slot = -1;
		pthread_mutex_unlock(&s->slot_lock);
	}
	return s->slot >= 0 ? &s->sh->proc[s->slot] : NULL;
}

/* ---- the device set ------------------------------------------------- */

static const struct sim_model *model_by_key(const char *key, size_t len)
{
	for (const struct sim_model *m = catalogue; m->key; m++)
		if (strlen(m->key) == len && strncmp(m->key, key, len) == 0)
			return m;
	return NULL;
}

static void catalogue_keys(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (const struct sim_model *m = catalogue; m->key && used < len; m++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 m == catalogue ? "" : ", ", m->key);
}

/* Parses "model:count,..." into model indices; returns the device count. */
static int parse_spec(const char *spec, int *model, char *err, size_t err_len)
{
	int n = 0;
	char keys[256];

	for (const char *p = spec; *p;) {
		size_t len = strcspn(p, ":,");
		const struct sim_model *m = model_by_key(p, len);
		long count = 1;
		char *end;

		if (!m) {
			catalogue_keys(keys, sizeof(keys));
			snprintf(err, err_len,
				 "GPUPOOL_SIM_DEVICES: unknown model \"%.*s\"; known models: %s",
				 (int)len, p, keys);
			return -EINVAL;
		}
		p += len;
		if (*p == ':') {
			count = strtol(p + 1, &end, 10);
			if (end == p + 1 || count < 1 || (*end && *end != ',')) {
				snprintf(err, err_len,
					 "GPUPOOL_SIM_DEVICES: \"%s\": a count must be a positive number, as in a100-80g:2",
					 spec);
				return -EINVAL;
			}
			p = end;
		}
		for (long i = 0; i < count; i++) {
			if (n == SIM_DEVICES_MAX) {
				snprintf(err, err_len, "GPUPOOL_SIM_DEVICES: at most %d devices",
					 SIM_DEVICES_MAX);
				return -EINVAL;
			}
			model[n++] = (int)(m - catalogue);
		}
		if (*p == ',')
			p++;
	}
	if (n == 0) {
		snprintf(err, err_len, "GPUPOOL_SIM_DEVICES is empty; e.g. GPUPOOL_SIM_DEVICES=a100-80g:2");
		return -EINVAL;
	}
	return n;
}

/* What a new state file is made for. */
struct sim_new {
	const char *spec;
	const int *model;
	int n;
};

/* How each vendor's tools write a device's unique id: NVIDIA's and
 * ROCr's "GPU-", the others ours (their libraries have no UUID text of
 * the same form; the prefix keeps region files apart by vendor). */
static const char *uuid_prefix(const char *vendor)
{
	static const struct {
		const char *vendor, *prefix;
	} prefixes[] = {
		{ "ascend", "NPU-" }, { "hygon", "DCU-" }, { "cambricon", "MLU-" }, { "intel", "XPU-" },
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strcmp(vendor, prefixes[i].vendor) == 0)
			return prefixes[i].prefix;
	return "GPU-";
}

static int shared_init(void *map, const void *arg)
{
	const struct sim_new *new = arg;
	struct shared *sh = map;
	uint64_t h = fnv1a(new->spec);

	sh->devices = (uint32_t)new->n;
	snprintf(sh->spec, sizeof(sh->spec), "%s", new->spec);
	for (int i = 0; i < new->n; i++) {
		struct device *d = &sh->dev[i];
		uint64_t u = (h ^ ((uint64_t)i * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;

		d->model = new->model[i];
		d->card = i;
		d->mem_bytes = catalogue[d->model].mem_bytes;
		for (int b = 0; b < 16; b++)
			d->uuid_bytes[b] = (unsigned char)((b < 8 ? u : ~u * 31) >> (8 * (b % 8)));
		d->uuid_bytes[6] = (unsigned char)((d->uuid_bytes[6] & 0x0f) | 0x40);
		snprintf(d->uuid, sizeof(d->uuid),
			 "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 uuid_prefix(catalogue[d->model].vendor), d->uuid_bytes[0], d->uuid_bytes[1], d->uuid_bytes[2], d->uuid_bytes[3],
			 d->uuid_bytes[4], d->uuid_bytes[5], d->uuid_bytes[6], d->uuid_bytes[7],
			 d->uuid_bytes[8], d->uuid_bytes[9], d->uuid_bytes[10], d->uuid_bytes[11],
			 d->uuid_bytes[12], d->uuid_bytes[13], d->uuid_bytes[14], d->uuid_bytes[15]);
		if (gp_pshared_mutex_init(&d->mem_lock) < 0 || gp_pshared_mutex_init(&d->turn) < 0)
			return -ENOMEM;
	}
	for (int i = SIM_DEVICES_MAX; i < SIM_INDEX_MAX; i++)
		if (gp_pshared_mutex_init(&sh->dev[i].mem_lock) < 0 ||
		    gp_pshared_mutex_init(&sh->dev[i].turn) < 0)
			return -ENOMEM;
	if (gp_pshared_mutex_init(&sh->slots_lock) < 0 || gp_pshared_mutex_init(&sh->mig_lock) < 0)
		return -ENOMEM;
	return 0;
}

/* Is this state file the one of the device set? (The file's name is a
 * hash of the set, which two sets may share.) */
static bool shared_matches(const void *map, const void *arg)
{
	const struct shared *sh = map;

	return strcmp(sh->spec, ((const struct sim_new *)arg)->spec) == 0;
}

/* Where the state lives; true when the directory was named explicitly
 * (GPUPOOL_SIM_DIR): then its devices are the machine's, shared by every
 * user who can reach the directory, as a real driver's device files
 * (mode 0666) are; the default directories are the user's own. */
static bool state_dir(char *buf, size_t len)
{
	const char *dir = getenv("GPUPOOL_SIM_DIR"), *run = getenv("XDG_RUNTIME_DIR");

	if (dir && *dir)
		snprintf(buf, len, "%s", dir);
	else if (run && *run)
		snprintf(buf, len, "%s/gpupool-sim", run);
	else
		snprintf(buf, len, "/tmp/gpupool-sim-%u", (unsigned)getuid());
	return dir && *dir;
}

/* Opens or creates the state file for `spec`; one left half made by a
 * creator that died, or of another layout or set, is replaced. */
static int map_state(const char *spec, const int *model, int n, struct shared **ret,
		     char *err, size_t err_len)
{
	char dir[PATH_MAX - 64], path[PATH_MAX];
	bool shared = state_dir(dir, sizeof(dir));
	struct sim_new new = { spec, model, n };
	struct gp_shfile_layout layout = {
		SIM_MAGIC, SIM_VERSION, sizeof(struct shared), shared ? 0666 : 0600,
		shared_init, shared_matches, &new,
	};
	int r;

	if (mkdir(dir, shared ? 0755 : 0700) < 0 && errno != EEXIST) {
		snprintf(err, err_len, "simdev: cannot create %s: %s (set GPUPOOL_SIM_DIR)",
			 dir, strerror(errno));
		return -errno;
	}
	snprintf(path, sizeof(path), "%s/sim-%016llx.shm", dir,
		 (unsigned long long)fnv1a(spec));
	r = gp_shfile_open(path, &layout, GP_SHFILE_CREATE, (void **)ret);
	if (r < 0) {
		snprintf(err, err_len, "simdev: cannot set up %s: %s", path, strerror(-r));
		return -EIO;
	}
	return 0;
}

int sim_open(struct sim **ret_sim, char *err, size_t err_len)
{
	const char *spec = getenv("GPUPOOL_SIM_DEVICES"), *quantum = getenv("GPUPOOL_SIM_QUANTUM_US");
	int model[SIM_DEVICES_MAX], n, r;
	struct sim *s;

	if (!spec || !*spec) {
		snprintf(err, err_len,
			 "GPUPOOL_SIM_DEVICES is not set; e.g. GPUPOOL_SIM_DEVICES=a100-80g:2,t4-16g:2");
		return -ENODEV;
	}
	if (strlen(spec) >= SPEC_MAX) {
		snprintf(err, err_len, "GPUPOOL_SIM_DEVICES is too long");
		return -EINVAL;
	}
	n = parse_spec(spec, model, err, err_len);
	if (n < 0)
		return n;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->slot_lock, NULL);
	s->quantum_ns = 1000000;
	if (quantum && atol(quantum) > 0)
		s->quantum_ns = (uint64_t)atol(quantum) * 1000;
	r = map_state(spec, model, n, &s->sh, err, err_len);
	if (r == 0) {
		r = slot_claim(s);
		if (r == -EUSERS)
			snprintf(err, err_len,
				 "simdev: more than %d processes use the simulated devices",
				 SIM_PROCS_MAX);
		else if (r < 0)
			snprintf(err, err_len, "simdev: cannot claim a process slot: %s",
				 strerror(-r));
	}
	if (r < 0) {
		if (s->sh)
			munmap(s->sh, sizeof(*s->sh));
		free(s);
		return r;
	}
	*ret_sim = s;
	return 0;
}

int sim_device_count(const struct sim *s)
{
	return (int)s->sh->devices;
}

int sim_vendor_devices(const struct sim *s, const char *vendor, int *out, int max)
{
	int n = 0;

	for (int d = 0; d < (int)s->sh->devices; d++)
		if (strcmp(catalogue[s->sh->dev[d].model].vendor, vendor) == 0 && n < max)
			out[n++] = d;
	return n;
}

const struct sim_model *sim_device_model(const struct sim *s, int dev)
{
	return &catalogue[s->sh->dev[dev].model];
}

const char *sim_device_uuid(const struct sim *s, int dev)
{
	return s->sh->dev[dev].uuid;
}

void sim_device_uuid_bytes(const struct sim *s, int dev, unsigned char out[16])
{
	memcpy(out, s->sh->dev[dev].uuid_bytes, 16);
}

int sim_device_card(const struct sim *s, int dev)
{
	return dev < SIM_DEVICES_MAX ? dev : s->sh->dev[dev].card;
}

int sim_device_pci_bus(const struct sim *s, int dev)
{
	return 0x10 + sim_device_card(s, dev);
}

int sim_device_link_island(const struct sim *s, int dev)
{
	int model, rank = 0;

	if (dev < 0 || dev >= SIM_DEVICES_MAX || (uint32_t)dev >= s->sh->devices)
		return -1;
	model = s->sh->dev[dev].model;
	if (catalogue[model].link_group <= 0)
		return -1;
	for (int i = 0; i < dev; i++)
		rank += s->sh->dev[i].model == model;
	return model * SIM_DEVICES_MAX + rank / catalogue[model].link_group;
}

bool sim_device_lost(const struct sim *s, int dev)
{
	return atomic_load(&s->sh->dev[sim_device_card(s, dev)].lost) != 0;
}

void sim_device_set_lost(struct sim *s, int dev, bool lost)
{
	atomic_store(&s->sh->dev[dev].lost, lost);
}

uint64_t sim_device_busy_ns(const struct sim *s, int dev)
{
	return atomic_load(&s->sh->dev[dev].busy_ns);
}

/* ---- memory and contexts -------------------------------------------- */

uint64_t sim_mem_total(const struct sim *s, int dev)
{
	return s->sh->dev[dev].mem_bytes;
}

static uint64_t mem_counted(const struct sim *s, int dev)
{
	uint64_t used = 0;

	for (int i = 0; i < SIM_PROCS_MAX; i++)
		if (slot_pid(&s->sh->proc[i]) != 0)
			used += atomic_load(&s->sh->proc[i].mem[dev]);
	return used;
}

uint64_t sim_mem_used(struct sim *s, int dev)
{
	uint64_t used, total = sim_mem_total(s, dev);

	sim_reclaim(s);
	used = mem_counted(s, dev);
	return used < total ? used : total;
}

/* *word = max(*word, v). */
static void max_raise(_Atomic uint64_t *word, uint64_t v)
{
	uint64_t was = atomic_load(word);

	while (was < v && !atomic_compare_exchange_weak(word, &was, v))
		;
}

int sim_mem_reserve(struct sim *s, int dev, uint64_t bytes)
{
	struct proc_slot *p = me(s);
	struct device *d = &s->sh->dev[dev];
	uint64_t total = sim_mem_total(s, dev);

	if (!p)
		return -EUSERS;
	for (int attempt = 0; attempt < 2; attempt++) {
		bool fits;

		gp_pshared_mutex_lock(&d->mem_lock);
		fits = bytes <= total && mem_counted(s, dev) <= total - bytes;
		if (fits)
			max_raise(&p->mem_max[dev], atomic_fetch_add(&p->mem[dev], bytes) + bytes);
		pthread_mutex_unlock(&d->mem_lock);
		if (fits)
			return 0;
		sim_reclaim(s);         /* the dead may hold what we need */
	}
	return -ENOMEM;
}

void sim_mem_release(struct sim *s, int dev, uint64_t bytes)
{
	struct proc_slot *p = me(s);
	uint64_t held;

	if (!p)
		return;
	held = atomic_load(&p->mem[dev]);
	while (!atomic_compare_exchange_weak(&p->mem[dev], &held,
					     held > bytes ? held - bytes : 0))
		;
}

void sim_context_add(struct sim *s, int dev)
{
	struct proc_slot *p = me(s);

	if (p)
		atomic_fetch_add(&p->contexts[dev], 1);
}

void sim_context_remove(struct sim *s, int dev)
{
	struct proc_slot *p = me(s);

	if (p && atomic_load(&p->contexts[dev]) > 0)
		atomic_fetch_sub(&p->contexts[dev], 1);
}

int sim_device_procs(struct sim *s, int dev, struct sim_proc_info *out, int max)
{
	int n = 0;

	sim_reclaim(s);
	for (int i = 0; i < SIM_PROCS_MAX; i++) {
		struct proc_slot *p = &s->sh->proc[i];
		pid_t pid = slot_pid(p);
		uint64_t mem = atomic_load(&p->mem[dev]);

		if (pid == 0 || (mem == 0 && atomic_load(&p->contexts[dev]) == 0))
			continue;
		if (n < max)
			out[n] = (struct sim_proc_info){ pid, mem, atomic_load(&p->mem_max[dev]) };
		n++;
	}
	return n;
}

uint64_t sim_process_mem_max(struct sim *s, int dev, pid_t pid)
{
	uint64_t most = 0;

	for (int i = 0; i < SIM_PROCS_MAX; i++)
		if (slot_pid(&s->sh->proc[i]) == pid)
			most += atomic_load(&s->sh->proc[i].mem_max[dev]);
	return most;
}

/* ---- time-slicing --------------------------------------------------- */

static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = gp_timespec_of_ns(deadline_ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static bool others_waiting(const struct sim *s, int dev, int self)
{
	for (int i = 0; i < SIM_PROCS_MAX; i++)
		if (i != self && slot_pid(&s->sh->proc[i]) != 0 &&
		    atomic_load(&s->sh->proc[i].waiting[dev]) > 0)
			return true;
	return false;
}

/* Takes the device's turn; true when another process had it first. */
static bool turn_take(struct sim *s, struct proc_slot *p, int dev)
{
	struct device *d = &s->sh->dev[dev];
	int r = pthread_mutex_trylock(&d->turn);
	bool waited = r == EBUSY;

	if (r == EOWNERDEAD)
		pthread_mutex_consistent(&d->turn);
	if (waited) {
		atomic_fetch_add(&p->waiting[dev], 1);
		gp_pshared_mutex_lock(&d->turn);
		atomic_fetch_sub(&p->waiting[dev], 1);
	}
	atomic_fetch_add(&d->turn_gen, 1);
	gp_futex_wake_all(&d->turn_gen);
	return waited;
}

/* Gives the turn back; when another process waits, lets it in before
 * taking the device again (at most two quanta, in case it died). */
static void turn_give(struct sim *s, int dev)
{
	struct device *d = &s->sh->dev[dev];
	uint32_t gen = atomic_load(&d->turn_gen);
	bool handoff = others_waiting(s, dev, s->slot);
	uint64_t deadline = sim_now_ns() + 2 * s->quantum_ns;

	pthread_mutex_unlock(&d->turn);
	while (handoff && atomic_load(&d->turn_gen) == gen) {
		uint64_t now = sim_now_ns();

		if (now >= deadline) {
			sim_reclaim(s);         /* the waiter may have died */
			break;
		}
		gp_futex_wait(&d->turn_gen, gen, deadline - now);
	}
}

static void quantum_record(struct device *d, uint64_t end_ns, pid_t pid, uint64_t ns)
{
	uint64_t i = atomic_fetch_add(&d->ring_head, 1) % RING;

	atomic_store(&d->ring[i].end_ns, 0);
	d->ring[i].pid = (uint32_t)pid;
	d->ring[i].ns = (uint32_t)ns;
	atomic_store(&d->ring[i].end_ns, end_ns);
	atomic_fetch_add(&d->busy_ns, ns);
}

/* A quantum handed over by a process we waited for starts where its
 * quantum ended: the device switches contexts at once, and the host's
 * wake-up latency is not device idle time. Otherwise it starts now. */
static uint64_t quantum_start(const struct sim *s, struct device *d, bool handed_over)
{
	uint64_t now = sim_now_ns(), last = atomic_load(&d->last_end_ns);

	if (handed_over && last && now >= last && now - last < s->quantum_ns)
		return last;
	return now;
}

void sim_device_run(struct sim *s, int dev, uint64_t ns)
{
	struct proc_slot *p = me(s);
	struct device *d = &s->sh->dev[dev];

	if (!p)
		return;
	if (d->gpcs)                    /* a MIG instance: gpcs of the card's 7 */
		ns = ns * SIM_MIG_GPCS / d->gpcs;
	prctl(PR_SET_TIMERSLACK, 1000UL);       /* this thread: 1 µs */
	while (ns > 0) {
		uint64_t start, end, slice = ns < s->quantum_ns ? ns : s->quantum_ns;

		start = quantum_start(s, d, turn_take(s, p, dev));
		sleep_until(start + slice);
		end = sim_now_ns();
		quantum_record(d, end, s->pid, end - start);
		atomic_store(&d->last_end_ns, end);
		ns -= end - start < ns ? end - start : ns;
		turn_give(s, dev);
	}
}

/* Device time given to `pid` (or to anyone, pid 0) in (now - window, now]. */
static uint64_t busy_in_window(struct sim *s, int dev, pid_t pid, uint64_t window_ns)
{
	struct device *d = &s->sh->dev[dev];
	uint64_t now = sim_now_ns(), from = now > window_ns ? now - window_ns : 0, busy = 0;
	uint64_t head = atomic_load(&d->ring_head);

	for (uint64_t k = 0; k < RING && k < head; k++) {
		struct quantum *q = &d->ring[(head - 1 - k) % RING];
		uint64_t end = atomic_load(&q->end_ns), start;

		if (end == 0)
			continue;
		start = end - q->ns;
		if (end <= from) {
			if (end + 100000000ULL < from)
				break;          /* older than any quantum could reach */
			continue;
		}
		if (pid && q->pid != (uint32_t)pid)
			continue;
		busy += end - (start > from ? start : from);
	}
	return busy;
}

static unsigned percent(uint64_t part, uint64_t whole)
{
	uint64_t pct = whole ? (part * 100 + whole / 2) / whole : 0;

	return pct > 100 ? 100 : (unsigned)pct;
}

unsigned sim_device_utilization(struct sim *s, int dev, uint64_t window_ns)
{
	if (!window_ns)
		window_ns = 1000000000ULL;
	return percent(busy_in_window(s, dev, 0, window_ns), window_ns);
}

unsigned sim_process_utilization(struct sim *s, int dev, pid_t pid, uint64_t window_ns)
{
	if (!window_ns)
		window_ns = 1000000000ULL;
	return percent(busy_in_window(s, dev, pid, window_ns), window_ns);
}

int sim_device_samples(struct sim *s, int dev, uint64_t since_us,
		       struct sim_proc_sample *out, int max)
{
	struct device *d = &s->sh->dev[dev];
	uint64_t now = sim_now_ns(), now_us = realtime_us(), head = atomic_load(&d->ring_head);
	uint64_t window;
	pid_t seen[SIM_PROCS_MAX];
	int n = 0, found = 0;

	for (uint64_t k = 0; k < RING && k < head && found < SIM_PROCS_MAX; k++) {
		struct quantum *q = &d->ring[(head - 1 - k) % RING];
		uint64_t end = atomic_load(&q->end_ns);
		bool known = false;

		if (end == 0)
			continue;
		if (end + SAMPLES_SPAN_NS < now)
			break;
		/* NVML time stamps are wall-clock µs; ours are monotonic. */
		if (now_us - (now - end) / 1000 <= since_us)
			continue;
		for (int i = 0; i < found; i++)
			known |= seen[i] == (pid_t)q->pid;
		if (!known)
			seen[found++] = (pid_t)q->pid;
	}
	/* Each sample covers the time since the caller's last one (up to
	 * SAMPLES_SPAN_NS back), as NVML's samples each cover their own
	 * period: what a caller adds up over its calls is the device time
	 * given out, even when a busy host makes it call late. Asked for
	 * every sample (since 0, or older), the last second, as the device's
	 * own utilization. */
	window = since_us && now_us > since_us && (now_us - since_us) * 1000 < SAMPLES_SPAN_NS
			 ? (now_us - since_us) * 1000
			 : 1000000000ULL;
	for (int i = 0; i < found; i++) {
		if (n < max)
			out[n] = (struct sim_proc_sample){
				seen[i], now_us,
				sim_process_utilization(s, dev, seen[i], window) };
		n++;
	}
	return n;
}

/* ---- the parts of a card (mig.c) ------------------------------------ */

struct sim_mig_shared *sim_mig_area(struct sim *s)
{
	return &s->sh->mig;
}

int sim_mig_lock(struct sim *s)
{
	return gp_pshared_mutex_lock(&s->sh->mig_lock);
}

void sim_mig_unlock(struct sim *s)
{
	pthread_mutex_unlock(&s->sh->mig_lock);
}

void sim_part_init(struct sim *s, int dev, int card, uint64_t mem_bytes, unsigned gpcs,
		   uint64_t serial)
{
	struct device *d = &s->sh->dev[dev], *c = &s->sh->dev[card];
	uint64_t u = (fnv1a(c->uuid) ^ (serial * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
	unsigned char *b = d->uuid_bytes;

	d->model = c->model;
	d->card = card;
	d->mem_bytes = mem_bytes;
	d->gpcs = gpcs;
	atomic_store(&d->lost, 0);
	atomic_store(&d->last_end_ns, 0);
	atomic_store(&d->ring_head, 0);         /* the last life's quanta are out of reach */
	for (int i = 0; i < 16; i++)
		b[i] = (unsigned char)((i < 8 ? u : ~u * 31) >> (8 * (i % 8)));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	snprintf(d->uuid, sizeof(d->uuid),
		 "MIG-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

bool sim_device_busy(struct sim *s, int dev)
{
	sim_reclaim(s);
	for (int i = 0; i < SIM_PROCS_MAX; i++) {
		struct proc_slot *p = &s->sh->proc[i];

		if (slot_pid(p) != 0 && (atomic_load(&p->mem[dev]) != 0 ||
					 atomic_load(&p->contexts[dev]) != 0))
			return true;
	}
	return false;
}
