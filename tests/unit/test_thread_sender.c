/* SPDX-License-Identifier: MIT */
/*
 * A thread's send to a task at its own level runs at once (rule 1: equal
 * or higher), as a handler's does, and names the thread's bound task as
 * its sender, also while the drain that woke the thread holds a higher
 * level (the level of the handler it just ran, with no frame there): the
 * kernel stack runs the call at the thread's level, not the drain's. A
 * send that K ends up queueing (the receiver's gate closed between the
 * thread's check and K's) is test_native_thread_call.c's.
 *
 * MOTET_TEST_KERNEL: threads thr_fifo thr_rr thr_mantis thr_retos thr_vop thr_vopd
 */
#include "sched_internal.h"
#include "test_support.h"

enum { PID_THREAD = 0x40, PID_WAKER, PID_RECEIVER };

static uint8_t stack[THREAD_STACK_BYTES(0)];
static sem_t go;
static mt_pid_t seen_sender;
static unsigned receiver_runs;
static mt_err_t thread_send;
static unsigned runs_at_return; /* receiver_runs when the send returned */

static void thread_body(void *arg)
{
    (void) arg;
    sem_wait(&go);
    thread_send = sched_send_to(PID_RECEIVER, PORT_0, NULL, 0, 0);
    runs_at_return = receiver_runs;
    thread_exit();
}

static mt_err_t waker(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) sem_post(&go);
    return MT_OK;
}

static mt_err_t receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) {
        receiver_runs++;
        seen_sender = sched_sender();
    }
    return MT_OK;
}

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t h)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = h};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

/* The waker (5) wakes the thread (3) from an interrupt's message; the
 * thread sends to the receiver at receiver_prio. */
static void run_case(mt_prio_t receiver_prio)
{
    receiver_runs = 0;
    runs_at_return = 99;
    thread_send = MT_ERR_INVALID; /* the send must say MT_OK itself */
    seen_sender = MT_PID_NONE;
    sem_init(&go, 0);
    make(PID_WAKER, 5, waker);
    make(PID_RECEIVER, receiver_prio, receiver);
    thread_spec_t spec = {.entry = thread_body,
                          .stack = stack,
                          .stack_size = sizeof stack,
                          .prio = 3,
                          .pid = PID_THREAD};
    assert_int_equal(thread_create(&spec, NULL), MT_OK); /* runs, then waits on the semaphore */
    assert_int_equal(sched_post_isr(PID_WAKER, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    sched_run_pending();
    assert_int_equal(thread_send, MT_OK);
    assert_int_equal(receiver_runs, 1);
    assert_int_equal(seen_sender, PID_THREAD);
    assert_int_equal(runs_at_return, 1); /* run at once, before the send returned */
}

static void test_a_threads_send_to_an_equal_runs_at_once(void **state)
{
    (void) state;
    run_case(3);
}

static void test_a_threads_send_to_a_higher_task_runs_at_once(void **state)
{
    (void) state;
    run_case(4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_threads_send_to_an_equal_runs_at_once, test_boot),
        cmocka_unit_test_setup(test_a_threads_send_to_a_higher_task_runs_at_once, test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
