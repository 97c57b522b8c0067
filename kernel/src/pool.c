/* SPDX-License-Identifier: MIT */
/*
 * Fixed-block memory pools (pool.h). The free blocks form a list threaded
 * through themselves; each free block also holds a free mark, its pool's
 * address, which an allocation clears: a pop, one store and the count of
 * blocks out, under one short critical section. A free first checks the
 * address with one multiplication and one rotation (block_index()), which
 * refuses any pointer that is not the start of one of the pool's blocks,
 * then the mark: a block without it is handed out, and goes back on the
 * list. A block with it is free, or holds its pool's address by chance in
 * that word: the list, walked only then, tells which, so a second free is
 * refused exactly and a live block is never refused. Both refusals come
 * before the pool is touched, both logged.
 *
 * With threads, a wait list of threads that wait for a block: a free with
 * waiters hands the block to the best one in the same locked step, so no
 * other caller can slip in between.
 */
#include "motet/pool.h"
#include "motet/log.h"
#include "thread_internal.h"

#include <limits.h>
#include <stdint.h>

/* is_block() and the inverse rely on uintptr_t arithmetic wrapping at
 * 2^(its bits), with no promotion to int, and five Newton steps being
 * enough bits. */
_Static_assert(UINTPTR_MAX >> (sizeof(uintptr_t) * 8 - 1) == 1, "uintptr_t has no padding bits");
_Static_assert(UINTPTR_MAX >= UINT_MAX, "uintptr_t is no narrower than unsigned");
_Static_assert(sizeof(uintptr_t) * 8 <= 96, "five Newton steps give 96 bits");

void pool_init(pool_t *p)
{
    uintptr_t odd = p->size;
    for (p->shift = 0; !(odd & 1u); p->shift++) odd >>= 1;
    /* Newton's iteration: odd is its own inverse modulo 8, and each step
     * doubles the bits that are right (3, 6, 12, 24, 48, 96). */
    uintptr_t inverse = odd;
    for (uint8_t i = 0; i < 5; i++) inverse *= 2u - odd * inverse;
    p->inverse = inverse;
    p->in_use = 0;
    /* Threaded from the top down so the lowest block is handed out first. */
    p->free = NULL;
    for (unsigned i = p->count; i-- > 0;) {
        pool_free_block_t *b = (pool_free_block_t *) (void *) (p->blocks + (size_t) i * p->size);
        b->next = p->free;
        b->free_mark = p;
        p->free = b;
    }
#if MOTET_THREADS
    p->waiters = NULL;
#endif
}

/* A free block, its mark cleared, or NULL; irq off. */
static MT_INLINE void *take_irq_off(pool_t *p)
{
    pool_free_block_t *b = p->free;
    if (!b) return NULL;
    p->free = b->next;
    b->free_mark = NULL;
    p->in_use++;
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
    return *(volatile const uint8_t *) &p->in_use; /* one byte: read whole on any core */
}

/* Whether `block` is the start of one of p's blocks (size = odd << shift).
 * delta * inverse, rotated right by shift, is delta / size for a multiple
 * of size, and for any other delta (below the storage too, wrapped) a
 * value of at least 2^(pointer bits) / size, never below count (the
 * product of an odd inverse maps the multiples of odd, and only those, to
 * the small quotients): one test checks range and alignment at once. */
static MT_INLINE bool is_block(const pool_t *p, const void *block)
{
    enum { BITS = sizeof(uintptr_t) * 8 };
    uintptr_t q = ((uintptr_t) block - (uintptr_t) p->blocks) * p->inverse;
    uintptr_t idx = (q >> p->shift) | (q << ((BITS - p->shift) & (BITS - 1)));
    return idx < p->count;
}

/* Whether block b, which carries p's free mark, is on p's free list;
 * irq off. Walked only for a block with the mark: a second free, or a
 * live block holding its pool's address in that word. */
static bool on_free_list(const pool_t *p, const pool_free_block_t *b)
{
    for (const pool_free_block_t *f = p->free; f; f = f->next)
        if (f == b) return true;
    return false;
}

/* Put a handed-out block back on the free list; irq off. */
static MT_INLINE void put_irq_off(pool_t *p, pool_free_block_t *b)
{
    b->next = p->free;
    b->free_mark = p;
    p->free = b;
    p->in_use--;
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
    if (!is_block(p, block)) return log_error(MT_ERR_BAD_POINTER);
    pool_free_block_t *b = block;
    port_irq_state_t s = port_irq_save();
    if (b->free_mark == p && on_free_list(p, b)) {
        port_irq_restore(s);
        return log_error(MT_ERR_DOUBLE_FREE);
    }
#if MOTET_THREADS
    bool was_empty = !p->free;
#endif
    put_irq_off(p, b);
#if MOTET_THREADS
    /* Threads wait only for an empty pool, and a free hands the first of
     * them its block at once: with blocks free, nobody waits. */
    if (was_empty && p->waiters) {
        give_to_waiter(p);
        port_irq_restore(s);
        thread_after_wake();
        return MT_OK;
    }
#endif
    port_irq_restore(s);
    return MT_OK;
}
