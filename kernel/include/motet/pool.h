/* SPDX-License-Identifier: MIT */
/*
 * Fixed-block memory pools (docs/threads.md): `count` blocks of one size in
 * static storage, allocated and freed in constant time from any context:
 * tasks, threads and interrupts. A pool is a slab cache (slab.h), so a
 * pointer that is not one of its blocks, or a block freed twice, is
 * refused (MT_ERR_BAD_POINTER, MT_ERR_DOUBLE_FREE, logged) before it could
 * corrupt the pool. With threads, a thread may wait for a block, at most
 * for a timeout; a freed block goes straight to the highest waiter.
 *
 * Example:
 *
 *     POOL_DEFINE(frames, 128, 6);        // 6 blocks of 128 bytes
 *     pool_init(&frames);                 // boot
 *     uint8_t *f = pool_alloc(&frames);   // any context; NULL if none left
 *     ...
 *     pool_free(&frames, f);
 */
#ifndef MOTET_POOL_H
#define MOTET_POOL_H

#include "motet/slab.h"
#include "motet/thread.h"

typedef struct pool {
    slab_cache_t slab; /* the blocks */
#if MOTET_THREADS
    thread_t *waiters; /* threads waiting for a block */
#endif
} pool_t;

/* Define pool `name` of `count` (1..255) blocks of `block_size` bytes,
 * each aligned for any scalar type. */
#define POOL_DEFINE(name, block_size, count)                                                       \
    _Static_assert((count) >= 1 && (count) <= 255, "a pool has 1..255 blocks");                    \
    static union {                                                                                 \
        uint8_t bytes[(block_size)];                                                               \
        void *link;                                                                                \
        long long align;                                                                           \
    } name##_blocks[(count)];                                                                      \
    static uint8_t name##_used[((count) + 7) / 8];                                                 \
    pool_t name = {.slab = {(uint8_t *) name##_blocks, name##_used, NULL,                          \
                            (uint16_t) sizeof(name##_blocks[0]), (count), 0, 0, 0, #name, 0, 0}}

/* Put every block on the free list; boot (or a reset with no block out). */
void pool_init(pool_t *p);
/* A block, or NULL if none is free, never waiting; any context. */
void *pool_alloc(pool_t *p);
/* Give a block back (to the highest waiting thread, if any: a preemption
 * point in task context); any context. MT_ERR_BAD_POINTER (not a block of
 * p), MT_ERR_DOUBLE_FREE, both logged. */
mt_err_t pool_free(pool_t *p, void *block);
/* Blocks handed out now. */
uint8_t pool_in_use(const pool_t *p);

#if MOTET_THREADS
/* A block into *block, waiting at most `timeout` ticks for one: MT_OK,
 * MT_ERR_TIMEOUT (*block NULL). Thread; elsewhere with THREAD_NO_WAIT only
 * (else MT_ERR_STATE, logged). */
mt_err_t pool_alloc_wait(pool_t *p, void **block, uint32_t timeout);
#endif

#endif /* MOTET_POOL_H */
