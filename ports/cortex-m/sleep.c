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
 * CM_KERNEL_BODY, port_cm_internal.h); wake-ups for the port's own bookkeeping (the epoch
 * wrap, an intermediate compare reload, the alarm) put the core back to
 * sleep within the same port_sleep() call.
 *
 * On a device (docs/bus.md, "Emulated modules") the lock-step adapter must
 * see the core go to sleep, which QEMU does not show it: before each WFI
 * the port says when it sleeps and when its next timer wakes it, in
 * port_cm_idle, and calls port_cm_lockstep_idle(), where the adapter's
 * plugin parks the CPU. The adapter then leaves a sleeping core alone until
 * that wake-up or an event for it, and reads the clocks it has slept (the
 * chip's own measure) for the module's busy, asleep and energy figures.
 */
#include "motet/port.h"
#include "port_cm_internal.h"

/* Read by tools/motetlib/qemu_module.py while the CPU is parked: keep its
 * layout (IDLE_*) in step. Clocks of port_cm_clocks(). */
typedef struct cm_idle {
    uint64_t slept; /* clocks in WFI since port_init() */
    uint64_t now;   /* as this sleep began */
    uint64_t wake;  /* its timers' earliest interrupt */
} cm_idle_t;

volatile cm_idle_t port_cm_idle;
static uint32_t sleep_count;

/* The adapter's plugin parks the CPU on entry; alone it costs a call. */
__attribute__((noinline, used)) void port_cm_lockstep_idle(void)
{
    __asm__ volatile("" ::: "memory");
}

void port_sleep(port_sleep_mode_t mode)
{
    (void) mode; /* QEMU models no state deeper than WFI */
    sleep_count++;
    uint32_t seen = port_cm_kernel_irqs();
    do {
        uint64_t start = port_cm_clocks();
        cm_watchdog_stop(); /* idle proves no handler stuck (watchdog.c) */
        port_cm_idle.now = start;
        port_cm_idle.wake = cm_clock_next_wake();
        port_cm_lockstep_idle();
        __asm volatile("dsb\n"
                       "wfi" ::
                           : "memory");
        cm_watchdog_start(); /* before the waking interrupt may run a handler */
        port_cm_idle.slept += port_cm_clocks() - start;
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
    /* Each sleep's clocks are counted from its own start, so the sum may
     * fall short of whole ticks by a clock or two: to the nearest tick. */
    return (port_cm_idle.slept + PORT_CM_CLOCKS_PER_TICK / 2u) / PORT_CM_CLOCKS_PER_TICK;
}

void cm_sleep_init(void)
{
    sleep_count = 0;
    port_cm_idle.slept = 0;
}
