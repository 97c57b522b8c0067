/* SPDX-License-Identifier: MIT */
/*
 * The bodies of the slab operations (slab.h), for the kernel's own files:
 * slab.c, and the heap's start map, which reads single bits the same way.
 */
#ifndef MOTET_SLAB_INTERNAL_H
#define MOTET_SLAB_INTERNAL_H

#include "bit_table.h"
#include "slab.h"

/* ---- the bodies of slab_alloc_uninit() and slab_free(), inline ----
 *
 * A cache's geometry: where its objects and map are, how big and how many;
 * an object's index is (offset >> shift) * inverse modulo 256 (slab.c). */
typedef struct slab_geometry {
    uint8_t *storage;
    uint8_t *map;
    uint16_t size;
    uint8_t count;
    uint8_t shift;
    uint8_t inverse;
} slab_geometry_t;

/* The geometry of a cache, read from its fields. */
static MT_INLINE slab_geometry_t slab_geometry_of(const slab_cache_t *cache)
{
    return (slab_geometry_t){cache->storage, cache->used_map, cache->obj_size,
                             cache->count,   cache->shift,    cache->inverse};
}

/* Count and log an exhausted cache / log a bad or double free; out of line. */
void slab_refused(slab_cache_t *cache);
mt_err_t slab_rejected(mt_err_t err);

/* Bit of object idx in its map byte (bit_table.h). */
static MT_INLINE uint8_t slab_map_bit(uint8_t idx)
{
    return (uint8_t) bit_of(idx & 7u);
}

/* Index of obj if it is the start of an object of this geometry. With
 * size = odd << shift and offset = idx * size, offset >> shift is idx * odd,
 * and times the inverse of odd modulo 256 that is idx modulo 256, idx
 * itself: no divide (an 8-bit core has none). Any other offset, below the
 * storage (it wraps to a huge one), inside an object or past the storage,
 * gives some byte whose multiple cannot equal it, since idx * size for an
 * index below count lies in the storage. */
static MT_INLINE bool slab_index(slab_geometry_t g, const void *obj, uint8_t *idx)
{
    uintptr_t delta = (uintptr_t) obj - (uintptr_t) g.storage;
    *idx = (uint8_t) ((uint8_t) (delta >> g.shift) * g.inverse);
    return *idx < g.count && (uintptr_t) *idx * g.size == delta;
}

/* Index of obj, which is known to be an object of this geometry. */
static MT_INLINE uint8_t slab_known_index(slab_geometry_t g, const void *obj)
{
    uintptr_t delta = (uintptr_t) obj - (uintptr_t) g.storage;
    return (uint8_t) ((uint8_t) (delta >> g.shift) * g.inverse);
}

/* The first free object of a cache of geometry g, marked live, or NULL
 * (not logged: the caller reports it, slab_refused()); irq off. */
static MT_INLINE void *slab_take_irq_off(slab_cache_t *cache, slab_geometry_t g)
{
    uint8_t *obj = (uint8_t *) cache->free_list;
    if (obj == NULL) return NULL;
    /* The link lives in the first bytes of a free object; memcpy because
     * the storage is declared as the cache's own union type. */
    memcpy(&cache->free_list, obj, sizeof(void *));
    /* Objects come from the cache's own list: the index is exact. */
    uint8_t idx = slab_known_index(g, obj);
    g.map[idx >> 3] |= slab_map_bit(idx); /* set, not flipped: a corrupt list cannot clear it */
    cache->in_use++;
#if MOTET_STATS
    if (cache->in_use > cache->high_water) cache->high_water = cache->in_use;
#endif
    return obj;
}

/* slab_alloc_uninit() of a cache of geometry g. */
static MT_INLINE void *slab_take(slab_cache_t *cache, slab_geometry_t g)
{
    port_irq_state_t s = port_irq_save();
    void *obj = slab_take_irq_off(cache, g);
    port_irq_restore(s);
    if (obj == NULL) slab_refused(cache);
    return obj;
}

/* slab_free() of a cache of geometry g. The map, not the free list, says
 * whether an object is live, so a double free cannot list it twice. */
static MT_INLINE mt_err_t slab_put(slab_cache_t *cache, slab_geometry_t g, void *obj)
{
    uint8_t idx;
    if (!slab_index(g, obj, &idx)) return slab_rejected(MT_ERR_BAD_POINTER);
    uint8_t *byte = &g.map[idx >> 3];
    uint8_t bit = slab_map_bit(idx);
    port_irq_state_t s = port_irq_save();
    bool live = (*byte & bit) != 0;
    if (live) {
        *byte &= (uint8_t) ~bit;
        memcpy(obj, &cache->free_list, sizeof(void *));
        cache->free_list = obj;
        cache->in_use--;
    }
    port_irq_restore(s);
    return live ? MT_OK : slab_rejected(MT_ERR_DOUBLE_FREE);
}

/* slab_put() of an object the caller knows came from this cache (a link of
 * a list only its objects join), irq off: the pointer needs no check, and
 * the map still catches a double free. */
static MT_INLINE mt_err_t slab_put_known_irq_off(slab_cache_t *cache, slab_geometry_t g, void *obj)
{
    uint8_t idx = slab_known_index(g, obj);
    uint8_t *byte = &g.map[idx >> 3];
    uint8_t bit = slab_map_bit(idx);
    if (!(*byte & bit)) return slab_rejected(MT_ERR_DOUBLE_FREE);
    *byte &= (uint8_t) ~bit;
    memcpy(obj, &cache->free_list, sizeof(void *));
    cache->free_list = obj;
    cache->in_use--;
    return MT_OK;
}

/* The geometry of the cache `name` defined in this file, as constants. */
#define SLAB_GEOMETRY(name)                                                                        \
    ((slab_geometry_t){                                                                            \
        (uint8_t *) name##_storage, name##_used, (uint16_t) sizeof(name##_storage[0]),             \
        (uint8_t) (sizeof(name##_storage) / sizeof(name##_storage[0])),                            \
        SLAB_SHIFT(sizeof(name##_storage[0])), SLAB_INVERSE(sizeof(name##_storage[0]))})
/* slab_alloc_uninit() / slab_free() of the cache `name` defined in this
 * file, inline and with its geometry folded to constants. */
#define SLAB_TAKE(name)     slab_take(&name, SLAB_GEOMETRY(name))
#define SLAB_PUT(name, obj) slab_put(&name, SLAB_GEOMETRY(name), (obj))
/* slab_put_known_irq_off() of the cache `name` defined in this file. */
#define SLAB_PUT_KNOWN_IRQ_OFF(name, obj) slab_put_known_irq_off(&name, SLAB_GEOMETRY(name), (obj))

#endif /* MOTET_SLAB_INTERNAL_H */
