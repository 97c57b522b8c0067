/* SPDX-License-Identifier: MIT */
/*
 * A task state's layout, for migration between modules of different
 * processors: the fields of the state struct, each an 8-, 16- or 32-bit
 * integer or a fixed array of them, encoded as fixed-width little-endian
 * fields in the order listed, with no padding. The encoding is the same
 * whatever the word size, alignment and byte order of the module that
 * writes or reads it, so a task of an 8-bit AVR module and one of a 32-bit
 * Cortex-M module exchange their states through it (docs/migration.md,
 * "The state's wire format").
 *
 * A program that declares a layout (program_t.layout) has its state moved
 * by the kernel: no PORT_SERIALIZE handler is needed, and PORT_DESERIALIZE
 * runs on the destination, with no payload, once the state is in place.
 * The layout must list every field the task needs on arrival and no
 * pointer (a pointer means nothing on another module).
 *
 * Example:
 *
 *     typedef struct { uint8_t mode; int16_t level; uint32_t seen; uint16_t hist[8]; } meter_t;
 *     static const state_field_t meter_fields[] = {
 *         STATE_FIELD(meter_t, mode), STATE_FIELD(meter_t, level),
 *         STATE_FIELD(meter_t, seen), STATE_ARRAY(meter_t, hist),
 *     };
 *     static const state_layout_t meter_layout = STATE_LAYOUT(meter_fields);
 *     // program_t: {.id = 5, .handler = meter, .state_size = sizeof(meter_t),
 *     //             .layout = &meter_layout}
 */
#ifndef MOTET_STATE_LAYOUT_H
#define MOTET_STATE_LAYOUT_H

#include <stddef.h>

#include "motet/types.h"

/* One field: `count` integers of `width` bytes (1, 2 or 4) at `offset` in
 * the state struct. Signed or unsigned alike (two's complement). */
typedef struct state_field {
    uint16_t offset;
    uint16_t count;
    uint8_t width;
} state_field_t;

typedef struct state_layout {
    const state_field_t *fields;
    uint8_t n_fields;
} state_layout_t;

/* A scalar member, or an array member of integers, of struct `type`. */
#define STATE_FIELD(type, member)                                                                  \
    {                                                                                              \
        .offset = (uint16_t) offsetof(type, member), .count = 1,                                   \
        .width = (uint8_t) sizeof(((type *) 0)->member)                                            \
    }
#define STATE_ARRAY(type, member)                                                                  \
    {                                                                                              \
        .offset = (uint16_t) offsetof(type, member),                                               \
        .count = (uint16_t) (sizeof(((type *) 0)->member) / sizeof(((type *) 0)->member[0])),      \
        .width = (uint8_t) sizeof(((type *) 0)->member[0])                                         \
    }
/* A layout of a static array of fields. */
#define STATE_LAYOUT(fields)                                                                       \
    {                                                                                              \
        (fields), (uint8_t) (sizeof(fields) / sizeof((fields)[0]))                                 \
    }

/* Bytes of the encoded state; 0 for a bad layout: no field, a field past
 * the end of `state_size` bytes of state, a width other than 1, 2 or 4,
 * more than 65535 bytes. */
uint16_t state_layout_size(const state_layout_t *layout, uint16_t state_size);
/* Encode `state` (state_size bytes) into out (cap bytes); returns the
 * encoded size, 0 if the layout is bad or out is too small. */
uint16_t state_layout_encode(const state_layout_t *layout, const void *state, uint16_t state_size,
                             uint8_t *out, uint16_t cap);
/* Bytes [offset, offset + n) of the encoded `state` into out: a chunk of
 * it, without the whole; returns n, 0 if the layout is bad or the bytes
 * are not all inside its encoding. */
uint16_t state_layout_encode_part(const state_layout_t *layout, const void *state,
                                  uint16_t state_size, uint16_t offset, uint8_t *out, uint16_t n);
/* Decode n bytes into `state` (state_size bytes), which changes only if
 * they are valid: MT_ERR_INVALID for a bad layout or n other than its size. */
mt_err_t state_layout_decode(const state_layout_t *layout, const uint8_t *in, uint16_t n,
                             void *state, uint16_t state_size);
/* Zero the bytes of `state` that no field of the layout covers (a layout
 * checked by state_layout_size()): what decoding leaves as it was. Fields
 * listed in order of their offsets leave only the gaps between them to
 * zero; otherwise all of it is zeroed. */
void state_layout_clear_rest(const state_layout_t *layout, void *state, uint16_t state_size);
/* Bytes [offset, offset + n) of the encoding (a chunk of it, in) decoded
 * into `state` in place, as they arrive: an integer across two chunks is
 * whole once both are. Returns n; 0 (state unchanged) if the layout is
 * bad or the bytes are not all inside its encoding. */
uint16_t state_layout_decode_part(const state_layout_t *layout, const uint8_t *in, uint16_t offset,
                                  uint16_t n, void *state, uint16_t state_size);

#endif /* MOTET_STATE_LAYOUT_H */
