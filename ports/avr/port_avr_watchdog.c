/* SPDX-License-Identifier: MIT */
/*
 * AVR port: the ATmega128's watchdog (WDT), and the report of a reset it
 * caused.
 *
 * Off unless the build defines PORT_AVR_WATCHDOG as one of avr-libc's
 * WDTO_ values (0 = WDTO_15MS ... 7 = WDTO_2S: 16 K << n cycles of the
 * chip's 1 MHz watchdog oscillator), e.g. in the DEFS of
 * motet_avr_bench_kernel() (docs/guide.md, "The AVR watchdog"). Then the WDT
 * runs whenever the core does and is stopped for each sleep: the kernel
 * sleeps only from its main loop with nothing to run, which proves no
 * handler is stuck, and a module that waits long for its next timer (or
 * for nothing) must not be reset. The first PORT_AVR_ISR after a sleep
 * restarts it (avr.h), before its tail may run a handler; port_sleep()
 * restarts it on return to the main loop. A handler, or a burst of work,
 * that keeps the core busy for longer than the timeout resets the chip.
 *
 * At every boot the port reads MCUCSR: after a watchdog reset (WDRF) it
 * writes "avr: reset by the watchdog" on the console, and
 * port_avr_reset_cause() gives the flags to the application. They are
 * cleared so that the next reset's cause is its own.
 */
#include <avr/pgmspace.h>
#include <avr/wdt.h>

#include "avr.h"
#include "port_avr_internal.h"

#if defined(PORT_AVR_WATCHDOG) && (PORT_AVR_WATCHDOG < 0 || PORT_AVR_WATCHDOG > 7)
#error "PORT_AVR_WATCHDOG must be a WDTO_ value, 0 (15 ms) to 7 (2 s)"
#endif

static uint8_t reset_cause;

uint8_t port_avr_reset_cause(void)
{
    return reset_cause;
}

void port_avr_watchdog_init(void)
{
    /* port_init() runs again for each unit test: the flags stay those of
     * the chip's last reset, reported once. */
    uint8_t fresh = MCUCSR;
    MCUCSR = 0;
    if (fresh) reset_cause = fresh;
    if (fresh & _BV(WDRF)) {
        /* From flash: every image has the line, few will print it, and
         * the stack needs the RAM a string in .data would take. */
        static const char msg[] PROGMEM = "avr: reset by the watchdog\n";
        port_avr_console_write_P(msg);
    }
    port_avr_watchdog_wake();
}

#ifdef PORT_AVR_WATCHDOG
volatile uint8_t port_avr_watchdog_stopped;

void port_avr_watchdog_sleep(void)
{
    wdt_disable();
    port_avr_watchdog_stopped = 1;
}

void port_avr_watchdog_wake(void)
{
    port_avr_watchdog_stopped = 0;
    wdt_enable(PORT_AVR_WATCHDOG);
}
#endif
