/* SPDX-License-Identifier: MIT */
/*
 * The ready structure of the policies (all but the MANTIS baseline, which
 * keeps its original linked lists): a FIFO per key and two levels of
 * bitmaps, so that the next thread is two bit scans away however many
 * threads wait, never a list walk. The operations of every switch are in
 * line (thread_ready.h); here are the rarer ones.
 *
 * A key is level * THREAD_SUBLEVELS + sub-level; the policy chooses both
 * (the fixed-priority policy has one sub-level per level, event boosting
 * one per dynamic priority plus one for its real-time classes). level_map
 * has bit l set when level l holds a thread, sub_map[l] bit s when key
 * (l, s) does.
 */
#include "thread_internal.h"

#if MOTET_THREADS && MOTET_THREAD_POLICY != MOTET_POLICY_MANTIS

thread_rq_t thread_rq;

void rq_init(void)
{
    for (uint8_t k = 0; k < RQ_KEYS; k++) thread_rq.key[k].head = thread_rq.key[k].tail = NULL;
    thread_rq.level_map = 0;
#if THREAD_SUBLEVELS > 1
    for (uint8_t l = 0; l < MOTET_PRIO_LEVELS; l++) thread_rq.sub_map[l] = 0;
#endif
}

void rq_insert_before(thread_t *t, thread_t *pos)
{
    uint8_t k = t->key;
    if (!pos) {
        rq_push(t, false);
        return;
    }
    thread_t **link = &thread_rq.key[k].head;
    while (*link != pos) link = &(*link)->next;
    t->next = pos;
    *link = t;
    rq_mark(k);
}

void rq_unlink_inner(thread_t *t)
{
    uint8_t k = t->key;
    thread_t *prev = thread_rq.key[k].head;
    while (prev && prev->next != t) prev = prev->next;
    if (!prev) return; /* not here */
    prev->next = t->next;
    if (thread_rq.key[k].tail == t) thread_rq.key[k].tail = prev;
    t->next = NULL;
}

thread_t *rq_first(uint8_t key)
{
    return key < RQ_KEYS ? thread_rq.key[key].head : NULL;
}

#endif
