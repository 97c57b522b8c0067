/* SPDX-License-Identifier: MIT */
/*
 * A send and a kill racing on the native port. A send looks its destination
 * up, and an interrupt that comes before it acts on it may run, at its exit,
 * a handler that kills the destination, and even creates another task in
 * the freed control block. The send must then fail with MT_ERR_NO_TASK and
 * leave its heap payload with the sender, never deliver to the newcomer nor
 * touch the freed block. A send run at once holds the lookup's critical
 * section until its frame is pushed, and a small queued send until its
 * message is queued, and so come before the kill instead.
 *
 * How the interrupt is made to come exactly there: an interrupt already
 * marked pending (port_native_irq_pending) while interrupts are on is taken
 * at the next port_irq_restore() that turns them on, which is the one
 * closing the send's lookup.
 *
 * MOTET_TEST_KERNEL: default
 */
#include <stdatomic.h>

#include "native.h"
#include "sched_internal.h"
#include "test_support.h"

enum { PID_SENDER = 0x20, PID_VICTIM = 0x21, PID_KILLER = 0x22, PID_NEWCOMER = 0x23 };
enum { PORT_SEND_BORROWED = PORT_0, PORT_SEND_HEAP, PORT_SEND_COPIED };

static unsigned victim_got, newcomer_got;
static mt_err_t send_err;
static void *heap_block;
static bool replace_victim;

static mt_err_t victim(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port >= PORT_0) victim_got++;
    return MT_OK;
}

static mt_err_t newcomer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port >= PORT_0) newcomer_got++;
    return MT_OK;
}

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t handler)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

static mt_err_t killer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    assert_int_equal(sched_task_kill(PID_VICTIM), MT_OK);
    if (replace_victim) make(PID_NEWCOMER, 1, newcomer);
    return MT_OK;
}

static void isr_wakes_killer(void)
{
    assert_int_equal(sched_post_isr(PID_KILLER, PORT_0, NULL, 0, 0), MT_OK);
}

static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port < PORT_0) return MT_OK;
    atomic_fetch_or(&port_native_irq_pending, 1u << 0); /* taken at the next unmask */
    if (port == PORT_SEND_HEAP) {
        heap_block = mem_alloc(8);
        assert_non_null(heap_block);
        send_err = sched_send_to(PID_VICTIM, PORT_0, heap_block, 8, MSG_HEAP);
    } else if (port == PORT_SEND_COPIED) {
        static uint8_t larger_than_a_block_holds[16];
        send_err = sched_send_to(PID_VICTIM, PORT_0, larger_than_a_block_holds,
                                 sizeof larger_than_a_block_holds, 0);
    } else {
        send_err = sched_send_to(PID_VICTIM, PORT_0, NULL, 0, 0);
    }
    return MT_OK;
}

static void run(mt_prio_t victim_prio, mt_port_t how, bool replace)
{
    make(PID_SENDER, 2, sender);
    make(PID_VICTIM, victim_prio, victim);
    make(PID_KILLER, 5, killer);
    port_native_irq_attach(0, isr_wakes_killer);
    replace_victim = replace;
    victim_got = newcomer_got = 0;
    heap_block = NULL;
    assert_int_equal(sched_send_to(PID_SENDER, how, NULL, 0, 0), MT_OK);
    sched_run_pending();
}

static void test_a_queued_send_to_a_task_killed_and_replaced_meanwhile_fails(void **state)
{
    (void) state;
    /* Below the sender, with a payload copied to the heap: the general
     * path, which queues after the lookup's critical section. */
    run(1, PORT_SEND_COPIED, true);
    assert_int_equal(send_err, MT_ERR_NO_TASK);
    assert_int_equal(victim_got, 0);
    assert_int_equal(newcomer_got, 0); /* the message was for the victim's pid */
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 1);
}

static void test_a_small_queued_send_is_queued_before_a_kill_at_its_lookups_end(void **state)
{
    (void) state;
    /* Below the sender, no payload: the fast path finds it cannot run at
     * once and queues the message in its lookup's critical section; the
     * interrupt taken when that closes kills the victim, which purges the
     * message, and puts the newcomer in its control block, which must not
     * get it. */
    run(1, PORT_SEND_BORROWED, true);
    assert_int_equal(send_err, MT_OK);
    assert_int_equal(victim_got, 0);
    assert_null(sched_find_task(PID_VICTIM));
    assert_int_equal(newcomer_got, 0);
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_msg_spare(), MOTET_MAX_QUEUED_MSGS); /* the block came back */
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 0);
}

static void test_an_immediate_send_runs_before_a_kill_that_comes_during_it(void **state)
{
    (void) state;
    /* Above the sender: looked up and pushed in one critical section, so
     * the interrupt comes only once the victim is on the stack, and the
     * kill waits for its handler to return. */
    run(3, PORT_SEND_BORROWED, true);
    assert_int_equal(send_err, MT_OK);
    assert_int_equal(victim_got, 1);
    assert_null(sched_find_task(PID_VICTIM));
    assert_int_equal(newcomer_got, 0);
}

static void test_a_heap_payload_to_a_task_killed_meanwhile_stays_the_senders(void **state)
{
    (void) state;
    run(1, PORT_SEND_HEAP, false);
    assert_int_equal(send_err, MT_ERR_NO_TASK);
    assert_int_equal(victim_got, 0);
    assert_true(mem_is_heap(heap_block)); /* not freed with the victim */
    assert_int_equal(mem_free(heap_block), MT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_queued_send_to_a_task_killed_and_replaced_meanwhile_fails,
                               test_boot),
        cmocka_unit_test_setup(test_a_small_queued_send_is_queued_before_a_kill_at_its_lookups_end,
                               test_boot),
        cmocka_unit_test_setup(test_an_immediate_send_runs_before_a_kill_that_comes_during_it,
                               test_boot),
        cmocka_unit_test_setup(test_a_heap_payload_to_a_task_killed_meanwhile_stays_the_senders,
                               test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
