/* policy.h — placement policies: how the core ranks the nodes and devices
 * that can take a request.
 *
 * A policy has a node-level part (which node) and a device-level part
 * (which devices on that node); each named policy comes with its own device
 * choice, which gp_policy_config.devices can override ("first", "bestfit",
 * "spread", "random"). Policies:
 *
 *   random         a uniformly random feasible node, random devices
 *   dotprod        smallest dot product of request and free (CPU, GPU)
 *   gpuclustering  nodes already running tasks of the same GPU kind
 *   gpupacking     partly used devices, then partly used nodes, then empty
 *   bestfit        least CPU and GPU left after placement
 *   fgd            least growth of expected fragmentation (Weng et al.,
 *                  ATC '23), against a target workload
 *   binpack        most allocated node and device (GPU first, then CPU)
 *   spread         least allocated node and device
 *   default        gpupool's own: fragmentation-aware, see fgd.c
 *
 * fgd and default need a target workload (workload.h); without one they
 * fall back to a uniform workload of whole and half devices. default also
 * reads the workload's scarcity, which gp_workload_set_supply sets from the
 * pool's nodes (1 everywhere until then).
 *
 * Ownership: gp_policy_new returns a policy the caller frees with
 * gp_policy_free; the policy borrows cfg->target, which must outlive it. */
#ifndef GP_CORE_POLICY_H
#define GP_CORE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/workload.h"

struct gp_policy;

struct gp_policy_config {
	uint64_t seed;                   /* for random choices */
	const struct gp_workload *target;
	const char *devices;             /* device-level override, or NULL */
};

/* -ENOENT for an unknown policy or device choice name. */
int gp_policy_new(const char *name, const struct gp_policy_config *cfg,
		  struct gp_policy **ret_policy);
struct gp_policy *gp_policy_free(struct gp_policy *p);
const char *gp_policy_name(const struct gp_policy *p);

/* The registered policies, in the order above; NULL past the end. */
const char *gp_policy_name_at(size_t i);
const char *gp_policy_summary_at(size_t i);

/* Does the policy named `name` judge nodes against a target workload
 * (gp_policy_config.target: fgd, default)? False for an unknown name. */
bool gp_policy_takes_target(const char *name);

/* Is `name` a device-level choice (first, bestfit, spread, random)? */
bool gp_device_choice_exists(const char *name);

#endif
