/* SPDX-License-Identifier: MIT */
/*
 * Kernel time (timer.c): the port counter extended to 32 bits. Internal to
 * the kernel. The event log stamps its records with the counter alone and
 * extends the stamps when it is drained (log_ring.h): each wrap the clock
 * sees is written to the log as a time-base record.
 *
 * Kernel time starts at the counter's value (timer_init()) and every read
 * adds the counter's distance since the previous read, so its low
 * PORT_COUNTER_BITS bits always equal the counter at the last read. Hence
 * a 32-bit counter is kernel time itself, and a 16-bit counter only needs
 * the wraps seen so far as the high half. A wrap shows as a step back of
 * the counter's top byte, so that byte is all a read keeps of the counter:
 * one byte loaded and stored per read, the high half stored only on a wrap.
 * The reads must come at least once per wrap less 256 ticks (timer.c
 * reads at least every half range while a timer runs).
 */
#ifndef MOTET_TIMER_CLOCK_H
#define MOTET_TIMER_CLOCK_H

#include "log_ring.h"
#include "motet/port.h"
#include "motet/types.h"

/* 16-bit counters: the counter's top byte at the last read, and the wraps
 * seen up to it (the high half of kernel time). Unused with a 32-bit counter. */
extern uint8_t timer_clock_last_top;
extern uint16_t timer_clock_wraps;

/* The counter's top byte: a wrap is the one way it steps back. */
static MT_INLINE uint8_t timer_clock_top(port_counter_t c)
{
    return (uint8_t) (c >> (PORT_COUNTER_BITS - 8));
}

/* Kernel time as its two 16-bit halves: assembled in place, 8-bit
 * compilers need no 32-bit shift and merge. */
typedef union {
    uint32_t time;
    uint16_t half[2];
} timer_clock_halves_t;
#define TIMER_CLOCK_LOW (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

/* timer_now_irq_off(), inline. Interrupts must be held off. */
static MT_INLINE uint32_t timer_clock_extend(void)
{
    port_counter_t c = port_counter_read_irq_off();
    if (PORT_COUNTER_BITS == 32) return c;
    /* The previous read is stored over at once: 8-bit compilers then keep
     * fewer values alive and need no call-saved registers. */
    uint8_t last_top = timer_clock_last_top;
    timer_clock_last_top = timer_clock_top(c);
    timer_clock_halves_t t;
    t.half[TIMER_CLOCK_LOW] = (uint16_t) c;
    t.half[!TIMER_CLOCK_LOW] = timer_clock_wraps;
    if (timer_clock_top(c) < last_top) {
        timer_clock_wraps = ++t.half[!TIMER_CLOCK_LOW];
        log_time_base_irq_off(t.half[!TIMER_CLOCK_LOW]);
    }
    return t.time;
}

/* A wrap seen by timer_clock_counter(): the high half moves on; irq off. */
void timer_clock_wrapped(void);

/* The counter, read as timer_clock_extend() reads it (so that no wrap goes
 * unseen), for callers that need only its width: the wrap's bookkeeping is
 * out of line, and the read keeps no more registers than the counter's. */
static MT_INLINE port_counter_t timer_clock_counter(void)
{
    port_counter_t c = port_counter_read_irq_off();
    if (PORT_COUNTER_BITS == 32) return c;
    uint8_t last_top = timer_clock_last_top;
    timer_clock_last_top = timer_clock_top(c);
    if (timer_clock_top(c) < last_top) timer_clock_wrapped();
    return c;
}

/* The counter at the read that returned kernel time `now`: its low bits. */
static MT_INLINE port_counter_t timer_clock_counter_at(uint32_t now)
{
    return (port_counter_t) now;
}

#endif /* MOTET_TIMER_CLOCK_H */
