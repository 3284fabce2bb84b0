/* schedule.h — time-of-day rules (issue 16; docs/operations.md): at a
 * time of the day (UTC), set a tenant's overall compute quota or a live
 * task's compute share or priority; e.g. the inference tenant's
 * guaranteed compute to 60 % at 08:00 and to 20 % at 20:00, the training
 * tenant's the other way round.
 *
 * A rule, as POST /v1/schedules takes it and the store keeps it (JSON):
 *   {"at": "HH:MM" or "HH:MM:SS", "tenant": NAME, "field":
 *    "compute_guaranteed_pct" | "compute_borrowable_pct", "value": N}
 *   {"at": ..., "task": ID, "field": "compute_pct" | "priority", "value": N}
 * Each rule fires once a day at its time; the value in force between two
 * rules of the same target and field is that of the last one passed. At
 * the server's start the rules in force now are applied (the last one
 * passed in the previous 24 hours of each target and field), so a server
 * down at a rule's time catches up. A change goes through the same
 * writes as a person's (taskops.h for a task: the scheduler's rules must
 * let a running task's share grow, else the rule is skipped, saying why),
 * and is audited: `schedule.apply` (a tenant's quota), `task.set` by
 * `schedule:NAME` (a task's), `schedule.skip` with why. A value already in
 * force writes nothing.
 *
 * The loop ticks it, holding the store's lock; it looks once a second. */
#ifndef GP_SERVER_SCHEDULE_H
#define GP_SERVER_SCHEDULE_H

#include <jansson.h>
#include <stdint.h>

#include "server/taskops.h"

struct gp_schedules;

int gp_schedules_new(const struct gp_taskops *ops, struct gp_schedules **ret);
struct gp_schedules *gp_schedules_free(struct gp_schedules *sc); /* NULL is fine */

/* Checks a rule (the request's body); 0, or -EINVAL with why. Its
 * canonical text in *ret_text (malloc'd) when 0. */
int gp_schedule_rule_check(json_t *rule, char **ret_text, char *why, size_t len);
/* Stores the rule `name` (audit schedule.add by who) and keeps it; it
 * fires from the next tick on (a rule whose time has passed today first
 * fires tomorrow). -EEXIST: the name is taken. */
int gp_schedules_add(struct gp_schedules *sc, const char *who, const char *name,
		     const char *text);
int gp_schedules_remove(struct gp_schedules *sc, const char *who, const char *name);

void gp_schedules_tick(struct gp_schedules *sc, int64_t now_ms);

/* Every rule, with its name and when it fires next (unix ms). */
json_t *gp_schedules_json(const struct gp_schedules *sc, int64_t now_ms);

#endif
