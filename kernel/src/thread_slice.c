/* SPDX-License-Identifier: MIT */
/*
 * The slice timer of the timed policies (round robin, event boosting,
 * value of preemption): one kernel timer, armed for the running thread
 * while an equal waits, to expire no later than its slice, quantum or next
 * decay step is due.
 *
 * It is armed lazily. Arming and stopping go through the kernel's timer
 * list, with interrupts off, and a scheduling point comes with every
 * interrupt that finds a thread running, so the expiry only has to come no
 * later than the running thread's deadline, not at it: its interrupt's
 * exit charges whoever runs then, and a thread whose own quantum is not
 * spent keeps the CPU and arms the timer for its own deadline. So the timer
 * is started again only when it has expired or a deadline falls before the
 * one it runs towards (thread_slice_arm(), in line), not at every start of
 * a thread. A timer that runs towards another thread's deadline thus
 * expires at most once before the running thread's, and its scheduling
 * point only arms it again. It is stopped when nothing contends any more:
 * a policy may decide at any scheduling point (value of preemption opens
 * its periods there), so none is added where nothing contends.
 */
#include "motet/timer.h"
#include "thread_internal.h"

#if THREAD_HAS_SLICE_TIMER

thread_slice_t thread_slice;

uint32_t thread_slice_starts(void)
{
    return thread_slice.starts;
}

void thread_slice_start(uint32_t deadline, uint32_t ticks)
{
    thread_slice.armed = true;
    thread_slice.deadline = deadline;
    thread_slice.starts++;
    if (timer_kernel_start(THREAD_TIMER_SLICE, ticks, false) != MT_OK)
        thread_slice.armed = false; /* no timer free: no slicing until one is */
}

void thread_slice_disarm(void)
{
    if (!thread_slice.armed) return;
    thread_slice.armed = false;
    timer_kernel_stop(THREAD_TIMER_SLICE);
}

void thread_slice_expired(void)
{
    thread_slice.armed = false;
}

void thread_slice_reset(void)
{
    thread_slice.armed = false;
    thread_slice.starts = 0;
}

#endif
