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
 * The bodies of allocation and free are inline in slab_internal.h, with
 * the cache's geometry as their arguments.
 */
#include <string.h>

#include "motet/log.h"
#include "motet/port.h"
#include "slab_internal.h"

void slab_init(slab_cache_t *cache)
{
    /* Threaded from the top down so the lowest object is handed out first. */
    cache->free_list = NULL;
    uint8_t *obj = cache->storage + (size_t) cache->count * cache->obj_size;
    while (obj != cache->storage) {
        obj -= cache->obj_size;
        memcpy(obj, &cache->free_list, sizeof(void *));
        cache->free_list = obj;
    }
    memset(cache->used_map, 0, (cache->count + 7u) / 8u);
    cache->in_use = 0;
#if MOTET_STATS
    cache->high_water = 0;
    cache->failures = 0;
#endif
}

void slab_refused(slab_cache_t *cache)
{
#if MOTET_STATS
    port_irq_state_t s = port_irq_save();
    if (cache->failures < UINT8_MAX) cache->failures++;
    port_irq_restore(s);
#else
    (void) cache;
#endif
    log_error(MT_ERR_NO_SLAB);
}

mt_err_t slab_rejected(mt_err_t err)
{
    return log_error(err);
}

void *slab_alloc_uninit(slab_cache_t *cache)
{
    return slab_take(cache, slab_geometry_of(cache));
}

void *slab_alloc(slab_cache_t *cache)
{
    uint8_t *obj = slab_take(cache, slab_geometry_of(cache));
    if (obj) memset(obj, 0, cache->obj_size);
    return obj;
}

mt_err_t slab_free(slab_cache_t *cache, void *obj)
{
    return slab_put(cache, slab_geometry_of(cache), obj);
}

bool slab_owns(const slab_cache_t *cache, const void *obj)
{
    uint8_t idx;
    return slab_index(slab_geometry_of(cache), obj, &idx) &&
           (cache->used_map[idx >> 3] & slab_map_bit(idx)) != 0;
}
