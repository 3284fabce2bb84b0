/* plugin-fixture.c — a small device plugin on k8s_plugin_lib
 * (src/k8s/plugin.h) for tests/k8s/test-device-plugin.sh, where a kubelet
 * double (grpc-js or grpc-go) plays the kubelet.
 *
 *   plugin-fixture --dir DIR --resource NAME --devices UUID:SPLIT[,UUID:SPLIT...]
 *                  [--socket NAME]
 *
 * advertises SPLIT ids per device ("UUID::0" .. "UUID::SPLIT-1"; NUMA node
 * 0 for the first device, 1 for the others), all Healthy, on DIR/NAME
 * (default gpupool.sock). SIGUSR1 makes the first device's ids Unhealthy,
 * SIGUSR2 Healthy again; SIGTERM or SIGINT stop it (exit 0). Allocate
 * answers CUDA_VISIBLE_DEVICES (the distinct UUIDs of the ids),
 * GPUPOOL_TEST_IDS (the ids), a mount of DIR/lib at /usr/lib/gpupool
 * (read-only), /dev/null ("rw") and the annotation gpupool.io/test=yes; an
 * id it does not know fails the call, naming the id. Exit 2: bad usage. */
#include "k8s/plugin.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IDS 1024
#define MAX_SPLIT 64

static const char usage[] =
	"usage: plugin-fixture --dir DIR --resource NAME --devices UUID:SPLIT[,UUID:SPLIT...]"
	" [--socket NAME]\n";

struct fixture {
	const char *dir;
	struct gp_plugin_device ids[MAX_IDS];
	size_t n_ids;
	size_t n_first;                 /* the first device's ids come first */
};

/* Adds SPLIT ids for the device `uuid` (len bytes). */
static int device_add(struct fixture *f, const char *uuid, size_t len, long split, int numa)
{
	for (long i = 0; i < split; i++) {
		struct gp_plugin_device *d = &f->ids[f->n_ids];
		int n;

		if (f->n_ids == MAX_IDS)
			return -ENOSPC;
		n = snprintf(d->id, sizeof d->id, "%.*s::%ld", (int)len, uuid, i);
		if (n < 0 || (size_t)n >= sizeof d->id)
			return -ENAMETOOLONG;
		d->healthy = true;
		d->numa = numa;
		f->n_ids++;
	}
	return 0;
}

/* Parses UUID:SPLIT[,UUID:SPLIT...]. */
static int devices_parse(struct fixture *f, const char *spec)
{
	const char *s = spec;

	while (*s) {
		size_t len = strcspn(s, ":,");
		char *end;
		long split;

		if (len == 0 || s[len] != ':')
			return -EINVAL;
		errno = 0;
		split = strtol(s + len + 1, &end, 10);
		if (errno || end == s + len + 1 || (*end && *end != ',') || split < 1 ||
		    split > MAX_SPLIT)
			return -EINVAL;
		if (device_add(f, s, len, split, f->n_ids ? 1 : 0) < 0)
			return -EINVAL;
		if (f->n_first == 0)
			f->n_first = f->n_ids;
		s = *end ? end + 1 : end;
		if (*end && !*s)
			return -EINVAL;
	}
	return f->n_ids ? 0 : -EINVAL;
}

static const struct gp_plugin_device *id_find(const struct fixture *f, const char *id)
{
	for (size_t i = 0; i < f->n_ids; i++)
		if (strcmp(f->ids[i].id, id) == 0)
			return &f->ids[i];
	return NULL;
}

/* Appends `item` to the comma-separated list in buf. */
static void list_add(char *buf, size_t size, const char *item, size_t len)
{
	size_t used = strlen(buf);

	snprintf(buf + used, size - used, "%s%.*s", used ? "," : "", (int)len, item);
}

/* Whether `uuid` (len bytes) is in the comma-separated list. */
static bool uuid_listed(const char *list, const char *uuid, size_t len)
{
	const char *s = list;

	while (*s) {
		size_t n = strcspn(s, ",");

		if (n == len && strncmp(s, uuid, len) == 0)
			return true;
		s += n + (s[n] == ',');
	}
	return false;
}

static int fixture_allocate(void *ctx, const char *const *ids, size_t n_ids,
			    struct gp_plugin_response *r, char *err, size_t err_len)
{
	struct fixture *f = ctx;
	char uuids[8192] = "", all[16384] = "", lib[4096];
	int rc;

	for (size_t i = 0; i < n_ids; i++) {
		size_t len;

		if (!id_find(f, ids[i])) {
			snprintf(err, err_len, "unknown device id '%s'", ids[i]);
			return -ENOENT;
		}
		len = (size_t)(strstr(ids[i], "::") - ids[i]);   /* every known id has "::" */
		if (!uuid_listed(uuids, ids[i], len))
			list_add(uuids, sizeof uuids, ids[i], len);
		list_add(all, sizeof all, ids[i], strlen(ids[i]));
	}
	snprintf(lib, sizeof lib, "%s/lib", f->dir);
	rc = gp_plugin_response_env(r, "CUDA_VISIBLE_DEVICES", uuids);
	if (rc == 0)
		rc = gp_plugin_response_env(r, "GPUPOOL_TEST_IDS", all);
	if (rc == 0)
		rc = gp_plugin_response_mount(r, "/usr/lib/gpupool", lib, true);
	if (rc == 0)
		rc = gp_plugin_response_device(r, "/dev/null", "/dev/null", "rw");
	if (rc == 0)
		rc = gp_plugin_response_annotation(r, "gpupool.io/test", "yes");
	return rc;
}

static void health_set(struct fixture *f, bool healthy)
{
	for (size_t i = 0; i < f->n_first; i++)
		f->ids[i].healthy = healthy;
}

static int serve(struct fixture *f, const struct gp_plugin_options *o)
{
	const struct gp_plugin_ops ops = { .allocate = fixture_allocate };
	struct gp_plugin *p;
	sigset_t set;
	int sig = 0, rc;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);    /* the plugin's threads inherit it */
	rc = gp_plugin_start(o, &ops, f, &p);
	if (rc < 0) {
		fprintf(stderr, "plugin-fixture: cannot serve on %s/%s: %s\n", f->dir,
			o->socket_name, strerror(-rc));
		return 1;
	}
	fprintf(stderr, "plugin-fixture: serving %zu ids of %s on %s/%s\n", f->n_ids, o->resource,
		f->dir, o->socket_name);
	while (sig != SIGTERM && sig != SIGINT) {
		if (sigwait(&set, &sig) != 0)
			break;
		if (sig == SIGUSR1 || sig == SIGUSR2) {
			health_set(f, sig == SIGUSR2);
			gp_plugin_set_devices(p, f->ids, f->n_ids);
		}
	}
	fprintf(stderr, "plugin-fixture: stopping after %u registrations\n",
		gp_plugin_registrations(p));
	gp_plugin_stop(p);
	return 0;
}

int main(int argc, char **argv)
{
	static struct fixture f;
	struct gp_plugin_options o = { .socket_name = "gpupool.sock" };
	const char *devices = NULL;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			fprintf(stderr, "plugin-fixture: %s needs a value\n%s", argv[i], usage);
			return 2;
		}
		if (!strcmp(argv[i], "--dir"))
			f.dir = o.dir = v;
		else if (!strcmp(argv[i], "--resource"))
			o.resource = v;
		else if (!strcmp(argv[i], "--devices"))
			devices = v;
		else if (!strcmp(argv[i], "--socket"))
			o.socket_name = v;
		else {
			fprintf(stderr, "plugin-fixture: unknown option %s\n%s", argv[i], usage);
			return 2;
		}
		i++;
	}
	if (!f.dir || !o.resource || !devices) {
		fprintf(stderr, "plugin-fixture: --dir, --resource and --devices are required\n%s",
			usage);
		return 2;
	}
	if (devices_parse(&f, devices) < 0) {
		fprintf(stderr, "plugin-fixture: bad --devices '%s': want UUID:SPLIT[,UUID:SPLIT...]"
			" with SPLIT a whole number from 1 to %d\n", devices, MAX_SPLIT);
		return 2;
	}
	o.devices = f.ids;
	o.n_devices = f.n_ids;
	return serve(&f, &o);
}
