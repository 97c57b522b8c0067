/* SPDX-License-Identifier: MIT */
/*
 * Bus frames: the byte layout, round trips of every type, the limits, and
 * detection of damage (every single-bit error, truncation, a wrong length,
 * unknown types, payloads that do not fit their type), beacon stamps and
 * the retransmission flag. Pure functions: these run on every port.
 */
#include <string.h>

#include "appdesc.h"
#include "bus_internal.h"
#include "motet/bus.h"
#include "test_support.h"

static const uint8_t hello[] = {'h', 'e', 'l', 'l', 'o'};
static uint8_t big[BUS_FRAME_MAX + 1];

static bus_frame_t data_frame(void)
{
    return (bus_frame_t){.type = BUS_FRAME_DATA,
                         .src = 1,
                         .dst = 2,
                         .seq = 7,
                         .pid = 0x12,
                         .port = PORT_0 + 1,
                         .src_pid = 0x10,
                         .prio = 3,
                         .len = sizeof hello,
                         .payload = hello};
}

/* The layout is a contract with the hub (tools/motetlib/hub.py) and with
 * other processors: check it byte for byte, CRC included. */
static void test_layout_is_fixed(void **state)
{
    (void) state;
    uint8_t buf[32];
    bus_frame_t f = data_frame();
    uint16_t n = bus_frame_encode(&f, buf, sizeof buf);
    static const uint8_t expected_header[] = {1, 1, 2, 7, 0x12, 9, 0x10, 3, 5, 0};
    assert_int_equal(n, BUS_OVERHEAD + sizeof hello);
    assert_memory_equal(buf, expected_header, sizeof expected_header);
    assert_memory_equal(buf + BUS_HEADER_SIZE, hello, sizeof hello);
    uint16_t crc = appdesc_crc16(buf, BUS_HEADER_SIZE + sizeof hello);
    assert_int_equal(buf[n - 2], crc & 0xFF);
    assert_int_equal(buf[n - 1], crc >> 8);
}

static void test_crc_is_ccitt_false(void **state)
{
    (void) state;
    assert_int_equal(appdesc_crc16((const uint8_t *) "123456789", 9), 0x29B1);
}

static void test_round_trip_every_type(void **state)
{
    (void) state;
    static const uint8_t four[4] = {1, 2, 3, 4},
                         outcome[BUS_APP_CREATED_SIZE] = {MT_ERR_NO_PROGRAM, 1, 2, 0, 7},
                         asked[BUS_APP_ASK_SIZE] = {0, 7, 0x6, 0, 0, 0};
    for (uint8_t type = BUS_FRAME_DATA; type < BUS_FRAME_TYPE_END; type++) {
        bus_frame_t f = data_frame(), g;
        f.type = type;
        if (type == BUS_FRAME_SYNC) f.payload = four, f.len = 4;
        if (type == BUS_FRAME_CREATED) f.payload = outcome, f.len = BUS_APP_CREATED_SIZE;
        if (type == BUS_FRAME_ASK) f.payload = asked, f.len = BUS_APP_ASK_SIZE;
        if (type != BUS_FRAME_DATA) f.dst = BUS_BROADCAST;
        uint8_t buf[32];
        uint16_t n = bus_frame_encode(&f, buf, sizeof buf);
        assert_int_equal(bus_frame_decode(buf, n, &g), MT_OK);
        assert_int_equal(g.type, type);
        assert_false(g.retry);
        assert_int_equal(g.src, f.src);
        assert_int_equal(g.dst, f.dst);
        assert_int_equal(g.seq, f.seq);
        assert_int_equal(g.pid, f.pid);
        assert_int_equal(g.port, f.port);
        assert_int_equal(g.src_pid, f.src_pid);
        assert_int_equal(g.prio, f.prio);
        assert_int_equal(g.len, f.len);
        assert_memory_equal(g.payload, f.payload, f.len);
        assert_ptr_equal(g.payload, buf + BUS_HEADER_SIZE); /* no copy */
    }
}

static void test_empty_payload(void **state)
{
    (void) state;
    uint8_t buf[BUS_OVERHEAD];
    bus_frame_t f = data_frame(), g;
    f.len = 0;
    f.payload = NULL;
    assert_int_equal(bus_frame_encode(&f, buf, sizeof buf), BUS_OVERHEAD);
    assert_int_equal(bus_frame_decode(buf, BUS_OVERHEAD, &g), MT_OK);
    assert_int_equal(g.len, 0);
    assert_null(g.payload);
}

static void test_limits(void **state)
{
    (void) state;
    static const uint8_t payload[MOTET_BUS_PAYLOAD_MAX + 1]; /* content does not matter */
    bus_frame_t f = data_frame(), g;
    f.payload = payload; /* apart from the frame: encoding copies it */
    f.len = MOTET_BUS_PAYLOAD_MAX;
    uint16_t n = bus_frame_encode(&f, big, sizeof big);
    assert_int_equal(n, BUS_FRAME_MAX);
    assert_int_equal(bus_frame_decode(big, n, &g), MT_OK);
    f.len = MOTET_BUS_PAYLOAD_MAX + 1; /* too long for any module */
    assert_int_equal(bus_frame_encode(&f, big, sizeof big), 0);
    uint8_t small[BUS_OVERHEAD + 4];
    f = data_frame(); /* 5 bytes of payload: one too many for `small` */
    assert_int_equal(bus_frame_encode(&f, small, sizeof small), 0);
    f.len = 3;
    f.payload = NULL; /* a length without data */
    assert_int_equal(bus_frame_encode(&f, small, sizeof small), 0);
}

/* CRC-16 detects every single-bit error: flip each bit of a frame. */
static void test_every_single_bit_error_is_detected(void **state)
{
    (void) state;
    uint8_t buf[32];
    bus_frame_t f = data_frame(), g;
    uint16_t n = bus_frame_encode(&f, buf, sizeof buf);
    for (uint16_t bit = 0; bit < n * 8u; bit++) {
        buf[bit / 8] ^= (uint8_t) (1u << (bit % 8));
        assert_int_equal(bus_frame_decode(buf, n, &g), MT_ERR_BUS_CORRUPT);
        buf[bit / 8] ^= (uint8_t) (1u << (bit % 8));
    }
    assert_int_equal(bus_frame_decode(buf, n, &g), MT_OK);
}

static void test_wrong_lengths_are_detected(void **state)
{
    (void) state;
    uint8_t buf[40];
    bus_frame_t f = data_frame(), g;
    uint16_t n = bus_frame_encode(&f, buf, sizeof buf);
    for (uint16_t cut = 0; cut < n; cut++)
        assert_int_equal(bus_frame_decode(buf, cut, &g), MT_ERR_BUS_CORRUPT);
    buf[n] = 0;
    assert_int_equal(bus_frame_decode(buf, (uint16_t) (n + 1), &g), MT_ERR_BUS_CORRUPT);
    assert_int_equal(bus_frame_decode(NULL, n, &g), MT_ERR_BUS_CORRUPT);
}

/* A frame with a good CRC but an unknown type or a payload its type cannot
 * have is still refused (a sender that is itself broken). */
static void test_bad_type_or_payload_size_is_refused(void **state)
{
    (void) state;
    uint8_t buf[32];
    bus_frame_t f = data_frame(), g;
    f.type = BUS_FRAME_TYPE_END;
    assert_int_equal(bus_frame_decode(buf, bus_frame_encode(&f, buf, sizeof buf), &g),
                     MT_ERR_BUS_CORRUPT);
    f.type = 0;
    assert_int_equal(bus_frame_decode(buf, bus_frame_encode(&f, buf, sizeof buf), &g),
                     MT_ERR_BUS_CORRUPT);
    f.type = BUS_FRAME_SYNC; /* 5 bytes, not a u32 stamp */
    assert_int_equal(bus_frame_decode(buf, bus_frame_encode(&f, buf, sizeof buf), &g),
                     MT_ERR_BUS_CORRUPT);
    static const uint8_t outcome[BUS_APP_OUTCOME_SIZE] = {MT_OK, 0xFF, 0};
    f.type = BUS_FRAME_CREATED; /* an outcome without the load it is about */
    f.payload = outcome, f.len = sizeof outcome;
    assert_int_equal(bus_frame_decode(buf, bus_frame_encode(&f, buf, sizeof buf), &g),
                     MT_ERR_BUS_CORRUPT);
    f.type = BUS_FRAME_ASK; /* a load without the modules asked */
    assert_int_equal(bus_frame_decode(buf, bus_frame_encode(&f, buf, sizeof buf), &g),
                     MT_ERR_BUS_CORRUPT);
}

static void test_beacon_stamp(void **state)
{
    (void) state;
    static const uint8_t blank[4];
    uint8_t buf[32];
    bus_frame_t f = {.type = BUS_FRAME_SYNC, .src = 0, .dst = BUS_BROADCAST, .len = 4};
    f.payload = blank;
    uint16_t n = bus_frame_encode(&f, buf, sizeof buf);
    assert_true(bus_frame_is_sync(buf, n));
    bus_frame_stamp(buf, n, 0xDEADBEEFu);
    bus_frame_t g;
    assert_int_equal(bus_frame_decode(buf, n, &g), MT_OK); /* resealed */
    assert_int_equal(bus_frame_sync_stamp(&g), 0xDEADBEEFu);
    assert_int_equal(buf[BUS_HEADER_SIZE], 0xEF); /* little-endian */
    /* Stamping anything else changes nothing. */
    uint8_t other[32];
    bus_frame_t d = data_frame();
    uint16_t m = bus_frame_encode(&d, other, sizeof other);
    memcpy(buf, other, m);
    assert_false(bus_frame_is_sync(other, m));
    bus_frame_stamp(other, m, 0x12345678u);
    assert_memory_equal(buf, other, m);
}

static void test_retry_flag(void **state)
{
    (void) state;
    uint8_t buf[32];
    bus_frame_t f = data_frame(), g;
    uint16_t n = bus_frame_encode(&f, buf, sizeof buf);
    bus_frame_set_retry(buf, n);
    assert_int_equal(buf[0], BUS_FRAME_DATA | BUS_TYPE_RETRY);
    assert_int_equal(bus_frame_decode(buf, n, &g), MT_OK);
    assert_true(g.retry);
    assert_int_equal(g.type, BUS_FRAME_DATA);
    f.retry = true; /* the encoder writes the same bytes */
    uint8_t again[32];
    assert_int_equal(bus_frame_encode(&f, again, sizeof again), n);
    assert_memory_equal(buf, again, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_is_fixed),
        cmocka_unit_test(test_crc_is_ccitt_false),
        cmocka_unit_test(test_round_trip_every_type),
        cmocka_unit_test(test_empty_payload),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_every_single_bit_error_is_detected),
        cmocka_unit_test(test_wrong_lengths_are_detected),
        cmocka_unit_test(test_bad_type_or_payload_size_is_refused),
        cmocka_unit_test(test_beacon_stamp),
        cmocka_unit_test(test_retry_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
