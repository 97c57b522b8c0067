/* SPDX-License-Identifier: MIT */
/*
 * AVR port constants: an ATmega128 at F_CPU = 4 or 8 MHz (CMake cache
 * variable MOTET_AVR_F_CPU, passed to every file as F_CPU).
 *
 * The counter is Timer/Counter1, free running in normal mode from the
 * system clock through the /64 prescaler; OCR1A is the kernel's compare.
 *
 *   F_CPU   tick    ticks/s   counter wraps   longest compare (half range)
 *   8 MHz   8 us    125000    every 524 ms    262 ms
 *   4 MHz   16 us    62500    every 1.05 s    524 ms
 *
 * /64 keeps a tick longer than the interrupt entry of the port (about 45
 * cycles), which the unit tests' stepped clock relies on (avr.h), and
 * wakes a module on a long timer only every 262 ms (8 MHz) to re-arm.
 */
#ifndef PORT_CONFIG_H
#define PORT_CONFIG_H

#ifndef F_CPU
#error "the AVR port needs F_CPU (set by ports/avr/port.cmake)"
#endif

#define PORT_NAME         "avr"
#define PORT_COUNTER_BITS 16
/* Timer1 prescaler and the clock-select bits (CS12:0) that choose it. */
#define PORT_AVR_PRESCALER    64u
#define PORT_AVR_TIMER1_CS    0x03u
#define PORT_TICKS_PER_SECOND (F_CPU / PORT_AVR_PRESCALER) /* usable in #if */
/* Timer1 stops in every mode below idle, so DEEP is idle too (see
 * port_sleep()); the kernel's choice still says how long the wait is. */
#define PORT_SLEEP_DEEP_MIN_TICKS (PORT_TICKS_PER_SECOND / 500u) /* 2 ms */

#endif /* PORT_CONFIG_H */
