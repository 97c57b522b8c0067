/* SPDX-License-Identifier: MIT */
/*
 * Message queues (msgq.h): items in order, copied; a receiver waiting on
 * an empty queue gets an interrupt's item at that interrupt's exit; a
 * sender waiting on a full queue has its item moved in by the receive that
 * makes room; timed receives and sends time out at their tick; a message
 * task posts to a queue a thread reads, and that thread sends to a task;
 * and the refusals: a full queue from an interrupt (MT_ERR_FULL, logged),
 * a wait from code that cannot block (MT_ERR_STATE, logged), a bad queue.
 *
 * MOTET_TEST_KERNEL: threads
 */
#include <stdio.h>
#include <string.h>

#include "test_support.h"

#define STACK THREAD_STACK_BYTES(0)
#define DEPTH 3
#define PID_H 0x41

typedef struct item {
    uint16_t n;
    char tag[8];
} item_t;

static uint8_t stacks[2][STACK];
static uint8_t buf[DEPTH * sizeof(item_t)];
static msgq_t q;
static mt_err_t result;

static int setup(void **state)
{
    test_boot(state);
    assert_int_equal(msgq_init(&q, buf, sizeof(item_t), DEPTH), MT_OK);
    result = MT_ERR_COUNT;
    return 0;
}

static item_t make(uint16_t n)
{
    item_t it = {.n = n};
    snprintf(it.tag, sizeof it.tag, "i%u", (unsigned) n);
    return it;
}

static void note_item(const item_t *it)
{
    char s[12];
    snprintf(s, sizeof s, "%s ", it->tag);
    test_note(s);
}

static void test_items_come_out_in_order_and_a_full_queue_refuses(void **state)
{
    (void) state;
    for (uint16_t n = 1; n <= DEPTH; n++) {
        item_t it = make(n);
        assert_int_equal(msgq_send(&q, &it, THREAD_NO_WAIT), MT_OK);
        it.n = 99; /* copied: the queue does not see this */
    }
    item_t extra = make(9);
    assert_int_equal(msgq_send(&q, &extra, THREAD_NO_WAIT), MT_ERR_FULL);
    assert_int_equal(msgq_count(&q), DEPTH);
    item_t out;
    for (uint16_t n = 1; n <= DEPTH; n++) {
        assert_int_equal(msgq_receive(&q, &out, THREAD_NO_WAIT), MT_OK);
        assert_int_equal(out.n, n);
    }
    assert_int_equal(msgq_receive(&q, &out, THREAD_NO_WAIT), MT_ERR_TIMEOUT);
    assert_int_equal(test_count_logged_errors(MT_ERR_FULL), 0); /* a try is no fault */
}

static void receives_forever(void *arg)
{
    (void) arg;
    item_t it;
    for (;;) {
        assert_int_equal(msgq_receive(&q, &it, THREAD_FOREVER), MT_OK);
        note_item(&it);
    }
}

static uint16_t isr_n;

static void isr_sends(void)
{
    item_t it = make(isr_n);
    test_note("isr ");
    result = msgq_send_isr(&q, &it);
}

static void test_an_interrupt_wakes_a_waiting_receiver_at_its_exit(void **state)
{
    (void) state;
    test_thread(stacks[0], STACK, receives_forever, NULL, 2, THREAD_START_NOW);
    tport_irq_attach(0, isr_sends);
    isr_n = 7;
    test_note("raise ");
    tport_irq_raise(0);
    test_note("back ");
    assert_int_equal(result, MT_OK);
    assert_string_equal(test_trace(), "raise isr i7 back ");
    assert_int_equal(msgq_count(&q), 0); /* handed over, never queued */
}

static void test_a_full_queue_refuses_an_interrupt_and_logs_it(void **state)
{
    (void) state;
    tport_irq_attach(0, isr_sends);
    for (isr_n = 1; isr_n <= DEPTH; isr_n++) {
        tport_irq_raise(0);
        assert_int_equal(result, MT_OK);
    }
    tport_irq_raise(0);
    assert_int_equal(result, MT_ERR_FULL);
    assert_int_equal(test_count_logged_errors(MT_ERR_FULL), 1);
    item_t out;
    assert_int_equal(msgq_receive(&q, &out, THREAD_NO_WAIT), MT_OK);
    assert_int_equal(out.n, 1); /* the refused item did not displace one */
}

static void sends_two(void *arg)
{
    (void) arg;
    for (uint16_t n = 10; n < 12; n++) {
        item_t it = make(n);
        assert_int_equal(msgq_send(&q, &it, THREAD_FOREVER), MT_OK);
        note_item(&it);
    }
}

static void test_a_waiting_sender_is_moved_in_by_the_receive(void **state)
{
    (void) state;
    for (uint16_t n = 1; n <= DEPTH; n++) {
        item_t it = make(n);
        assert_int_equal(msgq_send(&q, &it, THREAD_NO_WAIT), MT_OK);
    }
    test_thread(stacks[0], STACK, sends_two, NULL, 2, THREAD_START_NOW); /* blocks on i10 */
    item_t out;
    char s[64] = "";
    while (msgq_receive(&q, &out, THREAD_NO_WAIT) == MT_OK) {
        char one[8];
        snprintf(one, sizeof one, "%u,", (unsigned) out.n);
        strcat(s, one);
    }
    /* Each receive made room for the waiting sender's item at once. */
    assert_string_equal(s, "1,2,3,10,11,");
    assert_string_equal(test_trace(), "i10 i11 ");
}

static uint64_t waited;

static void receives_for_150(void *arg)
{
    (void) arg;
    item_t it;
    uint64_t from = tport_time();
    result = msgq_receive(&q, &it, 150);
    waited = tport_time() - from;
    sched_stop();
}

static void test_a_timed_receive_times_out_at_its_tick(void **state)
{
    (void) state;
    test_thread(stacks[0], STACK, receives_for_150, NULL, 1, THREAD_START_NOW);
    sched_run();
    assert_int_equal(result, MT_ERR_TIMEOUT);
    assert_int_equal(waited, 150);
    assert_null(q.waiters);
}

static void sends_for_80(void *arg)
{
    (void) arg;
    item_t it = make(5);
    uint64_t from = tport_time();
    result = msgq_send(&q, &it, 80);
    waited = tport_time() - from;
    sched_stop();
}

static void test_a_timed_send_to_a_full_queue_times_out(void **state)
{
    (void) state;
    for (uint16_t n = 1; n <= DEPTH; n++) {
        item_t it = make(n);
        assert_int_equal(msgq_send(&q, &it, THREAD_NO_WAIT), MT_OK);
    }
    test_thread(stacks[0], STACK, sends_for_80, NULL, 1, THREAD_START_NOW);
    sched_run();
    assert_int_equal(result, MT_ERR_TIMEOUT);
    assert_int_equal(waited, 80);
    assert_int_equal(msgq_count(&q), DEPTH);
}

/* A handler posts to the queue; the thread reading it answers the task. */
static mt_err_t handler(void *st, mt_port_t port, void *data, uint16_t len)
{
    (void) st;
    (void) len;
    if (port == PORT_0) { /* from the boot code: pass it to the thread */
        item_t it = make(*(uint8_t *) data);
        test_note("H-post ");
        return msgq_send(&q, &it, THREAD_NO_WAIT);
    }
    if (port == PORT_0 + 1) test_note("H-answer ");
    return MT_OK;
}

static void reads_and_answers(void *arg)
{
    (void) arg;
    item_t it;
    assert_int_equal(msgq_receive(&q, &it, THREAD_FOREVER), MT_OK);
    note_item(&it);
    assert_int_equal(sched_send_to(PID_H, PORT_0 + 1, NULL, 0, 0), MT_OK);
    test_note("T-end ");
}

static void test_a_task_posts_to_a_queue_and_a_thread_sends_to_a_task(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID_H, .prio = 3, .handler = handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_H, NULL, 0), MT_OK);
    test_thread(stacks[0], STACK, reads_and_answers, NULL, 2, THREAD_START_NOW);
    uint8_t n = 4;
    assert_int_equal(sched_send_to(PID_H, PORT_0, &n, 1, 0), MT_OK);
    /* The handler (level 3) finishes first; the thread (2) then reads, and
     * its send to the level-3 task runs at once on the kernel stack. */
    assert_string_equal(test_trace(), "H-post i4 H-answer T-end ");
}

static void test_waits_that_cannot_block_are_refused(void **state)
{
    (void) state;
    item_t it = make(1);
    assert_int_equal(msgq_receive(&q, &it, 10), MT_ERR_STATE); /* boot code */
    for (uint16_t n = 0; n < DEPTH; n++) assert_int_equal(msgq_send(&q, &it, 10), MT_OK);
    assert_int_equal(msgq_send(&q, &it, 10), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 2);
    msgq_t bad;
    assert_int_equal(msgq_init(&bad, buf, 0, 4), MT_ERR_INVALID);
    assert_int_equal(msgq_init(&bad, buf, 4, 0), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_items_come_out_in_order_and_a_full_queue_refuses, setup),
        cmocka_unit_test_setup(test_an_interrupt_wakes_a_waiting_receiver_at_its_exit, setup),
        cmocka_unit_test_setup(test_a_full_queue_refuses_an_interrupt_and_logs_it, setup),
        cmocka_unit_test_setup(test_a_waiting_sender_is_moved_in_by_the_receive, setup),
        cmocka_unit_test_setup(test_a_timed_receive_times_out_at_its_tick, setup),
        cmocka_unit_test_setup(test_a_timed_send_to_a_full_queue_times_out, setup),
        cmocka_unit_test_setup(test_a_task_posts_to_a_queue_and_a_thread_sends_to_a_task, setup),
        cmocka_unit_test_setup(test_waits_that_cannot_block_are_refused, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
