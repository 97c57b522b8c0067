/* SPDX-License-Identifier: MIT */
/*
 * Who owns a MSG_HEAP payload, on every path a message can take: run at
 * once or queued, the kernel holds it until the receiver takes it, so the
 * receiver cannot free one it did not take; taken or not, forwarded, with
 * the receiver or the sender killed while the message lives, and a payload
 * that is not a heap block refused. And a
 * borrowed payload that has to wait: copied, into the message block itself
 * when it is small, into a heap block otherwise.
 *
 * MOTET_TEST_KERNEL: default nothreads
 */
#include <string.h>

#include "test_support.h"

#define SENDER    0x10
#define RECEIVER  0x20
#define FORWARDEE 0x22

/* Receiver ports: what its handler does with the payload. */
enum {
    LOOK = PORT_0,    /* read it, leave it */
    TAKE,             /* take it */
    TAKE_AND_FORWARD, /* take it and send it on to FORWARDEE */
    TAKE_AND_DIE,     /* take it, then kill itself */
    KILL_SENDER_LOOK, /* kill the sender, then read it */
    KILL_SENDER_TAKE, /* kill the sender, then take it */
    FREE_UNTAKEN,     /* free it without taking it */
    TAKE_AND_FREE,    /* take it, then free it */
};

/* Sender ports: what it sends. */
enum {
    SEND_BLOCK = PORT_0, /* a fresh heap block of its own (byte 0: receiver port) */
    SEND_BLOCK_AND_DIE,  /* the same, then kill itself */
    SEND_STACK,          /* a stack buffer marked MSG_HEAP */
    SEND_FREED,          /* a block already freed, marked MSG_HEAP */
};

#define BLOCK_LEN  24
#define BLOCK_BYTE 0x5A

static uint8_t *sent;             /* the block the sender sent last */
static mt_err_t send_result;      /* what sched_send_to() returned to it */
static mt_pid_t owner_in_handler; /* owner of the payload as the receiver saw it */
static bool payload_intact;       /* the receiver found every byte as sent */
static void *taken;               /* what the receiver (or FORWARDEE) took */
static mt_err_t free_result;      /* what the receiver's mem_free() returned */
static unsigned handled;

static bool intact(const uint8_t *p)
{
    for (uint16_t i = 1; i < BLOCK_LEN; i++)
        if (p[i] != BLOCK_BYTE) return false;
    return true;
}

static mt_err_t receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT && !len) return MT_OK;
    handled++;
    owner_in_handler = mem_owner(data);
    if (port == KILL_SENDER_LOOK || port == KILL_SENDER_TAKE)
        assert_int_equal(sched_task_kill(SENDER), MT_OK);
    if (port == FREE_UNTAKEN) free_result = mem_free(data);
    payload_intact = mem_is_heap(data) && intact(data);
    if (port == LOOK || port == KILL_SENDER_LOOK || port == FREE_UNTAKEN) return MT_OK;
    taken = sched_take(data, len);
    if (port == TAKE_AND_FREE) {
        free_result = mem_free(taken);
        taken = NULL;
    }
    if (port == TAKE_AND_FORWARD) {
        void *block = taken;
        taken = NULL;
        return sched_send_to(FORWARDEE, TAKE, block, BLOCK_LEN, MSG_HEAP);
    }
    if (port == TAKE_AND_DIE) return sched_task_kill(RECEIVER);
    return MT_OK;
}

static mt_err_t forwardee(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == TAKE) taken = sched_take(data, len);
    return MT_OK;
}

static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) len;
    (void) state;
    if (port < PORT_0) return MT_OK;
    mt_port_t to = *(const uint8_t *) data;
    if (port == SEND_STACK) {
        uint8_t local[BLOCK_LEN] = {0};
        send_result = sched_send_to(RECEIVER, to, local, sizeof local, MSG_HEAP);
        return MT_OK;
    }
    sent = mem_alloc(BLOCK_LEN);
    assert_non_null(sent);
    memset(sent, BLOCK_BYTE, BLOCK_LEN);
    if (port == SEND_FREED) mem_free(sent);
    send_result = sched_send_to(RECEIVER, to, sent, BLOCK_LEN, MSG_HEAP);
    if (send_result != MT_OK && port != SEND_FREED) mem_free(sent); /* still ours */
    if (port == SEND_BLOCK_AND_DIE) return sched_task_kill(SENDER);
    return MT_OK;
}

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t h, bool init)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = h, .state_size = 8};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    if (init) assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

static unsigned blocks_in_use(void)
{
    mem_stats_t s;
    mem_get_stats(&s);
    return (unsigned) s.alloc_count;
}

static int setup(void **state)
{
    test_boot(state);
    sent = NULL;
    taken = NULL;
    send_result = MT_ERR_STATE;
    owner_in_handler = MT_PID_INVALID;
    free_result = MT_ERR_STATE;
    payload_intact = false;
    handled = 0;
    return 0;
}

/* Sender at sender_prio, receiver at receiver_prio (at once when not
 * lower), FORWARDEE above both; the sender is started on `cmd` and sends
 * to the receiver's port `to`. */
static void run(mt_prio_t sender_prio, mt_prio_t receiver_prio, mt_port_t cmd, mt_port_t to)
{
    make(SENDER, sender_prio, sender, true);
    make(RECEIVER, receiver_prio, receiver, true);
    make(FORWARDEE, 6, forwardee, true);
    uint8_t port = to;
    assert_int_equal(sched_send_to(SENDER, cmd, &port, 1, 0), MT_OK);
    sched_run_pending();
}

/* ---- run at once: the payload is lent to the receiver ---- */

static void test_at_once_the_kernel_holds_the_payload_until_taken(void **state)
{
    (void) state;
    unsigned before = blocks_in_use();
    run(2, 3, SEND_BLOCK, LOOK);
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(handled, 1);
    assert_int_equal(owner_in_handler, MEM_OWNER_KERNEL);
    assert_true(payload_intact);
    assert_int_equal(blocks_in_use(), before + 3); /* the three states; the block is freed */
}

static void test_at_once_a_taken_payload_stays_with_the_receiver(void **state)
{
    (void) state;
    run(2, 3, SEND_BLOCK, TAKE);
    assert_ptr_equal(taken, sent);
    assert_int_equal(mem_owner(taken), RECEIVER);
    assert_true(intact(taken));
}

static void test_a_taken_and_forwarded_payload_ends_with_the_last_taker(void **state)
{
    (void) state;
    run(2, 3, SEND_BLOCK, TAKE_AND_FORWARD);
    assert_ptr_equal(taken, sent);
    assert_int_equal(mem_owner(taken), FORWARDEE);
    assert_true(intact(taken));
}

static void test_a_receiver_killed_after_taking_frees_the_payload(void **state)
{
    (void) state;
    unsigned before = blocks_in_use();
    run(2, 3, SEND_BLOCK, TAKE_AND_DIE);
    assert_false(sched_task_exists(RECEIVER));
    assert_false(mem_is_heap(sent));
    assert_int_equal(blocks_in_use(), before + 2); /* sender's and forwardee's states */
}

static void test_a_sender_killed_under_the_receiver_leaves_the_payload_alone(void **state)
{
    (void) state;
    unsigned before = blocks_in_use();
    run(2, 3, SEND_BLOCK, KILL_SENDER_LOOK);
    assert_true(payload_intact); /* the kill waited for the sender to leave the stack */
    assert_false(sched_task_exists(SENDER));
    assert_int_equal(blocks_in_use(), before + 2);
}

static void test_a_payload_taken_after_the_sender_is_killed_survives_it(void **state)
{
    (void) state;
    run(2, 3, SEND_BLOCK, KILL_SENDER_TAKE);
    assert_false(sched_task_exists(SENDER));
    assert_ptr_equal(taken, sent);
    assert_int_equal(mem_owner(taken), RECEIVER);
    assert_true(intact(taken));
}

static void test_init_run_at_once_hands_its_payload_to_the_task(void **state)
{
    (void) state;
    make(SENDER, 2, sender, true);
    make(RECEIVER, 3, receiver, false); /* INIT goes the general way */
    uint8_t port = PORT_INIT;
    assert_int_equal(sched_send_to(SENDER, SEND_BLOCK, &port, 1, 0), MT_OK);
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(owner_in_handler, MEM_OWNER_KERNEL);
    assert_ptr_equal(taken, sent);
    assert_int_equal(mem_owner(taken), RECEIVER);
}

/* ---- queued: the kernel holds the payload until the receiver runs ---- */

static void test_queued_the_kernel_holds_the_payload_until_taken(void **state)
{
    (void) state;
    run(4, 3, SEND_BLOCK, TAKE);
    assert_int_equal(handled, 1);
    assert_int_equal(owner_in_handler, MEM_OWNER_KERNEL);
    assert_ptr_equal(taken, sent);
    assert_int_equal(mem_owner(taken), RECEIVER);
}

static void test_queued_payload_survives_its_sender_killed_before_delivery(void **state)
{
    (void) state;
    run(4, 3, SEND_BLOCK_AND_DIE, TAKE);
    assert_false(sched_task_exists(SENDER));
    assert_int_equal(handled, 1);
    assert_true(payload_intact);
    assert_ptr_equal(taken, sent);
    assert_int_equal(mem_owner(taken), RECEIVER);
}

/* ---- the receiver frees only a payload it took ---- */

/* The receiver's free of a payload it did not take is refused and changes
 * nothing; the kernel frees the payload once, after the handler. */
static void check_untaken_free_refused(mt_prio_t sender_prio)
{
    unsigned before = blocks_in_use();
    run(sender_prio, 3, SEND_BLOCK, FREE_UNTAKEN);
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(handled, 1);
    assert_int_equal(free_result, MT_ERR_NOT_OWNER);
    assert_true(payload_intact);                   /* still live and whole after the refusal */
    assert_int_equal(blocks_in_use(), before + 3); /* the three states: freed after */
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    unsigned refused = 0;
    for (unsigned i = 0; i < n; i++) {
        if (rec[i].type != EV_ERROR) continue;
        assert_int_equal(rec[i].arg, MT_ERR_NOT_OWNER); /* no double free, no bad pointer */
        refused++;
    }
    assert_int_equal(refused, 1);
}

static void test_at_once_an_untaken_payload_cannot_be_freed_by_the_receiver(void **state)
{
    (void) state;
    check_untaken_free_refused(2);
}

static void test_queued_an_untaken_payload_cannot_be_freed_by_the_receiver(void **state)
{
    (void) state;
    check_untaken_free_refused(4);
}

static void test_a_taken_payload_is_freed_by_the_receiver(void **state)
{
    (void) state;
    for (mt_prio_t sender_prio = 2; sender_prio <= 4; sender_prio += 2) {
        setup(state);
        unsigned before = blocks_in_use();
        run(sender_prio, 3, SEND_BLOCK, TAKE_AND_FREE);
        assert_int_equal(free_result, MT_OK);
        assert_false(mem_is_heap(sent));
        assert_int_equal(blocks_in_use(), before + 3);
        assert_int_equal(test_count_logged_errors(MT_ERR_DOUBLE_FREE), 0);
    }
}

/* ---- borrowed and queued: the message keeps a copy ---- */

#define SMALL_LEN  5 /* fits in the message block */
#define COPIED_LEN 6 /* one byte more: copied into a heap block */

static unsigned blocks_after_send; /* heap blocks right after the borrowed send */
static uint8_t seen[COPIED_LEN];
static uint16_t seen_len;

/* Sends a borrowed stack buffer of the length it is given to the lower
 * receiver, then scribbles over the buffer before the receiver can run. */
static mt_err_t borrower(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) len;
    (void) state;
    if (port < PORT_0) return MT_OK;
    uint8_t lent = *(const uint8_t *) data;
    uint8_t local[COPIED_LEN] = {1, 2, 3, 4, 5, 6};
    send_result = sched_send_to(RECEIVER, PORT_0, local, lent, 0);
    blocks_after_send = blocks_in_use();
    memset(local, 0, sizeof local);
    return MT_OK;
}

static mt_err_t keeper(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port < PORT_0) return MT_OK;
    handled++;
    seen_len = len;
    memcpy(seen, data, len);
    taken = sched_take(data, len);
    return MT_OK;
}

/* The borrower (above) sends `len` bytes to the keeper (below); returns
 * the heap blocks in use before. */
static unsigned send_borrowed(uint8_t len)
{
    make(SENDER, 4, borrower, true);
    make(RECEIVER, 3, keeper, true);
    unsigned before = blocks_in_use();
    assert_int_equal(sched_send_to(SENDER, PORT_0, &len, 1, 0), MT_OK);
    assert_int_equal(send_result, MT_OK);
    assert_int_equal(handled, 1);
    static const uint8_t sent_bytes[COPIED_LEN] = {1, 2, 3, 4, 5, 6};
    assert_int_equal(seen_len, len);
    assert_memory_equal(seen, sent_bytes, len);
    /* Taken, it is the receiver's own heap copy, whichever way it waited. */
    assert_true(mem_is_heap(taken));
    assert_int_equal(mem_owner(taken), RECEIVER);
    assert_memory_equal(taken, sent_bytes, len);
    return before;
}

static void test_a_small_borrowed_payload_waits_in_the_message_block(void **state)
{
    (void) state;
    unsigned before = send_borrowed(SMALL_LEN);
    assert_int_equal(blocks_after_send, before); /* no heap block while it waited */
    assert_int_equal(blocks_in_use(), before + 1);
    mem_free(taken);
}

static void test_a_larger_borrowed_payload_waits_in_a_heap_copy(void **state)
{
    (void) state;
    unsigned before = send_borrowed(COPIED_LEN);
    assert_int_equal(blocks_after_send, before + 1);
    assert_int_equal(blocks_in_use(), before + 1); /* the copy itself, now taken */
    mem_free(taken);
}

/* ---- refused: not a live heap block ---- */

static void test_a_stack_buffer_marked_heap_is_refused_at_once_and_queued(void **state)
{
    (void) state;
    run(2, 3, SEND_STACK, LOOK);
    assert_int_equal(send_result, MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 1);
    assert_int_equal(handled, 0);
    /* The frame pushed for the receiver before the payload was checked is
     * gone: the receiver runs at once again. */
    assert_int_equal(sched_stack_depth(), 0);
    assert_int_equal(sched_send_to(RECEIVER, LOOK, NULL, 0, 0), MT_OK);
    assert_int_equal(handled, 1);
    setup(state);
    run(4, 3, SEND_STACK, LOOK);
    assert_int_equal(send_result, MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 1);
    assert_int_equal(handled, 0);
    assert_int_equal(sched_queued_count(), 0);
}

static void test_a_freed_block_marked_heap_is_refused(void **state)
{
    (void) state;
    run(2, 3, SEND_FREED, LOOK);
    assert_int_equal(send_result, MT_ERR_BAD_POINTER);
    assert_int_equal(test_count_logged_errors(MT_ERR_BAD_POINTER), 1);
    assert_int_equal(handled, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_at_once_the_kernel_holds_the_payload_until_taken, setup),
        cmocka_unit_test_setup(test_at_once_a_taken_payload_stays_with_the_receiver, setup),
        cmocka_unit_test_setup(test_a_taken_and_forwarded_payload_ends_with_the_last_taker, setup),
        cmocka_unit_test_setup(test_a_receiver_killed_after_taking_frees_the_payload, setup),
        cmocka_unit_test_setup(test_a_sender_killed_under_the_receiver_leaves_the_payload_alone,
                               setup),
        cmocka_unit_test_setup(test_a_payload_taken_after_the_sender_is_killed_survives_it, setup),
        cmocka_unit_test_setup(test_init_run_at_once_hands_its_payload_to_the_task, setup),
        cmocka_unit_test_setup(test_queued_the_kernel_holds_the_payload_until_taken, setup),
        cmocka_unit_test_setup(test_queued_payload_survives_its_sender_killed_before_delivery,
                               setup),
        cmocka_unit_test_setup(test_at_once_an_untaken_payload_cannot_be_freed_by_the_receiver,
                               setup),
        cmocka_unit_test_setup(test_queued_an_untaken_payload_cannot_be_freed_by_the_receiver,
                               setup),
        cmocka_unit_test_setup(test_a_taken_payload_is_freed_by_the_receiver, setup),
        cmocka_unit_test_setup(test_a_small_borrowed_payload_waits_in_the_message_block, setup),
        cmocka_unit_test_setup(test_a_larger_borrowed_payload_waits_in_a_heap_copy, setup),
        cmocka_unit_test_setup(test_a_stack_buffer_marked_heap_is_refused_at_once_and_queued,
                               setup),
        cmocka_unit_test_setup(test_a_freed_block_marked_heap_is_refused, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
