/* bench-server.c — the client side of bench/bench-server.sh (make bench):
 * how fast `gpupool server` takes durable submissions, how fast SQLite
 * alone commits the same number of rows on the same disk (the baseline,
 * measured in the same run), and how long a submitted task waits until the
 * scheduling loop has it running. Each mode prints one JSON object on one
 * line; the script merges them.
 *
 *   bench-server submit --url URL [--socket PATH] --token T --count N --connections C
 *                       [--method M --body JSON]
 *       N POST /v1/tasks over C keep-alive connections (libcurl's multi
 *       interface, one thread), timed from the first request to the last
 *       answer; only 201s count. With --method and --body, N such requests
 *       to URL instead (a PATCH of a tenant's quota, to warm the store up);
 *       every 2xx counts.
 *   bench-server baseline --db PATH --count N
 *       N inserts, one row per transaction, WAL, synchronous=FULL.
 *   bench-server latency --url URL [--socket PATH] --token T --count N --rate R --db PATH
 *       N small tasks at R per second, then, from the server's database
 *       (read-only), each task's started - created in ms: the API shows
 *       whole seconds only. */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPLY_MAX 4096

/* A submission's body: a task the queue keeps (nothing runs it). */
static const char submit_body[] =
	"{\"name\":\"bench\",\"command\":\"true\",\"mem_mib\":1,\"compute_pct\":1}";

/* A task for the latency mode: small enough that the simulated devices
 * (a100-80g:2,t4-16g:2) hold many at once. */
static const char latency_body[] =
	"{\"name\":\"lat\",\"command\":\"sleep 0.2\",\"mem_mib\":1024,\"compute_pct\":5}";

struct options {
	const char *mode, *url, *socket, *token, *db, *method, *body;
	long count, connections;
	double rate;
};

/* One request in flight: its handle, its answer, when it left. */
struct conn {
	CURL *easy;
	char reply[REPLY_MAX];
	size_t len;
	int64_t sent_ns;
};

/* What a run of submissions saw. */
struct tally {
	bool any_2xx; /* every 2xx counts, not only 201 */
	long created, http_errors, transport_errors;
	long connects;
	double *latency_ms; /* one per answer */
	long answers;
	char first_error[256];
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of n sorted values (nearest rank); 0 when none. */
static double quantile(const double *v, long n, double q)
{
	long rank = (long)ceil(q * (double)n);

	if (n == 0)
		return 0;
	return v[rank < 1 ? 0 : rank - 1];
}

static double round1(double v)
{
	return round(v * 10) / 10;
}

/* ---- HTTP --------------------------------------------------------------- */

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
	struct conn *c = arg;
	size_t len = size * n, room = sizeof(c->reply) - 1 - c->len;

	memcpy(c->reply + c->len, data, len < room ? len : room);
	c->len += len < room ? len : room;
	c->reply[c->len] = '\0';
	return len;
}

/* Sets up a POST of body to o->url with the token, kept alive. */
static CURL *easy_new(const struct options *o, struct curl_slist *headers,
		      const char *body, struct conn *c)
{
	CURL *e = curl_easy_init();

	if (!e)
		return NULL;
	curl_easy_setopt(e, CURLOPT_URL, o->url);
	if (o->socket)
		curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, o->socket);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	if (o->method)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, o->method);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(e, CURLOPT_PRIVATE, c);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, 30L);
	return e;
}

static struct curl_slist *headers_new(const char *token)
{
	char auth[256];
	struct curl_slist *h = NULL;

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	h = curl_slist_append(h, auth);
	h = curl_slist_append(h, "Content-Type: application/json");
	/* No "Expect: 100-continue" round trip for a small body. */
	return curl_slist_append(h, "Expect:");
}

/* Counts one finished request. */
static void tally_add(struct tally *t, struct conn *c, CURLcode code)
{
	long status = 0, connects = 0;

	t->latency_ms[t->answers++] = (double)(mono_ns() - c->sent_ns) / 1e6;
	curl_easy_getinfo(c->easy, CURLINFO_NUM_CONNECTS, &connects);
	t->connects += connects;
	if (code != CURLE_OK) {
		t->transport_errors++;
		if (!t->first_error[0])
			snprintf(t->first_error, sizeof(t->first_error), "curl: %s",
				 curl_easy_strerror(code));
		return;
	}
	curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status == 201 || (t->any_2xx && status >= 200 && status < 300)) {
		t->created++;
		return;
	}
	t->http_errors++;
	if (!t->first_error[0])
		snprintf(t->first_error, sizeof(t->first_error), "HTTP %ld: %.200s",
			 status, c->reply);
}

static void conn_send(CURLM *m, struct conn *c)
{
	c->len = 0;
	c->reply[0] = '\0';
	c->sent_ns = mono_ns();
	curl_multi_add_handle(m, c->easy);
}

/* Runs o->count submissions over o->connections connections into *t;
 * returns the wall time in seconds. */
static double submit_run(const struct options *o, struct conn *conns, struct tally *t)
{
	CURLM *m = curl_multi_init();
	long sent = 0, done = 0;
	int64_t start = mono_ns();

	for (long i = 0; i < o->connections && sent < o->count; i++, sent++)
		conn_send(m, &conns[i]);
	while (done < o->count) {
		CURLMsg *msg;
		int running, left;

		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left))) {
			struct conn *c;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
					  (char **)&c);
			tally_add(t, c, msg->data.result);
			curl_multi_remove_handle(m, c->easy);
			done++;
			if (sent < o->count) {
				conn_send(m, c);
				sent++;
			}
		}
		if (done < o->count)
			curl_multi_poll(m, NULL, 0, 100, NULL);
	}
	curl_multi_cleanup(m);
	return (double)(mono_ns() - start) / 1e9;
}

static int mode_submit(const struct options *o)
{
	struct curl_slist *headers = headers_new(o->token);
	struct conn *conns = calloc((size_t)o->connections, sizeof(*conns));
	struct tally t = {.latency_ms = calloc((size_t)o->count, sizeof(double)),
			  .any_2xx = o->method != NULL};
	double seconds;

	if (!conns || !t.latency_ms)
		return 1;
	for (long i = 0; i < o->connections; i++)
		if (!(conns[i].easy = easy_new(o, headers, o->body ? o->body : submit_body,
					       &conns[i])))
			return 1;
	seconds = submit_run(o, conns, &t);
	qsort(t.latency_ms, (size_t)t.answers, sizeof(double), cmp_double);
	if (t.first_error[0])
		fprintf(stderr, "bench-server: first error: %s\n", t.first_error);
	printf("{\"mode\":\"submit\",\"transport\":\"%s\",\"submissions\":%ld,"
	       "\"connections\":%ld,\"created\":%ld,\"http_errors\":%ld,"
	       "\"transport_errors\":%ld,\"new_connections\":%ld,\"seconds\":%.3f,"
	       "\"per_sec\":%.1f,\"latency_p50_ms\":%.2f,\"latency_p99_ms\":%.2f}\n",
	       o->socket ? "unix" : "tcp", o->count, o->connections, t.created,
	       t.http_errors, t.transport_errors, t.connects, seconds,
	       round1((double)t.created / seconds),
	       quantile(t.latency_ms, t.answers, 0.5),
	       quantile(t.latency_ms, t.answers, 0.99));
	for (long i = 0; i < o->connections; i++)
		curl_easy_cleanup(conns[i].easy);
	curl_slist_free_all(headers);
	free(conns);
	free(t.latency_ms);
	return 0;
}

/* ---- the SQLite baseline ------------------------------------------------- */

static int db_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK)
		return 0;
	fprintf(stderr, "bench-server: %s: %s\n", sql, err ? err : "?");
	sqlite3_free(err);
	return -EIO;
}

/* Inserts one row in its own (autocommit) transaction, as durable as
 * the server's store makes a submission's row. */
static int baseline_insert(sqlite3 *db, sqlite3_stmt *st, long i)
{
	sqlite3_bind_int64(st, 1, wall_ms());
	sqlite3_bind_int64(st, 2, i);
	if (sqlite3_step(st) != SQLITE_DONE) {
		fprintf(stderr, "bench-server: insert: %s\n", sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_reset(st);
	return 0;
}

static int mode_baseline(const struct options *o)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long done = 0;
	int64_t start;
	double seconds;

	if (sqlite3_open(o->db, &db) != SQLITE_OK ||
	    db_exec(db, "PRAGMA journal_mode=WAL") ||
	    db_exec(db, "PRAGMA synchronous=FULL") ||
	    db_exec(db, "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, "
			"created INTEGER NOT NULL, n INTEGER NOT NULL, "
			"command TEXT NOT NULL DEFAULT 'true')") ||
	    sqlite3_prepare_v2(db, "INSERT INTO t (created, n) VALUES (?1, ?2)", -1, &st,
			       NULL) != SQLITE_OK) {
		fprintf(stderr, "bench-server: %s: %s\n", o->db, sqlite3_errmsg(db));
		sqlite3_close(db);
		return 1;
	}
	start = mono_ns();
	while (done < o->count && baseline_insert(db, st, done) == 0)
		done++;
	seconds = (double)(mono_ns() - start) / 1e9;
	sqlite3_finalize(st);
	sqlite3_close(db);
	printf("{\"mode\":\"baseline\",\"inserts\":%ld,\"seconds\":%.3f,"
	       "\"per_sec\":%.1f}\n",
	       done, seconds, round1((double)done / seconds));
	return done == o->count ? 0 : 1;
}

/* ---- submit to running --------------------------------------------------- */

/* Submits one task; its id, or 0 (said on stderr). */
static int64_t latency_submit(struct conn *c)
{
	long status = 0;
	CURLcode code;
	json_t *j;
	int64_t id = 0;

	c->len = 0;
	c->reply[0] = '\0';
	code = curl_easy_perform(c->easy);
	if (code == CURLE_OK)
		curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status != 201) {
		fprintf(stderr, "bench-server: submit: %s %.200s\n",
			code == CURLE_OK ? "" : curl_easy_strerror(code), c->reply);
		return 0;
	}
	j = json_loads(c->reply, 0, NULL);
	if (j && json_is_integer(json_object_get(j, "id")))
		id = json_integer_value(json_object_get(j, "id"));
	json_decref(j);
	return id;
}

/* One task as the store has it: unix ms, 0 for not yet. */
struct task_times {
	int64_t created, started, ended;
};

static int task_times_get(sqlite3_stmt *st, int64_t id, struct task_times *ret)
{
	int r;

	sqlite3_bind_int64(st, 1, id);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		*ret = (struct task_times){sqlite3_column_int64(st, 0),
					   sqlite3_column_int64(st, 1),
					   sqlite3_column_int64(st, 2)};
	sqlite3_reset(st);
	return r == SQLITE_ROW ? 0 : -ENOENT;
}

static bool task_is_there(const struct task_times *t, bool want_ended)
{
	return want_ended ? t->ended != 0 : t->started || t->ended;
}

/* Polls the store until every task has started or ended (want_ended:
 * until every one has ended), or timeout_ms passes. Fills times;
 * returns how many are not there yet. */
static long tasks_wait(sqlite3_stmt *st, const int64_t *ids, long n,
		       struct task_times *times, bool want_ended, int64_t timeout_ms)
{
	int64_t until = mono_ns() + timeout_ms * 1000000;
	const struct timespec pause = {0, 20 * 1000000};
	long missing;

	for (;;) {
		missing = 0;
		for (long i = 0; i < n; i++) {
			if (ids[i] == 0 || task_is_there(&times[i], want_ended))
				continue;
			if (task_times_get(st, ids[i], &times[i]) < 0 ||
			    !task_is_there(&times[i], want_ended))
				missing++;
		}
		if (missing == 0 || mono_ns() > until)
			return missing;
		nanosleep(&pause, NULL);
	}
}

/* Submits at o->rate per second, each on time (absolute deadlines). */
static long latency_submit_all(const struct options *o, struct conn *c, int64_t *ids)
{
	struct timespec next;
	long ok = 0;
	int64_t step_ns = (int64_t)(1e9 / o->rate);

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long i = 0; i < o->count; i++) {
		ids[i] = latency_submit(c);
		ok += ids[i] != 0;
		next.tv_nsec += step_ns;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return ok;
}

static void latency_report(const struct options *o, const struct task_times *times,
			   long n, long submitted)
{
	double *ms = calloc((size_t)n, sizeof(double));
	long ran = 0;

	for (long i = 0; ms && i < n; i++)
		if (times[i].started)
			ms[ran++] = (double)(times[i].started - times[i].created);
	if (ms)
		qsort(ms, (size_t)ran, sizeof(double), cmp_double);
	printf("{\"mode\":\"latency\",\"tasks\":%ld,\"rate_per_sec\":%.1f,"
	       "\"submitted\":%ld,\"running_count\":%ld,\"not_started\":%ld,"
	       "\"p50_ms\":%.0f,\"p99_ms\":%.0f,\"max_ms\":%.0f}\n",
	       o->count, o->rate, submitted, ran, submitted - ran,
	       ms ? quantile(ms, ran, 0.5) : 0, ms ? quantile(ms, ran, 0.99) : 0,
	       ms && ran ? ms[ran - 1] : 0);
	free(ms);
}

static int mode_latency(const struct options *o)
{
	struct curl_slist *headers = headers_new(o->token);
	struct conn c = {0};
	int64_t *ids = calloc((size_t)o->count, sizeof(*ids));
	struct task_times *times = calloc((size_t)o->count, sizeof(*times));
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long submitted;

	if (!ids || !times || !(c.easy = easy_new(o, headers, latency_body, &c)))
		return 1;
	if (sqlite3_open_v2(o->db, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "SELECT created, started, ended FROM tasks WHERE id = ?1",
			       -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "bench-server: %s: %s\n", o->db, sqlite3_errmsg(db));
		return 1;
	}
	sqlite3_busy_timeout(db, 1000);
	submitted = latency_submit_all(o, &c, ids);
	tasks_wait(st, ids, o->count, times, false, 20000);
	latency_report(o, times, o->count, submitted);
	/* Leave nothing running for the server's stop. */
	tasks_wait(st, ids, o->count, times, true, 10000);
	sqlite3_finalize(st);
	sqlite3_close(db);
	curl_easy_cleanup(c.easy);
	curl_slist_free_all(headers);
	free(ids);
	free(times);
	return submitted == o->count ? 0 : 1;
}

/* ---- options -------------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out, "usage: bench-server submit --url URL [--socket PATH] --token T "
		     "--count N "
		     "--connections C [--method M --body JSON]\n"
		     "       bench-server baseline --db PATH --count N\n"
		     "       bench-server latency --url URL [--socket PATH] --token T "
		     "--count N "
		     "--rate R --db PATH\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option all[] = {
		{"url", required_argument, NULL, 'u'},
		{"socket", required_argument, NULL, 's'},
		{"token", required_argument, NULL, 't'},
		{"db", required_argument, NULL, 'd'},
		{"count", required_argument, NULL, 'n'},
		{"connections", required_argument, NULL, 'c'},
		{"rate", required_argument, NULL, 'r'},
		{"method", required_argument, NULL, 'm'},
		{"body", required_argument, NULL, 'b'},
		{NULL, 0, NULL, 0},
	};
	int c;

	if (argc < 2)
		return -EINVAL;
	o->mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", all, NULL)) != -1) {
		switch (c) {
		case 'u': o->url = optarg; break;
		case 's': o->socket = optarg; break;
		case 't': o->token = optarg; break;
		case 'd': o->db = optarg; break;
		case 'n': o->count = strtol(optarg, NULL, 10); break;
		case 'c': o->connections = strtol(optarg, NULL, 10); break;
		case 'r': o->rate = strtod(optarg, NULL); break;
		case 'm': o->method = optarg; break;
		case 'b': o->body = optarg; break;
		default: return -EINVAL;
		}
	}
	if (o->count < 1)
		return -EINVAL;
	if (!strcmp(o->mode, "baseline"))
		return o->db ? 0 : -EINVAL;
	if (!o->url || !o->token)
		return -EINVAL;
	if (!strcmp(o->mode, "submit"))
		return o->connections >= 1 && !o->method == !o->body ? 0 : -EINVAL;
	if (!strcmp(o->mode, "latency"))
		return o->rate > 0 && o->db ? 0 : -EINVAL;
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	int status;

	if (parse_options(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(o.mode, "baseline"))
		return mode_baseline(&o);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	status = !strcmp(o.mode, "submit") ? mode_submit(&o) : mode_latency(&o);
	curl_global_cleanup();
	return status;
}
