/* SPDX-License-Identifier: MIT */
/*
 * Debug assertions: invariants of the kernel's own code that no input can
 * break (bad input gets an error code and a logged event instead), checked
 * only where MOTET_DEBUG_ASSERTS is on (config.h: a debug build). A failed
 * one logs MT_ERR_STATE, says which on the console and halts the module
 * (debug_assert.c). Off, the condition is compiled but never evaluated.
 *
 * A unit test may route failures to its framework (cmocka's mock_assert(),
 * which expect_assert_failure() catches) by defining
 * MT_DEBUG_ASSERT_FAILED before it includes a kernel header.
 */
#ifndef MOTET_DEBUG_ASSERT_H
#define MOTET_DEBUG_ASSERT_H

#include "motet/config.h"

/* Log, report and halt: assertion `expr` at file:line failed. */
void debug_assert_failed(const char *expr, const char *file, int line);

#ifndef MT_DEBUG_ASSERT_FAILED
#define MT_DEBUG_ASSERT_FAILED(expr, file, line) debug_assert_failed(expr, file, line)
#endif

#if MOTET_DEBUG_ASSERTS
#define MT_DEBUG_ASSERT(cond)                                                                      \
    ((cond) ? (void) 0 : MT_DEBUG_ASSERT_FAILED(#cond, __FILE__, __LINE__))
#else
#define MT_DEBUG_ASSERT(cond) ((void) sizeof(cond))
#endif

#endif /* MOTET_DEBUG_ASSERT_H */
