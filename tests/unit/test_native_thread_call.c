/* SPDX-License-Identifier: MIT */
/*
 * A thread's send that runs at once is a call the kernel stack runs for
 * the thread (thread_call_on_k()), whose result the thread's own stack
 * holds until the call returns. An interrupt that comes once the
 * receiver's frame is popped, but before the call has returned, must not
 * hand the CPU back to the caller: the caller would run on with its call
 * unfinished, and the call's end would then write its result into the
 * caller's stack, where the caller keeps other data by then. Here the
 * interrupt wakes a thread above the caller, which runs and blocks again;
 * the kernel stack must then finish the call, also inside sched_run()
 * with nothing else to do (the call is work: K is not idle), and only
 * then the caller carries on, its result right and a canary in its stack
 * intact.
 *
 * How the interrupt is made to come exactly there: the receiver's handler
 * marks a line pending (port_native_irq_pending) with interrupts on, and
 * the first port_irq_restore() that turns them on takes it, the one that
 * ends the frame's pop (or, with a kill, FINAL's pop).
 *
 * MOTET_TEST_KERNEL: threads thr_fifo thr_rr thr_mantis thr_retos thr_vop thr_vopd
 */
#include <stdatomic.h>
#include <string.h>

#include "native.h"
#include "test_support.h"

enum { PID_RECEIVER = 0x30, PID_KILLER, PID_CALLER };
enum { LINE_WAKE = 0, LINE_KILL };
enum { CANARY_BYTES = 512 };

static uint8_t caller_stack[THREAD_STACK_BYTES(0)];
static uint8_t higher_stack[THREAD_STACK_BYTES(0)];
static sem_t higher_go, caller_go;
static bool kill_itself, in_run;
static unsigned receiver_runs, finals, higher_runs;
static unsigned seen_runs; /* receiver_runs when the caller's send returned */
static mt_err_t caller_err;
static unsigned canary_hit; /* canary bytes changed while the caller slept */
static bool caller_done;

/* The next port_irq_restore() that turns interrupts on takes the line. */
static void mark_wake_pending(void)
{
    atomic_fetch_or(&port_native_irq_pending, 1u << LINE_WAKE);
}

static void wake_higher_isr(void)
{
    (void) sem_post_isr(&higher_go);
}

static mt_err_t receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_FINAL) {
        finals++;
        mark_wake_pending(); /* taken at the end of FINAL's pop */
    } else if (port == PORT_0) {
        receiver_runs++;
        if (kill_itself)
            assert_int_equal(sched_task_kill(PID_RECEIVER), MT_OK); /* at its frame's pop */
        else
            mark_wake_pending(); /* taken at the end of the frame's pop */
    }
    return MT_OK;
}

static void higher_body(void *arg)
{
    (void) arg;
    for (;;) {
        sem_wait(&higher_go);
        higher_runs++;
    }
}

/* A sleep inside sched_run(), else a wait until the test lets it go. */
static void wait_for_release(void)
{
    if (in_run)
        (void) thread_sleep(10);
    else
        (void) sem_wait(&caller_go);
}

static void caller_body(void *arg)
{
    (void) arg;
    caller_err = MT_ERR_INVALID; /* the send must say MT_OK itself */
    caller_err = sched_send_to(PID_RECEIVER, PORT_0, NULL, 0, 0);
    seen_runs = receiver_runs;
    canary_hit = test_canary_across(CANARY_BYTES, wait_for_release);
    caller_done = true;
    if (in_run) sched_stop();
    thread_exit();
}

static void run_case(bool kill, bool run)
{
    kill_itself = kill;
    in_run = run;
    receiver_runs = finals = higher_runs = seen_runs = canary_hit = 0;
    caller_done = false;
    sem_init(&higher_go, 0);
    sem_init(&caller_go, 0);
    tport_irq_attach(LINE_WAKE, wake_higher_isr);
    test_task(PID_RECEIVER, 4, receiver);
    /* Each runs as it is made (or both at sched_run()): the higher one
     * blocks first, then the caller sends. */
    uint8_t start = run ? THREAD_START_AT_RUN : THREAD_START_NOW;
    test_thread(higher_stack, sizeof higher_stack, higher_body, NULL, 5, start);
    test_thread(caller_stack, sizeof caller_stack, caller_body, NULL, 3, start);
    if (run) {
        sched_run();
    } else {
        assert_false(caller_done);
        assert_int_equal(sem_post(&caller_go), MT_OK); /* the caller runs and exits */
    }
    assert_true(caller_done);
    assert_int_equal(caller_err, MT_OK);
    /* Run at once: done before the send returned. */
    assert_int_equal(seen_runs, 1);
    assert_int_equal(finals, kill ? 1 : 0);
    assert_int_equal(higher_runs, 1); /* the interrupt came, its thread ran */
    assert_int_equal(canary_hit, 0);
}

static void test_an_interrupt_after_the_receivers_pop_waits_for_the_call(void **state)
{
    (void) state;
    run_case(false, false);
}

static void test_an_interrupt_after_a_killed_receivers_final_waits_for_the_call(void **state)
{
    (void) state;
    run_case(true, false);
}

static void test_in_sched_run_the_call_is_work_for_the_kernel_stack(void **state)
{
    (void) state;
    run_case(false, true);
}

static void test_in_sched_run_a_killed_receivers_call_is_work_too(void **state)
{
    (void) state;
    run_case(true, true);
}

/* ---- the receiver killed between the caller's lookup and K's check ---- */

static unsigned killer_runs;
static mt_err_t killer_err, racer_err;
static void *racer_block;
static mt_pid_t racer_owner;

static void post_killer_isr(void)
{
    (void) sched_post_isr(PID_KILLER, PORT_0, NULL, 0, 0);
}

static mt_err_t killer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) {
        killer_runs++;
        killer_err = sched_task_kill(PID_RECEIVER);
    }
    return MT_OK;
}

static void racer_body(void *arg)
{
    (void) arg;
    racer_block = mem_alloc(8); /* its bound task's */
    /* Taken when the send's lookup ends: the killer (above the caller)
     * runs at that interrupt's exit, before the send is handed to K. */
    atomic_fetch_or(&port_native_irq_pending, 1u << LINE_KILL);
    racer_err = sched_send_to(PID_RECEIVER, PORT_0, racer_block, 8, MSG_HEAP);
    racer_owner = mem_owner(racer_block);
    thread_exit();
}

static void test_a_receiver_killed_after_the_callers_lookup_is_no_task(void **state)
{
    (void) state;
    receiver_runs = finals = killer_runs = 0;
    kill_itself = false;
    tport_irq_attach(LINE_KILL, post_killer_isr);
    tport_irq_attach(LINE_WAKE, wake_higher_isr);
    sem_init(&higher_go, 0);
    test_task(PID_RECEIVER, 4, receiver);
    test_task(PID_KILLER, 6, killer);
    /* runs to its exit */
    test_bound_thread(PID_CALLER, caller_stack, sizeof caller_stack, racer_body, NULL, 3,
                      THREAD_START_NOW);
    assert_int_equal(killer_runs, 1);
    assert_int_equal(killer_err, MT_OK);
    assert_int_equal(finals, 1);
    assert_int_equal(receiver_runs, 0);
    assert_int_equal(racer_err, MT_ERR_NO_TASK); /* as a handler's send is told */
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 1);
    assert_int_equal(racer_owner, PID_CALLER); /* the sender kept its payload */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_an_interrupt_after_the_receivers_pop_waits_for_the_call,
                               test_boot),
        cmocka_unit_test_setup(test_an_interrupt_after_a_killed_receivers_final_waits_for_the_call,
                               test_boot),
        cmocka_unit_test_setup(test_in_sched_run_the_call_is_work_for_the_kernel_stack, test_boot),
        cmocka_unit_test_setup(test_in_sched_run_a_killed_receivers_call_is_work_too, test_boot),
        cmocka_unit_test_setup(test_a_receiver_killed_after_the_callers_lookup_is_no_task,
                               test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
