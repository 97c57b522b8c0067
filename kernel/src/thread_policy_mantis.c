/* SPDX-License-Identifier: MIT */
/*
 * Policy MOTET_POLICY_MANTIS: THE BASELINE. The original MANTIS kernel's
 * thread scheduling, rebuilt faithfully so that benchmarks can measure what
 * Motet's design saves (docs/threads.md). Do not use it for anything else.
 *
 * What makes it the original:
 *   - an idle thread, the lowest of all, that puts the module to sleep: a
 *     thread that blocks with nothing else to run switches to it, and back
 *     when woken (two context switches where Motet has none);
 *   - a periodic 20 ms tick that runs whether anything is due or not; at
 *     each tick the running thread goes behind its equals (round robin for
 *     every thread) and the sleep queue is rescanned;
 *   - linked-list queues: the ready queue is an array of lists, one per
 *     level, searched from the top; appending walks the list;
 *   - a sleep queue sorted by wake-up, holding a counter per thread that
 *     every update decrements (update_sleep_counters), at each tick and at
 *     each semaphore operation; so a sleep ends at the first tick or
 *     semaphore operation after it is due, not at its deadline.
 * Handlers and the kernel stack rank against threads by the same rules as
 * under every policy.
 */
#include "motet/log.h"
#include "motet/timer.h"
#include "thread_internal.h"

#if MOTET_THREADS && MOTET_THREAD_POLICY == MOTET_POLICY_MANTIS

#define TICK TIMER_MS(20)

static struct {
    thread_t *ready[MOTET_PRIO_LEVELS]; /* the ready queue: a list per level */
    thread_t *sleeping;                 /* the sleep queue, soonest first */
    uint32_t updated;                   /* timer_now() of the last counter update */
    uint32_t ticks;
    thread_t idle;
} M;

static uint8_t idle_stack[PORT_THREAD_STACK_MIN];

uint32_t thread_mantis_ticks(void)
{
    return M.ticks;
}

/* The idle thread: sleep, and let every interrupt exit switch away. */
static void idle_loop(void *arg)
{
    (void) arg;
    for (;;) { /* irq off here: entered and resumed by switches */
        port_sleep_mode_t mode = sched_sleep_mode();
        log_event(EV_SLEEP, MT_PID_NONE, (uint16_t) mode);
        port_sleep(mode);
        log_event(EV_WAKE, MT_PID_NONE, 0);
    }
}

void policy_init(void)
{
    for (uint8_t l = 0; l < MOTET_PRIO_LEVELS; l++) M.ready[l] = NULL;
    M.sleeping = NULL;
    M.ticks = 0;
    M.updated = timer_now();
    M.idle.flags = THREAD_F_IDLE;
    M.idle.prio = -1;
    M.idle.state = TS_BLOCKED;
    M.idle.id = 0xFF;
    M.idle.stack = idle_stack;
    M.idle.stack_size = sizeof idle_stack;
    port_context_init(&M.idle.ctx, idle_stack, sizeof idle_stack, idle_loop, NULL);
    timer_kernel_start(THREAD_TIMER_TICK, TICK, true); /* runs for ever */
}

mt_err_t policy_thread_init(thread_t *t)
{
    if (t->cls == THREAD_CLASS_DEFAULT) t->cls = THREAD_CLASS_RR;
    return t->cls == THREAD_CLASS_RR ? MT_OK : MT_ERR_INVALID;
}

void policy_ready(thread_t *t, uint8_t how)
{
    bool sliced = t->flags & THREAD_F_SLICE;
    t->flags &= (uint8_t) ~THREAD_F_SLICE;
    thread_t **link = &M.ready[t->prio];
    if (how != READY_PREEMPTED || sliced)
        while (*link) link = &(*link)->next; /* append: walk the list */
    t->next = *link;
    *link = t;
}

void policy_remove(thread_t *t)
{
    thread_t **link = &M.ready[t->prio];
    while (*link && *link != t) link = &(*link)->next;
    if (*link) *link = t->next;
    t->next = NULL;
}

thread_t *policy_peek(void)
{
    for (int l = MOTET_PRIO_LEVELS - 1; l >= 0; l--) /* search from the top */
        if (M.ready[l]) return M.ready[l];
    return NULL;
}

bool policy_preempts(const thread_t *c, const thread_t *cur)
{
    if ((cur->flags & THREAD_F_IDLE) || c->prio > cur->prio) return true;
    return c->prio == cur->prio && (cur->flags & THREAD_F_SLICE);
}

void policy_started(thread_t *cur)
{
    (void) cur;
}

void policy_charge(thread_t *cur, uint32_t ran)
{
    (void) cur;
    (void) ran;
}

void policy_blocking(thread_t *cur, thread_event_t ev)
{
    (void) cur;
    (void) ev;
}

/* Count every sleeper down by the time since the last update and wake
 * those that reach zero (the original's update_sleep_counters). */
static void update_sleep_counters(void)
{
    uint32_t now = timer_now();
    uint32_t elapsed = now - M.updated;
    M.updated = now;
    for (thread_t *t = M.sleeping; t; t = t->next)
        t->sleep_left = elapsed < t->sleep_left ? t->sleep_left - elapsed : 0;
    while (M.sleeping && !M.sleeping->sleep_left) {
        thread_t *t = M.sleeping;
        M.sleeping = t->next;
        t->next = NULL;
        thread_wait_end(t, MT_ERR_TIMEOUT);
    }
}

void policy_timer(uint8_t id)
{
    if (id != THREAD_TIMER_TICK) return;
    port_irq_state_t s = port_irq_save();
    M.ticks++;
    update_sleep_counters();
    thread_t *cur = thread_running();
    if (cur && !(cur->flags & THREAD_F_IDLE) && M.ready[cur->prio])
        cur->flags |= THREAD_F_SLICE; /* time slice: behind its equals */
    port_irq_restore(s);
}

thread_t *policy_idle(void)
{
    return &M.idle;
}

mt_err_t policy_sleep(thread_t *cur, uint32_t ticks)
{
    update_sleep_counters();
    cur->sleep_left = ticks;
    thread_t **link = &M.sleeping;
    while (*link && (*link)->sleep_left <= ticks) link = &(*link)->next;
    cur->next = *link;
    *link = cur;
    return MT_OK;
}

void policy_sem_op(void)
{
    update_sleep_counters();
}

#endif
