/* SPDX-License-Identifier: MIT */
/*
 * A heap payload sent to a task on another module (bus.c, send_in_place()):
 * when its block has room for the frame's header and CRC, the block itself
 * becomes the frame, with no second block of the payload's size; otherwise
 * the payload is copied into a frame, as before. Either way the receiver
 * gets the same frame, the sender's block is gone once the send succeeded,
 * and the heap is as before once the frame has ended. A send the queue has
 * no room for fails with the payload back in place and still the sender's.
 * The test plays the bus interface, as test_native_bus.c does.
 */
#include <string.h>

#include "mem_internal.h"
#include "native.h"
#include "test_support.h"

#define SELF      1u
#define MODULES   0x7u /* modules 0, 1, 2 */
#define SENDER    0x20u
#define REMOTE    0x30u /* a task on module 2 */
#define FRAME_CAP 256u

static uint8_t sent[MOTET_BUS_TX_QUEUE + 2][FRAME_CAP];
static uint16_t sent_len[MOTET_BUS_TX_QUEUE + 2];
static unsigned n_sent;

/* What the sender's handler saw around its send. */
static struct {
    uint16_t block;   /* bytes it allocates */
    uint16_t len;     /* bytes it sends from the block */
    mt_err_t err;     /* the send's result */
    uint16_t grew;    /* heap bytes in use after the send less before it */
    bool kept_intact; /* after a failed send: its bytes as written */
    mt_pid_t owner;   /* after a failed send: the block's owner */
} run;

static void capture(const uint8_t *frame, uint16_t n)
{
    assert_true(n <= FRAME_CAP && n_sent < MOTET_BUS_TX_QUEUE + 2);
    memcpy(sent[n_sent], frame, n);
    sent_len[n_sent++] = n;
}

static uint16_t heap_in_use(void)
{
    mem_stats_t m;
    mem_get_stats(&m);
    return m.in_use;
}

static void fill(uint8_t *p, uint16_t n)
{
    for (uint16_t i = 0; i < n; i++) p[i] = (uint8_t) (i * 7u + 3u);
}

static bool filled(const uint8_t *p, uint16_t n)
{
    for (uint16_t i = 0; i < n; i++)
        if (p[i] != (uint8_t) (i * 7u + 3u)) return false;
    return true;
}

/* Allocates run.block bytes, writes run.len of them and sends those to
 * REMOTE with MSG_HEAP; frees the block itself if the send failed. */
static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port < PORT_0) return MT_OK;
    uint8_t *b = mem_alloc(run.block);
    assert_non_null(b);
    fill(b, run.len);
    uint16_t before = heap_in_use();
    run.err = sched_send_to(REMOTE, PORT_0, b, run.len, MSG_HEAP);
    run.grew = (uint16_t) (heap_in_use() - before);
    if (run.err) {
        run.kept_intact = filled(b, run.len);
        run.owner = mem_owner(b);
        assert_int_equal(mem_free(b), MT_OK);
    }
    return MT_OK;
}

static mt_pid_t theirs_to; /* where sends_theirs sends: REMOTE unless a test says */

static int setup(void **state)
{
    test_boot(state);
    n_sent = 0;
    memset(&run, 0, sizeof run);
    assert_int_equal(sched_task_create(&(task_spec_t){.pid = SENDER, .prio = 2, .handler = sender}),
                     MT_OK);
    assert_int_equal(sched_task_init(SENDER, NULL, 0), MT_OK);
    assert_int_equal(sched_task_create_remote(REMOTE, 2, 2), MT_OK);
    port_native_bus_capture(capture);
    assert_int_equal(bus_start(SELF, MODULES), MT_OK);
    theirs_to = REMOTE;
    return 0;
}

static void finish_tx(void)
{
    port_native_bus_inject_tx_done(PORT_BUS_SENT, tport_time() + 10);
    tport_busy(20);
}

static void send_from_task(uint16_t block, uint16_t len)
{
    run.block = block;
    run.len = len;
    assert_int_equal(sched_send_to(SENDER, PORT_0, NULL, 0, 0), MT_OK);
}

static void assert_frame_carries_the_payload(unsigned i, uint16_t len)
{
    bus_frame_t f;
    assert_int_equal(bus_frame_decode(sent[i], sent_len[i], &f), MT_OK);
    assert_int_equal(f.type, BUS_FRAME_DATA);
    assert_int_equal(f.dst, 2);
    assert_int_equal(f.pid, REMOTE);
    assert_int_equal(f.src_pid, SENDER);
    assert_int_equal(f.len, len);
    assert_true(filled(f.payload, len));
}

/* The band of a sensing module: 100 bytes sent from a 160-byte block. */
static void test_payload_with_room_goes_out_in_its_own_block(void **state)
{
    (void) state;
    uint16_t idle = heap_in_use();
    send_from_task(160, 100);
    assert_int_equal(run.err, MT_OK);
    assert_int_equal(run.grew, 0); /* no frame allocated beside it */
    assert_int_equal(n_sent, 1);
    assert_frame_carries_the_payload(0, 100);
    assert_true(heap_in_use() >= idle + 160); /* the block, the kernel's now */
    finish_tx();
    assert_int_equal(heap_in_use(), idle); /* freed with the frame */
    assert_true(mem_consistent());
}

/* Not enough room around the payload: copied into a frame, the block freed. */
static void test_payload_without_room_is_copied(void **state)
{
    (void) state;
    uint16_t idle = heap_in_use();
    send_from_task(100, 100);
    assert_int_equal(run.err, MT_OK);
    assert_int_equal(n_sent, 1);
    assert_frame_carries_the_payload(0, 100);
    finish_tx();
    assert_int_equal(heap_in_use(), idle);
    assert_true(mem_consistent());
}

/* A full queue: the send fails, the payload is back where it was and the
 * block still the sender's (it frees it). */
static void test_full_queue_leaves_the_payload_with_its_sender(void **state)
{
    (void) state;
    for (unsigned i = 0; i < MOTET_BUS_TX_QUEUE; i++)
        assert_int_equal(sched_send_to(REMOTE, PORT_0, "q", 1, 0), MT_OK);
    uint16_t idle = heap_in_use();
    send_from_task(160, 100);
    assert_int_equal(run.err, MT_ERR_QUEUE_FULL);
    assert_true(run.kept_intact);
    assert_int_equal(run.owner, SENDER);
    assert_true(test_count_logged_errors(MT_ERR_QUEUE_FULL) > 0);
    assert_int_equal(heap_in_use(), idle);
    for (unsigned i = 0; i < MOTET_BUS_TX_QUEUE; i++) finish_tx();
    assert_true(mem_consistent());
}

/* A heap payload that leaves the module is copied from its block, so the
 * block must be the sender's and hold what it says it sends. Each handler
 * below sends `theirs` (or a block of its own) and notes the result. */
#define OTHER 0x21u /* a task here that owns a block */
#define RELAY 0x22u /* a task that passes on the heap payload it is given */
static uint8_t *theirs;
static uint16_t theirs_len;

static mt_err_t sends_theirs(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state, (void) data, (void) len;
    if (port < PORT_0) return MT_OK;
    run.err = sched_send_to(theirs_to, PORT_0, theirs, theirs_len, MSG_HEAP);
    return MT_OK;
}

static mt_err_t relays(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port < PORT_0) return MT_OK;
    /* Untaken: the kernel's until the handler returns, then freed. */
    mt_pid_t to = port == PORT_0        ? REMOTE
                  : port == PORT_0 + 1u ? MT_PID_MULTICAST
                                        : MT_PID_TIMESYNC;
    run.err = sched_send_to(to, to == MT_PID_MULTICAST ? 3 : PORT_0, data, len, MSG_HEAP);
    return MT_OK;
}

static void create(mt_pid_t pid, task_handler_t handler)
{
    assert_int_equal(sched_task_create(&(task_spec_t){.pid = pid, .prio = 2, .handler = handler}),
                     MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

/* 100 bytes said to be in an 8-byte block: the frame once carried the 92
 * bytes of the heap after it, whoever's they were. Refused
 * (MT_ERR_INVALID, logged), nothing sent, the block still the sender's. */
static void test_payload_longer_than_its_block_is_refused(void **state)
{
    (void) state;
    create(OTHER, sends_theirs);
    uint16_t idle = heap_in_use();
    theirs = mem_alloc_owned(8, OTHER);
    fill(theirs, 8);
    theirs_len = 100;
    test_count_logged_errors(MT_OK);
    assert_int_equal(sched_send_to(OTHER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(run.err, MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 1);
    assert_int_equal(n_sent, 0);
    assert_int_equal(mem_owner(theirs), OTHER);
    assert_true(filled(theirs, 8));
    assert_int_equal(mem_free(theirs), MT_OK); /* outside every handler */
    assert_int_equal(heap_in_use(), idle);
}

/* Another task's block, to a task elsewhere or to a group: its bytes
 * once went on the bus and the send succeeded. Refused
 * (MT_ERR_NOT_OWNER, logged), nothing sent, the block still its owner's. */
static void test_another_tasks_block_is_not_sent_off_the_module(void **state)
{
    (void) state;
    create(RELAY, sends_theirs);
    theirs = mem_alloc_owned(16, OTHER);
    fill(theirs, 16);
    theirs_len = 16;
    test_count_logged_errors(MT_OK);
    assert_int_equal(sched_send_to(RELAY, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(run.err, MT_ERR_NOT_OWNER);
    theirs_to = MT_PID_MULTICAST; /* to group PORT_0 */
    run.err = MT_OK;
    assert_int_equal(sched_send_to(RELAY, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(run.err, MT_ERR_NOT_OWNER);
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 2);
    assert_int_equal(n_sent, 0);
    assert_int_equal(mem_owner(theirs), OTHER);
    assert_true(filled(theirs, 16));
}

/* The heap payload a handler was given, passed on untaken to a task
 * elsewhere or to a group: sent, and freed once (the frame lets it go),
 * with no error (it was once freed as the handler's own, refused and
 * logged MT_ERR_NOT_OWNER, then freed by the frame). */
static void test_a_payload_passed_on_off_the_module_is_freed_once(void **state)
{
    (void) state;
    create(RELAY, relays);
    uint16_t idle = heap_in_use();
    test_count_logged_errors(MT_OK);
    for (mt_port_t port = PORT_0; port <= PORT_0 + 1u; port++) {
        uint8_t *b = mem_alloc(40); /* outside every handler: the kernel's */
        fill(b, 40);
        assert_int_equal(sched_send_to(RELAY, port, b, 40, MSG_HEAP), MT_OK);
        assert_int_equal(run.err, MT_OK);
        assert_int_equal(n_sent, port - PORT_0 + 1u);
        bus_frame_t f;
        assert_int_equal(bus_frame_decode(sent[n_sent - 1], sent_len[n_sent - 1], &f), MT_OK);
        assert_int_equal(f.len, 40);
        assert_true(filled(f.payload, 40));
        finish_tx();
    }
    mt_pid_t pid;
    uint16_t arg;
    assert_int_equal(test_logged(EV_ERROR, &pid, &arg), 0);
    assert_int_equal(heap_in_use(), idle);
    assert_true(mem_consistent());
}

/* The heap payload a handler was given, passed on untaken with a length
 * its block does not hold (100 bytes from an 8-byte block), to a task
 * elsewhere or to a group: refused (MT_ERR_INVALID, logged), nothing sent,
 * and the payload freed once at the handler's return. The frame's
 * payload is checked for its length as a block of the sender's own is. */
static mt_err_t relays_longer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state, (void) len;
    if (port < PORT_0) return MT_OK;
    mt_pid_t to = port == PORT_0 ? REMOTE : MT_PID_MULTICAST;
    run.err = sched_send_to(to, to == MT_PID_MULTICAST ? 3 : PORT_0, data, 100, MSG_HEAP);
    return MT_OK;
}

static void test_a_payload_passed_on_longer_than_its_block_is_refused(void **state)
{
    (void) state;
    create(RELAY, relays_longer);
    uint16_t idle = heap_in_use();
    test_count_logged_errors(MT_OK);
    for (mt_port_t port = PORT_0; port <= PORT_0 + 1u; port++) {
        uint8_t *b = mem_alloc(8); /* outside every handler: the kernel's */
        fill(b, 8);
        run.err = MT_OK;
        assert_int_equal(sched_send_to(RELAY, port, b, 8, MSG_HEAP), MT_OK);
        assert_int_equal(run.err, MT_ERR_INVALID);
    }
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 2);
    assert_int_equal(n_sent, 0);
    assert_int_equal(heap_in_use(), idle);
    assert_true(mem_consistent());
}

#define IDLER 0x23u /* a task here that does nothing with what it is sent */
static mt_err_t idles(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state, (void) port, (void) data, (void) len;
    return MT_OK;
}

/* A send from no task (an interrupt body, code outside every handler)
 * acts for the kernel, which may free any block: another task's block
 * goes off the module as it goes to a task here (the local way, mem_pass()
 * from the kernel, takes any owner's), and is freed once copied. It was
 * once refused off the module only (MT_ERR_NOT_OWNER). */
static void test_a_send_from_no_task_takes_any_block_off_the_module_as_here(void **state)
{
    (void) state;
    create(IDLER, idles);
    uint16_t idle = heap_in_use();
    test_count_logged_errors(MT_OK);
    uint8_t *b = mem_alloc_owned(40, OTHER);
    fill(b, 40);
    assert_int_equal(sched_send_to(REMOTE, PORT_0, b, 40, MSG_HEAP), MT_OK);
    assert_int_equal(n_sent, 1);
    bus_frame_t f;
    assert_int_equal(bus_frame_decode(sent[0], sent_len[0], &f), MT_OK);
    assert_int_equal(f.len, 40);
    assert_true(filled(f.payload, 40));
    finish_tx();
    b = mem_alloc_owned(40, OTHER);
    fill(b, 40);
    assert_int_equal(sched_send_to(MT_PID_MULTICAST, 3, b, 40, MSG_HEAP), MT_OK);
    assert_int_equal(n_sent, 2);
    finish_tx();
    b = mem_alloc_owned(40, OTHER);
    assert_int_equal(sched_send_to(IDLER, PORT_0, b, 40, MSG_HEAP), MT_OK); /* here */
    sched_run_pending();
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 0);
    assert_int_equal(heap_in_use(), idle);
    assert_true(mem_consistent());
}

/* A beacon carries only its stamp, but a heap payload sent with it is
 * checked and let go as one sent off the module: the payload a handler
 * was given, passed on untaken, is freed once with no error (it was freed
 * as the handler's own: MT_ERR_NOT_OWNER logged, then freed by its
 * frame); another task's block (MT_ERR_NOT_OWNER) and a pointer into the
 * stack (MT_ERR_BAD_POINTER) are refused, no beacon sent, the block left
 * as it was (both once sent a beacon and returned MT_OK). */
static void test_a_heap_payload_to_time_sync_is_checked_and_freed_once(void **state)
{
    (void) state;
    create(RELAY, relays);
    create(OTHER, sends_theirs);
    uint16_t idle = heap_in_use();
    test_count_logged_errors(MT_OK);
    uint8_t *b = mem_alloc(40);
    assert_int_equal(sched_send_to(RELAY, PORT_0 + 2u, b, 40, MSG_HEAP), MT_OK);
    assert_int_equal(run.err, MT_OK);
    assert_int_equal(n_sent, 1);
    assert_true(bus_frame_is_sync(sent[0], sent_len[0]));
    finish_tx();
    mt_pid_t pid;
    uint16_t arg;
    assert_int_equal(test_logged(EV_ERROR, &pid, &arg), 0);
    assert_int_equal(heap_in_use(), idle);
    theirs_to = MT_PID_TIMESYNC;
    theirs = mem_alloc_owned(16, RELAY);
    fill(theirs, 16);
    theirs_len = 16;
    assert_int_equal(sched_send_to(OTHER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(run.err, MT_ERR_NOT_OWNER);
    assert_int_equal(test_count_logged_errors(MT_ERR_NOT_OWNER), 1);
    assert_int_equal(mem_owner(theirs), RELAY);
    assert_true(filled(theirs, 16));
    uint8_t on_stack[4];
    theirs = on_stack;
    theirs_len = sizeof on_stack;
    assert_int_equal(sched_send_to(OTHER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(run.err, MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 1);
    assert_int_equal(n_sent, 1);
    assert_true(mem_consistent());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_payload_with_room_goes_out_in_its_own_block, setup),
        cmocka_unit_test_setup(test_payload_without_room_is_copied, setup),
        cmocka_unit_test_setup(test_full_queue_leaves_the_payload_with_its_sender, setup),
        cmocka_unit_test_setup(test_payload_longer_than_its_block_is_refused, setup),
        cmocka_unit_test_setup(test_another_tasks_block_is_not_sent_off_the_module, setup),
        cmocka_unit_test_setup(test_a_payload_passed_on_off_the_module_is_freed_once, setup),
        cmocka_unit_test_setup(test_a_payload_passed_on_longer_than_its_block_is_refused, setup),
        cmocka_unit_test_setup(test_a_heap_payload_to_time_sync_is_checked_and_freed_once, setup),
        cmocka_unit_test_setup(test_a_send_from_no_task_takes_any_block_off_the_module_as_here,
                               setup),
    };
    return cmocka_run_group_tests_name("bus: heap payloads in place", tests, NULL, NULL);
}
