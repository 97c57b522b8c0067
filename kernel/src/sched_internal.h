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
/* Internal message flag, above the public MSG_*: the heap payload of a
 * message run at once was handed straight to its destination, which is on
 * the stack while the message lives (a kill waits until it leaves), so
 * sched_take_msg() by the destination has no hand-over left to do. */
#define MSG_DST_OWNS 0x80u
/* Internal message flag: the message is a timer's own (timer.c), to be
 * given back to it, not to the pool (sched_msg_free()). */
#define MSG_TIMER_BLOCK 0x40u
/* Message blocks a migration leaves to the rest of the module: a frozen
 * task's messages could otherwise take the whole pool, and the migrator,
 * which is woken by a message, could never finish and release them. A send
 * to a frozen task that would take one of them is refused, to be retried
 * (MT_ERR_QUEUE_FULL; a bus frame is answered busy, bus.h). */
#define MIG_RESERVE 4u
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
/* Deliver one message to local task t, looked up for `pid`, by the
 * dispatch rules; MT_ERR_NO_TASK if t stopped being pid's meanwhile. */
mt_err_t sched_deliver(task_t *t, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                       uint8_t flags, bool from_isr);
/* A task-context send to the local task pid by the dispatch rules, with
 * sched_send_to()'s fast paths; MT_ERR_NO_TASK (logged) if there is none. */
mt_err_t sched_send_local(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags);
/* A timer expiry's message to its owner, a task (never a virtual pid, so
 * the stack never reaches the multicast and time-sync paths): sched_post_isr()
 * of a bare message without the SEND record, which the caller's EV_TIMER
 * record, logged just before, stands for. It goes in `own`, the timer's
 * free message block, if given and the task is initialised, else in a pool
 * block. Errors are logged as usual. Irq off (the timer service's). */
mt_err_t sched_post_timer_expiry(mt_pid_t pid, mt_port_t port, msg_t *own);
/* sched_post_isr() of a message that task `src` of another module sent
 * over the bus: queued for the local task pid (no virtual pid) with src
 * as its sender. Interrupt context; errors logged as sched_post_isr()'s. */
mt_err_t sched_post_from(mt_pid_t src, mt_pid_t pid, mt_port_t port, const void *data,
                         uint16_t len);
/* Forget a remote control block; MT_ERR_NO_TASK if there is none. */
mt_err_t sched_task_remove_remote(mt_pid_t pid);

/* ---- sched_queue.c: one FIFO per priority level and a bitmap ----
 *
 * The operations on every message's path (push, top, pop) are inline
 * here: on an 8-bit core a call costs more than the operation. */

/* Bit p set: level p holds a message. A byte when the levels fit in one. */
#if MOTET_PRIO_LEVELS <= 8
typedef uint8_t queue_bits_t;
#else
typedef uint16_t queue_bits_t;
#endif

typedef struct queue_level {
    msg_t *head;
    msg_t *tail;
} queue_level_t;

/* The queue's state, for the inline operations below only. */
extern queue_level_t queue_level[MOTET_PRIO_LEVELS];
/* The level bitmap; written with irq off only, read without the lock as a
 * hint (see drain_above()). */
extern volatile queue_bits_t queue_levels;
/* queue_level_bit[p] == 1 << p: where int is 16 bits (8-bit cores), a
 * shift by a variable amount is a loop of one bit per turn. */
extern const queue_bits_t queue_level_bit[];

/* Empty every level; boot only. */
void queue_init(void);
/* Insert m at level prio before the first message created after it; irq off. */
void queue_insert_by_seq(msg_t *m, mt_prio_t prio);
/* Unlink every message for pid from level prio into a list; irq off. */
msg_t *queue_remove_for(mt_pid_t pid, mt_prio_t prio);
/* Messages in the queue, counted (no count is kept: it would cost every
 * message two updates for the sake of this query); irq off. */
uint8_t queue_length(void);

/* The bit of level p in the bitmap. */
static MT_INLINE queue_bits_t queue_bit(mt_prio_t p)
{
    if (sizeof(unsigned) == 2) return queue_level_bit[(uint8_t) p];
    return (queue_bits_t) (1u << p);
}

/* Append m at level prio (creation order within a level); irq off. */
static MT_INLINE void queue_push(msg_t *m, mt_prio_t prio)
{
    queue_level_t *l = &queue_level[(uint8_t) prio];
    m->next = NULL;
    if (l->tail)
        l->tail->next = m;
    else
        l->head = m;
    l->tail = m;
    queue_levels |= queue_bit(prio);
}

/* Highest set bit of a non-zero bitmap: clz where it is an instruction,
 * a binary search of a byte (or two) where int is 16 bits. */
static MT_INLINE mt_prio_t queue_highest_bit(queue_bits_t bits)
{
    if (sizeof(unsigned) != 2)
        return (mt_prio_t) ((int) (sizeof(unsigned) * 8 - 1) - __builtin_clz((unsigned) bits));
    uint8_t top = 0;
    uint8_t byte = (uint8_t) bits;
    if (sizeof(queue_bits_t) > 1 && (bits >> 8)) {
        top = 8;
        byte = (uint8_t) (bits >> 8);
    }
    if (byte & 0xF0u) {
        top += 4;
        byte >>= 4;
    }
    if (byte & 0x0Cu) {
        top += 2;
        byte >>= 2;
    }
    return (mt_prio_t) (top + (byte >> 1));
}

/* Highest non-empty level, -1 when the queue is empty; irq off. */
static MT_INLINE mt_prio_t queue_top_prio(void)
{
    queue_bits_t bits = queue_levels;
    return bits ? queue_highest_bit(bits) : -1;
}

/* Remove and return the oldest message of the highest level above floor,
 * or NULL when no level above floor holds one; irq off. */
static MT_INLINE msg_t *queue_pop_above(mt_prio_t floor)
{
    queue_bits_t bits = queue_levels;
    if (!bits) return NULL;
    mt_prio_t top = queue_highest_bit(bits);
    if (top <= floor) return NULL;
    queue_level_t *l = &queue_level[(uint8_t) top];
    msg_t *m = l->head;
    l->head = m->next;
    if (!l->head) {
        l->tail = NULL;
        queue_levels = (queue_bits_t) (bits & ~queue_bit(top));
    }
    m->next = NULL;
    return m;
}

/* True if some level above `floor` held a message at the instant of
 * reading; a hint, read without the lock (see drain_above()). */
static MT_INLINE bool queue_may_outrank(mt_prio_t floor)
{
    queue_bits_t bits = queue_levels;
    if (floor < 0) return bits != 0;
    if (sizeof(unsigned) != 2) return (unsigned) (bits >> floor) > 1u;
    /* Levels above floor: every bit from floor + 1 up, without a shift loop. */
    return (bits & (queue_bits_t) ~((queue_bit(floor) << 1) - 1u)) != 0;
}

/* ---- timer.c: a timer's own expiry message ----
 *
 * The release is inline: it follows every expiry's handler, and the list
 * it may have to search is empty unless a timer was stopped (or a one-shot
 * expired) with its expiry still waiting. */

/* Timer blocks out of the delta list whose expiry message still waits;
 * for the test below only. */
extern struct timer_block *timer_retired;

/* Free m's timer block if it is retired (the release below); irq off. */
void timer_free_if_retired(msg_t *m);

/* A message of MSG_TIMER_BLOCK is released: its timer may use it again,
 * or its block goes if the timer was retired meanwhile; irq off. */
static MT_INLINE void timer_expiry_release_irq_off(msg_t *m)
{
    m->flags = 0;
    if (timer_retired) timer_free_if_retired(m);
}

/* ---- sched.c: migration support (sched_migrate.c builds on these) ---- */

/* A message block from the pool; NULL (logged) when it is empty. */
msg_t *sched_msg_alloc(void);
/* Give pool block m (flags set) its own copy of a payload: in the block if
 * it fits, else on the heap (MSG_HEAP); MT_ERR_NO_MEM, logged, if not. */
mt_err_t sched_msg_copy_payload(msg_t *m, const void *data, uint16_t len);
/* Free a message that is in no list, and its heap payload; its block goes
 * back to the pool or to its timer (MSG_TIMER_BLOCK). */
void sched_msg_free(msg_t *m);
/* Count messages added to (or taken from) a task's held list; irq off. */
void sched_held_add(int16_t delta);
/* The next creation-order stamp; irq off. */
uint16_t sched_msg_stamp(void);
/* Run t's handler for m now, on top of the caller, and return its result
 * (MT_ERR_NO_TASK if it killed itself); the payload is released after.
 * t must not be on the stack. Task context. */
mt_err_t sched_task_call(task_t *t, msg_t *m);
/* Enter t in the pid table / remove it and every route cached to it; irq off. */
void sched_task_link(task_t *t);
void sched_task_unlink(task_t *t);
/* Return an unlinked control block to its cache. */
void sched_task_free(task_t *t);
/* The remote control block of pid, or NULL. */
remote_task_t *sched_remote_find(mt_pid_t pid);
/* Message blocks left in the pool (a hint: interrupts may take one). */
uint8_t sched_msg_spare(void);

#endif /* MOTET_SCHED_INTERNAL_H */
