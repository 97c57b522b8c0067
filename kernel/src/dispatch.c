/* SPDX-License-Identifier: MIT */
/*
 * Frames on the one shared stack, a handler's run in its frame, and the
 * drain of the queue. The eight dispatch rules, and the decision that
 * implements each, are dispatch_rules.h's, which a newcomer reads first:
 * this file applies rules 4 (a frame's push and pop), 5 (the drain) and 7
 * (the drain's hold and the INIT's end at its pop) by the functions named
 * there; an interrupt's exit (rule 3) is isr_exit.c's, the main loop that
 * drains and sleeps (rule 6) sched_run.c's (docs/architecture.md).
 *
 * There is one stack. A handler that must run now is simply called, nested
 * on top of whatever is running: the C call stack is the scheduler's stack
 * of frames. A task is on it at most once (rule 4), so its frame lives in
 * its control block (sched_internal.h): the frame below, the priority to
 * restore, the sender. sched.current is the top frame's task and
 * sched.running_prio the level a send must reach to run at once (rule 1):
 * a frame push and pop are a handful of stores, and the handler's result,
 * payload and port are the only things a dispatch keeps across the call.
 *
 * Threads (MOTET_THREADS, thread.c) add contexts with stacks of their own;
 * this stack is then one context among them, K, and `sched` describes K's
 * frames even while a thread runs. A handler only ever runs on K. With
 * threads compiled out their hooks are empty inline functions.
 */
#include "dispatch_rules.h"
#include "log_ring.h"
#include "mem_internal.h"
#include "motet/log.h"
#include "motet/mem.h"
#include "motet/port.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "thread_internal.h"

sched_state_t sched;

/* ---- frames ---- */

/* What a frame pop leaves to do when t is not simply initialised and idle
 * again: the end of its INIT (rule 7 releases what was held for it), a kill
 * asked for while it ran, or a gate that must stay closed (frozen, bound to
 * a thread); irq off, as on return. */
static MT_NOINLINE void frame_pop_rare(task_t *t)
{
    hold_end_at_pop(t);
    if (t->flags & TASK_KILL_PENDING) {
        sched.kill_on_pop(t); /* task.c; irq off again on return */
        return;
    }
    t->gate = task_gate(t);
}

/* Pop t's frame, the top one, and reopen its gate if t is simply idle
 * again, as its gate says (GATE_STACKED: it was open at the push and no
 * change of flags has closed it since); false leaves the rest to
 * frame_pop_rare(). `keep_level`: a frame pushed for a message taken off
 * the queue or the interrupt slot, whose level is the one it restores
 * (taken_push_irq_off()) and still the running one (every frame above it
 * has restored what it found): the store is left out. Irq off: a handler
 * run at an interrupt's exit could otherwise kill t between the pop and
 * the reopening of its gate, or see its flags half written. */
static MT_INLINE bool frame_pop_plain_irq_off(task_t *t, bool keep_level)
{
    sched.current = t->below;
    MT_DEBUG_ASSERT(!keep_level || (sched.running_prio == t->prio && t->below_prio == t->prio));
    if (!keep_level) sched.running_prio = t->below_prio;
    return gate_reopen_at_pop(t);
}

/* Pop t's frame, the top one, and finish what came with it; irq off.
 * `keep_level` as for frame_pop_plain_irq_off(). */
static MT_INLINE void frame_pop_irq_off(task_t *t, bool keep_level)
{
    if (!frame_pop_plain_irq_off(t, keep_level)) frame_pop_rare(t);
}

/* Interrupts off for a frame's pop: their state in *s, or none (s NULL)
 * for a caller that enabled them itself. */
static MT_INLINE void lock_for_pop(port_irq_state_t *s)
{
    if (s)
        *s = port_irq_save();
    else
        port_irq_disable();
}

/* What follows a handler's return: its END logged and a heap payload it
 * left freed, then interrupts off (lock_for_pop()) for the caller's pop of
 * the frame. The END carries the handler's result (log_drain() gives a failure
 * back as its ERROR) and no port (the drain has it from the START); it comes
 * before the free of a payload the handler left, and otherwise in the pop's
 * critical section. `top` is the task, the top frame again: every frame
 * above it has returned. Callers that keep nothing else across the handler
 * pass sched.current, found again rather than kept across the call; the
 * interrupt slot's exit, which keeps a call-saved register anyway, passes
 * the task it ran. A caller whose message came with no heap payload says
 * so (`bare`): the frame then holds none (an idle task's is NULL, and only
 * a send with one sets it), and nothing is tested. Returns top. */
static MT_INLINE task_t *handler_returned_lock(task_t *top, mt_err_t result, port_irq_state_t *s,
                                               bool bare)
{
    if (!bare && top->payload) {
        log_event_inline(EV_END, top->pid, (uint16_t) result);
        send_drop_payload(top);
        lock_for_pop(s);
    } else {
        lock_for_pop(s);
        log_event_inline_irq_off(EV_END, top->pid, (uint16_t) result);
    }
    return top;
}

/* Run the handler of t, whose frame was just pushed; free a heap payload
 * it did not take; pop the frame, and return with interrupts still off
 * for the pop, their state in *s. `may_open`: the caller may run a task's
 * INIT (frame_run(), the one that does); an INIT that failed then ends its
 * task at this pop (task_init_failed_irq_off()), decided here, beside the
 * END that logs the result, and not in the pop, which every dispatch
 * makes. `killed`, unless NULL, says whether a kill asked for while t ran
 * ended it at the pop (frame_pop_rare()). */
static MT_INLINE mt_err_t frame_run_held(task_t *t, mt_port_t port, void *data, uint16_t len,
                                         bool may_open, bool *killed, port_irq_state_t *s)
{
    mt_err_t result = t->handler(t->state, port, data, len);
    task_t *top = handler_returned_lock(sched.current, result, s, false);
    if (may_open && result != MT_OK && (top->flags & TASK_INIT_RUNNING))
        task_init_failed_irq_off(top, result);
    if (killed) *killed = (top->flags & TASK_KILL_PENDING) != 0;
    frame_pop_irq_off(top, false);
    return result;
}

/* frame_run_held() with the interrupt state restored after the pop: the
 * general run, the only one that runs an INIT (may_open). */
mt_err_t frame_run(task_t *t, mt_port_t port, void *data, uint16_t len)
{
    port_irq_state_t s;
    mt_err_t result = frame_run_held(t, port, data, len, true, NULL, &s);
    port_irq_restore(s);
    return result;
}

/* frame_run_held() and the drain after it, entered under the pop's lock,
 * so that the heap way's send passes on by a tail call as the others do
 * (dispatch_run()). */
mt_err_t dispatch_run_payload(task_t *t, mt_port_t port, void *data, uint16_t len)
{
    port_irq_state_t s;
    frame_run_held(t, port, data, len, false, NULL, &s); /* an open gate's: initialised */
    return drain_above_held(sched.running_prio, s);
}

bool task_on_stack(const task_t *t)
{
    for (const task_t *f = sched.current; f->below; f = f->below)
        if (f == t) return true;
    return false;
}

/* dispatch_run()'s end when its task is not simply idle again. The drain
 * is entered without drain_above_held()'s test: its own first step makes
 * the same one, and this way is rare. */
static MT_NOINLINE mt_err_t dispatch_end_rare(task_t *t, port_irq_state_t s)
{
    frame_pop_rare(t);
    return dispatch_drain(sched.running_prio, s);
}

/* frame_run() for a frame no heap payload comes with, ending in tail
 * calls: nothing of the send is live across the handler, so the fast path
 * saves no registers. The sender logged the RUN with the frame's push. */
mt_err_t dispatch_run(task_t *t, mt_port_t port, void *data, uint16_t len)
{
    mt_err_t result = t->handler(t->state, port, data, len);
    task_t *top = sched.current;
    port_irq_state_t s = port_irq_save();
    /* As in frame_run(), in the pop's critical section. */
    log_event_inline_irq_off(EV_END, top->pid, (uint16_t) result);
    if (!frame_pop_plain_irq_off(top, false)) return dispatch_end_rare(top, s);
    return drain_above_held(sched.running_prio, s);
}

/* Pop the frame pushed for t, whose handler did not run after all. */
void frame_cancel(task_t *t)
{
    port_irq_state_t s = port_irq_save();
    t->flags &= (uint8_t) ~TASK_INIT_RUNNING;
    frame_pop_irq_off(t, false);
    port_irq_restore(s);
}

/* ---- rule 5: the drain ----
 *
 * While it drains, the running priority never drops back to the floor:
 * from taking a message off the queue to starting its handler, and from
 * one handler's return to taking the next, it stays at the level just
 * taken (the frame pushed for a queued message saves that level as the
 * one to restore, and its pop, finding it still the running one, leaves
 * it). An interrupt that comes in between therefore runs at
 * its exit only what outranks that level, as it would during the handler
 * (rule 3); seeing the floor instead, it would run later messages of the
 * level before the one just taken (rule 2), and drain the rest itself,
 * nested here, for each such interrupt under a steady load: stack and pool
 * without bound. The priority goes back to the floor with interrupts off,
 * once nothing above the floor is left, and they stay off on return. */

/* An expiry's START carries the slot's MSG_TIMER_OWED as it finds it. */
_Static_assert(!MOTET_EVENT_LOG || MSG_TIMER_OWED == LOG_START_EXPIRY,
               "the owed TIMER's flag is the expiry START's high byte");

/* Push the frame of message m's task t, m just taken off the queue or,
 * `slot`, out of the interrupt slot (post.c), whose sender is none (a
 * constant here), at t's level; irq off. The frame restores t's level, not
 * the floor's: the pop may enable interrupts (a kill finishing: FINAL),
 * and one taken then must run at its exit only what outranks t, as during
 * the handler, not nest a second drain of the same floor inside this one.
 * The slot's block is free once its START is written: its flag of an
 * owed TIMER is the START's high byte (LOG_START_EXPIRY: the START stands
 * for its timer's TIMER too). Returns m's port, read while the slot's
 * block is still the message's. */
static MT_INLINE mt_port_t taken_push_irq_off(task_t *t, msg_t *m, bool slot)
{
    mt_port_t port = m->port;
    sched.running_prio = t->prio;
    frame_push(t, slot ? MT_PID_NONE : m->src);
    uint8_t owed = slot ? m->flags & MSG_TIMER_OWED : 0u;
    if (slot) m->flags = 0;
    log_event_inline_irq_off(EV_START, t->pid, (uint16_t) (owed << 8 | port));
    return port;
}

/* Run the handler of message m's task t (see taken_push_irq_off()), m
 * without a heap payload (the slot's never has one), so that the frame
 * holds none after the handler either; irq off on entry and on return.
 * The slot's exit keeps t across the handler (in the call-saved register
 * its caller saves anyway, so that the frame's stores address t
 * directly); the drain finds it again as the top frame. */
static MT_INLINE void run_taken_held_off(task_t *t, msg_t *m, bool slot)
{
    mt_port_t port = taken_push_irq_off(t, m, slot);
    port_irq_enable();
    /* One lock for the pop, the block and the next message (interrupts
     * were enabled above: no state to keep). */
    mt_err_t result = t->handler(t->state, port, slot ? NULL : m->data, slot ? 0 : m->len);
    task_t *top = handler_returned_lock(slot ? t : sched.current, result, NULL, true);
    frame_pop_irq_off(top, true);
}

/* The flags that make a queued message more than a plain one: held for
 * rule 7 or the INIT that ends the hold, a heap payload the frame takes
 * over, a block that is not the pool's (a timer's own, the interrupt
 * slot's). A plain message, most of them, is run with one test of its
 * flags; the slot's block, as the slot's (run_slot_held_off()); any other,
 * by drain_rare(). */
#define MSG_NOT_PLAIN (MSG_HELD | MSG_HEAP | MSG_OPENS | MSG_OWN_BLOCK)

/* The drain's step at `floor` for a message with any of MSG_NOT_PLAIN, just
 * taken off the queue, not the slot's block; irq off on entry and on
 * return. One sent to t before its INIT was handled goes to t's held list
 * if t is still not initialised (rule 7): false, it did not run. Held, it
 * is no claim of K's any more: a ready thread that the step's look left
 * waiting behind it, as the queue's head, runs now if it is above the
 * floor and not below the new head. Otherwise its heap payload becomes
 * the handler's frame's, which the handler may take (the block no longer
 * frees it), a queued INIT ends rule 7's hold when its handler returns
 * (frame_run()'s pop), and the block goes back where it came from
 * (sched_msg_free()). Between the pop and the lock taken again the level
 * stays t's (the frame restored it): an interrupt's exit there runs only
 * what outranks t, as during the handler. */
static MT_NOINLINE bool drain_rare(msg_t *m, mt_prio_t floor)
{
    task_t *t = m->task;
    if ((m->flags & MSG_HELD) && !task_takes_messages(t)) { /* rule 7: still held */
        queue_hold(t, m);
        if (thread_ready_hint()) thread_k_yield(floor);
        return false;
    }
    if (m->flags & MSG_HEAP) t->payload = m->data;
    if (m->flags & MSG_OPENS) t->flags |= TASK_INIT_RUNNING;
    mt_port_t port = taken_push_irq_off(t, m, false);
    port_irq_enable();
    /* The general run: the payload freed unless taken, the frame popped
     * (to t's level, as in the drain), interrupts on again. */
    (void) frame_run(t, port, m->data, m->len);
    m->flags &= (uint8_t) ~MSG_HEAP; /* the frame's, freed or taken by now */
    sched_msg_free(m);
    port_irq_disable(); /* off again for the next message */
    return true;
}

/* Run the interrupt slot's message (post.c), taken out of it: one that
 * outranks the interrupted frame and everything queued at an interrupt's
 * exit, or one queued in the slot's block when the drain takes it off
 * its level (bare, from no sender: the drain step's test of its block).
 * Its block is free again before interrupts are on
 * (the handler's arguments are in registers by then), so that an
 * interrupt during the handler posts through the slot too. Out of line:
 * the stack analysis tells the exit's own path on a thread's stack from
 * the handler it runs here only on the kernel stack (kernel.annot); and
 * one copy serves the queued slot message's drain and rule 3's exit (isr_exit.c). */
MT_NOINLINE void run_slot_held_off(void)
{
    msg_t *m = &sched.isr_msg;
    run_taken_held_off(m->task, m, true);
}

/* One step of the drain: threads that outrank the frame and the head (and
 * a handler a thread handed to K: that thread is blocked), then the oldest
 * message of the highest level above floor that may run (rule 7 holds the
 * others on the way); false once no level above floor holds one. In line
 * in both loops below: the one every dispatch takes keeps no count, so
 * that it holds nothing but the floor across the handlers it runs. */
static MT_INLINE bool drain_step_held_off(mt_prio_t floor)
{
    if (thread_ready_hint()) thread_k_yield(floor);
    msg_t *m;
    for (;;) {
        mt_prio_t top = queue_top_prio();
        if (!prio_outranks(top, floor)) return false;
        m = queue_pop_top(top);
        if (!(m->flags & MSG_NOT_PLAIN)) break;
        if (m == &sched.isr_msg) { /* an interrupt's, queued in the slot's block */
            run_slot_held_off();
            return true;
        }
        if (drain_rare(m, floor)) return true;
    }
    run_taken_held_off(m->task, m, false);
    queue_put_block_irq_off(m);
    return true;
}

void drain_held_off(mt_prio_t floor)
{
    while (drain_step_held_off(floor)) {
    }
    sched.running_prio = floor;
}

/* Where a call saves a register pair anyway (port.h, PORT_CALL_SAVES_PAIR),
 * a compiler may put this in line: dispatch_run() then keeps s in the
 * register its handler's call saved. Elsewhere out of line, so that
 * dispatch_run()'s way that finds nothing to drain, most of them, saves
 * no register for s. */
#ifdef PORT_CALL_SAVES_PAIR
#define DRAIN_ENTRY
#else
#define DRAIN_ENTRY MT_NOINLINE
#endif
DRAIN_ENTRY mt_err_t dispatch_drain(mt_prio_t floor, port_irq_state_t s)
{
    drain_held_off(floor);
    port_irq_restore(s);
    return MT_OK;
}

unsigned sched_run_pending(void)
{
    /* In a thread: whatever outranks it has run already. */
    if (MOTET_THREADS && thread_running()) return 0;
    port_irq_state_t s = port_irq_save();
    mt_prio_t floor = sched.running_prio;
    unsigned ran = 0;
    while (drain_step_held_off(floor)) ran++;
    sched.running_prio = floor;
    port_irq_restore(s);
    return ran;
}

/* ---- the kernel's own call of a handler ---- */

mt_err_t sched_task_call(mt_pid_t pid, mt_port_t port, void *block, uint16_t len)
{
    /* Found and pushed in one step: once on the stack, a kill waits for
     * its pop; before, a handler may have ended it and freed its block. */
    port_irq_state_t s = port_irq_save();
    task_t *t = sched_find_task(pid);
    if (!t) {
        port_irq_restore(s);
        mem_release(block);
        return MT_ERR_NO_TASK;
    }
    frame_push(t, sched_running_pid());
    /* A frozen task runs under its caller's priority, whatever its own: see
     * task_kill_end() in task.c. */
    if (sched.running_prio < t->below_prio) sched.running_prio = t->below_prio;
    t->payload = len ? block : NULL;
    port_irq_restore(s);
    if (block && !len) mem_release(block);
    log_event(EV_START, t->pid, port);
    bool killed;
    mt_err_t result = frame_run_held(t, port, len ? block : NULL, len, false, &killed, &s);
    /* A kill asked for while it ran ended it at the pop: told by its
     * flags, not by the table, where a task given its pid since (by a
     * handler run at an interrupt's exit during FINAL) may hold its freed
     * control block. Nothing else can have ended it: a task on the stack is
     * killed at its pop, and from the pop to here interrupts stay off. The
     * drain is entered under the pop's lock, as dispatch_run()'s is; a kill
     * in it, after the handler returned, leaves the caller told MT_OK (the
     * table's probe after a restore, before, told one by an interrupt's
     * handler there). */
    if (killed) result = MT_ERR_NO_TASK;
    (void) drain_above_held(sched.running_prio, s);
    return result;
}

#if MOTET_THREADS

/* K's preemption point is a drain: beside dispatch_drain(), which a
 * compiler may put in line here (arm-none-eabi-gcc does). */
void sched_k_preempt(void)
{
    (void) drain_above(sched.running_prio);
}

#endif /* MOTET_THREADS */
