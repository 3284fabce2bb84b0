/* queue.h — one work queue for every simulated runtime of simdev.
 *
 * A runtime's streams, queues or command lists put their work on a queue:
 * a FIFO of operations that one worker thread, owned by the queue,
 * executes in submission order on one simdev device, so that a launch
 * returns at once and the caller waits only when it synchronizes, as on a
 * real device. hip/hip.c (a queue per device), cambricon/cndrv.c (per
 * context), intel/ze.c (per command queue and immediate list) and
 * ascend/runtime.c (per opened device) use it.
 *
 * An operation is the runtime's own struct, of the size given to
 * sim_queue_new, that begins with a struct sim_op: copied into the queue
 * at submission, it is executed on the worker (outside every lock of the
 * queue) in two steps: first its device time, sim_op.ns nanoseconds of
 * sim_device_run on the queue's device (a kernel; 0: none), then the
 * runtime's run function, if it gave one, for what else it says (an event
 * record, a stream-ordered free, a copy).
 *
 * Invariants: every operation gets the next sequence number of its queue
 * (1, 2, …); the worker finishes them in that order, and "completed" is
 * the number of the last one finished, so operation `seq` is done exactly
 * when completed >= seq. The queue's mutex guards the FIFO, both counters
 * and the stopping flag; the worker sleeps on one condition variable
 * (work) and waiters on the other (done).
 *
 * Ownership: sim_queue_new returns a queue the caller owns; it counts the
 * process as running a context on the device (sim_context_add) until
 * sim_queue_free, which runs what is queued, joins the worker and takes
 * the context away. A runtime whose queues live as long as the process
 * need never free them. The queue keeps `s` and never frees it. */
#ifndef GP_SIMDEV_QUEUE_H
#define GP_SIMDEV_QUEUE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

struct sim;
struct sim_queue;
struct timespec;

/* No time limit for sim_queue_wait. */
#define SIM_QUEUE_FOREVER UINT64_MAX

/* The head of every operation. */
struct sim_op {
	uint64_t ns;            /* device time it takes (sim_device_run); 0: none */
};

/* Does the rest of one operation (op points at the runtime's struct),
 * after its device time; called on the worker, one operation at a time. */
typedef void sim_queue_run_fn(const void *op);

/* A queue for device `dev` whose operations are op_size bytes each (a
 * struct sim_op first), finished by `run` (NULL: they are device time
 * only); its worker started. -EINVAL: op_size below sizeof(struct
 * sim_op); -ENOMEM, -EAGAIN: no memory or no thread (nothing is left
 * behind). */
int sim_queue_new(struct sim *s, int dev, size_t op_size, sim_queue_run_fn *run,
		  struct sim_queue **ret_q);

/* Queues ops[0..n) (n >= 1, each op_size bytes, copied) in order, as one:
 * they get consecutive sequence numbers; *ret_seq is the last one's. When
 * `last` is not NULL it is set to the same number under the queue's lock,
 * so that a stream's last operation, written by racing submitters, only
 * ever goes up (read it with an atomic load). -ENOMEM: nothing queued. */
int sim_queue_submit(struct sim_queue *q, const void *ops, size_t n,
		     _Atomic uint64_t *last, uint64_t *ret_seq);

/* The sequence number of the last operation submitted (0: none yet). */
uint64_t sim_queue_submitted(struct sim_queue *q);

/* Whether operation seq is done (seq 0, nothing, is always done). */
bool sim_queue_done(struct sim_queue *q, uint64_t seq);

/* Waits until operation seq is done, up to timeout_ns
 * (SIM_QUEUE_FOREVER: without limit). 0, or -ETIMEDOUT. */
int sim_queue_wait(struct sim_queue *q, uint64_t seq, uint64_t timeout_ns);

/* Waits until everything submitted before the call is done. */
void sim_queue_drain(struct sim_queue *q);

/* *ret_deadline: the CLOCK_MONOTONIC time ns from now, for
 * pthread_cond_timedwait on a condition variable of that clock (the
 * queue's timed waits use it; a runtime's own may too). */
void sim_deadline_after(struct timespec *ret_deadline, uint64_t ns);

/* Runs what is queued, stops and joins the worker, takes the device's
 * context away and frees q. Accepts NULL; returns NULL. No one may use q
 * meanwhile or after. */
struct sim_queue *sim_queue_free(struct sim_queue *q);

#endif
