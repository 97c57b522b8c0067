/* SPDX-License-Identifier: MIT */
/*
 * AVR port internals: the start-up stage of each port file, called in
 * order by port_init() (port_avr_boot.c) with interrupts off.
 */
#ifndef PORT_AVR_INTERNAL_H
#define PORT_AVR_INTERNAL_H

/* USART0 at PORT_AVR_BAUD, transmitter only (port_avr_console.c). */
void port_avr_console_init(void);
/* Timer1 at its preset, compare off; running unless the test clock owns it
 * (port_avr_timer.c). */
void port_avr_timer_init(void);

#endif /* PORT_AVR_INTERNAL_H */
