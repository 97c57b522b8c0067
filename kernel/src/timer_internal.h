/* SPDX-License-Identifier: MIT */
/*
 * The timer calls only the kernel's own components make (boot, kill,
 * migration, the main loop's sleep choice) and the tests' diagnostics;
 * motet/timer.h is the API tasks use.
 */
#ifndef MOTET_TIMER_INTERNAL_H
#define MOTET_TIMER_INTERNAL_H

#include "motet/sched.h"
#include "motet/timer.h"

/* Timer lengths must stay below half the 32-bit kernel time range. */
#define TIMER_TICKS_LIMIT 0x80000000u

/* Reset: no timers, compare disabled; boot only. */
void timer_init(void);
/* Start (or restart) timer `n` of `owner`, its arguments checked by the
 * caller; MT_ERR_NO_TASK (logged) if `owner` (not MT_PID_NONE, the
 * kernel's) has no task here, MT_ERR_NO_SLAB (logged) if no block is
 * left. Any context. A
 * system task's timers, which timer.h's calls refuse, are counted
 * (timer_counted_start(), below). */
mt_err_t timer_start_checked(mt_pid_t owner, uint8_t n, uint32_t ticks, bool periodic);
/* Stop every timer of `owner` (task kill, a system task's own); returns
 * how many. */
unsigned timer_stop_all(mt_pid_t owner);
#if MOTET_BUS
/* The system tasks' counted timers, each a block of its own in timer.c
 * (its slot): the application manager's verdict deadline, the migrator's
 * timeout tick. */
#define TIMER_SLOT_DEADLINE 0u
#define TIMER_SLOT_TICK     1u
#define TIMER_COUNTED_SLOTS 2u
/* A system task's one-shot timer `n` whose expiries are counted in *owed,
 * so that its handler tells the timer's expiry from any other message on
 * the timer's port: an interrupt body may post there (sched_post_isr()
 * takes any pid and port), with no sender, as the timer does. One more is
 * owed each time it starts while not running (a restart owes none more),
 * one fewer when it is stopped running or an expiry is taken; an expiry
 * that waits while the timer is stopped and started again stays owed.
 * Counted and started (stopped) under one lock. Its block is its `slot`'s
 * (one timer per slot), never the slab's: no start needs a free block, so
 * none fails. An expiry whose post fails (the last one's message still
 * waits in the block, and the pool is empty: logged) stays owed, so the
 * next message with no sender on the port is taken in its place. Any
 * context. Stop: true if it was running. */
void timer_counted_start(uint8_t slot, mt_pid_t owner, uint8_t n, uint32_t ticks, uint8_t *owed);
bool timer_counted_stop(mt_pid_t owner, uint8_t n, uint8_t *owed);
/* True, and counted as taken, if the message the owner's handler runs on
 * timer n's port can be its expiry: no sender, and an expiry owed beyond
 * the running timer's, still to come. An interrupt's post while one is
 * owed is taken in its place (the same work, once), and the expiry then
 * refused. Task context, in the owner's handler. */
bool timer_counted_take(mt_pid_t owner, uint8_t n, uint8_t *owed);
#endif
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

#if MOTET_TASK_BUDGET
/* Run budgets (timer_budget.c), for timer.c: forget every budget (boot);
 * whether the compare must fire for the check (a budget set, a handler
 * running or waiting); a sleep is about to start (it ends the run on top);
 * the compare interrupt's look at the top of the stack. Irq off. */
void timer_budget_reset(void);
bool timer_budget_wanted(void);
void timer_budget_sleeping(void);
void timer_budget_check(void);
/* timer.c's service, for a budget set or taken away: the compare follows. */
void timer_rearm_irq_off(void);
#endif

/* A timer's own expiry message (queue_give_block_irq_off() gives its block
 * back here). The release is inline: it follows every expiry's handler,
 * and the list it may have to search is empty unless a timer was stopped
 * (or a one-shot expired) with its expiry still waiting. */

/* Timer blocks out of the delta list whose expiry message still waits
 * (a counted timer's never: it is not freed); for the test below only. */
extern struct timer_block *timer_retired;

/* Free m's timer block if it is retired (the release below); irq off. */
void timer_free_if_retired(msg_t *m);

/* A message of MSG_OWN_BLOCK is released: its timer or the interrupt
 * slot may use it again, or a timer's block goes if the timer was retired
 * meanwhile (the slot's is never in the retired list); irq off. */
static MT_INLINE void timer_expiry_release_irq_off(msg_t *m)
{
    m->flags = 0;
    if (timer_retired) timer_free_if_retired(m);
}

#endif /* MOTET_TIMER_INTERNAL_H */
