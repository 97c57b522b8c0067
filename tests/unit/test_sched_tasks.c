/* SPDX-License-Identifier: MIT */
/*
 * Task life cycle and messaging services: kill with FINAL and free-all,
 * payload ownership (take), multicast order, and every error path of the
 * scheduler (unknown pid or port, full queue, exhausted heap), each of which
 * must return its code and log it.
 *
 * MOTET_TEST_KERNEL: default nothreads
 */
#include <string.h>

#include "mcast_internal.h"
#include "sched_internal.h"
#include "test_support.h"

static unsigned finals;
static unsigned received;
static void *taken;
static uint8_t last_byte;
static char order[64];

static mt_err_t worker(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT) return timer_start(0, TIMER_MS(10), true);
    if (port == PORT_FINAL) {
        finals++;
        return MT_OK;
    }
    if (port == PORT_0) {
        received++;
        if (len) last_byte = ((uint8_t *) data)[0];
    }
    if (port == PORT_0 + 1) taken = sched_take(data, len);
    if (port == PORT_0 + 2) mem_alloc(100); /* a leak the kill must reclaim */
    if (port == PORT_0 + 3) sched_task_kill(sched_current_pid());
    return MT_OK;
}

static mt_err_t member(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port >= PORT_0) {
        size_t n = strlen(order);
        order[n] = (char) ('a' + sched_current_pid() - 0x40);
        order[n + 1] = 0;
    }
    return MT_OK;
}

static int setup(void **state)
{
    test_boot(state);
    finals = received = 0;
    taken = NULL;
    last_byte = 0;
    order[0] = 0;
    return 0;
}

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t h)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = h, .state_size = 16};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

/* ---- kill ---- */

static void test_kill_delivers_final_and_frees_everything(void **state)
{
    (void) state;
    mem_stats_t before, after;
    mem_get_stats(&before);
    make(0x20, 2, worker);
    assert_int_equal(sched_send_to(0x20, PORT_0 + 2, NULL, 0, 0), MT_OK); /* leaks 100 B */
    uint32_t remaining;
    assert_true(timer_remaining(0x20, 0, &remaining));
    assert_int_equal(sched_task_kill(0x20), MT_OK);
    assert_int_equal(finals, 1);
    assert_false(sched_task_exists(0x20));
    assert_false(timer_remaining(0x20, 0, &remaining));
    mem_get_stats(&after);
    assert_int_equal(after.in_use, before.in_use);
    assert_int_equal(after.alloc_count, before.alloc_count);
}

static void test_kill_drops_queued_messages_and_logs_how_many(void **state)
{
    (void) state;
    make(0x20, 2, worker);
    make(0x21, 5, worker);
    /* Queue three messages for 0x20 by sending from an ISR-like context. */
    port_irq_state_t s = port_irq_save();
    for (int i = 0; i < 3; i++) assert_int_equal(sched_post_isr(0x20, PORT_0, "x", 1, 0), MT_OK);
    log_record_t drop[MOTET_LOG_ENTRIES];
    log_drain(drop, MOTET_LOG_ENTRIES);
    assert_int_equal(sched_task_kill(0x20), MT_OK);
    port_irq_restore(s);
    assert_int_equal(received, 0);
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    bool found = false;
    for (unsigned i = 0; i < n; i++)
        if (rec[i].type == EV_KILL && rec[i].pid == 0x20) found = rec[i].arg == 3;
    assert_true(found);
    mem_stats_t st;
    mem_get_stats(&st);
    assert_int_equal(sched_queued_count(), 0);
}

static void test_kill_of_running_task_is_deferred_until_it_returns(void **state)
{
    (void) state;
    make(0x20, 2, worker);
    assert_int_equal(sched_send_to(0x20, PORT_0 + 3, NULL, 0, 0), MT_OK);
    assert_int_equal(finals, 1);
    assert_false(sched_task_exists(0x20));
    assert_int_equal(sched_stack_depth(), 0);
}

static void test_send_after_kill_is_an_error(void **state)
{
    (void) state;
    make(0x20, 2, worker);
    assert_int_equal(sched_task_kill(0x20), MT_OK);
    assert_int_equal(sched_send_to(0x20, PORT_0, NULL, 0, 0), MT_ERR_NO_TASK);
    assert_int_equal(sched_task_kill(0x20), MT_ERR_NO_TASK);
}

/* ---- payload ownership ---- */

static void test_take_of_heap_payload_is_zero_copy_and_moves_ownership(void **state)
{
    (void) state;
    make(0x20, 2, worker);
    uint8_t *block = mem_alloc(8);
    block[0] = 42;
    assert_int_equal(sched_send_to(0x20, PORT_0 + 1, block, 8, MSG_HEAP), MT_OK);
    assert_ptr_equal(taken, block);
    assert_int_equal(mem_owner(block), 0x20);
}

static void test_take_of_borrowed_payload_is_a_deep_copy(void **state)
{
    (void) state;
    make(0x20, 2, worker);
    uint8_t local[4] = {7, 8, 9, 10};
    assert_int_equal(sched_send_to(0x20, PORT_0 + 1, local, 4, 0), MT_OK);
    assert_non_null(taken);
    assert_ptr_not_equal(taken, local);
    assert_memory_equal(taken, local, 4);
    assert_int_equal(mem_owner(taken), 0x20);
}

static void test_queued_borrowed_payload_is_copied_at_send_time(void **state)
{
    (void) state;
    make(0x20, 1, worker);
    make(0x21, 5, worker);
    uint8_t local[1] = {5};
    port_irq_state_t s = port_irq_save(); /* queue it: no dispatch while masked */
    assert_int_equal(sched_post_isr(0x20, PORT_0, local, 1, 0), MT_OK);
    local[0] = 99; /* the sender reuses its buffer at once */
    port_irq_restore(s);
    sched_run_pending();
    assert_int_equal(received, 1);
    assert_int_equal(last_byte, 5);
}

static void test_untaken_heap_payload_is_freed_after_the_handler(void **state)
{
    (void) state;
    make(0x20, 2, worker);
    mem_stats_t before, after;
    mem_get_stats(&before);
    void *block = mem_alloc(32);
    assert_int_equal(sched_send_to(0x20, PORT_0, block, 32, MSG_HEAP), MT_OK);
    mem_get_stats(&after);
    assert_int_equal(after.alloc_count, before.alloc_count);
}

/* ---- multicast ---- */

static mt_err_t member_killing_next(void *state, mt_port_t port, void *data, uint16_t len)
{
    if (port == PORT_0) assert_int_equal(sched_task_kill(0x42), MT_OK);
    return member(state, port, data, len);
}

static void test_multicast_skips_a_member_an_earlier_one_killed(void **state)
{
    (void) state;
    make(0x40, 1, member);
    make(0x41, 4, member_killing_next);
    make(0x42, 2, member);
    for (mt_pid_t pid = 0x40; pid <= 0x42; pid++)
        assert_int_equal(mcast_join(3, pid, PORT_0), MT_OK);
    assert_int_equal(sched_send_to(MT_PID_MULTICAST, 3, NULL, 0, 0), MT_ERR_NO_TASK);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 1);
    assert_string_equal(order, "ba"); /* c died under b's handler */
    assert_int_equal(mcast_member_count(3), 2);
}

/* Kills the next member, then a new task takes its place in the member
 * table, joining another group. */
static mt_err_t member_replacing_next(void *state, mt_port_t port, void *data, uint16_t len)
{
    if (port == PORT_0) {
        assert_int_equal(sched_task_kill(0x42), MT_OK);
        make(0x43, 2, member);
        assert_int_equal(mcast_join(9, 0x43, PORT_0), MT_OK);
    }
    return member(state, port, data, len);
}

static void test_multicast_does_not_reach_a_task_joined_during_the_delivery(void **state)
{
    (void) state;
    make(0x40, 1, member);
    make(0x41, 4, member_replacing_next);
    make(0x42, 2, member);
    for (mt_pid_t pid = 0x40; pid <= 0x42; pid++)
        assert_int_equal(mcast_join(3, pid, PORT_0), MT_OK);
    /* c's entry is d's now; the delivery still addresses c, who is gone. */
    assert_int_equal(sched_send_to(MT_PID_MULTICAST, 3, NULL, 0, 0), MT_ERR_NO_TASK);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 1);
    assert_string_equal(order, "ba"); /* not d: it is in group 9 only */
    assert_int_equal(mcast_member_count(3), 2);
    assert_int_equal(mcast_member_count(9), 1);
}

/* A group's members are application tasks: a virtual, system or reserved
 * pid is refused and logged, and no membership is kept for it. */
static void test_multicast_refuses_a_member_that_is_not_an_application_task(void **state)
{
    (void) state;
    const mt_pid_t refused[] = {MT_PID_NONE,     MT_PID_MULTICAST, MT_PID_TIMESYNC,
                                MT_PID_MIGRATOR, MT_PID_APPMGR,    0xF4u,
                                0xFEu,           MT_PID_INVALID};
    for (unsigned i = 0; i < sizeof refused / sizeof refused[0]; i++)
        assert_int_equal(mcast_join(7, refused[i], PORT_0), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), sizeof refused / sizeof refused[0]);
    assert_int_equal(mcast_member_count(7), 0);
    assert_int_equal(mcast_join(7, MT_PID_LAST_APP, PORT_0), MT_OK);
    assert_int_equal(mcast_member_count(7), 1);
}

static void test_multicast_members_that_leave_and_join_keep_priority_order(void **state)
{
    (void) state;
    make(0x40, 1, member);
    make(0x41, 4, member);
    make(0x42, 2, member);
    make(0x43, 3, member);
    for (mt_pid_t pid = 0x40; pid <= 0x42; pid++)
        assert_int_equal(mcast_join(5, pid, PORT_0), MT_OK);
    assert_int_equal(mcast_join(6, 0x41, PORT_0), MT_OK);
    assert_int_equal(mcast_leave_all(0x41), 2);
    assert_int_equal(mcast_join(5, 0x43, PORT_0), MT_OK);
    assert_int_equal(mcast_member_count(5), 3);
    assert_int_equal(mcast_member_count(6), 0);
    assert_int_equal(sched_send_to(MT_PID_MULTICAST, 5, NULL, 0, 0), MT_OK);
    assert_string_equal(order, "dca");
    uint8_t pairs[4];
    assert_int_equal(mcast_memberships(0x43, pairs, 2), 1);
    assert_int_equal(pairs[0], 5);
    assert_int_equal(pairs[1], PORT_0);
}

static void test_multicast_members_of_one_level_keep_their_join_order(void **state)
{
    (void) state;
    make(0x40, 2, member);
    make(0x41, 2, member);
    make(0x42, 3, member);
    make(0x43, 2, member);
    make(0x44, 1, member);
    static const mt_pid_t joins[] = {0x41, 0x40, 0x43, 0x44, 0x42};
    for (uint8_t i = 0; i < sizeof joins; i++)
        assert_int_equal(mcast_join(4, joins[i], PORT_0), MT_OK);
    assert_int_equal(sched_send_to(MT_PID_MULTICAST, 4, NULL, 0, 0), MT_OK);
    assert_string_equal(order, "cbade");
}

static void test_multicast_table_full_is_rejected_and_logged(void **state)
{
    (void) state;
    for (uint8_t i = 0; i < MOTET_MAX_GROUP_MEMBERS; i++)
        assert_int_equal(mcast_join(7, 0x40, PORT_0), MT_OK);
    assert_int_equal(mcast_join(7, 0x41, PORT_0), MT_ERR_NO_SLAB);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 1);
    assert_int_equal(mcast_leave_all(0x40), MOTET_MAX_GROUP_MEMBERS);
    assert_int_equal(mcast_join(7, 0x41, PORT_0), MT_OK);
}

static void test_multicast_reaches_local_members_in_priority_order(void **state)
{
    (void) state;
    make(0x40, 1, member); /* a */
    make(0x41, 4, member); /* b */
    make(0x42, 2, member); /* c */
    assert_int_equal(mcast_join(3, 0x40, PORT_0), MT_OK);
    assert_int_equal(mcast_join(3, 0x41, PORT_0), MT_OK);
    assert_int_equal(mcast_join(3, 0x42, PORT_0), MT_OK);
    assert_int_equal(mcast_join(4, 0x40, PORT_0), MT_OK);
    assert_int_equal(mcast_member_count(3), 3);
    assert_int_equal(sched_send_to(MT_PID_MULTICAST, 3, NULL, 0, 0), MT_OK);
    assert_string_equal(order, "bca");
    assert_int_equal(sched_task_kill(0x40), MT_OK);
    assert_int_equal(mcast_member_count(3), 2);
    assert_int_equal(mcast_member_count(4), 0);
}

/* ---- errors: a code and a logged event each ---- */

static void test_send_to_unknown_pid_is_rejected_and_logged(void **state)
{
    (void) state;
    test_count_logged_errors(MT_OK); /* drain */
    assert_int_equal(sched_send_to(0x77, PORT_0, NULL, 0, 0), MT_ERR_NO_TASK);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 1);
}

/* An empty slot of the task table holds task_none, whose pid is
 * MT_PID_NONE: a send to that pid finds it in its home slot (0) and must
 * still be refused as a send to no task, by every way by pid, whether the
 * slot is empty or holds a task with another pid. */
static void expect_no_task_for_pid_none(void)
{
    test_count_logged_errors(MT_OK); /* drain */
    assert_int_equal(sched_send_to(MT_PID_NONE, PORT_0, NULL, 0, 0), MT_ERR_NO_TASK);
    assert_int_equal(sched_signal_to(MT_PID_NONE, PORT_0), MT_ERR_NO_TASK);
    assert_int_equal(sched_send_to(MT_PID_NONE, PORT_0, "ab", 2, 0), MT_ERR_NO_TASK);
    assert_int_equal(sched_post_isr(MT_PID_NONE, PORT_0, NULL, 0, 0), MT_ERR_NO_TASK);
    assert_int_equal(sched_post_isr(MT_PID_NONE, PORT_0, "ab", 2, 0), MT_ERR_NO_TASK);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 5);
    assert_int_equal(sched_queued_count(), 0);
}

static void test_send_to_pid_none_finds_no_task_in_its_slot(void **state)
{
    (void) state;
    expect_no_task_for_pid_none();
    make(0x11, 2, worker); /* home slot 0, as MT_PID_NONE's */
    expect_no_task_for_pid_none();
    assert_int_equal(received, 0);
    assert_int_equal(sched_signal_to(0x11, PORT_0), MT_OK); /* the slot's own task */
    assert_int_equal(received, 1);
    assert_int_equal(sched_task_kill(0x11), MT_OK); /* the slot empty again */
    expect_no_task_for_pid_none();
}

static void test_send_to_unknown_port_is_rejected_and_logged(void **state)
{
    (void) state;
    make(0x20, 2, worker);
    test_count_logged_errors(MT_OK);
    assert_int_equal(sched_send_to(0x20, PORT_LIMIT, NULL, 0, 0), MT_ERR_NO_PORT);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 1);
    assert_int_equal(received, 0);
}

static mt_err_t route_user(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) len;
    (void) state;
    if (port == PORT_0) *(mt_err_t *) data = sched_send(3, NULL, 0, 0);
    return MT_OK;
}

static void test_send_on_missing_output_port_is_rejected(void **state)
{
    (void) state;
    static const route_t one[] = {{.pid = 0x20, .port = PORT_0}};
    make(0x20, 2, worker);
    task_spec_t spec = {
        .pid = 0x22, .prio = 2, .handler = route_user, .routes = one, .n_routes = 1};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(0x22, NULL, 0), MT_OK);
    mt_err_t seen = MT_OK;
    assert_int_equal(sched_send_to(0x22, PORT_0, &seen, sizeof seen, 0), MT_OK);
    assert_int_equal(seen, MT_ERR_NO_PORT);
}

/* ---- sched_signal(): a message without payload ---- */

#define SIGNALLER 0x30
#define SIGNALLED 0x31
static mt_err_t signal_result;
static bool signal_saw_no_payload;
static mt_pid_t signal_sender;
static uint8_t signal_depth;

/* Receives a signal: notes its run ('r') and what it was given. */
static mt_err_t signalled(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_0) return MT_OK;
    strcat(order, "r");
    signal_saw_no_payload = data == NULL && len == 0;
    signal_sender = sched_sender();
    signal_depth = sched_stack_depth();
    return MT_OK;
}

/* PORT_0 signals along its route 0, PORT_0 + 1 by pid, PORT_0 + 2 along a
 * route it does not have; '(' and ')' around the signal. */
static mt_err_t signaller(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port < PORT_0) return MT_OK;
    strcat(order, "(");
    if (port == PORT_0) signal_result = sched_signal(0);
    if (port == PORT_0 + 1) signal_result = sched_signal_to(SIGNALLED, PORT_0);
    if (port == PORT_0 + 2) signal_result = sched_signal(1);
    strcat(order, ")");
    return MT_OK;
}

/* The signaller, its route 0 to SIGNALLED's PORT_0, created and
 * initialised with handler h. */
static void make_routed_signaller(mt_prio_t prio, task_handler_t h)
{
    static const route_t to_signalled[] = {{.pid = SIGNALLED, .port = PORT_0}};
    task_spec_t spec = {
        .pid = SIGNALLER, .prio = prio, .handler = h, .routes = to_signalled, .n_routes = 1};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(SIGNALLER, NULL, 0), MT_OK);
}

static void make_signal_pair(mt_prio_t signaller_prio, mt_prio_t signalled_prio)
{
    make(SIGNALLED, signalled_prio, signalled);
    make_routed_signaller(signaller_prio, signaller);
    signal_result = MT_ERR_INVALID;
    signal_saw_no_payload = false;
    signal_sender = MT_PID_NONE;
    signal_depth = 0;
}

/* The signaller signals along its route, then by pid: the receiver ran as
 * `expected` says ('(' and ')' around the signal, 'r' the receiver), with
 * no payload, from the signaller, at stack depth `depth`. */
static void signal_both_ways(const char *expected, uint8_t depth)
{
    for (mt_port_t how = PORT_0; how <= PORT_0 + 1; how++) {
        order[0] = 0;
        assert_int_equal(sched_send_to(SIGNALLER, how, NULL, 0, 0), MT_OK);
        assert_string_equal(order, expected);
        assert_int_equal(signal_result, MT_OK);
        assert_true(signal_saw_no_payload);
        assert_int_equal(signal_sender, SIGNALLER);
        assert_int_equal(signal_depth, depth);
    }
}

static void test_signal_to_a_higher_task_runs_it_at_once_without_payload(void **state)
{
    (void) state;
    make_signal_pair(2, 3);
    signal_both_ways("(r)", 2); /* nested in the signaller (rule 1) */
}

static void test_signal_to_a_lower_task_waits_for_the_sender(void **state)
{
    (void) state;
    make_signal_pair(3, 2);
    signal_both_ways("()r", 1); /* queued (rule 2), run at its return */
}

/* A route is resolved by its first use (the general path); the signals
 * after it take the queued fast path, handed the control block the send
 * read under its lock: each waits in its turn as the first did. */
static void test_signal_along_a_resolved_route_waits_like_the_first(void **state)
{
    (void) state;
    make_signal_pair(3, 2);
    for (int i = 0; i < 3; i++) {
        order[0] = 0;
        assert_int_equal(sched_send_to(SIGNALLER, PORT_0, NULL, 0, 0), MT_OK);
        assert_string_equal(order, "()r"); /* queued (rule 2), run at its return */
        assert_int_equal(signal_result, MT_OK);
        assert_int_equal(signal_sender, SIGNALLER);
        assert_int_equal(signal_depth, 1);
    }
}

/* A resolved route to a task whose INIT has not been handled: the queued
 * fast path leaves it to the general path, which holds the signals until
 * the INIT (rule 7); they then run in the order they were sent. */
static void test_signal_along_a_resolved_route_to_an_uninitialised_task_is_held(void **state)
{
    (void) state;
    task_spec_t held = {.pid = SIGNALLED, .prio = 2, .handler = signalled, .state_size = 16};
    assert_int_equal(sched_task_create(&held), MT_OK);
    make_routed_signaller(3, signaller);
    order[0] = 0;
    for (int i = 0; i < 2; i++) {
        signal_result = MT_ERR_INVALID;
        assert_int_equal(sched_send_to(SIGNALLER, PORT_0, NULL, 0, 0), MT_OK);
        assert_int_equal(signal_result, MT_OK);
    }
    assert_string_equal(order, "()()"); /* both held */
    assert_int_equal(sched_queued_count(), 2);
    assert_int_equal(sched_task_init(SIGNALLED, NULL, 0), MT_OK);
    assert_string_equal(order, "()()rr");
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(signal_sender, SIGNALLER);
}

/* sched_send() with a small borrowed payload to a lower task: it waits
 * with its own copy of the bytes, through the general path while the
 * route is not resolved and the queued fast path (the by-pid way's body)
 * once it is; the sender's buffer is changed before the copies run. */
static char copies_seen[sizeof "abcdabcd"]; /* four copies of two bytes, and the NUL */
static uint8_t copies_from_sender;

static mt_err_t copy_receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_0 || len != 2) return MT_OK;
    strncat(copies_seen, data, 2);
    if (sched_sender() == SIGNALLER) copies_from_sender++;
    return MT_OK;
}

static mt_err_t copy_sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    char bytes[2] = {'a', 'b'};
    signal_result = sched_send(0, bytes, sizeof bytes, 0);
    bytes[0] = 'c';
    bytes[1] = 'd';
    if (signal_result == MT_OK) signal_result = sched_send(0, bytes, sizeof bytes, 0);
    bytes[0] = bytes[1] = 'x'; /* the queued copies must not see this */
    return MT_OK;
}

static void test_send_of_a_small_payload_along_a_route_waits_with_a_copy(void **state)
{
    (void) state;
    make(SIGNALLED, 2, copy_receiver);
    make_routed_signaller(3, copy_sender);
    copies_seen[0] = 0;
    copies_from_sender = 0;
    for (int round = 0; round < 2; round++) {
        assert_int_equal(sched_send_to(SIGNALLER, PORT_0, NULL, 0, 0), MT_OK);
        assert_int_equal(signal_result, MT_OK);
    }
    assert_string_equal(copies_seen, "abcdabcd");
    assert_int_equal(copies_from_sender, 4);
    assert_int_equal(sched_queued_count(), 0);
}

/* A route outlives the task it leads to: a send along it after the kill
 * finds no task, and once a task of that pid is made again the route
 * leads to it, at once. */
static void test_route_to_a_killed_task_finds_the_one_made_again(void **state)
{
    (void) state;
    make_signal_pair(2, 3);
    signal_both_ways("(r)", 2);
    assert_int_equal(sched_task_kill(SIGNALLED), MT_OK);
    order[0] = 0;
    assert_int_equal(sched_send_to(SIGNALLER, PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(order, "()");
    assert_int_equal(signal_result, MT_ERR_NO_TASK);
    make(SIGNALLED, 3, signalled);
    signal_both_ways("(r)", 2);
}

/* A route made before its task: every send along it finds none, the
 * route staying unresolved (neither fast path takes it), and once the task
 * is made the route leads to it, at once, and to the queue when it is the
 * lower of the two. */
static void test_route_made_before_its_task_finds_it_once_made(void **state)
{
    (void) state;
    make_routed_signaller(2, signaller);
    for (int i = 0; i < 2; i++) {
        order[0] = 0;
        signal_result = MT_ERR_INVALID;
        assert_int_equal(sched_send_to(SIGNALLER, PORT_0, NULL, 0, 0), MT_OK);
        assert_string_equal(order, "()");
        assert_int_equal(signal_result, MT_ERR_NO_TASK);
    }
    make(SIGNALLED, 3, signalled);
    signal_both_ways("(r)", 2);
    assert_int_equal(sched_task_kill(SIGNALLED), MT_OK);
    make(SIGNALLED, 1, signalled);
    signal_both_ways("()r", 1);
}

/* A route may lead to its own task: the send waits until the handler has
 * returned (rule 4), every time; the third run sends no more. */
static uint8_t self_runs;

static mt_err_t self_signaller(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    strcat(order, "(");
    if (++self_runs < 3) signal_result = sched_signal(0);
    strcat(order, ")");
    return MT_OK;
}

static void test_route_to_its_own_task_waits_for_the_handler(void **state)
{
    (void) state;
    static const route_t to_itself[] = {{.pid = SIGNALLER, .port = PORT_0}};
    task_spec_t spec = {
        .pid = SIGNALLER, .prio = 2, .handler = self_signaller, .routes = to_itself, .n_routes = 1};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(SIGNALLER, NULL, 0), MT_OK);
    signal_result = MT_ERR_INVALID;
    self_runs = 0;
    assert_int_equal(sched_send_to(SIGNALLER, PORT_0, NULL, 0, 0), MT_OK);
    assert_string_equal(order, "()()()"); /* one after the other, never nested */
    assert_int_equal(signal_result, MT_OK);
}

static void test_signal_errors_are_the_sends_and_logged(void **state)
{
    (void) state;
    make_signal_pair(2, 3);
    test_count_logged_errors(MT_OK);                 /* drain */
    assert_int_equal(sched_signal(0), MT_ERR_STATE); /* no handler runs */
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    assert_int_equal(sched_send_to(SIGNALLER, PORT_0 + 2, NULL, 0, 0), MT_OK);
    assert_int_equal(signal_result, MT_ERR_NO_PORT); /* no route 1 */
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 1);
    assert_int_equal(sched_signal_to(0x77, PORT_0), MT_ERR_NO_TASK);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 1);
    assert_int_equal(sched_signal_to(SIGNALLED, PORT_LIMIT), MT_ERR_NO_PORT);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 1);
    assert_string_equal(order, "()");
}

/* An interrupt body's signal is posted as from the interrupt (rule 3): it
 * never runs in the body, and at the exit only if strictly higher. */
static bool signal_from_body_ran_in_body;

static void isr_signals(void)
{
    strcat(order, "i");
    assert_int_equal(sched_signal(0), MT_OK); /* the interrupted handler's route */
    assert_int_equal(sched_signal_to(SIGNALLED, PORT_0), MT_OK);
    signal_from_body_ran_in_body = strchr(order, 'r') != NULL;
}

static mt_err_t interrupted(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    strcat(order, "(");
    tport_irq_raise(0);
    strcat(order, ")");
    return MT_OK;
}

/* Interrupt line 0 runs `isr` in a handler of priority 2 with a route to
 * SIGNALLED (3), sent a message by boot code; the body sent nothing that
 * ran in it, and what it sent came from no task. */
static void interrupt_the_signaller(tport_isr_fn isr)
{
    make(SIGNALLED, 3, signalled);
    make_routed_signaller(2, interrupted);
    tport_irq_attach(0, isr);
    signal_from_body_ran_in_body = true;
    signal_saw_no_payload = false;
    assert_int_equal(sched_send_to(SIGNALLER, PORT_0, NULL, 0, 0), MT_OK);
    assert_false(signal_from_body_ran_in_body);
    assert_int_equal(signal_sender, MT_PID_NONE);
}

static void test_signal_from_an_interrupt_body_is_posted(void **state)
{
    (void) state;
    interrupt_the_signaller(isr_signals);
    assert_string_equal(order, "(irr)"); /* both at the interrupt's exit */
    assert_true(signal_saw_no_payload);
}

/* The same for a send with a payload along the interrupted handler's
 * route: copied and queued as from the interrupt, never run in the body. */
static void isr_sends(void)
{
    strcat(order, "i");
    assert_int_equal(sched_send(0, "x", 1, 0), MT_OK);
    signal_from_body_ran_in_body = strchr(order, 'r') != NULL;
}

static void test_send_from_an_interrupt_body_is_posted(void **state)
{
    (void) state;
    interrupt_the_signaller(isr_sends);
    assert_string_equal(order, "(ir)"); /* at the interrupt's exit */
    assert_false(signal_saw_no_payload);
}

/* Every pool block holds one, and the interrupt slot one more: the first
 * waits there, queued in the slot's block (post.c). */
static void test_full_queue_is_rejected_and_nothing_is_lost(void **state)
{
    (void) state;
    make(0x20, 1, worker);
    unsigned accepted = 0, refused = 0;
    test_count_logged_errors(MT_OK);
    port_irq_state_t s = port_irq_save();
    for (int i = 0; i < MOTET_MAX_QUEUED_MSGS + 5; i++) {
        mt_err_t err = sched_post_isr(0x20, PORT_0, NULL, 0, 0);
        if (err == MT_OK)
            accepted++;
        else {
            assert_int_equal(err, MT_ERR_QUEUE_FULL);
            refused++;
        }
    }
    port_irq_restore(s);
    assert_int_equal(accepted, MOTET_MAX_QUEUED_MSGS + 1);
    assert_int_equal(refused, 4);
    assert_int_equal(test_count_logged_errors(MT_ERR_QUEUE_FULL), 4);
    sched_run_pending();
    assert_int_equal(received, accepted); /* every accepted message arrives */
}

/* A handler above the receiver sends it small borrowed payloads that must
 * wait (queued under the lookup's lock), a larger one (copied to the heap,
 * the general path) in between, then more than the pool holds; they run
 * when the sender returns. */
static unsigned waited_sent, waited_refused, waited_logged;
static uint8_t waited_bytes[MOTET_MAX_QUEUED_MSGS + 2];
static uint8_t waited_count;

static mt_err_t waiting_sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    static uint8_t large[6] = {0xEE};
    for (uint8_t i = 0; i < MOTET_MAX_QUEUED_MSGS + 2; i++) {
        uint8_t two[2] = {i, (uint8_t) ~i};
        mt_err_t err = i == 1 ? sched_send_to(0x20, PORT_0 + 4, large, sizeof large, 0)
                              : sched_send_to(0x20, PORT_0 + 4, two, sizeof two, 0);
        memset(two, 0, sizeof two); /* the message keeps its own copy */
        if (err == MT_OK)
            waited_sent++;
        else {
            assert_int_equal(err, MT_ERR_QUEUE_FULL);
            waited_refused++;
        }
    }
    /* Before the receiver's runs fill the event log. */
    waited_logged = test_count_logged_errors(MT_ERR_QUEUE_FULL);
    return MT_OK;
}

static mt_err_t waiting_receiver(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_0 + 4) return MT_OK;
    const uint8_t *b = data;
    if (len == 2 && (uint8_t) (b[0] ^ b[1]) == 0xFFu) waited_bytes[waited_count++] = b[0];
    if (len == 6 && b[0] == 0xEE) waited_bytes[waited_count++] = 1;
    return MT_OK;
}

static void test_waiting_sends_keep_their_order_and_a_full_pool_is_logged(void **state)
{
    (void) state;
    waited_sent = waited_refused = waited_logged = waited_count = 0;
    make(0x20, 1, waiting_receiver);
    make(0x21, 3, waiting_sender);
    test_count_logged_errors(MT_OK);
    assert_int_equal(sched_send_to(0x21, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(waited_refused, 2);
    assert_int_equal(waited_sent, MOTET_MAX_QUEUED_MSGS);
    assert_int_equal(waited_logged, 2);
    assert_int_equal(waited_count, MOTET_MAX_QUEUED_MSGS);
    for (uint8_t i = 0; i < waited_count; i++) assert_int_equal(waited_bytes[i], i);
}

static void test_payload_copy_on_exhausted_heap_is_rejected(void **state)
{
    (void) state;
    make(0x20, 1, worker);
    make(0x21, 5, worker);
    mem_stats_t st;
    mem_get_stats(&st);
    void *hog = mem_alloc(st.largest_free - 16);
    assert_non_null(hog);
    static uint8_t big[200];
    test_count_logged_errors(MT_OK);
    port_irq_state_t s = port_irq_save();
    assert_int_equal(sched_post_isr(0x20, PORT_0, big, sizeof big, 0), MT_ERR_NO_MEM);
    port_irq_restore(s);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_MEM), 1);
    assert_int_equal(sched_queued_count(), 0);
}

/* A system pid is the kernel's: the public calls neither create a task
 * under one (the manager's and the migrator's, the reserved 0xF4 .. 0xFE)
 * nor kill one, whether it runs or not; each refusal is MT_ERR_INVALID,
 * logged, and creates nothing (before: created, and a task of the
 * application's received what the bus posts to the manager and sent as
 * it; the kill stopped the manager's deadline). */
static void test_a_system_pid_is_neither_created_nor_killed(void **state)
{
    (void) state;
    test_count_logged_errors(MT_OK);
    static const mt_pid_t system[] = {MT_PID_MIGRATOR, MT_PID_APPMGR, 0xF4, 0xFE};
    for (unsigned i = 0; i < sizeof system; i++) {
        bool runs = sched_task_exists(system[i]); /* the kernel's own, booted */
        task_spec_t spec = {.pid = system[i], .prio = 1, .handler = worker};
        assert_int_equal(sched_task_create(&spec), MT_ERR_INVALID);
        assert_int_equal(sched_task_exists(system[i]), runs);
        assert_int_equal(sched_task_kill(system[i]), MT_ERR_INVALID);
        assert_int_equal(sched_task_exists(system[i]), runs);
    }
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 2 * sizeof system);
    make(0xEF, 1, worker); /* the last application pid is one */
    assert_int_equal(sched_task_kill(0xEF), MT_OK);
}

static void test_create_rejects_duplicates_and_bad_specs(void **state)
{
    (void) state;
    make(0x20, 2, worker);
    task_spec_t dup = {.pid = 0x20, .prio = 2, .handler = worker};
    assert_int_equal(sched_task_create(&dup), MT_ERR_EXISTS);
    task_spec_t virt = {.pid = MT_PID_MULTICAST, .prio = 2, .handler = worker};
    assert_int_equal(sched_task_create(&virt), MT_ERR_INVALID);
    task_spec_t prio = {.pid = 0x23, .prio = MOTET_PRIO_LEVELS, .handler = worker};
    assert_int_equal(sched_task_create(&prio), MT_ERR_INVALID);
    task_spec_t nohandler = {.pid = 0x23, .prio = 1};
    assert_int_equal(sched_task_create(&nohandler), MT_ERR_INVALID);
    assert_int_equal(sched_task_init(0x20, NULL, 0), MT_ERR_STATE); /* twice */
    /* A route to a port no task has: refused and logged, nothing kept. */
    static const route_t bad_port[] = {{0x20, PORT_0}, {0x20, PORT_LIMIT}};
    task_spec_t routed = {.pid = 0x23,
                          .prio = 1,
                          .handler = worker,
                          .state_size = 4,
                          .routes = bad_port,
                          .n_routes = 2};
    mem_stats_t before, after;
    mem_get_stats(&before);
    test_count_logged_errors(MT_OK);
    assert_int_equal(sched_task_create(&routed), MT_ERR_NO_PORT);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 1);
    assert_false(sched_task_exists(0x23));
    mem_get_stats(&after);
    assert_int_equal(after.alloc_count, before.alloc_count);
}

/* ---- INIT once ---- */

enum { PID_INITER = 0x24, PID_LATE = 0x25 };
static unsigned inits;
static uint8_t init_byte;
static mt_err_t second_init;

static mt_err_t late(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT) {
        inits++;
        init_byte = len ? ((uint8_t *) data)[0] : 0;
    }
    if (port == PORT_0) received++;
    return MT_OK;
}

/* PID_LATE created, not initialised, with no INIT counted and no error
 * logged yet. */
static void make_late(void)
{
    task_spec_t spec = {.pid = PID_LATE, .prio = 1, .handler = late};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    inits = 0;
    test_count_logged_errors(MT_OK); /* drain */
}

/* Two INITs for a less important task, both queued before the first runs. */
static mt_err_t initer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    assert_int_equal(sched_task_init(PID_LATE, "a", 1), MT_OK);
    assert_int_equal(sched_send_to(PID_LATE, PORT_0, NULL, 0, 0), MT_OK); /* held */
    second_init = sched_task_init(PID_LATE, "b", 1);
    return MT_OK;
}

static void test_a_second_init_queued_behind_the_first_is_refused_and_logged(void **state)
{
    (void) state;
    make(PID_INITER, 5, initer);
    make_late();
    assert_int_equal(sched_send_to(PID_INITER, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(second_init, MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    assert_int_equal(inits, 1); /* one PORT_INIT, the first call's */
    assert_int_equal(init_byte, 'a');
    assert_int_equal(received, 1); /* the held message followed it */
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_task_init(PID_LATE, NULL, 0), MT_ERR_STATE); /* and after it */
    assert_int_equal(inits, 1);
}

static void test_an_init_refused_for_its_arguments_may_be_made_again(void **state)
{
    (void) state;
    make_late();
    assert_int_equal(sched_task_init(PID_LATE, NULL, 1), MT_ERR_INVALID); /* bytes, no pointer */
    assert_int_equal(sched_task_init(PID_LATE, "c", 1), MT_OK);
    assert_int_equal(inits, 1);
    assert_int_equal(init_byte, 'c');
}

/* A send to PORT_INIT is the task's INIT too: the same one-per-task rule
 * holds whichever way the first and the second come. */
static void test_an_init_sent_to_port_init_counts_as_the_one_init(void **state)
{
    (void) state;
    make_late();
    assert_int_equal(sched_send_to(PID_LATE, PORT_INIT, "s", 1, 0), MT_OK); /* runs at once */
    assert_int_equal(inits, 1);
    assert_int_equal(init_byte, 's');
    assert_int_equal(sched_task_init(PID_LATE, "t", 1), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    assert_int_equal(inits, 1);
}

/* Both queued behind a running task: the second, by send, is refused and
 * logged, and nothing of it is queued or leaked. */
static mt_err_t init_then_send_init(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    assert_int_equal(sched_task_init(PID_LATE, "a", 1), MT_OK);
    second_init = sched_send_to(PID_LATE, PORT_INIT, "b", 1, 0);
    return MT_OK;
}

static void test_a_send_to_port_init_behind_a_queued_init_is_refused_and_logged(void **state)
{
    (void) state;
    make(PID_INITER, 5, init_then_send_init);
    make_late();
    mem_stats_t before, after;
    mem_get_stats(&before);
    assert_int_equal(sched_send_to(PID_INITER, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(second_init, MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    assert_int_equal(inits, 1);
    assert_int_equal(init_byte, 'a');
    assert_int_equal(sched_queued_count(), 0);
    mem_get_stats(&after);
    assert_int_equal(after.alloc_count, before.alloc_count);
}

/* Two sends to PORT_INIT, the first still queued (an interrupt's post). */
static void test_a_second_post_to_port_init_is_refused(void **state)
{
    (void) state;
    make_late();
    assert_int_equal(sched_post_isr(PID_LATE, PORT_INIT, "x", 1, 0), MT_OK);
    assert_int_equal(sched_post_isr(PID_LATE, PORT_INIT, "y", 1, 0), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
    sched_run_pending();
    assert_int_equal(inits, 1);
    assert_int_equal(init_byte, 'x');
    assert_int_equal(sched_queued_count(), 0);
}

static void test_task_slab_exhaustion_is_reported(void **state)
{
    (void) state;
    unsigned made = 0;
    mt_err_t err = MT_OK;
    for (mt_pid_t pid = 0x20; err == MT_OK; pid++) {
        task_spec_t spec = {.pid = pid, .prio = 1, .handler = worker};
        err = sched_task_create(&spec);
        if (err == MT_OK) made++;
    }
    assert_int_equal(err, MT_ERR_NO_SLAB);
    assert_int_equal(made, MOTET_MAX_TASKS - 1); /* the manager holds one */
}

static void test_a_bad_route_port_is_reported_before_anything_is_allocated(void **state)
{
    (void) state;
    for (mt_pid_t pid = 0x20; pid < 0x20 + MOTET_MAX_TASKS - 1; pid++) { /* the manager: one */
        task_spec_t spec = {.pid = pid, .prio = 1, .handler = worker};
        assert_int_equal(sched_task_create(&spec), MT_OK);
    }
    /* The task cache is full: the spec's own error comes first. */
    static const route_t bad[] = {{.pid = 0x20, .port = PORT_LIMIT}};
    task_spec_t spec = {.pid = 0x70, .prio = 1, .handler = worker, .routes = bad, .n_routes = 1};
    assert_int_equal(sched_task_create(&spec), MT_ERR_NO_PORT);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_PORT), 1);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 0);
    assert_false(sched_task_exists(0x70));
}

static void test_tasks_stay_reachable_when_colliding_pids_are_killed(void **state)
{
    (void) state;
    /* The home slot is the pid's two nibbles XORed (sched.c): 0x20, 0x31,
     * 0x46 and 0x57 share one, 0x21 has the next. Killing one in the middle
     * of a probe chain must not hide the ones after it. */
    const mt_pid_t pids[] = {0x20, 0x31, 0x46, 0x21, 0x57};
    for (unsigned i = 0; i < 5; i++) make(pids[i], 1, worker);
    assert_int_equal(sched_task_kill(0x31), MT_OK);
    assert_int_equal(sched_task_kill(0x20), MT_OK);
    assert_true(sched_task_exists(0x46));
    assert_true(sched_task_exists(0x21));
    assert_true(sched_task_exists(0x57));
    assert_false(sched_task_exists(0x31));
    received = 0;
    assert_int_equal(sched_send_to(0x57, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(sched_send_to(0x21, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(received, 2);
    make(0x31, 1, worker); /* the freed slots are reusable */
    assert_true(sched_task_exists(0x31));
}

/* A remote record takes an application pid only, as a local task does:
 * none, a virtual pid, a system task's (the migrator's, the manager's,
 * whether it runs here or not), a reserved one or the invalid pid is
 * refused with MT_ERR_INVALID, logged, and recorded nowhere (before: the
 * system and reserved pids were recorded, and what a task sent to them
 * went to the bus as if an application's task had the pid). */
static void test_a_remote_record_takes_an_application_pid_only(void **state)
{
    (void) state;
    static const mt_pid_t not_app[] = {
        MT_PID_NONE, MT_PID_MULTICAST, MT_PID_TIMESYNC, MT_PID_MIGRATOR, MT_PID_APPMGR, 0xF4,
        0xFE,        MT_PID_INVALID};
    test_count_logged_errors(MT_OK);
    for (unsigned i = 0; i < sizeof not_app; i++) {
        bool runs = sched_task_exists(not_app[i]);
        assert_int_equal(sched_task_create_remote(not_app[i], 2, 3), MT_ERR_INVALID);
        assert_int_equal(sched_task_exists(not_app[i]), runs);
    }
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), sizeof not_app);
    /* Recorded nowhere: a send to a reserved pid finds no task (with a
     * record, it went the remote way: MT_ERR_NO_ROUTE without a bus), and a
     * second try is refused the same, not MT_ERR_EXISTS. */
    assert_int_equal(sched_send_to(0xF4, PORT_0, NULL, 0, 0), MT_ERR_NO_TASK);
    assert_int_equal(sched_task_create_remote(0xF4, 2, 3), MT_ERR_INVALID);
    assert_int_equal(sched_task_create_remote(MT_PID_LAST_APP, 2, 3), MT_OK); /* the range's ends */
    assert_int_equal(sched_task_create_remote(0x01, 2, 3), MT_OK);
    assert_int_equal(sched_task_create_remote(0x01, 2, 3), MT_ERR_EXISTS);
}

/* The kernel's own task creation takes the migrator's and the manager's
 * pids alone: none, an application's, a virtual pid, every reserved one
 * (0xF4 .. 0xFE) and the invalid pid are refused with MT_ERR_INVALID,
 * logged, and no task is created under them (a reserved pid's task would
 * receive what is sent to a pid the kernel keeps for itself). */
static void test_the_kernels_task_creation_takes_its_own_pids_only(void **state)
{
    (void) state;
    static const mt_pid_t not_system_task[] = {
        MT_PID_NONE, 0x01, MT_PID_LAST_APP, MT_PID_MULTICAST, MT_PID_TIMESYNC, MT_PID_INVALID};
    test_count_logged_errors(MT_OK);
    unsigned refused = 0;
    for (unsigned pid = 0; pid <= 0xFFu; pid++) {
        bool reserved = pid > MT_PID_APPMGR && pid < MT_PID_INVALID;
        bool listed = memchr(not_system_task, (int) pid, sizeof not_system_task) != NULL;
        if (!reserved && !listed) continue;
        task_spec_t spec = {.pid = (mt_pid_t) pid, .prio = 2, .handler = worker};
        assert_int_equal(task_create_system(&spec), MT_ERR_INVALID);
        assert_false(sched_task_exists((mt_pid_t) pid));
        refused++;
    }
    assert_int_equal(refused, sizeof not_system_task + 11u);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), refused);
}

static void test_remote_send_without_bus_is_no_route(void **state)
{
    (void) state;
    assert_int_equal(sched_task_create_remote(0x50, 2, 3), MT_OK);
    assert_int_equal(sched_send_to(0x50, PORT_0, NULL, 0, 0), MT_ERR_NO_ROUTE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_kill_delivers_final_and_frees_everything, setup),
        cmocka_unit_test_setup(test_kill_drops_queued_messages_and_logs_how_many, setup),
        cmocka_unit_test_setup(test_kill_of_running_task_is_deferred_until_it_returns, setup),
        cmocka_unit_test_setup(test_send_after_kill_is_an_error, setup),
        cmocka_unit_test_setup(test_take_of_heap_payload_is_zero_copy_and_moves_ownership, setup),
        cmocka_unit_test_setup(test_take_of_borrowed_payload_is_a_deep_copy, setup),
        cmocka_unit_test_setup(test_queued_borrowed_payload_is_copied_at_send_time, setup),
        cmocka_unit_test_setup(test_untaken_heap_payload_is_freed_after_the_handler, setup),
        cmocka_unit_test_setup(test_multicast_reaches_local_members_in_priority_order, setup),
        cmocka_unit_test_setup(test_multicast_skips_a_member_an_earlier_one_killed, setup),
        cmocka_unit_test_setup(test_multicast_does_not_reach_a_task_joined_during_the_delivery,
                               setup),
        cmocka_unit_test_setup(test_multicast_refuses_a_member_that_is_not_an_application_task,
                               setup),
        cmocka_unit_test_setup(test_multicast_members_that_leave_and_join_keep_priority_order,
                               setup),
        cmocka_unit_test_setup(test_multicast_members_of_one_level_keep_their_join_order, setup),
        cmocka_unit_test_setup(test_multicast_table_full_is_rejected_and_logged, setup),
        cmocka_unit_test_setup(test_send_to_unknown_pid_is_rejected_and_logged, setup),
        cmocka_unit_test_setup(test_send_to_pid_none_finds_no_task_in_its_slot, setup),
        cmocka_unit_test_setup(test_send_to_unknown_port_is_rejected_and_logged, setup),
        cmocka_unit_test_setup(test_send_on_missing_output_port_is_rejected, setup),
        cmocka_unit_test_setup(test_signal_to_a_higher_task_runs_it_at_once_without_payload, setup),
        cmocka_unit_test_setup(test_signal_to_a_lower_task_waits_for_the_sender, setup),
        cmocka_unit_test_setup(test_signal_along_a_resolved_route_waits_like_the_first, setup),
        cmocka_unit_test_setup(test_send_of_a_small_payload_along_a_route_waits_with_a_copy, setup),
        cmocka_unit_test_setup(test_signal_along_a_resolved_route_to_an_uninitialised_task_is_held,
                               setup),
        cmocka_unit_test_setup(test_signal_errors_are_the_sends_and_logged, setup),
        cmocka_unit_test_setup(test_route_to_a_killed_task_finds_the_one_made_again, setup),
        cmocka_unit_test_setup(test_route_made_before_its_task_finds_it_once_made, setup),
        cmocka_unit_test_setup(test_route_to_its_own_task_waits_for_the_handler, setup),
        cmocka_unit_test_setup(test_signal_from_an_interrupt_body_is_posted, setup),
        cmocka_unit_test_setup(test_send_from_an_interrupt_body_is_posted, setup),
        cmocka_unit_test_setup(test_full_queue_is_rejected_and_nothing_is_lost, setup),
        cmocka_unit_test_setup(test_payload_copy_on_exhausted_heap_is_rejected, setup),
        cmocka_unit_test_setup(test_create_rejects_duplicates_and_bad_specs, setup),
        cmocka_unit_test_setup(test_a_system_pid_is_neither_created_nor_killed, setup),
        cmocka_unit_test_setup(test_a_second_init_queued_behind_the_first_is_refused_and_logged,
                               setup),
        cmocka_unit_test_setup(test_an_init_refused_for_its_arguments_may_be_made_again, setup),
        cmocka_unit_test_setup(test_an_init_sent_to_port_init_counts_as_the_one_init, setup),
        cmocka_unit_test_setup(test_a_send_to_port_init_behind_a_queued_init_is_refused_and_logged,
                               setup),
        cmocka_unit_test_setup(test_a_second_post_to_port_init_is_refused, setup),
        cmocka_unit_test_setup(test_task_slab_exhaustion_is_reported, setup),
        cmocka_unit_test_setup(test_a_bad_route_port_is_reported_before_anything_is_allocated,
                               setup),
        cmocka_unit_test_setup(test_tasks_stay_reachable_when_colliding_pids_are_killed, setup),
        cmocka_unit_test_setup(test_a_remote_record_takes_an_application_pid_only, setup),
        cmocka_unit_test_setup(test_the_kernels_task_creation_takes_its_own_pids_only, setup),
        cmocka_unit_test_setup(test_remote_send_without_bus_is_no_route, setup),
        cmocka_unit_test_setup(test_waiting_sends_keep_their_order_and_a_full_pool_is_logged,
                               setup),
    };
    return cmocka_run_group_tests_name("tasks and messages", tests, NULL, NULL);
}
