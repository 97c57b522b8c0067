/* SPDX-License-Identifier: MIT */
/*
 * AVR port: start-up, halt, the vector table's catch-all.
 *
 * Vector table and C start-up come from avr-libc (crtatmega128.o): reset
 * sets SP to __stack (the top of RAM, or the top of external SRAM for test
 * images), copies .data and clears .bss; every vector without an ISR jumps
 * to BADISR_vect below. The start-up code that runs before main(), and the
 * stack's paint, are in port_avr_startup.c.
 *
 * Halt marker: port_halt() disables interrupts, lets the console drain,
 * then sleeps with interrupts off holding a mailbox in registers: r21:r20 =
 * 0x4D54 ("MT"), r25:r24 = the status, r23:r22 = the stack high-water mark
 * in bytes. The harness (tools/simavr-harness) stops there; on a chip the
 * core stays asleep, registers readable by a debugger.
 */
#include <avr/pgmspace.h>
#include <avr/sleep.h>
#include <stdlib.h>

#include "avr.h"
#include "port_avr_internal.h"

#if defined(__has_include)
#if __has_include(<avr/avr_mcu_section.h>)
/* simavr reads the MCU and its clock from this section of the image. */
#include <avr/avr_mcu_section.h>
AVR_MCU(F_CPU, "atmega128");
#endif
#endif

#define HALT_MAGIC     0x4D54u
#define STATUS_BAD_ISR 3 /* an interrupt without a handler fired */

/* Every call resets the port fully: each unit test boots anew. */
void port_init(void)
{
    cli();
    port_avr_in_body = 0;
    port_avr_woken = 0;
    port_avr_sleep_limit(PORT_SLEEP_NONE_DUE);
    port_avr_console_init();
    port_avr_timer_init();
    port_avr_watchdog_init();
}

void port_halt(int status)
{
    cli();
    port_avr_console_flush();
    uint16_t stack = port_avr_stack_used();
    set_sleep_mode(SLEEP_MODE_PWR_DOWN);
    sleep_enable();
    /* Bound to registers only from here: no call may come in between. */
    register uint16_t st __asm__("r24") = (uint16_t) status;
    register uint16_t used __asm__("r22") = stack;
    register uint16_t magic __asm__("r20") = HALT_MAGIC;
    for (;;) __asm__ volatile("sleep" ::"r"(st), "r"(used), "r"(magic));
}

/* main() returning, or a call of exit(), halts the module with that status;
 * avr-libc's own exit() would spin with interrupts off, which says nothing
 * to the harness. (The C start-up calls exit() with main()'s result.) */
void exit(int status)
{
    port_halt(status);
    __builtin_unreachable();
}

/* An enabled interrupt without a service routine: stop, rather than let
 * avr-libc's default jump to the reset vector restart the module. */
ISR(BADISR_vect)
{
    /* From flash, as the watchdog's line: a string in .data takes RAM. */
    static const char msg[] PROGMEM = "avr: interrupt without a handler\n";
    port_avr_console_write_P(msg);
    port_halt(STATUS_BAD_ISR);
}
