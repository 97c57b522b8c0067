/* SPDX-License-Identifier: MIT */
/*
 * The pure parts of the task migrator (migrate_image.c): the image that
 * travels from the source to the destination, byte for byte, and the
 * arithmetic that re-arms a moved timer with its remaining time less the
 * time the migration took.
 */
#include <string.h>

#include "migrate_internal.h"
#include "test_support.h"

static const uint8_t routes[] = {0x21, PORT_0, 0xF0, 3, 0x22, PORT_0 + 1};
static const uint8_t groups[] = {7, PORT_0 + 2};

static mig_image_t sample(void)
{
    mig_image_t img = {.pid = 0x20,
                       .prio = 3,
                       .flags = TASK_MOVABLE,
                       .program = 11,
                       .n_routes = 3,
                       .n_timers = 2,
                       .n_groups = 1,
                       .tick_hz = 0xA1B2C3D4u,
                       .state_len = 300,
                       .held = 0x0102,
                       .routes = routes,
                       .groups = groups};
    img.timers[0] = (mig_timer_t){.index = 0, .remaining = 1234, .period = 10000};
    img.timers[1] = (mig_timer_t){.index = 3, .remaining = 0x01020304u, .period = 0};
    return img;
}

static void test_image_round_trip_and_layout(void **state)
{
    (void) state;
    mig_image_t img = sample();
    uint8_t buf[64];
    uint16_t n = mig_image_encode(&img, buf, sizeof buf);
    /* 16-byte header, 2 per route, 9 per timer, 2 per group. */
    assert_int_equal(n, 16 + 3 * 2 + 2 * 9 + 1 * 2);
    assert_int_equal(mig_image_size(&img), n);
    /* Little-endian, byte by byte: the same on every module. */
    const uint8_t head[] = {3,    0x20, 3,    TASK_MOVABLE, 11, 3, 2, 1,
                            0xD4, 0xC3, 0xB2, 0xA1,         44, 1, 2, 1};
    assert_memory_equal(buf, head, sizeof head);
    assert_memory_equal(buf + 16, routes, sizeof routes);
    const uint8_t timer1[] = {3, 4, 3, 2, 1, 0, 0, 0, 0};
    assert_memory_equal(buf + 22 + 9, timer1, sizeof timer1);
    mig_image_t back;
    assert_int_equal(mig_image_decode(buf, n, &back), MT_OK);
    assert_int_equal(back.pid, 0x20);
    assert_int_equal(back.prio, 3);
    assert_int_equal(back.program, 11);
    assert_int_equal(back.tick_hz, 0xA1B2C3D4u);
    assert_int_equal(back.state_len, 300);
    assert_int_equal(back.held, 0x0102);
    assert_int_equal(back.n_timers, 2);
    assert_int_equal(back.timers[0].remaining, 1234);
    assert_int_equal(back.timers[0].period, 10000);
    assert_int_equal(back.timers[1].index, 3);
    assert_int_equal(back.timers[1].remaining, 0x01020304u);
    route_t r = mig_image_route(&back, 1);
    assert_int_equal(r.pid, 0xF0);
    assert_int_equal(r.port, 3);
    uint8_t group;
    mt_port_t port;
    mig_image_group(&back, 0, &group, &port);
    assert_int_equal(group, 7);
    assert_int_equal(port, PORT_0 + 2);
}

static void test_image_that_does_not_fit_is_not_encoded(void **state)
{
    (void) state;
    mig_image_t img = sample();
    uint8_t buf[64];
    assert_int_equal(mig_image_encode(&img, buf, (uint16_t) (mig_image_size(&img) - 1)), 0);
    img.n_timers = TIMERS_PER_TASK + 1;
    assert_int_equal(mig_image_encode(&img, buf, sizeof buf), 0);
}

static void test_bad_images_are_refused(void **state)
{
    (void) state;
    mig_image_t img = sample(), back;
    uint8_t buf[64];
    uint16_t n = mig_image_encode(&img, buf, sizeof buf);
    assert_int_equal(mig_image_decode(buf, (uint16_t) (n - 1), &back), MT_ERR_INVALID); /* short */
    assert_int_equal(mig_image_decode(NULL, n, &back), MT_ERR_INVALID);
    buf[0] = 2; /* an older version: timers in a global clock's ticks */
    assert_int_equal(mig_image_decode(buf, n, &back), MT_ERR_INVALID);
    buf[0] = 3;
    buf[2] = MOTET_PRIO_LEVELS; /* a priority out of range */
    assert_int_equal(mig_image_decode(buf, n, &back), MT_ERR_INVALID);
    buf[2] = 3;
    memset(buf + 8, 0, 4); /* a clock of no rate */
    assert_int_equal(mig_image_decode(buf, n, &back), MT_ERR_INVALID);
    buf[8] = 1;
    buf[22 + 9] = 0; /* timer index 0 twice */
    assert_int_equal(mig_image_decode(buf, n, &back), MT_ERR_INVALID);
    buf[22 + 9] = TIMERS_PER_TASK; /* no such timer */
    assert_int_equal(mig_image_decode(buf, n, &back), MT_ERR_INVALID);
    buf[22 + 9] = 3;
    /* A route's or a group's port no task can have: it would reach the
     * handler (found by fuzz_bus_rx: a multicast delivered on port 135). */
    buf[MIG_IMAGE_HEADER + 1] = PORT_LIMIT;
    assert_int_equal(mig_image_decode(buf, n, &back), MT_ERR_INVALID);
    buf[MIG_IMAGE_HEADER + 1] = PORT_0;
    buf[22 + 2 * MIG_TIMER_BYTES + 1] = PORT_LIMIT;
    assert_int_equal(mig_image_decode(buf, n, &back), MT_ERR_INVALID);
    buf[22 + 2 * MIG_TIMER_BYTES + 1] = PORT_0 + 2;
    assert_int_equal(mig_image_decode(buf, n, &back), MT_OK);
}

/* A route to a multicast group carries the group in its port byte, and
 * one to time sync any port (sched_task_create() takes both): a task
 * with a route to a group past PORT_LIMIT, as the application manager
 * hands out once a few loads have taken the lower ones, migrates like
 * any other. Its image was once refused by every destination. */
static void test_routes_to_a_group_or_time_sync_keep_any_port(void **state)
{
    (void) state;
    const uint8_t virtual_routes[] = {
        MT_PID_MULTICAST, PORT_LIMIT + 10u, MT_PID_TIMESYNC, 0xEE, 0x21, PORT_0};
    mig_image_t img = sample(), back;
    img.routes = virtual_routes;
    uint8_t buf[64];
    uint16_t n = mig_image_encode(&img, buf, sizeof buf);
    assert_int_equal(mig_image_decode(buf, n, &back), MT_OK);
    route_t r = mig_image_route(&back, 0);
    assert_int_equal(r.pid, MT_PID_MULTICAST);
    assert_int_equal(r.port, PORT_LIMIT + 10u);
    assert_int_equal(mig_image_route(&back, 1).port, 0xEE);
    buf[MIG_IMAGE_HEADER + 2 * MIG_ROUTE_BYTES + 1] = PORT_LIMIT; /* a task's: still refused */
    assert_int_equal(mig_image_decode(buf, n, &back), MT_ERR_INVALID);
}

/* A group membership's port is an input port, as mcast_join() takes:
 * PORT_INIT or PORT_DESERIALIZE, below PORT_0, would have each multicast
 * to the group run as the task's INIT or as a new state. Such an image
 * was once taken. */
static void test_a_group_on_a_system_port_is_refused(void **state)
{
    (void) state;
    const mt_port_t system[] = {PORT_INIT, PORT_DESERIALIZE, PORT_0 - 1u};
    for (unsigned i = 0; i < sizeof system / sizeof system[0]; i++) {
        const uint8_t on_system[] = {7, system[i]};
        mig_image_t img = sample(), back;
        img.groups = on_system;
        uint8_t buf[64];
        uint16_t n = mig_image_encode(&img, buf, sizeof buf);
        assert_true(n > 0);
        assert_int_equal(mig_image_decode(buf, n, &back), MT_ERR_INVALID);
    }
}

/* Remaining time minus the migration's time; one that fell due fires once
 * and a periodic one keeps its phase. */
static void test_timer_rearm(void **state)
{
    (void) state;
    mig_rearm_t r = mig_timer_rearm(1000, 0, 300);
    assert_false(r.fire_now);
    assert_int_equal(r.first, 700);
    r = mig_timer_rearm(1000, 5000, 999); /* one tick left */
    assert_false(r.fire_now);
    assert_int_equal(r.first, 1);
    r = mig_timer_rearm(1000, 0, 1000); /* due exactly now: fires, once */
    assert_true(r.fire_now);
    assert_int_equal(r.first, 0);
    r = mig_timer_rearm(1000, 0, 50000); /* long overdue one-shot: once */
    assert_true(r.fire_now);
    assert_int_equal(r.first, 0);
    r = mig_timer_rearm(1000, 4000, 1000); /* periodic, due now */
    assert_true(r.fire_now);
    assert_int_equal(r.first, 4000);
    r = mig_timer_rearm(1000, 4000, 2500); /* due 1500 ago: next in 2500 */
    assert_true(r.fire_now);
    assert_int_equal(r.first, 2500);
    r = mig_timer_rearm(1000, 4000, 9000); /* two periods missed: one fire, phase kept */
    assert_true(r.fire_now);
    assert_int_equal(r.first, 4000 - (9000 - 1000) % 4000);
    r = mig_timer_rearm(0, 100, 0); /* overdue when stamped */
    assert_true(r.fire_now);
    assert_int_equal(r.first, 100);
}

/* Timers travel in the source's ticks: the native port's 1 MHz, the
 * ATmega128's 31.25 kHz, the Cortex-M3's 10 kHz. */
static void test_ticks_between_clocks_of_other_rates(void **state)
{
    (void) state;
    assert_int_equal(mig_ticks_convert(12345, 31250, 31250), 12345); /* the same clock */
    assert_int_equal(mig_ticks_convert(10000, 1000000, 31250), 313); /* 10 ms: 312.5, up */
    assert_int_equal(mig_ticks_convert(313, 31250, 10000), 100);     /* 10.016 ms */
    assert_int_equal(mig_ticks_convert(100, 10000, 1000000), 10000);
    assert_int_equal(mig_ticks_convert(0, 10000, 1000000), 0); /* no period stays none */
    assert_int_equal(mig_ticks_convert(3, 1000000, 10000), 1); /* still running: >= 1 */
    /* 2^31 - 1 ticks at 31.25 kHz is 19 hours, past a 1 MHz clock's
     * timers: the longest it can count. */
    assert_int_equal(mig_ticks_convert(0x7FFFFFFFu, 31250, 1000000), 0x7FFFFFFFu);
    assert_int_equal(mig_ticks_convert(0x7FFFFFFFu, 1000000, 31250), 67108864u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_image_round_trip_and_layout),
        cmocka_unit_test(test_image_that_does_not_fit_is_not_encoded),
        cmocka_unit_test(test_bad_images_are_refused),
        cmocka_unit_test(test_routes_to_a_group_or_time_sync_keep_any_port),
        cmocka_unit_test(test_a_group_on_a_system_port_is_refused),
        cmocka_unit_test(test_timer_rearm),
        cmocka_unit_test(test_ticks_between_clocks_of_other_rates),
    };
    return cmocka_run_group_tests_name("migration image", tests, NULL, NULL);
}
