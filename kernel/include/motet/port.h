/* SPDX-License-Identifier: MIT */
/*
 * The port interface: everything the portable kernel needs from a processor.
 *
 * A port is a directory ports/<name>/ holding port_config.h (the types and
 * constants below) and the C implementation of every function declared here.
 * Portable code includes only this header, never a port's private files.
 * A port that lacks a constant fails to compile (#error below); a port that
 * lacks a function fails to link. ports/template/ is the empty starting point.
 *
 * Calling context is part of each contract: "any" means task or interrupt
 * context; "irq off" means the caller holds interrupts disabled.
 *
 * Hooks the port calls back into the kernel:
 *   timer_isr_compare()  from the compare interrupt;
 *   sched_isr_enter() / sched_isr_exit() around every interrupt that may
 *   post messages; sched_isr_exit() runs higher-priority handlers at
 *   interrupt exit with interrupts enabled (DESIGN rule 3).
 */
#ifndef MOTET_PORT_H
#define MOTET_PORT_H

#include "motet/types.h"
#include "port_config.h"

#ifndef PORT_NAME
#error "port_config.h must define PORT_NAME (a string)"
#endif
#ifndef PORT_COUNTER_BITS
#error "port_config.h must define PORT_COUNTER_BITS (16 or 32)"
#endif
#ifndef PORT_TICKS_PER_SECOND
#error "port_config.h must define PORT_TICKS_PER_SECOND"
#endif
#ifndef PORT_SLEEP_DEEP_MIN_TICKS
#error "port_config.h must define PORT_SLEEP_DEEP_MIN_TICKS"
#endif
#if PORT_COUNTER_BITS == 16
typedef uint16_t port_counter_t;
#elif PORT_COUNTER_BITS == 32
typedef uint32_t port_counter_t;
#else
#error "PORT_COUNTER_BITS must be 16 or 32"
#endif

/* Largest distance the kernel programs the compare ahead: half the counter
 * range, so that it always sees the counter before it wraps past a deadline. */
#define PORT_COUNTER_HALF ((port_counter_t) 1u << (PORT_COUNTER_BITS - 1))

typedef uint8_t port_irq_state_t;

typedef enum {
    PORT_SLEEP_IDLE,    /* short wait: wake on any interrupt, fast wake-up */
    PORT_SLEEP_DEEP,    /* long wait: only the compare timer and external wake */
    PORT_SLEEP_NONE_DUE /* nothing due at all: deepest mode, no timer armed */
} port_sleep_mode_t;

/* ---- start-up and shutdown ---- */

/* Bring up clocks, console and the counter; called once, first, irq off. */
void port_init(void);
/* Stop the module with an exit status (emulator exit, process exit). */
void port_halt(int status);

/* ---- interrupts ---- */

/* Disable interrupts and return the previous state; any context. */
port_irq_state_t port_irq_save(void);
/* Restore the state returned by port_irq_save(); any context. */
void port_irq_restore(port_irq_state_t state);
/* Enable interrupts unconditionally; task context only. */
void port_irq_enable(void);
/* True while an interrupt handler (not the exit dispatch) is running. */
bool port_in_isr(void);

/* ---- time: one free-running counter and one compare ---- */

/* Current value of the free-running counter; any context. */
port_counter_t port_counter_read(void);
/* Interrupt once when the counter reaches `at`; replaces any earlier
 * compare; irq off. A deadline already passed may fire late or not at all:
 * the kernel re-reads the counter after arming. */
void port_compare_set(port_counter_t at);
/* Cancel the compare interrupt; irq off. */
void port_compare_disable(void);

/* ---- power ---- */

/* Called with irq off when nothing is runnable: enable interrupts and sleep
 * in `mode` atomically, return with irq off after the wake-up interrupt ran. */
void port_sleep(port_sleep_mode_t mode);

/* ---- console ---- */

/* Write n bytes to the console (blocking, polled); task context. */
void port_console_write(const char *text, size_t n);

/* ---- measurement ---- */

/* Free-running cycle or instruction counter for benchmarks (wraps). */
uint32_t port_cycles(void);

#endif /* MOTET_PORT_H */
