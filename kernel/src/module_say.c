/* SPDX-License-Identifier: MIT */
/* module_say(): a console line with the module's time in front (module.h). */
#include <stdarg.h>
#include <stdio.h>

#include "motet/module.h"
#include "motet/port.h"
#include "motet/timer.h"

void module_say(const char *fmt, ...)
{
    char line[160];
    /* Kernel ticks are the port's (1 us natively, 32 us on an 8 MHz AVR). */
    uint32_t us = (uint32_t) ((uint64_t) timer_now() * 1000000u / PORT_TICKS_PER_SECOND);
    int n = snprintf(line, sizeof line, "[%7lu.%03lu ms] ", (unsigned long) (us / 1000u),
                     (unsigned long) (us % 1000u));
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t) n - 1, fmt, ap);
    va_end(ap);
    if (n > (int) sizeof line - 2) n = (int) sizeof line - 2;
    line[n++] = '\n';
    port_console_write(line, (size_t) n);
}
