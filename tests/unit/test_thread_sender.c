/* SPDX-License-Identifier: MIT */
/*
 * A thread's send to a task at its own level runs at once (rule 1: equal
 * or higher), as a handler's does, and names the thread's bound task as
 * its sender, also while the drain that woke the thread holds a higher
 * level (the level of the handler it just ran, with no frame there): the
 * kernel stack runs the call at the thread's level, not the drain's. A
 * send that K ends up queueing (the receiver's gate closed between the
 * thread's check and K's) is test_native_thread_call.c's. An unbound
 * thread's send names no sender: the application manager refuses it on
 * its bus ports, as anyone's but the bus's.
 *
 * MOTET_TEST_KERNEL: threads thr_fifo thr_rr thr_mantis thr_retos thr_vop thr_vopd
 */
#include "bus_internal.h"
#include "sched_internal.h"
#include "test_support.h"

enum { PID_THREAD = 0x40, PID_WAKER, PID_RECEIVER, PID_REMAKER };

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

/* The waker (5) wakes the thread (3) from an interrupt's message; the
 * thread sends to the receiver at receiver_prio. */
static void run_case(mt_prio_t receiver_prio)
{
    receiver_runs = 0;
    runs_at_return = 99;
    thread_send = MT_ERR_INVALID; /* the send must say MT_OK itself */
    seen_sender = MT_PID_NONE;
    sem_init(&go, 0);
    test_task(PID_WAKER, 5, waker);
    test_task(PID_RECEIVER, receiver_prio, receiver);
    /* runs, then waits on the semaphore */
    test_bound_thread(PID_THREAD, stack, sizeof stack, thread_body, NULL, 3, THREAD_START_NOW);
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

/* ---- a thread's message to the application manager's bus ports ---- */

static mt_err_t manager_send;

static void manager_body(void *arg)
{
    (void) arg;
    manager_send = sched_send_to(MT_PID_APPMGR, BUS_APPMGR_PORT_DESC, "bad", 3, 0);
    thread_exit();
}

/* An unbound thread's send names no sender, as the bus's posts to the
 * manager once did: on a port past PORT_0 (the bus's) the manager refuses
 * it (MT_ERR_NO_PORT, logged once) and its record is untouched (before:
 * taken as a description the bus had brought, and failed as malformed,
 * the record overwritten). */
static void test_an_unbound_threads_send_to_the_managers_bus_port_is_refused(void **state)
{
    (void) state;
    manager_send = MT_ERR_INVALID;
    appmgr_result_t before = *appmgr_last_result();
    test_count_logged_errors(MT_OK);
    test_thread(stack, sizeof stack, manager_body, NULL, 3, THREAD_START_NOW);
    sched_run_pending();
    sched_run_pending();
    assert_int_equal(manager_send, MT_OK);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 1);
    assert_memory_equal(appmgr_last_result(), &before, sizeof before);
}

/* ---- the receiver's gate closed between the thread's check and K's ----
 *
 * A thread's send that K ends up queueing names the thread's bound task
 * as its sender, as one run at once does. K runs the call at the
 * thread's level, so K's check finds what the thread's found unless the
 * receiver changed in between: here the thread sends with interrupts off
 * and a line raised, so the line is taken exactly where K turns them on
 * for the call (sched_k_call()), on every port. Its message runs a task
 * above that kills the receiver and makes its pid again, not yet
 * initialised, in the same block (the slab hands the freed block back
 * first): K's check finds it, still the pid's, not able to run, and
 * queues the message for it. */

enum { LINE_REMAKE = 0 };

static unsigned remakes;
static mt_err_t kill_err;
static bool remade, sending, remade_in_send;

static void post_remaker_isr(void)
{
    (void) sched_post_isr(PID_REMAKER, PORT_0, NULL, 0, 0);
}

static mt_err_t remaker(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) {
        remakes++;
        kill_err = sched_task_kill(PID_RECEIVER);
        task_spec_t spec = {.pid = PID_RECEIVER, .prio = 3, .handler = receiver};
        remade = sched_task_create(&spec) == MT_OK;
        remade_in_send = sending;
    }
    return MT_OK;
}

static void gated_body(void *arg)
{
    (void) arg;
    port_irq_state_t s = port_irq_save();
    tport_irq_raise(LINE_REMAKE); /* taken when interrupts are on again */
    sending = true;
    thread_send = sched_send_to(PID_RECEIVER, PORT_0, NULL, 0, 0);
    sending = false;
    port_irq_restore(s);
    runs_at_return = receiver_runs;
    thread_exit();
}

static void test_a_send_k_queues_names_the_thread(void **state)
{
    (void) state;
    receiver_runs = remakes = 0;
    kill_err = MT_ERR_INVALID;
    runs_at_return = 99;
    remade = sending = remade_in_send = false;
    seen_sender = MT_PID_NONE;
    thread_send = MT_ERR_INVALID; /* the send must say MT_OK itself */
    tport_irq_attach(LINE_REMAKE, post_remaker_isr);
    test_task(PID_RECEIVER, 3, receiver);
    const task_t *first = sched_find_task(PID_RECEIVER);
    test_task(PID_REMAKER, 6, remaker);
    /* At the receiver's level: the thread's check finds it can run. Runs
     * to its exit. */
    test_bound_thread(PID_THREAD, stack, sizeof stack, gated_body, NULL, 3, THREAD_START_NOW);
    assert_int_equal(remakes, 1);
    assert_int_equal(kill_err, MT_OK);
    assert_true(remade);
    assert_true(remade_in_send); /* not before the send: interrupts were off */
    assert_ptr_equal(sched_find_task(PID_RECEIVER),
                     first); /* the same block: K's check passed it */
    assert_int_equal(thread_send, MT_OK);
    assert_int_equal(runs_at_return, 0); /* queued, not run */
    assert_int_equal(receiver_runs, 0);
    assert_int_equal(sched_task_init(PID_RECEIVER, NULL, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(receiver_runs, 1);
    assert_int_equal(seen_sender, PID_THREAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_threads_send_to_an_equal_runs_at_once, test_boot),
        cmocka_unit_test_setup(test_a_threads_send_to_a_higher_task_runs_at_once, test_boot),
        cmocka_unit_test_setup(test_a_send_k_queues_names_the_thread, test_boot),
        cmocka_unit_test_setup(test_an_unbound_threads_send_to_the_managers_bus_port_is_refused,
                               test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
