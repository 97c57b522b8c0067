/* SPDX-License-Identifier: MIT */
/*
 * The heap: first fit, splitting, coalescing, error detection, realloc,
 * owners (a task frees only its own blocks), statistics and events.
 *
 * Sizes are derived from the allocator itself (mem_block_size() and the
 * header size measured in setup) so the tests hold for any alignment. They
 * run with the map of live block starts and without it (the walk alone).
 *
 * MOTET_TEST_KERNEL: default nostartmap
 */
#include <string.h>

#include "mem_internal.h"
#include "test_support.h"

static size_t hdr; /* header bytes per block, measured in setup */

static mem_stats_t stats(void)
{
    mem_stats_t s;
    mem_get_stats(&s);
    return s;
}

static char *at(void *p, size_t offset)
{
    return (char *) p + offset;
}

/* Address of the block right after p's block. */
static char *after(void *p)
{
    return at(p, mem_block_size(p) + hdr);
}

static void fill(void *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++) ((uint8_t *) p)[i] = (uint8_t) (seed + i);
}

static void assert_filled(const void *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++) assert_int_equal(((const uint8_t *) p)[i], (uint8_t) (seed + i));
}

/* Allocate everything that is left, so only freed blocks can serve. */
static void *fill_heap(void)
{
    void *rest = mem_alloc(stats().largest_free);
    assert_non_null(rest);
    assert_int_equal(stats().free_blocks, 0);
    return rest;
}

static unsigned drain_all(log_record_t *rec)
{
    return log_drain(rec, MOTET_LOG_ENTRIES);
}

static int mem_setup(void **state)
{
    test_boot(state);
    /* Other components may allocate at boot; these tests want an empty heap
     * with a known layout. Nothing is dispatched while they run, so no one
     * uses the blocks this drops. */
    mem_init();
    void *probe = mem_alloc(1);
    hdr = stats().in_use - mem_block_size(probe);
    mem_init();
    log_record_t rec[MOTET_LOG_ENTRIES];
    drain_all(rec);
    return 0;
}

static void test_init_state(void **state)
{
    (void) state;
    mem_stats_t s = stats();
    assert_int_equal(hdr, 4);
    assert_in_range(s.heap_size, MOTET_HEAP_SIZE - 8, MOTET_HEAP_SIZE);
    assert_int_equal(s.in_use, 0);
    assert_int_equal(s.high_water, 0);
    assert_int_equal(s.largest_free, s.heap_size - hdr);
    assert_int_equal(s.free_blocks, 1);
    assert_int_equal(s.alloc_count, 0);
    assert_int_equal(s.failures, 0);
}

static void test_alloc_basic(void **state)
{
    (void) state;
    char *p = mem_alloc(10);
    assert_non_null(p);
    assert_int_equal((uintptr_t) p % _Alignof(void *), 0);
    assert_int_equal((uintptr_t) p % _Alignof(uint32_t), 0);
    assert_true(mem_is_heap(p));
    assert_in_range(mem_block_size(p), 10, 10 + 8);
    fill(p, 10, 1);
    mem_stats_t s = stats();
    assert_int_equal(s.alloc_count, 1);
    assert_int_equal(s.in_use, mem_block_size(p) + hdr);
    char *q = mem_alloc(10);
    assert_ptr_equal(q, after(p)); /* split from the same free block */
    assert_filled(p, 10, 1);
    assert_int_equal(stats().alloc_count, 2);
}

static void test_alloc_zero_returns_null_silently(void **state)
{
    (void) state;
    assert_null(mem_alloc(0));
    assert_null(mem_alloc_owned(0, 0x42));
    mem_stats_t s = stats();
    assert_int_equal(s.failures, 0);
    assert_int_equal(s.alloc_count, 0);
    assert_int_equal(s.in_use, 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_MEM), 0);
}

static void test_first_fit_reuses_lowest_block(void **state)
{
    (void) state;
    char *a = mem_alloc(64);
    char *b = mem_alloc(8);
    char *c = mem_alloc(32);
    char *d = mem_alloc(8);
    assert_true(a < b && b < c && c < d);
    /* c is freed last and fits best: LIFO or best fit would choose it. */
    assert_int_equal(mem_free(a), MT_OK);
    assert_int_equal(mem_free(c), MT_OK);
    char *x = mem_alloc(16);
    assert_ptr_equal(x, a);
    /* The remainder of a's hole is still the lowest fit. */
    char *y = mem_alloc(30);
    assert_ptr_equal(y, after(x));
    /* Nothing below c is left that fits 32 bytes. */
    assert_ptr_equal(mem_alloc(32), c);
}

static void test_split_leaves_usable_remainder(void **state)
{
    (void) state;
    mem_stats_t s0 = stats();
    char *p = mem_alloc(100);
    mem_stats_t s = stats();
    assert_int_equal(s.free_blocks, 1);
    assert_int_equal(s.largest_free, s0.largest_free - mem_block_size(p) - hdr);
    /* The remainder is a whole block: all of it can be allocated. */
    char *rest = mem_alloc(s.largest_free);
    assert_ptr_equal(rest, after(p));
    assert_int_equal(stats().free_blocks, 0);
    assert_int_equal(stats().in_use, s.heap_size);
}

static void test_exact_fit_takes_whole_hole(void **state)
{
    (void) state;
    char *a = mem_alloc(40);
    char *guard = mem_alloc(8);
    (void) guard;
    size_t hole = mem_block_size(a);
    mem_free(a);
    assert_int_equal(stats().free_blocks, 2);
    char *p = mem_alloc(hole);
    assert_ptr_equal(p, a);
    assert_int_equal(mem_block_size(p), hole);
    assert_int_equal(stats().free_blocks, 1); /* the hole is gone, no sliver */
}

/* Three neighbours a, b, c with the rest of the heap allocated. */
static void three_blocks(char **a, char **b, char **c)
{
    *a = mem_alloc(24);
    *b = mem_alloc(40);
    *c = mem_alloc(16);
    fill_heap();
}

static void test_coalesce_with_next(void **state)
{
    (void) state;
    char *a, *b, *c;
    three_blocks(&a, &b, &c);
    size_t merged = mem_block_size(a) + hdr + mem_block_size(b);
    mem_free(b);
    mem_free(a);
    assert_int_equal(stats().free_blocks, 1);
    assert_int_equal(stats().largest_free, merged);
    /* Only a merged a+b can hold this. */
    assert_ptr_equal(mem_alloc(merged), a);
}

static void test_coalesce_with_previous(void **state)
{
    (void) state;
    char *a, *b, *c;
    three_blocks(&a, &b, &c);
    size_t merged = mem_block_size(a) + hdr + mem_block_size(b);
    mem_free(a);
    mem_free(b);
    assert_int_equal(stats().free_blocks, 1);
    assert_int_equal(stats().largest_free, merged);
    assert_ptr_equal(mem_alloc(merged), a);
}

static void test_coalesce_with_both_neighbours(void **state)
{
    (void) state;
    char *a, *b, *c;
    three_blocks(&a, &b, &c);
    size_t merged = mem_block_size(a) + mem_block_size(b) + mem_block_size(c) + 2 * hdr;
    mem_free(a);
    mem_free(c);
    assert_int_equal(stats().free_blocks, 2);
    mem_free(b);
    assert_int_equal(stats().free_blocks, 1);
    assert_int_equal(stats().largest_free, merged);
    assert_ptr_equal(mem_alloc(merged), a);
    assert_int_equal(stats().free_blocks, 0);
}

static void test_coalesce_with_heap_tail(void **state)
{
    (void) state;
    char *a = mem_alloc(16);
    char *b = mem_alloc(16);
    mem_free(b);
    assert_int_equal(stats().free_blocks, 1);
    mem_free(a);
    mem_stats_t s = stats();
    assert_int_equal(s.free_blocks, 1);
    assert_int_equal(s.largest_free, s.heap_size - hdr);
    assert_int_equal(s.in_use, 0);
}

/* Both ways of an allocation and of a free: the lowest free block serves
 * it or the walk finds one higher; the freed block is below every free
 * block (it becomes the head) or the walk finds its place. The counts
 * mem_get_stats() walks for agree with the heap after each. */
static void test_head_and_walk_ways_keep_the_heap_whole(void **state)
{
    (void) state;
    char *a = mem_alloc(24);
    char *b = mem_alloc(40);
    char *c = mem_alloc(16);
    assert_int_equal(stats().alloc_count, 3);
    size_t hole = mem_block_size(a) + hdr + mem_block_size(b);
    mem_free(b); /* below the heap's tail, the only free block: the head's way */
    assert_true(mem_consistent());
    assert_int_equal(stats().alloc_count, 2);
    assert_int_equal(stats().free_blocks, 2);
    mem_free(a); /* below b's hole, now the head: the head's way, merged */
    assert_true(mem_consistent());
    assert_int_equal(stats().free_blocks, 2);
    char *big = mem_alloc(hole + 1); /* the hole at the head is too small */
    assert_non_null(big);
    assert_true(big > c); /* the walk's way: from the tail */
    assert_true(mem_consistent());
    assert_int_equal(stats().alloc_count, 2);
    char *small = mem_alloc(8); /* the head fits */
    assert_ptr_equal(small, a);
    assert_true(mem_consistent());
    assert_int_equal(stats().alloc_count, 3);
    mem_free(big); /* above the hole left at the head: the walk's way */
    assert_true(mem_consistent());
    assert_int_equal(stats().alloc_count, 2);
    mem_free(small);
    mem_free(c);
    mem_stats_t s = stats();
    assert_true(mem_consistent());
    assert_int_equal(s.alloc_count, 0);
    assert_int_equal(s.free_blocks, 1);
    assert_int_equal(s.in_use, 0);
}

static void test_exhaustion_returns_null_and_logs(void **state)
{
    (void) state;
    mem_stats_t s0 = stats();
    assert_null(mem_alloc(s0.heap_size)); /* header does not fit */
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_MEM), 1);
    assert_int_equal(stats().failures, 1);
    assert_null(mem_alloc(SIZE_MAX)); /* no overflow into a small block */
    assert_null(mem_alloc_owned(SIZE_MAX - 2, 0x42));
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_MEM), 2);
    assert_int_equal(stats().failures, 3);
    assert_int_equal(stats().alloc_count, 0);
    assert_int_equal(stats().largest_free, s0.largest_free);

    void *all = fill_heap();
    assert_null(mem_alloc(1));
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_MEM), 1);
    assert_int_equal(stats().failures, 4);
    assert_int_equal(mem_free(all), MT_OK);
    assert_non_null(mem_alloc(1));
}

static void test_fragmentation_stats(void **state)
{
    (void) state;
    char *p[8];
    for (int i = 0; i < 8; i++) p[i] = mem_alloc(16);
    fill_heap();
    size_t one = mem_block_size(p[0]);
    for (int i = 0; i < 8; i += 2) mem_free(p[i]);
    mem_stats_t s = stats();
    assert_int_equal(s.free_blocks, 4);
    assert_int_equal(s.largest_free, one);
    mem_free(p[1]); /* joins p[0] and p[2] */
    s = stats();
    assert_int_equal(s.free_blocks, 3);
    assert_int_equal(s.largest_free, 3 * one + 2 * hdr);
    assert_int_equal(s.alloc_count, 8 - 5 + 1);
}

static void test_double_free_detected(void **state)
{
    (void) state;
    char *p = mem_alloc(16);
    char *q = mem_alloc(16);
    assert_int_equal(mem_free(p), MT_OK);
    mem_stats_t before = stats();
    assert_int_equal(mem_free(p), MT_ERR_DOUBLE_FREE);
    assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 1);
    mem_stats_t s = stats();
    assert_memory_equal(&s, &before, sizeof s);
    /* The block is on the free list once: handed out once, not twice. */
    assert_ptr_equal(mem_alloc(16), p);
    char *r = mem_alloc(16);
    assert_ptr_not_equal(r, p);
    assert_ptr_equal(r, after(q));
}

static void test_double_free_of_merged_block(void **state)
{
    (void) state;
    char *a = mem_alloc(16);
    char *b = mem_alloc(16);
    char *guard = mem_alloc(16);
    (void) guard;
    mem_free(a);
    mem_free(b); /* b's header is now inside a's free block */
    mem_stats_t before = stats();
    assert_int_equal(mem_free(b), MT_ERR_DOUBLE_FREE);
    assert_int_equal(mem_free(a), MT_ERR_DOUBLE_FREE);
    assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 2);
    mem_stats_t s = stats();
    assert_memory_equal(&s, &before, sizeof s);
    assert_ptr_equal(mem_alloc(mem_block_size(guard) * 2 + hdr), a);
}

static void test_foreign_and_interior_pointers_rejected(void **state)
{
    (void) state;
    int local = 0;
    char *p = mem_alloc(32);
    char *q = mem_alloc(8);
    fill(p, 32, 7);
    mem_stats_t before = stats();
    assert_int_equal(mem_free(&local), MT_ERR_BAD_POINTER);
    assert_int_equal(mem_free(p + 1), MT_ERR_BAD_POINTER);
    assert_int_equal(mem_free(p + 8), MT_ERR_BAD_POINTER);
    assert_int_equal(mem_free(p - hdr), MT_ERR_BAD_POINTER);
    assert_int_equal(mem_free((void *) ((uintptr_t) q + MOTET_HEAP_SIZE)), MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 5);
    mem_stats_t s = stats();
    assert_memory_equal(&s, &before, sizeof s);
    assert_true(mem_is_heap(p));
    assert_filled(p, 32, 7);
    assert_false(mem_is_heap(p + 8));
    assert_int_equal(mem_block_size(p + 8), 0);
    assert_int_equal(mem_owner(p + 8), MEM_OWNER_KERNEL);
    assert_false(mem_is_heap(&local));
    assert_null(mem_realloc(p + 8, 100));
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 1);
    assert_int_equal(stats().alloc_count, 2);
}

static void test_forged_header_rejected(void **state)
{
    (void) state;
    char *p = mem_alloc(16);
    char *big = mem_alloc(64);
    /* A copy of a genuine header inside a payload is still not a block. */
    memcpy(big + 16, p - hdr, hdr);
    memcpy(big + 16 - hdr, p - hdr, hdr);
    mem_stats_t before = stats();
    assert_int_equal(mem_free(big + 16 + hdr), MT_ERR_BAD_POINTER);
    assert_int_equal(mem_free(big + 16), MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 2);
    mem_stats_t s = stats();
    assert_memory_equal(&s, &before, sizeof s);
    assert_int_equal(mem_free(big), MT_OK);
    assert_int_equal(mem_free(p), MT_OK);
    assert_int_equal(stats().free_blocks, 1);
}

/* A check byte alone would accept one forgery in 256: try them all. */
static void test_forged_header_any_check_byte_rejected(void **state)
{
    (void) state;
    struct {
        uint16_t size; /* layout of a header: size | allocated bit, owner, check */
        uint8_t owner;
        uint8_t check;
    } fake = {(uint16_t) (0x8000u | 32u), 0x42, 0};
    char *big = mem_alloc(128);
    char *q = mem_alloc(8);
    char *forged = big + 32; /* aligned like a real payload */
    mem_stats_t before = stats();
    for (unsigned c = 0; c < 256; c++) {
        fake.check = (uint8_t) c;
        memcpy(forged - hdr, &fake, sizeof fake);
        assert_int_equal(mem_free(forged), MT_ERR_BAD_POINTER);
        assert_false(mem_is_heap(forged));
        assert_int_equal(mem_owner(forged), MEM_OWNER_KERNEL);
        assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 1);
    }
    mem_stats_t s = stats();
    assert_memory_equal(&s, &before, sizeof s);
    assert_ptr_equal(mem_alloc(8), after(q));
}

static void test_free_null_is_noop(void **state)
{
    (void) state;
    log_record_t rec[MOTET_LOG_ENTRIES];
    mem_stats_t before = stats();
    assert_int_equal(mem_free(NULL), MT_OK);
    assert_int_equal(drain_all(rec), 0);
    mem_stats_t s = stats();
    assert_memory_equal(&s, &before, sizeof s);
}

static void test_realloc_null_allocates(void **state)
{
    (void) state;
    char *p = mem_realloc(NULL, 20);
    assert_non_null(p);
    assert_true(mem_is_heap(p));
    assert_true(mem_block_size(p) >= 20);
    assert_int_equal(mem_owner(p), sched_current_pid());
    assert_int_equal(stats().alloc_count, 1);
}

static void test_realloc_zero_frees(void **state)
{
    (void) state;
    char *p = mem_alloc(20);
    assert_null(mem_realloc(p, 0));
    assert_false(mem_is_heap(p));
    mem_stats_t s = stats();
    assert_int_equal(s.alloc_count, 0);
    assert_int_equal(s.in_use, 0);
    assert_int_equal(s.free_blocks, 1);
    assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 0);
}

static void test_realloc_grows_in_place(void **state)
{
    (void) state;
    char *a = mem_alloc(16);
    char *b = mem_alloc(16);
    char *c = mem_alloc(16);
    fill(a, 16, 3);
    fill(c, 16, 9);
    size_t room = mem_block_size(a) + hdr + mem_block_size(b);
    mem_free(b);
    char *r = mem_realloc(a, room);
    assert_ptr_equal(r, a);
    assert_int_equal(mem_block_size(r), room);
    assert_filled(r, 16, 3);
    assert_filled(c, 16, 9);
    assert_int_equal(stats().alloc_count, 2);
    assert_int_equal(stats().in_use, mem_block_size(r) + mem_block_size(c) + 2 * hdr);
    /* c's block is last before the free tail: grows into it. */
    char *g = mem_realloc(c, 500);
    assert_ptr_equal(g, c);
    assert_true(mem_block_size(g) >= 500);
    assert_filled(g, 16, 9);
}

static void test_realloc_moves_and_keeps_contents(void **state)
{
    (void) state;
    char *a = mem_alloc(16);
    char *b = mem_alloc(16);
    fill(a, 16, 5);
    fill(b, 16, 50);
    assert_int_equal(mem_set_owner(a, 0x33), MT_OK);
    char *r = mem_realloc(a, 64);
    assert_non_null(r);
    assert_ptr_not_equal(r, a);
    assert_true(mem_block_size(r) >= 64);
    assert_filled(r, 16, 5);
    assert_filled(b, 16, 50);
    assert_int_equal(mem_owner(r), 0x33);
    assert_false(mem_is_heap(a));
    assert_int_equal(stats().alloc_count, 2);
    assert_int_equal(stats().in_use, mem_block_size(r) + mem_block_size(b) + 2 * hdr);
}

static void test_realloc_failure_keeps_old_block(void **state)
{
    (void) state;
    char *a = mem_alloc(16);
    char *b = mem_alloc(16);
    (void) b;
    fill(a, 16, 11);
    size_t size = mem_block_size(a);
    mem_stats_t s0 = stats();
    assert_null(mem_realloc(a, s0.heap_size));
    assert_null(mem_realloc(a, SIZE_MAX));
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_MEM), 2);
    assert_true(mem_is_heap(a));
    assert_int_equal(mem_block_size(a), size);
    assert_filled(a, 16, 11);
    mem_stats_t s = stats();
    assert_int_equal(s.failures, 2);
    assert_int_equal(s.alloc_count, 2);
    assert_int_equal(s.in_use, s0.in_use);
    assert_int_equal(s.largest_free, s0.largest_free);
}

static void test_realloc_shrinks_in_place(void **state)
{
    (void) state;
    char *a = mem_alloc(200);
    char *guard = mem_alloc(8);
    (void) guard;
    fill(a, 16, 21);
    char *r = mem_realloc(a, 16);
    assert_ptr_equal(r, a);
    assert_true(mem_block_size(r) < 200);
    assert_filled(r, 16, 21);
    assert_int_equal(stats().free_blocks, 2); /* the freed tail and the heap end */
    assert_ptr_equal(mem_alloc(100), after(r));
}

static void test_owner_recorded_and_changed(void **state)
{
    (void) state;
    char *p = mem_alloc_owned(10, 0x42);
    assert_int_equal(mem_owner(p), 0x42);
    assert_int_equal(mem_owner(mem_alloc(10)), MT_PID_NONE); /* no task running */
    assert_int_equal(mem_set_owner(p, 0x43), MT_OK);
    assert_int_equal(mem_owner(p), 0x43);
    assert_true(mem_is_heap(p)); /* the header stays consistent */
    assert_int_equal(mem_free(p), MT_OK);
    assert_int_equal(mem_owner(p), MEM_OWNER_KERNEL);
    assert_int_equal(mem_set_owner(p, 0x44), MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 1);
    assert_int_equal(mem_owner(NULL), MEM_OWNER_KERNEL);
}

/* The hand-over check (MSG_HEAP) refuses every pointer mem_free() refuses,
 * changes nothing when it does, and keeps a header it rewrites valid. */
static void test_set_owner_refuses_foreign_interior_forged(void **state)
{
    (void) state;
    int local = 0;
    char *p = mem_alloc_owned(32, 0x42);
    char *big = mem_alloc(128);
    char *forged = big + 32; /* aligned like a real payload */
    mem_stats_t before = stats();
    assert_int_equal(mem_set_owner(&local, 0x43), MT_ERR_BAD_POINTER);
    assert_int_equal(mem_set_owner(p + 8, 0x43), MT_ERR_BAD_POINTER);
    assert_int_equal(mem_set_owner(p - hdr, 0x43), MT_ERR_BAD_POINTER);
    memcpy(forged - hdr, p - hdr, hdr); /* a copy of a genuine header */
    assert_int_equal(mem_set_owner(forged, 0x43), MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 4);
    assert_int_equal(mem_owner(p), 0x42);
    mem_stats_t s = stats();
    assert_memory_equal(&s, &before, sizeof s);
    /* Owner swaps keep the check byte right: the block stays a block. */
    assert_int_equal(mem_set_owner(p, MEM_OWNER_KERNEL), MT_OK);
    assert_int_equal(mem_set_owner(p, 0x43), MT_OK);
    assert_int_equal(mem_owner(p), 0x43);
    assert_true(mem_is_heap(p));
    /* A stray write to the owner byte breaks the check: refused. */
    p[-(int) hdr + 2] ^= 0x01;
    assert_int_equal(mem_set_owner(p, 0x44), MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 1);
    p[-(int) hdr + 2] ^= 0x01;
    assert_int_equal(mem_owner(p), 0x43);
    assert_int_equal(mem_free(p), MT_OK);
    assert_int_equal(mem_free(big), MT_OK);
    assert_int_equal(stats().alloc_count, 0);
}

/* A live block whose size was overwritten to reach past the heap's end is
 * refused whatever its check byte, by every entry that trusts a header. */
static void test_live_header_size_past_heap_end_refused(void **state)
{
    (void) state;
    char *p = mem_alloc(16);
    char *q = mem_alloc(16);
    fill(q, 16, 3);
    uint8_t saved[8];
    memcpy(saved, p - hdr, hdr);
    uint16_t size = (uint16_t) (0x8000u | 0x7FF0u); /* allocated, beyond any heap */
    memcpy(p - hdr, &size, sizeof size);
    mem_stats_t before = stats();
    for (unsigned c = 0; c < 256; c++) {
        p[-(int) hdr + 3] = (char) c;
        assert_int_equal(mem_free(p), MT_ERR_BAD_POINTER);
        assert_int_equal(mem_set_owner(p, 0x43), MT_ERR_BAD_POINTER);
        assert_false(mem_is_heap(p));
        assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 2);
    }
    mem_stats_t s = stats();
    assert_memory_equal(&s, &before, sizeof s);
    assert_filled(q, 16, 3);
    memcpy(p - hdr, saved, hdr);
    assert_int_equal(mem_free(p), MT_OK);
    assert_int_equal(mem_free(q), MT_OK);
    assert_int_equal(stats().alloc_count, 0);
    assert_int_equal(stats().free_blocks, 1);
}

static void *task_block;

static mt_err_t alloc_on_init(void *st, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) st;
    if (port == PORT_INIT) task_block = mem_alloc(24);
    return MT_OK;
}

/* Runs on the booted kernel as is (no heap reset): it dispatches. */
static void test_alloc_owned_by_running_task(void **state)
{
    (void) state;
    task_block = NULL;
    task_spec_t spec = {.pid = 0x20, .prio = 3, .handler = alloc_on_init};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(0x20, NULL, 0), MT_OK);
    sched_run_pending();
    assert_non_null(task_block);
    assert_int_equal(mem_owner(task_block), 0x20);
}

/* ---- a task frees and resizes only its own blocks ---- */

#define TASK_A 0x20
#define TASK_B 0x21
#define TASK_C 0x22

static void (*action)(void); /* what the next task handler to run does */
static unsigned acted;

static mt_err_t act(void *st, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) st;
    if (port == PORT_0) {
        action();
        acted++;
    }
    return MT_OK;
}

static void make_tasks(void)
{
    for (mt_pid_t pid = TASK_A; pid <= TASK_C; pid++) {
        task_spec_t spec = {.pid = pid, .prio = 3, .handler = act};
        assert_int_equal(sched_task_create(&spec), MT_OK);
        assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
    }
    sched_run_pending();
}

/* Run fn in a handler of task pid. */
static void as_task(mt_pid_t pid, void (*fn)(void))
{
    action = fn;
    unsigned before = acted;
    assert_int_equal(sched_send_to(pid, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(acted, before + 1);
}

static char *held;  /* the block the scenario is about */
static char *third; /* what the third task allocated */
static mt_err_t freed;
static void *resized;

static void alloc_held(void)
{
    held = mem_alloc(16);
}

static void free_held(void)
{
    freed = mem_free(held);
}

static void alloc_third(void)
{
    third = mem_alloc(16);
}

static void realloc_held_larger(void)
{
    resized = mem_realloc(held, 64);
}

static void realloc_held_zero(void)
{
    resized = mem_realloc(held, 0);
}

static void test_task_cannot_free_another_tasks_block(void **state)
{
    (void) state;
    make_tasks();
    as_task(TASK_A, alloc_held);
    assert_non_null(held);
    fill(held, 16, 7);
    test_count_logged_errors(MT_OK); /* drain */
    mem_stats_t before = stats();
    as_task(TASK_B, free_held);
    assert_int_equal(freed, MT_ERR_NOT_OWNER);
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 1);
    mem_stats_t s = stats();
    assert_memory_equal(&s, &before, sizeof s);
    assert_true(mem_is_heap(held));
    assert_int_equal(mem_owner(held), TASK_A);
    assert_filled(held, 16, 7);
    /* Nor resize it, nor free it through a resize to nothing. */
    as_task(TASK_B, realloc_held_larger);
    assert_null(resized);
    as_task(TASK_B, realloc_held_zero);
    assert_null(resized);
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 2);
    s = stats();
    assert_memory_equal(&s, &before, sizeof s);
    assert_int_equal(mem_owner(held), TASK_A);
    assert_filled(held, 16, 7);
    /* The owner still can. */
    as_task(TASK_A, free_held);
    assert_int_equal(freed, MT_OK);
    assert_false(mem_is_heap(held));
}

/* The chain: a stale pointer whose block went to a third task. */
static void test_stale_free_cannot_free_a_third_tasks_block(void **state)
{
    (void) state;
    make_tasks();
    as_task(TASK_A, alloc_held);
    as_task(TASK_A, free_held);
    assert_int_equal(freed, MT_OK);
    as_task(TASK_C, alloc_third);
    assert_ptr_equal(third, held); /* first fit hands the same block out */
    fill(third, 16, 9);
    test_count_logged_errors(MT_OK);
    as_task(TASK_A, free_held); /* the stale pointer */
    assert_int_equal(freed, MT_ERR_NOT_OWNER);
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 1);
    assert_true(mem_is_heap(third));
    assert_int_equal(mem_owner(third), TASK_C);
    assert_filled(third, 16, 9);
    /* Nothing was freed twice: the third task's own free is the only one. */
    char *next = mem_alloc(16);
    assert_ptr_not_equal(next, third);
    held = third;
    as_task(TASK_C, free_held);
    assert_int_equal(freed, MT_OK);
    assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 0);
}

/* Outside every handler the kernel frees what it likes, as before. */
static void test_kernel_context_frees_any_owners_block(void **state)
{
    (void) state;
    char *p = mem_alloc_owned(16, TASK_A);
    assert_int_equal(sched_current_pid(), MT_PID_NONE);
    assert_int_equal(mem_free(p), MT_OK);
    assert_false(mem_is_heap(p));
}

static void test_free_all_frees_one_owner(void **state)
{
    (void) state;
    char *p1 = mem_alloc_owned(16, 0x20);
    char *p2 = mem_alloc_owned(16, 0x20);
    char *q1 = mem_alloc_owned(16, 0x21);
    char *p3 = mem_alloc_owned(16, 0x20);
    char *q2 = mem_alloc_owned(16, 0x21);
    char *p4 = mem_alloc_owned(16, 0x20);
    fill(q1, 16, 1);
    fill(q2, 16, 2);
    assert_int_equal(mem_free_all(0x20), 4);
    assert_false(mem_is_heap(p1) || mem_is_heap(p2) || mem_is_heap(p3) || mem_is_heap(p4));
    assert_int_equal(mem_owner(q1), 0x21);
    assert_int_equal(mem_owner(q2), 0x21);
    assert_filled(q1, 16, 1);
    assert_filled(q2, 16, 2);
    mem_stats_t s = stats();
    assert_int_equal(s.alloc_count, 2);
    assert_int_equal(s.free_blocks, 3); /* p1+p2, p3, p4+tail */
    assert_int_equal(s.largest_free, s.heap_size - (size_t) (after(q2) - p1) - hdr);
    assert_int_equal(mem_free_all(0x20), 0);
    assert_int_equal(mem_free_all(0x21), 2);
    s = stats();
    assert_int_equal(s.free_blocks, 1);
    assert_int_equal(s.in_use, 0);
    assert_int_equal(s.largest_free, s.heap_size - hdr);
}

static void test_high_water_mark(void **state)
{
    (void) state;
    char *a = mem_alloc(100);
    char *b = mem_alloc(200);
    uint16_t peak = stats().in_use;
    assert_int_equal(peak, mem_block_size(a) + mem_block_size(b) + 2 * hdr);
    assert_int_equal(stats().high_water, peak);
    mem_free(a);
    mem_free(b);
    assert_int_equal(stats().in_use, 0);
    assert_int_equal(stats().high_water, peak);
    char *c = mem_alloc(10);
    assert_int_equal(stats().high_water, peak);
    c = mem_realloc(c, 1000); /* grows in place: still counted */
    assert_int_equal(stats().high_water, mem_block_size(c) + hdr);
}

static void test_alloc_and_free_events(void **state)
{
    (void) state;
    log_record_t rec[MOTET_LOG_ENTRIES];
    char *p = mem_alloc_owned(30, 0x42);
    assert_int_equal(drain_all(rec), 1);
    assert_int_equal(rec[0].type, EV_ALLOC);
    assert_int_equal(rec[0].pid, 0x42);
    assert_int_equal(rec[0].arg, mem_block_size(p));
    uint16_t size = (uint16_t) mem_block_size(p);
    assert_int_equal(mem_free(p), MT_OK);
    assert_int_equal(drain_all(rec), 1);
    assert_int_equal(rec[0].type, EV_FREE);
    assert_int_equal(rec[0].pid, 0x42);
    assert_int_equal(rec[0].arg, size);
    assert_int_equal(mem_free(p), MT_ERR_DOUBLE_FREE);
    assert_int_equal(drain_all(rec), 1);
    assert_int_equal(rec[0].type, EV_ERROR); /* no EV_FREE for a refused free */
    assert_int_equal(rec[0].arg, MT_ERR_DOUBLE_FREE);
}

/* Blocks over the whole heap: every start is told live or freed, whatever
 * byte and bit of the map of live starts it falls on. */
static void test_block_starts_tracked_across_heap(void **state)
{
    (void) state;
    static void *blocks[MOTET_HEAP_SIZE / 16u];
    size_t n = 0;
    while (n < sizeof blocks / sizeof blocks[0] && (blocks[n] = mem_alloc(13)) != NULL) n++;
    assert_true(n < sizeof blocks / sizeof blocks[0]); /* stopped by exhaustion */
    assert_true(stats().largest_free < 13);
    assert_true(mem_consistent());
    for (size_t i = 0; i < n; i += 2) assert_int_equal(mem_free(blocks[i]), MT_OK);
    assert_true(mem_consistent());
    for (size_t i = 0; i < n; i++) {
        bool live = i % 2 != 0;
        assert_int_equal(mem_is_heap(blocks[i]), live);
        assert_int_equal(mem_set_owner(blocks[i], 7), live ? MT_OK : MT_ERR_BAD_POINTER);
        if (!live) assert_int_equal(mem_free(blocks[i]), MT_ERR_DOUBLE_FREE);
    }
    for (size_t i = 1; i < n; i += 2) {
        assert_int_equal(mem_owner(blocks[i]), 7);
        assert_int_equal(mem_free(blocks[i]), MT_OK);
    }
    mem_stats_t s = stats();
    assert_int_equal(s.in_use, 0);
    assert_int_equal(s.alloc_count, 0);
    assert_int_equal(s.free_blocks, 1);
    assert_int_equal(s.largest_free, s.heap_size - hdr);
}

/* The walk finds a block's header overwritten through its neighbour, and
 * the heap whole again once it is put back. */
static void test_consistency_walk_finds_an_overwritten_header(void **state)
{
    (void) state;
    assert_true(mem_consistent());
    uint8_t *a = mem_alloc(12), *b = mem_alloc(20), *c = mem_alloc(8);
    assert_int_equal(mem_free(b), MT_OK);
    assert_true(mem_consistent());
    size_t reach = mem_block_size(a);
    uint8_t saved = a[reach + 1]; /* in the free block's header (its size) */
    a[reach + 1] ^= 0x01u;
    assert_false(mem_consistent());
    a[reach + 1] = saved;
    assert_true(mem_consistent());
    assert_int_equal(mem_free(a), MT_OK);
    assert_int_equal(mem_free(c), MT_OK);
    assert_true(mem_consistent());
    assert_int_equal(stats().in_use, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_init_state, mem_setup),
        cmocka_unit_test_setup(test_alloc_basic, mem_setup),
        cmocka_unit_test_setup(test_alloc_zero_returns_null_silently, mem_setup),
        cmocka_unit_test_setup(test_first_fit_reuses_lowest_block, mem_setup),
        cmocka_unit_test_setup(test_split_leaves_usable_remainder, mem_setup),
        cmocka_unit_test_setup(test_exact_fit_takes_whole_hole, mem_setup),
        cmocka_unit_test_setup(test_coalesce_with_next, mem_setup),
        cmocka_unit_test_setup(test_coalesce_with_previous, mem_setup),
        cmocka_unit_test_setup(test_coalesce_with_both_neighbours, mem_setup),
        cmocka_unit_test_setup(test_coalesce_with_heap_tail, mem_setup),
        cmocka_unit_test_setup(test_head_and_walk_ways_keep_the_heap_whole, mem_setup),
        cmocka_unit_test_setup(test_exhaustion_returns_null_and_logs, mem_setup),
        cmocka_unit_test_setup(test_fragmentation_stats, mem_setup),
        cmocka_unit_test_setup(test_double_free_detected, mem_setup),
        cmocka_unit_test_setup(test_double_free_of_merged_block, mem_setup),
        cmocka_unit_test_setup(test_foreign_and_interior_pointers_rejected, mem_setup),
        cmocka_unit_test_setup(test_forged_header_rejected, mem_setup),
        cmocka_unit_test_setup(test_forged_header_any_check_byte_rejected, mem_setup),
        cmocka_unit_test_setup(test_set_owner_refuses_foreign_interior_forged, mem_setup),
        cmocka_unit_test_setup(test_live_header_size_past_heap_end_refused, mem_setup),
        cmocka_unit_test_setup(test_free_null_is_noop, mem_setup),
        cmocka_unit_test_setup(test_realloc_null_allocates, mem_setup),
        cmocka_unit_test_setup(test_realloc_zero_frees, mem_setup),
        cmocka_unit_test_setup(test_realloc_grows_in_place, mem_setup),
        cmocka_unit_test_setup(test_realloc_moves_and_keeps_contents, mem_setup),
        cmocka_unit_test_setup(test_realloc_failure_keeps_old_block, mem_setup),
        cmocka_unit_test_setup(test_realloc_shrinks_in_place, mem_setup),
        cmocka_unit_test_setup(test_owner_recorded_and_changed, mem_setup),
        cmocka_unit_test_setup(test_alloc_owned_by_running_task, test_boot),
        cmocka_unit_test_setup(test_task_cannot_free_another_tasks_block, mem_setup),
        cmocka_unit_test_setup(test_stale_free_cannot_free_a_third_tasks_block, mem_setup),
        cmocka_unit_test_setup(test_kernel_context_frees_any_owners_block, mem_setup),
        cmocka_unit_test_setup(test_free_all_frees_one_owner, mem_setup),
        cmocka_unit_test_setup(test_high_water_mark, mem_setup),
        cmocka_unit_test_setup(test_alloc_and_free_events, mem_setup),
        cmocka_unit_test_setup(test_block_starts_tracked_across_heap, mem_setup),
        cmocka_unit_test_setup(test_consistency_walk_finds_an_overwritten_header, mem_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
