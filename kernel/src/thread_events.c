/* SPDX-License-Identifier: MIT */
/*
 * Event flags (events.h). A waiter's request lives on its own stack
 * (wait_data); a set examines every waiter against the same new flags,
 * wakes those satisfied, and only then clears what they consumed, so that
 * two threads waiting for the same bit both see it.
 */
#include "motet/events.h"
#include "motet/log.h"
#include "thread_internal.h"

#if MOTET_THREADS

/* A waiter's request. */
typedef struct request {
    uint32_t want;
    uint32_t got; /* the flags that satisfied it */
    uint8_t mode;
} request_t;

void events_init(events_t *e, uint32_t bits)
{
    e->waiters = NULL;
    e->bits = bits;
}

uint32_t events_get(const events_t *e)
{
    return e->bits;
}

uint32_t events_clear(events_t *e, uint32_t bits)
{
    port_irq_state_t s = port_irq_save();
    uint32_t before = e->bits;
    e->bits &= ~bits;
    port_irq_restore(s);
    return before;
}

static bool satisfied(uint32_t bits, uint32_t want, uint8_t mode)
{
    return (mode & EVENTS_ALL) ? (bits & want) == want : (bits & want) != 0;
}

void events_set(events_t *e, uint32_t bits)
{
    port_irq_state_t s = port_irq_save();
    e->bits |= bits;
    uint32_t consumed = 0;
    bool woke = false;
    for (thread_t *w = e->waiters, *next; w; w = next) {
        next = w->next;
        request_t *r = w->wait_data;
        if (!satisfied(e->bits, r->want, r->mode)) continue;
        r->got = e->bits;
        if (r->mode & EVENTS_CLEAR) consumed |= r->want;
        thread_wait_end(w, MT_OK);
        woke = true;
    }
    e->bits &= ~consumed;
    port_irq_restore(s);
    if (woke) thread_after_wake();
}

void events_set_isr(events_t *e, uint32_t bits)
{
    events_set(e, bits);
}

mt_err_t events_wait(events_t *e, uint32_t want, uint8_t mode, uint32_t timeout, uint32_t *got)
{
    if (!want || (mode & (uint8_t) ~(EVENTS_ALL | EVENTS_CLEAR))) return log_error(MT_ERR_INVALID);
    request_t r = {.want = want, .mode = mode};
    port_irq_state_t s = port_irq_save();
    mt_err_t err = MT_OK;
    if (satisfied(e->bits, want, mode)) {
        r.got = e->bits;
        if (mode & EVENTS_CLEAR) e->bits &= ~want;
    } else {
        err = thread_wait_allowed(timeout, MT_ERR_TIMEOUT);
        if (!err) err = thread_wait(&e->waiters, WAIT_OBJECT, &r, timeout, THREAD_EV_NONE);
        if (err) r.got = e->bits;
    }
    port_irq_restore(s);
    if (got) *got = r.got;
    return err;
}

#endif /* MOTET_THREADS */
