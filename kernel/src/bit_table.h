/* SPDX-License-Identifier: MIT */
/*
 * One bit by its index, for the message queue's level bitmaps and the slab
 * caches' maps. A core that shifts by a variable count one bit per
 * instruction (port.h, PORT_SHIFT_LOOPS) reads it from a table, one table
 * for both; the other cores shift.
 */
#ifndef MOTET_BIT_TABLE_H
#define MOTET_BIT_TABLE_H

#include <stdint.h>

#include "motet/config.h"
#include "motet/port.h"

/* A bitmap with one bit per priority level: the smallest word they fit in. */
#if MOTET_PRIO_LEVELS <= 8
typedef uint8_t level_bits_t;
#elif MOTET_PRIO_LEVELS <= 16
typedef uint16_t level_bits_t;
#else
typedef uint32_t level_bits_t;
#endif

/* bit_of_index[i] is 1 << i, for every level and at least the 8 bits of a
 * byte. bit_table.c. */
extern const level_bits_t bit_of_index[];

/* The bit of index i, i below 8 or MOTET_PRIO_LEVELS, whichever is more. */
static MT_INLINE level_bits_t bit_of(uint8_t i)
{
#ifdef PORT_SHIFT_LOOPS
    return bit_of_index[i];
#else
    return (level_bits_t) ((level_bits_t) 1u << i);
#endif
}

#endif
