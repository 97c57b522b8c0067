/* SPDX-License-Identifier: MIT */
/*
 * The message scheduler: task control blocks and the dispatch rules.
 *
 * There is one stack. A handler that must run now is simply called, nested
 * on top of whatever is running (stack preemption); the C call stack is the
 * scheduler's stack of frames, and S.current / S.running_prio describe its
 * top. A message that cannot run now waits in the priority queue
 * (sched_queue.c) and runs when every frame that outranks it has returned.
 *
 * Threads (MOTET_THREADS, thread.c) add contexts with stacks of their own.
 * This stack is then one context among them, K: S describes K's frames
 * even while a thread runs, and the hooks below hand over the CPU. A
 * handler only ever runs on K: a send from a thread that must run at once
 * is handed to K (thread_call_on_k), and every drain first lets threads
 * that outrank K's frame and queue head run (thread_k_yield). With threads
 * compiled out the hooks are empty inline functions and vanish.
 *
 * The fast path. Most sends are the plain case of rule 1: a handler on K
 * sends to an initialised local task that is on no frame, not frozen, not
 * being killed, not bound to a thread, and at least as important as the
 * sender. sched_send() and sched_send_to() recognise it with one flags test
 * and two comparisons (runs_at_once) and call the handler straight away
 * (run_at_once). A send from K that must wait, to such a task on the stack
 * or less important, with no payload or a small borrowed one, is queued
 * under the lock of the same lookup (send_waiting); every other case, and
 * every send from an interrupt or a thread, goes through sched_deliver(),
 * which applies the rules one by one.
 * Both paths share the frame push and pop, so the rules stay in one place.
 */
#include <string.h>

#include "log_ring.h"
#include "motet/bus.h"
#include "motet/log.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/port.h"
#include "motet/slab.h"
#include "motet/timer.h"
#include "motet/timesync.h"
#include "sched_internal.h"
#include "thread_internal.h"

SLAB_DEFINE(task_cache, task_t, MOTET_MAX_TASKS);
/* A queued message's block: the message and room for a small borrowed
 * payload (a verdict, a decision, an event code), which is then copied
 * into the block itself rather than into a heap block of its own: an
 * allocation, a free and their two log records less per such message.
 * The union aligns it for any type that fits. Five bytes, not four: on
 * 8-bit cores msg_t has 12, and a block of 17, an odd size, finds its index
 * with one multiply (slab.h) where one of 16 needs a 16-bit shift, which
 * such a core does one bit per loop turn. */
#define MSG_INLINE_BYTES 5u
typedef struct msg_block {
    msg_t msg; /* first: a msg_t * to it is a pointer to the block */
    union {
        uint8_t bytes[MSG_INLINE_BYTES];
        uint32_t align;
    } inline_payload;
} msg_block_t;

SLAB_DEFINE(msg_cache, msg_block_t, MOTET_MAX_QUEUED_MSGS);
SLAB_DEFINE(remote_cache, remote_task_t, MOTET_MAX_REMOTE_TASKS);

/* Local tasks are found by pid in an open-addressed table (linear probing),
 * a power of two at least as large as the task cache: application pids are
 * handed out consecutively, so a lookup is one probe in practice. */
#define TASK_TABLE_SIZE                                                                            \
    (MOTET_MAX_TASKS <= 8    ? 8u                                                                  \
     : MOTET_MAX_TASKS <= 16 ? 16u                                                                 \
     : MOTET_MAX_TASKS <= 32 ? 32u                                                                 \
     : MOTET_MAX_TASKS <= 64 ? 64u                                                                 \
                             : 256u)
/* The home slot folds the high nibble in (a permutation of the 8-bit pids):
 * the system tasks (0xF0, 0xF1, ...) then take the top slots counting down,
 * while application pids (0x10, 0x11, ...) fill the table from the bottom,
 * so that neither displaces the other until the table is nearly full. */
#define TASK_SLOT(pid)  ((uint8_t) (((pid) ^ ((pid) >> 4)) & (TASK_TABLE_SIZE - 1u)))
#define NEXT_SLOT(slot) ((uint8_t) (((slot) + 1u) & (TASK_TABLE_SIZE - 1u)))

static struct {
    task_t *tasks[TASK_TABLE_SIZE]; /* live local tasks, hashed by pid */
    remote_task_t *remotes[MOTET_MAX_REMOTE_TASKS];
    task_t *current;        /* task of the top handler frame, NULL if none */
    mt_prio_t running_prio; /* its priority, -1 when the stack is empty */
    uint8_t depth;          /* handler frames on the stack */
    uint8_t held;           /* messages held for uninitialised tasks */
    uint16_t next_seq;      /* creation-order stamp of the next message */
    volatile bool stop;
    unsigned dispatched;
    sched_remote_send_fn remote_send;
    /* The lock state a fast path hands on (send_how_t). */
    port_irq_state_t handed_irq;
} S;

void sched_init(void)
{
    memset(&S, 0, sizeof S);
    S.running_prio = -1;
    slab_init(&task_cache);
    slab_init(&msg_cache);
    slab_init(&remote_cache);
    queue_init();
    thread_init(); /* no thread, K runs (empty without threads) */
}

/* ---- lookup ---- */

task_t *sched_find_task(mt_pid_t pid)
{
    uint8_t slot = TASK_SLOT(pid);
    for (uint16_t probes = 0; probes < TASK_TABLE_SIZE; probes++) {
        task_t *t = S.tasks[slot];
        if (!t) return NULL;
        if (t->pid == pid) return t;
        slot = NEXT_SLOT(slot);
    }
    return NULL;
}

static void table_insert(task_t *t)
{
    uint8_t slot = TASK_SLOT(t->pid);
    while (S.tasks[slot]) slot = NEXT_SLOT(slot);
    S.tasks[slot] = t;
}

/* Remove t and close the gap (backward-shift deletion), so that lookups
 * can keep stopping at the first empty slot. */
static void table_remove(const task_t *t)
{
    uint8_t hole = TASK_SLOT(t->pid);
    while (S.tasks[hole] != t) hole = NEXT_SLOT(hole);
    S.tasks[hole] = NULL;
    for (uint8_t next = NEXT_SLOT(hole); S.tasks[next]; next = NEXT_SLOT(next)) {
        uint8_t home = TASK_SLOT(S.tasks[next]->pid);
        /* Move it back unless its home lies cyclically in (hole, next]. */
        bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
        if (stays) continue;
        S.tasks[hole] = S.tasks[next];
        S.tasks[next] = NULL;
        hole = next;
    }
}

/* The slot holding pid's remote block; for MT_PID_NONE, a free slot. */
static remote_task_t **find_remote_slot(mt_pid_t pid)
{
    for (uint8_t i = 0; i < MOTET_MAX_REMOTE_TASKS; i++) {
        remote_task_t *r = S.remotes[i];
        if (r ? r->pid == pid : pid == MT_PID_NONE) return &S.remotes[i];
    }
    return NULL;
}

static remote_task_t *find_remote(mt_pid_t pid)
{
    remote_task_t **slot = pid == MT_PID_NONE ? NULL : find_remote_slot(pid);
    return slot ? *slot : NULL;
}

bool sched_task_exists(mt_pid_t pid)
{
    return sched_find_task(pid) != NULL;
}

static MT_INLINE mt_pid_t current_pid(void)
{
    if (MOTET_THREADS && thread_running()) {
        task_t *bound = thread_running_task();
        return bound ? bound->pid : MT_PID_NONE;
    }
    return S.current ? S.current->pid : MT_PID_NONE;
}

mt_pid_t sched_current_pid(void)
{
    return current_pid();
}

/* sched_find_task() with its first probe inline: pids are consecutive, so
 * the home slot almost always holds the task. */
static MT_INLINE task_t *find_local(mt_pid_t pid)
{
    task_t *t = S.tasks[TASK_SLOT(pid)];
    if (!t || t->pid == pid) return t;
    return sched_find_task(pid);
}

/* A send looks its destination up and tests it with interrupts on, so a
 * handler run at an interrupt's exit may kill the task in between and free
 * its control block. With interrupts off, true if t is still pid's; once
 * pushed (on the stack) or its message queued, a kill waits or purges. */
static MT_INLINE bool still_there(const task_t *t, mt_pid_t pid)
{
    return find_local(pid) == t;
}

mt_prio_t sched_running_prio(void)
{
    return S.running_prio;
}

uint8_t sched_stack_depth(void)
{
    return S.depth;
}

uint8_t sched_queued_count(void)
{
    port_irq_state_t s = port_irq_save();
    uint8_t n = (uint8_t) (queue_length() + S.held);
    port_irq_restore(s);
    return n;
}

void sched_set_remote_send(sched_remote_send_fn fn)
{
    S.remote_send = fn;
}

/* ---- task creation ---- */

static bool pid_is_assignable(mt_pid_t pid)
{
    /* Virtual pids (multicast, time sync) have no control block; the
     * migrator is a kernel task (migrate.c). */
    return pid != MT_PID_NONE && pid != MT_PID_INVALID &&
           (pid < MT_PID_SYSTEM || pid > MT_PID_TIMESYNC);
}

static mt_err_t copy_routes(task_t *t, const task_spec_t *spec)
{
    if (!spec->n_routes) return MT_OK;
    t->routes = mem_alloc_owned(spec->n_routes * sizeof(out_route_t), spec->pid);
    if (!t->routes) return MT_ERR_NO_MEM;
    for (uint8_t i = 0; i < spec->n_routes; i++) {
        t->routes[i].local = NULL;
        t->routes[i].pid = spec->routes[i].pid;
        t->routes[i].port = spec->routes[i].port;
    }
    t->n_routes = spec->n_routes;
    return MT_OK;
}

static mt_err_t validate_spec(const task_spec_t *spec)
{
    if (!spec || !spec->handler || !pid_is_assignable(spec->pid)) return MT_ERR_INVALID;
    if (spec->prio < 0 || spec->prio >= MOTET_PRIO_LEVELS) return MT_ERR_INVALID;
    if (spec->flags & ~TASK_MOVABLE) return MT_ERR_INVALID;
    if (spec->n_routes && !spec->routes) return MT_ERR_INVALID;
    if (sched_find_task(spec->pid) || find_remote(spec->pid)) return MT_ERR_EXISTS;
    return MT_OK;
}

mt_err_t sched_task_create(const task_spec_t *spec)
{
    mt_err_t err = validate_spec(spec);
    if (err) return log_error(err);
    task_t *t = slab_alloc(&task_cache); /* logs MT_ERR_NO_SLAB itself */
    if (!t) return MT_ERR_NO_SLAB;
    t->handler = spec->handler;
    t->pid = spec->pid;
    t->prio = spec->prio;
    t->flags = spec->flags;
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
    table_insert(t);
    log_event(EV_CREATE, t->pid, (uint16_t) t->prio);
    return MT_OK;
}

mt_err_t sched_task_create_remote(mt_pid_t pid, mt_prio_t prio, mt_module_t module)
{
    if (!pid_is_assignable(pid) || prio < 0 || prio >= MOTET_PRIO_LEVELS)
        return log_error(MT_ERR_INVALID);
    if (sched_find_task(pid) || find_remote(pid)) return log_error(MT_ERR_EXISTS);
    remote_task_t **slot = find_remote_slot(MT_PID_NONE);
    if (!slot) return log_error(MT_ERR_NO_SLAB);
    remote_task_t *r = slab_alloc(&remote_cache); /* logs its own exhaustion */
    if (!r) return MT_ERR_NO_SLAB;
    r->pid = pid;
    r->prio = prio;
    r->module = module;
    *slot = r;
    return MT_OK;
}

mt_err_t sched_task_remove_remote(mt_pid_t pid)
{
    remote_task_t **slot = pid == MT_PID_NONE ? NULL : find_remote_slot(pid);
    if (!slot) return log_error(MT_ERR_NO_TASK);
    slab_free(&remote_cache, *slot);
    *slot = NULL;
    return MT_OK;
}

/* ---- running handlers ---- */

static void free_payload(msg_t *m)
{
    if (m->data) mem_free(m->data);
    m->flags &= (uint8_t) ~MSG_HEAP;
    m->data = NULL;
}

/* Free a heap payload the message still owns; borrowed ones stay. */
static MT_INLINE void release_payload(msg_t *m)
{
    if (m->flags & MSG_HEAP) free_payload(m);
    m->data = NULL;
}

/* Give m's block back where it came from: to its timer (MSG_TIMER_BLOCK)
 * or to the pool; irq off. Every message block the kernel is done with
 * comes here. */
static MT_INLINE void give_block_irq_off(msg_t *m)
{
    if (m->flags & MSG_TIMER_BLOCK)
        timer_expiry_release_irq_off(m);
    else
        SLAB_PUT_KNOWN_IRQ_OFF(msg_cache, m); /* lists hold blocks of the pool or timers only */
}

static void release_held(task_t *t);
static void finish_kill(task_t *t);
static void destroy(task_t *t);

/* The frame below a handler's: what the top of the stack becomes again
 * when the handler returns. */
typedef struct frame {
    task_t *task;
    mt_prio_t prio;
} frame_t;

/* Push a frame for t on top of the stack. */
static MT_INLINE void push_frame(task_t *t)
{
    S.current = t;
    S.running_prio = t->prio;
    S.depth++;
    t->flags |= TASK_ON_STACK;
}

static MT_INLINE void pop_frame(task_t *t, frame_t below)
{
    t->flags &= (uint8_t) ~TASK_ON_STACK;
    S.depth--;
    S.current = below.task;
    S.running_prio = below.prio;
}

/* A dispatch's END record: appended in line on the paths every message
 * takes (in_line: run_at_once(), drain_held_off()), through a call to
 * log_record() on the others, which keeps them small on 8-bit cores. */
static MT_INLINE void log_dispatch(bool in_line, log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    if (in_line)
        log_event_inline(type, pid, arg);
    else
        log_event(type, pid, arg);
}

/* call_pushed() once its start is logged. */
static MT_INLINE void call_started(task_t *t, msg_t *m, frame_t below, bool in_line)
{
    mt_err_t result = t->handler(t->state, m);
    log_dispatch(in_line, EV_END, t->pid, m->port);
    if (result != MT_OK) log_error(result);
    pop_frame(t, below);
    S.dispatched++;
    if (m->flags & MSG_HEAP) free_payload(m);
}

/* Call t's handler in the frame just pushed for it, pop to `below` and
 * free the payload unless the handler took it. Interrupts are enabled. */
static MT_INLINE void call_pushed(task_t *t, msg_t *m, frame_t below)
{
    log_event(EV_START, t->pid, m->port);
    call_started(t, m, below, false);
}

/* After a handler of a task not yet initialised or being killed: INIT
 * releases the held messages (rule 7), a pending kill completes. */
static MT_NOINLINE void after_handler_rare(task_t *t, const msg_t *m)
{
    if (!(t->flags & TASK_INITIALISED) && m->port == PORT_INIT) {
        t->flags |= TASK_INITIALISED;
        release_held(t);
    }
    if (t->flags & TASK_KILL_PENDING) finish_kill(t);
}

/* After t's handler: one flags test sends the rare cases out of line. */
static MT_INLINE void after_handler(task_t *t, const msg_t *m)
{
    if ((t->flags & (TASK_INITIALISED | TASK_KILL_PENDING)) != TASK_INITIALISED)
        after_handler_rare(t, m);
}

/* Run t's handler in the frame just pushed for it, then pop to `below`. */
static MT_INLINE void run_pushed(task_t *t, msg_t *m, frame_t below)
{
    call_pushed(t, m, below);
    after_handler(t, m);
}

/* Push a frame for t, run its handler, pop. Interrupts are enabled. */
static void run_handler(task_t *t, msg_t *m)
{
    frame_t below = {S.current, S.running_prio};
    push_frame(t);
    run_pushed(t, m, below);
}

#if MOTET_THREADS
/* A handler a thread must run at once: K runs it for the thread. */
typedef struct k_call {
    task_t *task;
    msg_t *msg;
    void *data;
    uint8_t flags;
    mt_err_t result;
} k_call_t;

static mt_err_t run_checked(task_t *t, msg_t *m, void *data, uint8_t flags);

static void run_call(void *arg)
{
    k_call_t *c = arg;
    c->result = run_checked(c->task, c->msg, c->data, c->flags);
}

static mt_err_t run_on_k(task_t *t, msg_t *m, void *data, uint8_t flags)
{
    k_call_t c = {t, m, data, flags, MT_OK};
    thread_call_on_k(run_call, &c);
    return c.result;
}

static void finish_kill_call(void *arg)
{
    finish_kill(arg);
}
#else
static inline mt_err_t run_on_k(task_t *t, msg_t *m, void *data, uint8_t flags)
{
    (void) t;
    (void) m;
    (void) data;
    (void) flags;
    return MT_OK;
}
static inline void finish_kill_call(void *arg)
{
    (void) arg;
}
#endif

/* Rule 5: run queued messages while they outrank the frame below.
 *
 * While it drains, the running priority never drops back to the floor:
 * from taking a message off the queue to starting its handler, and from
 * one handler's return to taking the next, it stays at the level just
 * taken. An interrupt that comes in between therefore runs at its exit
 * only what outranks that level, as it would during the handler (rule 3);
 * seeing the floor instead, it would run later messages of the level before
 * the one just taken (rule 2), and drain the rest of the queue itself,
 * nested here, holding this loop's message, again for each such interrupt
 * under a steady load: stack and message pool without bound. The priority
 * goes back to the floor with interrupts off, once nothing above the floor
 * is left, and they stay off on return: entered and left with interrupts
 * off, it turns them on only to run a handler (or a thread), so a caller
 * that finds nothing to run never lets an interrupt in (an interrupt's
 * exit, sched_isr_exit()). */
static void drain_held_off(mt_prio_t floor)
{
    for (;;) {
        /* Threads that outrank the frame and the head. The hint covers a
         * handler a thread handed to K too: that thread waits ready. */
        if (thread_ready_hint()) thread_k_yield(floor); /* turns them on only to run */
        msg_t *m = queue_pop_above(floor);
        if (!m) {
            S.running_prio = floor;
            return;
        }
        task_t *t = find_local(m->dst);
        task_t *below = S.current;
        if (t) {
            push_frame(t);
            /* Logged with interrupts still off: it needs no lock of its own. */
            log_event_inline_irq_off(EV_START, t->pid, m->port);
        }
        port_irq_enable();
        if (t) {
            call_started(t, m, (frame_t){below, t->prio}, true); /* held: see above */
            after_handler(t, m);
        } else {
            release_payload(m); /* unreachable: kill purges its messages */
        }
        (void) port_irq_save();
        give_block_irq_off(m);
    }
}

/* drain_held_off() for a caller with interrupts on. The first empty check
 * needs no lock: the caller has already restored the running priority, so
 * an interrupt that queues a message outranking this frame runs it at its
 * own exit; a stale "empty" loses nothing. */
static void drain_above(mt_prio_t floor)
{
    if (!thread_ready_hint() && queue_levels == 0) return;
    port_irq_state_t s = port_irq_save();
    drain_held_off(floor);
    port_irq_restore(s);
}

/* Whether a drain at `floor` may find work: a message above it or a ready
 * thread. Read without the lock, like drain_above()'s first check, and
 * safe for the same reason: whatever an interrupt adds after this read and
 * outranks the frame runs at that interrupt's exit. */
static MT_INLINE bool drain_may_run(mt_prio_t floor)
{
    return queue_may_outrank(floor) || thread_ready_hint();
}

unsigned sched_run_pending(void)
{
    /* In a thread: whatever outranks it has run already. */
    if (MOTET_THREADS && thread_running()) return 0;
    unsigned before = S.dispatched;
    drain_above(S.running_prio);
    return S.dispatched - before;
}

/* ---- queueing ---- */

/* A borrowed payload of up to MSG_INLINE_BYTES copied into m's own block,
 * unrolled: for so few bytes a call to memcpy() costs more than the copy,
 * and on 8 bits it makes the caller keep its values in saved registers. */
_Static_assert(MSG_INLINE_BYTES == 5u, "copy_into_block() copies up to five bytes");
static MT_INLINE void copy_into_block(msg_t *m, const void *data, uint16_t len)
{
    m->len = len;
    m->data = NULL;
    if (len) {
        uint8_t *to = ((msg_block_t *) m)->inline_payload.bytes;
        const uint8_t *from = data;
        m->data = to;
        switch (len) {
        case 5:
            to[4] = from[4]; /* fall through */
        case 4:
            to[3] = from[3]; /* fall through */
        case 3:
            to[2] = from[2]; /* fall through */
        case 2:
            to[1] = from[1]; /* fall through */
        default:
            to[0] = from[0];
        }
    }
}

/* Give the message block m its own copy of a borrowed payload (in the block
 * when it fits), or take a heap one. */
static mt_err_t own_payload(msg_t *m, void *data, uint16_t len, uint8_t flags)
{
    m->len = len;
    if (!len) {
        if (flags & MSG_HEAP) mem_free(data);
        m->data = NULL;
        return MT_OK;
    }
    if (!(flags & MSG_HEAP) && len <= MSG_INLINE_BYTES) {
        copy_into_block(m, data, len);
        return MT_OK;
    }
    if (flags & MSG_HEAP) {
        if (mem_set_owner(data, MEM_OWNER_KERNEL) != MT_OK) return MT_ERR_BAD_POINTER;
        m->data = data;
        m->flags |= MSG_HEAP;
        return MT_OK;
    }
    m->data = mem_alloc_owned(len, MEM_OWNER_KERNEL);
    if (!m->data) return MT_ERR_NO_MEM;
    memcpy(m->data, data, len);
    m->flags |= MSG_HEAP;
    return MT_OK;
}

static void hold(task_t *t, msg_t *m)
{
    msg_t **link = &t->held;
    while (*link) link = &(*link)->next;
    m->next = NULL;
    *link = m;
    S.held++;
}

/* Rule 7: once PORT_INIT is handled, held messages join the queue in
 * creation order; the caller's drain then runs them if they are due. */
static void release_held(task_t *t)
{
    port_irq_state_t s = port_irq_save();
    while (t->held) {
        msg_t *m = t->held;
        t->held = m->next;
        S.held--;
        queue_insert_by_seq(m, t->prio);
    }
    port_irq_restore(s);
}

/* enqueue() with the sender given: `src` need not be the running task (a
 * message that came over the bus names its sender on the other module). */
static mt_err_t enqueue_as(task_t *t, mt_pid_t src, mt_pid_t pid, mt_port_t port, void *data,
                           uint16_t len, uint8_t flags, bool from_isr)
{
    if (!from_isr && (t->flags & TASK_FROZEN) && sched_msg_spare() <= MIG_RESERVE)
        return log_error(MT_ERR_QUEUE_FULL); /* the migrator's reserve: try again later */
    msg_t *m = SLAB_TAKE(msg_cache);         /* every field is set below */
    if (!m) return log_error(MT_ERR_QUEUE_FULL);
    m->next = NULL;
    m->dst = pid;
    m->port = port;
    m->src = src;
    m->flags = from_isr ? MSG_FROM_ISR : 0;
    m->len = 0;
    m->data = NULL;
    mt_err_t err = len || flags ? own_payload(m, data, len, flags) : MT_OK;
    if (err) { /* the memory manager has logged why */
        slab_free(&msg_cache, m);
        return err;
    }
    port_irq_state_t s = port_irq_save();
    if (!from_isr && !still_there(t, m->dst)) { /* killed meanwhile */
        port_irq_restore(s);
        if ((m->flags & MSG_HEAP) && (flags & MSG_HEAP))
            mem_set_owner(data, m->src); /* the sender keeps it on error */
        else
            release_payload(m);
        SLAB_PUT(msg_cache, m);
        return log_error(MT_ERR_NO_TASK);
    }
    m->seq = S.next_seq++;
    if (MOTET_THREADS && (t->flags & TASK_THREAD))
        thread_mail_push((thread_t *) t->state, m);
    else if (!(t->flags & TASK_INITIALISED) && port != PORT_INIT)
        hold(t, m);
    else
        queue_push(m, t->prio);
    port_irq_restore(s);
    return MT_OK;
}

static mt_err_t enqueue(task_t *t, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                        uint8_t flags, bool from_isr)
{
    return enqueue_as(t, from_isr ? MT_PID_NONE : current_pid(), pid, port, data, len, flags,
                      from_isr);
}

/* ---- sending ---- */

/* Pop a frame pushed for a handler that did not run; a kill asked for
 * meanwhile completes. */
static void unpush(task_t *t, frame_t below)
{
    pop_frame(t, below);
    if (t->flags & TASK_KILL_PENDING) finish_kill(t);
}

/* Rules 1 and 4: run now if initialised (or this is its INIT), not on the
 * stack, not frozen, and at least as important as the running handler. */
static bool can_run_now(const task_t *t, mt_port_t port)
{
    if (t->flags & (TASK_ON_STACK | TASK_FROZEN | TASK_KILL_PENDING | TASK_THREAD)) return false;
    if (!(t->flags & TASK_INITIALISED) && port != PORT_INIT) return false;
    /* A thread counts as the running task: its level decides. */
    if (MOTET_THREADS && thread_running()) return t->prio >= thread_running_prio();
    return t->prio >= S.running_prio;
}

/* A heap payload run at once goes straight to the destination (see
 * MSG_DST_OWNS): one hand-over where a queued message needs two. The
 * sender may be killed meanwhile (by the receiver, say) without taking the
 * block along, and the receiver cannot be: it is on the stack. */
static MT_INLINE bool give_to_receiver(void *data, const task_t *t)
{
    return mem_set_owner(data, t->pid) == MT_OK;
}

/* A heap payload goes to the receiver t (an empty one is freed at once);
 * false if it is not a live heap block (the heap has logged why). */
static bool adopt_payload(msg_t *m, void *data, const task_t *t)
{
    if (m->len) {
        m->flags = MSG_HEAP | MSG_DST_OWNS;
        return give_to_receiver(data, t);
    }
    mem_free(data);
    m->flags = 0;
    return true;
}

/* run_now() on the kernel stack, for K or for a thread's send (K runs it):
 * with interrupts off, t checked to be still m->dst's and able to run now,
 * its frame pushed; then the heap payload handed over (on the stack, the
 * receiver cannot be killed under it) and the handler run. A task killed
 * meanwhile gets nothing (MT_ERR_NO_TASK, the sender keeps its payload);
 * one frozen meanwhile gets the message queued. */
static mt_err_t run_checked(task_t *t, msg_t *m, void *data, uint8_t flags)
{
    frame_t below = {S.current, S.running_prio};
    port_irq_state_t s = port_irq_save();
    if (!still_there(t, m->dst)) {
        port_irq_restore(s);
        return log_error(MT_ERR_NO_TASK);
    }
    if (!can_run_now(t, m->port)) {
        port_irq_restore(s);
        return enqueue(t, m->dst, m->port, data, m->len, flags, false);
    }
    push_frame(t);
    port_irq_restore(s);
    if ((flags & MSG_HEAP) && !adopt_payload(m, data, t)) {
        unpush(t, below); /* the caller drains what came meanwhile */
        return MT_ERR_BAD_POINTER;
    }
    run_pushed(t, m, below);
    return MT_OK;
}

static mt_err_t run_now(task_t *t, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                        uint8_t flags)
{
    msg_t m = {.next = NULL,
               .data = len ? data : NULL,
               .len = len,
               .dst = pid,
               .port = port,
               .src = sched_current_pid(),
               .flags = 0}; /* a heap payload's flags are set as it is handed over */
    /* No creation stamp: the stamp orders queued messages, and this one
     * never waits in the queue. A thread's send must run on the kernel
     * stack: K preempts the thread for it, and the message stays on the
     * thread's stack meanwhile. */
    if (MOTET_THREADS && thread_running()) return run_on_k(t, &m, data, flags);
    mt_err_t err = run_checked(t, &m, data, flags);
    if (drain_may_run(S.running_prio)) drain_above(S.running_prio);
    return err;
}

/* ---- the fast path: rule 1 in its common case ---- */

/* Flags that decide rules 1, 4 and 7 for a message that is not INIT: the
 * task must be initialised and none of the others may be set. */
#define RUN_NOW_FLAGS                                                                              \
    (TASK_INITIALISED | TASK_ON_STACK | TASK_FROZEN | TASK_KILL_PENDING | TASK_THREAD)

/* A task-context send that can_run_now() would accept, from K (the caller
 * has ruled out a running thread; K runs only while none does); false
 * sends the message the long way (sched_deliver), which decides it again. */
static MT_INLINE bool runs_at_once_from_k(const task_t *t)
{
    return (t->flags & RUN_NOW_FLAGS) == TASK_INITIALISED && t->prio >= S.running_prio &&
           !port_in_isr();
}

/* runs_at_once_from_k() for a caller that has not yet ruled out a thread. */
static MT_INLINE bool runs_at_once(const task_t *t)
{
    return runs_at_once_from_k(t) && !thread_running();
}

/* Run t's handler now, nested on the caller (rule 1), for a message that
 * never waits: no queue block, no creation stamp, a borrowed payload passed
 * as is. Then run what the handler queued above the sender (rule 5). The
 * message is filled field by field: a zeroing loop costs more on 8 bits.
 * The caller looked t up and tested it with interrupts off (state `s`), so
 * no handler run at an interrupt's exit could kill it in between; its frame
 * is pushed before they come back on, and on the stack a kill waits. */
static MT_INLINE mt_err_t run_at_once_body(task_t *t, port_irq_state_t s, mt_port_t port,
                                           void *data, uint16_t len, uint8_t flags)
{
    frame_t below = {S.current, S.running_prio};
    push_frame(t);
    port_irq_restore(s);
    msg_t m;
    m.next = NULL;
    m.data = len ? data : NULL;
    m.len = len;
    m.seq = 0;
    m.dst = t->pid;
    m.port = port;
    m.src = below.task ? below.task->pid : MT_PID_NONE;
    m.flags = flags;
    /* On the stack now: the receiver cannot be killed under its payload. */
    if (flags && !adopt_payload(&m, data, t)) {
        log_event(EV_SEND, m.src, (uint16_t) ((m.dst << 8) | m.port)); /* after its ERROR */
        unpush(t, below);
        if (drain_may_run(below.prio)) drain_above(below.prio);
        return MT_ERR_BAD_POINTER;
    }
    /* The send and the start it causes, at the same instant: one record. */
    log_event_inline(EV_RUN, m.dst, (uint16_t) ((m.src << 8) | m.port));
    call_started(t, &m, below, true);
    if (t->flags & TASK_KILL_PENDING) finish_kill(t);
    if (drain_may_run(below.prio)) drain_above(below.prio);
    return MT_OK;
}

/* How the fast paths hand a send on to run_at_once() or send_waiting():
 * with interrupts still off since the lookup, the state to restore in
 * S.handed_irq (nothing can run between the store and the callee's read)
 * and the port and flags in one 16-bit argument. The callee then takes four
 * arguments, which 8-bit cores pass in registers the caller need not save,
 * so that the caller saves none and the call is a jump. */
typedef uint16_t send_how_t;

static MT_INLINE send_how_t send_how(port_irq_state_t s, mt_port_t port, uint8_t flags)
{
    S.handed_irq = s;
    return (send_how_t) ((uint16_t) port << 8 | flags);
}

static MT_INLINE mt_port_t how_port(send_how_t how)
{
    return (mt_port_t) (how >> 8);
}

static MT_INLINE uint8_t how_flags(send_how_t how)
{
    return (uint8_t) how;
}

/* run_at_once_body() of a send handed on by send_how(). */
static MT_NOINLINE mt_err_t run_at_once(task_t *t, send_how_t how, void *data, uint16_t len)
{
    return run_at_once_body(t, S.handed_irq, how_port(how), data, len, how_flags(how));
}

/* run_at_once() for sched_send(), the send along a task graph's edges:
 * in line on 32-bit cores (one frame where the call makes two, about 20
 * instructions less per message), a jump on 8-bit ones, where a second copy
 * of the body would cost several hundred bytes of flash. */
static MT_INLINE mt_err_t run_at_once_routed(task_t *t, port_irq_state_t s, mt_port_t port,
                                             void *data, uint16_t len, uint8_t flags)
{
    if (sizeof(unsigned) > 2) return run_at_once_body(t, s, port, data, len, flags);
    return run_at_once(t, send_how(s, port, flags), data, len);
}

/* A task-context send from K to an initialised local task that must wait
 * (it is on the stack, or less important than the sender), with no payload
 * or a small borrowed one: enqueue() would take a block, copy the payload
 * into it and queue it, and the lock the caller holds since its lookup
 * already rules out the kill enqueue() checks for. Not frozen (the
 * migrator's reserve, enqueue()), not being killed, not a thread's. */
#define QUEUE_NOW_FLAGS (TASK_INITIALISED | TASK_FROZEN | TASK_KILL_PENDING | TASK_THREAD)

static MT_INLINE bool queues_at_once(const task_t *t, uint16_t len, uint8_t flags)
{
    return (t->flags & QUEUE_NOW_FLAGS) == TASK_INITIALISED && !flags && len <= MSG_INLINE_BYTES &&
           !thread_running() && !port_in_isr();
}

/* A send from K that cannot run at once, with interrupts off since the
 * caller looked t up (handed on by send_how()): one queues_at_once() accepts is queued
 * in that critical section, so that t cannot be killed in between; any
 * other, or one that finds the pool empty, goes to sched_deliver(), which
 * logs why it fails. A jump in the caller's tail, with nothing of the
 * caller's live across it. */
static MT_NOINLINE mt_err_t send_waiting(task_t *t, send_how_t how, void *data, uint16_t len)
{
    mt_port_t port = how_port(how);
    uint8_t flags = how_flags(how);
    mt_pid_t dst = t->pid; /* t is pid's while interrupts stay off */
    msg_t *m = queues_at_once(t, len, flags)
                   ? slab_take_irq_off(&msg_cache, SLAB_GEOMETRY(msg_cache))
                   : NULL;
    if (!m) {
        port_irq_restore(S.handed_irq);
        return sched_deliver(t, dst, port, data, len, flags, port_in_isr());
    }
    mt_pid_t src = S.current ? S.current->pid : MT_PID_NONE;
    copy_into_block(m, data, len);
    m->seq = S.next_seq++;
    m->dst = dst;
    m->port = port;
    m->src = src;
    m->flags = 0;
    queue_push(m, t->prio);
    /* Before the lock goes, so that it needs none of its own; the message
     * could not start before it anyway: t is on the stack below the sender
     * or less important, and an interrupt's exit runs only what outranks
     * the sender (rules 2 and 3). */
    log_event_inline_irq_off(EV_SEND, src, (uint16_t) ((dst << 8) | port));
    port_irq_restore(S.handed_irq);
    return MT_OK;
}

/* ---- the general path: every rule, one by one ---- */

mt_err_t sched_deliver(task_t *t, mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                       uint8_t flags, bool from_isr)
{
    /* pid, not t->pid: t was looked up for pid with interrupts on, and may
     * be another task's block by now; run_now() and enqueue() check it
     * with them off before they act on it (still_there()). */
    log_event(EV_SEND, from_isr ? MT_PID_NONE : current_pid(), (uint16_t) ((pid << 8) | port));
    /* Failures below are logged where they arise (queue, memory). */
    if (!from_isr && can_run_now(t, port)) return run_now(t, pid, port, data, len, flags);
    mt_err_t err = enqueue(t, pid, port, data, len, flags, from_isr);
    /* A message to a thread may have woken one that outranks the sender. */
    if (MOTET_THREADS && !err && !from_isr && (t->flags & TASK_THREAD)) thread_preempt_point();
    return err;
}

static mt_err_t send_remote(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags)
{
    remote_task_t *r = find_remote(pid);
    if (!r) return log_error(MT_ERR_NO_TASK);
    if (!S.remote_send) return log_error(MT_ERR_NO_ROUTE);
    msg_t m = {.next = NULL,
               .data = data,
               .len = len,
               .dst = pid,
               .port = port,
               .src = sched_current_pid(),
               .flags = (uint8_t) (flags & MSG_HEAP)};
    mt_err_t err = S.remote_send(r->module, &m, r->prio);
    if (err) return log_error(err);
    if (flags & MSG_HEAP) mem_free(data); /* the bus manager copied it */
    return MT_OK;
}

static mt_err_t check_send_args(mt_port_t port, const void *data, uint16_t len, uint8_t flags)
{
    if (flags & (uint8_t) ~MSG_HEAP) return MT_ERR_INVALID;
    if (len && !data) return MT_ERR_INVALID;
    if (port >= PORT_LIMIT) return MT_ERR_NO_PORT;
    return MT_OK;
}

/* check_send_args() == MT_OK, as one inline test for the fast path. */
static MT_INLINE bool send_args_ok(mt_port_t port, const void *data, uint16_t len, uint8_t flags)
{
    return !(flags & (uint8_t) ~MSG_HEAP) && (data || !len) && port < PORT_LIMIT;
}

/* sched_send_to() for everything but the fast path. */
static MT_NOINLINE mt_err_t send_to_general(mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                                            uint8_t flags)
{
    if (pid == MT_PID_MULTICAST) {
        if (flags & (uint8_t) ~MSG_HEAP) return log_error(MT_ERR_INVALID);
        return bus_multicast(port, data, len, flags, port_in_isr());
    }
    if (pid == MT_PID_TIMESYNC) return timesync_send(data, len, flags);
    mt_err_t err = check_send_args(port, data, len, flags);
    if (err) return log_error(err);
    task_t *t = find_local(pid);
    if (!t) return send_remote(pid, port, data, len, flags);
    return sched_deliver(t, pid, port, data, len, flags, port_in_isr());
}

/* Virtual pids never sit in the task table, so a hit there is a local task:
 * the fast path needs no other test of the pid. */
mt_err_t sched_send_to(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags)
{
    if (!send_args_ok(port, data, len, flags)) return send_to_general(pid, port, data, len, flags);
    port_irq_state_t s = port_irq_save(); /* from the lookup to the push: see run_at_once() */
    task_t *t = S.tasks[TASK_SLOT(pid)];
    if (t && t->pid == pid) {
        if (runs_at_once(t)) return run_at_once(t, send_how(s, port, flags), data, len);
        return send_waiting(t, send_how(s, port, flags), data, len);
    }
    port_irq_restore(s);
    return send_to_general(pid, port, data, len, flags);
}

mt_err_t sched_send_local(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags)
{
    port_irq_state_t s = port_irq_save(); /* from the lookup to the push: see run_at_once() */
    task_t *t = find_local(pid);
    if (!t) {
        port_irq_restore(s);
        return log_error(MT_ERR_NO_TASK);
    }
    if (send_args_ok(port, data, len, flags)) {
        if (runs_at_once(t)) return run_at_once(t, send_how(s, port, flags), data, len);
        return send_waiting(t, send_how(s, port, flags), data, len);
    }
    port_irq_restore(s);
    return sched_deliver(t, pid, port, data, len, flags, port_in_isr());
}

/* sched_send() for everything but the fast path. */
static MT_NOINLINE mt_err_t send_general(uint8_t out, void *data, uint16_t len, uint8_t flags)
{
    task_t *self = MOTET_THREADS && thread_running() ? thread_running_task() : S.current;
    if (!self) return log_error(MT_ERR_STATE);
    if (out >= self->n_routes) return log_error(MT_ERR_NO_PORT);
    out_route_t *r = &self->routes[out];
    if (r->pid == MT_PID_MULTICAST || r->pid == MT_PID_TIMESYNC)
        return sched_send_to(r->pid, r->port, data, len, flags);
    mt_err_t err = check_send_args(r->port, data, len, flags);
    if (err) return log_error(err);
    if (!r->local) r->local = sched_find_task(r->pid);
    if (!r->local) return send_remote(r->pid, r->port, data, len, flags);
    return sched_deliver(r->local, r->pid, r->port, data, len, flags, port_in_isr());
}

/* A route's cached control block is set only for a local task (and cleared
 * when that task goes), so the fast path trusts it as it is. */
mt_err_t sched_send(uint8_t out, void *data, uint16_t len, uint8_t flags)
{
    task_t *self = S.current;
    if (self && !thread_running() && out < self->n_routes) {
        out_route_t *r = &self->routes[out];
        mt_port_t port = r->port;
        if (send_args_ok(port, data, len, flags)) {
            port_irq_state_t s = port_irq_save(); /* see run_at_once() */
            task_t *t = r->local;                 /* K runs: tested above */
            if (t && runs_at_once_from_k(t))
                return run_at_once_routed(t, s, port, data, len, flags);
            if (t) return send_waiting(t, send_how(s, port, flags), data, len);
            port_irq_restore(s);
        }
    }
    return send_general(out, data, len, flags);
}

/* sched_post_isr() for everything but the bare message below. */
static MT_NOINLINE mt_err_t post_isr_general(mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                                             uint8_t flags)
{
    if (pid == MT_PID_MULTICAST) return bus_multicast(port, data, len, flags, true);
    if (pid == MT_PID_TIMESYNC) return timesync_send(data, len, flags);
    mt_err_t err = check_send_args(port, data, len, flags);
    if (err) return log_error(err);
    task_t *t = find_local(pid);
    if (!t) return log_error(find_remote(pid) ? MT_ERR_NO_ROUTE : MT_ERR_NO_TASK);
    /* sched_deliver(..., true) without its tests for task context: an
     * interrupt's message always waits (rules 2 and 3). */
    log_event(EV_SEND, MT_PID_NONE, (uint16_t) ((t->pid << 8) | port));
    return enqueue(t, pid, port, data, len, flags, true);
}

/* The SEND record keeps MT_PID_NONE, as for any interrupt's post: its pid
 * is a task of this module's log, and the sender is not one. */
mt_err_t sched_post_from(mt_pid_t src, mt_pid_t pid, mt_port_t port, const void *data, uint16_t len)
{
    mt_err_t err = check_send_args(port, data, len, 0);
    if (err) return log_error(err);
    task_t *t = find_local(pid);
    if (!t) return log_error(find_remote(pid) ? MT_ERR_NO_ROUTE : MT_ERR_NO_TASK);
    log_event(EV_SEND, MT_PID_NONE, (uint16_t) ((t->pid << 8) | port));
    return enqueue_as(t, src, pid, port, (void *) data, len, 0, true);
}

/* Fill in the message block m, without payload, from an interrupt to the
 * initialised task t, and queue it (rules 2 and 3) or put it in the
 * mailbox of the thread bound to t; irq off. */
static MT_INLINE void push_bare_irq_off(task_t *t, mt_port_t port, msg_t *m, uint8_t flags)
{
    m->data = NULL;
    m->len = 0;
    m->seq = S.next_seq++;
    m->dst = t->pid;
    m->port = port;
    m->src = MT_PID_NONE;
    m->flags = flags;
    if (MOTET_THREADS && (t->flags & TASK_THREAD))
        thread_mail_push((thread_t *) t->state, m);
    else
        queue_push(m, t->prio);
}

/* enqueue() of a message without payload from an interrupt to an
 * initialised task, unlogged, in a block from the pool taken in the same
 * critical section. */
static MT_INLINE mt_err_t queue_bare_isr(task_t *t, mt_port_t port)
{
    port_irq_state_t s = port_irq_save();
    msg_t *m = slab_take_irq_off(&msg_cache, SLAB_GEOMETRY(msg_cache));
    if (!m) {
        port_irq_restore(s);
        slab_refused(&msg_cache);
        return log_error(MT_ERR_QUEUE_FULL);
    }
    push_bare_irq_off(t, port, m, MSG_FROM_ISR);
    port_irq_restore(s);
    return MT_OK;
}

/* queue_bare_isr() in a timer's own block `own` (MSG_TIMER_BLOCK), which
 * cannot run out; irq off, as every timer expiry is posted (timer.c), so
 * no lock of its own. Out of line, one copy for both ways in below. */
static MT_NOINLINE mt_err_t queue_timer_block(task_t *t, mt_port_t port, msg_t *own)
{
    push_bare_irq_off(t, port, own, MSG_FROM_ISR | MSG_TIMER_BLOCK);
    return MT_OK;
}

/* queue_bare_isr() with its SEND record. */
static MT_INLINE mt_err_t post_bare_isr(task_t *t, mt_port_t port)
{
    log_event(EV_SEND, MT_PID_NONE, (uint16_t) ((t->pid << 8) | port));
    return queue_bare_isr(t, port);
}

/* sched_post_timer_expiry() for all but its common case: out of line, so
 * that the calls here cost that case no saved registers. Rare: the last
 * expiry's message still waits, or the task is not initialised, or not in
 * its home slot. */
static MT_NOINLINE mt_err_t post_expiry_general(mt_pid_t pid, mt_port_t port, msg_t *own)
{
    task_t *t = sched_find_task(pid);
    if (!t) return log_error(find_remote(pid) ? MT_ERR_NO_ROUTE : MT_ERR_NO_TASK);
    if (port >= PORT_LIMIT) return log_error(MT_ERR_NO_PORT);
    if (own && (t->flags & TASK_INITIALISED)) return queue_timer_block(t, port, own);
    /* A block from the pool, held until its INIT if it must be. */
    return enqueue(t, pid, port, NULL, 0, 0, true);
}

/* No SEND record: the expiry's TIMER record, written by the caller just
 * before, stands for it (eventlog.py expands it). The common case, the
 * timer's own block for an initialised task in its home slot, is a tail
 * call that needs no saved registers. */
mt_err_t sched_post_timer_expiry(mt_pid_t pid, mt_port_t port, msg_t *own)
{
    task_t *t = S.tasks[TASK_SLOT(pid)];
    if (own && t && t->pid == pid && port < PORT_LIMIT && (t->flags & TASK_INITIALISED))
        return queue_timer_block(t, port, own);
    return post_expiry_general(pid, port, own);
}

/* Virtual pids never sit in the task table (see sched_send_to()). */
mt_err_t sched_post_isr(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags)
{
    task_t *t = S.tasks[TASK_SLOT(pid)];
    if (t && t->pid == pid && !len && !flags && port < PORT_LIMIT && (t->flags & TASK_INITIALISED))
        return post_bare_isr(t, port);
    return post_isr_general(pid, port, data, len, flags);
}

mt_err_t sched_task_init(mt_pid_t pid, const void *data, uint16_t len)
{
    task_t *t = sched_find_task(pid);
    if (!t) return log_error(MT_ERR_NO_TASK);
    if (t->flags & TASK_INITIALISED) return log_error(MT_ERR_STATE);
    if (len && !data) return log_error(MT_ERR_INVALID);
    return sched_deliver(t, pid, PORT_INIT, (void *) data, len, 0, false);
}

/* sched_take_msg() for all but a heap payload run at once and taken by
 * its receiver: out of line, so that the common case saves no registers. */
static MT_NOINLINE void *take_msg_general(msg_t *msg)
{
    if (!msg || !msg->len || !msg->data) return NULL;
    if (msg->flags & MSG_HEAP) {
        mt_pid_t taker = current_pid();
        if (!(msg->flags & MSG_DST_OWNS) || msg->dst != taker) mem_set_owner(msg->data, taker);
        /* No longer freed after the handler. */
        msg->flags &= (uint8_t) ~(MSG_HEAP | MSG_DST_OWNS);
        return msg->data;
    }
    void *copy = mem_alloc(msg->len);
    if (copy) memcpy(copy, msg->data, msg->len);
    return copy;
}

/* The common case: the receiver of a heap payload run at once (it owns the
 * block already, MSG_DST_OWNS) takes it; no hand-over left to do. */
void *sched_take_msg(msg_t *msg)
{
    if (msg && (msg->flags & (MSG_HEAP | MSG_DST_OWNS)) == (MSG_HEAP | MSG_DST_OWNS) && msg->len &&
        msg->data && msg->dst == current_pid()) {
        msg->flags &= (uint8_t) ~(MSG_HEAP | MSG_DST_OWNS);
        return msg->data;
    }
    return take_msg_general(msg);
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

static void forget_routes_to(const task_t *dead)
{
    for (uint16_t i = 0; i < TASK_TABLE_SIZE; i++) {
        task_t *t = S.tasks[i];
        for (uint8_t r = 0; t && r < t->n_routes; r++)
            if (t->routes[r].local == dead) t->routes[r].local = NULL;
    }
}

/* FINAL runs as the task's last handler; then everything it owned goes. */
static void finish_kill(task_t *t)
{
    t->flags &= (uint8_t) ~TASK_KILL_PENDING;
    t->flags |= TASK_FROZEN; /* nothing new may start on it */
    if (t->flags & TASK_INITIALISED) {
        msg_t m = {.next = NULL,
                   .data = NULL,
                   .len = 0,
                   .seq = 0,
                   .dst = t->pid,
                   .port = PORT_FINAL,
                   .src = sched_current_pid(),
                   .flags = 0};
        t->flags &= (uint8_t) ~TASK_INITIALISED; /* FINAL must not release held */
        run_handler(t, &m);
    }
    destroy(t);
}

/* Everything a dead task owned goes. */
static void destroy(task_t *t)
{
    uint16_t dropped = 0;
    port_irq_state_t s = port_irq_save();
    msg_t *queued = queue_remove_for(t->pid, t->prio);
    msg_t *held = t->held;
    t->held = NULL;
    for (msg_t *m = held; m; m = m->next) S.held--;
    table_remove(t);
    port_irq_restore(s);
    discard_list(queued, &dropped);
    discard_list(held, &dropped);
    timer_stop_all(t->pid);
    mcast_leave_all(t->pid);
    forget_routes_to(t);
    mem_free_all(t->pid);
    log_event(EV_KILL, t->pid, dropped);
    slab_free(&task_cache, t);
}

mt_err_t sched_task_kill(mt_pid_t pid)
{
    task_t *t = sched_find_task(pid);
    if (!t || (t->flags & TASK_KILL_PENDING)) return log_error(MT_ERR_NO_TASK);
    if (t->flags & TASK_THREAD) return log_error(MT_ERR_STATE); /* only thread_exit() */
    t->flags |= TASK_KILL_PENDING;
    if (t->flags & TASK_ON_STACK) return MT_OK;
    if (MOTET_THREADS && thread_running())
        thread_call_on_k(finish_kill_call, t); /* FINAL runs on the kernel stack */
    else
        finish_kill(t);
    return MT_OK;
}

/* ---- interrupts and the main loop ---- */

void sched_isr_exit(void)
{
    /* On a thread's stack: the thread code decides whether to switch, with
     * interrupts off, as a switch needs them. */
    if (MOTET_THREADS && thread_running()) {
        thread_isr_exit();
        return;
    }
    /* Rule 3: only what strictly outranks the interrupted frame runs here. */
    drain_held_off(S.running_prio);
}

static port_sleep_mode_t choose_sleep_mode(void)
{
    const bool has_deep = (uint32_t) PORT_SLEEP_DEEP_MIN_TICKS != PORT_SLEEP_NO_DEEP;
    uint32_t ticks = 0;
    if (!timer_next_deadline(has_deep ? &ticks : NULL)) return PORT_SLEEP_NONE_DUE;
    return has_deep && ticks >= PORT_SLEEP_DEEP_MIN_TICKS ? PORT_SLEEP_DEEP : PORT_SLEEP_IDLE;
}

void sched_stop(void)
{
    S.stop = true;
}

void sched_run(void)
{
    if (MOTET_THREADS && thread_running()) return; /* the main loop is K's */
    S.stop = false;
    thread_k_in_run(true);
    while (!S.stop) {
        port_irq_state_t s = port_irq_save();
        if (drain_may_run(-1)) drain_held_off(-1);
        if (S.stop) {
            port_irq_restore(s);
            break;
        }
        /* No idle task: K sleeps here itself when no thread is ready, or
         * (MANTIS baseline) hands the CPU to the idle thread. */
        if (queue_levels == 0 && !thread_ready_hint() && !thread_k_idle_switch()) {
            port_sleep_mode_t mode = choose_sleep_mode();
            log_event(EV_SLEEP, MT_PID_NONE, (uint16_t) mode);
            port_sleep(mode); /* rule 6: no idle task, no tick */
            log_event(EV_WAKE, MT_PID_NONE, 0);
        }
        port_irq_restore(s);
    }
    thread_k_in_run(false);
}

/* ---- thread support (thread_internal.h) ---- */

#if MOTET_THREADS

void sched_task_bind(task_t *t, thread_t *th)
{
    t->state = th; /* a bound task has no state of its own */
    t->flags |= TASK_THREAD | TASK_INITIALISED;
}

void sched_task_destroy(task_t *t)
{
    t->flags &= (uint8_t) ~(TASK_INITIALISED | TASK_THREAD);
    t->state = NULL;
    destroy(t);
}

void sched_msg_release(msg_t *m)
{
    sched_msg_free(m);
}

port_sleep_mode_t sched_sleep_mode(void)
{
    return choose_sleep_mode();
}

bool sched_k_idle(void)
{
    return S.depth == 0 && !S.stop && queue_top_prio() < 0;
}

void sched_k_preempt(void)
{
    drain_above(S.running_prio);
}

#endif /* MOTET_THREADS */

/* ---- migration support (sched_internal.h; used by sched_migrate.c) ---- */

msg_t *sched_msg_alloc(void)
{
    msg_t *m = slab_alloc(&msg_cache);
    if (!m) log_error(MT_ERR_QUEUE_FULL);
    return m;
}

mt_err_t sched_msg_copy_payload(msg_t *m, const void *data, uint16_t len)
{
    return own_payload(m, (void *) data, len, 0); /* borrowed: never freed here */
}

void sched_msg_free(msg_t *m)
{
    release_payload(m);
    port_irq_state_t s = port_irq_save();
    give_block_irq_off(m);
    port_irq_restore(s);
}

void sched_held_add(int16_t delta)
{
    S.held = (uint8_t) (S.held + delta);
}

uint16_t sched_msg_stamp(void)
{
    return S.next_seq++;
}

mt_err_t sched_task_call(task_t *t, msg_t *m)
{
    frame_t below = {S.current, S.running_prio};
    push_frame(t);
    log_event(EV_START, t->pid, m->port);
    mt_err_t result = t->handler(t->state, m);
    log_event(EV_END, t->pid, m->port);
    t->flags &= (uint8_t) ~TASK_ON_STACK;
    S.depth--;
    S.current = below.task;
    S.running_prio = below.prio;
    S.dispatched++;
    release_payload(m);
    if (t->flags & TASK_KILL_PENDING) {
        finish_kill(t);
        result = MT_ERR_NO_TASK;
    }
    drain_above(S.running_prio);
    return result;
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

remote_task_t *sched_remote_find(mt_pid_t pid)
{
    return find_remote(pid);
}

uint8_t sched_msg_spare(void)
{
    return (uint8_t) (msg_cache.count - msg_cache.in_use);
}
