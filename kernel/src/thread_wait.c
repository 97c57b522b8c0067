/* SPDX-License-Identifier: MIT */
/*
 * Waiting with a timeout, the one way every blocking call waits
 * (thread_internal.h): semaphores, mutexes, message queues, event flags,
 * pools, the mailbox and sleep.
 *
 * A waiting thread records what it waits for (wait), the wait list it is
 * on (wait_list, the first field of the object waited on) and its request
 * (wait_data, on its own stack: a waker copies into it or reads it). Its
 * own kernel timer, the one thread_sleep() uses, bounds the wait. Whoever
 * ends the wait, the waker or the timer, calls thread_wait_end(): the
 * thread leaves its list, learns the result and becomes ready, all with
 * interrupts off, so the two cannot both end it. The timer is stopped by
 * the thread itself once it runs again, only if it has not fired.
 *
 * A waker hands the thread what it waited for (a unit, an item, a block,
 * the mutex) before it ends the wait, so a thread woken never finds it
 * gone and never waits again for the rest of its timeout.
 */
#include "motet/log.h"
#include "motet/timer.h"
#include "thread_internal.h"

#if MOTET_THREADS

/* Link t behind the threads of its level and above. */
static void waitq_insert(thread_t **list, thread_t *t)
{
    while (*list && (*list)->prio >= t->prio) list = &(*list)->next;
    t->next = *list;
    *list = t;
}

void thread_waitq_unlink(thread_t **list, thread_t *t)
{
    while (*list && *list != t) list = &(*list)->next;
    if (*list) *list = t->next;
    t->next = NULL;
}

void thread_waitq_reorder(thread_t *t)
{
    thread_waitq_unlink(t->wait_list, t);
    waitq_insert(t->wait_list, t);
}

mt_err_t thread_wait_forever(thread_t **list, uint8_t kind, void *data, thread_event_t ev)
{
    thread_t *cur = thread_running();
    policy_blocking(cur, ev);
    cur->state = TS_BLOCKED;
    cur->wait = kind;
    cur->wait_list = list;
    cur->wait_data = data;
    cur->wait_result = MT_OK;
    if (list) waitq_insert(list, cur);
    thread_block(); /* until thread_wait_end() (and a resume, if suspended) */
    return (mt_err_t) cur->wait_result;
}

mt_err_t thread_wait(thread_t **list, uint8_t kind, void *data, uint32_t timeout, thread_event_t ev)
{
    if (timeout == THREAD_FOREVER) return thread_wait_forever(list, kind, data, ev);
    thread_t *cur = thread_running();
    mt_err_t err = timer_kernel_start(cur->id, timeout, false);
    if (err) return err; /* logged by the timer module */
    cur->flags |= THREAD_F_TIMED;
    err = thread_wait_forever(list, kind, data, ev);
    if (cur->flags & THREAD_F_TIMED) { /* ended by a waker: the timer still runs */
        cur->flags &= (uint8_t) ~THREAD_F_TIMED;
        timer_kernel_stop(cur->id);
    }
    return err;
}

void thread_wait_end(thread_t *t, mt_err_t result)
{
    if (thread_wait_finish(t, result)) thread_wake(t);
}

mt_err_t thread_wait_allowed(uint32_t timeout, mt_err_t unavailable)
{
    if (timeout == THREAD_NO_WAIT) return unavailable;
    if (!thread_running() || port_in_isr()) return log_error(MT_ERR_STATE);
    return MT_OK;
}

void thread_after_wake(void)
{
    if (!port_in_isr()) thread_preempt_point();
}

void thread_timer_fired(uint8_t id)
{
    thread_t *t = thread_by_id(id);
    if (!t) {
        policy_timer(id);
        return;
    }
    port_irq_state_t st = port_irq_save();
    bool bounds_wait = (t->flags & THREAD_F_TIMED) || t->wait == WAIT_SLEEP;
    t->flags &= (uint8_t) ~THREAD_F_TIMED;
    if (bounds_wait && t->wait != WAIT_NONE) thread_wait_end(t, MT_ERR_TIMEOUT);
    port_irq_restore(st);
}

#if MOTET_THREAD_SLEEP
mt_err_t thread_sleep(uint32_t ticks)
{
    thread_t *cur = thread_blocking();
    if (!cur) return MT_ERR_STATE;
    if (ticks == 0 || ticks >= 0x80000000u) return log_error(MT_ERR_INVALID);
    port_irq_state_t st = port_irq_save();
    mt_err_t err = policy_sleep(cur, ticks); /* the policy's timer ends it */
    if (!err) {
        err = thread_wait_forever(NULL, WAIT_SLEEP, NULL, THREAD_EV_TIMER);
        if (err == MT_ERR_TIMEOUT) err = MT_OK; /* a sleep ends by its time */
    }
    port_irq_restore(st);
    return err;
}
#endif

#endif /* MOTET_THREADS */
