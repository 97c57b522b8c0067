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
 * it runs towards the deadline wanted (a thread is charged exactly the time
 * since its last charge, so its deadline does not move while it keeps the
 * CPU): thread_slice_arm() checks that in line, and only a new deadline
 * comes here. It is not stopped when a thread leaves the CPU: whoever gets
 * the CPU next re-arms it for itself, or stops it if nothing contends. A
 * timer left running for a thread that no longer runs expires at most
 * once, harmlessly: the policy only slices a thread whose own quantum is
 * spent.
 *
 * Left running towards an earlier deadline instead of started again for a
 * later one, it would expire early and arm itself from that scheduling
 * point: under high load (the value-of-preemption benchmark at n = 7)
 * that made more expiries than it saved starts, and cost round robin
 * about 20 cycles a packet.
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
