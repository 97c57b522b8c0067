/* SPDX-License-Identifier: MIT */
/*
 * The heap's diagnostics (mem.h): a walk of every block that checks the
 * heap's invariants, and the statistics. Apart from the allocator
 * (mem_heap.c): nothing here is on an allocation's or a free's path.
 */
#include "mem_layout.h"

/* The walk of mem_consistent(), interrupts off: every header, in address
 * order, against the free list, the map of live starts and the mem_counters. */
static bool heap_whole(void)
{
    uint16_t off = MEM_FIRST, listed = mem_free_head, in_use = 0;
    bool free_below = false;
    while (off < MEM_END) {
        mem_hdr_t h = hdr_get(off);
        uint16_t size = blk_size(h);
        if (!hdr_valid(off, h) || size % MEM_ALIGN) return false;
        for (uint16_t g = off; MOTET_MEM_START_MAP && g < off + size; g += MEM_ALIGN)
            if (start_is_live(g) != (g == off && blk_used(h))) return false;
        if (blk_used(h)) {
            in_use = (uint16_t) (in_use + size);
            free_below = false;
        } else {
            /* Free: the next on the list in address order, never beside
             * another free block (neighbours merge), owned by the kernel. */
            uint16_t next;
            memcpy(&next, &heap.bytes[off + MEM_HDR], sizeof next);
            if (off != listed || free_below || h.owner != MEM_OWNER_KERNEL) return false;
            if (next != MEM_NIL && next <= off) return false;
            listed = next;
            free_below = true;
        }
        off = (uint16_t) (off + size);
    }
    return off == MEM_END && listed == MEM_NIL && in_use == mem_counters.in_use;
}

bool mem_consistent(void)
{
    port_irq_state_t s = port_irq_save();
    bool whole = heap_whole();
    port_irq_restore(s);
    return whole;
}

/* Allocated blocks, counted by a walk of the headers (interrupts off)
 * rather than on every allocation and free: a header that fails its check
 * ends the count, as it ends every walk. */
static uint16_t blocks_allocated(void)
{
    uint16_t blocks = 0;
    for (uint16_t off = MEM_FIRST; off < MEM_END;) {
        mem_hdr_t h = hdr_get(off);
        if (!hdr_valid(off, h)) break;
        if (blk_used(h)) blocks++;
        off = (uint16_t) (off + blk_size(h));
    }
    return blocks;
}

void mem_get_stats(mem_stats_t *stats)
{
    port_irq_state_t s = port_irq_save();
    *stats = mem_counters;
    stats->largest_free = 0;
    stats->free_blocks = 0;
    for (uint16_t f = mem_free_head; f != MEM_NIL; f = link_get(f)) {
        uint16_t payload = blk_usable(size_at(f));
        if (payload > stats->largest_free) stats->largest_free = payload;
        stats->free_blocks++;
    }
    stats->alloc_count = blocks_allocated();
    port_irq_restore(s);
}
