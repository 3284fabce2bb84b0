/* plugin.c — the kubelet device plugin (plugin.h): the DevicePlugin
 * service on our socket, Register to the kubelet, and the watch for
 * kubelet restarts, all on one thread around one completion queue.
 *
 * The loop waits on the queue at most TICK_MS at a time (gRPC's C core
 * has no public alarm), so timed work happens between events: open
 * ListAndWatch streams get a list whose version they have not sent, and
 * every POLL_MS the loop looks at the two socket files. Our socket gone or
 * replaced, or kubelet.sock not the one we registered with, means the
 * kubelet restarted: the server is shut down, and once its shutdown has
 * ended (gRPC unlinks the old socket path then, so a new socket must not
 * be made before) a new server makes the socket again and Register is
 * sent again.
 *
 * State: the device list and its version are guarded by p->lock (written
 * by any thread through gp_plugin_set_devices); everything else below
 * "the loop's alone" is touched only by the loop's thread, or by
 * gp_plugin_start before that thread exists. Every served call is a
 * struct dp_call with a count of what holds it (the request, the stream
 * list, each batch in flight); the server is destroyed when its shutdown
 * has ended and no dp_call is left. */
#include "k8s/plugin.h"
#include "k8s/plugin-grpc.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <grpc/grpc_security.h>

#define TICK_MS 100            /* longest wait on the queue */
#define POLL_MS 100            /* how often the socket files are looked at */
#define REGISTER_RETRY_MS 500  /* after a failed Register */
#define DEFAULT_DIR "/var/lib/kubelet/device-plugins"

/* Which file is at a path: a file made again has another identity. */
struct file_id {
	bool exists;
	dev_t dev;
	ino_t ino;
	struct timespec ctime;
};

/* One served call, from the request for it to its last batch. */
struct dp_call {
	struct pg_tag on_new, on_answered, on_sent, on_close;
	enum pg_method method;
	int holds;                      /* what still holds it; freed at 0 */
	grpc_call *call;
	gpr_timespec deadline;
	grpc_metadata_array metadata;
	grpc_byte_buffer *request, *reply;
	grpc_slice details;
	int cancelled;
	/* ListAndWatch only */
	bool sending, closed, started;
	uint64_t sent_version;
	struct dp_call *prev, *next;    /* in p->streams while open */
};

enum server_state { SERVER_NONE, SERVER_RUNNING, SERVER_DRAINING };

struct gp_plugin {
	/* fixed at start */
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char kubelet_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char socket_name[NAME_MAX + 1];
	char *resource;
	struct pg_callbacks cb;
	pthread_t thread;
	atomic_bool stopping;
	atomic_uint registrations;
	atomic_int state_reg;           /* enum gp_plugin_state, written by the loop */

	/* guarded by lock */
	pthread_mutex_t lock;
	struct gp_plugin_device *devices;
	size_t n_devices;
	_Atomic uint64_t version;       /* written under lock, read by the loop */

	/* the loop's alone */
	grpc_completion_queue *cq;
	grpc_server *server;
	void *method[PG_METHODS];
	bool armed[PG_METHODS];         /* a request for the method is out */
	enum server_state state;
	bool shut_down;                 /* the server's shutdown has ended */
	struct pg_tag on_shutdown;
	unsigned live;                  /* dp_calls of the server */
	struct file_id sock_id;         /* our socket as we made it */
	struct dp_call *streams;
	grpc_slice list;                /* the packed list of list_version */
	uint64_t list_version;
	bool have_list;
	struct pg_tag on_registered;
	struct pg_client_call reg;
	grpc_channel *reg_channel;      /* non-NULL while Register is out */
	bool reg_cancelled, registered;
	struct file_id kubelet_id;      /* kubelet.sock we registered with */
	struct file_id tried_id;        /* kubelet.sock of the last try */
	int64_t next_register_ms, next_poll_ms;
};

static void server_close(struct gp_plugin *p);
static void server_maybe_destroy(struct gp_plugin *p);
static void call_arm(struct gp_plugin *p, enum pg_method m);

/* ---- the device list ---- */

static bool device_equal(const struct gp_plugin_device *a, const struct gp_plugin_device *b)
{
	return strcmp(a->id, b->id) == 0 && a->healthy == b->healthy && a->numa == b->numa;
}

static bool devices_equal(const struct gp_plugin_device *a, size_t n_a,
			  const struct gp_plugin_device *b, size_t n_b)
{
	if (n_a != n_b)
		return false;
	for (size_t i = 0; i < n_a; i++)
		if (!device_equal(&a[i], &b[i]))
			return false;
	return true;
}

static int devices_check(const struct gp_plugin_device *d, size_t n)
{
	if (n && !d)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!d[i].id[0] || !memchr(d[i].id, '\0', sizeof d[i].id) ||
		    d[i].numa < GP_PLUGIN_NUMA_NONE)
			return -EINVAL;
	return 0;
}

/* The list to send, packed again only when it has changed. */
static grpc_byte_buffer *list_message(struct gp_plugin *p, uint64_t *ret_version)
{
	grpc_byte_buffer *bb = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->have_list && p->list_version != p->version) {
		grpc_slice_unref(p->list);
		p->have_list = false;
	}
	if (p->have_list || pg_list_pack(p->devices, p->n_devices, &p->list) == 0) {
		p->have_list = true;
		p->list_version = p->version;
		*ret_version = p->list_version;
		bb = grpc_raw_byte_buffer_create(&p->list, 1);
	}
	pthread_mutex_unlock(&p->lock);
	return bb;
}

/* ---- served calls ---- */

static void call_release(struct gp_plugin *p, struct dp_call *c)
{
	if (--c->holds > 0)
		return;
	if (c->call)
		grpc_call_unref(c->call);
	grpc_metadata_array_destroy(&c->metadata);
	if (c->request)
		grpc_byte_buffer_destroy(c->request);
	if (c->reply)
		grpc_byte_buffer_destroy(c->reply);
	grpc_slice_unref(c->details);
	free(c);
	p->live--;
	server_maybe_destroy(p);
}

static void call_answered(struct gp_plugin *p, struct pg_tag *t, bool ok)
{
	(void)ok;
	call_release(p, container_of(t, struct dp_call, on_answered));
}

/* Answers a unary call: its reply, or its error as a status. */
static void call_answer(struct gp_plugin *p, struct dp_call *c)
{
	char err[512] = "";
	int rc = pg_serve(c->method, &p->cb, c->request, &c->reply, err, sizeof err);

	if (pg_answer(c->call, c->reply, rc, err, &c->details, &c->cancelled, &c->on_answered) < 0)
		call_release(p, c);
}

static void stream_unlist(struct gp_plugin *p, struct dp_call *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		p->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
	s->closed = true;
	call_release(p, s);
}

static void stream_sent(struct gp_plugin *p, struct pg_tag *t, bool ok)
{
	struct dp_call *s = container_of(t, struct dp_call, on_sent);

	grpc_byte_buffer_destroy(s->reply);
	s->reply = NULL;
	s->sending = false;
	if (!ok && !s->closed)
		grpc_call_cancel(s->call, NULL);
	call_release(p, s);
}

static void stream_closed(struct gp_plugin *p, struct pg_tag *t, bool ok)
{
	struct dp_call *s = container_of(t, struct dp_call, on_close);

	(void)ok;
	if (!s->closed)
		stream_unlist(p, s);
	call_release(p, s);
}

/* Sends the current list when the stream has not sent it yet (one send
 * at a time per call). */
static void stream_push(struct gp_plugin *p, struct dp_call *s)
{
	uint64_t version;

	if (s->sending || s->closed || s->sent_version == atomic_load(&p->version))
		return;
	s->reply = list_message(p, &version);
	if (!s->reply)
		return;                 /* out of memory: tried again next tick */
	s->holds++;
	s->sending = true;
	if (pg_stream_send(s->call, s->reply, !s->started, &s->on_sent) < 0) {
		s->sending = false;
		grpc_byte_buffer_destroy(s->reply);
		s->reply = NULL;
		s->holds--;
		return;
	}
	s->started = true;
	s->sent_version = version;
}

static void streams_push(struct gp_plugin *p)
{
	for (struct dp_call *s = p->streams; s; s = s->next)
		stream_push(p, s);
}

/* A ListAndWatch: listed (the request's hold moves to the list), waiting
 * for the kubelet's close, and sent the list at once. */
static void stream_open(struct gp_plugin *p, struct dp_call *s)
{
	char err[128];
	int rc = pg_serve(PG_LIST, &p->cb, s->request, NULL, err, sizeof err);

	if (rc < 0) {
		if (pg_answer(s->call, NULL, rc, err, &s->details, &s->cancelled,
			      &s->on_answered) < 0)
			call_release(p, s);
		return;
	}
	s->holds++;
	if (pg_stream_wait_close(s->call, &s->cancelled, &s->on_close) < 0) {
		grpc_call_cancel(s->call, NULL);
		s->holds = 1;
		call_release(p, s);
		return;
	}
	s->sent_version = UINT64_MAX;
	s->next = p->streams;
	if (p->streams)
		p->streams->prev = s;
	p->streams = s;
	stream_push(p, s);
}

static void call_arrived(struct gp_plugin *p, struct pg_tag *t, bool ok)
{
	struct dp_call *c = container_of(t, struct dp_call, on_new);

	p->armed[c->method] = false;
	if (!ok) {
		call_release(p, c);
		return;
	}
	if (p->state == SERVER_RUNNING)
		call_arm(p, c->method);
	if (c->method == PG_LIST)
		stream_open(p, c);
	else
		call_answer(p, c);
}

/* Asks the server for the next call of method m. */
static void call_arm(struct gp_plugin *p, enum pg_method m)
{
	struct dp_call *c = calloc(1, sizeof *c);

	if (!c)
		return;                 /* armed[m] stays false: tried again next tick */
	c->on_new.done = call_arrived;
	c->on_answered.done = call_answered;
	c->on_sent.done = stream_sent;
	c->on_close.done = stream_closed;
	c->method = m;
	c->holds = 1;
	c->details = grpc_empty_slice();
	grpc_metadata_array_init(&c->metadata);
	if (grpc_server_request_registered_call(p->server, p->method[m], &c->call, &c->deadline,
						&c->metadata, &c->request, p->cq, p->cq,
						&c->on_new) != GRPC_CALL_OK) {
		grpc_metadata_array_destroy(&c->metadata);
		free(c);
		return;
	}
	p->live++;
	p->armed[m] = true;
}

/* ---- the server on our socket ---- */

static void file_id_get(const char *path, struct file_id *ret)
{
	struct stat st;

	*ret = (struct file_id){ 0 };
	if (lstat(path, &st) < 0)
		return;
	*ret = (struct file_id){ .exists = true, .dev = st.st_dev, .ino = st.st_ino,
				 .ctime = st.st_ctim };
}

static bool file_id_same(const struct file_id *a, const struct file_id *b)
{
	return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* Removes a socket left at path (by us before, or a crashed run);
 * -EEXIST when something else is there. */
static int unlink_stale(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	unlink(path);
	return 0;
}

static grpc_server *server_new(struct gp_plugin *p)
{
	grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
	grpc_server *s = grpc_server_create(NULL, NULL);
	char addr[sizeof p->sock_path + 8];
	int port;

	for (int m = 0; m < PG_METHODS; m++)
		p->method[m] = grpc_server_register_method(s, pg_method_path(m), NULL,
							   GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
	grpc_server_register_completion_queue(s, p->cq, NULL);
	snprintf(addr, sizeof addr, "unix:%s", p->sock_path);
	port = grpc_server_add_http2_port(s, addr, creds);
	grpc_server_credentials_release(creds);
	if (port == 0) {
		grpc_server_destroy(s);
		return NULL;
	}
	return s;
}

static int server_open(struct gp_plugin *p)
{
	struct stat st;
	int rc;

	if (stat(p->dir, &st) < 0)
		return -errno;          /* no folder (yet): gRPC need not try */
	rc = unlink_stale(p->sock_path);
	if (rc < 0)
		return rc;
	p->server = server_new(p);
	if (!p->server)
		return -EADDRNOTAVAIL;
	grpc_server_start(p->server);
	file_id_get(p->sock_path, &p->sock_id);
	p->state = SERVER_RUNNING;
	p->shut_down = false;
	for (int m = 0; m < PG_METHODS; m++)
		call_arm(p, m);
	return 0;
}

static void server_shut_down(struct gp_plugin *p, struct pg_tag *t, bool ok)
{
	(void)t;
	(void)ok;
	p->shut_down = true;
	server_maybe_destroy(p);
}

/* Shuts the server down (its calls cancelled) and drops the registration;
 * server_maybe_destroy ends it. */
static void server_close(struct gp_plugin *p)
{
	p->state = SERVER_DRAINING;
	p->registered = false;
	atomic_store(&p->state_reg, GP_PLUGIN_REGISTERING);
	p->next_register_ms = 0;
	if (p->reg_channel) {
		p->reg_cancelled = true;
		grpc_call_cancel(p->reg.call, NULL);
	}
	grpc_server_shutdown_and_notify(p->server, p->cq, &p->on_shutdown);
	grpc_server_cancel_all_calls(p->server);
}

static void server_maybe_destroy(struct gp_plugin *p)
{
	if (p->state != SERVER_DRAINING || !p->shut_down || p->live > 0)
		return;
	grpc_server_destroy(p->server);
	p->server = NULL;
	p->state = SERVER_NONE;
	p->next_poll_ms = 0;            /* made again at the next tick */
}

/* ---- Register with the kubelet ---- */

static void register_done(struct gp_plugin *p, struct pg_tag *t, bool ok)
{
	bool success = ok && !p->reg_cancelled && p->reg.status == GRPC_STATUS_OK &&
		       p->state == SERVER_RUNNING;

	(void)t;
	pg_client_call_release(&p->reg);
	grpc_channel_destroy(p->reg_channel);
	p->reg_channel = NULL;
	if (success) {
		p->registered = true;
		atomic_store(&p->state_reg, GP_PLUGIN_REGISTERED);
		p->kubelet_id = p->tried_id;
		atomic_fetch_add(&p->registrations, 1);
	} else if (!p->reg_cancelled) {
		p->next_register_ms = pg_now_ms() + REGISTER_RETRY_MS;
	}
	p->reg_cancelled = false;
}

static int register_start(struct gp_plugin *p)
{
	grpc_channel_credentials *creds = grpc_insecure_credentials_create();
	char target[sizeof p->kubelet_path + 8];

	snprintf(target, sizeof target, "unix:%s", p->kubelet_path);
	p->reg_channel = grpc_channel_create(target, creds, NULL);
	grpc_channel_credentials_release(creds);
	if (pg_register_start(&p->reg, p->reg_channel, p->cq, p->socket_name, p->resource,
			      &p->on_registered) < 0) {
		pg_client_call_release(&p->reg);
		grpc_channel_destroy(p->reg_channel);
		p->reg_channel = NULL;
		return -EIO;
	}
	return 0;
}

/* Registers when not registered: at once when kubelet.sock is new, else
 * every REGISTER_RETRY_MS while it is there. */
static void register_maybe(struct gp_plugin *p, int64_t now)
{
	struct file_id k;

	if (p->registered || p->reg_channel || p->state != SERVER_RUNNING)
		return;
	file_id_get(p->kubelet_path, &k);
	atomic_store(&p->state_reg, k.exists ? GP_PLUGIN_REGISTERING : GP_PLUGIN_NO_KUBELET);
	if (!k.exists || (now < p->next_register_ms && file_id_same(&k, &p->tried_id)))
		return;
	p->tried_id = k;
	if (register_start(p) < 0)
		p->next_register_ms = now + REGISTER_RETRY_MS;
}

/* ---- the loop ---- */

/* Our socket gone or replaced, or kubelet.sock not the one we registered
 * with: the kubelet has restarted (it wipes the folder). */
static bool kubelet_restarted(struct gp_plugin *p)
{
	struct file_id id;

	file_id_get(p->sock_path, &id);
	if (!file_id_same(&id, &p->sock_id))
		return true;
	if (!p->registered)
		return false;
	file_id_get(p->kubelet_path, &id);
	return !file_id_same(&id, &p->kubelet_id);
}

static void loop_tick(struct gp_plugin *p)
{
	int64_t now;

	streams_push(p);
	now = pg_now_ms();
	if (now < p->next_poll_ms)
		return;
	p->next_poll_ms = now + POLL_MS;
	if (p->state == SERVER_NONE && server_open(p) < 0)
		return;                 /* the folder is not there yet: next poll */
	if (p->state != SERVER_RUNNING)
		return;
	for (int m = 0; m < PG_METHODS; m++)
		if (!p->armed[m])
			call_arm(p, m);
	if (kubelet_restarted(p))
		server_close(p);
	else
		register_maybe(p, now);
}

static void loop_dispatch(struct gp_plugin *p, grpc_event ev)
{
	if (ev.type == GRPC_OP_COMPLETE) {
		struct pg_tag *t = ev.tag;

		t->done(p, t, ev.success);
	}
}

/* Ends everything the loop holds: the server (its calls cancelled), the
 * Register call, the queue; then our socket file if it is still ours. */
static void loop_drain(struct gp_plugin *p)
{
	struct file_id id;

	if (p->state == SERVER_RUNNING)
		server_close(p);
	if (p->reg_channel && !p->reg_cancelled) {
		p->reg_cancelled = true;
		grpc_call_cancel(p->reg.call, NULL);
	}
	while (p->state != SERVER_NONE || p->reg_channel)
		loop_dispatch(p, grpc_completion_queue_next(p->cq, pg_deadline(TICK_MS), NULL));
	grpc_completion_queue_shutdown(p->cq);
	while (grpc_completion_queue_next(p->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type !=
	       GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(p->cq);
	p->cq = NULL;
	if (p->have_list)
		grpc_slice_unref(p->list);
	p->have_list = false;
	file_id_get(p->sock_path, &id);
	if (file_id_same(&id, &p->sock_id))
		unlink(p->sock_path);
}

static void *loop_run(void *arg)
{
	struct gp_plugin *p = arg;

	while (!atomic_load(&p->stopping)) {
		loop_dispatch(p, grpc_completion_queue_next(p->cq, pg_deadline(TICK_MS), NULL));
		loop_tick(p);
	}
	loop_drain(p);
	return NULL;
}

/* ---- the interface ---- */

/* A plain file name in the folder, and not the kubelet's. */
static bool socket_name_is_valid(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
	       strcmp(name, "kubelet.sock") && strlen(name) <= NAME_MAX;
}

static int paths_set(struct gp_plugin *p, const struct gp_plugin_options *o)
{
	const char *dir = o->dir ? o->dir : DEFAULT_DIR;
	struct stat st;
	int n;

	if (!socket_name_is_valid(o->socket_name))
		return -EINVAL;
	if (strlen(dir) >= sizeof p->dir)
		return -ENAMETOOLONG;
	strcpy(p->dir, dir);
	strcpy(p->socket_name, o->socket_name);
	n = snprintf(p->sock_path, sizeof p->sock_path, "%s/%s", dir, o->socket_name);
	if (n < 0 || (size_t)n >= sizeof p->sock_path)
		return -ENAMETOOLONG;
	n = snprintf(p->kubelet_path, sizeof p->kubelet_path, "%s/kubelet.sock", dir);
	if (n < 0 || (size_t)n >= sizeof p->kubelet_path)
		return -ENAMETOOLONG;
	if (stat(dir, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static struct gp_plugin *plugin_free(struct gp_plugin *p)
{
	pthread_mutex_destroy(&p->lock);
	free(p->devices);
	free(p->resource);
	free(p);
	grpc_shutdown();
	return NULL;
}

static int plugin_new(const struct gp_plugin_options *o, const struct gp_plugin_ops *ops,
		      void *ctx, struct gp_plugin **ret)
{
	struct gp_plugin *p = calloc(1, sizeof *p);
	int rc;

	if (!p)
		return -ENOMEM;
	grpc_init();
	pthread_mutex_init(&p->lock, NULL);
	p->cb.ops = *ops;
	p->cb.ctx = ctx;
	p->resource = strdup(o->resource);
	p->on_shutdown.done = server_shut_down;
	p->on_registered.done = register_done;
	rc = p->resource ? paths_set(p, o) : -ENOMEM;
	if (rc == 0)
		rc = gp_plugin_set_devices(p, o->devices, o->n_devices);
	if (rc == 0) {
		struct file_id k;

		file_id_get(p->kubelet_path, &k);
		atomic_store(&p->state_reg, k.exists ? GP_PLUGIN_REGISTERING : GP_PLUGIN_NO_KUBELET);
	}
	if (rc < 0) {
		plugin_free(p);
		return rc;
	}
	*ret = p;
	return 0;
}

int gp_plugin_start(const struct gp_plugin_options *o, const struct gp_plugin_ops *ops, void *ctx,
		    struct gp_plugin **ret)
{
	struct gp_plugin *p;
	int rc;

	if (!o || !ops || !ops->allocate || !ret || !o->resource || !*o->resource)
		return -EINVAL;
	rc = plugin_new(o, ops, ctx, &p);
	if (rc < 0)
		return rc;
	p->cq = grpc_completion_queue_create_for_next(NULL);
	rc = server_open(p);
	if (rc == 0)
		rc = -pthread_create(&p->thread, NULL, loop_run, p);
	if (rc < 0) {
		atomic_store(&p->stopping, true);
		loop_drain(p);
		plugin_free(p);
		return rc;
	}
	*ret = p;
	return 0;
}

int gp_plugin_set_devices(struct gp_plugin *p, const struct gp_plugin_device *devices, size_t n)
{
	struct gp_plugin_device *copy;
	int rc = devices_check(devices, n);

	if (!p || rc < 0)
		return -EINVAL;
	copy = malloc((n ? n : 1) * sizeof *copy);
	if (!copy)
		return -ENOMEM;
	if (n)
		memcpy(copy, devices, n * sizeof *copy);
	pthread_mutex_lock(&p->lock);
	if (p->devices && devices_equal(p->devices, p->n_devices, copy, n)) {
		free(copy);
	} else {
		free(p->devices);
		p->devices = copy;
		p->n_devices = n;
		atomic_fetch_add(&p->version, 1);
	}
	pthread_mutex_unlock(&p->lock);
	return 0;
}

unsigned gp_plugin_registrations(const struct gp_plugin *p)
{
	return p ? atomic_load(&p->registrations) : 0;
}

enum gp_plugin_state gp_plugin_state(const struct gp_plugin *p)
{
	return p ? (enum gp_plugin_state)atomic_load(&p->state_reg) : GP_PLUGIN_NO_KUBELET;
}

struct gp_plugin *gp_plugin_stop(struct gp_plugin *p)
{
	if (!p)
		return NULL;
	atomic_store(&p->stopping, true);
	pthread_join(p->thread, NULL);
	return plugin_free(p);
}
