/* SPDX-License-Identifier: MIT */
/*
 * Kernel time (timer.c): the port counter extended to 32 bits. Internal to
 * the kernel: the event log stamps every record with it, and a call per
 * record costs as much as the extension itself, so it is inline here.
 *
 * Kernel time starts at the counter's value (timer_init()) and every read
 * adds the counter's distance since the previous read, so its low
 * PORT_COUNTER_BITS bits always equal the counter at the last read. Hence
 * a 32-bit counter is kernel time itself, and a 16-bit counter only needs
 * the wraps seen so far as the high half: the extension stores two bytes
 * per read (the counter) and the high half only when the counter wrapped.
 */
#ifndef MOTET_TIMER_CLOCK_H
#define MOTET_TIMER_CLOCK_H

#include <string.h>

#include "motet/port.h"
#include "motet/types.h"

/* 16-bit counters: the counter at the last read, and the wraps seen up to
 * it (the high half of kernel time). Unused with a 32-bit counter. */
extern port_counter_t timer_clock_counter;
extern uint16_t timer_clock_wraps;

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
    port_counter_t last = timer_clock_counter;
    timer_clock_counter = c;
    timer_clock_halves_t t;
    t.half[TIMER_CLOCK_LOW] = (uint16_t) c;
    t.half[!TIMER_CLOCK_LOW] = timer_clock_wraps;
    /* A read at least once per wrap (timer.c) sees every wrap as a step
     * back of the counter. */
    if (c < last) timer_clock_wraps = ++t.half[!TIMER_CLOCK_LOW];
    return t.time;
}

/* timer_clock_extend() stored into *time, each half as soon as it is
 * known: 8-bit compilers then never hold all of kernel time in registers
 * (the event log stamps its records so). Interrupts must be held off. */
static MT_INLINE void timer_clock_extend_into(uint32_t *time)
{
    port_counter_t c = port_counter_read_irq_off();
    if (PORT_COUNTER_BITS == 32) {
        *time = c;
        return;
    }
    char *halves = (char *) time;
    port_counter_t last = timer_clock_counter;
    timer_clock_counter = c;
    uint16_t half = (uint16_t) c;
    memcpy(halves + TIMER_CLOCK_LOW * sizeof half, &half, sizeof half);
    half = timer_clock_wraps;
    if (c < last) timer_clock_wraps = ++half;
    memcpy(halves + !TIMER_CLOCK_LOW * sizeof half, &half, sizeof half);
}

/* The counter at the read that returned kernel time `now`: its low bits,
 * or on 16-bit counters the stored copy, which spares 8-bit callers
 * keeping all of `now` alive across calls. */
static MT_INLINE port_counter_t timer_clock_counter_at(uint32_t now)
{
    return PORT_COUNTER_BITS == 32 ? (port_counter_t) now : timer_clock_counter;
}

#endif /* MOTET_TIMER_CLOCK_H */
