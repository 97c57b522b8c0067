/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "test_support.h"

#include "sched_internal.h"

enum { CANARY = 0xA5 };

static char trace[256];

void test_note(const char *s)
{
    strncat(trace, s, sizeof trace - strlen(trace) - 1);
}

const char *test_trace(void)
{
    return trace;
}

void test_boot_at(uint32_t counter_start)
{
    trace[0] = 0;
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

unsigned test_logged(log_event_type_t type, mt_pid_t *pid, uint16_t *arg)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES), found = 0;
    for (unsigned i = 0; i < n; i++) {
        if (rec[i].type != type) continue;
        found++;
        *pid = rec[i].pid;
        *arg = rec[i].arg;
    }
    return found;
}

void test_task(mt_pid_t pid, mt_prio_t prio, task_handler_t h)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = h};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

MT_NOINLINE unsigned test_canary_across(size_t bytes, void (*wait)(void))
{
    volatile uint8_t area[bytes];
    for (size_t i = 0; i < bytes; i++) area[i] = CANARY;
    wait();
    unsigned changed = 0;
    for (size_t i = 0; i < bytes; i++)
        if (area[i] != CANARY) changed++;
    return changed;
}

bool test_slot_queued_last_at(mt_prio_t prio)
{
    return sched.isr_msg.flags == (MSG_FROM_ISR | MSG_OWN_BLOCK) &&
           queue_level[prio].tail == &sched.isr_msg;
}

#if MOTET_THREADS
thread_t *test_thread(void *stack, size_t size, thread_entry_t entry, void *arg, mt_prio_t prio,
                      uint8_t start)
{
    return test_bound_thread(MT_PID_NONE, stack, size, entry, arg, prio, start);
}

thread_t *test_bound_thread(mt_pid_t pid, void *stack, size_t size, thread_entry_t entry, void *arg,
                            mt_prio_t prio, uint8_t start)
{
    thread_t *t = NULL;
    thread_spec_t spec = {.entry = entry,
                          .arg = arg,
                          .stack = stack,
                          .stack_size = size,
                          .prio = prio,
                          .pid = pid,
                          .start = start};
    assert_int_equal(thread_create(&spec, &t), MT_OK);
    return t;
}
#endif
