/* pshared.h — synchronisation between processes through shared memory.
 *
 * simdev's device state, the interposer's regions and its arbiter live in
 * files that many processes map; these are the locks and waits they use.
 * The mutexes are robust: when a process dies holding one, the next locker
 * takes it over instead of blocking forever (what they guard is changed by
 * single atomic stores, so it is consistent at any point). The futex calls
 * work on a 32-bit word of such a mapping. */
#ifndef GP_BASE_PSHARED_H
#define GP_BASE_PSHARED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* Initialises a robust, process-shared mutex; 0 or a negative errno. */
int gp_pshared_mutex_init(pthread_mutex_t *m);

/* Locks it, taking it over from a dead holder; 0 or a negative errno. */
int gp_pshared_mutex_lock(pthread_mutex_t *m);

/* Sleeps while *word == expected, at most timeout_ns (or until woken). */
void gp_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns);

/* Wakes every waiter on *word. */
void gp_futex_wake_all(_Atomic uint32_t *word);

#endif
