/* SPDX-License-Identifier: MIT */
/*
 * A task state's layout (state_layout.c): the wire bytes of a state that
 * holds 8-, 16- and 32-bit fields and a pointer-free array are the same on
 * every port, whatever the struct's padding, alignment and byte order
 * there; decoding gives the values back and refuses what does not match.
 */
#include <string.h>

#include "motet/state_layout.h"
#include "test_support.h"

/* Laid out differently by each compiler: no padding on the AVR, padding
 * before `level` and `seen` on the Cortex-M and x86-64. */
typedef struct meter {
    uint8_t mode;
    int16_t level;
    uint8_t flags;
    uint32_t seen;
    uint16_t hist[5];
    int8_t trim[3];
} meter_t;

static const state_field_t meter_fields[] = {
    STATE_FIELD(meter_t, mode), STATE_FIELD(meter_t, level), STATE_FIELD(meter_t, flags),
    STATE_FIELD(meter_t, seen), STATE_ARRAY(meter_t, hist),  STATE_ARRAY(meter_t, trim),
};
static const state_layout_t meter_layout = STATE_LAYOUT(meter_fields);

/* 1 + 2 + 1 + 4 + 5 x 2 + 3 bytes, little-endian, in the order listed. */
static const uint8_t meter_wire[] = {
    0x07,                                                       /* mode */
    0xFE, 0xFF,                                                 /* level -2 */
    0x80,                                                       /* flags */
    0x78, 0x56, 0x34, 0x12,                                     /* seen */
    0x01, 0x00, 0x02, 0x01, 0x03, 0x02, 0x04, 0x03, 0xFF, 0xFF, /* hist */
    0x01, 0xFF, 0x80,                                           /* trim 1, -1, -128 */
};

static meter_t sample(void)
{
    meter_t m;
    memset(&m, 0x5A, sizeof m); /* padding bytes: never on the wire */
    m.mode = 7;
    m.level = -2;
    m.flags = 0x80;
    m.seen = 0x12345678u;
    const uint16_t hist[5] = {1, 0x0102, 0x0203, 0x0304, 0xFFFF};
    memcpy(m.hist, hist, sizeof hist);
    m.trim[0] = 1;
    m.trim[1] = -1;
    m.trim[2] = -128;
    return m;
}

static void test_state_is_encoded_as_little_endian_fields(void **state)
{
    (void) state;
    meter_t m = sample();
    assert_int_equal(state_layout_size(&meter_layout, sizeof m), sizeof meter_wire);
    uint8_t out[sizeof meter_wire + 4];
    memset(out, 0xEE, sizeof out);
    assert_int_equal(state_layout_encode(&meter_layout, &m, sizeof m, out, sizeof out),
                     sizeof meter_wire);
    assert_memory_equal(out, meter_wire, sizeof meter_wire);
    assert_int_equal(out[sizeof meter_wire], 0xEE); /* nothing past its size */
    /* Too small a buffer: nothing. */
    assert_int_equal(state_layout_encode(&meter_layout, &m, sizeof m, out, sizeof meter_wire - 1),
                     0);
}

static void test_state_is_decoded_to_its_values(void **state)
{
    (void) state;
    meter_t m;
    memset(&m, 0, sizeof m);
    assert_int_equal(
        state_layout_decode(&meter_layout, meter_wire, sizeof meter_wire, &m, sizeof m), MT_OK);
    meter_t want = sample();
    assert_int_equal(m.mode, want.mode);
    assert_int_equal(m.level, -2);
    assert_int_equal(m.flags, 0x80);
    assert_int_equal(m.seen, 0x12345678u);
    for (int i = 0; i < 5; i++) assert_int_equal(m.hist[i], want.hist[i]);
    assert_int_equal(m.trim[1], -1);
    assert_int_equal(m.trim[2], -128);
}

static void test_a_state_of_another_size_is_refused_untouched(void **state)
{
    (void) state;
    meter_t m = sample(), before = sample();
    assert_int_equal(
        state_layout_decode(&meter_layout, meter_wire, sizeof meter_wire - 1, &m, sizeof m),
        MT_ERR_INVALID);
    uint8_t longer[sizeof meter_wire + 1] = {0};
    assert_int_equal(state_layout_decode(&meter_layout, longer, sizeof longer, &m, sizeof m),
                     MT_ERR_INVALID);
    assert_int_equal(state_layout_decode(&meter_layout, NULL, sizeof meter_wire, &m, sizeof m),
                     MT_ERR_INVALID);
    assert_memory_equal(&m, &before, sizeof m);
}

static void test_bad_layouts_are_refused(void **state)
{
    (void) state;
    meter_t m = sample();
    uint8_t out[64];
    /* A field past the state's end (the layout of a bigger struct): the
     * last byte of `trim` outside. */
    uint16_t short_state = (uint16_t) (offsetof(meter_t, trim) + 2);
    assert_int_equal(state_layout_size(&meter_layout, short_state), 0);
    assert_int_equal(
        state_layout_decode(&meter_layout, meter_wire, sizeof meter_wire, &m, short_state),
        MT_ERR_INVALID);
    /* A width that is no integer's. */
    const state_field_t odd[] = {{.offset = 0, .count = 1, .width = 3}};
    const state_layout_t odd_layout = STATE_LAYOUT(odd);
    assert_int_equal(state_layout_size(&odd_layout, sizeof m), 0);
    assert_int_equal(state_layout_encode(&odd_layout, &m, sizeof m, out, sizeof out), 0);
    /* No field at all, no layout. */
    const state_layout_t none = {.fields = NULL, .n_fields = 0};
    assert_int_equal(state_layout_size(&none, sizeof m), 0);
    assert_int_equal(state_layout_size(NULL, sizeof m), 0);
}

static void test_round_trip_of_a_large_array(void **state)
{
    (void) state;
    typedef struct {
        uint32_t words[300];
    } big_t;
    static const state_field_t big_fields[] = {STATE_ARRAY(big_t, words)};
    static const state_layout_t big_layout = STATE_LAYOUT(big_fields);
    static big_t a, b;
    static uint8_t wire[1200];
    for (uint16_t i = 0; i < 300; i++) a.words[i] = 0x01000193u * i;
    assert_int_equal(state_layout_encode(&big_layout, &a, sizeof a, wire, sizeof wire), 1200);
    assert_int_equal(wire[4 * 7 + 3], (uint8_t) ((0x01000193u * 7) >> 24));
    assert_int_equal(state_layout_decode(&big_layout, wire, sizeof wire, &b, sizeof b), MT_OK);
    assert_memory_equal(&a, &b, sizeof a);
}

/* The migrator encodes the state chunk by chunk, as the image goes: any
 * cut gives the same bytes as the whole, an integer split across two
 * chunks included. */
static void test_parts_put_together_are_the_whole(void **state)
{
    (void) state;
    meter_t m = sample();
    for (uint16_t cut = 1; cut < sizeof meter_wire; cut++) {
        uint8_t out[sizeof meter_wire];
        memset(out, 0xEE, sizeof out);
        assert_int_equal(state_layout_encode_part(&meter_layout, &m, sizeof m, 0, out, cut), cut);
        assert_int_equal(state_layout_encode_part(&meter_layout, &m, sizeof m, cut, out + cut,
                                                  (uint16_t) (sizeof meter_wire - cut)),
                         sizeof meter_wire - cut);
        assert_memory_equal(out, meter_wire, sizeof meter_wire);
    }
    uint8_t out[4];
    /* Past the end of the encoding: nothing. */
    assert_int_equal(
        state_layout_encode_part(&meter_layout, &m, sizeof m, sizeof meter_wire - 1, out, 2), 0);
}

/* Any window of the wire, from inside one integer to inside another, is
 * those bytes of the whole. */
static void test_every_part_is_its_bytes_of_the_whole(void **state)
{
    (void) state;
    meter_t m = sample();
    for (uint16_t from = 0; from < sizeof meter_wire; from++) {
        for (uint16_t n = 1; from + n <= sizeof meter_wire; n++) {
            uint8_t out[sizeof meter_wire + 1];
            memset(out, 0xEE, sizeof out);
            assert_int_equal(state_layout_encode_part(&meter_layout, &m, sizeof m, from, out, n),
                             n);
            assert_memory_equal(out, meter_wire + from, n);
            assert_int_equal(out[n], 0xEE); /* nothing written past the part */
        }
    }
}

/* The destination decodes each chunk as it arrives: any cut in two, an
 * integer split across the chunks included, gives the whole state, and a
 * part outside the encoding changes nothing. */
static void test_parts_decoded_in_place_are_the_whole(void **state)
{
    (void) state;
    meter_t want = sample();
    for (uint16_t cut = 1; cut < sizeof meter_wire; cut++) {
        meter_t m;
        memset(&m, 0x5A, sizeof m);
        assert_int_equal(state_layout_decode_part(&meter_layout, meter_wire, 0, cut, &m, sizeof m),
                         cut);
        assert_int_equal(state_layout_decode_part(&meter_layout, meter_wire + cut, cut,
                                                  (uint16_t) (sizeof meter_wire - cut), &m,
                                                  sizeof m),
                         sizeof meter_wire - cut);
        assert_int_equal(m.mode, want.mode);
        assert_int_equal(m.level, want.level);
        assert_int_equal(m.flags, want.flags);
        assert_int_equal(m.seen, want.seen);
        assert_memory_equal(m.hist, want.hist, sizeof want.hist);
        assert_memory_equal(m.trim, want.trim, sizeof want.trim);
    }
    meter_t m;
    memset(&m, 0x5A, sizeof m);
    meter_t before = m;
    assert_int_equal(
        state_layout_decode_part(&meter_layout, meter_wire, sizeof meter_wire - 1, 2, &m, sizeof m),
        0);
    assert_memory_equal(&m, &before, sizeof m);
}

/* Before decoding, the destination zeroes only what no field covers:
 * the struct's padding here (between mode and level, flags and seen, at
 * the end, as the compiler lays it out), and all of a layout whose fields
 * are not in order. */
static void test_only_the_bytes_no_field_covers_are_cleared(void **state)
{
    (void) state;
    uint8_t covered[sizeof(meter_t)] = {0};
    for (uint8_t i = 0; i < meter_layout.n_fields; i++)
        for (uint16_t b = 0; b < meter_fields[i].count * meter_fields[i].width; b++)
            covered[meter_fields[i].offset + b] = 1;
    uint8_t m[sizeof(meter_t)];
    memset(m, 0x5A, sizeof m);
    state_layout_clear_rest(&meter_layout, m, sizeof m);
    for (uint16_t b = 0; b < sizeof m; b++) assert_int_equal(m[b], covered[b] ? 0x5A : 0);

    static const state_field_t backwards[] = {STATE_ARRAY(meter_t, hist),
                                              STATE_FIELD(meter_t, mode)};
    static const state_layout_t backwards_layout = STATE_LAYOUT(backwards);
    memset(m, 0x5A, sizeof m);
    state_layout_clear_rest(&backwards_layout, m, sizeof m);
    for (uint16_t b = 0; b < sizeof m; b++) assert_int_equal(m[b], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_is_encoded_as_little_endian_fields),
        cmocka_unit_test(test_state_is_decoded_to_its_values),
        cmocka_unit_test(test_a_state_of_another_size_is_refused_untouched),
        cmocka_unit_test(test_bad_layouts_are_refused),
        cmocka_unit_test(test_round_trip_of_a_large_array),
        cmocka_unit_test(test_parts_put_together_are_the_whole),
        cmocka_unit_test(test_every_part_is_its_bytes_of_the_whole),
        cmocka_unit_test(test_parts_decoded_in_place_are_the_whole),
        cmocka_unit_test(test_only_the_bytes_no_field_covers_are_cleared),
    };
    return cmocka_run_group_tests_name("state layout", tests, NULL, NULL);
}
