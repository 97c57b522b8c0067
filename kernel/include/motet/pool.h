/* SPDX-License-Identifier: MIT */
/*
 * Fixed-block memory pools (docs/threads.md): `count` blocks of one size in
 * static storage, allocated and freed in constant time from any context:
 * tasks, threads and interrupts. A pointer that is not one of its blocks,
 * or a block freed twice, is refused (MT_ERR_BAD_POINTER,
 * MT_ERR_DOUBLE_FREE, logged) before it could corrupt the pool. With
 * threads, a thread may wait for a block, at most for a timeout; a freed
 * block goes straight to the highest waiter.
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

#include "motet/thread.h"

/* What a free block holds (pool.c): the next free block, and its pool as a
 * mark that it is free (cleared when the block is handed out). */
typedef struct pool_free_block {
    struct pool_free_block *next;
    const struct pool *free_mark;
} pool_free_block_t;

typedef struct pool {
#if MOTET_THREADS
    thread_t *waiters; /* threads waiting for a block; first: a wait list */
#endif
    pool_free_block_t *free; /* free blocks, linked through themselves */
    uint8_t *blocks;         /* count * size bytes */
    uintptr_t inverse;       /* odd * inverse = 1 modulo 2^(pointer bits) (pool_init) */
    uint16_t size;           /* a block's bytes */
    uint8_t count;           /* blocks */
    uint8_t shift;           /* size = odd << shift (pool_init) */
    uint8_t in_use;          /* blocks handed out */
} pool_t;

#define POOL_DEFINE(name, block_size, n_blocks)                                                    \
    _Static_assert((n_blocks) >= 1 && (n_blocks) <= 255, "a pool has 1..255 blocks");              \
    _Static_assert((block_size) >= 1, "a pool's blocks have at least one byte");                   \
    static union {                                                                                 \
        uint8_t bytes[(block_size)];                                                               \
        pool_free_block_t link;                                                                    \
        long long align;                                                                           \
    } name##_blocks[(n_blocks)];                                                                   \
    /* pool_t.size is 16 bits: a truncated size could even be 0 */                                 \
    _Static_assert(sizeof(name##_blocks[0]) <= UINT16_MAX, "a pool's block size fits 16 bits");    \
    pool_t name = {.blocks = (uint8_t *) name##_blocks,                                            \
                   .size = (uint16_t) sizeof(name##_blocks[0]),                                    \
                   .count = (n_blocks)}

/* Make every block of p free, no thread waiting; once, before p is used (boot). */
void pool_init(pool_t *p);
/* A block, or NULL if none is free, never waiting; any context. */
void *pool_alloc(pool_t *p);
/* Give a block back (to the highest waiting thread, if any: a preemption
 * point in task context); any context. MT_ERR_BAD_POINTER (not a block of
 * p), MT_ERR_DOUBLE_FREE, both logged. */
mt_err_t pool_free(pool_t *p, void *block);
/* Blocks handed out now (a count kept by alloc and free: constant time). */
uint8_t pool_in_use(const pool_t *p);

#if MOTET_THREADS
/* A block into *block, waiting at most `timeout` ticks for one: MT_OK,
 * MT_ERR_TIMEOUT (*block NULL). Thread; elsewhere with THREAD_NO_WAIT only
 * (else MT_ERR_STATE, logged). */
mt_err_t pool_alloc_wait(pool_t *p, void **block, uint32_t timeout);
#endif

#endif /* MOTET_POOL_H */
