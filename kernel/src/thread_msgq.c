/* SPDX-License-Identifier: MIT */
/*
 * Message queues of fixed-size items (msgq.h): a ring of slots in the
 * caller's buffer, and one wait list, which holds senders while the queue
 * is full or receivers while it is empty (never both: a receiver waits
 * only on an empty ring, a sender only on a full one). Items are handed
 * over while the waiter waits: into its buffer (wait_data) for a receiver,
 * from it for a sender.
 */
#include <string.h>

#include "motet/log.h"
#include "motet/msgq.h"
#include "thread_internal.h"

#if MOTET_THREADS

mt_err_t msgq_init(msgq_t *q, void *buf, uint16_t item_size, uint16_t capacity)
{
    if (!q || !buf || !item_size || !capacity) return log_error(MT_ERR_INVALID);
    q->waiters = NULL;
    q->buf = buf;
    q->item_size = item_size;
    q->capacity = capacity;
    q->head = 0;
    q->count = 0;
    return MT_OK;
}

uint16_t msgq_count(const msgq_t *q)
{
    return q->count;
}

static uint8_t *slot(const msgq_t *q, uint16_t i)
{
    uint16_t at = (uint16_t) (q->head + i);
    if (at >= q->capacity) at = (uint16_t) (at - q->capacity);
    return q->buf + (size_t) at * q->item_size;
}

/* Append an item to the ring, which has room; irq off. */
static void put(msgq_t *q, const void *item)
{
    memcpy(slot(q, q->count), item, q->item_size);
    q->count++;
}

/* Hand *item to a waiting receiver or append it; false if the queue is
 * full; *woke says whether a receiver was woken; irq off. In line in both
 * sends: the inliner's own choice for the thread's send depends on the
 * size of the other (15 instructions a send on the Cortex-M3). */
static MT_INLINE bool deliver(msgq_t *q, const void *item, bool *woke)
{
    *woke = q->waiters != NULL; /* receivers: the ring is empty */
    if (*woke) {
        thread_t *r = thread_waitq_take(&q->waiters);
        memcpy(r->wait_data, item, q->item_size);
        thread_wait_end(r, MT_OK);
        return true;
    }
    if (q->count == q->capacity) return false;
    put(q, item);
    return true;
}

mt_err_t msgq_send(msgq_t *q, const void *item, uint32_t timeout)
{
    if (port_in_isr()) return msgq_send_isr(q, item);
    port_irq_state_t s = port_irq_save();
    bool woke;
    mt_err_t err = MT_OK;
    if (!deliver(q, item, &woke)) {
        err = thread_wait_allowed(timeout, MT_ERR_FULL);
        if (!err) /* a receive moves our item into the slot it frees */
            err = thread_wait(&q->waiters, WAIT_OBJECT, (void *) (uintptr_t) item, timeout,
                              THREAD_EV_NONE);
    }
    port_irq_restore(s);
    if (woke) thread_after_wake();
    return err;
}

mt_err_t msgq_send_isr(msgq_t *q, const void *item)
{
    port_irq_state_t s = port_irq_save();
    bool woke;
    bool sent = deliver(q, item, &woke);
    port_irq_restore(s);
    return sent ? MT_OK : log_error(MT_ERR_FULL);
}

mt_err_t msgq_receive(msgq_t *q, void *item, uint32_t timeout)
{
    port_irq_state_t s = port_irq_save();
    bool woke = false;
    mt_err_t err = MT_OK;
    if (q->count) {
        memcpy(item, slot(q, 0), q->item_size);
        q->head = (uint16_t) (q->head + 1 == q->capacity ? 0 : q->head + 1);
        q->count--;
        woke = q->waiters != NULL; /* senders: the ring was full */
        if (woke) {
            thread_t *w = thread_waitq_take(&q->waiters);
            put(q, w->wait_data);
            thread_wait_end(w, MT_OK);
        }
    } else {
        err = thread_wait_allowed(timeout, MT_ERR_TIMEOUT);
        if (!err) /* a send copies its item straight into ours */
            err = thread_wait(&q->waiters, WAIT_OBJECT, item, timeout, THREAD_EV_NONE);
    }
    port_irq_restore(s);
    if (woke) thread_after_wake();
    return err;
}

#endif /* MOTET_THREADS */
