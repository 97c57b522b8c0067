/* SPDX-License-Identifier: MIT */
/*
 * Shared fixtures for the kernel unit tests: a fresh kernel on the native
 * port's simulated clock before every test.
 */
#ifndef TEST_SUPPORT_H
#define TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "motet/motet.h"
#include "native.h"

/* cmocka setup: simulated clock (counter starting at 0), seed 1, fresh kernel. */
int test_boot(void **state);
/* Same, with the counter starting at `counter_start` (wrap tests). */
void test_boot_at(uint32_t counter_start);
/* Number of logged EV_ERROR records carrying `err` among the undrained ones
 * (drains the log). */
unsigned test_count_logged_errors(mt_err_t err);

#endif /* TEST_SUPPORT_H */
