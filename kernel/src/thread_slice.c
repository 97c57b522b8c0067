/* SPDX-License-Identifier: MIT */
/*
 * The slice timer of the timed policies (round robin, event boosting,
 * value of preemption): one kernel timer, armed for the running thread
 * while an equal waits, to expire when its slice, quantum or next decay
 * step is due.
 *
 * It is armed lazily. Arming and stopping go through the kernel's timer
 * list, with interrupts off, and a scheduling point comes with every
 * interrupt that finds a thread running. So the timer is left alone while
 * the same thread keeps the CPU towards the same deadline (a thread is
 * charged exactly the time since its last charge, so its deadline does not
 * move), and it is not stopped when a thread leaves the CPU: whoever gets
 * the CPU next re-arms it for itself, or stops it if nothing contends. A
 * timer left running for a thread that no longer runs expires at most once,
 * harmlessly: the policy only slices a thread whose own quantum is spent.
 */
#include "motet/timer.h"
#include "thread_internal.h"

#if THREAD_HAS_SLICE_TIMER

static struct {
    const thread_t *owner; /* the thread it runs for, NULL: not armed */
    uint32_t deadline;     /* timer_now() at which it expires */
    uint32_t starts;       /* timer_kernel_start() calls */
} S;

uint32_t thread_slice_starts(void)
{
    return S.starts;
}

void thread_slice_arm(thread_t *t, uint32_t ticks)
{
    uint32_t deadline = t->run_from + ticks;
    if (S.owner == t && S.deadline == deadline) return; /* already on its way */
    S.owner = t;
    S.deadline = deadline;
    S.starts++;
    if (timer_kernel_start(THREAD_TIMER_SLICE, ticks, false) != MT_OK)
        S.owner = NULL; /* no timer free: no slicing until one is */
}

void thread_slice_disarm(void)
{
    if (!S.owner) return;
    S.owner = NULL;
    timer_kernel_stop(THREAD_TIMER_SLICE);
}

void thread_slice_expired(void)
{
    S.owner = NULL;
}

void thread_slice_reset(void)
{
    S.owner = NULL;
    S.starts = 0;
}

#endif
