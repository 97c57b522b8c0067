/* SPDX-License-Identifier: MIT */
/*
 * Policy MOTET_POLICY_RETOS: event-boosting dynamic priorities beside
 * POSIX-style real-time classes, after RETOS.
 *
 * Classes. THREAD_CLASS_FIFO and THREAD_CLASS_RR are the real-time ones:
 * fixed, above every THREAD_CLASS_OTHER thread of their level, RR sliced
 * among equals. THREAD_CLASS_OTHER (the default) needs no priority from
 * the programmer: within its level it is ordered by a dynamic priority.
 *
 * Event boosting. A thread starts at dynamic priority 4. When it blocks
 * for an event, its priority rises by what that event is worth to a
 * sensor node: +3 for a timer (thread_sleep), +2 for a radio packet, +1 for
 * a sensor reading (the *_ev calls), up to 7; it falls by 1 per 8 ms of CPU
 * it consumes, down to 0. So a thread woken by its event preempts a
 * CPU-bound one at once, and a thread that computes for long sinks.
 *
 * Quanta. Each thread has a quantum (MOTET_THREAD_SLICE_US by default);
 * among equal dynamic priorities, the one with more quantum left runs
 * first, and one that has used its quantum up gives way to an equal that
 * has some. When every ready OTHER thread has used its quantum, all OTHER
 * threads get half of what they had left plus the default (Linux's rule),
 * which favours those that blocked early.
 *
 * Keys of the ready structure: level * 9 + dynamic priority (0..7), 8 for
 * the real-time classes. Within a key the list is kept in decreasing
 * quantum order. The slice timer (tickless) is armed only while an equal
 * or lower-keyed thread of the same level waits, for the nearer of the
 * quantum end and the next 8 ms decay step.
 */
#include "motet/timer.h"
#include "thread_internal.h"

#if MOTET_THREADS && MOTET_THREAD_POLICY == MOTET_POLICY_RETOS

#define QUANTUM  TIMER_US(MOTET_THREAD_SLICE_US)
#define DECAY    TIMER_MS(8)
#define DYN_INIT 4
#define DYN_MAX  7
#define KEY_RT   8

static bool is_other(const thread_t *t)
{
    return t->cls == THREAD_CLASS_OTHER;
}

static uint8_t key_of(const thread_t *t)
{
    uint8_t sub = is_other(t) ? (uint8_t) t->dyn : KEY_RT;
    return (uint8_t) (t->prio * THREAD_SUBLEVELS + sub);
}

void policy_init(void)
{
    rq_init();
    thread_slice_reset();
}

mt_err_t policy_thread_init(thread_t *t)
{
    if (t->cls == THREAD_CLASS_DEFAULT) t->cls = THREAD_CLASS_OTHER;
    if (t->cls > THREAD_CLASS_OTHER) return MT_ERR_INVALID;
    t->dyn = DYN_INIT;
    t->quantum = QUANTUM;
    return MT_OK;
}

/* Every OTHER thread gets half its rest plus the default quantum. */
static void recompute_quanta(void)
{
    for (uint8_t id = 0; id < MOTET_MAX_THREADS; id++) {
        thread_t *t = thread_by_id(id);
        if (t->state != TS_FREE && is_other(t)) {
            t->quantum = t->quantum / 2 + QUANTUM;
            t->flags &= (uint8_t) ~THREAD_F_SLICE;
        }
    }
}

/* True if some ready or running OTHER thread still has quantum left. */
static bool other_has_quantum(void)
{
    for (uint8_t id = 0; id < MOTET_MAX_THREADS; id++) {
        thread_t *t = thread_by_id(id);
        /* Ready, running, or running its send on K (ready again after). */
        bool queued = t->state == TS_READY || (t->wait == WAIT_K_CALL && !thread_suspended(t));
        if (queued && is_other(t) && t->quantum) return true;
    }
    return false;
}

/* Insert t among its key in decreasing quantum order; a preempted thread
 * goes before its equals in quantum, any other behind them. */
static void insert_ordered(thread_t *t, bool first)
{
    thread_t *pos = rq_first(t->key);
    while (pos && (first ? pos->quantum > t->quantum : pos->quantum >= t->quantum)) pos = pos->next;
    rq_insert_before(t, pos);
}

void policy_ready(thread_t *t, uint8_t how)
{
    bool spent = t->flags & THREAD_F_SLICE;
    if (spent && !is_other(t)) { /* real-time RR: a new slice, behind equals */
        t->flags &= (uint8_t) ~THREAD_F_SLICE;
        t->quantum = QUANTUM;
    }
    t->key = key_of(t);
    if (is_other(t))
        insert_ordered(t, how == READY_PREEMPTED && !spent);
    else
        rq_push(t, how == READY_PREEMPTED && !spent && how != READY_YIELD);
}

void policy_remove(thread_t *t)
{
    rq_remove(t);
}

thread_t *policy_peek(void)
{
    thread_t *best = rq_peek();
    /* Every ready OTHER thread at the top has spent its quantum: refill. */
    if (best && is_other(best) && !best->quantum && !other_has_quantum()) recompute_quanta();
    return best;
}

bool policy_preempts(const thread_t *c, const thread_t *cur)
{
    uint8_t kc = c->key, kr = key_of(cur);
    if (kc != kr) return kc > kr;
    /* Equals: a spent quantum (RR or OTHER) gives way to one with time left. */
    if (cur->cls == THREAD_CLASS_FIFO) return false;
    return (cur->flags & THREAD_F_SLICE) && (c->quantum || cur->cls == THREAD_CLASS_RR);
}

/* Ticks until cur's next decay step or quantum end. */
static uint32_t next_event(const thread_t *cur)
{
    uint32_t q = cur->quantum ? cur->quantum : 1;
    if (!is_other(cur)) return q;
    uint32_t decay = DECAY - cur->cpu;
    return decay < q ? decay : q;
}

void policy_started(thread_t *cur)
{
    /* Only a waiting thread of this level can take over at a decay step
     * or a quantum end; without one no timer is needed. */
    thread_t *best = rq_peek();
    if (cur->cls != THREAD_CLASS_FIFO && best && best->prio == cur->prio)
        thread_slice_arm(cur, next_event(cur));
    else
        thread_slice_disarm();
}

void policy_charge(thread_t *cur, uint32_t ran)
{
    if (cur->cls != THREAD_CLASS_FIFO) {
        cur->quantum = ran < cur->quantum ? cur->quantum - ran : 0;
        if (!cur->quantum) cur->flags |= THREAD_F_SLICE;
    }
    if (is_other(cur)) {
        cur->cpu += ran;
        while (cur->cpu >= DECAY) { /* -1 per 8 ms of CPU */
            cur->cpu -= DECAY;
            if (cur->dyn > 0) cur->dyn--;
        }
    }
}

void policy_blocking(thread_t *cur, thread_event_t ev)
{
    static const int8_t boost[] = {
        [THREAD_EV_NONE] = 0, [THREAD_EV_TIMER] = 3, [THREAD_EV_RADIO] = 2, [THREAD_EV_SENSOR] = 1};
    if (!is_other(cur) || (unsigned) ev >= sizeof boost) return;
    int dyn = cur->dyn + boost[ev];
    cur->dyn = (int8_t) (dyn > DYN_MAX ? DYN_MAX : dyn);
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
