/* SPDX-License-Identifier: MIT */
/*
 * The MANTIS baseline policy: what the original kernel did and Motet
 * avoids must really happen here, or the benchmarks against it would
 * measure nothing: a 20 ms tick whether anything is due or not, sleeps
 * that end at a tick, round robin at every tick, and the idle thread
 * (test_thread_idle.c counts its two switches per wake-up).
 *
 * MOTET_TEST_KERNEL: thr_mantis
 */
#include <string.h>

#include "test_support.h"
#include "thread_internal.h"
#include "timer_internal.h"

#define STACK   THREAD_STACK_BYTES(0)
#define PID_END 0x3F

static uint8_t stacks[2][STACK];
static char runs[128];

static mt_err_t stopper(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) sched_stop();
    return MT_OK;
}

static void isr_stop(void)
{
    sched_post_isr(PID_END, PORT_0, NULL, 0, 0);
}

static int setup(void **state)
{
    test_boot(state);
    memset(runs, 0, sizeof runs);
    task_spec_t spec = {.pid = PID_END, .prio = 7, .handler = stopper};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_END, NULL, 0), MT_OK);
    tport_irq_attach(7, isr_stop);
    return 0;
}

static void run_until(uint64_t at)
{
    tport_irq_schedule(7, at);
    sched_run();
}

static void test_ticks_every_20_ms_with_nothing_to_do(void **state)
{
    (void) state;
    uint32_t before = timer_interrupt_count();
    run_until(TIMER_MS(100) + 1);
    assert_int_equal(thread_mantis_ticks(), 5);
    assert_int_equal(timer_interrupt_count() - before, 5); /* each one an interrupt */
    assert_int_equal(tport_sleep_count() >= 5, 1);         /* and a wake-up */
}

static uint64_t woke_at;

static void sleeper(void *arg)
{
    (void) arg;
    thread_sleep(TIMER_MS(30));
    woke_at = tport_time();
}

static void test_sleep_ends_at_the_next_tick(void **state)
{
    (void) state;
    thread_spec_t spec = {.entry = sleeper, .stack = stacks[0], .stack_size = STACK, .prio = 2};
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
    run_until(TIMER_MS(100));
    assert_int_equal(woke_at, TIMER_MS(40)); /* due at 30 ms, seen at the 40 ms tick */
}

static void worker(void *arg)
{
    for (int i = 0; i < 60; i++) {
        size_t n = strlen(runs);
        runs[n] = (char) (intptr_t) arg;
        tport_busy(TIMER_MS(1));
    }
}

static mt_err_t creator(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    for (int i = 0; i < 2; i++) {
        thread_spec_t spec = {.entry = worker,
                              .arg = (void *) (intptr_t) ('A' + i),
                              .stack = stacks[i],
                              .stack_size = STACK,
                              .prio = 2};
        assert_int_equal(thread_create(&spec, NULL), MT_OK);
    }
    return MT_OK;
}

static void test_round_robin_at_every_tick(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = 0x30, .prio = 5, .handler = creator};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(0x30, NULL, 0), MT_OK);
    assert_int_equal(sched_send_to(0x30, PORT_0, NULL, 0, 0), MT_OK);
    /* The ticks fall at 20, 40, 60 ms... of module time, not of each
     * thread's own: A runs 0..20, B 20..40, A 40..60, ... */
    char want[128] = {0};
    for (int i = 0; i < 120; i++) want[i] = (char) ('A' + (i / 20) % 2);
    assert_string_equal(runs, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_ticks_every_20_ms_with_nothing_to_do, setup),
        cmocka_unit_test_setup(test_sleep_ends_at_the_next_tick, setup),
        cmocka_unit_test_setup(test_round_robin_at_every_tick, setup),
    };
    return cmocka_run_group_tests_name("mantis baseline", tests, NULL, NULL);
}
