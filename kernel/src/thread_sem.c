/* SPDX-License-Identifier: MIT */
/*
 * Counting and binary semaphores, and the mailbox of a thread bound to a
 * task pid (thread.h). Both wait through thread_wait() (thread_wait.c).
 * Every wake is thread_wait_end() plus, in task context, a preemption
 * point; from an interrupt the switch waits for the interrupt exit
 * (dispatch rule 3 for threads).
 */
#include "motet/log.h"
#include "motet/timer.h"
#include "thread_internal.h"

#if MOTET_THREADS

thread_t *thread_blocking(void)
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
    sem_init_max(s, count, INT16_MAX);
}

void sem_init_max(sem_t *s, int16_t count, int16_t max)
{
    s->waiters = NULL;
    s->max = max > 0 ? max : 1;
    s->count = count < 0 ? 0 : count > s->max ? s->max : count;
}

/* Take a unit at once if there is one; irq off. */
static bool take_locked(sem_t *s)
{
    policy_sem_op();
    if (s->count <= 0) return false;
    s->count--;
    return true;
}

mt_err_t sem_wait_for(sem_t *s, uint32_t timeout)
{
    port_irq_state_t st = port_irq_save();
    mt_err_t err = MT_OK;
    if (!take_locked(s)) {
        err = thread_wait_allowed(timeout, MT_ERR_TIMEOUT);
        if (!err) /* the post hands its unit straight to us */
            err = thread_wait(&s->waiters, WAIT_OBJECT, NULL, timeout, THREAD_EV_NONE);
    }
    port_irq_restore(st);
    return err;
}

mt_err_t sem_try_wait(sem_t *s)
{
    port_irq_state_t st = port_irq_save();
    bool took = take_locked(s);
    port_irq_restore(st);
    return took ? MT_OK : MT_ERR_TIMEOUT;
}

mt_err_t sem_wait_ev(sem_t *s, thread_event_t ev)
{
    thread_t *cur = thread_blocking();
    if (!cur) return MT_ERR_STATE;
    port_irq_state_t st = port_irq_save();
    mt_err_t err = MT_OK;
    if (!take_locked(s)) err = thread_wait_forever(&s->waiters, WAIT_OBJECT, NULL, ev);
    port_irq_restore(st);
    return err;
}

mt_err_t sem_wait(sem_t *s)
{
    return sem_wait_ev(s, THREAD_EV_NONE);
}

/* Give a unit: to the best waiter if any, else to the count, up to its
 * limit (MT_ERR_FULL: the post is absorbed); irq off. With `switched`
 * (task context), a waiter that outranks the caller runs at once and
 * *switched says so. */
static mt_err_t post_locked(sem_t *s, bool *switched)
{
    policy_sem_op();
    if (s->waiters) {
        thread_t *t = thread_waitq_take(&s->waiters);
        if (switched)
            *switched = thread_wait_end_switch(t, MT_OK);
        else
            thread_wait_end(t, MT_OK);
    } else if (s->count < s->max) {
        s->count++;
    } else {
        return MT_ERR_FULL;
    }
    return MT_OK;
}

mt_err_t sem_post(sem_t *s)
{
    port_irq_state_t st = port_irq_save();
    bool switched = false;
    mt_err_t err = post_locked(s, &switched);
    port_irq_restore(st);
    if (!switched) thread_preempt_point();
    return err;
}

mt_err_t sem_post_isr(sem_t *s)
{
    port_irq_state_t st = port_irq_save();
    mt_err_t err = post_locked(s, NULL);
    port_irq_restore(st);
    return err;
}

int16_t sem_count(const sem_t *s)
{
    return s->count;
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
    if (t->wait == WAIT_MAIL) thread_wait_end(t, MT_OK);
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

/* The next message of the running thread's mailbox, waiting at most
 * `timeout` for one; NULL if none came. */
static msg_t *receive(uint32_t timeout, thread_event_t ev)
{
    thread_t *cur = thread_blocking();
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
    if (!cur->mail && timeout != THREAD_NO_WAIT)
        (void) thread_wait(NULL, WAIT_MAIL, NULL, timeout, ev); /* a message, or the time */
    msg_t *m = cur->mail ? mail_pop(cur) : NULL;
    port_irq_restore(st);
    cur->last_mail = m;
    return m;
}

msg_t *thread_receive_ev(thread_event_t ev)
{
    return receive(THREAD_FOREVER, ev);
}

msg_t *thread_receive(void)
{
    return receive(THREAD_FOREVER, THREAD_EV_NONE);
}

msg_t *thread_receive_for(uint32_t timeout)
{
    return receive(timeout, THREAD_EV_NONE);
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
