/* SPDX-License-Identifier: MIT */
/*
 * Slab caches: fixed-size objects for kernel metadata (task blocks, queued
 * messages, timers, routes), so that metadata never fragments the heap.
 * The kernel's own: applications allocate from the heap (motet/mem.h) or
 * from fixed-block pools (motet/pool.h).
 *
 * A cache is defined statically with its storage; allocation and free are
 * O(1) and safe from interrupts (they hold interrupts off briefly). A free
 * list threads the free objects; a bitmap catches double frees.
 *
 * Example:
 *
 *     SLAB_DEFINE(timer_cache, timer_t, 16);
 *     timer_t *t = slab_alloc(&timer_cache);
 *     slab_free(&timer_cache, t);
 *
 * The operations' bodies are in slab_internal.h.
 */
#ifndef MOTET_SLAB_H
#define MOTET_SLAB_H

#include <string.h>

#include "motet/port.h"
#include "motet/types.h"

typedef struct slab_cache {
    uint8_t *storage;  /* count * obj_size bytes */
    uint8_t *used_map; /* one bit per object */
    void *free_list;   /* threaded through free objects */
    uint16_t obj_size; /* rounded up to hold a pointer */
    uint8_t count;     /* objects in the cache */
    uint8_t in_use;    /* objects handed out */
    uint8_t shift;     /* obj_size = odd << shift */
    uint8_t inverse;   /* odd * inverse = 1 modulo 256 */
#if MOTET_STATS        /* the statistics (config.h): no code and no bytes without them */
    uint8_t high_water;
    uint8_t failures; /* allocations refused */
    const char *name; /* for reports */
#endif
} slab_cache_t;

/* A cache's geometry from its object size, as constants (slab_internal.h
 * says how an index is found with them): size = odd <<
 * shift, and the inverse of odd modulo 256 by Newton's iteration (odd *
 * odd is 1 modulo 8; each step doubles the correct low bits). */
#define SLAB_SHIFT(size)     ((uint8_t) __builtin_ctz(size))
#define SLAB_ODD(size)       ((uint8_t) ((size) >> __builtin_ctz(size)))
#define SLAB_NEWTON(odd, x)  ((uint8_t) ((x) * (2u - (odd) * (x))))
#define SLAB_INVERSE_OF(odd) SLAB_NEWTON(odd, SLAB_NEWTON(odd, odd))
#define SLAB_INVERSE(size)   SLAB_INVERSE_OF(SLAB_ODD(size))

/* Define a cache named `cache` of `n` objects of `type`. */
#define SLAB_DEFINE(cache, type, n)                                                                \
    static union {                                                                                 \
        type obj;                                                                                  \
        void *link;                                                                                \
    } cache##_storage[(n)];                                                                        \
    static uint8_t cache##_used[((n) + 7) / 8];                                                    \
    slab_cache_t cache = {.storage = (uint8_t *) cache##_storage,                                  \
                          .used_map = cache##_used,                                                \
                          .obj_size = (uint16_t) sizeof(cache##_storage[0]),                       \
                          .count = (n),                                                            \
                          .shift = SLAB_SHIFT(sizeof(cache##_storage[0])),                         \
                          .inverse =                                                               \
                              SLAB_INVERSE(sizeof(cache##_storage[0])) SLAB_STATS_NAME(cache)}
#if MOTET_STATS
#define SLAB_STATS_NAME(cache) , .name = #cache
#else
#define SLAB_STATS_NAME(cache)
#endif

/* Thread every object onto the free list; boot or test reset only. */
void slab_init(slab_cache_t *cache);
/* One zeroed object, or NULL (logged as MT_ERR_NO_SLAB) when exhausted; any context. */
void *slab_alloc(slab_cache_t *cache);
/* slab_alloc() without the zeroing, for callers that set every field. */
void *slab_alloc_uninit(slab_cache_t *cache);
/* Return an object. MT_ERR_DOUBLE_FREE or MT_ERR_BAD_POINTER; any context. */
mt_err_t slab_free(slab_cache_t *cache, void *obj);
/* True if obj is a live object of this cache. */
bool slab_owns(const slab_cache_t *cache, const void *obj);

#endif /* MOTET_SLAB_H */
