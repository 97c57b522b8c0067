/* SPDX-License-Identifier: MIT */
/*
 * A kernel without heap payloads (MOTET_HEAP_PAYLOADS=0: the test variant
 * noheappay, and corelog, the kernel core with the event log on): a send
 * with MSG_HEAP is refused with MT_ERR_INVALID, logged, on every way in
 * (at once, queued, along a route, by pid, from an interrupt, to a group),
 * and the block stays its sender's; borrowed payloads work as in the full
 * kernel: lent to a handler run at once, copied for one that waits (into
 * the message block, or a heap copy the receiver may keep with
 * sched_take() and the kernel frees otherwise).
 *
 * MOTET_TEST_KERNEL: noheappay corelog
 */
#include <string.h>

#include "mem_internal.h"
#include "test_port.h"
#include "test_support.h"

#if MOTET_HEAP_PAYLOADS
#error "test_heap_payloads_off runs on kernels without heap payloads only"
#endif

enum { PID_LOW = 0x20, PID_SENDER = 0x21, PID_HIGH = 0x22 };
enum { TO_HIGH, TO_LOW };
enum { TAKE = PORT_0, LOOK };
/* The sender's commands. */
enum { SEND_HEAP = PORT_0, SEND_BORROWED };

#define LEN 12

static unsigned handled;
static void *taken;
static uint8_t seen[LEN];
static mt_err_t results[4];
static uint8_t *block;

static mt_err_t receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port < PORT_0) return MT_OK;
    handled++;
    assert_int_equal(len, LEN);
    memcpy(seen, data, len);
    if (port == TAKE) taken = sched_take(data, len);
    return MT_OK;
}

/* SEND_HEAP: its own heap block with MSG_HEAP, to the higher task (at once)
 * and the lower (queued), along its routes and by pid. SEND_BORROWED: a
 * stack buffer, lent, to both; scribbled over before the lower one runs. */
static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) len;
    if (port < PORT_0) return MT_OK;
    mt_port_t how = *(const uint8_t *) data;
    if (port == SEND_HEAP) {
        results[0] = sched_send(TO_HIGH, block, LEN, MSG_HEAP);
        results[1] = sched_send(TO_LOW, block, LEN, MSG_HEAP);
        results[2] = sched_send_to(PID_HIGH, how, block, LEN, MSG_HEAP);
        results[3] = sched_send_to(PID_LOW, how, block, LEN, MSG_HEAP);
        return MT_OK;
    }
    uint8_t local[LEN];
    for (uint8_t i = 0; i < LEN; i++) local[i] = (uint8_t) (i + 1);
    results[0] = sched_send_to(PID_HIGH, how, local, LEN, 0);
    results[1] = sched_send_to(PID_LOW, how, local, LEN, 0);
    memset(local, 0, sizeof local);
    return MT_OK;
}

static const route_t routes[] = {[TO_HIGH] = {PID_HIGH, TAKE}, [TO_LOW] = {PID_LOW, TAKE}};

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t h, const route_t *r, uint8_t n)
{
    task_spec_t spec = {
        .pid = pid, .prio = prio, .handler = h, .state_size = 4, .routes = r, .n_routes = n};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
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
    handled = 0;
    taken = NULL;
    block = NULL;
    memset(seen, 0, sizeof seen);
    for (unsigned i = 0; i < 4; i++) results[i] = MT_ERR_STATE;
    make(PID_LOW, 1, receiver, NULL, 0);
    make(PID_SENDER, 2, sender, routes, 2);
    make(PID_HIGH, 3, receiver, NULL, 0);
    (void) test_count_logged_errors(MT_OK); /* drain what creation logged */
    return 0;
}

static void isr_posts_heap(void)
{
    results[0] = sched_post_isr(PID_HIGH, TAKE, block, LEN, MSG_HEAP);
}

static void test_a_heap_payload_is_refused_and_stays_the_senders(void **state)
{
    (void) state;
    block = mem_alloc_owned(LEN, PID_SENDER);
    assert_non_null(block);
    unsigned before = blocks_in_use();
    uint8_t how = TAKE;
    assert_int_equal(sched_send_to(PID_SENDER, SEND_HEAP, &how, 1, 0), MT_OK);
    sched_run_pending();
    for (unsigned i = 0; i < 4; i++) assert_int_equal(results[i], MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 4);
    assert_int_equal(handled, 0);
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(blocks_in_use(), before);
    assert_int_equal(mem_owner(block), PID_SENDER);
    /* From an interrupt, to a group, to the multicast pid: refused alike. */
    tport_irq_attach(0, isr_posts_heap);
    tport_irq_raise(0);
    assert_int_equal(results[0], MT_ERR_INVALID);
    assert_int_equal(sched_send_to(MT_PID_MULTICAST, 1, block, LEN, MSG_HEAP), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 2);
    sched_run_pending();
    assert_int_equal(handled, 0);
    assert_int_equal(mem_owner(block), PID_SENDER);
    assert_int_equal(mem_free_all(PID_SENDER), 3); /* its state, routes and the block */
}

static const uint8_t expected[LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

static void test_a_borrowed_payload_is_lent_or_copied_and_taken(void **state)
{
    (void) state;
    unsigned before = blocks_in_use();
    uint8_t how = TAKE;
    assert_int_equal(sched_send_to(PID_SENDER, SEND_BORROWED, &how, 1, 0), MT_OK);
    assert_int_equal(results[0], MT_OK);
    assert_int_equal(results[1], MT_OK);
    assert_int_equal(handled, 2);
    /* The lower one ran after the buffer was cleared: it had a copy. */
    assert_memory_equal(seen, expected, LEN);
    assert_non_null(taken);
    assert_int_equal(mem_owner(taken), PID_LOW);
    assert_memory_equal(taken, expected, LEN);
    /* Two heap copies taken: the higher one's of the lent buffer, the
     * lower one's of the kernel's copy (zero copy). */
    assert_int_equal(blocks_in_use(), before + 2);
}

static void test_a_copy_not_taken_is_freed_after_the_handler(void **state)
{
    (void) state;
    unsigned before = blocks_in_use();
    uint8_t how = LOOK;
    assert_int_equal(sched_send_to(PID_SENDER, SEND_BORROWED, &how, 1, 0), MT_OK);
    assert_int_equal(handled, 2);
    assert_memory_equal(seen, expected, LEN);
    assert_null(taken);
    assert_int_equal(blocks_in_use(), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_heap_payload_is_refused_and_stays_the_senders, setup),
        cmocka_unit_test_setup(test_a_borrowed_payload_is_lent_or_copied_and_taken, setup),
        cmocka_unit_test_setup(test_a_copy_not_taken_is_freed_after_the_handler, setup),
    };
    return cmocka_run_group_tests_name("kernels without heap payloads", tests, NULL, NULL);
}
