/* SPDX-License-Identifier: MIT */
/*
 * Heap operations for the kernel's own components only (mem.h is the
 * public side). mem_free() refuses a task's free of a block it does not
 * own; the kernel frees blocks it holds itself (message payloads, scratch
 * tables, bus frames, migration images) in whatever task's context it
 * happens to run, so it needs a release that does not ask who is running.
 * Applications never include this header.
 */
#ifndef MOTET_MEM_INTERNAL_H
#define MOTET_MEM_INTERNAL_H

#include "mem_layout.h"
#include "motet/mem.h"

/* Reset the heap to one free block; boot only. */
void mem_init(void);
/* Allocate `size` bytes owned by `owner` (a task, or MEM_OWNER_KERNEL);
 * NULL if exhausted (logged). */
void *mem_alloc_owned(size_t size, mt_pid_t owner);
/* Free every block owned by `owner` (a task killed or gone by migration);
 * returns how many were freed. */
unsigned mem_free_all(mt_pid_t owner);
/* Give a live block to another owner, whoever owns it now.
 * MT_ERR_BAD_POINTER if ptr is not a live block. */
mt_err_t mem_set_owner(void *ptr, mt_pid_t owner);

/* Free a live block whoever owns it; NULL is ignored. Kernel use only:
 * MT_ERR_DOUBLE_FREE or MT_ERR_BAD_POINTER (logged), never MT_ERR_NOT_OWNER. */
mt_err_t mem_release(void *ptr);
/* Give live block ptr of at least `len` usable bytes, which must be
 * `from`'s (any owner's when `from` is the kernel), to `to`:
 * MT_ERR_NOT_OWNER, MT_ERR_INVALID (a shorter block) or MT_ERR_BAD_POINTER
 * (logged) and nothing changed otherwise. Any context. */
mt_err_t mem_pass(void *ptr, uint16_t len, mt_pid_t from, mt_pid_t to);
/* mem_pass()'s common case, in line, for a caller that holds interrupts
 * off (a send, under the lock of its gate test): the O(1) check
 * (mem_live_start()) finds a live block of `from`'s (any owner's when
 * `from` is the kernel) of at least `len` bytes, and its header's owner
 * becomes `to`. False changes nothing and leaves the rest (another
 * owner's block, a shorter one, no block, no start map) to mem_pass(),
 * which decides and logs. */
static MT_INLINE bool mem_pass_irq_off(void *ptr, uint16_t len, mt_pid_t from, mt_pid_t to)
{
    uint16_t off;
    mem_hdr_t h;
    if (!mem_live_start(ptr, &off, &h) || (from != MEM_OWNER_KERNEL && h.owner != from) ||
        blk_usable(blk_size(h)) < len)
        return false;
    /* The check byte is linear in the owner: swap the owner rather than
     * compute it again from the whole header. */
    uint8_t *hdr = (uint8_t *) ptr - MEM_HDR;
    hdr[offsetof(mem_hdr_t, owner)] = to;
    hdr[offsetof(mem_hdr_t, check)] = (uint8_t) (h.check ^ h.owner ^ to);
    return true;
}
/* True if ptr, known to be a live block (the payload a frame holds), has
 * at least `len` usable bytes: its header's size, without a lookup. */
static MT_INLINE bool mem_holds(const void *ptr, uint16_t len)
{
    mem_hdr_t h;
    memcpy(&h, (const uint8_t *) ptr - MEM_HDR, sizeof h);
    return blk_usable(blk_size(h)) >= len;
}
/* Give a live block the kernel lent out (a payload run at once) to `owner`
 * without checking it again; returns ptr. Any context. */
void *mem_hand_over(void *ptr, mt_pid_t owner);

#endif /* MOTET_MEM_INTERNAL_H */
