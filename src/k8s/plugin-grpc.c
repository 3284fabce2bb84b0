/* plugin-grpc.c — what goes over the wire for the device plugin
 * (plugin-grpc.h), from the bottom up: the gRPC C core plumbing
 * (protobuf-c messages in and out of byte buffers, the one errno-to-status
 * table, the few batch shapes plugin.c needs: a unary answer, a stream's
 * close and sends, a unary client call), then the device plugin's
 * messages (the ListAndWatch list, what Allocate answers, the methods
 * from request bytes to reply bytes through the caller's callbacks, the
 * Register request). The messages are generated at build time from
 * kubelet's api.proto (src/k8s/meson.build). */
#include "k8s/plugin-grpc.h"
#include "deviceplugin-api.pb-c.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#define REGISTER_TIMEOUT_MS 15000

/* ---- gRPC plumbing ---- */

int64_t pg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

gpr_timespec pg_deadline(int64_t ms)
{
	return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

grpc_slice pg_pack_slice(const ProtobufCMessage *m)
{
	grpc_slice s = grpc_slice_malloc(protobuf_c_message_get_packed_size(m));

	protobuf_c_message_pack(m, GRPC_SLICE_START_PTR(s));
	return s;
}

grpc_byte_buffer *pg_pack(const ProtobufCMessage *m)
{
	grpc_slice s = pg_pack_slice(m);
	grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);

	grpc_slice_unref(s);
	return bb;
}

ProtobufCMessage *pg_unpack(const ProtobufCMessageDescriptor *d, grpc_byte_buffer *bb)
{
	grpc_byte_buffer_reader reader;
	ProtobufCMessage *m;
	grpc_slice s;

	if (!bb || !grpc_byte_buffer_reader_init(&reader, bb))
		return NULL;
	s = grpc_byte_buffer_reader_readall(&reader);
	grpc_byte_buffer_reader_destroy(&reader);
	m = protobuf_c_message_unpack(d, NULL, GRPC_SLICE_LENGTH(s), GRPC_SLICE_START_PTR(s));
	grpc_slice_unref(s);
	return m;
}

static const struct {
	int err;
	grpc_status_code code;
} status_table[] = {
	{ EINVAL, GRPC_STATUS_INVALID_ARGUMENT },
	{ ENOENT, GRPC_STATUS_NOT_FOUND },
	{ EEXIST, GRPC_STATUS_ALREADY_EXISTS },
	{ EPERM, GRPC_STATUS_PERMISSION_DENIED },
	{ EACCES, GRPC_STATUS_PERMISSION_DENIED },
	{ ENOSPC, GRPC_STATUS_RESOURCE_EXHAUSTED },
	{ ENOMEM, GRPC_STATUS_RESOURCE_EXHAUSTED },
	{ ERANGE, GRPC_STATUS_OUT_OF_RANGE },
	{ EBUSY, GRPC_STATUS_UNAVAILABLE },
	{ EAGAIN, GRPC_STATUS_UNAVAILABLE },
	{ ETIMEDOUT, GRPC_STATUS_DEADLINE_EXCEEDED },
	{ ECANCELED, GRPC_STATUS_CANCELLED },
	{ ENOSYS, GRPC_STATUS_UNIMPLEMENTED },
	{ EOPNOTSUPP, GRPC_STATUS_UNIMPLEMENTED },
};

grpc_status_code pg_status(int err)
{
	if (err == 0)
		return GRPC_STATUS_OK;
	for (size_t i = 0; i < sizeof status_table / sizeof status_table[0]; i++)
		if (status_table[i].err == -err)
			return status_table[i].code;
	return GRPC_STATUS_UNKNOWN;
}

static grpc_op op_of(grpc_op_type type)
{
	grpc_op op;

	memset(&op, 0, sizeof op);
	op.op = type;
	return op;
}

static int start(grpc_call *call, const grpc_op *ops, size_t n, struct pg_tag *tag)
{
	return grpc_call_start_batch(call, ops, n, tag, NULL) == GRPC_CALL_OK ? 0 : -EIO;
}

int pg_answer(grpc_call *call, grpc_byte_buffer *reply, int err, const char *message,
	      grpc_slice *details, int *cancelled, struct pg_tag *tag)
{
	grpc_op ops[4];
	size_t n = 0;

	ops[n++] = op_of(GRPC_OP_SEND_INITIAL_METADATA);
	if (err == 0) {
		ops[n] = op_of(GRPC_OP_SEND_MESSAGE);
		ops[n++].data.send_message.send_message = reply;
	}
	*details = grpc_slice_from_copied_string(err == 0 ? "" : message);
	ops[n] = op_of(GRPC_OP_SEND_STATUS_FROM_SERVER);
	ops[n].data.send_status_from_server.status = pg_status(err);
	ops[n++].data.send_status_from_server.status_details = details;
	ops[n] = op_of(GRPC_OP_RECV_CLOSE_ON_SERVER);
	ops[n++].data.recv_close_on_server.cancelled = cancelled;
	return start(call, ops, n, tag);
}

int pg_stream_wait_close(grpc_call *call, int *cancelled, struct pg_tag *tag)
{
	grpc_op op = op_of(GRPC_OP_RECV_CLOSE_ON_SERVER);

	op.data.recv_close_on_server.cancelled = cancelled;
	return start(call, &op, 1, tag);
}

int pg_stream_send(grpc_call *call, grpc_byte_buffer *message, bool first, struct pg_tag *tag)
{
	grpc_op ops[2];
	size_t n = 0;

	if (first)
		ops[n++] = op_of(GRPC_OP_SEND_INITIAL_METADATA);
	ops[n] = op_of(GRPC_OP_SEND_MESSAGE);
	ops[n++].data.send_message.send_message = message;
	return start(call, ops, n, tag);
}

int pg_client_call_start(struct pg_client_call *c, grpc_channel *channel, grpc_completion_queue *cq,
			 const char *method, const ProtobufCMessage *request, int64_t timeout_ms,
			 struct pg_tag *tag)
{
	grpc_op ops[6];

	memset(c, 0, sizeof *c);
	grpc_metadata_array_init(&c->initial);
	grpc_metadata_array_init(&c->trailing);
	c->details = grpc_empty_slice();
	c->call = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
					   grpc_slice_from_static_string(method), NULL,
					   pg_deadline(timeout_ms), NULL);
	if (!c->call)
		return -EIO;
	c->request = pg_pack(request);
	ops[0] = op_of(GRPC_OP_SEND_INITIAL_METADATA);
	ops[1] = op_of(GRPC_OP_SEND_MESSAGE);
	ops[1].data.send_message.send_message = c->request;
	ops[2] = op_of(GRPC_OP_SEND_CLOSE_FROM_CLIENT);
	ops[3] = op_of(GRPC_OP_RECV_INITIAL_METADATA);
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->initial;
	ops[4] = op_of(GRPC_OP_RECV_MESSAGE);
	ops[4].data.recv_message.recv_message = &c->reply;
	ops[5] = op_of(GRPC_OP_RECV_STATUS_ON_CLIENT);
	ops[5].data.recv_status_on_client.trailing_metadata = &c->trailing;
	ops[5].data.recv_status_on_client.status = &c->status;
	ops[5].data.recv_status_on_client.status_details = &c->details;
	return start(c->call, ops, 6, tag);
}

void pg_client_call_release(struct pg_client_call *c)
{
	if (c->call)
		grpc_call_unref(c->call);
	if (c->request)
		grpc_byte_buffer_destroy(c->request);
	if (c->reply)
		grpc_byte_buffer_destroy(c->reply);
	grpc_metadata_array_destroy(&c->initial);
	grpc_metadata_array_destroy(&c->trailing);
	grpc_slice_unref(c->details);
	memset(c, 0, sizeof *c);
}

/* ---- ListAndWatch's list ---- */

/* One device of a ListAndWatchResponse, with its storage. */
struct device_msg {
	V1beta1__Device device;
	V1beta1__TopologyInfo topology;
	V1beta1__NUMANode node;
	V1beta1__NUMANode *nodes[1];
};

static void device_msg_init(struct device_msg *m, const struct gp_plugin_device *d)
{
	*m = (struct device_msg){ .device = V1BETA1__DEVICE__INIT,
				  .topology = V1BETA1__TOPOLOGY_INFO__INIT,
				  .node = V1BETA1__NUMANODE__INIT };
	m->device.id = (char *)d->id;
	m->device.health = d->healthy ? "Healthy" : "Unhealthy";
	if (d->numa == GP_PLUGIN_NUMA_NONE)
		return;
	m->node.id = d->numa;
	m->nodes[0] = &m->node;
	m->topology.n_nodes = 1;
	m->topology.nodes = m->nodes;
	m->device.topology = &m->topology;
}

int pg_list_pack(const struct gp_plugin_device *devices, size_t n, grpc_slice *ret)
{
	V1beta1__ListAndWatchResponse rs = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
	struct device_msg *m = calloc(n ? n : 1, sizeof *m);
	V1beta1__Device **d = calloc(n ? n : 1, sizeof *d);

	if (!m || !d) {
		free(m);
		free(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		device_msg_init(&m[i], &devices[i]);
		d[i] = &m[i].device;
	}
	rs.n_devices = n;
	rs.devices = d;
	*ret = pg_pack_slice(&rs.base);
	free(m);
	free(d);
	return 0;
}

/* ---- what Allocate answers for one container (plugin.h's gp_plugin_response) ---- */

struct gp_plugin_response {
	V1beta1__ContainerAllocateResponse *msg;  /* all of it from malloc */
};

static void *grow(void *array, size_t n, size_t size)
{
	return realloc(array, n * size);
}

/* A new message of `size` bytes, initialized by `init`, with `n` strings
 * copied into the char * fields at `fields` (offsets), or NULL. */
static void *item_new(size_t size, void (*init)(void *), const size_t *fields,
		      const char *const *values, size_t n)
{
	char *m = malloc(size);

	if (!m)
		return NULL;
	init(m);
	for (size_t i = 0; i < n; i++)
		*(char **)(m + fields[i]) = NULL;
	for (size_t i = 0; i < n; i++) {
		char *s = strdup(values[i]);

		if (!s) {
			protobuf_c_message_free_unpacked((ProtobufCMessage *)m, NULL);
			return NULL;
		}
		*(char **)(m + fields[i]) = s;
	}
	return m;
}

static void env_init(void *m)
{
	v1beta1__container_allocate_response__envs_entry__init(m);
}

static void annotation_init(void *m)
{
	v1beta1__container_allocate_response__annotations_entry__init(m);
}

static void mount_init(void *m)
{
	v1beta1__mount__init(m);
}

static void device_spec_init(void *m)
{
	v1beta1__device_spec__init(m);
}

int gp_plugin_response_env(struct gp_plugin_response *r, const char *name, const char *value)
{
	static const size_t fields[] = {
		offsetof(V1beta1__ContainerAllocateResponse__EnvsEntry, key),
		offsetof(V1beta1__ContainerAllocateResponse__EnvsEntry, value),
	};
	const char *values[] = { name, value };
	V1beta1__ContainerAllocateResponse__EnvsEntry **a, *e;

	if (!r || !name || !*name || !value)
		return -EINVAL;
	a = grow(r->msg->envs, r->msg->n_envs + 1, sizeof *a);
	if (!a)
		return -ENOMEM;
	r->msg->envs = a;
	e = item_new(sizeof *e, env_init, fields, values, 2);
	if (!e)
		return -ENOMEM;
	a[r->msg->n_envs++] = e;
	return 0;
}

int gp_plugin_response_annotation(struct gp_plugin_response *r, const char *key,
				  const char *value)
{
	static const size_t fields[] = {
		offsetof(V1beta1__ContainerAllocateResponse__AnnotationsEntry, key),
		offsetof(V1beta1__ContainerAllocateResponse__AnnotationsEntry, value),
	};
	const char *values[] = { key, value };
	V1beta1__ContainerAllocateResponse__AnnotationsEntry **a, *e;

	if (!r || !key || !*key || !value)
		return -EINVAL;
	a = grow(r->msg->annotations, r->msg->n_annotations + 1, sizeof *a);
	if (!a)
		return -ENOMEM;
	r->msg->annotations = a;
	e = item_new(sizeof *e, annotation_init, fields, values, 2);
	if (!e)
		return -ENOMEM;
	a[r->msg->n_annotations++] = e;
	return 0;
}

int gp_plugin_response_mount(struct gp_plugin_response *r, const char *container_path,
			     const char *host_path, bool read_only)
{
	static const size_t fields[] = {
		offsetof(V1beta1__Mount, container_path),
		offsetof(V1beta1__Mount, host_path),
	};
	const char *values[] = { container_path, host_path };
	V1beta1__Mount **a, *m;

	if (!r || !container_path || !*container_path || !host_path || !*host_path)
		return -EINVAL;
	a = grow(r->msg->mounts, r->msg->n_mounts + 1, sizeof *a);
	if (!a)
		return -ENOMEM;
	r->msg->mounts = a;
	m = item_new(sizeof *m, mount_init, fields, values, 2);
	if (!m)
		return -ENOMEM;
	m->read_only = read_only;
	a[r->msg->n_mounts++] = m;
	return 0;
}

int gp_plugin_response_device(struct gp_plugin_response *r, const char *container_path,
			      const char *host_path, const char *permissions)
{
	static const size_t fields[] = {
		offsetof(V1beta1__DeviceSpec, container_path),
		offsetof(V1beta1__DeviceSpec, host_path),
		offsetof(V1beta1__DeviceSpec, permissions),
	};
	const char *values[] = { container_path, host_path, permissions };
	V1beta1__DeviceSpec **a, *d;

	if (!r || !container_path || !*container_path || !host_path || !*host_path ||
	    !permissions || !*permissions || strspn(permissions, "rwm") != strlen(permissions))
		return -EINVAL;
	a = grow(r->msg->devices, r->msg->n_devices + 1, sizeof *a);
	if (!a)
		return -ENOMEM;
	r->msg->devices = a;
	d = item_new(sizeof *d, device_spec_init, fields, values, 3);
	if (!d)
		return -ENOMEM;
	a[r->msg->n_devices++] = d;
	return 0;
}

/* ---- the DevicePlugin methods: request bytes in, reply bytes out ---- */

static int malformed(char *err, size_t err_len, const char *what)
{
	snprintf(err, err_len, "malformed %s: the request could not be decoded", what);
	return -EINVAL;
}

/* What this plugin tells the kubelet, in Register and when asked. */
static void options_set(V1beta1__DevicePluginOptions *o)
{
	o->pre_start_required = true;
	o->get_preferred_allocation_available = true;
}

static int serve_options(const struct pg_callbacks *cb, grpc_byte_buffer *request,
			 grpc_byte_buffer **ret_reply, char *err, size_t err_len)
{
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
	ProtobufCMessage *rq = pg_unpack(&v1beta1__empty__descriptor, request);

	(void)cb;
	if (!rq)
		return malformed(err, err_len, "Empty");
	protobuf_c_message_free_unpacked(rq, NULL);
	options_set(&o);
	*ret_reply = pg_pack(&o.base);
	return 0;
}

/* must_include first, then the first available ones not taken yet. */
static size_t preferred_default(const char *const *available, size_t n_available,
				const char *const *must, size_t n_must, size_t size,
				const char **ret_ids)
{
	size_t n = 0;

	for (size_t i = 0; i < n_must && n < size; i++)
		ret_ids[n++] = must[i];
	for (size_t i = 0; i < n_available && n < size; i++) {
		bool taken = false;

		for (size_t j = 0; j < n && !taken; j++)
			taken = strcmp(ret_ids[j], available[i]) == 0;
		if (!taken)
			ret_ids[n++] = available[i];
	}
	return n;
}

static int preferred_one(const struct pg_callbacks *cb,
			 const V1beta1__ContainerPreferredAllocationRequest *q,
			 V1beta1__ContainerPreferredAllocationResponse *r, char *err, size_t err_len)
{
	const char *const *available = (const char *const *)q->available_deviceids;
	const char *const *must = (const char *const *)q->must_include_deviceids;
	size_t size = q->allocation_size > 0 ? (size_t)q->allocation_size : 0;
	const char **ids;
	int rc = 0;

	if (q->allocation_size < 0 || size > q->n_available_deviceids) {
		snprintf(err, err_len, "allocation_size %d is not within 0..%zu (the available ids)",
			 (int)q->allocation_size, q->n_available_deviceids);
		return -EINVAL;
	}
	ids = calloc(size ? size : 1, sizeof *ids);
	if (!ids)
		return -ENOMEM;
	if (cb->ops.preferred)
		rc = cb->ops.preferred(cb->ctx, available, q->n_available_deviceids, must,
				       q->n_must_include_deviceids, size, ids);
	else
		preferred_default(available, q->n_available_deviceids, must,
				  q->n_must_include_deviceids, size, ids);
	if (rc < 0) {
		snprintf(err, err_len, "GetPreferredAllocation failed: %s", strerror(-rc));
		free(ids);
		return rc;
	}
	while (r->n_deviceids < size && ids[r->n_deviceids])
		r->n_deviceids++;
	r->deviceids = (char **)ids;
	return 0;
}

static int serve_preferred(const struct pg_callbacks *cb, grpc_byte_buffer *request,
			   grpc_byte_buffer **ret_reply, char *err, size_t err_len)
{
	V1beta1__PreferredAllocationResponse rs = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
	V1beta1__PreferredAllocationRequest *rq = (V1beta1__PreferredAllocationRequest *)
		pg_unpack(&v1beta1__preferred_allocation_request__descriptor, request);
	V1beta1__ContainerPreferredAllocationResponse *one, **all;
	size_t n;
	int rc = 0;

	if (!rq)
		return malformed(err, err_len, "PreferredAllocationRequest");
	n = rq->n_container_requests;
	one = calloc(n ? n : 1, sizeof *one);
	all = calloc(n ? n : 1, sizeof *all);
	if (!one || !all)
		rc = -ENOMEM;
	for (size_t i = 0; i < n && rc == 0; i++) {
		v1beta1__container_preferred_allocation_response__init(&one[i]);
		all[i] = &one[i];
		rc = preferred_one(cb, rq->container_requests[i], &one[i], err, err_len);
	}
	rs.n_container_responses = n;
	rs.container_responses = all;
	if (rc == 0)
		*ret_reply = pg_pack(&rs.base);
	for (size_t i = 0; one && i < n; i++)
		free(one[i].deviceids);
	free(one);
	free(all);
	protobuf_c_message_free_unpacked(&rq->base, NULL);
	return rc;
}

static int allocate_one(const struct pg_callbacks *cb,
			const V1beta1__ContainerAllocateRequest *q,
			V1beta1__ContainerAllocateResponse **ret, char *err, size_t err_len)
{
	struct gp_plugin_response r = { .msg = malloc(sizeof *r.msg) };
	int rc;

	if (!r.msg)
		return -ENOMEM;
	v1beta1__container_allocate_response__init(r.msg);
	*ret = r.msg;
	err[0] = '\0';
	rc = cb->ops.allocate(cb->ctx, (const char *const *)q->devices_ids, q->n_devices_ids, &r,
			      err, err_len);
	if (rc < 0 && !err[0])
		snprintf(err, err_len, "Allocate failed: %s", strerror(-rc));
	return rc < 0 ? rc : 0;
}

static int serve_allocate(const struct pg_callbacks *cb, grpc_byte_buffer *request,
			  grpc_byte_buffer **ret_reply, char *err, size_t err_len)
{
	V1beta1__AllocateResponse rs = V1BETA1__ALLOCATE_RESPONSE__INIT;
	V1beta1__AllocateRequest *rq = (V1beta1__AllocateRequest *)
		pg_unpack(&v1beta1__allocate_request__descriptor, request);
	V1beta1__ContainerAllocateResponse **all;
	size_t n;
	int rc = 0;

	if (!rq)
		return malformed(err, err_len, "AllocateRequest");
	n = rq->n_container_requests;
	all = calloc(n ? n : 1, sizeof *all);
	if (!all)
		rc = -ENOMEM;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = allocate_one(cb, rq->container_requests[i], &all[i], err, err_len);
	rs.n_container_responses = n;
	rs.container_responses = all;
	if (rc == 0)
		*ret_reply = pg_pack(&rs.base);
	for (size_t i = 0; all && i < n; i++)
		if (all[i])
			protobuf_c_message_free_unpacked(&all[i]->base, NULL);
	free(all);
	protobuf_c_message_free_unpacked(&rq->base, NULL);
	return rc;
}

static int serve_prestart(const struct pg_callbacks *cb, grpc_byte_buffer *request,
			  grpc_byte_buffer **ret_reply, char *err, size_t err_len)
{
	V1beta1__PreStartContainerResponse rs = V1BETA1__PRE_START_CONTAINER_RESPONSE__INIT;
	V1beta1__PreStartContainerRequest *rq = (V1beta1__PreStartContainerRequest *)
		pg_unpack(&v1beta1__pre_start_container_request__descriptor, request);
	int rc = 0;

	if (!rq)
		return malformed(err, err_len, "PreStartContainerRequest");
	if (cb->ops.pre_start)
		rc = cb->ops.pre_start(cb->ctx, (const char *const *)rq->devices_ids,
				       rq->n_devices_ids);
	if (rc < 0)
		snprintf(err, err_len, "PreStartContainer failed: %s", strerror(-rc));
	else
		*ret_reply = pg_pack(&rs.base);
	protobuf_c_message_free_unpacked(&rq->base, NULL);
	return rc < 0 ? rc : 0;
}

static int serve_list(const struct pg_callbacks *cb, grpc_byte_buffer *request,
		      grpc_byte_buffer **ret_reply, char *err, size_t err_len)
{
	ProtobufCMessage *rq = pg_unpack(&v1beta1__empty__descriptor, request);

	(void)cb;
	(void)ret_reply;
	if (!rq)
		return malformed(err, err_len, "Empty");
	protobuf_c_message_free_unpacked(rq, NULL);
	return 0;
}

typedef int serve_fn(const struct pg_callbacks *cb, grpc_byte_buffer *request,
		     grpc_byte_buffer **ret_reply, char *err, size_t err_len);

static const struct {
	const char *path;
	serve_fn *serve;
} methods[PG_METHODS] = {
	[PG_OPTIONS] = { "/v1beta1.DevicePlugin/GetDevicePluginOptions", serve_options },
	[PG_LIST] = { "/v1beta1.DevicePlugin/ListAndWatch", serve_list },
	[PG_PREFERRED] = { "/v1beta1.DevicePlugin/GetPreferredAllocation", serve_preferred },
	[PG_ALLOCATE] = { "/v1beta1.DevicePlugin/Allocate", serve_allocate },
	[PG_PRESTART] = { "/v1beta1.DevicePlugin/PreStartContainer", serve_prestart },
};

const char *pg_method_path(enum pg_method m)
{
	return methods[m].path;
}

int pg_serve(enum pg_method m, const struct pg_callbacks *cb, grpc_byte_buffer *request,
	     grpc_byte_buffer **ret_reply, char *err, size_t err_len)
{
	err[0] = '\0';
	return methods[m].serve(cb, request, ret_reply, err, err_len);
}

/* ---- Register, to the kubelet ---- */

int pg_register_start(struct pg_client_call *c, grpc_channel *channel, grpc_completion_queue *cq,
		      const char *endpoint, const char *resource, struct pg_tag *tag)
{
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
	V1beta1__RegisterRequest rq = V1BETA1__REGISTER_REQUEST__INIT;

	options_set(&o);
	rq.version = "v1beta1";
	rq.endpoint = (char *)endpoint;
	rq.resource_name = (char *)resource;
	rq.options = &o;
	return pg_client_call_start(c, channel, cq, "/v1beta1.Registration/Register", &rq.base,
				    REGISTER_TIMEOUT_MS, tag);
}
