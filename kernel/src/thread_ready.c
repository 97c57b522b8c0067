/* SPDX-License-Identifier: MIT */
/*
 * The ready structure of the policies (all but the MANTIS baseline, which
 * keeps its original linked lists): a FIFO per key and two levels of
 * bitmaps, so that the next thread is two bit scans away however many
 * threads wait, never a list walk.
 *
 * A key is level * THREAD_SUBLEVELS + sub-level; the policy chooses both
 * (the fixed-priority policy has one sub-level per level, event boosting
 * one per dynamic priority plus one for its real-time classes). level_map
 * has bit l set when level l holds a thread, sub_map[l] bit s when key
 * (l, s) does.
 */
#include "thread_internal.h"

#if MOTET_THREADS && MOTET_THREAD_POLICY != MOTET_POLICY_MANTIS

#define KEYS (MOTET_PRIO_LEVELS * THREAD_SUBLEVELS)

static thread_t *head[KEYS];
static thread_t *tail[KEYS];
static queue_bits_t level_map; /* the message queue's bitmap type and bit scan */
#if THREAD_SUBLEVELS > 1
static uint16_t sub_map[MOTET_PRIO_LEVELS];
#endif
static uint8_t count;

void rq_init(void)
{
    for (uint8_t k = 0; k < KEYS; k++) head[k] = tail[k] = NULL;
    level_map = 0;
#if THREAD_SUBLEVELS > 1
    for (uint8_t l = 0; l < MOTET_PRIO_LEVELS; l++) sub_map[l] = 0;
#endif
    count = 0;
}

#if THREAD_SUBLEVELS > 1
/* Index of the highest set bit of a non-zero sub-level map. */
static uint8_t top_bit(uint16_t map)
{
    return (uint8_t) ((int) (sizeof(unsigned) * 8 - 1) - __builtin_clz((unsigned) map));
}
#endif

static void mark(uint8_t key)
{
    uint8_t level = key / THREAD_SUBLEVELS;
    level_map |= queue_bit((mt_prio_t) level);
#if THREAD_SUBLEVELS > 1
    sub_map[level] |= (uint16_t) (1u << (key % THREAD_SUBLEVELS));
#endif
}

static void unmark(uint8_t key)
{
    uint8_t level = key / THREAD_SUBLEVELS;
#if THREAD_SUBLEVELS > 1
    sub_map[level] &= (uint16_t) ~(1u << (key % THREAD_SUBLEVELS));
    if (sub_map[level]) return;
#endif
    level_map &= (queue_bits_t) ~queue_bit((mt_prio_t) level);
}

void rq_push(thread_t *t, bool first)
{
    uint8_t k = t->key;
    if (first) {
        t->next = head[k];
        head[k] = t;
        if (!tail[k]) tail[k] = t;
    } else {
        t->next = NULL;
        if (tail[k])
            tail[k]->next = t;
        else
            head[k] = t;
        tail[k] = t;
    }
    mark(k);
    count++;
}

void rq_insert_before(thread_t *t, thread_t *pos)
{
    uint8_t k = t->key;
    if (!pos) {
        rq_push(t, false);
        return;
    }
    thread_t **link = &head[k];
    while (*link != pos) link = &(*link)->next;
    t->next = pos;
    *link = t;
    mark(k);
    count++;
}

void rq_remove(thread_t *t)
{
    uint8_t k = t->key;
    thread_t **link = &head[k];
    thread_t *prev = NULL;
    while (*link && *link != t) {
        prev = *link;
        link = &(*link)->next;
    }
    if (!*link) return; /* not here */
    *link = t->next;
    if (tail[k] == t) tail[k] = prev;
    t->next = NULL;
    if (!head[k]) unmark(k);
    count--;
}

thread_t *rq_peek(void)
{
    if (!level_map) return NULL;
    uint8_t level = (uint8_t) queue_highest_bit(level_map);
#if THREAD_SUBLEVELS > 1
    return head[level * THREAD_SUBLEVELS + top_bit(sub_map[level])];
#else
    return head[level];
#endif
}

thread_t *rq_first(uint8_t key)
{
    return key < KEYS ? head[key] : NULL;
}

uint8_t rq_count(void)
{
    return count;
}

#endif
