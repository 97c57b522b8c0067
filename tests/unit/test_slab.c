/* SPDX-License-Identifier: MIT */
/*
 * Slab caches: exhaustion, reuse, zeroing, double free, bad pointers and
 * high water, on caches defined here.
 */
#include <string.h>

#include "slab.h"
#include "test_support.h"

typedef struct thing {
    uint32_t a;
    uint16_t b;
    uint8_t c[5];
} thing_t;

#define THINGS 5

/* The statistics exist with MOTET_STATS only (config.h). */
#if MOTET_STATS
#define assert_stat_equal(a, b) assert_int_equal(a, b)
#else
#define assert_stat_equal(a, b) ((void) 0)
#endif

SLAB_DEFINE(things, thing_t, THINGS);
SLAB_DEFINE(tiny, uint8_t, 3);
SLAB_DEFINE(others, thing_t, 2);

/* Indices come from a multiply by the inverse of the size's odd part
 * modulo 256: an odd size, an even one with an odd part above 255, and a
 * storage past 64 KB must all index exactly. */
typedef struct {
    uint8_t bytes[37];
} odd_t;
typedef struct {
    uint8_t bytes[8 * 259]; /* a multiple of any pointer's alignment */
} even_t;
SLAB_DEFINE(even_wide, even_t, 6);
SLAB_DEFINE(odd_small, odd_t, 200);
#if UINTPTR_MAX > 0xFFFFu
typedef struct {
    uint8_t bytes[333];
} big_t;
SLAB_DEFINE(odd_big, big_t, 250); /* 83 KB: offsets past 16 bits */
#endif

static int slab_setup(void **state)
{
    test_boot(state);
    slab_init(&things);
    slab_init(&tiny);
    slab_init(&others);
    log_record_t rec[MOTET_LOG_ENTRIES];
    log_drain(rec, MOTET_LOG_ENTRIES);
    return 0;
}

/* Allocate the whole cache, checking every object is distinct and valid. */
static void alloc_all(thing_t *objs[THINGS])
{
    for (int i = 0; i < THINGS; i++) {
        objs[i] = slab_alloc(&things);
        assert_non_null(objs[i]);
        uintptr_t off = (uintptr_t) objs[i] - (uintptr_t) things.storage;
        assert_true(off < (uintptr_t) THINGS * things.obj_size);
        assert_int_equal(off % things.obj_size, 0);
        for (int j = 0; j < i; j++) assert_ptr_not_equal(objs[i], objs[j]);
    }
}

static void test_init_state(void **state)
{
    (void) state;
    assert_int_equal(things.count, THINGS);
    assert_true(things.obj_size >= sizeof(thing_t));
    assert_int_equal(tiny.obj_size, sizeof(void *)); /* room for the link */
    assert_int_equal(things.in_use, 0);
    assert_stat_equal(things.high_water, 0);
    assert_stat_equal(things.failures, 0);
#if MOTET_STATS
    assert_string_equal(things.name, "things");
#endif
    assert_false(slab_owns(&things, things.storage));
}

static void test_alloc_distinct_objects(void **state)
{
    (void) state;
    thing_t *objs[THINGS];
    alloc_all(objs);
    assert_int_equal(things.in_use, THINGS);
    for (int i = 0; i < THINGS; i++) {
        assert_true(slab_owns(&things, objs[i]));
        assert_int_equal((uintptr_t) objs[i] % _Alignof(thing_t), 0);
        memset(objs[i], 0xA0 + i, sizeof(thing_t)); /* objects do not overlap */
    }
    for (int i = 0; i < THINGS; i++) assert_int_equal(objs[i]->c[4], 0xA0 + i);
}

static void test_exhaustion_returns_null_and_logs(void **state)
{
    (void) state;
    thing_t *objs[THINGS];
    alloc_all(objs);
    assert_null(slab_alloc(&things));
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 1);
    assert_stat_equal(things.failures, 1);
    assert_null(slab_alloc(&things));
    assert_stat_equal(things.failures, 2);
    assert_int_equal(things.in_use, THINGS);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 1);
    /* Another cache is not affected. */
    assert_non_null(slab_alloc(&others));
    assert_stat_equal(others.failures, 0);
    /* A freed object makes room again. */
    assert_int_equal(slab_free(&things, objs[2]), MT_OK);
    assert_ptr_equal(slab_alloc(&things), objs[2]);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 0);
}

static void test_objects_are_zeroed(void **state)
{
    (void) state;
    static const uint8_t zero[sizeof(thing_t)];
    thing_t *objs[THINGS];
    alloc_all(objs);
    for (int i = 0; i < THINGS; i++) memset(objs[i], 0xFF, things.obj_size);
    for (int i = 0; i < THINGS; i++) assert_int_equal(slab_free(&things, objs[i]), MT_OK);
    /* Every object, including the bytes the free-list link used. */
    for (int i = 0; i < THINGS; i++) {
        thing_t *t = slab_alloc(&things);
        assert_non_null(t);
        assert_memory_equal(t, zero, sizeof *t);
        for (size_t k = sizeof *t; k < things.obj_size; k++)
            assert_int_equal(((uint8_t *) t)[k], 0);
    }
    uint8_t *b = slab_alloc(&tiny);
    *b = 0x5A;
    slab_free(&tiny, b);
    assert_int_equal(*(uint8_t *) slab_alloc(&tiny), 0);
}

static void test_double_free_detected(void **state)
{
    (void) state;
    thing_t *p = slab_alloc(&things);
    thing_t *q = slab_alloc(&things);
    assert_int_equal(slab_free(&things, p), MT_OK);
    assert_int_equal(slab_free(&things, p), MT_ERR_DOUBLE_FREE);
    assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 1);
    assert_int_equal(things.in_use, 1);
    assert_true(slab_owns(&things, q));
    /* p is on the free list once: the cache still yields exactly four more
     * distinct objects, never p twice. */
    thing_t *objs[THINGS - 1];
    for (int i = 0; i < THINGS - 1; i++) {
        objs[i] = slab_alloc(&things);
        assert_non_null(objs[i]);
        assert_ptr_not_equal(objs[i], q);
        for (int j = 0; j < i; j++) assert_ptr_not_equal(objs[i], objs[j]);
    }
    assert_null(slab_alloc(&things));
    assert_int_equal(things.in_use, THINGS);
}

static void test_bad_pointers_rejected(void **state)
{
    (void) state;
    int local;
    thing_t *p = slab_alloc(&things);
    thing_t *foreign = slab_alloc(&others);
    uint8_t *raw = (uint8_t *) p;
    assert_int_equal(slab_free(&things, &local), MT_ERR_BAD_POINTER);
    assert_int_equal(slab_free(&things, NULL), MT_ERR_BAD_POINTER);
    assert_int_equal(slab_free(&things, raw + 1), MT_ERR_BAD_POINTER);
    assert_int_equal(slab_free(&things, raw + sizeof(uint32_t)), MT_ERR_BAD_POINTER);
    assert_int_equal(slab_free(&things, things.storage + THINGS * things.obj_size),
                     MT_ERR_BAD_POINTER);
    assert_int_equal(slab_free(&things, foreign), MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 6);
    assert_int_equal(things.in_use, 1);
    assert_int_equal(others.in_use, 1);
    assert_false(slab_owns(&things, raw + 1));
    assert_false(slab_owns(&things, foreign));
    assert_false(slab_owns(&things, NULL));
    assert_true(slab_owns(&things, p));
    assert_true(slab_owns(&others, foreign));
    assert_int_equal(slab_free(&things, p), MT_OK);
    assert_int_equal(slab_free(&others, foreign), MT_OK);
}

static void test_high_water(void **state)
{
    (void) state;
    thing_t *a = slab_alloc(&things);
    thing_t *b = slab_alloc(&things);
    thing_t *c = slab_alloc(&things);
    assert_stat_equal(things.high_water, 3);
    slab_free(&things, a);
    slab_free(&things, b);
    assert_int_equal(things.in_use, 1);
    assert_stat_equal(things.high_water, 3);
    slab_alloc(&things);
    assert_int_equal(things.in_use, 2);
    assert_stat_equal(things.high_water, 3);
    slab_alloc(&things);
    slab_alloc(&things);
    assert_stat_equal(things.high_water, 4);
    (void) c;
}

static void test_reuse_last_freed(void **state)
{
    (void) state;
    thing_t *p = slab_alloc(&things);
    thing_t *q = slab_alloc(&things);
    slab_free(&things, p);
    assert_false(slab_owns(&things, p));
    assert_ptr_equal(slab_alloc(&things), p); /* O(1): the list head */
    assert_true(slab_owns(&things, p));
    slab_free(&things, q);
    slab_free(&things, p);
    assert_int_equal(things.in_use, 0);
    /* Nothing leaked: the whole cache is available again. */
    thing_t *objs[THINGS];
    alloc_all(objs);
    assert_null(slab_alloc(&things));
}

static void test_init_resets_cache(void **state)
{
    (void) state;
    thing_t *objs[THINGS];
    alloc_all(objs);
    assert_null(slab_alloc(&things));
    slab_init(&things);
    assert_int_equal(things.in_use, 0);
    assert_stat_equal(things.high_water, 0);
    assert_stat_equal(things.failures, 0);
    assert_false(slab_owns(&things, objs[0]));
    alloc_all(objs);
}

/* Every object of `cache` is handed out once, its interior pointers are
 * refused, and each frees exactly once. */
static void check_every_index(slab_cache_t *cache)
{
    slab_init(cache);
    uint8_t *first = slab_alloc(cache);
    assert_ptr_equal(first, cache->storage);
    for (unsigned i = 1; i < cache->count; i++)
        assert_ptr_equal(slab_alloc(cache), cache->storage + (size_t) i * cache->obj_size);
    assert_null(slab_alloc(cache));
    for (unsigned i = 0; i < cache->count; i++) {
        uint8_t *obj = cache->storage + (size_t) i * cache->obj_size;
        assert_int_equal(slab_free(cache, obj + 1), MT_ERR_BAD_POINTER);
        assert_int_equal(slab_free(cache, obj + cache->obj_size - 1), MT_ERR_BAD_POINTER);
        assert_int_equal(slab_free(cache, obj), MT_OK);
        assert_int_equal(slab_free(cache, obj), MT_ERR_DOUBLE_FREE);
    }
    assert_int_equal(cache->in_use, 0);
}

static void test_indices_of_odd_even_and_wide_sizes(void **state)
{
    (void) state;
    check_every_index(&odd_small);
    check_every_index(&even_wide);
    assert_int_equal(even_wide.obj_size >> even_wide.shift, 259);
#if UINTPTR_MAX > 0xFFFFu
    check_every_index(&odd_big);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_init_state, slab_setup),
        cmocka_unit_test_setup(test_alloc_distinct_objects, slab_setup),
        cmocka_unit_test_setup(test_exhaustion_returns_null_and_logs, slab_setup),
        cmocka_unit_test_setup(test_objects_are_zeroed, slab_setup),
        cmocka_unit_test_setup(test_double_free_detected, slab_setup),
        cmocka_unit_test_setup(test_bad_pointers_rejected, slab_setup),
        cmocka_unit_test_setup(test_high_water, slab_setup),
        cmocka_unit_test_setup(test_reuse_last_freed, slab_setup),
        cmocka_unit_test_setup(test_init_resets_cache, slab_setup),
        cmocka_unit_test_setup(test_indices_of_odd_even_and_wide_sizes, slab_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
