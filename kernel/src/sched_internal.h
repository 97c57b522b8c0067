/* SPDX-License-Identifier: MIT */
/*
 * Scheduler internals shared by the kernel's own components: the task
 * control block and its frame on the shared stack (task.c, dispatch.c,
 * send.c), the queue's state and the message blocks of its pool (queue.c;
 * the queue's own operations are queue_internal.h's), and what multicast,
 * the application manager and migration build on; the dispatch rules and
 * the gate that decides three of them are dispatch_rules.h's. Applications
 * never include it. docs/architecture.md explains how the pieces fit.
 */
#ifndef MOTET_SCHED_INTERNAL_H
#define MOTET_SCHED_INTERNAL_H

#include "bit_table.h"
#include "motet/log.h"
#include "motet/port.h"
#include "motet/sched.h"

/* Internal task flags, above the public TASK_MOVABLE. */
#define TASK_INIT_RUNNING 0x04u /* its PORT_INIT handler is on the stack */
#define TASK_INIT_SENT    0x08u /* its one PORT_INIT is sent (send.c) or was handled */
#define TASK_INITIALISED  0x10u /* PORT_INIT handled, and not frozen (a freeze clears it) */
#define TASK_KILL_PENDING 0x40u /* kill once the task leaves the stack */
#define TASK_ENDING       0x20u /* its kill is under way: FINAL due or running, then its end */
#define TASK_FROZEN       0x80u /* migration: hold every message */
/* Bound to a thread (thread.h): messages go to its mailbox, state is the
 * thread. Zero without threads, so that tests of it fold away. */
#define TASK_THREAD (MOTET_THREADS ? 0x02u : 0u)

/* Internal message flags, above the public MSG_*: the message was sent to
 * a task not yet initialised, and the drain holds it in the task's held
 * list if the task still is when it comes to it (rule 7: queued in its
 * level like any other, it keeps its place in creation order without a
 * stamp); the block is not the pool's but one the kernel keeps for a
 * purpose (a timer's own expiry, timer.c; the interrupt slot, post.c),
 * given back by clearing its flags; the message is the INIT of a task not
 * yet initialised (rule 7 holds its other messages until this one's
 * handler has returned). */
#define MSG_CAST      0x04u /* a multicast's delivery from the bus (sched_post_cast()) */
#define MSG_IN_SLOT   0x10u /* waits in the interrupt slot for its exit (post.c) */
#define MSG_HELD      0x20u
#define MSG_OWN_BLOCK 0x40u
#define MSG_OPENS     0x80u

/* With MSG_IN_SLOT, log on: a task timer's expiry whose TIMER record its
 * START at the exit will stand for, owed until then (post.c). MSG_CAST's
 * bit, which no message in the slot has; none with the log compiled out. */
#define MSG_TIMER_OWED (MOTET_EVENT_LOG ? MSG_CAST : 0u)
/* The flags a sender may give (sched.h): MSG_HEAP only where heap payloads
 * are compiled in (config.h, MOTET_HEAP_PAYLOADS); without them a send
 * with it is refused and no path that passes a block's ownership is linked. */
#define SEND_FLAGS (MOTET_HEAP_PAYLOADS ? MSG_HEAP : 0u)
/* True if a send's `flags` hand the receiver a heap block the sender owns. */
static MT_INLINE bool send_hands_over(uint8_t flags)
{
    return MOTET_HEAP_PAYLOADS && (flags & MSG_HEAP);
}
/* Message blocks a migration leaves to the rest of the module: a frozen
 * task's messages could otherwise take the whole pool, and the migrator,
 * which is woken by a message, could never finish and release them. A send
 * to a frozen task that would take one of them is refused, to be retried
 * (MT_ERR_QUEUE_FULL; a bus frame is answered busy, bus.h). */
#define MIG_RESERVE 4u

/* An output port: the destination and its control block while it is a
 * local task (resolved on first use; task_none, below, until then, for a
 * remote or virtual destination, and once that task goes). */
typedef struct out_route {
    struct task *local;
    mt_pid_t pid;
    mt_port_t port;
} out_route_t;

/* The task control block. A task is on the stack at most once (rule 4),
 * so its block also holds its frame there: what to restore when its
 * handler returns, the sender of the message being handled, and a heap
 * payload the kernel frees after the handler unless it was taken. */
typedef struct task {
    void *state;
    task_handler_t handler;
    out_route_t *routes;
    msg_t *held;        /* FIFO of messages waiting for PORT_INIT to be handled */
    struct task *below; /* frame: the task of the frame below, NULL if none */
    void *payload;      /* frame: heap payload of the message, NULL if none */
    mt_pid_t pid;
    mt_prio_t prio;
    mt_prio_t gate;       /* prio while a send may run it at once (rules 1, 4, 7), else
                           * below every running priority: its flags say no
                           * (GATE_CLOSED), or on the stack (GATE_STACKED);
                           * dispatch_rules.h */
    mt_prio_t below_prio; /* frame: the running priority to restore */
    mt_pid_t sender;      /* frame: sender of the message being handled */
    uint8_t flags;
    uint8_t n_routes;
} task_t;

/* The control block of no task: what a route names while it is not
 * resolved to a local task, and the frame at the bottom of the stack, the
 * top one while no handler runs. Its gate never opens, its flags never say
 * initialised and it has no routes, so that a send's fast paths find it
 * unable to run, unable to take a message or to send, as they find such a
 * task, with no test for none (the general path resolves the route, or
 * refuses the send); its pid and sender are MT_PID_NONE. Never written. */
extern task_t task_none;

/* A task on another module: enough to route and order its messages. */
typedef struct remote_task {
    mt_pid_t pid;
    mt_prio_t prio;
    mt_module_t module;
} remote_task_t;

#define TASK_TABLE_SIZE                                                                            \
    (MOTET_MAX_TASKS <= 8    ? 8u                                                                  \
     : MOTET_MAX_TASKS <= 16 ? 16u                                                                 \
     : MOTET_MAX_TASKS <= 32 ? 32u                                                                 \
     : MOTET_MAX_TASKS <= 64 ? 64u                                                                 \
                             : 256u)
/* Bit p set: level p holds a message. The smallest word the levels fit in. */
typedef level_bits_t queue_bits_t;
/* A level's FIFO; `tail` means something only while `head` is set. */
typedef struct queue_level {
    msg_t *head, *tail;
} queue_level_t;
/* The levels' FIFOs (queue.c), sized by configuration. */
extern queue_level_t queue_level[MOTET_PRIO_LEVELS];
/* The rest of the queue's state, in `sched` (below), for its inline
 * operations only: the level bitmap and its highest set bit (-1: empty),
 * which every dispatch compares with the running priority, written with irq
 * off, the top read unlocked as a hint (work_above(), dispatch_rules.h);
 * not volatile, as every read follows a lock taken or given back, a
 * compiler barrier (a volatile byte costs each read a sign extension on
 * the Cortex-M); the pool's free blocks, linked through their `next`. */
typedef struct queue_state {
    mt_prio_t top;
    queue_bits_t levels;
    msg_t *free_blocks;
} queue_state_t;

/* The scheduler's state, the queue's top among it: one base register reaches
 * what a dispatch tests (docs/architecture.md, "The interrupt slot"). */
typedef struct sched_state {
    task_t *current;        /* task of the top handler frame, task_none if none */
    mt_prio_t running_prio; /* the priority a send must reach to run at once */
    uint8_t held;           /* messages held for uninitialised tasks */
    volatile bool stop;
#if MOTET_THREADS
    uint8_t k_calls; /* calls K runs for threads, nested (sched_k_call()) */
#endif
    task_t *tasks[TASK_TABLE_SIZE]; /* live local tasks, hashed by pid; task_none where none */
    /* The rest of a kill asked for while its task ran, at its frame's pop;
     * irq off on entry and return. Set by the two sources of
     * TASK_KILL_PENDING, both task.c's: sched_task_kill() (FINAL, then the
     * destruction) and, unless a kill set it, an INIT's failure
     * (task_init_failed_irq_off(): the destruction only), so that an image
     * without kills links none of their code. NULL until then. */
    void (*kill_on_pop)(task_t *t);
    /* The interrupt slot (post.c): an interrupt's bare message that will
     * run first at the interrupt's exit, in no queue until then
     * (MSG_IN_SLOT), or one queued in its level's FIFO as any other; its
     * block is busy while its flags are set at all (waiting, queued, or
     * held by a freeze that had no pool block to spare,
     * isr_slot_release_held()). */
    msg_t isr_msg;
    queue_state_t queue; /* queue.c's */
} sched_state_t;

extern sched_state_t sched;

/* Local tasks are found by pid in an open-addressed table (linear probing):
 * the home slot folds the high nibble in, so that the system tasks (0xF0,
 * ...) take the top slots counting down while application pids (0x10, ...)
 * fill it from the bottom, one probe each in practice. An empty slot holds
 * task_none, so that a fast path's probe needs no test for none: only a
 * send to MT_PID_NONE, task_none's pid, can match it there, and its closed
 * gate and flags send that the general way (send.c). */
#define TASK_SLOT(pid)  ((uint8_t) (((pid) ^ ((pid) >> 4)) & (TASK_TABLE_SIZE - 1u)))
#define NEXT_SLOT(slot) ((uint8_t) (((slot) + 1u) & (TASK_TABLE_SIZE - 1u)))

/* ---- sched_run.c: start-up ---- */

/* Reset the scheduler to no tasks and an empty queue; boot only. */
void sched_init(void);

/* ---- task.c: the task table and the tasks' lives ---- */

/* Empty the task and remote-task caches; boot (sched_init()). */
void task_init_caches(void);
/* The local task with this pid, or NULL; interrupts off (below). */
task_t *sched_find_task(mt_pid_t pid);
/* sched_find_task() for a caller with interrupts on: the probe under the
 * lock. A kill run at an interrupt's exit closes its slot's gap by moving
 * tasks of the probe chain back (task.c); an unlocked probe it came in the
 * middle of could pass a live task's new slot and stop at the old one,
 * empty by then. What it returns may be killed once the lock goes: a
 * caller that acts on it checks it again with interrupts off. */
task_t *task_find_locked(mt_pid_t pid);
/* sched_find_task() with its first probe in line. */
static MT_INLINE task_t *task_find_fast(mt_pid_t pid)
{
    task_t *t = sched.tasks[TASK_SLOT(pid)];
    if (t != &task_none && t->pid == pid) return t;
    return sched_find_task(pid);
}
/* sched_task_create() for the kernel's own tasks: the application
 * manager's or the migrator's pid only (task_pid_is_system_task()),
 * which the public call refuses; boot only. */
mt_err_t task_create_system(const task_spec_t *spec);
/* One of the kernel's own tasks (pid) could not be created or initialised
 * (err): logged as its INITFAIL, and the module halts with status 5. */
void task_system_start_failed(mt_pid_t pid, mt_err_t err);
/* sched_task_create() for a task arriving by migration, under the pid its
 * migration slot holds (which the public call refuses); the migrator only. */
mt_err_t task_create_arriving(const task_spec_t *spec);
/* sched_task_create_remote() under a pid a migration slot holds (which the
 * public call refuses); the migrator only. */
mt_err_t task_create_remote_migrating(mt_pid_t pid, mt_prio_t prio, mt_module_t module);
/* An application's task pid (types.h), the only kind sched_task_create()
 * and sched_task_create_remote() take: not a virtual pid (multicast, time
 * sync), which has no control block, nor a system task's or a reserved
 * one, which are the kernel's. */
static MT_INLINE bool task_pid_is_app(mt_pid_t pid)
{
    return pid != MT_PID_NONE && pid <= MT_PID_LAST_APP;
}
/* A port a group's message may be delivered to: an input port, none of
 * the system's (mcast_join(), and a migration image's groups). */
static MT_INLINE bool member_port_ok(mt_port_t port)
{
    return port >= PORT_0 && port < PORT_LIMIT;
}
/* A route's port as sched_task_create() takes it, wherever the route
 * comes from (a spec, a migration image): an input port of a task, or a
 * group id for the multicast pid (the bus's multicast checks it) and any
 * port of the time-sync pid. */
static MT_INLINE bool route_port_ok(mt_pid_t pid, mt_port_t port)
{
    return pid == MT_PID_MULTICAST || pid == MT_PID_TIMESYNC || port < PORT_LIMIT;
}
/* A pid task_create_system() takes: the kernel's own tasks. */
static MT_INLINE bool task_pid_is_system_task(mt_pid_t pid)
{
    return pid == MT_PID_MIGRATOR || pid == MT_PID_APPMGR;
}

/* ---- task_remote.c: tasks on other modules ---- */

/* Hook for the bus manager: called for messages to remote tasks; a
 * MSG_HEAP payload is the hook's on success (freed, or its frame), the
 * sender's on error. */
typedef mt_err_t (*sched_remote_send_fn)(mt_module_t module, const msg_t *msg, mt_prio_t prio);
/* Install the remote-send hook (NULL: remote sends fail with MT_ERR_NO_ROUTE). */
void sched_set_remote_send(sched_remote_send_fn fn);

#if MOTET_MAX_REMOTE_TASKS
/* Empty the remote-task table and cache; boot (task_init_caches()). */
void task_remote_init(void);
/* The remote control block of pid, or NULL. */
remote_task_t *sched_remote_find(mt_pid_t pid);
/* Forget a remote control block; MT_ERR_NO_TASK (logged) if there is none. */
mt_err_t sched_task_remove_remote(mt_pid_t pid);
/* A send to pid, a task of another module, handed to the bus manager;
 * MT_ERR_NO_TASK (logged) if pid is none, MT_ERR_NO_ROUTE without a bus. */
mt_err_t send_remote(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags);
#else
/* Without remote tasks (config.h) there is none to find, forget or reach. */
static MT_INLINE void task_remote_init(void)
{
}
static MT_INLINE remote_task_t *sched_remote_find(mt_pid_t pid)
{
    (void) pid;
    return NULL;
}
static MT_INLINE mt_err_t sched_task_remove_remote(mt_pid_t pid)
{
    (void) pid;
    return log_error(MT_ERR_NO_TASK);
}
static MT_INLINE mt_err_t send_remote(mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                                      uint8_t flags)
{
    (void) pid;
    (void) port;
    (void) data;
    (void) len;
    (void) flags;
    return log_error(MT_ERR_NO_TASK);
}
#endif
/* Enter t in the pid table / remove it and every route cached to it; irq off. */
void sched_task_link(task_t *t);
void sched_task_unlink(task_t *t);
/* Return an unlinked control block to its cache. */
void sched_task_free(task_t *t);
/* Set and clear flags of t and reopen or close its gate to match; irq off
 * where a send may race (every caller but creation). */
void task_set_flags(task_t *t, uint8_t set, uint8_t clear);
/* Rule 7: once PORT_INIT is handled, t's held messages join the queue in
 * creation order. */
void task_release_held(task_t *t);
/* The rest of a kill once t is off the stack: FINAL, then everything it
 * owned goes. Kernel stack. */
void task_finish_kill(task_t *t);
/* Free every resource of t and its control block (no FINAL). */
void task_destroy(task_t *t);
/* t's INIT, its frame the top one, returned `err`: t never initialised,
 * and is killed at the frame's pop as sched_task_kill() kills it, without
 * FINAL; its EV_INITFAIL logged. Irq off. */
void task_init_failed_irq_off(task_t *t, mt_err_t err);

/* ---- dispatch.c: frames' runs and the drain (the rules: dispatch_rules.h) ---- */

/* True if t has a frame on the stack: a walk down the frames to
 * task_none's, at most one a priority level (for the rare paths). */
bool task_on_stack(const task_t *t);
/* Run the handler of t, its frame just pushed, with interrupts on; free a
 * payload it did not take, pop the frame, finish an INIT or a kill that
 * came with it; the handler's result. The caller runs what it queued. */
mt_err_t frame_run(task_t *t, mt_port_t port, void *data, uint16_t len);
/* Pop the frame just pushed for t, whose handler did not run after all. */
void frame_cancel(task_t *t);
/* The fast paths' end: frame_run() for a send that runs t at once (its
 * frame pushed and its EV_RUN logged, both under the send's lock), then a
 * drain of what outranks the sender; MT_OK. */
mt_err_t dispatch_run(task_t *t, mt_port_t port, void *data, uint16_t len);
/* dispatch_run() for a frame pushed with a heap payload (send.c's heap
 * way), which frame_run() frees after the handler unless it was taken. */
mt_err_t dispatch_run_payload(task_t *t, mt_port_t port, void *data, uint16_t len);
/* Rule 5 for a caller that has saved the interrupt state in s and turned
 * them off: run queued messages (and ready threads) that outrank `floor`,
 * then restore s; MT_OK, so that a fast path ends in a tail call to it.
 * Left off, as on return: drain_held_off(), and run_slot_held_off() for
 * the interrupt slot's message (rule 3, isr_exit.c). */
mt_err_t dispatch_drain(mt_prio_t floor, port_irq_state_t s);
void drain_held_off(mt_prio_t floor);
void run_slot_held_off(void);

/* ---- send.c ---- */

/* Deliver one message to local task t, looked up for `pid`, by the
 * dispatch rules; MT_ERR_NO_TASK if t stopped being pid's meanwhile. */
mt_err_t sched_deliver(task_t *t, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                       uint8_t flags, bool from_isr);
/* MOTET_APPMGR's prepared messages: queue block m, its payload and its
 * flags (MSG_HEAP, MSG_FROM_ISR) set, for local task pid's port, as sent
 * by `src`: a handler outranking the task (stage two's INITs), or, with
 * MSG_FROM_ISR, an interrupt's post (a load's verdict, sent as from the
 * manager: bus_app.c; logged by no task, as every interrupt's); either waits.
 * Nothing allocated, so only MT_ERR_NO_TASK and an INIT's refusal
 * (MT_ERR_STATE), logged, m freed. */
mt_err_t sched_post_block(mt_pid_t src, mt_pid_t pid, mt_port_t port, msg_t *m);
/* A task-context send to the local task pid by the dispatch rules;
 * MT_ERR_NO_TASK (logged) if there is none. */
mt_err_t sched_send_local(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags);
/* A timer expiry's message to its owner, a task, posted by the timer's
 * own message block `own`, which names the owner, its control block and
 * the port (sched_expiry_prepare()): sched_post_isr() of a bare message
 * with the expiry's EV_TIMER record instead of a SEND (which it stands
 * for), or, if it runs first at the exit, none yet (MSG_TIMER_OWED).
 * It goes in `own` if that is free and the task initialised, else in a
 * pool block. Irq off. */
mt_err_t sched_post_timer_expiry(msg_t *own);
/* Fill in a timer's own expiry message for `owner`'s `port` once, when the
 * timer starts, so that an expiry only stamps and queues it. */
void sched_expiry_prepare(msg_t *own, mt_pid_t owner, mt_port_t port);
/* Free a payload the kernel holds for t's running handler (t->payload);
 * take.c, with the handler's own take of it. */
void send_drop_payload(task_t *t);
/* A heap payload of len bytes that `sender` sends the general way on
 * the module becomes the kernel's: a block of the sender's own, or the
 * payload its handler was given (`from`, its frame, NULL for none), which
 * the frame lets go of; either holding the len bytes, as the kernel may
 * copy a message it holds (a migration's forward, a thread's mailbox).
 * MT_ERR_INVALID, MT_ERR_BAD_POINTER or MT_ERR_NOT_OWNER, logged,
 * otherwise, nothing changed. payload_check()'s rule; take.c. */
mt_err_t payload_to_kernel(void *data, uint16_t len, task_t *from, mt_pid_t sender);
/* A payload `sender` (MT_PID_NONE: an interrupt body or no handler)
 * sends off the module or to a group, to be copied there: bytes where
 * there are any; with MSG_HEAP, a heap block of at least len bytes, the
 * sender's own or the heap payload its handler was given (the kernel's,
 * held by its frame); any block from MT_PID_NONE, which it makes the
 * kernel's: payload_to_kernel()'s rule, as a check. MT_ERR_INVALID,
 * MT_ERR_BAD_POINTER or MT_ERR_NOT_OWNER, logged, otherwise, nothing
 * changed. Read before a send pushes a frame. take.c. */
mt_err_t payload_check(void *data, uint16_t len, uint8_t flags, mt_pid_t sender);
/* Once copied: a MSG_HEAP payload that passed payload_check() is
 * freed, and its frame, if it was the frame's, lets it go. take.c. */
void payload_consumed(void *data, uint8_t flags, mt_pid_t sender);
/* sched_post_isr() of a message that task `src` of another module sent
 * over the bus (or the bus's own to the application manager, sent as from
 * the manager: bus_app.c): queued for the local task pid (no virtual pid)
 * with src as its sender. Interrupt context (or irq off); errors logged
 * as sched_post_isr()'s. */
mt_err_t sched_post_from(mt_pid_t src, mt_pid_t pid, mt_port_t port, const void *data,
                         uint16_t len);
/* The error of an interrupt's message for pid, which no local task has,
 * logged: MT_ERR_NO_ROUTE for a task of another module (an interrupt hands
 * nothing to the bus), else MT_ERR_NO_TASK. One copy for the interrupts'
 * ways and the general path's; in line, as a kernel without the bus knows
 * no remote task and it is then one error logged. */
static MT_INLINE mt_err_t post_no_local_task(mt_pid_t pid)
{
    return log_error(sched_remote_find(pid) ? MT_ERR_NO_ROUTE : MT_ERR_NO_TASK);
}
/* sched_post_from() of a multicast's delivery to the member pid, marked
 * MSG_CAST: a migration's copy given up keeps such messages from the
 * source, which has them (migrate_peer.c). */
mt_err_t sched_post_cast(mt_pid_t src, mt_pid_t pid, mt_port_t port, const void *data,
                         uint16_t len);
/* The interrupt slot's waiting message joins the queue after all, as the
 * oldest of its level (no handler has run since it was posted); irq off. */
void send_isr_slot_queue(void);
/* Queue m for t (rule 2) after the interrupt slot's message, the older
 * one, or put it in the mailbox of the thread bound to t; irq off. post.c,
 * one copy for the general path and a timer's own block. */
void queue_after_slot(task_t *t, msg_t *m);
/* Queue a message from `src` (the running task, a task of another module
 * over the bus, or MT_PID_NONE from an interrupt) for local task t, looked
 * up for pid: a pool block, its payload owned as the flags say (MSG_CAST
 * kept as a mark), held for
 * rule 7 or a frozen task if it must be (send.c). MT_ERR_QUEUE_FULL or
 * the payload's error (logged), MT_ERR_NO_TASK if t stopped being pid's. */
mt_err_t enqueue_as(task_t *t, mt_pid_t src, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                    uint8_t flags, bool from_isr);

/* The ways into the general path's tails: a send from task context to
 * any pid, one to local tasks only (every delivery of a multicast or a bus
 * frame), and an interrupt's post. */
enum { GENERAL_ANY, GENERAL_LOCAL, GENERAL_ISR };
/* Every send and post to any pid the fast paths leave, `way` one of the
 * above: the virtual pids (multicast, time sync), then the local task by
 * the dispatch rules, a task of another module, or none (send.c). */
mt_err_t send_general_to(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags,
                         uint8_t way);

/* A send's arguments that no destination makes valid: unknown flags and
 * bytes without a pointer (MT_ERR_INVALID), a port beyond PORT_LIMIT
 * (MT_ERR_NO_PORT); MT_OK otherwise. Not logged: the caller does. */
static MT_INLINE mt_err_t check_send_args(mt_port_t port, const void *data, uint16_t len,
                                          uint8_t flags)
{
    if (flags & (uint8_t) ~SEND_FLAGS) return MT_ERR_INVALID;
    if (len && !data) return MT_ERR_INVALID;
    if (port >= PORT_LIMIT) return MT_ERR_NO_PORT;
    return MT_OK;
}

/* A port a fast path (by pid, an interrupt's bare post) may deliver to:
 * below PORT_LIMIT and not PORT_INIT, whose one INIT per task only the
 * general path claims or refuses (send.c). One unsigned comparison, as
 * the bound alone would be: PORT_INIT, 0, wraps round above it. */
static MT_INLINE bool port_fast(mt_port_t port)
{
    _Static_assert(PORT_INIT == 0, "PORT_INIT wraps round above the bound");
    return (mt_port_t) (port - 1u) < PORT_LIMIT - 1u;
}

/* Address m, its payload set, to t's `port` from `src`; irq off. */
static MT_INLINE void address_irq_off(msg_t *m, const task_t *t, mt_port_t port, mt_pid_t src,
                                      uint8_t flags)
{
    m->dst = t->pid;
    m->port = port;
    m->src = src;
    m->flags = flags;
}

/* Whether a message waits in the interrupt slot for its exit. */
static MT_INLINE bool isr_slot_waiting(void)
{
    return sched.isr_msg.flags & MSG_IN_SLOT;
}

/* send_isr_slot_queue() if a message waits in the slot: before another is queued. */
static MT_INLINE void isr_slot_queue_if_waiting(void)
{
    if (isr_slot_waiting()) send_isr_slot_queue();
}

/* ---- queue.c: message blocks, for every component ----
 *
 * The queue's own operations, most of them in line, are queue_internal.h's. */

/* A block from the pool, NULL (logged) when it is empty; any context. */
msg_t *sched_msg_alloc(void);
/* Give pool block m (flags set) its own copy of a payload: in the block if
 * it fits, else on the heap (MSG_HEAP); MT_ERR_NO_MEM, logged, if not. */
mt_err_t sched_msg_copy_payload(msg_t *m, const void *data, uint16_t len);
/* Free a message that is in no list, and its heap payload; its block goes
 * back to the pool or to its owner (MSG_OWN_BLOCK). */
void sched_msg_free(msg_t *m);
/* A borrowed payload of this many bytes or fewer travels in the block. */
#define MSG_INLINE_BYTES 5u
/* Copy a borrowed payload of at most MSG_INLINE_BYTES into m's block. */
void queue_copy_into_block(msg_t *m, const void *data, uint16_t len);

/* ---- support for migration (sched_migrate.c) and threads ---- */

/* Count messages added to (or taken from) a task's held list; irq off. */
static MT_INLINE void sched_held_add(int16_t delta)
{
    sched.held = (uint8_t) (sched.held + delta);
}
/* Run task pid's handler for (port, data, len) now, on top of the caller,
 * data being a heap block the handler may take (else freed after it), then
 * what it queued above the caller's level, and return its result;
 * MT_ERR_NO_TASK (data freed) if no task pid is here, or if a kill of it
 * was asked for while the handler ran (by itself or any other handler).
 * MT_OK does not say it still exists: a kill after the handler returned
 * (in the drain) is not told. The task must not be on the stack. Task
 * context. */
mt_err_t sched_task_call(mt_pid_t pid, mt_port_t port, void *block, uint16_t len);
/* Message blocks left in the pool (a hint: interrupts may take one). Its
 * walk holds interrupts off for every free block: for tests and reports. */
uint8_t sched_msg_spare(void);
/* Whether more than n blocks are left in the pool (a hint, as above); holds
 * interrupts off for at most n steps, so paths that run per frame use it. */
bool sched_msg_spare_more_than(uint8_t n);

#endif /* MOTET_SCHED_INTERNAL_H */
