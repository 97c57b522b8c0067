/* SPDX-License-Identifier: MIT */
/*
 * Scheduler internals shared by the kernel's own components (queue,
 * multicast, application manager, migration). Applications never include it.
 */
#ifndef MOTET_SCHED_INTERNAL_H
#define MOTET_SCHED_INTERNAL_H

#include "motet/sched.h"

/* Internal task flags, above the public TASK_MOVABLE. */
#define TASK_INITIALISED  0x10u /* PORT_INIT has been handled */
#define TASK_ON_STACK     0x20u /* a handler frame of this task is live */
#define TASK_KILL_PENDING 0x40u /* kill once the task leaves the stack */
#define TASK_FROZEN       0x80u /* migration: hold every message */
/* Bound to a thread (thread.h): messages go to its mailbox, state is the
 * thread. Zero without threads, so that tests of it fold away. */
#define TASK_THREAD (MOTET_THREADS ? 0x02u : 0u)

/* An output port: the destination and a cache of its local control block. */
typedef struct out_route {
    struct task *local; /* NULL until first use, or when not local */
    mt_pid_t pid;
    mt_port_t port;
} out_route_t;

/* The task control block. Field order keeps it compact on 8-bit targets. */
typedef struct task {
    task_handler_t handler;
    void *state;
    out_route_t *routes;
    msg_t *held; /* FIFO of messages waiting for PORT_INIT to be handled */
    mt_pid_t pid;
    mt_prio_t prio;
    uint8_t flags;
    uint8_t n_routes;
} task_t;

/* A task on another module: enough to route and order its messages. */
typedef struct remote_task {
    mt_pid_t pid;
    mt_prio_t prio;
    mt_module_t module;
} remote_task_t;

/* ---- sched.c ---- */

/* The local task with this pid, or NULL. */
task_t *sched_find_task(mt_pid_t pid);
/* Deliver one message to local task t by the dispatch rules. */
mt_err_t sched_deliver(task_t *t, mt_port_t port, void *data, uint16_t len, uint8_t flags,
                       bool from_isr);
/* Forget a remote control block; MT_ERR_NO_TASK if there is none. */
mt_err_t sched_task_remove_remote(mt_pid_t pid);

/* ---- sched_queue.c: one FIFO per priority level and a bitmap ---- */

/* Empty every level; boot only. */
void queue_init(void);
/* Append m at level prio (creation order within a level); irq off. */
void queue_push(msg_t *m, mt_prio_t prio);
/* Insert m at level prio before the first message created after it; irq off. */
void queue_insert_by_seq(msg_t *m, mt_prio_t prio);
/* Remove and return the oldest message of the highest level above floor,
 * or NULL when no level above floor holds one; irq off. */
msg_t *queue_pop_above(mt_prio_t floor);
/* Highest non-empty level, -1 when the queue is empty; irq off. */
mt_prio_t queue_top_prio(void);
/* Unlink every message for pid from level prio into a list; irq off. */
msg_t *queue_remove_for(mt_pid_t pid, mt_prio_t prio);
/* True if no level held a message at the instant of reading; may be read
 * without the lock (see drain_above() for why that is safe). */
bool queue_is_empty_hint(void);
/* Messages in the queue. */
uint8_t queue_length(void);

#endif /* MOTET_SCHED_INTERNAL_H */
