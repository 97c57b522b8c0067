/* SPDX-License-Identifier: MIT */
/*
 * Tasks: the table that finds a local task by pid and a task's life from
 * creation to kill (tasks on other modules: task_remote.c).
 *
 * A task's routes are resolved to its destinations' control blocks on
 * first use and cleared when a destination goes, so that a send along a
 * route never looks a pid up (send.c). A kill of a task on the stack waits
 * until its frame is popped (dispatch.c); FINAL then runs as its last
 * handler and everything it owned goes. A task whose INIT fails ends at
 * that INIT's pop too, without FINAL (it never initialised) and, where no
 * kill was asked for, without a kill's freeze: nothing can start it.
 */
#include <string.h>

#include "bus_internal.h"
#include "dispatch_rules.h"
#include "mcast_internal.h"
#include "mem_internal.h"
#include "migrate_internal.h"
#include "motet/bus.h"
#include "motet/log.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/port.h"
#include "motet/program.h"
#include "program_internal.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "slab.h"
#include "thread_internal.h"
#include "timer_internal.h"

/* The module's exit status when one of the kernel's own tasks cannot
 * start (task_system_start_failed()); 3 and 4 are the stack guard's and a
 * debug assertion's. */
#define HALT_SYSTEM_TASK_INIT 5

SLAB_DEFINE(task_cache, task_t, MOTET_MAX_TASKS);
task_t task_none = {.pid = MT_PID_NONE, .gate = GATE_CLOSED};

void task_init_caches(void)
{
    for (uint16_t i = 0; i < TASK_TABLE_SIZE; i++) sched.tasks[i] = &task_none;
    slab_init(&task_cache);
    task_remote_init();
}

/* ---- the table ---- */

task_t *sched_find_task(mt_pid_t pid)
{
    const uint8_t home = TASK_SLOT(pid);
    uint8_t slot = home;
    do { /* until an empty slot, or all the way round a full table */
        task_t *t = sched.tasks[slot];
        if (t == &task_none) return NULL;
        if (t->pid == pid) return t;
        slot = NEXT_SLOT(slot);
    } while (slot != home);
    return NULL;
}

task_t *task_find_locked(mt_pid_t pid)
{
    port_irq_state_t s = port_irq_save();
    task_t *t = sched_find_task(pid);
    port_irq_restore(s);
    return t;
}

bool sched_task_exists(mt_pid_t pid)
{
    return task_find_locked(pid) != NULL;
}

/* Only reads: the native port's watchdog calls it from a signal handler,
 * whatever the interrupted code was doing (a diagnostic, not a hot path);
 * there the save finds interrupts off or turns them off for the probe, and
 * the restore gives back the state it found. */
const program_t *sched_task_program(mt_pid_t pid)
{
    port_irq_state_t s = port_irq_save();
    const task_t *t = sched_find_task(pid);
    task_handler_t h = t ? t->handler : NULL;
    port_irq_restore(s);
    return h ? program_find_handler(h) : NULL;
}

static void table_insert(task_t *t)
{
    uint8_t slot = TASK_SLOT(t->pid);
    while (sched.tasks[slot] != &task_none) slot = NEXT_SLOT(slot);
    sched.tasks[slot] = t;
}

/* Remove t and close the gap (backward-shift deletion), so that lookups
 * can keep stopping at the first empty slot. */
static void table_remove(const task_t *t)
{
    uint8_t hole = TASK_SLOT(t->pid);
    while (sched.tasks[hole] != t) hole = NEXT_SLOT(hole);
    sched.tasks[hole] = &task_none;
    for (uint8_t next = NEXT_SLOT(hole); sched.tasks[next] != &task_none; next = NEXT_SLOT(next)) {
        uint8_t home = TASK_SLOT(sched.tasks[next]->pid);
        /* Move it back unless its home lies cyclically in (hole, next]. */
        bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
        if (stays) continue;
        sched.tasks[hole] = sched.tasks[next];
        sched.tasks[next] = &task_none;
        hole = next;
    }
}

static void forget_routes_to(const task_t *dead)
{
    for (uint16_t i = 0; i < TASK_TABLE_SIZE; i++) {
        task_t *t = sched.tasks[i]; /* task_none has no routes */
        for (uint8_t r = 0; r < t->n_routes; r++)
            if (t->routes[r].local == dead) t->routes[r].local = &task_none;
    }
}

void sched_task_link(task_t *t)
{
    table_insert(t);
}

void sched_task_unlink(task_t *t)
{
    table_remove(t);
    forget_routes_to(t);
}

void sched_task_free(task_t *t)
{
    slab_free(&task_cache, t);
}

void task_set_flags(task_t *t, uint8_t set, uint8_t clear)
{
    t->flags = (uint8_t) ((t->flags & ~clear) | set);
    t->gate = task_on_stack(t) ? GATE_CLOSED : task_gate(t);
}

/* ---- creation ---- */

static mt_err_t copy_routes(task_t *t, const task_spec_t *spec)
{
    if (!spec->n_routes) return MT_OK;
    t->routes = mem_alloc_owned(spec->n_routes * sizeof(out_route_t), spec->pid);
    if (!t->routes) return MT_ERR_NO_MEM;
    for (uint8_t i = 0; i < spec->n_routes; i++) {
        const route_t *r = &spec->routes[i];
        t->routes[i].local = &task_none;
        t->routes[i].pid = r->pid;
        t->routes[i].port = r->port;
    }
    t->n_routes = spec->n_routes;
    return MT_OK;
}

/* Who creates the task: the application (sched_task_create()); the kernel,
 * one of its own tasks, whose pids the public call refuses
 * (task_create_system()); or the migrator, the copy of a task arriving
 * under the pid its slot holds (task_create_arriving()). */
typedef enum { CREATE_APP, CREATE_SYSTEM, CREATE_ARRIVING } create_kind_t;

static mt_err_t validate_spec(const task_spec_t *spec, create_kind_t kind)
{
    if (!spec || !spec->handler) return MT_ERR_INVALID;
    if (!(kind == CREATE_SYSTEM ? task_pid_is_system_task(spec->pid) : task_pid_is_app(spec->pid)))
        return MT_ERR_INVALID;
    if (spec->prio < 0 || spec->prio >= MOTET_PRIO_LEVELS) return MT_ERR_INVALID;
    if (spec->flags & ~TASK_MOVABLE) return MT_ERR_INVALID;
    if (spec->n_routes && !spec->routes) return MT_ERR_INVALID;
    if (task_find_locked(spec->pid) || sched_remote_find(spec->pid)) return MT_ERR_EXISTS;
    /* A migration under way holds its task's pid until it ends, even once
     * the task was killed: a task made under it would be taken for the
     * migrating one (its held messages, its groups, its move out). */
    if (kind != CREATE_ARRIVING && mig_pid_pinned(spec->pid)) return MT_ERR_EXISTS;
    /* A route's port is checked here, once, so that a send along it need
     * not (route_port_ok()); before anything is allocated, so that a bad
     * spec costs nothing. */
    for (uint8_t i = 0; i < spec->n_routes; i++)
        if (!route_port_ok(spec->routes[i].pid, spec->routes[i].port)) return MT_ERR_NO_PORT;
    return MT_OK;
}

/* Out of line: one body for the three calls below, which are its
 * wrappers (inlined into each, a compiler copied most of it twice). */
static MT_NOINLINE mt_err_t create(const task_spec_t *spec, create_kind_t kind)
{
    mt_err_t err = validate_spec(spec, kind);
    if (err) return log_error(err);
    task_t *t = slab_alloc(&task_cache); /* zeroed; logs MT_ERR_NO_SLAB itself */
    if (!t) return MT_ERR_NO_SLAB;
    t->handler = spec->handler;
    t->pid = spec->pid;
    t->prio = spec->prio;
    t->flags = spec->flags;
    t->gate = GATE_CLOSED; /* until its INIT has been handled (rule 7) */
    if (spec->state_size) {
        t->state = mem_alloc_owned(spec->state_size, spec->pid);
        if (!t->state)
            err = MT_ERR_NO_MEM;
        else
            memset(t->state, 0, spec->state_size);
    }
    if (!err) err = copy_routes(t, spec);
    if (err) {
        mem_free_all(spec->pid);
        slab_free(&task_cache, t);
        return log_error(err);
    }
    port_irq_state_t s = port_irq_save();
    table_insert(t);
    port_irq_restore(s);
    log_event(EV_CREATE, t->pid, (uint16_t) t->prio);
    return MT_OK;
}

/* A system pid is the kernel's (sched.h): a task of the application's
 * created under one would receive what the bus posts to that system task
 * and send as it. */
mt_err_t sched_task_create(const task_spec_t *spec)
{
    return create(spec, CREATE_APP);
}

mt_err_t task_create_system(const task_spec_t *spec)
{
    return create(spec, CREATE_SYSTEM);
}

mt_err_t task_create_arriving(const task_spec_t *spec)
{
    return create(spec, CREATE_ARRIVING);
}

/* Its INIT goes the general way (send.c): rule 7 holds what comes first.
 * One INIT per task (sched.h): the delivery claims it (TASK_INIT_SENT)
 * under the lock where the send can no longer fail, and refuses a second
 * one, sent by this call or by a send to PORT_INIT; the test here only
 * refuses early, before anything is allocated. */
mt_err_t sched_task_init(mt_pid_t pid, const void *data, uint16_t len)
{
    if (len && !data) return log_error(MT_ERR_INVALID);
    port_irq_state_t s = port_irq_save();
    task_t *t = sched_find_task(pid);
    mt_err_t err = !t                                               ? MT_ERR_NO_TASK
                   : t->flags & (TASK_INIT_SENT | TASK_INITIALISED) ? MT_ERR_STATE
                                                                    : MT_OK;
    port_irq_restore(s);
    if (err) return log_error(err);
    /* From an interrupt body it is the interrupt's message (rule 3), as a
     * send to PORT_INIT from there is (send.c): queued, run at the exit at
     * the earliest, never inside the body. */
    return sched_deliver(t, pid, PORT_INIT, (void *) data, len, 0, port_in_isr());
}

void task_release_held(task_t *t)
{
    port_irq_state_t s = port_irq_save();
    queue_release_held(t);
    port_irq_restore(s);
}

/* ---- killing ---- */

static void discard_list(msg_t *m, uint16_t *count)
{
    while (m) {
        msg_t *next = m->next;
        sched_msg_free(m);
        (*count)++;
        m = next;
    }
}

void task_destroy(task_t *t)
{
    uint16_t dropped = 0;
    port_irq_state_t s = port_irq_save();
    /* Its timers first, in the lock that takes it off the table: an expiry
     * at an unlock in between would look its pid up and find no task (a
     * false MT_ERR_NO_TASK, the expiry lost). None is queued to the block
     * itself: every caller cleared TASK_INITIALISED, which sends an expiry
     * to the lookup. A message an expiry queued before stays in the queue,
     * taken out just below. */
    (void) timer_stop_all(t->pid);
    msg_t *queued = queue_remove_for(t->pid, t->prio);
    msg_t *held = t->held;
    t->held = NULL;
    for (msg_t *m = held; m; m = m->next) sched.held--;
    table_remove(t);
    /* In the same critical section: a send along a route cached to t,
     * from a handler run at an interrupt's exit, must never find it half
     * cleared (a pointer is two stores on 8-bit cores). */
    forget_routes_to(t);
    port_irq_restore(s);
    discard_list(queued, &dropped);
    discard_list(held, &dropped);
    mcast_leave_all(t->pid);
    bus_task_gone(t->pid); /* its pid may be given to another task */
    mig_task_gone(t->pid);
    mem_free_all(t->pid);
    log_event(EV_KILL, t->pid, dropped);
    slab_free(&task_cache, t);
}

/* task_finish_kill() in two steps, for a caller holding irq off until the
 * task can start nothing more: the first freezes t (its queued messages
 * held) and says whether FINAL is due; the second, with irq on, runs FINAL
 * and destroys t. Out of line: the stack analysis names task_kill_end
 * (kernel/stack/kernel.annot). */
static MT_NOINLINE bool task_kill_begin_irq_off(task_t *t)
{
    bool final = (t->flags & TASK_INITIALISED) != 0;
    /* Nothing may start on it any more but FINAL: frozen, its queued
     * messages go to its held list (rule 7 keeps them there), where its
     * destruction finds them; FINAL must not release them. */
    sched_mig_freeze(t);
    /* TASK_ENDING, never cleared, refuses every later kill of t: one
     * asked for by its FINAL, by a FINAL it caused, or by a handler run at
     * an interrupt's exit before its destruction takes it off the table
     * would otherwise run FINAL and destroy it again. */
    task_set_flags(t, TASK_ENDING, TASK_KILL_PENDING);
    return final;
}

static MT_NOINLINE void task_kill_end(task_t *t, bool final)
{
    if (final) {
        port_irq_state_t s = port_irq_save();
        frame_push(t, sched_current_pid());
        /* FINAL runs wherever the kill happens, even under a more important
         * killer: the running priority stays the killer's, so that nothing
         * the killer outranks (its own queued messages among them) starts
         * above FINAL. */
        if (sched.running_prio < t->below_prio) sched.running_prio = t->below_prio;
        port_irq_restore(s);
        log_event(EV_START, t->pid, PORT_FINAL);
        frame_run(t, PORT_FINAL, NULL, 0);
    }
    task_destroy(t);
}

void task_finish_kill(task_t *t)
{
    port_irq_state_t s = port_irq_save();
    bool final = task_kill_begin_irq_off(t);
    port_irq_restore(s);
    task_kill_end(t, final);
}

/* sched.kill_on_pop: a kill asked for while t was on the stack, when its
 * frame is popped (dispatch.c); irq off on entry and return. */
static void kill_on_pop_irq_off(task_t *t)
{
    /* Frozen before interrupts come back: a handler run at an interrupt's
     * exit must not start t again between its pop and its FINAL, nor after
     * it. */
    bool final = task_kill_begin_irq_off(t);
    port_irq_enable(); /* FINAL is a handler like any other */
    task_kill_end(t, final);
    (void) port_irq_save();
}

/* sched.kill_on_pop in an image where no kill has been asked for: the end
 * of a task whose INIT failed, at that INIT's pop; irq off on entry and
 * return. No freeze and no FINAL, so that an image without kills links
 * only task_destroy(): nothing can start t between its pop and its
 * destruction. It never initialised and its one INIT was claimed
 * (TASK_INIT_SENT), so a message sent to it meanwhile, even by a handler
 * run at an interrupt's exit, is held (rule 7) or waits in the queue as
 * held, and a second INIT is refused; the destruction takes both. No
 * message to it has the interrupt slot's block: only an open gate gets it
 * (isr_slot_fits(), post_isr_wait()). */
static void destroy_on_pop_irq_off(task_t *t)
{
    port_irq_enable(); /* its destruction walks lists and the heap */
    task_destroy(t);
    (void) port_irq_save();
}

/* Its flags are changed here, under the END's lock, before the pop looks
 * at them: without TASK_INIT_RUNNING the pop does not mark it initialised
 * nor release its held messages, which its destruction refuses as a
 * kill's; with TASK_KILL_PENDING the pop ends it. Its gate stays as it is
 * (no task_set_flags()): closed when the INIT's frame was pushed, and
 * closed again by any change of flags since, so the pop takes its rare
 * way. A hook a kill has set stays (kill_on_pop_irq_off(): a task below
 * may still wait for its FINAL); it ends t too, without FINAL, as t never
 * initialised. A kill asked for while its INIT ran is the same end. */
void task_init_failed_irq_off(task_t *t, mt_err_t err)
{
    /* A kernel with neither of its own tasks has none of the test. */
    if ((MOTET_APPMGR || MOTET_BUS) && task_pid_is_system_task(t->pid))
        task_system_start_failed(t->pid, err);
    log_event(EV_INITFAIL, t->pid, (uint16_t) err);
    if (!sched.kill_on_pop) sched.kill_on_pop = destroy_on_pop_irq_off;
    MT_DEBUG_ASSERT(!task_gate_opened(t));
    t->flags = (uint8_t) ((t->flags & ~TASK_INIT_RUNNING) | TASK_KILL_PENDING);
}

/* The application manager or the migrator, started as the module boots
 * or joins the bus, not created or its INIT failed: the module would run
 * on unable to load or to talk, as if nothing had happened. It halts
 * instead, as the INITFAIL logged says why (port_halt() drains the log
 * where it can). */
void task_system_start_failed(mt_pid_t pid, mt_err_t err)
{
    log_event(EV_INITFAIL, pid, (uint16_t) err);
    port_halt(HALT_SYSTEM_TASK_INIT);
}

#if MOTET_THREADS
static void finish_kill_call(void *arg)
{
    task_finish_kill(arg);
}
#endif

mt_err_t sched_task_kill(mt_pid_t pid)
{
    /* Not from an interrupt body: FINAL would run inside it, and the
     * interrupt slot may name the task (post.c), which its exit would run
     * after the block was freed. */
    if (port_in_isr()) return log_error(MT_ERR_STATE);
    /* The kernel's own tasks stay while the device runs (sched.h): killed,
     * a task of the application's could be created under the pid. */
    if (pid >= MT_PID_SYSTEM) return log_error(MT_ERR_INVALID);
    port_irq_state_t s = port_irq_save();
    task_t *t = sched_find_task(pid);
    if (!t || (t->flags & (TASK_KILL_PENDING | TASK_ENDING | TASK_THREAD))) {
        port_irq_restore(s);
        /* A thread's task goes only with its thread (thread_exit()). */
        return log_error(t && (t->flags & TASK_THREAD) ? MT_ERR_STATE : MT_ERR_NO_TASK);
    }
    sched.kill_on_pop = kill_on_pop_irq_off;
    task_set_flags(t, TASK_KILL_PENDING, 0);
    bool on_stack = task_on_stack(t);
    port_irq_restore(s);
    if (on_stack) return MT_OK; /* its frame's pop finishes it */
#if MOTET_THREADS
    if (thread_running()) {
        thread_call_on_k(finish_kill_call, t); /* FINAL runs on the kernel stack */
        return MT_OK;
    }
#endif
    task_finish_kill(t);
    return MT_OK;
}

/* ---- threads (thread_internal.h) ---- */

#if MOTET_THREADS

/* Both under the lock: an interrupt's post must find the task either
 * bound (its mailbox) or not (held until INIT), never half of each. */
void sched_task_bind(task_t *t, thread_t *th)
{
    port_irq_state_t s = port_irq_save();
    t->state = th; /* a bound task has no state of its own */
    task_set_flags(t, TASK_THREAD | TASK_INITIALISED, 0);
    port_irq_restore(s);
}

void sched_task_destroy(task_t *t)
{
    port_irq_state_t s = port_irq_save();
    task_set_flags(t, 0, TASK_INITIALISED | TASK_THREAD);
    t->state = NULL;
    port_irq_restore(s);
    task_destroy(t);
}

void sched_msg_release(msg_t *m)
{
    sched_msg_free(m);
}

#endif /* MOTET_THREADS */
