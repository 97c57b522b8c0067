/* SPDX-License-Identifier: MIT */
/*
 * A running timer's phase, read and restored: how long until it fires and
 * its period (timer_remaining(), and timer_info() for migration, which
 * sends both with a task), and a timer started at a given phase
 * (timer_start_phase(): a migrated task's timer keeps its remaining time).
 * The delta list itself is timer.c's (timer_list.h).
 */
#include "motet/log.h"
#include "motet/port.h"
#include "motet/timer.h"
#include "timer_internal.h"
#include "timer_list.h"

bool timer_remaining(mt_pid_t owner, uint8_t n, uint32_t *ticks)
{
    uint32_t remaining, period;
    bool running = timer_info(owner, n, &remaining, &period);
    if (running && ticks) *ticks = remaining;
    return running;
}

bool timer_info(mt_pid_t owner, uint8_t n, uint32_t *remaining, uint32_t *period)
{
    port_irq_state_t s = port_irq_save();
    port_counter_t rel = 0;
    timer_block_t *t = timer_head;
    for (; t; t = t->next) {
        rel += t->delta;
        if (t->owner == owner && t->index == n) break;
    }
    if (t) {
        *remaining = timer_ticks_until(rel, timer_wait_rest(t));
        *period = t->period;
    }
    port_irq_restore(s);
    return t != NULL;
}

mt_err_t timer_start_phase(mt_pid_t owner, uint8_t n, uint32_t first, uint32_t period)
{
    if (n >= TIMERS_PER_TASK) return log_error(MT_ERR_NO_TIMER);
    if (first == 0 || first >= TIMER_TICKS_LIMIT || period >= TIMER_TICKS_LIMIT ||
        owner == MT_PID_NONE || owner >= MT_PID_SYSTEM) /* the kernel's: timer_start_for() */
        return log_error(MT_ERR_INVALID);
    /* Started with `first` as its length, then given its own period, with
     * interrupts off throughout so that it cannot expire in between. */
    port_irq_state_t s = port_irq_save();
    mt_err_t err = timer_start_checked(owner, n, first, period != 0);
    for (timer_block_t *t = timer_head; !err && t; t = t->next)
        if (t->owner == owner && t->index == n) timer_set_period(t, period);
    port_irq_restore(s);
    return err;
}
