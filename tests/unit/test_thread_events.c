/* SPDX-License-Identifier: MIT */
/*
 * Event flags (events.h): any and all, consumed or kept; one set wakes
 * every waiter it satisfies before the consumed bits are cleared; an
 * interrupt's set runs the waiter at its exit; a timed wait times out at
 * its tick with the flags of that moment; and the refusals.
 *
 * MOTET_TEST_KERNEL: threads
 */
#include <stdio.h>

#include "test_support.h"

#define STACK THREAD_STACK_BYTES(0)
#define EV_A  0x01u
#define EV_B  0x02u
#define EV_C  0x80000000u

static uint8_t stacks[2][STACK];
static events_t ev;
static uint32_t got[2];
static mt_err_t result;

static int setup(void **state)
{
    test_boot(state);
    events_init(&ev, 0);
    got[0] = got[1] = 0;
    result = MT_ERR_COUNT;
    return 0;
}

static void test_wait_without_blocking_when_satisfied(void **state)
{
    (void) state;
    uint32_t g;
    assert_int_equal(events_wait(&ev, EV_A, EVENTS_ANY, THREAD_NO_WAIT, &g), MT_ERR_TIMEOUT);
    events_set(&ev, EV_A | EV_C);
    assert_int_equal(events_wait(&ev, EV_A | EV_B, EVENTS_ALL, THREAD_NO_WAIT, &g), MT_ERR_TIMEOUT);
    assert_int_equal(g, EV_A | EV_C);
    assert_int_equal(events_wait(&ev, EV_A | EV_B, EVENTS_ANY, THREAD_NO_WAIT, &g), MT_OK);
    assert_int_equal(events_get(&ev), EV_A | EV_C); /* kept */
    assert_int_equal(events_wait(&ev, EV_C, EVENTS_ANY | EVENTS_CLEAR, THREAD_NO_WAIT, &g), MT_OK);
    assert_int_equal(g, EV_A | EV_C);
    assert_int_equal(events_get(&ev), EV_A); /* consumed */
    assert_int_equal(events_clear(&ev, EV_A), EV_A);
    assert_int_equal(events_get(&ev), 0);
}

static void waits_all_ab(void *arg)
{
    int i = (int) (intptr_t) arg;
    assert_int_equal(
        events_wait(&ev, EV_A | EV_B, EVENTS_ALL | EVENTS_CLEAR, THREAD_FOREVER, &got[i]), MT_OK);
    test_note(i ? "W1 " : "W0 ");
}

static void waits_any_a(void *arg)
{
    int i = (int) (intptr_t) arg;
    assert_int_equal(events_wait(&ev, EV_A, EVENTS_ANY, THREAD_FOREVER, &got[i]), MT_OK);
    test_note(i ? "W1 " : "W0 ");
}

static void test_all_waits_for_every_bit_and_one_set_wakes_every_waiter(void **state)
{
    (void) state;
    test_thread(stacks[0], STACK, waits_all_ab, (void *) 0, 2, THREAD_START_NOW);
    test_thread(stacks[1], STACK, waits_any_a, (void *) 1, 1, THREAD_START_NOW);
    events_set(&ev, EV_B);
    assert_string_equal(test_trace(), ""); /* B alone satisfies neither */
    events_set(&ev, EV_A);
    /* Both saw A and B before the first one's consumption cleared them. */
    assert_string_equal(test_trace(), "W0 W1 ");
    assert_int_equal(got[0], EV_A | EV_B);
    assert_int_equal(got[1], EV_A | EV_B);
    assert_int_equal(events_get(&ev), 0);
}

static void isr_sets(void)
{
    test_note("isr ");
    events_set_isr(&ev, EV_A);
}

static void test_an_interrupt_set_wakes_at_its_exit(void **state)
{
    (void) state;
    test_thread(stacks[0], STACK, waits_any_a, (void *) 0, 2, THREAD_START_NOW);
    tport_irq_attach(0, isr_sets);
    test_note("raise ");
    tport_irq_raise(0);
    test_note("back ");
    assert_string_equal(test_trace(), "raise isr W0 back ");
}

static uint64_t waited;

static void waits_c_for_90(void *arg)
{
    (void) arg;
    uint64_t from = tport_time();
    result = events_wait(&ev, EV_C, EVENTS_ANY, 90, &got[0]);
    waited = tport_time() - from;
    sched_stop();
}

static void test_a_timed_wait_times_out_with_the_flags_of_then(void **state)
{
    (void) state;
    events_set(&ev, EV_B);
    test_thread(stacks[0], STACK, waits_c_for_90, NULL, 1, THREAD_START_NOW);
    sched_run();
    assert_int_equal(result, MT_ERR_TIMEOUT);
    assert_int_equal(waited, 90);
    assert_int_equal(got[0], EV_B);
    assert_null(ev.waiters);
}

static void test_refusals(void **state)
{
    (void) state;
    assert_int_equal(events_wait(&ev, 0, EVENTS_ANY, THREAD_NO_WAIT, NULL), MT_ERR_INVALID);
    assert_int_equal(events_wait(&ev, EV_A, 0x10, THREAD_NO_WAIT, NULL), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 2);
    assert_int_equal(events_wait(&ev, EV_A, EVENTS_ANY, 5, NULL), MT_ERR_STATE); /* boot code */
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_wait_without_blocking_when_satisfied, setup),
        cmocka_unit_test_setup(test_all_waits_for_every_bit_and_one_set_wakes_every_waiter, setup),
        cmocka_unit_test_setup(test_an_interrupt_set_wakes_at_its_exit, setup),
        cmocka_unit_test_setup(test_a_timed_wait_times_out_with_the_flags_of_then, setup),
        cmocka_unit_test_setup(test_refusals, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
