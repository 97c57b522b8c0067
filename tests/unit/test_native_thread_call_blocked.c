/* SPDX-License-Identifier: MIT */
/*
 * While the kernel stack runs a thread's send for it (thread_call_on_k()),
 * the caller is blocked (WAIT_K_CALL), out of the ready structure, and not
 * merely outranked: nothing that changes its level or its suspension in
 * the meantime may hand it the CPU before the call has returned, which
 * then writes the result into the caller's stack.
 *
 * A line marked pending by the receiver's handler is taken at the end of
 * the receiver's frame's pop (test_native_thread_call.c says how); its
 * interrupt wakes a thread above the caller, which then runs between the
 * call's frames and acts on the caller; under FIFO (run to completion) it
 * runs only once the caller has blocked, as when the caller was running:
 * the caller keeps its place while K runs its call.
 *
 * MOTET_TEST_KERNEL: threads thr_fifo thr_rr thr_mantis thr_retos thr_vop thr_vopd
 */
#include <stdatomic.h>
#include <string.h>

#include "motet/mutex.h"
#include "native.h"
#include "test_support.h"

enum { PID_RECEIVER = 0x30 };
enum { LINE_WAKE = 0 };
enum { CANARY_BYTES = 512 };
enum { ACT_LOCK, ACT_LOCK_MIDDLE, ACT_SUSPEND, ACT_SUSPEND_RESUME };

static uint8_t caller_stack[THREAD_STACK_BYTES(0)];
static uint8_t higher_stack[THREAD_STACK_BYTES(0)];
static uint8_t middle_stack[THREAD_STACK_BYTES(0)];
static sem_t higher_go, caller_go, middle_go;
static mutex_t lock;
static thread_t *caller;
static int action;
static unsigned receiver_runs, higher_runs, middle_runs, seen_runs, canary_hit;
static mt_err_t caller_err;
static bool caller_returned, caller_done;
static bool higher_first; /* the higher thread ran before the caller's send returned */
static bool middle_first; /* the middle thread did */

/* FIFO runs each thread to completion: no thread runs inside the call. */
#define CALL_PREEMPTED (MOTET_THREAD_POLICY != MOTET_POLICY_FIFO)

static void wake_higher_isr(void)
{
    (void) sem_post_isr(&higher_go);
}

static mt_err_t receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) {
        receiver_runs++;
        atomic_fetch_or(&port_native_irq_pending, 1u << LINE_WAKE); /* at the pop */
    }
    return MT_OK;
}

/* Runs once, between the call's frames, then blocks again. */
static void higher_body(void *arg)
{
    (void) arg;
    for (;;) {
        sem_wait(&higher_go);
        higher_runs++;
        higher_first = !caller_returned;
        if (action == ACT_LOCK_MIDDLE) sem_post(&middle_go); /* 4: below the inherited 5 */
        if (action == ACT_LOCK ||
            action == ACT_LOCK_MIDDLE) { /* the caller holds it: it inherits 5 */
            assert_int_equal(mutex_lock(&lock, THREAD_FOREVER), MT_OK);
            assert_int_equal(mutex_unlock(&lock), MT_OK);
        } else {
            assert_int_equal(thread_suspend(caller), MT_OK);
            assert_true(thread_suspended(caller));
            if (action == ACT_SUSPEND_RESUME) assert_int_equal(thread_resume(caller), MT_OK);
        }
    }
}

/* Made ready by the higher thread, between the caller's own level and the
 * one it inherits: the caller's call, now at 5, goes first. */
static void middle_body(void *arg)
{
    (void) arg;
    for (;;) {
        sem_wait(&middle_go);
        middle_runs++;
        middle_first = !caller_returned;
    }
}

static void wait_for_release(void)
{
    (void) sem_wait(&caller_go);
}

static void caller_body(void *arg)
{
    (void) arg;
    caller = thread_self(); /* before test_thread() returns it: the case runs now */
    assert_int_equal(mutex_lock(&lock, THREAD_FOREVER), MT_OK);
    caller_err = MT_ERR_INVALID; /* the send must say MT_OK itself */
    caller_err = sched_send_to(PID_RECEIVER, PORT_0, NULL, 0, 0);
    seen_runs = receiver_runs;
    caller_returned = true;
    canary_hit = test_canary_across(CANARY_BYTES, wait_for_release);
    assert_int_equal(mutex_unlock(&lock), MT_OK);
    caller_done = true;
    thread_exit();
}

/* Caller 3 sends to the receiver at 4; the thread at 5 acts on it after
 * the receiver's pop. Returns with the call done and the caller released
 * from any suspension. */
static void run_case(int act)
{
    action = act;
    receiver_runs = higher_runs = middle_runs = seen_runs = canary_hit = 0;
    caller_returned = caller_done = higher_first = middle_first = false;
    sem_init(&higher_go, 0);
    sem_init(&caller_go, 0);
    sem_init(&middle_go, 0);
    mutex_init(&lock);
    tport_irq_attach(LINE_WAKE, wake_higher_isr);
    test_task(PID_RECEIVER, 4, receiver);
    test_thread(higher_stack, sizeof higher_stack, higher_body, NULL, 5, THREAD_START_NOW);
    if (act == ACT_LOCK_MIDDLE)
        test_thread(middle_stack, sizeof middle_stack, middle_body, NULL, 4, THREAD_START_NOW);
    caller = test_thread(caller_stack, sizeof caller_stack, caller_body, NULL, 3, THREAD_START_NOW);
    assert_int_equal(higher_runs, 1); /* the interrupt came, its thread ran */
    assert_int_equal(receiver_runs, 1);
    assert_int_equal(higher_first, CALL_PREEMPTED);
    if (act == ACT_SUSPEND) { /* the call is over, its caller still held */
        assert_int_equal(caller_returned, !CALL_PREEMPTED);
        assert_true(thread_suspended(caller));
        assert_int_equal(thread_resume(caller), MT_OK); /* it runs now, above boot code */
    }
    assert_true(caller_returned);
    assert_false(caller_done);
    assert_int_equal(sem_post(&caller_go), MT_OK); /* the caller checks, unlocks, exits */
    assert_true(caller_done);
    assert_int_equal(caller_err, MT_OK);
    assert_int_equal(seen_runs, 1); /* rule 1: done before the send returned */
    assert_int_equal(canary_hit, 0);
    if (act == ACT_LOCK_MIDDLE) {
        assert_int_equal(middle_runs, 1);
        assert_false(middle_first); /* no inversion: the raised caller's call first */
    }
}

static void test_a_caller_raised_by_inheritance_waits_for_its_call(void **state)
{
    (void) state;
    run_case(ACT_LOCK);
}

static void test_a_thread_below_an_inherited_level_waits_for_the_call(void **state)
{
    (void) state;
    run_case(ACT_LOCK_MIDDLE);
}

static void test_a_caller_suspended_during_its_call_stays_held_after_it(void **state)
{
    (void) state;
    run_case(ACT_SUSPEND);
}

static void test_a_caller_resumed_during_its_call_waits_for_it(void **state)
{
    (void) state;
    run_case(ACT_SUSPEND_RESUME);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_caller_raised_by_inheritance_waits_for_its_call, test_boot),
        cmocka_unit_test_setup(test_a_thread_below_an_inherited_level_waits_for_the_call,
                               test_boot),
        cmocka_unit_test_setup(test_a_caller_suspended_during_its_call_stays_held_after_it,
                               test_boot),
        cmocka_unit_test_setup(test_a_caller_resumed_during_its_call_waits_for_it, test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
