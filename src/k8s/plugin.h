/* plugin.h — the kubelet device plugin (API v1beta1) of `gpupool node`:
 * gRPC's C core serving the DevicePlugin service on a Unix socket in the
 * kubelet's device-plugin folder, and calling the kubelet's Registration
 * service, with messages from protobuf-c (generated at build time from
 * kubelet's api.proto, src/k8s/deviceplugin/api.proto).
 *
 * One thread runs a completion-queue loop that serves every call:
 * GetDevicePluginOptions (PreStartContainer required,
 * GetPreferredAllocation available), ListAndWatch (the full list at once,
 * then again on every change), GetPreferredAllocation, Allocate,
 * PreStartContainer. Register is sent from the same loop, asynchronously,
 * since the kubelet calls GetDevicePluginOptions back before it answers.
 * When the kubelet restarts it wipes the folder: the loop sees kubelet.sock
 * made again (or our socket gone), makes its socket again and registers
 * again within 1 s.
 *
 * The devices are what the caller says through gp_plugin_set_devices; the
 * decisions are the caller's through callbacks, called on the plugin's
 * thread.
 *
 * Ownership: the plugin copies what it is given; responses the callbacks
 * fill are the plugin's (freed after sending). Functions return 0 or a
 * negative errno. */
#ifndef GP_K8S_PLUGIN_H
#define GP_K8S_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_PLUGIN_ID_MAX 96
#define GP_PLUGIN_NUMA_NONE (-1)

/* One device as the kubelet sees it: an ID it counts as one unit of the
 * resource. gpupool advertises `split` IDs per physical device
 * ("GPU-uuid::0" .. "GPU-uuid::9"). */
struct gp_plugin_device {
	char id[GP_PLUGIN_ID_MAX];
	bool healthy;
	int numa;                       /* GP_PLUGIN_NUMA_NONE: not known */
};

/* What one container of an Allocate gets; the callback fills it with the
 * gp_plugin_response_* functions below. */
struct gp_plugin_response;

int gp_plugin_response_env(struct gp_plugin_response *r, const char *name, const char *value);
int gp_plugin_response_mount(struct gp_plugin_response *r, const char *container_path,
			     const char *host_path, bool read_only);
int gp_plugin_response_device(struct gp_plugin_response *r, const char *container_path,
			      const char *host_path, const char *permissions);
int gp_plugin_response_annotation(struct gp_plugin_response *r, const char *key,
				  const char *value);

struct gp_plugin_ops {
	/* Allocate, one call per container request: ids are the device IDs
	 * the kubelet chose. Fill r and return 0; a negative errno fails the
	 * call (the kubelet fails the pod's admission, showing `err`). */
	int (*allocate)(void *ctx, const char *const *ids, size_t n_ids,
			struct gp_plugin_response *r, char *err, size_t err_len);
	/* GetPreferredAllocation for one container: choose `size` of the
	 * available ids (must_include first) into ret_ids (room for size);
	 * NULL: the plugin takes must_include, then the first available. */
	int (*preferred)(void *ctx, const char *const *available, size_t n_available,
			 const char *const *must_include, size_t n_must, size_t size,
			 const char **ret_ids);
	/* PreStartContainer (optional: NULL answers at once). */
	int (*pre_start)(void *ctx, const char *const *ids, size_t n_ids);
};

struct gp_plugin_options {
	const char *dir;                /* the kubelet's folder; NULL: /var/lib/kubelet/device-plugins */
	const char *socket_name;        /* ours in dir, e.g. "gpupool.sock" */
	const char *resource;           /* "gpupool.io/gpu" */
	/* The first device list (copied), there before the first Register so
	 * that the kubelet's first ListAndWatch has it; NULL/0: empty until
	 * gp_plugin_set_devices. */
	const struct gp_plugin_device *devices;
	size_t n_devices;
};

struct gp_plugin;

/* Starts serving and registering on a thread of its own. */
int gp_plugin_start(const struct gp_plugin_options *o, const struct gp_plugin_ops *ops, void *ctx,
		    struct gp_plugin **ret);

/* Replaces the device list; every open ListAndWatch stream gets the new
 * list within 200 ms when it differs. Thread-safe. */
int gp_plugin_set_devices(struct gp_plugin *p, const struct gp_plugin_device *devices, size_t n);

/* How many times Register has succeeded (for tests and logs). */
unsigned gp_plugin_registrations(const struct gp_plugin *p);

/* Where registration stands now (for logs): no kubelet.sock in the
 * folder (no kubelet there yet, or not the kubelet's folder), the
 * kubelet's socket there but not registered with it (yet), registered. */
enum gp_plugin_state {
	GP_PLUGIN_NO_KUBELET,
	GP_PLUGIN_REGISTERING,
	GP_PLUGIN_REGISTERED,
};
enum gp_plugin_state gp_plugin_state(const struct gp_plugin *p);

/* Stops the thread, closes the socket and removes its file. Accepts NULL;
 * returns NULL. */
struct gp_plugin *gp_plugin_stop(struct gp_plugin *p);

#endif
