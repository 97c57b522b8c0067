/* SPDX-License-Identifier: MIT */
/*
 * Slab caches: fixed-size objects for kernel metadata (task blocks, queued
 * messages, timers, routes), so that metadata never fragments the heap.
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
 * The operations' bodies are the kernel's own (kernel/src/slab_internal.h).
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
    uint8_t in_use;
    uint8_t high_water;
    uint8_t failures; /* allocations refused */
    const char *name; /* for reports; NULL without statistics (MOTET_STATS) */
    uint8_t shift;    /* obj_size = odd << shift */
    uint8_t inverse;  /* odd * inverse = 1 modulo 256 */
} slab_cache_t;

#define SLAB_OBJ_SIZE(type) (sizeof(type) < sizeof(void *) ? sizeof(void *) : sizeof(type))

/* A cache's geometry from its object size, as constants (kernel/src/
 * slab_internal.h says how an index is found with them): size = odd <<
 * shift, and the inverse of odd modulo 256 by Newton's iteration (odd *
 * odd is 1 modulo 8; each step doubles the correct low bits). */
#define SLAB_SHIFT(size)     ((uint8_t) __builtin_ctz(size))
#define SLAB_ODD(size)       ((uint8_t) ((size) >> __builtin_ctz(size)))
#define SLAB_NEWTON(odd, x)  ((uint8_t) ((x) * (2u - (odd) * (x))))
#define SLAB_INVERSE_OF(odd) SLAB_NEWTON(odd, SLAB_NEWTON(odd, odd))
#define SLAB_INVERSE(size)   SLAB_INVERSE_OF(SLAB_ODD(size))

/* Define a cache named `name` of `count` objects of `type`. */
#define SLAB_DEFINE(name, type, count)                                                             \
    static union {                                                                                 \
        type obj;                                                                                  \
        void *link;                                                                                \
    } name##_storage[(count)];                                                                     \
    static uint8_t name##_used[((count) + 7) / 8];                                                 \
    slab_cache_t name = {(uint8_t *) name##_storage,                                               \
                         name##_used,                                                              \
                         NULL,                                                                     \
                         (uint16_t) sizeof(name##_storage[0]),                                     \
                         (count),                                                                  \
                         0,                                                                        \
                         0,                                                                        \
                         0,                                                                        \
                         MOTET_STATS ? #name : NULL,                                               \
                         SLAB_SHIFT(sizeof(name##_storage[0])),                                    \
                         SLAB_INVERSE(sizeof(name##_storage[0]))}

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
