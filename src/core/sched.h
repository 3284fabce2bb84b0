/* sched.h — the scheduling rules, once for every engine: one scheduling
 * pass on the core's placement engine (the server's loop runs it over
 * this machine's tasks, the Kubernetes extender over a cluster's pods):
 * which pending tasks start now and where, which running tasks are
 * preempted to make room, and, for every task that waits, why.
 *
 * Order: priority (9 first), then age — first among the tasks within
 * their tenant's guarantee, then among those that would borrow. Quotas are per tenant, in memory
 * (MiB, summed over the task's devices) and compute (percent of a device,
 * summed likewise): the guaranteed part is the tenant's own; past it, up
 * to the borrowable part, a task runs on capacity nobody else needs now
 * and is marked borrowed. A task within its tenant's guarantee that fits
 * nowhere takes its capacity back: other tenants' borrowed tasks are
 * preempted, lowest priority and newest first, until it fits. Above the
 * guarantee plus the borrowable part a task waits for its tenant's own
 * tasks to end.
 *
 * A tenant may also have quotas per device model (model quotas), with
 * the same two parts, counting only the shares of its tasks placed on
 * devices of that model. A task must fit both its tenant's overall quota
 * and the model quota of every device it is placed on; it is borrowed
 * when past either guarantee. The model is known only once a placement
 * is chosen: a placement that would take a model quota past its limit is
 * tried again without that quota's models, so the task goes to another
 * model when it may, and otherwise waits with the quota named. Reclaim
 * is for a task within all its guarantees, and preempts only borrowed
 * tasks that hold a device of a model the task may go to.
 *
 * Preemptive mode (a tenant's priority_preemption): a task that fits
 * nowhere may also preempt running work of a lower priority, as
 * gp_sched_tenant says. Victims, for a reclaim or for priority, go
 * lowest priority and newest first, and only as many as free enough:
 * each one released is put back when the task fits without it.
 *
 * A request the core cannot place anywhere (more devices than a node may
 * have) waits with a reason that says so.
 *
 * A live change of a running task's share (gp_sched_change) is decided
 * by the same rules: capacity, overcommit, quotas, borrowing.
 *
 * The pass is pure computation, like the core: the caller builds the
 * cluster from the devices and commits the running tasks' placements;
 * the pass commits what it starts and releases what it preempts, so the
 * cluster afterwards is the state the decisions lead to.
 *
 * Its cost, for a long queue that cannot run: about one placement per
 * distinct request. Tasks given in the queue's order are not sorted
 * again; victims of a reclaim are looked for among the running tasks
 * only; and while nothing starts or is preempted, a task of the same
 * tenant asking the same as one decided before in the same round is
 * decided the same way without a placement (the cluster and the
 * tenants' use are as they were, and placement is deterministic). */
#ifndef GP_CORE_SCHED_H
#define GP_CORE_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cluster.h"
#include "core/quota.h"

#define GP_SCHED_REASON_MAX 256

#define GP_SCHED_MODEL_NAME_MAX 64

/* A tenant's quota on the devices of some models: `models` is the set of
 * the cluster's model ids it governs. The model quotas of one tenant
 * govern disjoint sets (the caller gives a device to the quota with the
 * longest matching name); at most GP_MODELS_MAX of them. */
struct gp_sched_model_quota {
	char name[GP_SCHED_MODEL_NAME_MAX];     /* for the reasons: "T4" */
	uint64_t models;
	struct gp_quota quota;
};

struct gp_sched_tenant {
	int64_t id;
	struct gp_quota quota;
	const struct gp_sched_model_quota *model_quota; /* the caller's; NULL: none */
	int model_quotas;
	/* The highest priority its tasks get (0-9); an engine whose tasks
	 * say their own priority (a pod's annotation) holds them to it. */
	unsigned priority_max;
	/* Preemptive mode: its tasks may preempt running work of a lower
	 * priority (any tenant's, its own included) when they fit nowhere.
	 * Within its guarantee a task may take any such work but a hard
	 * slice within its own tenant's guarantee; past it, only borrowed
	 * work. Off, priority only orders the queue. */
	bool priority_preemption;
};

struct gp_sched_task {
	int64_t id, tenant;
	unsigned priority;              /* 0-9 */
	int64_t created;                /* any clock; older first */
	struct gp_request req;
	bool running;
	bool borrowed;                  /* running past its tenant's guarantee */
	bool hard;                      /* a hard slice (never preempted for priority
					 * while within its tenant's guarantee) */
	/* Running, but its request does not fit where it runs (a device is
	 * gone, or it holds more than its devices have): its tenant's quotas
	 * are charged all of it, the caller commits to the cluster what fits,
	 * and the pass never preempts it (it would release what it does not
	 * hold). */
	bool misfit;
	struct gp_placement where;      /* when running */
};

enum gp_sched_verdict {
	GP_SCHED_WAIT,          /* stays pending; see reason */
	GP_SCHED_START,         /* start at `where` */
	GP_SCHED_PREEMPT,       /* stop it (grace, then kill); it queues again */
};

struct gp_sched_outcome {
	int64_t task;
	int index;                      /* the task's in tasks[] */
	enum gp_sched_verdict verdict;
	bool borrowed;                  /* START: past the guarantee */
	struct gp_placement where;      /* START */
	char reason[GP_SCHED_REASON_MAX];
};

/* The queue's order, as qsort wants it: below 0 when a comes before b.
 * Priority (9 first), then age (older first), then id. Only id,
 * priority and created are read. */
int gp_sched_compare(const struct gp_sched_task *a, const struct gp_sched_task *b);

/* Decides for every pending task in `tasks` (and the running ones it
 * preempts). `out` must hold n_tasks outcomes; their number is returned
 * in *ret_n. Returns 0, -EINVAL (a task of an unknown tenant, model
 * quotas that overlap or are too many) or -ENOMEM. */
int gp_sched_pass(struct gp_cluster *c, struct gp_policy *policy,
		  const struct gp_sched_tenant *tenants, int n_tenants,
		  struct gp_sched_task *tasks, int n_tasks, struct gp_sched_outcome *out, int *ret_n);

/* A live change of a running task's request (a new compute share), as
 * gp_sched_change decides it. */
struct gp_sched_change {
	bool fits;                      /* the task may have the new request */
	bool borrowed;                  /* fits: past one of its guarantees */
	/* fits: "within the tenant's guarantee" or "on borrowed quota"; else
	 * why not: what it would need, what is free or left, what to do */
	char reason[GP_SCHED_REASON_MAX];
};

/* Decides whether the running task `id` of tasks[] may change its request
 * to req (another share on the same devices: devices and whole as they
 * are) under the rules of a pass: the compute its devices have (with
 * their overcommit), its tenant's quota and the model quotas of its
 * devices, guaranteed plus borrowable; past a guarantee it is borrowed.
 * A share that goes down always fits. The cluster and tasks[] are as for
 * gp_sched_pass (running tasks committed, misfits as they are); when the
 * change fits, it is made in the cluster and in tasks[] (req, borrowed).
 * Returns 0 with the decision in *ret, -ENOENT (no running task id),
 * -EINVAL (an unknown tenant, req of another shape) or -ENOMEM. */
int gp_sched_change(struct gp_cluster *c, const struct gp_sched_tenant *tenants, int n_tenants,
		    struct gp_sched_task *tasks, int n_tasks, int64_t id,
		    const struct gp_request *req, struct gp_sched_change *ret);

#endif
