/* SPDX-License-Identifier: MIT */
/*
 * The radio task: the application's link to the outside world, at the
 * highest application priority. Here it prints each report with the
 * module's time (a line per report, format in apps/ssl/README.md):
 *
 *   [  5261.843 ms] radio: ssl block=20 t_ms=5250.000 angle=44.9 true=45.0 latency_ms=11.843
 *   entries=143 (one line)
 *   [  7510.130 ms] radio: fire alert sample_ms=7510.000 latency_us=130 temp=24.06
 *
 * Each report first costs the time to hand its bytes to the radio chip.
 */
#include <stdio.h>

#include "board.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "ssl_app.h"
#include "tasks.h"

/* (%s, not %.*s: avr-libc's printf does not take a precision argument.) */
static void emit(const char *line, uint32_t now)
{
    char out[160];
    int m = snprintf(out, sizeof out, "[%6lu.%03lu ms] radio: %s\n", (unsigned long) (now / 1000u),
                     (unsigned long) (now % 1000u), line);
    if (m > 0) port_console_write(out, (size_t) m < sizeof out ? (size_t) m : sizeof out - 1);
}

/* "45.0", or "-" when no single source is sounding. */
static void format_truth(char *buf, size_t n, int32_t ddeg)
{
    if (ddeg < 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%ld.%ld", (long) (ddeg / 10), (long) (ddeg % 10));
}

static void report_direction(const ssl_direction_t *d)
{
    char truth[16], line[128];
    format_truth(truth, sizeof truth, board_true_angle(d->t_us, SSL_N));
    uint32_t now = ssl_now_us(), lat = now - d->t_us;
    int n = snprintf(line, sizeof line,
                     "ssl block=%u t_ms=%lu.%03lu angle=%u.%u true=%s latency_ms=%lu.%03lu "
                     "entries=%u",
                     d->block, (unsigned long) (d->t_us / 1000u), (unsigned long) (d->t_us % 1000u),
                     d->angle_ddeg / 10u, d->angle_ddeg % 10u, truth, (unsigned long) (lat / 1000u),
                     (unsigned long) (lat % 1000u), d->entries);
    if (n > 0) emit(line, now);
}

static void report_alert(const ssl_reading_t *r)
{
    char line[128];
    uint32_t now = ssl_now_us();
    int32_t centi = (int32_t) r->temp_q4 * 100 / 16;
    int n =
        snprintf(line, sizeof line, "fire alert sample_ms=%lu.%03lu latency_us=%lu temp=%ld.%02ld",
                 (unsigned long) (r->t_us / 1000u), (unsigned long) (r->t_us % 1000u),
                 (unsigned long) (now - r->t_us), (long) (centi / 100),
                 (long) (centi < 0 ? -centi % 100 : centi % 100));
    if (n > 0) emit(line, now);
}

mt_err_t ssl_radio_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT && !board_has_radio()) return ssl_missing("radio");
    cost_t c = {0};
    cost_radio(&c, len);
    if (port == PORT_0 && len == sizeof(ssl_direction_t)) {
        board_work(&c);
        report_direction(data);
    } else if (port == PORT_0 + 1 && len == sizeof(ssl_reading_t)) {
        board_work(&c);
        report_alert(data);
    }
    return MT_OK;
}
