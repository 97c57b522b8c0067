/* SPDX-License-Identifier: MIT */
/*
 * What the scheduler does for a migration (migrate_internal.h), built on
 * the few primitives the scheduler exposes for it (sched_internal.h).
 *
 * Freezing uses rule 7: a frozen task counts as not initialised, so every
 * message for it is held, in creation order, and nothing runs it; the flag
 * TASK_FROZEN says why. A task arriving on a module is created the same way
 * (not initialised, frozen), so messages that reach it before the migration
 * is complete wait too. Thawing releases the held messages in list order,
 * not by stamp: the migrator splices lists from several modules into the
 * one order that each sender's messages must keep.
 *
 * Every list and table change happens with interrupts off: bus frames post
 * to tasks from the receive interrupt, and the migrator changes a task's
 * place while other handlers may preempt it.
 */
#include <string.h>

#include "mcast_internal.h"
#include "mem_internal.h"
#include "migrate_internal.h"
#include "motet/log.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/port.h"
#include "queue_internal.h"

static uint16_t list_length(const msg_t *m)
{
    uint16_t n = 0;
    for (; m; m = m->next) n++;
    return n;
}

void sched_mig_freeze(task_t *t)
{
    port_irq_state_t s = port_irq_save();
    /* Held messages (rule 7) are older than any queued one: the drain took
     * them from the head of the level. The queued ones follow them. */
    msg_t *queued = queue_remove_for(t->pid, t->prio);
    if (queued) {
        msg_t **link = &t->held;
        while (*link) link = &(*link)->next;
        *link = queued;
        sched_held_add((int16_t) list_length(queued));
        isr_slot_release_held(t);
    }
    task_set_flags(t, TASK_FROZEN, TASK_INITIALISED);
    port_irq_restore(s);
}

void sched_mig_thaw(task_t *t)
{
    port_irq_state_t s = port_irq_save();
    task_set_flags(t, TASK_INITIALISED, TASK_FROZEN);
    while (t->held) {
        msg_t *m = t->held;
        t->held = m->next;
        sched_held_add(-1);
        queue_push(m, t); /* the order of the list, from now */
    }
    port_irq_restore(s);
}

msg_t *sched_mig_take_held(task_t *t)
{
    port_irq_state_t s = port_irq_save();
    msg_t *list = t->held;
    t->held = NULL;
    sched_held_add((int16_t) -list_length(list));
    port_irq_restore(s);
    return list;
}

uint16_t sched_mig_held_count(const task_t *t)
{
    port_irq_state_t s = port_irq_save();
    uint16_t n = list_length(t->held);
    port_irq_restore(s);
    return n;
}

void sched_mig_hold_at(task_t *t, msg_t *list, uint16_t index)
{
    if (!list) return;
    msg_t *last = list;
    while (last->next) last = last->next;
    port_irq_state_t s = port_irq_save();
    msg_t **link = &t->held;
    for (uint16_t i = 0; i < index && *link; i++) link = &(*link)->next;
    last->next = *link;
    *link = list;
    sched_held_add((int16_t) list_length(list));
    port_irq_restore(s);
}

bool sched_mig_holds_cast(const task_t *t, uint16_t mark)
{
    port_irq_state_t s = port_irq_save();
    const msg_t *m = t->held;
    while (m && !((m->flags & MSG_CAST) && m->mark == mark)) m = m->next;
    port_irq_restore(s);
    return m != NULL;
}

/* A multicast of the same link as mark, numbered after it. */
static bool cast_after(const msg_t *m, uint16_t mark)
{
    return (m->flags & MSG_CAST) && m->mark >> 8 == mark >> 8 &&
           mig_seq_after((uint8_t) m->mark, (uint8_t) mark) > 0;
}

void sched_mig_hold_cast(task_t *t, msg_t *m)
{
    port_irq_state_t s = port_irq_save();
    msg_t **link = &t->held;
    while (*link && !cast_after(*link, m->mark)) link = &(*link)->next;
    m->next = *link;
    *link = m;
    sched_held_add(1);
    port_irq_restore(s);
}

mt_err_t sched_mig_reserve(msg_t **pool, uint16_t count)
{
    msg_t *got = NULL;
    for (uint16_t i = 0; i < count; i++) {
        msg_t *m = sched_msg_spare_more_than(MIG_RESERVE) ? sched_msg_alloc() : NULL;
        if (!m) {
            while (got) {
                m = got;
                got = m->next;
                sched_msg_free(m);
            }
            return log_error(MT_ERR_QUEUE_FULL);
        }
        memset(m, 0, sizeof *m);
        m->next = got;
        got = m;
    }
    *pool = got;
    return MT_OK;
}

/* A held message for dst in block m (from the pool or set aside). */
static msg_t *fill(msg_t *m, mt_pid_t dst, mt_port_t port, const void *data, uint16_t len,
                   mt_err_t *why)
{
    memset(m, 0, sizeof *m);
    m->dst = dst;
    m->port = port;
    m->src = MT_PID_NONE;
    m->flags = MSG_FROM_ISR;
    *why = sched_msg_copy_payload(m, data, len); /* the heap logs a failure */
    if (*why) {
        sched_msg_free(m);
        return NULL;
    }
    return m;
}

msg_t *sched_mig_msg(mt_pid_t dst, mt_port_t port, const void *data, uint16_t len, mt_err_t *why)
{
    *why = MT_ERR_QUEUE_FULL;
    if (!sched_msg_spare_more_than(MIG_RESERVE)) { /* the migrator's own wake-ups need them */
        log_error(MT_ERR_QUEUE_FULL);
        return NULL;
    }
    msg_t *m = sched_msg_alloc(); /* logs an empty pool */
    return m ? fill(m, dst, port, data, len, why) : NULL;
}

msg_t *sched_mig_msg_from(msg_t **pool, mt_pid_t dst, mt_port_t port, const void *data,
                          uint16_t len, mt_err_t *why)
{
    port_irq_state_t s = port_irq_save();
    msg_t *m = *pool;
    if (m) *pool = m->next;
    port_irq_restore(s);
    return m ? fill(m, dst, port, data, len, why) : sched_mig_msg(dst, port, data, len, why);
}

void sched_mig_msg_free(msg_t *m)
{
    sched_msg_free(m);
}

mt_err_t sched_mig_call(mt_pid_t pid, mt_port_t port, void *block, uint16_t len)
{
    return sched_task_call(pid, port, block, len);
}

mt_err_t sched_mig_move_out(mt_pid_t pid, mt_module_t module, msg_t **held)
{
    port_irq_state_t s = port_irq_save();
    /* Found, its held messages taken and its control block swapped for a
     * remote one in one step: a message sent in between would be lost with
     * the task, and a kill in between would free it under us. */
    task_t *t = sched_find_task(pid);
    if (!t || (t->flags & (TASK_FROZEN | TASK_KILL_PENDING)) != TASK_FROZEN) {
        port_irq_restore(s);
        return MT_ERR_NO_TASK;
    }
    sched_task_unlink(t);
    mt_err_t err = task_create_remote_migrating(t->pid, t->prio, module);
    if (err) {
        sched_task_link(t);
        port_irq_restore(s);
        return err;
    }
    /* Its timers in the lock that takes it off the table: an expiry at the
     * unlock would look its pid up (frozen, it is not initialised), find
     * the remote block, and be refused (a false MT_ERR_NO_ROUTE) and lost.
     * One that came before is held, and goes with the task. Only once the
     * move cannot fail: a task that stays keeps its timers. */
    (void) timer_stop_all(t->pid);
    *held = t->held;
    t->held = NULL;
    sched_held_add((int16_t) -list_length(*held));
    msg_t *queued = queue_remove_for(t->pid, t->prio); /* none while frozen */
    port_irq_restore(s);
    while (queued) {
        msg_t *next = queued->next;
        sched_msg_free(queued);
        queued = next;
    }
    mcast_leave_all(t->pid);
    mig_task_gone(t->pid); /* a request put off here is the new module's now */
    mem_free_all(t->pid);
    sched_task_free(t);
    return MT_OK;
}

mt_err_t sched_mig_move_in(const task_spec_t *spec, msg_t **held)
{
    port_irq_state_t s = port_irq_save();
    remote_task_t *r = sched_remote_find(spec->pid);
    remote_task_t was = r ? *r : (remote_task_t){0};
    if (r) sched_task_remove_remote(spec->pid);
    mt_err_t err = task_create_arriving(spec);
    task_t *t = err ? NULL : sched_find_task(spec->pid);
    if (t) {
        /* Not initialised either, so that rule 7 holds until the thaw, but
         * its INIT was handled at the source: none may be sent again. */
        task_set_flags(t, TASK_FROZEN | TASK_INIT_SENT, 0);
        sched_mig_hold_at(t, *held, 0);
        *held = NULL;
    } else if (r)
        task_create_remote_migrating(was.pid, was.prio, was.module);
    port_irq_restore(s);
    return err;
}

bool sched_mig_remote(mt_pid_t pid, mt_module_t *module, mt_prio_t *prio)
{
    remote_task_t *r = sched_remote_find(pid);
    if (!r) return false;
    if (module) *module = r->module;
    if (prio) *prio = r->prio;
    return true;
}

mt_err_t sched_mig_reroute(mt_pid_t pid, mt_module_t module)
{
    remote_task_t *r = sched_remote_find(pid);
    if (!r) return MT_ERR_NO_TASK;
    r->module = module;
    return MT_OK;
}

bool migrate_live(mt_pid_t pid)
{
    task_t *t = task_find_locked(pid);
    return t && (t->flags & TASK_INITIALISED) && !(t->flags & TASK_FROZEN);
}
