/* SPDX-License-Identifier: MIT */
/*
 * The order among equals once a thread's call has returned. The caller
 * (3) sends to a task above it, which the kernel stack runs for it while
 * it is blocked (WAIT_K_CALL). Inside the call, a thread of the caller's
 * own level runs on a level it inherited (5, from a thread waiting for a
 * mutex it holds), gives that level back by unlocking, and is preempted
 * there: by the waiter it hands the mutex to, then by the call, which
 * started first at its level. When the call returns, the caller goes
 * first and that thread behind it: the caller was the level's running
 * thread when it sent (the call is its own work, done at its level), the
 * other came back to the level only meanwhile (docs/threads.md says why).
 * Under FIFO no thread runs inside the call and the caller runs on
 * anyway; the order is the same.
 *
 * MOTET_TEST_KERNEL: threads thr_fifo thr_rr thr_mantis thr_retos thr_vop thr_vopd
 */
#include "motet/mutex.h"
#include "test_support.h"

enum { PID_RECEIVER = 0x30 };

static uint8_t caller_stack[THREAD_STACK_BYTES(0)];
static uint8_t equal_stack[THREAD_STACK_BYTES(0)];
static uint8_t waiter_stack[THREAD_STACK_BYTES(0)];
static sem_t equal_go;
static mutex_t lock;
static mt_err_t caller_err;
static unsigned receiver_runs;

/* FIFO runs each thread to completion: no thread runs inside the call. */
#define CALL_PREEMPTED (MOTET_THREAD_POLICY != MOTET_POLICY_FIFO)

static mt_err_t receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) {
        receiver_runs++;
        test_note("r");
        (void) sem_post(&equal_go); /* the equal thread, at 5 by now */
    }
    return MT_OK;
}

/* Holds the lock, waits to be let go, then gives the lock (and the level
 * it inherited) back. */
static void equal_body(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&lock, THREAD_FOREVER), MT_OK);
    assert_int_equal(sem_wait(&equal_go), MT_OK);
    test_note("E<");
    assert_int_equal(mutex_unlock(&lock), MT_OK); /* back to 3: the waiter runs */
    test_note("E>");
    thread_exit();
}

/* Raises the lock's holder to its own level while it waits for it. */
static void waiter_body(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&lock, THREAD_FOREVER), MT_OK);
    test_note("W");
    assert_int_equal(mutex_unlock(&lock), MT_OK);
    thread_exit();
}

static void caller_body(void *arg)
{
    (void) arg;
    test_note("C<");
    caller_err = MT_ERR_INVALID; /* the send must say MT_OK itself */
    caller_err = sched_send_to(PID_RECEIVER, PORT_0, NULL, 0, 0);
    test_note("C>");
    thread_exit();
}

static void
test_an_equal_that_gave_its_level_back_inside_the_call_goes_behind_the_caller(void **state)
{
    (void) state;
    receiver_runs = 0;
    sem_init(&equal_go, 0);
    mutex_init(&lock);
    test_task(PID_RECEIVER, 4, receiver);
    thread_t *equal =
        test_thread(equal_stack, sizeof equal_stack, equal_body, NULL, 3, THREAD_START_NOW);
    test_thread(waiter_stack, sizeof waiter_stack, waiter_body, NULL, 5, THREAD_START_NOW);
    assert_int_equal(thread_prio(equal), 5); /* inherited from the waiter */
    /* Everything runs before the creation returns to the boot code. */
    test_thread(caller_stack, sizeof caller_stack, caller_body, NULL, 3, THREAD_START_NOW);
    assert_int_equal(caller_err, MT_OK);
    assert_int_equal(receiver_runs, 1);
    if (CALL_PREEMPTED)
        assert_string_equal(test_trace(), "C<rE<WC>E>");
    else
        assert_string_equal(test_trace(), "C<rC>E<E>W");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(
            test_an_equal_that_gave_its_level_back_inside_the_call_goes_behind_the_caller,
            test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
