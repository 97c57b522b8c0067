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

#include "migrate_internal.h"
#include "native.h"
#include "sched_internal.h"
#include "test_support.h"

enum { PID_SENDER = 0x20, PID_VICTIM = 0x21, PID_KILLER = 0x22, PID_NEWCOMER = 0x23 };
enum {
    PORT_SEND_BORROWED = PORT_0,
    PORT_SEND_HEAP,
    PORT_SEND_COPIED,
    PORT_SEND_EMPTY_HEAP,
    PORT_RESOLVE_ROUTE,
    PORT_SEND_ALONG_ROUTE,
    PORT_SEND_COPIED_EIGHT,
    PORT_POST_BARE,
};

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

/* Over MSG_INLINE_BYTES: no small queued send, the general path. */
static uint8_t eight_bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port < PORT_0) return MT_OK;
    /* A heap payload is taken before the interrupt is marked: the heap's
     * unmask would take it, before the send. */
    if (port == PORT_SEND_HEAP || port == PORT_SEND_EMPTY_HEAP) {
        heap_block = mem_alloc(8);
        assert_non_null(heap_block);
    }
    atomic_fetch_or(&port_native_irq_pending, 1u << 0); /* taken at the next unmask */
    if (port == PORT_RESOLVE_ROUTE) { /* the first send along the route resolves it */
        atomic_fetch_and(&port_native_irq_pending, ~(1u << 0));
        send_err = sched_send(0, NULL, 0, 0);
    } else if (port == PORT_SEND_ALONG_ROUTE) {
        send_err = sched_send(0, eight_bytes, sizeof eight_bytes, 0);
    } else if (port == PORT_POST_BARE) { /* as the migrator posts, from task context */
        send_err = sched_post_isr(PID_VICTIM, PORT_0, NULL, 0, 0);
    } else if (port == PORT_SEND_COPIED_EIGHT) {
        send_err = sched_send_to(PID_VICTIM, PORT_0, eight_bytes, sizeof eight_bytes, 0);
    } else if (port == PORT_SEND_EMPTY_HEAP) {
        send_err = sched_send_to(PID_VICTIM, PORT_0, heap_block, 0, MSG_HEAP);
    } else if (port == PORT_SEND_HEAP) {
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

static void test_an_empty_heap_payload_to_a_task_killed_meanwhile_stays_the_senders(void **state)
{
    (void) state;
    /* The kernel frees an empty hand-over only once the send has
     * succeeded: told it failed, the sender still has it. */
    run(1, PORT_SEND_EMPTY_HEAP, false);
    assert_int_equal(send_err, MT_ERR_NO_TASK);
    assert_true(mem_is_heap(heap_block));
    assert_int_equal(mem_owner(heap_block), PID_SENDER);
    assert_int_equal(mem_free(heap_block), MT_OK);
}

static void test_an_empty_heap_payload_queued_is_freed_by_the_kernel(void **state)
{
    (void) state;
    make(PID_SENDER, 2, sender);
    make(PID_VICTIM, 1, victim);
    victim_got = 0;
    mem_stats_t before, after;
    mem_get_stats(&before);
    assert_int_equal(sched_send_to(PID_SENDER, PORT_SEND_EMPTY_HEAP, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(send_err, MT_OK);
    assert_int_equal(victim_got, 1);
    assert_false(mem_is_heap(heap_block));
    mem_get_stats(&after);
    assert_int_equal(after.alloc_count, before.alloc_count);
}

static void test_a_bare_post_to_a_task_killed_and_replaced_meanwhile_fails(void **state)
{
    (void) state;
    /* Not initialised: the post cannot queue in its lookup's critical
     * section and goes the general way after it, by the pid it looked up,
     * not by whatever the control block holds by then. */
    make(PID_SENDER, 2, sender);
    task_spec_t spec = {.pid = PID_VICTIM, .prio = 1, .handler = victim};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    make(PID_KILLER, 5, killer);
    port_native_irq_attach(0, isr_wakes_killer);
    replace_victim = true;
    victim_got = newcomer_got = 0;
    assert_int_equal(sched_send_to(PID_SENDER, PORT_POST_BARE, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(send_err, MT_ERR_NO_TASK);
    assert_int_equal(victim_got, 0);
    assert_int_equal(newcomer_got, 0);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 1);
}

/* ---- a destination that moves to another module meanwhile ---- */

static mt_module_t remote_module;
static mt_pid_t remote_dst;
static uint16_t remote_len;
static unsigned remote_sends;

static mt_err_t record_remote_send(mt_module_t module, const msg_t *msg, mt_prio_t prio)
{
    (void) prio;
    remote_module = module;
    remote_dst = msg->dst;
    remote_len = msg->len;
    remote_sends++;
    assert_int_equal(msg->port, PORT_0);
    return MT_OK;
}

/* What the migrator does once the victim's image is on the new module:
 * the victim leaves, its control block a remote one on module 3. */
static mt_err_t mover(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    task_t *t = sched_find_task(PID_VICTIM);
    assert_non_null(t);
    sched_mig_freeze(t);
    msg_t *held = NULL;
    assert_int_equal(sched_mig_move_out(PID_VICTIM, 3, &held), MT_OK);
    while (held) {
        msg_t *next = held->next;
        sched_mig_msg_free(held);
        held = next;
    }
    return MT_OK;
}

static void run_moving(mt_port_t how)
{
    static const route_t to_victim[] = {{.pid = PID_VICTIM, .port = PORT_0}};
    task_spec_t spec = {
        .pid = PID_SENDER, .prio = 2, .handler = sender, .routes = to_victim, .n_routes = 1};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_SENDER, NULL, 0), MT_OK);
    make(PID_VICTIM, 1, victim);
    make(PID_KILLER, 5, mover);
    port_native_irq_attach(0, isr_wakes_killer);
    sched_set_remote_send(record_remote_send);
    remote_sends = 0;
    victim_got = 0;
    assert_int_equal(sched_send_to(PID_SENDER, PORT_RESOLVE_ROUTE, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(send_err, MT_OK);
    assert_int_equal(victim_got, 1);
    assert_int_equal(sched_send_to(PID_SENDER, how, NULL, 0, 0), MT_OK);
    sched_run_pending();
    sched_set_remote_send(NULL);
}

static void check_forwarded(void)
{
    assert_int_equal(send_err, MT_OK);
    assert_false(sched_task_exists(PID_VICTIM));
    assert_int_equal(victim_got, 1); /* the first send only */
    assert_int_equal(remote_sends, 1);
    assert_int_equal(remote_module, 3);
    assert_int_equal(remote_dst, PID_VICTIM);
    assert_int_equal(remote_len, sizeof eight_bytes);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 0);
}

static void test_a_send_along_a_route_whose_task_moves_meanwhile_is_forwarded(void **state)
{
    (void) state;
    run_moving(PORT_SEND_ALONG_ROUTE);
    check_forwarded();
}

static void test_a_send_by_pid_to_a_task_that_moves_meanwhile_is_forwarded(void **state)
{
    (void) state;
    run_moving(PORT_SEND_COPIED_EIGHT);
    check_forwarded();
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
        cmocka_unit_test_setup(
            test_an_empty_heap_payload_to_a_task_killed_meanwhile_stays_the_senders, test_boot),
        cmocka_unit_test_setup(test_an_empty_heap_payload_queued_is_freed_by_the_kernel, test_boot),
        cmocka_unit_test_setup(test_a_bare_post_to_a_task_killed_and_replaced_meanwhile_fails,
                               test_boot),
        cmocka_unit_test_setup(test_a_send_along_a_route_whose_task_moves_meanwhile_is_forwarded,
                               test_boot),
        cmocka_unit_test_setup(test_a_send_by_pid_to_a_task_that_moves_meanwhile_is_forwarded,
                               test_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
