/* SPDX-License-Identifier: MIT */
/*
 * The time manager: up to four virtual timers per task on one hardware
 * compare, kept as a delta list (each entry stores the ticks after the one
 * before it). The compare is programmed only to the nearest expiry, so no
 * interrupt happens while nothing is due, and at most half the counter range
 * ahead, so the 16-bit AVR counter wraps safely. Expiry posts a message to
 * PORT_TIMEOUT0+n of the owning task. Periodic timers re-arm from their
 * deadline, not from the handler, so they never drift.
 *
 * Example (in a handler):
 *
 *     timer_start(0, TIMER_MS(125), true);   // PORT_TIMEOUT0 8 times a second
 *     timer_stop(0);
 */
#ifndef MOTET_TIMER_H
#define MOTET_TIMER_H

#include "motet/port.h"
#include "motet/types.h"

#define TIMERS_PER_TASK 4

/* Ticks in `ms` milliseconds / `us` microseconds of this port's clock. */
#define TIMER_MS(ms) ((uint32_t) ((uint64_t) (ms) *PORT_TICKS_PER_SECOND / 1000u))
#define TIMER_US(us) ((uint32_t) ((uint64_t) (us) *PORT_TICKS_PER_SECOND / 1000000u))

/* Start (or restart) timer `n` of the running task to fire after `ticks`
 * (1 .. 2^31-1), then every `ticks` if periodic. MT_ERR_NO_TIMER if n >= 4,
 * MT_ERR_NO_SLAB if the timer cache is exhausted, MT_ERR_INVALID for 0. */
mt_err_t timer_start(uint8_t n, uint32_t ticks, bool periodic);
/* Same for an explicit owner, an application task; any context. A system
 * pid (MT_PID_SYSTEM and above) is MT_ERR_INVALID: its timers are the
 * kernel's (the application manager's verdict deadline). A pid with no
 * task here (ended, never created, or on another module) is refused,
 * MT_ERR_NO_TASK, logged; a created task not yet initialised has one. */
mt_err_t timer_start_for(mt_pid_t owner, uint8_t n, uint32_t ticks, bool periodic);
/* Stop timer `n` of the running task; MT_ERR_STATE if it is not running. */
mt_err_t timer_stop(uint8_t n);
/* Stop timer `n` of `owner`; MT_ERR_STATE if it is not running,
 * MT_ERR_INVALID for a system pid's (the kernel's, as above). */
mt_err_t timer_stop_for(mt_pid_t owner, uint8_t n);
/* Ticks until timer `n` of `owner` fires; false if not running. */
bool timer_remaining(mt_pid_t owner, uint8_t n, uint32_t *ticks);
/* Start (or restart) timer `n` of `owner` to fire after `first` ticks,
 * then every `period` ticks (0: once): a timer whose first expiry is not
 * its period (a task's own phase, a migrated task's remaining time); any
 * context. Errors, logged: MT_ERR_NO_TIMER (n >= 4), MT_ERR_INVALID (a
 * first of 0, a first or period of 2^31 ticks or more, no owner, a system
 * pid's timer), MT_ERR_NO_TASK (no task of that pid here, as above),
 * MT_ERR_NO_SLAB (the timer cache exhausted). */
mt_err_t timer_start_phase(mt_pid_t owner, uint8_t n, uint32_t first, uint32_t period);
/* Kernel time in ticks, extended to 32 bits from the port counter. */
uint32_t timer_now(void);
/* Port hook: the compare interrupt fired. Interrupt context. */
void timer_isr_compare(void);
#if MOTET_STATS
/* Compare interrupts taken since boot: the proof that the kernel is
 * tickless, for benchmarks and tests. */
uint32_t timer_interrupt_count(void);
#endif

#if MOTET_TASK_BUDGET
/* Give task `pid` a run budget of `ticks` (0: take it away): once the
 * compare interrupt's check finds it on top of the stack for `ticks` or
 * more, it logs EV_BUDGET, once a run; MT_ERR_NO_SLAB when
 * MOTET_BUDGET_TASKS tasks already have one. */
mt_err_t timer_set_budget(mt_pid_t pid, uint32_t ticks);
#endif

#endif /* MOTET_TIMER_H */
