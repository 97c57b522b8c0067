/* SPDX-License-Identifier: MIT */
/*
 * A thread's send that the kernel stack ends up queueing (the receiver
 * cannot run at once after all) names the thread's bound task as its
 * sender, as one run at once does.
 *
 * MOTET_TEST_KERNEL: threads
 */
#include "sched_internal.h"
#include "test_support.h"

enum { PID_THREAD = 0x40, PID_WAKER, PID_RECEIVER };

static uint8_t stack[THREAD_STACK_BYTES(0)];
static sem_t go;
static mt_pid_t seen_sender;
static unsigned receiver_runs;
static mt_err_t thread_send;

static void thread_body(void *arg)
{
    (void) arg;
    sem_wait(&go);
    thread_send = sched_send_to(PID_RECEIVER, PORT_0, NULL, 0, 0);
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

static void test_a_threads_send_queued_by_the_kernel_stack_names_the_thread(void **state)
{
    (void) state;
    sem_init(&go, 0);
    make(PID_WAKER, 5, waker);
    make(PID_RECEIVER, 4, receiver);
    thread_spec_t spec = {.entry = thread_body,
                          .stack = stack,
                          .stack_size = sizeof stack,
                          .prio = 3,
                          .pid = PID_THREAD};
    assert_int_equal(thread_create(&spec, NULL), MT_OK); /* runs, then waits on the semaphore */
    /* The waker (5) wakes the thread (3) from an interrupt's message: the
     * thread's send to the receiver (4) is handed to the kernel stack while
     * the drain holds the waker's level, so it is queued there. */
    assert_int_equal(sched_post_isr(PID_WAKER, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    sched_run_pending();
    assert_int_equal(thread_send, MT_OK);
    assert_int_equal(receiver_runs, 1);
    assert_int_equal(seen_sender, PID_THREAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_threads_send_queued_by_the_kernel_stack_names_the_thread,
                               test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
