/* SPDX-License-Identifier: MIT */
/*
 * A task state's layout encoded as fixed-width little-endian fields
 * (motet/state_layout.h): pure functions, no kernel state.
 *
 * Each integer is read from the struct with memcpy, as the compiler lays
 * it out (any alignment, any byte order), and written byte by byte, least
 * significant first; decoding does the reverse. An integer's value, not
 * its bytes in memory, is what travels.
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

static void store(uint8_t *p, uint8_t width, uint32_t v)
{
    if (width == 1) {
        *p = (uint8_t) v;
    } else if (width == 2) {
        uint16_t w = (uint16_t) v;
        memcpy(p, &w, sizeof w);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

uint16_t state_layout_encode_part(const state_layout_t *layout, const void *state,
                                  uint16_t state_size, uint16_t offset, uint8_t *out, uint16_t n)
{
    uint16_t size = state_layout_size(layout, state_size);
    if (!size || !state || !out || offset > size || n > size - offset) return 0;
    uint16_t at = 0, end = (uint16_t) (offset + n); /* wire position of the next byte */
    for (uint8_t i = 0; i < layout->n_fields && at < end; i++) {
        const state_field_t *f = &layout->fields[i];
        uint16_t bytes = (uint16_t) (f->count * f->width);
        if (at + bytes <= offset) { /* wholly before the part */
            at = (uint16_t) (at + bytes);
            continue;
        }
        const uint8_t *p = (const uint8_t *) state + f->offset;
        for (uint16_t k = 0; k < f->count && at < end; k++, p += f->width) {
            uint32_t v = load(p, f->width);
            for (uint8_t b = 0; b < f->width; b++, at++)
                if (at >= offset && at < end) out[at - offset] = (uint8_t) (v >> (8u * b));
        }
    }
    return n;
}

uint16_t state_layout_encode(const state_layout_t *layout, const void *state, uint16_t state_size,
                             uint8_t *out, uint16_t cap)
{
    uint16_t size = state_layout_size(layout, state_size);
    if (!size || size > cap) return 0;
    return state_layout_encode_part(layout, state, state_size, 0, out, size);
}

mt_err_t state_layout_decode(const state_layout_t *layout, const uint8_t *in, uint16_t n,
                             void *state, uint16_t state_size)
{
    uint16_t size = state_layout_size(layout, state_size);
    if (!size || n != size || !in || !state) return MT_ERR_INVALID;
    for (uint8_t i = 0; i < layout->n_fields; i++) {
        const state_field_t *f = &layout->fields[i];
        uint8_t *p = (uint8_t *) state + f->offset;
        for (uint16_t k = 0; k < f->count; k++, p += f->width) {
            uint32_t v = 0;
            for (uint8_t b = 0; b < f->width; b++) v |= (uint32_t) *in++ << (8u * b);
            store(p, f->width, v);
        }
    }
    return MT_OK;
}
