/* SPDX-License-Identifier: MIT */
/*
 * The delta list's entries (timer.c), shared with the one other file that
 * reads and sets a running timer: timer_phase.c, a timer's phase read and
 * restored. The list's order, its base and its service stay timer.c's.
 */
#ifndef MOTET_TIMER_LIST_H
#define MOTET_TIMER_LIST_H

#include <stddef.h>

#include "motet/port.h"
#include "motet/sched.h"
#include "timer_internal.h"

/* Longest distance an entry lies beyond the time it is linked, and so the
 * longest wait programmed into the compare (counter-wrap safety). */
#define SPAN ((port_counter_t) (PORT_COUNTER_HALF - 1u))
/* A counter narrower than 32 bits cannot hold every timer length (up to
 * TIMER_TICKS_LIMIT-1) in one entry: longer waits are linked in turn. */
#define TIMER_SPLITS (PORT_COUNTER_BITS < 32)

typedef struct timer_block timer_block_t;
struct timer_block {
    msg_t expiry; /* first: its msg_t * is the block's; flags != 0 while in use */
    timer_block_t *next;
    port_counter_t delta; /* ticks after the previous entry (head: after list_base) */
#if TIMER_SPLITS
    uint32_t rest; /* ticks still to wait once this entry's deadline is reached */
#endif
    uint32_t period; /* 0: one-shot */
    mt_pid_t owner;
    uint8_t index; /* 0 .. TIMERS_PER_TASK-1 */
    uint8_t kind;  /* TIMER_*: what the expiry does, tested in one byte */
};

/* A timer's kind: periodic, with a period over SPAN, waiting out a `rest`
 * (the last two only with TIMER_SPLITS), counted (a system task's block of
 * its own, kept for good: timer_counted_start(); bus builds alone have
 * counted timers, and elsewhere the test folds away). */
#define TIMER_PERIODIC    1u
#define TIMER_LONG_PERIOD 2u
#define TIMER_RESTING     4u
#define TIMER_KEPT        (MOTET_BUS ? 8u : 0u)

_Static_assert(offsetof(timer_block_t, expiry) == 0, "a timer's msg_t * must be its block's");

/* The running timers, nearest first; irq off to read or change. */
extern timer_block_t *timer_head;

/* Ticks from the list's base to now, the clock read as the expiry reads it
 * (in line there); out of line, one copy for a start and the questions. */
port_counter_t timer_since_base(void);

/* Ticks t waits beyond its entry's deadline. */
static MT_INLINE uint32_t timer_wait_rest(const timer_block_t *t)
{
#if TIMER_SPLITS
    return t->kind & TIMER_RESTING ? t->rest : 0u;
#else
    (void) t;
    return 0;
#endif
}

/* Give t its period (0: one-shot) and the kind that goes with it; a
 * counted timer's block stays kept. */
static MT_INLINE void timer_set_period(timer_block_t *t, uint32_t period)
{
    t->period = period;
    t->kind = (uint8_t) ((t->kind & (TIMER_RESTING | TIMER_KEPT)) | (period ? TIMER_PERIODIC : 0u) |
                         (TIMER_SPLITS && period > SPAN ? TIMER_LONG_PERIOD : 0u));
}

/* Ticks from now until `rest` ticks after a deadline `rel` ticks after the
 * list's base (0 if overdue); irq off. */
static MT_INLINE uint32_t timer_ticks_until(port_counter_t rel, uint32_t rest)
{
    port_counter_t elapsed = timer_since_base();
    uint32_t total = (uint32_t) rel + rest;
    return total > elapsed ? total - elapsed : 0u;
}

#endif /* MOTET_TIMER_LIST_H */
