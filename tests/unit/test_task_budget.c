/* SPDX-License-Identifier: MIT */
/*
 * Run budgets (MOTET_TASK_BUDGET=1, timer_set_budget()): the compare
 * interrupt's check logs EV_BUDGET once when the task on top of the stack
 * has run past its budget, and never for a task within its budget or one
 * without a budget. Work is declared with tport_busy() in 1 ms steps, so
 * the check's interrupts fall inside the handler, as on a processor. The
 * work starts on a timer: the checks run while work is queued or running
 * at a compare interrupt (timer.c).
 *
 * MOTET_TEST_KERNEL: budget
 */
#include <string.h>

#include "test_support.h"

#define PID_LONG  0x20
#define PID_SHORT 0x21
#define PID_FREE  0x22

/* PORT_0: u32 milliseconds of work to do on the next tick (timer 0). */
static mt_err_t worker(void *state, mt_port_t port, void *data, uint16_t len)
{
    uint32_t *ms = state;
    if (port == PORT_0 && len == sizeof *ms) {
        memcpy(ms, data, sizeof *ms);
        return timer_start(0, 1, false);
    }
    if (port == PORT_TIMEOUT0)
        for (uint32_t i = 0; i < *ms; i++) tport_busy(TIMER_MS(1));
    return MT_OK;
}

static int setup(void **state)
{
    test_boot(state);
    for (mt_pid_t pid = PID_LONG; pid <= PID_FREE; pid++) {
        task_spec_t spec = {
            .pid = pid, .prio = 2, .handler = worker, .state_size = sizeof(uint32_t)};
        assert_int_equal(sched_task_create(&spec), MT_OK);
        assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
    }
    log_record_t sink[MOTET_LOG_ENTRIES];
    log_drain(sink, MOTET_LOG_ENTRIES);
    return 0;
}

static void work(mt_pid_t pid, uint32_t ms)
{
    assert_int_equal(sched_send_to(pid, PORT_0, &ms, sizeof ms, 0), MT_OK);
    sched_run_pending();
    tport_busy(TIMER_MS(1)); /* the tick: the handler runs as its interrupt exits */
}

static void test_task_past_its_budget_is_logged_once(void **state)
{
    (void) state;
    assert_int_equal(timer_set_budget(PID_LONG, TIMER_MS(5)), MT_OK);
    work(PID_LONG, 20);
    mt_pid_t pid = MT_PID_NONE;
    uint16_t ms = 0;
    assert_int_equal(test_logged(EV_BUDGET, &pid, &ms), 1);
    assert_int_equal(pid, PID_LONG);
    /* Seen between its budget and the budget plus two checks. */
    assert_true(ms >= 5 && ms <= 5 + 2 * MOTET_BUDGET_CHECK_US / 1000);
    /* A new run is a new chance to overrun. */
    work(PID_LONG, 20);
    assert_int_equal(test_logged(EV_BUDGET, &pid, &ms), 1);
}

static void test_task_within_its_budget_or_without_one_is_not_logged(void **state)
{
    (void) state;
    mt_pid_t pid;
    uint16_t ms;
    assert_int_equal(timer_set_budget(PID_SHORT, TIMER_MS(50)), MT_OK);
    work(PID_SHORT, 20);
    work(PID_FREE, 100); /* no budget */
    assert_int_equal(test_logged(EV_BUDGET, &pid, &ms), 0);
    /* Taken away: no more checks. */
    assert_int_equal(timer_set_budget(PID_SHORT, 0), MT_OK);
    work(PID_SHORT, 100);
    assert_int_equal(test_logged(EV_BUDGET, &pid, &ms), 0);
}

static void test_budgets_are_limited_and_checked(void **state)
{
    (void) state;
    assert_int_equal(timer_set_budget(MT_PID_NONE, TIMER_MS(1)), MT_ERR_INVALID);
    for (unsigned i = 0; i < MOTET_BUDGET_TASKS; i++)
        assert_int_equal(timer_set_budget((mt_pid_t) (0x30 + i), TIMER_MS(1)), MT_OK);
    assert_int_equal(timer_set_budget(0x2F, TIMER_MS(1)), MT_ERR_NO_SLAB);
    /* Changing an existing budget needs no new entry. */
    assert_int_equal(timer_set_budget(0x30, TIMER_MS(2)), MT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_task_past_its_budget_is_logged_once, setup),
        cmocka_unit_test_setup(test_task_within_its_budget_or_without_one_is_not_logged, setup),
        cmocka_unit_test_setup(test_budgets_are_limited_and_checked, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
