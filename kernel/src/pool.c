/* SPDX-License-Identifier: MIT */
/*
 * Fixed-block memory pools (pool.h): a slab cache each, whose allocation and
 * free run with interrupts held off for a few instructions, plus, with
 * threads, a wait list of threads that wait for a block. A free with
 * waiters puts the block back and takes it again for the best waiter in
 * the same locked step, so no other caller can slip in between.
 */
#include "motet/pool.h"
#include "motet/log.h"
#include "slab_internal.h"
#include "thread_internal.h"

void pool_init(pool_t *p)
{
    slab_init(&p->slab);
#if MOTET_THREADS
    p->waiters = NULL;
#endif
}

void *pool_alloc(pool_t *p)
{
    port_irq_state_t s = port_irq_save();
    void *block = slab_take_irq_off(&p->slab, slab_geometry_of(&p->slab));
    port_irq_restore(s);
    return block;
}

uint8_t pool_in_use(const pool_t *p)
{
    return p->slab.in_use;
}

#if MOTET_THREADS

/* Hand a free block to the best waiting thread; irq off. */
static bool give_to_waiter(pool_t *p)
{
    if (!p->waiters) return false;
    void *block = slab_take_irq_off(&p->slab, slab_geometry_of(&p->slab));
    if (!block) return false; /* an interrupt took it first */
    thread_t *w = thread_waitq_take(&p->waiters);
    *(void **) w->wait_data = block;
    thread_wait_end(w, MT_OK);
    return true;
}

mt_err_t pool_free(pool_t *p, void *block)
{
    mt_err_t err = slab_put(&p->slab, slab_geometry_of(&p->slab), block);
    if (err || !p->waiters) return err;
    port_irq_state_t s = port_irq_save();
    bool woke = give_to_waiter(p);
    port_irq_restore(s);
    if (woke) thread_after_wake();
    return MT_OK;
}

mt_err_t pool_alloc_wait(pool_t *p, void **block, uint32_t timeout)
{
    port_irq_state_t s = port_irq_save();
    *block = slab_take_irq_off(&p->slab, slab_geometry_of(&p->slab));
    mt_err_t err = MT_OK;
    if (!*block) {
        err = thread_wait_allowed(timeout, MT_ERR_TIMEOUT);
        if (!err) err = thread_wait(&p->waiters, WAIT_OBJECT, block, timeout, THREAD_EV_NONE);
    }
    port_irq_restore(s);
    return err;
}

#else

mt_err_t pool_free(pool_t *p, void *block)
{
    return slab_put(&p->slab, slab_geometry_of(&p->slab), block);
}

#endif /* MOTET_THREADS */
