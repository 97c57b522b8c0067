/* SPDX-License-Identifier: MIT */
/*
 * The O(1) ready structure most policies use (thread_ready.c): a FIFO per
 * key, a bitmap of non-empty levels and one of non-empty sub-levels per
 * level, so the best key is two bit scans away, never a list walk.
 *
 * Keys are 0 .. MOTET_PRIO_LEVELS * THREAD_SUBLEVELS - 1, higher runs
 * first. The operations every switch makes (push, peek, take the head) are
 * in line, as the message queue's are (sched_internal.h): on an 8-bit core
 * a call and its register saves cost more than the operation itself.
 * Included by thread_internal.h only.
 */
#ifndef MOTET_THREAD_READY_H
#define MOTET_THREAD_READY_H

#if MOTET_THREAD_POLICY == MOTET_POLICY_RETOS
#define THREAD_SUBLEVELS 9 /* dynamic priorities 0..7, then the real-time classes */
#elif MOTET_THREAD_POLICY == MOTET_POLICY_VOP
#define THREAD_SUBLEVELS 2 /* long jobs, short jobs */
#else
#define THREAD_SUBLEVELS 1
#endif

#if MOTET_THREAD_POLICY != MOTET_POLICY_MANTIS

#define RQ_KEYS (MOTET_PRIO_LEVELS * THREAD_SUBLEVELS)

/* The structure's state, for the inline operations below only. */
/* A key's FIFO: head and tail side by side, one index away. */
typedef struct {
    thread_t *head;
    thread_t *tail;
} rq_fifo_t;

typedef struct {
    rq_fifo_t key[RQ_KEYS];
    queue_bits_t level_map; /* the message queue's bitmap type and bit scan */
#if THREAD_SUBLEVELS > 1
    uint16_t sub_map[MOTET_PRIO_LEVELS];
#endif
} thread_rq_t;
extern thread_rq_t thread_rq;

void rq_init(void);
/* Link t into key t->key just before `pos` (a thread of that key), or
 * last if pos is NULL; for policies that order a key themselves. */
void rq_insert_before(thread_t *t, thread_t *pos);
/* First thread of key `key`, NULL if none. */
thread_t *rq_first(uint8_t key);
/* Unlink t from the inside of its key's FIFO (not its head). */
void rq_unlink_inner(thread_t *t);

/* Whether key `key` holds a thread, from its bit (no look at its FIFO). */
static MT_INLINE bool rq_holds(uint8_t key)
{
#if THREAD_SUBLEVELS > 1
    return thread_rq.sub_map[key / THREAD_SUBLEVELS] & (1u << (key % THREAD_SUBLEVELS));
#else
    return thread_rq.level_map & queue_bit((mt_prio_t) key);
#endif
}

/* Key `key` holds a thread now. */
static MT_INLINE void rq_mark(uint8_t key)
{
#if THREAD_SUBLEVELS > 1
    uint8_t level = key / THREAD_SUBLEVELS;
    thread_rq.level_map |= queue_bit((mt_prio_t) level);
    thread_rq.sub_map[level] |= (uint16_t) (1u << (key % THREAD_SUBLEVELS));
#else
    thread_rq.level_map |= queue_bit((mt_prio_t) key);
#endif
}

/* Key `key` became empty. */
static MT_INLINE void rq_unmark(uint8_t key)
{
#if THREAD_SUBLEVELS > 1
    uint8_t level = key / THREAD_SUBLEVELS;
    thread_rq.sub_map[level] &= (uint16_t) ~(1u << (key % THREAD_SUBLEVELS));
    if (thread_rq.sub_map[level]) return;
    thread_rq.level_map &= (queue_bits_t) ~queue_bit((mt_prio_t) level);
#else
    thread_rq.level_map &= (queue_bits_t) ~queue_bit((mt_prio_t) key);
#endif
}

/* Append t at key t->key, or put it first among that key. */
static MT_INLINE void rq_push(thread_t *t, bool first)
{
    uint8_t k = t->key;
    rq_fifo_t *f = &thread_rq.key[k];
    thread_t *h = f->head;
    if (!h) {
        t->next = NULL;
        f->head = f->tail = t;
        rq_mark(k);
    } else if (first) {
        t->next = h;
        f->head = t;
    } else {
        t->next = NULL;
        f->tail->next = t;
        f->tail = t;
    }
}

/* Unlink t, the head of its key (the thread rq_peek() found, which a
 * switch takes). */
static MT_INLINE void rq_take_head(thread_t *t)
{
    uint8_t k = t->key;
    rq_fifo_t *f = &thread_rq.key[k];
    thread_t *n = t->next;
    f->head = n;
    t->next = NULL;
    if (!n) {
        f->tail = NULL;
        rq_unmark(k);
    }
}

/* Unlink t (it must be in the structure): O(1) for the head of its key,
 * the thread a switch takes; a walk of its equals otherwise. */
static MT_INLINE void rq_remove(thread_t *t)
{
    if (thread_rq.key[t->key].head != t) {
        rq_unlink_inner(t);
        return;
    }
    rq_take_head(t);
}

/* The FIFO of key `key` (a valid key): a yield's successor is its head. */
static MT_INLINE rq_fifo_t *rq_fifo(uint8_t key)
{
    return &thread_rq.key[key];
}

/* head, the first thread of FIFO f, leaves the structure and t (whose key
 * is f's already) takes the last place of f, in one step: the key stays
 * non-empty, so its bits and the count of ready threads stay as they are
 * (a yield to an equal). head->next is left as it is: a link means something only while
 * its thread is in a list, and every insertion writes it. */
static MT_INLINE void rq_swap_head(rq_fifo_t *f, thread_t *head, thread_t *t)
{
    t->next = NULL;
    f->tail->next = t; /* head itself if it was alone */
    f->tail = t;
    f->head = head->next;
}

/* First thread of the highest non-empty key, NULL if none. */
static MT_INLINE thread_t *rq_peek(void)
{
    queue_bits_t levels = thread_rq.level_map;
    if (!levels) return NULL;
    uint8_t level = (uint8_t) queue_highest_bit(levels);
#if THREAD_SUBLEVELS > 1
    uint16_t sub = thread_rq.sub_map[level];
#if THREAD_SUBLEVELS == 2
    uint8_t top = (uint8_t) (sub >> 1); /* 1: the lower key alone; 2 or 3: the upper */
#else
    uint8_t top = (uint8_t) ((int) (sizeof(unsigned) * 8 - 1) - __builtin_clz((unsigned) sub));
#endif
    return thread_rq.key[level * THREAD_SUBLEVELS + top].head;
#else
    return thread_rq.key[level].head;
#endif
}

#endif /* MOTET_THREAD_POLICY != MOTET_POLICY_MANTIS */

#endif /* MOTET_THREAD_READY_H */
