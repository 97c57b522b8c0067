/* SPDX-License-Identifier: MIT */
/*
 * The message queue: one FIFO per priority level and a bitmap of non-empty
 * levels, so that finding the next message is O(1) whatever the number of
 * waiting messages; and the pool of blocks queued messages live in.
 *
 * Appending keeps creation order within a level because every message is
 * appended when it is created, a message to a task not yet initialised
 * too: the drain moves it to the task's held list when it reaches it
 * (rule 7), and the list goes back to the head of the level, ahead of all
 * that came later, when the task's INIT has been handled. So no message
 * carries a creation stamp. A block is the message and room for
 * a small borrowed payload (a verdict, an event code), which then travels
 * in the block itself rather than in a heap block of its own. The pool is a
 * free list: only the kernel takes and gives back blocks, so it keeps no
 * map of live blocks and no counts.
 */
#include <string.h>

#include "mem_internal.h"
#include "motet/log.h"
#include "motet/mem.h"
#include "motet/port.h"
#include "queue_internal.h"
#include "sched_internal.h"

typedef struct msg_block {
    msg_t msg; /* first: a msg_t * to it is a pointer to the block */
    union {
        uint8_t bytes[MSG_INLINE_BYTES];
        uint32_t align;
    } inline_payload;
} msg_block_t;

static msg_block_t msg_block_storage[MOTET_MAX_QUEUED_MSGS] PORT_POOL_RAM;
queue_level_t queue_level[MOTET_PRIO_LEVELS];

void queue_init(void)
{
    memset(queue_level, 0, sizeof queue_level);
    memset(&sched.queue, 0, sizeof sched.queue);
    sched.queue.top = -1;
    for (msg_block_t *b = msg_block_storage + MOTET_MAX_QUEUED_MSGS; b-- != msg_block_storage;)
        queue_put_block_irq_off(&b->msg);
}

void queue_release_held(task_t *t)
{
    msg_t *first = t->held;
    if (!first) return;
    msg_t *last = first;
    for (;;) {
        last->task = t; /* a migration may have put it there unqueued */
        sched.held--;   /* counted by queue_hold() or the migrator */
        if (!last->next) break;
        last = last->next;
    }
    mt_prio_t prio = t->prio;
    queue_prepend(&queue_level[prio], first, last);
    t->held = NULL;
    queue_level_filled(prio);
}

void queue_hold(task_t *t, msg_t *m)
{
    msg_t **link = &t->held;
    while (*link) link = &(*link)->next;
    m->next = NULL;
    *link = m;
    sched.held++;
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
    if (!l->head && (sched.queue.levels & queue_bit(prio))) queue_level_emptied(prio);
    return removed;
}

uint8_t queue_length(void)
{
    uint8_t n = 0;
    for (uint8_t p = 0; p < MOTET_PRIO_LEVELS; p++)
        for (const msg_t *m = queue_level[p].head; m; m = m->next) n++;
    return n;
}

uint8_t queue_spare_blocks(void)
{
    uint8_t n = 0;
    for (const msg_t *m = sched.queue.free_blocks; m; m = m->next) n++;
    return n;
}

uint8_t sched_msg_spare(void)
{
    port_irq_state_t s = port_irq_save();
    uint8_t n = queue_spare_blocks();
    port_irq_restore(s);
    return n;
}

bool sched_msg_spare_more_than(uint8_t n)
{
    port_irq_state_t s = port_irq_save();
    const msg_t *m = sched.queue.free_blocks;
    for (uint8_t k = 0; m && k < n; k++) m = m->next;
    bool more = m != NULL;
    port_irq_restore(s);
    return more;
}

/* ---- blocks ---- */

msg_t *sched_msg_alloc(void)
{
    port_irq_state_t s = port_irq_save();
    msg_t *m = queue_take_block_irq_off();
    port_irq_restore(s);
    if (!m) {
        log_error(MT_ERR_QUEUE_FULL);
        return NULL;
    }
    memset(m, 0, sizeof *m);
    return m;
}

/* Unrolled: for so few bytes a call to memcpy() costs more than the copy. */
_Static_assert(MSG_INLINE_BYTES == 5u, "queue_copy_into_block() copies up to five bytes");
void queue_copy_into_block(msg_t *m, const void *data, uint16_t len)
{
    m->len = len;
    m->data = NULL;
    if (!len) return;
    uint8_t *to = ((msg_block_t *) m)->inline_payload.bytes;
    const uint8_t *from = data;
    m->data = to;
    switch (len) {
    case 5:
        to[4] = from[4]; /* fall through */
    case 4:
        to[3] = from[3]; /* fall through */
    case 3:
        to[2] = from[2]; /* fall through */
    case 2:
        to[1] = from[1]; /* fall through */
    default:
        to[0] = from[0];
    }
}

mt_err_t sched_msg_copy_payload(msg_t *m, const void *data, uint16_t len)
{
    if (len <= MSG_INLINE_BYTES) {
        queue_copy_into_block(m, data, len);
        return MT_OK;
    }
    m->len = len;
    m->data = mem_alloc_owned(len, MEM_OWNER_KERNEL);
    if (!m->data) return MT_ERR_NO_MEM;
    memcpy(m->data, data, len);
    m->flags |= MSG_HEAP;
    return MT_OK;
}

void sched_msg_free(msg_t *m)
{
    if (m->flags & MSG_HEAP) mem_release(m->data); /* the kernel's */
    m->flags &= (uint8_t) ~MSG_HEAP;
    m->data = NULL;
    port_irq_state_t s = port_irq_save();
    queue_give_block_irq_off(m);
    port_irq_restore(s);
}
