/* SPDX-License-Identifier: MIT */
/*
 * A task whose PORT_INIT handler returns an error never initialised: it is
 * killed as its INIT returns, whether the INIT ran at once or from the
 * queue, without FINAL; what it had (heap, timers, multicast memberships,
 * messages held for it) goes as a kill takes it, the held messages
 * counted in its KILL; EV_INITFAIL names it with the error, and a send to
 * it afterwards, by pid or along a route, is refused as to no task. An INIT
 * that succeeds changes nothing of this, and a kill beside a failed INIT,
 * waiting below it or asked for after it, still runs its task's FINAL.
 *
 * MOTET_TEST_KERNEL: default nothreads
 */
#include <string.h>

#include "sched_internal.h"
#include "test_support.h"

enum { PID_FRAGILE = 0x20, PID_SENDER = 0x21 };
enum { GROUP = 5 };
/* The init string the fragile task takes: four bytes, no other length. */
static const uint8_t GOOD_INIT[4] = {1, 2, 3, 4};

static unsigned inits, finals, received;

/* Writes half its state before it checks its init string, as a careless
 * INIT would: a heap block, a timer, a multicast membership. */
static mt_err_t fragile(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) state;
    if (port == PORT_INIT) {
        inits++;
        if (!mem_alloc(40)) return MT_ERR_NO_MEM;
        mt_err_t err = timer_start(0, TIMER_MS(10), true);
        if (err) return err;
        err = mcast_join(GROUP, sched_current_pid(), PORT_0);
        if (err) return err;
        return len == sizeof GOOD_INIT ? MT_OK : MT_ERR_INVALID;
    }
    if (port == PORT_FINAL) finals++;
    if (port == PORT_0) received++;
    return MT_OK;
}

static mt_err_t sent_after;

/* On PORT_0, the fragile task's INIT with a string two bytes short: it
 * outranks the fragile task, so that INIT waits in the queue for it. On
 * PORT_0 + 1, a message along its route to the fragile task. */
static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) assert_int_equal(sched_task_init(PID_FRAGILE, GOOD_INIT, 2), MT_OK);
    if (port == PORT_0 + 1) sent_after = sched_signal(0);
    return MT_OK;
}

static const route_t to_fragile[] = {{PID_FRAGILE, PORT_0}};

static int setup(void **state)
{
    test_boot(state);
    inits = finals = received = 0;
    sent_after = MT_OK;
    return 0;
}

static void make_fragile(void)
{
    task_spec_t spec = {.pid = PID_FRAGILE, .prio = 2, .handler = fragile, .state_size = 8};
    assert_int_equal(sched_task_create(&spec), MT_OK);
}

static void make_sender(void)
{
    task_spec_t spec = {
        .pid = PID_SENDER, .prio = 5, .handler = sender, .routes = to_fragile, .n_routes = 1};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_SENDER, NULL, 0), MT_OK);
}

/* The undrained records of the fragile task: how many of `type`, the
 * position of the last in the log (or -1) and its argument. */
typedef struct {
    unsigned initfails, kills, errors;
    int initfail_at, kill_at;
    uint16_t initfail_arg, kill_arg;
} logged_t;

static logged_t drain_fragile(void)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    logged_t got = {.initfail_at = -1, .kill_at = -1};
    for (unsigned i = 0; i < n; i++) {
        if (rec[i].pid != PID_FRAGILE) continue;
        if (rec[i].type == EV_INITFAIL) {
            got.initfails++;
            got.initfail_at = (int) i;
            got.initfail_arg = rec[i].arg;
        }
        if (rec[i].type == EV_KILL) {
            got.kills++;
            got.kill_at = (int) i;
            got.kill_arg = rec[i].arg;
        }
        if (rec[i].type == EV_ERROR && rec[i].arg == MT_ERR_INVALID) got.errors++;
    }
    return got;
}

/* Everything the fragile task had is gone, as a kill leaves it. */
static void assert_gone(const mem_stats_t *before)
{
    assert_false(sched_task_exists(PID_FRAGILE));
    assert_int_equal(finals, 0); /* never initialised: no FINAL */
    assert_int_equal(received, 0);
    uint32_t remaining;
    assert_false(timer_remaining(PID_FRAGILE, 0, &remaining));
    assert_int_equal(mcast_member_count(GROUP), 0);
    mem_stats_t after;
    mem_get_stats(&after);
    assert_int_equal(after.in_use, before->in_use);
    assert_int_equal(after.alloc_count, before->alloc_count);
    assert_true(mem_consistent());
    assert_int_equal(sched_queued_count(), 0);
    assert_int_equal(sched_stack_depth(), 0);
}

static void test_an_init_that_fails_at_once_kills_its_task_without_final(void **state)
{
    (void) state;
    mem_stats_t before;
    mem_get_stats(&before);
    make_fragile();
    assert_int_equal(sched_task_init(PID_FRAGILE, GOOD_INIT, 2), MT_OK); /* runs at once */
    assert_int_equal(inits, 1);
    assert_gone(&before);
    logged_t got = drain_fragile();
    assert_int_equal(got.errors, 1); /* the handler's error, as before */
    assert_int_equal(got.initfails, 1);
    assert_int_equal(got.initfail_arg, MT_ERR_INVALID);
    assert_int_equal(got.kills, 1);
    assert_int_equal(got.kill_arg, 0); /* nothing was held for it */
    assert_true(got.initfail_at < got.kill_at);
}

/* Held messages wait for the INIT (rule 7); a failed one refuses them as a
 * kill's purge does: dropped, counted in its KILL, and a payload copied to
 * the heap for one of them freed. */
static void test_messages_held_for_a_task_whose_init_fails_are_refused_and_logged(void **state)
{
    (void) state;
    make_sender();
    mem_stats_t before;
    mem_get_stats(&before);
    make_fragile();
    uint8_t big[MSG_INLINE_BYTES + 8];
    memset(big, 0x5A, sizeof big);
    assert_int_equal(sched_send_to(PID_FRAGILE, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(sched_send_to(PID_FRAGILE, PORT_0, big, sizeof big, 0), MT_OK);
    assert_int_equal(sched_queued_count(), 2);
    (void) test_count_logged_errors(MT_OK); /* drains what went before */
    /* The INIT is queued behind the sender's handler, and run by the drain. */
    assert_int_equal(sched_send_to(PID_SENDER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(inits, 1);
    assert_gone(&before);
    logged_t got = drain_fragile();
    assert_int_equal(got.initfails, 1);
    assert_int_equal(got.initfail_arg, MT_ERR_INVALID);
    assert_int_equal(got.kills, 1);
    assert_int_equal(got.kill_arg, 2);
    assert_true(got.initfail_at < got.kill_at);
}

static void test_a_send_to_a_task_whose_init_failed_is_refused(void **state)
{
    (void) state;
    make_fragile();
    make_sender();
    assert_int_equal(sched_task_init(PID_FRAGILE, GOOD_INIT, 1), MT_OK);
    assert_false(sched_task_exists(PID_FRAGILE));
    (void) test_count_logged_errors(MT_ERR_NO_TASK);
    assert_int_equal(sched_send_to(PID_FRAGILE, PORT_0, "x", 1, 0), MT_ERR_NO_TASK);
    assert_int_equal(sched_send_to(PID_SENDER, PORT_0 + 1, NULL, 0, 0), MT_OK); /* its route */
    assert_int_equal(sent_after, MT_ERR_NO_TASK);
    assert_int_equal(sched_task_kill(PID_FRAGILE), MT_ERR_NO_TASK);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 3);
    assert_int_equal(received, 0);
    assert_int_equal(finals, 0);
    /* Its pid is free: a task made again under it starts afresh. */
    make_fragile();
    assert_int_equal(sched_task_init(PID_FRAGILE, GOOD_INIT, sizeof GOOD_INIT), MT_OK);
    assert_true(sched_task_exists(PID_FRAGILE));
}

static void test_an_init_that_succeeds_is_unchanged(void **state)
{
    (void) state;
    mem_stats_t before;
    mem_get_stats(&before);
    make_fragile();
    make_sender();
    assert_int_equal(sched_send_to(PID_FRAGILE, PORT_0, NULL, 0, 0), MT_OK); /* held */
    assert_int_equal(sched_task_init(PID_FRAGILE, GOOD_INIT, sizeof GOOD_INIT), MT_OK);
    sched_run_pending();
    assert_int_equal(inits, 1);
    assert_int_equal(received, 1); /* the held message followed it */
    assert_true(sched_task_exists(PID_FRAGILE));
    assert_int_equal(mcast_member_count(GROUP), 1);
    uint32_t remaining;
    assert_true(timer_remaining(PID_FRAGILE, 0, &remaining));
    assert_int_equal(sched_send_to(PID_SENDER, PORT_0 + 1, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(sent_after, MT_OK);
    assert_int_equal(received, 2);
    logged_t got = drain_fragile();
    assert_int_equal(got.initfails, 0);
    assert_int_equal(got.kills, 0);
    assert_int_equal(sched_task_kill(PID_FRAGILE), MT_OK);
    assert_int_equal(finals, 1); /* initialised: its kill runs FINAL */
    assert_int_equal(mcast_member_count(GROUP), 0);
    assert_int_equal(sched_task_kill(PID_SENDER), MT_OK);
    mem_stats_t after;
    mem_get_stats(&after);
    assert_int_equal(after.in_use, before.in_use);
}

/* A kill the INIT asked for itself, then the INIT's failure: one kill,
 * still without FINAL (the task never initialised). */
static mt_err_t killing_itself(void *state, mt_port_t port, void *data, uint16_t len)
{
    if (port == PORT_INIT) {
        assert_int_equal(sched_task_kill(sched_current_pid()), MT_OK);
        (void) fragile(state, port, data, len);
        return MT_ERR_INVALID;
    }
    return fragile(state, port, data, len);
}

static void test_an_init_that_kills_its_task_and_fails_ends_it_once(void **state)
{
    (void) state;
    mem_stats_t before;
    mem_get_stats(&before);
    task_spec_t spec = {.pid = PID_FRAGILE, .prio = 2, .handler = killing_itself};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_FRAGILE, NULL, 0), MT_OK);
    assert_gone(&before);
    logged_t got = drain_fragile();
    assert_int_equal(got.initfails, 1);
    assert_int_equal(got.kills, 1);
}

/* ---- a failed INIT beside a kill: both end, each its own way ---- */

enum { PID_KILLER = 0x22 };
static unsigned killer_finals;

/* On PORT_0 it kills itself (its kill waits for its pop), then gives the
 * fragile task, more important, an INIT that runs at once and fails. On
 * PORT_0 + 1 it only kills itself. */
static mt_err_t killer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_FINAL) killer_finals++;
    if (port == PORT_0 || port == PORT_0 + 1) assert_int_equal(sched_task_kill(PID_KILLER), MT_OK);
    if (port == PORT_0) assert_int_equal(sched_task_init(PID_FRAGILE, GOOD_INIT, 2), MT_OK);
    return MT_OK;
}

static void make_killer_and_important_fragile(void)
{
    task_spec_t spec = {.pid = PID_KILLER, .prio = 3, .handler = killer};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(PID_KILLER, NULL, 0), MT_OK);
    task_spec_t fragile_spec = {.pid = PID_FRAGILE, .prio = 6, .handler = fragile};
    assert_int_equal(sched_task_create(&fragile_spec), MT_OK);
    killer_finals = 0;
}

/* The failed INIT ends its task above a task whose kill waits for its own
 * pop: that one still gets its FINAL. */
static void test_a_kill_waiting_below_a_failed_init_still_runs_final(void **state)
{
    (void) state;
    mem_stats_t before;
    mem_get_stats(&before);
    make_killer_and_important_fragile();
    assert_int_equal(sched_send_to(PID_KILLER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(inits, 1);
    assert_gone(&before);
    assert_int_equal(killer_finals, 1);
    assert_false(sched_task_exists(PID_KILLER));
    logged_t got = drain_fragile();
    assert_int_equal(got.initfails, 1);
    assert_int_equal(got.kills, 1);
}

/* A kill on the stack after a failed INIT has ended its task runs FINAL. */
static void test_a_kill_after_a_failed_init_still_runs_final(void **state)
{
    (void) state;
    mem_stats_t before;
    mem_get_stats(&before);
    make_killer_and_important_fragile();
    assert_int_equal(sched_task_init(PID_FRAGILE, GOOD_INIT, 2), MT_OK);
    assert_int_equal(inits, 1);
    assert_gone(&before);
    assert_int_equal(sched_send_to(PID_KILLER, PORT_0 + 1, NULL, 0, 0), MT_OK);
    assert_int_equal(killer_finals, 1);
    assert_false(sched_task_exists(PID_KILLER));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_an_init_that_fails_at_once_kills_its_task_without_final, setup),
        cmocka_unit_test_setup(
            test_messages_held_for_a_task_whose_init_fails_are_refused_and_logged, setup),
        cmocka_unit_test_setup(test_a_send_to_a_task_whose_init_failed_is_refused, setup),
        cmocka_unit_test_setup(test_an_init_that_succeeds_is_unchanged, setup),
        cmocka_unit_test_setup(test_an_init_that_kills_its_task_and_fails_ends_it_once, setup),
        cmocka_unit_test_setup(test_a_kill_waiting_below_a_failed_init_still_runs_final, setup),
        cmocka_unit_test_setup(test_a_kill_after_a_failed_init_still_runs_final, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
