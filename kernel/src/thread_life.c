/* SPDX-License-Identifier: MIT */
/*
 * A thread's life around its creation (thread_create.c): the module's
 * threads set up at boot, a new thread admitted (ready now, suspended, or
 * held until sched_run() starts: thread.c releases those as it starts),
 * and a thread's exit, which gives up the CPU for good (thread_sched.h).
 */
#include <string.h>

#include "motet/log.h"
#include "motet/port.h"
#include "motet/timer.h"
#include "thread_internal.h"
#include "thread_sched.h"

#if MOTET_THREADS

void thread_init(void)
{
    thread_slots_init();
    memset(&thread_sched, 0, sizeof thread_sched);
    thread_current = NULL;
#if THREAD_READY_COUNTED
    thread_ready_count = 0;
#endif
    thread_sched.k_floor = thread_sched.yield_bar = -1;
    policy_init();
}

uint8_t thread_admit(thread_t *t, uint8_t start)
{
    if (start == THREAD_START_AT_RUN && (thread_current || thread_sched.k_in_run))
        start = THREAD_START_NOW; /* the scheduler runs already */
    port_irq_state_t s = port_irq_save();
    if (start == THREAD_START_NOW) {
        ready_add(t, READY_WOKEN);
    } else { /* blocked, waiting for nothing: held until resumed or sched_run() */
        t->state = TS_BLOCKED;
        t->flags |= start == THREAD_START_SUSPENDED ? THREAD_F_SUSPENDED : THREAD_F_AT_RUN;
        if (start == THREAD_START_AT_RUN) thread_sched.at_run++;
    }
    port_irq_restore(s);
    return start;
}

void thread_exit(void)
{
    thread_t *cur = thread_current;
    if (!cur || THREAD_IS_IDLE(cur)) { /* K cannot exit */
        log_error(MT_ERR_STATE);
        port_halt(2);
    }
    if (cur->held) thread_mutexes_abandon(cur); /* first: logged for its own pid */
    thread_mail_purge(cur);
    if (cur->task) sched_task_destroy(cur->task);
    if (MOTET_THREAD_SLEEP) timer_kernel_stop(cur->id);
    (void) port_irq_save(); /* for good: this context never resumes */
    charge(cur);            /* lets the policy drop its slice timer */
    thread_stack_check_guard(cur);
    cur->state = TS_FREE;
    cur->task = NULL;
    thread_t *next = next_context();
    if (!next && no_context()) next = policy_idle(); /* else K sleeps in sched_run() */
    if (next) take_cpu(next);
    thread_switch_to(next, &thread_sched.dead_ctx);
    for (;;) {
    }
}

#endif /* MOTET_THREADS */
