/* args.h — kube-scheduler's ExtenderArgs, read fast: {"Pod": {...},
 * "NodeNames": [...]} or {"Pod": {...}, "Nodes": {"items": [...]}}.
 *
 * A filter call names every node kube-scheduler kept (1,000s of them) and
 * comes once per pod, so its node names are scanned in place
 * into C strings (one copy of the body, no allocation per name); the Pod
 * and a Nodes list are parsed with jansson. Everything else in the object
 * is skipped, as Go's decoder skips unknown fields.
 *
 * Ownership: gp_extender_args_parse fills *ret, which the caller releases
 * with gp_extender_args_release; the names point into it. */
#ifndef GP_K8S_ARGS_H
#define GP_K8S_ARGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct gp_extender_args {
	json_t *pod;                    /* the Pod */
	json_t *nodes;                  /* Nodes.items, when given in that form; else NULL */
	const char **name;              /* the nodes' names, either form */
	size_t *name_len;               /* and their lengths */
	size_t names;
	char *text;                     /* the copy the names live in */
};

/* -EINVAL with the reason in err for a body that is not ExtenderArgs (not
 * JSON, no Pod, neither NodeNames nor Nodes); -ENOMEM. */
int gp_extender_args_parse(const char *body, size_t len, struct gp_extender_args *ret, char *err,
			   size_t err_len);
void gp_extender_args_release(struct gp_extender_args *a);

#endif
