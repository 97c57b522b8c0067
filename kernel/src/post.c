/* SPDX-License-Identifier: MIT */
/*
 * Posting from interrupts and timers: an interrupt's message always waits
 * (rules 2 and 3), in a pool block or the slot's block appended to its
 * level, or in the interrupt slot (docs/architecture.md, "Interrupts,
 * timers and threads"): a bare post to a task above the interrupted code
 * and all that is queued waits in sched.isr_msg and the exit runs it
 * first; a message queued meanwhile sends it into the queue first
 * (send_isr_slot_queue()), where it is the oldest of its level. A timer's
 * expiry travels in the timer's own block. What these ways cannot take
 * (payloads, virtual pids, a task not initialised, an empty pool) goes
 * send.c's general path.
 */
#include "dispatch_rules.h"
#include "log_ring.h"
#include "motet/log.h"
#include "motet/port.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "thread_internal.h"

/* Whether the slot's block is free; irq off. */
static MT_INLINE bool isr_slot_free(void)
{
    return !sched.isr_msg.flags;
}

/* Whether a bare message from an interrupt body to the initialised task t
 * may wait in the slot to run first at the exit: t's gate is open (idle,
 * not frozen, not bound to a thread) above the interrupted frame and above
 * everything queued, the slot's block is free, and no thread was
 * interrupted (its policy, not the exit's drain, decides what runs then);
 * irq off. The gate first: a post to the running task, or below it,
 * fails after that one test. */
static MT_INLINE bool isr_slot_fits(const task_t *t)
{
    return isr_outranks(t, sched.running_prio) && port_in_isr() &&
           isr_outranks(t, queue_top_prio()) && isr_slot_free() &&
           !(MOTET_THREADS && thread_running());
}

/* Leave t's bare message for `port` in the slot, to run at the exit
 * (MSG_IN_SLOT); `timer_owed` is MSG_TIMER_OWED for a task timer's expiry,
 * else 0; irq off. Its payload and sender stay as sched_init() cleared
 * them: none, MT_PID_NONE. The slot's run passes those on as constants;
 * only a freeze's copy into a pool block and a migration's forward read
 * the fields. */
static MT_INLINE void isr_slot_fill(task_t *t, mt_port_t port, uint8_t timer_owed)
{
    msg_t *m = &sched.isr_msg;
    m->task = t;
    m->port = port;
    m->flags = MSG_FROM_ISR | MSG_OWN_BLOCK | MSG_IN_SLOT | timer_owed;
}

/* The end of a post that filled the slot: its SEND record, the caller's
 * lock given back; MT_OK. */
static MT_INLINE mt_err_t isr_slot_filled(mt_pid_t pid, mt_port_t port, port_irq_state_t s)
{
    log_event_inline_irq_off(EV_SEND, MT_PID_NONE, (uint16_t) (pid << 8 | port));
    port_irq_restore(s);
    return MT_OK;
}

/* Queue m for t, or put it in the mailbox of the thread bound to t; irq
 * off. Out of line: the one copy of the push for the slot's message
 * queued at the exit and the messages queued after it. */
static MT_NOINLINE void queue_for(task_t *t, msg_t *m)
{
    if (MOTET_THREADS && (t->flags & TASK_THREAD))
        thread_mail_push((thread_t *) t->state, m);
    else
        queue_push(m, t);
}

/* A task timer's expiry is logged with its message's START when that
 * message runs first at the interrupt's exit from the slot: one slot
 * stands for the TIMER, the SEND the TIMER stands for and the START
 * (log_ring.h, LOG_START_EXPIRY; dispatch.c), as a RUN stands for a SEND
 * and a START. Until then the TIMER is owed (the slot's MSG_TIMER_OWED),
 * and whatever would log before it, or takes the message out of the slot
 * another way, writes it first: every record written out of line (log.c's
 * log_record(): another expiry's TIMER, a kernel timer's, the general
 * path's SEND, an ERROR), and send_isr_slot_queue(). What an interrupt
 * writes in line once the slot is taken comes after one of those: a bare
 * post's fast ways leave for the general path while the slot's message
 * waits. Irq off. */
#if MOTET_EVENT_LOG
void isr_slot_expiry_log(void)
{
    msg_t *m = &sched.isr_msg;
    if (!(m->flags & MSG_TIMER_OWED)) return;
    m->flags &= (uint8_t) ~MSG_TIMER_OWED;
    log_event_inline_irq_off(EV_TIMER, m->task->pid, (uint16_t) (m->port - PORT_TIMEOUT0));
}

/* The TIMER record of the expiry whose message is `own` (its owner, and
 * its port less PORT_TIMEOUT0), for one that does not run first at the
 * exit: before anything its post logs. */
static MT_NOINLINE void expiry_log(const msg_t *own)
{
    log_event(EV_TIMER, own->dst, (uint16_t) (own->port - PORT_TIMEOUT0));
}
#else
static MT_INLINE void expiry_log(const msg_t *own)
{
    (void) own;
}
#endif

/* The slot's block, holding a message for t, made a queued message:
 * flags that are not a plain message's, so that the drain runs it as the
 * slot's (dispatch.c) and no block goes back to the pool, and t's pid for
 * a purge by pid. The caller appends it to t's level; irq off. One copy
 * for the exit's way and the post that must wait. */
static MT_INLINE msg_t *isr_slot_as_queued(const task_t *t)
{
    msg_t *m = &sched.isr_msg;
    m->flags = MSG_FROM_ISR | MSG_OWN_BLOCK;
    m->dst = t->pid;
    return m;
}

void send_isr_slot_queue(void)
{
    isr_slot_expiry_log(); /* before the records of whatever queues it */
    task_t *t = sched.isr_msg.task;
    queue_for(t, isr_slot_as_queued(t)); /* never a thread's: its gate was open */
}

void queue_after_slot(task_t *t, msg_t *m)
{
    isr_slot_queue_if_waiting();
    queue_for(t, m);
}

/* The SEND record keeps MT_PID_NONE, as for any interrupt's post: its pid
 * is a task of this module's log, and the sender is not one. `mark`: 0, or
 * MSG_CAST. */
static mt_err_t post_from(mt_pid_t src, mt_pid_t pid, mt_port_t port, const void *data,
                          uint16_t len, uint8_t mark)
{
    mt_err_t err = check_send_args(port, data, len, 0);
    if (err) return log_error(err);
    /* The probe without task_find_locked(): the bus's interrupt body calls
     * this, and no kill runs inside an interrupt body to shift the chain. */
    task_t *t = task_find_fast(pid);
    if (!t) return post_no_local_task(pid);
    log_event(EV_SEND, MT_PID_NONE, (uint16_t) (t->pid << 8 | port));
    return enqueue_as(t, src, pid, port, (void *) data, len, mark, true);
}

mt_err_t sched_post_from(mt_pid_t src, mt_pid_t pid, mt_port_t port, const void *data, uint16_t len)
{
    return post_from(src, pid, port, data, len, 0);
}

mt_err_t sched_post_cast(mt_pid_t src, mt_pid_t pid, mt_port_t port, const void *data, uint16_t len)
{
    return post_from(src, pid, port, data, len, MSG_CAST);
}

/* Fill in the message block m, without payload, from an interrupt to the
 * initialised task t; irq off. */
static MT_INLINE void address_bare_irq_off(task_t *t, mt_port_t port, msg_t *m)
{
    m->data = NULL;
    m->len = 0;
    address_irq_off(m, t, port, MT_PID_NONE, MSG_FROM_ISR);
}

void sched_expiry_prepare(msg_t *own, mt_pid_t owner, mt_port_t port)
{
    own->data = NULL;
    own->len = 0;
    own->dst = owner;
    own->port = port;
    own->src = MT_PID_NONE;
}

/* A timer's expiry in its own block `own` (MSG_OWN_BLOCK), which cannot
 * run out; irq off, as every timer expiry is posted (timer.c). Its fields
 * were filled in when the timer started (sched_expiry_prepare()); its TIMER
 * record first. Out of line, one copy for both ways in below. */
static MT_NOINLINE mt_err_t queue_timer_block(task_t *t, msg_t *own)
{
    expiry_log(own);
    own->flags = MSG_FROM_ISR | MSG_OWN_BLOCK;
    queue_after_slot(t, own);
    return MT_OK;
}

/* sched_post_timer_expiry() for all but its common case. Rare: the last
 * expiry's message still waits in `own`, or the task is not initialised,
 * or was not found when the timer started. */
static MT_NOINLINE mt_err_t post_expiry_general(msg_t *own)
{
    mt_pid_t pid = own->dst;
    mt_port_t port = own->port;
    /* The probe without task_find_locked(): interrupts are off (timer.c
     * posts every expiry with them off, in its interrupt or in task
     * context), so no kill's backward shift can move the chain under it. */
    task_t *t = sched_find_task(pid);
    if (!t) {
        expiry_log(own);
        return post_no_local_task(pid);
    }
    /* The port needs no check: the timer's start checked its index. */
    if (!own->flags && task_takes_messages(t)) return queue_timer_block(t, own);
    expiry_log(own);
    /* A block from the pool, held until its INIT if it must be. */
    return enqueue_as(t, MT_PID_NONE, pid, port, NULL, 0, 0, true);
}

/* No SEND record: the expiry's TIMER record stands for it (eventlog.py
 * expands it), written before anything the post logs, or, for an expiry
 * that runs first at the interrupt's exit, with its START there
 * (MSG_TIMER_OWED). The timer's own block names its owner's
 * control block, resolved when the timer started (timer.c), and its port:
 * no lookup and no arguments to pass. The control block stays the owner's
 * while the timer runs: a kill or a migration stops the task's timers
 * before the block goes. An expiry that runs first at the interrupt's exit
 * waits in the slot, and the timer's block stays free. */
mt_err_t sched_post_timer_expiry(msg_t *own)
{
    task_t *t = own->task;
    if (t && !own->flags) {
        if (isr_slot_fits(t)) { /* an open gate: t is initialised */
            isr_slot_fill(t, own->port, MSG_TIMER_OWED);
            return MT_OK;
        }
        if (task_takes_messages(t)) return queue_timer_block(t, own);
    }
    return post_expiry_general(own);
}

/* The general path of a bare post (an interrupt's message always waits:
 * rules 2 and 3). Out of line: the bare post's other ways pass no flags
 * (call-saved on AVR). */
static MT_NOINLINE mt_err_t post_isr_bare_general(mt_pid_t pid, mt_port_t port)
{
    return send_general_to(pid, port, NULL, 0, 0, GENERAL_ISR);
}

/* The rare ways of a bare post: a task bound to a thread (its mailbox); the rest
 * goes the general way, which has each case once. */
static MT_NOINLINE mt_err_t post_isr_queued_rare(task_t *t, mt_port_t port, port_irq_state_t s)
{
    msg_t *m = NULL;
    if (MOTET_THREADS && (t->flags & TASK_THREAD) && (t->flags & TASK_INITIALISED) &&
        !isr_slot_waiting())
        m = queue_take_block_irq_off();
    if (m) {
        address_bare_irq_off(t, port, m);
        thread_mail_push((thread_t *) t->state, m);
        log_event_inline_irq_off(EV_SEND, MT_PID_NONE, (uint16_t) (t->pid << 8 | port));
    }
    mt_pid_t pid = t->pid; /* under the lock: a kill at its end may free t */
    port_irq_restore(s);
    return m ? MT_OK : post_isr_bare_general(pid, port);
}

void isr_slot_release_held(task_t *t)
{
    msg_t *slot = &sched.isr_msg;
    if (!slot->flags) return; /* free: in no list */
    for (msg_t **link = &t->held; *link; link = &(*link)->next) {
        if (*link != slot) continue;
        bool reserved = MOTET_BUS && queue_spare_blocks() <= MIG_RESERVE; /* the migrator's */
        msg_t *m = reserved ? NULL : queue_take_block_irq_off();
        if (!m) return; /* it waits on in the slot's block */
        *m = *slot;     /* its place in the list, port, destination, no payload */
        m->flags &= (uint8_t) ~MSG_OWN_BLOCK;
        *link = m;
        slot->flags = 0;
        return;
    }
}

/* A bare message to the plain task t, looked up under the caller's lock
 * (s, put back here), that neither runs first at the exit nor finds the
 * slot's block free: queued in a pool block, or the rare ways if none is
 * free or the slot's message waits. Out of line, so that the slot's queued
 * way saves only the registers it needs itself. Both are tested before the
 * block is taken: with the slot's message waiting, the general way queues
 * that older message first, and a block taken here would have to go back
 * to the pool. */
static MT_NOINLINE mt_err_t post_isr_queued(task_t *t, mt_port_t port, port_irq_state_t s)
{
    msg_t *m = queue_first_block_irq_off();
    if (!m || isr_slot_waiting()) return post_isr_queued_rare(t, port, s);
    queue_take_first_irq_off(m);
    address_bare_irq_off(t, port, m);
    queue_push(m, t);
    log_event_inline_irq_off(EV_SEND, MT_PID_NONE, (uint16_t) (t->pid << 8 | port));
    port_irq_restore(s);
    return MT_OK;
}

/* A bare message to the plain task t, looked up under the caller's lock
 * (s, put back here), that must wait (it does not fit the slot's run at
 * the exit): queued at the tail of t's level, in the slot's block if it
 * is free, else in a pool block; queued like any message, it keeps its
 * place by construction (rule 2). Out of line, so that the slot's way
 * saves only the registers it needs itself. */
static MT_NOINLINE mt_err_t post_isr_wait(task_t *t, mt_port_t port, port_irq_state_t s)
{
    if (!isr_slot_free()) return post_isr_queued(t, port, s);
    sched.isr_msg.port = port;
    queue_push(isr_slot_as_queued(t), t);
    return isr_slot_filled(t->pid, port, s);
}

/* Virtual pids never sit in the task table (see sched_send_to()). A message
 * that runs first at the exit waits in the slot (an open gate: initialised);
 * one for a plain task that must wait is queued (post_isr_wait()); one
 * for a task that is not plain (bound to a thread, not initialised, frozen,
 * to be killed) goes the rare ways. */
mt_err_t sched_post_isr_bare(mt_pid_t pid, mt_port_t port)
{
    port_irq_state_t s = port_irq_save();
    task_t *t = sched.tasks[TASK_SLOT(pid)]; /* task_none in an empty slot */
    if (t->pid == pid && port_fast(port)) {
        if (isr_slot_fits(t)) {
            isr_slot_fill(t, port, 0);
            return isr_slot_filled(pid, port, s);
        }
        if (!task_gate_opened(t)) return post_isr_queued_rare(t, port, s);
        return post_isr_wait(t, port, s);
    }
    port_irq_restore(s);
    return post_isr_bare_general(pid, port);
}

mt_err_t sched_post_isr_data(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags)
{
    if (!len && !flags) return sched_post_isr_bare(pid, port);
    return send_general_to(pid, port, data, len, flags, GENERAL_ISR);
}
