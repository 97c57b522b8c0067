/* SPDX-License-Identifier: MIT */
/*
 * Slab caches (slab.h): fixed-size objects on a free list threaded through
 * the free objects themselves, so a cache costs no memory beyond its storage
 * and a one-bit-per-object map. The map, not the free list, decides whether
 * an object is live: a double free is caught before it could put the same
 * object on the list twice and hand it out to two owners.
 *
 * Interrupt handlers allocate messages and timers, so the list and the map
 * change only with interrupts held off; zeroing and logging happen after.
 */
#include <string.h>

#include "motet/log.h"
#include "motet/port.h"
#include "motet/slab.h"

/* The link lives in the first bytes of a free object; memcpy because the
 * storage is declared as the cache's own union type. */
static MT_INLINE void *link_get(const uint8_t *obj)
{
    void *next;
    memcpy(&next, obj, sizeof next);
    return next;
}

static MT_INLINE void link_put(uint8_t *obj, void *next)
{
    memcpy(obj, &next, sizeof next);
}

/* Indexes are bytes (a cache holds at most 255 objects): on an 8-bit core
 * a shift of a byte is a third of the cost of a shift of an int. */
static MT_INLINE uint8_t map_bit(uint8_t idx)
{
    return (uint8_t) (1u << (idx & 7u));
}

static MT_INLINE bool map_test(const slab_cache_t *cache, uint8_t idx)
{
    return (cache->used_map[idx >> 3] & map_bit(idx)) != 0;
}

static MT_INLINE void map_flip(slab_cache_t *cache, uint8_t idx)
{
    cache->used_map[idx >> 3] ^= map_bit(idx);
}

/* Object index of byte offset `delta` into the storage, exact for the
 * start of an object (obj_index() rejects any other offset). An 8-bit core has no divide
 * instruction (a 16-bit division costs ~200 cycles on the ATmega128), so small caches multiply by a
 * reciprocal instead: for delta = idx * size exactly, delta * ceil(2^16 / size) = idx * 2^16 + idx
 * * e with e < size, and idx * e < count * size < 2^16, so the shift returns idx. The same holds
 * with 2^8 for an offset below 256, and ceil(2^8 / size) is the reciprocal
 * rounded up by a byte: where int is 16 bits (8-bit cores), that is one
 * byte multiply instead of a library call for 16 by 16 bits. */
static MT_INLINE uint8_t index_of(const slab_cache_t *cache, uintptr_t delta)
{
    if (!cache->recip) return (uint8_t) (delta / cache->obj_size);
    if (sizeof(unsigned) == 2 && delta < 256u) {
        uint8_t recip8 = (uint8_t) ((cache->recip + 255u) >> 8);
        return (uint8_t) (((uint16_t) ((uint8_t) delta * recip8)) >> 8);
    }
    return (uint8_t) (((uint32_t) (uint16_t) delta * cache->recip) >> 16);
}

/* Index of obj if it is the start of an object in this cache's storage. */
static MT_INLINE bool obj_index(const slab_cache_t *cache, const void *obj, uint8_t *idx)
{
    uintptr_t p = (uintptr_t) obj;
    uintptr_t base = (uintptr_t) cache->storage;
    if (p < base) return false;
    uintptr_t delta = p - base;
    if (delta >= (uintptr_t) cache->count * cache->obj_size) return false;
    *idx = index_of(cache, delta);
    /* Multiplying back rejects a pointer inside an object. */
    return (uintptr_t) *idx * cache->obj_size == delta;
}

void slab_init(slab_cache_t *cache)
{
    /* Threaded from the top down so the lowest object is handed out first. */
    cache->free_list = NULL;
    for (unsigned i = cache->count; i-- > 0;) {
        uint8_t *obj = cache->storage + (size_t) i * cache->obj_size;
        link_put(obj, cache->free_list);
        cache->free_list = obj;
    }
    memset(cache->used_map, 0, (cache->count + 7u) / 8u);
    uint32_t span = (uint32_t) cache->count * cache->obj_size;
    cache->recip =
        span < 0x10000u ? (uint16_t) ((0x10000u + cache->obj_size - 1u) / cache->obj_size) : 0u;
    cache->in_use = 0;
    cache->high_water = 0;
    cache->failures = 0;
}

/* Unlink the first free object and mark it live; NULL (logged) if none. */
static MT_INLINE void *take_object(slab_cache_t *cache)
{
    port_irq_state_t s = port_irq_save();
    uint8_t *obj = cache->free_list;
    if (obj == NULL) {
        if (cache->failures < UINT8_MAX) cache->failures++;
        port_irq_restore(s);
        log_error(MT_ERR_NO_SLAB);
        return NULL;
    }
    cache->free_list = link_get(obj);
    map_flip(cache, index_of(cache, (uintptr_t) (obj - cache->storage)));
    cache->in_use++;
    if (cache->in_use > cache->high_water) cache->high_water = cache->in_use;
    port_irq_restore(s);
    return obj;
}

void *slab_alloc_uninit(slab_cache_t *cache)
{
    return take_object(cache);
}

void *slab_alloc(slab_cache_t *cache)
{
    uint8_t *obj = take_object(cache);
    if (obj) memset(obj, 0, cache->obj_size);
    return obj;
}

mt_err_t slab_free(slab_cache_t *cache, void *obj)
{
    uint8_t idx;
    if (!obj_index(cache, obj, &idx)) return log_error(MT_ERR_BAD_POINTER);
    port_irq_state_t s = port_irq_save();
    bool live = map_test(cache, idx);
    if (live) {
        map_flip(cache, idx);
        link_put(obj, cache->free_list);
        cache->free_list = obj;
        cache->in_use--;
    }
    port_irq_restore(s);
    return live ? MT_OK : log_error(MT_ERR_DOUBLE_FREE);
}

bool slab_owns(const slab_cache_t *cache, const void *obj)
{
    uint8_t idx;
    return obj_index(cache, obj, &idx) && map_test(cache, idx);
}
