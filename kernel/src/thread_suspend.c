/* SPDX-License-Identifier: MIT */
/*
 * Suspend and resume (thread.h). Suspension is independent of waiting: a
 * suspended thread is never in the ready structure, and one that waits
 * keeps waiting (its wait may end, with its result kept, while it is
 * suspended); it runs again only once it is resumed and its wait, if any,
 * has ended. A blocked thread that waits for nothing is held by its
 * suspension alone, so resuming it makes it ready.
 */
#include "motet/log.h"
#include "thread_internal.h"

#if MOTET_THREADS

mt_err_t thread_suspend(thread_t *t)
{
    if (port_in_isr()) return log_error(MT_ERR_STATE);
    if (!t || t->state == TS_FREE || THREAD_IS_IDLE(t)) return log_error(MT_ERR_INVALID);
    port_irq_state_t s = port_irq_save();
    if (!(t->flags & THREAD_F_SUSPENDED)) {
        t->flags |= THREAD_F_SUSPENDED;
        if (t == thread_running()) { /* itself: blocked until resumed */
            t->state = TS_BLOCKED;
            thread_block();
        } else if (t->state == TS_READY) {
            thread_unready(t);
        }
    }
    port_irq_restore(s);
    return MT_OK;
}

/* Clear the suspension; ready if nothing else holds it; irq off. With
 * `switched` (task context), t runs at once if it outranks the caller and
 * *switched says so. */
static mt_err_t resume_locked(thread_t *t, bool *switched)
{
    if (!t || !(t->flags & THREAD_F_SUSPENDED)) return log_error(MT_ERR_STATE);
    t->flags &= (uint8_t) ~THREAD_F_SUSPENDED;
    if (t->wait != WAIT_NONE || (t->flags & THREAD_F_AT_RUN)) return MT_OK;
    if (switched)
        *switched = thread_wake_switch(t);
    else
        thread_wake(t);
    return MT_OK;
}

mt_err_t thread_resume(thread_t *t)
{
    if (port_in_isr()) return thread_resume_isr(t);
    port_irq_state_t s = port_irq_save();
    bool switched = false;
    mt_err_t err = resume_locked(t, &switched);
    port_irq_restore(s);
    if (!switched) thread_preempt_point(); /* it runs now if it outranks the caller */
    return err;
}

mt_err_t thread_resume_isr(thread_t *t)
{
    port_irq_state_t s = port_irq_save();
    mt_err_t err = resume_locked(t, NULL);
    port_irq_restore(s);
    return err;
}

bool thread_suspended(const thread_t *t)
{
    return (t->flags & THREAD_F_SUSPENDED) != 0;
}

#endif /* MOTET_THREADS */
