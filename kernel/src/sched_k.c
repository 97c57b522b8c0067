/* SPDX-License-Identifier: MIT */
/*
 * What threads need of the scheduler on the kernel stack K (thread.c, "K's
 * side"): whether K is idle, and the calls a thread hands to K (K's
 * preemption point, a drain, is dispatch.c's). With threads compiled out
 * there is nothing here.
 */
#include "motet/port.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "thread_internal.h"

#if MOTET_THREADS

bool sched_k_idle(void)
{
    return sched.current == &task_none && !sched.k_calls && !sched.stop && queue_top_prio() < 0;
}

/* The caller is blocked (WAIT_K_CALL, thread.c), its call's result in its
 * own stack until fn returns. K runs the call at the caller's level
 * exactly, so that an equal runs at once (rule 1) as it
 * does from a handler. Lowering is right: a thread runs only above K's
 * claim, the level of K's top live frame (k_beats_ready()), and K takes
 * the call at once when it is back (thread_k_yield()), so what may read
 * higher is only a drain's held level, with no frame there. In the call,
 * drains and interrupt exits take their floor from the running level,
 * which its frames only raise: none finds the caller's equals above it,
 * none drains at K's claim below, and a thread above it runs
 * with K's claim there (T.k_floor), so it hands the CPU back to K, not to
 * the caller. A nested call is a thread's above this level. Between the
 * frames K has no frame, but is not idle: k_calls. */
void sched_k_call(void (*fn)(void *), void *arg, mt_prio_t level)
{
    mt_prio_t below = sched.running_prio;
    sched.running_prio = level;
    sched.k_calls++;
    port_irq_enable(); /* whatever the caller held: a handler runs with them on */
    fn(arg);
    port_irq_disable();
    sched.k_calls--;
    sched.running_prio = below;
}

#endif /* MOTET_THREADS */
