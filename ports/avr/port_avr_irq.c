/* SPDX-License-Identifier: MIT */
/*
 * AVR port: the interrupt flag and sleep.
 *
 * The I bit of SREG is the whole interrupt state; a saved state is that bit
 * alone (the inline primitives are in port_config.h). Sleeping uses the AVR guarantee that the
 * instruction after SEI runs before any interrupt: "sei; sleep" cannot lose a wake-up that arrives
 * between the two.
 */
#include <avr/sleep.h>

#include "avr.h"
#include "port_avr_internal.h"

volatile uint8_t port_avr_in_body;
volatile uint8_t port_avr_woken;
volatile uint8_t port_avr_sleeping;

static port_sleep_mode_t sleep_limit = PORT_SLEEP_NONE_DUE;

void port_avr_sleep_limit(port_sleep_mode_t deepest)
{
    sleep_limit = deepest;
}

/* Timer1 (the counter) runs on clkIO, which only idle keeps: any wait with a
 * deadline is idle. With nothing due the module may power-save; Timer1 then
 * stops, so the kernel's clock loses that time (it has no deadline to miss),
 * and only INT3:0 (any sense), INT7:4 (low level), the TWI address match,
 * Timer0 on its 32 kHz crystal or the watchdog wake it. */
static uint8_t hardware_mode(port_sleep_mode_t mode)
{
    if (mode > sleep_limit) mode = sleep_limit;
    return mode == PORT_SLEEP_NONE_DUE ? SLEEP_MODE_PWR_SAVE : SLEEP_MODE_IDLE;
}

/* Enter with irq off; return with irq off once a PORT_AVR_ISR whose exit
 * says the main loop must look again has run (avr.h). Other interrupts
 * (plain ISR(), or one whose exit ran its handlers and left the main loop's
 * choice as it was) wake the core too: it goes straight back to sleep, the
 * watchdog stopped again (the interrupt restarted it). */
void port_sleep(port_sleep_mode_t mode)
{
    set_sleep_mode(hardware_mode(mode));
    port_avr_woken = 0;
    if (PORT_AVR_TEST_CLOCK) tport_avr_sleep_enter();
    /* SE stays set while the core sleeps on: the only SLEEP instructions
     * are this loop's and port_halt()'s (which sets its own mode), so
     * clearing and setting it around every wake-up would guard nothing. */
    sleep_enable();
    do {
        port_avr_watchdog_sleep();
        if (PORT_AVR_TEST_CLOCK) tport_avr_sleep_begin();
        /* Nothing lives in the registers a call may clobber across the
         * SLEEP: an interrupt that wakes it need not save them (avr.h). */
        port_avr_sleeping = 1;
        __asm__ volatile("sei\n\tsleep" ::
                             : "memory", "r18", "r19", "r20", "r21", "r22", "r23", "r24", "r25",
                               "r26", "r27", "r30", "r31");
        cli();
        port_avr_sleeping = 0;
        if (PORT_AVR_TEST_CLOCK) tport_avr_sleep_end();
    } while (!port_avr_woken);
    sleep_disable();
    port_avr_watchdog_wake();
}
