/* SPDX-License-Identifier: MIT */
/*
 * AVR port internals: the start-up stage of each port file, called in
 * order by port_init() (port_avr_boot.c) with interrupts off.
 */
#ifndef PORT_AVR_INTERNAL_H
#define PORT_AVR_INTERNAL_H

/* USART0 at PORT_AVR_BAUD, transmitter only (port_avr_console.c). */
void port_avr_console_init(void);
/* Write a string kept in program memory (PROGMEM), a line the image
 * rarely prints: no copy of it in RAM. */
void port_avr_console_write_P(const char *text);
/* Timer1 at its preset, compare off; running unless the test clock owns it
 * (port_avr_timer.c). */
void port_avr_timer_init(void);
/* Reports a watchdog reset on the console, then arms the WDT if the build
 * asks for it (port_avr_watchdog.c); after the console. */
void port_avr_watchdog_init(void);
/* Stop the WDT for a sleep, and re-arm it (a fresh timeout) at the wake;
 * no code at all without PORT_AVR_WATCHDOG. */
#ifdef PORT_AVR_WATCHDOG
void port_avr_watchdog_sleep(void);
void port_avr_watchdog_wake(void);
#else
static inline void port_avr_watchdog_sleep(void)
{
}
static inline void port_avr_watchdog_wake(void)
{
}
#endif

#endif /* PORT_AVR_INTERNAL_H */
