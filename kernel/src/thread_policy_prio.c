/* SPDX-License-Identifier: MIT */
/*
 * Policy MOTET_POLICY_PRIO: fixed priorities, the modified MANTIS kernel's
 * scheduler. The ready structure is thread_ready.c keyed by level alone:
 * the highest level runs, equals in FIFO order; a thread made ready takes
 * the CPU only from a strictly lower one.
 *
 * Round robin (MOTET_THREAD_RR=1) is compiled in only when asked for, as
 * MANTIS's slice timer became optional: a thread of class THREAD_CLASS_RR
 * then gets MOTET_THREAD_SLICE_US of CPU before an equal that waits takes
 * over. The slice timer is tickless: armed only while an RR thread runs
 * and an equal waits, for what is left of its slice, and charged with the
 * CPU it really used (time lent to handlers or higher threads does not
 * count). A thread preempted by a higher context keeps its place and the
 * rest of its slice; one whose slice ran out goes behind its equals with a
 * fresh one.
 */
#include "motet/timer.h"
#include "thread_internal.h"

#if MOTET_THREADS && MOTET_THREAD_POLICY == MOTET_POLICY_PRIO

#define SLICE TIMER_US(MOTET_THREAD_SLICE_US)

static bool is_rr(const thread_t *t)
{
    return MOTET_THREAD_RR && t->cls == THREAD_CLASS_RR;
}

void policy_init(void)
{
    rq_init();
    thread_slice_reset();
}

mt_err_t policy_thread_init(thread_t *t)
{
    if (t->cls == THREAD_CLASS_DEFAULT) t->cls = THREAD_CLASS_FIFO;
    if (t->cls != THREAD_CLASS_FIFO && !(MOTET_THREAD_RR && t->cls == THREAD_CLASS_RR))
        return MT_ERR_INVALID;
    t->key = (uint8_t) t->prio;
    t->quantum = SLICE;
    return MT_OK;
}

void policy_ready(thread_t *t, uint8_t how)
{
    bool spent = is_rr(t) && (t->flags & THREAD_F_SLICE);
    if (how == READY_YIELD || spent) { /* behind its equals, with a new slice */
        t->flags &= (uint8_t) ~THREAD_F_SLICE;
        t->quantum = SLICE;
    }
    t->key = (uint8_t) t->prio; /* may have changed: priority inheritance */
    rq_push(t, how == READY_PREEMPTED && !spent);
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
    if (c->prio > cur->prio) return true;
    return c->prio == cur->prio && is_rr(cur) && (cur->flags & THREAD_F_SLICE);
}

void policy_started(thread_t *cur)
{
    if (!MOTET_THREAD_RR) return;
    if (is_rr(cur) && rq_first(cur->key)) /* an equal waits */
        thread_slice_arm(cur, cur->quantum ? cur->quantum : 1);
    else
        thread_slice_disarm();
}

void policy_charge(thread_t *cur, uint32_t ran)
{
    if (!is_rr(cur)) return;
    cur->quantum = ran < cur->quantum ? cur->quantum - ran : 0;
    if (!cur->quantum) cur->flags |= THREAD_F_SLICE;
}

void policy_blocking(thread_t *cur, thread_event_t ev)
{
    (void) cur;
    (void) ev;
}

void policy_timer(uint8_t id)
{
    /* The slice ran out: the interrupt exit charges the thread and finds
     * its slice spent. */
    if (id == THREAD_TIMER_SLICE) thread_slice_expired();
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
