/* SPDX-License-Identifier: MIT */
/*
 * The frame push's debug assertion (dispatch_rules.h, frame_push_on()): a
 * task is on the stack at most once (rule 4), which every way in checks
 * before it pushes, so a second push is a kernel bug, not bad input. It
 * would not be undone by the pops either: each push closes the gate by
 * GATE_STACKED, and the task would keep an open gate afterwards. A debug
 * build catches it before anything changes.
 *
 * The push is in line, so this test compiles it here with the assertion
 * on whatever the kernel library's build type (release and benchmark
 * images have none), and routes a failure to the test framework's
 * mock_assert(), which expect_assert_failure() catches, on every port.
 */
#ifndef MOTET_DEBUG_ASSERTS
#define MOTET_DEBUG_ASSERTS 1
#endif
#define MT_DEBUG_ASSERT_FAILED(expr, file, line) mock_assert(0, expr, file, line)

#include "test_support.h"
/* After cmocka.h (test_support.h), which declares mock_assert(). */
#include "dispatch_rules.h"
#include "sched_internal.h"

enum { PID_TASK = 0x20, PID_OTHER = 0x21, PRIO_TASK = 2 };

static mt_err_t idle(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) port;
    (void) data;
    (void) len;
    return MT_OK;
}

static task_t *make(mt_pid_t pid)
{
    task_spec_t spec = {.pid = pid, .prio = PRIO_TASK, .handler = idle};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK); /* runs at once: initialised */
    task_t *t = sched_find_task(pid);
    assert_non_null(t);
    assert_int_equal(t->gate, PRIO_TASK); /* open */
    return t;
}

static void test_a_second_push_of_a_task_on_the_stack_fails_the_assertion(void **state)
{
    (void) state;
    task_t *t = make(PID_TASK);
    port_irq_state_t s = port_irq_save();
    frame_push(t, MT_PID_NONE);
    expect_assert_failure(frame_push(t, MT_PID_NONE));
    port_irq_restore(s);
    /* Caught before it changed anything: one frame, which one pop undoes. */
    assert_ptr_equal(sched.current, t);
    assert_ptr_equal(t->below, &task_none);
    assert_int_equal(sched_stack_depth(), 1);
    frame_cancel(t);
    assert_ptr_equal(sched.current, &task_none);
    assert_int_equal(sched_running_prio(), -1);
    assert_int_equal(t->gate, PRIO_TASK);
}

static void test_pushes_of_different_tasks_pass_it(void **state)
{
    (void) state;
    task_t *t = make(PID_TASK);
    task_t *other = make(PID_OTHER);
    port_irq_state_t s = port_irq_save();
    frame_push(t, MT_PID_NONE);
    frame_push(other, PID_TASK);
    port_irq_restore(s);
    assert_int_equal(sched_stack_depth(), 2);
    frame_cancel(other);
    frame_cancel(t);
    assert_int_equal(t->gate, PRIO_TASK);
    assert_int_equal(other->gate, PRIO_TASK);
    assert_int_equal(sched_stack_depth(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_second_push_of_a_task_on_the_stack_fails_the_assertion,
                               test_boot),
        cmocka_unit_test_setup(test_pushes_of_different_tasks_pass_it, test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
