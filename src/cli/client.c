/* client.c — the gpupool commands' link to the server (see client.h):
 * flag parsing shared by every client command, and one request per call
 * over libcurl (CURLOPT_UNIX_SOCKET_PATH). */
#include "cli/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/bytes.h"
#include "base/closest.h"
#include "base/parse.h"
#include "base/text.h"
#include "cli/commands.h"
#include "cli/words.h"
#include "cli/yaml.h"
#include "server/server.h"

#define OPTIONS_MAX 40
#define TOKEN_MAX   256
#define TIMEOUT_S   60
#define WORDS_MAX   2048 /* a server's message, in the CLI's words */
#define MiB	    (1024ULL * 1024)

enum {
	OPT_SOCKET = 0x100,
	OPT_TOKEN,
	OPT_TOKEN_FILE,
	OPT_JSON,
};

static const struct option common_options[] = {
	{"socket", required_argument, NULL, OPT_SOCKET},
	{"token", required_argument, NULL, OPT_TOKEN},
	{"token-file", required_argument, NULL, OPT_TOKEN_FILE},
	{"json", no_argument, NULL, OPT_JSON},
	{"output", required_argument, NULL, 'o'},
	{"help", no_argument, NULL, 'h'},
};

/* ---- flags ------------------------------------------------------------ */

/* -o FORMAT: json and table always, csv and yaml where the command has them. */
static int output_flag(const struct gp_client_command *cmd, struct gp_client_flags *f,
		       const char *value)
{
	bool csv = cmd->csv_ok && !strcmp(value, "csv");
	bool yaml = cmd->yaml_ok && !strcmp(value, "yaml");

	if (strcmp(value, "json") && strcmp(value, "table") && !csv && !yaml) {
		fprintf(stderr, "gpupool %s: -o \"%s\" must be %s\n", cmd->name, value,
			cmd->csv_ok	 ? "table, csv or json"
			: cmd->yaml_ok ? "table, yaml or json"
				       : "json or table");
		return -EINVAL;
	}
	f->json = !strcmp(value, "json");
	f->csv = csv;
	f->yaml = yaml;
	return 0;
}

static int common_flag(const struct gp_client_command *cmd, struct gp_client_flags *f,
		       int c, const char *value)
{
	switch (c) {
	case OPT_SOCKET: f->socket = value; return 0;
	case OPT_TOKEN: f->token = value; return 0;
	case OPT_TOKEN_FILE: f->token_file = value; return 0;
	case OPT_JSON: f->json = true; return 0;
	case 'o': return output_flag(cmd, f, value);
	}
	return -EINVAL;
}

/* The command's options followed by the common ones, in `all`. */
static void options_merge(const struct gp_client_command *cmd, struct option *all,
			  char *shorts, size_t shorts_size)
{
	size_t n = 0;

	for (const struct option *o = cmd->options; o && o->name && n < OPTIONS_MAX - 8;
	     o++)
		all[n++] = *o;
	for (size_t i = 0; i < sizeof(common_options) / sizeof(common_options[0]); i++)
		all[n++] = common_options[i];
	all[n] = (struct option){0};
	snprintf(shorts, shorts_size, "%s:ho:%s", cmd->args_last ? "+" : "",
		 cmd->short_options ? cmd->short_options : "");
}

static bool is_common(int c)
{
	return c == 'o' || (c >= OPT_SOCKET && c <= OPT_JSON);
}

static int bad_option(const struct gp_client_command *cmd, int c, const char *arg)
{
	fprintf(stderr, "gpupool %s: %s \"%s\" (gpupool %s --help lists the options)\n",
		cmd->name, c == ':' ? "missing value for" : "unknown option", arg,
		cmd->name);
	return -EINVAL;
}

int gp_client_parse(const struct gp_client_command *cmd, void *ctx, int argc, char **argv,
		    struct gp_client_flags *f, int *ret_first)
{
	struct option all[OPTIONS_MAX];
	char shorts[32];
	int c, r;

	options_merge(cmd, all, shorts, sizeof(shorts));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, all, NULL)) != -1) {
		if (c == 'h') {
			cmd->usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':')
			return bad_option(cmd, c, argv[optind - 1]);
		r = is_common(c) ? common_flag(cmd, f, c, optarg)
				 : cmd->option(ctx, c, optarg);
		if (r < 0)
			return r;
	}
	*ret_first = optind;
	return 0;
}

int gp_client_parse_bare(const struct gp_client_command *cmd, void *ctx, int argc, char **argv,
			 struct gp_client_flags *f)
{
	int first, r = gp_client_parse(cmd, ctx, argc, argv, f, &first);

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	if (first < argc) {
		fprintf(stderr, "gpupool %s: takes no arguments, got \"%s\"\n", cmd->name,
			argv[first]);
		return GP_EXIT_USAGE;
	}
	return GP_CLIENT_GO;
}

/* ---- options before the command's name ---------------------------- */

/* The common option arg names, when it is one that may come before a
 * command's name (not --help): its entry, and *ret_inline when its value
 * is in arg itself (--socket=PATH, -ojson). NULL when it is none. */
static const struct option *common_named(const char *arg, bool *ret_inline)
{
	bool short_o = !strncmp(arg, "-o", 2) && arg[2] != '-';

	*ret_inline = false;
	if (!short_o && strncmp(arg, "--", 2))
		return NULL;
	for (size_t i = 0; i < sizeof(common_options) / sizeof(common_options[0]); i++) {
		const struct option *o = &common_options[i];
		size_t len = strlen(o->name);

		if (short_o && o->val == 'o') {
			*ret_inline = arg[2] != '\0';
			return o;
		}
		if (short_o || o->val == 'h' || strncmp(arg + 2, o->name, len))
			continue;
		if (arg[2 + len] == '\0' ||
		    (arg[2 + len] == '=' && o->has_arg == required_argument)) {
			*ret_inline = arg[2 + len] == '=';
			return o;
		}
	}
	return NULL;
}

int gp_client_hoist(const char *name, int argc, char **argv)
{
	int k = 1;
	char *word;

	while (k < argc) {
		bool inline_value;
		const struct option *o = common_named(argv[k], &inline_value);

		if (!o)
			break;
		if (o->has_arg == required_argument && !inline_value && k + 1 >= argc) {
			fprintf(stderr, "gpupool%s%s: missing value for \"%s\"\n", *name ? " " : "",
				name, argv[k]);
			return -EINVAL;
		}
		k += 1 + (o->has_arg == required_argument && !inline_value);
	}
	if (k >= argc)
		return k > 1 ? -ENOENT : 0;
	word = argv[k];
	memmove(&argv[2], &argv[1], (size_t)(k - 1) * sizeof(*argv));
	argv[1] = word;
	return k - 1;
}

/* ---- values ----------------------------------------------------------- */


int gp_client_uint(const char *cmd, const char *flag, const char *text, unsigned lo,
		   unsigned hi, unsigned *ret)
{
	if (gp_parse_uint(text, lo, hi, "%", ret))
		return 0;
	fprintf(stderr, "gpupool %s: --%s \"%s\" must be a whole number from %u to %u\n",
		cmd, flag, text, lo, hi);
	return -EINVAL;
}

int gp_client_mib(const char *cmd, const char *flag, const char *text, bool zero_ok,
		  uint64_t *ret)
{
	uint64_t bytes;

	if (gp_parse_size_in(text, GP_MiB, &bytes) == 0 &&
	    (bytes >= MiB || (zero_ok && bytes == 0))) {
		*ret = (bytes + MiB - 1) / MiB;
		return 0;
	}
	fprintf(stderr,
		"gpupool %s: --%s \"%s\" must be a size like 4G, 4GB, 512M or 4096 (MiB)%s\n",
		cmd, flag, text, zero_ok ? " (or 0)" : ", at least 1M");
	return -EINVAL;
}

int gp_client_time_limit(const char *cmd, const char *flag, const char *text, uint64_t *ret)
{
	if (gp_parse_time_limit(text, ret) == 0)
		return 0;
	fprintf(stderr,
		"gpupool %s: --%s \"%s\" must be a time limit as Slurm writes one: MINUTES, "
		"MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES or "
		"DAYS-HOURS:MINUTES:SECONDS (10, 0:30, 2:00:00, 1-12), at most 366 days; 0 or "
		"unlimited for none\n",
		cmd, flag, text);
	return -EINVAL;
}

int gp_client_choice(const char *cmd, const char *flag, const char *text,
		     const char *const *choices)
{
	char list[128] = "";

	for (size_t i = 0; choices[i]; i++) {
		if (!strcmp(text, choices[i]))
			return 0;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i ? ", " : "", choices[i]);
	}
	fprintf(stderr, "gpupool %s: --%s \"%s\" must be one of: %s\n", cmd, flag, text,
		list);
	return -EINVAL;
}

int gp_client_id(const char *cmd, const char *text, long long *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (*text >= '0' && *text <= '9' && !*end && !errno && v > 0) {
		*ret = v;
		return GP_EXIT_OK;
	}
	fprintf(stderr,
		"gpupool %s: \"%s\" is not a task id (a number, as `gpupool task ls` "
		"shows)\n",
		cmd, text);
	return GP_EXIT_USAGE;
}

/* ---- where and who ---------------------------------------------------- */

static void socket_resolve(const struct gp_client_flags *f, char *buf, size_t size)
{
	if (f->socket)
		snprintf(buf, size, "%s", f->socket);
	else
		gp_server_default_socket(buf, size);
}

/* The first line of path, trimmed; -errno when it cannot be read. */
static int token_read(const char *path, char *buf, size_t size)
{
	FILE *in = fopen(path, "re");
	int r = 0;

	if (!in)
		return -errno;
	if (!fgets(buf, (int)size, in))
		r = -ENODATA;
	fclose(in);
	if (r == 0)
		buf[strcspn(buf, " \t\r\n")] = '\0';
	return r;
}

/* The token to send; buf is "" when there is none. Exit status. */
static int token_resolve(const struct gp_client_flags *f, const char *cmd, char *buf,
			 size_t size)
{
	const char *env = getenv("GPUPOOL_TOKEN"), *file = f->token_file;
	char db[PATH_MAX], admin[PATH_MAX];
	int r;

	buf[0] = '\0';
	if (f->token || (!file && env && *env)) {
		snprintf(buf, size, "%s", f->token ? f->token : env);
		return GP_EXIT_OK;
	}
	if (!file && (file = getenv("GPUPOOL_TOKEN_FILE")) && !*file)
		file = NULL;
	if (!file) {
		gp_server_default_db(db, sizeof(db));
		gp_server_admin_token_path(db, admin, sizeof(admin));
		token_read(admin, buf, size); /* only when it is there */
		return GP_EXIT_OK;
	}
	r = token_read(file, buf, size);
	if (r < 0) {
		fprintf(stderr, "gpupool %s: cannot read the token file %s: %s\n", cmd,
			file, r == -ENODATA ? "it is empty" : strerror(-r));
		return GP_EXIT_FAIL;
	}
	return GP_EXIT_OK;
}

/* ---- requests --------------------------------------------------------- */

static struct curl_slist *headers_make(const char *token)
{
	char auth[TOKEN_MAX + 32];
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

	h = curl_slist_append(h, "Expect:");
	if (*token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		h = curl_slist_append(h, auth);
	}
	return h;
}

/* Sets where the request goes: a Unix socket, or an http:// URL. */
static void target_set(CURL *curl, const char *where, const char *path)
{
	char url[PATH_MAX + 256];

	if (!strncmp(where, "http://", 7) || !strncmp(where, "https://", 8)) {
		snprintf(url, sizeof(url), "%s%s", where, path);
	} else {
		curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, where);
		snprintf(url, sizeof(url), "http://localhost%s", path);
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
}

/* A header of the reply to keep: its name, and its value once seen. */
struct header_want {
	const char *name;
	char *value;
	size_t size;
};

static size_t on_header(char *line, size_t size, size_t n, void *userdata)
{
	struct header_want *want = userdata;
	size_t len = size * n, name = strlen(want->name);

	if (len > name + 1 && line[name] == ':' && !strncasecmp(line, want->name, name)) {
		const char *v = line + name + 1;
		size_t vlen = len - name - 1;

		while (vlen && (*v == ' ' || *v == '\t'))
			v++, vlen--;
		while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n'))
			vlen--;
		snprintf(want->value, want->size, "%.*s", (int)vlen, v);
	}
	return len;
}

/* One request; the curl code, with the status and body in the out
 * parameters when it is CURLE_OK; want (NULL: none) gets a header. */
static CURLcode perform(const char *where, const char *token, const char *method,
			const char *path, const char *body, long *ret_status,
			struct gp_bytes *ret_body, struct header_want *want)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = headers_make(token);
	CURLcode rc;

	if (!curl) {
		curl_slist_free_all(headers);
		return CURLE_OUT_OF_MEMORY;
	}
	target_set(curl, where, path);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, gp_bytes_curl_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, ret_body);
	if (body)
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	if (want) {
		curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(curl, CURLOPT_HEADERDATA, want);
	}
	rc = curl_easy_perform(curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, ret_status);
	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	return rc;
}

/* Says why a request failed (unless quiet), in the CLI's words
 * (cli/words.h); returns the exit status 1. */
static int refused(const char *cmd, long status, json_t *reply, bool quiet)
{
	json_t *error = json_object_get(reply, "error");
	char words[WORDS_MAX];

	if (quiet)
		return GP_EXIT_FAIL;
	if (json_is_string(error))
		fprintf(stderr, "gpupool %s: %s\n", cmd,
			gp_client_safe(gp_words_cli(cmd, json_string_value(error), words,
						    sizeof(words))));
	else
		fprintf(stderr, "gpupool %s: the server answered HTTP %ld\n", cmd,
			status);
	return GP_EXIT_FAIL;
}

/* Says why the server could not be asked (unless quiet); returns the
 * exit status 1. */
static int unreachable(const char *cmd, const char *where, CURLcode rc, bool quiet)
{
	if (quiet)
		return GP_EXIT_FAIL;
	if (rc == CURLE_COULDNT_CONNECT)
		fprintf(stderr,
			"gpupool %s: cannot reach the server at %s: is `gpupool server` "
			"running?\n",
			cmd, where);
	else
		fprintf(stderr, "gpupool %s: talking to the server at %s failed: %s\n",
			cmd, where, curl_easy_strerror(rc));
	return GP_EXIT_FAIL;
}

/* The server's answer: its JSON when it said yes, else its message. */
static int answer(const char *cmd, long status, const char *text, bool quiet,
		  json_t **ret_reply)
{
	json_t *reply = text ? json_loads(text, 0, NULL) : NULL;
	int exit_status;

	if (status >= 300 || !reply) {
		exit_status = refused(cmd, status, reply, quiet);
		json_decref(reply);
		return exit_status;
	}
	*ret_reply = reply;
	return GP_EXIT_OK;
}

int gp_client_call(const struct gp_client_flags *f, const char *cmd, const char *method,
		   const char *path, json_t *body, bool quiet, long *ret_http,
		   json_t **ret_reply)
{
	char where[PATH_MAX], token[TOKEN_MAX], *text;
	struct gp_bytes got = {0};
	long status = 0;
	CURLcode rc;
	int exit_status = token_resolve(f, cmd, token, sizeof(token));

	if (ret_http)
		*ret_http = 0;
	if (exit_status != GP_EXIT_OK)
		return exit_status;
	socket_resolve(f, where, sizeof(where));
	/* A POST without a body still says so: Content-Length: 0. */
	text = body		       ? json_dumps(body, JSON_COMPACT)
	       : strcmp(method, "GET") ? strdup("")
				       : NULL;
	rc = perform(where, token, method, path, text, &status, &got, NULL);
	free(text);
	if (rc == CURLE_OK && ret_http)
		*ret_http = status;
	exit_status = rc == CURLE_OK ? answer(cmd, status, got.data, quiet, ret_reply)
				     : unreachable(cmd, where, rc, quiet);
	gp_bytes_free(&got);
	return exit_status;
}

int gp_client_request(const struct gp_client_flags *f, const char *cmd,
		      const char *method, const char *path, json_t *body,
		      json_t **ret_reply)
{
	return gp_client_call(f, cmd, method, path, body, false, NULL, ret_reply);
}

int gp_client_get_text(const struct gp_client_flags *f, const char *cmd, const char *path,
		       const char *header, struct gp_client_text *ret)
{
	char where[PATH_MAX], token[TOKEN_MAX], value[sizeof(ret->header)] = "";
	struct header_want want = {header, value, sizeof(value)};
	struct gp_bytes got = {0};
	json_t *reply;
	long status = 0;
	CURLcode rc;
	int exit_status = token_resolve(f, cmd, token, sizeof(token));

	if (exit_status != GP_EXIT_OK)
		return exit_status;
	socket_resolve(f, where, sizeof(where));
	rc = perform(where, token, "GET", path, NULL, &status, &got, header ? &want : NULL);
	if (rc != CURLE_OK || status >= 300) {
		reply = got.data ? json_loads(got.data, 0, NULL) : NULL;
		exit_status = rc == CURLE_OK ? refused(cmd, status, reply, false)
					     : unreachable(cmd, where, rc, false);
		json_decref(reply);
		gp_bytes_free(&got);
		return exit_status;
	}
	*ret = (struct gp_client_text){.data = got.data ? got.data : strdup(""),
				       .len = got.len};
	snprintf(ret->header, sizeof(ret->header), "%s", value);
	return GP_EXIT_OK;
}

/* ---- subcommands ------------------------------------------------------ */

static void dispatch_usage(FILE *out, const char *name, const struct gp_client_sub *subs,
			   size_t n)
{
	fprintf(out, "usage: gpupool %s SUBCOMMAND [OPTIONS]\n\nsubcommands:\n", name);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "  %-8s %s\n", subs[i].name, subs[i].summary);
	fprintf(out, "\n`gpupool %s SUBCOMMAND --help` describes each.\n", name);
}

/* Says that argv[1] is no subcommand of name, with the one it is
 * likely a slip of. */
static int dispatch_unknown(const char *name, const struct gp_client_sub *subs, size_t n,
			    const char *word)
{
	const char *names[64], *like;
	size_t m = n < 64 ? n : 64;

	for (size_t i = 0; i < m; i++)
		names[i] = subs[i].name;
	like = word[0] == '-' ? NULL : gp_closest_find(word, names, m);
	fprintf(stderr, "gpupool %s: unknown %s \"%s\"%s%s%s (gpupool %s --help lists them)\n",
		name, word[0] == '-' ? "option" : "subcommand", word,
		like ? "; did you mean \"" : "", like ? like : "", like ? "\"?" : "", name);
	return GP_EXIT_USAGE;
}

int gp_client_dispatch(const char *name, const struct gp_client_sub *subs, size_t n,
		       int argc, char **argv)
{
	int r = gp_client_hoist(name, argc, argv);

	if (r == -EINVAL)
		return GP_EXIT_USAGE;
	if (argc < 2 || r == -ENOENT) {
		fprintf(stderr, "gpupool %s: needs a subcommand\n", name);
		dispatch_usage(stderr, name, subs, n);
		return GP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		dispatch_usage(stdout, name, subs, n);
		return GP_EXIT_OK;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].run(argc - 1, argv + 1);
	return dispatch_unknown(name, subs, n, argv[1]);
}

/* ---- output ----------------------------------------------------------- */

void gp_client_print_json(json_t *v)
{
	json_dumpf(v, stdout, JSON_COMPACT | JSON_ENCODE_ANY);
	putchar('\n');
}

int gp_client_print_yaml(const char *cmd, json_t *v)
{
	char err[256];

	if (gp_yaml_print(stdout, v, err, sizeof(err)) == 0)
		return GP_EXIT_OK;
	fprintf(stderr, "gpupool %s: cannot write YAML: %s\n", cmd, err);
	return GP_EXIT_FAIL;
}

const char *gp_client_mib_text(json_int_t mib, char *buf, size_t size)
{
	if (mib == 0)
		snprintf(buf, size, "0");
	else if (mib % 1024 == 0)
		snprintf(buf, size, "%lldG", (long long)(mib / 1024));
	else
		snprintf(buf, size, "%lldM", (long long)mib);
	return buf;
}

void gp_client_rows(json_t *reply, const char *key, void (*row)(json_t *item))
{
	json_t *items = json_object_get(reply, key);

	for (size_t i = 0; i < json_array_size(items); i++)
		row(json_array_get(items, i));
}

json_int_t gp_client_int(json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

void gp_client_query_add(char *path, size_t size, const char *key, const char *value)
{
	size_t len = strlen(path);

	if (len < size)
		snprintf(path + len, size - len, "%c%s=%s", strchr(path, '?') ? '&' : '?', key,
			 value);
}

const char *gp_client_str(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "";
}

/* The escaped copies gp_client_safe hands out, the oldest replaced first. */
#define SAFE_KEPT 64
static char *safe_kept[SAFE_KEPT];
static unsigned safe_next;

const char *gp_client_safe(const char *s)
{
	size_t len;
	char *copy;

	if (!s || gp_text_is_plain(s))
		return s ? s : "";
	len = gp_text_escape(s, NULL, 0) + 1;
	copy = malloc(len);
	if (!copy)
		return "(text not shown: out of memory)";
	gp_text_escape(s, copy, len);
	free(safe_kept[safe_next]);
	safe_kept[safe_next] = copy;
	safe_next = (safe_next + 1) % SAFE_KEPT;
	return copy;
}

const char *gp_client_text(json_t *obj, const char *key)
{
	return gp_client_safe(gp_client_str(obj, key));
}

const char *gp_client_mib_about(json_t *v, char *buf, size_t size)
{
	json_int_t mib = json_integer_value(v);

	if (!json_is_integer(v))
		snprintf(buf, size, "-");
	else if (mib >= 1024)
		snprintf(buf, size, "%.1fG", (double)mib / 1024.0);
	else
		snprintf(buf, size, "%lldM", (long long)mib);
	return buf;
}
