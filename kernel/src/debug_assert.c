/* SPDX-License-Identifier: MIT */
/*
 * A failed debug assertion (debug_assert.h): the kernel's own state is
 * wrong, so nothing it would do next can be trusted. Linked only into an
 * image whose kernel was built with MOTET_DEBUG_ASSERTS.
 */
#include <stdio.h>

#include "debug_assert.h"
#include "motet/log.h"
#include "motet/port.h"

#define HALT_DEBUG_ASSERT 4

void debug_assert_failed(const char *expr, const char *file, int line)
{
    char msg[160];
    int n =
        snprintf(msg, sizeof msg, "motet: debug assertion failed: %s (%s:%d)\n", expr, file, line);
    log_error(MT_ERR_STATE);
    if (n > 0) port_console_write(msg, n < (int) sizeof msg ? (size_t) n : sizeof msg - 1);
    port_halt(HALT_DEBUG_ASSERT);
    for (;;) {
    }
}
