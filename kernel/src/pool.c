/* SPDX-License-Identifier: MIT */
/*
 * Fixed-block memory pools (pool.h). The free blocks form a list threaded
 * through themselves; each free block also keeps its own index, so an
 * allocation is a pop and one byte marked live, under one short
 * critical section. A free finds the block's index from its address (no
 * divide: slab_index(), the slab caches' arithmetic), which refuses any
 * pointer that is not the start of one of the pool's blocks, and its live
 * byte refuses a second free; both before the pool is touched, both
 * logged. What a pool's user never needs on the hot path is not kept
 * there: the count of blocks out is counted when asked (pool_in_use()).
 *
 * With threads, a wait list of threads that wait for a block: a free with
 * waiters hands the block to the best one in the same locked step, so no
 * other caller can slip in between.
 */
#include <string.h>

#include "motet/log.h"
#include "motet/pool.h"
#include "slab_internal.h"
#include "thread_internal.h"

void pool_init(pool_t *p)
{
    uint16_t odd = p->size;
    for (p->shift = 0; !(odd & 1u); p->shift++) odd >>= 1;
    p->inverse = SLAB_INVERSE_OF((uint8_t) odd);
    /* Threaded from the top down so the lowest block is handed out first. */
    p->free = NULL;
    for (unsigned i = p->count; i-- > 0;) {
        pool_free_block_t *b = (pool_free_block_t *) (void *) (p->blocks + (size_t) i * p->size);
        b->next = p->free;
        b->index = (uint8_t) i;
        p->free = b;
    }
    memset(p->live, 0, p->count);
#if MOTET_THREADS
    p->waiters = NULL;
#endif
}

/* A free block marked live, or NULL; irq off. */
static MT_INLINE void *take_irq_off(pool_t *p)
{
    pool_free_block_t *b = p->free;
    if (!b) return NULL;
    p->free = b->next;
    p->live[b->index] = 1;
    return b;
}

void *pool_alloc(pool_t *p)
{
    port_irq_state_t s = port_irq_save();
    void *block = take_irq_off(p);
    port_irq_restore(s);
    return block;
}

uint8_t pool_in_use(const pool_t *p)
{
    uint8_t n = 0;
    for (uint8_t i = 0; i < p->count; i++) n += p->live[i] != 0;
    return n;
}

/* The index of `block` in p, or a refusal (logged) if it is not the start
 * of one of p's blocks or not handed out. */
static MT_INLINE mt_err_t index_of(const pool_t *p, const void *block, uint8_t *idx)
{
    slab_geometry_t g = {p->blocks, p->live, p->size, p->count, p->shift, p->inverse};
    if (!slab_index(g, block, idx)) return log_error(MT_ERR_BAD_POINTER);
    return MT_OK;
}

/* Put live block `idx` back on the free list; irq off. */
static MT_INLINE void put_irq_off(pool_t *p, void *block, uint8_t idx)
{
    pool_free_block_t *b = block;
    p->live[idx] = 0;
    b->next = p->free;
    b->index = idx;
    p->free = b;
}

#if MOTET_THREADS

/* Hand a free block to the best waiting thread; irq off. */
static void give_to_waiter(pool_t *p)
{
    void *block = take_irq_off(p);
    if (!block) return; /* an interrupt took it first */
    thread_t *w = thread_waitq_take(&p->waiters);
    *(void **) w->wait_data = block;
    thread_wait_end(w, MT_OK);
}

mt_err_t pool_alloc_wait(pool_t *p, void **block, uint32_t timeout)
{
    port_irq_state_t s = port_irq_save();
    *block = take_irq_off(p);
    mt_err_t err = MT_OK;
    if (!*block) {
        err = thread_wait_allowed(timeout, MT_ERR_TIMEOUT);
        if (!err) err = thread_wait(&p->waiters, WAIT_OBJECT, block, timeout, THREAD_EV_NONE);
    }
    port_irq_restore(s);
    return err;
}

#endif /* MOTET_THREADS */

mt_err_t pool_free(pool_t *p, void *block)
{
    uint8_t idx;
    mt_err_t err = index_of(p, block, &idx);
    if (err) return err;
    port_irq_state_t s = port_irq_save();
    bool live = p->live[idx] != 0;
    if (live) put_irq_off(p, block, idx);
#if MOTET_THREADS
    bool woke = live && p->waiters;
    if (woke) give_to_waiter(p);
#endif
    port_irq_restore(s);
    if (!live) return log_error(MT_ERR_DOUBLE_FREE);
#if MOTET_THREADS
    if (woke) thread_after_wake();
#endif
    return MT_OK;
}
