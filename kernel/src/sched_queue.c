/* SPDX-License-Identifier: MIT */
/*
 * The message queue: one FIFO per priority level and a bitmap of non-empty
 * levels, so that finding the next message is O(1) whatever the number of
 * waiting messages. Appending keeps creation order within a level because
 * every message is appended when it is created; only messages released late
 * (held until PORT_INIT) need the ordered insert.
 */
#include "sched_internal.h"

queue_level_t queue_level[MOTET_PRIO_LEVELS];
volatile queue_bits_t queue_levels;
const queue_bits_t queue_level_bit[] = {
    0x01u,  0x02u,  0x04u,  0x08u,  0x10u,   0x20u,   0x40u,   0x80u,
#if MOTET_PRIO_LEVELS > 8 /* queue_bits_t has 16 bits */
    0x100u, 0x200u, 0x400u, 0x800u, 0x1000u, 0x2000u, 0x4000u, 0x8000u,
#endif
};

void queue_init(void)
{
    for (uint8_t p = 0; p < MOTET_PRIO_LEVELS; p++)
        queue_level[p].head = queue_level[p].tail = NULL;
    queue_levels = 0;
}

static bool seq_before(uint16_t a, uint16_t b)
{
    /* Creation stamps wrap; compare within half the range. */
    return (int16_t) (uint16_t) (a - b) < 0;
}

void queue_insert_by_seq(msg_t *m, mt_prio_t prio)
{
    queue_level_t *l = &queue_level[prio];
    msg_t **link = &l->head;
    while (*link && !seq_before(m->seq, (*link)->seq)) {
        link = &(*link)->next;
    }
    m->next = *link;
    *link = m;
    if (!m->next) l->tail = m;
    queue_levels |= queue_bit(prio);
}

msg_t *queue_remove_for(mt_pid_t pid, mt_prio_t prio)
{
    queue_level_t *l = &queue_level[prio];
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
        } else {
            l->tail = m;
            link = &m->next;
        }
    }
    if (!l->head) queue_levels &= (queue_bits_t) ~queue_bit(prio);
    return removed;
}

uint8_t queue_length(void)
{
    uint8_t n = 0;
    for (uint8_t p = 0; p < MOTET_PRIO_LEVELS; p++)
        for (const msg_t *m = queue_level[p].head; m; m = m->next) n++;
    return n;
}
