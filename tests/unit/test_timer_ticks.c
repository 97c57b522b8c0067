/* SPDX-License-Identifier: MIT */
/*
 * The periodic timer mode (MOTET_TIMER_PERIODIC=1), kept beside tickless
 * to measure what the variable timer saves: a compare interrupt every
 * MOTET_TICK_US whether anything is due or not, and timers served at the
 * first tick at or after their deadline, keeping their own phase. The
 * tickless tests (test_timer.c) check the exact ticks of the default mode.
 *
 * MOTET_TEST_KERNEL: periodic
 */
#include <string.h>

#include "test_support.h"
#include "timer_internal.h"

#define TICK     TIMER_US(MOTET_TICK_US)
#define PID_A    0x20
#define PID_STOP 0x2F
#define MAX_HITS 16

static uint64_t hits[4][MAX_HITS];
static unsigned n_hits[4];

static mt_err_t recorder(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port < PORT_TIMEOUT0 || port > PORT_TIMEOUT3) return MT_OK;
    unsigned n = port - PORT_TIMEOUT0;
    if (n_hits[n] < MAX_HITS) hits[n][n_hits[n]++] = tport_time();
    return MT_OK;
}

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
    sched_post_isr(PID_STOP, PORT_0, NULL, 0, 0);
}

static void make_task(mt_pid_t pid, mt_prio_t prio, task_handler_t h)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = h};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

static int setup(void **state)
{
    test_boot(state);
    memset(hits, 0, sizeof hits);
    memset(n_hits, 0, sizeof n_hits);
    make_task(PID_A, 2, recorder);
    make_task(PID_STOP, 6, stopper);
    tport_irq_attach(7, isr_stop);
    return 0;
}

static void run_until(uint64_t at)
{
    tport_irq_schedule(7, at);
    sched_run();
}

static void test_ticks_whether_anything_is_due_or_not(void **state)
{
    (void) state;
    uint32_t before = timer_interrupt_count();
    run_until(10 * TICK + 1);
    assert_int_equal(timer_interrupt_count() - before, 10);
    assert_true(tport_sleep_count() >= 10); /* each tick wakes the module */
}

static void test_timers_fire_at_the_first_tick_after_their_deadline(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, TICK * 3 / 10, false), MT_OK);  /* 0.3 tick */
    assert_int_equal(timer_start_for(PID_A, 1, TICK * 25 / 10, false), MT_OK); /* 2.5 ticks */
    assert_int_equal(timer_start_for(PID_A, 2, TICK, false), MT_OK);           /* exactly 1 */
    run_until(10 * TICK);
    assert_int_equal(n_hits[0], 1);
    assert_int_equal(hits[0][0], TICK);
    assert_int_equal(n_hits[1], 1);
    assert_int_equal(hits[1][0], 3 * TICK);
    assert_int_equal(n_hits[2], 1);
    assert_int_equal(hits[2][0], TICK);
}

static void test_periodic_timer_keeps_its_phase_at_tick_granularity(void **state)
{
    (void) state;
    /* Deadlines every 1.5 ticks: 1.5, 3, 4.5, 6, 7.5, 9 -> ticks 2, 3, 5, 6, 8, 9. */
    assert_int_equal(timer_start_for(PID_A, 3, TICK * 15 / 10, true), MT_OK);
    run_until(9 * TICK + 1);
    static const unsigned want[] = {2, 3, 5, 6, 8, 9};
    assert_int_equal(n_hits[3], 6);
    for (unsigned i = 0; i < 6; i++) assert_int_equal(hits[3][i], want[i] * TICK);
}

static void test_next_deadline_is_never_beyond_the_next_tick(void **state)
{
    (void) state;
    uint32_t ticks = 0;
    assert_true(timer_next_deadline(&ticks)); /* the tick, even with no timer */
    assert_true(ticks <= TICK);
    assert_int_equal(timer_start_for(PID_A, 0, 50 * TICK, false), MT_OK);
    assert_true(timer_next_deadline(&ticks));
    assert_true(ticks <= TICK);
}

#if MOTET_THREADS && MOTET_THREAD_SLEEP
static uint8_t stack[THREAD_STACK_BYTES(0)];
static uint64_t woke_at;

static void sleeper(void *arg)
{
    (void) arg;
    thread_sleep(TICK / 4);
    woke_at = tport_time();
}

static void test_thread_sleep_ends_at_a_tick(void **state)
{
    (void) state;
    thread_spec_t spec = {.entry = sleeper, .stack = stack, .stack_size = sizeof stack, .prio = 1};
    assert_int_equal(thread_create(&spec, NULL), MT_OK);
    run_until(3 * TICK);
    assert_int_equal(woke_at, TICK);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_ticks_whether_anything_is_due_or_not, setup),
        cmocka_unit_test_setup(test_timers_fire_at_the_first_tick_after_their_deadline, setup),
        cmocka_unit_test_setup(test_periodic_timer_keeps_its_phase_at_tick_granularity, setup),
        cmocka_unit_test_setup(test_next_deadline_is_never_beyond_the_next_tick, setup),
#if MOTET_THREADS && MOTET_THREAD_SLEEP
        cmocka_unit_test_setup(test_thread_sleep_ends_at_a_tick, setup),
#endif
    };
    return cmocka_run_group_tests_name("periodic timer", tests, NULL, NULL);
}
