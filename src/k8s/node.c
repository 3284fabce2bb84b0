/* node.c — `gpupool node --kubernetes` (see node-impl.h): options,
 * devices and their health, the Node's annotation, the device plugin's
 * device list, /metrics, and the main loop. */
#include "k8s/node.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "agent/usage.h"
#include "base/exit.h"
#include "base/http.h"
#include "base/parse.h"
#include "core/models.h"
#include "core/partition.h"
#include "k8s/names.h"
#include "k8s/node-impl.h"
#include "vendor/vendor.h"

#define HEALTH_MS_DEFAULT 500
#define METRICS_LISTEN_DEFAULT "0.0.0.0:9400"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool node --kubernetes [--node-name NAME] [--device-plugin-dir DIR]\n"
		"                    [--resource NAME] [--split MODEL=N]... [--run-dir DIR]\n"
		"                    [--shim-host-path PATH] [--task-group GID]\n"
		"                    [--metrics-listen ADDR:PORT|off] [--metrics-address HOST:PORT]\n"
		"                    [--health-ms N] [--nvml PATH]\n"
		"                    [--kubeconfig PATH | --kube-api URL [--kube-token-file PATH]]\n"
		"                    [--placement-key FILE] [--verify kill|alert|off]\n"
		"                    [--verify-ms N] [--verify-slack-mib N]\n"
		"\n"
		"This node's part of gpupool on Kubernetes (docs/kubernetes.md), run by a\n"
		"DaemonSet: the kubelet's device plugin for the resource, this node's devices\n"
		"on its Node object, its pods' slices admitted, changed and freed in the\n"
		"shared regions, and /metrics.\n"
		"\n"
		"  --node-name NAME      this node (default $NODE_NAME, else the host name)\n"
		"  --device-plugin-dir DIR\n"
		"                        the kubelet's folder (default "
		"/var/lib/kubelet/device-plugins)\n"
		"  --resource NAME       the extended resource (default %s)\n"
		"  --split MODEL=N       units of a device that answers to MODEL, 1 to\n"
		"                        1000 (default %d: a unit is a tenth of a device)\n"
		"  --run-dir DIR         the devices' regions, also mounted into every sliced\n"
		"                        container (default %s)\n"
		"  --shim-host-path PATH libgpushare.so on the host, mounted into sliced\n"
		"                        containers (default /var/lib/gpupool/lib/libgpushare.so)\n"
		"  --task-group GID      the group of the region files, for containers that\n"
		"                        do not run as root (default: ours)\n"
		"  --metrics-listen ADDR:PORT|off\n"
		"                        /metrics for Prometheus, on 0.0.0.0 or 127.0.0.1\n"
		"                        (default %s)\n"
		"  --metrics-address HOST:PORT\n"
		"                        where the server reads this /metrics for metering\n"
		"                        (on the Node, gpupool.io/metrics; default: the\n"
		"                        listen address on 127.0.0.1, else $POD_IP and its\n"
		"                        port)\n"
		"  --health-ms N         how often the devices' health is looked at (default\n"
		"                        %d)\n"
		"  --nvml PATH           the NVML library (default libnvidia-ml.so.1)\n"
		"  --kubeconfig PATH     the API server (default: $KUBECONFIG, else the pod's\n"
		"                        service account); --kube-api URL instead, with\n"
		"                        --kube-token-file PATH for a bearer token\n"
		"  --placement-key FILE  the key the server seals placements with (default\n"
		"                        %s, the Secret\n"
		"                        gpupool-placement-key): a pod gets devices only by\n"
		"                        a placement whose seal verifies\n"
		"  --verify kill|alert|off\n"
		"                        what the verifier does with a device process of no\n"
		"                        pod, without the interposer, or over its slice\n"
		"                        (default kill: kill it, and an event on its pod)\n"
		"  --verify-ms N         between two looks, on average (default %d)\n"
		"  --verify-slack-mib N  memory a pod may hold on a device beyond its slice,\n"
		"                        for the driver's own (default %d)\n",
		GP_KUBE_RESOURCE, GP_KUBE_SPLIT_DEFAULT, GP_REGION_SYSTEM_DIR, METRICS_LISTEN_DEFAULT,
		HEALTH_MS_DEFAULT, GP_SEAL_KEY_PATH_DEFAULT, GP_AGENT_VERIFY_MS, GP_AGENT_SLACK_MIB);
}

/* ---- options ------------------------------------------------------------------ */

static const struct option flags[] = {
	{ "kubernetes", no_argument, NULL, 'k' },
	{ "node-name", required_argument, NULL, 'n' },
	{ "device-plugin-dir", required_argument, NULL, 'd' },
	{ "resource", required_argument, NULL, 'R' },
	{ "split", required_argument, NULL, 's' },
	{ "run-dir", required_argument, NULL, 'r' },
	{ "shim-host-path", required_argument, NULL, 'S' },
	{ "task-group", required_argument, NULL, 'g' },
	{ "metrics-listen", required_argument, NULL, 'm' },
	{ "metrics-address", required_argument, NULL, 'A' },
	{ "health-ms", required_argument, NULL, 'H' },
	{ "nvml", required_argument, NULL, 'N' },
	{ "kubeconfig", required_argument, NULL, 'c' },
	{ "kube-api", required_argument, NULL, 'a' },
	{ "kube-token-file", required_argument, NULL, 't' },
	{ "placement-key", required_argument, NULL, 'P' },
	{ "verify", required_argument, NULL, 'V' },
	{ "verify-ms", required_argument, NULL, 'v' },
	{ "verify-slack-mib", required_argument, NULL, 'L' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int bad(const char *flag, const char *value, const char *want)
{
	fprintf(stderr, "gpupool node: --%s \"%s\": %s\n", flag, value, want);
	return -EINVAL;
}

static int split_add(struct node_options *o, const char *value)
{
	const char *eq = strrchr(value, '=');
	struct split *s = &o->split[o->splits];

	if (o->splits == (int)(sizeof(o->split) / sizeof(o->split[0])))
		return bad("split", value, "too many (16 at most)");
	if (!eq || eq == value || (size_t)(eq - value) >= sizeof(s->model) ||
	    !gp_parse_uint(eq + 1, 1, 1000, NULL, &s->n))
		return bad("split", value, "want MODEL=N with N from 1 to 1000, e.g. A100=8");
	snprintf(s->model, sizeof(s->model), "%.*s", (int)(eq - value), value);
	o->splits++;
	return 0;
}

/* --verify's words, in enum gp_verify_policy's order. */
static int verify_set(struct node_options *o, const char *v)
{
	static const char *const names[] = { "kill", "alert", "off" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(v, names[i]) == 0) {
			o->verify = (enum gp_verify_policy)i;
			return 0;
		}
	return bad("verify", v, "want kill, alert or off");
}

static int option_set(struct node_options *o, int c, const char *v)
{
	unsigned u;

	switch (c) {
	case 'n': snprintf(o->node_name, sizeof(o->node_name), "%s", v); return 0;
	case 'd': snprintf(o->plugin_dir, sizeof(o->plugin_dir), "%s", v); return 0;
	case 'R': snprintf(o->resource, sizeof(o->resource), "%s", v); return 0;
	case 's': return split_add(o, v);
	case 'r': snprintf(o->run_dir, sizeof(o->run_dir), "%s", v); return 0;
	case 'S': snprintf(o->shim_host_path, sizeof(o->shim_host_path), "%s", v); return 0;
	case 'm': snprintf(o->metrics_listen, sizeof(o->metrics_listen), "%s", v); return 0;
	case 'A':
		if (!gp_kube_address_valid(v))
			return bad("metrics-address", v, "want HOST:PORT, the address the server "
				   "reaches this node's /metrics at");
		snprintf(o->metrics_address, sizeof(o->metrics_address), "%s", v);
		return 0;
	case 'N': snprintf(o->nvml, sizeof(o->nvml), "%s", v); return 0;
	case 'c': o->kube.kubeconfig = v; return 0;
	case 'a': o->kube.api_url = v; return 0;
	case 't': o->kube.token_file = v; return 0;
	case 'P': snprintf(o->placement_key, sizeof(o->placement_key), "%s", v); return 0;
	case 'V':
		return verify_set(o, v);
	case 'v':
		if (!gp_parse_uint(v, 100, 60000, NULL, &o->verify_ms))
			return bad("verify-ms", v, "want milliseconds from 100 to 60000");
		return 0;
	case 'L':
		if (!gp_parse_uint(v, 0, 65536, NULL, &u))
			return bad("verify-slack-mib", v, "want MiB from 0 to 65536");
		o->verify_slack_mib = u;
		return 0;
	case 'g':
		if (!gp_parse_uint(v, 0, 0x7fffffff, NULL, &u))
			return bad("task-group", v, "want a group id");
		o->task_group = (gid_t)u;
		return 0;
	case 'H':
		if (!gp_parse_uint(v, 50, 60000, NULL, &o->health_ms))
			return bad("health-ms", v, "want milliseconds from 50 to 60000");
		return 0;
	}
	return -EINVAL;
}

/* Where the server reads /metrics, unless given: the listen address on
 * 127.0.0.1; on 0.0.0.0, the pod's IP ($POD_IP, from the downward API). */
static void metrics_address_default(struct node_options *o)
{
	const char *ip = getenv("POD_IP"), *colon = strrchr(o->metrics_listen, ':');

	if (o->metrics_address[0] || !colon)
		return;
	if (!strncmp(o->metrics_listen, "127.0.0.1:", 10))
		snprintf(o->metrics_address, sizeof(o->metrics_address), "%s", o->metrics_listen);
	else if (ip && *ip)
		snprintf(o->metrics_address, sizeof(o->metrics_address), "%s%s", ip, colon);
	if (o->metrics_address[0] && !gp_kube_address_valid(o->metrics_address))
		o->metrics_address[0] = 0;
}

static void options_default(struct node_options *o)
{
	const char *env = getenv("NODE_NAME");

	if (!o->node_name[0] && env && *env)
		snprintf(o->node_name, sizeof(o->node_name), "%s", env);
	if (!o->node_name[0])
		gethostname(o->node_name, sizeof(o->node_name) - 1);
	if (!o->plugin_dir[0])
		snprintf(o->plugin_dir, sizeof(o->plugin_dir), "/var/lib/kubelet/device-plugins");
	if (!o->resource[0])
		snprintf(o->resource, sizeof(o->resource), "%s", GP_KUBE_RESOURCE);
	if (!o->run_dir[0])
		snprintf(o->run_dir, sizeof(o->run_dir), "%s", GP_REGION_SYSTEM_DIR);
	if (!o->shim_host_path[0])
		snprintf(o->shim_host_path, sizeof(o->shim_host_path),
			 "/var/lib/gpupool/lib/libgpushare.so");
	if (!o->metrics_listen[0])
		snprintf(o->metrics_listen, sizeof(o->metrics_listen), "%s", METRICS_LISTEN_DEFAULT);
	metrics_address_default(o);
	if (!o->health_ms)
		o->health_ms = HEALTH_MS_DEFAULT;
	if (!o->verify_ms)
		o->verify_ms = GP_AGENT_VERIFY_MS;
	if (!o->placement_key[0])
		snprintf(o->placement_key, sizeof(o->placement_key), "%s", GP_SEAL_KEY_PATH_DEFAULT);
}

/* 1 for --help, 0, or -EINVAL (said). */
static int options_parse(int argc, char **argv, struct node_options *o)
{
	bool kubernetes = false;
	int c;

	opterr = 0;
	optind = 0;
	o->task_group = getegid();
	o->verify_slack_mib = GP_AGENT_SLACK_MIB;
	while ((c = getopt_long(argc, argv, ":h", flags, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "gpupool node: %s \"%s\" (gpupool node --kubernetes --help "
					"lists the options)\n",
				c == '?' ? "unknown option" : "missing value for", argv[optind - 1]);
			return -EINVAL;
		}
		if (c == 'k')
			kubernetes = true;
		else if (option_set(o, c, optarg) < 0)
			return -EINVAL;
	}
	if (!kubernetes || optind < argc) {
		fprintf(stderr, "gpupool node: want --kubernetes and options only (gpupool node "
				"--kubernetes --help)\n");
		return -EINVAL;
	}
	options_default(o);
	return 0;
}

/* ---- devices -------------------------------------------------------------------- */

/* The NUMA node of a PCI device ("00000000:3B:00.0"), from sysfs; 0 when
 * the kernel does not say. */
static int numa_of(const char *bus_id)
{
	char path[128], dev[32];
	const char *p = strlen(bus_id) > 12 ? bus_id + 4 : bus_id;       /* 4-digit domain */
	int numa = 0;
	FILE *f;

	snprintf(dev, sizeof(dev), "%.31s", p);
	for (char *q = dev; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", dev);
	f = fopen(path, "re");
	if (f && fscanf(f, "%d", &numa) != 1)
		numa = 0;
	if (f)
		fclose(f);
	return numa < 0 ? 0 : numa;
}

static unsigned split_of(const struct node_options *o, const char *model)
{
	int best = gp_model_best(model, NULL, o->split, sizeof(*o->split),
				 offsetof(struct split, model), o->splits);

	return best < 0 ? GP_KUBE_SPLIT_DEFAULT : o->split[best].n;
}

/* The cards in partition mode (MIG), over the devices found: a card cut
 * by hand becomes its partitions, a card of no known set is not usable,
 * and what a previous node program made for pods is in the ledger. */
static int parts_open(struct node *n)
{
	char err[512], ledger[600];
	int r;

	snprintf(ledger, sizeof(ledger), "%s/partitions", n->o.run_dir);
	r = gp_parts_init(&n->parts, &n->found, n->o.nvml[0] ? n->o.nvml : NULL, n->o.run_dir,
			  ledger, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "gpupool node: cannot read the cards in MIG mode: %s\n", err);
	return r;
}

/* Finds the devices and makes each usable one's region managed. */
static int devices_open(struct node *n)
{
	char err[512];
	int r = gp_devices_discover(n->o.nvml[0] ? n->o.nvml : NULL, &n->found, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "gpupool node: no devices: %s\n", err);
		return r;
	}
	if ((r = parts_open(n)) < 0)
		return r;
	for (unsigned i = 0; i < n->found.devices; i++) {
		struct node_device *d = &n->dev[n->devices++];

		d->d = n->found.device[i];
		d->numa = numa_of(d->d.pci_bus_id);
		d->split = split_of(&n->o, d->d.name);
		d->healthy = d->d.compatible;
		if (!d->d.compatible) {
			fprintf(stderr, "gpupool node: %s (%s) not usable: %s\n", d->d.uuid, d->d.name,
				d->d.reason);
			continue;
		}
		r = gp_region_prepare(n->o.run_dir, d->d.uuid, d->d.mem_total_mib << 20);
		if (r == 0)
			r = gp_region_open(n->o.run_dir, d->d.uuid, 0, &d->region);
		if (r < 0) {
			fprintf(stderr, "gpupool node: cannot make the region of %s in %s: %s\n",
				d->d.uuid, n->o.run_dir, strerror(-r));
			return r;
		}
	}
	return 0;
}

static void devices_close(struct node *n)
{
	for (unsigned i = 0; i < n->devices; i++)
		gp_region_close(n->dev[i].region);
	gp_parts_release(&n->parts);
}

/* The pods' partitions destroyed again while their driver held them,
 * and those made by hand followed: true when the units taken by
 * partitions of no pod changed on a card (the Node says them). */
static bool parts_follow(struct node *n)
{
	bool changed = false;

	pthread_mutex_lock(&n->lock);
	gp_parts_retry(&n->parts);
	for (unsigned i = 0; i < n->devices && i < n->found.devices; i++)
		if (n->dev[i].d.partition_held != n->found.device[i].partition_held) {
			n->dev[i].d.partition_held = n->found.device[i].partition_held;
			changed = true;
		}
	pthread_mutex_unlock(&n->lock);
	return changed;
}

/* What the kubelet sees: `split` units per device, healthy when the
 * device is. The caller frees *ret. */
static int plugin_devices(struct node *n, struct gp_plugin_device **ret, size_t *ret_n)
{
	size_t total = 0, k = 0;
	struct gp_plugin_device *all;

	for (unsigned i = 0; i < n->devices; i++)
		total += n->dev[i].split;
	all = calloc(total + 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (unsigned i = 0; i < n->devices; i++)
		for (unsigned u = 0; u < n->dev[i].split; u++, k++) {
			snprintf(all[k].id, sizeof(all[k].id), "%.80s::%u", n->dev[i].d.uuid, u);
			all[k].healthy = n->dev[i].healthy;
			all[k].numa = n->dev[i].numa;
		}
	*ret = all;
	*ret_n = total;
	return 0;
}

/* The Node's gpupool.io/devices annotation, written now. */
static int node_publish(struct node *n)
{
	struct gp_kube_device devs[GP_AGENT_DEVICES_MAX];
	char path[GP_KUBE_NAME_MAX + 32], *text;
	json_t *patch;
	int r;

	pthread_mutex_lock(&n->lock);
	for (unsigned i = 0; i < n->devices; i++) {
		const struct node_device *d = &n->dev[i];

		devs[i] = (struct gp_kube_device){ .memory_mib = d->d.mem_total_mib, .numa = d->numa,
						   .nvlink = d->d.nvlink,
						   .split = d->split, .healthy = d->healthy,
						   .compatible = d->d.compatible };
		snprintf(devs[i].uuid, sizeof(devs[i].uuid), "%.*s", (int)sizeof(devs[i].uuid) - 1, d->d.uuid);
		snprintf(devs[i].model, sizeof(devs[i].model), "%s", d->d.name);
		snprintf(devs[i].reason, sizeof(devs[i].reason), "%s", d->d.reason);
		if (gp_part_set(d->d.partition_set)) {
			snprintf(devs[i].partition_set, sizeof(devs[i].partition_set), "%s",
				 gp_part_set(d->d.partition_set)->model);
			devs[i].partition_held = d->d.partition_held;
		}
	}
	text = gp_kube_devices_text(devs, n->devices, n->found.driver_version, n->found.cuda_version);
	pthread_mutex_unlock(&n->lock);
	patch = text ? json_pack("{s:{s:{s:s, s:s?}}}", "metadata", "annotations",
				 GP_KUBE_ANN_DEVICES, text, GP_KUBE_ANN_METRICS,
				 n->o.metrics_address[0] ? n->o.metrics_address : NULL)
		     : NULL;
	free(text);
	if (!patch)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", n->o.node_name);
	pthread_mutex_lock(&n->api_lock);
	r = gp_kube_merge_patch(n->api, path, patch, NULL, NULL);
	if (r < 0)
		fprintf(stderr, "gpupool node: cannot publish the devices on node %s: %s\n",
			n->o.node_name, gp_kube_error(n->api));
	pthread_mutex_unlock(&n->api_lock);
	json_decref(patch);
	return r;
}

/* One look at the devices: utilization, memory, and health (NVML answers
 * for the device). True when a device's health changed. */
static bool devices_sample(struct node *n, struct gp_usage *u)
{
	struct gp_usage_device s[GP_AGENT_DEVICES_MAX];
	bool changed = false;

	if (!u || gp_node_meter_sample(n, u, s) < 0)
		return false;
	pthread_mutex_lock(&n->lock);
	for (unsigned i = 0; i < n->devices; i++) {
		struct node_device *d = &n->dev[i];
		bool healthy = s[i].ok && d->d.compatible;

		if (healthy != d->healthy)
			fprintf(stderr, "gpupool node: %s is %s\n", d->d.uuid,
				healthy ? "healthy again" : "unhealthy: NVML does not answer for it");
		changed |= healthy != d->healthy;
		d->healthy = healthy;
		d->util_pct = s[i].util_pct;
		d->mem_used_mib = s[i].mem_used_mib;
	}
	pthread_mutex_unlock(&n->lock);
	return changed;
}

static int plugin_update(struct node *n)
{
	struct gp_plugin_device *all;
	size_t count;
	int r;

	pthread_mutex_lock(&n->lock);
	r = plugin_devices(n, &all, &count);
	pthread_mutex_unlock(&n->lock);
	if (r == 0)
		r = gp_plugin_set_devices(n->plugin, all, count);
	free(all);
	return r;
}

/* ---- /metrics ------------------------------------------------------------------------- */

static uint64_t device_util(const struct node_device *d)
{
	return d->util_pct;
}

static uint64_t device_used(const struct node_device *d)
{
	return d->mem_used_mib;
}

static uint64_t device_free(const struct node_device *d)
{
	return d->d.mem_total_mib - d->mem_used_mib;
}

/* The DCGM exporter's names where one exists (per device, and per pod
 * slice with the namespace, pod and container labels its Kubernetes
 * mode adds), gpupool's own for the rest. */
static void metrics_write(struct node *n, FILE *f)
{
	static const struct {
		const char *name, *help;
		uint64_t (*value)(const struct node_device *d);
	} gauges[] = {
		{ "DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", device_util },
		{ "DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", device_used },
		{ "DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", device_free },
	};

	for (size_t g = 0; g < sizeof(gauges) / sizeof(gauges[0]); g++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", gauges[g].name, gauges[g].help,
			gauges[g].name);
		for (unsigned i = 0; i < n->devices; i++)
			fprintf(f, "%s{gpu=\"%u\",UUID=\"%s\",modelName=\"%s\",Hostname=\"%s\"} %" PRIu64 "\n",
				gauges[g].name, n->dev[i].d.index, n->dev[i].d.uuid, n->dev[i].d.name,
				n->o.node_name, gauges[g].value(&n->dev[i]));
	}
	fprintf(f, "# HELP gpupool_device_healthy 1 when the device is advertised healthy.\n"
		   "# TYPE gpupool_device_healthy gauge\n");
	for (unsigned i = 0; i < n->devices; i++)
		fprintf(f, "gpupool_device_healthy{gpu=\"%u\",UUID=\"%s\",Hostname=\"%s\"} %d\n",
			n->dev[i].d.index, n->dev[i].d.uuid, n->o.node_name, n->dev[i].healthy);
	gp_node_meter_write(n, f);
	fprintf(f, "# TYPE gpupool_node_allocations_total counter\n"
		   "gpupool_node_allocations_total %" PRIu64 "\n"
		   "# TYPE gpupool_node_live_changes_total counter\n"
		   "gpupool_node_live_changes_total %" PRIu64 "\n"
		   "# HELP gpupool_node_violations_total Device processes the verifier found "
		   "breaking a slice or of no pod.\n"
		   "# TYPE gpupool_node_violations_total counter\n"
		   "gpupool_node_violations_total %" PRIu64 "\n",
		n->allocations, n->live_changes, n->violations);
	gp_node_violations_write(f, n->violations_no_pod);
}

static void metrics(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct node *n = ctx;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)req;
	if (!f) {
		gp_http_error(ret, 500, "out of memory");
		return;
	}
	pthread_mutex_lock(&n->lock);
	metrics_write(n, f);
	pthread_mutex_unlock(&n->lock);
	fclose(f);
	gp_http_bytes(ret, 200, text, len, "text/plain; version=0.0.4");
}

static const struct gp_http_route metrics_routes[] = {
	{ "GET", "/metrics", metrics },
};

static int metrics_start(struct node *n, struct gp_http **ret)
{
	char sock[600];
	const char *colon = strrchr(n->o.metrics_listen, ':');
	struct gp_http_options ho = { .socket_path = sock, .body_max = 4096 };
	unsigned port;
	int r;

	*ret = NULL;
	if (strcmp(n->o.metrics_listen, "off") == 0)
		return 0;
	if (!colon || !gp_parse_uint(colon + 1, 1, 65535, NULL, &port) ||
	    (strncmp(n->o.metrics_listen, "0.0.0.0:", 8) != 0 &&
	     strncmp(n->o.metrics_listen, "127.0.0.1:", 10) != 0))
		return bad("metrics-listen", n->o.metrics_listen,
			   "want 0.0.0.0:PORT, 127.0.0.1:PORT or off");
	ho.tcp_port = port;
	ho.tcp_any = n->o.metrics_listen[0] == '0';
	snprintf(sock, sizeof(sock), "%s/node.sock", n->o.run_dir);
	r = gp_http_listen(&ho, ret);
	if (r == 0)
		r = gp_http_serve(*ret, metrics_routes, 1, n);
	if (r < 0)
		fprintf(stderr, "gpupool node: cannot serve /metrics on %s: %s\n",
			n->o.metrics_listen, strerror(-r));
	return r;
}

/* ---- life -------------------------------------------------------------------------------- */

static int kube_open(struct node *n)
{
	char err[1024];
	int r = gp_seal_key_load(n->o.placement_key, &n->seal, err, sizeof(err));

	if (r == 0)
		r = gp_kube_config_load(&n->o.kube, &n->config, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "gpupool node: %s\n", err);
		return r;
	}
	return gp_kube_new(n->config, &n->api);
}

static int plugin_start(struct node *n)
{
	struct gp_plugin_options po = { .dir = n->o.plugin_dir, .socket_name = "gpupool.sock",
					.resource = n->o.resource };
	struct gp_plugin_device *all = NULL;
	int r = plugin_devices(n, &all, &po.n_devices);

	po.devices = all;
	if (r == 0)
		r = gp_plugin_start(&po, &gp_node_plugin_ops, n, &n->plugin);
	free(all);
	if (r < 0)
		fprintf(stderr, "gpupool node: cannot start the device plugin in %s: %s\n",
			n->o.plugin_dir, strerror(-r));
	return r;
}

static int informer_start(struct node *n)
{
	char path[GP_KUBE_NAME_MAX + 64];
	int r;

	snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s",
		 n->o.node_name);
	r = gp_kube_informer_start(n->config, path, &gp_node_pod_ops, n, &n->informer);
	if (r < 0)
		fprintf(stderr, "gpupool node: cannot watch this node's pods: %s\n", strerror(-r));
	return r;
}

/* What was said of the kubelet: its socket missing or not, and the
 * registrations counted. */
struct kubelet_said {
	int missing;                    /* -1: nothing said yet */
	unsigned registrations;
};

/* Says, once and again when it changes, that the kubelet's socket is
 * missing from the device-plugin folder (no kubelet there yet, or a
 * --device-plugin-dir that is not its folder), and each registration
 * (counted, so that one that lasted less than a health period is said
 * too). */
static void kubelet_state_log(struct node *n, struct kubelet_said *said)
{
	unsigned regs = gp_plugin_registrations(n->plugin);
	int missing = gp_plugin_state(n->plugin) == GP_PLUGIN_NO_KUBELET;

	if (regs != said->registrations) {
		fprintf(stderr, "gpupool node: registered %s with the kubelet\n", n->o.resource);
		said->registrations = regs;
		said->missing = 0;
	}
	if (missing && said->missing != 1)
		fprintf(stderr, "gpupool node: no kubelet.sock in %s: waiting for the kubelet (is "
			"--device-plugin-dir the kubelet's device-plugin folder?)\n", n->o.plugin_dir);
	if (missing || said->missing == -1)
		said->missing = missing;
}

/* Until SIGTERM or SIGINT: the devices' health, every health_ms; the
 * Node's annotation again when it changed or could not be written; what
 * the kubelet's registration is, when it changes. */
static void run(struct node *n, struct gp_usage *u, sigset_t *stop)
{
	struct timespec wait = { (time_t)(n->o.health_ms / 1000),
				 (long)(n->o.health_ms % 1000) * 1000000L };
	bool published = node_publish(n) == 0;
	struct kubelet_said said = { -1, 0 };

	fprintf(stderr, "gpupool node: %s: %u device(s), resource %s, plugin in %s\n",
		n->o.node_name, n->devices, n->o.resource, n->o.plugin_dir);
	if (!n->o.metrics_address[0])
		fprintf(stderr, "gpupool node: the server cannot read this node's /metrics, so its "
			"pods are not metered: give --metrics-address HOST:PORT (or $POD_IP)\n");
	for (;;) {
		int sig = sigtimedwait(stop, NULL, &wait);

		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (devices_sample(n, u)) {
			plugin_update(n);
			published = false;
		}
		if (parts_follow(n))
			published = false;
		if (!published)
			published = node_publish(n) == 0;
		kubelet_state_log(n, &said);
	}
	fprintf(stderr, "gpupool node: stopping\n");
}

int gp_cmd_node_kubernetes(int argc, char **argv)
{
	struct node *n = calloc(1, sizeof(*n));
	struct gp_usage *u = NULL;
	struct gp_http *h = NULL;
	char err[512];
	sigset_t stop;
	int r, status = GP_EXIT_FAIL;

	if (!n)
		return GP_EXIT_FAIL;
	r = options_parse(argc, argv, &n->o);
	if (r != 0) {
		free(n);
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	}
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_init(&n->lock, NULL);
	pthread_mutex_init(&n->api_lock, NULL);
	if (devices_open(n) == 0 && kube_open(n) == 0 && metrics_start(n, &h) == 0) {
		if (gp_usage_open(n->o.nvml[0] ? n->o.nvml : NULL, &n->found, &u, err, sizeof(err)) < 0)
			fprintf(stderr, "gpupool node: no health checks: %s\n", err);
		gp_node_meter_open(n, u);
		if (informer_start(n) == 0 && plugin_start(n) == 0 && gp_node_verify_start(n) == 0) {
			run(n, u, &stop);
			status = GP_EXIT_OK;
		}
	}
	gp_node_verify_stop(n);
	n->plugin = gp_plugin_stop(n->plugin);
	n->informer = gp_kube_informer_stop(n->informer);
	gp_http_stop(h);
	gp_usage_close(u);
	gp_node_pods_clear(n);
	devices_close(n);
	gp_kube_free(n->api);
	gp_kube_config_free(n->config);
	pthread_mutex_destroy(&n->lock);
	pthread_mutex_destroy(&n->api_lock);
	gp_seal_key_wipe(&n->seal);
	free(n);
	return status;
}
