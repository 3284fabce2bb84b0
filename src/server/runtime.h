/* runtime.h — which cards a task's program can run on. A program is
 * built for one runtime (CUDA, Ascend's ACL, HIP, Cambricon's CNRT, Level
 * Zero: each vendor backend's runtime_name), and dies on a card of
 * another; so a task runs only on cards of its runtime, whether it names
 * it (`--runtime`), a model implies it (`--model 910B`: acl), or the
 * pool's default gives it (CUDA where the pool has NVIDIA cards, else
 * the one runtime the pool has). Checked at submit, before the task is
 * stored: a runtime or model the pool has no card of is refused there,
 * never queued for cards that will not come. */
#ifndef GP_SERVER_RUNTIME_H
#define GP_SERVER_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/devices.h"
#include "server/store.h"

/* Settles t->runtime (and, for a task that names no model, its model:
 * the runtime's vendors, "nvidia" or "amd|hygon", which the scheduler
 * matches as any card of theirs) against the devices of node n. 0; or
 * -E2BIG when the pool cannot run it, with the request's field at fault
 * in *ret_field ("runtime", "model") and why in why. With await_cards
 * (the admin's choice), a model no card answers to is let wait for
 * cards to come. */
int gp_runtime_settle(const struct gp_agent_node *n, struct gp_task *t, bool await_cards,
		      const char **ret_field, char *why, size_t len);

/* Is name a runtime of a vendor gpupool has ("cuda", "acl", ...)? When
 * not, why says so with the list of them. */
bool gp_runtime_is_one(const char *name, char *why, size_t len);

/* Is t's model the one its runtime gave it (it named none): "nvidia" for
 * cuda? Messages then speak of the runtime, not of a model. */
bool gp_runtime_is_default_model(const struct gp_task *t);

#endif
