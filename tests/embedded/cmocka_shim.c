/* SPDX-License-Identifier: MIT */
/*
 * The runner behind tests/embedded/cmocka.h. It prints the lines the real
 * cmocka prints, so the same scripts read results from every port.
 */
#include <string.h>

#include "cmocka.h"
#include "motet/port.h"

static jmp_buf on_failure;
static bool in_test;

#ifndef TSHIM_CUSTOM_TEXT
/* Print a string made with TEST_TEXT (plain RAM/flash string here). */
void tshim_write_text(const char *s);
void tshim_write_text(const char *s)
{
    port_console_write(s, strlen(s));
}
#else
void tshim_write_text(const char *s);
#endif

static void put(const char *s)
{
    port_console_write(s, strlen(s));
}

static void put_int(intmax_t v)
{
    char buf[24];
    char *p = buf + sizeof buf;
    uintmax_t u = v < 0 ? (uintmax_t) 0 - (uintmax_t) v : (uintmax_t) v;
    *--p = 0;
    do {
        *--p = (char) ('0' + u % 10u);
        u /= 10u;
    } while (u);
    if (v < 0) *--p = '-';
    put(p);
}

static void put_hex(uintmax_t v)
{
    char buf[20];
    char *p = buf + sizeof buf;
    *--p = 0;
    do {
        *--p = "0123456789abcdef"[v & 15u];
        v >>= 4;
    } while (v);
    put("0x");
    put(p);
}

static void where(const char *file, int line)
{
    put("[   LINE   ] --- ");
    tshim_write_text(file);
    put(":");
    put_int(line);
    put(": error: Failure!\n");
}

static void failed(const char *file, int line)
{
    where(file, line);
    if (in_test) longjmp(on_failure, 1);
    port_halt(1); /* an assertion outside any test: nothing to return to */
}

/* expect_assert_failure(): where mock_assert() jumps while one is made. */
static jmp_buf on_expected_assert;
static bool expecting_assert;

jmp_buf *tshim_expect_assert(void)
{
    expecting_assert = true;
    return &on_expected_assert;
}

void tshim_expect_assert_done(bool failed_as_expected, const char *call, const char *file, int line)
{
    expecting_assert = false;
    if (failed_as_expected) return;
    put("[  ERROR   ] --- expected an assertion failure: ");
    tshim_write_text(call);
    put("\n");
    failed(file, line);
}

/* The expression and file come from the code under test's own
 * MT_DEBUG_ASSERT(): plain strings, not TEST_TEXT. */
void mock_assert(const int result, const char *const expression, const char *const file,
                 const int line)
{
    if (result) return;
    if (expecting_assert) longjmp(on_expected_assert, 1);
    put("[  ERROR   ] --- assertion failed: ");
    put(expression);
    put("\n");
    put("[   LINE   ] --- ");
    put(file);
    put(":");
    put_int(line);
    put(": error: Failure!\n");
    if (in_test) longjmp(on_failure, 1);
    port_halt(1);
}

void tshim_check(bool ok, const char *what, const char *file, int line)
{
    if (ok) return;
    put("[  ERROR   ] --- ");
    tshim_write_text(what);
    put("\n");
    failed(file, line);
}

void tshim_check_int(intmax_t a, intmax_t b, tshim_cmp_t cmp, const char *op, const char *file,
                     int line)
{
    if ((a == b) == (cmp == TSHIM_EQ)) return;
    put("[  ERROR   ] --- ");
    put_hex((uintmax_t) a);
    put(" ");
    tshim_write_text(op);
    put(" ");
    put_hex((uintmax_t) b);
    put("\n");
    failed(file, line);
}

void tshim_check_range(intmax_t v, intmax_t lo, intmax_t hi, const char *file, int line)
{
    if (v >= lo && v <= hi) return;
    put("[  ERROR   ] --- ");
    put_hex((uintmax_t) v);
    put(" is not within the range ");
    put_hex((uintmax_t) lo);
    put("-");
    put_hex((uintmax_t) hi);
    put("\n");
    failed(file, line);
}

void tshim_check_string(const char *a, const char *b, bool equal, const char *file, int line)
{
    if ((strcmp(a, b) == 0) == equal) return;
    put("[  ERROR   ] --- \"");
    put(a);
    put(equal ? "\" != \"" : "\" == \"");
    put(b);
    put("\"\n");
    failed(file, line);
}

void tshim_check_memory(const void *a, const void *b, size_t n, const char *file, int line)
{
    if (memcmp(a, b, n) == 0) return;
    put("[  ERROR   ] --- memory differs\n");
    failed(file, line);
}

static void banner(const char *tag, const char *name)
{
    put(tag);
    tshim_write_text(name);
    put("\n");
}

/* TSHIM_SKIP: space-separated test cases this port cannot run (from the
 * port's MOTET_PORT_SKIP_TESTS, with the reason written there). */
#ifndef TSHIM_SKIP
#define TSHIM_SKIP ""
#endif

static bool listed_for_skip(const char *name)
{
    size_t n = strlen(name);
    for (const char *p = TSHIM_SKIP; *p;) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, name, n) == 0) return true;
        p += len;
    }
    return false;
}

typedef enum { TEST_PASSED, TEST_FAILED, TEST_SKIPPED } outcome_t;

static outcome_t run_one(const struct CMUnitTest *t)
{
    void *state = t->initial_state;
    if (listed_for_skip(t->name)) {
        banner("[  SKIPPED ] ", t->name);
        return TEST_SKIPPED;
    }
    banner("[ RUN      ] ", t->name);
    in_test = true;
    bool ok = false;
    if (setjmp(on_failure) == 0) {
        if (t->setup_func && t->setup_func(&state) != 0) tshim_check(false, "setup", "", 0);
        t->test_func(&state);
        if (t->teardown_func) t->teardown_func(&state);
        ok = true;
    }
    in_test = false;
    banner(ok ? "[       OK ] " : "[  FAILED  ] ", t->name);
    return ok ? TEST_PASSED : TEST_FAILED;
}

int tshim_run(const char *group, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
              CMFixtureFunction teardown)
{
    void *state = NULL;
    int failures = 0, skipped = 0;
    put("[==========] ");
    tshim_write_text(group);
    put(": Running ");
    put_int((intmax_t) n);
    put(" test(s).\n");
    if (setup && setup(&state) != 0) return (int) n;
    for (size_t i = 0; i < n; i++) {
        outcome_t o = run_one(&tests[i]);
        failures += o == TEST_FAILED;
        skipped += o == TEST_SKIPPED;
    }
    if (teardown) teardown(&state);
    put("[==========] ");
    put_int((intmax_t) n - skipped);
    put(" test(s) run.\n[  PASSED  ] ");
    put_int((intmax_t) n - failures - skipped);
    put(" test(s).\n");
    if (skipped) {
        put("[  SKIPPED ] ");
        put_int(skipped);
        put(" test(s).\n");
    }
    if (failures) {
        put("[  FAILED  ] ");
        put_int(failures);
        put(" test(s).\n");
    }
    return failures;
}
