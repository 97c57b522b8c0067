/* SPDX-License-Identifier: MIT */
/*
 * The message queue: one FIFO per priority level and a bitmap of non-empty
 * levels, so that finding the next message is O(1) whatever the number of
 * waiting messages. Appending keeps creation order within a level because
 * every message is appended when it is created; only messages released late
 * (held until PORT_INIT) need the ordered insert.
 */
#include "sched_internal.h"

typedef struct level {
    msg_t *head;
    msg_t *tail;
} level_t;

static level_t levels[MOTET_PRIO_LEVELS];
volatile uint16_t queue_levels; /* bit p set: level p holds a message */
static uint8_t length;

void queue_init(void)
{
    for (uint8_t p = 0; p < MOTET_PRIO_LEVELS; p++) levels[p].head = levels[p].tail = NULL;
    queue_levels = 0;
    length = 0;
}

static bool seq_before(uint16_t a, uint16_t b)
{
    /* Creation stamps wrap; compare within half the range. */
    return (int16_t) (uint16_t) (a - b) < 0;
}

void queue_push(msg_t *m, mt_prio_t prio)
{
    level_t *l = &levels[prio];
    m->next = NULL;
    if (l->tail)
        l->tail->next = m;
    else
        l->head = m;
    l->tail = m;
    queue_levels |= (uint16_t) (1u << prio);
    length++;
}

void queue_insert_by_seq(msg_t *m, mt_prio_t prio)
{
    level_t *l = &levels[prio];
    msg_t **link = &l->head;
    while (*link && !seq_before(m->seq, (*link)->seq)) {
        link = &(*link)->next;
    }
    m->next = *link;
    *link = m;
    if (!m->next) l->tail = m;
    queue_levels |= (uint16_t) (1u << prio);
    length++;
}

mt_prio_t queue_top_prio(void)
{
    uint16_t bits = queue_levels;
    if (!bits) return -1;
    /* Highest set bit: count leading zeros of the bitmap in an unsigned. */
    return (mt_prio_t) ((int) (sizeof(unsigned) * 8 - 1) - __builtin_clz((unsigned) bits));
}

msg_t *queue_pop_above(mt_prio_t floor)
{
    mt_prio_t top = queue_top_prio();
    if (top <= floor) return NULL;
    level_t *l = &levels[top];
    msg_t *m = l->head;
    l->head = m->next;
    if (!l->head) {
        l->tail = NULL;
        queue_levels &= (uint16_t) ~(1u << top);
    }
    m->next = NULL;
    length--;
    return m;
}

msg_t *queue_remove_for(mt_pid_t pid, mt_prio_t prio)
{
    level_t *l = &levels[prio];
    msg_t *removed = NULL, **removed_tail = &removed;
    msg_t **link = &l->head;
    l->tail = NULL;
    while (*link) {
        msg_t *m = *link;
        if (m->dst == pid) {
            *link = m->next;
            m->next = NULL;
            *removed_tail = m;
            removed_tail = &m->next;
            length--;
        } else {
            l->tail = m;
            link = &m->next;
        }
    }
    if (!l->head) queue_levels &= (uint16_t) ~(1u << prio);
    return removed;
}

uint8_t queue_length(void)
{
    return length;
}
