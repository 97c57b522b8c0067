/* SPDX-License-Identifier: MIT */
/*
 * A thread's send that runs at once: the kernel stack runs the handler for
 * the thread, which is blocked, the call's result in its own stack
 * (thread_call_on_k(), sched_k_call()). Whatever the handler does, the
 * thread carries on only after the call, told what a handler's send is
 * told for the same message: the handler wakes the caller's semaphore,
 * mails the caller's own task, wakes a thread above the caller, fails,
 * or kills itself; the payload is refused; the receiver is gone. After
 * each, a canary in the caller's stack where the call's frames were must
 * be intact. test_native_thread_call.c adds an interrupt between the
 * frames of the call.
 *
 * MOTET_TEST_KERNEL: threads thr_fifo thr_rr thr_mantis thr_retos thr_vop thr_vopd
 */
#include <string.h>

#include "mem_internal.h"
#include "test_support.h"

enum { PID_CALLER = 0x40, PID_RECEIVER, PID_TASK_SENDER, PID_OTHER };
enum {
    DO_PAYLOAD = PORT_0, /* a payload, which the sender must own */
    DO_FAIL,             /* the handler returns an error */
    DO_WAKE_CALLER,      /* posts the semaphore the caller waits on next */
    DO_MAIL_CALLER,      /* sends to the caller's own task: its mailbox */
    DO_WAKE_HIGHER,      /* wakes a thread above the caller and itself */
    DO_KILL_ITSELF,      /* kills itself: FINAL at its frame's pop */
};
enum { CANARY_BYTES = 32 };

static uint8_t caller_stack[THREAD_STACK_BYTES(0)];
static uint8_t higher_stack[THREAD_STACK_BYTES(0)];
static sem_t caller_sem, higher_go;
static unsigned runs[DO_KILL_ITSELF + 1], finals, higher_runs;
static mt_err_t results[8], task_results[2];
static unsigned canary_hits, mails, caller_steps;
static void *foreign;

static mt_err_t receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_FINAL) finals++;
    if (port < PORT_0 || port > DO_KILL_ITSELF) return MT_OK;
    runs[port]++;
    mt_err_t result = MT_OK;
    if (port == DO_FAIL) result = MT_ERR_INVALID;
    if (port == DO_WAKE_CALLER) (void) sem_post(&caller_sem);
    if (port == DO_MAIL_CALLER) (void) sched_send_to(PID_CALLER, PORT_0, NULL, 0, 0);
    if (port == DO_WAKE_HIGHER) (void) sem_post(&higher_go); /* runs it now, above us */
    if (port == DO_KILL_ITSELF) (void) sched_task_kill(PID_RECEIVER);
    return result;
}

/* A handler's sends of the same messages, for comparison. */
static mt_err_t task_sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    task_results[0] = sched_send_to(PID_RECEIVER, DO_FAIL, NULL, 0, 0);
    task_results[1] = sched_send_to(PID_RECEIVER, DO_PAYLOAD, foreign, 8, MSG_HEAP);
    return MT_OK;
}

static void higher_body(void *arg)
{
    (void) arg;
    for (;;) {
        (void) sem_wait(&higher_go);
        higher_runs++;
    }
}

static void yield_once(void)
{
    (void) thread_yield();
}

/* The send, then a look where its frames were while every other context
 * runs. */
static MT_NOINLINE mt_err_t send_and_look(mt_pid_t pid, mt_port_t port, void *data, uint16_t len,
                                          uint8_t flags)
{
    mt_err_t err = sched_send_to(pid, port, data, len, flags);
    canary_hits += test_canary_across(CANARY_BYTES, yield_once);
    return err;
}

static void caller_body(void *arg)
{
    (void) arg;
    results[0] = send_and_look(PID_RECEIVER, DO_FAIL, NULL, 0, 0);
    results[1] = send_and_look(PID_RECEIVER, DO_WAKE_CALLER, NULL, 0, 0);
    results[2] = sem_try_wait(&caller_sem); /* posted by the call, before it returned */
    results[3] = send_and_look(PID_RECEIVER, DO_MAIL_CALLER, NULL, 0, 0);
    if (thread_mail_count(thread_self()) == 1 && thread_receive()) mails++;
    results[4] = send_and_look(PID_RECEIVER, DO_WAKE_HIGHER, NULL, 0, 0);
    results[5] = send_and_look(PID_RECEIVER, DO_PAYLOAD, foreign, 8, MSG_HEAP);
    results[6] = send_and_look(PID_RECEIVER, DO_KILL_ITSELF, NULL, 0, 0);
    results[7] = send_and_look(PID_RECEIVER, DO_PAYLOAD, NULL, 0, 0); /* killed by now */
    caller_steps++;
    thread_exit();
}

static void test_a_threads_call_returns_once_done_told_what_a_handler_is(void **state)
{
    (void) state;
    memset(runs, 0, sizeof runs);
    finals = higher_runs = canary_hits = mails = caller_steps = 0;
    sem_init(&caller_sem, 0);
    sem_init(&higher_go, 0);
    test_task(PID_RECEIVER, 4, receiver);
    test_task(PID_TASK_SENDER, 2, task_sender);
    foreign = mem_alloc_owned(8, PID_OTHER); /* neither sender's */
    assert_non_null(foreign);

    /* The handler's sends first, while the receiver lives. */
    assert_int_equal(sched_send_to(PID_TASK_SENDER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(task_results[0], MT_OK); /* a handler's failure is not the sender's */
    assert_int_equal(task_results[1], MT_ERR_NOT_OWNER);
    assert_int_equal(runs[DO_FAIL], 1);
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 1);

    test_thread(higher_stack, sizeof higher_stack, higher_body, NULL, 5, THREAD_START_NOW);
    /* runs to its exit */
    test_bound_thread(PID_CALLER, caller_stack, sizeof caller_stack, caller_body, NULL, 3,
                      THREAD_START_NOW);
    assert_int_equal(caller_steps, 1);

    assert_int_equal(results[0], MT_OK); /* as the handler's send */
    assert_int_equal(runs[DO_FAIL], 2);
    assert_int_equal(results[1], MT_OK);
    assert_int_equal(results[2], MT_OK);
    assert_int_equal(results[3], MT_OK);
    assert_int_equal(mails, 1);
    assert_int_equal(results[4], MT_OK);
    assert_int_equal(higher_runs, 1);
    assert_int_equal(results[5], MT_ERR_NOT_OWNER); /* as the handler's send */
    assert_int_equal(mem_owner(foreign), PID_OTHER);
    assert_int_equal(runs[DO_PAYLOAD], 0);
    assert_int_equal(results[6], MT_OK);
    assert_int_equal(runs[DO_KILL_ITSELF], 1);
    assert_int_equal(finals, 1);
    assert_int_equal(results[7], MT_ERR_NO_TASK);
    assert_int_equal(canary_hits, 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_threads_call_returns_once_done_told_what_a_handler_is,
                               test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
