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
 * work, or as soon as no short thread is left to run (round robin again
 * when short jobs cannot fill the period): a long thread
 * never runs inside one, so a short one never has to preempt it there.
 * Priorities between levels, and the kernel stack's handlers, preempt as
 * always: only switches among equals are saved.
 *
 * Keys: level * 2 + 1 for short threads during a preemption-free period,
 * level * 2 otherwise; the ready threads are re-keyed when the mode
 * changes. The quantum timer is tickless: armed only while an equal waits
 * and the running thread may be sliced.
 *
 * MOTET_VOP_DEFER_QUANTA > 0 builds the deferring variant instead
 * (docs/threads.md, "The deferring variant of value of preemption"): as
 * written, short jobs cut the long ones at every quantum end of round
 * robin, and a period spares only the quantum ends inside it. The variant
 * defers short jobs, and opens a period per batch of them:
 *   - a short thread never cuts a long one in round robin: long threads
 *     share the CPU by quantum among themselves only, and only while no
 *     short one waits: while one does, the running long thread keeps the
 *     CPU past its quantum's end until their delta is done (another long
 *     one taking over would cost a switch and make the short ones wait
 *     longer), with its timer set for the delta alone;
 *   - once the running long threads have done MOTET_VOP_DEFER_QUANTA
 *     quanta of work while a short thread waited (its delta, counted from
 *     the first short thread that waits, not from the last mode change),
 *     a preemption-free period opens: the long thread gives way once and
 *     every short thread waiting or arriving runs to completion; the
 *     period ends when none is left (a long thread starts);
 *   - short threads are always keyed above long ones of their level, so
 *     when a long thread blocks or ends on its own they run first, which
 *     costs no involuntary switch;
 *   - a short thread that uses up its quantum is long from then on, and
 *     sliced among the long ones.
 * Long, short, quantum and priorities between levels are as above.
 */
#include "motet/timer.h"
#include "thread_internal.h"

#if MOTET_THREADS && MOTET_THREAD_POLICY == MOTET_POLICY_VOP

#define QUANTUM TIMER_US(MOTET_THREAD_SLICE_US)
#define DELTA   ((uint32_t) MOTET_VOP_DELTA_QUANTA * QUANTUM)
#define DEFER   MOTET_VOP_DEFER_QUANTA /* 0: the algorithm as written */
/* The variant's delta (never read by the literal build, which has none). */
#define DEFER_TICKS ((uint32_t) (DEFER ? DEFER : 1) * QUANTUM)

static struct {
    uint32_t work;      /* thread CPU ticks since the mode changed (the variant:
                         * long threads' ticks while a short one waited) */
    uint32_t wait_from; /* the variant: timer_now() when a short one began to wait */
    bool free_period;   /* a preemption-free period is open */
} V;

bool thread_vop_preemption_free(void)
{
    return V.free_period;
}

static MT_INLINE bool is_short(const thread_t *t)
{
    return !(t->flags & THREAD_F_LONG);
}

static MT_INLINE uint8_t key_of(const thread_t *t)
{
    return (uint8_t) (t->prio * 2 + ((DEFER || V.free_period) && is_short(t) ? 1 : 0));
}

/* Whether a short (or long) thread of cur's level is ready. */
static MT_INLINE bool waiting(const thread_t *cur, bool short_one)
{
    return rq_holds((uint8_t) (cur->prio * 2 + (short_one ? 1 : 0)));
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
        /* The variant sizes each job: one that ended within its quantum
         * was short, and the next starts with a whole quantum (as written,
         * the rest carries over, so a thread of many short jobs runs out of
         * it every quantum's worth of them and is long for the next). */
        if (DEFER) t->quantum = QUANTUM;
    }
    if (DEFER && is_short(t) && !waiting(t, true)) V.wait_from = timer_now();
    t->key = key_of(t);
    rq_push(t, how == READY_PREEMPTED && !spent);
}

void policy_remove(thread_t *t)
{
    rq_remove(t);
}

bool policy_preempts(const thread_t *c, const thread_t *cur)
{
    if (DEFER && c->prio == cur->prio) {
        if (is_short(cur)) return false;       /* runs to completion */
        if (is_short(c)) return V.free_period; /* deferred until a period */
        return cur->flags & THREAD_F_SLICE;
    }
    uint8_t kc = c->key, kr = key_of(cur);
    if (kc != kr) return kc > kr;
    if (V.free_period && is_short(cur)) return false; /* runs to completion */
    return cur->flags & THREAD_F_SLICE;
}

/* The mode changed: every ready thread moves to its new key; cur, the
 * thread running or being started, is TS_READY but not in the structure. */
static void rekey_ready(const thread_t *cur)
{
    for (uint8_t id = 0; id < MOTET_MAX_THREADS; id++) {
        thread_t *t = thread_by_id(id);
        if (t->state != TS_READY || t == cur) continue;
        rq_remove(t);
        t->key = key_of(t);
        rq_push(t, false);
    }
}

/* Open or close a preemption-free period; delta of work starts again. */
static void set_free_period(bool free, const thread_t *cur)
{
    V.free_period = free;
    V.work = 0;
    rekey_ready(cur);
}

/* The variant: what the running thread's timer waits for. A long thread
 * is stopped for the short ones when their delta is done while one waits,
 * and otherwise sliced for a long equal; a short thread is timed to become
 * long at the end of its quantum if an equal waits. A long thread whose
 * quantum ran out with no long equal to take over gets a new one in place
 * (nothing was switched). */
static void started_deferring(thread_t *cur)
{
    if (is_short(cur)) {
        V.free_period = false; /* short ones are served: their delta starts again */
        V.work = 0;
        /* At the end of its quantum it becomes long (policy_charge), if
         * an equal waits for the CPU. */
        if (waiting(cur, false) || waiting(cur, true))
            thread_slice_arm(cur, cur->quantum ? cur->quantum : 1);
        else
            thread_slice_disarm();
        return;
    }
    V.free_period = false;
    uint32_t due;
    if (waiting(cur, true)) {
        /* A short one waits: the long one keeps the CPU until their delta
         * is done (its quantum's end would only hand the CPU to a long
         * equal, a switch that makes the short ones wait longer). */
        due = V.work < DEFER_TICKS ? DEFER_TICKS - V.work : 1;
    } else {
        V.work = 0;
        bool longs = waiting(cur, false);
        if (!longs && (cur->flags & THREAD_F_SLICE)) renew(cur);
        due = longs ? (cur->quantum ? cur->quantum : 1) : 0;
    }
    if (due)
        thread_slice_arm(cur, due);
    else
        thread_slice_disarm();
}

void policy_started(thread_t *cur)
{
    if (DEFER) {
        started_deferring(cur);
        return;
    }
    if (V.free_period && !is_short(cur)) set_free_period(false, cur); /* no short job left */
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
    if (DEFER) {
        /* A short job that used up its quantum is long from now on: it is
         * sliced among the long ones, as in round robin. */
        if (!cur->quantum) cur->flags |= THREAD_F_LONG;
        /* A short thread waited while this long one ran: its delta goes on
         * by the part of `ran` since it began to wait. */
        if (!is_short(cur) && waiting(cur, true)) {
            uint32_t waited = cur->run_from + ran - V.wait_from;
            V.work += waited < ran ? waited : ran;
        }
        if (V.work >= DEFER_TICKS) V.free_period = true;
        return;
    }
    V.work += ran;
    if (V.work >= DELTA) set_free_period(!V.free_period, cur); /* after each delta */
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
