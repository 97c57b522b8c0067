/* SPDX-License-Identifier: MIT */
/*
 * Event flags (MOTET_THREADS=1; docs/threads.md): 32 bits that threads,
 * handlers and interrupts set and clear, and threads wait on, for any or
 * all of a set of bits, at most for a timeout. One set wakes every waiter
 * it satisfies; bits a woken waiter asked to consume (EVENTS_CLEAR) are
 * cleared once all of them have seen them.
 *
 * Example:
 *
 *     #define EV_RX  0x1u
 *     #define EV_TX  0x2u
 *     static events_t radio;
 *     events_init(&radio, 0);                          // boot
 *     events_set_isr(&radio, EV_RX);                   // radio interrupt
 *     uint32_t got;
 *     if (events_wait(&radio, EV_RX | EV_TX, EVENTS_ANY | EVENTS_CLEAR,
 *                     TIMER_MS(50), &got) == MT_OK && (got & EV_RX))
 *         read_frame();                                // a thread
 */
#ifndef MOTET_EVENTS_H
#define MOTET_EVENTS_H

#include "motet/thread.h"

/* events_wait() modes, or-ed. */
#define EVENTS_ANY   0x00u /* satisfied by any of the bits waited for */
#define EVENTS_ALL   0x01u /* only by all of them */
#define EVENTS_CLEAR 0x02u /* the waiter consumes the bits it waited for */

typedef struct events {
    thread_t *waiters; /* first: a wait list */
    uint32_t bits;
} events_t;

#if MOTET_THREADS

/* Set the flags to `bits`; boot or task context, no waiters. */
void events_init(events_t *e, uint32_t bits);
/* Set bits and wake the waiters it satisfies (a preemption point if one
 * was woken); any context (from an interrupt the woken run at its exit). */
void events_set(events_t *e, uint32_t bits);
/* Same; named for interrupt code. */
void events_set_isr(events_t *e, uint32_t bits);
/* Clear bits; returns the flags before; any context. */
uint32_t events_clear(events_t *e, uint32_t bits);
/* The flags now. */
uint32_t events_get(const events_t *e);
/* Wait at most `timeout` ticks until the flags hold any (EVENTS_ANY) or all
 * (EVENTS_ALL) of `want`; *got (may be NULL) receives the flags that
 * satisfied it, or those at the timeout. MT_OK, MT_ERR_TIMEOUT,
 * MT_ERR_INVALID (logged: want 0, unknown mode). Thread; elsewhere with
 * THREAD_NO_WAIT only (else MT_ERR_STATE, logged). */
mt_err_t events_wait(events_t *e, uint32_t want, uint8_t mode, uint32_t timeout, uint32_t *got);

#endif /* MOTET_THREADS */

#endif /* MOTET_EVENTS_H */
