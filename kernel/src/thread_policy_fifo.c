/* SPDX-License-Identifier: MIT */
/*
 * Policy MOTET_POLICY_FIFO: run to completion in arrival order, the
 * event-driven baseline (TinyOS tasks). Threads form one FIFO whatever
 * their levels; a thread never preempts another, it runs until it blocks
 * or yields. Levels still rank the head of the FIFO against the kernel
 * stack (message handlers), so interrupts and handlers keep their
 * priorities, as TinyOS's interrupts and events preempt its tasks. No
 * clock is read, no timer armed: the cheapest policy.
 */
#include "thread_internal.h"

#if MOTET_THREADS && MOTET_THREAD_POLICY == MOTET_POLICY_FIFO

void policy_init(void)
{
    rq_init();
}

mt_err_t policy_thread_init(thread_t *t)
{
    if (t->cls != THREAD_CLASS_DEFAULT && t->cls != THREAD_CLASS_FIFO) return MT_ERR_INVALID;
    t->cls = THREAD_CLASS_FIFO;
    t->key = 0; /* one FIFO for all */
    return MT_OK;
}

void policy_ready(thread_t *t, uint8_t how)
{
    /* A thread that lost the CPU to the kernel stack resumes first. */
    rq_push(t, how == READY_PREEMPTED);
}

void policy_remove(thread_t *t)
{
    rq_remove(t);
}

thread_t *policy_peek(void)
{
    return rq_peek();
}

bool policy_preempts(const thread_t *c, const thread_t *cur)
{
    (void) c;
    (void) cur;
    return false; /* run to completion */
}

void policy_started(thread_t *cur)
{
    (void) cur;
}

void policy_charge(thread_t *cur, uint32_t ran)
{
    (void) cur;
    (void) ran;
}

void policy_blocking(thread_t *cur, thread_event_t ev)
{
    (void) cur;
    (void) ev;
}

void policy_timer(uint8_t id)
{
    (void) id;
}

thread_t *policy_idle(void)
{
    return NULL;
}

mt_err_t policy_sleep(thread_t *cur, uint32_t ticks)
{
    return timer_kernel_start(cur->id, ticks, false);
}

void policy_sem_op(void)
{
}

#endif
