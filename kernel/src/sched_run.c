/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's start and its main loop: rule 6, nothing to run, sleep
 * as deep as the next timer allows (dispatch_rules.h states the rules;
 * docs/architecture.md).
 *
 * There is no idle task and no tick: the loop drains what is queued
 * (dispatch.c) and, with nothing left, sleeps in the port as deep as the
 * next timer allows. An interrupt's exit runs what the interrupt brought;
 * the loop looks again only when the exit says it must (sched_isr_exit()),
 * so that a port may sleep on under an interrupt that changed nothing.
 */
#include <string.h>

#include "dispatch_rules.h"
#include "motet/log.h"
#include "motet/port.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "thread_internal.h"
#include "timer_internal.h"

void sched_init(void)
{
    memset(&sched, 0, sizeof sched);
    sched.current = &task_none;
    sched.running_prio = -1;
    task_init_caches();
    queue_init();
    thread_init(); /* no thread, K runs (empty without threads) */
}

static port_sleep_mode_t choose_sleep_mode(void)
{
    const bool has_deep = (uint32_t) PORT_SLEEP_DEEP_MIN_TICKS != PORT_SLEEP_NO_DEEP;
    uint32_t ticks = 0;
    if (!timer_next_deadline(has_deep ? &ticks : NULL)) return PORT_SLEEP_NONE_DUE;
    return has_deep && ticks >= PORT_SLEEP_DEEP_MIN_TICKS ? PORT_SLEEP_DEEP : PORT_SLEEP_IDLE;
}

void sched_stop(void)
{
    sched.stop = true;
    sleep_choice_stale = true; /* a sleeping main loop looks again */
}

void sched_run(void)
{
    if (MOTET_THREADS && thread_running()) return; /* the main loop is K's */
    sched.stop = false;
    thread_k_in_run(true);
    while (!sched.stop) {
        port_irq_state_t s = port_irq_save();
        if (work_above(-1)) drain_held_off(-1); /* rule 5 at the bottom frame */
        if (sched.stop) {
            port_irq_restore(s);
            break;
        }
        /* No idle task: K sleeps here itself when no thread is ready, or
         * (MANTIS baseline) hands the CPU to the idle thread. */
        if (!work_above(-1) && !thread_k_idle_switch()) {
            sleep_choice_stale = false;
            port_sleep_mode_t mode = choose_sleep_mode();
            log_event(EV_SLEEP, MT_PID_NONE, (uint16_t) mode);
            port_sleep(mode); /* rule 6: no idle task, no tick */
            log_event(EV_WAKE, MT_PID_NONE, 0);
        }
        port_irq_restore(s);
    }
    thread_k_in_run(false);
}

#if MOTET_THREADS

/* A thread that sleeps in place and MANTIS's idle thread sleep as deep as the loop would. */
port_sleep_mode_t sched_sleep_mode(void)
{
    return choose_sleep_mode();
}

#endif /* MOTET_THREADS */
