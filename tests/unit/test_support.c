/* SPDX-License-Identifier: MIT */
#include "test_support.h"

void test_boot_at(uint32_t counter_start)
{
    tport_boot(counter_start);
}

int test_boot(void **state)
{
    (void) state;
    test_boot_at(0);
    return 0;
}

unsigned test_count_logged_errors(mt_err_t err)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    unsigned found = 0;
    for (unsigned i = 0; i < n; i++)
        if (rec[i].type == EV_ERROR && rec[i].arg == (uint16_t) err) found++;
    return found;
}
