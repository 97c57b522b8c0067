/* SPDX-License-Identifier: MIT */
/*
 * The kernel core (cmake/core_config.cmake; here the test variant corelog,
 * the same with the event log on, built on the firmware ports, as the
 * native port needs its bus): with multicast, tasks on other modules, the
 * application manager, the statistics and heap payloads compiled out, what
 * they served is refused with a clear error, logged, and a heap block sent
 * stays its sender's; tasks, messages, timers and kills work as in the full
 * kernel (borrowed payloads: test_heap_payloads_off.c).
 *
 * MOTET_TEST_KERNEL: corelog
 */
#include "mem_internal.h"
#include "test_support.h"

#if MOTET_MULTICAST || MOTET_MAX_REMOTE_TASKS || MOTET_APPMGR || MOTET_STATS || MOTET_BUS ||       \
    MOTET_HEAP_PAYLOADS
#error "test_core_config runs on the kernel core only"
#endif

enum { PID_SENDER = 0x20, PID_WORKER = 0x21 };
enum { GROUP = 3 };

static unsigned finals, received, timeouts;
static mt_err_t send_result;
static void *payload;

static mt_err_t worker(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_FINAL) finals++;
    if (port == PORT_TIMEOUT0) timeouts++;
    if (port == PORT_0) received++;
    if (port == PORT_0 + 1) sched_task_kill(sched_current_pid()); /* ends when it returns */
    return MT_OK;
}

/* Its route 0 names a group: the send along it is refused. */
static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0)
        send_result = sched_send(0, payload, payload ? 4 : 0, payload ? MSG_HEAP : 0);
    return MT_OK;
}

static void make(mt_pid_t pid, task_handler_t h, const route_t *routes, uint8_t n_routes)
{
    task_spec_t spec = {.pid = pid,
                        .prio = 2,
                        .handler = h,
                        .state_size = 4,
                        .routes = routes,
                        .n_routes = n_routes};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

static const route_t to_group[] = {{MT_PID_MULTICAST, GROUP}};

static int setup(void **state)
{
    test_boot(state);
    finals = received = timeouts = 0;
    send_result = MT_OK;
    payload = NULL;
    make(PID_WORKER, worker, NULL, 0);
    make(PID_SENDER, sender, to_group, 1);
    (void) test_count_logged_errors(MT_OK); /* drain what creation logged */
    return 0;
}

static void test_group_join_and_sends_are_refused_and_logged(void **state)
{
    (void) state;
    assert_int_equal(mcast_join(GROUP, PID_WORKER, PORT_0), MT_ERR_NO_ROUTE);
    assert_int_equal(sched_send_to(MT_PID_MULTICAST, GROUP, NULL, 0, 0), MT_ERR_NO_ROUTE);
    assert_int_equal(sched_post_isr(MT_PID_MULTICAST, GROUP, NULL, 0, 0), MT_ERR_NO_ROUTE);
    assert_int_equal(sched_send_to(PID_SENDER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(send_result, MT_ERR_NO_ROUTE);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_ROUTE), 4);
    assert_int_equal(mcast_member_count(GROUP), 0);
    assert_int_equal(received, 0);
}

static void test_a_heap_payload_to_a_group_stays_the_senders(void **state)
{
    (void) state;
    payload = mem_alloc_owned(4, PID_SENDER);
    assert_non_null(payload);
    assert_int_equal(sched_send_to(PID_SENDER, PORT_0, NULL, 0, 0), MT_OK);
    /* MSG_HEAP itself is refused first: no heap payloads in the core. */
    assert_int_equal(send_result, MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 1);
    assert_int_equal(mem_owner(payload), PID_SENDER);
    /* Its state, its routes and the payload. */
    assert_int_equal(mem_free_all(PID_SENDER), 3);
}

/* An application's pid finds no room (MT_ERR_NO_SLAB); one that is no
 * application's is refused for what it is, MT_ERR_INVALID, as with remote
 * tasks compiled in (before: MT_ERR_NO_SLAB for any pid). */
static void test_tasks_on_other_modules_are_refused_and_logged(void **state)
{
    (void) state;
    assert_int_equal(sched_task_create_remote(0x50, 2, 1), MT_ERR_NO_SLAB);
    assert_int_equal(sched_send_to(0x50, PORT_0, NULL, 0, 0), MT_ERR_NO_TASK);
    assert_int_equal(sched_post_isr(0x50, PORT_0, NULL, 0, 0), MT_ERR_NO_TASK);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 1);
    assert_false(sched_task_exists(0x50));
    static const mt_pid_t not_app[] = {MT_PID_NONE, MT_PID_MIGRATOR, 0xF4, MT_PID_INVALID};
    for (unsigned i = 0; i < sizeof not_app; i++)
        assert_int_equal(sched_task_create_remote(not_app[i], 2, 1), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), sizeof not_app);
}

static void test_messages_timers_and_kills_work(void **state)
{
    (void) state;
    assert_int_equal(sched_send_to(PID_WORKER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(received, 1);
    assert_int_equal(timer_start_for(PID_WORKER, 0, TIMER_MS(5), false), MT_OK);
    tport_busy(TIMER_MS(6));
    sched_run_pending();
    assert_int_equal(timeouts, 1);
    /* A kill asked for by the running task ends when it returns. */
    assert_int_equal(sched_send_to(PID_WORKER, PORT_0 + 1, NULL, 0, 0), MT_OK);
    assert_int_equal(finals, 1);
    assert_false(sched_task_exists(PID_WORKER));
    assert_int_equal(sched_task_kill(PID_SENDER), MT_OK);
    assert_int_equal(finals, 1); /* the sender has no FINAL of its own */
    assert_false(sched_task_exists(PID_SENDER));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_group_join_and_sends_are_refused_and_logged, setup),
        cmocka_unit_test_setup(test_a_heap_payload_to_a_group_stays_the_senders, setup),
        cmocka_unit_test_setup(test_tasks_on_other_modules_are_refused_and_logged, setup),
        cmocka_unit_test_setup(test_messages_timers_and_kills_work, setup),
    };
    return cmocka_run_group_tests_name("the kernel core", tests, NULL, NULL);
}
