/* SPDX-License-Identifier: MIT */
/*
 * The timer calls only the kernel's own components make (boot, kill,
 * migration, the main loop's sleep choice) and the tests' diagnostics;
 * motet/timer.h is the API tasks use.
 */
#ifndef MOTET_TIMER_INTERNAL_H
#define MOTET_TIMER_INTERNAL_H

#include "motet/timer.h"

/* Timer lengths must stay below half the 32-bit kernel time range. */
#define TIMER_TICKS_LIMIT 0x80000000u

/* Reset: no timers, compare disabled; boot only. */
void timer_init(void);
/* Stop every timer of `owner` (task kill); returns how many. */
unsigned timer_stop_all(mt_pid_t owner);
/* Migration: ticks until timer `n` of `owner` fires and its period (0:
 * one-shot); false if it is not running. Any context. */
bool timer_info(mt_pid_t owner, uint8_t n, uint32_t *remaining, uint32_t *period);
/* Ticks until the nearest expiry; false if no timer is running. */
bool timer_next_deadline(uint32_t *ticks);
/* timer_now() for a caller that already holds interrupts off. */
uint32_t timer_now_irq_off(void);
/* Set each time the timers' head or the compare may have changed (every
 * pass of the service, every tick), and by sched_stop(); the main loop
 * clears it as it chooses its sleep, whose choice no longer holds once it
 * is set again: an interrupt's exit returns it (sched_isr_exit()). */
extern bool sleep_choice_stale;

#endif /* MOTET_TIMER_INTERNAL_H */
