/* SPDX-License-Identifier: MIT */
/*
 * A task's state arriving from the bus in its program's layout
 * (state_layout.c): any layout over a 64-byte state, then any bytes as the
 * encoded state. Input: u8 n fields (at most 8), n x (u8 offset, u8 count,
 * u8 width), then the encoded state. Checked: the decoder takes exactly
 * the layout's size, from a good layout only; what it took encodes back to
 * the same bytes; a refused state leaves the task's state as it was, and
 * an accepted one changes no byte outside the layout's fields; decoded in
 * two chunks as they arrive (state_layout_decode_part(), cut at a third),
 * it is the same state.
 */
#include <string.h>

#include "fuzz_support.h"
#include "motet/state_layout.h"

#define STATE_BYTES 64u
#define MAX_FIELDS  8u
#define UNTOUCHED   0xA5u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input_t in = {.data = data, .size = size};
    state_field_t fields[MAX_FIELDS];
    uint8_t n_fields = (uint8_t) (fuzz_u8(&in) % (MAX_FIELDS + 1u));
    for (uint8_t i = 0; i < n_fields; i++)
        fields[i] =
            (state_field_t){.offset = fuzz_u8(&in), .count = fuzz_u8(&in), .width = fuzz_u8(&in)};
    const state_layout_t layout = {.fields = fields, .n_fields = n_fields};
    size_t at = in.at < size ? in.at : size;
    if (size - at > UINT16_MAX) return 0;
    const uint8_t *wire = data + at;
    uint16_t n = (uint16_t) (size - at);

    uint8_t state[STATE_BYTES], before[STATE_BYTES];
    memset(state, UNTOUCHED, sizeof state);
    memcpy(before, state, sizeof state);
    uint16_t want = state_layout_size(&layout, STATE_BYTES);
    mt_err_t err = state_layout_decode(&layout, wire, n, state, STATE_BYTES);
    if (err) {
        FUZZ_CHECK(err == MT_ERR_INVALID && (!want || n != want));
        FUZZ_CHECK(memcmp(state, before, sizeof state) == 0);
        return 0;
    }
    FUZZ_CHECK(want && n == want);
    static uint8_t again[UINT16_MAX];
    /* Overlapping fields: the last one decoded wins, so encode and compare
     * only a layout whose fields are apart; always check the bounds. */
    bool covered[STATE_BYTES] = {false}, overlap = false;
    for (uint8_t i = 0; i < n_fields; i++)
        for (uint32_t b = 0; b < (uint32_t) fields[i].count * fields[i].width; b++) {
            FUZZ_CHECK(fields[i].offset + b < STATE_BYTES);
            overlap = overlap || covered[fields[i].offset + b];
            covered[fields[i].offset + b] = true;
        }
    for (uint8_t b = 0; b < STATE_BYTES; b++) FUZZ_CHECK(covered[b] || state[b] == UNTOUCHED);
    uint8_t parts[STATE_BYTES];
    memset(parts, UNTOUCHED, sizeof parts);
    uint16_t cut = (uint16_t) (n / 3u);
    FUZZ_CHECK(state_layout_decode_part(&layout, wire, 0, cut, parts, STATE_BYTES) == cut);
    FUZZ_CHECK(state_layout_decode_part(&layout, wire + cut, cut, (uint16_t) (n - cut), parts,
                                        STATE_BYTES) == n - cut);
    FUZZ_CHECK(memcmp(parts, state, sizeof state) == 0);
    uint16_t out = state_layout_encode(&layout, state, STATE_BYTES, again, sizeof again);
    FUZZ_CHECK(out == want);
    if (!overlap) FUZZ_CHECK(memcmp(again, wire, n) == 0);
    return 0;
}
