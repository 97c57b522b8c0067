/* SPDX-License-Identifier: MIT */
/*
 * What a handler may ask about the running context (motet/sched.h): its
 * task and its sender, the running priority, the frames on the shared
 * stack, the messages waiting. Read-only: none of these changes a frame.
 * The kernel's own hot paths read the running task in line
 * (sched_running_pid()).
 */
#include "motet/port.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "thread_internal.h"

mt_pid_t sched_current_pid(void)
{
    return sched_running_pid();
}

mt_pid_t sched_sender(void)
{
    if (MOTET_THREADS && thread_running()) return MT_PID_NONE;
    return sched.current->sender;
}

mt_prio_t sched_running_prio(void)
{
    return sched.running_prio;
}

uint8_t sched_stack_depth(void)
{
    uint8_t depth = 0;
    for (const task_t *t = sched.current; t->below; t = t->below) depth++;
    return depth;
}

uint8_t sched_queued_count(void)
{
    port_irq_state_t s = port_irq_save();
    uint8_t n = (uint8_t) (queue_length() + sched.held);
    port_irq_restore(s);
    return n;
}
