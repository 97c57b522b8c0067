/* SPDX-License-Identifier: MIT */
/*
 * Vote: the channels' verdicts on one block, combined. The block holds a
 * sound when at least `need` of `channels` channels detected one (the
 * paper's rule for four channels: more than two, need = 3). A verdict for a
 * newer block abandons an unfinished older one; a repeated or stale verdict
 * changes nothing.
 *
 *     vote_t v = {0};
 *     if (vote_add(&v, block, ch, detected, 4, 3) == VOTE_SOUND) ...
 */
#ifndef SSL_VOTE_H
#define SSL_VOTE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { VOTE_PENDING, VOTE_NOISE, VOTE_SOUND } vote_result_t;

typedef struct vote {
    uint16_t block;   /* block being counted */
    uint8_t reported; /* bit c: channel c has reported */
    uint8_t yes;      /* channels that detected a sound */
    uint8_t open;     /* a block is being counted */
} vote_t;

/* Record channel `ch`'s verdict (channels <= 8); the result once every
 * channel of the block has reported, VOTE_PENDING before. */
vote_result_t vote_add(vote_t *v, uint16_t block, uint8_t ch, bool detected, uint8_t channels,
                       uint8_t need);

#endif /* SSL_VOTE_H */
