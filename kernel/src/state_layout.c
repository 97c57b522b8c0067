/* SPDX-License-Identifier: MIT */
/*
 * A task state's layout encoded as fixed-width little-endian fields
 * (motet/state_layout.h): pure functions, no kernel state.
 *
 * An integer's value, not its bytes in memory, is what travels: on a
 * little-endian processor those are the same bytes and a field is copied
 * whole; otherwise each integer is read from the struct with memcpy, as
 * the compiler lays it out (any alignment), and written byte by byte,
 * least significant first, and decoding does the reverse.
 */
#include <string.h>

#include "motet/state_layout.h"

static bool field_fits(const state_field_t *f, uint16_t state_size)
{
    if (f->width != 1 && f->width != 2 && f->width != 4) return false;
    return (uint32_t) f->offset + (uint32_t) f->count * f->width <= state_size;
}

uint16_t state_layout_size(const state_layout_t *layout, uint16_t state_size)
{
    if (!layout || (layout->n_fields && !layout->fields)) return 0;
    uint32_t size = 0;
    for (uint8_t i = 0; i < layout->n_fields; i++) {
        const state_field_t *f = &layout->fields[i];
        if (!field_fits(f, state_size)) return 0;
        size += (uint32_t) f->count * f->width;
    }
    return size <= UINT16_MAX ? (uint16_t) size : 0u;
}

/* The wire's byte order is least significant first. A processor that
 * stores integers so (every port so far) holds each field's wire bytes in
 * memory already: a field, or the part of it in a chunk, is copied whole.
 * Otherwise each integer is read and written byte by byte. */
#ifndef STATE_LAYOUT_COPY
#define STATE_LAYOUT_COPY (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
#endif

/* The integer of `width` bytes at p, as the processor stores it. */
static uint32_t load(const uint8_t *p, uint8_t width)
{
    if (width == 1) return *p;
    if (width == 2) {
        uint16_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The integer's bytes, least significant first. Shifts by constants: an
 * 8-bit core moves whole bytes (a variable count is a loop of single bits
 * there, PORT_SHIFT_LOOPS). */
static void put_le(uint8_t *out, uint32_t v, uint8_t width)
{
    out[0] = (uint8_t) v;
    if (width == 1) return;
    out[1] = (uint8_t) (v >> 8);
    if (width == 2) return;
    out[2] = (uint8_t) (v >> 16);
    out[3] = (uint8_t) (v >> 24);
}

/* Wire bytes [from, to) of field f, which starts at wire byte `at`, into
 * out (which holds the part from wire byte `offset`). */
static void encode_field(const state_field_t *f, const uint8_t *state, uint16_t at, uint16_t from,
                         uint16_t to, uint8_t *out, uint16_t offset)
{
    const uint8_t *p = state + f->offset;
    if (STATE_LAYOUT_COPY) {
        memcpy(out + (from - offset), p + (from - at), (size_t) (to - from));
        return;
    }
    uint16_t k = (uint16_t) ((from - at) / f->width); /* the first integer in the part */
    p += k * f->width;
    for (uint16_t w = (uint16_t) (at + k * f->width); w < to; w = (uint16_t) (w + f->width)) {
        uint8_t whole[4];
        put_le(whole, load(p, f->width), f->width);
        p += f->width;
        for (uint8_t b = 0; b < f->width; b++) /* an integer may cross an end of the part */
            if (w + b >= from && w + b < to) out[w + b - offset] = whole[b];
    }
}

/* Wire bytes [from, to) of field f, which starts at wire byte `at`, from
 * in (which holds the part from wire byte `offset`) into the state. */
static void decode_field(const state_field_t *f, uint8_t *state, uint16_t at, uint16_t from,
                         uint16_t to, const uint8_t *in, uint16_t offset)
{
    uint8_t *p = state + f->offset;
    if (STATE_LAYOUT_COPY) {
        memcpy(p + (from - at), in + (from - offset), (size_t) (to - from));
        return;
    }
    /* Byte by byte, each to its place in its integer as the processor
     * stores it: an integer across two parts is whole once both are in. */
    for (uint16_t w = from; w < to; w++) {
        uint16_t into = (uint16_t) (w - at);
        uint8_t b = (uint8_t) (into % f->width); /* significance: 0 least */
        uint16_t base = (uint16_t) (into - b);
        bool little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
        p[base + (little ? b : (uint8_t) (f->width - 1u - b))] = in[w - offset];
    }
}

/* Wire bytes [offset, offset + n) of each field in turn, encoded from
 * the state into wire (holding them from wire byte `offset`) or decoded
 * from wire into the state: n, or 0 if the layout is bad or the bytes are
 * not all inside its encoding. Each side is only read as its direction
 * says. */
static uint16_t each_part(const state_layout_t *layout, uint8_t *state, uint16_t state_size,
                          uint16_t offset, uint8_t *wire, uint16_t n, bool decode)
{
    uint16_t size = state_layout_size(layout, state_size);
    if (!size || !state || !wire || offset > size || n > size - offset) return 0;
    uint16_t at = 0, end = (uint16_t) (offset + n); /* wire position of the field */
    for (uint8_t i = 0; i < layout->n_fields && at < end; i++) {
        const state_field_t *f = &layout->fields[i];
        uint16_t next = (uint16_t) (at + f->count * f->width);
        uint16_t from = at > offset ? at : offset, to = next < end ? next : end;
        if (next > offset && decode)
            decode_field(f, state, at, from, to, wire, offset);
        else if (next > offset)
            encode_field(f, state, at, from, to, wire, offset);
        at = next;
    }
    return n;
}

uint16_t state_layout_encode_part(const state_layout_t *layout, const void *state,
                                  uint16_t state_size, uint16_t offset, uint8_t *out, uint16_t n)
{
    return each_part(layout, (uint8_t *) state, state_size, offset, out, n, false);
}

uint16_t state_layout_encode(const state_layout_t *layout, const void *state, uint16_t state_size,
                             uint8_t *out, uint16_t cap)
{
    uint16_t size = state_layout_size(layout, state_size);
    if (!size || size > cap) return 0;
    return state_layout_encode_part(layout, state, state_size, 0, out, size);
}

uint16_t state_layout_decode_part(const state_layout_t *layout, const uint8_t *in, uint16_t offset,
                                  uint16_t n, void *state, uint16_t state_size)
{
    return each_part(layout, state, state_size, offset, (uint8_t *) in, n, true);
}

void state_layout_clear_rest(const state_layout_t *layout, void *state, uint16_t state_size)
{
    uint8_t *p = state;
    uint16_t done = 0; /* bytes before it zeroed or a field's */
    for (uint8_t i = 0; layout && i < layout->n_fields; i++) {
        const state_field_t *f = &layout->fields[i];
        if (f->offset < done) { /* out of order, or overlapping: all of it */
            memset(state, 0, state_size);
            return;
        }
        memset(p + done, 0, (size_t) (f->offset - done));
        done = (uint16_t) (f->offset + f->count * f->width);
    }
    if (done < state_size) memset(p + done, 0, (size_t) (state_size - done));
}

mt_err_t state_layout_decode(const state_layout_t *layout, const uint8_t *in, uint16_t n,
                             void *state, uint16_t state_size)
{
    uint16_t size = state_layout_size(layout, state_size);
    if (!size || n != size || !in || !state) return MT_ERR_INVALID;
    state_layout_decode_part(layout, in, 0, n, state, state_size);
    return MT_OK;
}
