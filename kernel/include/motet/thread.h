/* SPDX-License-Identifier: MIT */
/*
 * Threads: blocking contexts with their own small stacks, beside the message
 * tasks and in the same priority space (MOTET_THREADS=1; docs/threads.md).
 *
 * Message handlers never run on a thread's stack: they run on the one kernel
 * stack, the stack the module booted on. The kernel stack is itself a
 * schedulable context, K, whose claim on the CPU is the priority of its top
 * handler frame or of the head of the message queue. A thread that outranks
 * the running handler preempts it (the handler's frames wait on the kernel
 * stack); a message a thread sends to a handler of equal or higher priority
 * runs at once on the kernel stack (dispatch rule 1), and the thread resumes
 * when it has returned. A thread made ready takes the CPU only if it strictly
 * outranks the running context: an equal keeps it (FIFO among equals, or
 * round robin where the policy slices). There is no idle thread: a thread
 * that blocks when nothing else is runnable puts the module to sleep from its
 * own blocking call, and if it is the one woken it continues without a
 * context switch (MANTIS's BLOCKED_RUNNING fast path).
 *
 * A thread may be bound to a task pid: messages sent to that pid (sends,
 * interrupt posts, timer expiries, multicast) wait in the thread's mailbox
 * for thread_receive() instead of running a handler, and the thread sends
 * through the task's output ports with sched_send(). Memory the thread
 * allocates belongs to that pid and is freed when the thread exits.
 *
 * Policy: one per build (MOTET_THREAD_POLICY in config.h: FIFO run to
 * completion, fixed priority with optional round robin, the MANTIS
 * baseline, event boosting, value of preemption); per thread, the class
 * (thread_spec_t.cls) where the policy has classes.
 *
 * Contexts in the contracts: "thread" = a thread's own code; "task" = a
 * handler, boot code or a thread; "any" = also interrupt context.
 *
 * Example:
 *
 *     static uint8_t stack[THREAD_STACK_BYTES(MOTET_STACK_sampler)];
 *     static sem_t ready;
 *     static void sampler(void *arg) {
 *         for (;;) {
 *             sem_wait_ev(&ready, THREAD_EV_SENSOR);   // posted by the ADC ISR
 *             sched_send(0, &sample, sizeof sample, 0);
 *         }
 *     }
 *     sem_init(&ready, 0);
 *     thread_create(&(thread_spec_t){.entry = sampler, .stack = stack,
 *         .stack_size = sizeof stack, .stack_need = MOTET_STACK_sampler,
 *         .prio = 3, .pid = 0x40, .routes = out, .n_routes = 1}, NULL);
 */
#ifndef MOTET_THREAD_H
#define MOTET_THREAD_H

#include "motet/config.h"
#include "motet/port.h"
#include "motet/sched.h"

typedef struct thread thread_t;
typedef void (*thread_entry_t)(void *arg);

/* Scheduling class, per thread (which ones a policy accepts: docs/threads.md). */
enum {
    THREAD_CLASS_DEFAULT = 0, /* the policy's own: OTHER under MOTET_POLICY_RETOS, else FIFO */
    THREAD_CLASS_FIFO,        /* keeps the CPU until it blocks or yields */
    THREAD_CLASS_RR,          /* shares the CPU with equals in slices */
    THREAD_CLASS_OTHER        /* event-boosting dynamic priority (MOTET_POLICY_RETOS) */
};

/* What a blocking call waits for: the event-boosting policy raises the
 * thread's dynamic priority by it (timer +3, radio +2, sensor +1). */
typedef enum {
    THREAD_EV_NONE = 0,
    THREAD_EV_TIMER,
    THREAD_EV_RADIO,
    THREAD_EV_SENSOR
} thread_event_t;

/* Timeouts of the blocking calls, in port ticks (TIMER_US() converts):
 * THREAD_NO_WAIT tries once and never blocks, THREAD_FOREVER waits with
 * no limit; anything between bounds the wait. */
#define THREAD_NO_WAIT 0u
#define THREAD_FOREVER 0xFFFFFFFFu

/* How a new thread starts (thread_spec_t.start). */
enum {
    THREAD_START_NOW = 0,   /* ready at once: runs now if it outranks the creator */
    THREAD_START_SUSPENDED, /* suspended: thread_resume() starts it */
    THREAD_START_AT_RUN     /* created by boot code outside sched_run(): ready
                             * when sched_run() starts, so boot code is never
                             * preempted; elsewhere as THREAD_START_NOW */
};

/* Bytes of stack for a thread whose frames need `need` bytes at worst, the
 * figure of the stack analyser (`motet stack`); 0 (unknown) gives the port's
 * minimum and a guard checked at run time. */
#define THREAD_STACK_BYTES(need)                                                                   \
    ((need) ? (size_t) (need) + PORT_THREAD_STACK_EXTRA : (size_t) PORT_THREAD_STACK_MIN)

/* Everything thread_create() needs. */
typedef struct thread_spec {
    thread_entry_t entry;  /* the thread's code; returning from it exits */
    void *arg;             /* passed to entry */
    void *stack;           /* the thread's stack, owned by the caller */
    size_t stack_size;     /* its bytes */
    uint16_t stack_need;   /* analyser figure in bytes; 0: unknown, guarded */
    mt_prio_t prio;        /* 0 .. MOTET_PRIO_LEVELS-1, shared with tasks */
    uint8_t cls;           /* THREAD_CLASS_* */
    mt_pid_t pid;          /* task pid bound to the thread, MT_PID_NONE: none */
    const route_t *routes; /* output ports of the bound task (copied) */
    uint8_t n_routes;
    uint8_t start; /* THREAD_START_* */
} thread_spec_t;

/* Context switches since boot by why the CPU changed hands, counted by the
 * kernel at every port_context_switch() when MOTET_THREAD_CUT_STATS is 1.
 * voluntary + involuntary + from_kernel is thread_switch_count(). */
typedef struct thread_switch_stats {
    uint32_t voluntary;   /* the thread left blocked (waiting) or exiting */
    uint32_t involuntary; /* the thread left still ready: a higher context
                           * preempted it, its slice ran out, it yielded or
                           * handed a send to the kernel stack */
    uint32_t to_equal;    /* of the involuntary ones, those whose CPU went to
                           * a thread of its own level (slice or quantum end,
                           * the policy's order among equals) */
    uint32_t from_kernel; /* the kernel stack (or an idle thread) gave the CPU
                           * to a thread */
} thread_switch_stats_t;

/* A counting semaphore (a binary one has max 1); waiters are woken
 * highest priority first. */
typedef struct sem {
    thread_t *waiters; /* first: a wait list */
    int16_t count;
    int16_t max; /* posts beyond it are refused (MT_ERR_FULL) */
} sem_t;

#if MOTET_THREADS

/* Create a thread, started as spec->start says (THREAD_START_NOW is a
 * preemption point: it runs now if it outranks the caller); task context.
 * *out (may be NULL) gets its handle. MT_ERR_INVALID (bad spec, stack below
 * its need), MT_ERR_NO_SLAB (no free thread), MT_ERR_EXISTS / MT_ERR_NO_MEM
 * (binding the pid). */
mt_err_t thread_create(const thread_spec_t *spec, thread_t **out);
/* End the running thread: frees its mailbox and bound task; thread. */
void thread_exit(void) __attribute__((noreturn));
/* Let ready threads of the same priority run first; thread. */
mt_err_t thread_yield(void);
/* The running thread, NULL when the kernel stack runs. */
thread_t *thread_self(void);
/* Suspend t (itself included: it blocks until resumed); a suspended thread
 * that waits keeps waiting; idempotent; task context. MT_ERR_INVALID (no
 * such thread), MT_ERR_STATE from an interrupt. */
mt_err_t thread_suspend(thread_t *t);
/* Resume a suspended thread (a preemption point); task context.
 * MT_ERR_STATE if it was not suspended. */
mt_err_t thread_resume(thread_t *t);
/* Same from an interrupt: it runs at interrupt exit if it strictly
 * outranks the interrupted context; any context. */
mt_err_t thread_resume_isr(thread_t *t);
/* True while t is suspended. */
bool thread_suspended(const thread_t *t);
/* Priority level of a thread. */
mt_prio_t thread_prio(const thread_t *t);

#if MOTET_THREAD_SLEEP
/* Block for `ticks` (at least 1) port ticks; thread. Boosts as a timer wait. */
mt_err_t thread_sleep(uint32_t ticks);
#endif

/* Block until a message for the bound pid arrives and return it; it stays
 * valid until the next receive (sched_take_msg() keeps its payload); thread.
 * NULL with MT_ERR_STATE logged if the thread has no pid. */
msg_t *thread_receive(void);
/* Same, declaring the event the message stands for (event boosting). */
msg_t *thread_receive_ev(thread_event_t ev);
/* thread_receive() waiting at most `timeout` ticks: NULL if none came. */
msg_t *thread_receive_for(uint32_t timeout);
/* Messages waiting in t's mailbox. */
uint8_t thread_mail_count(const thread_t *t);

/* Set the count, no limit; boot or task context, no waiters. */
void sem_init(sem_t *s, int16_t count);
/* Set the count (clamped to 0..max) and its limit (at least 1). */
void sem_init_max(sem_t *s, int16_t count, int16_t max);
/* A binary semaphore: max 1, given (count 1) or taken. */
static inline void sem_init_binary(sem_t *s, bool given)
{
    sem_init_max(s, given ? 1 : 0, 1);
}
/* Take one unit, blocking while there is none; thread. */
mt_err_t sem_wait(sem_t *s);
/* Take one unit, waiting at most `timeout` ticks: MT_OK or MT_ERR_TIMEOUT;
 * thread; elsewhere a unit there is taken, and a wait is refused with
 * MT_ERR_STATE (logged) unless `timeout` is THREAD_NO_WAIT. */
mt_err_t sem_wait_for(sem_t *s, uint32_t timeout);
/* Take one unit if there is one, never blocking: MT_OK or MT_ERR_TIMEOUT;
 * any context. */
mt_err_t sem_try_wait(sem_t *s);
/* Units available now. */
int16_t sem_count(const sem_t *s);
/* Same, declaring the event waited for (event boosting). */
mt_err_t sem_wait_ev(sem_t *s, thread_event_t ev);
/* Give one unit or wake the best waiter; a preemption point; task context.
 * MT_ERR_FULL (not logged: the post is absorbed) at the limit. */
mt_err_t sem_post(sem_t *s);
/* Same from an interrupt: the woken thread runs at interrupt exit if it
 * strictly outranks the interrupted context; interrupt context. */
mt_err_t sem_post_isr(sem_t *s);

#if MOTET_STATS
/* Context switches since boot (every port_context_switch()). */
uint32_t thread_switch_count(void);
#endif
#if MOTET_THREAD_CUT_STATS
/* The same switches split by cause into *out; any context. */
void thread_switch_stats(thread_switch_stats_t *out);
/* The involuntary switches since t was created that gave t the CPU (from a
 * thread that still had work): a benchmark tells their causes apart by
 * the threads they served. Any context. */
uint32_t thread_cuts_to(const thread_t *t);
#endif
/* Deepest use of t's stack so far, in bytes (the stack is painted at
 * creation); for a guarded thread also checks its guard. */
size_t thread_stack_high_water(const thread_t *t);
/* False if the guard words at the bottom of t's stack were overwritten. */
bool thread_stack_guard_ok(const thread_t *t);

#endif /* MOTET_THREADS */

#endif /* MOTET_THREAD_H */
