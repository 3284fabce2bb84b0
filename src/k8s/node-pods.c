/* node-pods.c — this node's pods (see node-impl.h): Allocate and
 * GetPreferredAllocation for the kubelet, live changes and ends from the
 * pods' informer. */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "k8s/names.h"
#include "k8s/node-impl.h"
#include "vendor/vendor.h"

#define MIB (1024ULL * 1024ULL)
#define EVENT_COMPONENT "gpupool-node"

int gp_node_device_of(const struct node *n, const char *uuid)
{
	for (unsigned i = 0; i < n->devices; i++)
		if (strcmp(n->dev[i].d.uuid, uuid) == 0)
			return (int)i;
	return -1;
}

/* The limits the pod's sealed placement grants (seal.h): what its own
 * annotations ask for reaches it only through the server. */
static void limits_wanted(const struct gp_kube_pod *p, struct gp_task_limits *ret)
{
	const struct gp_kube_placement *pl = &p->placement;

	*ret = (struct gp_task_limits){
		.mem_bytes = pl->whole ? 0 : pl->memory_mib * MIB,
		.compute = pl->compute,
		.priority = pl->priority,
		.isolation = pl->isolation == GP_KUBE_SHARED ? GP_ISOLATION_SHARED
							     : GP_ISOLATION_HARD,
	};
}

/* The task a pod's container runs as: "namespace:pod:container" (what
 * `gpupool region ls` shows), or "k8s-UID" when that is too long for a
 * task id (the interposer takes no '/'; ':' is in no Kubernetes name, so
 * the three parts never run together). Unique while the pod lives: a pod
 * made again with the same name comes after the old one's task is
 * forgotten. */
static void task_id(const struct gp_kube_pod *p, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s:%s:%s", p->ns, p->name, p->container);

	if (n < 0 || (size_t)n >= len)
		snprintf(buf, len, "k8s-%.59s", p->uid);       /* a uid is 36 characters */
}

/* ---- the API, from any thread ----------------------------------------------- */

static void pod_annotate(struct node *n, const struct gp_kube_pod *p, const char *key,
			 const char *value)
{
	char path[2 * GP_KUBE_NAME_MAX + 64];
	json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", key, value);

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", p->ns, p->name);
	pthread_mutex_lock(&n->api_lock);
	if (patch && gp_kube_merge_patch(n->api, path, patch, NULL, NULL) < 0)
		fprintf(stderr, "gpupool node: cannot annotate pod %s/%s: %s\n", p->ns, p->name,
			gp_kube_error(n->api));
	pthread_mutex_unlock(&n->api_lock);
	json_decref(patch);
}

static void pod_event(struct node *n, const struct gp_kube_pod *p, const char *type,
		      const char *reason, const char *message)
{
	pthread_mutex_lock(&n->api_lock);
	gp_kube_event(n->api, "Pod", p->ns, p->name, p->uid, type, reason, message,
		      EVENT_COMPONENT);
	pthread_mutex_unlock(&n->api_lock);
}

/* ---- admission and release ------------------------------------------------------- */

/* The pod's devices on this node; -ENODEV when one is not here. */
static int pod_devices(struct node *n, struct node_pod *k)
{
	k->devices = 0;
	for (unsigned i = 0; i < k->p.placement.devices; i++) {
		int d = gp_node_device_of(n, k->p.placement.device[i]);

		if (d < 0)
			return -ENODEV;
		k->dev[k->devices++] = d;
	}
	return 0;
}

/* Pod k's i-th device as its containers see it: its partition on a card
 * in partition mode, else the device itself. */
static const char *pod_uuid(const struct node *n, const struct node_pod *k, unsigned i)
{
	const struct gp_part *x = k->on_parts ? gp_parts_of(&n->parts, k->p.uid, k->dev[i]) : NULL;

	return x ? x->uuid : n->dev[k->dev[i]].d.uuid;
}

static struct gp_region *pod_region(const struct node *n, const struct node_pod *k, unsigned i)
{
	const struct gp_part *x = k->on_parts ? gp_parts_of(&n->parts, k->p.uid, k->dev[i]) : NULL;

	return k->on_parts ? (x ? x->region : NULL) : n->dev[k->dev[i]].region;
}

/* Does the pod have an interposer (a slice, or a partition whose region
 * holds its limits whole), rather than whole devices of its own? */
static bool pod_sliced(const struct node_pod *k)
{
	return !k->p.placement.whole || k->on_parts;
}

/* On cards in partition mode (MIG), the pod's partitions, owned by its
 * UID (agent/partitions.h: the profile its share needs, a whole card the
 * largest, at the starts its placement names), and its limits there:
 * the whole partition (the hardware holds its size). */
static int parts_make(struct node *n, struct node_pod *k, char *err, size_t len)
{
	const struct gp_kube_placement *pl = &k->p.placement;
	struct gp_parts_ask ask = { .owner = k->p.uid, .devices = k->devices, .whole = pl->whole,
				    .mem_mib = pl->memory_mib, .compute_pct = pl->compute };
	int r;

	for (unsigned i = 0; i < k->devices; i++) {
		ask.device[i] = (unsigned)k->dev[i];
		ask.part_start[i] = pl->part_start[i];
	}
	r = gp_parts_make(&n->parts, &ask, err, len);
	k->on_parts = r > 0;
	if (k->on_parts)
		k->applied = (struct gp_task_limits){ .mem_bytes = 0, .compute = 100,
						      .priority = k->applied.priority,
						      .isolation = k->applied.isolation };
	return r < 0 ? r : 0;
}

/* Admits the pod's task on each of its devices with a new secret (a whole
 * device has no interposer: nothing to admit); on cards in partition mode
 * its partitions are made first, and it is admitted in theirs. */
static int task_admit(struct node *n, struct node_pod *k, char *err, size_t len)
{
	char *secret = k->secret;
	/* A container's user is not known here: the task's file is the
	 * node's, writable by the task group (docs/kubernetes.md). */
	struct gp_task_owner owner = { (uid_t)-1, n->o.task_group };
	int r = pod_devices(n, k);

	if (r < 0) {
		snprintf(err, len, "pod %s/%s was placed on a device this node does not have",
			 k->p.ns, k->p.name);
		return r;
	}
	task_id(&k->p, k->task, sizeof(k->task));
	limits_wanted(&k->p, &k->applied);
	if ((r = gp_task_secret_new(secret)) < 0) {
		snprintf(err, len, "cannot make a task secret: %s", strerror(-r));
		return r;
	}
	if ((r = parts_make(n, k, err, len)) < 0)
		return r;
	for (unsigned i = 0; pod_sliced(k) && i < k->devices; i++) {
		struct gp_region *g = pod_region(n, k, i);

		if (!g || (r = gp_region_task_admit(g, k->task, secret, &k->applied,
						     &owner)) < 0) {
			snprintf(err, len, "cannot admit task %s on %s: %s", k->task,
				 pod_uuid(n, k, i), g ? strerror(-r) : "device not usable");
			while (i-- > 0)         /* all devices or none */
				gp_region_task_forget(pod_region(n, k, i), k->task);
			gp_parts_end(&n->parts, k->p.uid);
			k->on_parts = false;
			return g ? r : -ENODEV;
		}
	}
	k->allocated = true;
	gp_node_meter_start(n, k);
	n->allocations++;
	return 0;
}

/* The pod ended or went: its task is forgotten on its devices, so that
 * what still runs of it is refused, and the slots of its dead processes
 * are given back; its partitions are destroyed (again later while their
 * driver holds them: partitions.h). */
static void task_release(struct node *n, struct node_pod *k)
{
	explicit_bzero(k->secret, sizeof(k->secret));
	if (!k->allocated)
		return;
	for (unsigned i = 0; pod_sliced(k) && i < k->devices; i++) {
		struct gp_region *g = pod_region(n, k, i);

		if (g) {
			gp_region_task_forget(g, k->task);
			gp_region_reclaim(g);
		}
	}
	if (k->on_parts)
		gp_parts_end(&n->parts, k->p.uid);
	k->on_parts = false;
	k->allocated = false;
	n->releases++;
}

/* ---- Allocate ---------------------------------------------------------------------- */

/* The units pod k's next GPU container asks for; 0: it has none left to
 * allocate. */
static unsigned next_container_units(const struct node_pod *k)
{
	return k->containers_allocated < k->p.gpu_containers
		       ? k->p.container_units[k->containers_allocated]
		       : 0;
}

/* The pod the extender placed here that waits for a container: its next
 * GPU container asks for as many units as the kubelet allocates, it is
 * not being deleted, the earliest bound. */
static struct node_pod *pod_waiting(struct node *n, size_t units)
{
	struct node_pod *best = NULL;

	for (size_t i = 0; i < n->pods.cap; i++) {
		struct node_pod *k = n->pods.slot[i].value;

		if (!n->pods.slot[i].key || k->p.deleting || !k->p.placed ||
		    next_container_units(k) != units ||
		    strcmp(k->p.placement.node, n->o.node_name) != 0)
			continue;
		if (!best || k->p.placement.bound_at < best->p.placement.bound_at)
			best = k;
	}
	return best;
}

static void pod_put(struct node *n, const json_t *obj);

/* The pods of this node, listed now: for an Allocate that came before the
 * informer brought the pod's placement. */
static void pods_relist(struct node *n)
{
	char path[GP_KUBE_NAME_MAX + 64], version[64];
	json_t *items = NULL, *obj;
	size_t i;

	snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s",
		 n->o.node_name);
	pthread_mutex_lock(&n->api_lock);
	gp_kube_list(n->api, path, &items, version, sizeof(version), NULL);
	pthread_mutex_unlock(&n->api_lock);
	pthread_mutex_lock(&n->lock);
	json_array_foreach(items, i, obj)
		pod_put(n, obj);
	pthread_mutex_unlock(&n->lock);
	json_decref(items);
}

/* The pod that waits for `units` (pod_waiting); when none is known yet
 * (the kubelet may ask before the informer has brought the pod's bind),
 * this node's pods are listed again and looked at once more. Returns
 * with n->lock held, whatever it found. */
static struct node_pod *pod_waiting_listed(struct node *n, size_t units)
{
	struct node_pod *k;

	pthread_mutex_lock(&n->lock);
	if ((k = pod_waiting(n, units)))
		return k;
	pthread_mutex_unlock(&n->lock);
	pods_relist(n);
	pthread_mutex_lock(&n->lock);
	return pod_waiting(n, units);
}

/* A device's files in the container's run folder (not the host's folder:
 * the pod sees only its own devices' files): the limits table read-only —
 * a container that runs as root could write the table itself otherwise,
 * and raise its own limits —, the folder of the device's task files
 * read-only (the other tasks' turns, which its processes read), and its
 * own task's file, which its processes write, over it. */
static int device_mounts(struct node *n, const struct node_pod *k, unsigned i,
			 struct gp_plugin_response *r)
{
	const char *uuid = pod_uuid(n, k, i), *in = GP_NODE_RUN_DIR_IN_CONTAINER;
	char host[PATH_MAX], limits[200], tasks_in[200], mine_in[200], tasks[PATH_MAX],
		mine[PATH_MAX];
	int err = 0;

	if (snprintf(host, sizeof(host), "%s/device-%s.limits", n->o.run_dir, uuid) >=
		    (int)sizeof(host) ||
	    gp_region_tasks_dir(n->o.run_dir, uuid, tasks, sizeof(tasks)) < 0 ||
	    gp_region_task_path(pod_region(n, k, i), k->task, mine, sizeof(mine)) < 0 ||
	    snprintf(limits, sizeof(limits), "%s/device-%s.limits", in, uuid) >=
		    (int)sizeof(limits) ||
	    snprintf(tasks_in, sizeof(tasks_in), "%s/device-%s.tasks", in, uuid) >=
		    (int)sizeof(tasks_in) ||
	    snprintf(mine_in, sizeof(mine_in), "%s%s", tasks_in, strrchr(mine, '/')) >=
		    (int)sizeof(mine_in))
		return -ENAMETOOLONG;
	err |= gp_plugin_response_mount(r, limits, host, true);
	err |= gp_plugin_response_mount(r, tasks_in, tasks, true);
	err |= gp_plugin_response_mount(r, mine_in, mine, false);
	return err;
}

/* Each vendor's visibility variables for the pod's devices of that vendor
 * (vendor.h: CUDA's by UUID, the others by their vendor's indices), and
 * NVIDIA_VISIBLE_DEVICES for NVIDIA's container runtime. */
static int visible_fill(struct node *n, const struct node_pod *k, struct gp_plugin_response *r)
{
	int err = 0;

	for (size_t v = 0; gp_vendors[v]; v++) {
		const struct gp_vendor_ops *ops = gp_vendors[v];
		char list[GP_NODE_DEVICES_MAX * (GP_KUBE_UUID_MAX + 1)] = "";
		size_t used = 0;

		for (unsigned i = 0; i < k->devices && used < sizeof(list); i++) {
			const struct gp_agent_device *d = &n->dev[k->dev[i]].d;

			if (d->vendor != ops)
				continue;
			used += ops->visible_by_uuid
					? (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
							   used ? "," : "", pod_uuid(n, k, i))
					: (size_t)snprintf(list + used, sizeof(list) - used, "%s%u",
							   used ? "," : "", d->local);
		}
		if (!used)
			continue;
		for (const char *const *name = ops->visible_env; *name; name++)
			err |= gp_plugin_response_env(r, *name, list);
		if (strcmp(ops->name, "nvidia") == 0)
			err |= gp_plugin_response_env(r, "NVIDIA_VISIBLE_DEVICES", list);
	}
	return err;
}

/* The memory of the pod's slice per device: its partition's own on a
 * card in partition mode (the least of them), else its placement's. */
static uint64_t pod_mem_mib(const struct node *n, const struct node_pod *k)
{
	uint64_t least = UINT64_MAX;

	for (unsigned i = 0; k->on_parts && i < k->devices; i++) {
		const struct gp_part *x = gp_parts_of(&n->parts, k->p.uid, k->dev[i]);

		if (x && x->mem_mib < least)
			least = x->mem_mib;
	}
	return least != UINT64_MAX ? least : k->p.placement.memory_mib;
}

static int response_fill(struct node *n, const struct node_pod *k, const char *secret,
			 struct gp_plugin_response *r)
{
	char num[32];
	int err = visible_fill(n, k, r);

	err |= gp_plugin_response_env(r, "GPUPOOL_TASK_ID", k->task);
	for (unsigned i = 0; i < k->devices; i++) {
		char dev[32];

		snprintf(dev, sizeof(dev), "/dev/nvidia%u", n->dev[k->dev[i]].d.index);
		if (access(dev, F_OK) == 0)
			err |= gp_plugin_response_device(r, dev, dev, "rw");
	}
	if (!pod_sliced(k))
		return err ? -ENOMEM : 0;       /* the whole card: no interposer */
	err |= gp_plugin_response_env(r, "GPUPOOL_TASK_SECRET", secret);
	err |= gp_plugin_response_env(r, "GPUPOOL_RUN_DIR", GP_NODE_RUN_DIR_IN_CONTAINER);
	err |= gp_plugin_response_env(r, "LD_PRELOAD", GP_NODE_SHIM_IN_CONTAINER);
	snprintf(num, sizeof(num), "%" PRIu64 "M", pod_mem_mib(n, k));
	err |= gp_plugin_response_env(r, "GPUPOOL_MEM_LIMIT", num);
	snprintf(num, sizeof(num), "%u", k->applied.compute);
	err |= gp_plugin_response_env(r, "GPUPOOL_COMPUTE", num);
	err |= gp_plugin_response_mount(r, GP_NODE_SHIM_IN_CONTAINER, n->o.shim_host_path, true);
	for (unsigned i = 0; i < k->devices; i++)
		err |= device_mounts(n, k, i, r);
	return err ? -ENOMEM : 0;
}

/* Why no pod of this node waits for n_ids units: a pod bound here that
 * asks for them with a placement that is missing, forged or for another
 * node (said on that pod as an Event too), or none at all. */
static void allocate_refused(struct node *n, size_t n_ids, char *err, size_t err_len)
{
	struct gp_kube_pod refused;
	bool found = false;

	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < n->pods.cap && !found; i++) {
		const struct node_pod *k = n->pods.slot[i].value;

		if (!n->pods.slot[i].key || k->p.finished || next_container_units(k) != n_ids)
			continue;
		if (k->seal != GP_SEAL_VALID)
			snprintf(err, err_len, "pod %s/%s gets no device: %s", k->p.ns, k->p.name,
				 k->seal == GP_SEAL_NONE ? gp_seal_state_text(GP_SEAL_MISSING)
							 : gp_seal_state_text(k->seal));
		else if (strcmp(k->p.placement.node, n->o.node_name) != 0)
			snprintf(err, err_len, "pod %s/%s gets no device: its placement is for node "
				 "%s, not %s", k->p.ns, k->p.name, k->p.placement.node,
				 n->o.node_name);
		else
			continue;
		refused = k->p;
		found = true;
	}
	pthread_mutex_unlock(&n->lock);
	if (found) {
		pod_event(n, &refused, "Warning", "GpupoolPlacementRefused", err);
		return;
	}
	snprintf(err, err_len, "no pod placed by gpupool on node %s waits for %zu units of %s "
		 "(was it scheduled by the gpupool scheduler?)", n->o.node_name, n_ids,
		 n->o.resource);
}

/* A GPU container of a pod that waits: the first admits the pod's task
 * on its devices; each joins it (the same task, secret and limits: the
 * pod's slice is shared by its GPU containers). */
static int allocate(void *ctx, const char *const *ids, size_t n_ids, struct gp_plugin_response *r,
		    char *err, size_t err_len)
{
	struct node *n = ctx;
	char task[GP_TASK_ID_MAX] = "";
	struct gp_kube_pod annotated;
	struct node_pod *k;
	bool first = false;
	int rc = -ENOENT;

	(void)ids;
	k = pod_waiting_listed(n, n_ids);
	if (k) {
		first = !k->allocated;
		rc = first ? task_admit(n, k, err, err_len) : 0;
	}
	if (rc == 0 && (rc = response_fill(n, k, k->secret, r)) == 0)
		k->containers_allocated++;
	if (k) {
		annotated = k->p;
		snprintf(task, sizeof(task), "%s", k->task);
	}
	pthread_mutex_unlock(&n->lock);
	if (!k)
		allocate_refused(n, n_ids, err, err_len);
	if (rc == 0 && first)
		pod_annotate(n, &annotated, GP_KUBE_ANN_TASK, task);
	return rc;
}

/* ---- GetPreferredAllocation --------------------------------------------------------- */

/* The length of an id's device part: "GPU-uuid" of "GPU-uuid::3". */
static size_t device_len(const char *id)
{
	const char *sep = strstr(id, "::");

	return sep ? (size_t)(sep - id) : strlen(id);
}

static bool same_device(const char *a, const char *b)
{
	size_t len = device_len(a);

	return len == device_len(b) && strncmp(a, b, len) == 0;
}

static bool chosen(const char *const *ids, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ids[i], id) == 0)
			return true;
	return false;
}

/* Adds to ret_ids (got of them so far, up to size) the available ids not
 * chosen yet of the device of id `device` (NULL: of any); the new count. */
static size_t ids_add(const char *const *available, size_t n_available, const char *device,
		      const char **ret_ids, size_t got, size_t size)
{
	for (size_t i = 0; i < n_available && got < size; i++)
		if ((!device || same_device(available[i], device)) &&
		    !chosen(ret_ids, got, available[i]))
			ret_ids[got++] = available[i];
	return got;
}

/* The device a request of `want` units takes when no pod is known for it:
 * the device of the first id it must include, else the one whose free
 * units fit it most tightly (a card left whole stays whole), else the one
 * with the most. One of its ids, or NULL when none is available. */
static const char *device_for(const char *const *available, size_t n_available,
			      const char *const *must, size_t n_must, size_t want)
{
	struct free_units { const char *id; size_t units; } dev[GP_AGENT_DEVICES_MAX * 4];
	size_t devs = 0, best = SIZE_MAX;

	if (n_must)
		return must[0];
	for (size_t i = 0; i < n_available; i++) {
		size_t d = 0;

		while (d < devs && !same_device(dev[d].id, available[i]))
			d++;
		if (d == devs && devs == sizeof(dev) / sizeof(dev[0]))
			continue;
		if (d == devs)
			dev[devs++] = (struct free_units){ available[i], 0 };
		dev[d].units++;
	}
	for (size_t d = 0; d < devs; d++) {
		bool fits = dev[d].units >= want;
		bool best_fits = best != SIZE_MAX && dev[best].units >= want;

		if (best == SIZE_MAX || (fits && (!best_fits || dev[d].units < dev[best].units)) ||
		    (!fits && !best_fits && dev[d].units > dev[best].units))
			best = d;
	}
	return best == SIZE_MAX ? NULL : dev[best].id;
}

/* Prefers the units of the devices the extender chose for the pod that
 * waits (the kubelet counts units, the placement names devices). A pod
 * not known yet is looked for in a new list of this node's pods first;
 * for a request no pod is known for, the units of one device when it has
 * enough (the kubelet's list comes in no order: its first ids may be of
 * several devices). */
static int preferred(void *ctx, const char *const *available, size_t n_available,
		     const char *const *must_include, size_t n_must, size_t size, const char **ret_ids)
{
	struct node *n = ctx;
	struct node_pod *k;
	size_t got = 0;

	for (size_t i = 0; i < n_must && got < size; i++)
		ret_ids[got++] = must_include[i];
	k = pod_waiting_listed(n, size);
	for (unsigned d = 0; k && d < k->p.placement.devices && got < size; d++) {
		size_t uuid_len = strlen(k->p.placement.device[d]);
		size_t want = got + next_container_units(k) / k->p.count;

		for (size_t i = 0; i < n_available && got < size && got < want; i++)
			if (strncmp(available[i], k->p.placement.device[d], uuid_len) == 0 &&
			    available[i][uuid_len] == ':')
				ret_ids[got++] = available[i];
	}
	pthread_mutex_unlock(&n->lock);
	if (!k)
		got = ids_add(available, n_available,
			      device_for(available, n_available, must_include, n_must, size), ret_ids,
			      got, size);
	got = ids_add(available, n_available, NULL, ret_ids, got, size);
	return got == size ? 0 : -ENOSPC;
}

const struct gp_plugin_ops gp_node_plugin_ops = {
	.allocate = allocate,
	.preferred = preferred,
};

/* ---- live changes -------------------------------------------------------------------- */

/* Compute the pods on device d hold, but pod `except`. */
static unsigned device_compute(struct node *n, int d, const struct node_pod *except)
{
	unsigned sum = 0;

	for (size_t i = 0; i < n->pods.cap; i++) {
		const struct node_pod *k = n->pods.slot[i].value;

		if (!n->pods.slot[i].key || k == except || !k->allocated)
			continue;
		for (unsigned j = 0; j < k->devices; j++)
			if (k->dev[j] == d)
				sum += k->p.placement.whole ? 100 : k->applied.compute;
	}
	return sum;
}

/* A running pod's annotations changed: its new limits go to its regions
 * when its devices have the compute; else why not, in ret_refused. */
static void live_change(struct node *n, struct node_pod *k, char *ret_refused, size_t len)
{
	struct gp_task_limits want;

	limits_wanted(&k->p, &want);
	if (k->on_parts)        /* its partition's size is fixed (the extender says so) */
		return;
	if (k->p.placement.whole || memcmp(&want, &k->applied, sizeof(want)) == 0)
		return;
	for (unsigned i = 0; i < k->devices; i++) {
		unsigned others = device_compute(n, k->dev[i], k);

		if (want.compute > k->applied.compute && others + want.compute > 100) {
			snprintf(ret_refused, len,
				 "%s=%u refused: device %s has %u percent left for it (others hold "
				 "%u percent); it keeps %u percent", GP_KUBE_ANN_COMPUTE, want.compute,
				 n->dev[k->dev[i]].d.uuid, 100 - others, others, k->applied.compute);
			return;
		}
	}
	for (unsigned i = 0; i < k->devices; i++)
		gp_region_set(n->dev[k->dev[i]].region, k->task, &want);
	k->applied = want;
	n->live_changes++;
}

/* ---- the informer --------------------------------------------------------------------- */

static void pod_drop(struct node *n, const char *uid)
{
	struct node_pod *k = gp_strmap_remove(&n->pods, uid);

	if (k) {
		gp_node_meter_gone(n, k);
		task_release(n, k);
	}
	free(k);
}

/* A pod allocated before this program started: its task is in the
 * tables already (they outlive us); it is adopted as it is. */
static void pod_adopt(struct node *n, struct node_pod *k)
{
	if (!k->p.task[0] || k->seal != GP_SEAL_VALID || pod_devices(n, k) < 0)
		return;
	snprintf(k->task, sizeof(k->task), "%.*s", (int)sizeof(k->task) - 1, k->p.task);
	limits_wanted(&k->p, &k->applied);
	k->on_parts = k->devices && gp_parts_of(&n->parts, k->p.uid, (unsigned)k->dev[0]);
	if (k->on_parts) {
		k->applied.mem_bytes = 0;
		k->applied.compute = 100;
	}
	k->allocated = true;
	k->containers_allocated = k->p.gpu_containers;  /* (its secret is not ours now) */
	gp_node_meter_start(n, k);
}

/* May a running pod's placement become p's? Only for a sealed placement,
 * of the same devices, no older than the one applied (a seal replayed
 * from before a live change shrank it); else why not in ret_refused. */
static bool placement_follows(const struct node_pod *k, const struct gp_kube_pod *p,
			      enum gp_seal_state seal, char *ret_refused, size_t len)
{
	const struct gp_kube_placement *now = &k->p.placement, *next = &p->placement;

	if (seal != GP_SEAL_VALID)
		snprintf(ret_refused, len, "its placement changed and %s; it keeps the one it had",
			 gp_seal_state_text(seal == GP_SEAL_NONE ? GP_SEAL_MISSING : seal));
	else if (next->sealed_at < now->sealed_at)
		snprintf(ret_refused, len, "its placement went back to an older one (sealed at "
			 "%" PRId64 ", before %" PRId64 "); it keeps the newer",
			 next->sealed_at, now->sealed_at);
	else if (strcmp(next->node, now->node) != 0 || next->devices != now->devices ||
		 memcmp(next->device, now->device, sizeof(now->device)) != 0 ||
		 memcmp(next->part_start, now->part_start, sizeof(now->part_start)) != 0 ||
		 next->whole != now->whole)
		snprintf(ret_refused, len, "its placement names other devices; a running pod "
			 "keeps its devices");
	else
		return true;
	return false;
}

/* Under n->lock; a refused live change is said as an event by the caller
 * (refused[0] != 0 on return). */
static void pod_update(struct node *n, const json_t *obj, char *refused, size_t len,
		       struct gp_kube_pod *ret_pod)
{
	enum gp_seal_state seal;
	struct gp_kube_pod p;
	struct node_pod *k;
	char err[256];

	refused[0] = 0;
	if (gp_kube_pod_read(obj, &p, err, sizeof(err)) < 0 || p.units == 0 || !p.uid[0])
		return;
	seal = gp_seal_of_pod(&n->seal, obj);
	if (seal != GP_SEAL_VALID)
		p.placed = false;
	if (p.finished) {
		pod_drop(n, p.uid);
		return;
	}
	k = gp_strmap_get(&n->pods, p.uid);
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k || gp_strmap_put(&n->pods, p.uid, k) < 0) {
			free(k);
			return;
		}
		k->p = p;
		k->seal = seal;
		pod_adopt(n, k);
		return;
	}
	if (k->allocated && !placement_follows(k, &p, seal, refused, len)) {
		p.placement = k->p.placement;   /* it keeps what it was granted */
		p.placed = true;
		seal = k->seal;
	}
	k->p = p;
	k->seal = seal;
	if (!k->allocated)
		return;
	if (!refused[0])
		live_change(n, k, refused, len);
	if (refused[0] && strcmp(refused, k->refused) == 0)
		refused[0] = 0;         /* said already */
	else if (refused[0])
		snprintf(k->refused, sizeof(k->refused), "%s", refused);
	*ret_pod = p;
}

static void pod_put(struct node *n, const json_t *obj)
{
	char refused[256];
	struct gp_kube_pod p;

	pod_update(n, obj, refused, sizeof(refused), &p);
	(void)p;                        /* events are the informer's to send */
}

static void on_event(void *ctx, enum gp_kube_event_type type, json_t *obj)
{
	struct node *n = ctx;
	const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
	char refused[256] = "";
	struct gp_kube_pod p;

	pthread_mutex_lock(&n->lock);
	if (type == GP_KUBE_DELETED && uid)
		pod_drop(n, uid);
	else
		pod_update(n, obj, refused, sizeof(refused), &p);
	pthread_mutex_unlock(&n->lock);
	if (refused[0])
		pod_event(n, &p, "Warning", "GpupoolChangeRefused", refused);
}

/* Does pod `uid` of this node hold partitions? (Under the lock.) */
static bool pod_on_parts(void *ctx, const char *uid)
{
	const struct node *n = ctx;
	const struct node_pod *k = gp_strmap_get(&n->pods, uid);

	return k && k->allocated && k->on_parts;
}

/* A new list: pods gone meanwhile are released, with their partitions
 * (those a previous node program made for pods gone since too); the
 * others updated. */
static void on_sync(void *ctx, json_t *items)
{
	struct node *n = ctx;
	struct gp_strmap seen = { 0 };
	size_t i;
	json_t *obj;

	json_array_foreach(items, i, obj) {
		const char *uid =
			json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));

		if (uid)
			gp_strmap_put(&seen, uid, obj);
		on_event(ctx, GP_KUBE_MODIFIED, obj);
	}
	pthread_mutex_lock(&n->lock);
	for (size_t s = 0; s < n->pods.cap; s++) {
		const char *uid = n->pods.slot[s].key;

		if (uid && !gp_strmap_get(&seen, uid)) {
			pod_drop(n, uid);
			s = (size_t)-1;         /* the table moved: look again from the start */
		}
	}
	gp_parts_keep_only(&n->parts, pod_on_parts, n);
	pthread_mutex_unlock(&n->lock);
	gp_strmap_release(&seen);
}

static void on_state(void *ctx, bool connected, const char *message)
{
	(void)ctx;
	fprintf(stderr, "gpupool node: %s%s\n",
		connected ? "watching this node's pods" : "lost the API server: ",
		connected ? "" : message ? message : "");
}

const struct gp_kube_informer_ops gp_node_pod_ops = {
	.on_sync = on_sync,
	.on_event = on_event,
	.on_state = on_state,
};

void gp_node_pods_clear(struct node *n)
{
	for (size_t i = 0; i < n->pods.cap; i++)
		free(n->pods.slot[i].value);
	gp_strmap_release(&n->pods);
}
