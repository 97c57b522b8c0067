/* SPDX-License-Identifier: MIT */
/*
 * The application manager (appmgr.c) given any description, as module 0 of
 * a device without a bus (tasks for other modules become remote control
 * blocks). A description it refuses creates nothing and leaves the heap as
 * it was; one it takes has created exactly its local tasks, which run their
 * INIT, and killing them gives the heap back; the heap stays whole
 * throughout. Programs 1..3 exist here.
 */
#include "appdesc.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mt_err_t echo(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    FUZZ_CHECK(port < PORT_LIMIT && (data || !len));
    /* A task that sends on its routes: the wiring a description gave it. */
    if (port == PORT_INIT) sched_send(0, data, len, 0);
    return MT_OK;
}

static const program_t programs[] = {
    {.id = 1, .name = "echo", .handler = echo, .state_size = 4},
    {.id = 2, .name = "big", .handler = echo, .state_size = 200},
    {.id = 3, .name = "bare", .handler = echo},
};

static unsigned app_tasks(void)
{
    unsigned n = 0;
    for (unsigned pid = MT_PID_FIRST_APP; pid <= MT_PID_LAST_APP; pid++)
        n += sched_task_exists((mt_pid_t) pid);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MOTET_APP_DESC_MAX) return 0;
    fuzz_boot();
    program_register(programs, sizeof programs / sizeof programs[0]);
    mem_stats_t before, after;
    mem_get_stats(&before);
    FUZZ_CHECK(appmgr_load(data, (uint16_t) size) == MT_OK);
    sched_run_pending();
    const appmgr_result_t *r = appmgr_last_result();
    FUZZ_CHECK(mem_consistent());
    mem_get_stats(&after);
    if (r->err != MT_OK) {
        FUZZ_CHECK(r->created == 0 && app_tasks() == 0);
        FUZZ_CHECK(after.in_use == before.in_use && after.alloc_count == before.alloc_count);
        return 0;
    }
    FUZZ_CHECK(app_tasks() == r->created && r->pid_base == MT_PID_FIRST_APP);
    appdesc_t d;
    FUZZ_CHECK(appdesc_parse(data, size, &d) == MT_OK);
    for (uint8_t i = 0; i < d.num_tasks; i++) {
        appdesc_task_t t;
        appdesc_task(&d, i, &t);
        mt_pid_t pid = (mt_pid_t) (r->pid_base + t.rel_pid);
        FUZZ_CHECK(sched_task_exists(pid) == (t.module == bus_self()));
        if (t.module == bus_self()) FUZZ_CHECK(sched_task_kill(pid) == MT_OK);
    }
    sched_run_pending();
    FUZZ_CHECK(app_tasks() == 0 && mem_consistent());
    mem_get_stats(&after); /* whatever the tasks held went with them */
    FUZZ_CHECK(after.in_use == before.in_use && after.alloc_count == before.alloc_count);
    return 0;
}
