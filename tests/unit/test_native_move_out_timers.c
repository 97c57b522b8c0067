/* SPDX-License-Identifier: MIT */
/*
 * A task that leaves for another module (sched_mig_move_out()) and its
 * running timer, on the native port: an expiry that falls due as the move
 * leaves its critical section must find the timer stopped. The task is
 * off the table then, a remote block in its place: an expiry, which looks
 * a frozen task's pid up, finds that block and is refused (a false
 * MT_ERR_NO_ROUTE, its TIMER logged) and lost. Stopped in the critical
 * section that swaps the blocks, no expiry comes between; one that came
 * before the move is held with its messages and goes with it.
 *
 * The moment: the move's call to task_create_remote_migrating(), made
 * with interrupts off once the task left the table, comes here first
 * (MOTET_TEST_WRAP) and lets the clock run past the timer's deadline, so
 * that its compare interrupt is taken at the move's unlock.
 *
 * MOTET_TEST_WRAP: task_create_remote_migrating
 */
#include "migrate_internal.h"
#include "native.h"
#include "sched_internal.h"
#include "test_support.h"

enum { PID_MOVING = 0x20, NEW_MODULE = 3 };
enum { PERIOD_MS = 10 };

static unsigned timeouts, windows, remote_sends;
static bool window_armed;

mt_err_t __real_task_create_remote_migrating(mt_pid_t pid, mt_prio_t prio, mt_module_t module);

mt_err_t __wrap_task_create_remote_migrating(mt_pid_t pid, mt_prio_t prio, mt_module_t module)
{
    mt_err_t err = __real_task_create_remote_migrating(pid, prio, module);
    if (window_armed && pid == PID_MOVING) {
        window_armed = false;
        windows++;
        /* Interrupts are off: the compare is taken at the move's unlock. */
        tport_busy(TIMER_MS(3 * PERIOD_MS));
    }
    return err;
}

static mt_err_t moving(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_INIT) assert_int_equal(timer_start(0, TIMER_MS(PERIOD_MS), true), MT_OK);
    if (port == PORT_TIMEOUT0) timeouts++;
    return MT_OK;
}

static mt_err_t count_remote_send(mt_module_t module, const msg_t *msg, mt_prio_t prio)
{
    (void) module;
    (void) msg;
    (void) prio;
    remote_sends++;
    return MT_OK;
}

static int setup(void **state)
{
    test_boot(state);
    timeouts = windows = remote_sends = 0;
    window_armed = false;
    sched_set_remote_send(count_remote_send);
    return 0;
}

static void test_a_moving_tasks_timer_does_not_expire_into_its_move(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID_MOVING, .prio = 2, .handler = moving};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_MOVING, NULL, 0), MT_OK);
    sched_mig_freeze(sched_find_task(PID_MOVING));
    mt_pid_t pid;
    uint16_t arg;
    (void) test_logged(EV_TIMER, &pid, &arg); /* what came before the move */
    window_armed = true;
    msg_t *held = NULL;
    assert_int_equal(sched_mig_move_out(PID_MOVING, NEW_MODULE, &held), MT_OK);
    assert_int_equal(windows, 1);     /* the clock did run in the window */
    assert_null(held);                /* no expiry came while it was frozen */
    unsigned timers = 0, refused = 0; /* nor after it left */
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    for (unsigned i = 0; i < n; i++) {
        timers += rec[i].type == EV_TIMER;
        refused += rec[i].type == EV_ERROR && rec[i].arg == MT_ERR_NO_ROUTE;
    }
    assert_int_equal(timers, 0);
    assert_int_equal(refused, 0);
    uint32_t remaining;
    assert_false(timer_remaining(PID_MOVING, 0, &remaining));
    assert_int_equal(sched_queued_count(), 0);
    tport_busy(TIMER_MS(3 * PERIOD_MS)); /* no expiry comes later either */
    sched_run_pending();
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(timeouts, 0);
    assert_int_equal(remote_sends, 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 0);
    sched_set_remote_send(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_moving_tasks_timer_does_not_expire_into_its_move, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
