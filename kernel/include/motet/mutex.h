/* SPDX-License-Identifier: MIT */
/*
 * Mutexes with priority inheritance, for threads (MOTET_THREADS=1;
 * docs/threads.md). While a higher thread waits for a mutex, its holder
 * runs at the waiter's level, and so, along a chain, does the holder of any
 * mutex that holder waits for; at unlock the holder drops back to the
 * highest level still owed to it. The mutex goes straight to the highest
 * waiter (FIFO among equals). A thread may lock a mutex it holds again
 * (recursive): it is free after as many unlocks.
 *
 * Only threads lock: a handler or an interrupt has no thread to hold it or
 * to raise.
 *
 * A thread that exits holding mutexes (POSIX's robust mutexes): each is
 * released with an MT_ERR_OWNER_DEAD error logged for the exiting thread,
 * its inherited level is undone, and the mutex goes to its highest waiter,
 * whose mutex_lock() returns MT_ERR_OWNER_DEAD: it holds the mutex, but
 * what the mutex guards may be half-updated.
 *
 * Example:
 *
 *     static mutex_t bus_lock;
 *     mutex_init(&bus_lock);                    // boot
 *     if (mutex_lock(&bus_lock, TIMER_MS(5)) == MT_OK) {
 *         i2c_transfer(...);
 *         mutex_unlock(&bus_lock);
 *     }
 */
#ifndef MOTET_MUTEX_H
#define MOTET_MUTEX_H

#include "motet/thread.h"

typedef struct mutex {
    thread_t *waiters;       /* first: a wait list */
    thread_t *owner;         /* NULL: free */
    struct mutex *next_held; /* the owner's other mutexes */
    uint8_t depth;           /* locks by the owner not yet undone */
} mutex_t;

#if MOTET_THREADS

/* Free, no waiters; boot or task context. */
void mutex_init(mutex_t *m);
/* Take m, waiting at most `timeout` ticks while another thread holds it
 * (raising that holder to the caller's level meanwhile): MT_OK,
 * MT_ERR_OWNER_DEAD (taken, from a holder that exited holding it),
 * MT_ERR_TIMEOUT, MT_ERR_FULL (locked 255 times by the caller); thread,
 * else MT_ERR_STATE (logged). */
mt_err_t mutex_lock(mutex_t *m, uint32_t timeout);
/* Undo one lock by the caller; the last hands m to the best waiter and
 * drops the caller's inherited level (a preemption point). MT_ERR_NOT_OWNER
 * (logged) if the caller does not hold m; MT_ERR_STATE (logged) outside a
 * thread. */
mt_err_t mutex_unlock(mutex_t *m);
/* The thread holding m, NULL if it is free. */
thread_t *mutex_owner(const mutex_t *m);

#endif /* MOTET_THREADS */

#endif /* MOTET_MUTEX_H */
