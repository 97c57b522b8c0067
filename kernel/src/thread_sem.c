/* SPDX-License-Identifier: MIT */
/*
 * Waiting and waking (thread.h): counting semaphores, sleep, and the
 * mailbox of a thread bound to a task pid.
 *
 * Every wait follows the same steps with interrupts off: tell the policy
 * what the thread waits for (event boosting), mark it blocked, link it where
 * its waker will find it, and thread_block(). Every wake is thread_wake()
 * plus, in task context, a preemption point; from an interrupt the switch
 * waits for the interrupt exit (dispatch rule 3 for threads).
 */
#include "motet/log.h"
#include "motet/timer.h"
#include "thread_internal.h"

#if MOTET_THREADS

/* The running thread, or NULL (with MT_ERR_STATE logged) if K runs: only a
 * thread may block. */
static thread_t *blocking_thread(void)
{
    thread_t *cur = thread_running();
    if (!cur || port_in_isr()) {
        log_error(MT_ERR_STATE);
        return NULL;
    }
    return cur;
}

/* ---- semaphores ---- */

void sem_init(sem_t *s, int16_t count)
{
    s->waiters = NULL;
    s->count = count;
}

/* Unlink and return the highest-priority waiter (FIFO among equals). */
static thread_t *take_best_waiter(sem_t *s)
{
    thread_t **best = &s->waiters;
    for (thread_t **link = &s->waiters; *link; link = &(*link)->next)
        if ((*link)->prio > (*best)->prio) best = link;
    thread_t *t = *best;
    *best = t->next;
    t->next = NULL;
    return t;
}

static void append_waiter(sem_t *s, thread_t *t)
{
    thread_t **link = &s->waiters;
    while (*link) link = &(*link)->next;
    t->next = NULL;
    *link = t;
}

mt_err_t sem_wait_ev(sem_t *s, thread_event_t ev)
{
    thread_t *cur = blocking_thread();
    if (!cur) return MT_ERR_STATE;
    port_irq_state_t st = port_irq_save();
    policy_sem_op();
    if (s->count > 0) {
        s->count--;
    } else {
        policy_blocking(cur, ev);
        cur->state = TS_BLOCKED;
        append_waiter(s, cur);
        thread_block(); /* the post handed this unit straight to us */
    }
    port_irq_restore(st);
    return MT_OK;
}

mt_err_t sem_wait(sem_t *s)
{
    return sem_wait_ev(s, THREAD_EV_NONE);
}

/* Give a unit: to the best waiter if any, else to the count; irq off. */
static void post_locked(sem_t *s)
{
    policy_sem_op();
    if (s->waiters)
        thread_wake(take_best_waiter(s));
    else if (s->count < INT16_MAX)
        s->count++;
}

mt_err_t sem_post(sem_t *s)
{
    port_irq_state_t st = port_irq_save();
    post_locked(s);
    port_irq_restore(st);
    thread_preempt_point();
    return MT_OK;
}

mt_err_t sem_post_isr(sem_t *s)
{
    port_irq_state_t st = port_irq_save();
    post_locked(s);
    port_irq_restore(st);
    return MT_OK;
}

/* ---- sleep ---- */

#if MOTET_THREAD_SLEEP
mt_err_t thread_sleep(uint32_t ticks)
{
    thread_t *cur = blocking_thread();
    if (!cur) return MT_ERR_STATE;
    if (ticks == 0 || ticks >= 0x80000000u) return log_error(MT_ERR_INVALID);
    port_irq_state_t st = port_irq_save();
    policy_blocking(cur, THREAD_EV_TIMER);
    cur->state = TS_BLOCKED;
    cur->flags |= THREAD_F_SLEEP;
    mt_err_t err = policy_sleep(cur, ticks);
    if (err) { /* no timer: do not block for ever */
        cur->state = TS_RUNNING;
        cur->flags &= (uint8_t) ~THREAD_F_SLEEP;
    } else {
        thread_block();
    }
    port_irq_restore(st);
    return err;
}
#endif

void thread_timer_fired(uint8_t id)
{
    thread_t *t = thread_by_id(id);
    if (!t) {
        policy_timer(id);
        return;
    }
    port_irq_state_t st = port_irq_save();
    if (t->flags & THREAD_F_SLEEP) {
        t->flags &= (uint8_t) ~THREAD_F_SLEEP;
        thread_wake(t);
    }
    port_irq_restore(st);
}

/* ---- the mailbox ---- */

void thread_mail_push(thread_t *t, msg_t *m)
{
    m->next = NULL;
    if (t->mail_tail)
        t->mail_tail->next = m;
    else
        t->mail = m;
    t->mail_tail = m;
    t->mail_count++;
    if (t->flags & THREAD_F_MAIL) {
        t->flags &= (uint8_t) ~THREAD_F_MAIL;
        thread_wake(t);
    }
}

static msg_t *mail_pop(thread_t *t)
{
    msg_t *m = t->mail;
    t->mail = m->next;
    if (!t->mail) t->mail_tail = NULL;
    t->mail_count--;
    m->next = NULL;
    return m;
}

msg_t *thread_receive_ev(thread_event_t ev)
{
    thread_t *cur = blocking_thread();
    if (!cur) return NULL;
    if (!cur->task) {
        log_error(MT_ERR_STATE);
        return NULL;
    }
    if (cur->last_mail) { /* its payload was only lent until now */
        sched_msg_release(cur->last_mail);
        cur->last_mail = NULL;
    }
    port_irq_state_t st = port_irq_save();
    if (!cur->mail) {
        policy_blocking(cur, ev);
        cur->state = TS_BLOCKED;
        cur->flags |= THREAD_F_MAIL;
        thread_block(); /* a message arrived */
    }
    msg_t *m = mail_pop(cur);
    port_irq_restore(st);
    cur->last_mail = m;
    return m;
}

msg_t *thread_receive(void)
{
    return thread_receive_ev(THREAD_EV_NONE);
}

uint8_t thread_mail_count(const thread_t *t)
{
    return t->mail_count;
}

void thread_mail_purge(thread_t *t)
{
    port_irq_state_t st = port_irq_save();
    msg_t *list = t->mail;
    t->mail = t->mail_tail = NULL;
    t->mail_count = 0;
    port_irq_restore(st);
    if (t->last_mail) sched_msg_release(t->last_mail);
    t->last_mail = NULL;
    while (list) {
        msg_t *next = list->next;
        sched_msg_release(list);
        list = next;
    }
}

#endif /* MOTET_THREADS */
