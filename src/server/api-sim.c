/* api-sim.c — POST /v1/sim/history: what-if on the pool's own history
 * (issue 16; `gpupool sim --history`, docs/operations.md), for the
 * console. The body names the variant as the command's options do
 * ("policy", "cards", "add_cards", "card_mem", "template", "task",
 * "advised", "price"; the period as "month" or "since"); the server gives
 * the what-if module (whatif.h) what the command would read through the
 * API — this machine's devices, the caller's tasks of the period (the
 * admin's: everyone's), their usage records, the advice of the month —
 * made by the same functions as GET /v1/tasks, /v1/usage and /v1/advice,
 * and answers with what `gpupool sim --history -o json` prints. Without
 * "price", the server's own prices (--price) are the variant's.
 *
 * The replay runs in the API's thread: it reads the period's tasks and
 * records (a page at a time) and replays them twice, which for a month of
 * a busy pool takes a moment the other requests of this listener wait. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "server/api-impl.h"
#include "server/fields.h"
#include "server/loop.h"
#include "server/meter.h"
#include "server/whatif.h"

#define TASK_PAGE_READ	2000
#define USAGE_PAGE_READ 20000
#define SPEC_MAX	1024 /* a comma list of MODEL=N terms */
#define ITEM_MAX	255  /* one term of a list */

static const struct gp_field sim_fields[] = {
	{"since", GP_FIELD_TEXT, .hi = 32},
	{"month", GP_FIELD_TEXT, .hi = 16},
	{"policy", GP_FIELD_TEXT, .hi = 63},
	{"recorded_policy", GP_FIELD_TEXT, .hi = 63},
	{"cards", GP_FIELD_TEXT, .hi = SPEC_MAX},
	{"add_cards", GP_FIELD_TEXT, .hi = SPEC_MAX},
	{"card_mem", GP_FIELD_TEXTS, .hi = ITEM_MAX},
	{"template", GP_FIELD_TEXTS, .hi = ITEM_MAX},
	{"task", GP_FIELD_TEXTS, .hi = ITEM_MAX},
	{"advised", GP_FIELD_BOOL},
	{"price", GP_FIELD_TEXTS, .hi = ITEM_MAX},
	{NULL},
};

/* The body's fields as the module's options (a field's name is the
 * option's, '_' for '-'); false with 400 in ret. */
static bool options_of(struct gp_api *api, json_t *body, struct gp_whatif *w,
		       struct gp_http_reply *ret)
{
	char err[GP_WHATIF_ERROR_MAX], option[32];
	const char *key;
	json_t *v, *item;
	size_t i;
	int r = 0;

	json_object_foreach(body, key, v)
	{
		snprintf(option, sizeof(option), "%s", key);
		for (char *c = option; *c; c++)
			*c = *c == '_' ? '-' : *c;
		if (json_is_array(v))
			json_array_foreach(v, i, item)
			{
				if (r == 0)
					r = gp_whatif_option(w, option, json_string_value(item),
							     err, sizeof(err));
			}
		else if (json_is_true(v))
			r = gp_whatif_option(w, option, NULL, err, sizeof(err));
		else if (json_is_string(v))
			r = gp_whatif_option(w, option, json_string_value(v), err, sizeof(err));
		if (r < 0) {
			gp_http_error(ret, 400, "%s", err);
			return false;
		}
	}
	if (!json_array_size(json_object_get(body, "price")))
		gp_whatif_prices(w, api->price, api->prices);
	return true;
}

/* This machine's devices, as GET /v1/devices names them. */
static int cards_feed(struct gp_api *api, struct gp_whatif *w)
{
	const struct gp_meter *m = gp_loop_meter(api->loop);
	const struct gp_agent_node *node = m ? gp_meter_node(m) : NULL;
	int r = 0;

	for (unsigned i = 0; node && r == 0 && i < node->devices; i++) {
		const struct gp_agent_device *d = &node->device[i];
		json_t *j = json_pack("{s:s, s:I, s:b}", "name", d->name, "memory_total_mib",
				      (json_int_t)d->mem_total_mib, "compatible", d->compatible);

		r = j ? gp_whatif_card(w, j) : -ENOMEM;
		json_decref(j);
	}
	return r;
}

static const char *name_of(const struct gp_tenant *all, int n, int64_t id)
{
	for (int i = 0; i < n; i++)
		if (all[i].id == id)
			return all[i].name;
	return "";
}

/* The caller's tasks (tenant < 0: all), a page at a time. */
static int tasks_feed(struct gp_api *api, int64_t tenant, const struct gp_tenant *names,
		      int n_names, struct gp_whatif *w)
{
	int64_t after = 0;
	int r = 0, n;

	do {
		struct gp_task *page = NULL;

		n = 0;
		r = gp_store_task_page(api->store, tenant, 0, after, TASK_PAGE_READ, &page, &n);
		for (int i = 0; r == 0 && i < n; i++) {
			json_t *j = gp_api_task_json(&page[i], name_of(names, n_names,
								       page[i].tenant));

			r = j ? gp_whatif_task(w, j) : -ENOMEM;
			json_decref(j);
		}
		after = n ? page[n - 1].id : after;
		free(page);
	} while (r == 0 && n == TASK_PAGE_READ);
	return r;
}

/* The caller's records (tenant < 0: all) that start in the period or
 * later, a page at a time. */
static int records_feed(struct gp_api *api, int64_t tenant, const struct gp_tenant *names,
			int n_names, struct gp_whatif *w)
{
	int64_t after = 0;
	int r = 0, n;

	do {
		struct gp_usage_record *page = NULL;

		n = 0;
		r = gp_store_usage_list(api->store, tenant, gp_whatif_from_ms(w), INT64_MAX,
					after, USAGE_PAGE_READ, &page, &n);
		for (int i = 0; r == 0 && i < n; i++) {
			json_t *j = gp_api_record_json(&page[i], name_of(names, n_names,
									 page[i].tenant));

			r = j ? gp_whatif_record(w, j) : -ENOMEM;
			json_decref(j);
		}
		after = n ? page[n - 1].id : after;
		free(page);
	} while (r == 0 && n == USAGE_PAGE_READ);
	return r;
}

static int advice_feed(struct gp_api *api, int64_t tenant, struct gp_whatif *w)
{
	json_t *list = NULL, *a;
	size_t i;
	int r = gp_api_advice_of_month(api, tenant, gp_whatif_month(w), &list);

	json_array_foreach(list, i, a)
	{
		if (r == 0)
			r = gp_whatif_advice(w, a);
	}
	json_decref(list);
	return r;
}

/* Everything the replay reads, for the caller's scope; the store's error. */
static int history_feed(struct gp_api *api, const struct gp_tenant *me, struct gp_whatif *w)
{
	int64_t tenant = me->admin ? -1 : me->id;
	struct gp_tenant *names = NULL;
	int n_names = 0, r = gp_store_tenant_list(api->store, &names, &n_names);

	if (r == 0)
		r = cards_feed(api, w);
	if (r == 0)
		r = tasks_feed(api, tenant, names, n_names, w);
	if (r == 0)
		r = records_feed(api, tenant, names, n_names, w);
	if (r == 0 && gp_whatif_advised(w))
		r = advice_feed(api, tenant, w);
	free(names);
	return r;
}

/* The replays, answered; 400 for a variant that does not hold, 409 when
 * there is nothing to replay (no cards, no task ran in the period). */
static void replay_reply(struct gp_whatif *w, struct gp_http_reply *ret)
{
	char err[GP_WHATIF_ERROR_MAX];
	json_t *j = NULL;
	int r = gp_whatif_run(w, gp_unix_ms(), &j, err, sizeof(err));

	if (r == 0)
		gp_http_json(ret, 200, j);
	else
		gp_http_error(ret, r == -EINVAL ? 400 : r == -ENODATA ? 409 : 500, "%s", err);
}

void gp_api_sim_history(void *ctx, const struct gp_http_request *req,
			struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	struct gp_whatif *w = NULL;
	char err[GP_WHATIF_ERROR_MAX];
	json_auto_t *body = NULL;
	struct gp_tenant me;
	int r;

	if (!gp_api_caller(api, req, ret, &me) || !gp_fields_parse(req, sim_fields, ret, &body))
		return;
	if (!api->loop) {
		gp_http_error(ret, 409,
			      "what-if replays this machine's history on its cards; start the "
			      "server with --with-agent");
		return;
	}
	if (gp_whatif_new(GP_WHATIF_API, &w) < 0) {
		gp_http_error(ret, 500, "out of memory");
		return;
	}
	if (options_of(api, body, w, ret)) {
		if (gp_whatif_period(w, gp_unix_ms(), err, sizeof(err)) < 0)
			gp_http_error(ret, 400, "%s", err);
		else if ((r = history_feed(api, &me, w)) < 0)
			gp_api_store_failed(api, ret, r, "reading the history");
		else
			replay_reply(w, ret);
	}
	gp_whatif_free(w);
}
