/* SPDX-License-Identifier: MIT */
/*
 * The message queue's own operations (queue.c), for the scheduler's files:
 * one FIFO per priority level, the bitmap of the levels that hold a
 * message and its highest bit, the pool's free list, and where a block
 * the kernel is done with goes back. The queue's types are
 * sched_internal.h's, as its hot state is a member of `sched`, and so are
 * the message blocks that the kernel's other components take and free
 * (sched_msg_alloc()).
 *
 * The operations on every queued message's path (take a block, push, pop,
 * give the block back) are in line: on an 8-bit core a call costs more
 * than the operation.
 */
#ifndef MOTET_QUEUE_INTERNAL_H
#define MOTET_QUEUE_INTERNAL_H

#include "bit_table.h"
#include "motet/port.h"
#include "sched_internal.h"
#include "timer_internal.h"

/* Empty every level and fill the pool; boot only. */
void queue_init(void);
/* Rule 7: append m to uninitialised t's held list; irq off. */
void queue_hold(task_t *t, msg_t *m);
/* Rule 7 once t's INIT is handled: its held messages go back to the head
 * of its level, in their order; the drain took each from that head, so
 * they are older than every message the level holds now, and leave the
 * held count; irq off. */
void queue_release_held(task_t *t);
/* Unlink every message for pid from level prio into a list; irq off. */
msg_t *queue_remove_for(mt_pid_t pid, mt_prio_t prio);
/* Messages in the queue, counted; irq off. */
uint8_t queue_length(void);
/* Free blocks in the pool, counted; irq off. */
uint8_t queue_spare_blocks(void);

/* The bit of level p (bit_table.h). */
static MT_INLINE queue_bits_t queue_bit(mt_prio_t p)
{
    return bit_of((uint8_t) p);
}

/* The pool's first free block, NULL if none, still in the pool: for a
 * caller that must test something else before it takes the block (or
 * leaves it), queue_take_first_irq_off(); irq off. */
static MT_INLINE msg_t *queue_first_block_irq_off(void)
{
    return sched.queue.free_blocks;
}

/* Take m, the block queue_first_block_irq_off() returned, from the pool;
 * irq off. Every field is the caller's. */
static MT_INLINE void queue_take_first_irq_off(msg_t *m)
{
    sched.queue.free_blocks = m->next;
}

/* A block from the pool, or NULL; irq off. Every field is the caller's. */
static MT_INLINE msg_t *queue_take_block_irq_off(void)
{
    msg_t *m = sched.queue.free_blocks;
    if (m) sched.queue.free_blocks = m->next;
    return m;
}

/* Give a pool block back; irq off. */
static MT_INLINE void queue_put_block_irq_off(msg_t *m)
{
    m->next = sched.queue.free_blocks;
    sched.queue.free_blocks = m;
}

/* Level p holds a message now: set its bit and raise the top to it if it
 * is higher; irq off. */
static MT_INLINE void queue_level_filled(mt_prio_t p)
{
    sched.queue.levels |= queue_bit(p);
    if (p > sched.queue.top) sched.queue.top = p;
}

/* Put the chain first..last at the head of level l's
 * FIFO, older than everything the level holds; the level's bit is the
 * caller's; irq off. */
static MT_INLINE void queue_prepend(queue_level_t *l, msg_t *first, msg_t *last)
{
    last->next = l->head;
    if (!l->head) l->tail = last;
    l->head = first;
}

/* Append m for t at t's level (creation order within a level); irq off.
 * While it waits, m names t's control block: a kill or a migration takes
 * every message of a task out of the queue before its block goes. Only a
 * level that was empty changes the bitmap and may raise the top: a level
 * holding a message has its bit set and is at or below the top already. */
static MT_INLINE void queue_push(msg_t *m, task_t *t)
{
    mt_prio_t prio = t->prio;
    queue_level_t *l = &queue_level[(uint8_t) prio];
    m->task = t;
    m->next = NULL;
    if (l->head) {
        l->tail->next = m;
    } else {
        l->head = m;
        queue_level_filled(prio);
    }
    l->tail = m;
}

/* Highest set bit of a non-zero bitmap: one instruction where the port
 * has it (PORT_HAS_CLZ), else a binary search of the byte(s). */
static MT_INLINE mt_prio_t queue_highest_bit(queue_bits_t bits)
{
#ifdef PORT_HAS_CLZ
    return (mt_prio_t) (31 - __builtin_clz((uint32_t) bits));
#else
    uint8_t top = 0;
#if MOTET_PRIO_LEVELS > 16
    if (bits >> 16) {
        top = 16;
        bits >>= 16;
    }
#endif
    uint8_t byte = (uint8_t) bits;
#if MOTET_PRIO_LEVELS > 8
    if (bits >> 8) {
        top += 8;
        byte = (uint8_t) (bits >> 8);
    }
#endif
    if (byte & 0xF0u) {
        top += 4;
        byte >>= 4;
    }
    if (byte & 0x0Cu) {
        top += 2;
        byte >>= 2;
    }
    return (mt_prio_t) (top + (byte >> 1));
#endif
}

/* Highest non-empty level, -1 when the queue is empty; irq off, or read
 * without the lock as a hint (dispatch_rules.h, work_above()). */
static MT_INLINE mt_prio_t queue_top_prio(void)
{
    return sched.queue.top;
}

/* Level p has just been emptied: clear its bit and find the new top; irq off. */
static MT_INLINE void queue_level_emptied(mt_prio_t p)
{
    queue_bits_t bits = (queue_bits_t) (sched.queue.levels & ~queue_bit(p));
    sched.queue.levels = bits;
    sched.queue.top = bits ? queue_highest_bit(bits) : -1;
}

/* A freeze has purged t's queued messages into its held list (its
 * migration or its kill): if the interrupt slot's block is among them,
 * its message moves into a pool block in its place, so that the slot
 * serves later interrupts while the migration lasts rather than only once
 * it is confirmed. Only above the migrator's reserve (MIG_RESERVE), as
 * for any message to a frozen task: else it stays held in the slot's
 * block, in its order, nothing lost, and the slot is free again once it
 * has run or gone (sched_msg_free()). Irq off. post.c. */
void isr_slot_release_held(task_t *t);

/* Remove and return the oldest message of level `top`, the highest
 * (queue_top_prio(), read and compared by the caller), which holds one: no test
 * of its head; irq off. */
static MT_INLINE msg_t *queue_pop_top(mt_prio_t top)
{
    queue_level_t *l = &queue_level[(uint8_t) top];
    msg_t *m = l->head;
    l->head = m->next;
    if (!l->head) queue_level_emptied(top);
    return m;
}

/* Give m's block back where it came from: to its timer or to the pool;
 * irq off. Every message block the kernel is done with comes here. */
static MT_INLINE void queue_give_block_irq_off(msg_t *m)
{
    if (m->flags & MSG_OWN_BLOCK)
        timer_expiry_release_irq_off(m);
    else
        queue_put_block_irq_off(m);
}

#endif /* MOTET_QUEUE_INTERNAL_H */
