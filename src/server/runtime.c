/* runtime.c — which cards a task's program can run on (runtime.h): its
 * runtime named, implied by its model, or the pool's default; settled
 * once, at submit, against this machine's devices. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/models.h"
#include "server/runtime.h"
#include "vendor/vendor.h"

#define RUNTIMES_MAX 8
#define LIST_MAX 128

/* The distinct runtimes of the usable devices that answer to `model`
 * ("": every usable device), in the pool's order. */
struct runtimes {
	const char *name[RUNTIMES_MAX];
	int n;
};

static void runtime_add(struct runtimes *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->name[i], name) == 0)
			return;
	if (r->n < RUNTIMES_MAX)
		r->name[r->n++] = name;
}

static struct runtimes runtimes_of(const struct gp_agent_node *n, const char *model)
{
	struct runtimes r = { .n = 0 };

	for (unsigned i = 0; i < n->devices; i++) {
		const struct gp_agent_device *d = &n->device[i];

		if (d->compatible && d->vendor &&
		    (!model[0] || gp_model_answers(d->name, d->vendor->name, model)))
			runtime_add(&r, d->vendor->runtime_name);
	}
	return r;
}

static bool runtimes_have(const struct runtimes *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->name[i], name) == 0)
			return true;
	return false;
}

static const char *runtimes_text(const struct runtimes *r, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < r->n; i++)
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
					 i ? ", " : "", r->name[i]);
	return r->n ? buf : "none";
}

/* The device names of the pool, for "its cards: …". */
static const char *cards_text(const struct gp_agent_node *n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < n->devices; i++)
		if (n->device[i].compatible && !strstr(buf, n->device[i].name))
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
						 used ? ", " : "", n->device[i].name);
	return buf[0] ? buf : "none usable";
}

static int refuse(const char **ret_field, const char *field)
{
	*ret_field = field;
	return -E2BIG;
}

/* A task that names a model: the runtime of the cards it answers to. */
static int settle_by_model(const struct gp_agent_node *n, struct gp_task *t, bool await_cards,
			   const char **ret_field, char *why, size_t len)
{
	struct runtimes r = runtimes_of(n, t->model);
	char list[LIST_MAX], cards[LIST_MAX * 2];

	if (r.n == 0 && await_cards)
		return 0;               /* waits for its cards, saying so */
	if (r.n == 0) {
		snprintf(why, len, "no card of this pool answers to \"%s\" (its cards: %s); the "
			 "admin may queue it for cards to come (await_cards)", t->model,
			 cards_text(n, cards, sizeof(cards)));
		return refuse(ret_field, "model");
	}
	if (t->runtime[0] && (r.n > 1 || strcmp(r.name[0], t->runtime) != 0)) {
		snprintf(why, len, "the cards that answer to model \"%s\" run %s, not %s", t->model,
			 runtimes_text(&r, list, sizeof(list)), t->runtime);
		return refuse(ret_field, "runtime");
	}
	if (r.n > 1) {
		snprintf(why, len, "\"%s\" answers to cards of several runtimes (%s): name the "
			 "task's runtime too", t->model, runtimes_text(&r, list, sizeof(list)));
		return refuse(ret_field, "model");
	}
	snprintf(t->runtime, sizeof(t->runtime), "%s", r.name[0]);
	return 0;
}

/* The pool's default: CUDA where it has NVIDIA cards, else its one runtime. */
static int settle_default(const struct runtimes *all, struct gp_task *t, const char **ret_field,
			  char *why, size_t len)
{
	char list[LIST_MAX];

	if (runtimes_have(all, "cuda") || all->n == 1) {
		snprintf(t->runtime, sizeof(t->runtime), "%s",
			 runtimes_have(all, "cuda") ? "cuda" : all->name[0]);
		return 0;
	}
	snprintf(why, len, "this pool has cards of several runtimes (%s) and none is the default: "
		 "name the task's", runtimes_text(all, list, sizeof(list)));
	return refuse(ret_field, "runtime");
}

bool gp_runtime_is_one(const char *name, char *why, size_t len)
{
	char vendors[LIST_MAX], list[LIST_MAX];

	if (gp_vendor_runtime_vendors(name, vendors, sizeof(vendors)))
		return true;
	gp_vendor_runtime_names(list, sizeof(list));
	snprintf(why, len, "\"%s\" is not a runtime; give one of: %s", name, list);
	return false;
}

int gp_runtime_settle(const struct gp_agent_node *n, struct gp_task *t, bool await_cards,
		      const char **ret_field, char *why, size_t len)
{
	struct runtimes all = runtimes_of(n, "");
	char list[LIST_MAX];
	int r;

	if (t->runtime[0] && !gp_runtime_is_one(t->runtime, why, len))
		return refuse(ret_field, "runtime");
	if (t->model[0])
		return settle_by_model(n, t, await_cards, ret_field, why, len);
	if (!t->runtime[0] && all.n == 0)
		return 0;               /* no usable card at all: the fit check says so */
	if (!t->runtime[0] && (r = settle_default(&all, t, ret_field, why, len)) < 0)
		return r;
	if (!runtimes_have(&all, t->runtime)) {
		snprintf(why, len, "no card of this pool runs %s (its runtimes: %s)", t->runtime,
			 runtimes_text(&all, list, sizeof(list)));
		return refuse(ret_field, "runtime");
	}
	gp_vendor_runtime_vendors(t->runtime, t->model, sizeof(t->model));
	return 0;
}

bool gp_runtime_is_default_model(const struct gp_task *t)
{
	char vendors[LIST_MAX];

	return t->runtime[0] && gp_vendor_runtime_vendors(t->runtime, vendors, sizeof(vendors)) &&
	       strcmp(vendors, t->model) == 0;
}
