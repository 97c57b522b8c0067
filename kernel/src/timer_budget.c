/* SPDX-License-Identifier: MIT */
/*
 * Run budgets (MOTET_TASK_BUDGET=1, timer_set_budget()): the compare
 * interrupt samples the task on top of the stack, and logs EV_BUDGET once
 * a run of one task has lasted past its budget. timer.c arms the compare
 * for the check while a budget is set and a handler runs or waits
 * (timer_budget_wanted()) and calls the check at each of its interrupts;
 * docs/architecture.md, "Configuration", says how, and what sampling
 * misses. Compiled out, none of it exists.
 */
#include "motet/config.h"
#include "motet/log.h"
#include "motet/port.h"
#include "motet/timer.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "timer_internal.h"

#if MOTET_TASK_BUDGET

static struct {
    mt_pid_t pid; /* MT_PID_NONE: a free entry */
    uint32_t ticks;
} budgets[MOTET_BUDGET_TASKS];
static uint8_t budgets_set;
static uint16_t sleeps; /* timer_next_deadline() calls: one before every sleep */
static struct {
    const task_t *task; /* on top at the last check, NULL: none */
    uint32_t since;     /* kernel time of the first check that saw this run */
    uint16_t sleeps;    /* `sleeps` then: a sleep since ends the run */
    bool logged;
} watch;

void timer_budget_reset(void)
{
    for (uint8_t i = 0; i < MOTET_BUDGET_TASKS; i++) budgets[i].pid = MT_PID_NONE;
    budgets_set = 0;
    watch.task = NULL;
}

bool timer_budget_wanted(void)
{
    return budgets_set &&
           (sched.current != &task_none || queue_top_prio() >= 0 || isr_slot_waiting());
}

void timer_budget_sleeping(void)
{
    sleeps++;
}

void timer_budget_check(void)
{
    const task_t *t = sched.current;
    uint32_t now = timer_now_irq_off();
    if (t != watch.task || sleeps != watch.sleeps) {
        watch.task = t;
        watch.since = now;
        watch.sleeps = sleeps;
        watch.logged = false;
        return;
    }
    if (t == &task_none || watch.logged) return;
    for (uint8_t i = 0; i < MOTET_BUDGET_TASKS; i++) {
        if (budgets[i].pid != t->pid || now - watch.since < budgets[i].ticks) continue;
        uint64_t ms = (uint64_t) (now - watch.since) * 1000u / PORT_TICKS_PER_SECOND;
        log_event(EV_BUDGET, t->pid, (uint16_t) (ms > 0xFFFFu ? 0xFFFFu : ms));
        watch.logged = true;
        return;
    }
}

mt_err_t timer_set_budget(mt_pid_t pid, uint32_t ticks)
{
    if (pid == MT_PID_NONE || ticks >= TIMER_TICKS_LIMIT) return log_error(MT_ERR_INVALID);
    port_irq_state_t s = port_irq_save();
    int8_t slot = -1;
    for (uint8_t i = 0; i < MOTET_BUDGET_TASKS; i++) {
        if (budgets[i].pid == pid) slot = (int8_t) i;
        if (slot < 0 && budgets[i].pid == MT_PID_NONE && ticks) slot = (int8_t) i;
    }
    mt_err_t err = MT_OK;
    if (slot < 0) {
        err = ticks ? MT_ERR_NO_SLAB : MT_OK;
    } else {
        if (budgets[slot].pid == MT_PID_NONE) budgets_set++;
        if (!ticks && budgets[slot].pid != MT_PID_NONE) budgets_set--;
        budgets[slot].pid = ticks ? pid : MT_PID_NONE;
        budgets[slot].ticks = ticks;
        timer_rearm_irq_off(); /* the check starts now if there is work */
    }
    port_irq_restore(s);
    return err ? log_error(err) : MT_OK;
}

#endif /* MOTET_TASK_BUDGET */
