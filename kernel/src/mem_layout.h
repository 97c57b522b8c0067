/* SPDX-License-Identifier: MIT */
/*
 * The heap's layout (mem_heap.c has the allocator, mem_check.c the walk
 * that checks it): block headers, the free list's links and the map of
 * live block starts, with the accessors both files use. Kernel only.
 */
#ifndef MOTET_MEM_LAYOUT_H
#define MOTET_MEM_LAYOUT_H

#include <stddef.h>
#include <string.h>

#include "motet/config.h"
#include "motet/mem.h"
#include "motet/port.h"
#include "slab_internal.h"

typedef union {
    void *ptr;
    uint32_t word;
} mem_align_t;

typedef struct {
    uint16_t size; /* block bytes, header included; MEM_USED while allocated */
    uint8_t owner; /* MEM_OWNER_KERNEL while free */
    uint8_t check; /* hdr_check() of the three fields above */
} mem_hdr_t;

_Static_assert(sizeof(mem_hdr_t) == 4, "the block header must stay 4 bytes");

#define MEM_HDR      ((uint16_t) sizeof(mem_hdr_t))
#define MEM_USED     0x8000u
#define MEM_NIL      0xFFFFu /* end of the free list: offsets stay below 0x8000 */
#define MEM_ALIGN    ((uint16_t) _Alignof(mem_align_t))
#define MEM_ROUND(n) ((uint16_t) (((n) + MEM_ALIGN - 1u) / MEM_ALIGN * MEM_ALIGN))
/* A free block must hold its header and the 16-bit free-list link. */
#define MEM_MIN_BLOCK MEM_ROUND(MEM_HDR + sizeof(uint16_t))
/* First header sits so that every payload (header + 4) is aligned. */
#define MEM_FIRST       ((uint16_t) ((MEM_ALIGN - MEM_HDR % MEM_ALIGN) % MEM_ALIGN))
#define MEM_END         ((uint16_t) (MEM_FIRST + (MOTET_HEAP_SIZE - MEM_FIRST) / MEM_ALIGN * MEM_ALIGN))
#define MEM_MAX_PAYLOAD ((uint16_t) (MEM_END - MEM_FIRST - MEM_HDR))

/* The heap itself (mem_heap.c). */
typedef union {
    uint8_t bytes[MOTET_HEAP_SIZE];
    mem_align_t align;
} mem_arena_t;
extern mem_arena_t heap;

/* One bit per granule of the heap: set where a live block starts. */
#define MEM_GRANULES        ((MEM_END - MEM_FIRST) / MEM_ALIGN)
#define MEM_START_MAP_BYTES (MOTET_MEM_START_MAP ? (MEM_GRANULES + 7u) / 8u : 1u)
extern uint8_t live_starts[MEM_START_MAP_BYTES];

extern uint16_t mem_free_head;   /* lowest free block, MEM_NIL if none */
extern mem_stats_t mem_counters; /* largest_free, free_blocks and alloc_count are
                                  * computed by mem_get_stats() */

/* Where a live block sits, and the free block below it (for coalescing). */
typedef struct {
    uint16_t blk;
    uint16_t prev_free;
} mem_loc_t;

/* ---- headers and links: memcpy keeps the byte array free of aliasing ---- */

static MT_INLINE uint8_t hdr_check(uint16_t off, uint16_t size, uint8_t owner)
{
    /* The offset is mixed in so that header bytes copied elsewhere fail;
     * folding offset and size together first costs 8-bit parts one byte
     * XOR less per field. */
    uint16_t mix = off ^ size;
    return (uint8_t) (0xA5u ^ mix ^ (mix >> 8) ^ owner);
}

static MT_INLINE mem_hdr_t hdr_get(uint16_t off)
{
    mem_hdr_t h;
    memcpy(&h, &heap.bytes[off], sizeof h);
    return h;
}

static MT_INLINE void hdr_put(uint16_t off, uint16_t size, uint8_t owner)
{
    mem_hdr_t h = {size, owner, hdr_check(off, size, owner)};
    memcpy(&heap.bytes[off], &h, sizeof h);
}

static MT_INLINE uint16_t blk_size(mem_hdr_t h)
{
    return (uint16_t) (h.size & ~MEM_USED);
}

/* The bytes a block of `size` (header included) holds for its user: what
 * an allocation gets, a pass checks a length against and the records and
 * statistics report. */
static MT_INLINE uint16_t blk_usable(uint16_t size)
{
    return (uint16_t) (size - MEM_HDR);
}

/* A header the walk may trust: its check byte and size are plausible. */
static MT_INLINE bool hdr_valid(uint16_t off, mem_hdr_t h)
{
    /* Offsets and sizes stay below 0x8000: their sum cannot wrap. */
    return h.check == hdr_check(off, h.size, h.owner) && blk_size(h) >= MEM_MIN_BLOCK &&
           (uint16_t) (off + blk_size(h)) <= MEM_END;
}

/* Size of the block at off, without the rest of its header. */
static MT_INLINE uint16_t size_at(uint16_t off)
{
    uint16_t size;
    memcpy(&size, &heap.bytes[off + offsetof(mem_hdr_t, size)], sizeof size);
    return (uint16_t) (size & ~MEM_USED);
}

static MT_INLINE bool blk_used(mem_hdr_t h)
{
    return (h.size & MEM_USED) != 0;
}

static MT_INLINE uint16_t link_get(uint16_t off)
{
    uint16_t next;
    memcpy(&next, &heap.bytes[off + MEM_HDR], sizeof next);
    /* A link that does not move forward was overwritten: end the list there
     * rather than loop forever (the list is address-ordered). */
    return next > off && next < MEM_END ? next : MEM_NIL;
}

static MT_INLINE void link_put(uint16_t off, uint16_t next)
{
    memcpy(&heap.bytes[off + MEM_HDR], &next, sizeof next);
}

/* ---- the map of live block starts ---- */

/* The map bit of off's granule, in live_starts[start_byte(off)]. The slab
 * caches' table of bits serves 8-bit cores, which shift by a variable
 * amount one bit per loop turn. */
static MT_INLINE uint8_t start_bit(uint16_t off)
{
    return slab_map_bit((uint8_t) ((uint16_t) (off - MEM_FIRST) / MEM_ALIGN));
}

static MT_INLINE uint16_t start_byte(uint16_t off)
{
    uint16_t granule = (uint16_t) ((uint16_t) (off - MEM_FIRST) / MEM_ALIGN);
    /* Where the map index fits in a byte and a 16-bit shift is a loop
     * (port.h, PORT_SHIFT_LOOPS), granule / 8 is put together from the
     * granule's two bytes, whose 8-bit shifts are unrolled. */
#ifdef PORT_SHIFT_LOOPS
    if (MEM_GRANULES <= 2048u) {
        uint8_t high = (uint8_t) (granule >> 8);
        uint8_t low = (uint8_t) granule;
        return (uint8_t) ((uint8_t) (high << 5) | (uint8_t) (low >> 3));
    }
#endif
    return granule / 8u;
}

static MT_INLINE void start_mark(uint16_t off, bool live)
{
    if (!MOTET_MEM_START_MAP) return;
    if (live)
        live_starts[start_byte(off)] |= start_bit(off);
    else
        live_starts[start_byte(off)] &= (uint8_t) ~start_bit(off);
}

static MT_INLINE bool start_is_live(uint16_t off)
{
    return (live_starts[start_byte(off)] & start_bit(off)) != 0;
}

/* Heap offset of ptr's header if ptr lies on a payload boundary. */
static MT_INLINE bool to_offset(const void *ptr, uint16_t *off)
{
    /* One unsigned comparison checks both ends of the heap. */
    uintptr_t rel = (uintptr_t) ptr - (uintptr_t) &heap.bytes[MEM_FIRST + MEM_HDR];
    if (rel >= (uintptr_t) (MEM_END - MEM_FIRST - MEM_HDR)) return false;
    *off = (uint16_t) (rel + MEM_FIRST);
    return rel % MEM_ALIGN == 0;
}

/* The O(1) check: ptr is the payload of a live block start whose header
 * (*h, at *off) is intact. False leaves the verdict to the walk. */
static MT_INLINE bool mem_live_start(const void *ptr, uint16_t *off, mem_hdr_t *h)
{
    if (!MOTET_MEM_START_MAP || !to_offset(ptr, off) || !start_is_live(*off)) return false;
    /* Read through ptr, which the caller holds already: the same bytes as
     * hdr_get(*off). */
    memcpy(h, (const uint8_t *) ptr - MEM_HDR, sizeof *h);
    return blk_used(*h) && hdr_valid(*off, *h);
}

/* Successor of `prev` on the free list; MEM_NIL as `prev` means the head. */
static MT_INLINE uint16_t next_free(uint16_t prev)
{
    return prev == MEM_NIL ? mem_free_head : link_get(prev);
}

static MT_INLINE void set_next_free(uint16_t prev, uint16_t next)
{
    if (prev == MEM_NIL)
        mem_free_head = next;
    else
        link_put(prev, next);
}

#endif /* MOTET_MEM_LAYOUT_H */
