/* node-meter.c — what each pod of this node uses of its devices
 * (node-impl.h): sampled with the devices' health, through the same
 * sampler as the agent's (agent/usage.h), each device process counted for
 * the pod whose cgroup it is in; served on /metrics as the slice figures
 * (slice-figures.h) that the server reads for metering and bills. A pod
 * that goes keeps its last figures there for GP_SLICE_KEEP_S seconds. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "k8s/node-impl.h"

#define MIB (1024ULL * 1024ULL)

int gp_node_pod_uid_of_pid(pid_t pid, char uid[GP_KUBE_UID_MAX])
{
	char path[64], text[8192];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	got = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (got <= 0)
		return -ENOENT;
	text[got] = 0;
	return gp_kube_pod_uid_of_cgroup(text, uid, GP_KUBE_UID_MAX);
}

/* The sampler's resolver: a process's task is its pod's meter id. */
static int pod_of_process(void *ctx, pid_t pid, int64_t *ret_task)
{
	struct node *n = ctx;
	char uid[GP_KUBE_UID_MAX];
	const struct node_pod *k;
	int r = -ENOENT;

	if (gp_node_pod_uid_of_pid(pid, uid) < 0)
		return -ENOENT;
	pthread_mutex_lock(&n->lock);
	k = gp_strmap_get(&n->pods, uid);
	if (k && k->meter_id) {
		*ret_task = k->meter_id;
		r = 0;
	}
	pthread_mutex_unlock(&n->lock);
	return r;
}

void gp_node_meter_open(struct node *n, struct gp_usage *u)
{
	if (u)
		gp_usage_set_resolver(u, pod_of_process, n);
}

/* The metered pods' devices as the sampler's groups (malloc'd), under
 * the lock. */
static struct gp_usage_group *groups_of(struct node *n, size_t *ret_n)
{
	struct gp_usage_group *g = calloc(n->pods.count * GP_NODE_DEVICES_MAX + 1, sizeof(*g));
	size_t count = 0;

	for (size_t s = 0; g && s < n->pods.cap; s++) {
		const struct node_pod *k = n->pods.slot[s].value;

		if (!n->pods.slot[s].key || !k->allocated)
			continue;
		for (unsigned i = 0; i < k->devices; i++)
			g[count++] = (struct gp_usage_group){
				.task = k->meter_id, .device = (unsigned)k->dev[i],
				.weight = k->p.placement.whole ? 100 : k->applied.compute };
	}
	*ret_n = count;
	return g;
}

/* Adds a sampling's groups to their pods (those still here), under the lock. */
static void groups_add(struct node *n, const struct gp_usage_group *g, size_t count)
{
	for (size_t s = 0; s < n->pods.cap; s++) {
		struct node_pod *k = n->pods.slot[s].value;

		for (size_t j = 0; n->pods.slot[s].key && j < count; j++)
			for (unsigned i = 0; g[j].task == k->meter_id && i < k->devices; i++)
				if ((unsigned)k->dev[i] == g[j].device) {
					k->used_us[i] += g[j].used_us;
					k->mem_used_mib[i] = g[j].mem_mib;
				}
	}
}

int gp_node_meter_sample(struct node *n, struct gp_usage *u, struct gp_usage_device *ret)
{
	struct gp_usage_group *g;
	size_t count = 0;
	int r;

	pthread_mutex_lock(&n->lock);
	g = groups_of(n, &count);
	pthread_mutex_unlock(&n->lock);
	if (!g)
		return -ENOMEM;
	r = gp_usage_sample(u, ret, g, count);
	if (r == 0) {
		pthread_mutex_lock(&n->lock);
		groups_add(n, g, count);
		pthread_mutex_unlock(&n->lock);
	}
	free(g);
	return r;
}

void gp_node_meter_start(struct node *n, struct node_pod *k)
{
	k->meter_id = ++n->meter_ids;
	memset(k->used_us, 0, sizeof(k->used_us));
	memset(k->mem_used_mib, 0, sizeof(k->mem_used_mib));
	memset(k->violations, 0, sizeof(k->violations));
}

/* k's figure on its i-th device. */
static void figure_of(const struct node *n, const struct node_pod *k, unsigned i,
		      struct gp_slice_figure *ret)
{
	const struct node_device *d = &n->dev[k->dev[i]];
	bool whole = k->p.placement.whole;

	*ret = (struct gp_slice_figure){
		.used_us = k->used_us[i], .mem_used_bytes = k->mem_used_mib[i] * MIB,
		.violations = k->violations[i],
		.mem_limit_bytes = whole ? d->d.mem_total_mib * MIB : k->applied.mem_bytes,
		.compute_pct = whole ? 100 : k->applied.compute };
	snprintf(ret->ns, sizeof(ret->ns), "%s", k->p.ns);
	snprintf(ret->pod, sizeof(ret->pod), "%s", k->p.name);
	snprintf(ret->uid, sizeof(ret->uid), "%s", k->p.uid);
	snprintf(ret->container, sizeof(ret->container), "%s", k->p.container);
	snprintf(ret->uuid, sizeof(ret->uuid), "%.*s", (int)sizeof(ret->uuid) - 1, d->d.uuid);
	snprintf(ret->node, sizeof(ret->node), "%s", n->o.node_name);
}

void gp_node_meter_gone(struct node *n, const struct node_pod *k)
{
	uint64_t until = gp_monotonic_ns() + GP_SLICE_KEEP_S * 1000000000ULL;

	for (unsigned i = 0; k->meter_id && i < k->devices; i++) {
		struct node_gone *g = &n->gone[n->gone_next++ % GP_NODE_GONE_MAX];

		figure_of(n, k, i, &g->figure);
		g->until_ns = until;
	}
}

void gp_node_meter_write(struct node *n, FILE *f)
{
	uint64_t now = gp_monotonic_ns();
	struct gp_slice_figure s;

	gp_slice_figures_head(f);
	for (size_t slot = 0; slot < n->pods.cap; slot++) {
		const struct node_pod *k = n->pods.slot[slot].value;

		for (unsigned i = 0; n->pods.slot[slot].key && k->meter_id && i < k->devices; i++) {
			figure_of(n, k, i, &s);
			gp_slice_figure_write(f, &s);
		}
	}
	for (unsigned g = 0; g < GP_NODE_GONE_MAX; g++)
		if (n->gone[g].until_ns > now)
			gp_slice_figure_write(f, &n->gone[g].figure);
}
