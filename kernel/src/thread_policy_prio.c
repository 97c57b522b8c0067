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
 * fresh one. The operations of every switch are in line
 * (thread_policy_prio.h).
 */
#include "motet/timer.h"
#include "thread_internal.h"

#if MOTET_THREADS && MOTET_THREAD_POLICY == MOTET_POLICY_PRIO

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
    t->quantum = THREAD_PRIO_SLICE;
    return MT_OK;
}

void policy_timer(uint8_t id)
{
    /* The slice ran out: the interrupt exit charges the thread and finds
     * its slice spent. */
    if (id == THREAD_TIMER_SLICE) thread_slice_expired();
}

mt_err_t policy_sleep(thread_t *cur, uint32_t ticks)
{
    return timer_kernel_start(cur->id, ticks, false);
}

#endif
