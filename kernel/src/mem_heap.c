/* SPDX-License-Identifier: MIT */
/*
 * The heap (mem.h): address-ordered first fit over one static array.
 *
 * Every block starts with a 4-byte header: a 15-bit block size (header
 * included) with the top bit set while allocated, the owner pid and a check
 * byte computed from the block's offset, size and owner. Free blocks are kept
 * on a free list in address order, linked by 16-bit heap offsets stored in
 * their payload, so the smallest block is a header plus two bytes (rounded
 * to the alignment) whatever the pointer size.
 *
 * A pointer handed to mem_free() and friends is trusted only if it is the
 * start of a live block. With MOTET_MEM_START_MAP (the default) a bitmap with
 * one bit per alignment granule records where live blocks start, so the check
 * is O(1); without it (to save RAM on the smallest parts) the heap walk must
 * reach the pointer exactly, starting at the nearest free block below it and
 * stepping over the allocated blocks that follow. Either way a foreign
 * pointer, an interior pointer or a forged header can never be mistaken for
 * a block, and a rejected pointer changes nothing. The walk also classifies
 * rejected pointers: the check byte catches headers overwritten by a stray
 * write and, in stale headers left inside merged free blocks, tells a double
 * free from a random interior pointer.
 *
 * A task may free or resize only the blocks it owns: a free of another
 * task's block (a stale pointer, say, whose block went to a third task) is
 * refused before anything changes. The kernel itself, which frees the blocks
 * it holds from whatever task's context it runs in, uses mem_release()
 * (mem_internal.h), which asks nothing about the caller.
 *
 * Interrupt handlers may allocate (message payloads), so every change of the
 * free list happens with interrupts held off.
 */
#include <stddef.h>
#include <string.h>

#include "log_ring.h"
#include "mem_internal.h"
#include "mem_layout.h"
#include "motet/config.h"
#include "motet/log.h"
#include "motet/mem.h"
#include "motet/port.h"
#include "motet/sched.h"
#include "sched_internal.h"
#include "slab_internal.h"
#include "thread_internal.h"

mem_arena_t heap;
uint8_t live_starts[MEM_START_MAP_BYTES];
uint16_t mem_free_head;
mem_stats_t mem_counters;

/* Block bytes needed for a payload of `size` (whose blk_usable() holds
 * it); 0 if it can never fit. */
static uint16_t block_need(size_t size)
{
    if (size > MEM_MAX_PAYLOAD) return 0;
    uint16_t need = MEM_ROUND(size + MEM_HDR);
    return need < MEM_MIN_BLOCK ? MEM_MIN_BLOCK : need;
}

static void account_alloc(uint16_t bytes)
{
    mem_counters.in_use += bytes;
    if (mem_counters.in_use > mem_counters.high_water)
        mem_counters.high_water = mem_counters.in_use;
}

/* ---- the allocator proper; all of these run with interrupts off ---- */

/* Allocate `need` bytes from free block f; split only if the rest can live.
 * Returns the size of the block handed out. In line in both of take()'s
 * ways, so that the common one (the lowest free block fits) changes the
 * list's head without a block below it to test. */
static MT_INLINE uint16_t carve(uint16_t f, uint16_t prev, uint16_t need, uint8_t owner)
{
    uint16_t size = size_at(f);
    uint16_t next = link_get(f);
    if (size - need >= MEM_MIN_BLOCK) {
        uint16_t rest = f + need;
        hdr_put(rest, size - need, MEM_OWNER_KERNEL);
        link_put(rest, next);
        next = rest;
        size = need;
    }
    set_next_free(prev, next);
    hdr_put(f, size | MEM_USED, owner);
    start_mark(f, true);
    account_alloc(size);
    return size;
}

/* First fit: the lowest free block that is large enough, MEM_NIL if none;
 * *size is what it was cut to. */
static uint16_t take(uint16_t need, uint8_t owner, uint16_t *size)
{
    uint16_t prev = MEM_NIL;
    uint16_t f = mem_free_head;
    if (f != MEM_NIL && size_at(f) >= need) { /* the lowest fits: no free block below it */
        *size = carve(f, MEM_NIL, need, owner);
        return f;
    }
    while (f != MEM_NIL && size_at(f) < need) {
        prev = f;
        f = link_get(f);
    }
    if (f != MEM_NIL) *size = carve(f, prev, need, owner);
    return f;
}

/* Free live block blk whose free neighbours on the list are prev and next;
 * returns where the resulting (possibly merged) free block starts. The
 * merges are decided first, so that each header and link is written once. */
static MT_INLINE uint16_t release_inline(uint16_t blk, uint16_t size, uint16_t prev, uint16_t next)
{
    mem_counters.in_use -= size;
    start_mark(blk, false);
    if (next == blk + size) {
        size += size_at(next);
        next = link_get(next);
    }
    /* Written even when the block joins prev: a stale free header is how
     * a later free of the same pointer is told from a random one. */
    hdr_put(blk, size, MEM_OWNER_KERNEL);
    if (prev != MEM_NIL) {
        uint16_t prev_size = size_at(prev);
        if (prev + prev_size == blk) {
            hdr_put(prev, prev_size + size, MEM_OWNER_KERNEL);
            link_put(prev, next);
            return prev;
        }
    }
    link_put(blk, next);
    set_next_free(prev, blk);
    return blk;
}

/* release_inline() out of line, for the callers off mem_free()'s fast path. */
static uint16_t release(uint16_t blk, uint16_t size, uint16_t prev, uint16_t next)
{
    return release_inline(blk, size, prev, next);
}

/* Interior pointer into block `h`: a stale free header left by a merge means
 * the block was freed before; anything else was never a block. */
static mt_err_t classify_interior(uint16_t off, mem_hdr_t h)
{
    mem_hdr_t stale = hdr_get(off);
    if (!blk_used(h) && !blk_used(stale) && stale.check == hdr_check(off, stale.size, stale.owner))
        return MT_ERR_DOUBLE_FREE;
    return MT_ERR_BAD_POINTER;
}

/* The free blocks below and above off (MEM_NIL if none): where a freed
 * block joins the address-ordered list. */
static MT_INLINE uint16_t free_around(uint16_t off, uint16_t *above)
{
    uint16_t prev = MEM_NIL;
    uint16_t f = mem_free_head;
    for (; f != MEM_NIL && f < off; f = link_get(f)) prev = f;
    *above = f;
    return prev;
}

static MT_INLINE uint16_t free_below(uint16_t off)
{
    uint16_t above;
    return free_around(off, &above);
}

/* The O(1) check, then the free block below (a walk of the free list, so
 * only callers that change the list ask for it). */
static bool locate_fast(const void *ptr, mem_loc_t *loc, bool want_prev)
{
    mem_hdr_t h;
    if (!mem_live_start(ptr, &loc->blk, &h)) return false;
    loc->prev_free = want_prev ? free_below(loc->blk) : MEM_NIL;
    return true;
}

/* Find the live block whose payload is ptr: the map, else a walk up to it
 * (which finds the free block below it on the way). */
static mt_err_t locate(const void *ptr, mem_loc_t *loc, bool want_prev)
{
    if (locate_fast(ptr, loc, want_prev)) return MT_OK;
    uint16_t off;
    if (!to_offset(ptr, &off)) return MT_ERR_BAD_POINTER;
    uint16_t prev = MEM_NIL;
    for (uint16_t f = mem_free_head; f != MEM_NIL && f <= off; f = link_get(f)) prev = f;
    if (prev == off) return MT_ERR_DOUBLE_FREE;
    /* Between two free blocks every block is allocated: step over them. */
    for (uint16_t b = prev == MEM_NIL ? MEM_FIRST : prev; b <= off;) {
        mem_hdr_t h = hdr_get(b);
        if (!hdr_valid(b, h)) return MT_ERR_BAD_POINTER; /* corrupted: trust nothing */
        if (b == off) {
            loc->blk = b;
            loc->prev_free = prev;
            return blk_used(h) ? MT_OK : MT_ERR_DOUBLE_FREE;
        }
        if (off < b + blk_size(h)) return classify_interior(off, h);
        b += blk_size(h);
    }
    return MT_ERR_BAD_POINTER;
}

/* locate() with interrupts held off, for the read-only queries. */
static mt_err_t locate_hdr(const void *ptr, mem_hdr_t *h)
{
    mem_loc_t loc;
    port_irq_state_t s = port_irq_save();
    mt_err_t err = locate(ptr, &loc, false);
    if (err == MT_OK) *h = hdr_get(loc.blk);
    port_irq_restore(s);
    return err;
}

/* ---- realloc helpers ---- */

/* Shrink live block loc to `need` bytes, freeing the tail if it can live. */
static void shrink(mem_loc_t loc, uint16_t need)
{
    mem_hdr_t h = hdr_get(loc.blk);
    uint16_t size = blk_size(h);
    if (size - need < MEM_MIN_BLOCK) return;
    hdr_put(loc.blk, need | MEM_USED, h.owner);
    /* The tail becomes a block of its own, then is freed like any other. */
    hdr_put(loc.blk + need, (size - need) | MEM_USED, h.owner);
    release(loc.blk + need, size - need, loc.prev_free, next_free(loc.prev_free));
}

/* Grow live block loc to `need` bytes into the free block right after it. */
static bool grow(mem_loc_t loc, uint16_t need)
{
    mem_hdr_t h = hdr_get(loc.blk);
    uint16_t size = blk_size(h);
    uint16_t next = next_free(loc.prev_free);
    if (next != loc.blk + size) return false;
    uint16_t total = size + size_at(next);
    if (total < need) return false;
    uint16_t after = link_get(next);
    if (total - need >= MEM_MIN_BLOCK) {
        hdr_put(loc.blk + need, total - need, MEM_OWNER_KERNEL);
        link_put(loc.blk + need, after);
        after = loc.blk + need;
        total = need;
    }
    set_next_free(loc.prev_free, after);
    hdr_put(loc.blk, total | MEM_USED, h.owner);
    account_alloc(total - size);
    return true;
}

static bool resize_in_place(mem_loc_t loc, uint16_t need)
{
    if (need == 0) return false;
    if (need <= size_at(loc.blk)) {
        shrink(loc, need);
        return true;
    }
    return grow(loc, need);
}

/* No room in place: copy into a new block of the same owner. */
static void *move_block(void *ptr, size_t size, mem_hdr_t old)
{
    void *p = mem_alloc_owned(size, old.owner);
    if (p == NULL) return NULL;
    memcpy(p, ptr, blk_usable(blk_size(old)));
    mem_release(ptr); /* the caller's right to it was checked */
    return p;
}

/* Who a free or resize is checked against: the running task, or
 * MEM_OWNER_KERNEL, which may free any block, outside every handler and in
 * an interrupt (whose blocks are the kernel's, see mem_alloc()). */
static MT_INLINE mt_pid_t acting_owner(void)
{
    return port_in_isr() ? MEM_OWNER_KERNEL : sched_running_pid();
}

/* True if `by` may free or resize a block of `owner`. */
static MT_INLINE bool may_change(mt_pid_t by, mt_pid_t owner)
{
    return by == MEM_OWNER_KERNEL || by == owner;
}

/* ---- public interface ---- */

void mem_init(void)
{
    /* Clearing drops stale headers, so classification never sees old ones. */
    memset(heap.bytes, 0, sizeof heap.bytes);
    memset(live_starts, 0, sizeof live_starts);
    memset(&mem_counters, 0, sizeof mem_counters);
    mem_counters.heap_size = MEM_END - MEM_FIRST;
    hdr_put(MEM_FIRST, mem_counters.heap_size, MEM_OWNER_KERNEL);
    link_put(MEM_FIRST, MEM_NIL);
    mem_free_head = MEM_FIRST;
}

void *mem_alloc(size_t size)
{
    /* An interrupt borrows the interrupted task's frame, not its identity:
     * its blocks belong to the kernel so killing that task cannot free them. */
    mt_pid_t owner = port_in_isr() ? MEM_OWNER_KERNEL : sched_running_pid();
    return mem_alloc_owned(size, owner);
}

/* An allocation that cannot be served: counted and logged, out of line. */
static MT_NOINLINE void *alloc_refused(void)
{
    port_irq_state_t s = port_irq_save();
    if (mem_counters.failures < UINT16_MAX) mem_counters.failures++;
    port_irq_restore(s);
    log_error(MT_ERR_NO_MEM);
    return NULL;
}

/* mem_alloc(0) returns NULL without logging an error: C allows malloc(0) to
 * return NULL, it wastes no heap, and it mirrors mem_realloc(p, 0). */
void *mem_alloc_owned(size_t size, mt_pid_t owner)
{
    if (size == 0) return NULL;
    uint16_t need = block_need(size);
    if (need == 0) return alloc_refused();
    uint16_t got = 0;
    port_irq_state_t s = port_irq_save();
    uint16_t blk = take(need, owner, &got);
    if (blk == MEM_NIL) {
        port_irq_restore(s);
        return alloc_refused();
    }
    /* Events carry the usable size so that EV_ALLOC and EV_FREE pair up. */
    log_event_inline_irq_off(EV_ALLOC, owner, blk_usable(got));
    port_irq_restore(s);
    return &heap.bytes[blk + MEM_HDR];
}

void *mem_realloc(void *ptr, size_t size)
{
    if (ptr == NULL) return mem_alloc(size);
    if (size == 0) {
        mem_free(ptr);
        return NULL;
    }
    mem_loc_t loc;
    mem_hdr_t old = {0, 0, 0};
    bool done = false;
    mt_pid_t by = acting_owner();
    port_irq_state_t s = port_irq_save();
    mt_err_t err = locate(ptr, &loc, true);
    if (err == MT_OK) {
        old = hdr_get(loc.blk);
        if (may_change(by, old.owner))
            done = resize_in_place(loc, block_need(size));
        else
            err = MT_ERR_NOT_OWNER;
    }
    port_irq_restore(s);
    if (err != MT_OK) {
        log_error(err);
        return NULL;
    }
    if (!done) return move_block(ptr, size, old);
    uint16_t now = size_at(loc.blk);
    if (now != blk_size(old)) {
        log_event(EV_FREE, old.owner, blk_usable(blk_size(old)));
        log_event(EV_ALLOC, old.owner, blk_usable(now));
    }
    return ptr;
}

/* A free refused because `by` does not own the block: nothing changed. */
static MT_NOINLINE mt_err_t free_refused(void)
{
    return log_error(MT_ERR_NOT_OWNER);
}

/* free_block() of a pointer the O(1) check did not accept, or without the
 * start map: the walk decides. Out of line, as in mem_set_owner(). */
static MT_NOINLINE mt_err_t free_located(void *ptr, mt_pid_t by)
{
    mem_loc_t loc;
    port_irq_state_t s = port_irq_save();
    mt_err_t err = locate(ptr, &loc, true);
    if (err != MT_OK) {
        port_irq_restore(s);
        return log_error(err);
    }
    mem_hdr_t h = hdr_get(loc.blk);
    if (!may_change(by, h.owner)) {
        port_irq_restore(s);
        return free_refused();
    }
    release(loc.blk, blk_size(h), loc.prev_free, next_free(loc.prev_free));
    port_irq_restore(s);
    log_event(EV_FREE, h.owner, blk_usable(blk_size(h)));
    return MT_OK;
}

/* Free ptr, not NULL, on behalf of `by` (MEM_OWNER_KERNEL: whoever owns
 * it): out of line, so that a free of NULL (an application's "nothing held
 * yet") returns before this frame's register saves. */
static MT_NOINLINE mt_err_t free_block(void *ptr, mt_pid_t by)
{
    uint16_t off;
    mem_hdr_t h;
    port_irq_state_t s = port_irq_save();
    if (!mem_live_start(ptr, &off, &h)) {
        port_irq_restore(s);
        return free_located(ptr, by);
    }
    if (!may_change(by, h.owner)) {
        port_irq_restore(s);
        return free_refused();
    }
    /* In line on every core: the one frame is no deeper than this one and
     * release()'s together, and the walk above leaves it by a tail call.
     * The record first: h is done with before the list changes. A block
     * below every free block (the common case) joins the list at its head,
     * with no walk and no block below it to test. */
    log_event_inline_irq_off(EV_FREE, h.owner, blk_usable(blk_size(h)));
    if (mem_free_head > off) {
        release_inline(off, blk_size(h), MEM_NIL, mem_free_head);
    } else {
        uint16_t next;
        uint16_t prev = free_around(off, &next);
        release_inline(off, blk_size(h), prev, next);
    }
    port_irq_restore(s);
    return MT_OK;
}

mt_err_t mem_free(void *ptr)
{
    if (ptr == NULL) return MT_OK;
    return free_block(ptr, acting_owner());
}

mt_err_t mem_release(void *ptr)
{
    if (ptr == NULL) return MT_OK;
    return free_block(ptr, MEM_OWNER_KERNEL);
}

/* Interrupts stay off for the whole walk: an interrupt handler freeing the
 * block ahead could merge it away under the walk's feet. */
unsigned mem_free_all(mt_pid_t owner)
{
    unsigned freed = 0;
    uint16_t prev = MEM_NIL;
    port_irq_state_t s = port_irq_save();
    for (uint16_t b = MEM_FIRST; b < MEM_END;) {
        mem_hdr_t h = hdr_get(b);
        if (!hdr_valid(b, h)) {
            log_error(MT_ERR_STATE); /* corrupted heap: stop, change nothing more */
            break;
        }
        if (blk_used(h) && h.owner == owner) {
            log_event(EV_FREE, owner, blk_usable(blk_size(h)));
            b = release(b, blk_size(h), prev, next_free(prev));
            freed++;
            h = hdr_get(b);
        }
        if (!blk_used(h)) prev = b;
        b += blk_size(h);
    }
    port_irq_restore(s);
    return freed;
}

mt_pid_t mem_owner(const void *ptr)
{
    mem_hdr_t h;
    return locate_hdr(ptr, &h) == MT_OK ? h.owner : MEM_OWNER_KERNEL;
}

/* mem_pass() for a pointer the O(1) check did not accept, or without
 * the start map: the walk finds the header, and owner and size are
 * checked on it under the same lock. Out of line, so that the fast path
 * saves no registers for it. */
static MT_NOINLINE mt_err_t pass_located(void *ptr, uint16_t len, mt_pid_t from, mt_pid_t to)
{
    mem_loc_t loc;
    port_irq_state_t s = port_irq_save();
    mt_err_t err = locate(ptr, &loc, false) == MT_OK ? MT_OK : MT_ERR_BAD_POINTER;
    if (!err) {
        mem_hdr_t h = hdr_get(loc.blk);
        if (from != MEM_OWNER_KERNEL && h.owner != from)
            err = MT_ERR_NOT_OWNER;
        else if (blk_usable(blk_size(h)) < len)
            err = MT_ERR_INVALID;
        else
            hdr_put(loc.blk, h.size, to);
    }
    port_irq_restore(s);
    return err ? log_error(err) : MT_OK;
}

mt_err_t mem_set_owner(void *ptr, mt_pid_t owner)
{
    return mem_pass(ptr, 0, MEM_OWNER_KERNEL, owner);
}

/* No lookup in the common case (mem_pass_irq_off()): the kernel checked the
 * block when it lent it out, and while lent the block is the kernel's,
 * which no task's mem_free() can take away. */
mt_err_t mem_pass(void *ptr, uint16_t len, mt_pid_t from, mt_pid_t to)
{
    port_irq_state_t s = port_irq_save();
    bool passed = mem_pass_irq_off(ptr, len, from, to);
    port_irq_restore(s);
    /* Else the walk decides (rare: another owner's block, a shorter one,
     * without the start map, or a bad pointer). */
    return passed ? MT_OK : pass_located(ptr, len, from, to);
}

void *mem_hand_over(void *ptr, mt_pid_t owner)
{
    uint8_t *hdr = (uint8_t *) ptr - MEM_HDR;
    port_irq_state_t s = port_irq_save();
    uint8_t was = hdr[offsetof(mem_hdr_t, owner)];
    hdr[offsetof(mem_hdr_t, owner)] = owner;
    hdr[offsetof(mem_hdr_t, check)] ^= (uint8_t) (was ^ owner);
    port_irq_restore(s);
    return ptr;
}

bool mem_is_heap(const void *ptr)
{
    mem_hdr_t h;
    return locate_hdr(ptr, &h) == MT_OK;
}

size_t mem_block_size(const void *ptr)
{
    mem_hdr_t h;
    return locate_hdr(ptr, &h) == MT_OK ? blk_usable(blk_size(h)) : 0;
}
