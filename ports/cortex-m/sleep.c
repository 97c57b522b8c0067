/* SPDX-License-Identifier: MIT */
/*
 * Sleep on the Cortex-M port (rule 6, docs/architecture.md). The kernel calls port_sleep()
 * with interrupts off when nothing is runnable. WFI with PRIMASK set is the
 * atomic "enable and sleep" of this architecture: an interrupt that became
 * pending before the WFI ends it at once, and one that comes later wakes the
 * core without being taken. The sleep is measured right there, then PRIMASK
 * opens for an instant so the interrupt and its exit dispatch run.
 *
 * The kernel's idea of a wake-up is an interrupt that posted (went through
 * cm_kernel_isr()); wake-ups for the port's own bookkeeping (the epoch
 * wrap, an intermediate compare reload, the alarm) put the core back to
 * sleep within the same port_sleep() call.
 */
#include "motet/port.h"
#include "port_cm_internal.h"

static uint32_t sleep_count;
static uint64_t sleep_ticks;

void port_sleep(port_sleep_mode_t mode)
{
    (void) mode; /* QEMU models no state deeper than WFI */
    sleep_count++;
    uint32_t seen = port_cm_kernel_irqs();
    do {
        uint64_t start = port_cm_time();
        cm_watchdog_stop(); /* idle proves no handler stuck (watchdog.c) */
        __asm volatile("dsb\n"
                       "wfi" ::
                           : "memory");
        cm_watchdog_start(); /* before the waking interrupt may run a handler */
        sleep_ticks += port_cm_time() - start;
        __asm volatile("cpsie i\n"
                       "isb\n"
                       "cpsid i" ::
                           : "memory");
    } while (port_cm_kernel_irqs() == seen);
}

uint32_t port_cm_sleep_count(void)
{
    return sleep_count;
}

uint64_t port_cm_sleep_ticks(void)
{
    return sleep_ticks;
}

void cm_sleep_init(void)
{
    sleep_count = 0;
    sleep_ticks = 0;
}
