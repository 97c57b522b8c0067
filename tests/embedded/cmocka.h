/* SPDX-License-Identifier: MIT */
/*
 * A cmocka-compatible subset for bare-metal ports, where the real cmocka
 * (malloc, stdio, signals) does not fit. The kernel unit tests include
 * <cmocka.h>; on a microcontroller this header answers, with the same
 * assertion macros and the same result lines, so one test source runs on
 * every port. Output goes through port_console_write(); a failed assertion
 * longjmps back to the runner, as cmocka does.
 *
 * TEST_TEXT(s) lets a port keep strings out of RAM (AVR: PSTR); it must
 * then also define tshim_write_text() to print such a string.
 */
#ifndef MOTET_EMBEDDED_CMOCKA_H
#define MOTET_EMBEDDED_CMOCKA_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef TEST_TEXT
#define TEST_TEXT(s) (s)
#endif

typedef void (*CMUnitTestFunction)(void **state);
typedef int (*CMFixtureFunction)(void **state);

struct CMUnitTest {
    const char *name;
    CMUnitTestFunction test_func;
    CMFixtureFunction setup_func;
    CMFixtureFunction teardown_func;
    void *initial_state;
};

#define cmocka_unit_test(f)                                                                        \
    {                                                                                              \
        TEST_TEXT(#f), f, NULL, NULL, NULL                                                         \
    }
#define cmocka_unit_test_setup(f, setup)                                                           \
    {                                                                                              \
        TEST_TEXT(#f), f, setup, NULL, NULL                                                        \
    }
#define cmocka_unit_test_setup_teardown(f, setup, teardown)                                        \
    {                                                                                              \
        TEST_TEXT(#f), f, setup, teardown, NULL                                                    \
    }

/* Run the group; prints cmocka's result lines; returns the failure count. */
int tshim_run(const char *group, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
              CMFixtureFunction teardown);
#define cmocka_run_group_tests_name(name, tests, setup, teardown)                                  \
    tshim_run(TEST_TEXT(name), tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)
#define cmocka_run_group_tests(tests, setup, teardown)                                             \
    cmocka_run_group_tests_name(#tests, tests, setup, teardown)
/* cmocka's underlying entry point, for a table whose length is known only at
 * run time. */
#define _cmocka_run_group_tests(name, tests, n, setup, teardown)                                   \
    tshim_run(TEST_TEXT(name), tests, n, setup, teardown)

/* Assertion back ends: each reports and longjmps when the check fails.
 * Every macro argument is evaluated exactly once, as in cmocka: tests assert
 * on calls with side effects, e.g. assert_int_equal(sched_send_to(...), 0). */
typedef enum { TSHIM_EQ, TSHIM_NE } tshim_cmp_t;
void tshim_check(bool ok, const char *what, const char *file, int line);
void tshim_check_int(intmax_t a, intmax_t b, tshim_cmp_t cmp, const char *op, const char *file,
                     int line);
void tshim_check_range(intmax_t v, intmax_t lo, intmax_t hi, const char *file, int line);
void tshim_check_string(const char *a, const char *b, bool equal, const char *file, int line);
void tshim_check_memory(const void *a, const void *b, size_t n, const char *file, int line);

#define TSHIM_INT(a, b, cmp, op)                                                                   \
    tshim_check_int((intmax_t) (a), (intmax_t) (b), cmp, op, TEST_TEXT(__FILE__), __LINE__)
#define assert_true(c)             tshim_check(!!(c), TEST_TEXT(#c), TEST_TEXT(__FILE__), __LINE__)
#define assert_false(c)            tshim_check(!(c), TEST_TEXT("!(" #c ")"), TEST_TEXT(__FILE__), __LINE__)
#define assert_int_equal(a, b)     TSHIM_INT(a, b, TSHIM_EQ, TEST_TEXT("!="))
#define assert_int_not_equal(a, b) TSHIM_INT(a, b, TSHIM_NE, TEST_TEXT("=="))
#define assert_in_range(v, lo, hi)                                                                 \
    tshim_check_range((intmax_t) (v), (intmax_t) (lo), (intmax_t) (hi), TEST_TEXT(__FILE__),       \
                      __LINE__)
#define assert_null(p)     assert_true((p) == NULL)
#define assert_non_null(p) assert_true((p) != NULL)
#define assert_ptr_equal(a, b)                                                                     \
    TSHIM_INT((uintptr_t) (a), (uintptr_t) (b), TSHIM_EQ, TEST_TEXT("!="))
#define assert_ptr_not_equal(a, b)                                                                 \
    TSHIM_INT((uintptr_t) (a), (uintptr_t) (b), TSHIM_NE, TEST_TEXT("=="))
#define assert_string_equal(a, b) tshim_check_string((a), (b), true, TEST_TEXT(__FILE__), __LINE__)
#define assert_string_not_equal(a, b)                                                              \
    tshim_check_string((a), (b), false, TEST_TEXT(__FILE__), __LINE__)
#define assert_memory_equal(a, b, n)                                                               \
    tshim_check_memory((a), (b), (n), TEST_TEXT(__FILE__), __LINE__)
#define fail() tshim_check(false, TEST_TEXT("fail()"), TEST_TEXT(__FILE__), __LINE__)

/* cmocka's assertion hook for the code under test (its assert() turned
 * into mock_assert()), and the test's side: expect_assert_failure(call)
 * passes if the call fails such an assertion, which jumps back out of it,
 * and fails if it returns. */
void mock_assert(const int result, const char *const expression, const char *const file,
                 const int line);
jmp_buf *tshim_expect_assert(void);
void tshim_expect_assert_done(bool failed_as_expected, const char *call, const char *file,
                              int line);
#define expect_assert_failure(call)                                                                \
    do {                                                                                           \
        if (setjmp(*tshim_expect_assert()) == 0) {                                                 \
            call;                                                                                  \
            tshim_expect_assert_done(false, TEST_TEXT(#call), TEST_TEXT(__FILE__), __LINE__);      \
        } else {                                                                                   \
            tshim_expect_assert_done(true, TEST_TEXT(#call), TEST_TEXT(__FILE__), __LINE__);       \
        }                                                                                          \
    } while (0)

#endif /* MOTET_EMBEDDED_CMOCKA_H */
