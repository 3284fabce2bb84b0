/* whatif.h — what-if on the pool's own history (issue 16; `gpupool sim
 * --history` and POST /v1/sim/history, docs/operations.md): the options
 * of a variant, the period's tasks, usage records, cards and advice as
 * the API shows them (its JSON objects), two replays (sim/history.h), as
 * recorded and under the variant, and their figures side by side as one
 * JSON object. The CLI feeds it what it read through the API; the server
 * feeds it the same objects made by the same functions, so the console's
 * page and the command print the same numbers.
 *
 * Use: gp_whatif_new; gp_whatif_option for each option (by the CLI's
 * name: "policy", "cards", "template", ...); gp_whatif_period; then the
 * cards (gp_whatif_card), the period's tasks (gp_whatif_task, every task
 * the caller may see: those outside the period are passed over), their
 * records (gp_whatif_record, after the tasks) and with --advised the
 * advice (gp_whatif_advice); last gp_whatif_run.
 *
 * Messages name the options as the caller's user gives them: "--cards"
 * on the command line, "field \"cards\"" in the API (enum gp_whatif_voice).
 * Errors: -EINVAL a wrong option or variant (the CLI's usage error),
 * -ENODATA nothing to replay (no cards, no task ran in the period),
 * -ENOMEM; the message in err. Ownership: the caller frees the handle
 * with gp_whatif_free and the JSON gp_whatif_run gives (json_decref). */
#ifndef GP_SERVER_WHATIF_H
#define GP_SERVER_WHATIF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/bill.h"

#define GP_WHATIF_ERROR_MAX 512

enum gp_whatif_voice {
	GP_WHATIF_CLI, /* --add-cards */
	GP_WHATIF_API, /* field "add_cards" */
};

struct gp_whatif;

int gp_whatif_new(enum gp_whatif_voice voice, struct gp_whatif **ret);
struct gp_whatif *gp_whatif_free(struct gp_whatif *w); /* NULL is fine; returns NULL */

/* An option by its command-line name without the dashes: "since",
 * "month", "policy", "recorded-policy", "cards", "add-cards", "card-mem",
 * "template", "task", "advised" (value NULL), "price" (repeatable:
 * card-mem, template, task, price). */
int gp_whatif_option(struct gp_whatif *w, const char *name, const char *value, char *err,
		     size_t size);
/* Prices given already parsed (the server's --price), after any given. */
int gp_whatif_prices(struct gp_whatif *w, const struct gp_price *p, int n);

/* Settles the period (--since, --month, else this month at now_ms). */
int gp_whatif_period(struct gp_whatif *w, int64_t now_ms, char *err, size_t size);
/* The period's start (unix ms), the month its advice is of ("2026-12"),
 * and whether the advice is wanted. */
int64_t gp_whatif_from_ms(const struct gp_whatif *w);
const char *gp_whatif_month(const struct gp_whatif *w);
bool gp_whatif_advised(const struct gp_whatif *w);

/* What the API showed: a device of GET /v1/devices (its name,
 * memory_total_mib, compatible), a task of GET /v1/tasks, a record of GET
 * /v1/usage, an entry of GET /v1/advice. 0 or -ENOMEM. */
int gp_whatif_card(struct gp_whatif *w, json_t *device);
int gp_whatif_task(struct gp_whatif *w, json_t *task);
int gp_whatif_record(struct gp_whatif *w, json_t *record);
int gp_whatif_advice(struct gp_whatif *w, json_t *advice);

/* Both replays, at now_ms (a running task runs until then), into *ret:
 * the period (month, from_ms, to_ms), tasks, never_started, recorded,
 * variant and ratio (null, with a note, when no variant was given). */
int gp_whatif_run(struct gp_whatif *w, int64_t now_ms, json_t **ret, char *err, size_t size);

#endif
