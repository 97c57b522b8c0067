/* SPDX-License-Identifier: MIT */
/*
 * A task's end and its running timer, on the native port (whose clock a
 * test moves, taking the interrupts due then): an expiry that falls due
 * while the task's end frees its messages, after it left the task table,
 * must find the timer stopped. Otherwise the expiry, of a task whose INIT
 * failed or of a killed one, looks up a pid that is gone: a false
 * MT_ERR_NO_TASK, logged, and the expiry lost. (It is never queued to the
 * control block about to be freed: the end cleared TASK_INITIALISED first,
 * which sends an expiry to the lookup.)
 *
 * The moment: the kernel's calls to sched_msg_free() come here first
 * (MOTET_TEST_WRAP), and the first one for a message the ending task held,
 * made once the task has left the table, lets the clock run past the
 * timer's deadline with interrupts on, as a slow free would.
 *
 * MOTET_TEST_WRAP: sched_msg_free
 */
#include "native.h"
#include "sched_internal.h"
#include "test_support.h"

enum { PID_ENDING = 0x20 };
enum { PERIOD_MS = 10 };

static unsigned inits, finals, timeouts, after_final, frees_in_window;
static bool fail_init, window_armed;

void __real_sched_msg_free(msg_t *m);

void __wrap_sched_msg_free(msg_t *m)
{
    if (window_armed && m->dst == PID_ENDING && !sched_find_task(PID_ENDING)) {
        window_armed = false;
        frees_in_window++;
        tport_busy(TIMER_MS(3 * PERIOD_MS)); /* interrupts on: the compare is taken */
    }
    __real_sched_msg_free(m);
}

/* Its INIT starts a periodic timer and, if told to, then fails. On PORT_0
 * it asks for its own kill (it waits for the pop) and sends itself a
 * message, which the kill holds and its end frees. */
static mt_err_t ending(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (finals) after_final++;
    if (port == PORT_INIT) {
        inits++;
        assert_int_equal(timer_start(0, TIMER_MS(PERIOD_MS), true), MT_OK);
        return fail_init ? MT_ERR_INVALID : MT_OK;
    }
    if (port == PORT_FINAL) finals++;
    if (port == PORT_TIMEOUT0) timeouts++;
    if (port == PORT_0) {
        assert_int_equal(sched_task_kill(PID_ENDING), MT_OK);
        assert_int_equal(sched_send_to(PID_ENDING, PORT_0 + 1, NULL, 0, 0), MT_OK);
    }
    return MT_OK;
}

static int setup(void **state)
{
    test_boot(state);
    inits = finals = timeouts = after_final = frees_in_window = 0;
    fail_init = window_armed = false;
    return 0;
}

static void make_ending(void)
{
    task_spec_t spec = {.pid = PID_ENDING, .prio = 2, .handler = ending};
    assert_int_equal(sched_task_create(&spec), MT_OK);
}

/* What the end left: nothing of the task, nothing queued, no error. */
static void assert_ended_cleanly(void)
{
    assert_int_equal(frees_in_window, 1); /* the clock did run in the window */
    assert_false(sched_task_exists(PID_ENDING));
    uint32_t remaining;
    assert_false(timer_remaining(PID_ENDING, 0, &remaining));
    assert_int_equal(sched_queued_count(), 0);
    tport_busy(TIMER_MS(3 * PERIOD_MS)); /* no expiry comes later either */
    sched_run_pending();
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 0);
}

static void test_a_failed_inits_timer_does_not_expire_into_its_end(void **state)
{
    (void) state;
    make_ending();
    /* Held for it (rule 7): its end frees it, and the clock runs there. */
    assert_int_equal(sched_send_to(PID_ENDING, PORT_0 + 1, NULL, 0, 0), MT_OK);
    fail_init = true;
    window_armed = true;
    assert_int_equal(sched_task_init(PID_ENDING, NULL, 0), MT_OK);
    assert_int_equal(inits, 1);
    assert_int_equal(timeouts, 0);
    assert_ended_cleanly();
}

static void test_a_killed_tasks_timer_does_not_expire_into_its_end(void **state)
{
    (void) state;
    make_ending();
    assert_int_equal(sched_task_init(PID_ENDING, NULL, 0), MT_OK);
    window_armed = true;
    assert_int_equal(sched_send_to(PID_ENDING, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(finals, 1);
    assert_ended_cleanly();
    assert_int_equal(after_final, 0); /* nothing of it ran after its FINAL */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_failed_inits_timer_does_not_expire_into_its_end, setup),
        cmocka_unit_test_setup(test_a_killed_tasks_timer_does_not_expire_into_its_end, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
