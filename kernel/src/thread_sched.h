/* SPDX-License-Identifier: MIT */
/*
 * The threads' scheduling state and the steps of their decisions that
 * thread.c (blocking, waking, K's side, yields) shares with thread_life.c
 * (the module's set-up, a thread's admission and its exit): K's saved
 * context, a call a thread handed to K, K's claim while a thread runs; the
 * ready structure's bookkeeping, who runs next after a thread gave up the
 * CPU (thread.c's rules), and the CPU's hand-over. Internal to threads.
 */
#ifndef MOTET_THREAD_SCHED_H
#define MOTET_THREAD_SCHED_H

#include "motet/timer.h"
#include "queue_internal.h"
#include "thread_internal.h"

#if MOTET_THREADS

/* The threads' side of the scheduler (thread.c's; the tasks' is `sched`). */
typedef struct thread_sched {
    port_context_t k_ctx;    /* K, while a thread runs */
    port_context_t dead_ctx; /* where an exiting thread's registers go */
    void (*call)(void *);    /* a handler a thread handed to K */
    void *call_arg;          /* its argument */
    thread_t *caller;        /* the thread that handed it: blocked, WAIT_K_CALL */
    thread_t *in_call;       /* the caller of the call K runs now, innermost */
    mt_prio_t k_floor;       /* K's top frame while a thread runs (-1: none) */
    mt_prio_t yield_bar;     /* k_floor, or YIELD_OWED (yield_in_level()) */
#if MOTET_STATS
    uint32_t switches; /* every port_context_switch() */
#endif
#if MOTET_THREAD_CUT_STATS
    thread_switch_stats_t why; /* the same, by cause */
#endif
    bool k_in_run;          /* K is inside sched_run() */
    uint8_t at_run;         /* threads held until sched_run() (THREAD_START_AT_RUN) */
    volatile bool sleeping; /* the current thread sleeps in its blocking call */
} thread_sched_t;

extern thread_sched_t thread_sched;

/* Switch from the running context to `to` (NULL: K); irq off. Returns when
 * something switches back. `save` overrides where the registers go. */
void thread_switch_to(thread_t *to, port_context_t *save);

static MT_INLINE void ready_add(thread_t *t, uint8_t how)
{
    t->state = TS_READY;
    policy_ready(t, how);
#if THREAD_READY_COUNTED
    thread_ready_count++;
#endif
}

static MT_INLINE void ready_take(thread_t *t)
{
    policy_remove(t);
#if THREAD_READY_COUNTED
    thread_ready_count--;
#endif
}

/* The same for t, the thread policy_peek() returned. */
static MT_INLINE void ready_take_peeked(thread_t *t)
{
    policy_take_peeked(t);
#if THREAD_READY_COUNTED
    thread_ready_count--;
#endif
}

/* K before a ready thread of level p; K's top frame is at `floor`. */
static MT_INLINE bool k_beats_ready(mt_prio_t floor, mt_prio_t p)
{
    return floor >= p || queue_top_prio() > p;
}

/* The caller of the call K runs keeps its place among the ready threads
 * while it is blocked for it: best goes first only if it would have
 * preempted it, at the caller's level now (one inherited meanwhile from a
 * mutex it holds may be above the call's). */
static MT_INLINE bool call_keeps_place(const thread_t *best)
{
    const thread_t *c = thread_sched.in_call;
    return c && !(c->flags & THREAD_F_SUSPENDED) && !policy_preempts(best, c);
}

/* K has no claim at all: sched_run() with nothing to do. */
static bool k_idle(void)
{
    return thread_sched.k_in_run && sched_k_idle();
}

/* Who runs after the running thread gave up the CPU (it is blocked or back
 * in the ready structure), `best` being the policy's first ready thread: a
 * ready thread, or NULL: K, unless nobody can run at all (no_context()). */
static MT_INLINE thread_t *next_context_of(thread_t *best)
{
    if (thread_sched.call) return NULL;
    if (best && !k_beats_ready(thread_sched.k_floor, best->prio) && !call_keeps_place(best))
        return best;
    return NULL;
}

/* The same, best being policy_peek() (the policy's first ready thread). */
static MT_INLINE thread_t *next_context(void)
{
    return next_context_of(policy_peek());
}

/* next_context() found no thread and K has no claim either: only a
 * blocking or exiting thread can see this (a ready one is a candidate). */
static bool no_context(void)
{
    return !thread_sched.call && k_idle();
}

/* The running thread's CPU time since it got the CPU or was last charged. */
static MT_INLINE void charge(thread_t *t)
{
    if (!MOTET_THREAD_TIMED) return;
    uint32_t now = timer_now();
    policy_charge(t, now - t->run_from);
    t->run_from = now;
}

/* t gets the CPU (the switch itself follows). */
static MT_INLINE void start_cpu(thread_t *t)
{
    t->state = TS_READY; /* runnable, and thread_current: out of the structure */
    if (MOTET_THREAD_TIMED) t->run_from = timer_now();
    policy_started(t);
}

/* The same for t ready or blocked: a ready t is the one policy_peek()
 * returned (next_context() found it), blocked only the idle thread. */
static MT_INLINE void take_cpu(thread_t *t)
{
    if (t->state == TS_READY) ready_take_peeked(t);
    start_cpu(t);
}

#endif /* MOTET_THREADS */

#endif /* MOTET_THREAD_SCHED_H */
