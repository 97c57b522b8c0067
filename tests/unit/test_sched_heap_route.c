/* SPDX-License-Identifier: MIT */
/*
 * A heap payload sent along a route (sched_send() with MSG_HEAP, in line:
 * sched_send_heap()) to a task that runs at once takes its own way (send.c,
 * send_heap_along()): the
 * block becomes the kernel's under the lock of the gate test, before the
 * frame's push. Its rules are those of every other way (docs/architecture.md,
 * "Who owns a message and its payload"): the receiver may take it (zero
 * copy), the kernel frees it otherwise, the sender keeps it on every error,
 * nothing leaks, nothing is freed twice. Without the start map the O(1)
 * check never succeeds and every such send goes the general way: the same
 * results.
 *
 * MOTET_TEST_KERNEL: default nothreads nostartmap nolog
 */
#include <string.h>

#include "test_support.h"

enum { PID_OTHER = 0x20, PID_LOW, PID_SENDER, PID_RELAY, PID_RECEIVER, PID_TAKER };
/* The sender's routes. */
enum { OUT_RECEIVER, OUT_LOW, OUT_RELAY };
/* A sender's own block run at once is one RUN record (the fast way) with
 * the start map; without it the general way's SEND and START. A payload
 * passed on untaken needs no map: one RUN either way. */
#define OWN_BLOCK_RUNS (MOTET_MEM_START_MAP ? 1u : 0u)
/* What the sender does, by the port it is sent to. */
enum {
    DO_RESOLVE = PORT_0, /* a signal along every route: resolved for the fast path */
    DO_SEND_OWN,         /* its own new block to the receiver */
    DO_SEND_OTHERS,      /* another task's block */
    DO_SEND_STACK,       /* a pointer that is no heap block */
    DO_SEND_FREED,       /* a block it has freed already */
    DO_SEND_EMPTY,       /* its own block, length 0 */
    DO_SEND_LOW,         /* its own block to a task below it: queued */
    DO_SEND_RELAY,       /* its own block to the relay, which passes it on */
    DO_SEND_NULL,        /* MSG_HEAP with no block but a length */
    DO_SEND_BAD_FLAG,    /* its own block, MSG_HEAP and a flag no sender may give */
    DO_SEND_NO_ROUTE,    /* its own block along a route it has not got */
    DO_BORROWED_WAY,     /* its own block, MSG_HEAP, by sched_send_borrowed() */
    DO_HEAP_WAY_LENT,    /* its own block without MSG_HEAP, by sched_send_heap() */
};
/* What the receiver does with a payload. */
enum { RX_TAKE, RX_LEAVE, RX_FREE };

static void *others_block, *sent, *seen, *taken;
static mt_pid_t owner_seen;
static uint16_t len_seen;
static unsigned receiver_runs;
static uint8_t receiver_does;
static mt_err_t send_result, free_result, relay_result;
static uint16_t relay_adds; /* bytes the relay says are in what it passes on, beyond its length */

static mt_err_t other(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_INIT) others_block = mem_alloc(16);
    return MT_OK;
}

/* The receiver at once, the task below the sender and the relay's taker. */
static mt_err_t receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_0 || (!data && !len)) return MT_OK; /* INIT, a resolving signal */
    receiver_runs++;
    seen = data;
    len_seen = len;
    owner_seen = data ? mem_owner(data) : MT_PID_NONE;
    if (receiver_does == RX_TAKE) taken = sched_take(data, len);
    if (receiver_does == RX_FREE) free_result = mem_free(data);
    return MT_OK;
}

/* Passes on along its route what it was given, without taking it. */
static mt_err_t relay(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_0) return MT_OK;
    if (!data) return sched_signal(0); /* resolves the route */
    relay_result = sched_send(0, data, (uint16_t) (len + relay_adds), MSG_HEAP);
    return MT_OK;
}

static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    uint8_t on_stack[8] = {0};
    switch (port) {
    case DO_RESOLVE:
        for (uint8_t out = OUT_RECEIVER; out <= OUT_RELAY; out++) sched_signal(out);
        return MT_OK;
    case DO_SEND_OWN:
        sent = mem_alloc(24);
        memset(sent, 0x5a, 24);
        send_result = sched_send(OUT_RECEIVER, sent, 24, MSG_HEAP);
        return MT_OK;
    case DO_SEND_OTHERS:
        send_result = sched_send(OUT_RECEIVER, others_block, 16, MSG_HEAP);
        return MT_OK;
    case DO_SEND_STACK:
        send_result = sched_send(OUT_RECEIVER, on_stack, sizeof on_stack, MSG_HEAP);
        return MT_OK;
    case DO_SEND_FREED:
        sent = mem_alloc(24);
        assert_int_equal(mem_free(sent), MT_OK);
        send_result = sched_send(OUT_RECEIVER, sent, 24, MSG_HEAP);
        return MT_OK;
    case DO_SEND_EMPTY:
        sent = mem_alloc(24);
        send_result = sched_send(OUT_RECEIVER, sent, 0, MSG_HEAP);
        return MT_OK;
    case DO_SEND_LOW:
        sent = mem_alloc(24);
        send_result = sched_send(OUT_LOW, sent, 24, MSG_HEAP);
        return MT_OK;
    case DO_SEND_RELAY:
        sent = mem_alloc(24);
        memset(sent, 0xa5, 24);
        send_result = sched_send(OUT_RELAY, sent, 24, MSG_HEAP);
        return MT_OK;
    case DO_SEND_NULL:
        send_result = sched_send(OUT_RECEIVER, NULL, 24, MSG_HEAP);
        return MT_OK;
    case DO_SEND_BAD_FLAG:
        sent = mem_alloc(24);
        send_result = sched_send(OUT_RECEIVER, sent, 24, MSG_HEAP | 0x02u);
        return MT_OK;
    case DO_SEND_NO_ROUTE:
        sent = mem_alloc(24);
        send_result = sched_send(OUT_RELAY + 1, sent, 24, MSG_HEAP);
        return MT_OK;
    case DO_BORROWED_WAY:
        sent = mem_alloc(24);
        send_result = sched_send_borrowed(OUT_RECEIVER, sent, 24, MSG_HEAP);
        return MT_OK;
    case DO_HEAP_WAY_LENT:
        sent = mem_alloc(24);
        send_result = sched_send_heap(OUT_RECEIVER, sent, 24, 0);
        return MT_OK;
    default:
        return MT_OK;
    }
}

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t h, const route_t *routes,
                 uint8_t n_routes)
{
    task_spec_t spec = {
        .pid = pid, .prio = prio, .handler = h, .routes = routes, .n_routes = n_routes};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

/* What the heap held before a test's send: the other task's block only. */
static uint16_t heap_before;

static uint16_t heap_in_use(void)
{
    mem_stats_t st;
    mem_get_stats(&st);
    return st.in_use;
}

/* Nothing leaked, nothing freed twice: the heap as before the send, its
 * blocks and free list consistent, no double free logged (drains the log). */
static void assert_heap_as_before(void)
{
    assert_int_equal(heap_in_use(), heap_before);
    assert_true(mem_consistent());
    assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 0);
}

static int setup(void **state)
{
    test_boot(state);
    others_block = sent = seen = taken = NULL;
    owner_seen = MT_PID_NONE;
    len_seen = 0;
    receiver_runs = 0;
    relay_adds = 0;
    receiver_does = RX_TAKE;
    send_result = free_result = relay_result = MT_ERR_COUNT;
    static const route_t sender_routes[] = {
        {.pid = PID_RECEIVER, .port = PORT_0},
        {.pid = PID_LOW, .port = PORT_0},
        {.pid = PID_RELAY, .port = PORT_0},
    };
    static const route_t relay_routes[] = {{.pid = PID_TAKER, .port = PORT_0}};
    make(PID_OTHER, 1, other, NULL, 0);
    make(PID_LOW, 1, receiver, NULL, 0);
    make(PID_SENDER, 2, sender, sender_routes, 3);
    make(PID_RELAY, 3, relay, relay_routes, 1);
    make(PID_RECEIVER, 3, receiver, NULL, 0);
    make(PID_TAKER, 4, receiver, NULL, 0);
    /* Routes resolve on first use: the sends below take the fast path. */
    assert_int_equal(sched_signal_to(PID_SENDER, DO_RESOLVE), MT_OK);
    assert_int_equal(sched_signal_to(PID_RELAY, PORT_0), MT_OK);
    sched_run_pending();
    heap_before = heap_in_use();
    return 0;
}

/* Send `what` through the sender; the log drained first, so that what is
 * counted afterwards is this send's. */
static void sender_does(uint8_t what)
{
    log_record_t rec[8];
    while (log_drain(rec, 8)) {
    }
    assert_int_equal(sched_signal_to(PID_SENDER, what), MT_OK);
    sched_run_pending();
}

/* The receiver ran once with the sender's block, which was the kernel's
 * while its frame held it. */
static void assert_ran_at_once_with_sent(void)
{
    assert_int_equal(receiver_runs, 1);
    assert_ptr_equal(seen, sent);
    assert_int_equal(len_seen, 24);
    assert_int_equal(owner_seen, MEM_OWNER_KERNEL);
}

static void test_a_taken_block_is_the_receivers_without_a_copy(void **state)
{
    (void) state;
    sender_does(DO_SEND_OWN);
    assert_int_equal(send_result, MT_OK);
    assert_ran_at_once_with_sent();
    assert_ptr_equal(taken, sent);
    assert_int_equal(mem_owner(taken), PID_RECEIVER);
    assert_int_equal(((uint8_t *) taken)[23], 0x5a);
    if (MOTET_EVENT_LOG) { /* the sender's own RUN, then the heap send's */
        mt_pid_t pid;
        uint16_t arg;
        assert_int_equal(test_logged(EV_RUN, &pid, &arg), 1 + OWN_BLOCK_RUNS);
        if (OWN_BLOCK_RUNS) {
            assert_int_equal(pid, PID_RECEIVER);
            assert_int_equal(arg, PID_SENDER << 8 | PORT_0);
        }
    }
    assert_int_equal(mem_free(taken), MT_OK); /* outside a handler: the kernel's right */
    assert_heap_as_before();
}

static void test_a_block_left_untaken_is_freed_once_after_the_handler(void **state)
{
    (void) state;
    receiver_does = RX_LEAVE;
    sender_does(DO_SEND_OWN);
    assert_int_equal(send_result, MT_OK);
    assert_ran_at_once_with_sent();
    assert_false(mem_is_heap(sent));
    assert_heap_as_before();
}

static void test_the_receiver_may_not_free_a_block_it_did_not_take(void **state)
{
    (void) state;
    receiver_does = RX_FREE;
    sender_does(DO_SEND_OWN);
    assert_int_equal(send_result, MT_OK);
    assert_ran_at_once_with_sent();
    assert_int_equal(free_result, MT_ERR_NOT_OWNER);
    assert_false(mem_is_heap(sent)); /* the kernel's free, after the handler */
    assert_heap_as_before();
}

/* A refused send: the receiver did not run, nothing was freed. */
static void assert_refused(mt_err_t err)
{
    assert_int_equal(send_result, err);
    assert_int_equal(receiver_runs, 0);
    if (MOTET_EVENT_LOG) assert_int_equal(test_count_logged_errors(err), 1);
}

static void test_another_tasks_block_is_refused_and_stays_its(void **state)
{
    (void) state;
    sender_does(DO_SEND_OTHERS);
    assert_refused(MT_ERR_NOT_OWNER);
    assert_true(mem_is_heap(others_block));
    assert_int_equal(mem_owner(others_block), PID_OTHER);
    assert_heap_as_before();
}

static void test_a_pointer_that_is_no_block_is_refused(void **state)
{
    (void) state;
    sender_does(DO_SEND_STACK);
    assert_refused(MT_ERR_BAD_POINTER);
    assert_heap_as_before();
}

static void test_a_freed_block_is_refused(void **state)
{
    (void) state;
    sender_does(DO_SEND_FREED);
    assert_refused(MT_ERR_BAD_POINTER);
    assert_heap_as_before();
}

static void test_an_empty_block_is_freed_and_the_receiver_gets_nothing(void **state)
{
    (void) state;
    sender_does(DO_SEND_EMPTY);
    assert_int_equal(send_result, MT_OK);
    assert_false(mem_is_heap(sent));
    assert_heap_as_before();
}

static void test_a_block_to_a_task_below_waits_and_is_taken_when_it_runs(void **state)
{
    (void) state;
    sender_does(DO_SEND_LOW);
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(receiver_runs, 1);
    assert_ptr_equal(taken, sent);
    assert_int_equal(mem_owner(taken), PID_LOW);
    assert_int_equal(mem_free(taken), MT_OK);
    assert_heap_as_before();
}

static void test_a_block_passed_on_untaken_along_a_route_ends_with_its_taker(void **state)
{
    (void) state;
    sender_does(DO_SEND_RELAY);
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(relay_result, MT_OK);
    assert_int_equal(receiver_runs, 1);
    assert_ptr_equal(taken, sent); /* zero copy all the way */
    assert_int_equal(owner_seen, MEM_OWNER_KERNEL);
    assert_int_equal(mem_owner(taken), PID_TAKER);
    assert_int_equal(((uint8_t *) taken)[23], 0xa5);
    mt_pid_t pid;
    uint16_t arg;
    if (MOTET_EVENT_LOG) { /* the sender's own, the relay's, the taker's */
        assert_int_equal(test_logged(EV_RUN, &pid, &arg), 2 + OWN_BLOCK_RUNS);
        assert_int_equal(pid, PID_TAKER);
        assert_int_equal(arg, PID_RELAY << 8 | PORT_0);
    }
    assert_int_equal(mem_free(taken), MT_OK);
    assert_heap_as_before();
}

/* The payload the relay was given (24 bytes), passed on along its route
 * as 124: refused (MT_ERR_INVALID, logged), the taker does not run, and
 * the block is freed once the relay returns, as one not passed on. The
 * fast way once lent it with the longer length: the taker read and could
 * write past its block. */
static void test_a_payload_passed_on_longer_than_its_block_is_refused(void **state)
{
    (void) state;
    relay_adds = 100;
    sender_does(DO_SEND_RELAY);
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(relay_result, MT_ERR_INVALID);
    assert_int_equal(receiver_runs, 0);
    if (MOTET_EVENT_LOG) assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 1);
    assert_false(mem_is_heap(sent));
    assert_heap_as_before();
}

/* The sender's own block after a refused send: still its, unchanged. */
static void assert_kept_by_sender(void)
{
    assert_true(mem_is_heap(sent));
    assert_int_equal(mem_owner(sent), PID_SENDER);
    assert_int_equal(mem_free(sent), MT_OK);
    assert_heap_as_before();
}

static void test_a_heap_send_without_a_block_is_refused(void **state)
{
    (void) state;
    sender_does(DO_SEND_NULL);
    assert_refused(MT_ERR_INVALID);
    assert_heap_as_before();
}

static void test_a_heap_send_with_a_flag_no_sender_may_give_is_refused(void **state)
{
    (void) state;
    sender_does(DO_SEND_BAD_FLAG);
    assert_refused(MT_ERR_INVALID);
    assert_kept_by_sender();
}

static void test_a_heap_send_along_a_route_not_there_is_refused(void **state)
{
    (void) state;
    sender_does(DO_SEND_NO_ROUTE);
    assert_refused(MT_ERR_NO_PORT);
    assert_kept_by_sender();
}

static void test_a_heap_send_outside_a_handler_is_refused(void **state)
{
    (void) state;
    log_record_t rec[8];
    while (log_drain(rec, 8)) {
    }
    sent = mem_alloc(24);
    send_result = sched_send(OUT_RECEIVER, sent, 24, MSG_HEAP);
    assert_refused(MT_ERR_STATE);
    assert_true(mem_is_heap(sent));
    assert_int_equal(mem_free(sent), MT_OK);
    assert_heap_as_before();
}

/* sched_send()'s two ways are each the whole send, whatever the flags:
 * the other kind of payload goes their general way, by the same rules. */
static void test_the_borrowed_way_hands_a_heap_payload_over_all_the_same(void **state)
{
    (void) state;
    sender_does(DO_BORROWED_WAY);
    assert_int_equal(send_result, MT_OK);
    assert_ran_at_once_with_sent();
    assert_ptr_equal(taken, sent);
    assert_int_equal(mem_owner(taken), PID_RECEIVER);
    assert_int_equal(mem_free(taken), MT_OK);
    assert_heap_as_before();
}

static void test_the_heap_way_lends_a_payload_without_the_flag(void **state)
{
    (void) state;
    receiver_does = RX_LEAVE;
    sender_does(DO_HEAP_WAY_LENT);
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(receiver_runs, 1);
    assert_ptr_equal(seen, sent); /* lent as it is: still the sender's */
    assert_int_equal(owner_seen, PID_SENDER);
    assert_kept_by_sender();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_taken_block_is_the_receivers_without_a_copy, setup),
        cmocka_unit_test_setup(test_a_block_left_untaken_is_freed_once_after_the_handler, setup),
        cmocka_unit_test_setup(test_the_receiver_may_not_free_a_block_it_did_not_take, setup),
        cmocka_unit_test_setup(test_another_tasks_block_is_refused_and_stays_its, setup),
        cmocka_unit_test_setup(test_a_pointer_that_is_no_block_is_refused, setup),
        cmocka_unit_test_setup(test_a_freed_block_is_refused, setup),
        cmocka_unit_test_setup(test_an_empty_block_is_freed_and_the_receiver_gets_nothing, setup),
        cmocka_unit_test_setup(test_a_block_to_a_task_below_waits_and_is_taken_when_it_runs, setup),
        cmocka_unit_test_setup(test_a_block_passed_on_untaken_along_a_route_ends_with_its_taker,
                               setup),
        cmocka_unit_test_setup(test_a_payload_passed_on_longer_than_its_block_is_refused, setup),
        cmocka_unit_test_setup(test_a_heap_send_without_a_block_is_refused, setup),
        cmocka_unit_test_setup(test_a_heap_send_with_a_flag_no_sender_may_give_is_refused, setup),
        cmocka_unit_test_setup(test_a_heap_send_along_a_route_not_there_is_refused, setup),
        cmocka_unit_test_setup(test_a_heap_send_outside_a_handler_is_refused, setup),
        cmocka_unit_test_setup(test_the_borrowed_way_hands_a_heap_payload_over_all_the_same, setup),
        cmocka_unit_test_setup(test_the_heap_way_lends_a_payload_without_the_flag, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
