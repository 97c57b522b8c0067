/* SPDX-License-Identifier: MIT */
/*
 * Kernel time (timer.c): the port counter extended to 32 bits. Internal to
 * the kernel: the event log stamps every record with it, and a call per
 * record costs as much as the extension itself, so it is inline here.
 */
#ifndef MOTET_TIMER_CLOCK_H
#define MOTET_TIMER_CLOCK_H

#include "motet/port.h"
#include "motet/types.h"

/* Kernel time at the last read, and the port counter it was read at. */
extern uint32_t timer_clock_now;
extern port_counter_t timer_clock_counter;

/* timer_now_irq_off(), inline: add the counter's distance since the last
 * read. Interrupts must be held off. */
static MT_INLINE uint32_t timer_clock_extend(void)
{
    port_counter_t c = port_counter_read();
    timer_clock_now += (port_counter_t) (c - timer_clock_counter);
    timer_clock_counter = c;
    return timer_clock_now;
}

#endif /* MOTET_TIMER_CLOCK_H */
