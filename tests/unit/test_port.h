/* SPDX-License-Identifier: MIT */
/*
 * What the kernel unit tests need from a port beyond motet/port.h: a way to
 * declare work, to raise and schedule interrupts, and to read the sleep
 * statistics. Each port implements it in tests/unit/test_port_<port>.c, so
 * the same tests run on every port.
 */
#ifndef TEST_PORT_H
#define TEST_PORT_H

#include <stdbool.h>
#include <stdint.h>

/* External interrupt lines a port offers to tests (at least 8). */
#define TPORT_IRQ_LINES 8

typedef void (*tport_isr_fn)(void);

/* Reset the port's clock so that the counter reads `counter_start`, then
 * boot a fresh kernel (motet_boot()). */
void tport_boot(uint32_t counter_start);
/* Ticks of the port counter since tport_boot(), never wrapping. */
uint64_t tport_time(void);
/* Run `ticks` of work in the caller; interrupts due meanwhile preempt it. */
void tport_busy(uint32_t ticks);
/* Attach an interrupt service routine to line 0..TPORT_IRQ_LINES-1. */
void tport_irq_attach(uint8_t line, tport_isr_fn isr);
/* Trigger line now: taken at once if interrupts are on, else when enabled. */
void tport_irq_raise(uint8_t line);
/* Trigger line when tport_time() reaches `at`. */
void tport_irq_schedule(uint8_t line, uint64_t at);
/* Times port_sleep() was entered since tport_boot(). */
uint32_t tport_sleep_count(void);
/* Ticks spent in port_sleep() since tport_boot(). */
uint64_t tport_sleep_ticks(void);
/* From an interrupt body: an address on the stack of the code the interrupt
 * interrupted (where its frame went; the body itself may run elsewhere). */
uintptr_t tport_interrupted_stack(void);

#endif /* TEST_PORT_H */
