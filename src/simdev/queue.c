/* queue.c — simdev's work queue: a FIFO of a runtime's operations and the
 * worker thread that executes them in order (queue.h has the contract).
 *
 * A submission is one block: the operations of one sim_queue_submit call,
 * copied side by side, with the sequence number of the first. The worker
 * takes a block off the FIFO, runs its operations one by one outside the
 * lock and marks each completed as it finishes, so a waiter for any one of
 * them wakes as soon as it is done, not when the block is. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "simdev/queue.h"
#include "simdev/simdev.h"

struct block {
	struct block *next;
	uint64_t first_seq;
	size_t n;
	_Alignas(max_align_t) unsigned char ops[];     /* n × op_size */
};

struct sim_queue {
	struct sim *sim;
	int dev;
	size_t op_size;
	sim_queue_run_fn *run;          /* NULL: device time only */
	pthread_mutex_t lock;
	pthread_cond_t work;            /* the worker waits: FIFO empty */
	pthread_cond_t done;            /* waiters: completed moved (CLOCK_MONOTONIC) */
	struct block *head, *tail;      /* under lock */
	uint64_t submitted, completed;  /* under lock */
	bool stopping;                  /* under lock */
	pthread_t worker;
};

static void *worker_main(void *arg)
{
	struct sim_queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct block *b;

		while (!q->head && !q->stopping)
			pthread_cond_wait(&q->work, &q->lock);
		if (!q->head)
			break;
		b = q->head;
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		for (size_t i = 0; i < b->n; i++) {
			const struct sim_op *op = (const void *)(b->ops + i * q->op_size);

			pthread_mutex_unlock(&q->lock);
			if (op->ns)
				sim_device_run(q->sim, q->dev, op->ns);
			if (q->run)
				q->run(op);
			pthread_mutex_lock(&q->lock);
			q->completed = b->first_seq + i;
			pthread_cond_broadcast(&q->done);
		}
		free(b);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int sim_queue_new(struct sim *s, int dev, size_t op_size, sim_queue_run_fn *run,
		  struct sim_queue **ret_q)
{
	struct sim_queue *q;
	int r;

	if (op_size < sizeof(struct sim_op))
		return -EINVAL;
	if (!(q = calloc(1, sizeof(*q))))
		return -ENOMEM;
	q->sim = s;
	q->dev = dev;
	q->op_size = op_size;
	q->run = run;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->work, NULL);
	gp_monotonic_cond_init(&q->done);
	if ((r = pthread_create(&q->worker, NULL, worker_main, q)) != 0)
		goto undo_init;
	sim_context_add(s, dev);
	*ret_q = q;
	return 0;

undo_init:
	pthread_cond_destroy(&q->done);
	pthread_cond_destroy(&q->work);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return -r;
}

int sim_queue_submit(struct sim_queue *q, const void *ops, size_t n,
		     _Atomic uint64_t *last, uint64_t *ret_seq)
{
	struct block *b;
	uint64_t seq;

	if (n == 0 || n > (SIZE_MAX - sizeof(*b)) / q->op_size)
		return -EINVAL;
	if (!(b = malloc(sizeof(*b) + n * q->op_size)))
		return -ENOMEM;
	b->next = NULL;
	b->n = n;
	memcpy(b->ops, ops, n * q->op_size);
	pthread_mutex_lock(&q->lock);
	b->first_seq = q->submitted + 1;
	seq = q->submitted += n;
	if (last)
		atomic_store(last, seq);
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->lock);
	*ret_seq = seq;
	return 0;
}

uint64_t sim_queue_submitted(struct sim_queue *q)
{
	uint64_t seq;

	pthread_mutex_lock(&q->lock);
	seq = q->submitted;
	pthread_mutex_unlock(&q->lock);
	return seq;
}

bool sim_queue_done(struct sim_queue *q, uint64_t seq)
{
	bool done;

	pthread_mutex_lock(&q->lock);
	done = q->completed >= seq;
	pthread_mutex_unlock(&q->lock);
	return done;
}

void sim_deadline_after(struct timespec *ret_deadline, uint64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000ULL);
	ts.tv_nsec += (long)(ns % 1000000000ULL);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	*ret_deadline = ts;
}

int sim_queue_wait(struct sim_queue *q, uint64_t seq, uint64_t timeout_ns)
{
	struct timespec deadline;
	int r;

	if (timeout_ns != SIM_QUEUE_FOREVER)
		sim_deadline_after(&deadline, timeout_ns);
	pthread_mutex_lock(&q->lock);
	while (q->completed < seq) {
		if (timeout_ns == SIM_QUEUE_FOREVER)
			pthread_cond_wait(&q->done, &q->lock);
		else if (pthread_cond_timedwait(&q->done, &q->lock, &deadline) != 0)
			break;     /* ETIMEDOUT */
	}
	r = q->completed >= seq ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&q->lock);
	return r;
}

void sim_queue_drain(struct sim_queue *q)
{
	sim_queue_wait(q, sim_queue_submitted(q), SIM_QUEUE_FOREVER);
}

struct sim_queue *sim_queue_free(struct sim_queue *q)
{
	if (!q)
		return NULL;
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->worker, NULL);
	sim_context_remove(q->sim, q->dev);
	pthread_cond_destroy(&q->done);
	pthread_cond_destroy(&q->work);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return NULL;
}
