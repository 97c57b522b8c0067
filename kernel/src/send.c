/* SPDX-License-Identifier: MIT */
/*
 * Sending: how a task's message finds its way to a handler by the
 * dispatch rules, and who owns its payload when (docs/architecture.md,
 * "The fast path and the general path"). Interrupts and timers post
 * through post.c, which ends in this file's general path.
 *
 * The fast paths are rule 1's plain case, a handler sending to an idle,
 * initialised local task at least as important: one byte of its control
 * block, its gate, against the running priority (dispatch_rules.h,
 * gate_runs_now(): rules 1, 4 and 7 in one comparison), then a
 * frame pushed and the handler called (dispatch_run()), no message built;
 * and a send that must wait, with no payload or a small borrowed one,
 * taking a pool block (queue_small_irq_off()). Everything else takes the
 * general path, sched_deliver(), which applies the rules one by one.
 *
 * A send looks its destination up and tests it with interrupts off: a
 * handler run at an interrupt's exit may kill a task and free its control
 * block, so the lookup, the test and the frame push (or the queueing) are
 * one critical section. Once pushed, a kill waits; once queued, a kill
 * purges the message.
 */
#include <string.h>

#include "bus_internal.h"
#include "debug_assert.h"
#include "dispatch_rules.h"
#include "log_ring.h"
#include "mem_internal.h"
#include "motet/bus.h"
#include "motet/log.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/port.h"
#include "motet/timesync.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "thread_internal.h"
#include "timesync_internal.h"

/* ---- payloads ---- */

/* A heap payload the running handler `from` sends becomes the kernel's, in
 * line, for a send that hands it over under the lock of its gate test: the
 * payload `from` was given, of at least len bytes (its frame lets go of
 * it), or a block the O(1) check finds `from`'s (mem_pass_irq_off(), its
 * owner only: a length check costs the SSL chain more than its target,
 * docs/architecture.md). False changes nothing: the general path
 * (payload_to_kernel()) decides and logs. Irq off; take.c has the
 * payload's other changes of owner. */
static MT_INLINE bool payload_lend_irq_off(void *data, uint16_t len, task_t *from)
{
    return (from->payload == data && mem_holds(data, len) && (from->payload = NULL, true)) ||
           mem_pass_irq_off(data, 0, from->pid, MEM_OWNER_KERNEL);
}

/* Give the message block m its own copy of a borrowed payload (in the block
 * when it fits), or take a heap one for the kernel (payload_to_kernel(),
 * `from` and `sender` its); an empty heap one, enqueue_as() frees. */
static mt_err_t own_payload(msg_t *m, void *data, uint16_t len, uint8_t flags, task_t *from,
                            mt_pid_t sender)
{
    m->len = len;
    m->data = NULL;
    if (send_hands_over(flags)) {
        mt_err_t err = payload_to_kernel(data, len, from, sender);
        if (err) return err;
        if (!len) return MT_OK;
        m->data = data;
        m->flags |= MSG_HEAP;
        return MT_OK;
    }
    return len ? sched_msg_copy_payload(m, data, len) : MT_OK;
}

/* ---- queueing ---- */

/* One INIT per task, whichever way it comes: sched_task_init(), a send or
 * post to PORT_INIT, a task of another module's, the application
 * manager's (sched_post_block()). The first to a task not
 * yet initialised claims it (TASK_INIT_SENT) where the send can no longer
 * fail; a later one, even while the first still waits, is refused, as its
 * data could not be given without a second PORT_INIT; so is one to a task
 * initialised (or bound to a thread, which has no INIT), or frozen by a
 * migration (its INITIALISED flag cleared, its INIT long sent). True if
 * refused; irq off. The fast paths never deliver to PORT_INIT
 * (port_fast(), and a route to it is never resolved, send_route()): every
 * INIT comes here. */
static bool init_refused_irq_off(task_t *t, mt_port_t port)
{
    if (port != PORT_INIT) return false;
    if (t->flags & (TASK_INIT_SENT | TASK_INITIALISED | TASK_THREAD)) return true;
    t->flags |= TASK_INIT_SENT;
    return false;
}

/* Queue m, addressed and its payload owned, for t (rule 2), or hold it
 * for rule 7 or a frozen task; or refuse it, untouched, with MT_ERR_STATE
 * for an INIT refused. Irq off, t found for m->dst under the same lock.
 * Left to the compiler: in line in the core (enqueue_as() its one
 * caller), out of line with the application manager's second (54 B less
 * on the ATmega128's full kernel than in line, dispatch cycles alike). */
static mt_err_t place_irq_off(task_t *t, msg_t *m)
{
    if (init_refused_irq_off(t, m->port)) return MT_ERR_STATE;
    bool waits = messages_wait_for(t);
    if (waits && (t->flags & TASK_FROZEN) && m->port != PORT_INIT) {
        queue_hold(t, m); /* until the task thaws or moves: in no queue */
    } else {
        /* rule 7: the INIT's handler ends the hold, the rest wait in their place */
        if (waits) m->flags |= m->port == PORT_INIT ? MSG_OPENS : MSG_HELD;
        queue_after_slot(t, m);
    }
    return MT_OK;
}

/* Queue a message from `src` (the running task, or a task of another
 * module, over the bus) for local task t, looked up for pid. */
mt_err_t enqueue_as(task_t *t, mt_pid_t src, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                    uint8_t flags, bool from_isr)
{
    /* The migrator's reserve (migration comes with the bus): try again later. */
    if (MOTET_BUS && !from_isr && (t->flags & TASK_FROZEN) &&
        !sched_msg_spare_more_than(MIG_RESERVE))
        return log_error(MT_ERR_QUEUE_FULL);
    msg_t *m = sched_msg_alloc(); /* logs an empty pool */
    if (!m) return MT_ERR_QUEUE_FULL;
    m->dst = pid;
    m->port = port;
    m->src = src;
    m->flags = (uint8_t) ((from_isr ? MSG_FROM_ISR : 0u) | (flags & MSG_CAST));
    task_t *from = from_isr ? NULL : sched_sending_frame(src);
    /* The payload the sender's handler was given, passed on untaken: a
     * refusal gives it back to the frame, which frees it at the handler's
     * return, as if it had not been sent (its owner stays the kernel). */
    bool frames_payload = from && data && from->payload == data;
    mt_err_t err = own_payload(m, data, len, flags, from, src);
    if (err) { /* the memory manager has logged why; m holds no payload */
        sched_msg_free(m);
        return err;
    }
    port_irq_state_t s = port_irq_save();
    /* A task-context send's t was looked up with interrupts on: killed since? */
    mt_err_t refused = MT_ERR_NO_TASK;
    if (from_isr || sched_find_task(m->dst) == t) refused = place_irq_off(t, m);
    if (refused) {
        port_irq_restore(s);
        if (send_hands_over(flags) && data) { /* the sender keeps it on error */
            if (frames_payload)
                from->payload = data;
            else
                mem_set_owner(data, m->src);
            m->flags &= (uint8_t) ~MSG_HEAP;
        }
        sched_msg_free(m);
        return log_error(refused);
    }
    port_irq_restore(s);
    /* The send can no longer fail: an empty hand-over is the kernel's to
     * free, out of the lock (a free may walk the heap). */
    if (!len && send_hands_over(flags)) mem_release(data);
    return MT_OK;
}

static mt_err_t enqueue(task_t *t, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                        uint8_t flags, bool from_isr)
{
    return enqueue_as(t, from_isr ? MT_PID_NONE : sched_current_pid(), pid, port, data, len, flags,
                      from_isr);
}

/* The queued fast path: a send from the kernel stack to t, looked up under
 * the caller's lock, that must wait (t on the stack, less important, or its
 * gate closed), with no payload or a small borrowed one (its pointer
 * checked by the caller, fast_send()); false sends it the general way,
 * which also logs why a block could not be had. */
static MT_INLINE bool queue_small_irq_off(task_t *t, mt_port_t port, void *data, uint16_t len,
                                          mt_pid_t src)
{
    if (!task_gate_opened(t) || len > MSG_INLINE_BYTES) return false;
    msg_t *m = queue_take_block_irq_off();
    if (!m) return false;
    if (len) {
        queue_copy_into_block(m, data, len); /* a call: bytes, the rarer case */
    } else {
        m->data = NULL;
        m->len = 0;
    }
    address_irq_off(m, t, port, src, 0);
    queue_push(m, t);
    /* It cannot start before the lock goes: t is below the sender or less
     * important, and an interrupt's exit runs only what outranks the sender. */
    log_event_inline_irq_off(EV_SEND, src, (uint16_t) (t->pid << 8 | port));
    return true;
}

/* ---- running at once, the general way ---- */

/* Rules 1 and 4 for a task-context send: able to run now, and at least as
 * important as the running handler (or thread). INIT opens an
 * uninitialised task that is otherwise idle. */
static bool can_run_now(const task_t *t, mt_port_t port)
{
    if ((t->flags & (TASK_FROZEN | TASK_KILL_PENDING | TASK_THREAD)) || task_on_stack(t))
        return false;
    if (!task_takes_messages(t) && port != PORT_INIT) return false; /* rule 7 */
    return task_runs_at_once(t);
}

/* Run t for (pid, port) now on the kernel stack: with interrupts off, t
 * checked to be still pid's and able to run, its frame pushed; then a heap
 * payload taken over for the handler (on the stack, the receiver cannot be
 * killed under it) and the handler run. A task killed meanwhile gets
 * nothing (MT_ERR_NO_TASK, the sender keeps its payload); one that cannot
 * run any more gets the message queued. */
static mt_err_t run_checked(task_t *t, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                            uint8_t flags, mt_pid_t sender)
{
    port_irq_state_t s = port_irq_save();
    if (sched_find_task(pid) != t) {
        port_irq_restore(s);
        return log_error(MT_ERR_NO_TASK);
    }
    if (!can_run_now(t, port)) {
        port_irq_restore(s);
        return enqueue_as(t, sender, pid, port, data, len, flags, false);
    }
    if (init_refused_irq_off(t, port)) {
        port_irq_restore(s);
        return log_error(MT_ERR_STATE);
    }
    task_t *from = sched_sending_frame(sender);
    frame_push(t, sender);
    bool opens = port == PORT_INIT && !task_takes_messages(t);
    if (opens) t->flags |= TASK_INIT_RUNNING;
    port_irq_restore(s);
    if (send_hands_over(flags)) {
        mt_err_t err = payload_to_kernel(data, len, from, sender);
        if (err) {
            frame_cancel(t);
            if (opens) { /* not given: it may be sent again */
                s = port_irq_save();
                t->flags &= (uint8_t) ~TASK_INIT_SENT;
                port_irq_restore(s);
            }
            return err;
        }
        if (len)
            t->payload = data; /* freed after the handler unless it takes it */
        else
            mem_release(data);
    }
    log_event(EV_START, t->pid, port);
    frame_run(t, port, len ? data : NULL, len);
    return MT_OK;
}

#if MOTET_THREADS
/* A handler a thread must run at once: K runs it for the thread. */
typedef struct k_call {
    task_t *task;
    mt_pid_t pid, sender;
    mt_port_t port;
    uint8_t flags;
    void *data;
    uint16_t len;
    mt_err_t result;
} k_call_t;

static void run_call(void *arg)
{
    k_call_t *c = arg;
    c->result = run_checked(c->task, c->pid, c->port, c->data, c->len, c->flags, c->sender);
}
#endif

static mt_err_t run_now(task_t *t, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                        uint8_t flags)
{
    mt_pid_t sender = sched_current_pid();
#if MOTET_THREADS
    /* A thread's send runs on the kernel stack: the thread is blocked
     * (WAIT_K_CALL) with c in its stack until run_call() has stored the
     * result and returned, so no drain or interrupt exit in the call can
     * hand it the CPU before (thread_call_on_k()). */
    if (thread_running()) {
        k_call_t c = {t, pid, sender, port, flags, data, len, MT_OK};
        thread_call_on_k(run_call, &c);
        return c.result;
    }
#endif
    mt_err_t err = run_checked(t, pid, port, data, len, flags, sender);
    (void) drain_above(sched.running_prio);
    return err;
}

/* ---- the general path: every rule, one by one ---- */

mt_err_t sched_deliver(task_t *t, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                       uint8_t flags, bool from_isr)
{
    /* pid, not t->pid: t was looked up for pid with interrupts on, and may
     * be another task's block by now; run_checked() and enqueue() check it
     * with them off before they act on it. */
    log_event(EV_SEND, from_isr ? MT_PID_NONE : sched_current_pid(), (uint16_t) (pid << 8 | port));
    if (!from_isr && can_run_now(t, port)) return run_now(t, pid, port, data, len, flags);
    mt_err_t err = enqueue(t, pid, port, data, len, flags, from_isr);
    /* A message to a thread may have woken one that outranks the sender. */
    if (MOTET_THREADS && !err && !from_isr && (t->flags & TASK_THREAD)) thread_preempt_point();
    return err;
}

#if MOTET_APPMGR
/* Allocates nothing: the caller had block and payload while it could give up. */
mt_err_t sched_post_block(mt_pid_t src, mt_pid_t pid, mt_port_t port, msg_t *m)
{
    m->dst = pid;
    m->port = port;
    m->src = src;
    m->flags &= MSG_HEAP | MSG_FROM_ISR;
    port_irq_state_t s = port_irq_save();
    task_t *t = sched_find_task(pid);
    /* An interrupt's message waits (rules 2 and 3), its SEND by no task; a
     * task's outranks t, so it waits too (rule 2): the whole delivery. */
    mt_pid_t by = (m->flags & MSG_FROM_ISR) ? MT_PID_NONE : src;
    MT_DEBUG_ASSERT(!t || by == MT_PID_NONE || !can_run_now(t, port));
    mt_err_t err = t ? place_irq_off(t, m) : MT_ERR_NO_TASK;
    if (!err) log_event(EV_SEND, by, (uint16_t) (pid << 8 | port)); /* its lock nests */
    port_irq_restore(s);
    if (err) {
        sched_msg_free(m);
        return log_error(err);
    }
    return MT_OK;
}
#endif

/* The general path's end for a pid that is no virtual one: its local task
 * by the dispatch rules (sched_deliver(), which checks the task found here
 * again with interrupts off), a task of another module, or none; a send to
 * local tasks only says there is none before it looks at the arguments.
 * Multicast deliveries come here, so nothing here leads back to
 * multicast: no recursion for the stack analysis. */
static MT_NOINLINE mt_err_t deliver_general(mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                                            uint8_t flags, uint8_t way)
{
    /* Under the lock: an unlocked probe could miss a live task (a false
     * MT_ERR_NO_TASK, or a local task's message handed to the bus). */
    task_t *t = task_find_locked(pid);
    if (!t && way == GENERAL_LOCAL) return log_error(MT_ERR_NO_TASK);
    mt_err_t err = check_send_args(port, data, len, flags);
    if (err) return log_error(err);
    if (t)
        return sched_deliver(t, pid, port, data, len, flags, way == GENERAL_ISR || port_in_isr());
    /* An interrupt hands nothing to the bus: a remote task is no route. */
    if (way == GENERAL_ISR) return post_no_local_task(pid);
    return send_remote(pid, port, data, len, flags);
}

/* Every send and post to any pid the fast paths leave: the virtual pids
 * (multicast, time sync), then deliver_general(). */
MT_NOINLINE mt_err_t send_general_to(mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                                     uint8_t flags, uint8_t way)
{
    if (flags & (uint8_t) ~SEND_FLAGS) return log_error(MT_ERR_INVALID);
    if (pid == MT_PID_MULTICAST)
        return bus_multicast(port, data, len, flags, way == GENERAL_ISR || port_in_isr());
    if (pid == MT_PID_TIMESYNC) return timesync_send(data, len, flags);
    return deliver_general(pid, port, data, len, flags, way);
}

/* The general path of a send by pid, in the fast paths' arguments. */
static MT_NOINLINE mt_err_t send_to_general(mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                                            uint8_t flags)
{
    return send_general_to(pid, port, data, len, flags, GENERAL_ANY);
}

/* True when the fast paths may consider this send at all: from the kernel
 * stack (not a thread, not an interrupt body), with no flags but those
 * `allowed`, and a payload pointer where there are bytes (tested after the
 * length: a send without payload pays for one test, not two). */
static MT_INLINE bool fast_send(const void *data, uint16_t len, uint8_t flags, uint8_t allowed)
{
    return !(flags & (uint8_t) ~allowed) && (!len || data) && sched_in_kernel_context();
}

/* A send to the local task pid by the general rules: what the fast paths
 * of a send by pid leave, and every delivery of a multicast or a bus frame. */
static MT_NOINLINE mt_err_t send_local_general(mt_pid_t pid, mt_port_t port, void *data,
                                               uint16_t len, uint8_t flags)
{
    return deliver_general(pid, port, data, len, flags, GENERAL_LOCAL);
}

static MT_NOINLINE mt_err_t signal_to_general(mt_pid_t pid, mt_port_t port)
{
    return send_to_general(pid, port, NULL, 0, 0);
}

/* The queued fast path of a send by pid to t, found unable to run at once
 * under the caller's lock (s, put back here), from `src`, the sender: no
 * second lookup; else the general path to any pid (t may have moved away).
 * Out of line (below), so the immediate path saves no registers; a message
 * without payload has its own, and its own general way, in few arguments:
 * none on the stack, and the general way a tail call. */
static MT_INLINE mt_err_t queue_to_unlock(task_t *t, mt_port_t port, void *data, uint16_t len,
                                          port_irq_state_t s, mt_pid_t src, bool local_only)
{
    if (queue_small_irq_off(t, port, data, len, src)) {
        port_irq_restore(s);
        return MT_OK;
    }
    mt_pid_t pid = t->pid; /* read under the lock: a kill may free t after it */
    port_irq_restore(s);
    if (local_only) return send_local_general(pid, port, data, len, 0);
    return len ? send_to_general(pid, port, data, len, 0) : signal_to_general(pid, port);
}

static MT_NOINLINE mt_err_t send_to_waiting(task_t *t, mt_port_t port, void *data, uint16_t len,
                                            port_irq_state_t s, mt_pid_t src)
{
    return queue_to_unlock(t, port, data, len, s, src, false);
}

static MT_NOINLINE mt_err_t signal_to_waiting(task_t *t, mt_port_t port, port_irq_state_t s,
                                              mt_pid_t src)
{
    return queue_to_unlock(t, port, NULL, 0, s, src, false);
}

/* sched_send_local()'s: every delivery of a multicast or a bus frame that
 * waits. Its general way is to local tasks only, so that nothing it does
 * leads back to the multicast and bus paths. */
static MT_NOINLINE mt_err_t send_local_waiting(task_t *t, mt_port_t port, void *data, uint16_t len,
                                               port_irq_state_t s, mt_pid_t src)
{
    return queue_to_unlock(t, port, data, len, s, src, true);
}

/* A send by pid: the fast paths when pid's task sits in its home slot (a
 * virtual pid never does, so a hit there is a local task; a send to
 * MT_PID_NONE may find task_none in an empty slot, whose closed gate and
 * flags send it the general way, as they do a route's), else the general
 * path, for any destination or (`local_only`) local ones; `bare`:
 * sched_signal_to(), no payload and no flags. */
static MT_INLINE mt_err_t send_by_pid(mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                                      uint8_t flags, bool local_only, bool bare)
{
    if (fast_send(data, len, flags, 0) && port_fast(port)) {
        mt_prio_t running = sched.running_prio;
        task_t *const *slot = &sched.tasks[TASK_SLOT(pid)];
        port_irq_state_t s = port_irq_save();
        task_t *t = *slot; /* task_none if empty: its pid is MT_PID_NONE */
        if (t->pid == pid) {
            /* The top frame and the sender's pid are read under the lock,
             * by the way that needs them: a send that waits loads the pid
             * once, for its queue entry. */
            if (gate_runs_at_once(t, running)) {
                task_t *self = sched.current;
                mt_pid_t sender = self->pid;
                frame_push_on(t, self, running, sender);
                log_event_inline_irq_off(EV_RUN, pid, (uint16_t) (sender << 8 | port));
                port_irq_restore(s);
                return dispatch_run(t, port, data, len);
            }
            mt_pid_t src = sched.current->pid;
            if (local_only) return send_local_waiting(t, port, data, len, s, src);
            return len ? send_to_waiting(t, port, data, len, s, src)
                       : signal_to_waiting(t, port, s, src);
        }
        port_irq_restore(s);
    }
    if (local_only) return send_local_general(pid, port, data, len, flags);
    /* A signal's general way in its two arguments: no stack slot for a
     * fifth, which its immediate path would otherwise set up too. */
    if (bare) return signal_to_general(pid, port);
    return send_to_general(pid, port, data, len, flags);
}

mt_err_t sched_send_to(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags)
{
    return send_by_pid(pid, port, data, len, flags, false, false);
}

mt_err_t sched_signal_to(mt_pid_t pid, mt_port_t port)
{
    return send_by_pid(pid, port, NULL, 0, 0, false, true);
}

mt_err_t sched_send_local(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags)
{
    return send_by_pid(pid, port, data, len, flags, true, false);
}

/* A send along route r of the running task, by the general rules: the
 * route resolved for the fast path (under the lock: a kill in between must
 * not leave the route a freed block for good; a virtual pid resolves to
 * none), then the send by its pid. A route to PORT_INIT stays unresolved,
 * task_none's closed gate sending it this way every time: an INIT is the
 * general path's to claim or refuse (init_refused_irq_off()). */
static mt_err_t send_route(out_route_t *r, void *data, uint16_t len, uint8_t flags)
{
    port_irq_state_t s = port_irq_save();
    if (r->local == &task_none && r->port != PORT_INIT) {
        task_t *t = sched_find_task(r->pid);
        if (t) r->local = t;
    }
    port_irq_restore(s);
    return send_general_to(r->pid, r->port, data, len, flags, GENERAL_ANY);
}

/* sched_send() for everything but the fast paths. */
static MT_NOINLINE mt_err_t send_general(uint8_t out, void *data, uint16_t len, uint8_t flags)
{
    task_t *self = MOTET_THREADS && thread_running() ? thread_running_task() : sched.current;
    if (!self || self == &task_none) return log_error(MT_ERR_STATE);
    if (out >= self->n_routes) return log_error(MT_ERR_NO_PORT);
    return send_route(&self->routes[out], data, len, flags);
}

/* The queued fast paths of sched_send() and sched_signal(): route r's
 * task cannot run at once, no heap payload; under the caller's lock (s,
 * put back here). Out of line like send_to_waiting(), so that the
 * immediate path saves no registers for them.
 *
 * With a payload: the way by pid's body, send_to_waiting(), for a route
 * resolved to a local task (its general way, by the task's pid, is the
 * route's then), so that the payload's copy is in one place. The route's
 * task is read again here: a fifth argument would be passed in a
 * call-saved register (AVR), which sched_send()'s immediate path would
 * then save too. */
static MT_NOINLINE mt_err_t send_waiting(out_route_t *r, void *data, uint16_t len,
                                         port_irq_state_t s)
{
    task_t *t = r->local;
    if (t == &task_none) {
        port_irq_restore(s);
        return send_route(r, data, len, 0);
    }
    return send_to_waiting(t, r->port, data, len, s, sched.current->pid);
}

/* Without: handed t, the route's task as the caller read it under its
 * lock (task_none, never initialised: not resolved, the general way), and
 * src, the sender's pid, which the caller read from the top frame. */
static MT_NOINLINE mt_err_t signal_waiting(port_irq_state_t s, out_route_t *r, task_t *t,
                                           mt_pid_t src)
{
    if (queue_small_irq_off(t, r->port, NULL, 0, src)) {
        port_irq_restore(s);
        return MT_OK;
    }
    port_irq_restore(s);
    return send_route(r, NULL, 0, 0);
}

/* The general way of a heap payload along route r, by a tail call (out of
 * line, so that send_heap_along()'s common case saves no registers for
 * it): it refuses a block that is not the sender's and logs why; the
 * sender keeps it. */
static MT_NOINLINE mt_err_t send_heap_general(out_route_t *r, void *data, uint16_t len)
{
    return send_route(r, data, len, MSG_HEAP);
}

/* A heap payload along route r, not empty, to a task that can run at once,
 * in the common case: the sender's own block or the payload it was given
 * (payload_lend_irq_off()) becomes the kernel's, one check of the block and
 * one owner rewrite, in the critical section of the gate test and before
 * the frame's push, so that nothing is left to undo. The frame holds it for
 * the handler to take (sched_take()); its run, the free of what the handler
 * did not take and the drain are a tail call (dispatch_run_payload()), so
 * that nothing of the send is live across the handler. Everything else goes the general way
 * (send_heap_general()): a task that cannot run at once, a block the O(1)
 * check does not find the sender's. Out of line: the check and the push
 * together take more registers than sched_send_heap()'s tests need. */
static MT_NOINLINE mt_err_t send_heap_along(out_route_t *r, void *data, uint16_t len)
{
    port_irq_state_t s = port_irq_save();
    if (!gate_runs_now(r->local) || !payload_lend_irq_off(data, len, sched.current)) {
        port_irq_restore(s);
        return send_heap_general(r, data, len);
    }
    /* Read again rather than kept across the block's check. */
    task_t *self = sched.current;
    task_t *t = r->local;
    frame_push_on(t, self, sched.running_prio, self->pid);
    t->payload = data;
    log_event_inline_irq_off(EV_RUN, t->pid, (uint16_t) (self->pid << 8 | r->port));
    mt_port_t port = r->port;
    port_irq_restore(s);
    return dispatch_run_payload(t, port, data, len);
}

/* sched_send_borrowed()'s fast path along route r of the running task
 * `self`, in line in it (`bare` in sched_signal()): the send and its
 * arguments only, so that nothing but the top frame needs a saved register.
 * A route's control block is a local task's or task_none, whose gate never
 * opens, and its port was checked when the route was made: the fast path
 * trusts both.
 *
 * A signal reads its sender's pid before the lock, where the route's bound
 * has the frame in a pointer register already, and hands it to its waiting
 * path too (an interrupt gives the top frame back as it found it); a send
 * with a payload's arguments reads it under the lock, having no register
 * to keep it in across (AVR: 1 cycle more, measured). The frame is read
 * again under the lock: kept from before it, it takes a pointer register
 * pair that the AVR saves (9 cycles more, measured). */
static MT_INLINE mt_err_t send_along(const task_t *self, out_route_t *r, void *data, uint16_t len,
                                     bool bare)
{
    mt_pid_t src = self->pid;
    port_irq_state_t s = port_irq_save();
    task_t *t = r->local;
    if (gate_runs_now(t)) {
        task_t *below = sched.current;
        if (!bare) src = below->pid;
        frame_push_on(t, below, sched.running_prio, src);
        log_event_inline_irq_off(EV_RUN, t->pid, (uint16_t) (src << 8 | r->port));
        port_irq_restore(s);
        return dispatch_run(t, r->port, data, len);
    }
    return bare ? signal_waiting(s, r, t, src) : send_waiting(r, data, len, s);
}

/* sched_send_borrowed() and sched_signal(): the fast path along route `out`
 * of the running handler, else the general path. In line in both, so that
 * a signal's constant arguments fold its payload's tests away. */
static MT_INLINE mt_err_t send_out(uint8_t out, void *data, uint16_t len, uint8_t flags, bool bare)
{
    task_t *self = sched.current; /* task_none, of no routes, if no handler runs */
    if (fast_send(data, len, flags, 0) && out < self->n_routes)
        return send_along(self, &self->routes[out], data, len, bare);
    return send_general(out, data, len, flags);
}

mt_err_t sched_send_borrowed(uint8_t out, void *data, uint16_t len, uint8_t flags)
{
    return send_out(out, data, len, flags, false);
}

/* A heap payload's send: its fast path along route `out` when MSG_HEAP is
 * its only flag and there are bytes, else the general path (which refuses
 * MSG_HEAP in a kernel without heap payloads, logged). Apart from
 * sched_send_borrowed(), so that this case leaves before the borrowed
 * fast path's register saves, and that one tests no heap flag. */
mt_err_t sched_send_heap(uint8_t out, void *data, uint16_t len, uint8_t flags)
{
    task_t *self = sched.current; /* task_none, of no routes, if no handler runs */
    if (MOTET_HEAP_PAYLOADS && flags == MSG_HEAP && len && fast_send(data, len, 0, 0) &&
        out < self->n_routes)
        return send_heap_along(&self->routes[out], data, len);
    return send_general(out, data, len, flags);
}

mt_err_t sched_signal(uint8_t out)
{
    return send_out(out, NULL, 0, 0, true);
}
