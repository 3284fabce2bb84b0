/* whatif.c — what-if on the pool's own history, shared by `gpupool sim
 * --history` and POST /v1/sim/history (whatif.h): the variant's options,
 * the history read from the API's objects, the two replays and their
 * figures as JSON.
 *
 * A task's run is the time its usage records cover, per device (ended −
 * started where it has none; until now for a running one); its work the
 * device time they say it used, its peak the most they say it held. */
#include "server/whatif.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/month.h"
#include "base/parse.h"
#include "core/policy.h"
#include "shim/region.h"
#include "sim/history.h"

#define SPECS_MAX      64 /* MODEL=N terms of --cards and --add-cards */
#define CARDS_MAX      4096
#define CARD_COUNT_MAX 1024

/* MODEL=N: a count of cards of a model (--cards, --add-cards), or a
 * model's memory (--card-mem). */
struct card_spec {
	char model[GP_HISTORY_NAME_MAX];
	long long n;
};

/* A task as read, with what its records add up to. */
struct hist_entry {
	struct gp_history_task t;
	int64_t started_ms, ended_ms; /* 0: not yet */
	int64_t held_ms;	      /* its records' time, all devices */
	bool records;
};

/* One replay: its setup and what it gave. */
struct run {
	const char *policy;
	const struct gp_history_card *card;
	size_t cards;
	const struct gp_history_override *over;
	int n_over;
	struct gp_history_result res;
	double cost;
};

struct gp_whatif {
	enum gp_whatif_voice voice;
	/* the options */
	char since[64], month[GP_MONTH_TEXT];
	char policy[GP_HISTORY_NAME_MAX], recorded_policy[GP_HISTORY_NAME_MAX];
	struct card_spec cards[SPECS_MAX], add[SPECS_MAX], mem[SPECS_MAX];
	int n_cards, n_add, n_mem;
	bool cards_given, advised;
	struct gp_history_override *over; /* the given ones, then the advice's */
	int n_over, cap_over;
	struct gp_price prices[GP_PRICES_MAX];
	int n_prices;
	/* the period: [from, to); to INT64_MAX: until now */
	int64_t from_ms, to_ms;
	char period_month[GP_MONTH_TEXT]; /* the month from_ms is in (the advice's) */
	char label[48];			  /* "2026-12", "since 2026-12-03 10:00 UTC" */
	/* the history */
	struct hist_entry *entry; /* by id once the records come */
	size_t n, cap;
	bool sorted;
	size_t never_started;
	struct gp_history_card *card; /* the pool's, as recorded */
	size_t cards_n, cards_cap;
	/* the variant's cards */
	struct gp_history_card *vcard;
	size_t vcards;
};

/* ---- messages ------------------------------------------------------------ */

/* An option as its user names it: --card-mem, or "card_mem". */
static const char *flag(const struct gp_whatif *w, const char *name, char *buf, size_t size)
{
	if (w->voice == GP_WHATIF_CLI) {
		snprintf(buf, size, "--%s", name);
		return buf;
	}
	snprintf(buf, size, "\"%s\"", name);
	for (char *c = buf; *c; c++)
		if (*c == '-')
			*c = '_';
	return buf;
}

static int say(char *err, size_t size, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int say(char *err, size_t size, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return r;
}

/* Option `name`'s value is wrong: --cards "T4" must be ..., or
 * field "cards": "T4" must be .... */
static int bad(const struct gp_whatif *w, char *err, size_t size, const char *name,
	       const char *value, const char *what)
{
	char f[64];

	flag(w, name, f, sizeof(f));
	return say(err, size, -EINVAL, "%s%s%s \"%s\" %s",
		   w->voice == GP_WHATIF_API ? "field " : "", f,
		   w->voice == GP_WHATIF_API ? ":" : "", value, what);
}

/* ---- options ------------------------------------------------------------- */

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
static int specs_add(struct gp_whatif *w, const char *name, const char *value, long long lo,
		     struct card_spec *list, int *n, char *err, size_t size)
{
	for (const char *p = value; *p;) {
		size_t len = strcspn(p, ",");

		if (*n == SPECS_MAX || !spec_parse(p, len, lo, CARD_COUNT_MAX, &list[*n]))
			return bad(w, err, size, name, value,
				   lo < 0 ? "must be MODEL=N,... with N from -1024 to 1024"
					  : "must be MODEL=N,... with N from 0 to 1024");
		(*n)++;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* A size in MiB (a number alone is MiB), at least 1 MiB. */
static bool mib_parse(const char *text, uint64_t *ret)
{
	uint64_t bytes;

	if (gp_parse_size_in(text, GP_MiB, &bytes) < 0 || bytes < GP_MiB)
		return false;
	*ret = (bytes + GP_MiB - 1) / GP_MiB;
	return true;
}

static int card_mem_add(struct gp_whatif *w, const char *value, char *err, size_t size)
{
	const char *eq = strchr(value, '=');
	struct card_spec *s = &w->mem[w->n_mem];
	uint64_t mib;

	if (w->n_mem == SPECS_MAX || !eq || eq == value ||
	    (size_t)(eq - value) >= sizeof(s->model))
		return bad(w, err, size, "card-mem", value, "must be MODEL=SIZE, e.g. H100=80G");
	if (!mib_parse(eq + 1, &mib))
		return bad(w, err, size, "card-mem", eq + 1,
			   "must be a size like 4G, 4GB, 512M or 4096 (MiB), at least 1M");
	snprintf(s->model, sizeof(s->model), "%.*s", (int)(eq - value), value);
	s->n = (long long)mib;
	w->n_mem++;
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

/* Room for one more override at the end of w's; NULL when out of memory. */
static struct gp_history_override *override_slot(struct gp_whatif *w)
{
	if (w->n_over == w->cap_over) {
		int cap = w->cap_over ? 2 * w->cap_over : 16;
		struct gp_history_override *grown =
			realloc(w->over, (size_t)cap * sizeof(*grown));

		if (!grown)
			return NULL;
		w->over = grown;
		w->cap_over = cap;
	}
	return &w->over[w->n_over];
}

/* --template NAME=MEM,PCT and --task NAME[@TENANT]=MEM,PCT. */
static int override_add(struct gp_whatif *w, bool is_template, const char *value, char *err,
			size_t size)
{
	struct gp_history_override *x = override_slot(w);
	const char *eq = strchr(value, '=');
	const char *at =
		is_template ? NULL : memchr(value, '@', eq ? (size_t)(eq - value) : 0);
	const char *name_end = at ? at : eq;
	const char *name = is_template ? "template" : "task";

	if (!x)
		return say(err, size, -ENOMEM, "out of memory");
	if (!eq || name_end == value || (size_t)(name_end - value) >= sizeof(x->name) ||
	    (at && (size_t)(eq - at - 1) >= sizeof(x->tenant)))
		return bad(w, err, size, name, value,
			   is_template ? "must be NAME=MEM,PCT, e.g. t4-half=1280,25"
				       : "must be NAME[@TENANT]=MEM,PCT, e.g. infer@vision=2G,30");
	*x = (struct gp_history_override){.is_template = is_template};
	snprintf(x->name, sizeof(x->name), "%.*s", (int)(name_end - value), value);
	if (at)
		snprintf(x->tenant, sizeof(x->tenant), "%.*s", (int)(eq - at - 1), at + 1);
	if (!slice_parse(eq + 1, x))
		return bad(w, err, size, name, value,
			   "needs MEM,PCT: MEM in MiB or a size like 4G, PCT from 1 to 100; "
			   "either may be empty to keep it, not both");
	w->n_over++;
	return 0;
}

static int price_add(struct gp_whatif *w, const char *value, char *err, size_t size)
{
	char why[160], f[32];

	if (w->n_prices == GP_PRICES_MAX)
		return bad(w, err, size, "price", value, "is one too many (at most 32 prices)");
	if (gp_price_parse(value, &w->prices[w->n_prices], why, sizeof(why)) < 0)
		return say(err, size, -EINVAL, "%s%s %s: %s",
			   w->voice == GP_WHATIF_API ? "field " : "", flag(w, "price", f, sizeof(f)),
			   value, why);
	w->n_prices++;
	return 0;
}

static int policy_check(const struct gp_whatif *w, const char *name, const char *value,
			char *err, size_t size)
{
	for (size_t i = 0; gp_policy_name_at(i); i++)
		if (!strcmp(gp_policy_name_at(i), value))
			return 0;
	return bad(w, err, size, name, value, "is no policy; `gpupool policies` lists them");
}

static int text_option(struct gp_whatif *w, char *to, size_t to_size, const char *name,
		       const char *value, char *err, size_t size)
{
	if (strlen(value) >= to_size)
		return bad(w, err, size, name, value, "is too long");
	snprintf(to, to_size, "%s", value);
	return 0;
}

int gp_whatif_option(struct gp_whatif *w, const char *name, const char *value, char *err,
		     size_t size)
{
	int64_t from, to;

	if (!strcmp(name, "advised")) {
		w->advised = true;
		return 0;
	}
	if (!value)
		return say(err, size, -EINVAL, "option %s needs a value", name);
	if (!strcmp(name, "since"))
		return text_option(w, w->since, sizeof(w->since), name, value, err, size);
	if (!strcmp(name, "month"))
		return gp_month_parse(value, &from, &to) == 0
			       ? text_option(w, w->month, sizeof(w->month), name, value, err, size)
			       : bad(w, err, size, name, value, "must be YYYY-MM, e.g. 2026-11");
	if (!strcmp(name, "policy") || !strcmp(name, "recorded-policy")) {
		char *to_text = name[0] == 'p' ? w->policy : w->recorded_policy;

		return policy_check(w, name, value, err, size) ?:
			       text_option(w, to_text, GP_HISTORY_NAME_MAX, name, value, err, size);
	}
	if (!strcmp(name, "cards")) {
		w->cards_given = true;
		return specs_add(w, name, value, 0, w->cards, &w->n_cards, err, size);
	}
	if (!strcmp(name, "add-cards"))
		return specs_add(w, name, value, -CARD_COUNT_MAX, w->add, &w->n_add, err, size);
	if (!strcmp(name, "card-mem"))
		return card_mem_add(w, value, err, size);
	if (!strcmp(name, "template") || !strcmp(name, "task"))
		return override_add(w, name[1] == 'e', value, err, size);
	if (!strcmp(name, "price"))
		return price_add(w, value, err, size);
	return say(err, size, -EINVAL, "no option %s", name);
}

int gp_whatif_prices(struct gp_whatif *w, const struct gp_price *p, int n)
{
	for (int i = 0; i < n && w->n_prices < GP_PRICES_MAX; i++)
		w->prices[w->n_prices++] = p[i];
	return 0;
}

/* ---- the period ---------------------------------------------------------- */

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

int gp_whatif_period(struct gp_whatif *w, int64_t now_ms, char *err, size_t size)
{
	char a[32], b[32];

	if (w->since[0] && w->month[0])
		return say(err, size, -EINVAL, "give %s or %s, not both",
			   flag(w, "since", a, sizeof(a)), flag(w, "month", b, sizeof(b)));
	w->to_ms = INT64_MAX;
	if (w->since[0] && !date_parse(w->since, &w->from_ms))
		return bad(w, err, size, "since", w->since,
			   "must be a date, YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC)");
	if (w->month[0])
		gp_month_parse(w->month, &w->from_ms, &w->to_ms);
	if (!w->since[0] && !w->month[0])
		gp_month_bounds(now_ms, &w->from_ms, &w->to_ms);
	gp_month_format(w->from_ms, w->period_month);
	snprintf(w->label, sizeof(w->label), "%s", w->period_month);
	if (w->since[0]) {
		time_t t = (time_t)(w->from_ms / 1000);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(w->label, sizeof(w->label), "since %Y-%m-%d %H:%M UTC", &tm);
	}
	return 0;
}

int64_t gp_whatif_from_ms(const struct gp_whatif *w)
{
	return w->from_ms;
}

const char *gp_whatif_month(const struct gp_whatif *w)
{
	return w->period_month;
}

bool gp_whatif_advised(const struct gp_whatif *w)
{
	return w->advised;
}

/* ---- the history --------------------------------------------------------- */

static json_int_t int_of(json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

static void copy(char *to, size_t size, json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	snprintf(to, size, "%s", s ? s : "");
}

/* An RFC 3339 time of the server's in unix ms; 0 for null. */
static int64_t time_ms(json_t *v)
{
	int64_t ms = 0;

	return json_is_string(v) && date_parse(json_string_value(v), &ms) ? ms : 0;
}

int gp_whatif_card(struct gp_whatif *w, json_t *d)
{
	struct gp_history_card *c;

	if (json_is_false(json_object_get(d, "compatible")))
		return 0;
	if (w->cards_n == w->cards_cap) {
		size_t cap = w->cards_cap ? 2 * w->cards_cap : 16;
		struct gp_history_card *grown = realloc(w->card, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		w->card = grown;
		w->cards_cap = cap;
	}
	c = &w->card[w->cards_n];
	*c = (struct gp_history_card){.mem_mib = (uint32_t)int_of(d, "memory_total_mib"),
				      .node = (uint32_t)(w->cards_n / GP_NODE_DEVICES_MAX)};
	copy(c->model, sizeof(c->model), d, "name");
	w->cards_n++;
	return 0;
}

static struct gp_history_task task_of(json_t *j)
{
	struct gp_history_task t = {
		.id = int_of(j, "id"),
		.arrival_ms = time_ms(json_object_get(j, "created")),
		.mem_mib = (uint32_t)int_of(j, "mem_mib"),
		.compute_pct = (unsigned)int_of(j, "compute_pct"),
		.devices = (unsigned)int_of(j, "devices"),
		.whole = json_is_true(json_object_get(j, "whole")) ||
			 json_is_true(json_object_get(j, "exclusive")),
		.priority = (unsigned)int_of(j, "priority"),
	};

	copy(t.model, sizeof(t.model), j, "model");
	copy(t.template_name, sizeof(t.template_name), j, "template");
	copy(t.name, sizeof(t.name), j, "name");
	copy(t.tenant, sizeof(t.tenant), j, "tenant");
	return t;
}

/* Keeps task j when it was submitted in the period and ran. */
int gp_whatif_task(struct gp_whatif *w, json_t *j)
{
	struct hist_entry e = {.t = task_of(j)};

	if (e.t.arrival_ms < w->from_ms || e.t.arrival_ms >= w->to_ms)
		return 0;
	e.started_ms = time_ms(json_object_get(j, "started"));
	e.ended_ms = time_ms(json_object_get(j, "ended"));
	if (!e.started_ms) {
		w->never_started++;
		return 0;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		struct hist_entry *grown = realloc(w->entry, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		w->entry = grown;
		w->cap = cap;
	}
	w->entry[w->n++] = e;
	w->sorted = false;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;

	return (x->t.id > y->t.id) - (x->t.id < y->t.id);
}

static struct hist_entry *entry_of(struct gp_whatif *w, int64_t id)
{
	size_t lo = 0, hi = w->n;

	if (!w->sorted) {
		qsort(w->entry, w->n, sizeof(*w->entry), by_id);
		w->sorted = true;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->entry[mid].t.id == id)
			return &w->entry[mid];
		if (w->entry[mid].t.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int gp_whatif_record(struct gp_whatif *w, json_t *rec)
{
	struct hist_entry *e = entry_of(w, int_of(rec, "task"));
	json_int_t peak = int_of(rec, "mem_peak_mib");

	if (!e)
		return 0;
	e->records = true;
	e->held_ms += int_of(rec, "end_ms") - int_of(rec, "start_ms");
	e->t.used_ms += int_of(rec, "used_ms");
	if (peak > e->t.mem_peak_mib)
		e->t.mem_peak_mib = (uint32_t)peak;
	return 0;
}

/* One proposal of the advice as an override; -ENOMEM. */
int gp_whatif_advice(struct gp_whatif *w, json_t *a)
{
	json_int_t pct = int_of(a, "compute_proposed_pct");
	struct gp_history_override *x = override_slot(w);
	const char *kind = json_string_value(json_object_get(a, "kind"));

	if (!x)
		return -ENOMEM;
	if (pct < 1 || pct > 100)
		return 0;
	*x = (struct gp_history_override){
		.is_template = kind && !strcmp(kind, "template"),
		.mem_mib = (uint32_t)int_of(a, "mem_proposed_mib"), /* null: kept */
		.compute_pct = (unsigned)pct};
	copy(x->name, sizeof(x->name), a, "name");
	copy(x->tenant, sizeof(x->tenant), a, "tenant");
	w->n_over++;
	return 0;
}

/* Each task's run: its records' time per device, else ended (or now)
 * less started. */
static void runs_set(struct gp_whatif *w, int64_t now)
{
	for (size_t i = 0; i < w->n; i++) {
		struct hist_entry *e = &w->entry[i];
		int64_t end = e->ended_ms ? e->ended_ms : now;

		if (e->t.devices < 1)
			e->t.devices = 1;
		e->t.run_ms = e->records ? e->held_ms / e->t.devices : end - e->started_ms;
		if (e->t.run_ms < 0)
			e->t.run_ms = 0;
	}
}

/* ---- the variant's cards ------------------------------------------------- */

static int card_error(const struct gp_whatif *w, char *err, size_t size, const char *name,
		      const struct card_spec *s, const char *why)
{
	char f[32];

	return say(err, size, -EINVAL, "%s%s %s=%lld: %s", w->voice == GP_WHATIF_API ? "field " : "",
		   flag(w, name, f, sizeof(f)), s->model, s->n, why);
}

/* The pool's card whose model is named `name` (all of it, else a part of
 * it); NULL when none is, or (*ret_ambiguous) when a part names several. */
static const struct gp_history_card *card_named(const struct gp_whatif *w, const char *name,
						bool *ret_ambiguous)
{
	const struct gp_history_card *found = NULL;

	*ret_ambiguous = false;
	for (size_t i = 0; i < w->cards_n; i++)
		if (!strcasecmp(w->card[i].model, name))
			return &w->card[i];
	for (size_t i = 0; i < w->cards_n; i++) {
		if (!strcasestr(w->card[i].model, name))
			continue;
		if (found && strcmp(found->model, w->card[i].model)) {
			*ret_ambiguous = true;
			return NULL;
		}
		found = &w->card[i];
	}
	return found;
}

/* The card a spec's MODEL names: one of the pool's, or a new model with
 * --card-mem's memory (which also sets the memory of one of the pool's). */
static int card_resolve(const struct gp_whatif *w, const char *name, const struct card_spec *s,
			struct gp_history_card *ret, char *err, size_t size)
{
	bool ambiguous;
	const struct gp_history_card *found = card_named(w, s->model, &ambiguous);
	char why[200], f[32];

	if (ambiguous)
		return card_error(w, err, size, name, s,
				  "more than one model of the pool answers to it; "
				  "give the whole name, as `gpupool device ls` shows it");
	*ret = found ? *found : (struct gp_history_card){0};
	if (!found)
		snprintf(ret->model, sizeof(ret->model), "%s", s->model);
	for (int i = 0; i < w->n_mem; i++)
		if (!strcasecmp(w->mem[i].model, s->model))
			ret->mem_mib = (uint32_t)w->mem[i].n;
	if (ret->mem_mib)
		return 0;
	flag(w, "card-mem", f, sizeof(f));
	snprintf(why, sizeof(why),
		 "the pool has no card of this model to take its memory from; give it with "
		 "%s MODEL=SIZE, e.g. %s H100=80G",
		 f, f);
	return card_error(w, err, size, name, s, why);
}

static int cards_append(struct gp_whatif *w, const struct gp_history_card *c, long long n,
			char *err, size_t size)
{
	for (long long i = 0; i < n; i++) {
		if (w->vcards == CARDS_MAX)
			return say(err, size, -EINVAL, "more than %d cards; give fewer", CARDS_MAX);
		w->vcard[w->vcards++] = *c;
	}
	return 0;
}

/* Removes n cards of c's model, the last first. */
static int cards_remove(struct gp_whatif *w, const struct card_spec *s,
			const struct gp_history_card *c, long long n, char *err, size_t size)
{
	for (size_t i = w->vcards; i-- > 0 && n > 0;) {
		if (strcmp(w->vcard[i].model, c->model))
			continue;
		memmove(&w->vcard[i], &w->vcard[i + 1], (w->vcards - i - 1) * sizeof(*w->vcard));
		w->vcards--;
		n--;
	}
	return n ? card_error(w, err, size, "add-cards", s,
			      "the pool has fewer cards of this model")
		 : 0;
}

static int pool_make(struct gp_whatif *w, char *err, size_t size)
{
	char f[32];
	int r = 0;

	w->vcard = calloc(CARDS_MAX, sizeof(*w->vcard));
	if (!w->vcard)
		return say(err, size, -ENOMEM, "out of memory");
	w->vcards = 0;
	for (size_t i = 0; !w->cards_given && i < w->cards_n && r == 0; i++)
		r = cards_append(w, &w->card[i], 1, err, size);
	for (int i = 0; r == 0 && i < w->n_cards; i++) {
		struct gp_history_card c;

		r = card_resolve(w, "cards", &w->cards[i], &c, err, size);
		if (r == 0)
			r = cards_append(w, &c, w->cards[i].n, err, size);
	}
	for (int i = 0; r == 0 && i < w->n_add; i++) {
		struct gp_history_card c;

		r = card_resolve(w, "add-cards", &w->add[i], &c, err, size);
		if (r == 0)
			r = w->add[i].n >= 0 ? cards_append(w, &c, w->add[i].n, err, size)
					     : cards_remove(w, &w->add[i], &c, -w->add[i].n, err,
							    size);
	}
	for (size_t i = 0; i < w->vcards; i++)
		w->vcard[i].node = (uint32_t)(i / GP_NODE_DEVICES_MAX);
	if (r == 0 && w->vcards == 0)
		r = say(err, size, -EINVAL,
			"the variant's pool has no cards; give some with %s MODEL=N",
			flag(w, "cards", f, sizeof(f)));
	return r;
}

/* ---- the figures --------------------------------------------------------- */

static double price_of(const struct gp_whatif *w, const char *model, bool *ret_priced)
{
	const struct gp_price *p = gp_price_find(w->prices, w->n_prices, model);

	*ret_priced = p != NULL;
	return p ? p->per_hour : 0;
}

static int run_replay(const struct gp_whatif *w, struct gp_history_task *tasks, struct run *r,
		      char *err, size_t size)
{
	struct gp_history_setup s = {.policy = r->policy,
				     .card = r->card,
				     .cards = r->cards,
				     .max_tasks = GP_REGION_TASKS,
				     .override = r->over,
				     .overrides = (size_t)r->n_over};
	int e = gp_history_run(tasks, w->n, &s, &r->res, NULL);
	bool priced;

	if (e < 0)
		return say(err, size, e == -EINVAL ? -EIO : e, "the replay failed: %s",
			   strerror(-e));
	for (int m = 0; m < r->res.models; m++)
		r->cost += r->res.model[m].gpu_hours * price_of(w, r->res.model[m].model, &priced);
	return 0;
}

static json_t *ratio_json(double variant, double recorded)
{
	return recorded != 0 ? json_real(variant / recorded) : json_null();
}

static json_t *models_json(const struct gp_whatif *w, const struct run *r)
{
	json_t *list = json_array();

	for (int m = 0; m < r->res.models; m++) {
		const struct gp_history_model *x = &r->res.model[m];
		bool priced;
		double price = price_of(w, x->model, &priced);

		json_array_append_new(
			list, json_pack("{s:s, s:i, s:f, s:f, s:b, s:f}", "model", x->model,
					"cards", (int)x->cards, "gpu_hours", x->gpu_hours,
					"price_per_hour", price, "priced", priced, "cost",
					x->gpu_hours * price));
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
						x->is_template ? "template" : "task", "name",
						x->name, "tenant", x->tenant[0] ? x->tenant : NULL,
						"mem_mib", (json_int_t)x->mem_mib, "compute_pct",
						(int)x->compute_pct));
	}
	return list;
}

static json_t *run_json(const struct gp_whatif *w, const struct run *r)
{
	const struct gp_history_result *x = &r->res;
	json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "policy", r->policy,
			      "cards", (json_int_t)x->cards, "tasks", (json_int_t)x->tasks,
			      "placed", (json_int_t)x->placed, "never_placed",
			      (json_int_t)x->never_placed, "would_fail",
			      (json_int_t)x->would_fail, "stretched", (json_int_t)x->stretched);

	json_object_update_new(
		j, json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "makespan_s",
			     x->makespan_s, "alloc_pct", x->alloc_pct, "util_pct", x->util_pct,
			     "wait_p50_s", x->wait_p50_s, "wait_p99_s", x->wait_p99_s,
			     "wait_max_s", x->wait_max_s, "wait_mean_s", x->wait_mean_s,
			     "gpu_hours", x->gpu_hours, "cost", r->cost));
	json_object_set_new(j, "models", models_json(w, r));
	json_object_set_new(j, "overrides", overrides_json(r));
	return j;
}

static json_t *ratios_json(const struct run *a, const struct run *b)
{
	const struct gp_history_result *x = &b->res, *y = &a->res;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "cards",
			 ratio_json((double)x->cards, (double)y->cards), "makespan_s",
			 ratio_json(x->makespan_s, y->makespan_s), "alloc_pct",
			 ratio_json(x->alloc_pct, y->alloc_pct), "util_pct",
			 ratio_json(x->util_pct, y->util_pct), "wait_p50_s",
			 ratio_json(x->wait_p50_s, y->wait_p50_s), "wait_p99_s",
			 ratio_json(x->wait_p99_s, y->wait_p99_s), "wait_max_s",
			 ratio_json(x->wait_max_s, y->wait_max_s), "wait_mean_s",
			 ratio_json(x->wait_mean_s, y->wait_mean_s), "placed",
			 ratio_json((double)x->placed, (double)y->placed), "gpu_hours",
			 ratio_json(x->gpu_hours, y->gpu_hours), "cost",
			 ratio_json(b->cost, a->cost));
}

static json_t *result_json(const struct gp_whatif *w, const struct run *rec,
			   const struct run *var)
{
	json_t *j = json_pack("{s:s?, s:I, s:o, s:I, s:I}", "month",
			      w->since[0] ? NULL : w->period_month, "from_ms",
			      (json_int_t)w->from_ms, "to_ms",
			      w->to_ms == INT64_MAX ? json_null() : json_integer(w->to_ms), "tasks",
			      (json_int_t)w->n, "never_started", (json_int_t)w->never_started);

	json_object_set_new(j, "recorded", run_json(w, rec));
	json_object_set_new(j, "variant", var ? run_json(w, var) : json_null());
	json_object_set_new(j, "ratio", var ? ratios_json(rec, var) : json_null());
	if (!var)
		json_object_set_new(j, "note",
				    json_string("no variant given: the recorded set-up alone"));
	return j;
}

/* ---- the run -------------------------------------------------------------- */

static bool variant_given(const struct gp_whatif *w)
{
	return w->policy[0] || w->cards_given || w->n_add || w->n_over || w->advised;
}

/* Is there something to replay? -ENODATA saying why not. */
static int history_check(const struct gp_whatif *w, char *err, size_t size)
{
	char a[32], b[32];

	if (w->cards_n == 0)
		return say(err, size, -ENODATA,
			   "the server reports no cards (GET /v1/devices; it runs without "
			   "--with-agent?), so there is no recorded pool to replay on");
	if (w->n == 0)
		return say(err, size, -ENODATA,
			   "no task submitted %s%s ran (%zu never started): nothing to replay; "
			   "choose another period with %s YYYY-MM or %s DATE",
			   w->to_ms == INT64_MAX ? "" : "in ", w->label, w->never_started,
			   flag(w, "month", a, sizeof(a)), flag(w, "since", b, sizeof(b)));
	return 0;
}

int gp_whatif_run(struct gp_whatif *w, int64_t now_ms, json_t **ret, char *err, size_t size)
{
	const char *recorded = w->recorded_policy[0] ? w->recorded_policy : "default";
	struct run rec = {.policy = recorded, .card = w->card, .cards = w->cards_n};
	struct run var = {.policy = w->policy[0] ? w->policy : recorded,
			  .over = w->over,
			  .n_over = w->n_over};
	bool variant = variant_given(w);
	struct gp_history_task *tasks = NULL;
	int r = history_check(w, err, size);

	if (r == 0 && !w->sorted) {
		qsort(w->entry, w->n, sizeof(*w->entry), by_id);
		w->sorted = true;
	}
	if (r == 0) {
		runs_set(w, now_ms);
		tasks = calloc(w->n, sizeof(*tasks));
		r = tasks ? 0 : say(err, size, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; r == 0 && i < w->n; i++)
		tasks[i] = w->entry[i].t;
	if (r == 0 && variant)
		r = pool_make(w, err, size);
	var.card = w->vcard;
	var.cards = w->vcards;
	if (r == 0)
		r = run_replay(w, tasks, &rec, err, size);
	if (r == 0 && variant)
		r = run_replay(w, tasks, &var, err, size);
	if (r == 0)
		*ret = result_json(w, &rec, variant ? &var : NULL);
	free(tasks);
	return r;
}

/* ---- the handle ------------------------------------------------------------ */

int gp_whatif_new(enum gp_whatif_voice voice, struct gp_whatif **ret)
{
	struct gp_whatif *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->voice = voice;
	*ret = w;
	return 0;
}

struct gp_whatif *gp_whatif_free(struct gp_whatif *w)
{
	if (w) {
		free(w->over);
		free(w->entry);
		free(w->card);
		free(w->vcard);
	}
	free(w);
	return NULL;
}
