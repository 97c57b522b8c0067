/* SPDX-License-Identifier: MIT */
/*
 * Thread internals shared by thread*.c and the hooks the scheduler and the
 * timers call. With MOTET_THREADS=0 the hooks are empty inline functions
 * (as log.h does), so the scheduler and timers compile to what they were.
 *
 * The policy interface. Everything a scheduling policy decides sits behind
 * the policy_* functions below, implemented by exactly one
 * thread_policy_*.c per build (MOTET_THREAD_POLICY). thread.c owns the
 * mechanism: contexts, the kernel stack K, blocking, waking, the fast path.
 * A policy owns its ready structure, the order among threads, slices and
 * CPU accounting. Between a thread and K only levels count (prio), by the
 * rules in thread.c; between two threads only the policy's order does.
 */
#ifndef MOTET_THREAD_INTERNAL_H
#define MOTET_THREAD_INTERNAL_H

#include "motet/thread.h"
#include "queue_internal.h"
#include "sched_internal.h"

#if MOTET_THREADS

/* Thread states. */
enum {
    TS_FREE = 0,
    TS_READY,           /* runnable: in the policy's ready structure, or
                         * thread_current, the one running (a yield between
                         * equals changes no state) */
    TS_BLOCKED,         /* waits (thread_t.wait), or is suspended, or both */
    TS_BLOCKED_RUNNING, /* waits, but still current: it put the module to
                         * sleep from its blocking call (fast path) */
};

/* What a blocked thread waits for (thread_t.wait). A blocked thread with
 * WAIT_NONE is held only by its suspension (THREAD_F_SUSPENDED). */
enum {
    WAIT_NONE = 0,
    WAIT_OBJECT, /* on the wait list of a semaphore, queue, event set or pool */
    WAIT_MUTEX,  /* on a mutex's wait list (priority inheritance follows it) */
    WAIT_MAIL,   /* in thread_receive() */
    WAIT_SLEEP,  /* in thread_sleep() */
    WAIT_K_CALL, /* its send or kill runs on K (thread_call_on_k()): ready once it returned */
};

/* Flags. */
#define THREAD_F_GUARD     0x01u /* no analyser figure: check the guard words */
#define THREAD_F_SUSPENDED 0x02u /* thread_suspend(): runs only after thread_resume() */
#define THREAD_F_TIMED     0x04u /* its kernel timer bounds its wait (a timeout) */
#define THREAD_F_SLICE     0x08u /* policy: its slice or quantum ran out */
#define THREAD_F_LONG      0x10u /* value of preemption: a long job (beta) */
#define THREAD_F_IDLE      0x20u /* the MANTIS baseline's idle thread */
#define THREAD_F_ARMED     0x40u /* policy: its slice timer is armed */
#define THREAD_F_AT_RUN    0x80u /* THREAD_START_AT_RUN: held until sched_run() */

/* Whether t is the MANTIS baseline's idle thread: no thread is, under the
 * other policies, and their code does not look. */
#define THREAD_IS_IDLE(t)                                                                          \
    (MOTET_THREAD_POLICY == MOTET_POLICY_MANTIS && ((t)->flags & THREAD_F_IDLE))

struct thread {
    port_context_t ctx;
    thread_t *next; /* ready structure or wait list */
    thread_entry_t entry;
    void *arg;
    uint8_t *stack; /* lowest address */
    size_t stack_size;
    task_t *task;      /* bound task (mailbox, routes), NULL if none */
    msg_t *mail;       /* mailbox FIFO */
    msg_t *mail_tail;  /* its last message */
    msg_t *last_mail;  /* returned by the last receive, freed at the next */
    uint32_t run_from; /* timer_now() when it last got the CPU (timed policies) */
    uint32_t quantum;  /* policy: ticks left of its slice or quantum */
#if MOTET_THREAD_POLICY == MOTET_POLICY_RETOS
    uint32_t cpu; /* CPU ticks not yet turned into decay */
#endif
#if MOTET_THREAD_POLICY == MOTET_POLICY_MANTIS
    uint32_t sleep_left; /* ticks left in the sleep queue */
#endif
    mt_prio_t prio;      /* level in the shared priority space (inherited if higher) */
    mt_prio_t base_prio; /* its own level, without priority inheritance */
    uint8_t state;       /* TS_* */
    uint8_t cls;         /* THREAD_CLASS_* */
    uint8_t id;          /* index; also the id of its sleep timer */
    uint8_t flags;       /* THREAD_F_* */
    uint8_t key;         /* policy: its place in the ready structure */
    int8_t dyn;          /* event boosting: dynamic priority */
    uint8_t mail_count;
    uint8_t wait;        /* WAIT_* */
    uint8_t wait_result; /* mt_err_t its wait ended with */
    /* Last, so that the fields the send path reads keep short offsets. */
    thread_t **wait_list; /* the wait list it is on, NULL if none */
    void *wait_data;      /* what the waker needs: the waiter's request, on its stack */
    struct mutex *held;   /* mutexes it holds, linked through next_held */
#if MOTET_THREAD_CUT_STATS
    uint32_t cuts_to; /* involuntary switches that gave it the CPU */
#endif
};

/* How a thread enters the ready structure. */
enum {
    READY_WOKEN,     /* made ready (created, woken): behind its equals */
    READY_PREEMPTED, /* lost the CPU to a higher context: before its equals,
                      * unless the policy says its slice is over */
    READY_YIELD      /* gave the CPU to its equals: behind them */
};

/* Kernel timer ids (timer_kernel_start): 0 .. MOTET_MAX_THREADS-1 are the
 * threads' sleeps and timeouts; these belong to the policies. */
#define THREAD_TIMER_SLICE 0xF0u
#define THREAD_TIMER_TICK  0xF1u

/* ---- thread.c, thread_life.c: the mechanism (the thread table:
 * thread_create.c; thread_blocking(): thread_sem.c) ---- */

/* Forget every thread, reset the policy; boot (sched_init). */
void thread_init(void);
/* The running thread, NULL when K (the kernel stack) runs (thread.c). */
extern thread_t *thread_current;
/* The running thread, NULL when K (the kernel stack) runs. */
static inline thread_t *thread_running(void)
{
    return thread_current;
}
/* The message the running thread received last, whose payload it may
 * take (sched_take_msg()); NULL outside a thread. */
static inline msg_t *thread_last_mail(void)
{
    return thread_current && !port_in_isr() ? thread_current->last_mail : NULL;
}
/* Make a blocked thread ready; irq off, any context (no switch here). */
void thread_wake(thread_t *t);
/* Make blocked thread t ready from task context, and if it outranks the
 * running thread and everything else, switch to it at once (the direct
 * hand-off of a post or a resume); true when that happened, and the caller
 * runs again (its preemption point is then done). irq off. */
bool thread_wake_switch(thread_t *t);
/* The running thread blocks (state and wait list set by the caller);
 * returns when it runs again; irq off, thread. */
void thread_block(void);
/* A task-context action may have made someone outrank the running context:
 * let it run (K: runs threads and messages above its frame); irq on. */
void thread_preempt_point(void);
/* Empty every slot of the thread table; each keeps its id. */
void thread_slots_init(void);
/* Claim a free thread slot (not the idle thread's) under the lock, or
 * NULL: a create preempted before thread_admit() by another create (an
 * interrupt's exit running a higher thread) cannot share it. */
thread_t *thread_claim_slot(void);
/* Give back a claimed slot that thread_admit() never got (a failed create). */
void thread_release_slot(thread_t *t);
/* Let the set-up thread t start as `start` says (THREAD_START_*; AT_RUN
 * becomes NOW once the scheduler runs) under the lock; returns the start
 * taken. The caller then calls thread_preempt_point() for NOW. */
uint8_t thread_admit(thread_t *t, uint8_t start);
/* Run fn(arg) on the kernel stack now, from a thread (dispatch rule 1):
 * the thread is blocked (WAIT_K_CALL) until fn returned; irq on, thread. */
void thread_call_on_k(void (*fn)(void *), void *arg);
/* Threads by id (timer ids). */
thread_t *thread_by_id(uint8_t id);

/* Take ready thread t out of the ready structure: blocked, waiting for
 * nothing (suspended); irq off. */
void thread_unready(thread_t *t);
/* Give t the level p (priority inheritance), moving it in the ready
 * structure if it is there; no switch here; irq off. */
void thread_prio_set(thread_t *t, mt_prio_t p);
/* A thread may block here: the running thread, in task context; else NULL
 * with MT_ERR_STATE logged. */
thread_t *thread_blocking(void);

/* ---- thread_wait.c: waiting with a timeout, and waking ---- */

/* Block the running thread for `kind` on wait list *list (NULL: none)
 * with `data` for its waker, for at most `timeout` ticks (THREAD_FOREVER:
 * no limit; not THREAD_NO_WAIT); returns how the wait ended: MT_OK (given
 * by thread_wait_end()), MT_ERR_TIMEOUT, or MT_ERR_NO_SLAB (no timer for
 * the timeout: not blocked). irq off, thread. */
mt_err_t thread_wait(thread_t **list, uint8_t kind, void *data, uint32_t timeout,
                     thread_event_t ev);
/* The same with no limit (THREAD_FOREVER): MT_OK or what the waker
 * gave (thread_wait_end()). No 32-bit timeout to pass: on an 8-bit core
 * that argument alone costs its caller four register saves. */
mt_err_t thread_wait_forever(thread_t **list, uint8_t kind, void *data, thread_event_t ev);
/* What the caller of a blocking call whose resource is unavailable gets:
 * MT_OK if it may wait `timeout` ticks (a thread), `unavailable` for
 * THREAD_NO_WAIT, MT_ERR_STATE (logged) if it cannot wait (a handler, boot
 * code, an interrupt). */
mt_err_t thread_wait_allowed(uint32_t timeout, mt_err_t unavailable);
/* A wait was ended: the woken thread runs now if it outranks the caller
 * (task context), or at interrupt exit (interrupt context). */
void thread_after_wake(void);
/* End t's wait with `result`: off its wait list, ready unless suspended;
 * no switch here; irq off, any context. */
void thread_wait_end(thread_t *t, mt_err_t result);
/* The same for t taken off its list by thread_waitq_take(), from task
 * context, switching to t at once when it outranks the running thread and
 * everything else (thread_wake_switch()); irq off (thread.c). */
bool thread_wait_end_switch(thread_t *t, mt_err_t result);
/* Unlink t from wait list *list (nothing if it is not there); irq off. */
void thread_waitq_unlink(thread_t **list, thread_t *t);

/* A wait list is kept in the order its threads are woken: by priority,
 * FIFO among equals (thread_wait.c). Its waker takes the head, in a few
 * instructions on the path of every hand-off; the walk is the waiter's,
 * as it blocks. */

/* Unlink and return the highest-priority thread of a non-empty wait list
 * (FIFO among equals): its head; irq off. */
static MT_INLINE thread_t *thread_waitq_take(thread_t **list)
{
    thread_t *t = *list;
    *list = t->next;
    t->next = NULL;
    t->wait_list = NULL;
    return t;
}

/* The highest priority among a wait list's threads, -1 if it is empty. */
static MT_INLINE mt_prio_t thread_waitq_top(const thread_t *list)
{
    return list ? list->prio : -1;
}

/* A waiter already off its list (thread_waitq_take()) gets its result;
 * false if it is suspended (ready once resumed); irq off. */
static MT_INLINE bool thread_wait_finish_taken(thread_t *t, mt_err_t result)
{
    t->wait = WAIT_NONE;
    t->wait_result = (uint8_t) result;
    return !(t->flags & THREAD_F_SUSPENDED);
}
/* The same for any waiter: off its wait list first, if still on one. */
static MT_INLINE bool thread_wait_finish(thread_t *t, mt_err_t result)
{
    if (t->wait_list) {
        thread_waitq_unlink(t->wait_list, t);
        t->wait_list = NULL;
    }
    return thread_wait_finish_taken(t, result);
}
/* Waiting thread t (on a wait list) changed level: move it to its place
 * in the list's order; irq off. */
void thread_waitq_reorder(thread_t *t);

/* ---- thread_stack.c: stacks ---- */

/* Paint of unused stack; the lowest GUARD_BYTES of a guarded stack must
 * keep it. */
#define STACK_PAINT 0xA5u
#define GUARD_BYTES 16u
/* A thread stack is also plain memory that the kernel paints and scans,
 * under its frames and below them. AddressSanitizer (the native port's
 * sanitizer build) poisons the redzones of the frames that run on it and,
 * when a thread dies without returning, leaves them poisoned: a new
 * thread's stack is unpoisoned before it is painted, and the scans read
 * without its checks. */
#if defined(__SANITIZE_ADDRESS__)
#define STACK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STACK_ASAN 1
#endif
#endif
#ifdef STACK_ASAN
#include <sanitizer/asan_interface.h>
#define STACK_FRESH(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#define STACK_SCAN        __attribute__((no_sanitize_address))
#else
#define STACK_FRESH(p, n) ((void) 0)
#define STACK_SCAN
#endif

/* Paint t's whole stack (its guard too), before the thread first runs. */
void thread_stack_paint(thread_t *t);
/* The run-time check for threads the stack analyser could not size, at
 * their exit: the whole guard (nothing where the MPU guards). */
void thread_stack_check_guard(const thread_t *t);
/* A broken guard means memory below the stack is already damaged: logs
 * MT_ERR_STACK and halts the module. */
void thread_stack_overflow(void) __attribute__((noinline, noreturn));

/* ---- thread_mutex.c ---- */

/* Thread t exits holding mutexes: each is released, logged
 * (MT_ERR_OWNER_DEAD for t's pid) and handed to its best waiter, whose
 * lock returns MT_ERR_OWNER_DEAD, and t's inherited level is undone. Weak:
 * only an image that locks a mutex links it, and only a thread that holds
 * one (t->held) calls it. */
void thread_mutexes_abandon(thread_t *t) __attribute__((weak));

/* ---- thread_sem.c: semaphores and the mailbox ---- */

/* A message for the thread's pid arrived; irq off, any context. */
void thread_mail_push(thread_t *t, msg_t *m);
/* Free the mailbox of an exiting thread. */
void thread_mail_purge(thread_t *t);

/* ---- the policy (thread_policy_*.c) ---- */

/* Reset; boot, after the threads are cleared. */
void policy_init(void);
/* A new thread: class check and initial state. MT_ERR_INVALID if the
 * policy has no such class. */
mt_err_t policy_thread_init(thread_t *t);
/* A kernel timer of the policy fired; interrupt context. */
void policy_timer(uint8_t id);
/* Arm the wake-up of the running thread in `ticks` (it is marked blocked
 * already); MT_ERR_NO_SLAB if no timer is free. */
mt_err_t policy_sleep(thread_t *cur, uint32_t ticks);
/* What a policy's tests watch of its state: a thread's dynamic priority
 * under event boosting (else 0), value of preemption's preemption-free
 * period, MANTIS's periodic timer (ticks of its 20 ms timer since boot). */
int8_t thread_dyn_prio(const thread_t *t);
#if MOTET_THREAD_POLICY == MOTET_POLICY_VOP
bool thread_vop_preemption_free(void);
#endif
#if MOTET_THREAD_POLICY == MOTET_POLICY_MANTIS
uint32_t thread_mantis_ticks(void);
#endif

/* ---- thread_slice.c: the slice timer of the timed policies ----
 * Compiled only for a policy that slices; elsewhere the calls vanish. */
#define THREAD_HAS_SLICE_TIMER                                                                     \
    ((MOTET_THREAD_POLICY == MOTET_POLICY_PRIO && MOTET_THREAD_RR) ||                              \
     MOTET_THREAD_POLICY == MOTET_POLICY_RETOS || MOTET_THREAD_POLICY == MOTET_POLICY_VOP)
#if THREAD_HAS_SLICE_TIMER

/* Its state, for the inline check below only (thread_slice.c). */
typedef struct {
    bool armed;        /* the kernel timer runs */
    uint32_t deadline; /* timer_now() at which it expires, while armed */
    uint32_t starts;   /* timer_kernel_start() calls */
} thread_slice_t;
extern thread_slice_t thread_slice;

/* Start it towards `deadline`, `ticks` from now; irq off. */
void thread_slice_start(uint32_t deadline, uint32_t ticks);
/* Have the slice timer expire `ticks` after t->run_from (t gets or keeps
 * the CPU now): nothing to do if it already runs towards that instant (the
 * same thread kept the CPU, charged exactly the time since its last
 * charge); irq off. In line: that is the common case. */
static MT_INLINE void thread_slice_arm(thread_t *t, uint32_t ticks)
{
    uint32_t deadline = t->run_from + ticks;
    if (thread_slice.armed && deadline == thread_slice.deadline) return;
    thread_slice_start(deadline, ticks);
}
/* Stop the slice timer if it runs (nothing contends); irq off. */
void thread_slice_disarm(void);
/* The slice timer fired (policy_timer); interrupt context. */
void thread_slice_expired(void);
/* Forget it; boot (policy_init). */
void thread_slice_reset(void);
/* Times the slice timer was started since boot (tests, benchmarks). */
uint32_t thread_slice_starts(void);
#else
static inline void thread_slice_arm(thread_t *t, uint32_t ticks)
{
    (void) t;
    (void) ticks;
}
static inline void thread_slice_disarm(void)
{
}
static inline void thread_slice_expired(void)
{
}
static inline void thread_slice_reset(void)
{
}
#endif

/* ---- thread_ready.c, thread_ready.h: the O(1) ready structure most
 * policies use ---- */
#include "thread_ready.h"

/* Whether some thread is ready, read inline on the send path. The ready
 * structure's level bitmap says it; only the MANTIS baseline, with lists
 * of its own, counts its ready threads (thread.c). */
#if MOTET_THREAD_POLICY == MOTET_POLICY_MANTIS
#define THREAD_READY_COUNTED 1
extern volatile uint8_t thread_ready_count;
#else
#define THREAD_READY_COUNTED 0
#endif
/* True if some thread was ready at the instant of reading (a hint). */
static MT_INLINE bool thread_ready_hint(void)
{
#if THREAD_READY_COUNTED
    return thread_ready_count != 0;
#else
    return *(volatile const queue_bits_t *) &thread_rq.level_map != 0;
#endif
}

/* The policy's operations on every switch. The default fixed-priority
 * policy has them in line (thread_policy_prio.h): no call on the common
 * path; every other policy implements them in its thread_policy_*.c. */
#if MOTET_THREAD_POLICY == MOTET_POLICY_PRIO
#include "thread_policy_prio.h"
#define THREAD_POLICY_BY_LEVEL 1 /* among threads, the higher level runs */
#else
#define THREAD_POLICY_BY_LEVEL 0
/* t enters the ready structure (READY_*); irq off. */
void policy_ready(thread_t *t, uint8_t how);
/* t leaves the ready structure (it gets the CPU or exits); irq off. */
void policy_remove(thread_t *t);
/* The ready thread the policy would run next, NULL if none; O(1); irq off.
 * Value of preemption orders by key alone: the ready structure's head, in
 * line (every scheduling point asks). */
#if MOTET_THREAD_POLICY == MOTET_POLICY_VOP
static MT_INLINE thread_t *policy_peek(void)
{
    return rq_peek();
}
#else
thread_t *policy_peek(void);
#endif
/* Whether ready thread c should take the CPU from running thread cur now
 * (c is policy_peek()); irq off. */
bool policy_preempts(const thread_t *c, const thread_t *cur);
/* cur got the CPU (after a switch, or kept it at a scheduling point);
 * irq off. Timed policies arm their slice here. */
void policy_started(thread_t *cur);
/* cur leaves the CPU or reaches a scheduling point after running `ran`
 * ticks since policy_started(); irq off. */
void policy_charge(thread_t *cur, uint32_t ran);
/* The running thread is about to block waiting for `ev`; irq off. */
void policy_blocking(thread_t *cur, thread_event_t ev);
/* The idle thread to run when nothing else can (MANTIS baseline), or NULL:
 * the blocking thread then sleeps in place. */
thread_t *policy_idle(void);
/* A semaphore operation happened (the MANTIS baseline rescans its sleep
 * queue there); irq off. */
void policy_sem_op(void);
/* t, the thread policy_peek() returned, leaves the structure: as any. */
static MT_INLINE void policy_take_peeked(thread_t *t)
{
    policy_remove(t);
}
#endif
/* A yield takes the head of its own level (thread.c's yield_in_level()). */
#define THREAD_YIELD_IN_LEVEL (THREAD_POLICY_BY_LEVEL && !MOTET_THREAD_RR)

/* ---- timer.c: kernel timers (their expiry: thread_wait.c) ---- */

/* Start kernel timer `id` (owner MT_PID_NONE): its expiry calls
 * thread_timer_fired(id) in interrupt context instead of posting. */
mt_err_t timer_kernel_start(uint8_t id, uint32_t ticks, bool periodic);
/* Stop it; false if it was not running. */
bool timer_kernel_stop(uint8_t id);
/* Kernel timer `id` expired; interrupt context. */
void thread_timer_fired(uint8_t id);

/* ---- task.c, dispatch.c, sched_run.c, sched_k.c: what threads need from the scheduler ---- */

/* Bind task pid (just created) to thread th: its messages go to the
 * mailbox. */
void sched_task_bind(task_t *t, thread_t *th);
/* Remove a bound task without FINAL (the thread exits). */
void sched_task_destroy(task_t *t);
/* Free a queued message and its payload. */
void sched_msg_release(msg_t *m);
/* The sleep mode for the next timer deadline. */
port_sleep_mode_t sched_sleep_mode(void);
/* True if K has nothing to run: it sits in sched_run() with no frame, no
 * queued message and no stop request. */
bool sched_k_idle(void);
/* K's preemption point: run what outranks its top frame; K only. */
void sched_k_preempt(void);
/* Run fn(arg), a call the thread of level `level` handed to K, with
 * interrupts on and K's running level exactly `level` until it returns
 * (docs/architecture.md, "Interrupts, timers and threads"); K only, irq
 * off on entry and on return. */
void sched_k_call(void (*fn)(void *), void *arg, mt_prio_t level);

/* ---- thread.c, thread_life.c: hooks called by the scheduler and timer.c ---- */

/* The running thread's priority level (a thread runs). */
static inline mt_prio_t thread_running_prio(void)
{
    return thread_running()->prio;
}
/* The running thread's bound task, NULL if none (a thread runs). */
static inline task_t *thread_running_task(void)
{
    return thread_running()->task;
}
/* K side of a scheduling point: run threads that outrank its frame below
 * (priority `floor`) and the queue head; K only, irq on or off (restored on
 * return; turned on only to run a thread's handler call, or by the thread
 * switched to). */
void thread_k_yield(mt_prio_t floor);
/* Interrupt exit while a thread runs, once thread_isr_exit_due() said so
 * (sched_isr_exit(), or the port through sched_isr_exit_choice()): the
 * running thread keeps the CPU or loses it as its policy decides; irq off,
 * on its stack. */
void thread_isr_exit(void);
/* Whether thread_isr_exit() has anything to decide now: the running thread may
 * lose the CPU (a ready thread, a claim of K, a timed policy's charge);
 * false while it sleeps in its blocking call, which decides itself. irq
 * off; a thread running. */
bool thread_isr_exit_due(void);
/* sched_isr_exit_choice() for the running thread: thread_isr_exit if due,
 * else NULL; irq off. */
sched_isr_exit_fn thread_isr_exit_choice(void);
/* sched_run() entered (true) or left (false) its loop. */
void thread_k_in_run(bool in);
/* K has nothing to do in sched_run(): hand the CPU to the idle thread
 * (MANTIS baseline) and return once K has work; false if there is none. */
bool thread_k_idle_switch(void);

#else /* MOTET_THREADS == 0: the hooks vanish */

static inline void thread_init(void)
{
}
static inline thread_t *thread_running(void)
{
    return NULL;
}
static inline msg_t *thread_last_mail(void)
{
    return NULL;
}
static inline mt_prio_t thread_running_prio(void)
{
    return -1;
}
static inline task_t *thread_running_task(void)
{
    return NULL;
}
static inline bool thread_ready_hint(void)
{
    return false;
}
static inline void thread_k_yield(mt_prio_t floor)
{
    (void) floor;
}
static inline void thread_isr_exit(void)
{
}
static inline bool thread_isr_exit_due(void)
{
    return false;
}
static inline sched_isr_exit_fn thread_isr_exit_choice(void)
{
    return NULL;
}
static inline void thread_k_in_run(bool in)
{
    (void) in;
}
static inline bool thread_k_idle_switch(void)
{
    return false;
}
static inline void thread_preempt_point(void)
{
}
static inline void thread_call_on_k(void (*fn)(void *), void *arg)
{
    (void) fn;
    (void) arg;
}
static inline void thread_mail_push(thread_t *t, msg_t *m)
{
    (void) t;
    (void) m;
}
static inline void thread_timer_fired(uint8_t id)
{
    (void) id;
}

#endif /* MOTET_THREADS */

/* The top frame on the kernel stack, task_none's while no handler runs;
 * NULL while a thread runs (its sends are not a frame's). */
static MT_INLINE task_t *sched_running_frame(void)
{
    return MOTET_THREADS && thread_running() ? NULL : sched.current;
}

/* The frame of the handler that sends, if the sender is a task on the
 * kernel stack: where a payload it was given and passes on is held. None
 * for MT_PID_NONE, task_none's pid, which no task has. Read before a send
 * pushes its receiver's frame. */
static MT_INLINE task_t *sched_sending_frame(mt_pid_t sender)
{
    task_t *self = sched_running_frame();
    return sender != MT_PID_NONE && self && self->pid == sender ? self : NULL;
}

/* True on the kernel stack outside interrupt bodies, where a send may run
 * its receiver at once: no thread runs and port_in_isr() is false; one
 * look at the registers where the port has it (port.h). */
static MT_INLINE bool sched_in_kernel_context(void)
{
#if MOTET_THREADS && defined(PORT_KERNEL_CONTEXT_INLINE)
    return port_in_kernel_context();
#else
    return !(MOTET_THREADS && thread_running()) && !port_in_isr();
#endif
}

/* sched_current_pid() in line, for the kernel's hot paths (the heap's
 * owner of an allocation or a free): the task bound to the running thread,
 * else the top frame's; MT_PID_NONE for neither. The top frame is none
 * only before sched_init() (task_none's afterwards), when boot code may
 * allocate or log an error already. */
static MT_INLINE mt_pid_t sched_running_pid(void)
{
    if (MOTET_THREADS && thread_running()) {
        task_t *bound = thread_running_task();
        return bound ? bound->pid : MT_PID_NONE;
    }
    return sched.current ? sched.current->pid : MT_PID_NONE;
}

#endif /* MOTET_THREAD_INTERNAL_H */
