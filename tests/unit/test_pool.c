/* SPDX-License-Identifier: MIT */
/*
 * Fixed-block pools (pool.h), with and without threads: every block handed
 * out once, aligned, from boot code and interrupts; exhaustion returns
 * NULL; a foreign pointer, a pointer inside a block and a double free are
 * refused and logged without harming the pool, and a live block that holds
 * the free mark's bytes by chance is freed all the same; every address but a
 * block's start is refused, for odd, power-of-two and mixed block sizes; the
 * count of blocks out follows every path. With threads: a thread
 * waits for a block and gets the one freed (from an interrupt too, at its
 * exit), or times out at its tick.
 *
 * MOTET_TEST_KERNEL: threads nothreads
 */
#include <string.h>

#include "test_support.h"

#define BLOCKS 4

POOL_DEFINE(frames, 24, BLOCKS);

static int setup(void **state)
{
    test_boot(state);
    pool_init(&frames);
    return 0;
}

static void test_every_block_once_then_null(void **state)
{
    (void) state;
    uint8_t *b[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        b[i] = pool_alloc(&frames);
        assert_non_null(b[i]);
        assert_int_equal((uintptr_t) b[i] % _Alignof(long long), 0);
        memset(b[i], i, 24);
        for (int j = 0; j < i; j++) assert_true(b[j] + 24 <= b[i] || b[i] + 24 <= b[j]);
    }
    assert_null(pool_alloc(&frames));
    assert_int_equal(pool_in_use(&frames), BLOCKS);
    assert_int_equal(pool_free(&frames, b[2]), MT_OK);
    assert_ptr_equal(pool_alloc(&frames), b[2]);
    for (int i = 0; i < BLOCKS; i++) assert_int_equal(pool_free(&frames, b[i]), MT_OK);
    assert_int_equal(pool_in_use(&frames), 0);
}

static void test_foreign_pointers_are_refused_and_logged(void **state)
{
    (void) state;
    static uint8_t elsewhere[24];
    uint8_t *b = pool_alloc(&frames);
    assert_int_equal(pool_free(&frames, elsewhere), MT_ERR_BAD_POINTER);
    assert_int_equal(pool_free(&frames, b + 4), MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 2);
    assert_int_equal(pool_free(&frames, b), MT_OK);
    assert_int_equal(pool_in_use(&frames), 0);
    /* The pool still hands out each block once. */
    void *x = pool_alloc(&frames), *y = pool_alloc(&frames);
    assert_ptr_not_equal(x, y);
}

/* Pools of an odd block size (5: only on cores without alignment, else
 * rounded up), a power of two and an odd multiple of one: a free of any
 * address but a block's start is refused, whether inside a block, in
 * front of the storage, behind it or far away, and leaves the count of
 * blocks out alone; each block's start is freed. */
POOL_DEFINE(odd5, 5, 7);
POOL_DEFINE(pow16, 16, 3);

static void check_only_block_starts_are_freed(pool_t *p)
{
    pool_init(p);
    uint8_t *first = NULL;
    for (unsigned i = 0; i < p->count; i++) {
        uint8_t *b = pool_alloc(p);
        assert_non_null(b);
        if (!first) first = b;
    }
    uintptr_t base = (uintptr_t) first, span = (uintptr_t) p->count * p->size;
    assert_ptr_equal(first, p->blocks);
    for (uintptr_t a = base - 2u * p->size; a != base + span + 2u * p->size; a++) {
        bool start = a >= base && a < base + span && (a - base) % p->size == 0;
        if (!start) assert_int_equal(pool_free(p, (void *) a), MT_ERR_BAD_POINTER);
    }
    assert_int_equal(pool_free(p, (void *) (uintptr_t) 1), MT_ERR_BAD_POINTER);
    assert_int_equal(pool_free(p, (void *) (UINTPTR_MAX - 7u)), MT_ERR_BAD_POINTER);
    assert_int_equal(pool_in_use(p), p->count);
    for (unsigned i = 0; i < p->count; i++)
        assert_int_equal(pool_free(p, first + (size_t) i * p->size), MT_OK);
    assert_int_equal(pool_in_use(p), 0);
}

static void test_every_address_but_a_block_start_is_refused(void **state)
{
    (void) state;
    check_only_block_starts_are_freed(&frames); /* 24: 3 << 3 */
    check_only_block_starts_are_freed(&odd5);
    check_only_block_starts_are_freed(&pow16);
}

/* The count of blocks out is kept by every path that hands a block out or
 * takes it back, and by no refusal. */
static void test_in_use_follows_every_path(void **state)
{
    (void) state;
    uint8_t *a = pool_alloc(&frames), *b = pool_alloc(&frames);
    assert_int_equal(pool_in_use(&frames), 2);
    assert_int_equal(pool_free(&frames, a), MT_OK);
    assert_int_equal(pool_free(&frames, a), MT_ERR_DOUBLE_FREE);
    assert_int_equal(pool_free(&frames, b + 1), MT_ERR_BAD_POINTER);
    assert_int_equal(pool_in_use(&frames), 1);
#if MOTET_THREADS
    void *c;
    assert_int_equal(pool_alloc_wait(&frames, &c, THREAD_NO_WAIT), MT_OK);
    assert_int_equal(pool_in_use(&frames), 2);
#endif
    while (pool_alloc(&frames)) {
    }
    assert_int_equal(pool_in_use(&frames), BLOCKS);
    assert_null(pool_alloc(&frames));
    assert_int_equal(pool_in_use(&frames), BLOCKS);
    pool_init(&frames);
    assert_int_equal(pool_in_use(&frames), 0);
}

static void test_double_free_is_logged(void **state)
{
    (void) state;
    void *b = pool_alloc(&frames);
    assert_int_equal(pool_free(&frames, b), MT_OK);
    assert_int_equal(pool_free(&frames, b), MT_ERR_DOUBLE_FREE);
    assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 1);
}

/* A free block carries its pool's address as a mark; a live block that
 * holds the same bytes there by chance is still freed, and once free, a
 * second free is still refused. */
static void test_a_live_block_holding_the_free_mark_is_freed(void **state)
{
    (void) state;
    void *b[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) b[i] = pool_alloc(&frames);
    pool_t *self = &frames;
    for (int i = 0; i < BLOCKS; i++) memcpy((uint8_t *) b[i] + sizeof(void *), &self, sizeof self);
    assert_int_equal(pool_free(&frames, b[1]), MT_OK);
    assert_int_equal(pool_in_use(&frames), BLOCKS - 1);
    assert_int_equal(pool_free(&frames, b[1]), MT_ERR_DOUBLE_FREE);
    for (int i = 0; i < BLOCKS; i++)
        if (i != 1) assert_int_equal(pool_free(&frames, b[i]), MT_OK);
    assert_int_equal(pool_in_use(&frames), 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 1);
    /* Freed in that order, each block is handed out once again. */
    for (int i = 0; i < BLOCKS; i++) assert_non_null(pool_alloc(&frames));
    assert_null(pool_alloc(&frames));
}

static void *isr_block;

static void isr_allocs(void)
{
    isr_block = pool_alloc(&frames);
}

static void isr_frees(void)
{
    assert_int_equal(pool_free(&frames, isr_block), MT_OK);
}

static void test_interrupts_allocate_and_free(void **state)
{
    (void) state;
    tport_irq_attach(0, isr_allocs);
    tport_irq_attach(1, isr_frees);
    tport_irq_raise(0);
    assert_non_null(isr_block);
    assert_int_equal(pool_in_use(&frames), 1);
    tport_irq_raise(1);
    assert_int_equal(pool_in_use(&frames), 0);
}

#if MOTET_THREADS

#define STACK THREAD_STACK_BYTES(0)
static uint8_t stack[STACK];
static void *got;
static mt_err_t result;
static uint64_t waited;

static void waits_for_a_block(void *arg)
{
    uint32_t timeout = (uint32_t) (uintptr_t) arg;
    uint64_t from = tport_time();
    result = pool_alloc_wait(&frames, &got, timeout);
    waited = tport_time() - from;
    test_note("got ");
    sched_stop();
}

static void test_a_thread_waits_for_the_block_an_interrupt_frees(void **state)
{
    (void) state;
    void *b[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) b[i] = pool_alloc(&frames);
    test_thread(stack, STACK, waits_for_a_block, (void *) (uintptr_t) THREAD_FOREVER, 2,
                THREAD_START_NOW);
    isr_block = b[1];
    tport_irq_attach(1, isr_frees);
    test_note("raise ");
    tport_irq_raise(1);
    test_note("back ");
    assert_string_equal(test_trace(), "raise got back ");
    assert_int_equal(result, MT_OK);
    assert_ptr_equal(got, b[1]);
    assert_int_equal(pool_in_use(&frames), BLOCKS); /* handed over, never free */
}

static void test_a_timed_wait_for_a_block_times_out(void **state)
{
    (void) state;
    for (int i = 0; i < BLOCKS; i++) pool_alloc(&frames);
    test_thread(stack, STACK, waits_for_a_block, (void *) (uintptr_t) 60, 1, THREAD_START_NOW);
    sched_run();
    assert_int_equal(result, MT_ERR_TIMEOUT);
    assert_null(got);
    assert_int_equal(waited, 60);
    assert_null(frames.waiters);
}

static void test_waiting_outside_a_thread_is_refused(void **state)
{
    (void) state;
    void *b;
    for (int i = 0; i < BLOCKS; i++) pool_alloc(&frames);
    assert_int_equal(pool_alloc_wait(&frames, &b, THREAD_NO_WAIT), MT_ERR_TIMEOUT);
    assert_int_equal(pool_alloc_wait(&frames, &b, 10), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_every_block_once_then_null, setup),
        cmocka_unit_test_setup(test_foreign_pointers_are_refused_and_logged, setup),
        cmocka_unit_test_setup(test_every_address_but_a_block_start_is_refused, setup),
        cmocka_unit_test_setup(test_in_use_follows_every_path, setup),
        cmocka_unit_test_setup(test_double_free_is_logged, setup),
        cmocka_unit_test_setup(test_a_live_block_holding_the_free_mark_is_freed, setup),
        cmocka_unit_test_setup(test_interrupts_allocate_and_free, setup),
#if MOTET_THREADS
        cmocka_unit_test_setup(test_a_thread_waits_for_the_block_an_interrupt_frees, setup),
        cmocka_unit_test_setup(test_a_timed_wait_for_a_block_times_out, setup),
        cmocka_unit_test_setup(test_waiting_outside_a_thread_is_refused, setup),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
