/* SPDX-License-Identifier: MIT */
/*
 * The application description reader (appdesc.c) on any bytes. A rejected
 * description names a byte inside it; an accepted one hands out only
 * records, routes, members and init strings that lie inside its buffer,
 * with every id in range.
 */
#include "appdesc.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool inside(const uint8_t *buf, size_t len, const uint8_t *p, size_t n)
{
    return !n || (p >= buf && n <= len && p <= buf + len - n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    appdesc_t d;
    if (appdesc_parse(data, size, &d) != MT_OK) {
        FUZZ_CHECK(d.bad_offset <= size);
        return 0;
    }
    FUZZ_CHECK(d.len == size && d.num_tasks > 0);
    for (uint8_t i = 0; i < d.num_tasks; i++) {
        appdesc_task_t t;
        appdesc_task(&d, i, &t);
        FUZZ_CHECK(t.rel_pid < d.num_tasks);
        FUZZ_CHECK(t.prio >= 0 && t.prio < MOTET_PRIO_LEVELS);
        FUZZ_CHECK(inside(data, size, t.routes, (size_t) t.num_routes * APPDESC_ENTRY_SIZE));
        FUZZ_CHECK(inside(data, size, t.init, t.init_len) && (t.init_len == 0) == (t.init == NULL));
        for (uint8_t r = 0; r < t.num_routes; r++) {
            const uint8_t *e = &t.routes[r * APPDESC_ENTRY_SIZE];
            if (e[0] == MT_PID_MULTICAST)
                FUZZ_CHECK(e[1] < d.num_groups);
            else if (e[0] < MT_PID_SYSTEM)
                FUZZ_CHECK(e[0] < d.num_tasks && e[1] < PORT_LIMIT);
            else
                FUZZ_CHECK(e[0] != MT_PID_INVALID);
        }
    }
    for (uint8_t g = 0; g < d.num_groups; g++) {
        appdesc_group_t grp;
        appdesc_group(&d, g, &grp);
        FUZZ_CHECK(grp.rel_group < d.num_groups);
        FUZZ_CHECK(inside(data, size, grp.members, (size_t) grp.num_members * APPDESC_ENTRY_SIZE));
        for (uint8_t k = 0; k < grp.num_members; k++) {
            const uint8_t *e = &grp.members[k * APPDESC_ENTRY_SIZE];
            FUZZ_CHECK(e[0] < d.num_tasks && e[1] >= PORT_0 && e[1] < PORT_LIMIT);
        }
    }
    return 0;
}
