/* SPDX-License-Identifier: MIT */
/*
 * The timer-overhead benchmark (RETOS paper, figure 3b) on the ATmega128,
 * run by tools/motetlib/bench_energy_load.py under motet-simavr.
 *
 * One message task toggles PB0 from a periodic kernel timer of
 * BLINK_PERIOD_MS; nothing else runs. The kernel is built tickless (the
 * compare is programmed for the next expiry) or periodic
 * (MOTET_TIMER_PERIODIC=1: a compare interrupt every MOTET_TICK_US). The
 * harness's flat profile gives the cycles spent in the timer code; a pulse
 * on INT7 ends the run: the firmware prints "blink <compare interrupts>
 * <toggles>" on the console and halts.
 */
#include <avr/io.h>
#include <stdio.h>

#include "avr.h"
#include "motet/motet.h"

#ifndef BLINK_PERIOD_MS
#define BLINK_PERIOD_MS 100
#endif

enum { PID_BLINK = 0x20 };

static volatile uint32_t toggles;

static mt_err_t blink_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_INIT) return timer_start(0, TIMER_MS(BLINK_PERIOD_MS), true);
    if (port == PORT_TIMEOUT0) {
        PORTB ^= _BV(0);
        toggles++;
    }
    return MT_OK;
}

ISR(INT7_vect)
{
    char line[48];
    int n = snprintf(line, sizeof line, "blink %lu %lu\n", (unsigned long) timer_interrupt_count(),
                     (unsigned long) toggles);
    port_console_write(line, (size_t) n);
    port_halt(0);
}

int main(void)
{
    motet_boot();
    DDRB |= _BV(0);
    DDRE &= (uint8_t) ~_BV(7);
    PORTE |= _BV(7);
    EICRB = (uint8_t) ((EICRB & ~(_BV(ISC71) | _BV(ISC70))) | _BV(ISC71));
    EIFR = _BV(INTF7);
    EIMSK |= _BV(INT7);
    static const task_spec_t spec = {.pid = PID_BLINK, .prio = 2, .handler = blink_handler};
    if (sched_task_create(&spec) != MT_OK || sched_task_init(PID_BLINK, NULL, 0) != MT_OK)
        port_halt(1);
    sched_run();
    return 1;
}
