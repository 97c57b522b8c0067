/* SPDX-License-Identifier: MIT */
/*
 * Policy MOTET_POLICY_PRIO (thread_policy_prio.c): the operations every
 * switch makes, in line, so that the default policy costs no call on the
 * common path. Included by thread_internal.h only, after the ready
 * structure and the slice timer it uses.
 */
#ifndef MOTET_THREAD_POLICY_PRIO_H
#define MOTET_THREAD_POLICY_PRIO_H

#include "motet/timer.h"

/* A fresh slice of round robin. */
#define THREAD_PRIO_SLICE TIMER_US(MOTET_THREAD_SLICE_US)

/* t shares its level in slices (round robin compiled in, class RR). */
static MT_INLINE bool policy_prio_is_rr(const thread_t *t)
{
    return MOTET_THREAD_RR && t->cls == THREAD_CLASS_RR;
}

/* t starts a new slice of round robin (a yield gives one). */
static MT_INLINE void policy_prio_new_slice(thread_t *t)
{
    t->flags &= (uint8_t) ~THREAD_F_SLICE;
    t->quantum = THREAD_PRIO_SLICE;
}

/* t enters the ready structure (READY_*): behind its equals, or first
 * among them when preempted with slice left; irq off. */
static MT_INLINE void policy_ready(thread_t *t, uint8_t how)
{
    bool spent = policy_prio_is_rr(t) && (t->flags & THREAD_F_SLICE);
    if (MOTET_THREAD_RR && (how == READY_YIELD || spent)) policy_prio_new_slice(t);
    t->key = (uint8_t) t->prio; /* may have changed: priority inheritance */
    rq_push(t, how == READY_PREEMPTED && !spent);
}

/* t leaves the ready structure; irq off. */
static MT_INLINE void policy_remove(thread_t *t)
{
    rq_remove(t);
}

/* The same for t, the thread policy_peek() returned: the head of its key. */
static MT_INLINE void policy_take_peeked(thread_t *t)
{
    rq_take_head(t);
}

/* The highest ready thread, first of its equals; irq off. */
static MT_INLINE thread_t *policy_peek(void)
{
    return rq_peek();
}

/* A strictly higher thread preempts; an equal only when the running RR
 * thread's slice ran out. */
static MT_INLINE bool policy_preempts(const thread_t *c, const thread_t *cur)
{
    if (c->prio > cur->prio) return true;
    return c->prio == cur->prio && policy_prio_is_rr(cur) && (cur->flags & THREAD_F_SLICE);
}

/* cur got the CPU: with round robin, arm its slice while an equal waits. */
static MT_INLINE void policy_started(thread_t *cur)
{
    if (!MOTET_THREAD_RR) return;
    if (policy_prio_is_rr(cur) && rq_first(cur->key)) /* an equal waits */
        thread_slice_arm(cur, cur->quantum ? cur->quantum : 1);
    else
        thread_slice_disarm();
}

/* Charge an RR thread's slice with the CPU it used. */
static MT_INLINE void policy_charge(thread_t *cur, uint32_t ran)
{
    if (!policy_prio_is_rr(cur)) return;
    cur->quantum = ran < cur->quantum ? cur->quantum - ran : 0;
    if (!cur->quantum) cur->flags |= THREAD_F_SLICE;
}

/* Fixed priorities: blocking changes nothing. */
static MT_INLINE void policy_blocking(thread_t *cur, thread_event_t ev)
{
    (void) cur;
    (void) ev;
}

/* No idle thread: a blocking thread with nothing to run sleeps in place. */
static MT_INLINE thread_t *policy_idle(void)
{
    return NULL;
}

/* Nothing to do at a semaphore operation. */
static MT_INLINE void policy_sem_op(void)
{
}

#endif /* MOTET_THREAD_POLICY_PRIO_H */
