/* SPDX-License-Identifier: MIT */
/*
 * The eight dispatch rules, each with the decision that implements it.
 *
 * Motet runs message handlers on one shared stack. Which handler runs
 * when is decided by eight rules, apart from the kernel's own calls of a
 * handler (a task's FINAL, task.c; the migrator's, sched_task_call(),
 * dispatch.c) and the threads' policies (docs/threads.md):
 *
 *   1. A send to a local task of equal or higher priority than the
 *      running handler, and not on the stack, runs it at once, nested on
 *      top of the sender.
 *   2. Anything else is queued: by priority, then in creation order.
 *   3. An interrupt's message runs before the interrupted code only if it
 *      is strictly higher, and only at the interrupt's exit.
 *   4. A task on the stack is never entered twice.
 *   5. When a handler returns, queued work above the frame below it runs
 *      before that frame resumes.
 *   6. With nothing to run, the processor sleeps as deep as the next
 *      timer allows: no idle task, no tick.
 *   7. Messages to a task not yet initialised are held until its INIT
 *      has been handled.
 *   8. Messages to tasks of other modules go to the bus manager.
 *
 * This file states each rule again where its decision is, as a named
 * function in line (MT_INLINE, types.h), so that `grep` for the function
 * shows every place the rule is applied. The mechanisms the decisions
 * steer are files of their own: sending (send.c),
 * posting from interrupts and timers (post.c), the queue (queue.c,
 * queue_internal.h), the task table and the tasks' lives (task.c), a
 * frame's run and the drain (dispatch.c), an interrupt's exit
 * (isr_exit.c), the main loop (sched_run.c). docs/architecture.md, "The
 * dispatch rules and where they live", has the table.
 */
#ifndef MOTET_DISPATCH_RULES_H
#define MOTET_DISPATCH_RULES_H

#include "debug_assert.h"
#include "motet/port.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "thread_internal.h"

/* ==== The two comparisons of priorities ====
 *
 * Rule 1 lets an equal priority in, rules 3 and 5 only a strictly higher
 * one. Every decision below makes its comparison through one of these. */

/* Rule 1: a priority `prio` runs at once over the running level `running`
 * if it is equal or higher. */
static MT_INLINE bool prio_runs_at_once(mt_prio_t prio, mt_prio_t running)
{
    return prio >= running;
}

/* Rules 3 and 5: `prio` outranks the level `floor` (an interrupted frame's,
 * the frame's below a handler that returned) only if strictly higher. */
static MT_INLINE bool prio_outranks(mt_prio_t prio, mt_prio_t floor)
{
    return prio > floor;
}

/* ==== The gate: rules 1, 4 and 7 in one comparison ====
 *
 * Each task has a gate (task_t's `gate`): its priority while a send may
 * run it at once, and below every running priority while it is on the
 * stack (rule 4), not yet initialised (rule 7), frozen for migration,
 * being killed, or bound to a thread. A send then asks one question of
 * one byte, gate_runs_at_once(). */

/* The flags that decide a task's gate while it is off the stack: of them,
 * only TASK_INITIALISED may be set for a send to run it at once. */
#define TASK_GATE_FLAGS (TASK_INITIALISED | TASK_FROZEN | TASK_KILL_PENDING | TASK_THREAD)

/* A gate below every running priority (-1 when the stack is empty), for a
 * task its flags keep from running at once. */
#define GATE_CLOSED ((mt_prio_t) -80)
/* A frame's push closes its task's gate by this much, its pop opens it by
 * as much again: a gate that was open (a priority, 0..31 by config.h) is
 * then -40..-9 on the stack, below every running priority (rule 4), and
 * its pop reopens it without a look at the task's flags; one that was
 * closed (GATE_CLOSED), or that a change of flags closed while the task
 * ran (task_set_flags()), is below -40, and the pop looks at the flags
 * (dispatch.c, frame_pop_rare()). So the byte a send compares also tells
 * the pop whether it is plain. */
#define GATE_STACKED 40
_Static_assert(MOTET_PRIO_LEVELS - 1 - GATE_STACKED < -1 && GATE_CLOSED < -GATE_STACKED &&
                   GATE_CLOSED - GATE_STACKED >= -128,
               "a stacked gate stays below every running priority, apart from a closed one");

/* The gate t's flags and priority give it off the stack: closed until its
 * INIT has been handled (rule 7), while frozen, being killed or bound to a
 * thread. */
static MT_INLINE mt_prio_t task_gate(const task_t *t)
{
    return (t->flags & TASK_GATE_FLAGS) == TASK_INITIALISED ? t->prio : GATE_CLOSED;
}

/* True if t's flags let a send queue a message for it the plain way
 * (initialised, not frozen, not being killed, not a thread's: those
 * task_gate() opens the gate for), read from the gate alone: one that was
 * opened stays at or above -GATE_STACKED while t is on the stack, one its
 * flags keep closed is below. A change of flags while t is on the stack
 * closes its gate until the pop, even to flags that would open it: a send
 * then takes the general way, which has every case. */
static MT_INLINE bool task_gate_opened(const task_t *t)
{
    return t->gate >= -GATE_STACKED;
}

/* ==== Rule 1: a send runs its receiver at once ====
 *
 * The fast paths (send.c: send_along(), send_heap_along(), send_by_pid())
 * compare the receiver's gate with the running level, under the lock that
 * also pushes its frame: an open gate is the task's priority, so this is
 * rule 1's comparison, and a closed or stacked one is below every level,
 * so rules 4 and 7 refuse in the same comparison. The general path
 * (send.c, can_run_now()) tests the flags and the stack one by one and
 * then compares the priority itself, with task_runs_at_once(). */

/* Rules 1, 4 and 7 for a send from a handler running at `running`, the
 * level the caller read: t runs at once, nested. */
static MT_INLINE bool gate_runs_at_once(const task_t *t, mt_prio_t running)
{
    return prio_runs_at_once(t->gate, running);
}

/* gate_runs_at_once() at the running level as it is now. */
static MT_INLINE bool gate_runs_now(const task_t *t)
{
    return gate_runs_at_once(t, sched.running_prio);
}

/* Rule 1 for the general path, t's flags and rule 4 tested by the caller:
 * t's priority is equal or higher than the running level, or, in a
 * thread, than the running thread's. */
static MT_INLINE bool task_runs_at_once(const task_t *t)
{
    if (MOTET_THREADS && thread_running()) return prio_runs_at_once(t->prio, thread_running_prio());
    return prio_runs_at_once(t->prio, sched.running_prio);
}

/* ==== Rule 2: the queue's order ====
 *
 * What does not run at once waits in one FIFO per priority level: a
 * message is appended to its level when it is created (queue_push(),
 * queue_internal.h; after the interrupt slot's message, which is older:
 * queue_after_slot(), post.c), and the drain takes the oldest of the
 * highest level (queue_pop_top()). Creation order needs no stamp: a held
 * message (rule 7) goes back to the head of its level, older than
 * everything there (queue_release_held(), queue.c). */

/* ==== Rule 3: an interrupt's message, strictly higher, at the exit ====
 *
 * An interrupt body never runs a handler: its message waits. A bare post
 * whose task strictly outranks the interrupted frame and everything queued
 * waits in the interrupt slot and runs first at the exit (post.c,
 * isr_slot_fits(); dispatch.c, run_slot_held_off()); anything else is
 * queued (rule 2). At the exit, what is queued strictly above the
 * interrupted frame runs (isr_exit.c), by work_above() (rule 5's test,
 * its floor the interrupted frame's level). */

/* Rule 3 for an interrupt's message to t: t's gate strictly outranks
 * `floor` (the interrupted frame's level, or the queue's top), so it may
 * run before what is there; a closed or stacked gate never does. */
static MT_INLINE bool isr_outranks(const task_t *t, mt_prio_t floor)
{
    return prio_outranks(t->gate, floor);
}

/* ==== Rule 4: a task on the stack is never entered twice ====
 *
 * A task's frame lives in its control block (dispatch.c), so a task may be
 * on the stack once only. The push closes its gate by GATE_STACKED and the
 * pop reopens it, so that no send's gate_runs_at_once() admits it while it
 * is on the stack; the general path asks task_on_stack() (dispatch.c),
 * and a change of flags keeps the gate of a task on the stack closed
 * until its pop (task.c, task_set_flags()). */

/* A frame's push closes t's gate (rule 4). Not idempotent: a task pushed
 * twice would keep an open gate after both pops, which no way in does
 * (each checks rule 4 first); a debug build checks it (frame_push_on()). */
static MT_INLINE void gate_close_at_push(task_t *t)
{
    t->gate = (mt_prio_t) (t->gate - GATE_STACKED);
}

/* A frame's pop reopens t's gate if it was open at the push and no change
 * of flags has closed it since, and says so; false leaves the gate for the
 * pop's rare way to set from the flags (frame_pop_rare(): the end of an
 * INIT, a kill, a freeze). Irq off. */
static MT_INLINE bool gate_reopen_at_pop(task_t *t)
{
    mt_prio_t stacked = t->gate;
    if (stacked < -GATE_STACKED) return false;
    t->gate = (mt_prio_t) (stacked + GATE_STACKED);
    return true;
}

/* Push a frame for t, which runs next on behalf of `sender`, above the
 * top frame `below` (of running priority below_prio), read before the lock
 * by a fast path: what handlers an interrupt runs meanwhile restore both.
 * Irq off, t off the stack, its run decided by the caller whatever its
 * gate says: a send's rule 1 (the gate open), the drain's choice, an INIT
 * (t not yet initialised), FINAL (task.c, task_kill_end(): t frozen) or
 * sched_task_call() (the migrator's calls: t frozen). While it is on the
 * stack its gate stays closed (rule 4). */
static MT_INLINE void frame_push_on(task_t *t, task_t *below, mt_prio_t below_prio, mt_pid_t sender)
{
    MT_DEBUG_ASSERT(!task_on_stack(t)); /* pushed twice, its gate would be open after both pops */
    t->below = below;
    t->below_prio = below_prio;
    t->sender = sender;
    gate_close_at_push(t);
    sched.current = t;
    sched.running_prio = t->prio;
}

/* frame_push_on() the current top frame. */
static MT_INLINE void frame_push(task_t *t, mt_pid_t sender)
{
    frame_push_on(t, sched.current, sched.running_prio, sender);
}

/* ==== Rule 5: when a handler returns, what outranks the frame below ====
 *
 * After every pop, the queued messages (and ready threads) above the
 * running level, the frame below's, run before that frame resumes: the
 * drain (dispatch.c, drain_held_off()), which takes the highest first and
 * holds the level it took until nothing above the floor is left. Most
 * returns find nothing, tested without a call. */

/* Rules 5 and 3: a drain at `floor` may find work: a message queued
 * strictly above it, or a ready thread (whose policy decides). Read
 * without the lock: whatever an interrupt adds afterwards and outranks the
 * frame runs at that interrupt's exit. */
static MT_INLINE bool work_above(mt_prio_t floor)
{
    return prio_outranks(queue_top_prio(), floor) || thread_ready_hint();
}

/* Rule 5 once a handler has returned and its frame is popped: drain what
 * outranks `level`, the running level the caller read; MT_OK, so that a
 * fast path ends in a tail call. */
static MT_INLINE mt_err_t drain_above(mt_prio_t level)
{
    if (work_above(level)) return dispatch_drain(level, port_irq_save());
    return MT_OK;
}

/* drain_above() for a caller still in the pop's critical section, s the
 * state it saved: the level is tested under that lock, and the drain,
 * entered with it held, restores s when done, so that nothing is restored
 * only to be saved again. */
static MT_INLINE mt_err_t drain_above_held(mt_prio_t level, port_irq_state_t s)
{
    if (!work_above(level)) {
        port_irq_restore(s);
        return MT_OK;
    }
    return dispatch_drain(level, s);
}

/* ==== Rule 6: nothing to run, sleep ====
 *
 * There is no idle task and no tick: the main loop (sched_run.c,
 * sched_run()) drains, and with nothing queued and no thread ready sleeps
 * in the port as deep as the next timer allows (choose_sleep_mode()). An
 * interrupt's exit runs what the interrupt brought (rule 3); the loop
 * looks again only when the exit says so. */

/* ==== Rule 7: messages to an uninitialised task are held ====
 *
 * A task is created with its gate closed. A message sent to it before its
 * INIT has been handled is queued in its level like any other, marked
 * MSG_HELD (its INIT MSG_OPENS), so that it keeps its place in creation
 * order (rule 2); when the drain comes to it and the task still takes no
 * messages (task_takes_messages(), dispatch.c's drain_rare()), it goes to
 * the task's held list (queue_hold()). The INIT's pop marks the task
 * initialised and releases the list to the head of its level
 * (task_release_held()).
 *
 * The same flag, TASK_INITIALISED, also holds the messages of a task frozen
 * for migration or for its end: the freeze clears it and moves what was
 * queued to the held list (sched_migrate.c, sched_mig_freeze()), the thaw
 * sets it again and queues the list. A message other than an INIT sent to
 * a frozen task goes to its held list at once, in no queue (send.c,
 * place_irq_off()). */

/* t takes messages now: its INIT has been handled and it is not frozen
 * (a freeze clears TASK_INITIALISED, a thaw sets it). False, a message
 * for t waits (marked MSG_HELD, or on its held list). */
static MT_INLINE bool task_takes_messages(const task_t *t)
{
    return (t->flags & TASK_INITIALISED) != 0;
}

/* Rule 7 at a send, and a freeze's hold: a message queued for t now waits,
 * as t takes no messages (its INIT not yet handled, or t frozen) and is
 * not bound to a thread (which has no INIT). True for t's INIT too, which
 * the caller marks as the one that ends the wait (MSG_OPENS). */
static MT_INLINE bool messages_wait_for(const task_t *t)
{
    return !(t->flags & (TASK_INITIALISED | TASK_THREAD));
}

/* Rule 7's end, at the pop of t's frame (dispatch.c, frame_pop_rare()):
 * an INIT that has run marks t initialised and releases what was held,
 * unless a kill of t was asked for (its end takes them). Irq off. */
static MT_INLINE void hold_end_at_pop(task_t *t)
{
    if (t->flags & TASK_INIT_RUNNING) {
        t->flags = (uint8_t) ((t->flags & ~TASK_INIT_RUNNING) | TASK_INITIALISED);
        if (!(t->flags & TASK_KILL_PENDING)) task_release_held(t);
    }
}

/* ==== Rule 8: messages to other modules go to the bus manager ====
 *
 * A pid with no local control block that names a task of another module
 * (task_remote.c's table) is sent by send_remote(), which hands the
 * message to the bus manager's hook (bus.c); from an interrupt, which
 * hands nothing to the bus, it is refused (post_no_local_task()). The
 * general path (send.c, deliver_general()) makes the choice. */

#endif /* MOTET_DISPATCH_RULES_H */
