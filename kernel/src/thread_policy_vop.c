/* SPDX-License-Identifier: MIT */
/*
 * Policy MOTET_POLICY_VOP: optimising the value of preemption (Moubarak
 * and Watfa). Threads of a level share the CPU round robin with a quantum
 * (MOTET_THREAD_SLICE_US), but the scheduler cuts involuntary context
 * switches by opening preemption-free periods.
 *
 * Job sizes come from the quantum. A thread that used its whole quantum
 * and was switched out for it (an involuntary switch) gets a full quantum
 * again and counts as long (beta). A thread that blocked on its own keeps
 * only what it had left; with less than a full quantum it counts as short
 * (alpha): it is likely to block again soon.
 *
 * Periods. After every delta of thread work (MOTET_VOP_DELTA_QUANTA
 * quanta of CPU time) in round robin, a preemption-free period opens: a
 * long thread running then gives way to the waiting short ones (the one
 * involuntary switch the period costs), and only short threads run, each
 * to completion: no quantum end takes the CPU from it, so it blocks on its
 * own, with no involuntary switch. The period ends after another delta of
 * work, or as soon as no short thread is left to run (the paper's return
 * to round robin when short jobs cannot fill the period): a long thread
 * never runs inside one, so a short one never has to preempt it there.
 * Priorities between levels, and the kernel stack's handlers, preempt as
 * always: only switches among equals are saved.
 *
 * Keys: level * 2 + 1 for short threads during a preemption-free period,
 * level * 2 otherwise; the ready threads are re-keyed when the mode
 * changes. The quantum timer is tickless: armed only while an equal waits
 * and the running thread may be sliced.
 */
#include "motet/timer.h"
#include "thread_internal.h"

#if MOTET_THREADS && MOTET_THREAD_POLICY == MOTET_POLICY_VOP

#define QUANTUM TIMER_US(MOTET_THREAD_SLICE_US)
#define DELTA   ((uint32_t) MOTET_VOP_DELTA_QUANTA * QUANTUM)

static struct {
    uint32_t work;    /* thread CPU ticks since the mode changed */
    bool free_period; /* a preemption-free period is open */
} V;

bool thread_vop_preemption_free(void)
{
    return V.free_period;
}

static bool is_short(const thread_t *t)
{
    return !(t->flags & THREAD_F_LONG);
}

static uint8_t key_of(const thread_t *t)
{
    return (uint8_t) (t->prio * 2 + (V.free_period && is_short(t) ? 1 : 0));
}

void policy_init(void)
{
    rq_init();
    thread_slice_reset();
    V.work = 0;
    V.free_period = false;
}

mt_err_t policy_thread_init(thread_t *t)
{
    if (t->cls == THREAD_CLASS_DEFAULT) t->cls = THREAD_CLASS_RR;
    if (t->cls != THREAD_CLASS_RR) return MT_ERR_INVALID;
    t->quantum = QUANTUM;
    t->flags |= THREAD_F_LONG;
    return MT_OK;
}

/* A full quantum again: the job counts as long. */
static void renew(thread_t *t)
{
    t->quantum = QUANTUM;
    t->flags = (uint8_t) ((t->flags & ~THREAD_F_SLICE) | THREAD_F_LONG);
}

void policy_ready(thread_t *t, uint8_t how)
{
    bool spent = t->flags & THREAD_F_SLICE;
    if (spent || !t->quantum) {
        renew(t); /* involuntary switch, or blocked with nothing left */
    } else if (how != READY_PREEMPTED) {
        /* Blocked or yielded on its own: it keeps the rest of its quantum,
         * which makes it short unless it never ran. */
        if (t->quantum < QUANTUM) t->flags &= (uint8_t) ~THREAD_F_LONG;
    }
    t->key = key_of(t);
    rq_push(t, how == READY_PREEMPTED && !spent);
}

void policy_remove(thread_t *t)
{
    rq_remove(t);
}

thread_t *policy_peek(void)
{
    return rq_peek();
}

bool policy_preempts(const thread_t *c, const thread_t *cur)
{
    uint8_t kc = c->key, kr = key_of(cur);
    if (kc != kr) return kc > kr;
    if (V.free_period && is_short(cur)) return false; /* runs to completion */
    return cur->flags & THREAD_F_SLICE;
}

/* The mode changed: every ready thread moves to its new key. */
static void rekey_ready(void)
{
    for (uint8_t id = 0; id < MOTET_MAX_THREADS; id++) {
        thread_t *t = thread_by_id(id);
        if (t->state != TS_READY) continue;
        rq_remove(t);
        t->key = key_of(t);
        rq_push(t, false);
    }
}

/* Open or close a preemption-free period; delta of work starts again. */
static void set_free_period(bool free)
{
    V.free_period = free;
    V.work = 0;
    rekey_ready();
}

void policy_started(thread_t *cur)
{
    if (V.free_period && !is_short(cur)) set_free_period(false); /* no short job left */
    thread_t *best = rq_peek();
    bool sliced = !(V.free_period && is_short(cur));
    if (sliced && best && best->prio == cur->prio) /* an equal waits */
        thread_slice_arm(cur, cur->quantum ? cur->quantum : 1);
    else
        thread_slice_disarm();
}

void policy_charge(thread_t *cur, uint32_t ran)
{
    cur->quantum = ran < cur->quantum ? cur->quantum - ran : 0;
    if (!cur->quantum) cur->flags |= THREAD_F_SLICE;
    V.work += ran;
    if (V.work >= DELTA) set_free_period(!V.free_period); /* after each delta of work */
}

void policy_blocking(thread_t *cur, thread_event_t ev)
{
    (void) cur;
    (void) ev;
}

void policy_timer(uint8_t id)
{
    if (id == THREAD_TIMER_SLICE) thread_slice_expired(); /* the interrupt exit charges */
}

thread_t *policy_idle(void)
{
    return NULL;
}

mt_err_t policy_sleep(thread_t *cur, uint32_t ticks)
{
    return timer_kernel_start(cur->id, ticks, false);
}

void policy_sem_op(void)
{
}

#endif
