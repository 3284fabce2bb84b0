/* schedule.c — time-of-day rules applied live (schedule.h). */
#include "server/schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_MS	  86400000LL
#define LOOK_MS	  1000	       /* between looks */
#define QUOTA_MAX (100 * 1024) /* percent, summed over devices (as the API's) */

enum target { TARGET_TENANT, TARGET_TASK };

struct rule {
	char name[GP_STORE_NAME_MAX];
	unsigned at_s; /* of the day, UTC */
	enum target target;
	char tenant[GP_STORE_NAME_MAX];
	int64_t task;
	char field[32];
	unsigned value;
};

struct gp_schedules {
	struct gp_taskops ops;
	struct rule *r;
	int n, cap;
	int64_t looked_ms; /* the last look; 0: none yet */
};

/* ---- rules ----------------------------------------------------------------- */

static const struct {
	enum target target;
	const char *field;
	unsigned lo, hi;
} fields[] = {
	{TARGET_TENANT, "compute_guaranteed_pct", 0, QUOTA_MAX},
	{TARGET_TENANT, "compute_borrowable_pct", 0, QUOTA_MAX},
	{TARGET_TASK, "compute_pct", 1, 100},
	{TARGET_TASK, "priority", 0, 9},
};

static int bad(char *why, size_t len, const char *text)
{
	snprintf(why, len, "%s", text);
	return -EINVAL;
}

static int at_parse(const char *text, unsigned *ret)
{
	unsigned h, m, s = 0;
	char end;
	int n = text ? sscanf(text, "%2u:%2u%c", &h, &m, &end) : 0;

	if (n == 3 &&
	    (end != ':' || sscanf(text, "%2u:%2u:%2u%c", &h, &m, &s, &end) != 3))
		return -EINVAL;
	if (n < 2 || h > 23 || m > 59 || s > 59)
		return -EINVAL;
	*ret = h * 3600 + m * 60 + s;
	return 0;
}

static int field_check(struct rule *r, json_t *value, char *why, size_t len)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (fields[i].target != r->target || strcmp(fields[i].field, r->field))
			continue;
		if (!json_is_integer(value) || json_integer_value(value) < fields[i].lo ||
		    json_integer_value(value) > fields[i].hi) {
			snprintf(why, len,
				 "field \"value\": %s takes a whole number from %u to %u",
				 r->field, fields[i].lo, fields[i].hi);
			return -EINVAL;
		}
		r->value = (unsigned)json_integer_value(value);
		return 0;
	}
	return bad(
		why, len,
		r->target == TARGET_TENANT
			? "field \"field\": a tenant's rule sets compute_guaranteed_pct "
			  "or "
			  "compute_borrowable_pct"
			: "field \"field\": a task's rule sets compute_pct or priority");
}

static int rule_parse(json_t *o, struct rule *r, char *why, size_t len)
{
	json_t *tenant = json_object_get(o, "tenant"), *task = json_object_get(o, "task");
	const char *field = json_string_value(json_object_get(o, "field"));

	memset(r, 0, sizeof(*r));
	if (!json_is_object(o))
		return bad(why, len, "a rule is a JSON object");
	if (at_parse(json_string_value(json_object_get(o, "at")), &r->at_s) < 0)
		return bad(why, len,
			   "field \"at\": a time of day, UTC, \"HH:MM\" or \"HH:MM:SS\"");
	if (!!tenant == !!task)
		return bad(why, len,
			   "give one of \"tenant\" (a name) and \"task\" (an id)");
	if (tenant && (!json_is_string(tenant) || !*json_string_value(tenant) ||
		       strlen(json_string_value(tenant)) >= sizeof(r->tenant)))
		return bad(why, len, "field \"tenant\": a tenant's name");
	if (task && (!json_is_integer(task) || json_integer_value(task) < 1))
		return bad(why, len, "field \"task\": a task's id");
	if (!field || strlen(field) >= sizeof(r->field))
		return bad(why, len, "field \"field\" is required: what the rule sets");
	r->target = tenant ? TARGET_TENANT : TARGET_TASK;
	if (tenant)
		snprintf(r->tenant, sizeof(r->tenant), "%s", json_string_value(tenant));
	r->task = task ? json_integer_value(task) : 0;
	snprintf(r->field, sizeof(r->field), "%s", field);
	return field_check(r, json_object_get(o, "value"), why, len);
}

static json_t *rule_json(const struct rule *r)
{
	char at[16];
	json_t *o;

	snprintf(at, sizeof(at), "%02u:%02u:%02u", r->at_s / 3600, r->at_s / 60 % 60,
		 r->at_s % 60);
	o = json_pack("{s:s, s:s, s:I}", "at", at, "field", r->field, "value",
		      (json_int_t)r->value);
	if (r->target == TARGET_TENANT)
		json_object_set_new(o, "tenant", json_string(r->tenant));
	else
		json_object_set_new(o, "task", json_integer(r->task));
	return o;
}

int gp_schedule_rule_check(json_t *rule, char **ret_text, char *why, size_t len)
{
	struct rule r;
	json_t *o;

	if (rule_parse(rule, &r, why, len) < 0)
		return -EINVAL;
	o = rule_json(&r);
	*ret_text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	return *ret_text ? 0 : -ENOMEM;
}

static int rule_put(struct gp_schedules *sc, const char *name, const char *text)
{
	json_auto_t *o = json_loads(text, 0, NULL);
	char why[GP_REASON_MAX];
	struct rule r;

	if (rule_parse(o, &r, why, sizeof(why)) < 0) {
		fprintf(stderr,
			"gpupool server: schedule %s: its rule in the store cannot be "
			"read (%s); it is not applied\n",
			name, why);
		return 0;
	}
	snprintf(r.name, sizeof(r.name), "%s", name);
	if (sc->n == sc->cap) {
		int cap = sc->cap ? 2 * sc->cap : 8;
		struct rule *bigger = realloc(sc->r, (size_t)cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		sc->r = bigger;
		sc->cap = cap;
	}
	sc->r[sc->n++] = r;
	return 0;
}

int gp_schedules_new(const struct gp_taskops *ops, struct gp_schedules **ret)
{
	struct gp_schedules *sc = calloc(1, sizeof(*sc));
	struct gp_schedule_row *rows = NULL;
	int n = 0, r;

	if (!sc)
		return -ENOMEM;
	sc->ops = *ops;
	r = gp_store_schedule_list(ops->store, &rows, &n);
	for (int i = 0; r == 0 && i < n; i++)
		r = rule_put(sc, rows[i].name, rows[i].rule);
	free(rows);
	if (r < 0) {
		gp_schedules_free(sc);
		return r;
	}
	*ret = sc;
	return 0;
}

struct gp_schedules *gp_schedules_free(struct gp_schedules *sc)
{
	if (sc)
		free(sc->r);
	free(sc);
	return NULL;
}

static int write_add(struct gp_store *s, const void *row)
{
	return gp_store_schedule_add(s, (struct gp_schedule_row *)row);
}

static int write_remove(struct gp_store *s, const void *name)
{
	return gp_store_schedule_remove(s, name);
}

int gp_schedules_add(struct gp_schedules *sc, const char *who, const char *name,
		     const char *text)
{
	struct gp_schedule_row row = {0};
	char object[GP_AUDIT_OBJECT_MAX];
	int r;

	snprintf(row.name, sizeof(row.name), "%s", name);
	if (strlen(text) >= sizeof(row.rule))
		return -E2BIG;
	snprintf(row.rule, sizeof(row.rule), "%s", text);
	snprintf(object, sizeof(object), "schedule %.54s", name);
	r = gp_store_audited(sc->ops.store, write_add, &row, who, "schedule.add", object,
			     text);
	return r < 0 ? r : rule_put(sc, name, text);
}

int gp_schedules_remove(struct gp_schedules *sc, const char *who, const char *name)
{
	char object[GP_AUDIT_OBJECT_MAX];
	int r;

	snprintf(object, sizeof(object), "schedule %.54s", name);
	r = gp_store_audited(sc->ops.store, write_remove, name, who, "schedule.remove",
			     object, "");
	if (r < 0)
		return r;
	for (int i = 0; i < sc->n; i++)
		if (!strcmp(sc->r[i].name, name)) {
			sc->r[i] = sc->r[--sc->n];
			break;
		}
	return 0;
}

/* ---- applying -------------------------------------------------------------- */

/* When rule r last fired at or before to_ms (unix ms). */
static int64_t last_at(const struct rule *r, int64_t to_ms)
{
	int64_t at = to_ms - to_ms % DAY_MS + (int64_t)r->at_s * 1000;

	return at > to_ms ? at - DAY_MS : at;
}

static bool same_knob(const struct rule *a, const struct rule *b)
{
	return a->target == b->target && !strcmp(a->field, b->field) &&
	       (a->target == TARGET_TENANT ? !strcmp(a->tenant, b->tenant)
					   : a->task == b->task);
}

static int write_quota(struct gp_store *s, const void *t)
{
	return gp_store_tenant_set_quota(s, t);
}

static void apply_tenant(struct gp_schedules *sc, const struct rule *r, const char *who)
{
	char object[GP_AUDIT_OBJECT_MAX], detail[GP_REASON_MAX];
	struct gp_tenant t;
	unsigned *field, was;

	if (gp_store_tenant_by_name(sc->ops.store, r->tenant, &t) < 0 || t.removed)
		return;
	field = !strcmp(r->field, "compute_guaranteed_pct") ? &t.compute_guaranteed_pct
							    : &t.compute_borrowable_pct;
	was = *field;
	if (was == r->value)
		return;
	*field = r->value;
	snprintf(object, sizeof(object), "tenant %.56s", r->tenant);
	snprintf(detail, sizeof(detail), "%s %u -> %u (rule at %02u:%02u:%02u UTC)",
		 r->field, was, r->value, r->at_s / 3600, r->at_s / 60 % 60,
		 r->at_s % 60);
	if (gp_store_audited(sc->ops.store, write_quota, &t, who, "schedule.apply",
			     object, detail) == 0)
		gp_pool_tenant_put(sc->ops.pool, &t);
}

static void apply_task(struct gp_schedules *sc, const struct rule *r, const char *who)
{
	char why[GP_REASON_MAX], object[GP_AUDIT_OBJECT_MAX], detail[GP_REASON_MAX + 64];
	bool share = !strcmp(r->field, "compute_pct");
	struct gp_pool_task pt;
	struct gp_task t;
	int borrowed = -1, rc = 0;

	if (gp_pool_task_get(sc->ops.pool, r->task, &pt) < 0 || pt.cancel_by[0])
		return; /* not live: nothing to change */
	gp_pool_task_row(&pt, &t);
	if ((share ? t.compute_pct : t.priority) == r->value)
		return;
	if (share)
		rc = gp_taskops_share_check(&sc->ops, &t, r->value, &borrowed, why,
					    sizeof(why));
	if (rc == 0) {
		snprintf(detail, sizeof(detail), "schedule %s", r->name);
		gp_taskops_change(&sc->ops, who, &t, share ? r->value : t.compute_pct,
				  share ? t.priority : r->value, detail, borrowed);
		return;
	}
	snprintf(object, sizeof(object), "task %lld", (long long)r->task);
	snprintf(detail, sizeof(detail), "%s -> %u not applied: %s", r->field, r->value,
		 rc == -EBUSY ? why : strerror(-rc));
	gp_store_audited(sc->ops.store, NULL, NULL, who, "schedule.skip", object, detail);
}

static void apply(struct gp_schedules *sc, const struct rule *r)
{
	char who[GP_STORE_NAME_MAX];

	snprintf(who, sizeof(who), "schedule:%.*s", (int)sizeof(who) - 10, r->name);
	if (r->target == TARGET_TENANT)
		apply_tenant(sc, r, who);
	else
		apply_task(sc, r, who);
}

/* Rule i fired in (from, to] and is the last of its target and field to. */
static bool fires(const struct gp_schedules *sc, int i, int64_t from, int64_t to)
{
	int64_t at = last_at(&sc->r[i], to);

	if (at <= from)
		return false;
	for (int j = 0; j < sc->n; j++) {
		int64_t other = last_at(&sc->r[j], to);

		if (j != i && same_knob(&sc->r[i], &sc->r[j]) && other > from &&
		    (other > at || (other == at && j > i)))
			return false;
	}
	return true;
}

void gp_schedules_tick(struct gp_schedules *sc, int64_t now_ms)
{
	int64_t from;

	if (!sc || (sc->looked_ms && now_ms - sc->looked_ms < LOOK_MS))
		return;
	from = sc->looked_ms ? sc->looked_ms : now_ms - DAY_MS;
	for (int i = 0; i < sc->n; i++)
		if (fires(sc, i, from, now_ms))
			apply(sc, &sc->r[i]);
	sc->looked_ms = now_ms;
}

json_t *gp_schedules_json(const struct gp_schedules *sc, int64_t now_ms)
{
	json_t *list = json_array();

	for (int i = 0; sc && i < sc->n; i++) {
		json_t *o = rule_json(&sc->r[i]);

		json_object_set_new(o, "name", json_string(sc->r[i].name));
		json_object_set_new(o, "next_ms",
				    json_integer(last_at(&sc->r[i], now_ms) + DAY_MS));
		json_array_append_new(list, o);
	}
	return list;
}
