/* SPDX-License-Identifier: MIT */
/*
 * One INIT per task on every way a message travels: a send to PORT_INIT of
 * a task already initialised is refused with MT_ERR_STATE and logged,
 * whether it would have run at once or waited, by route or by pid, with or
 * without a payload, or posted by an interrupt (in the body's slot, queued
 * in the slot's block, or in a pool block); the handler never sees a
 * second PORT_INIT and nothing is queued or leaked. A route to PORT_INIT still carries a task's
 * first INIT. sched_task_init() from an interrupt body posts the INIT as
 * the interrupt's message: run at the exit, never inside the body; one it
 * cannot queue (no block, no heap for its data) is refused, logged, and
 * may come again.
 *
 * MOTET_TEST_KERNEL: default nothreads
 */
#include <string.h>

#include "sched_internal.h"
#include "test_support.h"

enum { PID_LOW = 0x30, PID_TARGET = 0x31, PID_HIGH = 0x32, PID_FRESH = 0x33 };

/* Output ports of the senders. */
enum { TO_INIT, TO_PORT_0, TO_FRESH_INIT };

static const route_t sender_routes[] = {
    [TO_INIT] = {PID_TARGET, PORT_INIT},
    [TO_PORT_0] = {PID_TARGET, PORT_0},
    [TO_FRESH_INIT] = {PID_FRESH, PORT_INIT},
};

static unsigned inits, received;
static uint8_t init_byte;

static mt_err_t target(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT) {
        inits++;
        init_byte = len ? ((const uint8_t *) data)[0] : 0;
    }
    if (port == PORT_0) received++;
    return MT_OK;
}

/* The results of every send to PORT_INIT a sender's handler tries. */
enum { N_TRIES = 6 };
static mt_err_t tried[N_TRIES];
static mt_err_t port_0_result;
static mt_err_t heap_free_result;

static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0 + 1) { /* the first INIT of FRESH, then a second */
        tried[0] = sched_signal(TO_FRESH_INIT);
        tried[1] = sched_signal(TO_FRESH_INIT);
        return MT_OK;
    }
    if (port != PORT_0) return MT_OK;
    tried[0] = sched_signal(TO_INIT);
    tried[1] = sched_send(TO_INIT, "ab", 2, 0);
    tried[2] = sched_signal_to(PID_TARGET, PORT_INIT);
    tried[3] = sched_send_to(PID_TARGET, PORT_INIT, "ab", 2, 0);
    tried[4] = sched_signal(TO_INIT); /* a second time: the route was never resolved */
    void *block = mem_alloc(4);
    assert_non_null(block);
    memset(block, 'h', 4);
    tried[5] = MOTET_HEAP_PAYLOADS ? sched_send(TO_INIT, block, 4, MSG_HEAP) : MT_ERR_STATE;
    heap_free_result = mem_free(block); /* the sender keeps it on error */
    port_0_result = sched_signal(TO_PORT_0);
    return MT_OK;
}

/* A relay passes the heap payload it was given, untaken, on to the
 * target's PORT_INIT. */
static mt_err_t relay_result;
static mt_err_t relay(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_0 + 2) relay_result = sched_send(TO_INIT, data, len, MSG_HEAP);
    return MT_OK;
}

/* The sender allocates a block and hands it to the relay. */
/* The feeder's one output port. */
enum { TO_RELAY };
static const route_t feeder_routes[] = {[TO_RELAY] = {PID_FRESH, PORT_0 + 2}};
static mt_err_t fed_result;
static mt_err_t feeder(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    void *block = mem_alloc(4);
    assert_non_null(block);
    memset(block, 'r', 4);
    fed_result = sched_send(TO_RELAY, block, 4, MSG_HEAP);
    return MT_OK;
}

static int setup(void **state)
{
    test_boot(state);
    inits = received = 0;
    init_byte = 0;
    memset(tried, 0, sizeof tried);
    port_0_result = heap_free_result = MT_ERR_INVALID;
    return 0;
}

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t h, bool routed)
{
    task_spec_t spec = {.pid = pid,
                        .prio = prio,
                        .handler = h,
                        .routes = routed ? sender_routes : NULL,
                        .n_routes =
                            routed ? (uint8_t) (sizeof sender_routes / sizeof *sender_routes) : 0};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, "i", 1), MT_OK);
    sched_run_pending();
}

/* The target initialised once, then `from` tries every send to its
 * PORT_INIT: each refused and logged, and the send to PORT_0 after them
 * delivered, nothing left queued or allocated. */
static void every_send_from(mt_pid_t from, mt_prio_t prio)
{
    make(PID_TARGET, 3, target, false);
    make(from, prio, sender, true);
    assert_int_equal(inits, 1);
    assert_int_equal(init_byte, 'i');
    mem_stats_t before, after;
    mem_get_stats(&before);
    test_count_logged_errors(MT_OK); /* drain */
    assert_int_equal(sched_signal_to(from, PORT_0), MT_OK);
    sched_run_pending();
    for (unsigned i = 0; i < N_TRIES; i++) assert_int_equal(tried[i], MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), MOTET_HEAP_PAYLOADS ? 6 : 5);
    assert_int_equal(heap_free_result, MT_OK);
    assert_int_equal(port_0_result, MT_OK);
    assert_int_equal(inits, 1);
    assert_int_equal(init_byte, 'i');
    assert_int_equal(received, 1);
    assert_int_equal(sched_queued_count(), 0);
    mem_get_stats(&after);
    assert_int_equal(after.alloc_count, before.alloc_count);
}

/* A less important sender: every send would run the target at once. */
static void test_init_to_an_initialised_task_is_refused_where_it_would_run_at_once(void **state)
{
    (void) state;
    every_send_from(PID_LOW, 1);
}

/* A more important sender: every send would wait in the queue. */
static void test_init_to_an_initialised_task_is_refused_where_it_would_wait(void **state)
{
    (void) state;
    every_send_from(PID_HIGH, 5);
}

/* From no handler at all (boot code), by pid. */
static void test_init_by_pid_from_boot_code_is_refused(void **state)
{
    (void) state;
    make(PID_TARGET, 3, target, false);
    test_count_logged_errors(MT_OK); /* drain */
    assert_int_equal(sched_signal_to(PID_TARGET, PORT_INIT), MT_ERR_STATE);
    assert_int_equal(sched_send_to(PID_TARGET, PORT_INIT, "x", 1, 0), MT_ERR_STATE);
    assert_int_equal(sched_task_init(PID_TARGET, NULL, 0), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 3);
    sched_run_pending();
    assert_int_equal(inits, 1);
    assert_int_equal(sched_queued_count(), 0);
}

/* An interrupt's posts: the first bare one would wait in the slot for the
 * exit, the second (the slot taken by a PORT_0 post) in a pool block, the
 * one with a payload the general way. */
static mt_err_t isr_results[4];

static void isr_posts_init(void)
{
    isr_results[0] = sched_post_isr(PID_TARGET, PORT_INIT, NULL, 0, 0);
    isr_results[1] = sched_post_isr(PID_TARGET, PORT_0, NULL, 0, 0);
    isr_results[2] = sched_post_isr(PID_TARGET, PORT_INIT, NULL, 0, 0);
    isr_results[3] = sched_post_isr(PID_TARGET, PORT_INIT, "x", 1, 0);
}

static void test_init_posted_by_an_interrupt_to_an_initialised_task_is_refused(void **state)
{
    (void) state;
    make(PID_TARGET, 3, target, false);
    test_count_logged_errors(MT_OK); /* drain */
    tport_irq_attach(0, isr_posts_init);
    tport_irq_raise(0);
    sched_run_pending();
    assert_int_equal(isr_results[0], MT_ERR_STATE);
    assert_int_equal(isr_results[1], MT_OK);
    assert_int_equal(isr_results[2], MT_ERR_STATE);
    assert_int_equal(isr_results[3], MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 3);
    assert_int_equal(inits, 1);
    assert_int_equal(received, 1);
    /* Outside an interrupt body the bare post would take the slot's block. */
    assert_int_equal(sched_post_isr(PID_TARGET, PORT_INIT, NULL, 0, 0), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    sched_run_pending();
    assert_int_equal(inits, 1);
    assert_int_equal(sched_queued_count(), 0);
}

/* sched_task_init() from an interrupt body posts the INIT as the
 * interrupt's message (rule 3): never run in the body, even for a task
 * that outranks everything; at the exit, with its data copied (the body's
 * buffer is gone by then). */
static mt_err_t isr_init_result;
static bool isr_body_done, init_ran_in_body;

static mt_err_t init_checks_context(void *state, mt_port_t port, void *data, uint16_t len)
{
    if (port == PORT_INIT) init_ran_in_body = port_in_isr() || !isr_body_done;
    return target(state, port, data, len);
}

/* Static, so that its overwrite after the call is a store the compiler
 * keeps: a buffer on the body's stack, dead after it, may never be
 * overwritten at all, and the check of the copy would pass uncopied. */
static uint8_t isr_buffer[1];

static void isr_inits_target(void)
{
    isr_buffer[0] = 'z';
    isr_init_result = sched_task_init(PID_TARGET, isr_buffer, sizeof isr_buffer);
    isr_buffer[0] = 0; /* the body's buffer gone: the INIT must have a copy */
    isr_body_done = true;
}

static void test_init_from_an_interrupt_body_runs_at_its_exit(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID_TARGET, .prio = 6, .handler = init_checks_context};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    isr_body_done = init_ran_in_body = false;
    isr_init_result = MT_ERR_INVALID;
    tport_irq_attach(0, isr_inits_target);
    tport_irq_raise(0);
    assert_int_equal(isr_init_result, MT_OK);
    assert_int_equal(inits, 1); /* at the exit: strictly above the floor */
    assert_false(init_ran_in_body);
    assert_int_equal(init_byte, 'z');
    /* Its one INIT: a second, from a body or not, is refused. */
    tport_irq_raise(0);
    assert_int_equal(isr_init_result, MT_ERR_STATE);
    sched_run_pending();
    assert_int_equal(inits, 1);
    assert_int_equal(sched_queued_count(), 0);
}

/* sched_task_init() from an interrupt body whose INIT cannot be queued:
 * with the pool empty it is refused with MT_ERR_QUEUE_FULL, with the heap
 * full (a payload beyond a block's) with MT_ERR_NO_MEM, each logged; the
 * task's one INIT is not spent, and a later one from a body runs. */
static msg_t *pool_held[MOTET_MAX_QUEUED_MSGS];
static uint8_t isr_payload[64];

static void isr_inits_target_with_payload(void)
{
    isr_init_result = sched_task_init(PID_TARGET, isr_payload, sizeof isr_payload);
}

static void make_target_above_everything(void)
{
    task_spec_t spec = {.pid = PID_TARGET, .prio = 6, .handler = target};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    isr_init_result = MT_ERR_INVALID;
    test_count_logged_errors(MT_OK); /* drain */
}

static void test_init_from_a_body_with_the_pool_empty_is_refused_and_can_come_again(void **state)
{
    (void) state;
    make_target_above_everything();
    uint8_t n = 0;
    while (sched_msg_spare()) pool_held[n++] = sched_msg_alloc();
    tport_irq_attach(0, isr_inits_target);
    tport_irq_raise(0);
    assert_int_equal(isr_init_result, MT_ERR_QUEUE_FULL);
    assert_int_equal(test_count_logged_errors(MT_ERR_QUEUE_FULL), 1);
    while (n) sched_msg_free(pool_held[--n]);
    sched_run_pending();
    assert_int_equal(inits, 0);
    tport_irq_raise(0); /* the pool has blocks again */
    assert_int_equal(isr_init_result, MT_OK);
    assert_int_equal(inits, 1);
    assert_int_equal(init_byte, 'z');
    assert_int_equal(sched_queued_count(), 0);
}

static void test_init_from_a_body_with_the_heap_full_is_refused_and_can_come_again(void **state)
{
    (void) state;
    if (!MOTET_HEAP_PAYLOADS) return; /* no payload beyond a block's */
    make_target_above_everything();
    isr_payload[0] = 'h';
    mem_stats_t st;
    mem_get_stats(&st);
    void *hog = mem_alloc(st.largest_free - 16);
    assert_non_null(hog);
    tport_irq_attach(0, isr_inits_target_with_payload);
    tport_irq_raise(0);
    assert_int_equal(isr_init_result, MT_ERR_NO_MEM);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_MEM), 1);
    sched_run_pending();
    assert_int_equal(inits, 0);
    mem_free(hog);
    tport_irq_raise(0);
    assert_int_equal(isr_init_result, MT_OK);
    assert_int_equal(inits, 1);
    assert_int_equal(init_byte, 'h');
    assert_int_equal(sched_queued_count(), 0);
}

/* A route to PORT_INIT of a task not yet initialised carries its one INIT;
 * the next send along it is refused like any second one. */
static void test_a_route_to_port_init_carries_the_first_init_only(void **state)
{
    (void) state;
    make(PID_TARGET, 3, target, false);
    make(PID_LOW, 1, sender, true);
    task_spec_t spec = {.pid = PID_FRESH, .prio = 2, .handler = target};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    inits = 0;
    test_count_logged_errors(MT_OK); /* drain */
    /* LOW's handler sends along its route twice: FRESH, more important,
     * runs its INIT at once, and the second is refused. */
    assert_int_equal(sched_signal_to(PID_LOW, PORT_0 + 1), MT_OK);
    sched_run_pending();
    assert_int_equal(tried[0], MT_OK);
    assert_int_equal(tried[1], MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    assert_int_equal(inits, 1);
    assert_int_equal(sched_queued_count(), 0);
    /* FRESH is open: a message to an application port runs it. */
    assert_int_equal(sched_signal_to(PID_FRESH, PORT_0), MT_OK);
    assert_int_equal(received, 1);
}

/* A relay's refused INIT of the payload it was given gives the payload
 * back to its frame: freed at the relay's return, whether the target
 * would have run at once or the send would have waited. */
static void relayed_payload_refused(mt_prio_t relay_prio)
{
    if (!MOTET_HEAP_PAYLOADS) return;
    make(PID_TARGET, 3, target, false);
    task_spec_t relay_spec = {.pid = PID_FRESH,
                              .prio = relay_prio,
                              .handler = relay,
                              .routes = sender_routes,
                              .n_routes = (uint8_t) (sizeof sender_routes / sizeof *sender_routes)};
    assert_int_equal(sched_task_create(&relay_spec), MT_OK);
    assert_int_equal(sched_task_init(PID_FRESH, "i", 1), MT_OK);
    task_spec_t feeder_spec = {
        .pid = PID_LOW, .prio = 0, .handler = feeder, .routes = feeder_routes, .n_routes = 1};
    assert_int_equal(sched_task_create(&feeder_spec), MT_OK);
    assert_int_equal(sched_task_init(PID_LOW, "i", 1), MT_OK);
    sched_run_pending();
    mem_stats_t before, after;
    mem_get_stats(&before);
    test_count_logged_errors(MT_OK); /* drain */
    relay_result = fed_result = MT_ERR_INVALID;
    assert_int_equal(sched_signal_to(PID_LOW, PORT_0), MT_OK);
    sched_run_pending();
    assert_int_equal(fed_result, MT_OK);
    assert_int_equal(relay_result, MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    assert_int_equal(inits, 1);
    assert_int_equal(sched_queued_count(), 0);
    mem_get_stats(&after);
    assert_int_equal(after.alloc_count, before.alloc_count);
}

static void test_a_relayed_payload_refused_where_it_would_wait_is_freed(void **state)
{
    (void) state;
    relayed_payload_refused(5);
}

static void test_a_relayed_payload_refused_where_it_would_run_at_once_is_freed(void **state)
{
    (void) state;
    relayed_payload_refused(2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(
            test_init_to_an_initialised_task_is_refused_where_it_would_run_at_once, setup),
        cmocka_unit_test_setup(test_init_to_an_initialised_task_is_refused_where_it_would_wait,
                               setup),
        cmocka_unit_test_setup(test_init_by_pid_from_boot_code_is_refused, setup),
        cmocka_unit_test_setup(test_init_posted_by_an_interrupt_to_an_initialised_task_is_refused,
                               setup),
        cmocka_unit_test_setup(test_init_from_an_interrupt_body_runs_at_its_exit, setup),
        cmocka_unit_test_setup(
            test_init_from_a_body_with_the_pool_empty_is_refused_and_can_come_again, setup),
        cmocka_unit_test_setup(
            test_init_from_a_body_with_the_heap_full_is_refused_and_can_come_again, setup),
        cmocka_unit_test_setup(test_a_route_to_port_init_carries_the_first_init_only, setup),
        cmocka_unit_test_setup(test_a_relayed_payload_refused_where_it_would_wait_is_freed, setup),
        cmocka_unit_test_setup(test_a_relayed_payload_refused_where_it_would_run_at_once_is_freed,
                               setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
