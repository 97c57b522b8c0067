/* SPDX-License-Identifier: MIT */
/*
 * The native module's host link for the event log: records drained from the
 * kernel's ring are written as text lines that `motet log` reads
 * (tools/motetlib/eventlog.py):
 *
 *     EV <time_us> <TYPE> <pid> <arg>
 *     LOST <n>          ring slots overwritten before they could be drained
 *                       (log_overruns(); a slot may stand for more than one
 *                       record: a RUN, an expiry's START)
 *
 * Draining happens whenever the module goes to sleep and when it halts, so
 * the ring only has to hold one busy period's events; the file is flushed
 * then too, so that the device's host can read the costs while the device
 * runs (tools/motetlib/ssl_replan.py, the drift check). A module program
 * (module_main()) also has every error record it drains printed on the
 * console as it goes (module_report_error()), with a dump file or without.
 */
#include <stdio.h>

#include "motet/log.h"
#include "motet/module.h"
#include "motet/port.h"
#include "native.h"

static FILE *dump;
static uint32_t lost_reported;
static bool report_errors;

void native_event_report_errors(bool on)
{
    report_errors = on;
}

void native_event_dump_open(const char *path)
{
    native_event_dump_close();
    lost_reported = 0;
    if (!path) return;
    dump = fopen(path, "w");
    if (!dump) {
        perror(path);
        port_halt(2);
    }
    fprintf(dump, "# motet event log, port %s, %u ticks per second\n", PORT_NAME,
            (unsigned) PORT_TICKS_PER_SECOND);
}

void native_event_dump_flush(void)
{
    if (!dump && !report_errors) return;
    uint32_t lost = log_overruns();
    if (dump && lost != lost_reported) {
        fprintf(dump, "LOST %lu\n", (unsigned long) (lost - lost_reported));
        lost_reported = lost;
    }
    log_record_t rec[16];
    unsigned n;
    while ((n = log_drain(rec, 16)) > 0)
        for (unsigned i = 0; i < n; i++) {
            if (report_errors) module_report_error(&rec[i]);
            if (dump)
                fprintf(dump, "EV %lu %s %u %u\n",
                        (unsigned long) ((uint64_t) rec[i].time * 1000000u / PORT_TICKS_PER_SECOND),
                        log_type_name(rec[i].type), rec[i].pid, rec[i].arg);
        }
    if (dump) fflush(dump);
}

void native_event_dump_close(void)
{
    if (!dump) return;
    fclose(dump);
    dump = NULL;
}
