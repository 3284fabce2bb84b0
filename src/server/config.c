/* config.c — the server's configuration file (see config.h), read with
 * libyaml's parser, one event at a time: the stream, one document, one
 * mapping of option keys, each to a scalar (or, for prices and
 * overcommit, to a mapping of model keys to scalars). A table of the
 * keys says where each goes in the options and how it is checked. Every
 * event is deleted as soon as it has been looked at; the first problem
 * stops the reading with its position (libyaml's marks, counted from 1). */
#include "server/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "base/parse.h"
#include "core/policy.h"
#include "server/backup.h"
#include "server/meter.h"

enum key_kind { KEY_PATH, KEY_UINT, KEY_BOOL, KEY_CHOICE, KEY_SIZE, KEY_SPACE, KEY_PRICES,
		KEY_OVERCOMMIT, KEY_POLICY, KEY_LISTEN, KEY_HOSTS, KEY_UID_BASE, KEY_TASK_MEMORY,
		KEY_TASK_PIDS, KEY_TASK_TMP };

struct key {
	const char *name;
	enum key_kind kind;
	size_t offset;	/* in struct gp_server_options (paths, numbers, bools, sizes) */
	unsigned lo, hi; /* KEY_UINT */
	const char *const *choices; /* KEY_CHOICE: the index goes to an unsigned */
};

const char *const gp_config_verify_names[] = {"kill", "alert", "off", NULL};
const char *const gp_config_db_check_names[] = {"quick", "full", NULL};
const char *const gp_config_proc_names[] = {"private", "shared", NULL};
const char *const gp_config_preemption_names[] = {"off", "priority", NULL};

#define AT(member) offsetof(struct gp_server_options, member)

static const struct key keys[] = {
	{"db", KEY_PATH, AT(db), 0, 0},
	{"socket", KEY_PATH, AT(socket), 0, 0},
	{"tcp", KEY_UINT, AT(tcp_port), 1, 65535},
	{"admin_token_file", KEY_PATH, AT(token_file), 0, 0},
	{"queue_max", KEY_UINT, AT(queue_max), 1, GP_CONFIG_QUEUE_MAX_LIMIT},
	{"tenant_queue_max", KEY_UINT, AT(tenant_queue_max), 1,
	 GP_CONFIG_QUEUE_MAX_LIMIT},
	{"header_timeout_ms", KEY_UINT, AT(header_timeout_ms), GP_CONFIG_TIMEOUT_MS_MIN,
	 GP_CONFIG_TIMEOUT_MS_LIMIT},
	{"body_timeout_ms", KEY_UINT, AT(body_timeout_ms), GP_CONFIG_TIMEOUT_MS_MIN,
	 GP_CONFIG_TIMEOUT_MS_LIMIT},
	{"max_connections", KEY_UINT, AT(max_connections), 1,
	 GP_CONFIG_CONNECTIONS_LIMIT},
	{"max_client_connections", KEY_UINT, AT(max_client_connections), 1,
	 GP_CONFIG_CONNECTIONS_LIMIT},
	{"allowed_hosts", KEY_HOSTS, AT(allowed_hosts), 0, 0},
	{"db_check", KEY_CHOICE, AT(db_check), 0, 0, gp_config_db_check_names},
	{"backup_dir", KEY_PATH, AT(backup_dir), 0, 0},
	{"backup_interval", KEY_UINT, AT(backup_interval_s), 0, GP_CONFIG_BACKUP_INTERVAL_LIMIT},
	{"backup_keep", KEY_UINT, AT(backup_keep), 1, GP_BACKUP_KEEP_LIMIT},
	{"metrics_token_file", KEY_PATH, AT(metrics_token_file), 0, 0},
	{"metrics_listen", KEY_LISTEN, 0, 0, 0},
	{"ui_dir", KEY_PATH, AT(ui_dir), 0, 0},
	{"ui_chart_js", KEY_PATH, AT(ui_chart_js), 0, 0},
	{"with_agent", KEY_BOOL, AT(with_agent), 0, 0},
	{"shim", KEY_PATH, AT(shim), 0, 0},
	{"run_dir", KEY_PATH, AT(run_dir), 0, 0},
	{"log_dir", KEY_PATH, AT(log_dir), 0, 0},
	{"log_max", KEY_SIZE, AT(log_max), 0, 0},
	{"log_total_max", KEY_SPACE, AT(log_total_max), 0, 0},
	{"log_free_min", KEY_SPACE, AT(log_free_min), 0, 0},
	{"grace_ms", KEY_UINT, AT(grace_ms), 0, GP_CONFIG_GRACE_MS_LIMIT},
	{"cgroup", KEY_PATH, AT(cgroup), 0, 0},
	{"task_uid_base", KEY_UID_BASE, AT(task_uid_base), 0, 0},
	{"task_groups", KEY_PATH, AT(task_groups), 0, 0},
	{"task_env", KEY_PATH, AT(task_env), 0, 0},
	{"task_memory_max", KEY_TASK_MEMORY, AT(task_memory_max), 0, 0},
	{"task_pids_max", KEY_TASK_PIDS, AT(task_pids_max), 0, 0},
	{"task_tmp_max", KEY_TASK_TMP, AT(task_tmp_max), 0, 0},
	{"task_proc", KEY_CHOICE, AT(task_proc), 0, 0, gp_config_proc_names},
	{"verify", KEY_CHOICE, AT(verify), 0, 0, gp_config_verify_names},
	{"verify_ms", KEY_UINT, AT(verify_ms), GP_CONFIG_VERIFY_MS_MIN,
	 GP_CONFIG_VERIFY_MS_LIMIT},
	{"verify_slack_mib", KEY_UINT, AT(verify_slack_mib), 0, GP_CONFIG_SLACK_MIB_LIMIT},
	{"sample_ms", KEY_UINT, AT(loop.sample_ms), GP_CONFIG_SAMPLE_MS_MIN,
	 GP_CONFIG_SAMPLE_MS_LIMIT},
	{"util_window", KEY_UINT, AT(loop.util_window_s), 1, GP_CONFIG_UTIL_WINDOW_LIMIT},
	{"grow_samples", KEY_UINT, AT(loop.grow_samples), 1, GP_METER_GROW_MAX},
	{"policy", KEY_POLICY, 0, 0, 0},
	{"preemption", KEY_CHOICE, AT(loop.preemption), 0, 0, gp_config_preemption_names},
	{"workload_window", KEY_UINT, AT(loop.workload_window_s), GP_CONFIG_WORKLOAD_WINDOW_MIN,
	 GP_CONFIG_WORKLOAD_WINDOW_LIMIT},
	{"workload_refresh", KEY_UINT, AT(loop.workload_refresh_s), 1,
	 GP_CONFIG_WORKLOAD_REFRESH_LIMIT},
	{"prices", KEY_PRICES, 0, 0, 0},
	{"overcommit", KEY_OVERCOMMIT, 0, 0, 0},
};

#define KEYS (sizeof(keys) / sizeof(keys[0]))

/* One file being read. */
struct reader {
	yaml_parser_t parser;
	const char *path;
	struct gp_server_options *o;
	bool seen[KEYS];
	char *err;
	size_t err_len;
};

/* ---- prices and overcommits ------------------------------------------------ */

int gp_config_price_set(struct gp_server_options *o, const struct gp_price *p)
{
	int i = 0;

	while (i < o->prices && strcasecmp(o->price[i].model, p->model) != 0)
		i++;
	if (i == GP_PRICES_MAX)
		return -ENOSPC;
	o->price[i] = *p;
	if (i == o->prices)
		o->prices++;
	return 0;
}

int gp_config_overcommit_set(struct gp_server_options *o, const char *model,
			     unsigned permille)
{
	struct gp_loop_options *l = &o->loop;
	int i = 0;

	if (strlen(model) >= sizeof(l->overcommit[0].model))
		return -EINVAL;
	while (i < l->overcommits && strcasecmp(l->overcommit[i].model, model) != 0)
		i++;
	if (i == GP_LOOP_OVERCOMMITS_MAX)
		return -ENOSPC;
	snprintf(l->overcommit[i].model, sizeof(l->overcommit[i].model), "%s", model);
	l->overcommit[i].permille = permille;
	if (i == l->overcommits)
		l->overcommits++;
	return 0;
}

int gp_config_policy_set(struct gp_server_options *o, const char *name, char *list,
			 size_t len)
{
	size_t used = 0;

	list[0] = '\0';
	for (size_t i = 0; gp_policy_name_at(i); i++) {
		if (!strcmp(name, gp_policy_name_at(i))) {
			snprintf(o->loop.policy, sizeof(o->loop.policy), "%s", name);
			return 0;
		}
		if (used < len)
			used += (size_t)snprintf(list + used, len - used, "%s%s", i ? ", " : "",
						 gp_policy_name_at(i));
	}
	return -ENOENT;
}

bool gp_config_ratio_parse(const char *text, unsigned *ret_permille)
{
	char *end;
	double v;

	/* Decimal only: strtod alone would also take "0x1.4p0" or " +1.2". */
	if (!(*text >= '0' && *text <= '9') || text[strspn(text, "0123456789.eE+-")] != '\0')
		return false;
	errno = 0;
	v = strtod(text, &end);
	/* Written so that NaN fails too. */
	if (errno || end == text || *end ||
	    !(v >= GP_CONFIG_RATIO_MIN_PERMILLE / 1000.0 &&
	      v <= GP_CONFIG_RATIO_MAX_PERMILLE / 1000.0))
		return false;
	*ret_permille = (unsigned)(v * 1000 + 0.5);
	return true;
}

bool gp_config_log_space_parse(const char *text, uint64_t *ret_bytes)
{
	uint64_t bytes;

	if (gp_parse_size(text, &bytes) < 0 ||
	    (bytes && (bytes < GP_CONFIG_LOG_MAX_MIN || bytes > GP_CONFIG_LOG_SPACE_LIMIT)))
		return false;
	*ret_bytes = bytes;
	return true;
}

bool gp_config_uid_base_parse(const char *text, unsigned *ret)
{
	if (strcmp(text, "auto") == 0) {
		*ret = GP_CONFIG_UID_BASE_AUTO;
		return true;
	}
	return gp_parse_uint(text, GP_CONFIG_UID_BASE_MIN, GP_CONFIG_UID_BASE_LIMIT, NULL, ret);
}

uint64_t gp_config_machine_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

uint64_t gp_config_machine_share(unsigned pct)
{
	return (gp_config_machine_memory() / 100 * pct) & ~((1ULL << 20) - 1);
}

/* A size from lo to GP_CONFIG_SIZE_LIMIT. */
static bool size_within(const char *text, uint64_t lo, uint64_t *ret)
{
	uint64_t bytes;

	if (gp_parse_size(text, &bytes) < 0 || bytes < lo || bytes > GP_CONFIG_SIZE_LIMIT)
		return false;
	*ret = bytes;
	return true;
}

bool gp_config_task_memory_parse(const char *text, uint64_t *ret_bytes)
{
	size_t n = strlen(text);
	unsigned pct;

	if (strcmp(text, "max") == 0) {
		*ret_bytes = GP_CONFIG_NONE;
		return true;
	}
	if (n > 1 && text[n - 1] == '%') {
		if (!gp_parse_uint(text, 1, 100, "%", &pct))
			return false;
		*ret_bytes = gp_config_machine_share(pct);
		return *ret_bytes >= GP_CONFIG_TASK_MEMORY_MIN;
	}
	return size_within(text, GP_CONFIG_TASK_MEMORY_MIN, ret_bytes);
}

bool gp_config_task_pids_parse(const char *text, unsigned *ret)
{
	if (strcmp(text, "max") == 0) {
		*ret = GP_CONFIG_PIDS_NONE;
		return true;
	}
	return gp_parse_uint(text, GP_CONFIG_TASK_PIDS_MIN, GP_CONFIG_TASK_PIDS_LIMIT, NULL, ret);
}

bool gp_config_task_tmp_parse(const char *text, uint64_t *ret_bytes)
{
	if (strcmp(text, "off") == 0) {
		*ret_bytes = GP_CONFIG_NONE;
		return true;
	}
	return size_within(text, GP_CONFIG_TASK_TMP_MIN, ret_bytes);
}

bool gp_config_log_max_parse(const char *text, uint64_t *ret_bytes)
{
	uint64_t bytes;

	if (gp_parse_size(text, &bytes) < 0 || bytes < GP_CONFIG_LOG_MAX_MIN ||
	    bytes > GP_CONFIG_LOG_MAX_LIMIT)
		return false;
	*ret_bytes = bytes;
	return true;
}

/* ---- errors ------------------------------------------------------------------ */

/* "FILE:LINE:COLUMN: key "name": what" in the reader's err; -EINVAL. */
__attribute__((format(printf, 4, 5))) static int fail(struct reader *r,
						      const yaml_mark_t *at,
						      const char *name,
						      const char *fmt, ...)
{
	size_t n = (size_t)snprintf(r->err, r->err_len, "%s:%zu:%zu: ", r->path,
				    at->line + 1, at->column + 1);
	va_list ap;

	if (name && n < r->err_len)
		n += (size_t)snprintf(r->err + n, r->err_len - n, "key \"%s\": ", name);
	if (n < r->err_len) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->err_len - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The next event in ev (the caller deletes it), or the parser's error. */
static int next(struct reader *r, yaml_event_t *ev)
{
	yaml_parser_t *p = &r->parser;

	if (yaml_parser_parse(p, ev))
		return 0;
	return fail(r, p->error == YAML_READER_ERROR ? &p->mark : &p->problem_mark, NULL,
		    "not valid YAML: %s%s%s; fix the file's syntax",
		    p->problem ? p->problem : "unknown error", p->context ? ", " : "",
		    p->context ? p->context : "");
}

static const char *scalar_text(const yaml_event_t *ev)
{
	return (const char *)ev->data.scalar.value;
}

/* ~, null or nothing, written plain. */
static bool scalar_is_null(const yaml_event_t *ev)
{
	const char *s = scalar_text(ev);

	return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcasecmp(s, "null"));
}

/* What an event is, for the messages. */
static const char *event_what(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_MAPPING_START_EVENT: return "a mapping";
	case YAML_SEQUENCE_START_EVENT: return "a list";
	case YAML_ALIAS_EVENT: return "an alias (aliases are not supported)";
	case YAML_SCALAR_EVENT:
		if (scalar_is_null(ev))
			return "empty";
		if (strlen(scalar_text(ev)) != ev->data.scalar.length)
			return "a value with a NUL byte";
		return "a single value";
	default: return "nothing";
	}
}

/* The next event, which must be a non-null scalar without NUL bytes. */
static int next_scalar(struct reader *r, yaml_event_t *ev, const char *name,
		       const char *want)
{
	int e = next(r, ev);

	if (e < 0)
		return e;
	if (ev->type == YAML_SCALAR_EVENT && !scalar_is_null(ev) &&
	    strlen(scalar_text(ev)) == ev->data.scalar.length)
		return 0;
	e = fail(r, &ev->start_mark, name, "is %s; give %s", event_what(ev), want);
	yaml_event_delete(ev);
	return e;
}

/* ---- values ------------------------------------------------------------------- */

static int set_path(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	char *dst = (char *)r->o + k->offset;
	const char *s = scalar_text(ev);

	if (strlen(s) >= PATH_MAX)
		return fail(r, &ev->start_mark, k->name,
			    "the path is longer than %d bytes; give a shorter one",
			    PATH_MAX - 1);
	snprintf(dst, PATH_MAX, "%s", s);
	return 0;
}

static int set_uint(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	unsigned *dst = (unsigned *)(void *)((char *)r->o + k->offset);

	if (gp_parse_uint(scalar_text(ev), k->lo, k->hi, NULL, dst))
		return 0;
	return fail(r, &ev->start_mark, k->name,
		    "\"%s\" is not a whole number from %u to %u; give one in that range",
		    scalar_text(ev), k->lo, k->hi);
}

static int set_uid_base(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	unsigned *dst = (unsigned *)(void *)((char *)r->o + k->offset);

	if (gp_config_uid_base_parse(scalar_text(ev), dst))
		return 0;
	return fail(r, &ev->start_mark, k->name,
		    "\"%s\" is neither auto nor a whole number from %u to %u; give one of them",
		    scalar_text(ev), GP_CONFIG_UID_BASE_MIN, GP_CONFIG_UID_BASE_LIMIT);
}

/* task_memory_max, task_pids_max, task_tmp_max. */
static int set_task_limit(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	void *dst = (char *)r->o + k->offset;
	const char *text = scalar_text(ev);

	if (k->kind == KEY_TASK_MEMORY && gp_config_task_memory_parse(text, dst))
		return 0;
	if (k->kind == KEY_TASK_PIDS && gp_config_task_pids_parse(text, dst))
		return 0;
	if (k->kind == KEY_TASK_TMP && gp_config_task_tmp_parse(text, dst))
		return 0;
	if (k->kind == KEY_TASK_MEMORY)
		return fail(r, &ev->start_mark, k->name,
			    "\"%s\" is not max, a share of this machine's memory like 50%%, "
			    "or a size from 16M to 1T like 8G",
			    text);
	if (k->kind == KEY_TASK_PIDS)
		return fail(r, &ev->start_mark, k->name,
			    "\"%s\" is not max or a whole number from %d to %d", text,
			    GP_CONFIG_TASK_PIDS_MIN, GP_CONFIG_TASK_PIDS_LIMIT);
	return fail(r, &ev->start_mark, k->name,
		    "\"%s\" is not off or a size from 1M to 1T like 1G", text);
}

static int set_size(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	uint64_t *dst = (uint64_t *)(void *)((char *)r->o + k->offset);

	if (gp_config_log_max_parse(scalar_text(ev), dst))
		return 0;
	return fail(r, &ev->start_mark, k->name,
		    "\"%s\" is not a size from 1M to 1T; give one like 64M or 1G",
		    scalar_text(ev));
}

/* log_total_max, log_free_min: 0 (none), or a size from 1M to 1024T. */
static int set_space(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	uint64_t *dst = (uint64_t *)(void *)((char *)r->o + k->offset);

	if (gp_config_log_space_parse(scalar_text(ev), dst))
		return 0;
	return fail(r, &ev->start_mark, k->name,
		    "\"%s\" is not 0 (none) or a size from 1M to 1024T; give one like 256M or 4G",
		    scalar_text(ev));
}

static int set_bool(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	static const char *const yes[] = {"true", "yes", "on"};
	static const char *const no[] = {"false", "no", "off"};
	bool *dst = (bool *)(void *)((char *)r->o + k->offset);
	const char *s = scalar_text(ev);

	for (size_t i = 0; i < 3; i++) {
		if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
			*dst = !strcasecmp(s, yes[i]);
			return 0;
		}
	}
	return fail(r, &ev->start_mark, k->name,
		    "\"%s\" is not a boolean; write true or false", s);
}

bool gp_config_choice(const char *const *names, const char *value, unsigned *ret)
{
	for (unsigned i = 0; names[i]; i++)
		if (!strcmp(value, names[i])) {
			*ret = i;
			return true;
		}
	return false;
}

static int set_choice(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	unsigned *dst = (unsigned *)(void *)((char *)r->o + k->offset);
	char list[128] = "";
	size_t used = 0;

	if (gp_config_choice(k->choices, scalar_text(ev), dst))
		return 0;
	for (unsigned i = 0; k->choices[i]; i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 k->choices[i]);
	return fail(r, &ev->start_mark, k->name, "\"%s\" is not one of: %s", scalar_text(ev),
		    list);
}

/* policy: a name of the core's policies. */
static int set_policy(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	char list[256];

	if (gp_config_policy_set(r->o, scalar_text(ev), list, sizeof(list)) == 0)
		return 0;
	return fail(r, &ev->start_mark, k->name,
		    "\"%s\" is not a policy; give one of: %s (gpupool policies says what each "
		    "does)",
		    scalar_text(ev), list);
}

bool gp_config_listen_parse(const char *text, struct gp_server_options *o)
{
	const char *colon = strrchr(text, ':');

	if (!colon || !gp_parse_uint(colon + 1, 1, 65535, NULL, &o->metrics_port) ||
	    (strncmp(text, "0.0.0.0:", 8) && strncmp(text, "127.0.0.1:", 10)))
		return false;
	o->metrics_any = text[0] == '0';
	return true;
}

static int set_listen(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	if (gp_config_listen_parse(scalar_text(ev), r->o))
		return 0;
	return fail(r, &ev->start_mark, k->name,
		    "\"%s\" must be 0.0.0.0:PORT or 127.0.0.1:PORT (/metrics alone there, for "
		    "Prometheus)",
		    scalar_text(ev));
}

/* Whether name is a host name (letters, digits, '-' and '.') or a
 * bracketed IPv6 address. */
static bool host_is_name(const char *name, size_t n)
{
	if (n >= 3 && name[0] == '[' && name[n - 1] == ']')
		return strspn(name + 1, "0123456789abcdefABCDEF:.") == n - 2;
	return n > 0 && n < 254 &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") >= n;
}

bool gp_config_hosts_check(const char *list, char *why, size_t why_len)
{
	for (const char *p = list;; p++) {
		size_t n = strcspn(p, ",");

		if (!host_is_name(p, n)) {
			snprintf(why, why_len,
				 "\"%.*s\" is not a host name; give names without ports, "
				 "comma-separated, e.g. gpu1.example.com,gpu1 (an IPv6 address "
				 "in brackets)",
				 (int)(n > 80 ? 80 : n), p);
			return false;
		}
		p += n;
		if (!*p)
			return true;
	}
}

static int set_hosts(struct reader *r, const struct key *k, const yaml_event_t *ev)
{
	char why[256];

	if (!gp_config_hosts_check(scalar_text(ev), why, sizeof(why)))
		return fail(r, &ev->start_mark, k->name, "%s", why);
	return set_path(r, k, ev);
}

/* prices: MODEL: PRICE, one entry. */
static int set_price(struct reader *r, const yaml_event_t *model, const yaml_event_t *value)
{
	const char *m = scalar_text(model);
	char text[GP_PRICE_MODEL_MAX + 64], err[256];
	struct gp_price p;

	if (strchr(m, '=') || strlen(m) >= GP_PRICE_MODEL_MAX)
		return fail(r, &model->start_mark, "prices",
			    "model \"%s\": give a part of the device's name, 1 to %d "
			    "bytes without '='",
			    m, GP_PRICE_MODEL_MAX - 1);
	snprintf(text, sizeof(text), "%s=%.40s", m, scalar_text(value));
	if (strlen(scalar_text(value)) > 40 ||
	    gp_price_parse(text, &p, err, sizeof(err)) < 0)
		return fail(r, &value->start_mark, "prices",
			    "%s: \"%s\" is not a price; give a number from 0 to %.0f "
			    "per hour, e.g. %s: 2.50",
			    m, scalar_text(value), GP_PRICE_LIMIT, m);
	if (gp_config_price_set(r->o, &p) < 0)
		return fail(r, &model->start_mark, "prices",
			    "more than %d prices; give fewer", GP_PRICES_MAX);
	return 0;
}

/* overcommit: MODEL: RATIO, one entry ("*" or all: every device). */
static int set_overcommit(struct reader *r, const yaml_event_t *model,
			  const yaml_event_t *value)
{
	const char *m = scalar_text(model);
	unsigned permille;
	int e;

	if (!strcmp(m, "*") || !strcasecmp(m, "all"))
		m = "";
	if (!gp_config_ratio_parse(scalar_text(value), &permille))
		return fail(r, &value->start_mark, "overcommit",
			    "%s: \"%s\" is not a ratio from 1.0 to 1.5; give one in that "
			    "range (compute only: memory is never overcommitted)",
			    scalar_text(model), scalar_text(value));
	e = gp_config_overcommit_set(r->o, m, permille);
	if (e == -ENOSPC)
		return fail(r, &model->start_mark, "overcommit",
			    "more than %d models; give fewer", GP_LOOP_OVERCOMMITS_MAX);
	if (e < 0)
		return fail(r, &model->start_mark, "overcommit",
			    "model \"%s\" is too long; give a shorter part of the "
			    "device's name",
			    m);
	return 0;
}

/* One MODEL: VALUE pair of a prices or overcommit mapping, its key read. */
static int model_entry(struct reader *r, const struct key *k, const yaml_event_t *model)
{
	yaml_event_t value;
	int e = next_scalar(r, &value, k->name,
			    k->kind == KEY_PRICES ? "a price per hour, e.g. T4: 0.35"
						  : "a ratio, e.g. T4: 1.5");

	if (e < 0)
		return e;
	if (strlen(scalar_text(model)) != model->data.scalar.length)
		e = fail(r, &model->start_mark, k->name, "a model with a NUL byte");
	else
		e = k->kind == KEY_PRICES ? set_price(r, model, &value)
					  : set_overcommit(r, model, &value);
	yaml_event_delete(&value);
	return e;
}

/* prices or overcommit: a mapping of models. */
static int set_models(struct reader *r, const struct key *k, yaml_event_t *start)
{
	const char *example = k->kind == KEY_PRICES ? "prices: {A100: 2.50, T4: 0.35}"
						    : "overcommit: {T4: 1.5, \"*\": 1.0}";
	yaml_event_t model;
	bool end = false;
	int e = 0;

	if (start->type != YAML_MAPPING_START_EVENT)
		return fail(r, &start->start_mark, k->name,
			    "is %s; give a mapping of device models, e.g. %s",
			    event_what(start), example);
	while (!end && (e = next(r, &model)) == 0) {
		end = model.type == YAML_MAPPING_END_EVENT;
		if (!end && (model.type != YAML_SCALAR_EVENT || scalar_is_null(&model)))
			e = fail(r, &model.start_mark, k->name,
				 "a model is %s; give a part of a device's name, e.g. %s",
				 event_what(&model), example);
		else if (!end)
			e = model_entry(r, k, &model);
		yaml_event_delete(&model);
		if (e < 0)
			break;
	}
	return e;
}

/* The value of key k, from its first event. */
static int set_value(struct reader *r, const struct key *k)
{
	static const char *const want[] = {
		[KEY_PATH] = "a path", [KEY_UINT] = "a whole number", [KEY_BOOL] = "true or false",
		[KEY_CHOICE] = "one of its words",
		[KEY_SIZE] = "a size, like 64M",
		[KEY_SPACE] = "a size, like 4G, or 0",
		[KEY_POLICY] = "a policy's name (gpupool policies lists them)",
		[KEY_LISTEN] = "ADDR:PORT",
		[KEY_HOSTS] = "host names, comma-separated",
		[KEY_UID_BASE] = "auto or a whole number",
		[KEY_TASK_MEMORY] = "max, a share like 50% or a size like 8G",
		[KEY_TASK_PIDS] = "max or a whole number",
		[KEY_TASK_TMP] = "off or a size like 1G",
	};
	yaml_event_t ev;
	int e;

	if (k->kind == KEY_PRICES || k->kind == KEY_OVERCOMMIT) {
		if ((e = next(r, &ev)) < 0)
			return e;
		e = set_models(r, k, &ev);
	} else {
		if ((e = next_scalar(r, &ev, k->name, want[k->kind])) < 0)
			return e;
		e = k->kind == KEY_PATH	    ? set_path(r, k, &ev)
		    : k->kind == KEY_UINT   ? set_uint(r, k, &ev)
		    : k->kind == KEY_CHOICE ? set_choice(r, k, &ev)
		    : k->kind == KEY_SIZE   ? set_size(r, k, &ev)
		    : k->kind == KEY_SPACE  ? set_space(r, k, &ev)
		    : k->kind == KEY_POLICY ? set_policy(r, k, &ev)
		    : k->kind == KEY_LISTEN ? set_listen(r, k, &ev)
		    : k->kind == KEY_HOSTS  ? set_hosts(r, k, &ev)
		    : k->kind == KEY_UID_BASE ? set_uid_base(r, k, &ev)
		    : k->kind >= KEY_TASK_MEMORY ? set_task_limit(r, k, &ev)
					    : set_bool(r, k, &ev);
	}
	yaml_event_delete(&ev);
	return e;
}

/* ---- the document ---------------------------------------------------------------- */

static const struct key *key_find(const char *name)
{
	for (size_t i = 0; i < KEYS; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* The keys' names, comma-separated, in the table's order. */
static void key_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < KEYS && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", keys[i].name);
}

/* One key of the top mapping, and its value. */
static int option_entry(struct reader *r, const yaml_event_t *ev)
{
	const char *name = scalar_text(ev);
	const struct key *k = key_find(name);
	char list[1024];

	if (!k) {
		key_list(list, sizeof(list));
		return fail(r, &ev->start_mark, name,
			    "unknown; the keys are %s (the long options, '_' for '-')", list);
	}
	if (r->seen[k - keys])
		return fail(r, &ev->start_mark, name, "given twice; keep one");
	r->seen[k - keys] = true;
	return set_value(r, k);
}

/* The top mapping, its start read: option keys to values. */
static int options(struct reader *r)
{
	yaml_event_t ev;
	bool end = false;
	int e = 0;

	while (!end && (e = next(r, &ev)) == 0) {
		end = ev.type == YAML_MAPPING_END_EVENT;
		if (!end && ev.type != YAML_SCALAR_EVENT)
			e = fail(r, &ev.start_mark, NULL,
				 "a key is %s; keys are option names such as db", event_what(&ev));
		else if (!end && strlen(scalar_text(&ev)) != ev.data.scalar.length)
			e = fail(r, &ev.start_mark, NULL,
				 "a key with a NUL byte; keys are option names such as db");
		else if (!end)
			e = option_entry(r, &ev);
		yaml_event_delete(&ev);
		if (e < 0)
			break;
	}
	return e;
}

/* The next event, which must be of type `type`; it is deleted. */
static int expect(struct reader *r, yaml_event_type_t type, const char *what)
{
	yaml_event_t ev;
	int e = next(r, &ev);

	if (e < 0)
		return e;
	if (ev.type != type)
		e = fail(r, &ev.start_mark, NULL, "%s", what);
	yaml_event_delete(&ev);
	return e;
}

/* A document's content: a mapping of options, or nothing. */
static int document(struct reader *r)
{
	yaml_event_t ev;
	int e = next(r, &ev);

	if (e < 0)
		return e;
	if (ev.type == YAML_MAPPING_START_EVENT)
		e = options(r);
	else if (ev.type != YAML_SCALAR_EVENT || !scalar_is_null(&ev))
		e = fail(r, &ev.start_mark, NULL,
			 "the file is %s; it must be a mapping of options, e.g. "
			 "\"db: /var/lib/gpupool/gpupool.db\"",
			 event_what(&ev));
	yaml_event_delete(&ev);
	if (e == 0)
		e = expect(r, YAML_DOCUMENT_END_EVENT, "one document only; remove the rest");
	return e;
}

static int stream(struct reader *r)
{
	yaml_event_t ev;
	int e = expect(r, YAML_STREAM_START_EVENT, "not a YAML stream");

	if (e < 0 || (e = next(r, &ev)) < 0)
		return e;
	if (ev.type == YAML_DOCUMENT_START_EVENT)
		e = document(r);
	else if (ev.type != YAML_STREAM_END_EVENT)
		e = fail(r, &ev.start_mark, NULL, "not a YAML document");
	if (e == 0 && ev.type == YAML_DOCUMENT_START_EVENT)
		e = expect(r, YAML_STREAM_END_EVENT, "one document only; remove the rest");
	yaml_event_delete(&ev);
	return e;
}

int gp_config_load(const char *path, struct gp_server_options *o, char *err,
		   size_t err_len)
{
	struct reader r = {.path = path, .o = o, .err = err, .err_len = err_len};
	FILE *f = fopen(path, "re");
	int e;

	if (!f) {
		e = -errno;
		snprintf(err, err_len, "%s: cannot read the configuration: %s", path,
			 strerror(-e));
		return e;
	}
	if (!yaml_parser_initialize(&r.parser)) {
		fclose(f);
		snprintf(err, err_len, "%s: out of memory", path);
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&r.parser, f);
	e = stream(&r);
	yaml_parser_delete(&r.parser);
	fclose(f);
	return e;
}
