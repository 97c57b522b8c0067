/* SPDX-License-Identifier: MIT */
/*
 * The event log: what a message exchange records, timestamps, and the
 * overrun count when the host drains too slowly (nothing lost silently).
 */
#include "log_ring.h"
#include "test_support.h"

static mt_err_t echo(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) tport_busy(250); /* 250 us of work */
    return port == PORT_0 + 1 ? MT_ERR_STATE : MT_OK;
}

static int setup(void **state)
{
    test_boot(state);
    task_spec_t spec = {.pid = 0x20, .prio = 2, .handler = echo};
    sched_task_create(&spec);
    sched_task_init(0x20, NULL, 0);
    log_record_t sink[MOTET_LOG_ENTRIES];
    log_drain(sink, MOTET_LOG_ENTRIES);
    return 0;
}

/* A send whose receiver starts at once is one RUN record (the SEND and the
 * START it stands for), then the END. */
static void test_message_run_at_once_records_run_and_end_with_times(void **state)
{
    (void) state;
    assert_int_equal(sched_send_to(0x20, PORT_0, NULL, 0, 0), MT_OK);
    log_record_t rec[8];
    assert_int_equal(log_drain(rec, 8), 2);
    assert_int_equal(rec[0].type, EV_RUN);
    assert_int_equal(rec[0].pid, 0x20);
    assert_int_equal(rec[0].arg, (MT_PID_NONE << 8) | PORT_0);
    assert_int_equal(rec[1].type, EV_END);
    assert_int_equal(rec[1].pid, 0x20);
    assert_int_equal(rec[1].arg, PORT_0);
    assert_int_equal(rec[1].time - rec[0].time, 250);
    assert_string_equal(log_type_name(rec[0].type), "RUN");
}

/* A handler that logs more than the ring holds. */
static mt_err_t flood(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) port;
    (void) data;
    (void) len;
    for (unsigned i = 0; i < MOTET_LOG_ENTRIES; i++) log_record(EV_WAKE, 0x21, (uint16_t) i);
    return MT_OK;
}

/* A higher-priority sender: its message waits, so the send and the start
 * are two records, the start after the sender's END. */
static mt_err_t forward(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    return port == PORT_0 ? sched_send_to(0x20, PORT_0, NULL, 0, 0) : MT_OK;
}

static void test_queued_message_records_send_then_start(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = 0x21, .prio = 3, .handler = forward};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(0x21, NULL, 0), MT_OK);
    log_record_t rec[16];
    log_drain(rec, 16);
    assert_int_equal(sched_send_to(0x21, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(log_drain(rec, 16), 5);
    const uint8_t types[] = {EV_RUN, EV_SEND, EV_END, EV_START, EV_END};
    const mt_pid_t pids[] = {0x21, 0x21, 0x21, 0x20, 0x20};
    for (unsigned i = 0; i < 5; i++) {
        assert_int_equal(rec[i].type, types[i]);
        assert_int_equal(rec[i].pid, pids[i]);
    }
    assert_int_equal(rec[1].arg, (0x20 << 8) | PORT_0);
    assert_string_equal(log_type_name(rec[1].type), "SEND");
}

static void test_overrun_keeps_newest_and_counts_the_lost(void **state)
{
    (void) state;
    for (unsigned i = 0; i < MOTET_LOG_ENTRIES + 10; i++) log_record(EV_TIMER, 0x20, (uint16_t) i);
    assert_int_equal(log_overruns(), 10);
    log_record_t rec[MOTET_LOG_ENTRIES];
    assert_int_equal(log_drain(rec, MOTET_LOG_ENTRIES), MOTET_LOG_ENTRIES);
    assert_int_equal(rec[0].arg, 10); /* the ten oldest were overwritten */
    assert_int_equal(rec[MOTET_LOG_ENTRIES - 1].arg, MOTET_LOG_ENTRIES + 9);
}

/* The count of lost records outgrows 16 bits (laps folded in while nobody
 * drains) and carries on exactly. */
static void test_overrun_count_carries_past_its_low_part(void **state)
{
    (void) state;
    const uint32_t lost = 65536u + 300u;
    for (uint32_t i = 0; i < MOTET_LOG_ENTRIES + lost; i++) log_record(EV_TIMER, 0x20, 7);
    assert_int_equal(log_overruns(), lost);
    log_init();
    assert_int_equal(log_overruns(), 0);
}

/* A reference ring: what the log promises after `written` records and
 * drains up to `drained`, with a full ring keeping the newest. */
typedef struct {
    uint32_t written, drained, lost;
} log_model_t;

static void model_write(log_model_t *m, unsigned n)
{
    for (unsigned i = 0; i < n; i++) log_record(EV_TIMER, 0x20, (uint16_t) m->written++);
}

static uint32_t model_overruns(const log_model_t *m)
{
    uint32_t pending = m->written - m->drained;
    return m->lost + (pending > MOTET_LOG_ENTRIES ? pending - MOTET_LOG_ENTRIES : 0u);
}

static void drain_and_check(log_model_t *m, unsigned max)
{
    assert_int_equal(log_overruns(), model_overruns(m));
    if (m->written - m->drained > MOTET_LOG_ENTRIES) {
        m->lost = model_overruns(m);
        m->drained = m->written - MOTET_LOG_ENTRIES;
    }
    unsigned expected = m->written - m->drained < max ? m->written - m->drained : max;
    log_record_t rec[MOTET_LOG_ENTRIES];
    assert_int_equal(log_drain(rec, max), expected);
    for (unsigned i = 0; i < expected; i++) { /* oldest first */
        assert_int_equal(rec[i].type, EV_TIMER);
        assert_int_equal(rec[i].arg, (uint16_t) (m->drained + i));
    }
    m->drained += expected;
    assert_int_equal(log_overruns(), m->lost);
}

/* Writes and drains of every size against the ring's laps: a ring just
 * full, a lap and one more, several laps unread, partial drains that leave
 * the drain position mid-ring. */
static void test_drains_across_laps_keep_order_and_exact_overruns(void **state)
{
    (void) state;
    const unsigned n = MOTET_LOG_ENTRIES;
    const unsigned writes[] = {1,         n - 1,     1,         n, n + 1, 2 * n - 1, 2 * n,
                               2 * n + 3, 3 * n + 5, 7 * n - 2, 3, n / 2, n / 2 + 1};
    const unsigned drains[] = {n, 3, n, 1, n / 2, n, 5, n - 1, 2, n, 1, n - 2, n};
    log_model_t m = {.lost = log_overruns()};
    for (unsigned round = 0; round < 4; round++)
        for (unsigned i = 0; i < sizeof writes / sizeof writes[0]; i++) {
            model_write(&m, writes[i] + round);
            drain_and_check(&m, drains[i]);
        }
    drain_and_check(&m, n);
    drain_and_check(&m, n); /* empty */
    assert_true(m.lost > 0);
}

/* A long undrained stretch leaves the newest ring's worth, in order, and an
 * exact count; logging and draining then carry on as from empty. */
static void test_undrained_laps_then_drains_resume(void **state)
{
    (void) state;
    const uint32_t lost_before = log_overruns();
    log_model_t m = {.lost = lost_before};
    model_write(&m, 1000u * MOTET_LOG_ENTRIES + 3u);
    drain_and_check(&m, 2);
    model_write(&m, 5);
    drain_and_check(&m, MOTET_LOG_ENTRIES);
    drain_and_check(&m, MOTET_LOG_ENTRIES);
    model_write(&m, MOTET_LOG_ENTRIES);
    drain_and_check(&m, MOTET_LOG_ENTRIES);
    assert_int_equal(m.lost - lost_before, 999u * MOTET_LOG_ENTRIES + 6u);
}

/* A handler's failure comes back as its END (with the port, like every
 * END) and the ERROR of its result, in that order, at the same time. */
static void test_failed_handler_records_end_then_error(void **state)
{
    (void) state;
    assert_int_equal(sched_send_to(0x20, PORT_0 + 1, NULL, 0, 0), MT_OK);
    log_record_t rec[8];
    assert_int_equal(log_drain(rec, 8), 3);
    assert_int_equal(rec[0].type, EV_RUN);
    assert_int_equal(rec[1].type, EV_END);
    assert_int_equal(rec[1].pid, 0x20);
    assert_int_equal(rec[1].arg, PORT_0 + 1);
    assert_int_equal(rec[2].type, EV_ERROR);
    assert_int_equal(rec[2].pid, 0x20);
    assert_int_equal(rec[2].arg, MT_ERR_STATE);
    assert_int_equal(rec[2].time, rec[1].time);
}

/* A drain with room for the END but not its ERROR leaves both for the next
 * one: a record never comes back in halves. */
static void test_drain_never_splits_an_end_from_its_error(void **state)
{
    (void) state;
    assert_int_equal(sched_send_to(0x20, PORT_0 + 1, NULL, 0, 0), MT_OK);
    log_record_t rec[8];
    assert_int_equal(log_drain(rec, 2), 1); /* the RUN */
    assert_int_equal(log_drain(rec, 1), 0);
    assert_int_equal(log_drain(rec, 8), 2);
    assert_int_equal(rec[0].type, EV_END);
    assert_int_equal(rec[0].arg, PORT_0 + 1);
    assert_int_equal(rec[1].type, EV_ERROR);
}

/* An END whose START the ring overwrote before the drain says so in its
 * port; the records after it are whole again. */
static void test_end_of_an_overwritten_start_has_no_port(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = 0x21, .prio = 2, .handler = flood};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(0x21, NULL, 0), MT_OK);
    log_record_t rec[MOTET_LOG_ENTRIES];
    log_drain(rec, MOTET_LOG_ENTRIES);
    assert_int_equal(sched_send_to(0x21, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(sched_send_to(0x20, PORT_0, NULL, 0, 0), MT_OK);
    assert_true(log_overruns() > 0);
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    assert_int_equal(n, MOTET_LOG_ENTRIES);
    assert_int_equal(rec[n - 3].type, EV_END);
    assert_int_equal(rec[n - 3].pid, 0x21);
    assert_int_equal(rec[n - 3].arg, LOG_PORT_UNKNOWN);
    assert_int_equal(rec[n - 2].type, EV_RUN);
    assert_int_equal(rec[n - 1].type, EV_END);
    assert_int_equal(rec[n - 1].arg, PORT_0);
}

static void test_errors_are_logged_with_their_code(void **state)
{
    (void) state;
    assert_int_equal(sched_send_to(0x21, PORT_0, NULL, 0, 0), MT_ERR_NO_TASK);
    log_record_t rec[8];
    unsigned n = log_drain(rec, 8);
    assert_true(n >= 1);
    assert_int_equal(rec[n - 1].type, EV_ERROR);
    assert_int_equal(rec[n - 1].arg, MT_ERR_NO_TASK);
    assert_string_equal(mt_strerror(MT_ERR_NO_TASK), "MT_ERR_NO_TASK");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_message_run_at_once_records_run_and_end_with_times, setup),
        cmocka_unit_test_setup(test_queued_message_records_send_then_start, setup),
        cmocka_unit_test_setup(test_overrun_keeps_newest_and_counts_the_lost, setup),
        cmocka_unit_test_setup(test_overrun_count_carries_past_its_low_part, setup),
        cmocka_unit_test_setup(test_drains_across_laps_keep_order_and_exact_overruns, setup),
        cmocka_unit_test_setup(test_undrained_laps_then_drains_resume, setup),
        cmocka_unit_test_setup(test_failed_handler_records_end_then_error, setup),
        cmocka_unit_test_setup(test_drain_never_splits_an_end_from_its_error, setup),
        cmocka_unit_test_setup(test_end_of_an_overwritten_start_has_no_port, setup),
        cmocka_unit_test_setup(test_errors_are_logged_with_their_code, setup),
    };
    return cmocka_run_group_tests_name("event log", tests, NULL, NULL);
}
