/* test-kube-client.c — the Kubernetes API client (src/k8s/client.h)
 * against the API server double (tests/k8s/apiserver-double.js), a real
 * HTTP server in a Node process that this program starts, kills and
 * starts again on the same port itself (cmocka; no shell driver):
 *
 *   test-kube-client DOUBLE.js [NODE]
 *
 * Configuration: an explicit URL with a token file (read again before
 * every request), a wrong token (-EACCES, the Status message kept);
 * kubeconfig files written here (current-context, token, tokenFile,
 * insecure, certificate data decoded from base64, $KUBECONFIG, bad ones
 * refused with their reason); in-cluster from the environment.
 * Requests: create, get, a list of more than 500 (continue followed),
 * merge patches (set, delete with null, a stale resourceVersion), bind
 * (twice, a missing pod, a wrong uid), events, injected failures, a
 * closed port. Informers: the first sync; ADDED, MODIFIED, DELETED in
 * order; a selector's watch; bookmarks that move the version on
 * silently; a relist after compaction while the watch was cut (with the
 * changes made meanwhile); the double killed and started again; a
 * stopped (SIGSTOP) server noticed by the idle limit; stop within a
 * second while watching, while backing off and while a request hangs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "k8s/client-impl.h"
#include "k8s/client.h"

static const char *double_script;
static const char *node_program = "node";
static char tmpdir[64];

/* ---- the double ---------------------------------------------------------------------- */

/* The running double (one at a time; the teardown kills it). */
static struct {
	pid_t pid;
	int port;
	char url[64];
} dbl;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The first line of fd, within 20 s. */
static void read_line(int fd, char *line, size_t len)
{
	size_t n = 0;
	double until = now_s() + 20;

	while (n + 1 < len && now_s() < until) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		if (poll(&p, 1, 200) <= 0)
			continue;
		got = read(fd, line + n, 1);
		if (got <= 0 || line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
}

/* Starts the double on port (0: any) with extra arguments. */
static void double_start(int port, const char *const *extra)
{
	const char *argv[16] = { node_program, double_script, "--port", NULL };
	char port_text[16], line[128];
	int fds[2], n = 3;

	snprintf(port_text, sizeof(port_text), "%d", port);
	argv[n++] = port_text;
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	pid_t parent = getpid();

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	dbl.pid = fork();
	assert_true(dbl.pid >= 0);
	if (dbl.pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		dup2(fds[1], 1);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	read_line(fds[0], line, sizeof(line));
	close(fds[0]);
	if (sscanf(line, "{\"port\":%d}", &dbl.port) != 1)
		fail_msg("%s %s did not print {\"port\":N} within 20 s (it printed \"%s\")",
			 node_program, double_script, line);
	snprintf(dbl.url, sizeof(dbl.url), "http://127.0.0.1:%d", dbl.port);
}

static void double_kill(void)
{
	if (dbl.pid <= 0)
		return;
	kill(dbl.pid, SIGCONT);
	kill(dbl.pid, SIGKILL);
	waitpid(dbl.pid, NULL, 0);
	dbl.pid = 0;
}

/* openssl s_server, for the TLS test (the teardown kills it too). */
static pid_t tls_pid;

static void tls_kill(void)
{
	if (tls_pid > 0) {
		kill(tls_pid, SIGKILL);
		waitpid(tls_pid, NULL, 0);
	}
	tls_pid = 0;
}

static int teardown(void **state)
{
	(void)state;
	double_kill();
	tls_kill();
	unsetenv("GPUPOOL_KUBE_WATCH_SECONDS");
	unsetenv("GPUPOOL_KUBE_WATCH_IDLE_SECONDS");
	return 0;
}

/* ---- small helpers ------------------------------------------------------------------ */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* tmpdir/name, written with text; the path in path. */
static void temp_file(char *path, size_t len, const char *name, const char *text)
{
	snprintf(path, len, "%s/%s", tmpdir, name);
	write_file(path, text);
}

/* A configuration for the running double, with an optional token file. */
static struct gp_kube_config *config_for(const char *token_file)
{
	struct gp_kube_options o = { .api_url = dbl.url, .token_file = token_file };
	struct gp_kube_config *c = NULL;
	char err[512];

	assert_int_equal(gp_kube_config_load(&o, &c, err, sizeof(err)), 0);
	return c;
}

static struct gp_kube *kube_new(const struct gp_kube_config *c)
{
	struct gp_kube *k = NULL;

	assert_int_equal(gp_kube_new(c, &k), 0);
	return k;
}

/* A test control of the double (POST /_double/...). */
static void control(struct gp_kube *k, const char *path, json_t *body)
{
	json_t *b = body ? body : json_object();

	assert_int_equal(gp_kube_post(k, path, b, NULL, NULL), 0);
	json_decref(b);
}

static void fail_next(struct gp_kube *k, const char *method, const char *prefix, int status,
		      int count)
{
	control(k, "/_double/fail", json_pack("{s:s, s:s, s:i, s:i}", "method", method,
					      "pathPrefix", prefix, "status", status, "count", count));
}

/* DELETE path (client.h has no call for it: gpupool deletes nothing),
 * with libcurl directly; it must answer 200. */
static void double_delete(const char *path)
{
	char url[512];
	CURL *e = curl_easy_init();
	FILE *sink = fopen("/dev/null", "w");
	long status = 0;

	assert_non_null(e);
	assert_non_null(sink);
	snprintf(url, sizeof(url), "%s%s", dbl.url, path);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
	curl_easy_setopt(e, CURLOPT_WRITEDATA, sink);
	assert_int_equal(curl_easy_perform(e), CURLE_OK);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	assert_int_equal(status, 200);
	curl_easy_cleanup(e);
	fclose(sink);
}

static void create_node(struct gp_kube *k, const char *name)
{
	json_t *node = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node",
				 "metadata", "name", name);

	assert_int_equal(gp_kube_post(k, "/api/v1/nodes", node, NULL, NULL), 0);
	json_decref(node);
}

static json_t *pod_object(const char *name)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind", "Pod",
			 "metadata", "name", name, "spec", "containers", "name", "main", "image",
			 "busybox");
}

static void create_pod(struct gp_kube *k, const char *ns, const char *name, json_t **ret)
{
	char path[256];
	json_t *pod = pod_object(name);

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	assert_int_equal(gp_kube_post(k, path, pod, ret, NULL), 0);
	json_decref(pod);
}

static const char *meta_string(json_t *obj, const char *field)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

/* The requests the double saw from index `from` on whose path starts
 * with prefix, counted; the last one's path in last. */
static int requests_seen(struct gp_kube *k, size_t from, const char *method, const char *prefix,
			 char *last, size_t last_len)
{
	json_t *all = NULL, *r;
	size_t i;
	int n = 0;

	assert_int_equal(gp_kube_get(k, "/_double/requests", &all, NULL), 0);
	json_array_foreach(all, i, r) {
		const char *m = json_string_value(json_object_get(r, "method"));
		const char *p = json_string_value(json_object_get(r, "path"));

		if (i >= from && !strcmp(m, method) && !strncmp(p, prefix, strlen(prefix))) {
			n++;
			if (last)
				snprintf(last, last_len, "%s", p);
		}
	}
	json_decref(all);
	return n;
}

static size_t requests_count(struct gp_kube *k)
{
	json_t *all = NULL;
	size_t n;

	assert_int_equal(gp_kube_get(k, "/_double/requests", &all, NULL), 0);
	n = json_array_size(all);
	json_decref(all);
	return n;
}

/* ---- configuration -------------------------------------------------------------------- */

static void test_config_url(void **state)
{
	const char *const args[] = { "--token", "s3cret", NULL };
	struct gp_kube_options o = { .api_url = "ftp://example" };
	struct gp_kube_config *c = NULL;
	char good[256], wrong[256], err[512];
	struct gp_kube *k;
	json_t *list = NULL;
	long status = 0;

	(void)state;
	double_start(0, args);
	temp_file(good, sizeof(good), "token", "s3cret\n");
	temp_file(wrong, sizeof(wrong), "wrong-token", "guess");
	assert_int_equal(gp_kube_config_load(&o, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not an http(s) URL"));
	o = (struct gp_kube_options){ .api_url = dbl.url, .token_file = "/nonexistent/token" };
	assert_int_equal(gp_kube_config_load(&o, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/token"));

	c = config_for(good);
	assert_string_equal(gp_kube_config_server(c), dbl.url);
	k = kube_new(c);
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes", &list, &status), 0);
	assert_int_equal(status, 200);
	assert_string_equal(json_string_value(json_object_get(list, "kind")), "NodeList");
	assert_string_equal(gp_kube_error(k), "");
	json_decref(list);

	/* The token is read again for each request. */
	write_file(good, "changed");
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes", &list, &status), -EACCES);
	assert_int_equal(status, 401);
	assert_string_equal(gp_kube_error(k), "Unauthorized");
	write_file(good, "s3cret");
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes", &list, NULL), 0);
	json_decref(list);
	gp_kube_free(k);
	gp_kube_config_free(c);

	c = config_for(wrong);
	k = kube_new(c);
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes", &list, &status), -EACCES);
	assert_int_equal(status, 401);
	assert_string_equal(gp_kube_error(k), "Unauthorized");
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_config_none(void **state)
{
	struct gp_kube_options o = { 0 };
	struct gp_kube_config *c = NULL;
	char err[512];

	(void)state;
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	assert_int_equal(gp_kube_config_load(&o, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "--kubeconfig"));
	assert_int_equal(gp_kube_config_load(NULL, &c, err, sizeof(err)), -ENOENT);
	assert_null(c);
}

#define KUBECONFIG_HEAD                                                                  \
	"apiVersion: v1\n"                                                               \
	"kind: Config\n"                                                                 \
	"preferences: {}\n"

/* A kubeconfig in tmpdir/name whose current context "b" names cluster
 * "two" at server with `cluster_extra` and user "bob" with `user_extra`
 * (context "a" and its cluster and user are decoys). */
static void kubeconfig_write(char *path, size_t len, const char *name, const char *server,
			     const char *cluster_extra, const char *user_extra)
{
	char text[8192];

	snprintf(text, sizeof(text),
		 KUBECONFIG_HEAD
		 "clusters:\n"
		 "- name: one\n"
		 "  cluster:\n"
		 "    server: https://decoy.invalid:6443\n"
		 "- name: two\n"
		 "  cluster:\n"
		 "    server: %s\n%s"
		 "contexts:\n"
		 "- name: a\n"
		 "  context: {cluster: one, user: alice}\n"
		 "- name: b\n"
		 "  context:\n"
		 "    cluster: two\n"
		 "    user: bob\n"
		 "    namespace: gpu\n"
		 "current-context: b\n"
		 "users:\n"
		 "- name: alice\n"
		 "  user: {token: not-this-one}\n"
		 "- name: bob\n"
		 "  user:\n%s",
		 server, cluster_extra, user_extra);
	temp_file(path, len, name, text);
}

static int kubeconfig_load(const char *path, struct gp_kube_config **ret, char *err, size_t len)
{
	struct gp_kube_options o = { .kubeconfig = path };

	*ret = NULL;
	return gp_kube_config_load(&o, ret, err, len);
}

static void test_kubeconfig(void **state)
{
	const char *const args[] = { "--token", "kc-token", NULL };
	struct gp_kube_config *c = NULL;
	char path[256], err[512];
	struct gp_kube *k;
	json_t *list = NULL;

	(void)state;
	double_start(0, args);
	kubeconfig_write(path, sizeof(path), "kc1", dbl.url, "    insecure-skip-tls-verify: true\n",
			 "    token: kc-token\n");
	assert_int_equal(kubeconfig_load(path, &c, err, sizeof(err)), 0);
	assert_string_equal(gp_kube_config_server(c), dbl.url);
	assert_true(c->insecure);
	assert_string_equal(c->token, "kc-token");
	k = kube_new(c);
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes", &list, NULL), 0);
	json_decref(list);
	gp_kube_free(k);
	gp_kube_config_free(c);

	/* tokenFile relative to the kubeconfig's folder; found through
	 * $KUBECONFIG's list, whose first file does not exist. */
	write_file(strcat(strcpy(err, tmpdir), "/kc-token"), "kc-token\n");
	kubeconfig_write(path, sizeof(path), "kc2", dbl.url, "", "    tokenFile: kc-token\n");
	snprintf(err, sizeof(err), "%s/missing:%s", tmpdir, path);
	setenv("KUBECONFIG", err, 1);
	assert_int_equal(gp_kube_config_load(NULL, &c, err, sizeof(err)), 0);
	unsetenv("KUBECONFIG");
	assert_false(c->insecure);
	assert_non_null(c->token_file);
	assert_non_null(strstr(c->token_file, tmpdir));
	k = kube_new(c);
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes", &list, NULL), 0);
	json_decref(list);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_kubeconfig_certificates(void **state)
{
	/* "-----BEGIN CERTIFICATE-----\nMIIB\n" and "key\n", in base64 (the
	 * first wrapped over two lines, as some tools write it). */
	const char *cluster = "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n"
			      "      Ck1JSUIK\n";
	const char *user = "    client-certificate-data: Y2VydAo=\n"
			   "    client-key-data: a2V5Cg==\n";
	struct gp_kube_config *c = NULL;
	char path[256], err[512];

	(void)state;
	kubeconfig_write(path, sizeof(path), "kc-certs", "https://10.0.0.1:6443", cluster, user);
	assert_int_equal(kubeconfig_load(path, &c, err, sizeof(err)), 0);
	assert_string_equal(gp_kube_config_server(c), "https://10.0.0.1:6443");
	assert_int_equal(c->ca.len, strlen("-----BEGIN CERTIFICATE-----\nMIIB\n"));
	assert_memory_equal(c->ca.data, "-----BEGIN CERTIFICATE-----\nMIIB\n", c->ca.len);
	assert_int_equal(c->cert.len, 5);
	assert_memory_equal(c->cert.data, "cert\n", 5);
	assert_int_equal(c->key.len, 4);
	assert_memory_equal(c->key.data, "key\n", 4);
	assert_null(c->token);
	gp_kube_config_free(c);

	/* Files, relative to the kubeconfig. */
	temp_file(path, sizeof(path), "ca.crt", "ca");
	temp_file(path, sizeof(path), "client.crt", "crt");
	temp_file(path, sizeof(path), "client.key", "key");
	kubeconfig_write(path, sizeof(path), "kc-files", "https://10.0.0.1:6443",
			 "    certificate-authority: ca.crt\n",
			 "    client-certificate: client.crt\n    client-key: client.key\n");
	assert_int_equal(kubeconfig_load(path, &c, err, sizeof(err)), 0);
	assert_non_null(strstr(c->ca_file, "/ca.crt"));
	assert_true(c->ca_file[0] == '/');
	assert_non_null(strstr(c->key_file, "/client.key"));
	gp_kube_config_free(c);
}

/* A kubeconfig that must be refused with -EINVAL (or want) and a reason
 * containing `reason`. */
static void refused(const char *text, int want, const char *reason)
{
	struct gp_kube_config *c = NULL;
	char path[256], err[512] = "";

	temp_file(path, sizeof(path), "bad-kubeconfig", text);
	assert_int_equal(kubeconfig_load(path, &c, err, sizeof(err)), want);
	assert_null(c);
	if (!strstr(err, reason) || !strstr(err, path))
		fail_msg("for\n%s\nthe reason \"%s\" lacks \"%s\" or the path", text, err, reason);
	assert_null(strchr(err, '\n'));
}

/* A kubeconfig of one cluster (server, its extra lines) and user (its
 * lines), refused with want and a reason containing `reason`. */
static void written_refused(const char *server, const char *cluster_lines, const char *user_lines,
			    int want, const char *reason)
{
	struct gp_kube_config *c = NULL;
	char path[256], err[512] = "";

	kubeconfig_write(path, sizeof(path), "src", server, cluster_lines, user_lines);
	assert_int_equal(kubeconfig_load(path, &c, err, sizeof(err)), want);
	assert_null(c);
	if (!strstr(err, reason))
		fail_msg("the reason \"%s\" lacks \"%s\"", err, reason);
}

static void test_kubeconfig_refused(void **state)
{
	struct gp_kube_config *c = NULL;
	char err[512];

	(void)state;
	refused("clusters: [\n", -EINVAL, "not valid YAML");
	refused("- a\n- b\n", -EINVAL, "not a kubeconfig");
	refused("", -EINVAL, "empty");
	refused(KUBECONFIG_HEAD "contexts: []\n", -EINVAL, "no current-context");
	refused(KUBECONFIG_HEAD "current-context: x\ncontexts:\n- name: y\n  context: {cluster: c}\n",
		-EINVAL, "current-context \"x\" is not among its contexts");
	refused(KUBECONFIG_HEAD "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n",
		-EINVAL, "cluster \"c\" is not among its clusters");
	written_refused("10.0.0.1:6443", "", "    token: t\n", -EINVAL, "is not an http(s) URL");
	written_refused("https://h", "    certificate-authority-data: not*base64!\n", "    token: t\n",
			-EINVAL, "certificate-authority-data is not valid base64");
	written_refused("https://h", "    insecure-skip-tls-verify: maybe\n", "    token: t\n", -EINVAL,
			"insecure-skip-tls-verify \"maybe\"");
	written_refused("https://h", "", "    exec:\n      command: aws\n", -EINVAL,
			"authenticates with exec");
	written_refused("https://h", "", "    client-certificate-data: Y2VydAo=\n", -EINVAL,
			"needs its key");
	written_refused("https://h", "    certificate-authority: nope.crt\n", "    token: t\n", -ENOENT,
			"nope.crt");
	assert_int_equal(kubeconfig_load("/nonexistent/kubeconfig", &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/kubeconfig"));
	setenv("KUBECONFIG", "/nonexistent/a:/nonexistent/b", 1);
	assert_int_equal(gp_kube_config_load(NULL, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "KUBECONFIG"));
	unsetenv("KUBECONFIG");
}

static void test_in_cluster(void **state)
{
	struct gp_kube_config *c = NULL;
	char path[256], err[512];

	(void)state;
	unsetenv("KUBECONFIG");
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	setenv("GPUPOOL_KUBE_SERVICEACCOUNT_DIR", tmpdir, 1);
	snprintf(path, sizeof(path), "%s/token", tmpdir);
	unlink(path);
	assert_int_equal(gp_kube_config_load(NULL, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "service account token"));
	temp_file(path, sizeof(path), "token", "sa-token\n");
	temp_file(path, sizeof(path), "ca.crt", "ca");
	assert_int_equal(gp_kube_config_load(NULL, &c, err, sizeof(err)), 0);
	assert_string_equal(gp_kube_config_server(c), "https://10.96.0.1:443");
	assert_non_null(strstr(c->token_file, "/token"));
	assert_non_null(strstr(c->ca_file, "/ca.crt"));
	gp_kube_config_free(c);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	assert_int_equal(gp_kube_config_load(NULL, &c, err, sizeof(err)), 0);
	assert_string_equal(gp_kube_config_server(c), "https://[fd00::1]:443");
	gp_kube_config_free(c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("GPUPOOL_KUBE_SERVICEACCOUNT_DIR");
}

/* ---- TLS, against openssl s_server ------------------------------------------------ */

/* A CA, a server certificate for 127.0.0.1 and a client certificate it
 * signed, and another CA, in tmpdir (EC keys: quick to make). */
static bool make_certificates(void)
{
	char cmd[2048];
	const char *req = "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && (printf 'subjectAltName=IP:127.0.0.1\\n' >san.ext && "
		 "%s -x509 -days 2 -subj /CN=test-ca -keyout ca.key -out ca.pem && "
		 "%s -x509 -days 2 -subj /CN=other-ca -keyout other.key -out other.pem && "
		 "%s -subj /CN=127.0.0.1 -keyout server.key -out server.csr && "
		 "openssl x509 -req -days 2 -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
		 "-extfile san.ext -out server.pem && "
		 "%s -subj /CN=gpupool -keyout client.key -out client.csr && "
		 "openssl x509 -req -days 2 -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
		 "-out client.pem) >openssl.log 2>&1",
		 tmpdir, req, req, req, req);
	return system(cmd) == 0;
}

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static bool port_open(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool open_ = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;

	if (fd >= 0)
		close(fd);
	return open_;
}

/* openssl s_server on a free port, demanding a client certificate from
 * the CA; -www answers a GET with an HTML page (not JSON). */
static int tls_server_start(void)
{
	char accept_[32], cert[256], key[256], ca[256];
	pid_t parent = getpid();
	int port = free_port();
	double until = now_s() + 20;

	snprintf(accept_, sizeof(accept_), "127.0.0.1:%d", port);
	snprintf(cert, sizeof(cert), "%s/server.pem", tmpdir);
	snprintf(key, sizeof(key), "%s/server.key", tmpdir);
	snprintf(ca, sizeof(ca), "%s/ca.pem", tmpdir);
	tls_pid = fork();
	assert_true(tls_pid >= 0);
	if (tls_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execlp("openssl", "openssl", "s_server", "-quiet", "-accept", accept_, "-cert", cert,
		       "-key", key, "-CAfile", ca, "-Verify", "1", "-www", (char *)NULL);
		_exit(127);
	}
	while (!port_open(port) && now_s() < until)
		usleep(50000);
	assert_true(port_open(port));
	return port;
}

/* A file's bytes in base64 (one line), for a kubeconfig's *-data. */
static void base64_file(const char *name, char *out, size_t len)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char in[8192];
	char path[256];
	size_t n, o = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(in, 1, sizeof(in), f);
	fclose(f);
	assert_true(n * 4 / 3 + 8 < len);
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		out[o++] = abc[v >> 18 & 63];
		out[o++] = abc[v >> 12 & 63];
		out[o++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? abc[v & 63] : '=';
	}
	out[o] = '\0';
}

/* GET / through a kubeconfig with cluster and user lines; the errno. */
static int tls_get(int port, const char *cluster, const char *user, char *err, size_t err_len)
{
	struct gp_kube_config *c = NULL;
	struct gp_kube *k;
	char path[256], server[64];
	json_t *got = NULL;
	int e;

	snprintf(server, sizeof(server), "https://127.0.0.1:%d", port);
	kubeconfig_write(path, sizeof(path), "kc-tls", server, cluster, user);
	assert_int_equal(kubeconfig_load(path, &c, err, err_len), 0);
	k = kube_new(c);
	e = gp_kube_get(k, "/", &got, NULL);
	snprintf(err, err_len, "%s", gp_kube_error(k));
	assert_null(got);
	gp_kube_free(k);
	gp_kube_config_free(c);
	return e;
}

static void test_tls(void **state)
{
	static char ca[8192], other[8192], cert[8192], key[8192], cluster[9000], user[17000];
	char err[512];
	int port;

	(void)state;
	if (system("openssl version >/dev/null 2>&1") != 0)
		skip();
	assert_true(make_certificates());
	port = tls_server_start();
	base64_file("ca.pem", ca, sizeof(ca));
	base64_file("other.pem", other, sizeof(other));
	base64_file("client.pem", cert, sizeof(cert));
	base64_file("client.key", key, sizeof(key));
	snprintf(user, sizeof(user), "    client-certificate-data: %s\n    client-key-data: %s\n",
		 cert, key);

	/* Trusted both ways: the handshake passes, and the HTML page that
	 * s_server answers is no JSON. */
	snprintf(cluster, sizeof(cluster), "    certificate-authority-data: %s\n", ca);
	assert_int_equal(tls_get(port, cluster, user, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "not JSON"));
	assert_int_equal(tls_get(port, "    certificate-authority: ca.pem\n",
				 "    client-certificate: client.pem\n    client-key: client.key\n",
				 err, sizeof(err)), -EBADMSG);
	assert_int_equal(tls_get(port, "    insecure-skip-tls-verify: true\n", user, err,
				 sizeof(err)), -EBADMSG);
	/* A server signed by another CA than the one we trust. */
	snprintf(cluster, sizeof(cluster), "    certificate-authority-data: %s\n", other);
	assert_int_equal(tls_get(port, cluster, user, err, sizeof(err)), -EPROTO);
	/* No client certificate: the server ends the connection. */
	snprintf(cluster, sizeof(cluster), "    certificate-authority-data: %s\n", ca);
	assert_true(tls_get(port, cluster, "    token: t\n", err, sizeof(err)) < 0);
	assert_int_not_equal(tls_get(port, cluster, "    token: t\n", err, sizeof(err)), -EBADMSG);
	tls_kill();
}

/* ---- requests ------------------------------------------------------------------------- */

static void test_create_get(void **state)
{
	struct gp_kube_config *c;
	struct gp_kube *k;
	json_t *node = NULL, *got = NULL;
	long status = 0;

	(void)state;
	double_start(0, NULL);
	c = config_for(NULL);
	k = kube_new(c);
	node = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Node",
			 "metadata", "name", "n1", "labels", "zone", "a");
	assert_int_equal(gp_kube_post(k, "/api/v1/nodes", node, &got, &status), 0);
	assert_int_equal(status, 201);
	assert_non_null(meta_string(got, "uid"));
	assert_non_null(meta_string(got, "creationTimestamp"));
	assert_non_null(meta_string(got, "resourceVersion"));
	json_decref(got);
	assert_int_equal(gp_kube_post(k, "/api/v1/nodes", node, &got, &status), -EEXIST);
	assert_int_equal(status, 409);
	assert_string_equal(gp_kube_error(k), "nodes \"n1\" already exists");
	json_decref(node);

	assert_int_equal(gp_kube_get(k, "/api/v1/nodes/n1", &got, &status), 0);
	assert_int_equal(status, 200);
	assert_string_equal(meta_string(got, "name"), "n1");
	json_decref(got);
	got = NULL;
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes/n9", &got, &status), -ENOENT);
	assert_int_equal(status, 404);
	assert_null(got);
	assert_string_equal(gp_kube_error(k), "nodes \"n9\" not found");

	/* An error the server makes up, with its Status. */
	fail_next(k, "GET", "/api/v1/nodes/n1", 500, 1);
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes/n1", &got, &status), -EIO);
	assert_int_equal(status, 500);
	assert_non_null(strstr(gp_kube_error(k), "injected"));
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes/n1", &got, NULL), 0);
	json_decref(got);
	assert_int_equal(gp_kube_get(k, "nodes", &got, NULL), -EINVAL);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_unreachable(void **state)
{
	struct gp_kube_config *c;
	struct gp_kube *k;
	json_t *got = NULL;
	long status = 7;

	(void)state;
	double_start(0, NULL);
	c = config_for(NULL);
	double_kill();
	k = kube_new(c);
	assert_int_equal(gp_kube_get(k, "/api/v1/nodes", &got, &status), -ECONNREFUSED);
	assert_int_equal(status, 0);
	assert_non_null(strstr(gp_kube_error(k), "127.0.0.1"));
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_list_pages(void **state)
{
	struct gp_kube_config *c;
	struct gp_kube *k;
	json_t *items = NULL, *item;
	char version[64] = "", name[64], last[512];
	size_t i, before;
	long status = 0;
	int seen[1203] = { 0 };

	(void)state;
	double_start(0, NULL);
	c = config_for(NULL);
	k = kube_new(c);
	for (i = 0; i < 1203; i++) {
		snprintf(name, sizeof(name), "p%04zu", i);
		create_pod(k, i % 2 ? "ns-a" : "ns-b", name, NULL);
	}
	before = requests_count(k);
	assert_int_equal(gp_kube_list(k, "/api/v1/pods", &items, version, sizeof(version), &status),
			 0);
	assert_int_equal(status, 200);
	assert_int_equal(json_array_size(items), 1203);
	json_array_foreach(items, i, item) {
		unsigned n = 0;

		assert_int_equal(sscanf(meta_string(item, "name"), "p%u", &n), 1);
		assert_true(n < 1203);
		seen[n]++;
	}
	for (i = 0; i < 1203; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(strtol(version, NULL, 10), 1204);
	/* Three pages: the second and third with the token of the one before. */
	assert_int_equal(requests_seen(k, before, "GET", "/api/v1/pods?limit=500", last, sizeof(last)),
			 3);
	assert_non_null(strstr(last, "&continue="));
	json_decref(items);

	/* A path with its own query, a namespace; a buffer too short. */
	assert_int_equal(gp_kube_list(k, "/api/v1/namespaces/ns-a/pods?fieldSelector=metadata.name%3Dp0001",
				      &items, version, sizeof(version), NULL), 0);
	assert_int_equal(json_array_size(items), 1);
	json_decref(items);
	items = NULL;
	assert_int_equal(gp_kube_list(k, "/api/v1/pods", &items, version, 3, NULL), -ERANGE);
	assert_null(items);
	assert_int_equal(gp_kube_list(k, "/api/v1/nothing", &items, version, sizeof(version), &status),
			 -ENOENT);
	assert_int_equal(status, 404);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_merge_patch(void **state)
{
	struct gp_kube_config *c;
	struct gp_kube *k;
	json_t *patch, *got = NULL, *ann;
	size_t before;
	long status = 0;

	(void)state;
	double_start(0, NULL);
	c = config_for(NULL);
	k = kube_new(c);
	create_pod(k, "default", "p1", NULL);
	before = requests_count(k);
	patch = json_pack("{s:{s:{s:s, s:s}}}", "metadata", "annotations", "gpupool.io/placement",
			  "{\"node\":\"n1\"}", "keep", "yes");
	assert_int_equal(gp_kube_merge_patch(k, "/api/v1/namespaces/default/pods/p1", patch, &got,
					     &status), 0);
	json_decref(patch);
	assert_int_equal(status, 200);
	ann = json_object_get(json_object_get(got, "metadata"), "annotations");
	assert_string_equal(json_string_value(json_object_get(ann, "gpupool.io/placement")),
			    "{\"node\":\"n1\"}");
	json_decref(got);
	{
		json_t *all = NULL, *r;

		assert_int_equal(gp_kube_get(k, "/_double/requests", &all, NULL), 0);
		r = json_array_get(all, before);
		assert_string_equal(json_string_value(json_object_get(r, "method")), "PATCH");
		assert_string_equal(json_string_value(json_object_get(r, "contentType")),
				    "application/merge-patch+json");
		json_decref(all);
	}

	/* null deletes; the rest stays. */
	patch = json_pack("{s:{s:{s:n}}}", "metadata", "annotations", "gpupool.io/placement");
	assert_int_equal(gp_kube_merge_patch(k, "/api/v1/namespaces/default/pods/p1", patch, NULL,
					     NULL), 0);
	json_decref(patch);
	assert_int_equal(gp_kube_get(k, "/api/v1/namespaces/default/pods/p1", &got, NULL), 0);
	ann = json_object_get(json_object_get(got, "metadata"), "annotations");
	assert_null(json_object_get(ann, "gpupool.io/placement"));
	assert_string_equal(json_string_value(json_object_get(ann, "keep")), "yes");
	json_decref(got);

	/* A stale resourceVersion as a precondition: Conflict. */
	patch = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "resourceVersion", "1", "labels", "a", "b");
	assert_int_equal(gp_kube_merge_patch(k, "/api/v1/namespaces/default/pods/p1", patch, NULL,
					     &status), -EBUSY);
	assert_int_equal(status, 409);
	assert_non_null(strstr(gp_kube_error(k), "the object has been modified"));
	assert_int_equal(gp_kube_merge_patch(k, "/api/v1/namespaces/default/pods/p9", patch, NULL,
					     &status), -ENOENT);
	json_decref(patch);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_bind(void **state)
{
	struct gp_kube_config *c;
	struct gp_kube *k;
	json_t *pod = NULL, *got = NULL, *annotations;
	char uid[64];
	size_t before;

	(void)state;
	double_start(0, NULL);
	c = config_for(NULL);
	k = kube_new(c);
	create_pod(k, "default", "p1", &pod);
	create_pod(k, "default", "p2", NULL);
	snprintf(uid, sizeof(uid), "%s", meta_string(pod, "uid"));
	json_decref(pod);
	before = requests_count(k);
	assert_int_equal(gp_kube_bind(k, "default", "p1", uid, "n1", NULL), 0);
	assert_int_equal(requests_seen(k, before, "POST", "/api/v1/namespaces/default/pods/p1/binding",
				       NULL, 0), 1);
	assert_int_equal(gp_kube_get(k, "/api/v1/namespaces/default/pods/p1", &got, NULL), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(got, "spec"),
							      "nodeName")), "n1");
	json_decref(got);
	assert_int_equal(gp_kube_bind(k, "default", "p1", uid, "n2", NULL), -EEXIST);
	assert_non_null(strstr(gp_kube_error(k), "already assigned"));
	assert_int_equal(gp_kube_bind(k, "default", "gone", NULL, "n1", NULL), -ENOENT);
	assert_int_equal(gp_kube_bind(k, "default", "p2", "not-its-uid", "n1", NULL), -EEXIST);
	assert_non_null(strstr(gp_kube_error(k), "Precondition failed"));
	annotations = json_pack("{s:s}", "gpupool.io/placement", "{}");
	assert_int_equal(gp_kube_bind(k, "default", "p2", NULL, "n2", annotations), 0);
	json_decref(annotations);
	assert_int_equal(gp_kube_get(k, "/api/v1/namespaces/default/pods/p2", &got, NULL), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(got,
		"metadata"), "annotations"), "gpupool.io/placement")), "{}");
	json_decref(got);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_event(void **state)
{
	struct gp_kube_config *c;
	struct gp_kube *k;
	json_t *items = NULL, *e, *involved;
	char version[64];

	(void)state;
	double_start(0, NULL);
	c = config_for(NULL);
	k = kube_new(c);
	assert_int_equal(gp_kube_event(k, "Pod", "team", "p1", "uid-1", "Warning", "FailedScheduling",
				       "no device has 4 GiB free", "gpupool-extender"), 0);
	assert_int_equal(gp_kube_event(k, "Node", NULL, "n1", NULL, "Normal", "DevicesFound",
				       "8 devices", "gpupool-node"), 0);
	assert_int_equal(gp_kube_list(k, "/api/v1/namespaces/team/events", &items, version,
				      sizeof(version), NULL), 0);
	assert_int_equal(json_array_size(items), 1);
	e = json_array_get(items, 0);
	involved = json_object_get(e, "involvedObject");
	assert_string_equal(json_string_value(json_object_get(involved, "kind")), "Pod");
	assert_string_equal(json_string_value(json_object_get(involved, "name")), "p1");
	assert_string_equal(json_string_value(json_object_get(involved, "namespace")), "team");
	assert_string_equal(json_string_value(json_object_get(involved, "uid")), "uid-1");
	assert_string_equal(json_string_value(json_object_get(e, "type")), "Warning");
	assert_string_equal(json_string_value(json_object_get(e, "reason")), "FailedScheduling");
	assert_string_equal(json_string_value(json_object_get(e, "message")), "no device has 4 GiB free");
	assert_string_equal(json_string_value(json_object_get(json_object_get(e, "source"),
							      "component")), "gpupool-extender");
	assert_non_null(strstr(meta_string(e, "name"), "p1."));
	json_decref(items);
	/* A cluster-scoped object's events go to "default". */
	assert_int_equal(gp_kube_list(k, "/api/v1/namespaces/default/events?fieldSelector="
				      "involvedObject.kind%3DNode", &items, version, sizeof(version), NULL), 0);
	assert_int_equal(json_array_size(items), 1);
	json_decref(items);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

/* One Event object per object and reason: made the first time, then its
 * count raised and its lastTimestamp set (as kubelet and kube-scheduler
 * count their repeated events), whoever made it first. */
static void test_event_counted(void **state)
{
	const struct gp_kube_event_of ev = { .kind = "Pod", .ns = "team", .name = "p1",
					     .uid = "uid-1", .type = "Warning",
					     .reason = "GpupoolUnschedulable",
					     .message = "0/3 nodes fit: no device has 4096 MiB free",
					     .component = "gpupool-extender" };
	struct gp_kube_event_of other = ev;
	struct gp_kube_config *c;
	struct gp_kube *k, *k2;
	json_t *items = NULL, *e;
	char version[64];

	(void)state;
	double_start(0, NULL);
	c = config_for(NULL);
	k = kube_new(c);
	k2 = kube_new(c);
	assert_int_equal(gp_kube_event_count(k, &ev), 0);
	assert_int_equal(gp_kube_event_count(k, &ev), 0);
	assert_int_equal(gp_kube_event_count(k2, &ev), 0);     /* another handle: a restart */
	assert_int_equal(gp_kube_list(k, "/api/v1/namespaces/team/events", &items, version,
				      sizeof(version), NULL), 0);
	assert_int_equal(json_array_size(items), 1);
	e = json_array_get(items, 0);
	assert_int_equal(json_integer_value(json_object_get(e, "count")), 3);
	assert_string_equal(json_string_value(json_object_get(e, "message")), ev.message);
	assert_string_equal(json_string_value(json_object_get(e, "reason")), ev.reason);
	assert_non_null(json_string_value(json_object_get(e, "lastTimestamp")));
	assert_true(strcmp(json_string_value(json_object_get(e, "lastTimestamp")),
			   json_string_value(json_object_get(e, "firstTimestamp"))) >= 0);
	assert_non_null(strstr(meta_string(e, "name"), "p1."));
	json_decref(items);
	/* Another reason is another Event. */
	other.message = "0/3 nodes fit: namespace team is over its gpupool quota";
	assert_int_equal(gp_kube_event_count(k, &other), 0);
	assert_int_equal(gp_kube_list(k, "/api/v1/namespaces/team/events", &items, version,
				      sizeof(version), NULL), 0);
	assert_int_equal(json_array_size(items), 2);
	json_decref(items);
	gp_kube_free(k2);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

/* ---- informers -------------------------------------------------------------------------- */

#define EVENTS_MAX 64

/* What an informer told, kept under a lock (its thread writes, the test reads). */
struct rec {
	pthread_mutex_t lock;
	int syncs;
	json_t *last_sync;
	int events;
	enum gp_kube_event_type type[EVENTS_MAX];
	char name[EVENTS_MAX][64];
	int states;
	bool connected;
	int lost;
	char message[512];
};

static void on_sync(void *ctx, json_t *items)
{
	struct rec *r = ctx;

	pthread_mutex_lock(&r->lock);
	r->syncs++;
	json_decref(r->last_sync);
	r->last_sync = json_incref(items);
	pthread_mutex_unlock(&r->lock);
}

static void on_event(void *ctx, enum gp_kube_event_type type, json_t *object)
{
	struct rec *r = ctx;

	pthread_mutex_lock(&r->lock);
	if (r->events < EVENTS_MAX) {
		r->type[r->events] = type;
		snprintf(r->name[r->events], sizeof(r->name[0]), "%s", meta_string(object, "name"));
	}
	r->events++;
	pthread_mutex_unlock(&r->lock);
}

static void on_state(void *ctx, bool connected, const char *message)
{
	struct rec *r = ctx;

	pthread_mutex_lock(&r->lock);
	r->states++;
	r->connected = connected;
	r->lost += !connected;
	snprintf(r->message, sizeof(r->message), "%s", message);
	pthread_mutex_unlock(&r->lock);
}

static const struct gp_kube_informer_ops rec_ops = { on_sync, on_event, on_state };

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
}

static void rec_release(struct rec *r)
{
	json_decref(r->last_sync);
	pthread_mutex_destroy(&r->lock);
}

/* Reads one int of the record under its lock. */
static int rec_get(struct rec *r, const int *field)
{
	int v;

	pthread_mutex_lock(&r->lock);
	v = *field;
	pthread_mutex_unlock(&r->lock);
	return v;
}

/* Waits (up to `seconds`) for *field to reach at least want. */
static void rec_wait(struct rec *r, const int *field, int want, double seconds, const char *what)
{
	double until = now_s() + seconds;

	while (rec_get(r, field) < want && now_s() < until)
		usleep(20000);
	if (rec_get(r, field) < want)
		fail_msg("waited %.0f s for %s (%d, want %d)", seconds, what, rec_get(r, field), want);
}

static bool rec_connected(struct rec *r)
{
	bool v;

	pthread_mutex_lock(&r->lock);
	v = r->connected;
	pthread_mutex_unlock(&r->lock);
	return v;
}

/* The names in the last sync, sorted, comma-separated. */
static void rec_sync_names(struct rec *r, char *out, size_t len)
{
	json_t *item;
	size_t i, n = 0;
	char names[16][64];

	pthread_mutex_lock(&r->lock);
	json_array_foreach(r->last_sync, i, item)
		if (n < 16)
			snprintf(names[n++], sizeof(names[0]), "%s", meta_string(item, "name"));
	pthread_mutex_unlock(&r->lock);
	qsort(names, n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? "," : "", names[i]);
}

static struct gp_kube_informer *informer_start(struct gp_kube_config *c, const char *path,
					       struct rec *r)
{
	struct gp_kube_informer *i = NULL;

	double until = now_s() + 20;

	rec_init(r);
	assert_int_equal(gp_kube_informer_start(c, path, &rec_ops, r, &i), 0);
	while (!gp_kube_informer_synced(i) && now_s() < until)
		usleep(20000);
	assert_true(gp_kube_informer_synced(i));
	assert_int_equal(rec_get(r, &r->syncs), 1);
	return i;
}

static void informer_stop_quickly(struct gp_kube_informer *i)
{
	double start = now_s();

	gp_kube_informer_stop(i);
	if (now_s() - start > 1.0)
		fail_msg("gp_kube_informer_stop took %.2f s", now_s() - start);
}

static void test_informer_events(void **state)
{
	const char *const args[] = { "--bookmark-ms", "100", NULL };
	struct gp_kube_config *c;
	struct gp_kube *k;
	struct gp_kube_informer *inf, *pods;
	struct rec r, pr;
	json_t *patch;
	char names[256];

	(void)state;
	double_start(0, args);
	c = config_for(NULL);
	k = kube_new(c);
	create_node(k, "n1");
	create_node(k, "n2");
	inf = informer_start(c, "/api/v1/nodes", &r);
	rec_sync_names(&r, names, sizeof(names));
	assert_string_equal(names, "n1,n2");
	assert_true(rec_connected(&r));

	create_node(k, "n3");
	patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "gpu", "yes");
	assert_int_equal(gp_kube_merge_patch(k, "/api/v1/nodes/n1", patch, NULL, NULL), 0);
	json_decref(patch);
	double_delete("/api/v1/nodes/n2");
	rec_wait(&r, &r.events, 3, 20, "three events");
	usleep(300000);
	pthread_mutex_lock(&r.lock);
	assert_int_equal(r.events, 3);
	assert_int_equal(r.type[0], GP_KUBE_ADDED);
	assert_string_equal(r.name[0], "n3");
	assert_int_equal(r.type[1], GP_KUBE_MODIFIED);
	assert_string_equal(r.name[1], "n1");
	assert_int_equal(r.type[2], GP_KUBE_DELETED);
	assert_string_equal(r.name[2], "n2");
	assert_int_equal(r.syncs, 1);
	pthread_mutex_unlock(&r.lock);

	/* A selector's watch: a pod enters it when bound to the node. */
	pods = informer_start(c, "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", &pr);
	assert_int_equal(json_array_size(pr.last_sync), 0);
	create_pod(k, "default", "p1", NULL);
	assert_int_equal(gp_kube_bind(k, "default", "p1", NULL, "n1", NULL), 0);
	rec_wait(&pr, &pr.events, 1, 20, "the bound pod");
	pthread_mutex_lock(&pr.lock);
	assert_int_equal(pr.type[0], GP_KUBE_ADDED);
	assert_string_equal(pr.name[0], "p1");
	pthread_mutex_unlock(&pr.lock);

	informer_stop_quickly(pods);
	informer_stop_quickly(inf);
	rec_release(&pr);
	rec_release(&r);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_informer_bookmarks(void **state)
{
	const char *const args[] = { "--bookmark-ms", "100", NULL };
	struct gp_kube_config *c;
	struct gp_kube *k;
	struct gp_kube_informer *inf;
	struct rec r;
	json_t *pod = NULL;
	char want[128], last[512] = "";
	size_t before;
	double until;

	(void)state;
	setenv("GPUPOOL_KUBE_WATCH_SECONDS", "1", 1);
	double_start(0, args);
	c = config_for(NULL);
	k = kube_new(c);
	create_node(k, "n1");
	inf = informer_start(c, "/api/v1/nodes", &r);
	/* Changes to pods move the one version on; the node watch hears of
	 * them only through bookmarks, and watches again from there. */
	create_pod(k, "default", "p1", NULL);
	create_pod(k, "default", "p2", &pod);
	snprintf(want, sizeof(want), "resourceVersion=%s", meta_string(pod, "resourceVersion"));
	json_decref(pod);
	before = requests_count(k);
	until = now_s() + 20;
	while (now_s() < until && !strstr(last, want)) {
		usleep(100000);
		requests_seen(k, before, "GET", "/api/v1/nodes?watch=true", last, sizeof(last));
	}
	assert_non_null(strstr(last, want));
	assert_non_null(strstr(last, "allowWatchBookmarks=true"));
	assert_non_null(strstr(last, "timeoutSeconds=1"));
	assert_int_equal(rec_get(&r, &r.events), 0);
	assert_int_equal(rec_get(&r, &r.syncs), 1);
	assert_int_equal(rec_get(&r, &r.lost), 0);
	/* Watches that ended were started again without a list. */
	assert_int_equal(requests_seen(k, before, "GET", "/api/v1/nodes?limit", NULL, 0), 0);
	informer_stop_quickly(inf);
	rec_release(&r);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_informer_relist(void **state)
{
	const char *const args[] = { "--bookmark-ms", "600000", NULL };
	struct gp_kube_config *c;
	struct gp_kube *k;
	struct gp_kube_informer *inf;
	struct rec r;
	json_t *patch, *node = NULL;
	char names[256];
	size_t i;

	(void)state;
	double_start(0, args);
	c = config_for(NULL);
	k = kube_new(c);
	create_node(k, "n1");
	create_node(k, "n2");
	inf = informer_start(c, "/api/v1/nodes", &r);
	/* Pods move the one version on past the node watch's (no bookmarks
	 * here), the history is compacted, the watch dropped: watching again
	 * from its version gets ERROR 410, and the informer lists again at
	 * once, which is no loss of the server. */
	create_pod(k, "default", "p1", NULL);
	control(k, "/_double/compact", NULL);
	control(k, "/_double/drop-watches", NULL);
	rec_wait(&r, &r.syncs, 2, 20, "the relist after ERROR 410");
	rec_sync_names(&r, names, sizeof(names));
	assert_string_equal(names, "n1,n2");
	assert_int_equal(rec_get(&r, &r.lost), 0);

	/* Cut off: the watch is dropped and every new watch refused (429),
	 * while nodes change and the history is compacted. */
	fail_next(k, "GET", "/api/v1/nodes?watch", 429, 1000);
	control(k, "/_double/drop-watches", NULL);
	rec_wait(&r, &r.lost, 1, 20, "the informer to lose the server");
	patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "changed", "yes");
	assert_int_equal(gp_kube_merge_patch(k, "/api/v1/nodes/n1", patch, NULL, NULL), 0);
	json_decref(patch);
	double_delete("/api/v1/nodes/n2");
	create_node(k, "n3");
	control(k, "/_double/compact", NULL);
	fail_next(k, "GET", "/api/v1/nodes?watch", 429, 0);

	rec_wait(&r, &r.syncs, 3, 30, "the relist");
	rec_sync_names(&r, names, sizeof(names));
	assert_string_equal(names, "n1,n3");
	pthread_mutex_lock(&r.lock);
	json_array_foreach(r.last_sync, i, node)
		if (!strcmp(meta_string(node, "name"), "n1"))
			assert_non_null(json_object_get(json_object_get(node, "metadata"), "labels"));
	assert_int_equal(r.events, 0);
	assert_true(r.connected);
	pthread_mutex_unlock(&r.lock);

	/* A watch refused with a 500: lost, then listed again. */
	fail_next(k, "GET", "/api/v1/nodes?watch", 500, 1);
	control(k, "/_double/drop-watches", NULL);
	rec_wait(&r, &r.lost, 2, 20, "the informer to report the 500");
	rec_wait(&r, &r.syncs, 4, 20, "the relist after the 500");
	assert_true(rec_connected(&r));
	informer_stop_quickly(inf);
	rec_release(&r);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

static void test_informer_restart(void **state)
{
	const char *const args[] = { "--bookmark-ms", "200", NULL };
	struct gp_kube_config *c;
	struct gp_kube *k;
	struct gp_kube_informer *inf;
	struct rec r;
	char names[256];
	double killed;
	int port;

	(void)state;
	double_start(0, args);
	port = dbl.port;
	c = config_for(NULL);
	k = kube_new(c);
	for (int n = 0; n < 5; n++) {
		char name[16];

		snprintf(name, sizeof(name), "old%d", n);
		create_node(k, name);
	}
	inf = informer_start(c, "/api/v1/nodes", &r);
	double_kill();
	killed = now_s();
	rec_wait(&r, &r.lost, 1, 20, "the informer to lose the server");
	assert_false(rec_connected(&r));
	/* Down a while: the informer keeps trying, backing off. */
	usleep(1500000);
	assert_int_equal(rec_get(&r, &r.lost), 1);
	double_start(port, args);
	create_node(k, "new");
	rec_wait(&r, &r.syncs, 2, 30, "the relist from the new server");
	rec_sync_names(&r, names, sizeof(names));
	assert_string_equal(names, "new");
	assert_true(rec_connected(&r));
	assert_true(now_s() - killed < 40);
	assert_true(requests_seen(k, 0, "GET", "/api/v1/nodes?limit=500", NULL, 0) >= 1);
	informer_stop_quickly(inf);
	rec_release(&r);
	gp_kube_free(k);
	gp_kube_config_free(c);
}

/* A server that stops answering (SIGSTOP) but keeps its connections: the
 * watch's idle limit notices. */
static void test_informer_dead_connection(void **state)
{
	const char *const args[] = { "--bookmark-ms", "200", NULL };
	struct gp_kube_config *c;
	struct gp_kube_informer *inf;
	struct rec r;

	(void)state;
	setenv("GPUPOOL_KUBE_WATCH_IDLE_SECONDS", "2", 1);
	double_start(0, args);
	c = config_for(NULL);
	inf = informer_start(c, "/api/v1/nodes", &r);
	usleep(2500000);
	assert_int_equal(rec_get(&r, &r.lost), 0);
	kill(dbl.pid, SIGSTOP);
	rec_wait(&r, &r.lost, 1, 40, "the informer to notice the silent server");
	/* Stopped while a request hangs on the silent server. */
	informer_stop_quickly(inf);
	rec_release(&r);

	kill(dbl.pid, SIGCONT);
	inf = informer_start(c, "/api/v1/nodes", &r);
	assert_true(rec_connected(&r));
	informer_stop_quickly(inf);
	rec_release(&r);
	gp_kube_config_free(c);
}

static void test_informer_stop(void **state)
{
	struct gp_kube_config *c;
	struct gp_kube_informer *inf = NULL;
	struct rec r;

	(void)state;
	double_start(0, NULL);
	c = config_for(NULL);
	/* While a watch is open. */
	inf = informer_start(c, "/api/v1/nodes", &r);
	usleep(300000);
	informer_stop_quickly(inf);
	rec_release(&r);
	/* While backing off from a server that is gone. */
	double_kill();
	rec_init(&r);
	assert_int_equal(gp_kube_informer_start(c, "/api/v1/nodes", &rec_ops, &r, &inf), 0);
	rec_wait(&r, &r.lost, 1, 20, "the informer to find no server");
	usleep(2000000);
	assert_false(gp_kube_informer_synced(inf));
	informer_stop_quickly(inf);
	rec_release(&r);
	assert_null(gp_kube_informer_stop(NULL));
	assert_int_equal(gp_kube_informer_start(c, "nodes", &rec_ops, &r, &inf), -EINVAL);
	gp_kube_config_free(c);
}

/* ---- main ------------------------------------------------------------------------------- */

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		T(test_config_url), T(test_config_none), T(test_kubeconfig),
		T(test_kubeconfig_certificates), T(test_kubeconfig_refused), T(test_in_cluster),
		T(test_tls),
		T(test_create_get), T(test_unreachable), T(test_list_pages), T(test_merge_patch),
		T(test_bind), T(test_event), T(test_event_counted), T(test_informer_events), T(test_informer_bookmarks),
		T(test_informer_relist), T(test_informer_restart), T(test_informer_dead_connection),
		T(test_informer_stop),
	};
	char cmd[128];
	int failed;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s APISERVER-DOUBLE.js [NODE]\n", argv[0]);
		return 2;
	}
	double_script = argv[1];
	if (argc == 3)
		node_program = argv[2];
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-kube-client-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return failed;
}
