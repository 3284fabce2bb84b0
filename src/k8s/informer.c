/* informer.c — list, then watch, for ever (client.h, gp_kube_informer_*):
 * a thread with a handle of its own that lists a path, hands the items to
 * on_sync, then watches from the list's resourceVersion and hands each
 * change to on_event, in the server's order.
 *
 * The watch's body is newline-delimited JSON, one event a line, arriving
 * in pieces of any size (client.c's stream calls on_bytes): a line is
 * handled when its newline arrives. BOOKMARK events only move the
 * resourceVersion on; an ERROR event ends the watch (we cut it at once)
 * with its code.
 *
 * What comes after a watch, in one place (next_step):
 *   ended by the server (timeoutSeconds)  → watch again from the last version
 *   cut in the middle (connection broke)  → the same, after a backoff
 *   410 Gone, as a status or ERROR event  → list again at once (on_sync)
 *   no connection, or 429                 → lost; watch again after a backoff
 *   any other error                       → lost; list again after a backoff
 * A failed list is retried after a backoff. The backoff is 100 ms doubling
 * to 10 s, each wait a random time between half of it and all of it, and
 * starts again at 100 ms after a list or a watch that got somewhere.
 * on_state reports each change between "lost" and "connected".
 *
 * Stopping: gp_kube_informer_stop sets `stop`, wakes the thread's request
 * (client.c polls every 100 ms and can be woken at once) or its backoff
 * wait (a condition variable), and joins it.
 *
 * Threads: the fields marked "thread" are the informer thread's alone;
 * `stop` and `synced` are atomics; `lock` guards only the backoff wait. */
#include "k8s/client-impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/rng.h"

#define VERSION_MAX 128
#define WATCH_SECONDS 300L       /* timeoutSeconds of each watch */
#define WATCH_IDLE_SECONDS 120L  /* nothing for this long: the connection is dead */
#define BACKOFF_FIRST_MS 100u
#define BACKOFF_MAX_MS 10000u
#define LINE_MAX_BYTES (64u << 20)

enum state { STATE_UNKNOWN, STATE_LOST, STATE_CONNECTED };

enum next { NEXT_WATCH, NEXT_WATCH_LATER, NEXT_LIST, NEXT_LIST_LATER };

/* What one watch saw. */
struct watch {
	char *line;                 /* bytes not yet handled (up to a newline) */
	size_t len, cap, scanned;   /* scanned: bytes known to hold no newline */
	unsigned events;            /* changes and bookmarks received */
	long error_code;            /* the ERROR event's code, 0 when none */
	char error[GP_KUBE_ERROR_MAX];
};

struct gp_kube_informer {
	const struct gp_kube_config *config;  /* borrowed */
	struct gp_kube *kube;                 /* thread (stop only wakes it) */
	char *path;
	struct gp_kube_informer_ops ops;
	void *ctx;
	pthread_t thread;
	bool started;                         /* thread is running */
	atomic_bool stop;
	atomic_bool synced;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	long watch_seconds, idle_seconds;
	char version[VERSION_MAX];            /* thread */
	enum state state;                     /* thread */
	unsigned backoff_ms;                  /* thread */
	struct gp_rng rng;                    /* thread */
	struct watch w;                       /* thread */
};

static bool stopping(struct gp_kube_informer *i)
{
	return atomic_load(&i->stop);
}

/* ---- state and backoff -------------------------------------------------------- */

static void set_state(struct gp_kube_informer *i, enum state s, const char *message)
{
	if (s == i->state)
		return;
	i->state = s;
	if (i->ops.on_state)
		i->ops.on_state(i->ctx, s == STATE_CONNECTED, message);
}

static void lost(struct gp_kube_informer *i, const char *what)
{
	char message[GP_KUBE_ERROR_MAX + 300];

	snprintf(message, sizeof(message), "%s %s: %s", what, i->path, gp_kube_error(i->kube));
	set_state(i, STATE_LOST, message);
}

/* Waits a random time in [backoff/2, backoff] (or until stopped), then
 * doubles the backoff up to its maximum. */
static void backoff(struct gp_kube_informer *i)
{
	unsigned ms = i->backoff_ms / 2 + (unsigned)gp_rng_below(&i->rng, i->backoff_ms / 2 + 1);
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&i->lock);
	while (!stopping(i) && pthread_cond_timedwait(&i->cond, &i->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&i->lock);
	i->backoff_ms = i->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : i->backoff_ms * 2;
}

/* ---- the list ---------------------------------------------------------------------- */

static int relist(struct gp_kube_informer *i)
{
	char message[VERSION_MAX + 200];
	json_t *items;
	int e = gp_kube_list(i->kube, i->path, &items, i->version, sizeof(i->version), NULL);

	if (e == -ECANCELED)
		return e;
	if (e < 0) {
		lost(i, "list");
		return e;
	}
	snprintf(message, sizeof(message), "listed %zu at resourceVersion %s", json_array_size(items),
		 i->version);
	set_state(i, STATE_CONNECTED, message);
	i->backoff_ms = BACKOFF_FIRST_MS;
	i->ops.on_sync(i->ctx, items);
	atomic_store(&i->synced, true);
	json_decref(items);
	return 0;
}

/* ---- the watch's lines ------------------------------------------------------------- */

static const struct {
	const char *name;
	enum gp_kube_event_type type;
} event_types[] = {
	{ "ADDED", GP_KUBE_ADDED },
	{ "MODIFIED", GP_KUBE_MODIFIED },
	{ "DELETED", GP_KUBE_DELETED },
};

/* The object's resourceVersion becomes the informer's; false when it has
 * none that fits. */
static bool take_version(struct gp_kube_informer *i, json_t *object)
{
	const char *rv = json_string_value(
		json_object_get(json_object_get(object, "metadata"), "resourceVersion"));

	if (!rv || !*rv || strlen(rv) >= sizeof(i->version))
		return false;
	memcpy(i->version, rv, strlen(rv) + 1);
	return true;
}

/* An ERROR event: its code and message kept; false, to end the watch
 * (the server ends it too), whatever comes after. */
static bool handle_error_event(struct gp_kube_informer *i, json_t *status)
{
	const char *message = json_string_value(json_object_get(status, "message"));

	i->w.error_code = (long)json_integer_value(json_object_get(status, "code"));
	if (i->w.error_code == 0)
		i->w.error_code = -1;
	snprintf(i->w.error, sizeof(i->w.error), "ERROR event %ld: %s", i->w.error_code,
		 message ? message : "(no message)");
	return false;
}

/* One event; false when it makes no sense (the watch is then ended). */
static bool handle_event(struct gp_kube_informer *i, json_t *event)
{
	const char *type = json_string_value(json_object_get(event, "type"));
	json_t *object = json_object_get(event, "object");

	if (!type || !json_is_object(object))
		return false;
	if (!strcmp(type, "ERROR"))
		return handle_error_event(i, object);
	if (!strcmp(type, "BOOKMARK")) {
		i->w.events++;
		return take_version(i, object);
	}
	for (size_t t = 0; t < sizeof(event_types) / sizeof(event_types[0]); t++) {
		if (!strcmp(type, event_types[t].name)) {
			if (!take_version(i, object))
				return false;
			i->w.events++;
			i->ops.on_event(i->ctx, event_types[t].type, object);
			return true;
		}
	}
	return false;
}

static bool handle_line(struct gp_kube_informer *i, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *event;
	bool ok;

	size_t blank = 0;

	while (blank < len && strchr(" \t\r", line[blank]))
		blank++;
	if (blank == len)
		return true;
	event = json_loadb(line, len, 0, &jerr);
	ok = event && handle_event(i, event);
	json_decref(event);
	if (!ok && !i->w.error_code)
		snprintf(i->w.error, sizeof(i->w.error), "a watch event that makes no sense: %.*s",
			 (int)(len < 200 ? len : 200), line);
	return ok;
}

static bool line_add(struct watch *w, const char *data, size_t len)
{
	size_t cap = w->cap ? w->cap : 16384;
	char *p;

	if (w->len + len > LINE_MAX_BYTES)
		return false;
	while (cap < w->len + len)
		cap *= 2;
	if (cap != w->cap) {
		p = realloc(w->line, cap);
		if (!p)
			return false;
		w->line = p;
		w->cap = cap;
	}
	memcpy(w->line + w->len, data, len);
	w->len += len;
	return true;
}

/* The stream's bytes (client-impl.h's sink): every complete line handled,
 * the rest kept for the next piece. */
static bool on_bytes(void *ctx, const char *data, size_t len)
{
	struct gp_kube_informer *i = ctx;
	struct watch *w = &i->w;
	size_t start = 0;
	char *nl;

	if (!data) {
		set_state(i, STATE_CONNECTED, "watching");
		return true;
	}
	if (!line_add(w, data, len)) {
		snprintf(w->error, sizeof(w->error), "a watch event larger than %u bytes",
			 LINE_MAX_BYTES);
		return false;
	}
	while ((nl = memchr(w->line + w->scanned, '\n', w->len - w->scanned))) {
		size_t end = (size_t)(nl - w->line);

		if (!handle_line(i, w->line + start, end - start))
			return false;
		start = w->scanned = end + 1;
	}
	memmove(w->line, w->line + start, w->len - start);
	w->len -= start;
	w->scanned = w->len;
	return true;
}

/* ---- one watch and what follows it ---------------------------------------------- */

/* What to do after a watch that answered status and returned e. */
static enum next next_step(struct gp_kube_informer *i, int e, long status)
{
	if (status == 410 || i->w.error_code == 410)
		return NEXT_LIST;
	if (e == 0 && !i->w.error_code)
		return NEXT_WATCH;
	if (i->w.error_code || e == -EBADMSG) {
		set_state(i, STATE_LOST, i->w.error[0] ? i->w.error : gp_kube_error(i->kube));
		return NEXT_LIST_LATER;
	}
	if (status == 200)
		return NEXT_WATCH_LATER;
	if (status == 0 || status == 429) {
		lost(i, "watch");
		return NEXT_WATCH_LATER;
	}
	lost(i, "watch");
	return NEXT_LIST_LATER;
}

static enum next watch(struct gp_kube_informer *i)
{
	long status = 0;
	char *path;
	int e;

	if (asprintf(&path, "%s%cwatch=true&allowWatchBookmarks=true&timeoutSeconds=%ld"
		     "&resourceVersion=%s", i->path, strchr(i->path, '?') ? '&' : '?',
		     i->watch_seconds, i->version) < 0)
		return NEXT_WATCH_LATER;
	i->w.len = i->w.scanned = 0;
	i->w.events = 0;
	i->w.error_code = 0;
	i->w.error[0] = '\0';
	e = gp_kube_stream(i->kube, path, i->watch_seconds, i->idle_seconds, on_bytes, i, &status);
	free(path);
	if (e == -ECANCELED)
		return NEXT_WATCH;
	if (i->w.events > 0 || (e == 0 && status == 200))
		i->backoff_ms = BACKOFF_FIRST_MS;
	return next_step(i, e, status);
}

static void *run(void *arg)
{
	struct gp_kube_informer *i = arg;
	bool need_list = true;

	while (!stopping(i)) {
		if (need_list && relist(i) < 0) {
			backoff(i);
			continue;
		}
		need_list = false;
		switch (watch(i)) {
		case NEXT_WATCH:
			break;
		case NEXT_WATCH_LATER:
			backoff(i);
			break;
		case NEXT_LIST:
			need_list = true;
			break;
		case NEXT_LIST_LATER:
			need_list = true;
			backoff(i);
			break;
		}
	}
	return NULL;
}

/* ---- the API ------------------------------------------------------------------------ */

/* A whole number of seconds from the environment (for tests), else def. */
static long env_seconds(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	return *end || n < 1 || n > 86400 ? def : n;
}

static int informer_init(struct gp_kube_informer *i, const char *path)
{
	struct timespec now;
	int e;

	clock_gettime(CLOCK_REALTIME, &now);
	gp_rng_init(&i->rng, (uint64_t)now.tv_nsec ^ (uint64_t)(uintptr_t)i);
	i->backoff_ms = BACKOFF_FIRST_MS;
	i->watch_seconds = env_seconds("GPUPOOL_KUBE_WATCH_SECONDS", WATCH_SECONDS);
	i->idle_seconds = env_seconds("GPUPOOL_KUBE_WATCH_IDLE_SECONDS", WATCH_IDLE_SECONDS);
	i->path = strdup(path);
	if (!i->path)
		return -ENOMEM;
	if ((e = gp_monotonic_cond_init(&i->cond)) < 0)
		return e;
	pthread_mutex_init(&i->lock, NULL);
	return 0;
}

int gp_kube_informer_start(const struct gp_kube_config *c, const char *path,
			   const struct gp_kube_informer_ops *ops, void *ctx,
			   struct gp_kube_informer **ret)
{
	struct gp_kube_informer *i;
	int e;

	if (!path || path[0] != '/' || !ops || !ops->on_sync || !ops->on_event)
		return -EINVAL;
	i = calloc(1, sizeof(*i));
	if (!i)
		return -ENOMEM;
	i->config = c;
	i->ops = *ops;
	i->ctx = ctx;
	if ((e = informer_init(i, path)) < 0) {
		free(i->path);
		free(i);
		return e;
	}
	e = gp_kube_new(c, &i->kube);
	if (e == 0) {
		gp_kube_stop_on(i->kube, &i->stop);
		e = -pthread_create(&i->thread, NULL, run, i);
	}
	if (e < 0) {
		gp_kube_informer_stop(i);
		return e;
	}
	i->started = true;
	*ret = i;
	return 0;
}

struct gp_kube_informer *gp_kube_informer_stop(struct gp_kube_informer *i)
{
	if (!i)
		return NULL;
	pthread_mutex_lock(&i->lock);
	atomic_store(&i->stop, true);
	pthread_cond_broadcast(&i->cond);
	pthread_mutex_unlock(&i->lock);
	if (i->started) {
		gp_kube_wake(i->kube);
		pthread_join(i->thread, NULL);
	}
	gp_kube_free(i->kube);
	pthread_cond_destroy(&i->cond);
	pthread_mutex_destroy(&i->lock);
	free(i->w.line);
	free(i->path);
	free(i);
	return NULL;
}

bool gp_kube_informer_synced(const struct gp_kube_informer *i)
{
	return atomic_load(&i->synced);
}
