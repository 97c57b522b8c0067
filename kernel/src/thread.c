/* SPDX-License-Identifier: MIT */
/*
 * Threads: the mechanism (thread.h, docs/threads.md). Contexts, the kernel
 * stack as a context of its own, blocking with the sleep-in-place fast path,
 * waking, and the decisions between a thread and the kernel stack; the order
 * among threads is the policy's (thread_internal.h). The state and the steps
 * of a decision that a thread's admission and exit (thread_life.c) take too
 * are thread_sched.h's.
 *
 * Contexts. K is the kernel stack: boot code, sched_run() and every message
 * handler run there. Its claim on the CPU is the priority of its top frame
 * (sched.running_prio, dispatch.c), or that of the queue head, or, with neither,
 * "background" (boot or test code outside sched_run(): below every thread,
 * but runnable) or "idle" (sched_run() with nothing to do: no claim). A
 * thread's claim is its level, t->prio. One rule set decides, everywhere:
 *
 *   K before a ready thread of level p: a frame of K at p or above (it
 *     started first), or a queue head above p (rule 5: a message must outrank);
 *   K before the running thread of level p: a frame or the queue head
 *     strictly above p (rule 3), or the thread handed K a send (rule 1);
 *   a ready thread before the running one: the policy's order.
 *
 * Where decisions happen. In K: every drain of the message queue first runs
 * the threads that outrank K's frame and queue head (thread_k_yield), so a
 * thread made ready by a handler, a semaphore post or an interrupt preempts
 * K there, with K's frames left below on the kernel stack. In a thread: its
 * blocking calls, its preemption points (sends, posts, creation), and the
 * exit of every interrupt it was interrupted by (thread_isr_exit, on its
 * stack, in the port's interrupt frame, which waits there until it resumes).
 *
 * Sends from threads. A message that must run at once (rule 1) is handed
 * to K; the thread is blocked (WAIT_K_CALL), out of the ready structure,
 * until the call returned, then ready again first among its equals, its
 * place kept meanwhile (call_keeps_place()); K runs whatever then outranks
 * the thread. Mail to a bound thread: its mailbox (thread_sem.c).
 *
 * No idle thread (but the MANTIS baseline's, policy_idle). A thread that
 * blocks when nothing else can run calls port_sleep() from its own stack,
 * BLOCKED_RUNNING; woken itself, it carries on without a switch (MANTIS's
 * fast path). The interrupt exits during the sleep decide nothing
 * (thread_sched.sleeping): the blocking call decides once port_sleep() returns.
 */
#include <string.h>

#include "motet/log.h"
#include "motet/timer.h"
#include "queue_internal.h"
#include "thread_internal.h"
#include "thread_sched.h"

#if MOTET_THREADS

/* The running thread (NULL: K runs); global so that thread_running() is an
 * inline load on the scheduler's send path. */
thread_t *thread_current;
#if THREAD_READY_COUNTED
volatile uint8_t thread_ready_count; /* threads in the MANTIS baseline's lists */
#endif

thread_sched_t thread_sched;

#define YIELD_OWED INT8_MAX /* above every level: thread_wake() */

#if MOTET_STATS
uint32_t thread_switch_count(void)
{
    port_irq_state_t s = port_irq_save();
    uint32_t n = thread_sched.switches;
    port_irq_restore(s);
    return n;
}
#endif

#if MOTET_THREAD_CUT_STATS
void thread_switch_stats(thread_switch_stats_t *out)
{
    port_irq_state_t s = port_irq_save();
    *out = thread_sched.why;
    port_irq_restore(s);
}

uint32_t thread_cuts_to(const thread_t *t)
{
    port_irq_state_t s = port_irq_save();
    uint32_t n = t->cuts_to;
    port_irq_restore(s);
    return n;
}
#endif

/* ---- stacks (the rest: thread_stack.c) ---- */

/* The same at every switch away, in a few instructions: the guard's
 * lowest word, a canary that an overflow reaching past the guard has
 * overwritten. */
STACK_SCAN static void check_canary_word(const thread_t *t)
{
    unsigned word; /* a register's width: one load and compare on any core */
    memcpy(&word, t->stack, sizeof word);
    if (word != (unsigned) (STACK_PAINT * 0x01010101ul)) thread_stack_overflow();
}

/* Only guarded threads have it: those the analyser could not size. */
static MT_INLINE void check_canary(const thread_t *t)
{
    if (PORT_HAS_MPU_STACK_GUARD || !(t->flags & THREAD_F_GUARD)) return; /* the MPU guards */
    check_canary_word(t);
}

/* ---- the decisions ---- */

void thread_unready(thread_t *t)
{
    ready_take(t);
    t->state = TS_BLOCKED;
}

void thread_prio_set(thread_t *t, mt_prio_t p)
{
    if (t->prio == p) return;
    if (t->state != TS_READY || t == thread_current) { /* not in the ready structure */
        t->prio = p;
        if (THREAD_POLICY_BY_LEVEL) t->key = (uint8_t) p; /* its key is its level, always */
        if (t->wait_list) thread_waitq_reorder(t);        /* woken by priority */
        return;
    }
    ready_take(t);
    t->prio = p;
    ready_add(t, READY_WOKEN);
}

/* K before the running thread cur. */
static MT_INLINE bool k_beats_running(const thread_t *cur)
{
    return thread_sched.call || thread_sched.k_floor > cur->prio || queue_top_prio() > cur->prio;
}

/* Whether the running thread cur may lose the CPU at a scheduling point:
 * a timed policy charges it and re-arms its slice there in any case;
 * otherwise only a ready thread or a claim of K can take the CPU, and with
 * neither, reschedule_running() would decide to keep it. irq off. */
static MT_INLINE bool may_lose_cpu(const thread_t *cur)
{
    return MOTET_THREAD_TIMED || thread_ready_hint() || k_beats_running(cur);
}

/* Count a switch from `from` to `to` (NULL: K), with MOTET_STATS only (no
 * bookkeeping no option asks for); with MOTET_THREAD_CUT_STATS also by cause.
 * A thread back in the ready structure still had work: the switch was forced
 * on it. K and the idle thread have no work of their own to lose. */
static MT_INLINE void count_switch(const thread_t *from, thread_t *to)
{
#if MOTET_STATS
    thread_sched.switches++;
#endif
#if MOTET_THREAD_CUT_STATS
    uint32_t *cause = &thread_sched.why.voluntary; /* blocked, or exiting (TS_FREE) */
    if (!from || (from->flags & THREAD_F_IDLE)) {
        cause = &thread_sched.why.from_kernel;
    } else if (from->state == TS_READY || from->wait == WAIT_K_CALL) { /* still had work */
        cause = &thread_sched.why.involuntary;
        if (to) to->cuts_to++;
        if (to && to->prio == from->prio) thread_sched.why.to_equal++;
    }
    (*cause)++;
#else
    (void) from;
    (void) to;
#endif
}

/* The switch itself, from the running context `from` (NULL: K) to `to`,
 * registers saved in `out`; irq off. */
static MT_INLINE void switch_context(thread_t *from, thread_t *to, port_context_t *out)
{
    if (from) check_canary(from);
    thread_current = to;
    count_switch(from, to);
#if PORT_HAS_THREAD_SWITCH
    if (from && to && out == &from->ctx) {
        port_context_switch_threads(out, &to->ctx);
        return;
    }
#endif
    port_context_switch(out, to ? &to->ctx : &thread_sched.k_ctx);
}

/* Between two threads, both known: no look at K's stack; from's canary if `check`. */
static MT_INLINE void switch_threads(thread_t *from, thread_t *to, bool check)
{
    if (check) check_canary(from);
    thread_current = to;
    count_switch(from, to);
#if PORT_HAS_THREAD_SWITCH
    port_context_switch_threads(&from->ctx, &to->ctx);
#else
    port_context_switch(&from->ctx, &to->ctx);
#endif
}

void thread_switch_to(thread_t *to, port_context_t *save)
{
    thread_t *from = thread_current;
    if (from == to) return;
    switch_context(from, to, save ? save : from ? &from->ctx : &thread_sched.k_ctx);
}

/* From a thread that gave up the CPU: run `next`, or K if NULL. */
static MT_INLINE void run_next(thread_t *next)
{
    if (next) take_cpu(next);
    thread_switch_to(next, NULL);
}

/* The same from cur, known not to be `next`: without thread_switch_to()'s look. */
static MT_INLINE void run_next_from(thread_t *cur, thread_t *next)
{
    if (next) take_cpu(next);
    switch_context(cur, next, &cur->ctx);
}

/* A scheduling point in the running thread: keep the CPU, or hand it to
 * whoever outranks it; irq off. */
static void reschedule_running(void)
{
    thread_t *cur = thread_current;
    charge(cur);
    thread_t *best = policy_peek();
    bool k_claims = k_beats_running(cur);
    if (!k_claims && !(best && policy_preempts(best, cur))) {
        policy_started(cur); /* re-arm a slice if equals appeared */
        return;
    }
    /* By level, a ready thread above cur where K claims nothing above cur
     * is above K's claim too, and cur goes in below it: it is what
     * next_context() would find, decided without a second look (an
     * interrupt that woke a higher thread switches once, here). Such a
     * policy has no idle thread. */
    if (THREAD_POLICY_BY_LEVEL && !k_claims && best->prio > cur->prio) {
        ready_add(cur, READY_PREEMPTED);
        ready_take_peeked(best);
        start_cpu(best);
        switch_threads(cur, best, true);
        return;
    }
    if (THREAD_IS_IDLE(cur))
        cur->state = TS_BLOCKED; /* picked again only when nothing else can run */
    else
        ready_add(cur, READY_PREEMPTED);
    run_next(next_context()); /* cur is ready: some thread or K has the claim */
}

/* Nothing can run and K is idle: the blocked thread puts the module to
 * sleep itself, from its own stack. */
static void sleep_in_place(thread_t *cur)
{
    cur->state = TS_BLOCKED_RUNNING;
    thread_sched.sleeping = true;
    port_sleep_mode_t mode = sched_sleep_mode();
    log_event(EV_SLEEP, MT_PID_NONE, (uint16_t) mode);
    port_sleep(mode);
    log_event(EV_WAKE, MT_PID_NONE, 0);
    thread_sched.sleeping = false;
    if (cur->state == TS_BLOCKED_RUNNING) cur->state = TS_BLOCKED; /* not for us */
}

/* cur was woken in its sleep, whose interrupt exits decided nothing: what
 * they made ready or queued above it runs now. Out of line. irq off. */
static MT_NOINLINE void woken_in_place(thread_t *cur)
{
    if (MOTET_THREAD_TIMED) cur->run_from = timer_now();
    if (may_lose_cpu(cur))
        reschedule_running();
    else
        policy_started(cur);
}

void thread_block(void)
{
    thread_t *cur = thread_current;
    charge(cur);
    for (;;) {
        if (cur->state == TS_READY) { /* woken during its own sleep: fast path */
            woken_in_place(cur);
            return;
        }
        /* Resumed from each switch below: whoever switched back made it current. */
        thread_t *next = next_context();
        if (next) { /* a ready thread, the one policy_peek() found */
            ready_take_peeked(next);
            start_cpu(next);
            switch_threads(cur, next, true);
            return;
        }
        bool nobody = no_context();
        if (nobody) next = policy_idle();
        if (next || !nobody) {
            run_next_from(cur, next); /* the idle thread, or K */
            return;
        }
        sleep_in_place(cur);
    }
}

/* Woken above cur in task context (a served expiry), t may wait for no decision: owed. */
void thread_wake(thread_t *t)
{
    if (t->state == TS_BLOCKED_RUNNING) {
        t->state = TS_READY; /* still current: it just carries on */
        return;
    }
    if (t->state != TS_BLOCKED) return;
    ready_add(t, READY_WOKEN);
    const thread_t *cur = thread_current;
    if (THREAD_YIELD_IN_LEVEL && cur && t->prio > cur->prio && !port_in_isr())
        thread_sched.yield_bar = YIELD_OWED;
}

/* Whether t, blocked and being woken by the running thread cur, outranks
 * cur, every ready thread and K: what reschedule_running() would decide
 * after waking t, decided before, where the order among threads is by
 * level. Each test its own return: nothing is computed that a later one
 * needs. */
static MT_INLINE bool wake_preempts(const thread_t *cur, const thread_t *t)
{
    if (!THREAD_POLICY_BY_LEVEL || !cur || port_in_isr()) return false;
    mt_prio_t p = t->prio;
    if (cur->state != TS_READY || t->state != TS_BLOCKED || p <= cur->prio) return false;
    if (thread_sched.k_floor >= p || queue_top_prio() > p) return false; /* k_beats_ready() */
    const thread_t *best = policy_peek();
    if (best && best->prio >= p) return false;
    return true;
}

/* thread_wake_switch(), in line in its two callers: t runs at once, without
 * passing through the ready structure, or is woken. */
static MT_INLINE bool wake_switch(thread_t *t)
{
    thread_t *cur = thread_current;
    if (!wake_preempts(cur, t)) {
        thread_wake(t);
        return false;
    }
    charge(cur);
    ready_add(cur, READY_PREEMPTED);
    start_cpu(t); /* blocked: not in the ready structure */
    switch_threads(cur, t, true);
    return true;
}

bool thread_wake_switch(thread_t *t)
{
    return wake_switch(t);
}

bool thread_wait_end_switch(thread_t *t, mt_err_t result)
{
    return thread_wait_finish_taken(t, result) && wake_switch(t);
}

/* Threads created THREAD_START_AT_RUN by boot code (thread_admit(),
 * thread_life.c) become ready now. Here, beside thread_wake(), which
 * arm-none-eabi-gcc puts in line in it in part. */
static void release_at_run(void)
{
    port_irq_state_t s = port_irq_save();
    for (uint8_t i = 0; i < MOTET_MAX_THREADS && thread_sched.at_run; i++) {
        thread_t *t = thread_by_id(i);
        if (!(t->flags & THREAD_F_AT_RUN)) continue;
        t->flags &= (uint8_t) ~THREAD_F_AT_RUN;
        thread_sched.at_run--;
        if (!(t->flags & THREAD_F_SUSPENDED)) thread_wake(t);
    }
    port_irq_restore(s);
}

void thread_k_in_run(bool in)
{
    thread_sched.k_in_run = in;
    if (in && thread_sched.at_run) release_at_run(); /* the drain that follows runs them */
}

/* ---- K's side ----
 *
 * K only ever waits for a thread here (or, MANTIS baseline, in
 * thread_k_idle_switch), at a drain's step or hold whose frame below has
 * priority `floor`. That is K's claim while it waits, recorded in
 * thread_sched.k_floor for the threads' decisions: S.running_prio may read
 * higher, since a drain holds the level of the message it just ran until
 * it takes the next (dispatch.c), but no frame of that level is on the
 * stack. */

void thread_k_yield(mt_prio_t floor)
{
    if (!thread_ready_hint() && !thread_sched.call)
        return; /* a stale hint loses nothing: see drain_above() */
    port_irq_state_t s = port_irq_save();
    for (;;) {
        if (thread_sched.call) { /* a thread's send: run it now, at the thread's level */
            void (*fn)(void *) = thread_sched.call;
            thread_t *outer = thread_sched.in_call; /* only it lives across the call */
            thread_sched.call = NULL;
            thread_sched.in_call = thread_sched.caller;
            sched_k_call(fn, thread_sched.call_arg,
                         thread_sched.in_call->prio); /* irq on in it, off again */
            thread_t *caller = thread_sched.in_call;  /* restored by any nested call */
            thread_sched.in_call = outer;
            if (thread_wait_finish_taken(caller, MT_OK)) ready_add(caller, READY_PREEMPTED);
            continue;
        }
        thread_t *best = policy_peek();
        if (!best || k_beats_ready(floor, best->prio) || call_keeps_place(best)) break;
        take_cpu(best);
        thread_sched.k_floor = floor;   /* K's claim while it waits (see below) */
        thread_sched.yield_bar = floor; /* best is the first of all: nothing owed */
        thread_switch_to(best, NULL);   /* K waits here, its frames below */
    }
    port_irq_restore(s);
}

bool thread_k_idle_switch(void)
{
    thread_t *idle = policy_idle();
    if (!idle) return false;
    take_cpu(idle);
    thread_sched.k_floor = thread_sched.yield_bar = -1; /* idle in sched_run(): no frame */
    thread_switch_to(idle, NULL); /* back when K has work; sched_run() drains */
    thread_k_yield(-1);           /* a thread's call first: no drain sees its caller */
    return true;
}

void thread_call_on_k(void (*fn)(void *), void *arg)
{
    port_irq_state_t s = port_irq_save();
    thread_t *cur = thread_current;
    charge(cur);
    thread_sched.call = fn;
    thread_sched.call_arg = arg;
    thread_sched.caller = cur;
    cur->state = TS_BLOCKED; /* out of the ready structure: nothing resumes it early */
    cur->wait = WAIT_K_CALL;
    thread_switch_to(NULL, NULL);
    port_irq_restore(s);
}

/* ---- thread side ---- */

bool thread_isr_exit_due(void)
{
    const thread_t *cur = thread_current;
    return !thread_sched.sleeping && cur->state == TS_READY && may_lose_cpu(cur);
}

void thread_isr_exit(void)
{
    reschedule_running();
}

sched_isr_exit_fn thread_isr_exit_choice(void)
{
    return thread_isr_exit_due() ? thread_isr_exit : NULL;
}

void thread_preempt_point(void)
{
    thread_t *cur = thread_current;
    if (!cur) {
        sched_k_preempt();
        return;
    }
    port_irq_state_t s = port_irq_save();
    if (cur->state == TS_READY && may_lose_cpu(cur)) reschedule_running();
    port_irq_restore(s);
}

/* A yield by the policy's order, next its best ready thread. irq off. */
static MT_NOINLINE void yield_by_policy(thread_t *cur, thread_t *next)
{
    if (THREAD_POLICY_BY_LEVEL && !k_beats_running(cur) && (!next || next->prio < cur->prio)) {
        /* No equal waits: it keeps the CPU, with round robin a new slice. */
#if MOTET_THREAD_RR
        policy_prio_new_slice(cur);
        policy_started(cur);
#endif
        return;
    }
    if (!next && !MOTET_THREAD_RR && !k_beats_running(cur)) return; /* nobody to yield to */
    /* Behind its equals; by level, their first is still the best (no second look). */
    ready_add(cur, READY_YIELD);
    run_next(THREAD_POLICY_BY_LEVEL ? next_context_of(next) : next_context());
}

#if THREAD_YIELD_IN_LEVEL

/* A yield by fixed levels without slices. No thread above cur is ready
 * while it runs (what makes one ready or lowers cur decides at once, a sleep
 * in place too: woken_in_place(); YIELD_OWED says when not): the next is the
 * head of cur's level, cur takes its tail in one step, unless K claims the
 * level (thread_sched.yield_bar: its frame or a debt, one test) or a message does. */
static MT_INLINE void yield_in_level(thread_t *cur)
{
    check_canary(cur); /* first: only cur lives across its call (no saved registers) */
    mt_prio_t p = cur->prio;
    if (thread_sched.yield_bar >= p) { /* K's frame at p (k_beats_ready()), or a decision owed */
        thread_sched.yield_bar = thread_sched.k_floor;
        yield_by_policy(cur, policy_peek());
        return;
    }
    rq_fifo_t *level = rq_fifo((uint8_t) p);
    thread_t *next = level->head;
    if (!next || queue_top_prio() > p) { /* no equal, or a message outranks the level */
        yield_by_policy(cur, next);
        return;
    }
    rq_swap_head(level, next, cur); /* both stay TS_READY; cur's key is p */
    switch_threads(cur, next, false);
}

#endif

mt_err_t thread_yield(void)
{
    thread_t *cur = thread_current;
    if (!cur) return log_error(MT_ERR_STATE);
    port_irq_state_t s = port_irq_save();
    charge(cur);
#if THREAD_YIELD_IN_LEVEL
    yield_in_level(cur);
#else
    yield_by_policy(cur, policy_peek());
#endif
    port_irq_restore(s);
    return MT_OK;
}

#endif /* MOTET_THREADS */
