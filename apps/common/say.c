/* SPDX-License-Identifier: MIT */
/* say(): a console line with the module's time in front (say.h). */
#include "say.h"

#include <stdarg.h>
#include <stdio.h>

#include "motet/motet.h"
#include "motet/port.h"

void say(const char *fmt, ...)
{
    char line[160];
    uint32_t now = timer_now();
    int n = snprintf(line, sizeof line, "[%7lu.%03lu ms] ", (unsigned long) (now / 1000u),
                     (unsigned long) (now % 1000u));
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t) n - 1, fmt, ap);
    va_end(ap);
    if (n > (int) sizeof line - 2) n = (int) sizeof line - 2;
    line[n++] = '\n';
    port_console_write(line, (size_t) n);
}
