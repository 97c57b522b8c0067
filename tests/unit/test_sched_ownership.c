/* SPDX-License-Identifier: MIT */
/*
 * A heap payload sent with MSG_HEAP must be the sender's own block, or the
 * payload its handler was given and passes on without taking it; nothing
 * else, on the path that runs the receiver at once as on the queued one.
 *
 * MOTET_TEST_KERNEL: default nothreads
 */
#include <string.h>

#include "motet/mcast.h"
#include "sched_internal.h"
#include "test_support.h"

enum { PID_SENDER = 0x20, PID_RELAY, PID_TAKER, PID_OTHER };
enum {
    SEND_OTHERS_EMPTY = PORT_0,
    SEND_OWN,
    SEND_OTHERS_QUEUED,
    SEND_SHORT_QUEUED,
    SEND_OTHERS_CAST,
    SEND_OWN_RELAYED_LONGER
};
enum { RELAY_LONGER_QUEUED = PORT_0 + 2 };
#define GROUP 3u

static void *others_block, *sent, *taken;
static mt_err_t send_result, relay_result;

static mt_err_t other(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_INIT) others_block = mem_alloc(16);
    return MT_OK;
}

static mt_err_t taker(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_0) taken = sched_take(data, len);
    return MT_OK;
}

/* Passes on what it was given without taking it. */
static mt_err_t relay(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_0) relay_result = sched_send_to(PID_TAKER, PORT_0, data, len, MSG_HEAP);
    if (port == RELAY_LONGER_QUEUED) /* queued: the other task is below it */
        relay_result = sched_send_to(PID_OTHER, PORT_0, data, (uint16_t) (len + 100u), MSG_HEAP);
    return MT_OK;
}

static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == SEND_OTHERS_EMPTY) /* at once: the relay outranks it */
        send_result = sched_send_to(PID_RELAY, PORT_0 + 1, others_block, 0, MSG_HEAP);
    if (port == SEND_OTHERS_QUEUED) /* queued: the other task is below it */
        send_result = sched_send_to(PID_OTHER, PORT_0, others_block, 16, MSG_HEAP);
    if (port == SEND_SHORT_QUEUED) { /* 100 bytes said to be in 8 */
        sent = mem_alloc(8);
        send_result = sched_send_to(PID_OTHER, PORT_0, sent, 100, MSG_HEAP);
    }
    if (port == SEND_OTHERS_CAST) /* to a group, the bus not started: delivered here */
        send_result = sched_send_to(MT_PID_MULTICAST, GROUP, others_block, 16, MSG_HEAP);
    if (port == SEND_OWN_RELAYED_LONGER) {
        sent = mem_alloc(24);
        send_result = sched_send_to(PID_RELAY, RELAY_LONGER_QUEUED, sent, 24, MSG_HEAP);
    }
    if (port == SEND_OWN) {
        sent = mem_alloc(24);
        memset(sent, 0x5a, 24);
        send_result = sched_send_to(PID_RELAY, PORT_0, sent, 24, MSG_HEAP);
    }
    return MT_OK;
}

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t h)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = h};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

static int setup(void **state)
{
    test_boot(state);
    others_block = sent = taken = NULL;
    send_result = relay_result = MT_ERR_COUNT;
    make(PID_OTHER, 1, other);
    make(PID_SENDER, 2, sender);
    make(PID_RELAY, 3, relay);
    make(PID_TAKER, 5, taker);
    return 0;
}

static void test_an_empty_heap_payload_of_another_task_is_refused(void **state)
{
    (void) state;
    assert_int_equal(mem_owner(others_block), PID_OTHER);
    assert_int_equal(sched_send_to(PID_SENDER, SEND_OTHERS_EMPTY, NULL, 0, 0), MT_OK);
    assert_int_equal(send_result, MT_ERR_NOT_OWNER);
    assert_true(mem_is_heap(others_block));
    assert_int_equal(mem_owner(others_block), PID_OTHER);
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 1);
}

static void test_a_queued_heap_payload_of_another_task_is_refused(void **state)
{
    (void) state;
    assert_int_equal(sched_send_to(PID_SENDER, SEND_OTHERS_QUEUED, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(send_result, MT_ERR_NOT_OWNER);
    assert_int_equal(mem_owner(others_block), PID_OTHER);
}

/* A heap payload that must wait, longer than its block: refused
 * (MT_ERR_INVALID, logged), the block still the sender's, nothing
 * queued. It was once queued as the kernel's, and what copies a queued
 * message (a migration forwarding it, a thread's mailbox) read past the
 * block. */
static void test_a_queued_heap_payload_longer_than_its_block_is_refused(void **state)
{
    (void) state;
    unsigned queued = sched_queued_count();
    assert_int_equal(sched_send_to(PID_SENDER, SEND_SHORT_QUEUED, NULL, 0, 0), MT_OK);
    assert_int_equal(send_result, MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 1);
    assert_int_equal(sched_queued_count(), queued);
    assert_int_equal(mem_owner(sent), PID_SENDER);
}

static void test_a_payload_passed_on_untaken_ends_with_its_last_taker(void **state)
{
    (void) state;
    assert_int_equal(sched_send_to(PID_SENDER, SEND_OWN, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(relay_result, MT_OK);
    assert_ptr_equal(taken, sent);   /* zero copy all the way */
    assert_true(mem_is_heap(taken)); /* not freed when the relay returned */
    assert_int_equal(mem_owner(taken), PID_TAKER);
    assert_int_equal(((uint8_t *) taken)[23], 0x5a);
    assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 0);
}

/* Another task's block to a group with no bus running (mcast_deliver()
 * copies it to each member here): refused (MT_ERR_NOT_OWNER, logged),
 * nothing delivered, the block its owner's still. */
static void test_another_tasks_block_to_a_group_is_refused(void **state)
{
    (void) state;
    assert_int_equal(mcast_join(GROUP, PID_TAKER, PORT_0), MT_OK);
    assert_int_equal(sched_send_to(PID_SENDER, SEND_OTHERS_CAST, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(send_result, MT_ERR_NOT_OWNER);
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 1);
    assert_null(taken);
    assert_true(mem_is_heap(others_block));
    assert_int_equal(mem_owner(others_block), PID_OTHER);
}

/* The payload a handler was given (24 bytes), passed on untaken as 124 to
 * a task that must wait: refused (MT_ERR_INVALID, logged), nothing
 * queued, and the payload freed once its frame ends, as one not passed
 * on. Its length was once not checked on this way. */
static void test_a_given_payload_passed_on_longer_than_its_block_is_refused(void **state)
{
    (void) state;
    mem_stats_t idle, after;
    mem_get_stats(&idle);
    unsigned queued = sched_queued_count();
    assert_int_equal(sched_send_to(PID_SENDER, SEND_OWN_RELAYED_LONGER, NULL, 0, 0), MT_OK);
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(relay_result, MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 1);
    assert_int_equal(sched_queued_count(), queued);
    sched_run_pending();
    mem_get_stats(&after);
    assert_int_equal(after.in_use, idle.in_use);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_an_empty_heap_payload_of_another_task_is_refused, setup),
        cmocka_unit_test_setup(test_a_queued_heap_payload_of_another_task_is_refused, setup),
        cmocka_unit_test_setup(test_a_queued_heap_payload_longer_than_its_block_is_refused, setup),
        cmocka_unit_test_setup(test_a_payload_passed_on_untaken_ends_with_its_last_taker, setup),
        cmocka_unit_test_setup(test_another_tasks_block_to_a_group_is_refused, setup),
        cmocka_unit_test_setup(test_a_given_payload_passed_on_longer_than_its_block_is_refused,
                               setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
