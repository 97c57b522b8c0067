/* SPDX-License-Identifier: MIT */
/*
 * Rule 3: an interrupt's exit. What interrupts posted runs here only if
 * it strictly outranks the interrupted frame: the interrupt slot's message
 * first (post.c), then what is queued above that frame, by the drain
 * (dispatch.c). Two forms for the ports: sched_isr_exit(), called with
 * interrupts off at the end of an interrupt, and sched_isr_exit_choice(),
 * for a port that asks first and runs the exit it is handed afterwards
 * (the Cortex-M's trampoline); they share the steps below in line. On a
 * thread's stack the thread code decides instead (thread_isr_exit()).
 * The tests the exit makes are the rules' own (dispatch_rules.h:
 * work_above(); the slot's, isr_outranks(), is made at the post).
 */
#include "dispatch_rules.h"
#include "motet/port.h"
#include "sched_internal.h"
#include "thread_internal.h"
#include "timer_internal.h"

/* The interrupt slot's message (post.c) outranks the interrupted frame and
 * everything queued: it runs first, with no queue between
 * (run_slot_held_off()). A ready thread may outrank it, which the drain's
 * order decides: then it joins the queue. */
static MT_INLINE void isr_exit_slot(void)
{
    if (thread_ready_hint())
        send_isr_slot_queue();
    else
        run_slot_held_off();
}

/* What is queued above the interrupted frame's level `floor`, once the
 * slot's message has run: rule 3, only what strictly outranks it. */
static MT_INLINE void isr_exit_queued(mt_prio_t floor)
{
    /* Most exits find nothing more to run: no call to the drain for that. */
    if (work_above(floor))
        drain_held_off(floor);
    else
        sched.running_prio = floor;
}

/* The exit for tasks: what strictly outranks the interrupted frame. In line
 * in both exits, so that an interrupt on a thread's stack has no frame more. */
static MT_INLINE bool isr_exit_tasks(void)
{
    /* Rule 3: only what strictly outranks the interrupted frame runs here;
     * the slot's handler leaves its own level behind (dispatch.c,
     * run_taken_held_off()). */
    mt_prio_t floor = sched.running_prio;
    if (isr_slot_waiting()) isr_exit_slot();
    isr_exit_queued(floor);
    /* Whether the main loop must look again (sched.h): the drain left
     * nothing above the floor, so only a stop or a new sleep choice (a
     * stop makes the choice stale too, sched_stop()); with threads (K's
     * idle choices) or the log (its WAKE and SLEEP records), always. */
    return MOTET_THREADS || MOTET_EVENT_LOG || sleep_choice_stale;
}

bool sched_isr_exit(void)
{
    /* On a thread's stack: the thread code decides whether to switch, with
     * interrupts off, as a switch needs them. */
    if (MOTET_THREADS && thread_running()) {
        if (thread_isr_exit_due()) thread_isr_exit();
        return true;
    }
    return isr_exit_tasks();
}

/* The exits sched_isr_exit_choice() chooses, as sched_isr_exit_fn: the
 * port that chose has no main loop to tell, and nothing changed since the
 * choice, so each does only what the choice found. The slot's message
 * first, then what is queued above the interrupted frame: */
static void isr_exit_slot_first(void)
{
    mt_prio_t floor = sched.running_prio;
    isr_exit_slot();
    isr_exit_queued(floor);
}

/* no slot message, something queued (or a ready thread) above it: */
static void isr_exit_drain(void)
{
    drain_held_off(sched.running_prio);
}

sched_isr_exit_fn sched_isr_exit_choice(void)
{
    if (MOTET_THREADS && thread_running()) return thread_isr_exit_choice();
    if (isr_slot_waiting()) return isr_exit_slot_first;
    return work_above(sched.running_prio) ? isr_exit_drain : NULL;
}
