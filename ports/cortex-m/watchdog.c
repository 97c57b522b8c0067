/* SPDX-License-Identifier: MIT */
/*
 * Cortex-M port: the mps2-an385's CMSDK APB watchdog, and the report of a
 * reset it caused.
 *
 * Off unless the build defines PORT_CM_WATCHDOG_MS (1 to 343597 ms), e.g. in
 * the DEFS of motet_cortex_m_bench_kernel() (docs/guide.md, "The Cortex-M
 * watchdog"). Then, as on the AVR port, the watchdog watches whenever the
 * core runs and not while it sleeps: the kernel sleeps only from its main
 * loop with nothing to run, which proves no handler is stuck, and a module
 * that waits long for its next timer must not be reset. port_sleep()
 * (sleep.c) restarts it the moment WFI returns, before PRIMASK lets the
 * waking interrupt in, so whatever that interrupt then runs is watched. A
 * handler, or a burst of work, that keeps the core busy for
 * PORT_CM_WATCHDOG_MS resets the machine.
 *
 * The counter runs off the 25 MHz APB clock. Its first expiry raises the
 * watchdog's interrupt flag and reloads; the second, with the flag still
 * up, resets: the port loads half the timeout. It sets RESEN only, not
 * INTEN: the interrupt is wired to NMI, which the exit dispatch owns
 * (irq.c). QEMU 7.2's model counts from the machine's reset whatever CTRL
 * says, and a second expiry latches the reset until the machine resets
 * (RESEN then only lets it through). So "stopped" for a sleep is RESEN off
 * and the longest period loaded: two periods are 343 s, and the port wakes
 * at least once an epoch of its clock (port_config.h, 172 s), where
 * port_sleep() loads it again. The CMSDK part in silicon counts only with
 * INTEN set, so a port to it would need an NMI that tells the watchdog's
 * warning from the exit dispatch's return.
 *
 * The mps2 has no reset-cause register. A marker word in .noinit (link.ld:
 * loaded by nothing, cleared by nothing) holds CM_WATCHDOG_ARMED exactly
 * while the watchdog may reset (RESEN on); a reset that finds it there came
 * while the watchdog watched, i.e. from the watchdog (the port never requests a reset
 * itself). Start-up reports it on the console ("cortex-m: reset by the
 * watchdog"), port_cm_reset_by_watchdog() gives it to the application,
 * and the marker is cleared so that the next boot's cause is its own.
 * qemu_module.py reads the same word when it sees the core reset.
 */
#include "motet/port.h"
#include "mps2.h"
#include "port_cm_internal.h"

#if defined(PORT_CM_WATCHDOG_MS) && (PORT_CM_WATCHDOG_MS < 1 || PORT_CM_WATCHDOG_MS > 343597)
#error "PORT_CM_WATCHDOG_MS must be 1 to 343597 (two 32-bit periods of the 25 MHz clock)"
#endif

__attribute__((section(".noinit"), used)) volatile uint32_t port_cm_watchdog_marker;
static uint32_t reset_by_watchdog;

bool port_cm_reset_by_watchdog(void)
{
    return reset_by_watchdog != 0u;
}

void cm_watchdog_boot(void)
{
    reset_by_watchdog = port_cm_watchdog_marker == CM_WATCHDOG_ARMED;
    port_cm_watchdog_marker = 0u;
    if (reset_by_watchdog) cm_console_puts("cortex-m: reset by the watchdog\n");
}

#ifdef PORT_CM_WATCHDOG_MS
#define WDOG_UNLOCK 0x1ACCE551u
#define WDOG_RESEN  (1u << 1)
#define WDOG_HALF   ((uint32_t) PORT_CM_WATCHDOG_MS * (PORT_CM_CLOCK_HZ / 2000u))

void cm_watchdog_start(void)
{
    CM_WDOG->lock = WDOG_UNLOCK;
    CM_WDOG->load = WDOG_HALF; /* reloads the counter at once */
    CM_WDOG->intclr = 1u;      /* and lowers a first expiry's flag */
    CM_WDOG->ctrl = WDOG_RESEN;
    CM_WDOG->lock = 0u;
    port_cm_watchdog_marker = CM_WATCHDOG_ARMED;
}

void cm_watchdog_stop(void)
{
    port_cm_watchdog_marker = 0u;
    CM_WDOG->lock = WDOG_UNLOCK;
    CM_WDOG->ctrl = 0u;
    CM_WDOG->load = 0xFFFFFFFFu;
    CM_WDOG->intclr = 1u;
    CM_WDOG->lock = 0u;
}
#endif
