/* kubeconfig.c — where the API server is and who we are (client.h,
 * gp_kube_config_load): an explicit URL with a token file; a kubeconfig
 * file, read with libyaml's loader into a document and walked from its
 * current-context to that context's cluster and user; or the pod's
 * service account (in-cluster). The result is a struct gp_kube_config
 * (client-impl.h) that client.c turns into libcurl options.
 *
 * Relative paths in a kubeconfig are relative to its folder, as kubectl
 * takes them; *-data fields are base64 (decoded here, so that a bad one is
 * reported at load with its field's name). Every problem is -EINVAL or
 * -errno with one line saying what was wrong and what to do. */
#include "k8s/client-impl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "base/fail.h"

#define TOKEN_MAX (64 * 1024)
#define SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* ---- small helpers ------------------------------------------------------------ */

static int dup_into(char **ret, const char *s)
{
	if (!s)
		return 0;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static bool is_http_url(const char *s)
{
	return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8);
}

/* The server URL without trailing slashes, in c->server. */
static int set_server(struct gp_kube_config *c, const char *url)
{
	size_t n = strlen(url);

	while (n > 0 && url[n - 1] == '/')
		n--;
	c->server = strndup(url, n);
	return c->server ? 0 : -ENOMEM;
}

/* A file's whole text (NUL-terminated, at most max bytes) in *ret. */
static int read_text(const char *path, size_t max, char **ret)
{
	FILE *f = fopen(path, "re");
	char *text;
	size_t n;

	if (!f)
		return -errno;
	text = malloc(max + 1);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(text, 1, max + 1, f);
	if (ferror(f) || n > max) {
		int e = ferror(f) ? -EIO : -EFBIG;

		fclose(f);
		free(text);
		return e;
	}
	fclose(f);
	text[n] = '\0';
	*ret = text;
	return 0;
}

/* The token in a file, without surrounding white space. */
static int read_token(const char *path, char **ret)
{
	char *text = NULL, *start, *end;
	int r = read_text(path, TOKEN_MAX, &text);

	if (r < 0)
		return r;
	start = text + strspn(text, " \t\r\n");
	end = start + strlen(start);
	while (end > start && strchr(" \t\r\n", end[-1]))
		end--;
	*end = '\0';
	if (!*start) {
		free(text);
		return -ENODATA;
	}
	memmove(text, start, (size_t)(end - start) + 1);
	*ret = text;
	return 0;
}

int gp_kube_config_token(const struct gp_kube_config *c, char **ret, char *err, size_t err_len)
{
	int r;

	*ret = NULL;
	if (c->token_file) {
		r = read_token(c->token_file, ret);
		if (r < 0)
			return gp_fail(err, err_len, r, "token file %s: %s", c->token_file,
				       r == -ENODATA ? "empty" : strerror(-r));
		return 0;
	}
	return dup_into(ret, c->token);
}

struct gp_kube_config *gp_kube_config_free(struct gp_kube_config *c)
{
	if (!c)
		return NULL;
	free(c->server);
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	free(c->token_file);
	free(c->ca_file);
	free(c->ca.data);
	free(c->cert_file);
	free(c->cert.data);
	free(c->key_file);
	if (c->key.data)
		explicit_bzero(c->key.data, c->key.len);
	free(c->key.data);
	free(c);
	return NULL;
}

const char *gp_kube_config_server(const struct gp_kube_config *c)
{
	return c->server;
}

/* ---- base64 ---------------------------------------------------------------------- */

static int base64_value(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	return ch == '/' ? 63 : -1;
}

/* Standard base64 (RFC 4648), white space ignored, padding optional. */
static int base64_decode(const char *text, struct gp_kube_blob *ret)
{
	unsigned char *out = malloc(strlen(text) / 4 * 3 + 3);
	unsigned bits = 0, nbits = 0, pad = 0;
	size_t n = 0;

	if (!out)
		return -ENOMEM;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		int v = base64_value(*p);

		if (strchr(" \t\r\n", *p))
			continue;
		if (*p == '=' && ++pad <= 2)
			continue;
		if (v < 0 || pad)
			goto bad;
		bits = (bits << 6) | (unsigned)v;
		nbits += 6;
		if (nbits >= 8) {
			nbits -= 8;
			out[n++] = (unsigned char)(bits >> nbits);
			bits &= (1u << nbits) - 1;
		}
	}
	if (n == 0 || nbits >= 6)
		goto bad;
	ret->data = out;
	ret->len = n;
	return 0;
bad:
	free(out);
	return -EINVAL;
}

/* ---- the kubeconfig document -------------------------------------------------- */

/* A kubeconfig being read. */
struct kc {
	yaml_document_t doc;
	const char *path;
	char dir[PATH_MAX];
	char *err;
	size_t err_len;
};

static yaml_node_t *node_at(struct kc *k, yaml_node_item_t i)
{
	return yaml_document_get_node(&k->doc, i);
}

/* The value of key in a mapping (NULL when absent or not a mapping). */
static yaml_node_t *get(struct kc *k, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *name = node_at(k, p->key);

		if (name && name->type == YAML_SCALAR_NODE &&
		    !strcmp((const char *)name->data.scalar.value, key))
			return node_at(k, p->value);
	}
	return NULL;
}

/* The text of key's value when it is a non-empty scalar, else NULL. */
static const char *text(struct kc *k, yaml_node_t *map, const char *key)
{
	yaml_node_t *v = get(k, map, key);
	const char *s;

	if (!v || v->type != YAML_SCALAR_NODE)
		return NULL;
	s = (const char *)v->data.scalar.value;
	return *s && strcmp(s, "~") && strcasecmp(s, "null") ? s : NULL;
}

/* The `inner` mapping of the entry named `name` in the list `list`
 * (contexts: [{name: x, context: {...}}]). */
static yaml_node_t *named(struct kc *k, const char *list, const char *name, const char *inner)
{
	yaml_node_t *seq = get(k, node_at(k, 1), list);

	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top;
	     i++) {
		yaml_node_t *entry = node_at(k, *i);
		const char *n = text(k, entry, "name");

		if (n && !strcmp(n, name))
			return get(k, entry, inner);
	}
	return NULL;
}

/* A path from the kubeconfig, relative to its folder unless absolute;
 * it must be readable. */
static int set_file(struct kc *k, char **ret, const char *what, const char *owner,
		    const char *file)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s%s", file[0] == '/' ? "" : k->dir, file) >=
	    sizeof(path))
		return gp_fail(k->err, k->err_len, -ENAMETOOLONG, "kubeconfig %s: %s: %s: path too long",
			       k->path, owner, what);
	if (access(path, R_OK) < 0)
		return gp_fail(k->err, k->err_len, -errno, "kubeconfig %s: %s: %s %s: %s", k->path,
			       owner, what, path, strerror(errno));
	return dup_into(ret, path);
}

/* FIELD (a file) or FIELD-data (base64) of map, into *ret_file or *ret_blob. */
static int set_pem(struct kc *k, yaml_node_t *map, const char *field, const char *owner,
		   char **ret_file, struct gp_kube_blob *ret_blob)
{
	char data_field[64];
	const char *file = text(k, map, field), *data;

	snprintf(data_field, sizeof(data_field), "%s-data", field);
	data = text(k, map, data_field);
	if (data) {
		if (base64_decode(data, ret_blob) < 0)
			return gp_fail(k->err, k->err_len, -EINVAL,
				       "kubeconfig %s: %s: %s is not valid base64; encode the PEM "
				       "file with `base64 -w0`", k->path, owner, data_field);
		return 0;
	}
	return file ? set_file(k, ret_file, field, owner, file) : 0;
}

static int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "true", "yes", "on" }, *const no[] = { "false", "no", "off" };

	for (size_t i = 0; i < 3; i++) {
		if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
			*ret = !strcasecmp(s, yes[i]);
			return 0;
		}
	}
	return -EINVAL;
}

static int read_cluster(struct kc *k, struct gp_kube_config *c, const char *name)
{
	yaml_node_t *cl = named(k, "clusters", name, "cluster");
	char owner[300];
	const char *server, *insecure;

	snprintf(owner, sizeof(owner), "cluster \"%s\"", name);
	if (!cl)
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: %s is not among its clusters "
			       "(or has no cluster: mapping)", k->path, owner);
	server = text(k, cl, "server");
	if (!server || !is_http_url(server))
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: %s: server %s%s%s; give an "
			       "https:// (or http://) URL", k->path, owner, server ? "\"" : "is missing",
			       server ? server : "", server ? "\" is not an http(s) URL" : "");
	insecure = text(k, cl, "insecure-skip-tls-verify");
	if (insecure && parse_bool(insecure, &c->insecure) < 0)
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: %s: "
			       "insecure-skip-tls-verify \"%s\" is not true or false", k->path, owner,
			       insecure);
	if (set_server(c, server) < 0)
		return -ENOMEM;
	return set_pem(k, cl, "certificate-authority", owner, &c->ca_file, &c->ca);
}

/* A user that authenticates in a way gpupool cannot: its way's name. */
static const char *unsupported_auth(struct kc *k, yaml_node_t *user)
{
	static const char *const ways[] = { "exec", "auth-provider", "username", "password" };

	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++)
		if (get(k, user, ways[i]))
			return ways[i];
	return NULL;
}

static int read_user(struct kc *k, struct gp_kube_config *c, const char *name)
{
	yaml_node_t *u = named(k, "users", name, "user");
	const char *token, *token_file, *way;
	char owner[300];
	int r;

	snprintf(owner, sizeof(owner), "user \"%s\"", name);
	if (!u)
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: %s is not among its users "
			       "(or has no user: mapping)", k->path, owner);
	token = text(k, u, "token");
	token_file = text(k, u, "tokenFile");
	if ((r = dup_into(&c->token, token)) < 0)
		return r;
	if (!token && token_file && (r = set_file(k, &c->token_file, "tokenFile", owner, token_file)) < 0)
		return r;
	if ((r = set_pem(k, u, "client-certificate", owner, &c->cert_file, &c->cert)) < 0 ||
	    (r = set_pem(k, u, "client-key", owner, &c->key_file, &c->key)) < 0)
		return r;
	if ((c->cert_file || c->cert.data) != (c->key_file || c->key.data))
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: %s: a client certificate "
			       "needs its key and a key its certificate; give both", k->path, owner);
	way = unsupported_auth(k, u);
	if (way && !c->token && !c->token_file && !c->cert_file && !c->cert.data)
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: %s authenticates with %s, "
			       "which gpupool does not support; give it a token, a tokenFile or a "
			       "client certificate and key", k->path, owner, way);
	return 0;
}

/* The document's current context, its cluster and its user, into c. */
static int walk(struct kc *k, struct gp_kube_config *c)
{
	yaml_node_t *root = node_at(k, 1), *ctx;
	const char *current, *cluster, *user;
	int r;

	if (!root || root->type != YAML_MAPPING_NODE)
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: not a kubeconfig (its top "
			       "level is not a mapping)", k->path);
	current = text(k, root, "current-context");
	if (!current)
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: no current-context; set one "
			       "with `kubectl config use-context NAME`", k->path);
	ctx = named(k, "contexts", current, "context");
	if (!ctx)
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: current-context \"%s\" is "
			       "not among its contexts", k->path, current);
	cluster = text(k, ctx, "cluster");
	user = text(k, ctx, "user");
	if (!cluster)
		return gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: context \"%s\" names no "
			       "cluster", k->path, current);
	if ((r = read_cluster(k, c, cluster)) < 0)
		return r;
	return user ? read_user(k, c, user) : 0;
}

/* libyaml's loader over the file, with the position of a syntax error. */
static int load_document(struct kc *k, FILE *f)
{
	yaml_parser_t p;
	int r = 0;

	if (!yaml_parser_initialize(&p))
		return -ENOMEM;
	yaml_parser_set_input_file(&p, f);
	if (!yaml_parser_load(&p, &k->doc)) {
		r = gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s:%zu:%zu: not valid YAML: %s; "
			    "fix the file's syntax", k->path, p.problem_mark.line + 1,
			    p.problem_mark.column + 1, p.problem ? p.problem : "unknown error");
	} else if (!yaml_document_get_root_node(&k->doc)) {
		yaml_document_delete(&k->doc);
		r = gp_fail(k->err, k->err_len, -EINVAL, "kubeconfig %s: the file is empty", k->path);
	}
	yaml_parser_delete(&p);
	return r;
}

static int from_kubeconfig(const char *path, struct gp_kube_config *c, char *err, size_t err_len)
{
	struct kc k = { .path = path, .err = err, .err_len = err_len };
	const char *slash = strrchr(path, '/');
	FILE *f = fopen(path, "re");
	int r;

	if (!f)
		return gp_fail(err, err_len, -errno, "kubeconfig %s: %s", path, strerror(errno));
	if (slash)
		snprintf(k.dir, sizeof(k.dir), "%.*s/", (int)(slash - path), path);
	r = load_document(&k, f);
	fclose(f);
	if (r < 0)
		return r;
	r = walk(&k, c);
	yaml_document_delete(&k.doc);
	return r;
}

/* ---- the other two sources ---------------------------------------------------- */

static int from_url(const struct gp_kube_options *o, struct gp_kube_config *c, char *err,
		    size_t err_len)
{
	char *token;
	int r;

	if (!is_http_url(o->api_url))
		return gp_fail(err, err_len, -EINVAL, "API server URL \"%s\" is not an http(s) URL; "
			       "give one like https://10.0.0.1:6443", o->api_url);
	if ((r = set_server(c, o->api_url)) < 0 || (r = dup_into(&c->token_file, o->token_file)) < 0)
		return r;
	if (!o->token_file)
		return 0;
	r = gp_kube_config_token(c, &token, err, err_len);
	free(token);
	return r;
}

/* $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT with the pod's service
 * account (its folder from $GPUPOOL_KUBE_SERVICEACCOUNT_DIR in tests). */
static int in_cluster(struct gp_kube_config *c, char *err, size_t err_len)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *dir = getenv("GPUPOOL_KUBE_SERVICEACCOUNT_DIR");
	char url[512], path[PATH_MAX];
	bool v6 = strchr(host, ':') != NULL;

	if (!port || !*port)
		return gp_fail(err, err_len, -EINVAL, "in-cluster: KUBERNETES_SERVICE_HOST is set but "
			       "KUBERNETES_SERVICE_PORT is not; set both or give --kubeconfig");
	snprintf(url, sizeof(url), "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
	if (set_server(c, url) < 0)
		return -ENOMEM;
	dir = dir && *dir ? dir : SERVICEACCOUNT_DIR;
	snprintf(path, sizeof(path), "%s/token", dir);
	if (access(path, R_OK) < 0)
		return gp_fail(err, err_len, -errno, "in-cluster: the service account token %s: %s; "
			       "mount the service account (automountServiceAccountToken)", path,
			       strerror(errno));
	if (dup_into(&c->token_file, path) < 0)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	if (access(path, R_OK) == 0)
		return dup_into(&c->ca_file, path);
	return 0;
}

/* The first file of $KUBECONFIG's colon-separated list that exists. */
static int env_kubeconfig(const char *list, char *path, size_t len, char *err, size_t err_len)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ":");

		if (n > 0 && n < len) {
			snprintf(path, len, "%.*s", (int)n, p);
			if (access(path, F_OK) == 0)
				return 0;
		}
		p += n + (p[n] == ':');
	}
	return gp_fail(err, err_len, -ENOENT, "KUBECONFIG=%s: no such file; give an existing "
		       "kubeconfig or unset KUBECONFIG", list);
}

static int load(const struct gp_kube_options *o, struct gp_kube_config *c, char *err,
		size_t err_len)
{
	const char *env = getenv("KUBECONFIG");
	char path[PATH_MAX];
	int r;

	if (o && o->api_url)
		return from_url(o, c, err, err_len);
	if (o && o->kubeconfig)
		return from_kubeconfig(o->kubeconfig, c, err, err_len);
	if (env && *env) {
		if ((r = env_kubeconfig(env, path, sizeof(path), err, err_len)) < 0)
			return r;
		return from_kubeconfig(path, c, err, err_len);
	}
	if (getenv("KUBERNETES_SERVICE_HOST") && *getenv("KUBERNETES_SERVICE_HOST"))
		return in_cluster(c, err, err_len);
	return gp_fail(err, err_len, -ENOENT, "no Kubernetes API server: give --kube-api URL or "
		       "--kubeconfig PATH (or set KUBECONFIG), or run in a pod");
}

int gp_kube_config_load(const struct gp_kube_options *o, struct gp_kube_config **ret,
			char *err, size_t err_len)
{
	struct gp_kube_config *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	if (err_len)
		err[0] = '\0';
	r = load(o, c, err, err_len);
	if (r < 0) {
		if (r == -ENOMEM)
			gp_fail(err, err_len, r, "out of memory reading the Kubernetes configuration");
		gp_kube_config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}
