/* SPDX-License-Identifier: MIT */
/*
 * The message scheduler: tasks, messages and the dispatch rules.
 *
 * A task is a handler `mt_err_t h(void *state, mt_port_t port, void *data,
 * uint16_t len)` plus its state,
 * a priority and an output-port table. Sending is a preemption point: a local
 * destination of equal or higher priority that is initialised and not already
 * on the stack runs at once, nested on the one shared stack; anything else is
 * queued by priority, then creation order, and runs when every frame above
 * it has returned. Interrupts post with sched_post_isr(); those messages
 * preempt only when strictly higher and run at interrupt exit.
 *
 * Example:
 *
 *     static mt_err_t blink(void *state, mt_port_t port, void *data, uint16_t len) {
 *         if (port == PORT_INIT) timer_start(0, TIMER_MS(125), true);
 *         if (port == PORT_TIMEOUT0) sched_send(0, "on", 3, 0);
 *         return MT_OK;
 *     }
 *     static const route_t blink_routes[] = {{.pid = 0x20, .port = 0}};
 *     sched_task_create(&(task_spec_t){.pid = 0x11, .prio = 2,
 *         .handler = blink, .routes = blink_routes, .n_routes = 1});
 *     sched_task_init(0x11, NULL, 0);
 */
#ifndef MOTET_SCHED_H
#define MOTET_SCHED_H

#include "motet/config.h"
#include "motet/types.h"

/* System input ports, then application ports PORT_0 .. PORT_0+N-1. */
enum {
    PORT_INIT = 0,
    PORT_FINAL,
    PORT_SERIALIZE,
    PORT_DESERIALIZE,
    PORT_TIMEOUT0,
    PORT_TIMEOUT1,
    PORT_TIMEOUT2,
    PORT_TIMEOUT3,
    PORT_0,
    PORT_LIMIT = PORT_0 + MOTET_APP_PORTS /* one past the last valid port */
};

/* Message flags: the byte msg_t.flags and the `flags` of every send.
 * A sender may give only these two; the kernel sets the others.
 *   0x01 MSG_HEAP         the payload is a heap block the message owns
 *   0x02 MSG_FROM_ISR     posted from interrupt context
 *   0x04 MSG_CAST         kernel: a multicast's delivery from the bus
 *                         (a thread's mailbox may show it; sched_internal.h);
 *                         in the interrupt slot, MSG_TIMER_OWED
 *   0x10 MSG_IN_SLOT      kernel: waits in the interrupt slot for its
 *                         interrupt's exit (sched_internal.h)
 *   0x20 MSG_HELD         kernel: sent to a task not yet initialised;
 *                         the drain holds it until the task's INIT has
 *                         been handled (rule 7, sched_internal.h)
 *   0x40 MSG_OWN_BLOCK    kernel: the block is a timer's own or the
 *                         interrupt slot's, not the pool's (sched_internal.h)
 *   0x80 MSG_OPENS        kernel: the INIT of a task not yet initialised;
 *                         the task's other messages wait until its handler
 *                         has returned (rule 7, sched_internal.h) */
#define MSG_HEAP     0x01u /* payload is a heap block the message owns */
#define MSG_FROM_ISR 0x02u /* posted from interrupt context */

typedef struct msg msg_t;
struct msg {
    msg_t *next; /* queue link (kernel use) */
    union {
        struct task *task; /* its destination's control block while queued (kernel use) */
        uint16_t mark;     /* migration's record of a multicast: its bus frame (kernel use) */
    };
    void *data;     /* payload, may be NULL when len == 0 */
    uint16_t len;   /* payload bytes */
    mt_pid_t dst;   /* destination task */
    mt_port_t port; /* destination input port */
    mt_pid_t src;   /* sending task, MT_PID_NONE from the kernel/ISR */
    uint8_t flags;  /* MSG_* */
};

/* A task's message handler: the task's state, then the message's input
 * port and payload (`data` is NULL when `len` is 0). The payload is the
 * handler's to read until it returns; sched_take() keeps it for longer.
 * The sender is sched_sender(). A result other than MT_OK is logged; on
 * any port but PORT_INIT nothing else follows from it. A PORT_INIT that
 * fails ends its task as its handler returns, as sched_task_kill() does
 * but without PORT_FINAL (it never initialised): its timers, memory and
 * messages go (those held for it dropped, counted in its EV_KILL),
 * EV_INITFAIL is logged with the error, and a later send to its pid from
 * this module is refused as to no task; one from another module is
 * accepted there and refused here, logged here (MT_ERR_NO_TASK), as for a
 * killed task. A failed INIT of one of the kernel's own tasks (the
 * application manager, the migrator) halts the module with status 5 after
 * its EV_INITFAIL: a module without them cannot load nor talk. */
typedef mt_err_t (*task_handler_t)(void *state, mt_port_t port, void *data, uint16_t len);

/* One output port: where messages sent on it go. */
typedef struct route {
    mt_pid_t pid;   /* destination task, or MT_PID_MULTICAST */
    mt_port_t port; /* destination input port, or the group id */
} route_t;

/* Task flags. */
#define TASK_MOVABLE 0x01u

/* Everything sched_task_create() needs. `routes` is copied. */
typedef struct task_spec {
    mt_pid_t pid;
    mt_prio_t prio;
    uint8_t flags; /* TASK_MOVABLE */
    task_handler_t handler;
    uint16_t state_size;   /* bytes of zeroed state owned by the task */
    const route_t *routes; /* output-port table */
    uint8_t n_routes;
} task_spec_t;

/* Create a local task (not yet initialised: messages to it are held).
 * An application pid only (types.h): the system range, 0xF4 .. 0xFE
 * reserved included, is the kernel's (MT_ERR_INVALID, logged).
 * MT_ERR_EXISTS (logged): the pid is a task's, here or on another module,
 * or a migration under way here holds it, until that migration ends, even
 * if its task was killed meanwhile.
 * Errors: MT_ERR_INVALID, MT_ERR_EXISTS, MT_ERR_NO_PORT (a route's port),
 * MT_ERR_NO_SLAB, MT_ERR_NO_MEM. */
mt_err_t sched_task_create(const task_spec_t *spec);
/* Post PORT_INIT with a copy of `data`; held messages follow once handled
 * successfully (a failed INIT ends the task: task_handler_t). MT_OK says
 * the INIT was posted or run, not that it succeeded nor that the task
 * still exists. From an interrupt body it is posted as sched_post_isr()
 * posts: never run in the body, at the interrupt's exit at the earliest.
 * Once per task, a send to PORT_INIT counting as one and a task arrived
 * by migration having had its own: a second, even while the first waits,
 * is refused with MT_ERR_STATE (logged) and changes nothing (its data
 * would need a second PORT_INIT); a first call that failed may be made
 * again. Errors: MT_ERR_NO_TASK, MT_ERR_STATE, MT_ERR_INVALID, and a
 * queued send's (MT_ERR_QUEUE_FULL, MT_ERR_NO_MEM). */
mt_err_t sched_task_init(mt_pid_t pid, const void *data, uint16_t len);
/* Deliver PORT_FINAL, then free the task's messages, timers, memory and
 * control block; deferred until the task leaves the stack if it is on it.
 * Task or thread context only: from an interrupt body MT_ERR_STATE (logged),
 * nothing changes (FINAL would run inside the body); post to a task that
 * kills instead. A system pid (the application manager, the migrator) is
 * the kernel's for as long as the device runs: MT_ERR_INVALID (logged).
 * MT_ERR_NO_TASK (logged): no such task, or its kill was asked for already,
 * pending or under way (its FINAL due or running, a FINAL killing its own
 * task among them): the task ends once, by the first kill, and to the
 * caller is as gone as after it, as a pending kill has always said. */
mt_err_t sched_task_kill(mt_pid_t pid);
/* Record a task that lives on another module (for routing). An
 * application pid only, as sched_task_create()'s: a system pid is the
 * kernel's on every module, and a record of one would route what is sent
 * to it over the bus as if an application's task had it. MT_ERR_EXISTS as
 * sched_task_create()'s, a migration's pid included. Errors, logged:
 * MT_ERR_INVALID (the pid or prio), MT_ERR_EXISTS, MT_ERR_NO_SLAB. */
mt_err_t sched_task_create_remote(mt_pid_t pid, mt_prio_t prio, mt_module_t module);
/* True if a local task with this pid exists. */
bool sched_task_exists(mt_pid_t pid);

/* sched_send(), trying a heap payload's fast way first (for MSG_HEAP). */
mt_err_t sched_send_heap(uint8_t out, void *data, uint16_t len, uint8_t flags);
/* sched_send(), trying a borrowed payload's fast way first (without it). */
mt_err_t sched_send_borrowed(uint8_t out, void *data, uint16_t len, uint8_t flags);
/* Send through output port `out` of the running task; task context.
 * With MSG_HEAP, `data` must be a heap block owned by the sender: ownership
 * moves to the message on success and stays with the sender on error
 * (MT_ERR_INVALID, logged, in a kernel without heap payloads, config.h).
 * Without it the payload is borrowed: passed as is to an immediate handler,
 * deep-copied when the message has to wait. In line, so that a heap
 * payload's send, told by its flags, takes its own way before anything of
 * a borrowed one's is set up. */
static inline mt_err_t sched_send(uint8_t out, void *data, uint16_t len, uint8_t flags)
{
    if (flags & MSG_HEAP) return sched_send_heap(out, data, len, flags);
    return sched_send_borrowed(out, data, len, flags);
}
/* Send to (pid, port) directly; same payload rules as sched_send(). To
 * PORT_INIT of a task not yet initialised it is sched_task_init()'s INIT,
 * once per task alike (MT_ERR_STATE, logged, for a second, or for a task
 * initialised, whichever way it comes: by route, pid or interrupt). */
mt_err_t sched_send_to(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags);
/* sched_send(out, NULL, 0, 0), the common case of a message without
 * payload, without the payload's arguments and the tests they need. */
mt_err_t sched_signal(uint8_t out);
/* sched_send_to(pid, port, NULL, 0, 0), likewise. */
mt_err_t sched_signal_to(mt_pid_t pid, mt_port_t port);
/* sched_post_isr() of a message without payload: the common interrupt's
 * post, with nothing of a payload to pass or check. */
mt_err_t sched_post_isr_bare(mt_pid_t pid, mt_port_t port);
/* sched_post_isr() of a message with a payload or flags. */
mt_err_t sched_post_isr_data(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags);
/* Post from interrupt context: never runs in the interrupt body; runs at
 * the interrupt's exit only if strictly higher than the running priority.
 * In line, so that a post without payload (len and flags 0) calls the bare
 * post directly. */
static inline mt_err_t sched_post_isr(mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                                      uint8_t flags)
{
    if (!len && !flags) return sched_post_isr_bare(pid, port);
    return sched_post_isr_data(pid, port, data, len, flags);
}

/* In a handler, keep the payload `data` of `len` bytes it was given: the
 * heap block itself when the message carried one (zero copy), else a new
 * heap copy; the caller owns the result and must mem_free() it. NULL for an
 * empty payload or when the heap is exhausted (logged). A heap payload not
 * taken stays the kernel's, which frees it after the handler: the handler
 * may read it, and its mem_free() of it is refused. */
void *sched_take(void *data, uint16_t len);
/* Take the payload of the message the calling thread received last
 * (thread_receive()), by the same rules as sched_take(); NULL (and
 * MT_ERR_INVALID, logged) for any other message, whose block the pool may
 * have given to another task's message since. */
void *sched_take_msg(msg_t *msg);
/* Pid of the task that sent the message being handled; MT_PID_NONE when it
 * came from the kernel, an interrupt or a timer, or outside a handler. The
 * bus's messages to the application manager name the manager itself
 * (docs/bus.md): no public call sends as it. */
mt_pid_t sched_sender(void);

/* Pid of the task whose handler is running, MT_PID_NONE when none. */
mt_pid_t sched_current_pid(void);
/* Priority of the running handler, -1 when the stack is empty. */
mt_prio_t sched_running_prio(void);
/* Number of handler frames on the shared stack. */
uint8_t sched_stack_depth(void);
/* Messages waiting in the queue (held pre-INIT messages included); a
 * diagnostic: it counts them, with interrupts held off for the walk. */
uint8_t sched_queued_count(void);

/* Run every queued message that is due, then return (no sleep); task
 * context with an empty stack. Returns the number of handlers run. */
unsigned sched_run_pending(void);
/* The main loop: dispatch, then sleep until the next event; never returns
 * unless sched_stop() was called from a handler. */
void sched_run(void);
/* Make sched_run() return once the stack is empty. */
void sched_stop(void);

/* Port hooks around interrupt handlers that may post messages. The entry
 * has nothing to do: inline, so that an interrupt pays no call for it. */
static inline void sched_isr_enter(void)
{
}
/* Called by the port after the interrupt body, irq off, still on the
 * interrupted stack: runs queued handlers that outrank the running one,
 * turning interrupts on only while one (or a thread) runs; returns with irq
 * off. An interrupt that finds nothing to run thus never lets another nest
 * on its frame, which bounds the interrupts on the stack by the priority
 * levels (docs/threads.md, "The kernel stack"). Returns false when the main
 * loop, had it been asleep under this interrupt, would only choose the same
 * sleep again (nothing left to run, no stop, the timers' head unchanged,
 * no event log or threads to see the wake): a port may then sleep on in
 * port_sleep() without returning to it. */
bool sched_isr_exit(void);
/* A function the exit dispatch runs: irq off, on the interrupted stack,
 * in task context as far as the kernel is concerned. */
typedef void (*sched_isr_exit_fn)(void);
/* The exit's one decision, for a port whose exit dispatch costs more than
 * this test (Cortex-M: two more exceptions): NULL when nothing outranks the
 * interrupted handler and the interrupted thread (if any) cannot lose the
 * CPU (or its policy charges it at every exit), so the port returns
 * straight to it; otherwise what to run, the queued handlers' drain or the
 * thread side's reschedule, which the port calls with irq still off and
 * nothing changed since. Interrupt context, irq off, after the body:
 * whatever a later interrupt posts, its own decision sees. */
sched_isr_exit_fn sched_isr_exit_choice(void);

#endif /* MOTET_SCHED_H */
