/* plugin-grpc.h — what goes over the wire for the device plugin
 * (plugin.c): the DevicePlugin methods from request bytes to reply bytes,
 * the ListAndWatch list, the Register request, and the gRPC C core
 * plumbing under them (completion-queue tags, byte buffers, errno to
 * gRPC status, the batches that answer a call, send one message of a
 * stream or make a client call). Internal to src/k8s; plugin.c keeps the
 * state (server, calls, registration), this file only translates.
 *
 * Everything here runs on the plugin's one thread. Byte buffers and
 * slices returned are the caller's (grpc_byte_buffer_destroy,
 * grpc_slice_unref); messages returned by pg_unpack are the caller's
 * (protobuf_c_message_free_unpacked). */
#ifndef GP_K8S_PLUGIN_GRPC_H
#define GP_K8S_PLUGIN_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>

#include "k8s/plugin.h"

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

struct gp_plugin;

/* A completion-queue tag: what to do when the batch it marks ends. */
struct pg_tag {
	void (*done)(struct gp_plugin *p, struct pg_tag *t, bool ok);
};

/* Monotonic milliseconds, and a completion-queue deadline ms from now. */
int64_t pg_now_ms(void);
gpr_timespec pg_deadline(int64_t ms);

/* A message packed into a new slice (the caller's: grpc_slice_unref) or
 * byte buffer (never NULL: gRPC aborts when out of memory). */
grpc_slice pg_pack_slice(const ProtobufCMessage *m);
grpc_byte_buffer *pg_pack(const ProtobufCMessage *m);

/* The message in bb, or NULL when bb is NULL or not a valid message. */
ProtobufCMessage *pg_unpack(const ProtobufCMessageDescriptor *d, grpc_byte_buffer *bb);

/* The gRPC status for a negative errno (0: OK). */
grpc_status_code pg_status(int err);

/* One server call's answer: a reply (when err is 0) or a status (err < 0,
 * with `message`), in one batch that also waits for the close. The batch
 * ends on `tag`; reply, details and cancelled must live until then (the
 * caller owns and frees them). Returns 0 or -EIO (no batch started). */
int pg_answer(grpc_call *call, grpc_byte_buffer *reply, int err, const char *message,
	      grpc_slice *details, int *cancelled, struct pg_tag *tag);

/* A server-streaming call: wait for the client's close (ends on tag, with
 * *cancelled set), or send one message (with the initial metadata when
 * `first`). Return 0 or -EIO (no batch started). */
int pg_stream_wait_close(grpc_call *call, int *cancelled, struct pg_tag *tag);
int pg_stream_send(grpc_call *call, grpc_byte_buffer *message, bool first, struct pg_tag *tag);

/* A client call on `channel`, bound to cq: sends `request`, receives one
 * reply message and the status (all in one batch ending on tag; with
 * -EIO, none started). The caller owns the pg_client_call and releases
 * what it holds (the call included) with pg_client_call_release once the
 * tag has ended, or at once when the start failed. */
struct pg_client_call {
	grpc_call *call;
	grpc_byte_buffer *request, *reply;
	grpc_metadata_array initial, trailing;
	grpc_status_code status;
	grpc_slice details;
};
int pg_client_call_start(struct pg_client_call *c, grpc_channel *channel, grpc_completion_queue *cq,
			 const char *method, const ProtobufCMessage *request, int64_t timeout_ms,
			 struct pg_tag *tag);
void pg_client_call_release(struct pg_client_call *c);

/* ---- the device plugin's messages ---- */

/* The DevicePlugin methods, served with their full gRPC paths. */
enum pg_method { PG_OPTIONS, PG_LIST, PG_PREFERRED, PG_ALLOCATE, PG_PRESTART, PG_METHODS };
const char *pg_method_path(enum pg_method m);

/* The caller's decisions, as the methods call them. */
struct pg_callbacks {
	struct gp_plugin_ops ops;
	void *ctx;
};

/* One unary method: decodes `request`, calls back, and packs the reply
 * into *ret_reply; or returns a negative errno with a one-line reason in
 * err (-EINVAL: a malformed request). PG_LIST only checks the request
 * (its replies are the lists of pg_list_pack). */
int pg_serve(enum pg_method m, const struct pg_callbacks *cb, grpc_byte_buffer *request,
	     grpc_byte_buffer **ret_reply, char *err, size_t err_len);

/* A ListAndWatchResponse of the n devices, into *ret. 0 or -ENOMEM. */
int pg_list_pack(const struct gp_plugin_device *devices, size_t n, grpc_slice *ret);

/* Register{v1beta1, endpoint, resource, our options} to the kubelet, as
 * pg_client_call_start. */
int pg_register_start(struct pg_client_call *c, grpc_channel *channel, grpc_completion_queue *cq,
		      const char *endpoint, const char *resource, struct pg_tag *tag);

#endif
