/* helpers.h — small builders shared by the unit tests of src/core/. */
#ifndef GP_TESTS_HELPERS_H
#define GP_TESTS_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/cluster.h"
#include "core/state.h"

/* A node of `devices` healthy devices of one model, 1.0 overcommit. */
static inline struct gp_node_spec node_spec(uint32_t cores, uint32_t mem_gib,
					    int devices, int model)
{
	struct gp_node_spec s = { .cpu_milli = cores * 1000,
				  .mem_mib = mem_gib * 1024,
				  .devices = (uint8_t)devices };

	for (int i = 0; i < devices; i++)
		s.device[i] = (struct gp_device_spec){ .model = (uint8_t)model,
						       .mem_mib = 16384,
						       .overcommit = 1000,
						       .healthy = true };
	return s;
}

static inline uint32_t add_node(struct gp_cluster *c, struct gp_node_spec s)
{
	uint32_t index = 0;

	assert_int_equal(gp_cluster_add_node(c, &s, &index), 0);
	return index;
}

/* A request for a share of one device (milli = thousandths). */
static inline struct gp_request share(uint32_t cores, uint32_t milli)
{
	return (struct gp_request){ .cpu_milli = cores * 1000, .devices = 1,
				    .dev_compute = milli };
}

static inline struct gp_request whole(uint32_t cores, int devices)
{
	return (struct gp_request){ .cpu_milli = cores * 1000,
				    .devices = (uint8_t)devices, .whole = true };
}

static inline struct gp_request cpu_only(uint32_t cores)
{
	return (struct gp_request){ .cpu_milli = cores * 1000 };
}

/* Places and commits; returns the node chosen (asserts it was placed). */
static inline uint32_t place(struct gp_cluster *c, struct gp_policy *p,
			     struct gp_request r, struct gp_placement *ret_where)
{
	struct gp_decision d;

	assert_int_equal(gp_place(c, p, &r, &d), 0);
	assert_true(d.placed);
	assert_int_equal(gp_cluster_commit(c, &r, &d.where), 0);
	if (ret_where)
		*ret_where = d.where;
	return d.where.node;
}

/* Commits r on a given node and devices without asking a policy. */
static inline void put(struct gp_cluster *c, struct gp_request r, uint32_t node,
		       int device)
{
	struct gp_placement where = { .node = node, .devices = r.devices };

	for (int i = 0; i < r.devices; i++)
		where.device[i] = (uint8_t)(device + i);
	assert_int_equal(gp_cluster_commit(c, &r, &where), 0);
}

static inline struct gp_policy *policy(const char *name,
				       const struct gp_workload *w)
{
	struct gp_policy_config cfg = { .seed = 1, .target = w };
	struct gp_policy *p = NULL;

	assert_int_equal(gp_policy_new(name, &cfg, &p), 0);
	return p;
}

#endif
