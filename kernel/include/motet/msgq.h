/* SPDX-License-Identifier: MIT */
/*
 * Message queues of fixed-size items, copied in and out (MOTET_THREADS=1;
 * docs/threads.md): any number of senders and receivers among threads,
 * handlers, boot code and interrupts. Only a thread waits: a full queue
 * holds its senders, an empty one its receivers, each for at most its
 * timeout, and the highest waiter is served first (FIFO among equals). An
 * item goes straight from a sender to a waiting receiver, and a waiting
 * sender's item into the slot a receive frees, so a woken thread never
 * finds its item taken by another.
 *
 * Handlers and boot code use THREAD_NO_WAIT (they cannot block);
 * interrupts use msgq_send_isr(), whose refusal of a full queue is logged:
 * the item is lost unless the interrupt keeps it.
 *
 * Example:
 *
 *     typedef struct { uint16_t channel, value; } sample_t;
 *     static uint8_t buf[8 * sizeof(sample_t)];
 *     static msgq_t samples;
 *     msgq_init(&samples, buf, sizeof(sample_t), 8);           // boot
 *     sample_t s = {3, ADC};
 *     msgq_send_isr(&samples, &s);                             // ADC interrupt
 *     if (msgq_receive(&samples, &s, TIMER_MS(100)) == MT_OK)  // a thread
 *         filter(s.channel, s.value);
 */
#ifndef MOTET_MSGQ_H
#define MOTET_MSGQ_H

#include "motet/thread.h"

typedef struct msgq {
    thread_t *waiters;  /* first: senders while full, or receivers while empty */
    uint8_t *buf;       /* capacity * item_size bytes */
    uint16_t item_size; /* bytes per item */
    uint16_t capacity;  /* items */
    uint16_t head;      /* slot of the oldest item */
    uint16_t count;     /* items queued */
} msgq_t;

#if MOTET_THREADS

/* An empty queue of `capacity` items of `item_size` bytes in buf (capacity
 * * item_size bytes, the caller's); MT_ERR_INVALID for a zero size or
 * capacity; boot or task context, no waiters. */
mt_err_t msgq_init(msgq_t *q, void *buf, uint16_t item_size, uint16_t capacity);
/* Copy *item in at the back, waiting at most `timeout` ticks while the
 * queue is full: MT_OK, MT_ERR_FULL (THREAD_NO_WAIT), MT_ERR_TIMEOUT;
 * a preemption point if it wakes a receiver. Thread; handlers and boot
 * code with THREAD_NO_WAIT only (else MT_ERR_STATE, logged); from an
 * interrupt as msgq_send_isr(). */
mt_err_t msgq_send(msgq_t *q, const void *item, uint32_t timeout);
/* Same from an interrupt, never waiting: a full queue is refused with
 * MT_ERR_FULL, logged; a woken receiver runs at interrupt exit if it
 * strictly outranks the interrupted context; any context. */
mt_err_t msgq_send_isr(msgq_t *q, const void *item);
/* Copy the oldest item out to *item, waiting at most `timeout` ticks while
 * the queue is empty: MT_OK, MT_ERR_TIMEOUT; a preemption point if it
 * wakes a sender. Thread; elsewhere with THREAD_NO_WAIT only (else
 * MT_ERR_STATE, logged). */
mt_err_t msgq_receive(msgq_t *q, void *item, uint32_t timeout);
/* Items queued now. */
uint16_t msgq_count(const msgq_t *q);

#endif /* MOTET_THREADS */

#endif /* MOTET_MSGQ_H */
