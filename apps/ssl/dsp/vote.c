/* SPDX-License-Identifier: MIT */
/* Vote (vote.h). */
#include "vote.h"

/* True if `block` comes after `than`, modulo 2^16 (block numbers wrap). */
static bool newer(uint16_t block, uint16_t than)
{
    return (int16_t) (uint16_t) (block - than) > 0;
}

vote_result_t vote_add(vote_t *v, uint16_t block, uint8_t ch, bool detected, uint8_t channels,
                       uint8_t need)
{
    if (ch >= channels || channels > 8) return VOTE_PENDING;
    if (!v->open || newer(block, v->block)) {
        *v = (vote_t){.block = block, .reported = 0, .yes = 0, .open = 1};
    } else if (block != v->block) {
        return VOTE_PENDING; /* stale */
    }
    uint8_t bit = (uint8_t) (1u << ch);
    if (v->reported & bit) return VOTE_PENDING;
    v->reported |= bit;
    if (detected) v->yes++;
    if (v->reported != (uint8_t) ((1u << channels) - 1u)) return VOTE_PENDING;
    v->open = 0;
    return v->yes >= need ? VOTE_SOUND : VOTE_NOISE;
}
