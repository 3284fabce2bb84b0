/* cmd-sim-history.c — `gpupool sim --history`: what-if on the pool's own
 * tasks (issue 16; docs/operations.md). Reads a period's tasks, their
 * usage records and the pool's cards through the server's API (GET
 * /v1/tasks, /v1/usage, /v1/devices; /v1/advice for --advised), replays
 * them in time (sim/history.h) twice — as recorded, and under a variant:
 * another policy, other cards, other slices per template or task name —
 * and prints both side by side with their ratios, as a table or JSON.
 *
 * A task's run is the time its usage records cover, per device (ended −
 * started where it has none; until now for a running one); its work the
 * device time they say it used, its peak the most they say it held. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/month.h"
#include "base/parse.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "core/policy.h"
#include "server/bill.h"
#include "shim/region.h"
#include "sim/history.h"

#define CMD		"sim --history"
#define SPECS_MAX	64 /* MODEL=N terms of --cards and --add-cards */
#define OVERRIDES_SHOWN 6  /* on the table's line; -o json has them all */
#define CARDS_MAX	4096
#define CARD_COUNT_MAX	1024
#define TASK_PAGE	"2000"
#define USAGE_PAGE	"20000"
#define PATH_LEN	256

/* MODEL=N: a count of cards of a model (--cards, --add-cards), or a
 * model's memory (--card-mem). */
struct card_spec {
	char model[GP_HISTORY_NAME_MAX];
	long long n;
};

struct hist_options {
	const char *since, *month;
	const char *policy;	     /* the variant's; NULL: as recorded */
	const char *recorded_policy; /* the server's --policy */
	struct card_spec cards[SPECS_MAX], add[SPECS_MAX], mem[SPECS_MAX];
	int n_cards, n_add, n_mem;
	bool cards_given, advised;
	struct gp_history_override *over; /* the given ones, then the advice's */
	int n_over, cap_over;
	struct gp_price prices[GP_PRICES_MAX];
	int n_prices;
};

static void history_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool sim --history [--since DATE | --month YYYY-MM]\n"
		"                   [--policy NAME] [--recorded-policy NAME]\n"
		"                   [--cards MODEL=N,...] [--add-cards MODEL=N,...]\n"
		"                   [--card-mem MODEL=SIZE]... [--template "
		"NAME=MEM,PCT]...\n"
		"                   [--task NAME[@TENANT]=MEM,PCT]... [--advised]\n"
		"                   [--price MODEL=PRICE]... [-o table|json]\n"
		"\n"
		"Replays the tasks the pool ran in a period, in time, as recorded and "
		"under a\n"
		"variant, and prints both side by side: makespan, allocated and "
		"physical\n"
		"utilization of the pool, queue waits, tasks never placed, GPU-hours and "
		"the\n"
		"bill. A task keeps its recorded run unless the variant's share is below "
		"the\n"
		"share it used: then its work (device time used) stretches it; one "
		"whose\n"
		"memory is below its recorded peak would fail, and is counted so and\n"
		"replayed as recorded (docs/operations.md).\n"
		"\n"
		"  --since DATE       tasks submitted since YYYY-MM-DD[THH:MM[:SS]] "
		"(UTC)\n"
		"  --month YYYY-MM    tasks submitted in that month (default: this one)\n"
		"  --policy NAME      the variant's placement policy (`gpupool "
		"policies`)\n"
		"  --recorded-policy NAME  the server's --policy (default: default)\n"
		"  --cards MODEL=N,...     the variant's cards instead of the pool's: N\n"
		"                     of each model (a part of its name, as the pool has "
		"it)\n"
		"  --add-cards MODEL=N,... more cards (N below 0: fewer)\n"
		"  --card-mem MODEL=SIZE   memory of a model the pool has no card of "
		"(80G)\n"
		"  --template NAME=MEM,PCT  the slice of a template's tasks (MEM in MiB "
		"or\n"
		"                     a size like 4G; either may be left empty: kept)\n"
		"  --task NAME[@TENANT]=MEM,PCT  the slice of the tasks of no template "
		"so\n"
		"                     named (of that tenant)\n"
		"  --advised          the slices `gpupool advise` proposes (GET "
		"/v1/advice)\n"
		"  --price MODEL=PRICE     a model's price per GPU-hour, for the bill\n"
		"\n"
		"The server is found, and the caller known, as for every client command\n"
		"(--socket PATH or http://HOST:PORT, --token, --token-file); a tenant\n"
		"replays its own tasks.\n");
}

/* ---- options ------------------------------------------------------------ */

static int bad(const char *flag, const char *value, const char *what)
{
	fprintf(stderr, "gpupool " CMD ": --%s \"%s\" %s\n", flag, value, what);
	return -EINVAL;
}

/* "MODEL=N" into s; n within [lo, hi]. */
static bool spec_parse(const char *text, size_t len, long long lo, long long hi,
		       struct card_spec *s)
{
	const char *eq = memchr(text, '=', len);
	char number[24], *end;

	if (!eq || eq == text || (size_t)(eq - text) >= sizeof(s->model) ||
	    len - (size_t)(eq - text) - 1 >= sizeof(number) || eq + 1 == text + len)
		return false;
	snprintf(s->model, sizeof(s->model), "%.*s", (int)(eq - text), text);
	snprintf(number, sizeof(number), "%.*s", (int)(len - (size_t)(eq - text) - 1),
		 eq + 1);
	errno = 0;
	s->n = strtoll(number, &end, 10);
	return !*end && !errno && s->n >= lo && s->n <= hi;
}

/* A comma list of MODEL=N terms, added to list. */
static int specs_add(const char *flag, const char *value, long long lo,
		     struct card_spec *list, int *n)
{
	for (const char *p = value; *p;) {
		size_t len = strcspn(p, ",");

		if (*n == SPECS_MAX || !spec_parse(p, len, lo, CARD_COUNT_MAX, &list[*n]))
			return bad(
				flag, value,
				lo < 0 ? "must be MODEL=N,... with N from -1024 to 1024"
				       : "must be MODEL=N,... with N from 0 to 1024");
		(*n)++;
		p += len + (p[len] == ',');
	}
	return 0;
}

static int card_mem_add(struct hist_options *o, const char *value)
{
	const char *eq = strchr(value, '=');
	struct card_spec *s = &o->mem[o->n_mem];
	uint64_t mib;

	if (o->n_mem == SPECS_MAX || !eq || eq == value ||
	    (size_t)(eq - value) >= sizeof(s->model))
		return bad("card-mem", value, "must be MODEL=SIZE, e.g. H100=80G");
	snprintf(s->model, sizeof(s->model), "%.*s", (int)(eq - value), value);
	if (gp_client_mib(CMD, "card-mem", eq + 1, false, &mib) < 0)
		return -EINVAL;
	s->n = (long long)mib;
	o->n_mem++;
	return 0;
}

/* MEM: MiB, or a size with its unit; "" keeps it (0). */
static bool slice_mem(const char *text, uint32_t *ret)
{
	uint64_t bytes;

	if (!*text) {
		*ret = 0;
		return true;
	}
	if (gp_parse_size_in(text, GP_MiB, &bytes) < 0 || bytes < GP_MiB ||
	    bytes / GP_MiB > 16777216)
		return false;
	*ret = (uint32_t)((bytes + GP_MiB - 1) / GP_MiB);
	return true;
}

/* "MEM,PCT" into x (each may be empty: kept). */
static bool slice_parse(const char *text, struct gp_history_override *x)
{
	const char *comma = strchr(text, ',');
	char mem[32];

	if (!comma || (size_t)(comma - text) >= sizeof(mem))
		return false;
	snprintf(mem, sizeof(mem), "%.*s", (int)(comma - text), text);
	if (!slice_mem(mem, &x->mem_mib))
		return false;
	if (!comma[1]) {
		x->compute_pct = 0;
		return x->mem_mib > 0;
	}
	return gp_parse_uint(comma + 1, 1, 100, "%", &x->compute_pct);
}

/* Room for one more override at the end of o's; NULL when out of memory. */
static struct gp_history_override *override_slot(struct hist_options *o)
{
	if (o->n_over == o->cap_over) {
		int cap = o->cap_over ? 2 * o->cap_over : 16;
		struct gp_history_override *grown =
			realloc(o->over, (size_t)cap * sizeof(*grown));

		if (!grown) {
			fprintf(stderr, "gpupool " CMD ": out of memory\n");
			return NULL;
		}
		o->over = grown;
		o->cap_over = cap;
	}
	return &o->over[o->n_over];
}

/* --template NAME=MEM,PCT and --task NAME[@TENANT]=MEM,PCT. */
static int override_add(struct hist_options *o, bool is_template, const char *value)
{
	struct gp_history_override *x = override_slot(o);
	const char *eq = strchr(value, '=');
	const char *at =
		is_template ? NULL : memchr(value, '@', eq ? (size_t)(eq - value) : 0);
	const char *name_end = at ? at : eq;

	if (!x)
		return -ENOMEM;
	if (!eq || name_end == value || (size_t)(name_end - value) >= sizeof(x->name) ||
	    (at && (size_t)(eq - at - 1) >= sizeof(x->tenant)))
		return bad(is_template ? "template" : "task", value,
			   is_template ? "must be NAME=MEM,PCT, e.g. t4-half=1280,25"
				       : "must be NAME[@TENANT]=MEM,PCT, e.g. "
					 "infer@vision=2G,30");
	*x = (struct gp_history_override){.is_template = is_template};
	snprintf(x->name, sizeof(x->name), "%.*s", (int)(name_end - value), value);
	if (at)
		snprintf(x->tenant, sizeof(x->tenant), "%.*s", (int)(eq - at - 1),
			 at + 1);
	if (!slice_parse(eq + 1, x))
		return bad(
			is_template ? "template" : "task", value,
			"needs MEM,PCT: MEM in MiB or a size like 4G, PCT from 1 to 100; "
			"either may be empty to keep it, not both");
	o->n_over++;
	return 0;
}

static int price_add(struct hist_options *o, const char *value)
{
	char err[160];

	if (o->n_prices == GP_PRICES_MAX)
		return bad("price", value, "is one too many (at most 32 prices)");
	if (gp_price_parse(value, &o->prices[o->n_prices], err, sizeof(err)) < 0) {
		fprintf(stderr, "gpupool " CMD ": --price %s: %s\n", value, err);
		return -EINVAL;
	}
	o->n_prices++;
	return 0;
}

static int policy_check(const char *flag, const char *name)
{
	for (size_t i = 0; gp_policy_name_at(i); i++)
		if (!strcmp(gp_policy_name_at(i), name))
			return 0;
	return bad(flag, name, "is no policy; `gpupool policies` lists them");
}

static int history_option(void *ctx, int c, const char *value)
{
	struct hist_options *o = ctx;
	int64_t from, to;

	switch (c) {
	case 'H': return 0;
	case 's': o->since = value; return 0;
	case 'm':
		o->month = value;
		return gp_month_parse(value, &from, &to) == 0
			       ? 0
			       : bad("month", value, "must be YYYY-MM, e.g. 2026-11");
	case 'P': o->policy = value; return policy_check("policy", value);
	case 'R':
		o->recorded_policy = value;
		return policy_check("recorded-policy", value);
	case 'c':
		o->cards_given = true;
		return specs_add("cards", value, 0, o->cards, &o->n_cards);
	case 'a':
		return specs_add("add-cards", value, -CARD_COUNT_MAX, o->add, &o->n_add);
	case 'M': return card_mem_add(o, value);
	case 'T': return override_add(o, true, value);
	case 'K': return override_add(o, false, value);
	case 'A': o->advised = true; return 0;
	case 'p': return price_add(o, value);
	}
	return -EINVAL;
}

/* ---- the period --------------------------------------------------------- */

struct period {
	int64_t from_ms, to_ms;	   /* [from, to); to INT64_MAX: until now */
	char month[GP_MONTH_TEXT]; /* the month from_ms is in (the advice's) */
	char label[48];		   /* "2026-12", "since 2026-12-03 10:00 UTC" */
};

/* "YYYY-MM-DD[THH:MM[:SS]][Z]" (UTC) in unix ms. */
static bool date_parse(const char *text, int64_t *ret_ms)
{
	static const char *const forms[] = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M",
					    "%Y-%m-%d"};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct tm tm = {0};
		const char *end = strptime(text, forms[i], &tm);

		if (end && (!*end || !strcmp(end, "Z"))) {
			*ret_ms = (int64_t)timegm(&tm) * 1000;
			return true;
		}
	}
	return false;
}

static int period_of(const struct hist_options *o, struct period *p)
{
	if (o->since && o->month) {
		fprintf(stderr, "gpupool " CMD ": give --since or --month, not both\n");
		return -EINVAL;
	}
	p->to_ms = INT64_MAX;
	if (o->since && !date_parse(o->since, &p->from_ms))
		return bad("since", o->since,
			   "must be a date, YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC)");
	if (o->month)
		gp_month_parse(o->month, &p->from_ms, &p->to_ms);
	if (!o->since && !o->month)
		gp_month_bounds((int64_t)time(NULL) * 1000, &p->from_ms, &p->to_ms);
	gp_month_format(p->from_ms, p->month);
	snprintf(p->label, sizeof(p->label), "%s", p->month);
	if (o->since) {
		time_t t = (time_t)(p->from_ms / 1000);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(p->label, sizeof(p->label), "since %Y-%m-%d %H:%M UTC", &tm);
	}
	return 0;
}

/* ---- reading the history ------------------------------------------------ */

/* A task as read, with what its records add up to. */
struct hist_entry {
	struct gp_history_task t;
	int64_t started_ms, ended_ms; /* 0: not yet */
	int64_t held_ms;	      /* its records' time, all devices */
	bool records;
};

struct history {
	struct hist_entry *entry; /* by id */
	size_t n, cap;
	size_t never_started;
	struct gp_history_card *card; /* the pool's, as recorded */
	size_t cards;
};

/* An RFC 3339 time of the server's in unix ms; 0 for null. */
static int64_t time_ms(json_t *v)
{
	int64_t ms = 0;

	return json_is_string(v) && date_parse(json_string_value(v), &ms) ? ms : 0;
}

static void copy(char *to, size_t size, json_t *obj, const char *key)
{
	snprintf(to, size, "%s", gp_client_str(obj, key));
}

static struct gp_history_task task_of(json_t *j)
{
	struct gp_history_task t = {
		.id = gp_client_int(j, "id"),
		.arrival_ms = time_ms(json_object_get(j, "created")),
		.mem_mib = (uint32_t)gp_client_int(j, "mem_mib"),
		.compute_pct = (unsigned)gp_client_int(j, "compute_pct"),
		.devices = (unsigned)gp_client_int(j, "devices"),
		.whole = json_is_true(json_object_get(j, "whole")) ||
			 json_is_true(json_object_get(j, "exclusive")),
		.priority = (unsigned)gp_client_int(j, "priority"),
	};

	copy(t.model, sizeof(t.model), j, "model");
	copy(t.template_name, sizeof(t.template_name), j, "template");
	copy(t.name, sizeof(t.name), j, "name");
	copy(t.tenant, sizeof(t.tenant), j, "tenant");
	return t;
}

/* Keeps task j when it was submitted in the period and ran. */
static int task_take(struct history *h, const struct period *p, json_t *j)
{
	struct hist_entry e = {.t = task_of(j)};

	if (e.t.arrival_ms < p->from_ms || e.t.arrival_ms >= p->to_ms)
		return 0;
	e.started_ms = time_ms(json_object_get(j, "started"));
	e.ended_ms = time_ms(json_object_get(j, "ended"));
	if (!e.started_ms) {
		h->never_started++;
		return 0;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 256;
		struct hist_entry *grown = realloc(h->entry, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		h->entry = grown;
		h->cap = cap;
	}
	h->entry[h->n++] = e;
	return 0;
}

/* Every page of GET path (with ?after=), each given to take; an exit
 * status. */
static int pages_read(const struct gp_client_flags *f, const char *path, const char *list,
		      int (*take)(void *ctx, json_t *item), void *ctx)
{
	json_int_t after = 0;

	for (;;) {
		char page[PATH_LEN], number[24];
		json_t *reply = NULL, *item, *next;
		int status, err = 0;
		size_t i;

		snprintf(page, sizeof(page), "%s", path);
		snprintf(number, sizeof(number), "%lld", (long long)after);
		gp_client_query_add(page, sizeof(page), "after", number);
		status = gp_client_request(f, CMD, "GET", page, NULL, &reply);
		if (status != GP_EXIT_OK)
			return status;
		json_array_foreach(json_object_get(reply, list), i, item)
		{
			if (err == 0)
				err = take(ctx, item);
		}
		next = json_object_get(reply, "next_after");
		after = json_integer_value(next);
		json_decref(reply);
		if (err < 0) {
			fprintf(stderr, "gpupool " CMD ": %s\n", strerror(-err));
			return GP_EXIT_FAIL;
		}
		if (!json_is_integer(next))
			return GP_EXIT_OK;
	}
}

struct tasks_ctx {
	struct history *h;
	const struct period *p;
};

static int take_task(void *ctx, json_t *item)
{
	struct tasks_ctx *c = ctx;

	return task_take(c->h, c->p, item);
}

static struct hist_entry *entry_of(struct history *h, int64_t id)
{
	size_t lo = 0, hi = h->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->entry[mid].t.id == id)
			return &h->entry[mid];
		if (h->entry[mid].t.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int take_record(void *ctx, json_t *rec)
{
	struct hist_entry *e = entry_of(ctx, gp_client_int(rec, "task"));
	json_int_t peak = gp_client_int(rec, "mem_peak_mib");

	if (!e)
		return 0;
	e->records = true;
	e->held_ms += gp_client_int(rec, "end_ms") - gp_client_int(rec, "start_ms");
	e->t.used_ms += gp_client_int(rec, "used_ms");
	if (peak > e->t.mem_peak_mib)
		e->t.mem_peak_mib = (uint32_t)peak;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;

	return (x->t.id > y->t.id) - (x->t.id < y->t.id);
}

/* Each task's run: its records' time per device, else ended (or now)
 * less started. */
static void runs_set(struct history *h)
{
	int64_t now = (int64_t)time(NULL) * 1000;

	for (size_t i = 0; i < h->n; i++) {
		struct hist_entry *e = &h->entry[i];
		int64_t end = e->ended_ms ? e->ended_ms : now;

		if (e->t.devices < 1)
			e->t.devices = 1;
		e->t.run_ms =
			e->records ? e->held_ms / e->t.devices : end - e->started_ms;
		if (e->t.run_ms < 0)
			e->t.run_ms = 0;
	}
}

static int history_read(const struct gp_client_flags *f, const struct period *p,
			struct history *h)
{
	struct tasks_ctx tc = {h, p};
	char path[PATH_LEN], since[24];
	int status = pages_read(f, "/v1/tasks?limit=" TASK_PAGE, "tasks", take_task, &tc);

	if (status != GP_EXIT_OK || h->n == 0)
		return status;
	qsort(h->entry, h->n, sizeof(*h->entry), by_id);
	snprintf(path, sizeof(path), "/v1/usage?limit=" USAGE_PAGE);
	snprintf(since, sizeof(since), "%lld", (long long)p->from_ms);
	gp_client_query_add(path, sizeof(path), "since_ms", since);
	status = pages_read(f, path, "usage", take_record, h);
	if (status == GP_EXIT_OK)
		runs_set(h);
	return status;
}

/* The pool's cards (GET /v1/devices): those the scheduler uses. */
static int pool_read(const struct gp_client_flags *f, struct history *h)
{
	json_t *reply = NULL, *d;
	int status = gp_client_request(f, CMD, "GET", "/v1/devices", NULL, &reply);
	json_t *list = json_object_get(reply, "devices");
	size_t i;

	if (status != GP_EXIT_OK)
		return status;
	h->card = calloc(json_array_size(list) + 1, sizeof(*h->card));
	if (!h->card) {
		json_decref(reply);
		return GP_EXIT_FAIL;
	}
	json_array_foreach(list, i, d)
	{
		struct gp_history_card *c = &h->card[h->cards];

		if (json_is_false(json_object_get(d, "compatible")))
			continue;
		copy(c->model, sizeof(c->model), d, "name");
		c->mem_mib = (uint32_t)gp_client_int(d, "memory_total_mib");
		c->node = (uint32_t)(h->cards++ / GP_NODE_DEVICES_MAX);
	}
	json_decref(reply);
	return GP_EXIT_OK;
}

/* ---- the variant's cards ------------------------------------------------ */

struct pool {
	struct gp_history_card card[CARDS_MAX];
	size_t cards;
};

static int card_error(const char *flag, const struct card_spec *s, const char *why)
{
	fprintf(stderr, "gpupool " CMD ": --%s %s=%lld: %s\n", flag, s->model, s->n, why);
	return -EINVAL;
}

/* The pool's card whose model is named `name` (all of it, else a part of
 * it); NULL when none is, or (*ret_ambiguous) when a part names several. */
static const struct gp_history_card *card_named(const struct history *h, const char *name,
						bool *ret_ambiguous)
{
	const struct gp_history_card *found = NULL;

	*ret_ambiguous = false;
	for (size_t i = 0; i < h->cards; i++)
		if (!strcasecmp(h->card[i].model, name))
			return &h->card[i];
	for (size_t i = 0; i < h->cards; i++) {
		if (!strcasestr(h->card[i].model, name))
			continue;
		if (found && strcmp(found->model, h->card[i].model)) {
			*ret_ambiguous = true;
			return NULL;
		}
		found = &h->card[i];
	}
	return found;
}

/* The card a spec's MODEL names: one of the pool's, or a new model with
 * --card-mem's memory (which also sets the memory of one of the pool's). */
static int card_resolve(const struct hist_options *o, const struct history *h,
			const char *flag, const struct card_spec *s,
			struct gp_history_card *ret)
{
	bool ambiguous;
	const struct gp_history_card *found = card_named(h, s->model, &ambiguous);

	if (ambiguous)
		return card_error(flag, s,
				  "more than one model of the pool answers to it; "
				  "give the whole name, as `gpupool device ls` shows it");
	*ret = found ? *found : (struct gp_history_card){0};
	if (!found)
		snprintf(ret->model, sizeof(ret->model), "%s", s->model);
	for (int i = 0; i < o->n_mem; i++)
		if (!strcasecmp(o->mem[i].model, s->model))
			ret->mem_mib = (uint32_t)o->mem[i].n;
	if (!ret->mem_mib)
		return card_error(flag, s,
				  "the pool has no card of this model to take its "
				  "memory from; give it with --card-mem MODEL=SIZE, "
				  "e.g. --card-mem H100=80G");
	return 0;
}

static int cards_append(struct pool *v, const struct gp_history_card *c, long long n)
{
	for (long long i = 0; i < n; i++) {
		if (v->cards == CARDS_MAX) {
			fprintf(stderr,
				"gpupool " CMD ": more than %d cards; give fewer\n",
				CARDS_MAX);
			return -EINVAL;
		}
		v->card[v->cards++] = *c;
	}
	return 0;
}

/* Removes n cards of c's model, the last first. */
static int cards_remove(struct pool *v, const struct card_spec *s,
			const struct gp_history_card *c, long long n)
{
	for (size_t i = v->cards; i-- > 0 && n > 0;) {
		if (strcmp(v->card[i].model, c->model))
			continue;
		memmove(&v->card[i], &v->card[i + 1],
			(v->cards - i - 1) * sizeof(*v->card));
		v->cards--;
		n--;
	}
	return n ? card_error("add-cards", s, "the pool has fewer cards of this model")
		 : 0;
}

static int pool_make(const struct hist_options *o, const struct history *h,
		     struct pool *v)
{
	int err = 0;

	v->cards = 0;
	for (size_t i = 0; !o->cards_given && i < h->cards && err == 0; i++)
		err = cards_append(v, &h->card[i], 1);
	for (int i = 0; err == 0 && i < o->n_cards; i++) {
		struct gp_history_card c;

		err = card_resolve(o, h, "cards", &o->cards[i], &c);
		if (err == 0)
			err = cards_append(v, &c, o->cards[i].n);
	}
	for (int i = 0; err == 0 && i < o->n_add; i++) {
		struct gp_history_card c;

		err = card_resolve(o, h, "add-cards", &o->add[i], &c);
		if (err == 0)
			err = o->add[i].n >= 0
				      ? cards_append(v, &c, o->add[i].n)
				      : cards_remove(v, &o->add[i], &c, -o->add[i].n);
	}
	for (size_t i = 0; i < v->cards; i++)
		v->card[i].node = (uint32_t)(i / GP_NODE_DEVICES_MAX);
	if (err == 0 && v->cards == 0) {
		fprintf(stderr,
			"gpupool " CMD ": the variant's pool has no cards; give some "
			"with --cards MODEL=N\n");
		err = -EINVAL;
	}
	return err;
}

/* ---- the advice --------------------------------------------------------- */

/* One proposal of the advice as an override; -ENOMEM. */
static int advice_take(struct hist_options *o, json_t *a)
{
	json_int_t pct = gp_client_int(a, "compute_proposed_pct");
	struct gp_history_override *x = override_slot(o);

	if (!x)
		return -ENOMEM;
	if (pct < 1 || pct > 100)
		return 0;
	*x = (struct gp_history_override){
		.is_template = !strcmp(gp_client_str(a, "kind"), "template"),
		.mem_mib =
			(uint32_t)gp_client_int(a, "mem_proposed_mib"), /* null: kept */
		.compute_pct = (unsigned)pct};
	copy(x->name, sizeof(x->name), a, "name");
	copy(x->tenant, sizeof(x->tenant), a, "tenant");
	o->n_over++;
	return 0;
}

/* --advised: the proposals of GET /v1/advice for the period's month, after
 * the slices given by hand (which win). */
static int advice_read(const struct gp_client_flags *f, const struct period *p,
		       struct hist_options *o)
{
	char path[PATH_LEN] = "/v1/advice";
	json_t *reply = NULL, *a;
	size_t i;
	int status, err = 0;

	gp_client_query_add(path, sizeof(path), "month", p->month);
	status = gp_client_request(f, CMD, "GET", path, NULL, &reply);
	if (status != GP_EXIT_OK)
		return status;
	json_array_foreach(json_object_get(reply, "advice"), i, a)
	{
		if (err == 0)
			err = advice_take(o, a);
	}
	json_decref(reply);
	return err < 0 ? GP_EXIT_FAIL : GP_EXIT_OK;
}

/* ---- the figures -------------------------------------------------------- */

struct run {
	const char *policy;
	const struct gp_history_card *card;
	size_t cards;
	const struct gp_history_override *over;
	int n_over;
	struct gp_history_result res;
	double cost;
};

static double price_of(const struct hist_options *o, const char *model, bool *ret_priced)
{
	const struct gp_price *p = gp_price_find(o->prices, o->n_prices, model);

	*ret_priced = p != NULL;
	return p ? p->per_hour : 0;
}

static int run_replay(const struct hist_options *o, const struct history *h,
		      struct gp_history_task *tasks, struct run *r)
{
	struct gp_history_setup s = {.policy = r->policy,
				     .card = r->card,
				     .cards = r->cards,
				     .max_tasks = GP_REGION_TASKS,
				     .override = r->over,
				     .overrides = (size_t)r->n_over};
	int err = gp_history_run(tasks, h->n, &s, &r->res, NULL);
	bool priced;

	if (err < 0) {
		fprintf(stderr, "gpupool " CMD ": the replay failed: %s\n",
			strerror(-err));
		return GP_EXIT_FAIL;
	}
	for (int m = 0; m < r->res.models; m++)
		r->cost += r->res.model[m].gpu_hours *
			   price_of(o, r->res.model[m].model, &priced);
	return GP_EXIT_OK;
}

static json_t *ratio_json(double variant, double recorded)
{
	return recorded != 0 ? json_real(variant / recorded) : json_null();
}

static json_t *models_json(const struct hist_options *o, const struct run *r)
{
	json_t *list = json_array();

	for (int m = 0; m < r->res.models; m++) {
		const struct gp_history_model *x = &r->res.model[m];
		bool priced;
		double price = price_of(o, x->model, &priced);

		json_array_append_new(
			list, json_pack("{s:s, s:i, s:f, s:f, s:b, s:f}", "model",
					x->model, "cards", (int)x->cards, "gpu_hours",
					x->gpu_hours, "price_per_hour", price, "priced",
					priced, "cost", x->gpu_hours * price));
	}
	return list;
}

static json_t *overrides_json(const struct run *r)
{
	json_t *list = json_array();

	for (int i = 0; i < r->n_over; i++) {
		const struct gp_history_override *x = &r->over[i];

		json_array_append_new(list,
				      json_pack("{s:s, s:s, s:s?, s:I, s:i}", "kind",
						x->is_template ? "template" : "task",
						"name", x->name, "tenant",
						x->tenant[0] ? x->tenant : NULL,
						"mem_mib", (json_int_t)x->mem_mib,
						"compute_pct", (int)x->compute_pct));
	}
	return list;
}

static json_t *run_json(const struct hist_options *o, const struct run *r)
{
	const struct gp_history_result *x = &r->res;
	json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "policy", r->policy,
			      "cards", (json_int_t)x->cards, "tasks",
			      (json_int_t)x->tasks, "placed", (json_int_t)x->placed,
			      "never_placed", (json_int_t)x->never_placed, "would_fail",
			      (json_int_t)x->would_fail, "stretched",
			      (json_int_t)x->stretched);

	json_object_update_new(
		j,
		json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "makespan_s",
			  x->makespan_s, "alloc_pct", x->alloc_pct, "util_pct",
			  x->util_pct, "wait_p50_s", x->wait_p50_s, "wait_p99_s",
			  x->wait_p99_s, "wait_max_s", x->wait_max_s, "wait_mean_s",
			  x->wait_mean_s, "gpu_hours", x->gpu_hours, "cost", r->cost));
	json_object_set_new(j, "models", models_json(o, r));
	json_object_set_new(j, "overrides", overrides_json(r));
	return j;
}

static json_t *ratios_json(const struct run *a, const struct run *b)
{
	const struct gp_history_result *x = &b->res, *y = &a->res;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "cards", ratio_json((double)x->cards, (double)y->cards),
			 "makespan_s", ratio_json(x->makespan_s, y->makespan_s),
			 "alloc_pct", ratio_json(x->alloc_pct, y->alloc_pct), "util_pct",
			 ratio_json(x->util_pct, y->util_pct), "wait_p50_s",
			 ratio_json(x->wait_p50_s, y->wait_p50_s), "wait_p99_s",
			 ratio_json(x->wait_p99_s, y->wait_p99_s), "wait_max_s",
			 ratio_json(x->wait_max_s, y->wait_max_s), "wait_mean_s",
			 ratio_json(x->wait_mean_s, y->wait_mean_s), "placed",
			 ratio_json((double)x->placed, (double)y->placed), "gpu_hours",
			 ratio_json(x->gpu_hours, y->gpu_hours), "cost",
			 ratio_json(b->cost, a->cost));
}

static void print_json(const struct hist_options *o, const struct period *p,
		       const struct history *h, const struct run *rec,
		       const struct run *var)
{
	json_t *j = json_pack(
		"{s:s?, s:I, s:o, s:I, s:I}", "month", o->since ? NULL : p->month,
		"from_ms", (json_int_t)p->from_ms, "to_ms",
		p->to_ms == INT64_MAX ? json_null() : json_integer(p->to_ms), "tasks",
		(json_int_t)h->n, "never_started", (json_int_t)h->never_started);

	json_object_set_new(j, "recorded", run_json(o, rec));
	json_object_set_new(j, "variant", var ? run_json(o, var) : json_null());
	json_object_set_new(j, "ratio", var ? ratios_json(rec, var) : json_null());
	if (!var)
		json_object_set_new(
			j, "note",
			json_string("no variant given: the recorded set-up alone"));
	gp_client_print_json(j);
	json_decref(j);
}

/* ---- the table ---------------------------------------------------------- */

/* 12.3s, 4m05s, 3h20m, 12d04h. */
static const char *duration_text(double s, char *buf, size_t size)
{
	long long t = llround(s);

	if (s < 120)
		snprintf(buf, size, "%.1fs", s);
	else if (t < 7200)
		snprintf(buf, size, "%lldm%02llds", t / 60, t % 60);
	else if (t < 172800)
		snprintf(buf, size, "%lldh%02lldm", t / 3600, t % 3600 / 60);
	else
		snprintf(buf, size, "%lldd%02lldh", t / 86400, t % 86400 / 3600);
	return buf;
}

/* A row: the recorded figure a, and with a variant its figure b and
 * their ratio ("-" where a is 0). */
static void row(const char *label, const char *format, double a, double b, bool variant)
{
	char left[32], right[32] = "";

	snprintf(left, sizeof(left), format, a);
	if (variant)
		snprintf(right, sizeof(right), format, b);
	printf("%-28.28s %12s %12s", label, left, right);
	if (variant && a != 0)
		printf(" %7.2f\n", b / a);
	else
		printf(" %7s\n", variant ? "-" : "");
}

static void row_text(const char *label, const char *a, const char *b, double ratio)
{
	printf("%-28s %12s %12s", label, a, b ? b : "");
	if (b && ratio >= 0)
		printf(" %7.2f\n", ratio);
	else
		printf(" %7s\n", b ? "-" : "");
}

/* "2 x Tesla T4, 1 x NVIDIA A100-SXM4-80GB" */
static void pool_text(const struct run *r, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int m = 0; m < r->res.models && used < size; m++)
		if (r->res.model[m].cards)
			used += (size_t)snprintf(buf + used, size - used, "%s%u x %s",
						 used ? ", " : "", r->res.model[m].cards,
						 gp_client_safe(r->res.model[m].model));
}

static void setup_line(const char *label, const struct run *r)
{
	char pool[512];

	pool_text(r, pool, sizeof(pool));
	printf("%-9s %s; policy %s; ", label, pool, r->policy);
	if (!r->n_over) {
		printf("slices as recorded\n");
		return;
	}
	printf("slices");
	for (int i = 0; i < r->n_over && i < OVERRIDES_SHOWN; i++) {
		const struct gp_history_override *x = &r->over[i];
		char mem[16] = "";

		if (x->mem_mib)
			gp_client_mib_text(x->mem_mib, mem, sizeof(mem));
		printf("%s %s %s%s%s=%s,", i ? "," : "",
		       x->is_template ? "template" : "task", gp_client_safe(x->name),
		       x->tenant[0] ? "@" : "", gp_client_safe(x->tenant), mem);
		if (x->compute_pct)
			printf("%u%%", x->compute_pct);
	}
	if (r->n_over > OVERRIDES_SHOWN)
		printf(" and %d more (-o json lists them)", r->n_over - OVERRIDES_SHOWN);
	putchar('\n');
}

/* The GPU-hours of model `name` in r (0 when it has none). */
static double hours_of(const struct run *r, const char *name)
{
	for (int m = 0; m < r->res.models; m++)
		if (!strcmp(r->res.model[m].model, name))
			return r->res.model[m].gpu_hours;
	return 0;
}

static bool name_in(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* A row per model of either pool: the recorded one's, then the new ones. */
static void model_rows(const struct run *rec, const struct run *var)
{
	const char *names[2 * GP_MODELS_MAX];
	int n = 0;

	for (int m = 0; m < rec->res.models; m++)
		names[n++] = rec->res.model[m].model;
	for (int m = 0; var && m < var->res.models; m++)
		if (!name_in(names, n, var->res.model[m].model))
			names[n++] = var->res.model[m].model;
	for (int i = 0; i < n; i++) {
		char label[GP_HISTORY_NAME_MAX + 16];
		snprintf(label, sizeof(label), "GPU-hours %s", gp_client_safe(names[i]));
		row(label, "%.4f", hours_of(rec, names[i]),
		    var ? hours_of(var, names[i]) : 0, var != NULL);
	}
}

/* The models of r that no --price matches, in a line; "" for none. */
static void unpriced_line(const struct hist_options *o, const struct run *r)
{
	bool priced, first = true;

	for (int m = 0; m < r->res.models; m++) {
		price_of(o, r->res.model[m].model, &priced);
		if (priced)
			continue;
		printf("%s%s", first ? "no --price matches (cost 0): " : ", ",
		       gp_client_safe(r->res.model[m].model));
		first = false;
	}
	if (!first)
		putchar('\n');
}

static void print_table(const struct hist_options *o, const struct period *p,
			const struct history *h, const struct run *rec,
			const struct run *var)
{
	const struct gp_history_result *a = &rec->res, *b = var ? &var->res : NULL;
	char ma[32], mb[32];

	printf("history %s%s: %zu tasks replayed", o->since ? "" : "of ", p->label, h->n);
	if (h->never_started)
		printf("; %zu never started (left out)", h->never_started);
	putchar('\n');
	setup_line("recorded:", rec);
	if (var)
		setup_line("variant:", var);
	else
		printf("no variant given (--policy, --cards, --add-cards, --template, "
		       "--task or --advised): the recorded set-up alone\n");
	printf("\n%-28s %12s %12s %7s\n", "", "RECORDED", b ? "VARIANT" : "",
	       b ? "RATIO" : "");
#define ROW(label, fmt, field)                                                           \
	row(label, fmt, (double)a->field, b ? (double)b->field : 0, b != NULL)
	ROW("cards", "%.0f", cards);
	row_text("makespan", duration_text(a->makespan_s, ma, sizeof(ma)),
		 b ? duration_text(b->makespan_s, mb, sizeof(mb)) : NULL,
		 b && a->makespan_s > 0 ? b->makespan_s / a->makespan_s : -1);
	ROW("allocated compute %", "%.1f", alloc_pct);
	ROW("physical utilization %", "%.1f", util_pct);
	ROW("queue wait p50 (s)", "%.1f", wait_p50_s);
	ROW("queue wait p99 (s)", "%.1f", wait_p99_s);
	ROW("queue wait max (s)", "%.1f", wait_max_s);
	ROW("tasks placed", "%.0f", placed);
	ROW("tasks never placed", "%.0f", never_placed);
	ROW("would fail (memory)", "%.0f", would_fail);
	ROW("stretched (compute)", "%.0f", stretched);
	model_rows(rec, var);
	ROW("GPU-hours", "%.4f", gpu_hours);
#undef ROW
	if (o->n_prices) {
		row("cost", "%.4f", rec->cost, var ? var->cost : 0, var != NULL);
		unpriced_line(o, var ? var : rec);
	}
}

/* ---- the command -------------------------------------------------------- */

static bool variant_given(const struct hist_options *o)
{
	return o->policy || o->cards_given || o->n_add || o->n_over || o->advised;
}

/* The period's tasks and the pool's cards; an exit status. */
static int history_load(const struct gp_client_flags *f, const struct period *p,
			struct history *h)
{
	int status = pool_read(f, h);

	if (status == GP_EXIT_OK && h->cards == 0) {
		fprintf(stderr,
			"gpupool " CMD ": the server reports no cards (GET /v1/devices; "
			"it runs without --with-agent?), so there is no recorded pool to "
			"replay on\n");
		return GP_EXIT_FAIL;
	}
	if (status == GP_EXIT_OK)
		status = history_read(f, p, h);
	if (status == GP_EXIT_OK && h->n == 0) {
		fprintf(stderr,
			"gpupool " CMD ": no task submitted %s%s ran (%zu never "
			"started): nothing to replay; choose another period with --month "
			"YYYY-MM or --since DATE\n",
			p->to_ms == INT64_MAX ? "" : "in ", p->label, h->never_started);
		return GP_EXIT_FAIL;
	}
	return status;
}

static struct gp_history_task *tasks_of(const struct history *h)
{
	struct gp_history_task *t = calloc(h->n, sizeof(*t));

	for (size_t i = 0; t && i < h->n; i++)
		t[i] = h->entry[i].t;
	return t;
}

/* Both replays, then the output; an exit status. */
static int replay_both(const struct gp_client_flags *f, struct hist_options *o,
		       const struct period *p, const struct history *h, struct pool *v)
{
	struct run rec = {
		.policy = o->recorded_policy, .card = h->card, .cards = h->cards};
	struct run var = {.policy = o->policy ? o->policy : o->recorded_policy,
			  .card = v->card,
			  .over = o->over,
			  .n_over = o->n_over};
	bool variant = variant_given(o);
	struct gp_history_task *tasks = tasks_of(h);
	int status = tasks ? GP_EXIT_OK : GP_EXIT_FAIL;

	if (status == GP_EXIT_OK && variant && pool_make(o, h, v) < 0)
		status = GP_EXIT_USAGE;
	var.cards = v->cards;
	if (status == GP_EXIT_OK)
		status = run_replay(o, h, tasks, &rec);
	if (status == GP_EXIT_OK && variant)
		status = run_replay(o, h, tasks, &var);
	if (status == GP_EXIT_OK && f->json)
		print_json(o, p, h, &rec, variant ? &var : NULL);
	else if (status == GP_EXIT_OK)
		print_table(o, p, h, &rec, variant ? &var : NULL);
	free(tasks);
	return status;
}

static int history_main(const struct gp_client_flags *f, struct hist_options *o)
{
	struct history h = {0};
	struct period p = {0};
	struct pool *v = calloc(1, sizeof(*v));
	int status = v ? GP_EXIT_OK : GP_EXIT_FAIL;

	if (status == GP_EXIT_OK && period_of(o, &p) < 0)
		status = GP_EXIT_USAGE;
	if (status == GP_EXIT_OK)
		status = history_load(f, &p, &h);
	if (status == GP_EXIT_OK && o->advised)
		status = advice_read(f, &p, o);
	if (status == GP_EXIT_OK)
		status = replay_both(f, o, &p, &h, v);
	free(h.entry);
	free(h.card);
	free(v);
	return status;
}

int gp_cmd_sim_history(int argc, char **argv)
{
	static const struct option own[] = {
		{"history", no_argument, NULL, 'H'},
		{"since", required_argument, NULL, 's'},
		{"month", required_argument, NULL, 'm'},
		{"policy", required_argument, NULL, 'P'},
		{"recorded-policy", required_argument, NULL, 'R'},
		{"cards", required_argument, NULL, 'c'},
		{"add-cards", required_argument, NULL, 'a'},
		{"card-mem", required_argument, NULL, 'M'},
		{"template", required_argument, NULL, 'T'},
		{"task", required_argument, NULL, 'K'},
		{"advised", no_argument, NULL, 'A'},
		{"price", required_argument, NULL, 'p'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = CMD,
		.usage = history_usage,
		.options = own,
		.option = history_option,
	};
	struct gp_client_flags f = {0};
	struct hist_options *o = calloc(1, sizeof(*o));
	int status = o ? GP_EXIT_OK : GP_EXIT_FAIL;

	if (o) {
		o->recorded_policy = "default";
		status = gp_client_parse_bare(&cmd, o, argc, argv, &f);
	}
	if (status == GP_CLIENT_GO)
		status = history_main(&f, o);
	if (o)
		free(o->over);
	free(o);
	return status;
}
