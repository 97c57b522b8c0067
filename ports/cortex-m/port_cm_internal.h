/* SPDX-License-Identifier: MIT */
/*
 * What the files of the Cortex-M port share with each other (and nothing
 * outside ports/cortex-m/ includes).
 */
#ifndef PORT_CM_INTERNAL_H
#define PORT_CM_INTERNAL_H

#include <stdint.h>

#include "cortex_m.h"

static inline uint32_t cm_ipsr(void)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    return ipsr;
}

/* Start-up stages, called by port_init() with interrupts off. */
void cm_console_init(void);
void cm_irq_init(void);
void cm_clock_init(void);
void cm_sleep_init(void);

/* The earliest clock (port_cm_clocks()) at which one of the port's timers
 * (the compare, the alarm, the epoch wrap) interrupts; interrupts off. */
uint64_t cm_clock_next_wake(void);

/* The watchdog (watchdog.c). The marker word that says "the watchdog
 * may reset" across a reset; qemu_module.py reads it too. */
#define CM_WATCHDOG_ARMED 0x57444F47u /* "WDOG" */
/* Read and clear the marker, report a watchdog reset on the console. Start-up,
 * after the console. */
void cm_watchdog_boot(void);
/* Arm the watchdog for a fresh timeout / stop it (for a sleep); no code at
 * all without PORT_CM_WATCHDOG_MS. */
#ifdef PORT_CM_WATCHDOG_MS
void cm_watchdog_start(void);
void cm_watchdog_stop(void);
#else
static inline void cm_watchdog_start(void)
{
}
static inline void cm_watchdog_stop(void)
{
}
#endif

/* Print and stop with status 3: a port invariant broke (fault, stray
 * interrupt, misuse). Any context. */
void cm_fatal(const char *what, uint32_t value) __attribute__((noreturn));
void cm_console_puts(const char *s);
void cm_console_putu(uint32_t v);
void cm_console_puthex(uint32_t v);

/* The assembly every interrupt entry whose body may post runs (irq.c's
 * cm_line_isr, clock.c's cm_compare_isr), with r0 = the body, r0 and lr
 * (EXC_RETURN) pushed (r0 only to keep the stack 8-byte aligned): the body
 * between the kernel's hooks, the count port_sleep() watches, then the
 * exit's one decision with interrupts masked, kept masked into the exit
 * dispatch unless there is none (sched_isr_exit_choice()); it ends with lr
 * = EXC_RETURN again and r0 = the choice, for cm_isr_exit. In assembly
 * because the exit needs EXC_RETURN and the stack exactly as the hardware
 * left them. sched_isr_enter() has nothing to do (sched.h): nothing is
 * called for it. A lost increment of the count, when an interrupt nests
 * between its load and store, does no harm: it only has to change. */
#define CM_KERNEL_BODY                                                                             \
    "    blx r0\n"                                                                                 \
    "    ldr r1, =cm_kernel_irqs\n"                                                                \
    "    ldr r2, [r1]\n"                                                                           \
    "    adds r2, #1\n"                                                                            \
    "    str r2, [r1]\n"                                                                           \
    "    cpsid i\n"                                                                                \
    "    bl sched_isr_exit_choice\n"                                                               \
    "    pop {r1, lr}\n"

/* Exception and interrupt entry points (startup.c's vector table). */
void Reset_Handler(void);
void NMI_Handler(void);
void HardFault_Handler(void);
void MemManage_Handler(void);
/* guard.c: the MPU guard of thread stacks. Fill in ctx's guard region for
 * the stack at `stack`; turn MemManage faults on (boot). */
void cm_guard_context(port_context_t *ctx, void *stack);
void cm_guard_enable(void);
void PendSV_Handler(void);
void cm_line_isr(void);
/* The end of every kernel entry (irq.c). */
void cm_isr_exit(void);
void cm_epoch_isr(void);
void cm_compare_isr(void);
void cm_alarm_isr(void);

#endif /* PORT_CM_INTERNAL_H */
