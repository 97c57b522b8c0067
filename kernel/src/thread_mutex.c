/* SPDX-License-Identifier: MIT */
/*
 * Mutexes with priority inheritance (mutex.h).
 *
 * A thread's level is the highest of its own (base_prio) and those of the
 * threads waiting for the mutexes it holds (its held list). That one rule,
 * applied by owed_level() each time a wait list changes, raises and lowers
 * alike: a waiter arrives (the holder is raised), leaves by timeout (the
 * holder drops what it owed only to that waiter) or is handed the mutex
 * (the old holder drops, the new one inherits from the waiters left). A
 * holder that itself waits for a mutex passes its new level on to that
 * mutex's holder, and so on along the chain (follow_chain()).
 */
#include "motet/log.h"
#include "motet/mutex.h"
#include "thread_internal.h"

#if MOTET_THREADS

#include <stddef.h>

_Static_assert(offsetof(mutex_t, waiters) == 0, "a mutex is found from its wait list");

void mutex_init(mutex_t *m)
{
    m->waiters = NULL;
    m->owner = NULL;
    m->next_held = NULL;
    m->depth = 0;
}

thread_t *mutex_owner(const mutex_t *m)
{
    return m->owner;
}

/* The holder of the mutex t waits for, NULL if it waits for none. */
static thread_t *holder_waited_for(const thread_t *t)
{
    return t->wait == WAIT_MUTEX && t->wait_list ? ((mutex_t *) (void *) t->wait_list)->owner
                                                 : NULL;
}

/* The level t is owed: its own, or a waiter's for a mutex it holds. */
static mt_prio_t owed_level(const thread_t *t)
{
    mt_prio_t p = t->base_prio;
    for (const mutex_t *m = t->held; m; m = m->next_held) {
        mt_prio_t w = thread_waitq_top(m->waiters);
        if (w > p) p = w;
    }
    return p;
}

/* Give t the level it is owed, and pass the change along the chain of
 * holders it waits for; irq off. */
static void follow_chain(thread_t *t)
{
    while (t) {
        mt_prio_t p = owed_level(t);
        if (p == t->prio) return;
        thread_prio_set(t, p);
        t = holder_waited_for(t);
    }
}

/* A thread of level p is about to wait for a mutex t holds: raise t, and
 * the holders it waits for, to p; irq off. */
static void raise_chain(thread_t *t, mt_prio_t p)
{
    while (t && t->prio < p) {
        thread_prio_set(t, p);
        t = holder_waited_for(t);
    }
}

static void hold(mutex_t *m, thread_t *t)
{
    m->owner = t;
    m->depth = 1;
    m->next_held = t->held;
    t->held = m;
}

static void release(mutex_t *m, thread_t *t)
{
    mutex_t **link = &t->held;
    while (*link != m) link = &(*link)->next_held;
    *link = m->next_held;
    m->next_held = NULL;
    m->owner = NULL;
    m->depth = 0;
}

mt_err_t mutex_lock(mutex_t *m, uint32_t timeout)
{
    thread_t *cur = thread_blocking();
    if (!cur) return MT_ERR_STATE;
    port_irq_state_t s = port_irq_save();
    mt_err_t err = MT_OK;
    if (!m->owner) {
        hold(m, cur);
    } else if (m->owner == cur) {
        if (m->depth == UINT8_MAX)
            err = MT_ERR_FULL;
        else
            m->depth++;
    } else if (timeout == THREAD_NO_WAIT) {
        err = MT_ERR_TIMEOUT;
    } else {
        raise_chain(m->owner, cur->prio); /* what owed_level() will say once we wait */
        err = thread_wait(&m->waiters, WAIT_MUTEX, NULL, timeout, THREAD_EV_NONE);
        if (err != MT_OK && m->owner) follow_chain(m->owner); /* owes the caller no more */
    }
    port_irq_restore(s);
    return err;
}

/* m was just released: hand it to its best waiter, whose lock returns
 * `result`, and let that one inherit from the waiters left; irq off. */
static void hand_over(mutex_t *m, mt_err_t result)
{
    if (!m->waiters) return;
    thread_t *next = thread_waitq_take(&m->waiters);
    hold(m, next);
    thread_wait_end(next, result);
    follow_chain(next); /* it inherits from the waiters left */
}

void thread_mutexes_abandon(thread_t *t)
{
    port_irq_state_t s = port_irq_save();
    while (t->held) {
        mutex_t *m = t->held;
        log_error(MT_ERR_OWNER_DEAD); /* for the exiting thread's pid */
        release(m, t);
        hand_over(m, MT_ERR_OWNER_DEAD);
    }
    t->prio = t->base_prio; /* owed nothing any more */
    port_irq_restore(s);
}

mt_err_t mutex_unlock(mutex_t *m)
{
    thread_t *cur = thread_running();
    if (!cur || port_in_isr()) return log_error(MT_ERR_STATE);
    port_irq_state_t s = port_irq_save();
    if (m->owner != cur) {
        port_irq_restore(s);
        return log_error(MT_ERR_NOT_OWNER);
    }
    if (--m->depth) {
        port_irq_restore(s);
        return MT_OK;
    }
    release(m, cur);
    hand_over(m, MT_OK);
    follow_chain(cur); /* back to what it is still owed */
    port_irq_restore(s);
    thread_preempt_point();
    return MT_OK;
}

#endif /* MOTET_THREADS */
