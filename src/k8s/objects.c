/* objects.c — reading Pods and Nodes for gpupool (see objects.h). */
#include "k8s/objects.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/parse.h"
#include "core/models.h"
#include "core/partition.h"
#include "k8s/names.h"

#define MIB (1024.0 * 1024.0)

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static const char *str_at(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

bool gp_kube_address_valid(const char *a)
{
	const char *colon = strrchr(a, ':');
	char *end;
	long port;

	if (!colon || colon == a || strlen(a) >= GP_KUBE_ADDRESS_MAX)
		return false;
	for (const char *c = a; c < colon; c++)
		if (!isalnum((unsigned char)*c) && !strchr(".-[]:", *c))
			return false;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	return colon[1] && !*end && errno == 0 && port > 0 && port < 65536;
}

const char *gp_kube_annotation(const json_t *obj, const char *key)
{
	return str_at(json_object_get(json_object_get(obj, "metadata"), "annotations"), key);
}

/* ---- quantities ---------------------------------------------------------- */

static const struct {
	const char *suffix;
	double factor;
} suffixes[] = {
	{ "Ki", 1024.0 }, { "Mi", 1048576.0 }, { "Gi", 1073741824.0 },
	{ "Ti", 1099511627776.0 }, { "Pi", 1125899906842624.0 }, { "Ei", 1152921504606846976.0 },
	{ "m", 1e-3 }, { "k", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { "T", 1e12 }, { "P", 1e15 },
	{ "E", 1e18 }, { "", 1.0 },
};

int gp_kube_quantity_milli(const char *text, int64_t *ret)
{
	const char *p = text;
	char *end;
	double v;

	if (!text || !(isdigit((unsigned char)*p) || *p == '.' || *p == '+'))
		return -EINVAL;
	v = strtod(p, &end);
	if (end == p || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strcmp(end, suffixes[i].suffix) != 0)
			continue;
		v *= suffixes[i].factor * 1000.0;
		if (v >= 9.2e18)
			return -ERANGE;
		*ret = (int64_t)ceil(v - 1e-6);
		return 0;
	}
	return -EINVAL;         /* strtod took any exponent; what is left is wrong */
}

/* A quantity in a JSON value: a string, or a number as some clients
 * write one. */
static int quantity_of(const json_t *v, int64_t *ret)
{
	char buf[64];

	if (json_is_string(v))
		return gp_kube_quantity_milli(json_string_value(v), ret);
	if (!json_is_number(v) || json_number_value(v) < 0)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%.17g", json_number_value(v));
	return gp_kube_quantity_milli(buf, ret);
}

bool gp_kube_model_matches(const char *models, const char *model)
{
	return !models || !*models ||
	       gp_model_answers(model, gp_vendor_name(gp_model_vendor(model)), models);
}

/* ---- pods ---------------------------------------------------------------- */

struct sums {
	int64_t cpu, mem;               /* milli-cores, milli-bytes */
	int64_t units;                  /* thousandths of a unit */
};

/* One container's requests (a limit stands for a missing request). */
static int container_read(const json_t *c, struct sums *ret, char *err, size_t len)
{
	const json_t *res = json_object_get(c, "resources");
	const json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
	static const char *const keys[] = { "cpu", "memory", GP_KUBE_RESOURCE };
	int64_t *into[] = { &ret->cpu, &ret->mem, &ret->units };

	memset(ret, 0, sizeof(*ret));
	for (int i = 0; i < 3; i++) {
		const json_t *v = json_object_get(req, keys[i]);

		if (!v)
			v = json_object_get(lim, keys[i]);
		if (v && quantity_of(v, into[i]) < 0)
			return fail(err, len, "container %s: resources of %s: not a quantity",
				    str_at(c, "name") ? str_at(c, "name") : "?", keys[i]);
	}
	return 0;
}

/* Container c asks for `milli_units`: the pod's list of them. */
static int gpu_container_add(struct gp_kube_pod *p, const json_t *c, int64_t milli_units,
			     char *err, size_t len)
{
	if (milli_units % 1000)
		return fail(err, len, "%s: a whole number of units, please", GP_KUBE_RESOURCE);
	if (p->gpu_containers == GP_KUBE_GPU_CONTAINERS_MAX)
		return fail(err, len, "%s: at most %d containers of a pod may ask for it",
			    GP_KUBE_RESOURCE, GP_KUBE_GPU_CONTAINERS_MAX);
	if (!p->container[0])
		copy(p->container, sizeof(p->container), str_at(c, "name"));
	p->container_units[p->gpu_containers++] = (unsigned)(milli_units / 1000);
	return 0;
}

static int containers_read(const json_t *spec, struct sums *ret, struct gp_kube_pod *p,
			   char *err, size_t len)
{
	struct sums sum = { 0 }, init = { 0 }, one;
	size_t i;
	json_t *c;
	int r;

	json_array_foreach(json_object_get(spec, "containers"), i, c) {
		if ((r = container_read(c, &one, err, len)) < 0 ||
		    (one.units && (r = gpu_container_add(p, c, one.units, err, len)) < 0))
			return r;
		sum.cpu += one.cpu;
		sum.mem += one.mem;
		sum.units += one.units;
	}
	json_array_foreach(json_object_get(spec, "initContainers"), i, c) {
		if ((r = container_read(c, &one, err, len)) < 0)
			return r;
		init.cpu = one.cpu > init.cpu ? one.cpu : init.cpu;
		init.mem = one.mem > init.mem ? one.mem : init.mem;
	}
	ret->cpu = sum.cpu > init.cpu ? sum.cpu : init.cpu;
	ret->mem = sum.mem > init.mem ? sum.mem : init.mem;
	ret->units = sum.units;
	return 0;
}

/* A gang's annotations (names.h): both or neither; a name a label value
 * could be (1 to 63 of [A-Za-z0-9._-]), a size from 2. */
static int pod_group(const json_t *pod, struct gp_kube_pod *p, char *err, size_t len)
{
	const char *name = gp_kube_annotation(pod, GP_KUBE_ANN_GROUP);
	const char *size = gp_kube_annotation(pod, GP_KUBE_ANN_GROUP_SIZE);
	size_t n = name ? strlen(name) : 0;

	if (!name && !size)
		return 0;
	if (!name || !size)
		return fail(err, len, "annotation %s: needed with %s (a gang has a name and a size)",
			    name ? GP_KUBE_ANN_GROUP_SIZE : GP_KUBE_ANN_GROUP,
			    name ? GP_KUBE_ANN_GROUP : GP_KUBE_ANN_GROUP_SIZE);
	if (n == 0 || n > 63 || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					      "0123456789._-") != n)
		return fail(err, len, "annotation %s: \"%.80s\" is not a group name (1 to 63 letters, "
			    "digits, '.', '_' or '-')", GP_KUBE_ANN_GROUP, name);
	if (!gp_parse_uint(size, 2, GP_KUBE_GROUP_MAX, NULL, &p->group_size))
		return fail(err, len, "annotation %s: \"%.40s\" is not a number of pods from 2 to %d",
			    GP_KUBE_ANN_GROUP_SIZE, size, GP_KUBE_GROUP_MAX);
	copy(p->group, sizeof(p->group), name);
	return 0;
}

/* The annotations users set (names.h). */
static int pod_annotations(const json_t *pod, struct gp_kube_pod *p, char *err, size_t len)
{
	const char *count = gp_kube_annotation(pod, GP_KUBE_ANN_COUNT);
	const char *memory = gp_kube_annotation(pod, GP_KUBE_ANN_MEMORY);
	const char *prio = gp_kube_annotation(pod, GP_KUBE_ANN_PRIORITY);
	const char *compute = gp_kube_annotation(pod, GP_KUBE_ANN_COMPUTE);
	const char *iso = gp_kube_annotation(pod, GP_KUBE_ANN_ISOLATION);
	int64_t milli;

	if (count && !gp_parse_uint(count, 1, GP_NODE_DEVICES_MAX, NULL, &p->count))
		return fail(err, len, "annotation %s: \"%s\" is not a number of devices from 1 to %d",
			    GP_KUBE_ANN_COUNT, count, GP_NODE_DEVICES_MAX);
	if (memory) {
		if (gp_kube_quantity_milli(memory, &milli) < 0 || milli < 1000 * (int64_t)MIB)
			return fail(err, len,
				    "annotation %s: \"%s\" is not a memory size of at least 1Mi "
				    "(write e.g. 4Gi or 4096Mi)", GP_KUBE_ANN_MEMORY, memory);
		p->memory_mib = (uint64_t)ceil((double)milli / 1000.0 / MIB);
	}
	if (prio && !gp_parse_uint(prio, 0, 9, NULL, &p->priority))
		return fail(err, len, "annotation %s: \"%s\" is not a priority from 0 to 9",
			    GP_KUBE_ANN_PRIORITY, prio);
	if (compute && !gp_parse_uint(compute, 1, 100, "%", &p->compute))
		return fail(err, len, "annotation %s: \"%s\" is not a percent from 1 to 100",
			    GP_KUBE_ANN_COMPUTE, compute);
	if (iso && strcmp(iso, "hard") != 0 && strcmp(iso, "shared") != 0)
		return fail(err, len, "annotation %s: \"%s\" is neither hard nor shared",
			    GP_KUBE_ANN_ISOLATION, iso);
	p->isolation = iso && strcmp(iso, "shared") == 0 ? GP_KUBE_SHARED : GP_KUBE_HARD;
	copy(p->models, sizeof(p->models), gp_kube_annotation(pod, GP_KUBE_ANN_MODEL));
	return pod_group(pod, p, err, len);
}

/* Priority without the annotation: a PriorityClass value 1..9 as it is,
 * above 9 as 9, below 0 as 0; none (or 0) as 5. */
static unsigned priority_of_class(const json_t *spec)
{
	json_int_t v = json_integer_value(json_object_get(spec, "priority"));

	return v == 0 ? 5 : v < 0 ? 0 : v > 9 ? 9 : (unsigned)v;
}

/* One device of a placement: "UUID", or "UUID@START" on a card in
 * partition mode (START one unit, 0 to 7). */
static int placed_device_read(const char *text, struct gp_kube_placement *ret, char *err,
			      size_t len)
{
	const char *at = text ? strchr(text, '@') : NULL;
	size_t uuid_len = at ? (size_t)(at - text) : text ? strlen(text) : 0;
	unsigned i = ret->devices;

	if (!text || uuid_len == 0 || uuid_len >= GP_KUBE_UUID_MAX ||
	    (at && !(at[1] >= '0' && at[1] < '0' + GP_PART_UNITS_MAX && !at[2])))
		return fail(err, len, "annotation %s: device \"%.80s\" is not UUID or UUID@START "
			    "(START 0 to %d)", GP_KUBE_ANN_PLACEMENT, text ? text : "",
			    GP_PART_UNITS_MAX - 1);
	snprintf(ret->device[i], GP_KUBE_UUID_MAX, "%.*s", (int)uuid_len, text);
	ret->part_start[i] = at ? (uint8_t)(at[1] - '0' + 1) : 0;
	ret->devices++;
	return 0;
}

static int placement_read(const char *text, struct gp_kube_placement *ret, char *err, size_t len)
{
	json_t *j = json_loads(text, 0, NULL), *dev;
	const json_t *devs = json_object_get(j, "devices");
	size_t i;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	if (!json_is_object(j) || !json_is_array(devs) || json_array_size(devs) == 0 ||
	    json_array_size(devs) > GP_NODE_DEVICES_MAX || !str_at(j, "node")) {
		r = fail(err, len, "annotation %s: not a placement gpupool wrote", GP_KUBE_ANN_PLACEMENT);
		goto out;
	}
	copy(ret->node, sizeof(ret->node), str_at(j, "node"));
	json_array_foreach(devs, i, dev)
		if (r == 0)
			r = placed_device_read(json_string_value(dev), ret, err, len);
	if (r < 0)
		goto out;
	ret->memory_mib = (uint64_t)json_integer_value(json_object_get(j, "memoryMiB"));
	ret->compute = (unsigned)json_integer_value(json_object_get(j, "compute"));
	ret->whole = json_is_true(json_object_get(j, "whole"));
	ret->priority = (unsigned)json_integer_value(json_object_get(j, "priority"));
	ret->isolation = str_at(j, "isolation") && !strcmp(str_at(j, "isolation"), "shared")
				 ? GP_KUBE_SHARED : GP_KUBE_HARD;
	ret->bound_at = json_integer_value(json_object_get(j, "boundAt"));
	ret->sealed_at = json_integer_value(json_object_get(j, "sealedAt"));
	if (ret->priority > 9)
		r = fail(err, len, "annotation %s: priority %u is over 9", GP_KUBE_ANN_PLACEMENT,
			 ret->priority);
out:
	json_decref(j);
	return r;
}

/* Does one of the containers of these statuses run (or may it still)? */
static bool statuses_running(const json_t *statuses)
{
	size_t i;
	json_t *c;

	json_array_foreach(statuses, i, c)
		if (json_object_get(json_object_get(c, "state"), "running"))
			return true;
	return false;
}

/* Are the pod's containers gone for good? Succeeded or Failed; or being
 * deleted (deletionTimestamp) with none of its containers running: every
 * status terminated or waiting, or none ever started. A pod being deleted
 * whose containers still run their grace period still uses its devices. */
static bool pod_finished(const json_t *pod)
{
	const json_t *status = json_object_get(pod, "status");
	const char *phase = str_at(status, "phase");

	if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
		return true;
	if (!json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
		return false;
	return !statuses_running(json_object_get(status, "containerStatuses")) &&
	       !statuses_running(json_object_get(status, "initContainerStatuses")) &&
	       !statuses_running(json_object_get(status, "ephemeralContainerStatuses"));
}

/* The Deployment whose ReplicaSet controls the pod (metadata), as the
 * Deployment controller names its ReplicaSets: DEPLOYMENT-HASH, HASH the
 * pods' pod-template-hash label. */
static void deployment_of(const json_t *meta, char *buf, size_t size)
{
	const char *hash = str_at(json_object_get(meta, "labels"), "pod-template-hash");
	const json_t *owner;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(json_object_get(meta, "ownerReferences"), i, owner) {
		const char *name = str_at(owner, "name"), *kind = str_at(owner, "kind");
		size_t n = name ? strlen(name) : 0, h = hash ? strlen(hash) : 0;

		if (json_is_true(json_object_get(owner, "controller")) && kind &&
		    !strcmp(kind, "ReplicaSet") && h && n > h + 1 && n - h - 1 < size &&
		    name[n - h - 1] == '-' && !strcmp(name + n - h, hash))
			snprintf(buf, size, "%.*s", (int)(n - h - 1), name);
	}
}

int gp_kube_pod_read(const json_t *pod, struct gp_kube_pod *ret, char *err, size_t err_len)
{
	const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
	const char *placement = gp_kube_annotation(pod, GP_KUBE_ANN_PLACEMENT);
	struct gp_kube_pod p = { .count = 1 };
	struct sums sums;
	int r;

	if (!json_is_object(meta) || !str_at(meta, "name"))
		return fail(err, err_len, "not a pod: no metadata.name");
	copy(p.ns, sizeof(p.ns), str_at(meta, "namespace") ? str_at(meta, "namespace") : "default");
	copy(p.name, sizeof(p.name), str_at(meta, "name"));
	copy(p.uid, sizeof(p.uid), str_at(meta, "uid"));
	copy(p.node, sizeof(p.node), str_at(spec, "nodeName"));
	copy(p.scheduler, sizeof(p.scheduler),
	     str_at(spec, "schedulerName") ? str_at(spec, "schedulerName") : "default-scheduler");
	copy(p.task, sizeof(p.task), gp_kube_annotation(pod, GP_KUBE_ANN_TASK));
	p.finished = pod_finished(pod);
	p.failed = str_at(json_object_get(pod, "status"), "phase") &&
		   !strcmp(str_at(json_object_get(pod, "status"), "phase"), "Failed");
	p.deleting = json_object_get(meta, "deletionTimestamp") != NULL;
	deployment_of(meta, p.deployment, sizeof(p.deployment));
	p.priority = priority_of_class(spec);
	if ((r = containers_read(spec, &sums, &p, err, err_len)) < 0 ||
	    (r = pod_annotations(pod, &p, err, err_len)) < 0)
		return r;
	p.cpu_milli = (uint32_t)(sums.cpu > UINT32_MAX ? UINT32_MAX : sums.cpu);
	p.mem_mib = (uint32_t)ceil((double)sums.mem / 1000.0 / MIB);
	p.units = (unsigned)(sums.units / 1000);
	for (unsigned c = 0; c < p.gpu_containers; c++)
		if (p.container_units[c] % p.count)
			return fail(err, err_len,
				    "%s: %u units cannot be split evenly over %s=%u devices (ask "
				    "for a multiple of it%s)", GP_KUBE_RESOURCE,
				    p.container_units[c], GP_KUBE_ANN_COUNT, p.count,
				    p.gpu_containers > 1 ? " in each container" : "");
	if (placement && (r = placement_read(placement, &p.placement, err, err_len)) < 0)
		return r;
	p.placed = placement != NULL;
	*ret = p;
	return 0;
}

/* ---- nodes --------------------------------------------------------------- */

/* A device's partitionSet (a set of the core's, by name) and
 * partitionHeld (units, a bit each), both absent on a card of slices. */
static int partition_read(const json_t *d, struct gp_kube_device *ret, char *why, size_t len)
{
	const json_t *set = json_object_get(d, "partitionSet"), *held = json_object_get(d, "partitionHeld");

	if (set && !json_is_null(set) &&
	    (!json_is_string(set) || !gp_part_set_of_model(json_string_value(set))))
		return fail(why, len, ": device %.80s: partitionSet is no partition set gpupool "
			    "knows (A100-MIG, A100-40G-MIG, ...)", ret->uuid);
	if (held && (!json_is_integer(held) || json_integer_value(held) < 0 ||
		     json_integer_value(held) > 255 || !json_is_string(set)))
		return fail(why, len, ": device %.80s: partitionHeld wants units 0 to 255 and a "
			    "partitionSet", ret->uuid);
	copy(ret->partition_set, sizeof(ret->partition_set), json_string_value(set));
	ret->partition_held = (uint8_t)json_integer_value(held);
	return 0;
}

static int device_read(const json_t *d, struct gp_kube_device *ret, char *why, size_t len)
{
	const json_t *split = json_object_get(d, "split");

	memset(ret, 0, sizeof(*ret));
	if (!str_at(d, "uuid") || !str_at(d, "model") || strlen(str_at(d, "uuid")) >= GP_KUBE_UUID_MAX ||
	    !json_is_integer(json_object_get(d, "memoryMiB")))
		return -EINVAL;
	copy(ret->uuid, sizeof(ret->uuid), str_at(d, "uuid"));
	copy(ret->model, sizeof(ret->model), str_at(d, "model"));
	ret->memory_mib = (uint64_t)json_integer_value(json_object_get(d, "memoryMiB"));
	ret->numa = (int)json_integer_value(json_object_get(d, "numa"));
	ret->nvlink = (int)json_integer_value(json_object_get(d, "nvlink"));
	ret->split = split ? (unsigned)json_integer_value(split) : GP_KUBE_SPLIT_DEFAULT;
	ret->healthy = !json_is_false(json_object_get(d, "healthy"));
	ret->compatible = !json_is_false(json_object_get(d, "compatible"));
	copy(ret->reason, sizeof(ret->reason), str_at(d, "reason"));
	if (ret->split < 1 || ret->split > 1000)
		return -EINVAL;
	return partition_read(d, ret, why, len);
}

static int devices_read(const char *text, struct gp_kube_node *n, char *err, size_t len)
{
	char why[200] = "";
	json_t *j = json_loads(text, 0, NULL), *d;
	const json_t *devs = json_object_get(j, "devices");
	size_t i;
	int r = 0;

	if (!json_is_array(devs) || json_array_size(devs) > GP_NODE_DEVICES_MAX)
		r = -EINVAL;
	json_array_foreach(devs, i, d)
		if (r == 0 && device_read(d, &n->device[n->devices++], why, sizeof(why)) < 0)
			r = -EINVAL;
	copy(n->driver, sizeof(n->driver), str_at(j, "driver"));
	n->cuda_version = (int)json_integer_value(json_object_get(j, "cuda"));
	json_decref(j);
	if (r < 0) {
		n->devices = 0;
		return fail(err, len, "node %s: annotation %s is not what gpupool node writes%s",
			    n->name, GP_KUBE_ANN_DEVICES, why);
	}
	return 0;
}

static bool node_ready(const json_t *status)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(status, "conditions"), i, c)
		if (str_at(c, "type") && !strcmp(str_at(c, "type"), "Ready"))
			return !str_at(c, "status") || strcmp(str_at(c, "status"), "False") != 0;
	return true;
}

int gp_kube_node_read(const json_t *node, struct gp_kube_node *ret, char *err, size_t err_len)
{
	const json_t *meta = json_object_get(node, "metadata"), *status = json_object_get(node, "status");
	const json_t *alloc = json_object_get(status, "allocatable");
	const char *devices = gp_kube_annotation(node, GP_KUBE_ANN_DEVICES);
	const char *metrics = gp_kube_annotation(node, GP_KUBE_ANN_METRICS);
	struct gp_kube_node n = { 0 };
	int64_t cpu = 0, mem = 0;
	int r;

	if (!str_at(meta, "name"))
		return fail(err, err_len, "not a node: no metadata.name");
	copy(n.name, sizeof(n.name), str_at(meta, "name"));
	n.schedulable = !json_is_true(json_object_get(json_object_get(node, "spec"), "unschedulable")) &&
			node_ready(status);
	if ((json_object_get(alloc, "cpu") && quantity_of(json_object_get(alloc, "cpu"), &cpu) < 0) ||
	    (json_object_get(alloc, "memory") && quantity_of(json_object_get(alloc, "memory"), &mem) < 0))
		return fail(err, err_len, "node %s: status.allocatable is not quantities", n.name);
	n.cpu_milli = (uint32_t)(cpu > UINT32_MAX ? UINT32_MAX : cpu);
	n.mem_mib = (uint32_t)((double)mem / 1000.0 / MIB);
	if (devices && (r = devices_read(devices, &n, err, err_len)) < 0)
		return r;
	if (metrics && !gp_kube_address_valid(metrics))
		return fail(err, err_len, "node %s: %s is not HOST:PORT", n.name, GP_KUBE_ANN_METRICS);
	copy(n.metrics, sizeof(n.metrics), metrics);
	*ret = n;
	return 0;
}

/* ---- annotations written --------------------------------------------------- */

char *gp_kube_devices_text(const struct gp_kube_device *d, unsigned n, const char *driver,
			   int cuda_version)
{
	json_t *all = json_array(), *doc;
	char *text;

	for (unsigned i = 0; i < n; i++) {
		json_t *dev = json_pack("{s:s, s:s, s:I, s:i, s:i, s:i, s:b, s:b, s:s}",
					"uuid", d[i].uuid, "model", d[i].model,
					"memoryMiB", (json_int_t)d[i].memory_mib,
					"numa", d[i].numa, "nvlink", d[i].nvlink,
					"split", (int)d[i].split, "healthy", d[i].healthy,
					"compatible", d[i].compatible, "reason", d[i].reason);

		if (dev && d[i].partition_set[0]) {
			json_object_set_new(dev, "partitionSet", json_string(d[i].partition_set));
			json_object_set_new(dev, "partitionHeld", json_integer(d[i].partition_held));
		}
		json_array_append_new(all, dev);
	}
	doc = json_pack("{s:i, s:s, s:i, s:o}", "version", 1, "driver", driver ? driver : "",
			"cuda", cuda_version, "devices", all);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return text;
}

/* Is s a UID as kubelet writes it in a cgroup name: 8-4-4-4-12 hex
 * digits, the separators '-' or '_'? */
static bool cgroup_uid_at(const char *s)
{
	for (int i = 0; i < 36; i++) {
		bool sep = i == 8 || i == 13 || i == 18 || i == 23;

		if (sep ? s[i] != '-' && s[i] != '_' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

int gp_kube_pod_uid_of_cgroup(const char *text, char *ret, size_t len)
{
	for (const char *p = strstr(text, "pod"); p; p = strstr(p + 1, "pod")) {
		if (strnlen(p + 3, 36) < 36 || !cgroup_uid_at(p + 3) || len < 37)
			continue;
		for (int i = 0; i < 36; i++)
			ret[i] = p[3 + i] == '_' ? '-' : p[3 + i];
		ret[36] = 0;
		return 0;
	}
	return -ENOENT;
}

char *gp_kube_placement_text(const struct gp_kube_placement *p)
{
	json_t *devs = json_array(), *doc;
	char *text;

	for (unsigned i = 0; i < p->devices; i++) {
		char dev[GP_KUBE_UUID_MAX + 4];

		snprintf(dev, sizeof(dev), "%s", p->device[i]);
		if (p->part_start[i])
			snprintf(dev + strlen(dev), sizeof(dev) - strlen(dev), "@%u",
				 p->part_start[i] - 1u);
		json_array_append_new(devs, json_string(dev));
	}
	doc = json_pack("{s:s, s:o, s:I, s:i, s:b, s:i, s:s, s:I, s:I}", "node", p->node,
			"devices", devs, "memoryMiB", (json_int_t)p->memory_mib,
			"compute", (int)p->compute, "whole", p->whole, "priority", (int)p->priority,
			"isolation", p->isolation == GP_KUBE_SHARED ? "shared" : "hard",
			"boundAt", (json_int_t)p->bound_at, "sealedAt", (json_int_t)p->sealed_at);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return text;
}
