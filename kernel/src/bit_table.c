/* SPDX-License-Identifier: MIT */
/* One bit by its index (bit_table.h): the table the queue's level bitmaps
 * and the slab maps share where the core shifts one bit per instruction. */
#include "bit_table.h"

const level_bits_t bit_of_index[] = {
    0x01u,        0x02u,        0x04u,        0x08u,        0x10u,       0x20u,
    0x40u,        0x80u,
#if MOTET_PRIO_LEVELS > 8 /* 16-bit words */
    0x100u,       0x200u,       0x400u,       0x800u,       0x1000u,     0x2000u,
    0x4000u,      0x8000u,
#endif
#if MOTET_PRIO_LEVELS > 16 /* 32-bit words */
    0x10000ul,    0x20000ul,    0x40000ul,    0x80000ul,    0x100000ul,  0x200000ul,
    0x400000ul,   0x800000ul,   0x1000000ul,  0x2000000ul,  0x4000000ul, 0x8000000ul,
    0x10000000ul, 0x20000000ul, 0x40000000ul, 0x80000000ul,
#endif
};
